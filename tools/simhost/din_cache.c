/* Kept data-in buffers (see din_cache.h). */
#include <stdlib.h>

#include "din_cache.h"

#if defined(__SANITIZE_ADDRESS__)
#define DIN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DIN_ASAN 1
#endif
#endif
#ifdef DIN_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) __asan_poison_memory_region((p), (n))
#define UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

void *din_cache_alloc(void *arg, size_t len, size_t *cap)
{
	struct din_cache *c = arg;
	unsigned best = c->n;
	for (unsigned i = 0; i < c->n; i++)
		if (c->cap[i] >= len && c->cap[i] / 2 <= len && (best == c->n || c->cap[i] < c->cap[best]))
			best = i;
	if (best == c->n) {
		*cap = len;
		return malloc(len);
	}
	void *p = c->p[best];
	*cap = c->cap[best];
	c->n--;
	c->p[best] = c->p[c->n];
	c->cap[best] = c->cap[c->n];
	UNPOISON(p, len); /* [len, cap) stays poisoned: not the caller's */
	return p;
}

void din_cache_put(struct din_cache *c, void *p, size_t cap)
{
	if (!p)
		return;
	if (c->n == DIN_CACHE_KEEP || cap == 0) {
		free(p);
		return;
	}
	POISON(p, cap);
	c->p[c->n] = p;
	c->cap[c->n] = cap;
	c->n++;
}

void din_cache_drop(struct din_cache *c)
{
	for (unsigned i = 0; i < c->n; i++) {
		UNPOISON(c->p[i], c->cap[i]);
		free(c->p[i]);
	}
	c->n = 0;
}
