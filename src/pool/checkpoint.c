/*
 * Checkpoints: the whole pool state in one blob, so the journal can be reused.
 *
 * Blob (little endian, one 4 KiB-padded run in a checkpoint area):
 *   header 64 B: magic, n_ext, bm_words, n_vols, n_refruns, n_runs, n_partial
 *   volumes     136 B each: idx, block size, size, naa, serial, name
 *   refcounts   run-length encoded {count u32, value u32}
 *   map runs    {idx u16, pad u16, count u32, vext u64, pext u64}: count
 *               consecutive virtual extents mapped to consecutive physical ones
 *   partial     {pext u64, bitmap bm_words x u64}
 * Refcounts are stored although they could be derived: loading checks them
 * against the references the map runs make, so a damaged or inconsistent
 * checkpoint is refused instead of silently "repaired" (vaai-check relies on
 * this too).
 *
 * The asynchronous checkpoint (pool_ckpt_request) quiesces the journal
 * (appends wait, everything appended becomes durable), serializes memory,
 * writes the blob with DSYNC to the area the superblock does not name, then
 * writes a superblock naming it and the journal position, and finally frees
 * the journal ring and resumes appends. Data reads and in-place overwrites
 * continue throughout; only metadata changes wait.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"
#include "vaaid/util.h"

#define CKPT_MAGIC 0x54504B4344494141ull /* "AAIDCKPT" */
#define CKPT_HDR 64u
#define CKPT_VOL 136u
#define CKPT_REFRUN 8u
#define CKPT_RUN 24u

static void put16(uint8_t *p, uint16_t v) { v = htole16(v); memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static uint16_t get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return le16toh(v); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }

uint64_t pool_ckpt_size_for(uint64_t n_ext, uint32_t bm_words)
{
	uint64_t max_refs = n_ext * POOL_MAX_REFS_PER_EXTENT_AVG;
	uint64_t sz = CKPT_HDR + (uint64_t)VPOOL_MAX_VOLUMES * CKPT_VOL + n_ext * CKPT_REFRUN +
		      max_refs * CKPT_RUN + n_ext * (8 + 8ull * bm_words);
	return vround_up(sz, VJ_BLOCK);
}

/* Number of runs in a volume's map. */
static uint64_t count_runs(const struct vvol *v)
{
	uint64_t n = 0;
	for (uint64_t e = 0; e < v->n_vext; e++) {
		if (!v->map[e])
			continue;
		if (e == 0 || !v->map[e - 1] || v->map[e - 1] + 1 != v->map[e])
			n++;
	}
	return n;
}

int pool_ckpt_serialize(const struct vpool *p, uint8_t **out, uint64_t *len)
{
	uint64_t n_refruns = 0, n_runs = 0;
	for (uint64_t i = 0; i < p->n_ext; i++)
		if (i == 0 || p->refs[i] != p->refs[i - 1])
			n_refruns++;
	for (unsigned i = 0; i < p->n_vols; i++)
		n_runs += count_runs(p->vols[p->order[i]]);
	uint64_t n_partial = p->validity.n;
	uint64_t raw = CKPT_HDR + (uint64_t)p->n_vols * CKPT_VOL + n_refruns * CKPT_REFRUN +
		       n_runs * CKPT_RUN + n_partial * (8 + 8ull * p->bm_words);
	uint64_t sz = vround_up(raw, VJ_BLOCK);
	if (sz > p->sb.ckpt_size)
		return -ENOSPC;
	uint8_t *b = vblk_alloc_buf(sz);
	if (!b)
		return -ENOMEM;
	uint8_t *w = b;
	put64(w, CKPT_MAGIC);
	put64(w + 8, p->n_ext);
	put32(w + 16, p->bm_words);
	put32(w + 20, p->n_vols);
	put64(w + 24, n_refruns);
	put64(w + 32, n_runs);
	put64(w + 40, n_partial);
	w += CKPT_HDR;
	for (unsigned i = 0; i < p->n_vols; i++, w += CKPT_VOL) {
		const struct vvol *v = p->vols[p->order[i]];
		put16(w, v->idx);
		put32(w + 4, v->block_size);
		put64(w + 8, v->size);
		memcpy(w + 16, v->naa, 16);
		memcpy(w + 32, v->serial, 33);
		w[65] = (uint8_t)strlen(v->name);
		memcpy(w + 66, v->name, strlen(v->name));
	}
	for (uint64_t i = 0; i < p->n_ext;) {
		uint64_t j = i;
		while (j < p->n_ext && p->refs[j] == p->refs[i] && j - i < UINT32_MAX)
			j++;
		put32(w, (uint32_t)(j - i));
		put32(w + 4, p->refs[i]);
		w += CKPT_REFRUN;
		i = j;
	}
	for (unsigned i = 0; i < p->n_vols; i++) {
		const struct vvol *v = p->vols[p->order[i]];
		for (uint64_t e = 0; e < v->n_vext;) {
			if (!v->map[e]) {
				e++;
				continue;
			}
			uint64_t s = e;
			while (e + 1 < v->n_vext && v->map[e + 1] == v->map[e] + 1 && e + 1 - s < UINT32_MAX)
				e++;
			put16(w, v->idx);
			put16(w + 2, 0);
			put32(w + 4, (uint32_t)(e + 1 - s));
			put64(w + 8, s);
			put64(w + 16, v->map[s] - 1);
			w += CKPT_RUN;
			e++;
		}
	}
	size_t it = 0;
	uint64_t key;
	void *val;
	while (hmap_next(&p->validity, &it, &key, &val)) {
		put64(w, key);
		const uint64_t *bm = val;
		for (uint32_t k = 0; k < p->bm_words; k++)
			put64(w + 8 + 8 * k, bm[k]);
		w += 8 + 8ull * p->bm_words;
	}
	*out = b;
	*len = sz;
	return 0;
}

/* Load into a pool whose geometry (n_ext, bm_words, arrays) is set up and empty. */
int pool_ckpt_load(struct vpool *p, const uint8_t *b, uint64_t len)
{
	if (len < CKPT_HDR || get64(b) != CKPT_MAGIC || get64(b + 8) != p->n_ext ||
	    get32(b + 16) != p->bm_words)
		return -EUCLEAN;
	uint64_t n_vols = get32(b + 20), n_refruns = get64(b + 24), n_runs = get64(b + 32),
		 n_partial = get64(b + 40);
	if (n_vols > VPOOL_MAX_VOLUMES || n_refruns > p->n_ext || n_runs > len || n_partial > p->n_ext)
		return -EUCLEAN;
	uint64_t need = CKPT_HDR + n_vols * CKPT_VOL + n_refruns * CKPT_REFRUN + n_runs * CKPT_RUN +
			n_partial * (8 + 8ull * p->bm_words);
	if (need > len)
		return -EUCLEAN;
	const uint8_t *r = b + CKPT_HDR;
	for (uint64_t i = 0; i < n_vols; i++, r += CKPT_VOL) {
		char serial[34], name[VPOOL_NAME_MAX + 1];
		memcpy(serial, r + 32, 33);
		serial[33] = 0;
		uint8_t nl = r[65];
		if (nl > VPOOL_NAME_MAX)
			return -EUCLEAN;
		memcpy(name, r + 66, nl);
		name[nl] = 0;
		int rc = pool_apply_vol_create(p, get16(r), name, get64(r + 8), get32(r + 4), r + 16,
					       serial);
		if (rc < 0)
			return rc;
	}
	uint64_t e = 0;
	for (uint64_t i = 0; i < n_refruns; i++, r += CKPT_REFRUN) {
		uint64_t cnt = get32(r);
		uint32_t val = get32(r + 4);
		if (!cnt || cnt > p->n_ext - e)
			return -EUCLEAN;
		for (uint64_t k = 0; k < cnt; k++)
			p->refs[e++] = val;
	}
	if (e != p->n_ext)
		return -EUCLEAN;
	/* Map runs: each reference is checked off against the stored refcounts. */
	for (uint64_t i = 0; i < n_runs; i++, r += CKPT_RUN) {
		uint16_t idx = get16(r);
		uint64_t cnt = get32(r + 4), vext = get64(r + 8), pext = get64(r + 16);
		struct vvol *v = idx < VPOOL_MAX_VOLUMES ? p->vols[idx] : NULL;
		if (!v || !cnt || vext >= v->n_vext || cnt > v->n_vext - vext || pext >= p->n_ext ||
		    cnt > p->n_ext - pext)
			return -EUCLEAN;
		for (uint64_t k = 0; k < cnt; k++) {
			if (v->map[vext + k] || !p->refs[pext + k])
				return -EUCLEAN;
			p->refs[pext + k]--;
			v->map[vext + k] = pext + k + 1;
			v->mapped++;
		}
	}
	for (uint64_t i = 0; i < p->n_ext; i++)
		if (p->refs[i])
			return -EUCLEAN; /* stored refcount larger than the references */
	p->total_refs = 0;
	for (unsigned i = 0; i < p->n_vols; i++) {
		struct vvol *v = p->vols[p->order[i]];
		for (uint64_t k = 0; k < v->n_vext; k++)
			if (v->map[k]) {
				p->refs[v->map[k] - 1]++;
				p->total_refs++;
			}
	}
	for (uint64_t i = 0; i < n_partial; i++, r += 8 + 8ull * p->bm_words) {
		uint64_t pext = get64(r);
		if (pext >= p->n_ext || !p->refs[pext] || pool_validity(p, pext))
			return -EUCLEAN;
		int rc = pool_validity_set_empty(p, pext);
		if (rc < 0)
			return rc;
		uint64_t *bm = pool_validity(p, pext);
		for (uint32_t k = 0; k < p->bm_words; k++)
			bm[k] = get64(r + 8 + 8 * k);
	}
	return 0;
}

/* ---- asynchronous checkpoint */

struct ckpt_state {
	bool running;
	bool again; /* a synchronous caller wants one that starts after it asked */
	int result;
	unsigned gen_done; /* completed checkpoints */
	struct vj_waiter qw;
	uint8_t *blob;
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
	free(c->blob);
	c->blob = NULL;
	if (res < 0) {
		p->failed = true;
	} else {
		p->checkpoints++;
	}
	c->result = res;
	c->running = false;
	c->gen_done++;
	vjournal_resume(p->j);
	if (c->again) {
		c->again = false;
		pool_ckpt_request(p);
	}
}

static void ckpt_sb_written(void *arg, int res)
{
	struct vpool *p = arg;
	if (res >= 0) {
		p->sb = p->ckpt->newsb;
		vjournal_reset_start(p->j);
	}
	ckpt_finish(p, res < 0 ? res : 0);
}

static void ckpt_blob_written(void *arg, int res)
{
	struct vpool *p = arg;
	struct ckpt_state *c = p->ckpt;
	if (res < 0) {
		ckpt_finish(p, res);
		return;
	}
	c->newsb = p->sb;
	c->newsb.ckpt_active = !p->sb.ckpt_active;
	c->newsb.ckpt_seq = p->sb.ckpt_seq + 1;
	c->newsb.ckpt_len = c->len;
	c->newsb.ckpt_crc = vcrc32c(0, c->blob, c->len);
	vjournal_position(p->j, &c->newsb.journal_start, &c->newsb.journal_seq);
	vio_op_init(&c->op, ckpt_sb_written, p);
	int rc = vsb_submit(p->dev, &c->newsb, c->sbbuf, &c->op);
	if (rc < 0)
		ckpt_finish(p, rc);
}

static void ckpt_quiesced(void *arg, int res)
{
	struct vpool *p = arg;
	struct ckpt_state *c = p->ckpt;
	if (res < 0) {
		ckpt_finish(p, res);
		return;
	}
	int rc = pool_ckpt_serialize(p, &c->blob, &c->len);
	if (rc < 0) {
		ckpt_finish(p, rc);
		return;
	}
	uint64_t area = p->sb.ckpt_off[!p->sb.ckpt_active];
	vio_op_init(&c->op, ckpt_blob_written, p);
	struct iovec iov = {.iov_base = c->blob, .iov_len = c->len};
	rc = vblk_writev(p->dev, &iov, 1, area, VBLK_DSYNC, &c->op);
	if (rc < 0)
		ckpt_finish(p, rc);
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
	c->qw.fn = ckpt_quiesced;
	c->qw.arg = p;
	vjournal_quiesce(p->j, &c->qw);
}

bool pool_ckpt_busy(const struct vpool *p) { return p->ckpt && p->ckpt->running; }

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
	free(p->ckpt->blob);
	free(p->ckpt->sbbuf);
	free(p->ckpt);
	p->ckpt = NULL;
}
