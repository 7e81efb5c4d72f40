/*
 * A live checkpoint's frozen refcounts, copied aside per chunk on first change
 * (docs/snapshots.md section 8, step 3).
 *
 * How this works: at the freeze point the image takes only a table of chunk
 * pointers, all NULL (8 bytes per REFS_CHUNK extents, 2 KiB per TiB of pool):
 * while a chunk's pointer is NULL the live refcounts of that chunk are still the
 * frozen ones. The first change of a refcount after the freeze
 * (pool_refs_touch, called before every change while the image is active)
 * copies its chunk aside (16 KiB), and the image reads that copy from then on
 * (pool_refs_frozen). The freeze's cost is thus O(chunks), not a copy of every
 * refcount on the reactor, and the copies total at most the refcount array.
 * A copy that cannot be made (out of memory) marks the image broken: the change
 * is made all the same (a refcount change must not fail) and the checkpoint
 * fails, as a leaf that cannot be copied aside does (map.h).
 * `alloc` (NULL: malloc) is kept across freezes: a test's allocation-failure
 * hook for the chunk copies (unit/test_pool_live_ckpt_oom), set on the pool's
 * own struct, no global.
 */
#ifndef VAAID_POOL_REFS_ASIDE_H
#define VAAID_POOL_REFS_ASIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REFS_CHUNK_SHIFT 12u /* 4,096 refcounts, 16 KiB a chunk */
#define REFS_CHUNK (1u << REFS_CHUNK_SHIFT)

struct pool_refs_freeze {
	uint32_t **aside; /* per chunk: its frozen copy, or NULL (the live chunk is it) */
	uint64_t n_ext, n_chunks;
	bool active, broken;
	void *(*alloc)(void *ctx, size_t size); /* the chunk copies' allocator (its memory goes to free()); NULL: malloc */
	void *alloc_ctx;
};

/* Freeze refcounts of n_ext extents (nothing copied); -ENOMEM. */
int pool_refs_freeze_begin(struct pool_refs_freeze *f, uint64_t n_ext);
/* End the freeze and free the copies (no-op when not active). */
void pool_refs_freeze_end(struct pool_refs_freeze *f);
/* Copy x's chunk aside from live[] (the refcounts before a change) if it is not yet. */
void pool_refs_copy_aside(struct pool_refs_freeze *f, const uint32_t *live, uint64_t x);

/* To be called before live[x] changes. */
static inline void pool_refs_touch(struct pool_refs_freeze *f, const uint32_t *live, uint64_t x)
{
	if (f->active && x < f->n_ext && !f->aside[x >> REFS_CHUNK_SHIFT])
		pool_refs_copy_aside(f, live, x);
}

/* x's refcount at the freeze point (f active), given the live array. */
static inline uint32_t pool_refs_frozen(const struct pool_refs_freeze *f, const uint32_t *live,
					uint64_t x)
{
	const uint32_t *a = f->aside[x >> REFS_CHUNK_SHIFT];
	return a ? a[x & (REFS_CHUNK - 1)] : live[x];
}

#endif
