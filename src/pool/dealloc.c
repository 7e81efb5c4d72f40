/*
 * Deallocation of a byte range of a volume (the pool side of UNMAP and of
 * WRITE SAME with zeros), and the zeros both write into partial granules.
 *
 * How this works: the range is processed in batches of at most DEALLOC_BATCH
 * virtual extents. A batch takes the extent locks exclusively in ascending
 * order (the order every request uses), then, per extent:
 *   - unmapped: nothing to do;
 *   - fully covered, or left without any valid granule: a MAP record to 0
 *     (the physical extent is freed once that record is durable, see alloc.c);
 *   - otherwise: a VALID clear record for the fully covered granules, if any
 *     of them is valid; partly covered granules are not deallocated (below);
 *   - redirected and not yet hydrated (hydrate.c), partly covered, with
 *     covered granules its source still provides: handled like a shared
 *     extent's partial range below (clearing would bring the source's data
 *     back), except that vvol_unmap's zeros are written there too (the extent
 *     is private: in place, no new space); "data" everywhere here means valid
 *     in the extent or its source;
 *   - shared (refcount > 1, after vvol_share) and fully covered: a MAP record
 *     to 0 (this volume's reference goes); partly covered: nothing (validity
 *     belongs to the physical extent, so to every sharer). vvol_zero instead
 *     remembers the fully covered granules of such an extent that hold data
 *     (only the first and the last extent of a range can be partly covered)
 *     and, once the records are durable, writes zeros there through
 *     vvol_write -- a redirect-on-write, so only this volume sees the zeros;
 *     vvol_unmap remembers them too, but writes through pool_write_noalloc
 *     (below), which leaves a shared extent as it is.
 * Partly covered 4 KiB granules (512-byte volumes): vvol_deallocate leaves
 * them as they are. vvol_unmap and vvol_zero remember the range's sectors in
 * them when the granule holds data (one at each end of the range, at most)
 * and, once the records are durable, write zeros into exactly those sectors:
 * vvol_zero through vvol_write (a shared extent is redirected; no space ->
 * -ENOSPC), vvol_unmap through pool_write_noalloc, which leaves a granule
 * whose write would need new space (shared extent, or unmapped meanwhile) as
 * it is -- UNMAP is advisory -- and is an in-place overwrite otherwise (a
 * whole-granule read-modify-write under the exclusive extent lock where the
 * store serializes unaligned direct writes: design rule 14). The sectors
 * then read zeros and stay mapped. A granule that holds no data reads zeros
 * already: nothing is written there. Adjacent ranges are written as one.
 * Records are applied to memory as they are appended, so the locks can be
 * dropped after the batch; the next batch starts from the reactor (no deep
 * recursion). When the journal has no room the batch waits for it with its
 * locks held, exactly like the write path. The request completes when the
 * commit holding its last record is durable.
 * What it deallocated (struct vvol_report) is counted where a record
 * releases granules from the volume's map -- a MAP record to 0 or a VALID
 * clear -- as the granules holding data among those it releases (counted
 * before the record changes them), and added to the caller's report before
 * cb runs.
 */
#include <errno.h>
#include <stdlib.h>

#include "pool_internal.h"

#define DEALLOC_BATCH 64u
#define DEALLOC_ZRANGES 4u /* per end of the range: its partial granule and a shared part */

/* What happens to partly covered granules (and the partly covered part of a shared extent). */
enum dmode {
	DM_DEALLOC, /* vvol_deallocate: left as they are */
	DM_UNMAP,   /* vvol_unmap: zeros where that takes no new space */
	DM_ZERO,    /* vvol_zero: zeros (redirect-on-write where shared) */
};

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
	struct vvol_report *rep; /* the caller's (or NULL) */
	uint64_t deallocated;    /* bytes, so far (vvol_report) */
	struct xlock_wait lw;
	struct vio_op op;
	struct vj_waiter jw;
	/* byte ranges to write zeros into once the records are durable (see the top) */
	enum dmode mode;
	bool zero_started;
	unsigned nz, zpending;
	uint64_t zoff[DEALLOC_ZRANGES], zlen[DEALLOC_ZRANGES];
	uint8_t *zbuf;                        /* one zeroed granule */
	struct iovec *ziov[DEALLOC_ZRANGES]; /* a granule per entry at most, all zbuf */
};

static void batch_start(struct dreq *d);

static void dreq_free(struct dreq *d)
{
	free(d->zbuf);
	for (unsigned i = 0; i < DEALLOC_ZRANGES; i++)
		free(d->ziov[i]);
	free(d);
}

static void dreq_discard(struct pool_req *r) { dreq_free((struct dreq *)r); }

static void dreq_complete(struct dreq *d)
{
	vvol_cb cb = d->cb;
	void *a = d->arg;
	int err = d->err;
	if (d->rep)
		d->rep->deallocated += d->deallocated;
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

/* The remembered ranges get zeros (vvol_zero: redirect-on-write; vvol_unmap: no new
 * space), then complete. */
static void zero_start(struct dreq *d)
{
	d->zero_started = true;
	d->zpending = 1; /* held while issuing */
	d->zbuf = vblk_alloc_buf(VPOOL_GRANULE);
	if (!d->zbuf)
		d->err = -ENOMEM;
	for (unsigned i = 0; i < d->nz && !d->err; i++) {
		size_t n = (size_t)((d->zlen[i] + VPOOL_GRANULE - 1) / VPOOL_GRANULE);
		d->ziov[i] = malloc(n * sizeof(struct iovec));
		if (!d->ziov[i]) {
			d->err = -ENOMEM;
			break;
		}
		for (size_t k = 0; k < n; k++) {
			uint64_t left = d->zlen[i] - (uint64_t)k * VPOOL_GRANULE;
			d->ziov[i][k] = (struct iovec){
				.iov_base = d->zbuf,
				.iov_len = left < VPOOL_GRANULE ? (size_t)left : VPOOL_GRANULE};
		}
		d->zpending++;
		int rc = d->mode == DM_ZERO
				 ? vvol_write(d->v, d->zoff[i], d->zlen[i], d->ziov[i], (int)n,
					      zero_done, d)
				 : pool_write_noalloc(d->v, d->zoff[i], d->zlen[i], d->ziov[i],
						      (int)n, zero_done, d);
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

/* Zeros into the volume's bytes [a, b) once the records are durable (one range with
 * the previous one when they touch). */
static int zero_bytes(struct dreq *d, uint64_t a, uint64_t b)
{
	uint64_t *lo = d->nz ? &d->zoff[d->nz - 1] : NULL, *ln = d->nz ? &d->zlen[d->nz - 1] : NULL;
	if (lo && *lo + *ln == a) {
		*ln += b - a;
		return 0;
	}
	if (lo && b == *lo) {
		*lo = a;
		*ln += b - a;
		return 0;
	}
	if (d->nz == DEALLOC_ZRANGES)
		return -EIO; /* cannot happen: only the range's ends are partial */
	d->zoff[d->nz] = a;
	d->zlen[d->nz++] = b - a;
	return 0;
}

/* Granules [ga, gb) left as they are: vvol_zero and vvol_unmap write zeros there
 * afterwards (vvol_unmap only where that takes no new space: pool_write_noalloc). */
static int zero_later(struct dreq *d, uint64_t ebase, uint32_t ga, uint32_t gb)
{
	if (d->mode == DM_DEALLOC)
		return 0;
	return zero_bytes(d, ebase + (uint64_t)ga * VPOOL_GRANULE, ebase + (uint64_t)gb * VPOOL_GRANULE);
}

/*
 * The range's sectors [from, to) (bytes in the extent) of one partly covered granule:
 * vvol_unmap and vvol_zero write zeros there afterwards if the granule holds data now
 * (else it reads zeros already, and a write would only map it, or redirect a shared
 * extent for nothing).
 */
static int zero_partial(struct dreq *d, uint64_t vext, uint64_t from, uint64_t to)
{
	uint64_t m = pool_map_get(d->v, vext);
	uint32_t g = (uint32_t)(from / VPOOL_GRANULE);
	if (d->mode == DM_DEALLOC || from >= to || !m || !pool_any_data(d->p, m - 1, g, g + 1))
		return 0;
	uint64_t ebase = vext * d->p->ext;
	return zero_bytes(d, ebase + from, ebase + to);
}

/* The fully covered granules [ga, gb) of one extent under its lock: 0, -EAGAIN (no
 * journal room: retry, nothing done), or -errno. */
static int dealloc_granules(struct dreq *d, uint64_t vext, uint64_t from, uint64_t to,
			    uint32_t ga, uint32_t gb)
{
	struct vpool *p = d->p;
	uint64_t m = pool_map_get(d->v, vext);
	if (!m)
		return 0;
	uint64_t pext = m - 1;
	uint64_t ebase = vext * p->ext;
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
		uint32_t n = pool_count_data(p, pext, ga, gb);
		int rc = pool_log_map(p, d->v, vext, 0, 0);
		if (rc == 0) {
			d->logged = true;
			d->deallocated += (uint64_t)n * VPOOL_GRANULE;
		}
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
	/* whole: no data outside [ga, gb), so this counts all the extent held; else the
	 * source provides nothing in [ga, gb): the granules valid here */
	uint32_t n = pool_count_data(p, pext, ga, gb);
	int rc = whole ? pool_log_map(p, d->v, vext, 0, 0) : pool_log_valid(p, pext, ga, gb - ga, false);
	if (rc == 0) {
		d->logged = true;
		d->deallocated += (uint64_t)n * VPOOL_GRANULE;
	}
	return rc;
}

/* One extent under its lock: 0, -EAGAIN (no journal room: retry), or -errno. */
static int dealloc_extent(struct dreq *d, uint64_t vext)
{
	uint64_t ext = d->p->ext, ebase = vext * ext;
	uint64_t from = d->off > ebase ? d->off - ebase : 0;
	uint64_t to = d->end < ebase + ext ? d->end - ebase : ext;
	uint32_t ga = (uint32_t)((from + VPOOL_GRANULE - 1) / VPOOL_GRANULE);
	uint32_t gb = (uint32_t)(to / VPOOL_GRANULE);
	/* the partial granule at the start (the whole range when it is inside one), */
	uint64_t head_end = (uint64_t)ga * VPOOL_GRANULE < to ? (uint64_t)ga * VPOOL_GRANULE : to;
	/* and the one at the end, unless that is the same */
	uint64_t tail_from = (uint64_t)gb * VPOOL_GRANULE >= from ? (uint64_t)gb * VPOOL_GRANULE : to;
	/* -EAGAIN comes before anything is done or remembered: the retry starts afresh */
	int rc = dealloc_granules(d, vext, from, to, ga, gb);
	if (rc == 0)
		rc = zero_partial(d, vext, from, head_end);
	if (rc == 0)
		rc = zero_partial(d, vext, tail_from, to);
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

static int dealloc_submit(struct vvol *v, uint64_t off, uint64_t len, enum dmode mode,
			  struct vvol_report *rep, vvol_cb cb, void *arg)
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
	d->rep = rep;
	d->mode = mode;
	p->inflight++;
	pool_req_track(p, &d->link, dreq_discard);
	if (!len || pool_check_failed(p)) {
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
	return dealloc_submit(v, off, len, DM_DEALLOC, NULL, cb, arg);
}

int vvol_deallocate_ex(struct vvol *v, uint64_t off, uint64_t len, struct vvol_report *rep,
		       vvol_cb cb, void *arg)
{
	return dealloc_submit(v, off, len, DM_DEALLOC, rep, cb, arg);
}

int vvol_unmap(struct vvol *v, uint64_t off, uint64_t len, vvol_cb cb, void *arg)
{
	return dealloc_submit(v, off, len, DM_UNMAP, NULL, cb, arg);
}

int vvol_unmap_ex(struct vvol *v, uint64_t off, uint64_t len, struct vvol_report *rep,
		  vvol_cb cb, void *arg)
{
	return dealloc_submit(v, off, len, DM_UNMAP, rep, cb, arg);
}

int vvol_zero(struct vvol *v, uint64_t off, uint64_t len, vvol_cb cb, void *arg)
{
	return dealloc_submit(v, off, len, DM_ZERO, NULL, cb, arg);
}

int vvol_zero_ex(struct vvol *v, uint64_t off, uint64_t len, struct vvol_report *rep,
		 vvol_cb cb, void *arg)
{
	return dealloc_submit(v, off, len, DM_ZERO, rep, cb, arg);
}
