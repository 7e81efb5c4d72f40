/*
 * Small writes carried in the journal ("redo"): one durable write instead of
 * a data write followed by a commit.
 *
 * How this works: a write that needs metadata anyway (it allocates, redirects
 * a shared extent or validates granules, datapath.c) and spans at most
 * POOL_REDO_MAX bytes appends its MAP / VALID records plus a DATA record
 * holding the bytes. Once the commit is durable it completes for its caller
 * and writes the bytes to their home in the extent *without* DSYNC (from a
 * copy of its own), holding the extent locks until that write is done, so no
 * read sees the extent before the bytes are there (datapath.c; a request
 * whose caller holds the locks issues the home write with the commit and
 * completes when both have). Issuing the home write after the commit, not
 * with it, keeps it out of the commit's cache flush: a first write into
 * never-written file space made that flush slower (docs/performance.md,
 * session 10). The journal holds the only durable copy until the next
 * checkpoint, which waits for home writes still to come or in flight and
 * flushes the device before it retires the journal (pool_redo_before_ckpt).
 *
 * Replay writes a DATA record's bytes home again, unless a later record
 * makes them stale: a VALID record (set or clear) for a granule they touch,
 * except one logged with DATA (flag REDO: its bytes may cover only part of
 * the granule, and it is replayed after the older ones anyway), or a MAP
 * record giving the extent a new owner (NEW_EMPTY). So that no write
 * to such an extent can bypass the journal, an extent with DATA records since
 * the last checkpoint is "pending" (pool_redo_pending): its writes are never
 * plain in-place overwrites -- a small one is carried in the journal too
 * (replayed in order), a larger one writes its granules whole with DSYNC and
 * logs VALID for them (which makes the older DATA bytes there stale). The
 * pending set is emptied when a checkpoint's superblock is durable (a live
 * checkpoint, which lets appends continue after its freeze point, retires only
 * the set as of that point: pool_redo_freeze).
 * Because replay decides per DATA record from what comes *after* it, opening a
 * pool scans the journal twice: pool_redo_scan collects the DATA records and
 * marks what later records make stale, then the normal replay applies
 * records in order and writes the DATA still live (pool_apply_data).
 *
 * DATA payload (little endian): pext u64, byte offset in the extent u32,
 * length u32, then the bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"
#include "vaaid/endian.h"
#include "vaaid/iov.h"

#define DATA_HDR 16u

/* One DATA record seen by the scan; live: bit i = granule (g0 + i) still to be written. */
struct redo_ent {
	uint64_t pext;
	uint32_t g0;
	uint64_t live;
	size_t prev; /* the previous entry of the same extent, or SIZE_MAX */
};

struct redo_scan {
	struct redo_ent *e;
	size_t n, cap;
	size_t next;     /* pass 2: index of the next DATA record */
	struct hmap last; /* pext -> index + 1 of its last entry */
};

uint16_t pool_redo_record_len(uint32_t len) { return (uint16_t)(DATA_HDR + len); }

bool pool_redo_pending(const struct vpool *p, uint64_t pext)
{
	return (p->redo_pending.n && hmap_get(&p->redo_pending, pext) != NULL) ||
	       (p->redo_retiring.n && hmap_get(&p->redo_retiring, pext) != NULL);
}

static int mark_pending(struct vpool *p, uint64_t pext)
{
	return hmap_get(&p->redo_pending, pext) ? 0 : hmap_put(&p->redo_pending, pext, (void *)1);
}

int pool_log_data(struct vpool *p, uint64_t pext, uint32_t eoff, const struct iovec *iov,
		  int iovcnt, uint32_t len)
{
	if (len > POOL_REDO_MAX || eoff + (uint64_t)len > p->ext)
		return -EINVAL;
	int rc = mark_pending(p, pext);
	if (rc < 0)
		return rc;
	uint8_t *b = vjournal_append(p->j, REC_DATA, pool_redo_record_len(len));
	if (!b)
		return vjournal_failed(p->j) ? -EIO : -EAGAIN;
	vput_le64(b, pext);
	vput_le32(b + 8, eoff);
	vput_le32(b + 12, len);
	iov_copy_from(iov, iovcnt, 0, b + DATA_HDR, len);
	return 0;
}

/* ---- replay */

static int check_data(const struct vpool *p, const uint8_t *b, uint16_t len, uint64_t *pext,
		      uint32_t *eoff, uint32_t *n)
{
	if (len < DATA_HDR)
		return -EUCLEAN;
	*pext = vget_le64(b);
	*eoff = vget_le32(b + 8);
	*n = vget_le32(b + 12);
	if (*pext >= p->n_ext || !*n || *n != len - DATA_HDR || *n > POOL_REDO_MAX ||
	    *eoff % VBLK_SECTOR || *n % VBLK_SECTOR || *eoff + (uint64_t)*n > p->ext)
		return -EUCLEAN;
	return 0;
}

/* Later records make older DATA bytes of pext (granules [g0, g1]) stale. */
static void scan_stale(struct redo_scan *s, uint64_t pext, uint32_t g0, uint32_t g1)
{
	size_t i1 = (size_t)(uintptr_t)hmap_get(&s->last, pext);
	for (size_t i = i1 ? i1 - 1 : SIZE_MAX; i != SIZE_MAX; i = s->e[i].prev) {
		struct redo_ent *e = &s->e[i];
		for (uint32_t k = 0; k < 64; k++)
			if (e->g0 + k >= g0 && e->g0 + k <= g1)
				e->live &= ~(1ull << k);
	}
}

static int scan_record(void *arg, uint8_t type, uint8_t flags, const uint8_t *b, uint16_t len)
{
	struct vpool *p = arg;
	struct redo_scan *s = p->redo_scan;
	if (type == REC_DATA) {
		uint64_t pext;
		uint32_t eoff, n;
		int rc = check_data(p, b, len, &pext, &eoff, &n);
		if (rc < 0)
			return rc;
		if (s->n == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 64;
			struct redo_ent *e = realloc(s->e, cap * sizeof(*e));
			if (!e)
				return -ENOMEM;
			s->e = e;
			s->cap = cap;
		}
		uint32_t g0 = eoff / VPOOL_GRANULE, g1 = (eoff + n - 1) / VPOOL_GRANULE;
		size_t i1 = (size_t)(uintptr_t)hmap_get(&s->last, pext);
		s->e[s->n] = (struct redo_ent){.pext = pext, .g0 = g0,
					       .live = (g1 - g0 >= 63) ? ~0ull : (2ull << (g1 - g0)) - 1,
					       .prev = i1 ? i1 - 1 : SIZE_MAX};
		s->n++;
		return hmap_put(&s->last, pext, (void *)(uintptr_t)s->n);
	}
	if (type == REC_VALID && len == REC_VALID_LEN && !(flags & REC_VALID_REDO)) {
		uint32_t g0 = vget_le32(b + 8), n = vget_le32(b + 12);
		if (n)
			scan_stale(s, vget_le64(b), g0, g0 + n - 1);
	} else if (type == REC_MAP && len == REC_MAP_LEN && (flags & REC_MAP_NEW_EMPTY)) {
		uint64_t new1 = vget_le64(b + 20);
		if (new1)
			scan_stale(s, new1 - 1, 0, UINT32_MAX);
	}
	return 0; /* everything else is checked by the real replay */
}

int pool_redo_scan(struct vpool *p, struct vblk *dev)
{
	struct redo_scan *s = calloc(1, sizeof(*s));
	if (!s || hmap_init(&s->last, 64) < 0) {
		free(s);
		return -ENOMEM;
	}
	p->redo_scan = s;
	struct vj_replay_result res;
	int rc = vjournal_replay(dev, &p->sb, scan_record, p, &res);
	if (rc < 0)
		pool_redo_scan_free(p);
	return rc;
}

void pool_redo_scan_free(struct vpool *p)
{
	struct redo_scan *s = p->redo_scan;
	if (!s)
		return;
	hmap_free(&s->last);
	free(s->e);
	free(s);
	p->redo_scan = NULL;
}

/* Replay: write the record's bytes that no later record made stale (read-only: only
 * count them). */
int pool_apply_data(struct vpool *p, const uint8_t *b, uint16_t len)
{
	uint64_t pext;
	uint32_t eoff, n;
	int rc = check_data(p, b, len, &pext, &eoff, &n);
	if (rc < 0)
		return rc;
	struct redo_scan *s = p->redo_scan;
	if (!s || s->next >= s->n || s->e[s->next].pext != pext)
		return -EUCLEAN; /* the two passes disagree: cannot happen */
	uint64_t live = s->e[s->next++].live;
	if ((rc = mark_pending(p, pext)) < 0)
		return rc;
	uint8_t *buf = NULL;
	uint32_t end = eoff + n;
	for (uint32_t g = eoff / VPOOL_GRANULE, k = 0; g * VPOOL_GRANULE < end; g++, k++) {
		if (k >= 64 || !(live >> k & 1))
			continue;
		uint32_t a = g * VPOOL_GRANULE > eoff ? g * VPOOL_GRANULE : eoff;
		uint32_t z = (g + 1) * VPOOL_GRANULE < end ? (g + 1) * VPOOL_GRANULE : end;
		if (p->readonly) {
			p->redo_replayed += z - a;
			continue;
		}
		if (!buf && !(buf = vblk_alloc_buf(POOL_REDO_MAX)))
			return -ENOMEM;
		memcpy(buf, b + DATA_HDR + (a - eoff), z - a);
		/* Not durable yet: the checkpoint that ends the open (vpool_open) flushes. */
		rc = vblk_pwrite_sync(p->dev, buf, z - a, pool_ext_off(p, pext) + a, 0);
		if (rc < 0)
			break;
		p->redo_replayed += z - a;
	}
	free(buf);
	return rc;
}

/* ---- checkpoints */

void pool_redo_home_done(struct vpool *p)
{
	if (--p->redo_inflight == 0 && p->redo_ckpt_wait) {
		struct vio_op *op = p->redo_ckpt_wait;
		p->redo_ckpt_wait = NULL;
		vreactor_defer(p->r, op, 0);
	}
}

static void redo_flushed(void *arg, int res)
{
	struct vpool *p = arg;
	struct vio_op *then = p->redo_then;
	p->redo_then = NULL;
	vreactor_defer(p->r, then, res < 0 ? res : 0);
}

static void redo_homes_done(void *arg, int res)
{
	struct vpool *p = arg;
	(void)res;
	vio_op_init(&p->redo_flush_op, redo_flushed, p);
	int rc = vblk_flush(p->dev, &p->redo_flush_op);
	if (rc < 0)
		vreactor_defer(p->r, &p->redo_flush_op, rc);
}

/*
 * The journal is quiesced (no new DATA record can be appended): make every
 * home write of the records it holds durable, then run `then`. Nothing to do
 * (then runs at once, deferred) when no extent is pending.
 */
void pool_redo_before_ckpt(struct vpool *p, struct vio_op *then)
{
	if (!p->redo_pending.n) {
		vreactor_defer(p->r, then, 0);
		return;
	}
	p->redo_then = then;
	vio_op_init(&p->redo_wait_op, redo_homes_done, p);
	if (p->redo_inflight)
		p->redo_ckpt_wait = &p->redo_wait_op;
	else
		vreactor_defer(p->r, &p->redo_wait_op, 0);
}

/* The checkpoint's superblock is durable: the journal's DATA records are retired. */
void pool_redo_retired(struct vpool *p)
{
	if (!p->redo_pending.n)
		return;
	struct hmap fresh;
	if (hmap_init(&fresh, 64) == 0) {
		hmap_free(&p->redo_pending);
		p->redo_pending = fresh;
		return;
	}
	uint64_t k;
	void *v;
	for (size_t it = 0; p->redo_pending.n && (it = 0, hmap_next(&p->redo_pending, &it, &k, &v));)
		hmap_del(&p->redo_pending, k);
}

int pool_redo_freeze(struct vpool *p)
{
	if (p->redo_retiring.n)
		return -EBUSY; /* the previous live checkpoint failed: the pool has failed */
	struct hmap fresh;
	if (hmap_init(&fresh, 64) < 0)
		return -ENOMEM;
	hmap_free(&p->redo_retiring);
	p->redo_retiring = p->redo_pending;
	p->redo_pending = fresh;
	return 0;
}

/* The live checkpoint's superblock is durable: the DATA records before its freeze point
 * are retired (an extent with later ones is in redo_pending too and stays pending). */
void pool_redo_retired_frozen(struct vpool *p)
{
	hmap_free(&p->redo_retiring);
	memset(&p->redo_retiring, 0, sizeof(p->redo_retiring));
}
