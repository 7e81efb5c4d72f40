/*
 * The hash map's reserved key (include/vaaid/hmap.h): UINT64_MAX finds nothing,
 * is never stored, and deleting it leaves the map intact. fuzz_journal found
 * the journal's scan for small writes looking up a record's extent number
 * UINT64_MAX and getting a free slot's garbage as an index.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vaaid/hmap.h"

static void test_reserved_key(void **state)
{
	(void)state;
	struct hmap m;
	assert_int_equal(hmap_init(&m, 4), 0);
	for (uint64_t k = 0; k < 100; k++)
		assert_int_equal(hmap_put(&m, k * 7919, (void *)(uintptr_t)(k + 1)), 0);
	assert_null(hmap_get(&m, UINT64_MAX));
	assert_int_equal(hmap_put(&m, UINT64_MAX, (void *)1), -EINVAL);
	assert_null(hmap_get(&m, UINT64_MAX));
	assert_null(hmap_del(&m, UINT64_MAX));
	assert_int_equal(m.n, 100);
	for (uint64_t k = 0; k < 100; k++)
		assert_ptr_equal(hmap_get(&m, k * 7919), (void *)(uintptr_t)(k + 1));
	hmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserved_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
