/*
 * Whole-granule writes in place (datapath.c, whole_granules()): on a store
 * that serializes unaligned direct writes (ext4 before Linux 6.4, struct vblk
 * unaligned_writes_serialize), a write that covers part of a 4 KiB granule
 * reads the granule first and writes it whole, under the extent's exclusive
 * lock. Through the real ring and engine (simhost, io_uring), with the mode
 * forced on (this host's kernel may not need it):
 *  - 512-byte overwrites inside a granule and a write with partial granules at
 *    both ends read back exactly (neighbours unchanged) and add no unaligned
 *    write to the I/O layer's count (vblk_stats.unaligned_writes);
 *  - a write into an extent with a never-written granule next to a written
 *    one: the written neighbour keeps its data, the never-written part reads
 *    zeros, and nothing unaligned is written;
 *  - 8 writes to the 8 sectors of one granule, all in flight at once, repeated:
 *    every sector holds its own write afterwards (no read-modify-write lost
 *    another's sector), also with whole-granule writes of the neighbours and
 *    reads in flight;
 * and with the mode off the same 512-byte overwrite is written unaligned (the
 * check sees what it looks for).
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
#include "vaaid/scsi.h"

#define BS 512u
#define GRAN 4096u
#define VOL_BLOCKS 8192u /* 4 MiB */

static uint64_t unaligned(struct simhost *h) { return simhost_blk_stats(h).unaligned_writes; }

static void fill(uint8_t *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed * 31u + i * 7u + i / BS + 1u);
}

static void write16(struct simhost *h, uint64_t lba, uint32_t n, const uint8_t *data)
{
	uint8_t cdb[16] = {0x8A};
	scsi_put_be64(cdb + 2, lba);
	scsi_put_be32(cdb + 10, n);
	struct simhost_result r;
	test_cmd(h, cdb, 16, data, (size_t)n * BS, 0, &r);
	assert_int_equal(r.r.status, 0);
	simhost_result_free(&r);
}

static void read16(struct simhost *h, uint64_t lba, uint32_t n, uint8_t *data)
{
	uint8_t cdb[16] = {0x88};
	scsi_put_be64(cdb + 2, lba);
	scsi_put_be32(cdb + 10, n);
	struct simhost_result r;
	test_cmd(h, cdb, 16, NULL, 0, (size_t)n * BS, &r);
	assert_int_equal(r.r.status, 0);
	memcpy(data, r.r.data_in, (size_t)n * BS);
	simhost_result_free(&r);
}

/* UNMAP of n blocks at lba (one descriptor). */
static void unmap(struct simhost *h, uint64_t lba, uint32_t n)
{
	uint8_t cdb[10] = {0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0};
	uint8_t pl[24] = {0, 22, 0, 16};
	scsi_put_be64(pl + 8, lba);
	scsi_put_be32(pl + 16, n);
	struct simhost_result r;
	test_cmd(h, cdb, 10, pl, sizeof(pl), 0, &r);
	assert_int_equal(r.r.status, 0);
	simhost_result_free(&r);
}

struct env {
	struct simhost *h;
	char path[512];
	uint8_t *model; /* what the first MiB should read as */
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	assert_non_null(e);
	struct vpool_params prm = {.extent_size = 64u << 10};
	e->h = test_pool_create("whole_granules", 32u << 20, &prm, e->path, sizeof(e->path));
	assert_int_equal(simhost_volume_create(e->h, "v", (uint64_t)VOL_BLOCKS * BS, BS), 0);
	assert_int_equal(simhost_attach(e->h, "v", 0), 0);
	assert_int_equal(simhost_whole_granules(e->h, 1), 0);
	e->model = malloc(1u << 20);
	assert_non_null(e->model);
	fill(e->model, 1u << 20, 1);
	write16(e->h, 0, (1u << 20) / BS, e->model); /* aligned: every granule written */
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	assert_int_equal(simhost_close(e->h), 0);
	simhost_remove_pool(e->path);
	free(e->model);
	free(e);
	return 0;
}

static void check_model(struct env *e, uint64_t lba, uint32_t n)
{
	uint8_t *got = malloc((size_t)n * BS);
	assert_non_null(got);
	read16(e->h, lba, n, got);
	assert_memory_equal(got, e->model + lba * BS, (size_t)n * BS);
	free(got);
}

static void test_partial_overwrites_whole(void **state)
{
	struct env *e = *state;
	uint64_t before = unaligned(e->h);
	uint8_t buf[16 * BS];
	/* one sector inside a granule */
	fill(buf, BS, 2);
	write16(e->h, 3, 1, buf);
	memcpy(e->model + 3 * BS, buf, BS);
	/* partial granules at both ends (blocks 13..28: granule 1 from its sector 5,
	 * granule 2 whole, granule 3 up to its sector 4) */
	fill(buf, 16 * BS, 3);
	write16(e->h, 13, 16, buf);
	memcpy(e->model + 13 * BS, buf, 16 * BS);
	/* a partial write in another extent */
	fill(buf, 3 * BS, 4);
	write16(e->h, 200 * 8 + 2, 3, buf);
	memcpy(e->model + (200 * 8 + 2) * BS, buf, 3 * BS);
	check_model(e, 0, 2048);
	assert_true(unaligned(e->h) == before);
}

/* A never-written granule next to a written one, one write across both. */
static void test_validate_pads(void **state)
{
	struct env *e = *state;
	uint64_t base = 512; /* the start of extent 4 (64 KiB extents: 128 blocks each) */
	unmap(e->h, base + 8, 8); /* granule 1 of that range: not valid any more */
	memset(e->model + (base + 8) * BS, 0, 8 * BS);
	uint64_t before = unaligned(e->h);
	uint8_t buf[5 * BS];
	fill(buf, sizeof(buf), 5);
	write16(e->h, base + 6, 5, buf); /* sectors 6-7 of the written granule, 0-2 of the other */
	memcpy(e->model + (base + 6) * BS, buf, sizeof(buf));
	check_model(e, base, 24);
	assert_true(unaligned(e->h) == before);
}

/* 8 writes to the sectors of one granule in flight at once: none lost. */
static void test_concurrent_sectors(void **state)
{
	struct env *e = *state;
	struct simhost *h = e->h;
	uint8_t sect[8][BS], neigh[GRAN], rd[GRAN];
	for (unsigned round = 0; round < 200; round++) {
		uint64_t g = 64 + (round % 4) * 2; /* granules 64, 66, 68, 70 */
		uint64_t tags[11];
		unsigned nt = 0;
		for (unsigned k = 0; k < 8; k++) {
			fill(sect[k], BS, round * 8 + k + 10);
			uint8_t cdb[16] = {0x8A};
			scsi_put_be64(cdb + 2, g * 8 + k);
			scsi_put_be32(cdb + 10, 1);
			assert_int_equal(simhost_submit(h, 0, cdb, 16, sect[k], BS, 0, &tags[nt++]), 0);
			memcpy(e->model + (g * 8 + k) * BS, sect[k], BS);
			if (k == 3) { /* a whole-granule write of the next granule, and a read of this one */
				fill(neigh, GRAN, round + 7);
				uint8_t w[16] = {0x8A};
				scsi_put_be64(w + 2, (g + 1) * 8);
				scsi_put_be32(w + 10, 8);
				assert_int_equal(simhost_submit(h, 0, w, 16, neigh, GRAN, 0, &tags[nt++]), 0);
				memcpy(e->model + (g + 1) * 8 * BS, neigh, GRAN);
				uint8_t r[16] = {0x88};
				scsi_put_be64(r + 2, g * 8);
				scsi_put_be32(r + 10, 8);
				assert_int_equal(simhost_submit(h, 0, r, 16, NULL, 0, GRAN, &tags[nt++]), 0);
			}
		}
		for (unsigned got = 0; got < nt;) {
			struct simhost_result r;
			int n = simhost_reap(h, &r, 1, 10000);
			assert_true(n >= 0);
			if (n == 0)
				continue;
			assert_int_equal(r.r.status, 0);
			simhost_result_free(&r);
			got++;
		}
		read16(h, g * 8, 8, rd);
		assert_memory_equal(rd, e->model + g * 8 * BS, GRAN);
	}
	check_model(e, 0, 2048);
}

/* With the mode off the same overwrite goes in place, unaligned. */
static void test_mode_off_unaligned(void **state)
{
	struct env *e = *state;
	assert_int_equal(simhost_whole_granules(e->h, 0), 0);
	uint64_t before = unaligned(e->h);
	uint8_t buf[BS];
	fill(buf, BS, 9);
	write16(e->h, 11, 1, buf);
	memcpy(e->model + 11 * BS, buf, BS);
	check_model(e, 0, 64);
	assert_true(unaligned(e->h) == before + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_partial_overwrites_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_validate_pads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_sectors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mode_off_unaligned, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
