/*
 * Unit tests of the UNMAP parameter list parser (handlers/unmap.c,
 * unmap_parse; SBC-4 5.31.2): header and length checks, descriptor count
 * and total LBA limits, range checks, incomplete last descriptor, 0-block
 * descriptors, and that an error reports no descriptor to act on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vaaid/handlers.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_lists),
		cmocka_unit_test(test_length_errors),
		cmocka_unit_test(test_limit_and_range_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
