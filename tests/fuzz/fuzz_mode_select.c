/*
 * fuzz_mode_select: the MODE SELECT(6)/(10) parameter list on its own (issue 24),
 * through the real ring and dispatch on a fresh pool (cdb_session.h).
 *
 * Input: flags (1 byte: 0x01 MODE SELECT(10), else (6); 0x02 SP; 0x04 PF clear;
 * 0x08 LUN 1), then the parameter list (PARAMETER LIST LENGTH = its length, at
 * most 255 / 4096). After it: MODE SENSE(10) of all pages, a WRITE and a READ of
 * LUN 0 (whatever the caching page now says, data must stay right). The session
 * checks every answer, LUN 0's data model, the guard and the pool's invariants.
 * Seeds: the pages the seeded loop and tests/sim/spc_mode.vsim select: caching
 * (08h, WCE on and off), logical block provisioning (1Ch/02h threshold), a block
 * descriptor, both CDB sizes.
 */
#include <string.h>

#include "cdb_session.h"
#include "scsi_build.h"
#include "seeds.h"
#include "vaaid/scsi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t fl = data[0];
	bool ten = fl & 0x01;
	size_t len = size - 1, max = ten ? 4096 : 255;
	if (len > max)
		len = max;
	uint8_t list[4096], cdb[16] = {0};
	memcpy(list, data + 1, len);
	struct cdb_session s;
	cs_open(&s);
	cdb[0] = ten ? 0x55 : 0x15;
	cdb[1] = (uint8_t)((fl & 0x04 ? 0 : 0x10) | (fl & 0x02 ? 0x01 : 0));
	if (ten)
		scsi_put_be16(cdb + 7, (uint16_t)len);
	else
		cdb[4] = (uint8_t)len;
	cs_cmd(&s, (fl & 0x08) ? 1 : 0, cdb, ten ? 10 : 6, list, len, 0);
	uint8_t ms[10] = {0x5A, 0, 0x3F, 0, 0, 0, 0, 0x10, 0, 0};
	cs_cmd(&s, 0, ms, 10, NULL, 0, 4096);
	uint8_t blk[8 * 512];
	for (size_t i = 0; i < sizeof(blk); i++)
		blk[i] = (uint8_t)(i * 5 + 1);
	sb_rw16_cdb(cdb, 0x8A, 40, 8);
	cs_cmd(&s, 0, cdb, 16, blk, sizeof(blk), 0);
	sb_rw16_cdb(cdb, 0x88, 36, 16);
	cs_cmd(&s, 0, cdb, 16, NULL, 0, 16 * 512);
	cs_close(&s);
	return 0;
}

int fuzz_make_seeds(const char *dir)
{
	uint8_t in[1 + 64];
	int rc = 0;
	for (int ten = 0; ten < 2 && rc == 0; ten++) {
		size_t hdr = ten ? 8 : 4;
		for (int wce = 0; wce < 2 && rc == 0; wce++) { /* caching page 08h */
			memset(in, 0, sizeof(in));
			in[0] = (uint8_t)ten;
			uint8_t *p = in + 1 + hdr;
			p[0] = 0x08;
			p[1] = 0x12;
			p[2] = (uint8_t)(wce << 2);
			rc = fuzz_write_seed(dir, ten ? (wce ? "caching-wce-10" : "caching-10")
						  : (wce ? "caching-wce-6" : "caching-6"),
					     in, 1 + hdr + 20);
		}
		if (rc == 0) { /* logical block provisioning 1Ch/02h: a threshold descriptor */
			memset(in, 0, sizeof(in));
			in[0] = (uint8_t)ten;
			uint8_t *p = in + 1 + hdr;
			p[0] = 0x5C;
			p[1] = 0x02;
			scsi_put_be16(p + 2, 12);
			p[4] = 0x01; /* SITUA */
			p[8] = 0x80; /* ENABLED */
			p[9] = 0x01; /* soft threshold, increasing */
			scsi_put_be32(p + 12, 16);
			rc = fuzz_write_seed(dir, ten ? "lbp-threshold-10" : "lbp-threshold-6", in,
					     1 + hdr + 16);
		}
	}
	if (rc == 0) { /* a short block descriptor (block length 512) before the caching page */
		memset(in, 0, sizeof(in));
		in[0] = 0;
		in[1 + 3] = 8;
		in[1 + 4 + 6] = 0x02;
		uint8_t *p = in + 1 + 12;
		p[0] = 0x08;
		p[1] = 0x12;
		rc = fuzz_write_seed(dir, "block-descriptor-6", in, 1 + 12 + 20);
	}
	return rc;
}
