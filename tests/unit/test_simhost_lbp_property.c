/*
 * Random sub-granule UNMAP / WRITE SAME / WRITE property test through the real
 * ring and engine (simhost), against an in-memory model of every LBA.
 *
 * A 2 MiB volume of 512-byte blocks on 64 KiB extents gets random WRITEs
 * (random bytes), UNMAPs and WRITE SAME(16) of a zero block (UNMAP bit or not),
 * at random LBAs and lengths that mostly do not line up with 4 KiB granules or
 * extents. The model: a WRITE sets the LBAs' bytes; a zero WRITE SAME makes them
 * zero; so does an UNMAP (fully covered 4 KiB granules deallocated, the named
 * LBAs of partly covered granules written with zeros, LBPRZ=1; nothing here is
 * shared and the pool never runs full: no advisory exception). After each
 * operation every LBA must read exactly as the model says, and GET LBA STATUS
 * must agree with what reads return: an LBA reported deallocated reads zeros
 * (LBPRZ=1); a mapped one holds the last data written (the model's bytes). The
 * run ends with a reopen and the same check. Seeded and reproducible. Run twice:
 * as detected for the pool file, and with whole-granule writes in place forced on
 * (what a store that serializes unaligned direct writes gets, datapath.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "simhost_test_env.h"
#include "vaaid/rng.h"
#include "vaaid/scsi.h"

#define BS 512u
#define NBLK 4096u /* 2 MiB */
#define GRAN_BLK 8u
#define OPS 300

static uint8_t model[NBLK * BS];
static uint64_t rng = 12345;

static uint64_t rnd(void) { return vrng_next(&rng); }

/* Run one command; returns its status, copies data-in into in (if any). */
static int run(struct simhost *h, const uint8_t *cdb, size_t cdb_len, const void *out,
	       size_t out_len, void *in, size_t in_len)
{
	struct simhost_result r;
	test_cmd(h, cdb, cdb_len, out, out_len, in_len, &r);
	int st = r.r.status;
	if (in && r.r.data_in)
		memcpy(in, r.r.data_in, r.r.data_in_len < in_len ? r.r.data_in_len : in_len);
	if (st)
		fprintf(stderr, "sense %02x/%02x/%02x\n", r.r.sense[2] & 0x0F, r.r.sense[12],
			r.r.sense[13]);
	simhost_result_free(&r);
	return st;
}

static void do_write(struct simhost *h, uint32_t lba, uint32_t n)
{
	uint8_t cdb[16] = {0x8A};
	scsi_put_be64(cdb + 2, lba);
	scsi_put_be32(cdb + 10, n);
	for (uint32_t i = 0; i < n * BS; i++)
		model[lba * BS + i] = (uint8_t)(rnd() | 1); /* never zero: zeros are the other state */
	assert_int_equal(run(h, cdb, 16, model + lba * BS, n * BS, NULL, 0), 0);
}

static void do_write_same_zero(struct simhost *h, uint32_t lba, uint32_t n, bool unmap)
{
	uint8_t cdb[16] = {0x93, (uint8_t)(unmap ? 0x08 : 0)};
	scsi_put_be64(cdb + 2, lba);
	scsi_put_be32(cdb + 10, n);
	static const uint8_t zero[BS];
	memset(model + lba * BS, 0, n * BS);
	assert_int_equal(run(h, cdb, 16, zero, BS, NULL, 0), 0);
}

static void do_unmap(struct simhost *h, uint32_t lba, uint32_t n)
{
	uint8_t cdb[10] = {0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0};
	uint8_t pl[24] = {0, 22, 0, 16};
	scsi_put_be64(pl + 8, lba);
	scsi_put_be32(pl + 16, n);
	/* model: every named LBA reads zeros (partly covered granules get zeros written) */
	memset(model + lba * BS, 0, n * BS);
	assert_int_equal(run(h, cdb, 10, pl, sizeof(pl), NULL, 0), 0);
}

static bool block_zero(const uint8_t *b)
{
	for (uint32_t i = 0; i < BS; i++)
		if (b[i])
			return false;
	return true;
}

static void check_all(struct simhost *h, int op)
{
	static uint8_t data[NBLK * BS];
	for (uint32_t lba = 0; lba < NBLK; lba += 2048) {
		uint8_t cdb[16] = {0x88};
		scsi_put_be64(cdb + 2, lba);
		scsi_put_be32(cdb + 10, 2048);
		assert_int_equal(run(h, cdb, 16, NULL, 0, data + lba * BS, 2048 * BS), 0);
	}
	for (uint32_t b = 0; b < NBLK; b++)
		if (memcmp(data + b * BS, model + b * BS, BS)) {
			fprintf(stderr, "op %d: LBA %u reads other data than the model\n", op, b);
			fail();
		}
	/* GET LBA STATUS over the whole volume: deallocated LBAs must read zeros. */
	uint32_t lba = 0;
	while (lba < NBLK) {
		uint8_t cdb[16] = {0x9E, 0x12};
		uint8_t resp[4096];
		scsi_put_be64(cdb + 2, lba);
		scsi_put_be32(cdb + 10, sizeof(resp));
		assert_int_equal(run(h, cdb, 16, NULL, 0, resp, sizeof(resp)), 0);
		uint32_t len = scsi_get_be32(resp);
		assert_true(len >= 4 + 16);
		uint32_t nd = (len - 4) / 16;
		assert_true(nd > 0);
		for (uint32_t d = 0; d < nd && 8 + 16 * d + 16 <= sizeof(resp); d++) {
			const uint8_t *e = resp + 8 + 16 * d;
			uint64_t start = scsi_get_be64(e);
			uint32_t cnt = scsi_get_be32(e + 8);
			uint8_t status = e[12] & 0x0F;
			assert_true(start == lba); /* descriptors are contiguous from the start */
			assert_true(cnt > 0 && start + cnt <= NBLK);
			assert_true(status == 0 || status == 1);
			for (uint64_t b = start; b < start + cnt; b++)
				if (status == 1 && !block_zero(data + b * BS)) {
					fprintf(stderr, "op %d: LBA %llu deallocated but not zeros\n", op,
						(unsigned long long)b);
					fail();
				}
			lba = (uint32_t)(start + cnt);
		}
	}
}

static uint32_t rand_len(uint32_t lba)
{
	uint32_t max = NBLK - lba, n;
	switch (rnd() % 4) {
	case 0: n = 1 + (uint32_t)(rnd() % 7); break;       /* inside a granule */
	case 1: n = 1 + (uint32_t)(rnd() % 40); break;      /* a few granules */
	case 2: n = 1 + (uint32_t)(rnd() % 300); break;     /* across an extent edge */
	default: n = 1 + (uint32_t)(rnd() % 1500); break;   /* several extents */
	}
	return n < max ? n : max;
}

/* whole: write whole granules in place (as on a store that serializes unaligned writes) */
static void lbp_property(int whole)
{
	char path[512];
	struct vpool_params prm = {.extent_size = 64u << 10};
	struct simhost *h = test_pool_create("lbp_property", 32u << 20, &prm, path, sizeof(path));
	assert_int_equal(simhost_whole_granules(h, whole), 0);
	assert_int_equal(simhost_volume_create(h, "v", NBLK * BS, BS), 0);
	assert_int_equal(simhost_attach(h, "v", 0), 0);
	memset(model, 0, sizeof(model));
	unsigned counts[4] = {0};
	for (int op = 0; op < OPS; op++) {
		uint32_t lba = (uint32_t)(rnd() % NBLK);
		uint32_t n = rand_len(lba);
		unsigned kind = (unsigned)(rnd() % 4);
		counts[kind]++;
		switch (kind) {
		case 0: do_write(h, lba, n); break;
		case 1: do_unmap(h, lba, n); break;
		case 2: do_write_same_zero(h, lba, n, true); break;
		default: do_write_same_zero(h, lba, n, false); break;
		}
		check_all(h, op);
	}
	assert_int_equal(simhost_reopen(h), 0);
	check_all(h, OPS);
	assert_int_equal(simhost_verify(h, stderr), 0);
	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
	printf("lbp property: %d ops (write %u, unmap %u, write same unmap %u, write same %u)\n",
	       OPS, counts[0], counts[1], counts[2], counts[3]);
}

static void test_lbp_property(void **state)
{
	(void)state;
	lbp_property(-1);
}

static void test_lbp_property_whole_granules(void **state)
{
	(void)state;
	lbp_property(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lbp_property),
		cmocka_unit_test(test_lbp_property_whole_granules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
