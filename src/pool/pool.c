/*
 * Pool lifecycle: format, open with recovery, close, stats, volumes.
 *
 * Open = newest valid superblock -> its checkpoint (crc-checked, refcounts
 * checked against references) -> journal replay through the same apply
 * functions the live path uses -> free map rebuilt from refcounts. If the
 * journal held anything, a checkpoint is written at once so the pool starts
 * with an empty journal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "pool_internal.h"
#include "vaaid/util.h"
#include "vaaid/buf_cache.h"

/* IEEE company id used in NAA-6 designators (the one LIO uses for its own). */
#define VAAID_NAA_OUI 0x001405u

static const struct vjournal_owner_ops pool_journal_ops = {
	.durable = pool_durable,
	.need_checkpoint = pool_ckpt_request,
};

static int fill_random(void *buf, size_t len)
{
	ssize_t n = getrandom(buf, len, 0);
	return n == (ssize_t)len ? 0 : -EIO;
}

static uint32_t bm_words_for(uint32_t gran_per_ext) { return (gran_per_ext + 63) / 64; }

static int zero_journal(struct vblk *dev, const struct vsb *sb)
{
	size_t chunk = 1u << 20;
	if (sb->journal_size < chunk) /* a small journal: no larger buffer than it */
		chunk = (size_t)sb->journal_size;
	uint8_t *z = vbuf_get(dev->bufs, chunk); /* zeroed */
	if (!z)
		return -ENOMEM;
	int rc = 0;
	for (uint64_t o = 0; o < sb->journal_size && rc == 0; o += chunk) {
		size_t n = sb->journal_size - o < chunk ? (size_t)(sb->journal_size - o) : chunk;
		rc = vblk_pwrite_sync(dev, z, n, sb->journal_off + o, VBLK_META);
	}
	vbuf_put(dev->bufs, z, chunk);
	return rc < 0 ? rc : vblk_flush_sync(dev);
}

/* The journal size for a pool: given, or scaled with the pool (1/1024, 4..64 MiB). */
static uint64_t journal_size_for(const struct vpool_params *prm, uint64_t size)
{
	uint64_t jsz = prm->journal_size;
	if (!jsz) {
		jsz = size / 1024;
		if (jsz < (4u << 20))
			jsz = 4u << 20;
		if (jsz > (64u << 20))
			jsz = 64u << 20;
	}
	return vround_up(jsz, VJ_BLOCK);
}

int vpool_journal_path(const char *store, char *out, size_t n)
{
	int len = snprintf(out, n, "%s.journal", store);
	return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

uint64_t vpool_journal_store_size(const struct vpool_params *prm, uint64_t dev_size)
{
	return VJF_HDR_SIZE + journal_size_for(prm, prm->size ? prm->size : dev_size);
}

int vpool_format(struct vblk *dev, const struct vpool_params *prm)
{
	uint64_t size = prm->size ? prm->size : dev->size;
	uint32_t ext = prm->extent_size ? prm->extent_size : VPOOL_DEFAULT_EXTENT;
	struct vblk *jdev = prm->journal_dev ? prm->journal_dev : dev;
	if (size > dev->size) {
		fprintf(stderr, "vaaid: pool size %llu exceeds the backing store (%llu bytes)\n",
			(unsigned long long)size, (unsigned long long)dev->size);
		return -EINVAL;
	}
	if (!vis_pow2(ext) || ext < VPOOL_MIN_EXTENT || ext > VPOOL_MAX_EXTENT) {
		fprintf(stderr, "vaaid: extent size %u must be a power of two from 64K to 16M\n", ext);
		return -EINVAL;
	}
	uint64_t jsz = journal_size_for(prm, size);
	if (jsz < 2 * VJ_MAX_COMMIT + 2 * VJ_BLOCK) {
		fprintf(stderr, "vaaid: journal size %llu is below the minimum %u\n",
			(unsigned long long)jsz, 2 * VJ_MAX_COMMIT + 2 * VJ_BLOCK);
		return -EINVAL;
	}
	struct vsb sb = {0};
	sb.version = VSB_VERSION;
	sb.dev_size = size;
	sb.extent_size = ext;
	sb.granule = VPOOL_GRANULE;
	uint32_t bmw = bm_words_for(ext / VPOOL_GRANULE);
	/* Checkpoint areas sized for the largest the pool may grow to (vpool_grow): 4x by
	 * default, about 0.1 % of that size for 1 MiB extents. */
	uint64_t max_size = prm->max_size ? prm->max_size : 4 * size;
	if (max_size < size) {
		fprintf(stderr, "vaaid: maximum pool size %llu is below the size %llu\n",
			(unsigned long long)max_size, (unsigned long long)size);
		return -EINVAL;
	}
	uint64_t n0 = max_size / ext;
	sb.ckpt_size = pool_ckpt_size_for(n0, bmw);
	sb.ckpt_off[0] = 2 * VSB_SIZE;
	sb.ckpt_off[1] = sb.ckpt_off[0] + sb.ckpt_size;
	sb.journal_size = jsz;
	if (jdev != dev) {
		/* The ring in the journal store, after its header block (rule 12). */
		if (jdev->size < VJF_HDR_SIZE + jsz) {
			fprintf(stderr, "vaaid: journal store of %llu bytes is smaller than the "
				"journal (%llu bytes and a header)\n",
				(unsigned long long)jdev->size, (unsigned long long)jsz);
			return -EINVAL;
		}
		sb.incompat |= VSB_INCOMPAT_JOURNAL_FILE;
		sb.journal_off = VJF_HDR_SIZE;
		sb.data_off = vround_up(sb.ckpt_off[1] + sb.ckpt_size, ext);
	} else {
		sb.journal_off = sb.ckpt_off[1] + sb.ckpt_size;
		sb.data_off = vround_up(sb.journal_off + jsz, ext);
	}
	if (sb.data_off + ext > size) {
		fprintf(stderr, "vaaid: pool of %llu bytes is too small for its metadata and one extent\n",
			(unsigned long long)size);
		return -EINVAL;
	}
	sb.n_extents = (size - sb.data_off) / ext;
	if (fill_random(sb.uuid, 16) < 0)
		return -EIO;
	/* An empty checkpoint in area 0. */
	struct vpool tmp = {0};
	tmp.sb = sb;
	tmp.n_ext = sb.n_extents;
	tmp.bm_words = bmw;
	tmp.refs = calloc(tmp.n_ext, sizeof(uint32_t));
	if (!tmp.refs || hmap_init(&tmp.validity, 16) < 0) {
		free(tmp.refs);
		return -ENOMEM;
	}
	uint8_t *blob;
	uint64_t len;
	int rc = pool_ckpt_serialize(&tmp, &blob, &len);
	free(tmp.refs);
	hmap_free(&tmp.validity);
	if (rc < 0)
		return rc;
	/* The metadata (superblocks, checkpoint areas, journal) gets its space in the
	 * backing file now, so that a full file system later can only refuse new data
	 * extents (-ENOSPC), never a metadata write. A file system without fallocate
	 * cannot reserve anything (EOPNOTSUPP): nothing to do then. */
	rc = vblk_allocate_sync(dev, 0, sb.data_off);
	if ((rc == 0 || rc == -EOPNOTSUPP) && jdev != dev)
		rc = vblk_allocate_sync(jdev, 0, sb.journal_off + jsz);
	if (rc < 0 && rc != -EOPNOTSUPP) {
		pool_blob_free(blob, len);
		return rc;
	}
	/* The journal ring written once (zeros, no commit is valid): its commits are then
	 * overwrites in the file, not first writes that also commit the file system's
	 * block allocation (which a DSYNC write into reserved space does). A journal
	 * store gets its header (naming this pool) first. */
	rc = jdev != dev ? vjf_header_write(jdev, &sb) : 0;
	if (rc == 0)
		rc = zero_journal(jdev, &sb);
	if (rc < 0) {
		pool_blob_free(blob, len);
		return rc;
	}
	rc = vblk_pwrite_sync(dev, blob, len, sb.ckpt_off[0], VBLK_DSYNC | VBLK_META);
	sb.ckpt_active = 0;
	sb.ckpt_len = len;
	sb.ckpt_crc = vcrc32c(0, blob, len);
	pool_blob_free(blob, len);
	if (rc < 0)
		return rc;
	/* Journal: start at 0, first sequence 1. Both superblock copies written. */
	sb.journal_start = 0;
	sb.journal_seq = 1;
	rc = vsb_write(dev, &sb);
	if (rc == 0)
		rc = vsb_write(dev, &sb);
	return rc;
}

void pool_req_track(struct vpool *p, struct pool_req *r, void (*discard)(struct pool_req *))
{
	r->discard = discard;
	r->prev = NULL;
	r->next = p->reqs;
	if (p->reqs)
		p->reqs->prev = r;
	p->reqs = r;
}

void pool_req_untrack(struct vpool *p, struct pool_req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		p->reqs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
}

void vpool_ctx_track(struct vpool *p, struct vpool_ctx *c, void (*discard)(struct vpool_ctx *c))
{
	c->discard = discard;
	c->prev = NULL;
	c->next = p->ctxs;
	if (p->ctxs)
		p->ctxs->prev = c;
	p->ctxs = c;
}

void vpool_ctx_untrack(struct vpool *p, struct vpool_ctx *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		p->ctxs = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

static void pool_free_mem(struct vpool *p)
{
	while (p->reqs) {
		struct pool_req *r = p->reqs;
		pool_req_untrack(p, r);
		r->discard(r);
	}
	while (p->ctxs) {
		struct vpool_ctx *c = p->ctxs;
		vpool_ctx_untrack(p, c);
		c->discard(c);
	}
	pool_ckpt_free(p); /* first: a live one's frozen image shares the maps' leaves */
	for (unsigned i = 0; i < VPOOL_MAX_VOLUMES; i++)
		if (p->vols[i]) {
			pool_map_free(p->vols[i]);
			free(p->vols[i]);
		}
	size_t it = 0;
	uint64_t k;
	void *v;
	while (hmap_next(&p->validity, &it, &k, &v))
		free(v);
	hmap_free(&p->validity);
	it = 0;
	while (hmap_next(&p->locks, &it, &k, &v))
		free(v);
	hmap_free(&p->locks);
	hmap_free(&p->unshared);
	hmap_free(&p->redo_pending);
	hmap_free(&p->redo_retiring);
	pool_redo_scan_free(p);
	free(p->unsh);
	pool_hydrator_free(p);
	pool_preback_free(p);
	free(p->backed);
	vjournal_destroy(p->j);
	free(p->refs);
	pool_acct_free(p);
	free(p->freebits);
	free(p->partial);
	free(p->pend);
	free(p);
}

static int pool_load(struct vpool *p)
{
	if (!p->sb.ckpt_len)
		return -EUCLEAN;
	return pool_ckpt_load(p, p->dev, p->sb.ckpt_off[p->sb.ckpt_active], p->sb.ckpt_len,
			      p->sb.ckpt_crc);
}

int vpool_store_has_journal_file(struct vblk *dev)
{
	struct vsb sb;
	int rc = vsb_read(dev, &sb, NULL);
	if (rc == -EIO || rc == -ENOMEM)
		return rc;
	return rc == 0 && (sb.incompat & VSB_INCOMPAT_JOURNAL_FILE) ? 1 : 0;
}

/* The journal store fits the superblock: 0, or -errno with the problem in rep. */
static int check_journal_store(const struct vsb *sb, struct vblk *jdev,
			       struct vpool_open_report *rep)
{
	const char *why = NULL;
	int rc = 0;
	if (!(sb->incompat & VSB_INCOMPAT_JOURNAL_FILE)) {
		if (jdev) {
			rc = -EINVAL;
			why = "a journal file was given, but this pool's journal is in its store";
		}
	} else if (!jdev) {
		rc = -ENOENT;
		why = "the pool's journal is in a journal file of its own, which is missing "
		      "(without it acknowledged writes would be lost)";
	} else {
		rc = vjf_header_check(jdev, sb);
		why = rc == -ENODATA   ? "the journal file has no vaaid journal header"
		      : rc == -EBADMSG ? "the journal file's header is damaged"
		      : rc == -EXDEV   ? "the journal file belongs to another pool"
		      : rc == -EUCLEAN ? "the journal file does not match the pool's journal "
					 "geometry (truncated?)"
				       : "the journal file cannot be read";
	}
	if (rc < 0 && rep)
		snprintf(rep->error, sizeof(rep->error), "%s", why);
	return rc;
}

int vpool_open_ex(struct vblk *dev, unsigned flags, struct vpool **out,
		  struct vpool_open_report *rep)
{
	return vpool_open_stores(dev, NULL, flags, out, rep);
}

int vpool_open_stores(struct vblk *dev, struct vblk *jdev, unsigned flags, struct vpool **out,
		      struct vpool_open_report *rep)
{
	struct vpool *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->dev = dev;
	p->jdev = jdev ? jdev : dev;
	p->r = dev->reactor;
	p->readonly = flags & VPOOL_OPEN_READONLY;
	int rc = vsb_read(dev, &p->sb, NULL);
	const char *why = rc == -ENODATA ? "no vaaid superblock (not a pool; `vaaictl pool create "
					   "--force` formats an existing store)"
			  : rc == -EPROTONOSUPPORT ? "superblock of an unknown format version or "
						     "feature (made by a newer vaaid?)"
			  : rc == -EUCLEAN || rc == -EBADMSG ? "both superblocks are damaged"
							      : NULL;
	if (rc == 0 && p->sb.dev_size > dev->size) {
		rc = -EUCLEAN;
		if (rep)
			snprintf(rep->error, sizeof(rep->error),
				 "the pool is %llu bytes, its store only %llu (truncated?)",
				 (unsigned long long)p->sb.dev_size, (unsigned long long)dev->size);
	} else if (rc == 0 && (p->sb.ro_compat & ~VSB_RO_COMPAT_KNOWN) && !p->readonly) {
		rc = -EROFS;
		why = "features unknown to this vaaid allow reading only";
	}
	if (rc < 0) {
		if (rep && why)
			snprintf(rep->error, sizeof(rep->error), "%s", why);
		free(p);
		return rc;
	}
	rc = check_journal_store(&p->sb, jdev, rep);
	if (rc < 0) {
		free(p);
		return rc;
	}
	p->ext = p->sb.extent_size;
	p->gran_per_ext = (uint32_t)(p->ext / VPOOL_GRANULE);
	p->bm_words = bm_words_for(p->gran_per_ext);
	p->n_ext = p->sb.n_extents;
	p->refs = calloc(p->n_ext ? p->n_ext : 1, sizeof(uint32_t));
	p->partial = calloc((p->n_ext + 63) / 64 + 1, sizeof(uint64_t));
	if (!p->refs || !p->partial || hmap_init(&p->validity, 64) < 0 ||
	    hmap_init(&p->locks, 256) < 0 || hmap_init(&p->unshared, 16) < 0 ||
	    hmap_init(&p->hydr, 16) < 0 || hmap_init(&p->hsrc, 16) < 0 ||
	    hmap_init(&p->xdup, 16) < 0 ||
	    hmap_init(&p->redo_pending, 64) < 0 || pool_acct_init(p) < 0 ||
	    pool_hydrator_init(p) < 0 || pool_preback_init(p) < 0) {
		pool_free_mem(p);
		return -ENOMEM;
	}
	rc = pool_load(p);
	if (rc < 0) {
		if (rep)
			snprintf(rep->error, sizeof(rep->error), "checkpoint %llu in area %u: %s",
				 (unsigned long long)p->sb.ckpt_seq, p->sb.ckpt_active, strerror(-rc));
		pool_free_mem(p);
		return rc;
	}
	struct vj_replay_result res;
	p->replaying = true;
	rc = pool_redo_scan(p, p->jdev); /* which DATA records are still live (redo.c) */
	bool scanned = rc == 0;
	if (rc == 0)
		rc = vjournal_replay(p->jdev, &p->sb, pool_replay_record, p, &res);
	else
		memset(&res, 0, sizeof(res));
	pool_redo_scan_free(p);
	p->replaying = false;
	if (rep) {
		rep->commits = res.commits;
		rep->records = res.records;
		rep->data_bytes = p->redo_replayed;
		if (rc < 0 && !scanned)
			snprintf(rep->error, sizeof(rep->error),
				 "journal from commit %llu (its scan for small writes): %s",
				 (unsigned long long)p->sb.journal_seq, strerror(-rc));
		else if (rc < 0)
			snprintf(rep->error, sizeof(rep->error),
				 "journal commit %llu (record %llu of the replay): %s",
				 (unsigned long long)res.next_seq, (unsigned long long)res.records,
				 strerror(-rc));
	}
	if (rc == 0)
		rc = pool_alloc_init(p);
	if (rc == 0)
		rc = vjournal_create(p->jdev, &p->sb, res.end, res.next_seq, res.used, &pool_journal_ops,
				     p, &p->j);
	if (rc == 0 && res.commits && !p->readonly)
		rc = pool_ckpt_sync(p);
	if (rc < 0) {
		pool_free_mem(p);
		return rc;
	}
	pool_hydrator_kick(p); /* redirected extents recovered with their source */
	/* (The pre-backer starts with the first allocation, not here: a pool that
	 * allocates nothing reserves no file space ahead.) */
	*out = p;
	return 0;
}

int vpool_open(struct vblk *dev, struct vpool **out) { return vpool_open_ex(dev, 0, out, NULL); }

/* Control path: run the reactor until no checkpoint is running. */
static int wait_ckpt_done(struct vpool *p)
{
	while (pool_ckpt_busy(p)) {
		int rc = vreactor_run_once(p->r, -1);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int wait_idle(struct vpool *p)
{
	while (p->inflight || pool_ckpt_busy(p) || pool_hydrator_busy(p) || pool_preback_busy(p) ||
	       pool_discards_busy(p) ||
	       (p->j && !vjournal_idle(p->j))) {
		int rc = vreactor_run_once(p->r, -1);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int vpool_checkpoint(struct vpool *p)
{
	if (p->readonly)
		return -EROFS;
	return pool_ckpt_sync(p);
}

int vpool_hydration_wait(struct vpool *p)
{
	vpool_hydration_pause(p, false);
	unsigned errors = pool_hydrator_errors(p);
	while (p->hydr.n && !p->failed && !p->readonly) {
		if (pool_hydrator_errors(p) != errors)
			return -EIO; /* a hydration failed (I/O error): do not loop */
		int rc = pool_hydrator_start_now(p);
		if (rc < 0)
			return rc;
		rc = vreactor_run_once(p->r, -1);
		if (rc < 0)
			return rc;
	}
	if (p->failed)
		return -EIO;
	return wait_idle(p);
}

int vpool_close(struct vpool *p)
{
	pool_hydrator_stop(p); /* what is left waits in the checkpoint; resumes at open */
	pool_preback_stop(p);
	int rc = wait_idle(p);
	if (rc == 0 && !p->readonly && !p->failed)
		rc = pool_ckpt_sync(p);
	pool_free_mem(p);
	return rc;
}

void vpool_abandon(struct vpool *p) { pool_free_mem(p); }

static int grow_array(void *pp, size_t old_n, size_t new_n, size_t elem)
{
	void **a = pp;
	void *n = realloc(*a, new_n * elem);
	if (!n)
		return -ENOMEM;
	memset((char *)n + old_n * elem, 0, (new_n - old_n) * elem);
	*a = n;
	return 0;
}

int vpool_grow(struct vpool *p, uint64_t new_size)
{
	if (p->readonly)
		return -EROFS;
	if (p->failed)
		return -EIO;
	if (new_size < p->sb.dev_size || new_size % VBLK_SECTOR)
		return -EINVAL;
	uint64_t old = p->n_ext, n_new = (new_size - p->sb.data_off) / p->ext;
	if (n_new <= old)
		return new_size == p->sb.dev_size ? 0 : -EINVAL; /* not one extent more */
	if (pool_ckpt_size_for(n_new, p->bm_words) > p->sb.ckpt_size ||
	    pool_ckpt_room(p, 0, n_new) < 0)
		return -EFBIG;
	/* The device may be that large already: a grow the power failed inside (the file
	 * grew, the superblock did not), or a file or device enlarged beforehand. */
	int rc = new_size > p->dev->size ? p->dev->ops->grow(p->dev, new_size) : 0;
	if (rc < 0)
		return rc;
	/* The new size durable before the superblock names it: the checkpoint's DSYNC
	 * writes all lie inside the old size, and POSIX lets an fdatasync of those
	 * leave a size change behind (ext4 and XFS commit it anyway; docs/crash.md). */
	rc = vblk_flush_sync(p->dev);
	if (rc < 0)
		return rc;
	/* A checkpoint already running serializes the old geometry and would write the
	 * superblock from p->sb; its view also holds p->refs (ckpt_image.c), which
	 * grow_array below may move: let it finish first (session 25's review: the
	 * arrays were grown before this wait, and the blob's rest read freed memory). */
	rc = wait_ckpt_done(p);
	if (rc < 0)
		return rc;
	/* Arrays (new extents referenced by nobody, not free yet: not allocatable). Nothing
	 * runs the reactor between here and the checkpoint below: no checkpoint starts. */
	size_t ow = (old + 63) / 64 + 1, nw = (n_new + 63) / 64 + 1;
	if ((rc = grow_array(&p->refs, old, n_new, sizeof(uint32_t))) < 0 ||
	    (rc = grow_array(&p->hx, old, n_new, sizeof(uint32_t))) < 0 ||
	    (rc = grow_array(&p->partial, ow, nw, sizeof(uint64_t))) < 0 ||
	    (rc = grow_array(&p->freebits, (old + 63) / 64, nw, sizeof(uint64_t))) < 0 ||
	    (rc = grow_array(&p->backed, (old + 63) / 64, nw, sizeof(uint64_t))) < 0)
		return rc;
	struct vsb saved = p->sb;
	p->n_ext = n_new;
	p->sb.n_extents = n_new;
	p->sb.dev_size = new_size;
	/* The checkpoint writes the blob for n_new extents, then the superblock with the
	 * new geometry: a crash before the superblock leaves the old pool (the file is
	 * just longer), after it the new one. Nothing can reference a new extent before. */
	rc = pool_ckpt_sync(p);
	if (rc < 0) {
		p->n_ext = old;
		p->sb.n_extents = saved.n_extents;
		p->sb.dev_size = saved.dev_size;
		return rc;
	}
	for (uint64_t i = old; i < n_new; i++) {
		p->freebits[i / 64] |= 1ull << (i % 64);
		p->n_free++;
	}
	pool_thr_check(p);
	pool_preback_unstall(p); /* the file grew: room to back new extents */
	pool_preback_kick(p);
	return 0;
}

void vpool_get_diag(const struct vpool *p, struct vpool_diag *out)
{
	memset(out, 0, sizeof(*out));
	out->inflight = p->inflight;
	out->ckpt_running = pool_ckpt_busy(p);
	pool_ckpt_phase(p, &out->ckpt_phase, &out->ckpt_fail_phase, &out->ckpt_live_records);
	pool_ckpt_steps(p, &out->ckpt_last);
	out->failed = p->failed;
	out->redo_inflight = p->redo_inflight;
	out->redo_pending = p->redo_pending.n;
	out->redo_ckpt_waiting = p->redo_ckpt_wait != NULL;
	if (p->j) {
		out->have_journal = true;
		vjournal_get_diag(p->j, &out->journal);
	}
}

void vpool_get_stats(const struct vpool *p, struct vpool_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = p->sb.dev_size;
	st->extent = p->ext;
	st->capacity = p->n_ext * p->ext;
	st->free = (p->n_free + p->discards) * p->ext; /* being discarded: free (discard.c) */
	st->used = st->capacity - st->free;
	/* Extent sharing (XCOPY): map references beyond the first (acct.c). A hydration
	 * source's reference saves nothing (its redirected extent is allocated too). */
	st->sharing_savings = (p->total_refs - p->n_mref_ext) * p->ext;
	st->hydrating = p->hydr.n * p->ext;
	st->journal_commits = p->j ? vjournal_commits(p->j) : 0;
	st->journal_records = p->j ? vjournal_records(p->j) : 0;
	st->checkpoints = p->checkpoints;
	st->journal_bytes = p->j ? vjournal_bytes(p->j) : 0;
	st->checkpoint_ns = p->checkpoint_ns;
	st->share_room_refused = p->share_room_refused;
	st->journal_file = p->jdev && p->jdev != p->dev;
	st->store_io = p->dev->stats;
	if (st->journal_file)
		st->journal_io = p->jdev->stats;
	else
		memset(&st->journal_io, 0, sizeof(st->journal_io));
	st->journal_used = p->j ? vjournal_used(p->j) : 0;
	st->journal_size = p->sb.journal_size;
	st->data_off = p->sb.data_off;
}

struct vblk *vpool_dev(const struct vpool *p) { return p->dev; }

bool vpool_fenced(const struct vpool *p) { return p->dev->fenced || (p->jdev && p->jdev->fenced); }

/* ---- volumes */

static bool valid_name(const char *n)
{
	size_t len = strlen(n);
	if (!len || len > VPOOL_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = n[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return n[0] != '.';
}

struct vvol *vpool_volume_find(const struct vpool *p, const char *name)
{
	for (unsigned i = 0; i < p->n_vols; i++)
		if (!strcmp(p->vols[p->order[i]]->name, name))
			return p->vols[p->order[i]];
	return NULL;
}

unsigned vpool_volume_count(const struct vpool *p) { return p->n_vols; }
struct vvol *vpool_volume_at(const struct vpool *p, unsigned i)
{
	return i < p->n_vols ? p->vols[p->order[i]] : NULL;
}

struct commit_wait {
	struct vj_waiter w;
	bool done;
	int res;
};

static void commit_wait_done(void *arg, int res)
{
	struct commit_wait *cw = arg;
	cw->res = res;
	cw->done = true;
}

int vpool_volume_create(struct vpool *p, const char *name, uint64_t size, uint32_t block_size,
			struct vvol **out)
{
	if (p->readonly)
		return -EROFS;
	if (p->failed)
		return -EIO;
	if (!valid_name(name) || (block_size != 512 && block_size != 4096) || !size)
		return -EINVAL;
	size = vround_up(size, block_size);
	if (!pool_vol_size_ok(p, size))
		return -EFBIG;
	if (vpool_volume_find(p, name))
		return -EEXIST;
	int idx = -1;
	for (int i = 0; i < VPOOL_MAX_VOLUMES; i++)
		if (!p->vols[i]) {
			idx = i;
			break;
		}
	if (idx < 0)
		return -ENOSPC;
	/* NAA-6 IEEE Registered Extended (SPC-4 7.8.6.6.5): NAA 6h, OUI, 100 random bits. */
	uint8_t naa[16];
	if (fill_random(naa, 16) < 0)
		return -EIO;
	naa[0] = (uint8_t)(0x60 | (VAAID_NAA_OUI >> 20));
	naa[1] = (uint8_t)(VAAID_NAA_OUI >> 12);
	naa[2] = (uint8_t)(VAAID_NAA_OUI >> 4);
	naa[3] = (uint8_t)((VAAID_NAA_OUI & 0xf) << 4 | (naa[3] & 0xf));
	char serial[33];
	for (int i = 0; i < 12; i++)
		snprintf(serial + 2 * i, 3, "%02x", naa[4 + i]);
	/* Wait for room in the journal when a checkpoint is running. */
	while (!vjournal_can_append(p->j, 200)) {
		if (vjournal_failed(p->j))
			return -EIO;
		struct commit_wait cw = {.w = {.fn = commit_wait_done}};
		cw.w.arg = &cw;
		vjournal_wait_room(p->j, &cw.w);
		int rc = vreactor_run_until(p->r, &cw.done);
		if (rc < 0)
			return rc;
	}
	int rc = pool_log_vol_create(p, (uint16_t)idx, name, size, block_size, naa, serial);
	if (rc < 0)
		return rc;
	struct commit_wait cw = {.w = {.fn = commit_wait_done}};
	cw.w.arg = &cw;
	vjournal_wait_commit(p->j, &cw.w);
	rc = vreactor_run_until(p->r, &cw.done);
	if (rc < 0)
		return rc;
	if (cw.res < 0)
		return cw.res;
	if (out)
		*out = p->vols[idx];
	return 0;
}

/* Control path: wait for the checkpoint and for journal room, log one record, wait until durable. */
static int log_sync(struct vpool *p, int (*logfn)(struct vpool *, struct vvol *, uint64_t),
		    struct vvol *v, uint64_t arg)
{
	int wrc = wait_ckpt_done(p); /* a checkpoint may be walking the map we change */
	if (wrc < 0)
		return wrc;
	while (!vjournal_can_append(p->j, 64)) {
		if (vjournal_failed(p->j))
			return -EIO;
		struct commit_wait cw = {.w = {.fn = commit_wait_done}};
		cw.w.arg = &cw;
		vjournal_wait_room(p->j, &cw.w);
		int rc = vreactor_run_until(p->r, &cw.done);
		if (rc < 0)
			return rc;
	}
	int rc = logfn(p, v, arg);
	if (rc < 0)
		return rc;
	struct commit_wait cw = {.w = {.fn = commit_wait_done}};
	cw.w.arg = &cw;
	vjournal_wait_commit(p->j, &cw.w);
	rc = vreactor_run_until(p->r, &cw.done);
	return rc < 0 ? rc : cw.res;
}

static int log_delete(struct vpool *p, struct vvol *v, uint64_t unused)
{
	(void)unused;
	return pool_log_vol_delete(p, v);
}

int vpool_volume_delete(struct vpool *p, const char *name)
{
	if (p->readonly)
		return -EROFS;
	if (p->failed)
		return -EIO;
	struct vvol *v = vpool_volume_find(p, name);
	if (!v)
		return -ENOENT;
	/* The caller detached the volume; let stragglers finish, and keep the hydrator off
	 * (it could be copying into one of the volume's extents, freed by the delete). */
	pool_hydrator_hold(p, true);
	int rc = 0;
	while ((p->inflight || pool_hydrator_busy(p)) && rc >= 0)
		rc = vreactor_run_once(p->r, -1);
	if (rc >= 0)
		rc = log_sync(p, log_delete, v, 0);
	pool_hydrator_hold(p, false);
	return rc < 0 ? rc : 0;
}

int vvol_grow(struct vvol *v, uint64_t size)
{
	struct vpool *p = v->pool;
	if (p->readonly)
		return -EROFS;
	if (p->failed)
		return -EIO;
	size = vround_up(size, v->block_size);
	if (size < v->size)
		return -EINVAL; /* shrinking would cut data off: never */
	if (size == v->size)
		return 0;
	if (!pool_vol_size_ok(p, size))
		return -EFBIG;
	return log_sync(p, pool_log_vol_resize, v, size);
}

void vvol_get_info(const struct vvol *v, struct vvol_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", v->name);
	info->size = v->size;
	info->block_size = v->block_size;
	memcpy(info->naa, v->naa, 16);
	snprintf(info->serial, sizeof(info->serial), "%s", v->serial);
	info->mapped = v->mapped * v->pool->ext;
	info->unshared = v->alone * v->pool->ext; /* acct.c */
	info->exclusive = v->excl * v->pool->ext;
	info->shared = (v->mapped - v->excl_ent) * v->pool->ext;
}

struct vpool *vvol_pool(const struct vvol *v) { return v->pool; }
