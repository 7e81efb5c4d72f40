/*
 * fuzz_cdb: SCSI commands (CDB + data-out) through the real ring code and
 * dispatch on a real pool (issue 24).
 *
 * Each input starts from a fresh pool (cdb_session.h), so a finding
 * reproduces from its input alone: LUN 0 (1 MiB, 512-byte blocks) and LUN 1
 * (16 MiB thin over a smaller pool, 4096-byte blocks) are co-visible and take
 * the commands; LUN 2 (the guard, another visibility group) is written with a
 * pattern first and never receives one. The commands run one at a time or
 * several in flight (flag 04h, up to 16, as the seeded loop), each checked as
 * the seeded loop checks them (answer_check: status, fixed-format sense, data-in within
 * its buffer); LUN 0 has a data model (cdb_model.h): a GOOD READ of it must
 * return what the model allows, and so must all of it at the end. After the
 * input: the pool's invariants (simhost_verify), the guard unchanged.
 *
 * Input: up to 64 commands, each
 *   flags (1 byte): 0x01 LUN 1 (else LUN 0); 0x02 the data-out is its first
 *     16 bytes repeated (large writes from small inputs); 0x04 left in flight
 *     with the commands that follow, up to the next one without it (the
 *     model skips the blocks two of them raced over, cdb_session.h)
 *   CDB length (1 byte: 6 + value % 11; the bytes taken from the input, the rest
 *     zeros: the ring carries what the opcode's group says, as LIO), data-out
 *     length and data-in length
 *     (2 bytes each, big endian: bit 15 set = (value & 7FFFh) x 512 bytes,
 *     else bytes; at most 2 MiB; a command has one direction, as LIO gives it:
 *     data-out wins), the CDB, then the data-out bytes.
 * In an EXTENDED COPY parameter list, an identification CSCD descriptor whose
 * 16-byte designator is CS_NAA_LUN(n) repeated names LUN n: the session puts
 * that LUN's NAA there (they are random per pool).
 * Seeds: the commands of each kind the seeded loop builds, well-formed (READ,
 * WRITE, WRITE SAME, UNMAP, COMPARE AND WRITE, EXTENDED COPY as ESXi sends it,
 * RECEIVE COPY RESULTS, GET LBA STATUS, INQUIRY, MODE SENSE / SELECT, ...).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdb_session.h"
#include "scsi_build.h"
#include "seeds.h"
#include "vaaid/scsi.h"

#define MAX_CMDS 64
#define MAX_LEN (2u << 20)

static size_t len_of(uint16_t v)
{
	size_t n = v & 0x8000 ? (size_t)(v & 0x7FFF) * 512 : v;
	return n > MAX_LEN ? MAX_LEN : n;
}

/* out[0..len) := pat repeated (zeros when pat_len is 0), by doubling memcpy:
 * a byte loop here is instrumented and dominated the target's time. */
static void fill_pattern(uint8_t *out, size_t len, const uint8_t *pat, size_t pat_len)
{
	if (pat_len == 0) {
		memset(out, 0, len);
		return;
	}
	size_t have = len < pat_len ? len : pat_len;
	memcpy(out, pat, have);
	while (have < len) {
		size_t n = len - have < have ? len - have : have;
		memcpy(out + have, out, n);
		have += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[MAX_LEN]; /* scratch, rewritten per command */
	static struct cs_scratch x; /* kept across inputs (cdb_session.h) */
	struct cdb_session s;
	cs_open(&s, &x);
	size_t at = 0;
	uint8_t cdb[16];
	for (unsigned c = 0; c < MAX_CMDS && size - at >= 6; c++) {
		uint8_t fl = data[at];
		size_t cdb_len = 6 + data[at + 1] % 11;
		size_t out_len = len_of((uint16_t)(data[at + 2] << 8 | data[at + 3]));
		size_t in_len = len_of((uint16_t)(data[at + 4] << 8 | data[at + 5]));
		at += 6;
		memset(cdb, 0, sizeof(cdb));
		size_t n = size - at < cdb_len ? size - at : cdb_len;
		memcpy(cdb, data + at, n);
		at += n;
		if (cdb[0] == 0x7F) /* variable length: the ring carries 16 bytes */
			cdb[7] %= 9;
		if (out_len) {
			size_t have = size - at;
			if (fl & 0x02) {
				size_t pat = have < 16 ? have : 16;
				fill_pattern(out, out_len, data + at, pat);
				at += pat;
			} else {
				if (out_len > have)
					out_len = have;
				memcpy(out, data + at, out_len);
				at += out_len;
			}
			in_len = 0;
		}
		/* 16 bytes given: the kernel copies what the opcode's group says. Flag 04h:
		 * left in flight with the next commands (cs_queue), up to one without it. */
		if (fl & 0x04)
			cs_queue(&s, fl & 0x01, cdb, sizeof(cdb), out, out_len, in_len);
		else
			cs_cmd(&s, fl & 0x01, cdb, sizeof(cdb), out, out_len, in_len);
	}
	cs_close(&s);
	return 0;
}

/* ---- seeds: one well-formed command per kind */
struct seed_buf {
	uint8_t b[8192];
	size_t n;
};

static void put_cmd(struct seed_buf *s, uint8_t fl, const uint8_t *cdb, size_t cdb_len,
		    const uint8_t *out, uint16_t out_spec, size_t out_bytes, uint16_t in_spec)
{
	uint8_t *p = s->b + s->n;
	p[0] = fl;
	p[1] = (uint8_t)(cdb_len - 6);
	p[2] = (uint8_t)(out_spec >> 8);
	p[3] = (uint8_t)out_spec;
	p[4] = (uint8_t)(in_spec >> 8);
	p[5] = (uint8_t)in_spec;
	memcpy(p + 6, cdb, cdb_len);
	memcpy(p + 6 + cdb_len, out, out_bytes);
	s->n += 6 + cdb_len + out_bytes;
}

int fuzz_make_seeds(const char *dir)
{
	static const uint8_t pat[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	struct seed_buf s;
	uint8_t cdb[16], list[512];
	int rc = 0;
#define SEED(name) \
	do { \
		if (rc == 0) \
			rc = fuzz_write_seed(dir, name, s.b, s.n); \
		s.n = 0; \
	} while (0)
	s.n = 0;
	/* WRITE(16) of 64 KiB (a pattern), then READ(16) of it, READ(10) of 8 blocks */
	sb_rw16_cdb(cdb, 0x8A, 128, 128);
	put_cmd(&s, 0x02, cdb, 16, pat, 0x8000 | 128, 16, 0);
	sb_rw16_cdb(cdb, 0x88, 120, 144);
	put_cmd(&s, 0, cdb, 16, NULL, 0, 0, 0x8000 | 144);
	uint8_t r10[10] = {0x28, 0, 0, 0, 0, 128, 0, 0, 8, 0};
	put_cmd(&s, 0, r10, 10, NULL, 0, 0, 0x8000 | 8);
	SEED("write-read");
	/* WRITE(10) of one block of bytes, WRITE(6) of 2 on LUN 1 */
	uint8_t w10[10] = {0x2A, 0, 0, 0, 0, 7, 0, 0, 1, 0}, blk[512];
	for (int i = 0; i < 512; i++)
		blk[i] = (uint8_t)(i * 7);
	put_cmd(&s, 0, w10, 10, blk, 512, 512, 0);
	uint8_t w6[6] = {0x0A, 0, 0, 3, 2, 0};
	put_cmd(&s, 0x03, w6, 6, pat, 0x8000 | 16, 16, 0);
	SEED("write10-write6");
	/* WRITE SAME(16) of zeros with UNMAP over 2 extents, of a pattern over 8 blocks */
	sb_rw16_cdb(cdb, 0x93, 0, 256);
	cdb[1] = 0x08;
	put_cmd(&s, 0x02, cdb, 16, (const uint8_t[16]){0}, 0x8000 | 1, 16, 0);
	sb_rw16_cdb(cdb, 0x93, 512, 8);
	put_cmd(&s, 0x02, cdb, 16, pat, 0x8000 | 1, 16, 0);
	uint8_t ws10[10] = {0x41, 0x08, 0, 0, 0, 64, 0, 0, 32, 0};
	put_cmd(&s, 0x02, ws10, 10, (const uint8_t[16]){0}, 0x8000 | 1, 16, 0);
	SEED("write-same");
	/* WRITE, then UNMAP of two descriptors, then GET LBA STATUS */
	sb_rw16_cdb(cdb, 0x8A, 0, 256);
	put_cmd(&s, 0x02, cdb, 16, pat, 0x8000 | 256, 16, 0);
	uint8_t um[10] = {0x42, 0, 0, 0, 0, 0, 0, 0, 40, 0}, ul[40] = {0};
	scsi_put_be16(ul, 38);
	scsi_put_be16(ul + 2, 32);
	scsi_put_be64(ul + 8, 0);
	scsi_put_be32(ul + 16, 128);
	scsi_put_be64(ul + 24, 200);
	scsi_put_be32(ul + 32, 9);
	put_cmd(&s, 0, um, 10, ul, 40, 40, 0);
	uint8_t gls[16] = {0x9E, 0x12};
	scsi_put_be32(gls + 10, 1024);
	put_cmd(&s, 0, gls, 16, NULL, 0, 0, 1024);
	SEED("unmap-get-lba-status");
	/* COMPARE AND WRITE of 1 block: matching zeros, then a miscompare */
	uint8_t caw[16] = {0x89};
	scsi_put_be64(caw + 2, 900);
	caw[13] = 1;
	uint8_t cw[1024] = {0};
	memset(cw + 512, 0x5A, 512);
	put_cmd(&s, 0, caw, 16, cw, 1024, 1024, 0);
	put_cmd(&s, 0, caw, 16, cw, 1024, 1024, 0);
	SEED("compare-and-write");
	/* EXTENDED COPY as ESXi sends it: LUN 0 -> LUN 1 and LUN 0 -> LUN 0, then RCR */
	sb_rw16_cdb(cdb, 0x8A, 0, 256);
	put_cmd(&s, 0x02, cdb, 16, pat, 0x8000 | 256, 16, 0);
	struct sb_cscd cs[2] = {{.block_size = 512}, {.block_size = 4096}};
	memset(cs[0].naa, CS_NAA_LUN(0), 16);
	memset(cs[1].naa, CS_NAA_LUN(1), 16);
	struct sb_segment seg[2] = {
		{.src = 0, .dst = 1, .nblocks = 256, .src_lba = 0, .dst_lba = 0},
		{.src = 0, .dst = 0, .nblocks = 128, .src_lba = 0, .dst_lba = 1024},
	};
	size_t ll = sb_xcopy_list(list, sizeof(list), 0, SB_LIST_ID_NONE, cs, 2, seg, 2);
	sb_xcopy_cdb(cdb, (uint32_t)ll);
	put_cmd(&s, 0, cdb, 16, list, (uint16_t)ll, ll, 0);
	uint8_t rcr[16] = {0x84, 0x03};
	scsi_put_be32(rcr + 10, 64);
	put_cmd(&s, 0, rcr, 16, NULL, 0, 0, 64);
	SEED("xcopy");
	/* INQUIRY standard and VPD 83h/B0h/B2h, READ CAPACITY(16), MODE SENSE(10) all pages,
	 * MODE SELECT(6) of the caching page, LOG SENSE, RSOC, REPORT LUNS, TUR, SYNC CACHE */
	uint8_t inq[6] = {0x12, 0, 0, 0, 96, 0};
	put_cmd(&s, 0, inq, 6, NULL, 0, 0, 96);
	static const uint8_t vpds[] = {0x83, 0xB0, 0xB2};
	for (size_t i = 0; i < sizeof(vpds); i++) {
		sb_inquiry_vpd_cdb(inq, vpds[i], 255);
		put_cmd(&s, 0, inq, 6, NULL, 0, 0, 255);
	}
	uint8_t rc16[16] = {0x9E, 0x10};
	scsi_put_be32(rc16 + 10, 32);
	put_cmd(&s, 0, rc16, 16, NULL, 0, 0, 32);
	uint8_t ms10[10] = {0x5A, 0, 0x3F, 0, 0, 0, 0, 0x02, 0, 0};
	put_cmd(&s, 0, ms10, 10, NULL, 0, 0, 512);
	uint8_t msel[6] = {0x15, 0x10, 0, 0, 24, 0}, mp[24] = {0};
	mp[4] = 0x08;
	mp[5] = 0x12;
	mp[6] = 0x04;
	put_cmd(&s, 0, msel, 6, mp, 24, 24, 0);
	uint8_t ls[10] = {0x4D, 0, 0x4C, 0, 0, 0, 0, 0x01, 0, 0};
	put_cmd(&s, 0, ls, 10, NULL, 0, 0, 256);
	uint8_t rsoc[12] = {0xA3, 0x0C, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0};
	put_cmd(&s, 0, rsoc, 12, NULL, 0, 0, 8192);
	uint8_t rl[12] = {0xA0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0};
	put_cmd(&s, 0, rl, 12, NULL, 0, 0, 256);
	uint8_t tur[6] = {0};
	put_cmd(&s, 0, tur, 6, NULL, 0, 0, 0);
	uint8_t sc[10] = {0x35};
	put_cmd(&s, 0, sc, 10, NULL, 0, 0, 0);
	SEED("spc");
	/* VERIFY (SBC-4 5.34, 5.35) and WRITE AND VERIFY (5.45, 5.46): BYTCHK 0 (medium only), 1 (a matching
	 * and a miscomparing data-out), 3 (one block against each); WRITE AND VERIFY(10)/(16) */
	sb_rw16_cdb(cdb, 0x8A, 64, 16);
	put_cmd(&s, 0x02, cdb, 16, pat, 0x8000 | 16, 16, 0);
	uint8_t v10[10] = {0x2F, 0, 0, 0, 0, 64, 0, 0, 16, 0};
	put_cmd(&s, 0, v10, 10, NULL, 0, 0, 0);
	sb_rw16_cdb(cdb, 0x8F, 64, 16);
	cdb[1] = 0x02; /* BYTCHK 01b */
	put_cmd(&s, 0x02, cdb, 16, pat, 0x8000 | 16, 16, 0);
	static const uint8_t other[16] = {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
	put_cmd(&s, 0x02, cdb, 16, other, 0x8000 | 16, 16, 0);
	cdb[1] = 0x06; /* BYTCHK 11b: one block, compared with each */
	put_cmd(&s, 0x02, cdb, 16, pat, 0x8000 | 1, 16, 0);
	uint8_t wv10[10] = {0x2E, 0x02, 0, 0, 0, 96, 0, 0, 8, 0};
	put_cmd(&s, 0x02, wv10, 10, pat, 0x8000 | 8, 16, 0);
	sb_rw16_cdb(cdb, 0x8E, 200, 8);
	put_cmd(&s, 0x02, cdb, 16, pat, 0x8000 | 8, 16, 0);
	sb_rw16_cdb(cdb, 0x88, 64, 48);
	put_cmd(&s, 0, cdb, 16, NULL, 0, 0, 0x8000 | 48);
	SEED("verify");
	/* REPORT SUPPORTED OPERATION CODES (SPC-4 6.35): all (with timeouts), one opcode,
	 * one opcode + service action, an unsupported one */
	uint8_t ro[12] = {0xA3, 0x0C, 0x80};
	scsi_put_be32(ro + 6, 8192);
	put_cmd(&s, 0, ro, 12, NULL, 0, 0, 8192);
	static const uint8_t one_ops[][3] = {{0x01, 0x28, 0}, {0x02, 0x9E, 0x10}, {0x03, 0x83, 0},
					     {0x01, 0x89, 0}, {0x81, 0x2A, 0}, {0x01, 0xC0, 0},
					     {0x02, 0x84, 0x03}, {0x01, 0x9E, 0}};
	for (size_t i = 0; i < sizeof(one_ops) / sizeof(one_ops[0]); i++) {
		memset(ro, 0, sizeof(ro));
		ro[0] = 0xA3;
		ro[1] = 0x0C;
		ro[2] = one_ops[i][0];
		ro[3] = one_ops[i][1];
		scsi_put_be16(ro + 4, one_ops[i][2]);
		scsi_put_be32(ro + 6, 64);
		put_cmd(&s, 0, ro, 12, NULL, 0, 0, 64);
	}
	SEED("report-supported-opcodes");
	/* LOG SENSE (SPC-4 6.8): supported pages, supported subpages, the LBP page (SBC-4 6.4.6)
	 * current and cumulative values, an unsupported page; INQUIRY: every VPD page, a page
	 * vaaid lacks, EVPD 0 with a page code */
	static const uint8_t logs[][2] = {{0x40, 0x00}, {0x40, 0xFF}, {0x4C, 0x00}, {0x0C, 0x00},
					  {0x4D, 0x00}, {0x4C, 0x01}};
	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		uint8_t l[10] = {0x4D, 0, logs[i][0], logs[i][1], 0, 0, 0, 0x01, 0, 0};
		put_cmd(&s, 0, l, 10, NULL, 0, 0, 256);
	}
	static const uint8_t all_vpds[] = {0x00, 0x80, 0x83, 0x8F, 0xB0, 0xB1, 0xB2, 0xB3};
	for (size_t i = 0; i < sizeof(all_vpds); i++) {
		sb_inquiry_vpd_cdb(inq, all_vpds[i], 255);
		put_cmd(&s, 1, inq, 6, NULL, 0, 0, 255);
	}
	uint8_t inq_bad[6] = {0x12, 0, 0x83, 0, 96, 0};
	put_cmd(&s, 0, inq_bad, 6, NULL, 0, 0, 96);
	SEED("log-sense-vpd");
	/* REQUEST SENSE, START STOP UNIT, READ CAPACITY(10), MODE SENSE(6) per page and
	 * saved values, READ(12)/WRITE(12), SYNCHRONIZE CACHE(16), READ(6) */
	uint8_t rs[6] = {0x03, 0, 0, 0, 252, 0};
	put_cmd(&s, 0, rs, 6, NULL, 0, 0, 252);
	uint8_t ssu[6] = {0x1B, 0, 0, 0, 0x01, 0};
	put_cmd(&s, 0, ssu, 6, NULL, 0, 0, 0);
	uint8_t rcap10[10] = {0x25};
	put_cmd(&s, 1, rcap10, 10, NULL, 0, 0, 8);
	static const uint8_t mpages[] = {0x08, 0x0A, 0x1C, 0x3F, 0x08 | 0xC0, 0x19};
	for (size_t i = 0; i < sizeof(mpages); i++) {
		uint8_t m6[6] = {0x1A, 0x08, mpages[i], mpages[i] == 0x1C ? 0x02 : 0, 255, 0};
		put_cmd(&s, 0, m6, 6, NULL, 0, 0, 255);
	}
	uint8_t w12[12] = {0xAA, 0, 0, 0, 0x01, 0, 0, 0, 0, 4, 0, 0};
	put_cmd(&s, 0x02, w12, 12, pat, 0x8000 | 4, 16, 0);
	uint8_t r12[12] = {0xA8, 0, 0, 0, 0x01, 0, 0, 0, 0, 4, 0, 0};
	put_cmd(&s, 0, r12, 12, NULL, 0, 0, 0x8000 | 4);
	uint8_t sc16[16] = {0x91};
	put_cmd(&s, 1, sc16, 16, NULL, 0, 0, 0);
	uint8_t r6[6] = {0x08, 0, 1, 0, 4, 0};
	put_cmd(&s, 0, r6, 6, NULL, 0, 0, 0x8000 | 4);
	SEED("spc-more");
	/* Thin over-commitment: LUN 1 (16 MiB) written with WRITE SAME of a pattern until the
	 * pool is full (the soft threshold's unit attention 38h/07h first, then out of space
	 * 27h/07h, SBC-4 4.7.3.6/4.7.3.7), a write to LUN 0, REQUEST SENSE, LBP log page,
	 * then UNMAP of LUN 1 (space back) and a write that succeeds again */
	sb_rw16_cdb(cdb, 0x93, 0, 4096); /* all of it at once: refused, nothing written */
	put_cmd(&s, 0x03, cdb, 16, pat, 0x8000 | 8, 16, 0);
	for (uint64_t lba = 0; lba < 3072; lba += 256) { /* 1 MiB each */
		sb_rw16_cdb(cdb, 0x93, lba, 256);
		put_cmd(&s, 0x03, cdb, 16, pat, 0x8000 | 8, 16, 0);
	}
	sb_rw16_cdb(cdb, 0x8A, 0, 64);
	put_cmd(&s, 0x02, cdb, 16, pat, 0x8000 | 64, 16, 0);
	put_cmd(&s, 0x02, cdb, 16, pat, 0x8000 | 64, 16, 0);
	put_cmd(&s, 0, rs, 6, NULL, 0, 0, 252);
	uint8_t lbp[10] = {0x4D, 0, 0x4C, 0, 0, 0, 0, 0x01, 0, 0};
	put_cmd(&s, 1, lbp, 10, NULL, 0, 0, 256);
	uint8_t um1[10] = {0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0}, ul1[24] = {0};
	scsi_put_be16(ul1, 22);
	scsi_put_be16(ul1 + 2, 16);
	scsi_put_be64(ul1 + 8, 0);
	scsi_put_be32(ul1 + 16, 4096);
	put_cmd(&s, 0x01, um1, 10, ul1, 24, 24, 0);
	put_cmd(&s, 0x02, cdb, 16, pat, 0x8000 | 64, 16, 0);
	SEED("fill-the-pool");
	/* Commands in flight together (flag 04h; a command without it ends the batch):
	 * (a) writes to disjoint blocks, one overlapping another, a READ of blocks none
	 * writes; (b) a COMPARE AND WRITE and a READ of the same blocks beside a disjoint
	 * write; (c) an EXTENDED COPY, a write to LUN 1, an UNMAP and a READ; then all of
	 * LUN 0 read one command at a time */
	uint8_t pats[6][16];
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 16; j++)
			pats[i][j] = (uint8_t)(0x11 * (i + 1) + j);
	for (uint32_t i = 0; i < 6; i++) {
		sb_rw16_cdb(cdb, 0x8A, i * 128, 64);
		put_cmd(&s, 0x06, cdb, 16, pats[i], 0x8000 | 64, 16, 0);
	}
	sb_rw16_cdb(cdb, 0x8A, 32, 64); /* overlaps the first */
	put_cmd(&s, 0x06, cdb, 16, pat, 0x8000 | 64, 16, 0);
	sb_rw16_cdb(cdb, 0x88, 1600, 64);
	put_cmd(&s, 0, cdb, 16, NULL, 0, 0, 0x8000 | 64);
	sb_rw16_cdb(cdb, 0x88, 0, 768); /* alone: checked against the model */
	put_cmd(&s, 0, cdb, 16, NULL, 0, 0, 0x8000 | 768);
	put_cmd(&s, 0x04, caw, 16, cw, 1024, 1024, 0);
	sb_rw16_cdb(cdb, 0x88, 880, 40);
	put_cmd(&s, 0x04, cdb, 16, NULL, 0, 0, 0x8000 | 40);
	sb_rw16_cdb(cdb, 0x8A, 1024, 16);
	put_cmd(&s, 0x02, cdb, 16, pats[5], 0x8000 | 16, 16, 0);
	sb_rw16_cdb(cdb, 0x88, 1024, 16);
	put_cmd(&s, 0, cdb, 16, NULL, 0, 0, 0x8000 | 16);
	sb_xcopy_cdb(cdb, (uint32_t)ll);
	put_cmd(&s, 0x04, cdb, 16, list, (uint16_t)ll, ll, 0);
	sb_rw16_cdb(cdb, 0x8A, 1536, 2);
	put_cmd(&s, 0x07, cdb, 16, pat, 0x8000 | 16, 16, 0);
	put_cmd(&s, 0x04, um, 10, ul, 40, 40, 0);
	sb_rw16_cdb(cdb, 0x88, 0, 512);
	put_cmd(&s, 0, cdb, 16, NULL, 0, 0, 0x8000 | 512);
	for (uint32_t lba = 0; lba < 2048; lba += 512) {
		sb_rw16_cdb(cdb, 0x88, lba, 512);
		put_cmd(&s, 0, cdb, 16, NULL, 0, 0, 0x8000 | 512);
	}
	SEED("in-flight-together");
	return rc;
#undef SEED
}
