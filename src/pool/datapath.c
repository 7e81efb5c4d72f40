/*
 * Read and write requests on a volume.
 *
 * How this works: a request is split into one sub-request per virtual extent
 * it touches. Each sub is classified:
 *   READ       mapped extent: one read of the covered bytes, then granules
 *              that are not valid are overwritten with zeros in the buffer;
 *   ZERO       unmapped extent: the buffer is zeroed, no I/O;
 *   OVERWRITE  private extent (refcount 1) whose covered granules are all
 *              valid: one in-place write with DSYNC, no metadata (on a store
 *              that serializes unaligned direct writes -- struct vblk,
 *              whole_granules() -- partial granules are read first and
 *              written whole: a read-modify-write under the exclusive lock);
 *   VALIDATE   private extent with some covered granule not valid: the
 *              write (partial granules that were never written are padded
 *              with zeros to the whole granule), then a VALID record;
 *   ALLOC      unmapped extent: a reserved free extent gets the write (edges
 *              padded with zeros to whole granules), then MAP (new, empty
 *              validity) + VALID records.
 *   COW        shared extent (refcount > 1, after EXTENDED COPY): redirect-on-
 *              write. A reserved free extent gets only the request's granules
 *              (partial ones completed from the shared extent), then MAP with
 *              the ROW flag: the shared extent stays this entry's "source",
 *              read for the granules the new extent lacks until the
 *              background hydrator (hydrate.c) has copied them. (A write that
 *              covers everything the source holds needs no source: plain MAP.)
 *   SKIP       a write that must not take new space (pool_write_noalloc, the
 *              zeros an advisory UNMAP writes into partial granules, dealloc.c)
 *              and would need it (ALLOC or COW above): nothing is done.
 * A private extent that still has a source reads each granule from itself
 * if valid there, else from the source, else zeros (one operation per run);
 * a write's partial granules that are not valid in it are completed from the
 * source (read first), never from zeros.
 * Locks: READ/ZERO/OVERWRITE take the extent lock shared (an OVERWRITE that
 * reads-modifies-writes a granule exclusive), the others exclusive; all of a
 * request's extents are locked in ascending order before anything is decided
 * for good. After locking, the classification is redone
 * (state may have changed while waiting); if an extent now needs the
 * exclusive lock, all locks are dropped and taken again.
 * Space: all extents an ALLOC needs are reserved before any I/O; if the pool
 * cannot give them the request fails with -ENOSPC and nothing is changed.
 * Free extents whose file space is already reserved ("backed", alloc.c; the
 * pre-backer keeps some ready) are preferred; for any other, the backing
 * file's space is reserved first (fallocate through io_uring, before any data
 * is written): a file system that is full
 * fails the request with -ENOSPC, nothing changed -- DATA PROTECT for the
 * initiator, never a write error halfway through.
 * Durability: data goes with DSYNC to space no durable metadata references
 * (or in place, for OVERWRITE); the records are appended only after the data
 * is durable, and the request completes only when their commit is durable.
 * Except small writes (ALLOC / COW / VALIDATE spanning at most POOL_REDO_MAX
 * of granules in the extent): their records carry the bytes too (DATA,
 * redo.c), appended first; the sub completes when the commit is durable and
 * its home write (without DSYNC, from a copy of the bytes) is issued then:
 * the caller is answered at once, while the request keeps its locks until
 * the home write is done, so nothing reads the extent before the bytes are
 * there (a request whose caller holds the locks, pool_rw_locked, waits for
 * both, the home write issued with the commit). An extent with
 * such writes since the last checkpoint is never classified OVERWRITE, and
 * its larger writes write their partial granules whole (redo.c says why).
 * Writes with more than IOV_MAX iovecs are split into several operations.
 * Compare and write: every extent is locked exclusive; the request runs first
 * as a read into its own buffer, then (req_finish) the data is compared and,
 * if equal, the same request runs again as a write with the locks still held.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"
#include "vaaid/iov.h"
#include "vaaid/util.h"

#define MAX_IOV_PER_OP 1024

enum { OP_READ, OP_WRITE };
enum { SK_READ, SK_ZERO, SK_OVERWRITE, SK_VALIDATE, SK_ALLOC, SK_COW, SK_SKIP };

struct preq;

struct pio {
	struct vio_op op;
	struct psub *sub;
};

struct psub {
	struct preq *rq;
	uint64_t vext;
	uint32_t eoff, len; /* bytes within the extent */
	size_t doff;        /* offset within the request's data */
	uint8_t mode, kind;
	bool locked;
	uint64_t pext;
	uint64_t src_pext; /* SK_COW: the shared extent */
	uint64_t base;     /* where partial granules are completed from (UINT64_MAX: zeros) */
	bool prereading;   /* the partial granules are being read from base */
	bool pad_head, pad_tail;
	bool backed;       /* SK_ALLOC / SK_COW: the reserved extent needs no fallocate */
	bool runs;         /* read by issue_read_runs: nothing left to zero */
	bool redo;         /* carried in the journal (redo.c): home write without DSYNC */
	bool redo_logged;  /* its records (data included) are appended */
	uint8_t redo_parts; /* not early: home write and commit still to complete */
	bool early;         /* completes at its commit; its home write follows (redo.c) */
	bool home_owed;     /* completed early: its home write is still to complete */
	uint32_t redo_at;   /* where its bytes start in the extent */
	uint8_t *home_buf;  /* early: the home write's own copy of the bytes */
	struct iovec home_iov;
	void *runs_mem;    /* reads through a source: own iovecs and operations */
	uint8_t *bounce[2];
	struct iovec *iov;
	int niov;
	int io_pending;
	int err;
	struct pio *pios;
	int npio;
	struct vj_waiter jw;
	struct vio_op alloc_op; /* SK_ALLOC / SK_COW: fallocate of the new extent */
};

struct preq {
	struct pool_req link; /* first: the pool's list of requests in flight */
	struct preq *space_next; /* in p->space_wait (pool_space_freed) */
	struct vpool *p;
	struct vvol *v;
	int op;
	uint64_t off, len;
	const struct iovec *iov;
	int iovcnt;
	vvol_cb cb;
	void *arg;
	unsigned nsub, lock_next, subs_pending, allocs_pending;
	int alloc_err;
	int err;
	uint8_t *bounce_all; /* whole-request bounce when the caller's buffers are not aligned */
	struct iovec bounce_iov;
	const struct iovec *user_iov;
	int user_iovcnt;
	struct xlock_wait lw;
	struct vio_op defer_op;
	struct psub *subs;
	struct iovec *iov_pool;
	size_t iov_used, iov_cap;
	struct pio *pio_pool;
	size_t pio_used, pio_cap;
	bool prelocked;         /* pool_rw_locked: the caller owns the locks */
	bool acked;             /* the caller was answered; home writes still owed */
	bool noalloc;           /* pool_write_noalloc: extents needing new space are skipped */
	unsigned homes_owed;    /* subs completed early whose home write is not done */
	/* compare and write */
	bool caw;
	const uint8_t *caw_cmp;
	uint8_t *caw_buf;
	struct iovec caw_iov;
	const struct iovec *caw_wiov;
	int caw_wiovcnt;
	uint32_t caw_at;   /* the command's bytes start here in the (widened) range */
	uint64_t caw_len;  /* ... and are this long */
	uint64_t *caw_miscompare;
};

static void req_lock_next(struct preq *rq);
static void sub_done(struct psub *s, int err);

static uint32_t gran_of(uint64_t byte) { return (uint32_t)(byte / VPOOL_GRANULE); }

/* ---- completion */

static void req_free(struct preq *rq)
{
	for (unsigned i = 0; i < rq->nsub; i++) {
		free(rq->subs[i].bounce[0]);
		free(rq->subs[i].bounce[1]);
		free(rq->subs[i].runs_mem);
		free(rq->subs[i].home_buf);
	}
	free(rq->bounce_all);
	free(rq->caw_buf);
	free(rq->subs);
	free(rq->iov_pool);
	free(rq->pio_pool);
	free(rq);
}

static void req_discard(struct pool_req *r) { req_free((struct preq *)r); }

static void req_start_io(struct preq *rq);
static void req_issue(struct preq *rq);
static void allocs_step(struct preq *rq, int res);
static void sub_allocated(void *arg, int res);
static bool caw_compared_equal(struct preq *rq);

/* Locks released, request gone; the caller is answered unless it already was. */
static void req_release(struct preq *rq)
{
	struct vpool *p = rq->p;
	for (unsigned i = 0; i < rq->nsub; i++) {
		struct psub *s = &rq->subs[i];
		if (s->locked)
			xlock_release(p, pool_lock_key(rq->v->idx, s->vext), s->mode);
	}
	if (rq->bounce_all && rq->op == OP_READ && !rq->err)
		iov_copy_to(rq->user_iov, rq->user_iovcnt, 0, rq->bounce_all, rq->len);
	p->inflight--;
	p->fg_last_ns = vclock_ns();
	pool_req_untrack(p, &rq->link);
	vvol_cb cb = rq->acked ? NULL : rq->cb;
	void *arg = rq->arg;
	int err = rq->err;
	req_free(rq);
	if (cb)
		cb(arg, err);
	pool_hydrator_kick(p); /* new redirected extents, or its pace under load */
}

static void req_finish(struct preq *rq)
{
	struct vpool *p = rq->p;
	if (rq->caw && rq->op == OP_READ && !rq->err && caw_compared_equal(rq)) {
		req_start_io(rq); /* the write phase, locks still held */
		return;
	}
	if (rq->homes_owed) {
		/* Durable in the journal, not yet readable at home: answer now, keep the
		 * locks (and the request) until the home writes are done -- everything
		 * that reads those extents takes their locks first. */
		rq->acked = true;
		p->fg_last_ns = vclock_ns();
		rq->cb(rq->arg, rq->err);
		return;
	}
	req_release(rq);
}

static void req_fail_deferred(void *arg, int res)
{
	(void)res;
	req_finish(arg);
}

/* Complete without any sub having started (locks held are released). */
static void req_fail(struct preq *rq, int err)
{
	rq->err = err;
	vio_op_init(&rq->defer_op, req_fail_deferred, rq);
	vreactor_defer(rq->p->r, &rq->defer_op, 0);
}

static void sub_done(struct psub *s, int err)
{
	struct preq *rq = s->rq;
	if (err && !rq->err)
		rq->err = err;
	if (--rq->subs_pending == 0)
		req_finish(rq);
}

/* ---- classification */

static uint8_t classify(const struct preq *rq, const struct psub *s)
{
	const struct vpool *p = rq->p;
	uint64_t m = pool_map_get(rq->v, s->vext);
	if (rq->op == OP_READ)
		return m ? SK_READ : SK_ZERO;
	if (!m)
		return rq->noalloc ? SK_SKIP : SK_ALLOC;
	uint64_t pext = m - 1;
	if (pool_extent_shared(p, pext))
		/* shared (EXTENDED COPY), or until a commit not durable yet */
		return rq->noalloc ? SK_SKIP : SK_COW;
	/* An extent with writes carried in the journal since the last checkpoint takes
	 * no plain in-place write: replay would write the older bytes over it (redo.c). */
	if (pool_granules_valid(p, pext, gran_of(s->eoff), gran_of(s->eoff + s->len - 1)) &&
	    !pool_redo_pending(p, pext))
		return SK_OVERWRITE;
	return SK_VALIDATE;
}

/* Does a write of this sub cover part of a granule (at either end)? */
static bool sub_partial(const struct psub *s)
{
	return s->eoff % VPOOL_GRANULE || (s->eoff + s->len) % VPOOL_GRANULE;
}

/*
 * Write whole granules even in place? When the store serializes unaligned direct
 * writes (struct vblk: ext4 before Linux 6.4), a partial-granule overwrite reads
 * its granule first and writes it whole: one more read, but no stall of every
 * other I/O of the pool file.
 */
static bool whole_granules(const struct vpool *p)
{
	return p->dev->unaligned_writes_serialize;
}

static uint8_t mode_for(const struct preq *rq, const struct psub *s, uint8_t kind)
{
	if (rq->caw)
		return XLOCK_EXCL;
	/* a read-modify-write of a granule excludes every other writer of the extent */
	if (kind == SK_OVERWRITE && whole_granules(rq->p) && sub_partial(s))
		return XLOCK_EXCL;
	return (kind == SK_READ || kind == SK_ZERO || kind == SK_OVERWRITE || kind == SK_SKIP)
		       ? XLOCK_SHARED
		       : XLOCK_EXCL;
}

/* ---- I/O submission */

static struct iovec *iov_take(struct preq *rq, size_t n)
{
	if (rq->iov_used + n > rq->iov_cap)
		return NULL;
	struct iovec *r = rq->iov_pool + rq->iov_used;
	rq->iov_used += n;
	return r;
}

static void sub_io_done(void *arg, int res);

/* Submit s->iov[0..niov) at disk offset `at`, split at MAX_IOV_PER_OP. */
static int sub_submit(struct psub *s, uint64_t at, bool write)
{
	struct preq *rq = s->rq;
	int n = (s->niov + MAX_IOV_PER_OP - 1) / MAX_IOV_PER_OP;
	if (rq->pio_used + (size_t)n > rq->pio_cap)
		return -ENOMEM;
	s->pios = rq->pio_pool + rq->pio_used;
	rq->pio_used += (size_t)n;
	s->npio = n;
	s->io_pending = n;
	for (int k = 0; k < n; k++) {
		int first = k * MAX_IOV_PER_OP;
		int cnt = s->niov - first < MAX_IOV_PER_OP ? s->niov - first : MAX_IOV_PER_OP;
		struct pio *pio = &s->pios[k];
		pio->sub = s;
		vio_op_init(&pio->op, sub_io_done, pio);
		int rc = write ? vblk_writev(rq->p->dev, s->iov + first, cnt, at,
					     s->redo ? 0 : VBLK_DSYNC, &pio->op)
			       : vblk_readv(rq->p->dev, s->iov + first, cnt, at, &pio->op);
		if (rc < 0)
			vreactor_defer(rq->p->r, &pio->op, rc);
		at += iov_total(s->iov + first, cnt);
	}
	return 0;
}

static int slice_into(struct preq *rq, struct psub *s, size_t doff, size_t len)
{
	int max = (int)(rq->iov_cap - rq->iov_used);
	struct iovec *dst = rq->iov_pool + rq->iov_used;
	int n = iov_slice(rq->iov, rq->iovcnt, doff, len, dst, max);
	if (n < 0)
		return n;
	if (!s->iov)
		s->iov = dst;
	s->niov += n;
	rq->iov_used += (size_t)n;
	return 0;
}

static int issue_read_runs(struct preq *rq, struct psub *s, uint64_t src);

static int issue_read(struct preq *rq, struct psub *s)
{
	if (s->kind == SK_ZERO) {
		iov_memset(rq->iov, rq->iovcnt, s->doff, 0, s->len);
		sub_done(s, 0);
		return 0;
	}
	s->pext = pool_map_get(rq->v, s->vext) - 1;
	uint64_t src = pool_hydr_src(rq->p, s->pext);
	if (src != UINT64_MAX && pool_validity(rq->p, s->pext))
		return issue_read_runs(rq, s, src);
	int rc = slice_into(rq, s, s->doff, s->len);
	if (rc < 0)
		return rc;
	return sub_submit(s, pool_ext_off(rq->p, s->pext) + s->eoff, false);
}

/* Where granule g of a redirected extent reads from: 0 itself, 1 its source, 2 zeros. */
static int granule_from(const struct vpool *p, uint64_t pext, uint64_t src, uint32_t g)
{
	return pool_granule_valid(p, pext, g) ? 0 : pool_granule_valid(p, src, g) ? 1 : 2;
}

/*
 * A redirected extent not yet hydrated: each run of granules is read from the
 * extent (valid there), from its source (valid there), or zeroed.
 */
static int issue_read_runs(struct preq *rq, struct psub *s, uint64_t src)
{
	const struct vpool *p = rq->p;
	uint32_t end = s->eoff + s->len;
	uint32_t g0 = gran_of(s->eoff), g1 = gran_of(end - 1);
	size_t nruns = g1 - g0 + 1u;
	size_t niov = (size_t)rq->iovcnt + nruns;
	size_t npio = nruns + niov / MAX_IOV_PER_OP + 1;
	s->runs_mem = malloc(niov * sizeof(struct iovec) + npio * sizeof(struct pio));
	if (!s->runs_mem)
		return -ENOMEM;
	struct iovec *iov = s->runs_mem;
	struct pio *pios = (struct pio *)(iov + niov);
	size_t iu = 0, pu = 0;
	s->io_pending = 1; /* held while issuing */
	for (uint32_t g = g0; g <= g1;) {
		int cls = granule_from(p, s->pext, src, g);
		uint32_t h = g + 1;
		while (h <= g1 && granule_from(p, s->pext, src, h) == cls)
			h++;
		uint32_t a = g * VPOOL_GRANULE > s->eoff ? g * VPOOL_GRANULE : s->eoff;
		uint32_t b = h * VPOOL_GRANULE < end ? h * VPOOL_GRANULE : end;
		g = h;
		size_t doff = s->doff + (a - s->eoff);
		if (cls == 2) {
			iov_memset(rq->iov, rq->iovcnt, doff, 0, b - a);
			continue;
		}
		int n = iov_slice(rq->iov, rq->iovcnt, doff, b - a, iov + iu, (int)(niov - iu));
		if (n < 0) {
			s->err = n;
			break;
		}
		uint64_t at = pool_ext_off(p, cls == 0 ? s->pext : src) + a;
		for (int k = 0; k < n; k += MAX_IOV_PER_OP) {
			int cnt = n - k < MAX_IOV_PER_OP ? n - k : MAX_IOV_PER_OP;
			struct pio *pio = &pios[pu++];
			pio->sub = s;
			vio_op_init(&pio->op, sub_io_done, pio);
			s->io_pending++;
			int rc = vblk_readv(p->dev, iov + iu + k, cnt, at, &pio->op);
			if (rc < 0)
				vreactor_defer(p->r, &pio->op, rc);
			at += iov_total(iov + iu + k, cnt);
		}
		iu += (size_t)n;
	}
	s->runs = true;
	struct pio *hold = &pios[pu]; /* drop the hold through the normal completion */
	hold->sub = s;
	sub_io_done(hold, 0);
	return 0;
}

/* Lay the request's bytes [from, to) of the extent over granule g's bounce buffer. */
static void granule_overlay(struct preq *rq, struct psub *s, uint8_t *b, uint32_t g, uint32_t from,
			    uint32_t to)
{
	iov_copy_from(rq->iov, rq->iovcnt, s->doff + (from - s->eoff), b + (from - g * VPOOL_GRANULE),
		      to - from);
}

static int write_main(struct preq *rq, struct psub *s);
static void sub_redo_log(void *arg, int res);

/*
 * Is partial granule g of this write written whole (its other bytes laid around
 * the request's: read first, or zeros)? Always where the store serializes
 * unaligned writes (an OVERWRITE's partial granules are then read first, under
 * the exclusive lock); else for every write but a plain OVERWRITE when `anew`
 * (a new extent -- ALLOC, COW -- or one whose older journal-carried bytes must
 * not be needed) or when the granule holds nothing valid yet.
 */
static bool pad_granule(const struct vpool *p, const struct psub *s, bool anew, uint32_t g)
{
	if (whole_granules(p))
		return true;
	return s->kind != SK_OVERWRITE && (anew || !pool_granule_valid(p, s->pext, g));
}

/*
 * Writes: decide where the data goes and which partial granules need a whole-
 * granule bounce (a granule that is not valid where it is written: padded
 * with what it reads as now -- zeros, or its data in the shared or source
 * extent, read first into the bounce).
 */
static int issue_write(struct preq *rq, struct psub *s)
{
	struct vpool *p = rq->p;
	uint32_t end = s->eoff + s->len;
	uint32_t g0 = gran_of(s->eoff), g1 = gran_of(end - 1);
	bool head_partial = s->eoff % VPOOL_GRANULE || (g0 == g1 && end % VPOOL_GRANULE);
	bool tail_partial = end % VPOOL_GRANULE != 0;
	s->base = UINT64_MAX;
	if (s->kind == SK_SKIP) {
		sub_done(s, 0);
		return 0;
	}
	if (s->kind == SK_ALLOC) {
		/* pext was reserved by the caller */
	} else if (s->kind == SK_COW) {
		/* pext was reserved by the caller; the shared extent completes partial granules */
		s->src_pext = pool_map_get(rq->v, s->vext) - 1;
		s->base = s->src_pext;
	} else {
		/* SK_OVERWRITE / SK_VALIDATE: a private extent (classified under the lock) */
		s->pext = pool_map_get(rq->v, s->vext) - 1;
		if (pool_extent_shared(p, s->pext))
			return -EIO; /* cannot happen: shared extents are classified SK_COW under the lock */
		s->base = pool_hydr_src(p, s->pext);
	}
	bool fresh = s->kind == SK_ALLOC || s->kind == SK_COW;
	/* Small writes that need metadata carry their bytes in the journal (redo.c). */
	s->redo = s->kind != SK_OVERWRITE && (g1 - g0 + 1u) * VPOOL_GRANULE <= POOL_REDO_MAX;
	/* Any other write into an extent with journal-carried writes pending writes its
	 * granules whole: its VALID record makes older journal bytes there stale, so
	 * they must not be needed for the granules' other bytes (redo.c). */
	bool whole = !fresh && !s->redo && pool_redo_pending(p, s->pext);
	s->pad_head = head_partial && pad_granule(p, s, fresh || whole, g0);
	s->pad_tail = tail_partial && g1 != g0 && pad_granule(p, s, fresh || whole, g1);
	uint32_t pg[2] = {g0, g1};
	bool pad[2] = {s->pad_head, s->pad_tail};
	uint64_t from[2] = {UINT64_MAX, UINT64_MAX};
	unsigned nread = 0;
	struct iovec *rv[2] = {NULL, NULL};
	for (int i = 0; i < 2; i++) {
		if (!pad[i])
			continue;
		s->bounce[i] = vblk_alloc_buf(VPOOL_GRANULE); /* zeroed */
		if (!s->bounce[i])
			return -ENOMEM;
		/* What the granule reads as now: the extent's bytes, its base's, or zeros. */
		if (!fresh && pool_granule_valid(p, s->pext, pg[i]))
			from[i] = s->pext;
		else if (s->base != UINT64_MAX && pool_granule_valid(p, s->base, pg[i]))
			from[i] = s->base;
		if (from[i] != UINT64_MAX) {
			rv[i] = iov_take(rq, 1);
			if (!rv[i])
				return -ENOMEM;
			*rv[i] = (struct iovec){.iov_base = s->bounce[i], .iov_len = VPOOL_GRANULE};
			nread++;
		}
	}
	if (!nread)
		return write_main(rq, s);
	/* Read the partial granules' current data first (sub_io_done continues). */
	if (rq->pio_used + nread > rq->pio_cap)
		return -ENOMEM;
	s->prereading = true;
	s->io_pending = (int)nread;
	for (int i = 0; i < 2; i++) {
		if (!rv[i])
			continue;
		struct pio *pio = rq->pio_pool + rq->pio_used++;
		pio->sub = s;
		vio_op_init(&pio->op, sub_io_done, pio);
		int rc = vblk_readv(p->dev, rv[i], 1,
				    pool_ext_off(p, from[i]) + (uint64_t)pg[i] * VPOOL_GRANULE, &pio->op);
		if (rc < 0)
			vreactor_defer(p->r, &pio->op, rc);
	}
	return 0;
}

/* The bounces hold what their granules read as: lay the request over them and write. */
static int write_main(struct preq *rq, struct psub *s)
{
	struct vpool *p = rq->p;
	uint32_t end = s->eoff + s->len;
	uint32_t g0 = gran_of(s->eoff), g1 = gran_of(end - 1);
	s->iov = NULL;
	s->niov = 0;
	uint64_t at;
	if (g0 == g1 && s->pad_head) {
		granule_overlay(rq, s, s->bounce[0], g0, s->eoff, end);
		struct iovec *v = iov_take(rq, 1);
		if (!v)
			return -ENOMEM;
		*v = (struct iovec){.iov_base = s->bounce[0], .iov_len = VPOOL_GRANULE};
		s->iov = v;
		s->niov = 1;
		at = (uint64_t)g0 * VPOOL_GRANULE;
	} else {
		uint32_t mid_from = s->eoff, mid_to = end;
		at = s->eoff;
		if (s->pad_head) {
			uint32_t gend = (g0 + 1) * VPOOL_GRANULE;
			granule_overlay(rq, s, s->bounce[0], g0, s->eoff, gend);
			struct iovec *v = iov_take(rq, 1);
			if (!v)
				return -ENOMEM;
			*v = (struct iovec){.iov_base = s->bounce[0], .iov_len = VPOOL_GRANULE};
			s->iov = v;
			s->niov = 1;
			mid_from = gend;
			at = (uint64_t)g0 * VPOOL_GRANULE;
		}
		if (s->pad_tail)
			mid_to = g1 * VPOOL_GRANULE;
		if (mid_to > mid_from) {
			int rc = slice_into(rq, s, s->doff + (mid_from - s->eoff), mid_to - mid_from);
			if (rc < 0)
				return rc;
		}
		if (s->pad_tail) {
			granule_overlay(rq, s, s->bounce[1], g1, g1 * VPOOL_GRANULE, end);
			struct iovec *v = iov_take(rq, 1);
			if (!v)
				return -ENOMEM;
			*v = (struct iovec){.iov_base = s->bounce[1], .iov_len = VPOOL_GRANULE};
			if (!s->iov)
				s->iov = v;
			s->niov++;
		}
	}
	if (s->redo) {
		s->redo_at = (uint32_t)at;
		sub_redo_log(s, 0);
		return 0;
	}
	return sub_submit(s, pool_ext_off(p, s->pext) + at, true);
}

/* ---- metadata after the data is durable */

static void sub_committed(void *arg, int res)
{
	struct psub *s = arg;
	if (res < 0)
		s->rq->p->failed = true; /* its mapping is in memory only (pool_check_failed) */
	sub_done(s, res < 0 ? -EIO : 0);
}

/*
 * Append the sub's records (MAP for a new extent, VALID, HYDRATED when writes
 * filled in all its source provided, DATA with the bytes when data_len);
 * -EAGAIN when the journal has no room now.
 */
static int sub_records(struct psub *s, uint32_t data_len)
{
	struct preq *rq = s->rq;
	struct vpool *p = rq->p;
	uint32_t g0 = gran_of(s->eoff), g1 = gran_of(s->eoff + s->len - 1);
	bool remap = s->kind == SK_ALLOC || s->kind == SK_COW;
	uint32_t need = remap ? REC_MAP_LEN + REC_VALID_LEN + 4 : REC_VALID_LEN;
	bool src = !remap && pool_hydr(p, s->pext);
	if (src)
		need += REC_HYDRATED_LEN + 4;
	if (data_len)
		need += pool_redo_record_len(data_len) + 4u;
	if (!vjournal_can_append(p->j, (uint16_t)need))
		return -EAGAIN;
	int rc = 0;
	uint8_t flags = REC_MAP_NEW_EMPTY;
	/* Redirect-on-write: the shared extent stays the source of what was not written. */
	if (s->kind == SK_COW && (pool_any_valid(p, s->src_pext, 0, g0) ||
				  pool_any_valid(p, s->src_pext, g1 + 1, p->gran_per_ext)))
		flags |= REC_MAP_ROW;
	if (remap)
		rc = pool_log_map(p, rq->v, s->vext, s->pext + 1, flags);
	if (rc == 0)
		rc = data_len ? pool_log_valid_redo(p, s->pext, g0, g1 - g0 + 1)
			      : pool_log_valid(p, s->pext, g0, g1 - g0 + 1, true);
	/* Writes filled in everything the source still provided: hydrated, nothing to copy. */
	if (rc == 0 && src && pool_hydr_complete(p, s->pext))
		rc = pool_log_hydrated(p, s->pext, pool_hydr_src(p, s->pext));
	if (rc == 0 && data_len)
		rc = pool_log_data(p, s->pext, s->redo_at, s->iov, s->niov, data_len);
	/* -EAGAIN after admitting cannot happen; memory may run out: the pool stops. */
	return rc == -EAGAIN ? -EIO : rc;
}

/* Failed before any record of it was logged: an extent it reserved goes back at
 * once (alloc.c), also when the pool has failed (its used space stays true). */
static void sub_fail_unlogged(struct psub *s, int err)
{
	if (s->kind == SK_ALLOC || s->kind == SK_COW)
		pool_unreserve(s->rq->p, s->pext);
	sub_done(s, err);
}

static void sub_log(void *arg, int res)
{
	struct psub *s = arg;
	struct vpool *p = s->rq->p;
	if (res < 0 || p->failed) { /* the journal failed while it waited for room */
		sub_fail_unlogged(s, -EIO);
		return;
	}
	int rc = sub_records(s, 0);
	if (rc == -EAGAIN) {
		s->jw.fn = sub_log;
		s->jw.arg = s;
		vjournal_wait_room(p->j, &s->jw);
		return;
	}
	if (rc < 0) {
		p->failed = true;
		sub_done(s, -EIO);
		return;
	}
	s->jw.fn = sub_committed;
	s->jw.arg = s;
	vjournal_wait_commit(p->j, &s->jw);
}

/* ---- writes carried in the journal (redo.c): commit and home write at once */

static void redo_part_done(struct psub *s, int err)
{
	if (err && !s->err)
		s->err = err;
	if (--s->redo_parts == 0)
		sub_done(s, s->err ? -EIO : 0);
}

static void redo_committed(void *arg, int res)
{
	struct psub *s = arg;
	if (!s->early) {
		redo_part_done(s, res < 0 ? -EIO : 0);
		return;
	}
	struct vpool *p = s->rq->p;
	if (res < 0 || p->failed) {
		/* No durable copy, and memory says the bytes are there: the pool stops
		 * (its journal has failed anyway); no home write follows. */
		p->failed = true;
		pool_redo_home_done(p);
		sub_done(s, -EIO);
		return;
	}
	/* Durable: the sub is done for the caller; the home write now (sub_io_done
	 * settles it), after the commit so that the commit's flush does not carry it. */
	s->home_owed = true;
	s->rq->homes_owed++;
	sub_submit(s, pool_ext_off(p, s->pext) + s->redo_at, true); /* room checked when logged */
	sub_done(s, 0);
}

static void sub_redo_log(void *arg, int res)
{
	struct psub *s = arg;
	struct preq *rq = s->rq;
	struct vpool *p = rq->p;
	if (res < 0 || p->failed) {
		sub_fail_unlogged(s, -EIO);
		return;
	}
	/* The home write's operations must be there before anything is logged. */
	size_t npio = ((size_t)s->niov + MAX_IOV_PER_OP - 1) / MAX_IOV_PER_OP;
	if (rq->pio_used + npio > rq->pio_cap) {
		sub_fail_unlogged(s, -ENOMEM);
		return;
	}
	int rc = sub_records(s, (uint32_t)iov_total(s->iov, s->niov));
	if (rc == -EAGAIN) {
		s->jw.fn = sub_redo_log;
		s->jw.arg = s;
		vjournal_wait_room(p->j, &s->jw);
		return;
	}
	if (rc < 0) {
		p->failed = true;
		sub_done(s, -EIO);
		return;
	}
	/* Logged and applied in memory (under the extent lock): the bytes' durable copy is
	 * the journal's from now until the next checkpoint; the home write makes them
	 * visible to reads. */
	s->redo_logged = true;
	p->redo_inflight++;
	/* Unless the caller holds the locks (it releases them when answered), the sub
	 * completes at its commit and its home write follows it (redo_committed): from
	 * bytes of its own, as the caller's buffers are theirs again once answered. */
	size_t n = iov_total(s->iov, s->niov);
	if (!rq->prelocked && (s->home_buf = vblk_alloc_buf(vround_up(n, VBLK_ALIGN))) != NULL) {
		iov_copy_from(s->iov, s->niov, 0, s->home_buf, n);
		s->home_iov = (struct iovec){.iov_base = s->home_buf, .iov_len = n};
		s->iov = &s->home_iov;
		s->niov = 1;
		s->early = true;
	} else {
		s->redo_parts = 2;
		sub_submit(s, pool_ext_off(p, s->pext) + s->redo_at, true); /* room checked above */
	}
	s->jw.fn = redo_committed;
	s->jw.arg = s;
	vjournal_wait_commit(p->j, &s->jw);
}

static void sub_io_done(void *arg, int res)
{
	struct pio *pio = arg;
	struct psub *s = pio->sub;
	struct preq *rq = s->rq;
	if (res < 0 && !s->err)
		s->err = res;
	if (--s->io_pending)
		return;
	if (s->redo_logged) {
		/* A home write carried in the journal: visible now, durable at the checkpoint. */
		pool_redo_home_done(rq->p);
		if (s->err)
			rq->p->failed = true; /* memory says the bytes are there: stop the pool */
		if (s->home_owed) {
			/* Completed early (a failed home write stopped the pool above; the
			 * journal holds the bytes, a restart's replay writes them home). */
			s->home_owed = false;
			if (--rq->homes_owed == 0 && rq->acked)
				req_release(rq);
			return;
		}
		redo_part_done(s, s->err);
		return;
	}
	if (s->err) {
		/* A write that failed may still land later (an RBD op that timed out is
		 * not cancelled), over what a later write would put there: stop the pool,
		 * as a failed journal commit does. A failed read changes nothing. */
		if (rq->op != OP_READ && !s->prereading)
			rq->p->failed = true;
		if (s->kind == SK_ALLOC || s->kind == SK_COW)
			pool_unreserve(rq->p, s->pext);
		sub_done(s, s->err);
		return;
	}
	if (s->prereading) {
		s->prereading = false;
		int rc = write_main(rq, s);
		if (rc < 0) {
			if (s->kind == SK_ALLOC || s->kind == SK_COW)
				pool_unreserve(rq->p, s->pext);
			sub_done(s, rc);
		}
		return;
	}
	switch (s->kind) {
	case SK_READ: {
		/* Granules never written read as zeros, whatever the disk holds. */
		const struct vpool *p = rq->p;
		if (!s->runs && pool_validity(p, s->pext)) {
			uint32_t end = s->eoff + s->len;
			for (uint32_t g = gran_of(s->eoff); g <= gran_of(end - 1); g++) {
				if (pool_granule_valid(p, s->pext, g))
					continue;
				uint32_t a = g * VPOOL_GRANULE > s->eoff ? g * VPOOL_GRANULE : s->eoff;
				uint32_t b = (g + 1) * VPOOL_GRANULE < end ? (g + 1) * VPOOL_GRANULE : end;
				iov_memset(rq->iov, rq->iovcnt, s->doff + (a - s->eoff), 0, b - a);
			}
		}
		sub_done(s, 0);
		return;
	}
	case SK_OVERWRITE:
		sub_done(s, 0);
		return;
	default:
		sub_log(s, 0);
	}
}

/* ---- compare and write: after the read phase */

/* Compare; if equal, turn rq into its write phase (subs reset, locks kept) and return true. */
static bool caw_compared_equal(struct preq *rq)
{
	const uint8_t *have = rq->caw_buf + rq->caw_at;
	if (memcmp(have, rq->caw_cmp, rq->caw_len)) {
		uint64_t i = 0;
		while (have[i] == rq->caw_cmp[i])
			i++;
		*rq->caw_miscompare = i;
		rq->err = -EILSEQ;
		return false;
	}
	/* The write: the new bytes laid over what was read, so the whole (widened)
	 * range is written -- whole granules (see vvol_compare_write). */
	iov_copy_from(rq->caw_wiov, rq->caw_wiovcnt, 0, rq->caw_buf + rq->caw_at, rq->caw_len);
	rq->op = OP_WRITE;
	rq->iov = &rq->caw_iov;
	rq->iovcnt = 1;
	rq->iov_used = 0;
	rq->pio_used = 0;
	for (unsigned i = 0; i < rq->nsub; i++) {
		struct psub *s = &rq->subs[i];
		free(s->bounce[0]);
		free(s->bounce[1]);
		s->bounce[0] = s->bounce[1] = NULL;
		s->pext = s->src_pext = 0;
		s->prereading = s->runs = s->redo = s->redo_logged = false;
		free(s->runs_mem);
		s->runs_mem = NULL;
		s->iov = NULL;
		s->niov = 0;
		s->io_pending = 0;
		s->err = 0;
		s->pios = NULL;
		s->npio = 0;
	}
	return true;
}

/* ---- start: everything locked */

static void req_start_io(struct preq *rq);

void pool_space_freed(struct vpool *p)
{
	struct preq *w = p->space_wait;
	p->space_wait = NULL;
	while (w) {
		struct preq *n = w->space_next;
		req_start_io(w); /* may wait again */
		w = n;
	}
}

static void req_start_io(struct preq *rq)
{
	struct vpool *p = rq->p;
	/* Re-classify under the locks; upgrade if needed. */
	for (unsigned i = 0; i < rq->nsub; i++) {
		struct psub *s = &rq->subs[i];
		s->kind = classify(rq, s);
		if (mode_for(rq, s, s->kind) == XLOCK_EXCL && s->mode == XLOCK_SHARED) {
			for (unsigned k = 0; k < rq->nsub; k++) {
				struct psub *t = &rq->subs[k];
				if (t->locked)
					xlock_release(p, pool_lock_key(rq->v->idx, t->vext), t->mode);
				t->locked = false;
			}
			s->mode = XLOCK_EXCL;
			rq->lock_next = 0;
			req_lock_next(rq);
			return;
		}
	}
	if (pool_check_failed(p)) {
		req_fail(rq, -EIO);
		return;
	}
	/* Reserve every extent the request allocates, or fail with nothing changed. */
	unsigned need = 0;
	for (unsigned i = 0; i < rq->nsub; i++)
		need += rq->subs[i].kind == SK_ALLOC || rq->subs[i].kind == SK_COW;
	if (need > p->n_free) {
		if (need <= p->n_free + p->discards) {
			/* Freed extents are being discarded in the store (discard.c): they
			 * count as free already; wait for them (a store round trip) rather
			 * than refuse, still holding the locks. */
			rq->space_next = NULL;
			struct preq **tail = &p->space_wait;
			while (*tail)
				tail = &(*tail)->space_next;
			*tail = rq;
			return;
		}
		req_fail(rq, -ENOSPC);
		return;
	}
	unsigned unbacked = 0;
	for (unsigned i = 0; i < rq->nsub; i++) {
		struct psub *s = &rq->subs[i];
		if (s->kind == SK_ALLOC || s->kind == SK_COW) {
			s->backed = pool_reserve_backed(p, &s->pext) == 1;
			unbacked += !s->backed;
		}
	}
	if (need)
		pool_preback_kick(p); /* replace what was taken */
	if (!unbacked) {
		req_issue(rq);
		return;
	}
	/* Back every new extent in the file before writing anything (see the top). */
	rq->alloc_err = 0;
	rq->allocs_pending = unbacked + 1;
	for (unsigned i = 0; i < rq->nsub; i++) {
		struct psub *s = &rq->subs[i];
		if ((s->kind != SK_ALLOC && s->kind != SK_COW) || s->backed)
			continue;
		vio_op_init(&s->alloc_op, sub_allocated, s);
		int rc = vblk_allocate(p->dev, pool_ext_off(p, s->pext), p->ext, &s->alloc_op);
		if (rc < 0)
			vreactor_defer(p->r, &s->alloc_op, rc);
	}
	allocs_step(rq, 0);
}

/* ---- backing space reserved: issue the I/O */

static void req_issue(struct preq *rq)
{
	struct vpool *p = rq->p;
	rq->subs_pending = rq->nsub;
	/* Hold one extra count so subs finishing synchronously cannot free rq under us. */
	rq->subs_pending++;
	for (unsigned i = 0; i < rq->nsub; i++) {
		struct psub *s = &rq->subs[i];
		int rc = rq->op == OP_READ ? issue_read(rq, s) : issue_write(rq, s);
		if (rc < 0) {
			if (s->kind == SK_ALLOC || s->kind == SK_COW)
				pool_unreserve(p, s->pext);
			sub_done(s, rc);
		}
	}
	sub_done(&rq->subs[0], 0); /* drop the extra count */
}

static void allocs_step(struct preq *rq, int res)
{
	/* A file system without fallocate (EOPNOTSUPP) cannot reserve: write anyway. */
	if (res < 0 && res != -EOPNOTSUPP && !rq->alloc_err)
		rq->alloc_err = res;
	if (--rq->allocs_pending)
		return;
	if (rq->alloc_err) {
		struct vpool *p = rq->p;
		for (unsigned i = 0; i < rq->nsub; i++)
			if (rq->subs[i].kind == SK_ALLOC || rq->subs[i].kind == SK_COW)
				pool_unreserve(p, rq->subs[i].pext);
		/* ENOSPC (and EDQUOT: a quota is a full file system too) -> no space. */
		int err = rq->alloc_err == -EDQUOT ? -ENOSPC : rq->alloc_err;
		req_fail(rq, err == -ENOSPC ? -ENOSPC : -EIO);
		return;
	}
	req_issue(rq);
}

static void sub_allocated(void *arg, int res)
{
	struct psub *s = arg;
	if (res >= 0 || res == -EOPNOTSUPP) {
		pool_mark_backed(s->rq->p, s->pext); /* stays backed even if the request fails */
		pool_preback_unstall(s->rq->p);     /* the file system has room again */
	}
	allocs_step(s->rq, res);
}

static void lock_granted_deferred(void *arg, int res)
{
	(void)res;
	struct preq *rq = arg;
	rq->subs[rq->lock_next].locked = true;
	rq->lock_next++;
	req_lock_next(rq);
}

static void lock_granted(struct xlock_wait *w)
{
	struct preq *rq = (struct preq *)((char *)w - offsetof(struct preq, lw));
	vio_op_init(&rq->defer_op, lock_granted_deferred, rq);
	vreactor_defer(rq->p->r, &rq->defer_op, 0);
}

static void req_lock_next(struct preq *rq)
{
	while (rq->lock_next < rq->nsub) {
		struct psub *s = &rq->subs[rq->lock_next];
		rq->lw.granted = lock_granted;
		int rc = xlock_acquire(rq->p, pool_lock_key(rq->v->idx, s->vext), s->mode, &rq->lw);
		if (rc < 0) {
			req_fail(rq, rc);
			return;
		}
		if (rc == 0)
			return; /* lock_granted continues */
		s->locked = true;
		rq->lock_next++;
	}
	req_start_io(rq);
}

struct caw_args {
	const void *cmp;
	uint64_t *miscompare_at;
};

static int req_submit(struct vvol *v, int op, uint64_t off, uint64_t len, const struct iovec *iov,
		      int iovcnt, vvol_cb cb, void *arg, const struct caw_args *caw, bool prelocked,
		      bool noalloc)
{
	struct vpool *p = v->pool;
	if (off % VBLK_SECTOR || len % VBLK_SECTOR || off > v->size || len > v->size - off)
		return -EINVAL;
	if (op == OP_WRITE && p->readonly)
		return -EROFS;
	if (iovcnt < 0 || iov_total(iov, iovcnt) < len)
		return -EINVAL;
	struct preq *rq = calloc(1, sizeof(*rq));
	if (!rq)
		return -ENOMEM;
	rq->p = p;
	rq->v = v;
	rq->op = op;
	rq->off = off;
	rq->len = len;
	rq->iov = iov;
	rq->iovcnt = iovcnt;
	rq->cb = cb;
	rq->arg = arg;
	rq->noalloc = noalloc;
	p->inflight++;
	pool_req_track(p, &rq->link, req_discard);
	if (!len) {
		req_fail(rq, 0);
		return 0;
	}
	if (!iov_aligned(iov, iovcnt, VBLK_SECTOR)) {
		rq->bounce_all = vblk_alloc_buf(vround_up(len, VBLK_ALIGN));
		if (!rq->bounce_all) {
			p->inflight--;
			pool_req_untrack(p, &rq->link);
			free(rq);
			return -ENOMEM;
		}
		if (op == OP_WRITE)
			iov_copy_from(iov, iovcnt, 0, rq->bounce_all, len);
		rq->user_iov = iov;
		rq->user_iovcnt = iovcnt;
		rq->bounce_iov = (struct iovec){.iov_base = rq->bounce_all, .iov_len = len};
		rq->iov = &rq->bounce_iov;
		rq->iovcnt = 1;
	}
	if (caw) {
		/* Compare and write works on whole granules (see vvol_compare_write): the
		 * range widened to them, except past the end of the volume. */
		uint64_t wo = off / VPOOL_GRANULE * VPOOL_GRANULE;
		uint64_t we = vround_up(off + len, VPOOL_GRANULE);
		if (we > v->size)
			we = off + len;
		rq->caw_at = (uint32_t)(off - wo);
		rq->caw_len = len;
		off = wo;
		len = we - wo;
		rq->off = off;
		rq->len = len;
	}
	uint64_t e0 = off / p->ext, e1 = (off + len - 1) / p->ext;
	rq->nsub = (unsigned)(e1 - e0 + 1);
	rq->subs = calloc(rq->nsub, sizeof(*rq->subs));
	/* per sub: slices (one split iovec at each end), 2 pre-read + 2 bounce iovecs */
	rq->iov_cap = (size_t)rq->iovcnt + 5u * rq->nsub;
	rq->iov_pool = malloc(rq->iov_cap * sizeof(struct iovec));
	rq->pio_cap = 3u * rq->nsub + rq->iov_cap / MAX_IOV_PER_OP + 1; /* 2 pre-reads + writes */
	rq->pio_pool = malloc(rq->pio_cap * sizeof(struct pio));
	if (!rq->subs || !rq->iov_pool || !rq->pio_pool) {
		p->inflight--;
		pool_req_untrack(p, &rq->link);
		rq->nsub = 0;
		req_free(rq);
		return -ENOMEM;
	}
	if (caw) {
		/* Read phase first, into our own buffer; the write data waits in caw_wiov. */
		rq->caw = true;
		rq->caw_cmp = caw->cmp;
		rq->caw_miscompare = caw->miscompare_at;
		rq->caw_wiov = rq->iov;
		rq->caw_wiovcnt = rq->iovcnt;
		rq->caw_buf = vblk_alloc_buf(vround_up(len, VBLK_ALIGN));
		if (!rq->caw_buf) {
			p->inflight--;
			pool_req_untrack(p, &rq->link);
			req_free(rq);
			return -ENOMEM;
		}
		rq->caw_iov = (struct iovec){.iov_base = rq->caw_buf, .iov_len = len};
		rq->iov = &rq->caw_iov;
		rq->iovcnt = 1;
		rq->op = OP_READ;
	}
	size_t doff = 0;
	for (unsigned i = 0; i < rq->nsub; i++) {
		struct psub *s = &rq->subs[i];
		uint64_t e = e0 + i;
		uint64_t from = i == 0 ? off - e * p->ext : 0;
		uint64_t to = (e == e1) ? off + len - e * p->ext : p->ext;
		s->rq = rq;
		s->vext = e;
		s->eoff = (uint32_t)from;
		s->len = (uint32_t)(to - from);
		s->doff = doff;
		doff += s->len;
		s->kind = classify(rq, s);
		s->mode = mode_for(rq, s, s->kind);
	}
	if (pool_check_failed(p)) {
		req_fail(rq, -EIO);
		return 0;
	}
	rq->prelocked = prelocked;
	if (prelocked) {
		/* The caller holds every extent exclusive (pool_rw_locked): nothing to take or
		 * release here. */
		for (unsigned i = 0; i < rq->nsub; i++)
			rq->subs[i].mode = XLOCK_EXCL;
		rq->lock_next = rq->nsub;
		req_start_io(rq);
		return 0;
	}
	req_lock_next(rq);
	return 0;
}

int vvol_read(struct vvol *v, uint64_t off, uint64_t len, const struct iovec *iov, int iovcnt,
	      vvol_cb cb, void *arg)
{
	return req_submit(v, OP_READ, off, len, iov, iovcnt, cb, arg, NULL, false, false);
}

int vvol_write(struct vvol *v, uint64_t off, uint64_t len, const struct iovec *iov, int iovcnt,
	       vvol_cb cb, void *arg)
{
	return req_submit(v, OP_WRITE, off, len, iov, iovcnt, cb, arg, NULL, false, false);
}

int pool_write_noalloc(struct vvol *v, uint64_t off, uint64_t len, const struct iovec *iov,
		       int iovcnt, vvol_cb cb, void *arg)
{
	return req_submit(v, OP_WRITE, off, len, iov, iovcnt, cb, arg, NULL, false, true);
}

int pool_rw_locked(struct vvol *v, bool write, uint64_t off, uint64_t len, const struct iovec *iov,
		   int iovcnt, vvol_cb cb, void *arg)
{
	return req_submit(v, write ? OP_WRITE : OP_READ, off, len, iov, iovcnt, cb, arg, NULL, true,
			  false);
}

/*
 * Whole granules: the read and the write cover the command's range widened to
 * VPOOL_GRANULE (except past the end of the volume), the bytes around the
 * command's read and written back unchanged under the exclusive locks. On a
 * 512-byte-block volume that costs nothing (one read and one write, 4 KiB
 * instead of 512 bytes) and keeps the pool file's direct I/O aligned: ext4
 * in Linux 6.1 (Debian 12) serializes an unaligned direct write against all
 * direct I/O of the file (inode lock exclusive + inode_dio_wait), so a
 * 512-byte ATS written in place stalled every LUN of the pool (measured in
 * the Debian 12 guest; 6.18 does not serialize: docs/performance.md,
 * "Session 10").
 */
int vvol_compare_write(struct vvol *v, uint64_t off, uint64_t len, const void *cmp,
		       const struct iovec *wiov, int wiovcnt, uint64_t *miscompare_at, vvol_cb cb,
		       void *arg)
{
	if (!len || !cmp || !miscompare_at)
		return -EINVAL;
	struct caw_args a = {.cmp = cmp, .miscompare_at = miscompare_at};
	return req_submit(v, OP_WRITE, off, len, wiov, wiovcnt, cb, arg, &a, false, false);
}

struct flush_req {
	struct pool_req link;
	struct vpool *p;
	struct vio_op op;
	vvol_cb cb;
	void *arg;
};

static void flush_discard(struct pool_req *r) { free(r); }

static void flush_done(void *arg, int res)
{
	struct flush_req *f = arg;
	vvol_cb cb = f->cb;
	void *a = f->arg;
	pool_req_untrack(f->p, &f->link);
	free(f);
	cb(a, res);
}

int vvol_flush(struct vvol *v, vvol_cb cb, void *arg)
{
	/* WCE=0: every acknowledged write is already durable (SBC-4 4.17 / 5.30). */
	struct flush_req *f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->p = v->pool;
	f->cb = cb;
	f->arg = arg;
	pool_req_track(v->pool, &f->link, flush_discard);
	vio_op_init(&f->op, flush_done, f);
	vreactor_defer(v->pool->r, &f->op, v->pool->failed ? -EIO : 0);
	return 0;
}
