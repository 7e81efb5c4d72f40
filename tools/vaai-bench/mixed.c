/*
 * vaai-bench mixed: counters exact under load (issue 25; scripts/bench/counters-exact;
 * docs/observability.md "Counters exact under load").
 *
 * How this works: one pool file (vblk_uring: O_DIRECT, io_uring, a durable
 * journal, as the other engine benchmarks) serves two co-visible LUNs through
 * simhost (the real ring, dispatch, handlers and pool). For --runtime seconds
 * two flows (flow.h), one per LUN, each keep --qd commands in flight, drawn at
 * random (--seed; each kind once first) from a mix of every kind the counters
 * tell apart: READ and WRITE (10/16), VERIFY (10/16, BYTCHK 0), SYNCHRONIZE
 * CACHE (10/16), COMPARE AND WRITE (some made to miscompare on purpose), WRITE
 * SAME (16) of zeros with
 * and without the UNMAP bit and with NDOB, WRITE SAME (16/10) of a pattern,
 * UNMAP with 1..8 descriptors (some of them empty), EXTENDED COPY between and
 * within the LUNs, and refused ones (a one-byte parameter list, a segment
 * naming a CSCD past the list, one whose last segment runs past the end), GET
 * LBA STATUS, TEST UNIT READY, and commands that must fail (READ / WRITE past
 * the capacity, an unknown operation code).
 *
 * COMPARE AND WRITE alone writes LBAs [0, CAW_BLOCKS) of each LUN (every other
 * write, zeroing, unmapping or copy goes above), one at a time per block, so
 * the generator knows every block there: version 0 is zeros (never written),
 * version v a block naming its LUN, LBA and v. A CAW compares with the version
 * it knows and writes the next; a miscompare on purpose flips one byte of the
 * verify instance and must be answered MISCOMPARE with INFORMATION = that
 * byte's offset (SBC-4 5.3).
 *
 * The generator counts, per LUN, from the answers IT received: per kind ok
 * (GOOD) / failed (anything else), the bytes of the successful ones by the
 * rules of docs/observability.md (blocks named x block size; UNMAP the bytes
 * of its non-empty descriptors; EXTENDED COPY the bytes of its segments, and
 * per LUN the bytes read from it and written to it by the segments done: all
 * when GOOD, those before the segment a COPY ABORTED names; SYNCHRONIZE CACHE, GET
 * LBA STATUS and other 0), its own latencies (submission to reap), MISCOMPAREs
 * of CAW, the WRITE SAMEs of zeros / a pattern / with the UNMAP bit and their
 * bytes, UNMAP's descriptors and bytes. Every answer is also checked against
 * the one the generator expects (GOOD, or the sense key and ASC/ASCQ).
 *
 * At the end (mixed_check.c) each LUN's counters (simhost_lun_stats_json, the
 * daemon's snapshot) minus those taken after setup (INQUIRY, READ CAPACITY) must equal
 * the generator's counts key by key; latency counts must equal ok / failed and
 * the sum of their buckets; the daemon's latency sums (dispatch to completion)
 * may not exceed the generator's (submission to reap, which contains them);
 * out_of_space and unit attentions must not move; inflight must be 0 and
 * 1 <= inflight_max <= --qd. Keys the generator cannot know are not read.
 *
 * stdout: counters_exact_mixed runtime_s=S commands=N luns=2 mismatches=M
 * stderr: every mismatch ("counters_exact: LUN l KEY: counters X, generator Y"),
 * each unexpected answer (the first 20), "# ..." progress and per LUN and kind
 * the counts. Exit 1 when M > 0 or a check failed.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "flow.h"
#include "mixed.h"
#include "scsi_build.h"
#include "simhost.h"
#include "vaaid/endian.h"
#include "vaaid/lun_stats.h"
#include "vaaid/scsi.h"

#define MIB (1ull << 20)
#define NLUN MIXED_LUNS
#define VOL_SIZE (64 * MIB)
#define VOL_BLOCK 512u
#define POOL_SIZE (512 * MIB)
#define CAW_BLOCKS 2048u  /* LBAs [0, CAW_BLOCKS): only COMPARE AND WRITE writes there */
#define MAX_IO 128u       /* most blocks of an I/O, an UNMAP descriptor, a copy segment */
#define MAX_CAW 2u        /* blocks of a COMPARE AND WRITE (at most VPD B0's limit) */
#define MAX_UNMAP_DESC 8u
#define MAX_SEG 4u        /* segments of an EXTENDED COPY */
#define GLS_ALLOC 1024u   /* GET LBA STATUS allocation length */
#define BAD_OPCODE 0x02   /* an operation code vaaid does not know (SBC-4: obsolete) */
#define MAX_REPORTED 20u  /* unexpected answers printed */

enum op {
	OP_READ10, OP_READ16, OP_WRITE10, OP_WRITE16, OP_VERIFY10, OP_VERIFY16, OP_SYNC10, OP_SYNC16,
	OP_CAW, OP_CAW_MISCOMPARE, OP_WS_ZERO, OP_WS_ZERO_UNMAP, OP_WS_NDOB, OP_WS_PATTERN,
	OP_WS10_PATTERN, OP_UNMAP, OP_XCOPY, OP_XCOPY_SHORT_LIST, OP_XCOPY_BAD_CSCD, OP_XCOPY_PAST_END,
	OP_GET_LBA_STATUS,
	OP_TUR, OP_READ_OUT_OF_RANGE, OP_WRITE_OUT_OF_RANGE, OP_BAD_OPCODE, NOPS
};

/* What the generator sends, how often, the kind it is counted under, the answer expected
 * (key 0: GOOD; else CHECK CONDITION with this sense key and ASC/ASCQ). */
static const struct op_desc {
	const char *name;
	unsigned weight;
	enum vstat_kind kind;
	uint8_t key;
	uint16_t asc;
} ops[NOPS] = {
	[OP_READ10] = {"READ(10)", 8, VSTAT_READ, 0, 0},
	[OP_READ16] = {"READ(16)", 8, VSTAT_READ, 0, 0},
	[OP_WRITE10] = {"WRITE(10)", 8, VSTAT_WRITE, 0, 0},
	[OP_WRITE16] = {"WRITE(16)", 8, VSTAT_WRITE, 0, 0},
	[OP_VERIFY10] = {"VERIFY(10)", 3, VSTAT_VERIFY, 0, 0},
	[OP_VERIFY16] = {"VERIFY(16)", 3, VSTAT_VERIFY, 0, 0},
	[OP_SYNC10] = {"SYNCHRONIZE CACHE(10)", 2, VSTAT_SYNC, 0, 0},
	[OP_SYNC16] = {"SYNCHRONIZE CACHE(16)", 2, VSTAT_SYNC, 0, 0},
	[OP_CAW] = {"COMPARE AND WRITE", 9, VSTAT_CAW, 0, 0},
	[OP_CAW_MISCOMPARE] = {"COMPARE AND WRITE (miscompare)", 3, VSTAT_CAW, SK_MISCOMPARE,
			       ASC_MISCOMPARE_DURING_VERIFY},
	[OP_WS_ZERO] = {"WRITE SAME(16) zero", 3, VSTAT_WRITE_SAME, 0, 0},
	[OP_WS_ZERO_UNMAP] = {"WRITE SAME(16) zero UNMAP", 3, VSTAT_WRITE_SAME, 0, 0},
	[OP_WS_NDOB] = {"WRITE SAME(16) NDOB", 2, VSTAT_WRITE_SAME, 0, 0},
	[OP_WS_PATTERN] = {"WRITE SAME(16) pattern", 3, VSTAT_WRITE_SAME, 0, 0},
	[OP_WS10_PATTERN] = {"WRITE SAME(10) pattern", 2, VSTAT_WRITE_SAME, 0, 0},
	[OP_UNMAP] = {"UNMAP", 6, VSTAT_UNMAP, 0, 0},
	[OP_XCOPY] = {"EXTENDED COPY", 6, VSTAT_XCOPY, 0, 0},
	[OP_XCOPY_SHORT_LIST] = {"EXTENDED COPY (1-byte list)", 1, VSTAT_XCOPY, SK_ILLEGAL_REQUEST,
				 ASC_PARAM_LIST_LENGTH_ERROR},
	[OP_XCOPY_BAD_CSCD] = {"EXTENDED COPY (CSCD past the list)", 1, VSTAT_XCOPY, SK_COPY_ABORTED,
			       ASC_COPY_TARGET_NOT_REACHABLE},
	[OP_XCOPY_PAST_END] = {"EXTENDED COPY (last segment past the end)", 1, VSTAT_XCOPY,
			       SK_COPY_ABORTED, ASC_COPY_TARGET_NOT_REACHABLE},
	[OP_GET_LBA_STATUS] = {"GET LBA STATUS", 3, VSTAT_GET_LBA_STATUS, 0, 0},
	[OP_TUR] = {"TEST UNIT READY", 1, VSTAT_OTHER, 0, 0},
	[OP_READ_OUT_OF_RANGE] = {"READ(16) past the capacity", 1, VSTAT_READ, SK_ILLEGAL_REQUEST,
				  ASC_LBA_OUT_OF_RANGE},
	[OP_WRITE_OUT_OF_RANGE] = {"WRITE(10) past the capacity", 1, VSTAT_WRITE, SK_ILLEGAL_REQUEST,
				   ASC_LBA_OUT_OF_RANGE},
	[OP_BAD_OPCODE] = {"unknown operation code", 1, VSTAT_OTHER, SK_ILLEGAL_REQUEST,
			   ASC_INVALID_OPCODE},
};

/* One command in flight: what its GOOD answer counts. */
struct rec {
	enum op op;
	uint64_t bytes;                   /* the kind's bytes */
	unsigned nseg;                    /* EXTENDED COPY: its segments' LUNs and bytes */
	uint8_t seg_src[MAX_SEG], seg_dst[MAX_SEG];
	uint64_t seg_bytes[MAX_SEG];
	uint32_t descriptors;             /* UNMAP: the non-empty ones */
	bool ws_zero, ws_unmap;
	uint64_t lba;                     /* COMPARE AND WRITE: its blocks, busy until answered */
	uint32_t nblk;
	uint32_t info;                    /* miscompare on purpose: the differing byte's offset */
};

struct mixed {
	uint64_t rs; /* vrng state (--seed) */
	unsigned qd, wsum;
	struct lun_limits lim[NLUN];
	uint8_t naa[NLUN][16];
	uint32_t *ver[NLUN]; /* per CAW block: its version */
	uint8_t *busy[NLUN]; /* per CAW block: a CAW in flight */
	struct tally t[NLUN];
	uint64_t op_ok[NLUN][NOPS], op_failed[NLUN][NOPS]; /* per command sent */
	uint64_t unexpected;
};

/* A flow's context: one LUN's commands. */
struct lflow {
	struct mixed *m;
	int lun;
	struct rec *rec; /* qd + 1: what is in flight and the one pending */
	unsigned *free_rec, nfree;
	uint8_t *buf;    /* the pending command's data-out */
	uint8_t *data;   /* MAX_IO blocks of write data (never all zero) */
	uint64_t produced;
};

static uint64_t rnd(struct mixed *m, uint64_t n) { return n ? vrng_next(&m->rs) % n : 0; }

/* The content of a CAW block at a version: zeros (never written), or its LUN, LBA, version. */
static void caw_content(uint8_t *b, uint32_t bs, int lun, uint64_t lba, uint32_t ver)
{
	memset(b, 0, bs);
	if (!ver)
		return;
	vput_le64(b, lba);
	vput_le64(b + 8, ver);
	vput_le64(b + 16, (uint64_t)lun);
	for (uint32_t i = 24; i < bs; i++)
		b[i] = (uint8_t)(lba * 131 + i * 7 + ver * 3 + 1);
}

/* A range of n blocks in [lo, nblocks). */
static uint64_t pick_lba(struct mixed *m, int lun, uint64_t lo, uint32_t n)
{
	return lo + rnd(m, m->lim[lun].nblocks - lo - n + 1);
}

static void cdb10(uint8_t *cdb, uint8_t op, uint32_t lba, uint16_t n)
{
	memset(cdb, 0, 10);
	cdb[0] = op;
	scsi_put_be32(cdb + 2, lba);
	scsi_put_be16(cdb + 7, n);
}

/* COMPARE AND WRITE of free CAW blocks; false when none were found free. */
static bool make_caw(struct lflow *lf, struct rec *r, struct vcmd *c, bool miscompare)
{
	struct mixed *m = lf->m;
	uint32_t bs = m->lim[lf->lun].block;
	uint32_t max = m->lim[lf->lun].max_caw < MAX_CAW ? m->lim[lf->lun].max_caw : MAX_CAW;
	uint32_t n = 1 + (uint32_t)rnd(m, max);
	uint64_t lba = 0;
	bool found = false;
	for (int tries = 0; tries < 16 && !found; tries++) {
		lba = rnd(m, CAW_BLOCKS - n + 1);
		found = true;
		for (uint32_t i = 0; i < n; i++)
			found = found && !m->busy[lf->lun][lba + i];
	}
	if (!found)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		m->busy[lf->lun][lba + i] = 1;
		caw_content(lf->buf + i * bs, bs, lf->lun, lba + i, m->ver[lf->lun][lba + i]);
		caw_content(lf->buf + (n + i) * bs, bs, lf->lun, lba + i, m->ver[lf->lun][lba + i] + 1);
	}
	if (miscompare) {
		r->info = (uint32_t)rnd(m, (uint64_t)n * bs);
		lf->buf[r->info] ^= 0x5A;
	}
	/* SBC-4 5.3: LBA bytes 2-9, NUMBER OF LOGICAL BLOCKS byte 13; data-out: verify, then write */
	memset(c->cdb, 0, 16);
	c->cdb[0] = 0x89;
	scsi_put_be64(c->cdb + 2, lba);
	c->cdb[13] = (uint8_t)n;
	c->cdb_len = 16;
	c->out = lf->buf;
	c->out_len = 2 * (size_t)n * bs;
	r->lba = lba;
	r->nblk = n;
	r->bytes = (uint64_t)n * bs;
	return true;
}

/* UNMAP (SBC-4 5.31) of 1..MAX_UNMAP_DESC descriptors above the CAW blocks, some empty. */
static void make_unmap(struct lflow *lf, struct rec *r, struct vcmd *c)
{
	struct mixed *m = lf->m;
	const struct lun_limits *l = &m->lim[lf->lun];
	uint32_t maxd = l->max_unmap_desc < MAX_UNMAP_DESC ? l->max_unmap_desc : MAX_UNMAP_DESC;
	unsigned nd = 1 + (unsigned)rnd(m, maxd);
	uint8_t *d = lf->buf + 8;
	for (unsigned i = 0; i < nd; i++, d += 16) {
		uint32_t n = rnd(m, 8) ? 1 + (uint32_t)rnd(m, MAX_IO) : 0; /* 1 in 8 empty */
		memset(d, 0, 16);
		scsi_put_be64(d, pick_lba(m, lf->lun, CAW_BLOCKS, n ? n : 1));
		scsi_put_be32(d + 8, n);
		r->bytes += (uint64_t)n * l->block;
		r->descriptors += n != 0;
	}
	size_t len = 8 + 16 * (size_t)nd;
	memset(lf->buf, 0, 8);
	scsi_put_be16(lf->buf, (uint16_t)(len - 2));     /* UNMAP DATA LENGTH */
	scsi_put_be16(lf->buf + 2, (uint16_t)(16 * nd)); /* UNMAP BLOCK DESCRIPTOR DATA LENGTH */
	cdb10(c->cdb, 0x42, 0, (uint16_t)len);           /* PARAMETER LIST LENGTH bytes 7-8 */
	c->cdb_len = 10;
	c->out = lf->buf;
	c->out_len = len;
}

/* EXTENDED COPY(LID1) naming both LUNs, segments between any two; OP_XCOPY_BAD_CSCD: one
 * segment naming a CSCD past the list; OP_XCOPY_PAST_END: 2..MAX_SEG segments, the last
 * one's destination running past the capacity (the ones before it are done). */
static int make_xcopy(struct lflow *lf, struct rec *r, struct vcmd *c, enum op op)
{
	struct mixed *m = lf->m;
	struct sb_cscd cscd[NLUN];
	struct sb_segment seg[MAX_SEG];
	for (int i = 0; i < NLUN; i++) {
		memcpy(cscd[i].naa, m->naa[i], 16);
		cscd[i].block_size = m->lim[i].block;
	}
	unsigned ns = op == OP_XCOPY_BAD_CSCD ? 1
		      : op == OP_XCOPY_PAST_END ? 2 + (unsigned)rnd(m, MAX_SEG - 1)
						: 1 + (unsigned)rnd(m, MAX_SEG);
	for (unsigned i = 0; i < ns; i++) {
		int s = (int)rnd(m, NLUN), d = (int)rnd(m, NLUN);
		uint16_t n = (uint16_t)(1 + rnd(m, MAX_IO));
		seg[i] = (struct sb_segment){.src = (uint16_t)s, .dst = (uint16_t)d, .nblocks = n,
					     .src_lba = pick_lba(m, s, 0, n),
					     .dst_lba = pick_lba(m, d, CAW_BLOCKS, n)};
		r->seg_src[i] = (uint8_t)s;
		r->seg_dst[i] = (uint8_t)d;
		r->seg_bytes[i] = (uint64_t)n * m->lim[s].block;
		r->bytes += r->seg_bytes[i];
	}
	r->nseg = ns;
	/* SPC-4 6.4.1: a CSCD past the list, or a range past a LUN's end: COPY ABORTED,
	 * COPY TARGET DEVICE NOT REACHABLE, COMMAND-SPECIFIC INFORMATION = that segment */
	if (op == OP_XCOPY_BAD_CSCD)
		seg[0].src = NLUN;
	if (op == OP_XCOPY_PAST_END)
		seg[ns - 1].dst_lba = m->lim[seg[ns - 1].dst].nblocks - seg[ns - 1].nblocks + 1 + rnd(m, 64);
	size_t len = sb_xcopy_list(lf->buf, (size_t)MAX_IO * BENCH_MAX_BLOCK, 0, SB_LIST_ID_NONE, cscd,
				   NLUN, seg, ns);
	if (!len)
		return -EOVERFLOW;
	sb_xcopy_cdb(c->cdb, (uint32_t)len);
	c->cdb_len = 16;
	c->out = lf->buf;
	c->out_len = len;
	return 0;
}

static enum op pick_op(struct mixed *m)
{
	uint64_t x = rnd(m, m->wsum);
	unsigned o = 0;
	while (x >= ops[o].weight)
		x -= ops[o++].weight;
	return (enum op)o;
}

static int mixed_next(void *ctx, struct vcmd *c)
{
	struct lflow *lf = ctx;
	struct mixed *m = lf->m;
	const struct lun_limits *l = &m->lim[lf->lun];
	uint32_t bs = l->block;
	if (!lf->nfree)
		return -EPROTO;
	unsigned ri = lf->free_rec[--lf->nfree];
	struct rec *r = &lf->rec[ri];
	memset(r, 0, sizeof(*r));
	c->user = ri;
	/* every kind once first (in the table's order), so even a short run sends each */
	enum op op = lf->produced < NOPS ? (enum op)lf->produced : pick_op(m);
	lf->produced++;
	uint32_t n = 1 + (uint32_t)rnd(m, MAX_IO);
	uint64_t max_ws = l->max_ws && l->max_ws < MAX_IO ? l->max_ws : MAX_IO;
	uint32_t nws = 1 + (uint32_t)rnd(m, max_ws);
	if ((op == OP_CAW || op == OP_CAW_MISCOMPARE) && !make_caw(lf, r, c, op == OP_CAW_MISCOMPARE))
		op = OP_READ16; /* every CAW block drawn was busy: something else */
	r->op = op;
	switch (op) {
	case OP_READ10:
		cdb10(c->cdb, 0x28, (uint32_t)pick_lba(m, lf->lun, 0, n), (uint16_t)n);
		c->cdb_len = 10;
		c->in_len = (size_t)n * bs;
		r->bytes = (uint64_t)n * bs;
		break;
	case OP_READ16:
		sb_rw16_cdb(c->cdb, 0x88, pick_lba(m, lf->lun, 0, n), n);
		c->cdb_len = 16;
		c->in_len = (size_t)n * bs;
		r->bytes = (uint64_t)n * bs;
		break;
	case OP_WRITE10:
	case OP_WRITE16:
		if (op == OP_WRITE10)
			cdb10(c->cdb, 0x2A, (uint32_t)pick_lba(m, lf->lun, CAW_BLOCKS, n), (uint16_t)n);
		else
			sb_rw16_cdb(c->cdb, 0x8A, pick_lba(m, lf->lun, CAW_BLOCKS, n), n);
		c->cdb_len = op == OP_WRITE10 ? 10 : 16;
		c->out = lf->data;
		c->out_len = (size_t)n * bs;
		r->bytes = (uint64_t)n * bs;
		break;
	case OP_VERIFY10: /* BYTCHK 0: the medium is verified, no data-out */
		cdb10(c->cdb, 0x2F, (uint32_t)pick_lba(m, lf->lun, 0, n), (uint16_t)n);
		c->cdb_len = 10;
		r->bytes = (uint64_t)n * bs;
		break;
	case OP_VERIFY16:
		sb_rw16_cdb(c->cdb, 0x8F, pick_lba(m, lf->lun, 0, n), n);
		c->cdb_len = 16;
		r->bytes = (uint64_t)n * bs;
		break;
	case OP_SYNC10: /* LBA 0, NUMBER OF LOGICAL BLOCKS 0: the whole medium */
		memset(c->cdb, 0, 10);
		c->cdb[0] = 0x35;
		c->cdb_len = 10;
		break;
	case OP_SYNC16:
		memset(c->cdb, 0, 16);
		c->cdb[0] = 0x91;
		c->cdb_len = 16;
		break;
	case OP_CAW:
	case OP_CAW_MISCOMPARE:
		break; /* made above */
	case OP_WS_ZERO:
	case OP_WS_ZERO_UNMAP:
	case OP_WS_NDOB:
	case OP_WS_PATTERN:
		/* SBC-4 5.49: byte 1 UNMAP (bit 3), NDOB (bit 0); data-out one block unless NDOB */
		sb_rw16_cdb(c->cdb, 0x93, pick_lba(m, lf->lun, CAW_BLOCKS, nws), nws);
		c->cdb_len = 16;
		r->ws_unmap = op == OP_WS_ZERO_UNMAP || (op == OP_WS_NDOB && rnd(m, 2));
		r->ws_zero = op != OP_WS_PATTERN;
		c->cdb[1] = (uint8_t)((r->ws_unmap ? 0x08 : 0) | (op == OP_WS_NDOB ? 0x01 : 0));
		if (op != OP_WS_NDOB) {
			memset(lf->buf, 0, bs);
			c->out = op == OP_WS_PATTERN ? lf->data : lf->buf;
			c->out_len = bs;
		}
		r->bytes = (uint64_t)nws * bs;
		break;
	case OP_WS10_PATTERN:
		cdb10(c->cdb, 0x41, (uint32_t)pick_lba(m, lf->lun, CAW_BLOCKS, nws), (uint16_t)nws);
		c->cdb_len = 10;
		c->out = lf->data;
		c->out_len = bs;
		r->bytes = (uint64_t)nws * bs;
		break;
	case OP_UNMAP:
		make_unmap(lf, r, c);
		break;
	case OP_XCOPY:
	case OP_XCOPY_BAD_CSCD:
	case OP_XCOPY_PAST_END: {
		int rc = make_xcopy(lf, r, c, op);
		if (rc < 0)
			return rc;
		break;
	}
	case OP_XCOPY_SHORT_LIST: /* SPC-4 6.4.3: shorter than its own header */
		lf->buf[0] = 0;
		sb_xcopy_cdb(c->cdb, 1);
		c->cdb_len = 16;
		c->out = lf->buf;
		c->out_len = 1;
		break;
	case OP_GET_LBA_STATUS:
		/* SBC-4 5.20: SERVICE ACTION IN(16) 12h, STARTING LBA, ALLOCATION LENGTH */
		memset(c->cdb, 0, 16);
		c->cdb[0] = 0x9E;
		c->cdb[1] = 0x12;
		scsi_put_be64(c->cdb + 2, rnd(m, l->nblocks));
		scsi_put_be32(c->cdb + 10, GLS_ALLOC);
		c->cdb_len = 16;
		c->in_len = GLS_ALLOC;
		break;
	case OP_TUR:
		memset(c->cdb, 0, 6);
		c->cdb_len = 6;
		break;
	case OP_READ_OUT_OF_RANGE: /* the last block named is past the capacity */
		n = 1 + (uint32_t)rnd(m, 8);
		sb_rw16_cdb(c->cdb, 0x88, l->nblocks - n + 1 + rnd(m, 64), n);
		c->cdb_len = 16;
		c->in_len = (size_t)n * bs;
		break;
	case OP_WRITE_OUT_OF_RANGE:
		n = 1 + (uint32_t)rnd(m, 8);
		cdb10(c->cdb, 0x2A, (uint32_t)(l->nblocks - n + 1 + rnd(m, 64)), (uint16_t)n);
		c->cdb_len = 10;
		c->out = lf->data;
		c->out_len = (size_t)n * bs;
		break;
	case OP_BAD_OPCODE:
		memset(c->cdb, 0, 6);
		c->cdb[0] = BAD_OPCODE;
		c->cdb_len = 6;
		break;
	case NOPS:
		return -EINVAL;
	}
	return 1;
}

static uint64_t to_ns(double s) { return (uint64_t)(s * 1e9) + 1; /* never below the real time */ }

/* The answer expected? (the sense's key, ASC/ASCQ; a miscompare's VALID and INFORMATION) */
static bool as_expected(const struct rec *r, const struct simk_result *k)
{
	const struct op_desc *d = &ops[r->op];
	if (!d->key)
		return k->status == SAM_STAT_GOOD;
	if (k->status != SAM_STAT_CHECK_CONDITION || k->sense_len < 14)
		return false;
	if ((k->sense[2] & 0x0F) != d->key || scsi_get_be16(k->sense + 12) != d->asc)
		return false;
	if (r->op == OP_CAW_MISCOMPARE)
		return (k->sense[0] & 0x80) && scsi_get_be32(k->sense + 3) == r->info;
	if (r->op == OP_XCOPY_BAD_CSCD)
		return scsi_get_be32(k->sense + 8) == 0;
	if (r->op == OP_XCOPY_PAST_END)
		return scsi_get_be32(k->sense + 8) == r->nseg - 1;
	return true;
}

/* EXTENDED COPY: the segments done, by its answer: all when GOOD; on COPY ABORTED those
 * before the one its COMMAND-SPECIFIC INFORMATION names (SPC-4 6.4.1); else none. */
static unsigned segments_done(const struct rec *r, const struct simk_result *k)
{
	if (k->status == SAM_STAT_GOOD)
		return r->nseg;
	if (k->status != SAM_STAT_CHECK_CONDITION || k->sense_len < 12 ||
	    (k->sense[2] & 0x0F) != SK_COPY_ABORTED)
		return 0;
	uint32_t csi = scsi_get_be32(k->sense + 8);
	return csi < r->nseg ? csi : r->nseg;
}

static int mixed_done(void *ctx, const struct vcmd *c, const struct simk_result *k, double lat)
{
	struct lflow *lf = ctx;
	struct mixed *m = lf->m;
	struct rec *r = &lf->rec[c->user];
	struct tally *t = &m->t[lf->lun];
	enum vstat_kind kind = ops[r->op].kind;
	bool ok = k->status == SAM_STAT_GOOD;
	if (ok) {
		t->k[kind].ok++;
		t->k[kind].bytes += r->bytes;
		t->k[kind].lat_ok_ns += to_ns(lat);
		m->op_ok[lf->lun][r->op]++;
		if (kind == VSTAT_WRITE_SAME) {
			t->ws_unmap_bit += r->ws_unmap;
			if (r->ws_zero) {
				t->ws_zero++;
				t->ws_zero_bytes += r->bytes;
			} else {
				t->ws_pattern++;
				t->ws_pattern_bytes += r->bytes;
			}
		} else if (kind == VSTAT_UNMAP) {
			t->unmap_descriptors += r->descriptors;
			t->unmap_bytes += r->bytes;
		}
	} else {
		t->k[kind].failed++;
		t->k[kind].lat_failed_ns += to_ns(lat);
		m->op_failed[lf->lun][r->op]++;
		if (kind == VSTAT_CAW && k->status == SAM_STAT_CHECK_CONDITION && k->sense_len > 13 &&
		    (k->sense[2] & 0x0F) == SK_MISCOMPARE)
			t->caw_miscompares++;
	}
	if (kind == VSTAT_XCOPY) {
		unsigned done = segments_done(r, k);
		for (unsigned i = 0; i < done; i++) {
			m->t[r->seg_src[i]].xcopy_src_bytes += r->seg_bytes[i];
			m->t[r->seg_dst[i]].xcopy_dst_bytes += r->seg_bytes[i];
		}
	}
	if (kind == VSTAT_CAW) {
		for (uint32_t i = 0; i < r->nblk; i++) {
			m->busy[lf->lun][r->lba + i] = 0;
			m->ver[lf->lun][r->lba + i] += ok;
		}
	}
	if (!as_expected(r, k) && m->unexpected++ < MAX_REPORTED) {
		char what[96];
		snprintf(what, sizeof(what), "LUN %d: unexpected answer to %s", lf->lun, ops[r->op].name);
		print_sense(what, k);
	}
	lf->free_rec[lf->nfree++] = (unsigned)c->user;
	return 0;
}

static void report(const struct mixed *m, int lun)
{
	tally_print(&m->t[lun], lun);
	for (unsigned o = 0; o < NOPS; o++)
		fprintf(stderr, "# LUN %d   %-42s ok %8llu  failed %6llu\n", lun, ops[o].name,
			(unsigned long long)m->op_ok[lun][o],
			(unsigned long long)m->op_failed[lun][o]);
}

/* ---------------------------------------------------------------- setup, run */

static int lflow_init(struct lflow *lf, struct mixed *m, int lun)
{
	lf->m = m;
	lf->lun = lun;
	lf->rec = calloc(m->qd + 1, sizeof(*lf->rec));
	lf->free_rec = calloc(m->qd + 1, sizeof(*lf->free_rec));
	lf->buf = malloc((size_t)MAX_IO * BENCH_MAX_BLOCK);
	lf->data = malloc((size_t)MAX_IO * BENCH_MAX_BLOCK);
	if (!lf->rec || !lf->free_rec || !lf->buf || !lf->data)
		return -ENOMEM;
	for (unsigned i = 0; i <= m->qd; i++)
		lf->free_rec[lf->nfree++] = i;
	for (size_t i = 0; i < (size_t)MAX_IO * BENCH_MAX_BLOCK; i++)
		lf->data[i] = (uint8_t)(i * 7 + 0x5b) | 1;
	return 0;
}

static void lflow_free(struct lflow *lf)
{
	free(lf->rec);
	free(lf->free_rec);
	free(lf->buf);
	free(lf->data);
}

/* LBAs [0, CAW_BLOCKS) of a LUN written with zeros (version 0 of every CAW block,
 * whatever the LUN held before: a real LUN may have been written), MAX_IO blocks
 * per WRITE(16), each waited for. 0 or -errno. */
static int zero_caw_blocks(const struct kport *k, int lun, uint32_t bs)
{
	uint8_t *z = calloc(MAX_IO, bs);
	if (!z)
		return -ENOMEM;
	int rc = 0;
	for (uint32_t lba = 0; lba < CAW_BLOCKS && !rc; lba += MAX_IO) {
		uint8_t cdb[16];
		sb_rw16_cdb(cdb, 0x8A, lba, MAX_IO);
		rc = kcmd_sync(k, lun, cdb, 16, z, (size_t)MAX_IO * bs, NULL, 0);
		if (rc > 0)
			rc = -EIO;
	}
	free(z);
	return rc;
}

/* Set up, run, compare; 0 (all exact), 1 (a mismatch or a check failed), -errno. */
static int mixed_run(const struct mixed_port *p, const struct mixed_opts *c, struct mixed *m)
{
	struct lflow lf[NLUN] = {{0}};
	json_object *before[NLUN] = {0}, *after[NLUN] = {0};
	int rc = 0, failed = 0;
	for (int i = 0; i < NLUN && !rc; i++) {
		memcpy(m->naa[i], p->naa[i], 16);
		if ((rc = klun_limits(&p->k, i, &m->lim[i])) < 0)
			break;
		if (m->lim[i].nblocks <= CAW_BLOCKS + MAX_IO + 64 || !m->lim[i].max_caw ||
		    !m->lim[i].max_unmap_desc || m->lim[i].max_unmap_lba < MAX_UNMAP_DESC * MAX_IO) {
			fprintf(stderr, "vaai-bench mixed: LUN %d's limits do not allow the mix\n", i);
			rc = -EINVAL;
			break;
		}
		if ((rc = zero_caw_blocks(&p->k, i, m->lim[i].block)) < 0) {
			fprintf(stderr, "vaai-bench mixed: LUN %d: zeroing the COMPARE AND WRITE blocks: "
				"%s\n", i, strerror(-rc));
			break;
		}
		m->ver[i] = calloc(CAW_BLOCKS, sizeof(*m->ver[i]));
		m->busy[i] = calloc(CAW_BLOCKS, 1);
		if (!m->ver[i] || !m->busy[i] || (rc = lflow_init(&lf[i], m, i)) < 0)
			rc = rc ? rc : -ENOMEM;
	}
	if (!rc && p->settle)
		rc = p->settle(p->ctx);
	for (int i = 0; i < NLUN && !rc; i++)
		if (!(before[i] = p->snapshot(p->ctx, i)))
			rc = -EPROTO;
	if (rc < 0)
		goto out;
	fprintf(stderr, "# %d LUNs of %llu MiB (%u-byte blocks) through %s, %u in flight on each, "
		"%.0f s, seed %llu\n",
		NLUN, (unsigned long long)(m->lim[0].nblocks * m->lim[0].block / MIB), m->lim[0].block,
		p->what, c->qd, c->runtime, (unsigned long long)c->seed);
	double deadline = bench_now() + c->runtime;
	struct flow f[NLUN];
	for (int i = 0; i < NLUN; i++)
		f[i] = (struct flow){.lun = i, .qd = c->qd, .deadline = deadline, .next = mixed_next,
				     .done = mixed_done, .ctx = &lf[i]};
	if ((rc = kflows_run(&p->k, f, NLUN)) < 0)
		goto out;
	uint64_t commands = 0;
	double secs = 0;
	for (int i = 0; i < NLUN; i++) {
		commands += f[i].completed;
		if (f[i].t_last - f[i].t_first > secs)
			secs = f[i].t_last - f[i].t_first;
	}
	fprintf(stderr, "# %llu commands in %.1f s (%.0f/s)\n", (unsigned long long)commands, secs,
		secs > 0 ? (double)commands / secs : 0);
	uint64_t mismatches = 0, compared = 0;
	for (int i = 0; i < NLUN; i++) {
		if (!(after[i] = p->snapshot(p->ctx, i))) {
			rc = -EPROTO;
			goto out;
		}
		report(m, i);
		mismatches += tally_compare(before[i], after[i], i, &m->t[i], c->qd, &compared);
	}
	fprintf(stderr, "# %llu counters compared, %llu mismatches; %llu unexpected answers\n",
		(unsigned long long)compared, (unsigned long long)mismatches,
		(unsigned long long)m->unexpected);
	for (int i = 0; i < NLUN; i++)
		for (unsigned o = 0; o < NOPS; o++)
			if (!m->op_ok[i][o] && !m->op_failed[i][o]) {
				fprintf(stderr, "vaai-bench mixed: CHECK FAILED: LUN %d never sent %s\n", i,
					ops[o].name);
				failed = 1;
			}
	if (m->unexpected) {
		fprintf(stderr, "vaai-bench mixed: CHECK FAILED: %llu answers were not the expected ones\n",
			(unsigned long long)m->unexpected);
		failed = 1;
	}
	printf("counters_exact_mixed runtime_s=%g commands=%llu luns=%d mismatches=%llu\n", c->runtime,
	       (unsigned long long)commands, NLUN, (unsigned long long)mismatches);
	fflush(stdout);
	if (mismatches)
		failed = 1;
out:
	for (int i = 0; i < NLUN; i++) {
		json_object_put(before[i]);
		json_object_put(after[i]);
		lflow_free(&lf[i]);
		free(m->ver[i]);
		free(m->busy[i]);
	}
	return rc < 0 ? rc : failed;
}

int mixed_load(const struct mixed_port *p, const struct mixed_opts *c)
{
	struct mixed *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->rs = c->seed;
	m->qd = c->qd;
	for (unsigned o = 0; o < NOPS; o++)
		m->wsum += ops[o].weight;
	int rc = mixed_run(p, c, m);
	free(m);
	return rc;
}

static json_object *sim_snapshot(void *ctx, int lun) { return tally_snapshot(ctx, lun); }

/* The simulated kernel: one pool file, two fresh co-visible LUNs. */
static int mixed_sim(const struct mixed_opts *c)
{
	mkdir(c->dir, 0755);
	char pool[4096];
	snprintf(pool, sizeof(pool), "%s/mixed.pool", c->dir);
	simhost_remove_pool(pool);
	struct vpool_params prm = {.max_size = POOL_SIZE};
	struct simhost *h;
	char err[512] = "";
	int rc = simhost_create_pool(pool, POOL_SIZE, &prm, SIMHOST_IO_URING, c->seed, &h, err,
				     sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "vaai-bench mixed: %s\n", err);
		return 1;
	}
	fprintf(stderr, "# pool %s: %llu MiB (io_uring)\n", pool, (unsigned long long)(POOL_SIZE / MIB));
	struct mixed_port p = {.k = kport_simhost(h), .snapshot = sim_snapshot, .ctx = h,
			       .what = "simhost"};
	for (int i = 0; i < NLUN && rc >= 0; i++) {
		char vol[16];
		snprintf(vol, sizeof(vol), "mx%d", i);
		/* both in visibility group 0: co-visible, so either may copy to and from the other */
		if ((rc = simhost_volume_create(h, vol, VOL_SIZE, VOL_BLOCK)) < 0 ||
		    (rc = simhost_attach(h, vol, i)) < 0)
			break;
		rc = simhost_lun_naa(h, i, p.naa[i]);
	}
	if (rc >= 0)
		rc = mixed_load(&p, c);
	int status = rc != 0;
	if (rc < 0)
		fprintf(stderr, "vaai-bench mixed: %s\n", strerror(-rc));
	if ((rc = simhost_close(h)) < 0) {
		fprintf(stderr, "vaai-bench mixed: closing the pool: %s\n", strerror(-rc));
		status = 1;
	}
	if (!c->keep) {
		simhost_remove_pool(pool);
		rmdir(c->dir); /* only if empty */
	}
	return status;
}

static int parse_args(struct mixed_opts *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--keep")) {
			c->keep = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "vaai-bench mixed: %s needs a value\n", a);
			return -EINVAL;
		}
		i++;
		char *end;
		if (!strcmp(a, "--dir")) {
			c->dir = v;
		} else if (!strcmp(a, "--runtime")) {
			c->runtime = strtod(v, &end);
			if (*end || !(c->runtime >= 1)) {
				fprintf(stderr, "vaai-bench mixed: --runtime must be >= 1 s\n");
				return -EINVAL;
			}
		} else if (!strcmp(a, "--qd")) {
			unsigned long q = strtoul(v, &end, 10);
			if (*end || q < 1 || q > 256) {
				fprintf(stderr, "vaai-bench mixed: --qd must be 1..256\n");
				return -EINVAL;
			}
			c->qd = (unsigned)q;
		} else if (!strcmp(a, "--sg")) {
			c->sg = v;
		} else if (!strcmp(a, "--stats-cmd")) {
			c->stats_cmd = v;
		} else if (!strcmp(a, "--seed")) {
			c->seed = strtoull(v, &end, 0);
			if (*end) {
				fprintf(stderr, "vaai-bench mixed: --seed must be a number\n");
				return -EINVAL;
			}
		} else {
			fprintf(stderr, "vaai-bench mixed: unknown option %s\n", a);
			return -EINVAL;
		}
	}
	return 0;
}

int bench_mixed_main(int argc, char **argv)
{
	struct mixed_opts c = {.dir = "build/bench-tmp", .runtime = 60, .qd = 32, .seed = 1};
	if (parse_args(&c, argc, argv) < 0)
		return 2;
	if (!c.sg != !c.stats_cmd) {
		fprintf(stderr, "vaai-bench mixed: --sg and --stats-cmd go together\n");
		return 2;
	}
	int status = c.sg ? mixed_sg(&c) : mixed_sim(&c);
	if (status)
		fprintf(stderr, "vaai-bench mixed: FAILED (see above)\n");
	return status;
}
