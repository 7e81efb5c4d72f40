/*
 * Unit tests of a volume's map (src/pool/map.h: leaves allocated on first mapping,
 * docs/snapshots.md step 1): sparse maps, leaf and volume boundaries, growth, the
 * 2^26-extent maximum; then the same through the pool (a maximum-size volume
 * written at both ends, recovered by replay and by a checkpoint); and the leaves a
 * live checkpoint's frozen image shares (map.h, struct pool_map_freeze).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vaaid/io.h"
#include "vaaid/pool.h"

#include "../../src/pool/map.h"
#include "pool_test_env.h"

#define MIB (1024u * 1024)

/* Every mapped entry through pool_map_next, checked against want[] (ascending). */
static void expect_entries(const struct vvol *v, const uint64_t *want, size_t n)
{
	size_t k = 0;
	for (uint64_t e = pool_map_next(v, 0); e < v->n_vext; e = pool_map_next(v, e + 1)) {
		assert_true(k < n);
		assert_true(e == want[k]);
		assert_true(pool_map_get(v, e) == want[k] + 100);
		k++;
	}
	assert_true(k == n);
	assert_true(v->mapped == n);
}

static void test_sparse_map(void **state)
{
	(void)state;
	struct vvol v = {0};
	const uint64_t n = 1u << 20; /* 1 TiB of 1 MiB extents: 2,048 leaves */
	assert_int_equal(pool_map_init(&v, n), 0);
	assert_true(v.n_vext == n && v.mapped == 0);
	assert_true(pool_map_leaves(&v) == 0);
	assert_true(pool_map_next(&v, 0) == n);
	const uint64_t at[] = {0, 511, 512, 1023, 777777, n - 1};
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(pool_map_set(&v, at[i], at[i] + 100), 0);
	assert_true(pool_map_leaves(&v) == 4); /* leaves 0, 1, 1519, 2047 */
	expect_entries(&v, at, 6);
	assert_true(pool_map_get(&v, 1) == 0 && pool_map_get(&v, 1024) == 0 &&
		    pool_map_get(&v, n - 2) == 0);
	assert_true(pool_map_next(&v, 1) == 511 && pool_map_next(&v, 1024) == 777777 &&
		    pool_map_next(&v, 777778) == n - 1 && pool_map_next(&v, n) == n);
	/* Changing a mapped entry keeps the count; unmapping a leaf's last entry frees it. */
	assert_int_equal(pool_map_set(&v, 511, 611), 0);
	assert_true(v.mapped == 6);
	assert_int_equal(pool_map_set(&v, 511, 0), 0);
	assert_true(pool_map_leaves(&v) == 4);
	assert_int_equal(pool_map_set(&v, 0, 0), 0);
	assert_true(pool_map_leaves(&v) == 3 && v.mapped == 4);
	assert_true(pool_map_get(&v, 0) == 0 && pool_map_next(&v, 0) == 512);
	/* Unmapping what is not mapped changes nothing and allocates nothing. */
	assert_int_equal(pool_map_set(&v, 5000, 0), 0);
	assert_true(pool_map_leaves(&v) == 3 && v.mapped == 4);
	const uint64_t left[] = {512, 1023, 777777, n - 1};
	expect_entries(&v, left, 4);
	pool_map_free(&v);
}

/* A map whose end is inside a leaf, grown across leaves. */
static void test_boundaries_and_grow(void **state)
{
	(void)state;
	struct vvol v = {0};
	assert_int_equal(pool_map_init(&v, 1), 0);
	assert_true(pool_map_next(&v, 0) == 1);
	assert_int_equal(pool_map_set(&v, 0, 100), 0);
	assert_true(pool_map_next(&v, 0) == 0 && pool_map_next(&v, 1) == 1);
	assert_int_equal(pool_map_grow(&v, 1000), 0); /* inside the first two leaves */
	assert_true(v.n_vext == 1000 && pool_map_get(&v, 0) == 100);
	assert_true(pool_map_next(&v, 1) == 1000);
	assert_int_equal(pool_map_set(&v, 999, 1099), 0);
	assert_int_equal(pool_map_grow(&v, 500), 0); /* never shrinks */
	assert_true(v.n_vext == 1000);
	assert_int_equal(pool_map_grow(&v, 1537), 0); /* one entry into a fourth leaf */
	assert_true(pool_map_next(&v, 1000) == 1537);
	assert_true(pool_map_get(&v, 1536) == 0);
	assert_int_equal(pool_map_set(&v, 1536, 1636), 0);
	const uint64_t at[] = {0, 999, 1536};
	expect_entries(&v, at, 3);
	assert_true(pool_map_leaves(&v) == 3);
	pool_map_free(&v);
}

/* The largest volume: 2^26 extents, a directory of 131,072 leaves, two of them there. */
static void test_max_extents(void **state)
{
	(void)state;
	struct vvol v = {0};
	const uint64_t n = VPOOL_MAX_VOLUME_EXTENTS;
	assert_int_equal(pool_map_init(&v, n), 0);
	assert_true(pool_map_next(&v, 0) == n); /* an empty scan skips every absent leaf */
	assert_int_equal(pool_map_set(&v, n - 1, n - 1 + 100), 0);
	assert_int_equal(pool_map_set(&v, n / 2, n / 2 + 100), 0);
	assert_true(pool_map_leaves(&v) == 2);
	const uint64_t at[] = {n / 2, n - 1};
	expect_entries(&v, at, 2);
	assert_true(pool_map_next(&v, n / 2 + 1) == n - 1);
	pool_map_free(&v);
}

/* Through the pool: a maximum-size volume (64 KiB extents: 4 TiB) in a 16 MiB pool,
 * written at both ends, then recovered by replay and from a checkpoint. */
static void test_max_volume_in_pool(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 16 * MIB, 64 * 1024, 0);
	const uint64_t max = vpool_volume_size_max(64 * 1024);
	struct vvol *v;
	assert_int_equal(vpool_volume_create(e.p, "big", max, 512, &v), 0);
	uint8_t *buf = vblk_alloc_buf(4096);
	memset(buf, 0xA5, 4096);
	assert_int_equal(vwrite(&e, v, 0, buf, 4096), 0);
	memset(buf, 0x5A, 4096);
	assert_int_equal(vwrite(&e, v, max - 4096, buf, 4096), 0);
	assert_true(mapped(v) == 2 * 64 * 1024);
	for (int round = 0; round < 2; round++) {
		if (round == 0) {
			crash_and_recover(&e); /* replay of the journal */
		} else {
			assert_int_equal(vpool_close(e.p), 0); /* a checkpoint, loaded by the open */
			struct vpool_open_report rep = {0};
			assert_int_equal(vpool_open_ex(e.dev, 0, &e.p, &rep), 0);
			assert_true(rep.records == 0);
		}
		v = vpool_volume_find(e.p, "big");
		assert_non_null(v);
		assert_true(mapped(v) == 2 * 64 * 1024);
		assert_int_equal(vread(&e, v, 0, buf, 4096), 0);
		assert_true(all_bytes(buf, 4096, 0xA5));
		assert_int_equal(vread(&e, v, max - 4096, buf, 4096), 0);
		assert_true(all_bytes(buf, 4096, 0x5A));
		assert_int_equal(vread(&e, v, max / 2, buf, 4096), 0);
		assert_true(all_bytes(buf, 4096, 0));
	}
	/* Unmapping both ends leaves an empty map; the volume deletes. */
	assert_int_equal(vdealloc(&e, v, 0, 64 * 1024), 0);
	assert_int_equal(vdealloc(&e, v, max - 64 * 1024, 64 * 1024), 0);
	assert_true(mapped(v) == 0);
	assert_int_equal(vpool_volume_delete(e.p, "big"), 0);
	free(buf);
	env_close(&e);
}

/*
 * A frozen directory (pool_map_share_dir) keeps every entry as it was at the freeze
 * while the map changes, maps and unmaps (a leaf emptied) and is freed; leaves made
 * after the freeze are the map's only; pool_map_unshare_dir frees exactly the leaves
 * only the image held (ASan: no leak, no use after free). Checked red: without the
 * copy aside (the frozen test always false in pool_map_set) the frozen entries change.
 */
static void test_frozen_leaves_copied_aside(void **state)
{
	(void)state;
	const uint64_t n = 4 * POOL_MAP_LEAF;
	struct pool_map_freeze fz = {0};
	struct vvol v = {0}, img = {0};
	assert_int_equal(pool_map_init(&v, n), 0);
	v.map.fz = &fz;
	for (uint64_t e = 0; e < 3 * POOL_MAP_LEAF; e += 3)
		assert_int_equal(pool_map_set(&v, e, e + 1000), 0);
	assert_int_equal(pool_map_set(&v, 5, 7), 0); /* leaf 0 also holds 5 */
	fz.gen++;
	fz.active = true;
	assert_int_equal(pool_map_share_dir(&img, &v), 0);
	img.n_vext = n;
	/* after the freeze: change (leaf 0), empty (leaf 1), map a new leaf (3) */
	assert_int_equal(pool_map_set(&v, 0, 42), 0);
	assert_int_equal(pool_map_set(&v, 5, 0), 0);
	for (uint64_t e = POOL_MAP_LEAF; e < 2 * POOL_MAP_LEAF; e++)
		assert_int_equal(pool_map_set(&v, e, 0), 0);
	assert_int_equal(pool_map_set(&v, 3 * POOL_MAP_LEAF + 1, 9), 0);
	assert_true(pool_map_get(&v, 0) == 42 && pool_map_get(&v, 5) == 0);
	assert_true(pool_map_get(&v, POOL_MAP_LEAF + 2) == 0);
	for (uint64_t e = 0; e < 3 * POOL_MAP_LEAF; e++) {
		uint64_t want = e % 3 == 0 ? e + 1000 : e == 5 ? 7 : 0;
		assert_true(pool_map_get(&img, e) == want);
	}
	assert_true(pool_map_get(&img, 3 * POOL_MAP_LEAF + 1) == 0);
	uint64_t m = 0;
	for (uint64_t e = pool_map_next(&v, 0); e < n; e = pool_map_next(&v, e + 1))
		m++;
	assert_true(v.mapped == m);
	/* a second change of the copied leaf: no second copy (it is the map's now) */
	assert_int_equal(pool_map_set(&v, 3, 43), 0);
	assert_true(pool_map_get(&img, 3) == 1003);
	pool_map_unshare_dir(&img);
	fz.active = false;
	pool_map_free(&v);
}

/* A volume deleted while a live checkpoint's image shares its leaves (a VOL_DELETE
 * applied after the freeze): the map's free leaves its frozen leaves to the image,
 * which still reads them and frees them at the end; a leaf made after the freeze
 * is the map's alone and freed with it. ASan's use-after-free and leak checks are
 * the red checks (red with pool_map_leaf_drop freeing frozen leaves too). */
static void test_frozen_map_freed(void **state)
{
	(void)state;
	const uint64_t n = 3 * POOL_MAP_LEAF;
	struct pool_map_freeze fz = {0};
	struct vvol v = {0}, img = {0};
	assert_int_equal(pool_map_init(&v, n), 0);
	v.map.fz = &fz;
	for (uint64_t e = 0; e < 2 * POOL_MAP_LEAF; e += 7)
		assert_int_equal(pool_map_set(&v, e, e + 500), 0);
	fz.gen++;
	fz.active = true;
	assert_int_equal(pool_map_share_dir(&img, &v), 0);
	img.n_vext = n;
	assert_int_equal(pool_map_set(&v, 2 * POOL_MAP_LEAF + 3, 77), 0); /* a new leaf */
	pool_map_free(&v); /* the volume deleted during the checkpoint */
	for (uint64_t e = 0; e < 2 * POOL_MAP_LEAF; e++)
		assert_true(pool_map_get(&img, e) == (e % 7 == 0 ? e + 500 : 0));
	assert_true(pool_map_get(&img, 2 * POOL_MAP_LEAF + 3) == 0);
	pool_map_unshare_dir(&img); /* frees the two leaves the map left to it */
	fz.active = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sparse_map),
		cmocka_unit_test(test_boundaries_and_grow),
		cmocka_unit_test(test_max_extents),
		cmocka_unit_test(test_max_volume_in_pool),
		cmocka_unit_test(test_frozen_leaves_copied_aside),
		cmocka_unit_test(test_frozen_map_freed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
