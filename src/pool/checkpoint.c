/*
 * Checkpoints: the whole pool state in one blob, so the journal can be reused.
 *
 * Blob (little endian, one 4 KiB-padded run in a checkpoint area):
 *   header 64 B: magic, n_ext, bm_words, n_vols, n_refruns, n_runs, n_partial,
 *               n_hydr
 *   volumes     136 B each: idx, block size, size, naa, serial, name
 *   refcounts   run-length encoded {count u32, value u32}
 *   map runs    {idx u16, pad u16, count u32, vext u64, pext u64}: count
 *               consecutive virtual extents mapped to consecutive physical ones
 *   hydrating   {pext u64, source u64, idx << 48 | vext u64}: redirected extents
 *               still reading from their source (hydrate.c)
 *   partial     {pext u64, bitmap bm_words x u64}
 * Refcounts are stored although they could be derived: loading checks them
 * against the references the map runs and the hydration sources make, so a damaged or inconsistent
 * checkpoint is refused instead of silently "repaired" (vaai-check relies on
 * this too).
 *
 * The asynchronous checkpoint (pool_ckpt_request) quiesces the journal
 * (appends wait, everything appended becomes durable), makes the home copies
 * of writes carried in the journal durable (redo.c), then serializes
 * memory through a 1 MiB window, each window written with DSYNC to the area
 * the superblock does not name (never the whole blob in memory), then writes
 * a superblock naming it and the journal position, and finally frees the
 * journal ring and resumes appends. Loading also reads through a window. Data reads and in-place overwrites
 * continue throughout; only metadata changes wait.
 *
 * A live checkpoint (vpool_set_live_checkpoints, off by default; docs/snapshots.md
 * section 12, step 3) pauses appends only until its freeze point (ckpt_freeze): the
 * state is frozen there (ckpt_image.c: directories copied, map leaves shared and
 * copied aside on change, the rest copied), appends resume, the frozen image is
 * serialized, and the superblock names the freeze position as the replay start;
 * the ring bytes before it are freed once that superblock is durable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ckpt_image.h"
#include "pool_internal.h"
#include "vaaid/endian.h"
#include "vaaid/util.h"

#define CKPT_MAGIC 0x54504B4344494141ull /* "AAIDCKPT" */
#define CKPT_HDR 64u
#define CKPT_VOL 136u
#define CKPT_REFRUN 8u
#define CKPT_RUN 24u
#define CKPT_HYDR 24u

/*
 * Blobs are large (up to ~40 MiB per TiB of pool) and short-lived: they are
 * mmap'd so that freeing one gives its memory back at once. From malloc, the
 * first free raises glibc's mmap threshold and every later blob comes from
 * the heap, where it stays resident after the checkpoint (measured: +24 MiB
 * RSS per TiB for good; docs/performance.md).
 */
uint8_t *pool_blob_alloc(uint64_t len)
{
	void *b = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return b == MAP_FAILED ? NULL : b; /* page aligned (>= VBLK_ALIGN) and zeroed */
}

void pool_blob_free(uint8_t *b, uint64_t len)
{
	if (b)
		munmap(b, len ? len : 1);
}

uint64_t pool_ckpt_size_for(uint64_t n_ext, uint32_t bm_words)
{
	uint64_t max_refs = n_ext * POOL_MAX_REFS_PER_EXTENT_AVG;
	uint64_t sz = CKPT_HDR + (uint64_t)VPOOL_MAX_VOLUMES * CKPT_VOL + n_ext * CKPT_REFRUN +
		      max_refs * CKPT_RUN + n_ext * CKPT_HYDR + n_ext * (8 + 8ull * bm_words);
	return vround_up(sz, VJ_BLOCK);
}

/*
 * The checkpoint-room check (docs/snapshots.md section 5): the area reserves one map
 * run per map reference, its other sections sized by the extents. Map references
 * can never exceed B = the map references now + the extents nobody references (a
 * write maps a new entry only by taking an unreferenced extent, an unmap frees one or
 * leaves it to another holder), and B grows only by a SHARE or a pool grow: those are
 * refused when B would exceed what the area holds, so no later write can overflow it.
 */
int pool_ckpt_room(const struct vpool *p, uint64_t add_refs, uint64_t n_ext)
{
	uint64_t fixed = CKPT_HDR + (uint64_t)VPOOL_MAX_VOLUMES * CKPT_VOL +
			 n_ext * (CKPT_REFRUN + CKPT_HYDR + 8 + 8ull * p->bm_words);
	if (fixed > p->sb.ckpt_size)
		return -ENOSPC;
	uint64_t room = (p->sb.ckpt_size - fixed) / CKPT_RUN;
	uint64_t bound = p->total_refs + add_refs + (n_ext - p->n_ref_ext);
	return bound > room ? -ENOSPC : 0;
}

/* Number of runs in a volume's map. */
static uint64_t count_runs(const struct vvol *v)
{
	uint64_t n = 0;
	for (uint64_t e = pool_map_next(v, 0); e < v->n_vext; e = pool_map_next(v, e + 1)) {
		uint64_t prev = e ? pool_map_get(v, e - 1) : 0;
		if (!prev || prev + 1 != pool_map_get(v, e))
			n++;
	}
	return n;
}

/*
 * The serializer is resumable: ser_fill() produces the next whole items that
 * fit, so the asynchronous checkpoint writes the blob through a window of
 * CKPT_WIN bytes instead of holding all of it (24 MiB per TiB when no two
 * mapped extents are physically consecutive). This is sound because what it
 * reads cannot change while a checkpoint runs: every change is a journal
 * append, and appends are paused until the superblock is written -- or, for a
 * live checkpoint, it reads the frozen image (ckpt_image.h).
 */
enum { SER_HDR, SER_VOLS, SER_REFRUNS, SER_RUNS, SER_HYDR, SER_PARTIAL, SER_PAD, SER_DONE };
#define SER_MAX_ITEM (8u + 8u * 64u) /* a partial entry with 16 MiB extents */

struct ckpt_ser {
	uint64_t n_refruns, n_runs, n_partial, n_hydr;
	uint64_t total;    /* blob length (VJ_BLOCK multiple) */
	uint64_t produced; /* bytes produced so far */
	int section;
	uint64_t i;        /* volumes: order index; refruns: next extent */
	unsigned vol;      /* map runs: order index of the volume */
	uint64_t e;        /* map runs: next virtual extent */
	size_t it;         /* partial: hmap iterator */
};

static int ser_init(const struct ckpt_view *p, uint64_t room, struct ckpt_ser *s)
{
	memset(s, 0, sizeof(*s));
	for (uint64_t i = 0; i < p->n_ext; i++)
		if (i == 0 || ckpt_view_ref(p, i) != ckpt_view_ref(p, i - 1))
			s->n_refruns++;
	for (unsigned i = 0; i < p->n_vols; i++)
		s->n_runs += count_runs(p->vols[i]);
	s->n_partial = p->validity->n;
	s->n_hydr = p->hydr->n;
	uint64_t raw = CKPT_HDR + (uint64_t)p->n_vols * CKPT_VOL + s->n_refruns * CKPT_REFRUN +
		       s->n_runs * CKPT_RUN + s->n_hydr * CKPT_HYDR +
		       s->n_partial * (8 + 8ull * p->bm_words);
	s->total = vround_up(raw, VJ_BLOCK);
	return s->total > room ? -ENOSPC : 0;
}

/* Write the next whole items into w (at most cap bytes, cap >= SER_MAX_ITEM); returns bytes. */
static size_t ser_fill(const struct ckpt_view *p, struct ckpt_ser *s, uint8_t *w, size_t cap)
{
	size_t n = 0;
	const size_t part = 8 + 8ull * p->bm_words;
	while (s->section != SER_DONE) {
		uint8_t *o = w + n;
		switch (s->section) {
		case SER_HDR:
			if (cap - n < CKPT_HDR)
				goto full;
			memset(o, 0, CKPT_HDR);
			vput_le64(o, CKPT_MAGIC);
			vput_le64(o + 8, p->n_ext);
			vput_le32(o + 16, p->bm_words);
			vput_le32(o + 20, p->n_vols);
			vput_le64(o + 24, s->n_refruns);
			vput_le64(o + 32, s->n_runs);
			vput_le64(o + 40, s->n_partial);
			vput_le64(o + 48, s->n_hydr);
			n += CKPT_HDR;
			s->section = SER_VOLS;
			s->i = 0;
			break;
		case SER_VOLS: {
			if (s->i == p->n_vols) {
				s->section = SER_REFRUNS;
				s->i = 0;
				break;
			}
			if (cap - n < CKPT_VOL)
				goto full;
			const struct vvol *v = p->vols[s->i++];
			memset(o, 0, CKPT_VOL);
			vput_le16(o, v->idx);
			vput_le32(o + 4, v->block_size);
			vput_le64(o + 8, v->size);
			memcpy(o + 16, v->naa, 16);
			memcpy(o + 32, v->serial, 33);
			o[65] = (uint8_t)strlen(v->name);
			memcpy(o + 66, v->name, strlen(v->name));
			n += CKPT_VOL;
			break;
		}
		case SER_REFRUNS: {
			if (s->i == p->n_ext) {
				s->section = SER_RUNS;
				s->vol = 0;
				s->e = 0;
				break;
			}
			if (cap - n < CKPT_REFRUN)
				goto full;
			uint64_t i = s->i, j = i;
			uint32_t r = ckpt_view_ref(p, i);
			while (j < p->n_ext && ckpt_view_ref(p, j) == r && j - i < UINT32_MAX)
				j++;
			vput_le32(o, (uint32_t)(j - i));
			vput_le32(o + 4, r);
			n += CKPT_REFRUN;
			s->i = j;
			break;
		}
		case SER_RUNS: {
			if (s->vol == p->n_vols) {
				s->section = SER_HYDR;
				s->it = 0;
				break;
			}
			const struct vvol *v = p->vols[s->vol];
			uint64_t e = pool_map_next(v, s->e);
			s->e = e;
			if (e == v->n_vext) {
				s->vol++;
				s->e = 0;
				break;
			}
			if (cap - n < CKPT_RUN)
				goto full;
			uint64_t st = e;
			while (e + 1 < v->n_vext &&
			       pool_map_get(v, e + 1) == pool_map_get(v, e) + 1 && e + 1 - st < UINT32_MAX)
				e++;
			vput_le16(o, v->idx);
			vput_le16(o + 2, 0);
			vput_le32(o + 4, (uint32_t)(e + 1 - st));
			vput_le64(o + 8, st);
			vput_le64(o + 16, pool_map_get(v, st) - 1);
			n += CKPT_RUN;
			s->e = e + 1;
			break;
		}
		case SER_HYDR: {
			size_t it = s->it;
			uint64_t key;
			void *val;
			if (!hmap_next(p->hydr, &it, &key, &val)) {
				s->section = SER_PARTIAL;
				s->it = 0;
				break;
			}
			if (cap - n < CKPT_HYDR)
				goto full;
			s->it = it;
			const struct hydr_ent *h = val;
			vput_le64(o, h->pext);
			vput_le64(o + 8, h->src);
			vput_le64(o + 16, (uint64_t)h->idx << 48 | h->vext);
			n += CKPT_HYDR;
			break;
		}
		case SER_PARTIAL: {
			size_t it = s->it;
			uint64_t key;
			void *val;
			if (!hmap_next(p->validity, &it, &key, &val)) {
				s->section = SER_PAD;
				break;
			}
			if (cap - n < part)
				goto full;
			s->it = it;
			vput_le64(o, key);
			const uint64_t *bm = val;
			for (uint32_t k = 0; k < p->bm_words; k++)
				vput_le64(o + 8 + 8 * k, bm[k]);
			n += part;
			break;
		}
		case SER_PAD: {
			uint64_t left = s->total - (s->produced + n);
			size_t z = left < cap - n ? (size_t)left : cap - n;
			memset(o, 0, z);
			n += z;
			if (s->produced + n == s->total)
				s->section = SER_DONE;
			else
				goto full;
			break;
		}
		}
	}
full:
	s->produced += n;
	return n;
}

int pool_ckpt_serialize(const struct vpool *p, uint8_t **out, uint64_t *len)
{
	struct ckpt_ser s;
	struct ckpt_view view;
	pool_ckpt_view_live(p, &view);
	int rc = ser_init(&view, p->sb.ckpt_size, &s);
	if (rc < 0)
		return rc;
	uint8_t *b = pool_blob_alloc(s.total);
	if (!b)
		return -ENOMEM;
	ser_fill(&view, &s, b, s.total);
	if (s.section != SER_DONE) {
		pool_blob_free(b, s.total);
		return -EUCLEAN; /* the counts and the items disagree: cannot happen */
	}
	*out = b;
	*len = s.total;
	return 0;
}

/*
 * Loading reads the blob through a window of CKPT_WIN bytes, never whole:
 * the open's peak memory is the state plus one window, not plus the blob
 * (24 MiB per TiB when no two mapped extents are physically consecutive).
 * A first pass checks the CRC, the second parses, so nothing of a damaged
 * blob is applied.
 */
#define CKPT_WIN (1u << 20)

struct ckpt_rd {
	struct vblk *dev;
	uint64_t base, len; /* device offset and length of the blob (multiples of VJ_BLOCK) */
	uint8_t *win;
	uint64_t wstart, wlen; /* blob bytes [wstart, wstart + wlen) are in win */
	uint64_t pos;          /* next blob byte to parse */
	int err;
};

/* The next n bytes of the blob (n <= CKPT_WIN - VJ_BLOCK), or NULL with r->err set. */
static const uint8_t *rd_take(struct ckpt_rd *r, uint64_t n)
{
	if (r->err)
		return NULL;
	if (n > r->len - r->pos) {
		r->err = -EUCLEAN;
		return NULL;
	}
	if (r->pos < r->wstart || r->pos + n > r->wstart + r->wlen) {
		uint64_t from = r->pos & ~(uint64_t)(VJ_BLOCK - 1);
		uint64_t cnt = r->len - from < CKPT_WIN ? r->len - from : CKPT_WIN;
		int rc = vblk_pread_sync(r->dev, r->win, cnt, r->base + from);
		if (rc < 0) {
			r->err = rc;
			return NULL;
		}
		r->wstart = from;
		r->wlen = cnt;
	}
	const uint8_t *b = r->win + (r->pos - r->wstart);
	r->pos += n;
	return b;
}

static int ckpt_parse(struct vpool *p, struct ckpt_rd *rd)
{
	uint64_t len = rd->len;
	const uint8_t *b = rd_take(rd, CKPT_HDR);
	if (!b)
		return rd->err;
	if (vget_le64(b) != CKPT_MAGIC || vget_le64(b + 8) != p->n_ext || vget_le32(b + 16) != p->bm_words)
		return -EUCLEAN;
	uint64_t n_vols = vget_le32(b + 20), n_refruns = vget_le64(b + 24), n_runs = vget_le64(b + 32),
		 n_partial = vget_le64(b + 40), n_hydr = vget_le64(b + 48);
	if (n_vols > VPOOL_MAX_VOLUMES || n_refruns > p->n_ext || n_runs > len ||
	    n_partial > p->n_ext || n_hydr > p->n_ext)
		return -EUCLEAN;
	uint64_t need = CKPT_HDR + n_vols * CKPT_VOL + n_refruns * CKPT_REFRUN + n_runs * CKPT_RUN +
			n_hydr * CKPT_HYDR + n_partial * (8 + 8ull * p->bm_words);
	if (need > len)
		return -EUCLEAN;
	const uint8_t *r;
	for (uint64_t i = 0; i < n_vols; i++) {
		if (!(r = rd_take(rd, CKPT_VOL)))
			return rd->err;
		char serial[34], name[VPOOL_NAME_MAX + 1];
		memcpy(serial, r + 32, 33);
		serial[33] = 0;
		uint8_t nl = r[65];
		if (nl > VPOOL_NAME_MAX)
			return -EUCLEAN;
		memcpy(name, r + 66, nl);
		name[nl] = 0;
		int rc = pool_apply_vol_create(p, vget_le16(r), name, vget_le64(r + 8), vget_le32(r + 4), r + 16,
					       serial);
		if (rc < 0)
			return rc;
	}
	uint64_t e = 0;
	for (uint64_t i = 0; i < n_refruns; i++) {
		if (!(r = rd_take(rd, CKPT_REFRUN)))
			return rd->err;
		uint64_t cnt = vget_le32(r);
		uint32_t val = vget_le32(r + 4);
		if (!cnt || cnt > p->n_ext - e)
			return -EUCLEAN;
		for (uint64_t k = 0; k < cnt; k++)
			p->refs[e++] = val;
	}
	if (e != p->n_ext)
		return -EUCLEAN;
	/* Map runs: each reference is checked off against the stored refcounts. */
	for (uint64_t i = 0; i < n_runs; i++) {
		if (!(r = rd_take(rd, CKPT_RUN)))
			return rd->err;
		uint16_t idx = vget_le16(r);
		uint64_t cnt = vget_le32(r + 4), vext = vget_le64(r + 8), pext = vget_le64(r + 16);
		struct vvol *v = idx < VPOOL_MAX_VOLUMES ? p->vols[idx] : NULL;
		if (!v || !cnt || vext >= v->n_vext || cnt > v->n_vext - vext || pext >= p->n_ext ||
		    cnt > p->n_ext - pext)
			return -EUCLEAN;
		for (uint64_t k = 0; k < cnt; k++) {
			if (pool_map_get(v, vext + k) || !p->refs[pext + k])
				return -EUCLEAN;
			p->refs[pext + k]--;
			int rc = pool_map_set(v, vext + k, pext + k + 1); /* counts v->mapped */
			if (rc < 0)
				return rc;
		}
	}
	/* Hydration sources: each holds one reference; the extent is mapped where it says. */
	for (uint64_t i = 0; i < n_hydr; i++) {
		if (!(r = rd_take(rd, CKPT_HYDR)))
			return rd->err;
		uint64_t pext = vget_le64(r), src = vget_le64(r + 8), at = vget_le64(r + 16);
		uint16_t idx = (uint16_t)(at >> 48);
		uint64_t vext = at & ((1ull << 48) - 1);
		struct vvol *v = idx < VPOOL_MAX_VOLUMES ? p->vols[idx] : NULL;
		if (!v || vext >= v->n_vext || pool_map_get(v, vext) != pext + 1 || src >= p->n_ext ||
		    src == pext || !p->refs[src])
			return -EUCLEAN;
		int rc = pool_hydr_add(p, pext, src, idx, vext); /* -EUCLEAN if listed twice */
		if (rc < 0)
			return rc;
		p->refs[src]--;
	}
	for (uint64_t i = 0; i < p->n_ext; i++)
		if (p->refs[i])
			return -EUCLEAN; /* stored refcount larger than the references */
	p->total_refs = 0;
	for (unsigned i = 0; i < p->n_vols; i++) {
		struct vvol *v = p->vols[p->order[i]];
		for (uint64_t k = pool_map_next(v, 0); k < v->n_vext; k = pool_map_next(v, k + 1)) {
			p->refs[pool_map_get(v, k) - 1]++;
			p->total_refs++;
		}
	}
	size_t it = 0;
	uint64_t key;
	void *val;
	while (hmap_next(&p->hydr, &it, &key, &val)) {
		const struct hydr_ent *h = val;
		/* A source has no source (one level), and a redirected extent is private. */
		if (pool_hydr(p, h->src) || p->refs[h->pext] != 1)
			return -EUCLEAN;
		p->refs[h->src]++;
	}
	for (uint64_t i = 0; i < n_partial; i++) {
		if (!(r = rd_take(rd, 8 + 8ull * p->bm_words)))
			return rd->err;
		uint64_t pext = vget_le64(r);
		if (pext >= p->n_ext || !p->refs[pext] || pool_validity(p, pext))
			return -EUCLEAN;
		int rc = pool_validity_load(p, pext, r + 8);
		if (rc < 0)
			return rc;
	}
	return pool_acct_rebuild(p); /* the accounting counters, from the maps just loaded */
}

/* Load into a pool whose geometry (n_ext, bm_words, arrays) is set up and empty. */
int pool_ckpt_load(struct vpool *p, struct vblk *dev, uint64_t off, uint64_t len, uint32_t crc)
{
	if (len % VJ_BLOCK || len < CKPT_HDR)
		return -EUCLEAN;
	struct ckpt_rd rd = {.dev = dev, .base = off, .len = len};
	rd.win = pool_blob_alloc(CKPT_WIN);
	if (!rd.win)
		return -ENOMEM;
	uint32_t c = 0;
	int rc = 0;
	for (uint64_t at = 0; at < len && rc == 0; at += CKPT_WIN) {
		uint64_t cnt = len - at < CKPT_WIN ? len - at : CKPT_WIN;
		rc = vblk_pread_sync(dev, rd.win, cnt, off + at);
		if (rc >= 0) {
			c = vcrc32c(c, rd.win, cnt);
			rc = 0;
		}
	}
	if (rc == 0 && c != crc)
		rc = -EUCLEAN;
	if (rc == 0)
		rc = ckpt_parse(p, &rd);
	pool_blob_free(rd.win, CKPT_WIN);
	return rc;
}

/* ---- asynchronous checkpoint */

struct ckpt_state {
	bool live_mode; /* vpool_set_live_checkpoints: the next ones are live */
	bool live;      /* the running one is live: appends go on after its freeze point */
	int phase;      /* VPOOL_CKPT_* of the running one */
	int fail_phase; /* where the last one that failed was (0: none failed) */
	struct ckpt_view view;      /* what the running one serializes (live: the frozen copy) */
	uint64_t freeze_start, freeze_seq, freeze_used; /* live: the journal at the freeze */
	uint64_t freeze_records; /* live: vjournal_records at the freeze */
	uint64_t live_records;   /* records appended while live ones wrote (tests' coverage) */
	bool running;
	uint64_t t0_ns;     /* when the running one started (the counters' checkpoint time) */
	uint64_t t_step;    /* when the running one's current step started (steps) */
	struct vpool_ckpt_steps steps, last; /* the running one's, the last completed one's */
	bool again; /* a synchronous caller wants one that starts after it asked */
	int result;
	unsigned gen_done; /* completed checkpoints */
	struct vj_waiter qw;
	struct ckpt_ser ser;
	uint8_t *win;         /* CKPT_WIN + VJ_BLOCK bytes from the first checkpoint on */
	uint64_t wfill, wlen; /* bytes in win, bytes of win being written */
	uint64_t woff;        /* blob offset of win[0] */
	uint32_t crc;         /* of the blob bytes written so far */
	uint64_t len;
	uint8_t *sbbuf;
	struct vsb newsb;
	struct vio_op op;
};

static struct ckpt_state *ckpt_get(struct vpool *p)
{
	if (!p->ckpt)
		p->ckpt = calloc(1, sizeof(*p->ckpt));
	return p->ckpt;
}

static void ckpt_finish(struct vpool *p, int res)
{
	struct ckpt_state *c = p->ckpt;
	pool_ckpt_view_free(&c->view); /* c->win stays for the next one (ckpt_homes_durable) */
	if (c->live && c->phase >= VPOOL_CKPT_BLOB)
		c->live_records += vjournal_records(p->j) - c->freeze_records;
	if (res < 0) {
		p->failed = true;
		c->fail_phase = c->phase;
	} else {
		p->checkpoints++;
		p->checkpoint_ns += vclock_ns() - c->t0_ns;
		c->steps.total_ns = vclock_ns() - c->t0_ns;
		if (!c->live)
			c->steps.paused_ns = c->steps.total_ns;
		c->steps.live = c->live;
		c->last = c->steps;
	}
	c->result = res;
	c->running = false;
	c->phase = VPOOL_CKPT_IDLE;
	c->gen_done++;
	/* Live: the ring before the freeze point is free once the superblock naming it is
	 * durable (after `running` is cleared: a room waiter woken here may ask for the next). */
	if (c->live && res >= 0)
		vjournal_release_to(p->j, c->freeze_used);
	vjournal_resume(p->j);
	if (c->again) {
		c->again = false;
		pool_ckpt_request(p);
	}
}

static void ckpt_sb_written(void *arg, int res)
{
	struct vpool *p = arg;
	p->ckpt->steps.sb_ns = vclock_ns() - p->ckpt->t_step;
	if (res >= 0) {
		p->sb = p->ckpt->newsb;
		if (p->ckpt->live) {
			pool_redo_retired_frozen(p); /* the ring is released in ckpt_finish */
		} else {
			vjournal_reset_start(p->j);
			pool_redo_retired(p);
		}
	}
	ckpt_finish(p, res < 0 ? res : 0);
}

static void ckpt_blob_written(struct vpool *p)
{
	struct ckpt_state *c = p->ckpt;
	if (pool_ckpt_view_broken(&c->view)) {
		ckpt_finish(p, -ENOMEM); /* a leaf could not be copied aside: the blob is wrong */
		return;
	}
	c->newsb = p->sb;
	c->newsb.ckpt_active = !p->sb.ckpt_active;
	c->newsb.ckpt_seq = p->sb.ckpt_seq + 1;
	c->newsb.ckpt_len = c->len;
	c->newsb.ckpt_crc = c->crc;
	if (c->live) {
		/* Replay starts at the freeze point: the records after it are not in the blob. */
		c->newsb.journal_start = c->freeze_start;
		c->newsb.journal_seq = c->freeze_seq;
	} else {
		vjournal_position(p->j, &c->newsb.journal_start, &c->newsb.journal_seq);
	}
	c->phase = VPOOL_CKPT_SUPERBLOCK;
	c->t_step = vclock_ns();
	vio_op_init(&c->op, ckpt_sb_written, p);
	int rc = vsb_submit(p->dev, &c->newsb, c->sbbuf, &c->op);
	if (rc < 0)
		ckpt_finish(p, rc);
}

static void ckpt_chunk_written(void *arg, int res);

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Serialize the next window and write its whole 4 KiB blocks (DSYNC) to the inactive area. */
static void ckpt_write_next(struct vpool *p)
{
	struct ckpt_state *c = p->ckpt;
	uint64_t t = vclock_ns();
	c->wfill += ser_fill(&c->view, &c->ser, c->win + c->wfill, CKPT_WIN - c->wfill);
	/* The blob's length is a VJ_BLOCK multiple: the last window ends on a block. */
	c->wlen = c->ser.section == SER_DONE ? c->wfill : c->wfill & ~(uint64_t)(VJ_BLOCK - 1);
	if (!c->wlen) {
		ckpt_finish(p, -EUCLEAN); /* no progress: cannot happen */
		return;
	}
	c->crc = vcrc32c(c->crc, c->win, c->wlen);
	c->t_step = vclock_ns();
	c->steps.fill_total_ns += c->t_step - t;
	c->steps.fill_max_ns = max_u64(c->steps.fill_max_ns, c->t_step - t);
	c->steps.windows++;
	vio_op_init(&c->op, ckpt_chunk_written, p);
	struct iovec iov = {.iov_base = c->win, .iov_len = c->wlen};
	int rc = vblk_writev(p->dev, &iov, 1, p->sb.ckpt_off[!p->sb.ckpt_active] + c->woff,
			     VBLK_DSYNC | VBLK_META,
			     &c->op);
	if (rc < 0)
		ckpt_finish(p, rc);
}

static void ckpt_chunk_written(void *arg, int res)
{
	struct vpool *p = arg;
	struct ckpt_state *c = p->ckpt;
	c->steps.window_io_max_ns = max_u64(c->steps.window_io_max_ns, vclock_ns() - c->t_step);
	if (res < 0) {
		ckpt_finish(p, res);
		return;
	}
	memmove(c->win, c->win + c->wlen, c->wfill - c->wlen);
	c->wfill -= c->wlen;
	c->woff += c->wlen;
	if (c->woff == c->len)
		ckpt_blob_written(p);
	else
		ckpt_write_next(p);
}

static void ckpt_homes_durable(void *arg, int res);

/*
 * The freeze point: the journal is quiesced and the home copies of the writes it
 * carries are durable. Paused (the default): the view is the live state, which stays
 * still until the checkpoint ends. Live (docs/snapshots.md section 8, step 3): the
 * state is copied, the journal's position noted (the new superblock's replay start)
 * with the ring bytes used so far (freed when that superblock is durable) and the
 * DATA records' pending set (retired then), and appends resume: everything appended
 * from now on is after the freeze point, in the ring and in no blob.
 */
static int ckpt_freeze(struct vpool *p)
{
	struct ckpt_state *c = p->ckpt;
	c->phase = VPOOL_CKPT_BLOB;
	c->freeze_records = vjournal_records(p->j);
	if (!c->live) {
		pool_ckpt_view_live(p, &c->view);
		return 0;
	}
	int rc = pool_ckpt_view_freeze(p, &c->view);
	if (rc < 0)
		return rc;
	if ((rc = pool_redo_freeze(p)) < 0)
		return rc;
	vjournal_position(p->j, &c->freeze_start, &c->freeze_seq);
	c->freeze_used = vjournal_used(p->j);
	c->steps.paused_ns = vclock_ns() - c->t0_ns;
	vjournal_resume(p->j);
	return 0;
}

static void ckpt_quiesced(void *arg, int res)
{
	struct vpool *p = arg;
	struct ckpt_state *c = p->ckpt;
	c->steps.quiesce_ns = vclock_ns() - c->t0_ns;
	c->t_step = vclock_ns();
	if (res < 0) {
		ckpt_finish(p, res);
		return;
	}
	/* Writes carried in the journal must be durable at home before it is retired. */
	vio_op_init(&c->op, ckpt_homes_durable, p);
	pool_redo_before_ckpt(p, &c->op);
}

static void ckpt_homes_durable(void *arg, int res)
{
	struct vpool *p = arg;
	struct ckpt_state *c = p->ckpt;
	uint64_t t = vclock_ns();
	c->steps.homes_ns = t - c->t_step;
	if (res < 0) {
		ckpt_finish(p, res);
		return;
	}
	int rc = ckpt_freeze(p);
	c->steps.freeze_ns = vclock_ns() - t;
	c->steps.freeze_hmaps_ns = c->view.copy_ns;
	t = vclock_ns();
	if (rc == 0)
		rc = ser_init(&c->view, p->sb.ckpt_size, &c->ser);
	c->steps.ser_init_ns = vclock_ns() - t;
	if (rc < 0) {
		ckpt_finish(p, rc);
		return;
	}
	/* The window is kept from one checkpoint to the next (1 MiB per pool): a fresh one
	 * costs 257 page faults in its first serialization, on the reactor (measured: up
	 * to 50 ms at 1 M extents on this PVM guest, docs/snapshots.md step 3). */
	if (!c->win)
		c->win = pool_blob_alloc(CKPT_WIN + VJ_BLOCK);
	if (!c->win) {
		ckpt_finish(p, -ENOMEM);
		return;
	}
	c->len = c->ser.total;
	c->wfill = c->wlen = c->woff = 0;
	c->crc = 0;
	ckpt_write_next(p);
}

void pool_ckpt_request(void *owner)
{
	struct vpool *p = owner;
	struct ckpt_state *c = ckpt_get(p);
	if (!c || p->readonly || p->failed)
		return;
	if (c->running)
		return;
	if (!c->sbbuf && !(c->sbbuf = vblk_alloc_buf(VSB_SIZE)))
		return;
	c->running = true;
	c->live = c->live_mode;
	c->phase = VPOOL_CKPT_QUIESCE;
	c->t0_ns = vclock_ns();
	memset(&c->steps, 0, sizeof(c->steps));
	c->qw.fn = ckpt_quiesced;
	c->qw.arg = p;
	vjournal_quiesce(p->j, &c->qw);
}

bool pool_ckpt_busy(const struct vpool *p) { return p->ckpt && p->ckpt->running; }

void pool_ckpt_steps(const struct vpool *p, struct vpool_ckpt_steps *last)
{
	memset(last, 0, sizeof(*last));
	if (p->ckpt)
		*last = p->ckpt->last;
}

void pool_ckpt_phase(const struct vpool *p, int *phase, int *fail_phase, uint64_t *live_records)
{
	const struct ckpt_state *c = p->ckpt;
	*phase = c ? c->phase : VPOOL_CKPT_IDLE;
	*fail_phase = c ? c->fail_phase : 0;
	*live_records = c ? c->live_records : 0;
	if (c && c->live && c->phase >= VPOOL_CKPT_BLOB)
		*live_records += vjournal_records(p->j) - c->freeze_records; /* the running one's */
}

int vpool_set_live_checkpoints(struct vpool *p, bool on)
{
	struct ckpt_state *c = ckpt_get(p);
	if (!c)
		return -ENOMEM;
	c->live_mode = on; /* from the next checkpoint on */
	return 0;
}

static bool ckpt_reached(const struct vpool *p, unsigned target)
{
	return (int)(p->ckpt->gen_done - target) >= 0;
}

int pool_ckpt_sync(struct vpool *p)
{
	struct ckpt_state *c = ckpt_get(p);
	if (!c)
		return -ENOMEM;
	if (p->failed)
		return -EIO;
	/* One that starts after this call: the running one may miss recent changes. */
	unsigned target = c->gen_done + (c->running ? 2 : 1);
	if (c->running)
		c->again = true;
	else
		pool_ckpt_request(p);
	while (!ckpt_reached(p, target)) {
		int rc = vreactor_run_once(p->r, -1);
		if (rc < 0)
			return rc;
		if (!c->running && !c->again && !ckpt_reached(p, target))
			return -EIO; /* the request could not start */
	}
	return c->result;
}

void pool_ckpt_free(struct vpool *p)
{
	if (!p->ckpt)
		return;
	pool_blob_free(p->ckpt->win, CKPT_WIN + VJ_BLOCK);
	pool_ckpt_view_free(&p->ckpt->view);
	free(p->ckpt->sbbuf);
	free(p->ckpt);
	p->ckpt = NULL;
}
