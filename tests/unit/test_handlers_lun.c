/*
 * Unit tests of a LUN's thin-provisioning identity (handlers/lun.c): the VPD B2
 * THRESHOLD EXPONENT (SBC-4 6.6.5: non-zero, capacity / 2^exp < 2^32), the
 * Logical Block Provisioning log page counts in those threshold sets, the soft
 * threshold as mode page 1Ch/02h counts it (and whether a new threshold changes
 * what the page reports), and what a resize recomputes and announces.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vaaid/lun.h"

#include "pool_test_env.h"

#define MIB (1024ull * 1024)
#define KIB 1024u

struct lenv {
	struct env e;
	struct vvol *v;
	struct scsi_lun lun;
};

static void lenv_open(struct lenv *l, uint32_t extent, uint32_t block)
{
	env_open_mem(&l->e, 16 * MIB, extent, 0);
	assert_int_equal(vpool_volume_create(l->e.p, "v", 64 * MIB, block, NULL), 0);
	l->v = vpool_volume_find(l->e.p, "v");
	assert_non_null(l->v);
	vaaid_lun_init(&l->lun, l->v, MIB);
}

static bool ua_pending(const struct scsi_lun *lun, uint16_t asc)
{
	for (unsigned i = 0; i < lun->n_ua; i++)
		if (lun->ua[i].asc_ascq == asc)
			return true;
	return false;
}

/* One extent per threshold set while the capacity rule allows it. */
static void test_exponent_is_one_extent(void **state)
{
	(void)state;
	struct lenv l;
	lenv_open(&l, 64 * KIB, 4096);
	assert_int_equal(l.lun.info.threshold_exponent, 4); /* 64 KiB / 4 KiB = 2^4 */
	uint64_t avail, used;
	l.lun.lbp_resources(&l.lun, &avail, &used);
	struct vpool_stats st;
	vpool_get_stats(l.e.p, &st);
	assert_true(avail == st.free / (64 * KIB));
	assert_true(used == 0);
	env_close(&l.e);

	lenv_open(&l, MIB, 512);
	assert_int_equal(l.lun.info.threshold_exponent, 11); /* 1 MiB / 512 B = 2^11 */
	assert_int_equal(l.lun.n_ua, 0);
	env_close(&l.e);
}

/* SBC-4 6.6.5: capacity / 2^exp < 2^32. A LUN of 2^37 4 KiB blocks (512 TiB) with
 * 64 KiB extents needs sets of 2^6 blocks, not one extent (2^4); the log page counts
 * and the mode page's THRESHOLD COUNT follow the larger sets; the resize posts
 * CAPACITY DATA HAS CHANGED, INQUIRY DATA HAS CHANGED (VPD B2) and MODE PARAMETERS
 * CHANGED (the threshold count changed). */
static void test_resize_rescales_threshold_sets(void **state)
{
	(void)state;
	struct lenv l;
	lenv_open(&l, 64 * KIB, 4096);
	struct scsi_lun_info *in = &l.lun.info;
	/* a soft threshold of 10 extents: 10 sets of one extent */
	assert_true(vaaid_lun_set_soft_threshold(&l.lun, 10 * 64 * KIB));
	assert_int_equal(scsi_lbp_threshold_count(in), 10);
	/* the same threshold again: nothing the mode page reports changed */
	assert_false(vaaid_lun_set_soft_threshold(&l.lun, 10 * 64 * KIB));
	/* a grow that keeps the exponent: only CAPACITY DATA HAS CHANGED */
	vaaid_lun_resize(&l.lun, 1ull << 34);
	assert_true(in->nblocks == 1ull << 34);
	assert_int_equal(in->threshold_exponent, 4);
	assert_true((in->nblocks >> in->threshold_exponent) < (1ull << 32));
	assert_int_equal(l.lun.n_ua, 1);
	assert_true(ua_pending(&l.lun, ASC_CAPACITY_DATA_CHANGED));
	l.lun.n_ua = 0;
	/* 2^36 blocks: 2^36 >> 4 = 2^32 is not below 2^32 -> exponent 5; the count of 10
	 * extents is then 5 sets: it changed too */
	vaaid_lun_resize(&l.lun, 1ull << 36);
	assert_int_equal(in->threshold_exponent, 5);
	assert_int_equal(scsi_lbp_threshold_count(in), 5);
	assert_int_equal(l.lun.n_ua, 3);
	assert_true(ua_pending(&l.lun, ASC_CAPACITY_DATA_CHANGED));
	assert_true(ua_pending(&l.lun, ASC_INQUIRY_DATA_CHANGED));
	assert_true(ua_pending(&l.lun, ASC_MODE_PARAMETERS_CHANGED));
	/* 2^37 blocks: exponent 6 */
	l.lun.n_ua = 0;
	vaaid_lun_resize(&l.lun, 1ull << 37);
	assert_int_equal(in->threshold_exponent, 6);
	assert_true((in->nblocks >> in->threshold_exponent) < (1ull << 32));
	assert_true(ua_pending(&l.lun, ASC_CAPACITY_DATA_CHANGED));
	assert_true(ua_pending(&l.lun, ASC_INQUIRY_DATA_CHANGED));
	assert_true(ua_pending(&l.lun, ASC_MODE_PARAMETERS_CHANGED));
	/* 10 extents = 160 blocks = 2.5 sets of 64 blocks: THRESHOLD COUNT rounds up to 3 */
	assert_int_equal(scsi_lbp_threshold_count(in), 3);
	/* the log page counts are in the same sets of 256 KiB (rounded down) */
	uint64_t avail, used;
	l.lun.lbp_resources(&l.lun, &avail, &used);
	struct vpool_stats st;
	vpool_get_stats(l.e.p, &st);
	assert_true(avail == st.free / (256 * KIB));
	/* just below the boundary: 2^38 - 1 blocks still fit with exponent 6 */
	vaaid_lun_resize(&l.lun, (1ull << 38) - 1);
	assert_int_equal(in->threshold_exponent, 6);
	vaaid_lun_resize(&l.lun, 1ull << 38);
	assert_int_equal(in->threshold_exponent, 7);
	/* no soft threshold: an exponent change still changes VPD B2 (3Fh/03h), but the
	 * mode page's count stays 0: no MODE PARAMETERS CHANGED */
	assert_true(vaaid_lun_set_soft_threshold(&l.lun, 0));
	l.lun.n_ua = 0;
	vaaid_lun_resize(&l.lun, 1ull << 39);
	assert_int_equal(in->threshold_exponent, 8);
	assert_true(ua_pending(&l.lun, ASC_INQUIRY_DATA_CHANGED));
	assert_false(ua_pending(&l.lun, ASC_MODE_PARAMETERS_CHANGED));
	env_close(&l.e);
}

/* A threshold that changes the page (count, or ENABLED on/off) reports true; the
 * update on a LUN that is up posts 2Ah/01h for it. */
static void test_set_soft_threshold_reports_change(void **state)
{
	(void)state;
	struct lenv l;
	lenv_open(&l, MIB, 512);
	assert_false(vaaid_lun_set_soft_threshold(&l.lun, 0)); /* none -> none */
	assert_true(vaaid_lun_set_soft_threshold(&l.lun, 5 * MIB));
	assert_int_equal(scsi_lbp_threshold_count(&l.lun.info), 5);
	assert_true(vaaid_lun_set_soft_threshold(&l.lun, 6 * MIB));
	assert_true(vaaid_lun_set_soft_threshold(&l.lun, 0)); /* ENABLED goes off */
	assert_int_equal(l.lun.n_ua, 0); /* the setter (bring-up) announces nothing */
	/* on a LUN that is up, a change is announced with MODE PARAMETERS CHANGED, once */
	vaaid_lun_update_soft_threshold(&l.lun, 0);
	assert_int_equal(l.lun.n_ua, 0); /* unchanged */
	vaaid_lun_update_soft_threshold(&l.lun, 7 * MIB);
	assert_int_equal(l.lun.n_ua, 1);
	assert_true(ua_pending(&l.lun, ASC_MODE_PARAMETERS_CHANGED));
	vaaid_lun_update_soft_threshold(&l.lun, 8 * MIB);
	assert_int_equal(l.lun.n_ua, 1);
	env_close(&l.e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exponent_is_one_extent),
		cmocka_unit_test(test_resize_rescales_threshold_sets),
		cmocka_unit_test(test_set_soft_threshold_reports_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
