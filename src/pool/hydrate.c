/*
 * Hydration of redirected extents (the background half of redirect-on-write).
 *
 * How this works: the first write into a shared extent S (after EXTENDED
 * COPY) allocates a private extent P, writes only the request's granules
 * there and logs MAP with the ROW flag (datapath.c): P's granules that are
 * not valid read from S, and S keeps the map entry's reference as P's
 * "source" (struct hydr_ent in p->hydr). Hydration copies the granules of S
 * that P lacks into P: under P's extent lock held exclusive (so no read sees
 * a granule half copied and no write to P races the copy), runs of granules
 * valid in S and not in P are read from S and written to P with DSYNC; once
 * that data is durable one journal commit carries a VALID record per run and
 * a HYDRATED record, whose apply drops the source (S's reference goes: freed,
 * or private again, once the commit is durable, as for any dropped
 * reference). A crash before that commit leaves P with its source (journal or
 * checkpoint) and hydration starts again after recovery; the copied granules
 * were never marked valid, so nothing half-written is ever read.
 *
 * The background hydrator works one extent at a time, picking entries from
 * p->hydr with a cursor, and yields to normal I/O: it starts an extent at
 * once when the pool is idle (no data request in flight or completed for
 * HYD_IDLE_NS), and otherwise at most one per HYD_BUSY_INTERVAL_NS (so a busy
 * pool still hydrates, at about 1 MiB per 50 ms with 1 MiB extents); a
 * reactor timer re-checks when it had to wait.
 * Other code that needs an extent hydrated now (sharing an extent that still
 * has a source) calls pool_hydrate_locked with the extent lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"
#include "vaaid/util.h"

#define HYD_IDLE_NS 20000000ull          /* no data request for 20 ms: idle */
#define HYD_BUSY_INTERVAL_NS 50000000ull /* busy: one extent per 50 ms at most */
#define HYD_RETRY_NS 1000000000ull       /* after a failed job: nothing for 1 s */

struct hyd_job {
	struct pool_req link; /* first: tracked, so vpool_abandon frees it */
	struct vpool *p;
	uint64_t pext, src;
	void (*done)(void *arg, int err);
	void *arg;
	uint8_t *buf;
	uint32_t nruns;
	uint32_t *run0, *runn; /* granule runs to copy */
	struct vio_op *ops;
	struct iovec *iov;
	unsigned pending;
	bool writing;
	int err;
	struct vj_waiter jw;
	struct vio_op defer_op;
};

struct hydrator {
	struct vpool *p;
	size_t cursor;
	bool active;  /* a background job holds a lock or runs */
	bool paused;  /* vpool_hydration_pause */
	bool closing; /* vpool_close: no new jobs */
	unsigned hold; /* pool_hydrator_hold: no new jobs for now */
	uint64_t key; /* lock of the job in progress */
	uint64_t pext;
	uint64_t last_start; /* vclock_ns of the last job's start */
	uint64_t retry_at;   /* after a failure: no job before this */
	bool pacing;         /* the next job waits for the pace (a finished job) */
	bool timer_armed;
	struct vio_timer timer;
	struct xlock_wait lw;
	struct vio_op defer_op;
	uint64_t hydrated; /* extents hydrated (stats) */
	unsigned errors;
};

/* ---- state helpers */

bool pool_granule_has_data(const struct vpool *p, uint64_t pext, uint32_t g)
{
	if (pool_granule_valid(p, pext, g))
		return true;
	uint64_t s = pool_hydr_src(p, pext);
	return s != UINT64_MAX && pool_granule_valid(p, s, g);
}

bool pool_any_data(const struct vpool *p, uint64_t pext, uint32_t g0, uint32_t g1)
{
	if (pool_any_valid(p, pext, g0, g1))
		return true;
	uint64_t s = pool_hydr_src(p, pext);
	return s != UINT64_MAX && pool_any_valid(p, s, g0, g1);
}

/* pool_granule_has_data's rule (valid here, or in the source) counted a bitmap word at
 * a time: deallocation counts every extent it releases (dealloc.c), so no per-granule
 * lookups. */
uint32_t pool_count_data(const struct vpool *p, uint64_t pext, uint32_t g0, uint32_t g1)
{
	if (g0 >= g1)
		return 0;
	const uint64_t *bm = pool_validity(p, pext);
	uint64_t s = pool_hydr_src(p, pext);
	const uint64_t *sb = s != UINT64_MAX ? pool_validity(p, s) : NULL;
	if (!bm || (s != UINT64_MAX && !sb))
		return g1 - g0; /* fully valid here, or in the source */
	uint32_t n = 0;
	for (uint32_t w = g0 / 64; w <= (g1 - 1) / 64; w++) {
		uint32_t lo = w == g0 / 64 ? g0 % 64 : 0;
		uint32_t hi = w == (g1 - 1) / 64 ? (g1 - 1) % 64 + 1 : 64;
		uint64_t mask = (hi == 64 ? ~0ull : (1ull << hi) - 1) & ~((1ull << lo) - 1);
		n += (uint32_t)__builtin_popcountll((bm[w] | (sb ? sb[w] : 0)) & mask);
	}
	return n;
}

bool pool_hydr_complete(const struct vpool *p, uint64_t pext)
{
	uint64_t s = pool_hydr_src(p, pext);
	if (s == UINT64_MAX)
		return false;
	for (uint32_t g = 0; g < p->gran_per_ext; g++)
		if (!pool_granule_valid(p, pext, g) && pool_granule_valid(p, s, g))
			return false;
	return true;
}

int pool_hydr_add(struct vpool *p, uint64_t pext, uint64_t src, uint16_t idx, uint64_t vext)
{
	if (pool_hydr(p, pext) || src >= p->n_ext || !p->refs[src])
		return -EUCLEAN;
	struct hydr_ent *h = malloc(sizeof(*h));
	if (!h)
		return -ENOMEM;
	*h = (struct hydr_ent){.pext = pext, .src = src, .idx = idx, .vext = vext};
	int rc = hmap_put(&p->hydr, pext, h);
	if (rc < 0) {
		free(h);
		return rc;
	}
	/* The source's count of source references (acct.c). */
	rc = hmap_put(&p->hsrc, src, (void *)((uintptr_t)hmap_get(&p->hsrc, src) + 1));
	if (rc < 0) {
		free(hmap_del(&p->hydr, pext));
		return rc;
	}
	return 0;
}

void pool_hydr_forget(struct vpool *p, uint64_t pext)
{
	struct hydr_ent *h = hmap_del(&p->hydr, pext);
	if (!h)
		return;
	/* Deleted and put back one less: a put after a delete never grows the map, so it
	 * cannot fail. */
	uintptr_t n = (uintptr_t)hmap_del(&p->hsrc, h->src);
	if (n > 1)
		(void)hmap_put(&p->hsrc, h->src, (void *)(n - 1));
	free(h);
}

int pool_apply_hydrated(struct vpool *p, uint64_t pext, uint64_t src)
{
	struct hydr_ent *h = pool_hydr(p, pext);
	if (!h || h->src != src)
		return -EUCLEAN;
	uint32_t holder = pool_holder_src(h->idx);
	pool_hydr_forget(p, pext);
	if (p->hyd)
		p->hyd->hydrated++;
	return pool_ref_drop(p, src, holder);
}

/* ---- one extent, its lock held by the caller */

static void job_free(struct hyd_job *j)
{
	free(j->buf);
	free(j->run0);
	free(j->ops);
	free(j->iov);
	free(j);
}

static void job_discard(struct pool_req *r) { job_free((struct hyd_job *)r); }

static void job_end(struct hyd_job *j)
{
	pool_req_untrack(j->p, &j->link);
	void (*done)(void *, int) = j->done;
	void *arg = j->arg;
	int err = j->err;
	job_free(j);
	done(arg, err);
}

static void job_end_deferred(void *arg, int res)
{
	struct hyd_job *j = arg;
	if (res < 0 && !j->err)
		j->err = res;
	job_end(j);
}

static void job_fail(struct hyd_job *j, int err)
{
	j->err = err;
	vio_op_init(&j->defer_op, job_end_deferred, j);
	vreactor_defer(j->p->r, &j->defer_op, 0);
}

static void job_committed(void *arg, int res)
{
	struct hyd_job *j = arg;
	j->err = res < 0 ? -EIO : 0;
	job_end(j);
}

/* The copied data is durable: one commit with a VALID per run and the HYDRATED record. */
static void job_log(void *arg, int res)
{
	struct hyd_job *j = arg;
	struct vpool *p = j->p;
	if (res < 0 || p->failed) {
		job_fail(j, -EIO);
		return;
	}
	struct hydr_ent *h = pool_hydr(p, j->pext);
	if (!h || h->src != j->src) { /* cannot happen: the lock is held */
		job_fail(j, -EIO);
		return;
	}
	uint32_t need = j->nruns * (REC_VALID_LEN + 4u) + REC_HYDRATED_LEN;
	if (need > UINT16_MAX) {
		job_fail(j, -EIO);
		return;
	}
	if (!vjournal_can_append(p->j, (uint16_t)need)) {
		j->jw.fn = job_log;
		j->jw.arg = j;
		vjournal_wait_room(p->j, &j->jw);
		return;
	}
	int rc = 0;
	for (uint32_t i = 0; i < j->nruns && rc == 0; i++)
		rc = pool_log_valid(p, j->pext, j->run0[i], j->runn[i], true);
	if (rc == 0)
		rc = pool_log_hydrated(p, j->pext, j->src);
	if (rc < 0) {
		p->failed = true; /* applied partly in memory */
		job_fail(j, -EIO);
		return;
	}
	j->jw.fn = job_committed;
	j->jw.arg = j;
	vjournal_wait_commit(p->j, &j->jw);
}

static void job_io_done(void *arg, int res);

/* Issue one operation per run: reads from the source, or writes to the extent. */
static void job_issue(struct hyd_job *j, bool write)
{
	struct vpool *p = j->p;
	j->writing = write;
	j->pending = j->nruns + 1;
	for (uint32_t i = 0; i < j->nruns; i++) {
		uint64_t off = (uint64_t)j->run0[i] * VPOOL_GRANULE;
		j->iov[i] = (struct iovec){.iov_base = j->buf + off,
					   .iov_len = (size_t)j->runn[i] * VPOOL_GRANULE};
		vio_op_init(&j->ops[i], job_io_done, j);
		int rc = write ? vblk_writev(p->dev, &j->iov[i], 1, pool_ext_off(p, j->pext) + off,
					     VBLK_DSYNC, &j->ops[i])
			       : vblk_readv(p->dev, &j->iov[i], 1, pool_ext_off(p, j->src) + off,
					    &j->ops[i]);
		if (rc < 0)
			vreactor_defer(p->r, &j->ops[i], rc);
	}
	job_io_done(j, 0);
}

static void job_io_done(void *arg, int res)
{
	struct hyd_job *j = arg;
	if (res < 0 && !j->err)
		j->err = res;
	if (--j->pending)
		return;
	if (j->err) {
		vlog_warn("pool", "hydration of extent %llu from %llu: %s", (unsigned long long)j->pext,
			  (unsigned long long)j->src, strerror(-j->err));
		j->err = -EIO;
		job_end(j);
		return;
	}
	if (!j->writing)
		job_issue(j, true);
	else
		job_log(j, 0);
}

int pool_hydrate_locked(struct vpool *p, uint64_t pext, void (*done)(void *arg, int err), void *arg)
{
	struct hyd_job *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->p = p;
	j->pext = pext;
	j->done = done;
	j->arg = arg;
	pool_req_track(p, &j->link, job_discard);
	struct hydr_ent *h = pool_hydr(p, pext);
	if (!h) {
		job_fail(j, 0); /* nothing to do */
		return 0;
	}
	if (p->failed || p->readonly) {
		job_fail(j, p->failed ? -EIO : -EROFS);
		return 0;
	}
	j->src = h->src;
	/* Runs of granules the source has and the extent lacks. */
	uint32_t n = p->gran_per_ext;
	j->run0 = malloc(2 * (size_t)n * sizeof(uint32_t));
	if (!j->run0) {
		job_fail(j, -ENOMEM);
		return 0;
	}
	j->runn = j->run0 + n;
	for (uint32_t g = 0; g < n;) {
		if (pool_granule_valid(p, pext, g) || !pool_granule_valid(p, j->src, g)) {
			g++;
			continue;
		}
		uint32_t a = g;
		while (g < n && !pool_granule_valid(p, pext, g) && pool_granule_valid(p, j->src, g))
			g++;
		j->run0[j->nruns] = a;
		j->runn[j->nruns++] = g - a;
	}
	if (!j->nruns) {
		job_log(j, 0); /* only the record */
		return 0;
	}
	j->buf = vblk_alloc_buf(p->ext);
	j->ops = calloc(j->nruns, sizeof(*j->ops));
	j->iov = calloc(j->nruns, sizeof(*j->iov));
	if (!j->buf || !j->ops || !j->iov) {
		job_fail(j, -ENOMEM);
		return 0;
	}
	job_issue(j, false);
	return 0;
}

/* ---- the background hydrator */

static void bg_next(struct vpool *p);

static void bg_done(void *arg, int err)
{
	struct vpool *p = arg;
	struct hydrator *hy = p->hyd;
	xlock_release(p, hy->key, XLOCK_EXCL);
	hy->active = false;
	if (err) {
		hy->errors++; /* the entry stays; retried after HYD_RETRY_NS, never in a loop */
		hy->retry_at = vclock_ns() + HYD_RETRY_NS;
	}
	hy->pacing = true;
	bg_next(p);
}

static void bg_locked_deferred(void *arg, int res)
{
	(void)res;
	struct vpool *p = arg;
	struct hydrator *hy = p->hyd;
	struct hydr_ent *h = pool_hydr(p, hy->pext);
	/* While we waited for the lock the extent may have been freed (and even reused). */
	if (!h || pool_lock_key(h->idx, h->vext) != hy->key || hy->closing || hy->paused ||
	    hy->hold) {
		xlock_release(p, hy->key, XLOCK_EXCL);
		hy->active = false;
		if (!hy->paused && !hy->hold)
			bg_next(p);
		return;
	}
	int rc = pool_hydrate_locked(p, hy->pext, bg_done, p);
	if (rc < 0) {
		xlock_release(p, hy->key, XLOCK_EXCL);
		hy->active = false;
		hy->errors++;
	}
}

static void bg_lock_granted(struct xlock_wait *w)
{
	struct hydrator *hy = (struct hydrator *)((char *)w - offsetof(struct hydrator, lw));
	vreactor_defer(hy->p->r, &hy->defer_op, 0);
}

static void bg_start(struct vpool *p)
{
	struct hydrator *hy = p->hyd;
	uint64_t k;
	void *v = NULL;
	if (!hmap_next(&p->hydr, &hy->cursor, &k, &v)) {
		hy->cursor = 0;
		if (!hmap_next(&p->hydr, &hy->cursor, &k, &v))
			return;
	}
	struct hydr_ent *h = v;
	hy->active = true;
	hy->pext = h->pext;
	hy->key = pool_lock_key(h->idx, h->vext);
	vio_op_init(&hy->defer_op, bg_locked_deferred, p);
	hy->lw.granted = bg_lock_granted;
	int rc = xlock_acquire(p, hy->key, XLOCK_EXCL, &hy->lw);
	if (rc < 0) {
		hy->active = false;
		hy->errors++;
		return;
	}
	if (rc == 1)
		vreactor_defer(p->r, &hy->defer_op, 0);
}

static void bg_timer_fired(void *arg, int res)
{
	(void)res;
	struct vpool *p = arg;
	p->hyd->timer_armed = false;
	bg_next(p);
}

static void bg_next(struct vpool *p)
{
	struct hydrator *hy = p->hyd;
	if (!hy || hy->active || hy->paused || hy->closing || hy->hold || !p->hydr.n || p->failed ||
	    p->readonly)
		return;
	if (hy->pacing) {
		uint64_t now = vclock_ns();
		bool idle = !p->inflight && now - p->fg_last_ns >= HYD_IDLE_NS;
		bool retry_wait = now < hy->retry_at;
		if (retry_wait || (!idle && now - hy->last_start < HYD_BUSY_INTERVAL_NS)) {
			if (!hy->timer_armed) {
				uint64_t at = hy->last_start + HYD_BUSY_INTERVAL_NS;
				if (!p->inflight && p->fg_last_ns + HYD_IDLE_NS < at)
					at = p->fg_last_ns + HYD_IDLE_NS;
				if (retry_wait)
					at = hy->retry_at;
				vio_op_init(&hy->timer.op, bg_timer_fired, p);
				if (vreactor_timeout(p->r, &hy->timer, at > now ? at - now : 0) == 0)
					hy->timer_armed = true;
			}
			return;
		}
	}
	hy->pacing = false;
	hy->last_start = vclock_ns();
	bg_start(p);
}

void pool_hydrator_kick(struct vpool *p) { bg_next(p); }

int pool_hydrator_start_now(struct vpool *p)
{
	struct hydrator *hy = p->hyd;
	if (!hy)
		return -EIO;
	if (!hy->active) {
		hy->pacing = false; /* a control-path wait: no pacing */
		bg_next(p);
	}
	return hy->active ? 1 : p->hydr.n ? -EIO : 0;
}

unsigned pool_hydrator_errors(const struct vpool *p) { return p->hyd ? p->hyd->errors : 0; }

bool pool_hydrator_busy(const struct vpool *p)
{
	return p->hyd && (p->hyd->active || p->hyd->timer_armed);
}

int pool_hydrator_init(struct vpool *p)
{
	p->hyd = calloc(1, sizeof(*p->hyd));
	if (!p->hyd)
		return -ENOMEM;
	p->hyd->p = p;
	return 0;
}

void pool_hydrator_free(struct vpool *p)
{
	free(p->hyd);
	p->hyd = NULL;
	size_t it = 0;
	uint64_t k;
	void *v;
	while (hmap_next(&p->hydr, &it, &k, &v))
		free(v);
	hmap_free(&p->hydr);
	hmap_free(&p->hsrc);
}

void pool_hydrator_hold(struct vpool *p, bool hold)
{
	if (!p->hyd)
		return;
	if (hold)
		p->hyd->hold++;
	else if (p->hyd->hold && !--p->hyd->hold)
		bg_next(p);
}

void pool_hydrator_stop(struct vpool *p)
{
	if (!p->hyd)
		return;
	p->hyd->closing = true;
	if (p->hyd->timer_armed)
		vreactor_cancel(p->r, &p->hyd->timer.op); /* its callback still runs: busy until then */
}

/* ---- public controls */

void vpool_hydration_pause(struct vpool *p, bool pause)
{
	if (!p->hyd)
		return;
	p->hyd->paused = pause;
	if (!pause)
		bg_next(p);
}

void vpool_hydration_stats(const struct vpool *p, uint64_t *pending, uint64_t *hydrated)
{
	*pending = p->hydr.n;
	*hydrated = p->hyd ? p->hyd->hydrated : 0;
}
