/*
 * Frozen refcounts copied aside per chunk (refs_aside.h): the chunk table made at
 * the freeze point, a chunk copied by the first change after it, all freed when
 * the checkpoint ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "refs_aside.h"

int pool_refs_freeze_begin(struct pool_refs_freeze *f, uint64_t n_ext)
{
	uint64_t n = (n_ext + REFS_CHUNK - 1) >> REFS_CHUNK_SHIFT;
	uint32_t **a = calloc(n ? n : 1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*f = (struct pool_refs_freeze){
		.aside = a, .n_ext = n_ext, .n_chunks = n, .active = true,
		.alloc = f->alloc, .alloc_ctx = f->alloc_ctx};
	return 0;
}

void pool_refs_freeze_end(struct pool_refs_freeze *f)
{
	if (f->aside)
		for (uint64_t c = 0; c < f->n_chunks; c++)
			free(f->aside[c]);
	free(f->aside);
	*f = (struct pool_refs_freeze){.alloc = f->alloc, .alloc_ctx = f->alloc_ctx};
}

void pool_refs_copy_aside(struct pool_refs_freeze *f, const uint32_t *live, uint64_t x)
{
	uint64_t c = x >> REFS_CHUNK_SHIFT, first = c << REFS_CHUNK_SHIFT;
	uint64_t n = f->n_ext - first < REFS_CHUNK ? f->n_ext - first : REFS_CHUNK;
	size_t size = REFS_CHUNK * sizeof(uint32_t);
	uint32_t *a = f->alloc ? f->alloc(f->alloc_ctx, size) : malloc(size);
	if (!a) {
		f->broken = true; /* the change goes ahead; the checkpoint fails */
		return;
	}
	memcpy(a, live + first, n * sizeof(*a));
	f->aside[c] = a;
}
