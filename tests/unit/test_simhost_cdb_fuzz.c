/*
 * Structured fuzzing of CDBs and parameter lists through the real ring and
 * engine (simhost): bad input of any kind must get an answer, never a crash,
 * and never damage data it may not touch or the pool's own metadata.
 *
 * How this test works: one pool holds three volumes. LUN 0 (512-byte blocks)
 * and LUN 1 (4096-byte blocks) are co-visible (group 0) and take the fuzzed
 * commands; LUN 2 (the guard, group 1) is filled with a known pattern first and
 * never receives a fuzzed command. Each command starts from a well-formed one of
 * a randomly chosen kind (every opcode vaaid serves, plus unknown ones): READ /
 * WRITE / VERIFY / WRITE AND VERIFY in every size, WRITE SAME 10/16, UNMAP,
 * COMPARE AND WRITE, EXTENDED COPY naming the three LUNs' NAAs (the guard's
 * included: a copy to or from it must be refused), RECEIVE COPY RESULTS, GET LBA
 * STATUS, INQUIRY, MODE SENSE / SELECT, LOG SENSE, REPORT SUPPORTED OPERATION
 * CODES and the rest; LBAs and lengths are drawn around the volume's edges and
 * the advertised limits. Then it is mutated: CDB bytes flipped, parameter list
 * bytes flipped, the data-out length cut or grown, the data-in buffer made
 * smaller or larger than the CDB asks. Up to 16 commands are in flight at once.
 *
 * Checked for every answer: status GOOD, CHECK CONDITION or TASK SET FULL;
 * CHECK CONDITION carries fixed-format sense (70h, ADDITIONAL SENSE LENGTH
 * >= 0Ah) with a sense key a healthy pool may give (never MEDIUM or HARDWARE
 * ERROR: the backing file never fails here); GOOD returns at most the data-in
 * buffer. At the end: the pool's invariants (simhost_verify: refcounts,
 * validity, space), the guard volume still holds its pattern, every LBA that
 * GET LBA STATUS reports deallocated reads zeros, and after a reopen the
 * volumes hold exactly what they held before it and verify again.
 *
 * Run twice: with partial-granule writes as detected for the pool file, and
 * with them forced to whole-granule read-modify-writes (datapath.c).
 * Seeded and reproducible: the seed is derived from the commit under test
 * (tests/crash/run-suite passes --commit "$(git rev-parse HEAD)" at test time, as
 * for the crash suite: each commit runs other commands), fixed (1) without one;
 * VAAID_FUZZ_SEED and VAAID_FUZZ_OPS (default 3000) override; the seed is
 * printed, and VAAID_FUZZ_SEED=S replays a red run.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "answer_check.h"
#include "simhost_test_env.h"
#include "vaaid/rng.h"
#include "vaaid/scsi.h"

#define VOL_BYTES (4u << 20)
#define GUARD_BYTES (1u << 20)
#define MAX_INFLIGHT 16
#define MAX_OUT (1u << 20) /* the largest data-out built */
#define MAX_IN (1u << 20)  /* the largest data-in buffer */

struct fuzz {
	struct simhost *h;
	uint64_t rng;
	uint8_t naa[3][16];
	uint32_t bs[2];
	uint64_t nblk[2];
	uint8_t *out; /* the data-out being built */
	unsigned kinds_good[64], kinds_cc[64];
};

static uint64_t rnd(struct fuzz *f) { return vrng_next(&f->rng); }

static uint64_t below(struct fuzz *f, uint64_t n)
{
	return n ? rnd(f) % n : 0;
}

static bool chance(struct fuzz *f, unsigned pct)
{
	return below(f, 100) < pct;
}

/* An LBA around the interesting places of a volume of n blocks. */
static uint64_t pick_lba(struct fuzz *f, uint64_t n)
{
	switch (below(f, 8)) {
	case 0: return 0;
	case 1: return n - 1 - below(f, 8);
	case 2: return n + below(f, 4);
	case 3: return chance(f, 50) ? UINT64_MAX - below(f, 4) : 0xFFFFFFFFull;
	case 4: return (below(f, n / 2048 + 1) * 2048) & ~7ull; /* extent starts (1 MiB of 512) */
	default: return below(f, n);
	}
}

/* A block count: mostly small, sometimes at or past the limits. */
static uint32_t pick_count(struct fuzz *f)
{
	switch (below(f, 8)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return (uint32_t)below(f, 0x10000);
	case 3: return 0xFFFFFFFFu - (uint32_t)below(f, 2);
	case 4: return 2048u * (1 + (uint32_t)below(f, 4));
	default: return 1 + (uint32_t)below(f, 64);
	}
}

static void fill_random(struct fuzz *f, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd(f);
}

/* One built command. */
struct cmd {
	int lun;
	int kind;
	uint8_t cdb[16];
	size_t cdb_len;
	size_t out_len;
	size_t in_len;
};

static size_t cdb_len_of(uint8_t op)
{
	switch (op >> 5) {
	case 0: return 6;
	case 1: case 2: return 10;
	case 4: return 16;
	case 5: return 12;
	default: return 16;
	}
}

/* LOGICAL BLOCK ADDRESS and TRANSFER LENGTH where the CDB's size puts them (SBC-4
 * READ/WRITE(6), (10), (12), (16); VERIFY and WRITE AND VERIFY likewise), truncated. */
static void put_lba_count(uint8_t *cdb, uint64_t lba, uint32_t cnt)
{
	switch (cdb_len_of(cdb[0])) {
	case 6:
		cdb[1] = (uint8_t)((lba >> 16) & 0x1F);
		cdb[2] = (uint8_t)(lba >> 8);
		cdb[3] = (uint8_t)lba;
		cdb[4] = (uint8_t)cnt;
		break;
	case 10:
		scsi_put_be32(cdb + 2, (uint32_t)lba);
		scsi_put_be16(cdb + 7, (uint16_t)cnt);
		break;
	case 12:
		scsi_put_be32(cdb + 2, (uint32_t)lba);
		scsi_put_be32(cdb + 6, cnt);
		break;
	default:
		scsi_put_be64(cdb + 2, lba);
		scsi_put_be32(cdb + 10, cnt);
	}
}

/* Data-out for n blocks of block size bs, capped at MAX_OUT; random or zeros. */
static size_t data_blocks(struct fuzz *f, uint64_t n, uint32_t bs, bool zeros)
{
	uint64_t len = n * bs;
	if (len > MAX_OUT)
		len = MAX_OUT;
	if (zeros)
		memset(f->out, 0, len);
	else
		fill_random(f, f->out, len);
	return (size_t)len;
}

/* EXTENDED COPY(LID1) parameter list: CSCDs naming the LUNs, block-to-block segments. */
static size_t build_xcopy(struct fuzz *f, const struct cmd *c)
{
	uint8_t *b = f->out;
	unsigned nc = 1 + (unsigned)below(f, 3), ns = 1 + (unsigned)below(f, 4);
	/* Half of them well-formed and reachable (the fuzzed LUNs, in range), so that
	 * the mutations also land in copies that run. */
	bool clean = chance(f, 50);
	memset(b, 0, 16 + nc * 32 + ns * 28);
	b[0] = clean ? 0 : (uint8_t)rnd(f);
	b[1] = (uint8_t)((clean ? 3 : below(f, 4)) << 3); /* clean: LIST ID USAGE 11b, as ESXi */
	scsi_put_be16(b + 2, (uint16_t)(nc * 32));
	scsi_put_be32(b + 8, ns * 28);
	for (unsigned i = 0; i < nc; i++) {
		uint8_t *d = b + 16 + i * 32;
		d[0] = 0xE4;
		d[4] = 0x01;
		d[5] = 0x03;
		d[7] = 16;
		unsigned who = (unsigned)below(f, clean ? 2 : 4); /* LUN 0, 1, the guard, or nobody */
		if (who < 3)
			memcpy(d + 8, f->naa[who], 16);
		else
			fill_random(f, d + 8, 16);
		uint32_t bl = who < 2 ? f->bs[who] : 512;
		d[29] = (uint8_t)(bl >> 16);
		d[30] = (uint8_t)(bl >> 8);
		d[31] = (uint8_t)bl;
	}
	for (unsigned i = 0; i < ns; i++) {
		uint8_t *d = b + 16 + nc * 32 + i * 28;
		d[0] = 0x02;
		d[1] = (uint8_t)below(f, 4); /* DC, CAT */
		scsi_put_be16(d + 2, 24);
		uint16_t src = (uint16_t)below(f, clean ? nc : nc + 1);
		uint16_t dst = (uint16_t)below(f, clean ? nc : nc + 1);
		scsi_put_be16(d + 4, src);
		scsi_put_be16(d + 6, dst);
		if (clean) {
			/* in range of the smaller of the two volumes (both are 4 MiB) */
			uint32_t bl = d[1] & 0x02 ? 4096 : 512, nb = 1 + (uint32_t)below(f, 512);
			uint64_t lim = VOL_BYTES / 4096 - nb / 8 - 1;
			scsi_put_be16(d + 10, (uint16_t)(bl == 4096 ? nb / 8 + 1 : nb));
			scsi_put_be64(d + 12, below(f, lim));
			scsi_put_be64(d + 20, below(f, lim));
		} else {
			scsi_put_be16(d + 10, (uint16_t)pick_count(f));
			scsi_put_be64(d + 12, pick_lba(f, f->nblk[c->lun]));
			scsi_put_be64(d + 20, pick_lba(f, f->nblk[c->lun]));
		}
	}
	return 16 + nc * 32 + ns * 28;
}

/* UNMAP parameter list with a few block descriptors. */
static size_t build_unmap(struct fuzz *f, const struct cmd *c)
{
	uint8_t *b = f->out;
	unsigned n = (unsigned)below(f, 6);
	memset(b, 0, 8 + n * 16);
	scsi_put_be16(b, (uint16_t)(6 + n * 16));
	scsi_put_be16(b + 2, (uint16_t)(n * 16));
	for (unsigned i = 0; i < n; i++) {
		scsi_put_be64(b + 8 + i * 16, pick_lba(f, f->nblk[c->lun]));
		scsi_put_be32(b + 16 + i * 16, pick_count(f));
	}
	return 8 + n * 16;
}

/* MODE SELECT parameter list: header + the caching (08h) or LBP (1Ch) page, or junk. */
static size_t build_mode_select(struct fuzz *f, bool ten)
{
	uint8_t *b = f->out;
	size_t hdr = ten ? 8 : 4;
	memset(b, 0, 64);
	uint8_t *pg = b + hdr;
	if (chance(f, 50)) {
		pg[0] = 0x08;
		pg[1] = 0x12;
		pg[2] = (uint8_t)(below(f, 2) << 2); /* WCE */
		return hdr + 20;
	}
	if (chance(f, 50)) {
		pg[0] = 0x5C; /* SPF=1, 1Ch */
		pg[1] = 0x02;
		scsi_put_be16(pg + 2, 12);
		pg[4] = (uint8_t)rnd(f);
		fill_random(f, pg + 8, 8);
		return hdr + 16;
	}
	fill_random(f, b, 64);
	return (size_t)below(f, 65);
}

/* Build a well-formed command of a random kind for LUN c->lun. */
static void build(struct fuzz *f, struct cmd *c)
{
	uint32_t bs = f->bs[c->lun];
	uint64_t n = f->nblk[c->lun];
	memset(c->cdb, 0, sizeof(c->cdb));
	c->out_len = 0;
	c->in_len = 0;
	c->kind = (int)below(f, 30);
	uint8_t *cdb = c->cdb;
	uint64_t lba = pick_lba(f, n);
	uint32_t cnt = pick_count(f);
	static const uint8_t reads[] = {0x08, 0x28, 0xA8, 0x88};
	static const uint8_t writes[] = {0x0A, 0x2A, 0xAA, 0x8A, 0x2E, 0x8E};
	switch (c->kind) {
	case 0: case 1: case 2: { /* READ 6/10/12/16 */
		cdb[0] = reads[below(f, 4)];
		put_lba_count(cdb, lba, cnt);
		c->in_len = (size_t)((uint64_t)cnt * bs > MAX_IN ? MAX_IN : (uint64_t)cnt * bs);
		break;
	}
	case 3: case 4: case 5: case 6: { /* WRITE 6/10/12/16, WRITE AND VERIFY 10/16 */
		cdb[0] = writes[below(f, 6)];
		put_lba_count(cdb, lba, cnt);
		c->out_len = data_blocks(f, cnt, bs, chance(f, 20));
		break;
	}
	case 7: { /* VERIFY 10/16, BYTCHK 0/1/3 */
		bool ten = chance(f, 50);
		cdb[0] = ten ? 0x2F : 0x8F;
		uint8_t bytchk = (uint8_t)below(f, 4);
		cdb[1] = (uint8_t)(bytchk << 1);
		put_lba_count(cdb, lba, cnt);
		if (bytchk == 1)
			c->out_len = data_blocks(f, cnt, bs, chance(f, 70));
		else if (bytchk == 3)
			c->out_len = data_blocks(f, 1, bs, chance(f, 70));
		break;
	}
	case 8: case 9: { /* WRITE SAME 10/16: zero or pattern, UNMAP / NDOB / ANCHOR / LBDATA */
		bool ten = chance(f, 40);
		cdb[0] = ten ? 0x41 : 0x93;
		uint8_t flags = 0;
		if (chance(f, 50))
			flags |= 0x08; /* UNMAP */
		if (!ten && chance(f, 20))
			flags |= 0x01; /* NDOB */
		if (chance(f, 5))
			flags |= 0x10; /* ANCHOR */
		if (chance(f, 5))
			flags |= (uint8_t)(below(f, 3) + 1) << 1; /* LBDATA / PBDATA */
		cdb[1] = flags;
		put_lba_count(cdb, lba, cnt);
		if (!(flags & 0x01))
			c->out_len = data_blocks(f, 1, bs, chance(f, 70));
		break;
	}
	case 10: case 11: /* UNMAP */
		cdb[0] = 0x42;
		c->out_len = build_unmap(f, c);
		scsi_put_be16(cdb + 7, (uint16_t)c->out_len);
		break;
	case 12: case 13: { /* COMPARE AND WRITE */
		uint8_t nolb = chance(f, 80) ? (uint8_t)(1 + below(f, 4)) : (uint8_t)rnd(f);
		cdb[0] = 0x89;
		scsi_put_be64(cdb + 2, lba);
		cdb[13] = nolb;
		c->out_len = data_blocks(f, 2ull * nolb, bs, false);
		if (chance(f, 60)) /* verify half zeros: matches never-written blocks */
			memset(f->out, 0, c->out_len / 2);
		break;
	}
	case 14: case 15: /* EXTENDED COPY(LID1) */
		cdb[0] = 0x83;
		c->out_len = build_xcopy(f, c);
		scsi_put_be32(cdb + 10, (uint32_t)c->out_len);
		break;
	case 16: /* RECEIVE COPY RESULTS: COPY STATUS / OPERATING PARAMETERS / others */
		cdb[0] = 0x84;
		cdb[1] = chance(f, 80) ? (chance(f, 50) ? 0x00 : 0x03) : (uint8_t)below(f, 32);
		cdb[2] = (uint8_t)rnd(f);
		scsi_put_be32(cdb + 10, (uint32_t)below(f, 1024));
		c->in_len = (size_t)below(f, 1024);
		break;
	case 17: /* GET LBA STATUS */
		cdb[0] = 0x9E;
		cdb[1] = 0x12;
		scsi_put_be64(cdb + 2, lba);
		scsi_put_be32(cdb + 10, chance(f, 80) ? (uint32_t)below(f, 4096) : 0xFFFFFFFFu);
		c->in_len = (size_t)below(f, 4096);
		break;
	case 18: case 19: { /* INQUIRY, standard or VPD */
		static const uint8_t pages[] = {0x00, 0x80, 0x83, 0x86, 0x8F, 0xB0, 0xB1, 0xB2, 0xC0};
		cdb[0] = 0x12;
		if (chance(f, 70)) {
			cdb[1] = 0x01;
			cdb[2] = pages[below(f, sizeof(pages))];
		}
		scsi_put_be16(cdb + 3, (uint16_t)below(f, 1024));
		c->in_len = (size_t)below(f, 1024);
		break;
	}
	case 20: { /* MODE SENSE 6/10 */
		bool ten = chance(f, 50);
		cdb[0] = ten ? 0x5A : 0x1A;
		cdb[1] = (uint8_t)(below(f, 2) << 3);
		cdb[2] = (uint8_t)((below(f, 4) << 6) | (chance(f, 50) ? 0x3F : below(f, 64)));
		cdb[3] = chance(f, 70) ? 0 : (uint8_t)rnd(f);
		if (ten)
			scsi_put_be16(cdb + 7, (uint16_t)below(f, 1024));
		else
			cdb[4] = (uint8_t)rnd(f);
		c->in_len = (size_t)below(f, 1024);
		break;
	}
	case 21: { /* MODE SELECT 6/10 */
		bool ten = chance(f, 50);
		cdb[0] = ten ? 0x55 : 0x15;
		cdb[1] = (uint8_t)(0x10 | below(f, 2)); /* PF, SP */
		c->out_len = build_mode_select(f, ten);
		if (ten)
			scsi_put_be16(cdb + 7, (uint16_t)c->out_len);
		else
			cdb[4] = (uint8_t)c->out_len;
		break;
	}
	case 22: /* LOG SENSE */
		cdb[0] = 0x4D;
		cdb[2] = (uint8_t)((below(f, 4) << 6) | (chance(f, 60) ? 0x0C : below(f, 64)));
		scsi_put_be16(cdb + 7, (uint16_t)below(f, 1024));
		c->in_len = (size_t)below(f, 1024);
		break;
	case 23: /* REPORT SUPPORTED OPERATION CODES */
		cdb[0] = 0xA3;
		cdb[1] = 0x0C;
		cdb[2] = (uint8_t)below(f, 8) | (uint8_t)(below(f, 2) << 7);
		cdb[3] = (uint8_t)rnd(f);
		scsi_put_be16(cdb + 4, (uint16_t)rnd(f));
		scsi_put_be32(cdb + 6, (uint32_t)below(f, 8192));
		c->in_len = (size_t)below(f, 8192);
		break;
	case 24: /* READ CAPACITY 10/16 */
		if (chance(f, 50)) {
			cdb[0] = 0x25;
			c->in_len = 8;
		} else {
			cdb[0] = 0x9E;
			cdb[1] = 0x10;
			scsi_put_be32(cdb + 10, (uint32_t)below(f, 64));
			c->in_len = (size_t)below(f, 64);
		}
		break;
	case 25: /* SYNCHRONIZE CACHE 10/16 */
		cdb[0] = chance(f, 50) ? 0x35 : 0x91;
		put_lba_count(cdb, lba, cnt);
		break;
	case 26: { /* TEST UNIT READY, REQUEST SENSE, START STOP UNIT, REPORT LUNS */
		static const uint8_t ops[] = {0x00, 0x03, 0x1B, 0xA0};
		cdb[0] = ops[below(f, 4)];
		if (cdb[0] == 0x03) {
			cdb[4] = (uint8_t)rnd(f);
			c->in_len = (size_t)below(f, 256);
		} else if (cdb[0] == 0x1B) {
			cdb[4] = (uint8_t)rnd(f) & 0xF3;
		} else if (cdb[0] == 0xA0) {
			scsi_put_be32(cdb + 6, (uint32_t)below(f, 512));
			c->in_len = (size_t)below(f, 512);
		}
		break;
	}
	default: /* any opcode, random CDB and buffers */
		fill_random(f, cdb, 16);
		if (chance(f, 50)) {
			c->out_len = (size_t)below(f, 4096);
			fill_random(f, f->out, c->out_len);
		} else {
			c->in_len = (size_t)below(f, 4096);
		}
		break;
	}
	c->cdb_len = cdb_len_of(cdb[0]);
}

/* Damage it: CDB bytes, parameter list bytes, data-out and data-in sizes. */
static void mutate(struct fuzz *f, struct cmd *c)
{
	if (chance(f, 30)) {
		unsigned flips = 1 + (unsigned)below(f, 3);
		for (unsigned i = 0; i < flips; i++) {
			size_t at = 1 + (size_t)below(f, c->cdb_len - 1); /* the opcode stays */
			if (chance(f, 50))
				c->cdb[at] ^= (uint8_t)(1u << below(f, 8));
			else
				c->cdb[at] = (uint8_t)rnd(f);
		}
	}
	if (c->out_len && chance(f, 30)) {
		unsigned flips = 1 + (unsigned)below(f, 4);
		for (unsigned i = 0; i < flips; i++) {
			size_t at = (size_t)below(f, c->out_len < 128 ? c->out_len : 128);
			f->out[at] = (uint8_t)rnd(f);
		}
	}
	if (chance(f, 10)) { /* data-out length other than the CDB's */
		size_t len = chance(f, 50) ? (size_t)below(f, c->out_len + 1) : c->out_len + (size_t)below(f, 4096);
		if (len > MAX_OUT)
			len = MAX_OUT;
		if (len > c->out_len)
			fill_random(f, f->out + c->out_len, len - c->out_len);
		c->out_len = len;
	}
	if (chance(f, 10)) /* data-in buffer other than the CDB's */
		c->in_len = chance(f, 50) ? (size_t)below(f, c->in_len + 1) : (size_t)below(f, MAX_IN);
	/* A variable-length CDB (7Fh) must fit the 16 bytes built: ADDITIONAL CDB LENGTH <= 8. */
	if (c->cdb[0] == 0x7F)
		c->cdb[7] %= 9;
	/* One direction per command, as LIO sets it up (the data buffer is the fabric's
	 * transfer, data-out or data-in); which one need not match the opcode. */
	if (c->out_len && c->in_len) {
		if (chance(f, 50))
			c->out_len = 0;
		else
			c->in_len = 0;
	}
}

/* The answer must be one a correct target gives (answer_check.h). */
static void check_answer(struct fuzz *f, const struct cmd *c, const struct simhost_result *r)
{
	const struct simk_result *k = &r->r;
	char why[160];
	if (answer_check(k, c->in_len, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s for CDB", why);
		for (size_t i = 0; i < c->cdb_len; i++)
			fprintf(stderr, " %02x", c->cdb[i]);
		fprintf(stderr, " (kind %d, out %zu, in %zu)\n", c->kind, c->out_len, c->in_len);
		fail();
	}
	if (k->status == SAM_STAT_GOOD)
		f->kinds_good[c->kind]++;
	else if (k->status == SAM_STAT_CHECK_CONDITION)
		f->kinds_cc[c->kind]++;
}

/* A synchronous command on any LUN; returns its status, data-in copied to in. */
static int sync_cmd(struct simhost *h, int lun, const uint8_t *cdb, size_t cdb_len, const void *out,
		    size_t out_len, void *in, size_t in_len)
{
	uint64_t tag;
	assert_int_equal(simhost_submit(h, lun, cdb, cdb_len, out, out_len, in_len, &tag), 0);
	struct simhost_result r;
	int n = simhost_reap(h, &r, 1, 60000);
	assert_int_equal(n, 1);
	assert_true(r.tag == tag);
	int st = r.r.status;
	if (st == SAM_STAT_CHECK_CONDITION && (r.r.sense[2] & 0x0F) == SK_UNIT_ATTENTION) {
		simhost_result_free(&r); /* a threshold / parameters-changed UA: once more */
		return sync_cmd(h, lun, cdb, cdb_len, out, out_len, in, in_len);
	}
	if (in && r.r.data_in)
		memcpy(in, r.r.data_in, r.r.data_in_len < in_len ? r.r.data_in_len : in_len);
	simhost_result_free(&r);
	return st;
}

static void read_volume(struct simhost *h, int lun, uint32_t bs, uint64_t bytes, uint8_t *dst)
{
	const uint64_t chunk = 1u << 20;
	for (uint64_t off = 0; off < bytes; off += chunk) {
		uint8_t cdb[16] = {0x88};
		scsi_put_be64(cdb + 2, off / bs);
		scsi_put_be32(cdb + 10, (uint32_t)(chunk / bs));
		assert_int_equal(sync_cmd(h, lun, cdb, 16, NULL, 0, dst + off, chunk), SAM_STAT_GOOD);
	}
}

static void guard_pattern(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131u + 7u + (i >> 12));
}

/* Every LBA GET LBA STATUS reports deallocated reads zeros. */
static void check_lba_status(struct simhost *h, int lun, uint32_t bs, uint64_t nblk, const uint8_t *data)
{
	uint64_t lba = 0;
	while (lba < nblk) {
		uint8_t cdb[16] = {0x9E, 0x12}, in[8 + 16 * 64];
		scsi_put_be64(cdb + 2, lba);
		scsi_put_be32(cdb + 10, sizeof(in));
		assert_int_equal(sync_cmd(h, lun, cdb, 16, NULL, 0, in, sizeof(in)), SAM_STAT_GOOD);
		uint32_t dl = scsi_get_be32(in);
		assert_true(dl >= 4 + 16);
		unsigned nd = (dl - 4) / 16;
		if (nd > 64)
			nd = 64;
		for (unsigned i = 0; i < nd; i++) {
			const uint8_t *d = in + 8 + 16 * i;
			uint64_t start = scsi_get_be64(d);
			uint32_t len = scsi_get_be32(d + 8);
			assert_true(start == lba);
			assert_true(len > 0 && start + len <= nblk);
			if ((d[12] & 0x0F) == 1) /* deallocated */
				for (uint64_t b = start * bs; b < (start + len) * bs; b++)
					if (data[b]) {
						fprintf(stderr, "LUN %d: LBA %llu deallocated but reads data\n", lun,
							(unsigned long long)(b / bs));
						fail();
					}
			lba = start + len;
		}
	}
}

/* The commit under test (--commit HASH, from tests/crash/run-suite), or NULL. Set
 * once by main before the tests run, read only after. */
static const char *the_commit;

/* whole: partial-granule writes in place as read-modify-writes (-1: as detected) */
static void cdb_fuzz(int whole)
{
	struct fuzz *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	const char *s = getenv("VAAID_FUZZ_SEED"), *o = getenv("VAAID_FUZZ_OPS");
	uint64_t ch = the_commit ? vrng_fnv64(the_commit, VRNG_FNV_BASIS) : 0;
	uint64_t seed = s ? strtoull(s, NULL, 0) : the_commit ? vrng_next(&ch) : 1;
	unsigned ops = o ? (unsigned)strtoul(o, NULL, 0) : 3000;
	f->rng = seed;
	fprintf(stderr, "cdb fuzz: seed %llu (%s%.40s), %u commands\n", (unsigned long long)seed,
		s ? "VAAID_FUZZ_SEED" : the_commit ? "from commit " : "fixed: no commit known",
		!s && the_commit ? the_commit : "", ops);

	char path[512];
	struct vpool_params prm = {.extent_size = 64u << 10};
	/* 16 MiB: the two fuzzed volumes (8 MiB) plus the guard fit, XCOPY and CAW may still
	 * run the pool out of space (27h/07h is a legal answer). */
	f->h = test_pool_create("cdb_fuzz", 16u << 20, &prm, path, sizeof(path));
	struct simhost *h = f->h;
	assert_int_equal(simhost_whole_granules(h, whole), 0);
	f->bs[0] = 512;
	f->bs[1] = 4096;
	assert_int_equal(simhost_volume_create(h, "a", VOL_BYTES, 512), 0);
	assert_int_equal(simhost_volume_create(h, "b", VOL_BYTES, 4096), 0);
	assert_int_equal(simhost_volume_create(h, "guard", GUARD_BYTES, 512), 0);
	assert_int_equal(simhost_attach(h, "a", 0), 0);
	assert_int_equal(simhost_attach(h, "b", 1), 0);
	assert_int_equal(simhost_attach(h, "guard", 2), 0);
	assert_int_equal(simhost_set_visibility(h, 2, 1), 0);
	for (int l = 0; l < 3; l++)
		assert_int_equal(simhost_lun_naa(h, l, f->naa[l]), 0);
	f->nblk[0] = VOL_BYTES / 512;
	f->nblk[1] = VOL_BYTES / 4096;

	uint8_t *guard = malloc(GUARD_BYTES), *back = malloc(VOL_BYTES);
	f->out = malloc(MAX_OUT + 4096);
	assert_non_null(guard);
	assert_non_null(back);
	assert_non_null(f->out);
	guard_pattern(guard, GUARD_BYTES);
	{
		uint8_t cdb[16] = {0x8A};
		scsi_put_be32(cdb + 10, GUARD_BYTES / 512);
		assert_int_equal(sync_cmd(h, 2, cdb, 16, guard, GUARD_BYTES, NULL, 0), SAM_STAT_GOOD);
	}

	struct cmd inflight_cmd[MAX_INFLIGHT];
	uint64_t inflight_tag[MAX_INFLIGHT];
	bool used[MAX_INFLIGHT] = {false};
	unsigned inflight = 0, sent = 0, answered = 0;
	while (answered < ops) {
		while (sent < ops && inflight < MAX_INFLIGHT) {
			struct cmd c = {.lun = (int)below(f, 2)};
			build(f, &c);
			mutate(f, &c);
			uint64_t tag;
			int rc = simhost_submit(h, c.lun, c.cdb, c.cdb_len, c.out_len ? f->out : NULL, c.out_len,
						c.in_len, &tag);
			if (rc == -EAGAIN)
				break;
			if (rc != 0) {
				fprintf(stderr, "submit %02x: %d\n", c.cdb[0], rc);
				fail();
			}
			unsigned slot = 0;
			while (used[slot])
				slot++;
			used[slot] = true;
			inflight_cmd[slot] = c;
			inflight_tag[slot] = tag;
			inflight++;
			sent++;
		}
		struct simhost_result r;
		int n = simhost_reap(h, &r, 1, 60000);
		if (n < 0) {
			fprintf(stderr, "reap: %d after %u commands answered\n", n, answered);
			fail();
		}
		if (n == 0)
			continue;
		unsigned slot = 0;
		while (slot < MAX_INFLIGHT && !(used[slot] && inflight_tag[slot] == r.tag))
			slot++;
		assert_true(slot < MAX_INFLIGHT);
		check_answer(f, &inflight_cmd[slot], &r);
		simhost_result_free(&r);
		used[slot] = false;
		inflight--;
		answered++;
	}
	unsigned good = 0, cc = 0;
	for (int k = 0; k < 30; k++) {
		good += f->kinds_good[k];
		cc += f->kinds_cc[k];
	}
	fprintf(stderr, "cdb fuzz: %u GOOD, %u CHECK CONDITION; per kind (GOOD/CC):", good, cc);
	for (int k = 0; k < 30; k++)
		fprintf(stderr, " %u/%u", f->kinds_good[k], f->kinds_cc[k]);
	fprintf(stderr, "\n");
	/* The generator must reach past the CDB checks: most kinds complete GOOD sometimes. */
	unsigned kinds_good = 0;
	for (int k = 0; k < 30; k++)
		kinds_good += f->kinds_good[k] > 0;
	if (ops >= 3000)
		assert_true(kinds_good >= 20);

	assert_int_equal(simhost_verify(h, stderr), 0);
	uint8_t *before[2];
	for (int l = 0; l < 2; l++) {
		before[l] = malloc(VOL_BYTES);
		assert_non_null(before[l]);
		read_volume(h, l, f->bs[l], VOL_BYTES, before[l]);
		check_lba_status(h, l, f->bs[l], f->nblk[l], before[l]);
	}
	read_volume(h, 2, 512, GUARD_BYTES, back);
	assert_memory_equal(back, guard, GUARD_BYTES);

	assert_int_equal(simhost_reopen(h), 0);
	assert_int_equal(simhost_verify(h, stderr), 0);
	for (int l = 0; l < 2; l++) {
		read_volume(h, l, f->bs[l], VOL_BYTES, back);
		assert_memory_equal(back, before[l], VOL_BYTES);
		free(before[l]);
	}
	read_volume(h, 2, 512, GUARD_BYTES, back);
	assert_memory_equal(back, guard, GUARD_BYTES);

	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
	free(guard);
	free(back);
	free(f->out);
	free(f);
}

static void test_cdb_fuzz(void **state)
{
	(void)state;
	cdb_fuzz(-1);
}

static void test_cdb_fuzz_whole_granules(void **state)
{
	(void)state;
	cdb_fuzz(1);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--commit"))
		the_commit = argv[2];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cdb_fuzz),
		cmocka_unit_test(test_cdb_fuzz_whole_granules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
