/*
 * fuzz_write_same_block: WRITE SAME's block and fields on their own (issue 24),
 * through the real ring and dispatch on a fresh pool (cdb_session.h).
 *
 * Input: byte 0: CDB byte 1 (ANCHOR 10h, UNMAP 08h, PBDATA/LBDATA 06h, NDOB 01h);
 * byte 1: 0x01 WRITE SAME(16) (else (10)), 0x02 LUN 1; bytes 2-3: NUMBER OF
 * LOGICAL BLOCKS (big endian); bytes 4-5: LBA (big endian); then the data-out
 * (one block, or any length). LUN 0 has 2 extents written first; after the
 * command a READ of the first 1024 blocks. The session checks every answer,
 * LUN 0's data model (zeros / the block repeated), the guard and the pool.
 * Seeds: zeros with and without UNMAP over whole and partial extents, a
 * pattern, NDOB, the sizes the sim scripts use (tests/sim/vaai_write_same.vsim).
 */
#include <string.h>

#include "cdb_session.h"
#include "scsi_build.h"
#include "seeds.h"
#include "vaaid/scsi.h"

#define MAX_OUT 8192u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[256 * 512];
	if (size < 6)
		return 0;
	size_t len = size - 6 > MAX_OUT ? MAX_OUT : size - 6;
	static struct cs_scratch x; /* kept across inputs (cdb_session.h) */
	struct cdb_session s;
	cs_open(&s, &x);
	uint8_t cdb[16];
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i / 512 + 1);
	sb_rw16_cdb(cdb, 0x8A, 0, 256);
	cs_cmd(&s, 0, cdb, 16, out, sizeof(out), 0);
	memcpy(out, data + 6, len);
	bool sixteen = data[1] & 0x01;
	uint16_t n = (uint16_t)(data[2] << 8 | data[3]), lba = (uint16_t)(data[4] << 8 | data[5]);
	memset(cdb, 0, sizeof(cdb));
	if (sixteen) {
		sb_rw16_cdb(cdb, 0x93, lba, n);
	} else {
		cdb[0] = 0x41;
		scsi_put_be32(cdb + 2, lba);
		scsi_put_be16(cdb + 7, n);
	}
	cdb[1] = data[0];
	cs_cmd(&s, (data[1] & 0x02) ? 1 : 0, cdb, sixteen ? 16 : 10, out, len, 0);
	sb_rw16_cdb(cdb, 0x88, 0, 1024);
	cs_cmd(&s, 0, cdb, 16, NULL, 0, 1024 * 512);
	cs_close(&s);
	return 0;
}

static int seed(const char *dir, const char *name, uint8_t flags, uint8_t kind, uint16_t n,
		uint16_t lba, uint8_t fill)
{
	uint8_t in[6 + 512];
	in[0] = flags;
	in[1] = kind;
	in[2] = (uint8_t)(n >> 8);
	in[3] = (uint8_t)n;
	in[4] = (uint8_t)(lba >> 8);
	in[5] = (uint8_t)lba;
	memset(in + 6, fill, 512);
	return fuzz_write_seed(dir, name, in, (flags & 0x01) ? 6 : sizeof(in));
}

int fuzz_make_seeds(const char *dir)
{
	if (seed(dir, "zeros-unmap-extent", 0x08, 1, 128, 128, 0) < 0 ||
	    seed(dir, "zeros-partial", 0x00, 1, 9, 3, 0) < 0 ||
	    seed(dir, "zeros-unmap-10", 0x08, 0, 200, 20, 0) < 0 ||
	    seed(dir, "pattern", 0x00, 1, 64, 100, 0x5A) < 0 ||
	    seed(dir, "ndob", 0x09, 1, 300, 0, 0) < 0)
		return -1;
	return 0;
}
