/*
 * The store sweep (vpool_sweep_store, include/vaaid/pool.h): free extents whose
 * data the store still holds are discarded.
 *
 * How this works: the store reports the parts of the data region it holds
 * data for (vblk_ops.mapped; an RBD image answers from its object map, whole
 * objects, so a report may cover free extents that hold nothing: discarding
 * those costs a request and changes nothing). The report is first collected
 * (the store's walk must not have requests submitted from inside it), then
 * every extent it covers that is free is taken from the free map and handed
 * to pool_release_extent (discard.c), exactly as an extent freed by a durable
 * commit: counted as free meanwhile, allocatable again once the discard
 * completed. An extent allocated meanwhile is not free, so nothing in use is
 * ever discarded; the pool's metadata region is outside the walk.
 */
#include <errno.h>
#include <stdlib.h>

#include "pool_internal.h"
#include "vaaid/util.h"

struct sweep_walk {
	const struct vpool *p;
	uint64_t *ext; /* extents the store reports data for, ascending, deduplicated */
	uint64_t n, cap;
};

static int walk_range(void *arg, uint64_t off, uint64_t len)
{
	struct sweep_walk *w = arg;
	const struct vpool *p = w->p;
	if (len == 0 || off + len <= p->sb.data_off)
		return 0;
	uint64_t lo = off < p->sb.data_off ? 0 : (off - p->sb.data_off) / p->ext;
	uint64_t hi = (off + len - p->sb.data_off + p->ext - 1) / p->ext;
	if (hi > p->n_ext)
		hi = p->n_ext;
	for (uint64_t e = lo; e < hi; e++) {
		if (w->n && w->ext[w->n - 1] >= e)
			continue;
		if (w->n == w->cap) {
			uint64_t cap = w->cap ? 2 * w->cap : 1024;
			uint64_t *x = realloc(w->ext, cap * sizeof(*x));
			if (!x)
				return -ENOMEM;
			w->ext = x;
			w->cap = cap;
		}
		w->ext[w->n++] = e;
	}
	return 0;
}

int vpool_sweep_store(struct vpool *p, uint64_t *swept)
{
	*swept = 0;
	if (!p->dev->ops->discard || !p->dev->ops->mapped || p->readonly || p->failed)
		return 0;
	struct sweep_walk w = {.p = p};
	uint64_t end = pool_ext_off(p, p->n_ext);
	if (end > p->dev->size)
		end = p->dev->size;
	int rc = end > p->sb.data_off
			 ? vblk_mapped(p->dev, p->sb.data_off, end - p->sb.data_off, walk_range, &w)
			 : 0;
	for (uint64_t i = 0; rc >= 0 && i < w.n; i++) {
		if (!pool_take_if_free(p, w.ext[i]))
			continue; /* in use (or being discarded already) */
		pool_release_extent(p, w.ext[i]);
		(*swept)++;
	}
	free(w.ext);
	return rc < 0 ? rc : 0;
}
