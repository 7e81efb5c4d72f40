/* Kept large I/O buffers (see vaaid/buf_cache.h): a small array matched by size. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vaaid/buf_cache.h"
#include "vaaid/io.h"

#if defined(__SANITIZE_ADDRESS__)
#define VBUF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VBUF_ASAN 1
#endif
#endif
#ifdef VBUF_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) __asan_poison_memory_region((p), (n))
#define UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct vbuf_kept {
	void *p;
	size_t n; /* bytes, rounded as vblk_alloc_buf rounds */
};

struct vbuf_cache {
	unsigned n, keep;
	struct vbuf_kept b[];
};

static size_t rounded(size_t len)
{
	return len ? (len + VBLK_ALIGN - 1) / VBLK_ALIGN * VBLK_ALIGN : VBLK_ALIGN;
}

int vbuf_cache_new(unsigned keep, struct vbuf_cache **out)
{
	struct vbuf_cache *c = calloc(1, sizeof(*c) + sizeof(c->b[0]) * keep);
	if (!c)
		return -ENOMEM;
	c->keep = keep;
	*out = c;
	return 0;
}

void vbuf_cache_free(struct vbuf_cache *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->n; i++) {
		UNPOISON(c->b[i].p, c->b[i].n);
		free(c->b[i].p);
	}
	free(c);
}

void *vbuf_get(struct vbuf_cache *c, size_t len)
{
	size_t n = rounded(len);
	for (unsigned i = 0; c && n >= len && i < c->n; i++) {
		if (c->b[i].n != n)
			continue;
		void *p = c->b[i].p;
		c->b[i] = c->b[--c->n];
		UNPOISON(p, n);
		memset(p, 0, n); /* as vblk_alloc_buf's: the pages are there, no fault */
		return p;
	}
	return vblk_alloc_buf(len);
}

void vbuf_put(struct vbuf_cache *c, void *p, size_t len)
{
	if (!p)
		return;
	if (!c || c->n == c->keep) {
		free(p);
		return;
	}
	size_t n = rounded(len);
	POISON(p, n);
	c->b[c->n++] = (struct vbuf_kept){.p = p, .n = n};
}
