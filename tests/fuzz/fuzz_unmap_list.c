/*
 * fuzz_unmap_list: the UNMAP parameter list on its own (issue 24), through its
 * parser (unmap_parse, handlers/unmap.c: what handler_unmap runs first; UNMAP
 * through the ring and the pool is fuzz_cdb's). Fast: no pool.
 *
 * Input: the LU's capacity in blocks (4 bytes, big endian), MAXIMUM UNMAP BLOCK
 * DESCRIPTOR COUNT (1 byte, 0..255) and MAXIMUM UNMAP LBA COUNT (4 bytes), then
 * the parameter list (the data-out received).
 * Checked: a list accepted yields at most MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT
 * descriptors, only non-empty extents, each inside the capacity, together at
 * most MAXIMUM UNMAP LBA COUNT blocks, each one a descriptor of the list as
 * SBC-4 5.31.2 places it; a list refused names one of the three sense codes it
 * may give and a field pointer inside the list.
 * Seeds: the lists the seeded loop and the sim scripts send (tests/sim/vaai_unmap*),
 * and a descriptor one block past the capacity (refused).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scsi_build.h"
#include "seeds.h"
#include "vaaid/handlers.h"
#include "vaaid/scsi.h"

#define HDR 9u

static _Noreturn void finding(const char *what)
{
	fprintf(stderr, "fuzz_unmap_list: FINDING: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR)
		return 0;
	uint64_t nblocks = scsi_get_be32(data);
	uint32_t max_desc = data[4];
	uint64_t max_lbas = scsi_get_be32(data + 5);
	const uint8_t *list = data + HDR;
	size_t len = size - HDR;
	struct unmap_extent *out = malloc((max_desc ? max_desc : 1) * sizeof(*out));
	if (!out)
		return 0;
	size_t n_out = 99999;
	uint16_t asc = 0;
	int field = -2;
	int rc = unmap_parse(list, len, nblocks, max_desc, max_lbas, out, &n_out, &asc, &field);
	if (rc >= 0) {
		if ((uint32_t)rc > max_desc || n_out > (size_t)rc)
			finding("more descriptors than allowed or announced");
		uint64_t total = 0;
		for (size_t i = 0, d = 0; i < n_out; i++) {
			if (!out[i].count || out[i].lba > nblocks || out[i].count > nblocks - out[i].lba)
				finding("an empty extent or one past the capacity");
			total += out[i].count;
			/* It is one of the list's descriptors, in order (SBC-4 5.31.2). */
			while (d < (size_t)rc &&
			       (scsi_get_be64(list + 8 + 16 * d) != out[i].lba ||
				scsi_get_be32(list + 8 + 16 * d + 8) != out[i].count))
				d++;
			if (d++ == (size_t)rc)
				finding("an extent that is not a descriptor of the list");
		}
		if (total > max_lbas)
			finding("more blocks than MAXIMUM UNMAP LBA COUNT");
	} else if ((asc != ASC_PARAM_LIST_LENGTH_ERROR && asc != ASC_INVALID_FIELD_IN_PARAM_LIST &&
		    asc != ASC_LBA_OUT_OF_RANGE) ||
		   field < -1 || (field >= 0 && (size_t)field >= (len > 8 ? len : 8))) {
		finding("a refusal with an unexpected sense code or field pointer");
	}
	free(out);
	return 0;
}

static int seed(const char *dir, const char *name, uint32_t cap, uint8_t max_desc, uint32_t max_lbas,
		const uint64_t *lba, const uint32_t *cnt, unsigned n)
{
	uint8_t in[HDR + 8 + 16 * 16] = {0};
	scsi_put_be32(in, cap);
	in[4] = max_desc;
	scsi_put_be32(in + 5, max_lbas);
	uint8_t *l = in + HDR;
	scsi_put_be16(l, (uint16_t)(6 + 16 * n));
	scsi_put_be16(l + 2, (uint16_t)(16 * n));
	for (unsigned i = 0; i < n; i++) {
		scsi_put_be64(l + 8 + 16 * i, lba[i]);
		scsi_put_be32(l + 16 + 16 * i, cnt[i]);
	}
	return fuzz_write_seed(dir, name, in, HDR + 8 + 16 * n);
}

int fuzz_make_seeds(const char *dir)
{
	/* vaaid's limits (handlers/lun.c): 256 descriptors at most here (one byte) */
	const uint64_t lba[4] = {0, 2048, 8191, 100}, past_lba = 8191;
	const uint32_t cnt[4] = {2048, 0, 1, 7}, past_cnt = 2;
	if (seed(dir, "one", 8192, 255, 0x400000, lba, cnt, 1) < 0 ||
	    seed(dir, "four", 8192, 255, 0x400000, lba, cnt, 4) < 0 ||
	    seed(dir, "at-capacity", 8192, 255, 0x400000, lba + 2, cnt + 2, 1) < 0 ||
	    /* one block past the capacity: refused (21h/00h) */
	    seed(dir, "past-capacity", 8192, 255, 0x400000, &past_lba, &past_cnt, 1) < 0 ||
	    seed(dir, "empty", 8192, 255, 0x400000, lba, cnt, 0) < 0)
		return -1;
	return 0;
}
