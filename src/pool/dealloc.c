/*
 * Deallocation of a byte range of a volume (the pool side of UNMAP and of
 * WRITE SAME with zeros).
 *
 * How this works: the range is processed in batches of at most DEALLOC_BATCH
 * virtual extents. A batch takes the extent locks exclusively in ascending
 * order (the order every request uses), then, per extent:
 *   - unmapped: nothing to do;
 *   - fully covered, or left without any valid granule: a MAP record to 0
 *     (the physical extent is freed once that record is durable, see alloc.c);
 *   - otherwise: a VALID clear record for the fully covered granules, if any
 *     of them is valid; partly covered granules keep their data;
 *   - redirected and not yet hydrated (hydrate.c), partly covered, with
 *     covered granules its source still provides: handled like a shared
 *     extent's partial range below (clearing would bring the source's data
 *     back); "data" everywhere here means valid in the extent or its source;
 *   - shared (refcount > 1, after vvol_share) and fully covered: a MAP record
 *     to 0 (this volume's reference goes); partly covered: nothing (validity
 *     belongs to the physical extent, so to every sharer). vvol_zero instead
 *     remembers the fully covered granules of such an extent that hold data
 *     (only the first and the last extent of a range can be partly covered)
 *     and, once the records are durable, writes zeros there through
 *     vvol_write -- a redirect-on-write, so only this volume sees the zeros.
 * Records are applied to memory as they are appended, so the locks can be
 * dropped after the batch; the next batch starts from the reactor (no deep
 * recursion). When the journal has no room the batch waits for it with its
 * locks held, exactly like the write path. The request completes when the
 * commit holding its last record is durable.
 */
#include <errno.h>
#include <stdlib.h>

#include "pool_internal.h"

#define DEALLOC_BATCH 64u

struct dreq {
	struct pool_req link; /* first: the pool's list of requests in flight */
	struct vpool *p;
	struct vvol *v;
	uint64_t off, end;      /* bytes */
	uint64_t next, last;    /* virtual extents: next to process, last of the range */
	uint64_t b0, bn;        /* current batch: first extent, count */
	uint64_t nlocked, ndone;
	bool logged;
	int err;
	vvol_cb cb;
	void *arg;
	struct xlock_wait lw;
	struct vio_op op;
	struct vj_waiter jw;
	/* vvol_zero: byte ranges of shared extents to write zeros into (at most 2) */
	bool zero, zero_started;
	unsigned nz, zpending;
	uint64_t zoff[2], zlen[2];
	uint8_t *zbuf;       /* one zeroed granule */
	struct iovec *ziov[2]; /* zlen / granule entries, all zbuf */
};

static void batch_start(struct dreq *d);

static void dreq_free(struct dreq *d)
{
	free(d->zbuf);
	free(d->ziov[0]);
	free(d->ziov[1]);
	free(d);
}

static void dreq_discard(struct pool_req *r) { dreq_free((struct dreq *)r); }

static void dreq_complete(struct dreq *d)
{
	vvol_cb cb = d->cb;
	void *a = d->arg;
	int err = d->err;
	d->p->inflight--;
	pool_req_untrack(d->p, &d->link);
	dreq_free(d);
	cb(a, err);
}

static void zero_done(void *arg, int res)
{
	struct dreq *d = arg;
	if (res < 0 && !d->err)
		d->err = res;
	if (--d->zpending == 0)
		dreq_complete(d);
}

/* vvol_zero: zeros into the shared extents' ranges (redirect-on-write), then complete. */
static void zero_start(struct dreq *d)
{
	d->zero_started = true;
	d->zpending = 1; /* held while issuing */
	d->zbuf = vblk_alloc_buf(VPOOL_GRANULE);
	if (!d->zbuf)
		d->err = -ENOMEM;
	for (unsigned i = 0; i < d->nz && !d->err; i++) {
		size_t n = (size_t)(d->zlen[i] / VPOOL_GRANULE);
		d->ziov[i] = malloc(n * sizeof(struct iovec));
		if (!d->ziov[i]) {
			d->err = -ENOMEM;
			break;
		}
		for (size_t k = 0; k < n; k++)
			d->ziov[i][k] = (struct iovec){.iov_base = d->zbuf, .iov_len = VPOOL_GRANULE};
		d->zpending++;
		int rc = vvol_write(d->v, d->zoff[i], d->zlen[i], d->ziov[i], (int)n, zero_done, d);
		if (rc < 0) {
			d->zpending--;
			d->err = rc;
		}
	}
	zero_done(d, 0);
}

static void dreq_finish(void *arg, int res)
{
	struct dreq *d = arg;
	if (!d->err && res < 0)
		d->err = -EIO;
	if (d->nz && !d->err && !d->zero_started) {
		zero_start(d);
		return;
	}
	dreq_complete(d);
}

static void batch_unlock(struct dreq *d)
{
	for (uint64_t i = 0; i < d->nlocked; i++)
		xlock_release(d->p, pool_lock_key(d->v->idx, d->b0 + i), XLOCK_EXCL);
	d->nlocked = 0;
}

/* Everything appended (or failed): wait for durability, then complete. */
static void dreq_end(struct dreq *d)
{
	if (d->logged && !d->err) {
		d->jw.fn = dreq_finish;
		d->jw.arg = d;
		vjournal_wait_commit(d->p->j, &d->jw);
		return;
	}
	vio_op_init(&d->op, dreq_finish, d);
	vreactor_defer(d->p->r, &d->op, 0);
}

static void next_batch_deferred(void *arg, int res)
{
	(void)res;
	batch_start(arg);
}

/* Partial range left as it is: vvol_zero writes zeros to granules [ga, gb) afterwards. */
static int zero_later(struct dreq *d, uint64_t ebase, uint32_t ga, uint32_t gb)
{
	if (!d->zero)
		return 0;
	if (d->nz == 2)
		return -EIO; /* cannot happen: only the range's ends are partial */
	d->zoff[d->nz] = ebase + (uint64_t)ga * VPOOL_GRANULE;
	d->zlen[d->nz++] = (uint64_t)(gb - ga) * VPOOL_GRANULE;
	return 0;
}

/* One extent under its lock: 0, -EAGAIN (no journal room: retry), or -errno. */
static int dealloc_extent(struct dreq *d, uint64_t vext)
{
	struct vpool *p = d->p;
	uint64_t m = d->v->map[vext];
	if (!m)
		return 0;
	uint64_t pext = m - 1;
	uint64_t ebase = vext * p->ext;
	uint64_t from = d->off > ebase ? d->off - ebase : 0;
	uint64_t to = d->end < ebase + p->ext ? d->end - ebase : p->ext;
	uint32_t ga = (uint32_t)((from + VPOOL_GRANULE - 1) / VPOOL_GRANULE);
	uint32_t gb = (uint32_t)(to / VPOOL_GRANULE);
	if (ga >= gb || !pool_any_data(p, pext, ga, gb))
		return 0;
	if (p->refs[pext] != 1) {
		/* Shared (EXTENDED COPY): validity belongs to the physical extent and so to
		 * every sharer. Fully covered: this volume drops its reference. Partly
		 * covered: left as it is (UNMAP is advisory); vvol_zero (WRITE SAME)
		 * writes zeros there once the records are durable, which redirects the
		 * extent. */
		if (from != 0 || to != p->ext)
			return zero_later(d, ebase, ga, gb);
		if (!vjournal_can_append(p->j, REC_MAP_LEN))
			return -EAGAIN;
		int rc = pool_log_map(p, d->v, vext, 0, 0);
		if (rc == 0)
			d->logged = true;
		return rc;
	}
	bool whole = !pool_any_data(p, pext, 0, ga) && !pool_any_data(p, pext, gb, p->gran_per_ext);
	uint64_t src = pool_hydr_src(p, pext);
	if (!whole && src != UINT64_MAX && pool_any_valid(p, src, ga, gb)) {
		/* Redirected, not yet hydrated: a cleared granule would read its source's
		 * data again. UNMAP leaves such granules mapped (advisory); vvol_zero writes
		 * zeros there once the records are durable, as for a shared extent. */
		return zero_later(d, ebase, ga, gb);
	}
	uint16_t need = whole ? REC_MAP_LEN : REC_VALID_LEN;
	if (!vjournal_can_append(p->j, need))
		return -EAGAIN;
	int rc = whole ? pool_log_map(p, d->v, vext, 0, 0) : pool_log_valid(p, pext, ga, gb - ga, false);
	if (rc == 0)
		d->logged = true;
	return rc;
}

static void batch_run(void *arg, int res)
{
	struct dreq *d = arg;
	struct vpool *p = d->p;
	if (res < 0 || p->failed) {
		d->err = -EIO;
	} else {
		while (d->ndone < d->bn) {
			int rc = dealloc_extent(d, d->b0 + d->ndone);
			if (rc == -EAGAIN) {
				d->jw.fn = batch_run;
				d->jw.arg = d;
				vjournal_wait_room(p->j, &d->jw);
				return;
			}
			if (rc < 0) {
				if (rc != -EOPNOTSUPP)
					p->failed = true; /* the in-memory state and the journal disagree */
				d->err = rc == -EOPNOTSUPP ? rc : -EIO;
				break;
			}
			d->ndone++;
		}
	}
	batch_unlock(d);
	d->next = d->b0 + d->bn;
	if (d->err || d->next > d->last) {
		dreq_end(d);
		return;
	}
	vio_op_init(&d->op, next_batch_deferred, d);
	vreactor_defer(p->r, &d->op, 0);
}

static void lock_more(struct dreq *d);

static void lock_granted_deferred(void *arg, int res)
{
	(void)res;
	struct dreq *d = arg;
	d->nlocked++;
	lock_more(d);
}

static void lock_granted(struct xlock_wait *w)
{
	struct dreq *d = (struct dreq *)((char *)w - offsetof(struct dreq, lw));
	vio_op_init(&d->op, lock_granted_deferred, d);
	vreactor_defer(d->p->r, &d->op, 0);
}

static void lock_more(struct dreq *d)
{
	while (d->nlocked < d->bn) {
		d->lw.granted = lock_granted;
		int rc = xlock_acquire(d->p, pool_lock_key(d->v->idx, d->b0 + d->nlocked), XLOCK_EXCL,
				       &d->lw);
		if (rc < 0) {
			d->err = rc;
			batch_unlock(d);
			dreq_end(d);
			return;
		}
		if (rc == 0)
			return;
		d->nlocked++;
	}
	batch_run(d, 0);
}

static void batch_start(struct dreq *d)
{
	d->b0 = d->next;
	d->bn = d->last - d->next + 1 < DEALLOC_BATCH ? d->last - d->next + 1 : DEALLOC_BATCH;
	d->nlocked = d->ndone = 0;
	lock_more(d);
}

static int dealloc_submit(struct vvol *v, uint64_t off, uint64_t len, bool zero, vvol_cb cb,
			  void *arg)
{
	struct vpool *p = v->pool;
	if (off % VBLK_SECTOR || len % VBLK_SECTOR || off > v->size || len > v->size - off)
		return -EINVAL;
	if (p->readonly)
		return -EROFS;
	struct dreq *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->p = p;
	d->v = v;
	d->off = off;
	d->end = off + len;
	d->cb = cb;
	d->arg = arg;
	d->zero = zero;
	p->inflight++;
	pool_req_track(p, &d->link, dreq_discard);
	if (!len || p->failed) {
		d->err = p->failed ? -EIO : 0;
		dreq_end(d);
		return 0;
	}
	d->next = off / p->ext;
	d->last = (off + len - 1) / p->ext;
	batch_start(d);
	return 0;
}

int vvol_deallocate(struct vvol *v, uint64_t off, uint64_t len, vvol_cb cb, void *arg)
{
	return dealloc_submit(v, off, len, false, cb, arg);
}

int vvol_zero(struct vvol *v, uint64_t off, uint64_t len, vvol_cb cb, void *arg)
{
	return dealloc_submit(v, off, len, true, cb, arg);
}
