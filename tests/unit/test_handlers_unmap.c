/*
 * Unit tests of UNMAP (handlers/unmap.c): the parameter list parser
 * (unmap_parse; SBC-4 5.31.2): header and length checks, descriptor count
 * and total LBA limits, range checks, incomplete last descriptor, 0-block
 * descriptors, and that an error reports no descriptor to act on; and
 * handler_unmap on a LUN of a real pool (in memory): with LBPRZ=1 every LBA
 * it names reads zeros afterwards -- a partly covered granule of a 512-byte
 * LUN stays mapped with the named LBAs zeroed, a whole 4 KiB block is
 * deallocated -- and GOOD also where the zeros would need new space (a full
 * pool, a shared extent: the LBAs keep their data).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vaaid/handlers.h"
#include "vaaid/lun.h"

#include "pool_test_env.h"

#define NBLOCKS 1000u

struct list {
	uint8_t b[8 + 16 * 8 + 16];
	size_t len;
};

/* A well-formed list of n descriptors; dl/bddl < 0 -> the correct value. */
static void build(struct list *l, const uint64_t *lba, const uint32_t *cnt, size_t n, int dl,
		  int bddl)
{
	memset(l, 0, sizeof(*l));
	l->len = 8 + 16 * n;
	scsi_put_be16(l->b, (uint16_t)(dl < 0 ? (int)l->len - 2 : dl));
	scsi_put_be16(l->b + 2, (uint16_t)(bddl < 0 ? (int)(16 * n) : bddl));
	for (size_t i = 0; i < n; i++) {
		scsi_put_be64(l->b + 8 + 16 * i, lba[i]);
		scsi_put_be32(l->b + 16 + 16 * i, cnt[i]);
	}
}

static int parse(const struct list *l, uint32_t max_desc, uint64_t max_lbas,
		 struct unmap_extent *out, size_t *n, uint16_t *asc, int *field)
{
	*asc = 0;
	return unmap_parse(l->b, l->len, NBLOCKS, max_desc, max_lbas, out, n, asc, field);
}

static void test_good_lists(void **state)
{
	(void)state;
	struct list l;
	struct unmap_extent out[8];
	size_t n;
	uint16_t asc;
	int field;
	/* empty list */
	build(&l, NULL, NULL, 0, -1, -1);
	assert_int_equal(parse(&l, 8, 100, out, &n, &asc, &field), 0);
	assert_int_equal(n, 0);
	/* three descriptors, one of 0 blocks (skipped), one ending at the capacity */
	uint64_t lba[] = {10, 500, NBLOCKS - 5};
	uint32_t cnt[] = {20, 0, 5};
	build(&l, lba, cnt, 3, -1, -1);
	assert_int_equal(parse(&l, 8, 25, out, &n, &asc, &field), 3);
	assert_int_equal(n, 2);
	assert_true(out[0].lba == 10 && out[0].count == 20);
	assert_true(out[1].lba == NBLOCKS - 5 && out[1].count == 5);
	/* a 0-block descriptor at the capacity itself is fine */
	uint64_t lba2[] = {NBLOCKS};
	uint32_t cnt2[] = {0};
	build(&l, lba2, cnt2, 1, -1, -1);
	assert_int_equal(parse(&l, 8, 25, out, &n, &asc, &field), 1);
	assert_int_equal(n, 0);
	/* BLOCK DESCRIPTOR DATA LENGTH not a multiple of 16: the incomplete one is ignored */
	build(&l, lba, cnt, 2, -1, 16 + 12);
	assert_int_equal(parse(&l, 8, 100, out, &n, &asc, &field), 1);
	assert_int_equal(n, 1);
	/* trailing bytes after the descriptors (UNMAP DATA LENGTH larger) are fine */
	build(&l, lba, cnt, 2, -1, 16);
	assert_int_equal(parse(&l, 8, 100, out, &n, &asc, &field), 1);
	/* exactly the limits */
	build(&l, lba, cnt, 3, -1, -1);
	assert_int_equal(parse(&l, 3, 25, out, &n, &asc, &field), 3);
}

static void test_length_errors(void **state)
{
	(void)state;
	struct list l;
	struct unmap_extent out[8];
	size_t n;
	uint16_t asc;
	int field;
	uint64_t lba[] = {1, 2};
	uint32_t cnt[] = {1, 1};
	/* shorter than the header: PARAMETER LIST LENGTH ERROR */
	build(&l, NULL, NULL, 0, -1, -1);
	for (size_t len = 1; len < 8; len++) {
		l.len = len;
		assert_int_equal(parse(&l, 8, 100, out, &n, &asc, &field), -1);
		assert_int_equal(asc, ASC_PARAM_LIST_LENGTH_ERROR);
		assert_int_equal(field, -1);
	}
	/* UNMAP DATA LENGTH says more than was transferred */
	build(&l, lba, cnt, 2, 8 + 32, -1);
	assert_int_equal(parse(&l, 8, 100, out, &n, &asc, &field), -1);
	assert_int_equal(asc, ASC_PARAM_LIST_LENGTH_ERROR);
	/* descriptors beyond UNMAP DATA LENGTH: INVALID FIELD IN PARAMETER LIST at byte 2 */
	build(&l, lba, cnt, 2, 6 + 16, -1);
	assert_int_equal(parse(&l, 8, 100, out, &n, &asc, &field), -1);
	assert_int_equal(asc, ASC_INVALID_FIELD_IN_PARAM_LIST);
	assert_int_equal(field, 2);
	assert_int_equal(n, 0);
	/* UNMAP DATA LENGTH too small for the header: byte 0 */
	build(&l, NULL, NULL, 0, 5, 0);
	assert_int_equal(parse(&l, 8, 100, out, &n, &asc, &field), -1);
	assert_int_equal(asc, ASC_INVALID_FIELD_IN_PARAM_LIST);
	assert_int_equal(field, 0);
}

static void test_limit_and_range_errors(void **state)
{
	(void)state;
	struct list l;
	struct unmap_extent out[8];
	size_t n;
	uint16_t asc;
	int field;
	uint64_t lba[] = {0, 100, 200};
	uint32_t cnt[] = {10, 10, 10};
	/* more descriptors than MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT */
	build(&l, lba, cnt, 3, -1, -1);
	assert_int_equal(parse(&l, 2, 100, out, &n, &asc, &field), -1);
	assert_int_equal(asc, ASC_INVALID_FIELD_IN_PARAM_LIST);
	assert_int_equal(field, 2);
	/* more LBAs in total than MAXIMUM UNMAP LBA COUNT: points at the crossing descriptor's count */
	assert_int_equal(parse(&l, 8, 25, out, &n, &asc, &field), -1);
	assert_int_equal(asc, ASC_INVALID_FIELD_IN_PARAM_LIST);
	assert_int_equal(field, 8 + 2 * 16 + 8);
	assert_int_equal(n, 0); /* nothing to act on after an error */
	/* a descriptor past the capacity, after good ones: LBA OUT OF RANGE, nothing reported */
	uint64_t lba2[] = {0, NBLOCKS - 1, 0};
	uint32_t cnt2[] = {10, 2, 10};
	build(&l, lba2, cnt2, 3, -1, -1);
	assert_int_equal(parse(&l, 8, 100, out, &n, &asc, &field), -1);
	assert_int_equal(asc, ASC_LBA_OUT_OF_RANGE);
	assert_int_equal(field, -1);
	assert_int_equal(n, 0);
	/* LBA + count overflowing 64 bits */
	uint64_t lba3[] = {UINT64_MAX};
	uint32_t cnt3[] = {2};
	build(&l, lba3, cnt3, 1, -1, -1);
	assert_int_equal(parse(&l, 8, 100, out, &n, &asc, &field), -1);
	assert_int_equal(asc, ASC_LBA_OUT_OF_RANGE);
	/* 0 blocks one past the capacity */
	uint64_t lba4[] = {NBLOCKS + 1};
	uint32_t cnt4[] = {0};
	build(&l, lba4, cnt4, 1, -1, -1);
	assert_int_equal(parse(&l, 8, 100, out, &n, &asc, &field), -1);
	assert_int_equal(asc, ASC_LBA_OUT_OF_RANGE);
}

/* ---- handler_unmap on a pool */

#define MIB (1024ull * 1024)
#define EXT (64u * 1024)

struct uenv {
	struct env e;
	struct vvol *v;
	struct scsi_lun lun;
	struct scsi_cmd cmd;
	uint8_t cdb[10];
	uint8_t list[24];
	struct iovec iov;
	struct wait w;
};

static void uenv_done(struct scsi_cmd *c) { done_cb(c->transport_priv, 0); }

static void uenv_open(struct uenv *u, uint32_t block)
{
	memset(u, 0, sizeof(*u));
	env_open_mem(&u->e, 8 * MIB, EXT, 0);
	assert_int_equal(vpool_volume_create(u->e.p, "v", 4 * MIB, block, &u->v), 0);
	vaaid_lun_init(&u->lun, u->v, MIB);
	assert_true(u->lun.info.lbprz);
}

/* UNMAP of one descriptor (lba, n): runs the reactor until the command completes. */
static void uenv_unmap(struct uenv *u, uint64_t lba, uint32_t n)
{
	memset(u->cdb, 0, sizeof(u->cdb));
	u->cdb[0] = 0x42;
	u->cdb[8] = sizeof(u->list);
	memset(u->list, 0, sizeof(u->list));
	scsi_put_be16(u->list, 22);
	scsi_put_be16(u->list + 2, 16);
	scsi_put_be64(u->list + 8, lba);
	scsi_put_be32(u->list + 16, n);
	u->iov = (struct iovec){.iov_base = u->list, .iov_len = sizeof(u->list)};
	struct scsi_cmd *c = &u->cmd;
	memset(c, 0, sizeof(*c));
	c->cdb = u->cdb;
	c->cdb_len = sizeof(u->cdb);
	c->iov = &u->iov;
	c->iovcnt = 1;
	c->iov_len = sizeof(u->list);
	c->lun = &u->lun;
	c->done = uenv_done;
	c->transport_priv = &u->w;
	u->w = (struct wait){0};
	handler_unmap(c);
	assert_int_equal(run(&u->e, &u->w), 0);
}

static void assert_good_status(const struct uenv *u)
{
	assert_int_equal(u->cmd.status, SAM_STAT_GOOD);
	assert_int_equal(u->cmd.sense_len, 0);
}

static bool is_mapped(struct uenv *u, uint64_t off)
{
	uint64_t run_len;
	bool m;
	assert_int_equal(vvol_lba_status(u->v, off, 512, &run_len, &m), 0);
	return m;
}

static bool holds(struct uenv *u, struct vvol *v, uint64_t off, size_t len, uint8_t c)
{
	uint8_t *b = vblk_alloc_buf(len);
	assert_int_equal(vread(&u->e, v, off, b, len), 0);
	bool r = all_bytes(b, len, c);
	free(b);
	return r;
}

static void fill_vol(struct uenv *u, struct vvol *v, uint64_t off, size_t len, uint8_t c)
{
	uint8_t *b = vblk_alloc_buf(len);
	memset(b, c, len);
	assert_int_equal(vwrite(&u->e, v, off, b, len), 0);
	free(b);
}

/* 512-byte LUN: one LBA, and LBAs across a granule edge, read zeros; the granules stay
 * mapped, their other LBAs keep their data; a never-written granule stays deallocated. */
static void test_unmap_512_partial_granules(void **state)
{
	(void)state;
	struct uenv u;
	uenv_open(&u, 512);
	fill_vol(&u, u.v, 0, EXT, 0x5A);
	uenv_unmap(&u, 3, 1);
	assert_good_status(&u);
	assert_true(holds(&u, u.v, 0, 1536, 0x5A));
	assert_true(holds(&u, u.v, 1536, 512, 0));
	assert_true(holds(&u, u.v, 2048, EXT - 2048, 0x5A));
	assert_true(is_mapped(&u, 1536));
	/* LBA 14..17: the end of granule 1, the start of granule 2 */
	uenv_unmap(&u, 14, 4);
	assert_good_status(&u);
	assert_true(holds(&u, u.v, 4096, 3072, 0x5A));
	assert_true(holds(&u, u.v, 7168, 2048, 0));
	assert_true(holds(&u, u.v, 9216, EXT - 9216, 0x5A));
	assert_true(is_mapped(&u, 7168) && is_mapped(&u, 8192));
	/* a granule never written (extent 1 holds only its first) */
	fill_vol(&u, u.v, EXT, 4096, 0x5B);
	uenv_unmap(&u, EXT / 512 + 9, 2);
	assert_good_status(&u);
	assert_false(is_mapped(&u, EXT + 4096));
	assert_true(holds(&u, u.v, EXT, 4096, 0x5B));
	assert_true(holds(&u, u.v, EXT + 4096, EXT - 4096, 0));
	env_close(&u.e);
}

/* 4096-byte LUN: an LBA is a whole granule: deallocated; a whole extent goes back. */
static void test_unmap_4096_whole_granules(void **state)
{
	(void)state;
	struct uenv u;
	uenv_open(&u, 4096);
	fill_vol(&u, u.v, 0, 2 * EXT, 0x6A);
	uenv_unmap(&u, 1, 1);
	assert_good_status(&u);
	assert_false(is_mapped(&u, 4096));
	assert_true(holds(&u, u.v, 4096, 4096, 0));
	assert_true(holds(&u, u.v, 8192, 2 * EXT - 8192, 0x6A));
	assert_int_equal(used(&u.e), 2 * EXT);
	uenv_unmap(&u, EXT / 4096, EXT / 4096);
	assert_good_status(&u);
	assert_int_equal(used(&u.e), EXT);
	env_close(&u.e);
}

/* Where the zeros would need new space -- a shared extent (redirect-on-write), here in a
 * full pool too -- the LBAs keep their data, mapped, and the UNMAP is still GOOD (it is
 * advisory, SBC-4 4.7.3.4); never DATA PROTECT. */
static void test_unmap_no_space_keeps_data(void **state)
{
	(void)state;
	struct uenv u;
	uenv_open(&u, 512);
	struct vvol *b, *c;
	assert_int_equal(vpool_volume_create(u.e.p, "b", 4 * MIB, 512, &b), 0);
	fill_vol(&u, u.v, 0, EXT, 0x7A);
	struct wait w = {0};
	assert_int_equal(vvol_share(u.v, 0, b, 0, EXT, done_cb, &w), 0);
	assert_int_equal(run(&u.e, &w), 0);
	struct vpool_stats st;
	vpool_get_stats(u.e.p, &st);
	assert_int_equal(vpool_volume_create(u.e.p, "c", st.capacity, 512, &c), 0);
	fill_vol(&u, c, 0, st.capacity - st.used, 0x7C);
	vpool_get_stats(u.e.p, &st);
	assert_int_equal(st.used, st.capacity);
	uenv_unmap(&u, 5, 1);
	assert_good_status(&u);
	assert_true(holds(&u, u.v, 0, EXT, 0x7A));
	assert_true(holds(&u, b, 0, EXT, 0x7A));
	assert_true(is_mapped(&u, 5 * 512));
	env_close(&u.e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_lists),
		cmocka_unit_test(test_length_errors),
		cmocka_unit_test(test_limit_and_range_errors),
		cmocka_unit_test(test_unmap_512_partial_granules),
		cmocka_unit_test(test_unmap_4096_whole_granules),
		cmocka_unit_test(test_unmap_no_space_keeps_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
