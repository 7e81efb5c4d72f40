/*
 * fuzz_caw_data: COMPARE AND WRITE's data-out on its own (issue 24), through the
 * real ring and dispatch on a fresh pool (cdb_session.h).
 *
 * Input: NUMBER OF LOGICAL BLOCKS (1 byte), then the data-out (the verify
 * half and the write half; any length up to 64 KiB: LIO passes what the
 * initiator sent). LUN 0 holds 8 written blocks at LBA 64 (each block: its
 * index + 1 in every byte) and zeros elsewhere; the command is at LBA 64; then
 * a READ of LBA 60..75. The session checks every answer and LUN 0's data model
 * (a GOOD COMPARE AND WRITE writes the second half; MISCOMPARE writes nothing).
 * Seeds: a matching compare of 1 and 8 blocks, a miscompare, a compare past the
 * written blocks (zeros).
 */
#include <string.h>

#include "cdb_session.h"
#include "scsi_build.h"
#include "seeds.h"
#include "vaaid/scsi.h"

#define MAX_OUT (64u << 10)

static void written(uint8_t *b, unsigned nblk)
{
	for (unsigned i = 0; i < nblk; i++)
		memset(b + i * 512, (int)(i + 1), 512);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[MAX_OUT];
	if (size < 1)
		return 0;
	size_t len = size - 1 > MAX_OUT ? MAX_OUT : size - 1;
	static struct cs_scratch x; /* kept across inputs (cdb_session.h) */
	struct cdb_session s;
	cs_open(&s, &x);
	uint8_t cdb[16];
	written(out, 8);
	sb_rw16_cdb(cdb, 0x8A, 64, 8);
	cs_cmd(&s, 0, cdb, 16, out, 8 * 512, 0);
	memcpy(out, data + 1, len);
	uint8_t caw[16] = {0x89};
	scsi_put_be64(caw + 2, 64);
	caw[13] = data[0];
	cs_cmd(&s, 0, caw, 16, out, len, 0);
	sb_rw16_cdb(cdb, 0x88, 60, 16);
	cs_cmd(&s, 0, cdb, 16, NULL, 0, 16 * 512);
	cs_close(&s);
	return 0;
}

int fuzz_make_seeds(const char *dir)
{
	static uint8_t in[1 + 16 * 512];
	int rc = 0;
	for (unsigned n = 1; n <= 8 && rc == 0; n += 7) { /* match */
		in[0] = (uint8_t)n;
		written(in + 1, n);
		memset(in + 1 + n * 512, 0x77, n * 512);
		rc = fuzz_write_seed(dir, n == 1 ? "match-1" : "match-8", in, 1 + 2 * n * 512);
	}
	if (rc == 0) { /* miscompare in the last byte */
		in[0] = 2;
		written(in + 1, 2);
		in[1 + 2 * 512 - 1] ^= 1;
		memset(in + 1 + 2 * 512, 0x66, 2 * 512);
		rc = fuzz_write_seed(dir, "miscompare", in, 1 + 4 * 512);
	}
	return rc;
}
