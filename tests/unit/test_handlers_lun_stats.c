/*
 * The command counters' latency histogram (include/vaaid/lun_stats.h): bucket
 * i counts latencies below 2^(i + VSTAT_LAT_SHIFT) ns, the last one the rest
 * (the Prometheus histogram's `le` bounds are these); and a pool's sum of its
 * LUNs (vaai_lun_stats_add: counts add up, inflight_max is the largest).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vaaid/lun_stats.h"

static void test_bucket_bounds(void **state)
{
	(void)state;
	assert_int_equal(vstat_lat_bucket(0), 0);
	assert_int_equal(vstat_lat_bucket(1), 0);
	assert_int_equal(vstat_lat_bucket(1023), 0); /* below 2^10 ns */
	assert_int_equal(vstat_lat_bucket(1024), 1);
	assert_int_equal(vstat_lat_bucket(2047), 1);
	assert_int_equal(vstat_lat_bucket(2048), 2);
	for (unsigned i = 1; i + 1 < VSTAT_BUCKETS; i++) {
		uint64_t bound = 1ull << (i + VSTAT_LAT_SHIFT); /* the first latency of bucket i + 1 */
		assert_int_equal(vstat_lat_bucket(bound - 1), i);
		assert_int_equal(vstat_lat_bucket(bound), i + 1);
	}
	assert_int_equal(vstat_lat_bucket(1ull << 34), VSTAT_BUCKETS - 1); /* about 17 s: the rest */
	assert_int_equal(vstat_lat_bucket(UINT64_MAX), VSTAT_BUCKETS - 1);
}

static void test_sum(void **state)
{
	(void)state;
	struct vaai_lun_stats a, b, sum;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&sum, 0, sizeof(sum));
	a.cmd[VSTAT_CAW].ok = 3;
	a.cmd[VSTAT_CAW].lat_ok.bucket[5] = 3;
	a.caw_miscompares = 2;
	a.inflight_max = 7;
	a.ua_posted[VSTAT_UA_THRESHOLD] = 1;
	b.cmd[VSTAT_CAW].ok = 4;
	b.cmd[VSTAT_CAW].lat_ok.bucket[5] = 1;
	b.xcopy_dst_bytes = 4096;
	a.xcopy_shared_bytes = 1 << 20;
	b.xcopy_shared_bytes = 2 << 20;
	b.xcopy_copied_bytes = 4096;
	a.ws_deallocated_bytes = 8192;
	b.ws_deallocated_bytes = 4096;
	a.unmap_deallocated_bytes = 512 << 10;
	b.unmap_deallocated_bytes = 3 << 20;
	b.inflight_max = 9;
	b.inflight = 2;
	vaai_lun_stats_add(&sum, &a);
	vaai_lun_stats_add(&sum, &b);
	assert_int_equal(sum.cmd[VSTAT_CAW].ok, 7);
	assert_int_equal(sum.cmd[VSTAT_CAW].lat_ok.bucket[5], 4);
	assert_int_equal(sum.caw_miscompares, 2);
	assert_int_equal(sum.xcopy_dst_bytes, 4096);
	assert_int_equal(sum.xcopy_shared_bytes, 3 << 20);
	assert_int_equal(sum.xcopy_copied_bytes, 4096);
	assert_int_equal(sum.ws_deallocated_bytes, 12288);
	assert_int_equal(sum.unmap_deallocated_bytes, (512 << 10) + (3 << 20));
	assert_int_equal(sum.ua_posted[VSTAT_UA_THRESHOLD], 1);
	assert_int_equal(sum.inflight, 2);
	assert_int_equal(sum.inflight_max, 9); /* the most one LUN saw */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_bounds),
		cmocka_unit_test(test_sum),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
