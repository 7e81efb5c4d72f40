/*
 * Freed extents given back to the store (issue 26: thin through to Ceph).
 *
 * How this works: an extent whose refcount dropped to 0 returns to the free
 * map only once the commit that freed it is durable (pool_durable, design rule
 * 4). On a store that can discard (vblk_ops.discard: an RBD image), it is
 * discarded first -- the durable metadata no longer references it, so its
 * data is nobody's -- and returns to the free map when the discard completes:
 * nothing can be allocated there, and so written, while the discard is in
 * flight, and the cluster gets the space back at once. The pool counts it as
 * free meanwhile (UNMAP returns space at once: used, free, the soft
 * threshold), and a write that needs it waits for the discard instead of
 * being refused (datapath.c, p->space_wait). A failed discard only
 * means the space stays with the store: the extent is freed all the same
 * (unwritten granules read as zeros through the validity maps, never its old
 * data). Stores without discard (files, block devices, crashsim): the extent
 * is freed at once, as before (a file keeps its extents' space reserved, rule 8).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"
#include "vaaid/util.h"

struct discard_req {
	struct pool_req link; /* first: freed by pool_req discard if the pool is abandoned */
	struct vio_op op;
	struct vpool *p;
	uint64_t pext;
};

static void discard_done(void *arg, int res)
{
	struct discard_req *d = arg;
	struct vpool *p = d->p;
	pool_req_untrack(p, &d->link);
	p->discards--;
	if (res < 0) {
		p->discard_errors++;
		vlog_warn(NULL, "discarding extent %llu of the pool's store: %s (its space stays with "
				"the store)", (unsigned long long)d->pext, strerror(-res));
	}
	pool_unreserve(p, d->pext);
	free(d);
	pool_space_freed(p);
}

static void discard_forget(struct pool_req *r) { free((struct discard_req *)r); }

void pool_release_extent(struct vpool *p, uint64_t pext)
{
	if (!p->dev->ops->discard || p->readonly || p->failed) {
		pool_unreserve(p, pext);
		return;
	}
	struct discard_req *d = calloc(1, sizeof(*d));
	if (!d) {
		pool_unreserve(p, pext);
		return;
	}
	d->p = p;
	d->pext = pext;
	vio_op_init(&d->op, discard_done, d);
	int rc = vblk_discard(p->dev, pool_ext_off(p, pext), p->ext, &d->op);
	if (rc < 0) {
		free(d);
		p->discard_errors++;
		pool_unreserve(p, pext);
		return;
	}
	p->discards++;
	pool_thr_check(p); /* counted as free from now on */
	pool_req_track(p, &d->link, discard_forget);
}

bool pool_discards_busy(const struct vpool *p) { return p->discards > 0; }
