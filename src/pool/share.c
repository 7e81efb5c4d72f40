/*
 * Extent sharing: the metadata half of EXTENDED COPY (vvol_share).
 *
 * How this works: a share request names n whole extents of a source volume
 * and n of a destination volume (possibly the same volume). It locks the
 * source and the destination extents exclusive, all keys in ascending order,
 * so it is consistent with concurrent writes on both sides and cannot
 * deadlock with the data path, which locks in the same order. (The source
 * exclusive too: an in-place OVERWRITE holds its extent shared, so a shared
 * lock here would let a write that was in flight when the copy started land
 * in the extent after it became shared, changing the destination after the
 * copy was acknowledged. Exclusive, the share waits for it; later writes find
 * refcount > 1 and are redirected.) Then one SHARE journal record
 * is appended and applied: destination map entry i := source map entry i,
 * refcount of the source extent + 1, refcount of the destination's old
 * extent - 1 (freed, for reuse only after this record is durable). Overlapping
 * ranges of one volume are walked in the direction that reads each source
 * entry before it is overwritten (memmove). The request completes when the
 * record's commit is durable. Replay applies the same function to the same
 * state, so recovery computes the same maps and refcounts.
 * Writes into an extent with refcount > 1 are redirected (datapath.c, SK_COW).
 * A source extent that is itself still hydrating from its redirect source is
 * hydrated first, under the locks (share_hydrate_next).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"
#include "vaaid/util.h"

struct share_req {
	struct pool_req link; /* first */
	struct vpool *p;
	struct vvol *src, *dst;
	uint64_t svext, dvext, n;
	vvol_cb cb;
	void *arg;
	struct xlockset locks; /* empty when the caller holds the locks (pool_share_locked) */
	struct vj_waiter jw;
	struct vio_op defer_op;
	int err;
	uint64_t hyd_next; /* source extents checked for a pending hydration */
};

int pool_apply_share(struct vpool *p, uint16_t sidx, uint16_t didx, uint64_t svext,
		     uint64_t dvext, uint64_t n)
{
	if (sidx >= VPOOL_MAX_VOLUMES || didx >= VPOOL_MAX_VOLUMES || !p->vols[sidx] ||
	    !p->vols[didx])
		return -EUCLEAN;
	struct vvol *s = p->vols[sidx], *d = p->vols[didx];
	if (!n || svext >= s->n_vext || n > s->n_vext - svext || dvext >= d->n_vext ||
	    n > d->n_vext - dvext)
		return -EUCLEAN;
	/* Only hydrated extents are shared (a source is one level deep, see hydrate.c). */
	for (uint64_t i = 0; i < n; i++)
		if (pool_map_get(s, svext + i) && pool_hydr(p, pool_map_get(s, svext + i) - 1))
			return -EUCLEAN;
	bool backward = sidx == didx && dvext > svext && dvext < svext + n;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t i = backward ? n - 1 - k : k;
		uint64_t new1 = pool_map_get(s, svext + i), old1 = pool_map_get(d, dvext + i);
		if (new1 == old1)
			continue;
		int rc = pool_apply_map(p, didx, dvext + i, old1, new1, 0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void share_discard(struct pool_req *r)
{
	struct share_req *q = (struct share_req *)r;
	xlockset_free(&q->locks);
	free(q);
}

static void share_finish(struct share_req *q)
{
	struct vpool *p = q->p;
	xlockset_release(&q->locks);
	p->inflight--;
	pool_req_untrack(p, &q->link);
	vvol_cb cb = q->cb;
	void *arg = q->arg;
	int err = q->err;
	xlockset_free(&q->locks);
	free(q);
	cb(arg, err);
}

static void share_finish_deferred(void *arg, int res)
{
	struct share_req *q = arg;
	if (res < 0 && !q->err)
		q->err = res;
	share_finish(q);
}

static void share_fail(struct share_req *q, int err)
{
	q->err = err;
	vio_op_init(&q->defer_op, share_finish_deferred, q);
	vreactor_defer(q->p->r, &q->defer_op, 0);
}

static void share_committed(void *arg, int res)
{
	struct share_req *q = arg;
	q->err = res < 0 ? -EIO : 0;
	share_finish(q);
}

static void share_log(void *arg, int res)
{
	struct share_req *q = arg;
	struct vpool *p = q->p;
	if (res < 0 || p->failed) {
		share_fail(q, -EIO);
		return;
	}
	if (!vjournal_can_append(p->j, REC_SHARE_LEN + 4)) {
		q->jw.fn = share_log;
		q->jw.arg = q;
		vjournal_wait_room(p->j, &q->jw);
		return;
	}
	/* Room in the checkpoint area for the references it adds (checkpoint.c). */
	uint64_t add = 0;
	for (uint64_t i = 0; i < q->n; i++)
		add += pool_map_get(q->src, q->svext + i) != 0;
	if (pool_ckpt_room(p, add, p->n_ext) < 0) {
		/* Said once per open, counted always: EXTENDED COPY still works (copy.c
		 * copies the bytes), but an admin sees copies slow down and space used. */
		if (!p->share_room_refused++)
			vlog_warn(NULL, "extent sharing refused: the pool's checkpoint area has no room "
				  "for more shared references (about 4 per extent); EXTENDED COPY now "
				  "copies bytes instead (counter share_room_refused)");
		share_fail(q, -ENOSPC);
		return;
	}
	int rc = pool_log_share(p, q->src, q->dst, q->svext, q->dvext, q->n);
	if (rc < 0) {
		p->failed = true; /* applied partly in memory: the pool must not go on */
		share_fail(q, -EIO);
		return;
	}
	q->jw.fn = share_committed;
	q->jw.arg = q;
	vjournal_wait_commit(p->j, &q->jw);
}

/*
 * With the locks held: a source extent that is still hydrating (redirected,
 * reading part of its data from its own source) is hydrated first, so that
 * sharing never makes a chain of sources.
 */
static void share_hydrate_next(void *arg, int err)
{
	struct share_req *q = arg;
	struct vpool *p = q->p;
	if (err) {
		share_fail(q, err);
		return;
	}
	while (q->hyd_next < q->n) {
		uint64_t m = pool_map_get(q->src, q->svext + q->hyd_next++);
		if (!m || !pool_hydr(p, m - 1))
			continue;
		int rc = pool_hydrate_locked(p, m - 1, share_hydrate_next, q);
		if (rc < 0)
			share_fail(q, rc);
		return;
	}
	share_log(q, 0);
}

static void share_locked(void *arg, int err)
{
	struct share_req *q = arg;
	if (err) {
		share_fail(q, err);
		return;
	}
	share_hydrate_next(q, 0);
}

static int share_submit(struct vvol *src, uint64_t soff, struct vvol *dst, uint64_t doff,
			uint64_t len, bool prelocked, vvol_cb cb, void *arg)
{
	struct vpool *p = src->pool;
	uint64_t ext = p->ext;
	if (dst->pool != p)
		return -EXDEV;
	if (!len || soff % ext || doff % ext || len % ext || soff > src->size ||
	    len > src->size - soff || doff > dst->size || len > dst->size - doff)
		return -EINVAL;
	/* The last extent of a volume may be partial: only whole extents are shared. */
	if ((soff + len) / ext > src->n_vext || (doff + len) / ext > dst->n_vext)
		return -EINVAL;
	if (p->readonly)
		return -EROFS;
	if (pool_check_failed(p))
		return -EIO;
	struct share_req *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->p = p;
	q->src = src;
	q->dst = dst;
	q->svext = soff / ext;
	q->dvext = doff / ext;
	q->n = len / ext;
	q->cb = cb;
	q->arg = arg;
	for (uint64_t i = 0; i < q->n && !prelocked; i++)
		if (xlockset_add(&q->locks, pool_lock_key(src->idx, q->svext + i), XLOCK_EXCL) < 0 ||
		    xlockset_add(&q->locks, pool_lock_key(dst->idx, q->dvext + i), XLOCK_EXCL) < 0) {
			xlockset_free(&q->locks);
			free(q);
			return -ENOMEM;
		}
	p->inflight++;
	pool_req_track(p, &q->link, share_discard);
	if (prelocked)
		share_locked(q, 0);
	else
		xlockset_acquire(&q->locks, p, share_locked, q);
	return 0;
}

int vvol_share(struct vvol *src, uint64_t soff, struct vvol *dst, uint64_t doff, uint64_t len,
	       vvol_cb cb, void *arg)
{
	return share_submit(src, soff, dst, doff, len, false, cb, arg);
}

int pool_share_locked(struct vvol *src, uint64_t soff, struct vvol *dst, uint64_t doff,
		      uint64_t len, vvol_cb cb, void *arg)
{
	return share_submit(src, soff, dst, doff, len, true, cb, arg);
}
