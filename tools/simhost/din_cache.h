/*
 * A simhost's data-in buffers given back by its caller (simhost_result_release),
 * handed out again by the next reaps (simk_set_din_alloc): a crash suite reading
 * a volume back in 1 MiB commands got a fresh 1 MiB malloc per command, which
 * under ASan is a new mapping (every page a fault, the shadow written twice).
 * A kept buffer is poisoned for ASan while kept, and only the bytes handed out
 * are unpoisoned, so an overrun of a data-in buffer is still caught.
 */
#ifndef VAAID_SIMHOST_DIN_CACHE_H
#define VAAID_SIMHOST_DIN_CACHE_H

#include <stddef.h>

#define DIN_CACHE_KEEP 8

struct din_cache {
	unsigned n;
	void *p[DIN_CACHE_KEEP];
	size_t cap[DIN_CACHE_KEEP];
};

/* simk_set_din_alloc's fn (arg: the struct din_cache): the smallest kept buffer
 * of len to 2 len bytes, else malloc(len). */
void *din_cache_alloc(void *arg, size_t len, size_t *cap);
/* Keep p (cap bytes, malloc'd; NULL is ignored), or free it when full. */
void din_cache_put(struct din_cache *c, void *p, size_t cap);
/* Free every kept buffer. */
void din_cache_drop(struct din_cache *c);

#endif
