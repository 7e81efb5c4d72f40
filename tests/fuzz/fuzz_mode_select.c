/*
 * fuzz_mode_select: the MODE SELECT(6)/(10) parameter list on its own (issue 24),
 * through the real ring and dispatch on a fresh pool (cdb_session.h).
 *
 * Input: flags (1 byte: 0x01 MODE SELECT(10), else (6); 0x02 SP; 0x04 PF clear;
 * 0x08 LUN 1), then the parameter list (PARAMETER LIST LENGTH = its length, at
 * most 255 / 4096). After it: MODE SENSE(10) of all pages and subpages, a WRITE
 * and a READ of LUN 0 (whatever the caching page now says, data must stay right).
 * The session checks every answer, LUN 0's data model, the guard and the pool's
 * invariants; and a GOOD MODE SELECT must have taken the list (SPC-4 6.9: the
 * parameters are set): the list is whole pages after the header and block
 * descriptor, and MODE SENSE returns each page with the bytes sent (from byte 2
 * on: byte 0's PS is reserved in MODE SELECT).
 * Seeds: the pages the seeded loop and tests/sim/spc_mode.vsim select: caching
 * (08h, WCE on and off), logical block provisioning (1Ch/02h threshold), a block
 * descriptor, both CDB sizes, the caching page of the wrong (SCSI-2) length.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdb_session.h"
#include "scsi_build.h"
#include "seeds.h"
#include "vaaid/scsi.h"

static _Noreturn void finding(const char *what, size_t off)
{
	fprintf(stderr, "fuzz_mode_select: FINDING: %s (the page at byte %zu of the list)\n", what, off);
	abort();
}

/* The page (code, sub) in MODE SENSE(10)'s answer b (n bytes), its length in *len. */
static const uint8_t *sensed_page(const uint8_t *b, size_t n, uint8_t code, uint8_t sub, size_t *len)
{
	if (n < 8)
		return NULL;
	size_t end = 2 + (size_t)scsi_get_be16(b), off = 8 + scsi_get_be16(b + 6);
	if (end > n)
		end = n;
	while (off + 2 <= end) {
		bool spf = b[off] & 0x40;
		size_t ph = spf ? 4 : 2;
		if (off + ph > end)
			return NULL;
		size_t plen = spf ? scsi_get_be16(b + off + 2) : b[off + 1];
		if ((b[off] & 0x3F) == code && (spf ? b[off + 1] : 0) == sub) {
			*len = ph + plen;
			return off + ph + plen <= end ? b + off : NULL;
		}
		off += ph + plen;
	}
	return NULL;
}

/* A GOOD MODE SELECT: every page of list (len bytes) is what MODE SENSE now returns. */
static void check_taken(const uint8_t *list, size_t len, bool ten, const uint8_t *sense, size_t slen)
{
	size_t hdr = ten ? 8 : 4;
	if (len < hdr)
		finding("GOOD for a list shorter than its header", 0);
	size_t off = hdr + (ten ? scsi_get_be16(list + 6) : list[3]);
	if (off > len)
		finding("GOOD for a list shorter than its block descriptors", 0);
	while (off < len) {
		bool spf = list[off] & 0x40;
		size_t ph = spf ? 4 : 2;
		if (off + ph > len)
			finding("GOOD for a list ending inside a page header", off);
		size_t plen = spf ? scsi_get_be16(list + off + 2) : list[off + 1], got = 0;
		if (off + ph + plen > len)
			finding("GOOD for a list ending inside a page", off);
		const uint8_t *p = sensed_page(sense, slen, list[off] & 0x3F, spf ? list[off + 1] : 0, &got);
		if (!p)
			finding("GOOD for a page MODE SENSE does not return", off);
		if (got != ph + plen || memcmp(p + 2, list + off + 2, ph + plen - 2))
			finding("GOOD, but MODE SENSE returns other values than the page sent", off);
		off += ph + plen;
	}
}

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
	static struct cs_scratch x; /* kept across inputs (cdb_session.h) */
	struct cdb_session s;
	cs_open(&s, &x);
	cdb[0] = ten ? 0x55 : 0x15;
	cdb[1] = (uint8_t)((fl & 0x04 ? 0 : 0x10) | (fl & 0x02 ? 0x01 : 0));
	if (ten)
		scsi_put_be16(cdb + 7, (uint16_t)len);
	else
		cdb[4] = (uint8_t)len;
	int lun = (fl & 0x08) ? 1 : 0;
	int st = cs_cmd(&s, lun, cdb, ten ? 10 : 6, list, len, 0);
	uint8_t ms[10] = {0x5A, 0, 0x3F, 0xFF, 0, 0, 0, 0x10, 0, 0};
	if (cs_cmd(&s, lun, ms, 10, NULL, 0, 4096) == SAM_STAT_GOOD && st == SAM_STAT_GOOD && len &&
	    !(fl & 0x04))
		check_taken(list, len, ten, s.last_in, s.last_in_len);
	if (lun)
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
	if (rc == 0) { /* the caching page with SCSI-2's length (0Ah, not 12h): refused */
		memset(in, 0, sizeof(in));
		uint8_t *p = in + 1 + 4;
		p[0] = 0x08;
		p[1] = 0x0A;
		rc = fuzz_write_seed(dir, "caching-short-6", in, 1 + 4 + 12);
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
