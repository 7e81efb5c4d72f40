/* Kept large I/O buffers (see vaaid/buf_cache.h): a small array matched by size,
 * oldest first; a full cache lets its oldest buffer go for a new one. Scratch
 * (vbuf_take): a stack of buffers per power-of-two size class, each allocated at
 * its class's full size; a full class or a cache at VBUF_TAKE_MAX bytes frees
 * what is given back. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vaaid/asan_poison.h"
#include "vaaid/buf_cache.h"
#include "vaaid/io.h"


struct vbuf_kept {
	void *p;
	size_t n; /* bytes, rounded as vblk_alloc_buf rounds */
};

#define VBUF_CLASS_MIN 12u  /* 4 KiB */
#define VBUF_CLASSES 13u    /* to 16 MiB */
#define VBUF_CLASS_KEEP 16u /* buffers per class */
#define VBUF_TAKE_MAX (64u << 20) /* bytes kept for vbuf_take at most */

/* Bytes of a buffer of size class k. */
static size_t class_size(unsigned k) { return (size_t)1 << (VBUF_CLASS_MIN + k); }

struct vbuf_class {
	unsigned n;
	void *p[VBUF_CLASS_KEEP];
};

struct vbuf_cache {
	struct vbuf_class cls[VBUF_CLASSES];
	size_t cls_bytes;
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
	for (unsigned k = 0; k < VBUF_CLASSES; k++)
		for (unsigned i = 0; i < c->cls[k].n; i++) {
			VAAID_UNPOISON(c->cls[k].p[i], class_size(k));
			free(c->cls[k].p[i]);
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

/* len's size class, or VBUF_CLASSES when it has none (0, or above 16 MiB). */
static unsigned class_of(size_t len)
{
	unsigned k = 0;
	while (k < VBUF_CLASSES && class_size(k) < len)
		k++;
	return len ? k : VBUF_CLASSES;
}

void *vbuf_take(struct vbuf_cache *c, size_t len)
{
	unsigned k = class_of(len);
	if (!c || k == VBUF_CLASSES)
		return malloc(len ? len : 1);
	size_t n = class_size(k);
	struct vbuf_class *cl = &c->cls[k];
	uint8_t *p;
	if (cl->n) {
		p = cl->p[--cl->n];
		c->cls_bytes -= n;
		VAAID_UNPOISON(p, len);
		return p;
	}
	p = malloc(n);
	if (p) /* past len: an overrun is still caught (through uintptr_t: gcc takes the
		* poisoning call for a read of the fresh bytes, -Wmaybe-uninitialized) */
		VAAID_POISON((void *)((uintptr_t)p + len), n - len);
	return p;
}

void vbuf_give(struct vbuf_cache *c, void *p, size_t len)
{
	if (!p)
		return;
	/* A kept buffer is poisoned whole, a taken one never at byte 0 (len > 0):
	 * under ASan a second give is caught here, as free() would catch it. */
	if (len && VAAID_IS_POISONED(p)) {
		fprintf(stderr, "vbuf_give: %p given back twice (or never taken)\n", p);
		abort();
	}
	unsigned k = class_of(len);
	if (!c || k == VBUF_CLASSES) {
		free(p);
		return;
	}
	size_t n = class_size(k);
	struct vbuf_class *cl = &c->cls[k];
	if (cl->n == VBUF_CLASS_KEEP || c->cls_bytes + n > VBUF_TAKE_MAX) {
		VAAID_UNPOISON(p, n);
		free(p);
		return;
	}
	VAAID_POISON(p, n);
	cl->p[cl->n++] = p;
	c->cls_bytes += n;
}

size_t vbuf_taken_kept(const struct vbuf_cache *c) { return c ? c->cls_bytes : 0; }
