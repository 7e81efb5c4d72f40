/*
 * Copying a byte range between volumes of one pool as one unit (the pool side
 * of an EXTENDED COPY segment): vvol_copy.
 *
 * How this works: every extent of the source range and of the destination
 * range is locked exclusive first (one lock set, ascending order, like every
 * request), and held until the copy is durable, so the copy is consistent
 * with concurrent writes to either range: each of them lands wholly before or
 * wholly after the copy, never between its parts (SCSI gives no ordering
 * between concurrent commands; this gives the one an initiator would expect:
 * the destination is the source as of one instant). Under the locks, with
 * the datapath and sharing entry points that do not lock themselves
 * (pool_rw_locked, pool_share_locked): when the source and destination
 * offsets are congruent modulo the extent size, the unaligned head is copied
 * through a 1 MiB buffer, the aligned middle shared (SHARE records, no data
 * moved), the tail copied; otherwise, or for overlapping ranges of one
 * volume (copied backwards when the destination is after the source), every
 * byte is copied; a middle whose SHARE the checkpoint-room check refuses
 * (pool_ckpt_room, -ENOSPC) is copied too. Each step completes only when durable. Other extents of
 * both volumes are not affected; an ATS or a write elsewhere never waits for
 * the copy. What it did (struct vvol_report: bytes shared, bytes copied) is
 * counted as each step completes -- a chunk once written, the middle once its
 * SHARE record is durable -- and added to the caller's report before cb runs.
 */
#include <errno.h>
#include <stdlib.h>

#include "pool_internal.h"

#define COPY_BUF (1u << 20)

enum { PH_HEAD, PH_SHARE, PH_TAIL, PH_DONE };

struct copy_req {
	struct pool_req link; /* first */
	struct vpool *p;
	struct vvol *sv, *dv;
	struct xlockset locks;
	uint8_t *buf;
	uint64_t buf_len; /* COPY_BUF, or less when no byte copy of this request is longer */
	struct iovec iov;
	int phase;
	uint64_t cp_soff, cp_doff, cp_left, chunk; /* byte copy in progress */
	bool backward;
	uint64_t sh_soff, sh_doff, sh_len;
	uint64_t tl_soff, tl_doff, tl_len;
	vvol_cb cb;
	void *arg;
	int err;
	struct vio_op defer_op;
	struct vvol_report done, *rep; /* what the steps did; the caller's report (or NULL) */
};

static void copy_free(struct copy_req *c)
{
	xlockset_free(&c->locks);
	free(c->buf);
	free(c);
}

static void copy_discard(struct pool_req *r) { copy_free((struct copy_req *)r); }

static void copy_finish(struct copy_req *c, int err)
{
	struct vpool *p = c->p;
	xlockset_release(&c->locks);
	p->inflight--;
	pool_req_untrack(p, &c->link);
	vvol_cb cb = c->cb;
	void *arg = c->arg;
	if (c->rep) {
		c->rep->shared += c->done.shared;
		c->rep->copied += c->done.copied;
	}
	copy_free(c);
	pool_hydrator_kick(p);
	cb(arg, err);
}

static void copy_step(struct copy_req *c);

static void copy_write_done(void *arg, int res)
{
	struct copy_req *c = arg;
	if (res < 0) {
		copy_finish(c, res);
		return;
	}
	c->done.copied += c->chunk;
	c->cp_left -= c->chunk;
	if (!c->backward) {
		c->cp_soff += c->chunk;
		c->cp_doff += c->chunk;
	}
	copy_step(c);
}

static void copy_read_done(void *arg, int res)
{
	struct copy_req *c = arg;
	if (res < 0) {
		copy_finish(c, res);
		return;
	}
	uint64_t back = c->backward ? c->cp_left - c->chunk : 0;
	int rc = pool_rw_locked(c->dv, true, c->cp_doff + back, c->chunk, &c->iov, 1, copy_write_done, c);
	if (rc < 0)
		copy_finish(c, rc);
}

static void copy_share_done(void *arg, int res)
{
	struct copy_req *c = arg;
	if (res == -ENOSPC && c->sh_len) {
		/* No room in the checkpoint area for more references (pool_ckpt_room): the
		 * middle is copied as bytes instead (new extents, as any write takes; the
		 * ranges do not overlap when they share). Nothing was shared. */
		uint64_t need = c->sh_len < COPY_BUF ? c->sh_len : COPY_BUF;
		if (c->buf_len < need) { /* sized for the head and tail only (idle now) */
			free(c->buf);
			c->buf = NULL;
			c->buf_len = need;
		}
		if (!c->buf && !(c->buf = vblk_alloc_buf(c->buf_len))) {
			copy_finish(c, -ENOMEM);
			return;
		}
		c->cp_soff = c->sh_soff;
		c->cp_doff = c->sh_doff;
		c->cp_left = c->sh_len;
		c->sh_len = 0;
		copy_step(c); /* phase PH_SHARE: the tail follows */
		return;
	}
	if (res < 0) {
		copy_finish(c, res);
		return;
	}
	c->done.shared += c->sh_len;
	c->sh_len = 0;
	copy_step(c);
}

/* One step: a chunk of the head (or of everything), the shared middle, a chunk of the tail. */
static void copy_step(struct copy_req *c)
{
	if (c->cp_left) {
		c->chunk = c->cp_left < c->buf_len ? c->cp_left : c->buf_len;
		uint64_t back = c->backward ? c->cp_left - c->chunk : 0;
		c->iov = (struct iovec){.iov_base = c->buf, .iov_len = c->chunk};
		int rc = pool_rw_locked(c->sv, false, c->cp_soff + back, c->chunk, &c->iov, 1,
					copy_read_done, c);
		if (rc < 0)
			copy_finish(c, rc);
		return;
	}
	if (c->phase == PH_HEAD) {
		c->phase = PH_SHARE;
		if (c->sh_len) {
			int rc = pool_share_locked(c->sv, c->sh_soff, c->dv, c->sh_doff, c->sh_len,
						   copy_share_done, c);
			if (rc < 0)
				copy_finish(c, rc);
			return;
		}
	}
	if (c->phase == PH_SHARE) {
		c->phase = PH_TAIL;
		if (c->tl_len) {
			c->cp_soff = c->tl_soff;
			c->cp_doff = c->tl_doff;
			c->cp_left = c->tl_len;
			copy_step(c);
			return;
		}
	}
	copy_finish(c, 0);
}

static void copy_deferred(void *arg, int res)
{
	struct copy_req *c = arg;
	if (res < 0)
		copy_finish(c, res);
	else
		copy_step(c);
}

static void copy_locked(void *arg, int err)
{
	struct copy_req *c = arg;
	/* From the reactor, never from inside vvol_copy (the lock set may be granted at once). */
	vio_op_init(&c->defer_op, copy_deferred, c);
	vreactor_defer(c->p->r, &c->defer_op, err);
}

static int add_range(struct xlockset *s, const struct vvol *v, uint64_t off, uint64_t len,
		     uint64_t ext)
{
	for (uint64_t e = off / ext; e <= (off + len - 1) / ext; e++) {
		int rc = xlockset_add(s, pool_lock_key(v->idx, e), XLOCK_EXCL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int vvol_copy(struct vvol *sv, uint64_t so, struct vvol *dv, uint64_t dO, uint64_t len,
	      vvol_cb cb, void *arg)
{
	return vvol_copy_ex(sv, so, dv, dO, len, NULL, cb, arg);
}

int vvol_copy_ex(struct vvol *sv, uint64_t so, struct vvol *dv, uint64_t dO, uint64_t len,
		 struct vvol_report *rep, vvol_cb cb, void *arg)
{
	struct vpool *p = sv->pool;
	if (dv->pool != p)
		return -EXDEV;
	if (so % VBLK_SECTOR || dO % VBLK_SECTOR || len % VBLK_SECTOR || so > sv->size ||
	    len > sv->size - so || dO > dv->size || len > dv->size - dO)
		return -EINVAL;
	if (p->readonly)
		return -EROFS;
	if (pool_check_failed(p))
		return -EIO;
	struct copy_req *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->p = p;
	c->sv = sv;
	c->dv = dv;
	c->cb = cb;
	c->arg = arg;
	c->rep = rep;
	uint64_t ext = p->ext;
	bool overlap = sv == dv && so < dO + len && dO < so + len;
	c->cp_soff = so;
	c->cp_doff = dO;
	if (overlap || so % ext != dO % ext) {
		/* Nothing can be shared: copy it all (a forward-overlapping range backwards). */
		c->cp_left = len;
		c->backward = overlap && dO > so;
	} else {
		uint64_t head = (ext - so % ext) % ext;
		if (head > len)
			head = len;
		uint64_t mid = (len - head) / ext * ext;
		c->cp_left = head;
		c->sh_soff = so + head;
		c->sh_doff = dO + head;
		c->sh_len = mid;
		c->tl_soff = so + head + mid;
		c->tl_doff = dO + head + mid;
		c->tl_len = len - head - mid;
	}
	int rc = 0;
	if (len && (rc = add_range(&c->locks, sv, so, len, ext)) == 0)
		rc = add_range(&c->locks, dv, dO, len, ext);
	/* The buffer: no longer than the longest byte copy planned (the head or
	 * everything, the tail; copy_share_done makes it larger when the middle has to
	 * be copied as bytes), at most COPY_BUF. A 4 KiB copy does not zero 1 MiB. */
	c->buf_len = c->cp_left > c->tl_len ? c->cp_left : c->tl_len;
	if (c->buf_len > COPY_BUF)
		c->buf_len = COPY_BUF;
	if (rc == 0 && (c->cp_left || c->tl_len) && !(c->buf = vblk_alloc_buf(c->buf_len)))
		rc = -ENOMEM;
	if (rc < 0) {
		copy_free(c);
		return rc;
	}
	p->inflight++;
	pool_req_track(p, &c->link, copy_discard);
	xlockset_acquire(&c->locks, p, copy_locked, c);
	return 0;
}
