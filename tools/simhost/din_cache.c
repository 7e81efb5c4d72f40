/* Kept data-in buffers (see din_cache.h). */
#include <stdlib.h>

#include "din_cache.h"
#include "vaaid/asan_poison.h"


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
	VAAID_UNPOISON(p, len); /* [len, cap) stays poisoned: not the caller's */
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
	VAAID_POISON(p, cap);
	c->p[c->n] = p;
	c->cap[c->n] = cap;
	c->n++;
}

void din_cache_drop(struct din_cache *c)
{
	for (unsigned i = 0; i < c->n; i++) {
		VAAID_UNPOISON(c->p[i], c->cap[i]);
		free(c->p[i]);
	}
	c->n = 0;
}
