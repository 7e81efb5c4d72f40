/*
 * The store sweep (vpool_sweep_store, include/vaaid/pool.h): free extents whose
 * data the store still holds are discarded.
 *
 * How this works: the store reports, object by object, the parts of the data
 * region it holds data for (vblk_ops.mapped; an RBD image answers from its
 * object map, on a worker thread). The report is first collected (the walk
 * must not submit requests, and it may run on another thread), then, for
 * each reported object whose extents are all free, those extents are taken
 * from the free map and handed to pool_release_extent (discard.c), exactly as
 * extents freed by a durable commit: counted as free meanwhile, allocatable
 * again once the discard completed. An object that also holds an extent in
 * use is skipped (see below). An extent allocated meanwhile is not free, so
 * nothing in use is ever discarded; the metadata region is outside the walk.
 */
#include <errno.h>
#include <stdlib.h>

#include "pool_internal.h"
#include "vaaid/util.h"

struct sweep_walk {
	const struct vpool *p;
	struct { uint64_t lo, hi; } *piece; /* extents [lo, hi) under one reported object */
	uint64_t n, cap;
};

/* Runs on the store's walk (vblk_rbd: a worker thread): only collects, reading
 * the pool's geometry, which does not change while the control path sweeps. */
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
	if (lo >= hi)
		return 0;
	if (w->n == w->cap) {
		uint64_t cap = w->cap ? 2 * w->cap : 1024;
		void *x = realloc(w->piece, cap * sizeof(*w->piece));
		if (!x)
			return -ENOMEM;
		w->piece = x;
		w->cap = cap;
	}
	w->piece[w->n].lo = lo;
	w->piece[w->n].hi = hi;
	w->n++;
	return 0;
}

/* Is every extent in [lo, hi) free? */
static bool all_free(const struct vpool *p, uint64_t lo, uint64_t hi)
{
	for (uint64_t e = lo; e < hi; e++)
		if (!pool_ext_is_free(p, e))
			return false;
	return true;
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
	/*
	 * An object that also holds an extent in use (extents smaller than the
	 * store's objects) is left alone: discarding its free parts only zeroes
	 * them (the object stays), and would be redone at every open. An object
	 * all of whose extents are free is discarded whole.
	 */
	for (uint64_t i = 0; rc >= 0 && i < w.n; i++) {
		if (!all_free(p, w.piece[i].lo, w.piece[i].hi))
			continue;
		for (uint64_t e = w.piece[i].lo; e < w.piece[i].hi; e++) {
			if (!pool_take_if_free(p, e))
				continue; /* taken by an earlier piece sharing this extent */
			pool_release_extent(p, e);
			(*swept)++;
		}
	}
	free(w.piece);
	return rc < 0 ? rc : 0;
}
