/*
 * COMPARE AND WRITE on a 512-byte-block volume writes whole 4 KiB granules
 * (vvol_compare_write): through the real ring and engine (simhost, io_uring
 * on a pool file), 512-byte CAWs inside a granule, across two granules and at
 * the end of a volume whose size is not a multiple of 4 KiB must
 *  - compare and write exactly the command's blocks (the neighbours read back
 *    unchanged, a MISCOMPARE's INFORMATION counts from the command's own
 *    verify data, nothing written then),
 *  - and leave the I/O layer's count of writes not aligned to 4 KiB unchanged
 *    (vblk_stats.unaligned_writes), except at that volume end, where the
 *    granule is cut by the end of the volume.
 * A plain 512-byte WRITE overwriting in place must raise that count: the check
 * can see what it looks for.
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

#define BS 512u
#define VOL_BLOCKS (16384u + 3u) /* 8 MiB + 1.5 KiB: the last granule is cut short */

struct res {
	int status;
	uint8_t sense[32];
	uint8_t data[16 * BS];
};

/* One command, waited for. */
static void run(struct simhost *h, const uint8_t *cdb, size_t cdb_len, const uint8_t *out,
		size_t out_len, size_t in_len, struct res *r)
{
	struct simhost_result x;
	test_cmd(h, cdb, cdb_len, out, out_len, in_len, &x);
	r->status = x.r.status;
	memcpy(r->sense, x.r.sense, sizeof(r->sense));
	if (in_len) {
		assert_true(in_len <= sizeof(r->data));
		memcpy(r->data, x.r.data_in, in_len);
	}
	simhost_result_free(&x);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void write10(struct simhost *h, uint32_t lba, uint16_t n, const uint8_t *data)
{
	uint8_t cdb[10] = {0x2a};
	put32(cdb + 2, lba);
	cdb[7] = (uint8_t)(n >> 8);
	cdb[8] = (uint8_t)n;
	struct res r;
	run(h, cdb, sizeof(cdb), data, (size_t)n * BS, 0, &r);
	assert_int_equal(r.status, 0);
}

static void read10(struct simhost *h, uint32_t lba, uint16_t n, uint8_t *data)
{
	uint8_t cdb[10] = {0x28};
	put32(cdb + 2, lba);
	cdb[7] = (uint8_t)(n >> 8);
	cdb[8] = (uint8_t)n;
	static struct res r;
	run(h, cdb, sizeof(cdb), NULL, 0, (size_t)n * BS, &r);
	assert_int_equal(r.status, 0);
	memcpy(data, r.data, (size_t)n * BS);
}

/* COMPARE AND WRITE (SBC-4 5.3) of nolb blocks at lba: verify instance, then write instance. */
static void caw(struct simhost *h, uint32_t lba, uint8_t nolb, const uint8_t *verify,
		const uint8_t *write, struct res *r)
{
	uint8_t cdb[16] = {0x89};
	put32(cdb + 6, lba);
	cdb[13] = nolb;
	uint8_t out[2 * 2 * BS];
	assert_true(nolb <= 2);
	memcpy(out, verify, (size_t)nolb * BS);
	memcpy(out + (size_t)nolb * BS, write, (size_t)nolb * BS);
	run(h, cdb, sizeof(cdb), out, 2u * nolb * BS, 0, r);
}

static void fill(uint8_t *b, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed + i * 7u + i / BS);
}

static uint64_t unaligned(struct simhost *h) { return simhost_blk_stats(h).unaligned_writes; }

static void test_caw_whole_granules(void **state)
{
	(void)state;
	char path[512];
	struct vpool_params prm = {0};
	struct simhost *h = test_pool_create("caw_aligned", 64u << 20, &prm, path, sizeof(path));
	/* plain writes in place as they are where unaligned writes do not stall (a pool file
	 * on ext4 under Linux < 6.4 would write them whole: test_simhost_whole_granules.c) */
	assert_int_equal(simhost_whole_granules(h, 0), 0);
	assert_int_equal(simhost_volume_create(h, "v", (uint64_t)VOL_BLOCKS * BS, BS), 0);
	assert_int_equal(simhost_attach(h, "v", 0), 0);

	/* LBA 0-15 (granules 0 and 1) and the last 3 LBAs written, then a clean reopen:
	 * the checkpoint makes later writes there plain in-place overwrites. */
	static uint8_t want[16 * BS], tail[3 * BS], got[16 * BS];
	fill(want, sizeof(want), 1);
	fill(tail, sizeof(tail), 99);
	write10(h, 0, 16, want);
	write10(h, VOL_BLOCKS - 3, 3, tail);
	assert_int_equal(simhost_reopen(h), 0);
	uint64_t u0 = unaligned(h);
	uint64_t w0 = simhost_blk_stats(h).write_ops;

	/* Inside granule 0: LBA 3. */
	uint8_t nb[2 * BS];
	fill(nb, sizeof(nb), 50);
	struct res r;
	caw(h, 3, 1, want + 3 * BS, nb, &r);
	assert_int_equal(r.status, 0);
	memcpy(want + 3 * BS, nb, BS);
	/* Across granules 0 and 1: LBA 7-8. */
	fill(nb, sizeof(nb), 60);
	caw(h, 7, 2, want + 7 * BS, nb, &r);
	assert_int_equal(r.status, 0);
	memcpy(want + 7 * BS, nb, 2 * BS);
	/* A miscompare at byte 600 of the verify data (LBA 9-10): INFORMATION 600 -- from the
	 * command's data, not from the granule's start -- and nothing written. */
	uint8_t v[2 * BS];
	memcpy(v, want + 9 * BS, sizeof(v));
	v[600] ^= 0xff;
	caw(h, 9, 2, v, nb, &r);
	assert_int_equal(r.status, 2);
	assert_int_equal(r.sense[2] & 0x0f, 0x0e); /* MISCOMPARE */
	assert_int_equal(r.sense[12], 0x1d); /* MISCOMPARE DURING VERIFY OPERATION, SBC-4 5.3 */
	assert_int_equal(r.sense[13], 0x00);
	assert_int_equal(r.sense[0] & 0x80, 0x80); /* VALID */
	assert_int_equal((uint32_t)r.sense[3] << 24 | (uint32_t)r.sense[4] << 16 |
				 (uint32_t)r.sense[5] << 8 | r.sense[6],
			 600);
	read10(h, 0, 16, got);
	assert_memory_equal(got, want, sizeof(want));
	assert_true(simhost_blk_stats(h).write_ops > w0); /* the CAWs did write */
	assert_int_equal(unaligned(h), u0);               /* ... whole granules only */

	/* The last LBA: its granule is cut by the end of the volume, so the write there
	 * cannot be whole; it still compares and writes exactly that block. */
	fill(nb, sizeof(nb), 70);
	caw(h, VOL_BLOCKS - 1, 1, tail + 2 * BS, nb, &r);
	assert_int_equal(r.status, 0);
	memcpy(tail + 2 * BS, nb, BS);
	read10(h, VOL_BLOCKS - 3, 3, got);
	assert_memory_equal(got, tail, sizeof(tail));

	/* The counter sees unaligned writes: a plain 512-byte overwrite in place. */
	uint64_t u1 = unaligned(h);
	fill(nb, sizeof(nb), 80);
	write10(h, 5, 1, nb);
	memcpy(want + 5 * BS, nb, BS);
	assert_int_equal(unaligned(h), u1 + 1);

	/* Durable: everything acknowledged is there after a reopen. */
	assert_int_equal(simhost_reopen(h), 0);
	read10(h, 0, 16, got);
	assert_memory_equal(got, want, sizeof(want));
	read10(h, VOL_BLOCKS - 3, 3, got);
	assert_memory_equal(got, tail, sizeof(tail));
	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_caw_whole_granules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
