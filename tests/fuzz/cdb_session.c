/* The SCSI fuzz targets' session (see cdb_session.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "answer_check.h"
#include "cdb_session.h"
#include "rings.h"
#include "vaaid/buf_cache.h"
#include "scsi_build.h"
#include "vaaid/scsi.h"

_Noreturn void cs_fail(const char *what, const uint8_t *cdb, size_t cdb_len)
{
	fprintf(stderr, "fuzz (SCSI): FINDING: %s; CDB", what);
	for (size_t i = 0; cdb && i < cdb_len; i++)
		fprintf(stderr, " %02x", cdb[i]);
	fprintf(stderr, "\n");
	abort();
}

static void guard_pattern(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131u + 7u + (i >> 12));
}

/* One command, waited for; r's data is the caller's to free (simhost_result_free).
 * -EINVAL / -E2BIG: the simulated kernel did not queue it, as LIO would not (a CDB
 * longer than the bytes given, a transfer past the data area): nothing to check. */
static int run_cmd(struct simhost *h, int lun, const uint8_t *cdb, size_t cdb_len,
		   const uint8_t *out, size_t out_len, size_t in_len, struct simhost_result *r)
{
	uint64_t tag;
	int rc = simhost_submit(h, lun, cdb, cdb_len, out_len ? out : NULL, out_len, in_len, &tag);
	if (rc == -EINVAL || rc == -E2BIG)
		return rc;
	if (rc < 0)
		cs_fail("the ring refused a command", cdb, cdb_len);
	if (simhost_reap(h, r, 1, 60000) != 1 || r->tag != tag)
		cs_fail("no answer within 60 s", cdb, cdb_len);
	return 0;
}

/* Read bytes at byte offset off of a LUN into dst. */
static int read_lun(struct simhost *h, int lun, uint32_t bs, uint64_t off, uint64_t bytes,
		    uint8_t *dst)
{
	uint8_t cdb[16];
	struct simhost_result r;
	sb_rw16_cdb(cdb, 0x88, off / bs, (uint32_t)(bytes / bs));
	for (int tries = 0; tries < 4; tries++) { /* a pending unit attention first */
		if (run_cmd(h, lun, cdb, 16, NULL, 0, bytes, &r) < 0)
			return -1;
		int st = r.r.status;
		if (st == SAM_STAT_GOOD && r.r.data_in_len >= bytes)
			memcpy(dst, r.r.data_in, bytes);
		simhost_result_release(h, &r);
		if (st == SAM_STAT_GOOD)
			return 0;
	}
	return -1;
}

/* Put the LUNs' NAAs where an EXTENDED COPY list names them by placeholder. */
static void xcopy_naas(uint8_t *out, size_t out_len, uint8_t naa[3][16])
{
	if (out_len < SB_XCOPY_HDR)
		return;
	size_t cl = scsi_get_be16(out + 2);
	for (size_t at = SB_XCOPY_HDR; at + SB_XCOPY_CSCD_LEN <= out_len && at < SB_XCOPY_HDR + cl;
	     at += SB_XCOPY_CSCD_LEN) {
		uint8_t *d = out + at;
		if (d[0] != 0xE4)
			continue;
		for (int l = 0; l < 3; l++) {
			bool all = true;
			for (int i = 0; i < 16; i++)
				all = all && d[8 + i] == CS_NAA_LUN(l);
			if (all)
				memcpy(d + 8, naa[l], 16);
		}
	}
}

/* The first input's scratch: made once; later inputs reset what they changed. */
static void scratch_init(struct cs_scratch *x)
{
	if (vblk_cs_images_new(CS_POOL_BYTES, &x->images) < 0)
		abort();
	x->guard = malloc(CS_GUARD_BYTES);
	x->back = malloc(CS_READBACK);
	if (!x->guard || !x->back || cm_init(&x->m, CS_VOL_BYTES / CM_BS) < 0 ||
	    simhost_rings_new(3, &x->rings) < 0 || vbuf_cache_new(8, &x->bufs) < 0)
		abort();
	guard_pattern(x->guard, CS_GUARD_BYTES);
	x->ready = true;
}

void cs_open(struct cdb_session *s, struct cs_scratch *x)
{
	char err[256];
	struct vpool_params prm = {.extent_size = 64u << 10, .journal_size = 576u << 10};
	memset(s, 0, sizeof(*s));
	s->verbose = getenv("VAAID_FUZZ_VERBOSE") != NULL;
	if (!x->ready)
		scratch_init(x);
	else
		cm_reset(&x->m); /* all zeros, KNOWN: as cm_init */
	s->x = x;
	s->m = &x->m;
	s->guard = x->guard;
	s->back = x->back;
	/* In memory only: nothing to remove, nothing left behind by a crash; the
	 * crashsim images are the scratch's (zeros again after every pool). */
	if (simhost_create_pool_on("fuzz-cdb", &prm, x->images, x->bufs, 1, &s->h, err, sizeof(err))) {
		fprintf(stderr, "fuzz (SCSI): pool: %s\n", err);
		abort();
	}
	struct simhost *h = s->h;
	simhost_use_rings(h, x->rings); /* the LUNs' rings: kept across inputs, reset */
	if (simhost_volume_create(h, "a", CS_VOL_BYTES, 512) ||
	    simhost_volume_create(h, "b", CS_VOL1_BYTES, 4096) ||
	    simhost_volume_create(h, "guard", CS_GUARD_BYTES, 512) || simhost_attach(h, "a", 0) ||
	    simhost_attach(h, "b", 1) || simhost_attach(h, "guard", 2) ||
	    simhost_set_visibility(h, 2, 1) || simhost_lun_naa(h, 0, s->naa[0]) ||
	    simhost_lun_naa(h, 1, s->naa[1]) || simhost_lun_naa(h, 2, s->naa[2]))
		cs_fail("setting up the LUNs failed", NULL, 0);
	if (simhost_set_threshold(h, CS_THRESHOLD_PCT))
		cs_fail("setting the soft threshold failed", NULL, 0);
	/* Setting the threshold posted MODE PARAMETERS CHANGED (SBC-4 6.5.7) to every LUN:
	 * taken here with TEST UNIT READY, so that an input's first command runs */
	uint8_t cdb[16] = {0};
	struct simhost_result r;
	for (int lun = 0; lun < 3; lun++) {
		int st = -1;
		for (int tries = 0; tries < 4 && st != SAM_STAT_GOOD; tries++) {
			if (run_cmd(h, lun, cdb, 6, NULL, 0, 0, &r) < 0)
				cs_fail("TEST UNIT READY was not queued", cdb, 6);
			st = r.r.status;
			simhost_result_release(s->h, &r);
		}
		if (st != SAM_STAT_GOOD)
			cs_fail("a LUN is not ready after its unit attentions", cdb, 6);
	}
	sb_rw16_cdb(cdb, 0x8A, 0, CS_GUARD_BYTES / 512);
	if (run_cmd(h, 2, cdb, 16, s->guard, CS_GUARD_BYTES, 0, &r) < 0 ||
	    r.r.status != SAM_STAT_GOOD)
		cs_fail("the guard write failed", cdb, 16);
	simhost_result_release(s->h, &r);
}

/* One answer against the checks and, unless the command raced another over the
 * same blocks (conflict), the model. */
static void check_one(struct cdb_session *s, const struct cs_pending *c,
		      const struct simhost_result *r, bool conflict)
{
	char why[160];
	const uint8_t *cdb = c->cdb;
	if (s->verbose)
		fprintf(stderr, "fuzz (SCSI): LUN %d op %02x%s: status %02x sense %x/%02x/%02x, "
			"%zu bytes in\n", c->lun, cdb[0], conflict ? " (raced)" : "", r->r.status,
			r->r.sense[2] & 0x0F, r->r.sense[12], r->r.sense[13], r->r.data_in_len);
	if (answer_check(&r->r, c->in_len, why, sizeof(why)) < 0)
		cs_fail(why, cdb, c->cdb_len);
	uint64_t lba, nb, bad;
	if (c->lun == 0 && !conflict && r->r.status == SAM_STAT_GOOD && cm_rw_range(cdb, &lba, &nb) &&
	    (cdb[0] == 0x08 || cdb[0] == 0x28 || cdb[0] == 0xA8 || cdb[0] == 0x88) &&
	    r->r.data_in && r->r.data_in_len == nb * CM_BS &&
	    cm_check(s->m, lba, nb, r->r.data_in, &bad) < 0) {
		snprintf(why, sizeof(why), "a GOOD READ returned block %llu other than written",
			 (unsigned long long)bad);
		cs_fail(why, cdb, c->cdb_len);
	}
	const char *caw = c->lun == 0 && !conflict ? cm_caw_check(s->m, cdb, c->out, c->out_len, &r->r)
						    : NULL;
	if (caw)
		cs_fail(caw, cdb, c->cdb_len);
	if (!conflict && cdb[0] == 0x83 && r->r.status == SAM_STAT_GOOD) /* received by any LUN */
		cm_xcopy(s->m, cdb, c->out, c->out_len, s->naa[0], &s->naa[1], 2);
	else if (!conflict && (c->lun == 0 || cdb[0] == 0x83)) /* a copy on LUN 1 may write LUN 0 */
		cm_apply(s->m, cdb, c->out, c->out_len, &r->r);
	s->last_status = r->r.status;
	free(s->last_in);
	s->last_in = NULL;
	s->last_in_len = 0;
	if (r->r.data_in && r->r.data_in_len && (s->last_in = malloc(r->r.data_in_len)) != NULL) {
		memcpy(s->last_in, r->r.data_in, r->r.data_in_len);
		s->last_in_len = r->r.data_in_len;
	}
}

static bool overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return a < b + bn && b < a + an;
}

void cs_flush(struct cdb_session *s)
{
	unsigned n = s->n_batch;
	if (!n)
		return;
	struct simhost_result res[CS_BATCH_MAX];
	bool got[CS_BATCH_MAX] = {false};
	for (unsigned done = 0; done < n;) {
		struct simhost_result r;
		if (simhost_reap(s->h, &r, 1, 60000) != 1)
			cs_fail("no answer within 60 s", s->batch[0].cdb, s->batch[0].cdb_len);
		unsigned i = 0;
		while (i < n && (got[i] || s->batch[i].tag != r.tag))
			i++;
		if (i == n)
			cs_fail("an answer to no command in flight", NULL, 0);
		res[i] = r;
		got[i] = true;
		done++;
	}
	/* Commands in flight together may run in any order (SAM-5 8.6, SIMPLE task
	 * attribute): where two touch the same blocks of LUN 0 and one may change them,
	 * neither is checked against the model, and the blocks become unknown. */
	struct { bool has, mod; uint64_t lba, n; } fp[CS_BATCH_MAX];
	bool conflict[CS_BATCH_MAX] = {false};
	for (unsigned i = 0; i < n; i++)
		fp[i].has = cm_footprint(s->m, s->batch[i].lun, s->batch[i].cdb, &fp[i].mod,
					 &fp[i].lba, &fp[i].n);
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			if (fp[i].has && fp[j].has && (fp[i].mod || fp[j].mod) &&
			    overlap(fp[i].lba, fp[i].n, fp[j].lba, fp[j].n))
				conflict[i] = conflict[j] = true;
	for (unsigned i = 0; i < n; i++)
		check_one(s, &s->batch[i], &res[i], conflict[i]);
	for (unsigned i = 0; i < n; i++) {
		if (conflict[i] && fp[i].mod)
			cm_set_unknown(s->m, fp[i].lba, fp[i].n);
		simhost_result_release(s->h, &res[i]);
	}
	s->n_batch = 0;
}

/* Submit one command. borrow: out stays the caller's (cs_cmd: it lives until the
 * command is checked; the NAAs are put into it); else it is copied into the
 * scratch's buffer for its place in the batch (cs_queue: the caller may reuse its
 * buffer while the command is in flight). */
static int queue(struct cdb_session *s, int lun, const uint8_t *cdb, size_t cdb_len,
		 uint8_t *out, size_t out_len, size_t in_len, bool borrow)
{
	if (s->n_batch == CS_BATCH_MAX)
		cs_flush(s);
	struct cs_pending *c = &s->batch[s->n_batch];
	memset(c, 0, sizeof(*c));
	c->lun = lun;
	c->cdb_len = cdb_len > sizeof(c->cdb) ? sizeof(c->cdb) : cdb_len;
	memcpy(c->cdb, cdb, c->cdb_len);
	c->in_len = in_len;
	if (out_len) {
		struct cs_scratch *x = s->x;
		unsigned k = s->n_batch; /* this command's slot while in flight */
		if (!borrow && x->slot_cap[k] < out_len) {
			free(x->slot[k]);
			if (!(x->slot[k] = malloc(out_len)))
				abort();
			x->slot_cap[k] = out_len;
		}
		c->out = borrow ? out : x->slot[k];
		if (!borrow)
			memcpy(c->out, out, out_len);
		c->out_len = out_len;
		if (cdb[0] == 0x83)
			xcopy_naas(c->out, out_len, s->naa);
	}
	int rc = simhost_submit(s->h, lun, c->cdb, c->cdb_len, c->out, out_len, in_len, &c->tag);
	if (rc == -EAGAIN && s->n_batch) { /* the ring or its data area is full: drain first */
		cs_flush(s);
		return queue(s, lun, cdb, cdb_len, out, out_len, in_len, borrow);
	}
	if (rc == -EINVAL || rc == -E2BIG) { /* not queued, as LIO would not: nothing to check */
		return -1;
	}
	if (rc < 0)
		cs_fail("the ring refused a command", cdb, cdb_len);
	s->n_batch++;
	return 0;
}

int cs_queue(struct cdb_session *s, int lun, const uint8_t *cdb, size_t cdb_len,
	     const uint8_t *out, size_t out_len, size_t in_len)
{
	return queue(s, lun, cdb, cdb_len, (uint8_t *)out, out_len, in_len, false);
}

int cs_cmd(struct cdb_session *s, int lun, const uint8_t *cdb, size_t cdb_len, uint8_t *out,
	   size_t out_len, size_t in_len)
{
	if (queue(s, lun, cdb, cdb_len, out, out_len, in_len, true) < 0)
		return -1;
	cs_flush(s);
	return s->last_status;
}

void cs_close(struct cdb_session *s)
{
	uint64_t bad;
	cs_flush(s);
	if (simhost_verify(s->h, stderr) != 0)
		cs_fail("the pool's invariants fail after the input", NULL, 0);
	/* Read back in CS_READBACK pieces: buffers that small come from ASan's size
	 * classes and are reused, where 1 MiB ones were fresh mappings per input. */
	for (uint32_t off = 0; off < CS_GUARD_BYTES; off += CS_READBACK)
		if (read_lun(s->h, 2, 512, off, CS_READBACK, s->back) < 0 ||
		    memcmp(s->back, s->guard + off, CS_READBACK))
			cs_fail("the guard LUN changed", NULL, 0);
	for (uint32_t off = 0; off < CS_VOL_BYTES; off += CS_READBACK) {
		if (read_lun(s->h, 0, 512, off, CS_READBACK, s->back) < 0)
			cs_fail("LUN 0 cannot be read back", NULL, 0);
		if (cm_check(s->m, off / CM_BS, CS_READBACK / CM_BS, s->back, &bad) < 0) {
			char why[96];
			snprintf(why, sizeof(why), "LUN 0 block %llu holds other data than the model",
				 (unsigned long long)bad);
			cs_fail(why, NULL, 0);
		}
	}
	if (simhost_close(s->h) != 0)
		cs_fail("closing the pool failed", NULL, 0);
	free(s->last_in);
}
