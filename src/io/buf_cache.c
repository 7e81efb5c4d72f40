/* Kept large I/O buffers (see vaaid/buf_cache.h): a small array matched by size,
 * oldest first; a full cache lets its oldest buffer go for a new one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vaaid/asan_poison.h"
#include "vaaid/buf_cache.h"
#include "vaaid/io.h"


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
		VAAID_UNPOISON(c->b[i].p, c->b[i].n);
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
		memmove(&c->b[i], &c->b[i + 1], sizeof(c->b[0]) * (c->n - i - 1)); /* oldest first */
		c->n--;
		VAAID_UNPOISON(p, n);
		memset(p, 0, n); /* as vblk_alloc_buf's: the pages are there, no fault */
		return p;
	}
	return vblk_alloc_buf(len);
}

void vbuf_put(struct vbuf_cache *c, void *p, size_t len)
{
	if (!p)
		return;
	if (!c || !c->keep) {
		free(p);
		return;
	}
	if (c->n == c->keep) { /* full: the oldest kept goes (sizes come and go; the
				* newest is the likeliest asked for again) */
		VAAID_UNPOISON(c->b[0].p, c->b[0].n);
		free(c->b[0].p);
		memmove(&c->b[0], &c->b[1], sizeof(c->b[0]) * (c->n - 1));
		c->n--;
	}
	size_t n = rounded(len);
	VAAID_POISON(p, n);
	c->b[c->n++] = (struct vbuf_kept){.p = p, .n = n};
}
