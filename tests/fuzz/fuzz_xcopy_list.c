/*
 * fuzz_xcopy_list: the EXTENDED COPY(LID1) parameter list on its own (issue 24),
 * through the real ring and dispatch on a fresh pool (cdb_session.h).
 *
 * Input: flags (1 byte: 0x01 the LUN receiving the command is LUN 1, else
 * LUN 0), then the parameter list (PARAMETER LIST LENGTH = its length). Before
 * it, LUN 0 holds 256 written blocks and LUN 1 32; after it, RECEIVE COPY
 * RESULTS (COPY STATUS of the list's identifier, OPERATING PARAMETERS). The
 * session checks every answer, LUN 0's data model (cm_xcopy: a copy within
 * LUN 0 is followed, one from LUN 1 into it makes the blocks unknown), the guard LUN (which a copy must never reach: another
 * visibility group) and the pool's invariants.
 * Identification CSCD descriptors name the LUNs by placeholder (CS_NAA_LUN).
 * Seeds: lists as ESXi and sg_xcopy build them (sb_xcopy_list): LUN 0 -> LUN 1,
 * within LUN 0 (overlapping, not overlapping, two segments the second copying
 * what the first wrote; received by LUN 1), LUN 1 -> LUN 0 counting destination blocks, to
 * the guard, to an unknown LU, several segments.
 */
#include <stdio.h>
#include <string.h>

#include "cdb_session.h"
#include "scsi_build.h"
#include "seeds.h"
#include "vaaid/handlers.h"
#include "vaaid/scsi.h"

#define MAX_LIST 4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[256 * 512];
	if (size < 1)
		return 0;
	size_t len = size - 1 > MAX_LIST ? MAX_LIST : size - 1;
	static struct cs_scratch x; /* kept across inputs (cdb_session.h) */
	struct cdb_session s;
	cs_open(&s, &x);
	uint8_t cdb[16];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i / 512 + i * 3);
	sb_rw16_cdb(cdb, 0x8A, 0, 256);
	cs_cmd(&s, 0, cdb, 16, buf, 256 * 512, 0);
	sb_rw16_cdb(cdb, 0x8A, 0, 32);
	cs_cmd(&s, 1, cdb, 16, buf, 32 * 4096 > sizeof(buf) ? sizeof(buf) : 32 * 4096, 0);
	uint8_t list[MAX_LIST];
	memcpy(list, data + 1, len);
	sb_xcopy_cdb(cdb, (uint32_t)len);
	int lun = data[0] & 0x01;
	cs_cmd(&s, lun, cdb, 16, list, len, 0);
	uint8_t rcr[16] = {0x84, 0x00, len ? list[0] : 0};
	scsi_put_be32(rcr + 10, 256);
	cs_cmd(&s, lun, rcr, 16, NULL, 0, 256);
	rcr[1] = 0x03;
	cs_cmd(&s, lun, rcr, 16, NULL, 0, 256);
	cs_close(&s);
	return 0;
}

static int seed(const char *dir, const char *name, uint8_t fl, const struct sb_cscd *c, unsigned nc,
		const struct sb_segment *sg, unsigned ns)
{
	uint8_t in[1 + MAX_LIST];
	in[0] = fl;
	size_t n = sb_xcopy_list(in + 1, MAX_LIST, 1, SB_LIST_ID_NONE, c, nc, sg, ns);
	return n ? fuzz_write_seed(dir, name, in, 1 + n) : -1;
}

int fuzz_make_seeds(const char *dir)
{
	struct sb_cscd c[4] = {{.block_size = 512}, {.block_size = 4096}, {.block_size = 512},
			       {.block_size = 512}};
	for (int l = 0; l < 3; l++)
		memset(c[l].naa, CS_NAA_LUN(l), 16);
	memset(c[3].naa, 0x61, 16); /* no such LU */
	struct sb_segment s01 = {.src = 0, .dst = 1, .nblocks = 128, .src_lba = 0, .dst_lba = 8};
	struct sb_segment s00 = {.src = 0, .dst = 0, .nblocks = 200, .src_lba = 0, .dst_lba = 100};
	struct sb_segment s00b = {.src = 0, .dst = 0, .nblocks = 64, .src_lba = 10, .dst_lba = 300};
	struct sb_segment two00[2] = {s00b, {.src = 0, .dst = 0, .nblocks = 8, .src_lba = 300,
					     .dst_lba = 1000}};
	struct sb_segment s10 = {.src = 1, .dst = 0, .dc = true, .nblocks = 64, .src_lba = 2,
				 .dst_lba = 512};
	struct sb_segment s02 = {.src = 0, .dst = 2, .nblocks = 8, .src_lba = 0, .dst_lba = 0};
	struct sb_segment s03 = {.src = 0, .dst = 3, .nblocks = 8, .src_lba = 0, .dst_lba = 0};
	struct sb_segment many[4] = {s01, s00, s10, s01};
	many[3].dst_lba = 200;
	if (seed(dir, "lun0-to-lun1", 0, c, 2, &s01, 1) < 0 ||
	    seed(dir, "within-lun0-overlap", 0, c, 1, &s00, 1) < 0 ||
	    seed(dir, "within-lun0", 0, c, 1, &s00b, 1) < 0 ||
	    seed(dir, "within-lun0-chained", 1, c, 1, two00, 2) < 0 ||
	    seed(dir, "lun1-to-lun0-dc", 1, c, 2, &s10, 1) < 0 ||
	    seed(dir, "to-guard", 0, c, 3, &s02, 1) < 0 ||
	    seed(dir, "to-unknown-lu", 0, c, 4, &s03, 1) < 0 ||
	    seed(dir, "four-segments", 0, c, 2, many, 4) < 0)
		return -1;
	return 0;
}
