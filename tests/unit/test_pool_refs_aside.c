/*
 * Unit tests of a live checkpoint's frozen refcounts (src/pool/refs_aside.h,
 * docs/snapshots.md step 3): a chunk is copied aside by its first change after the
 * freeze and the image reads the copy; an untouched chunk is read live; a short
 * last chunk; a second change of a copied chunk; the end frees every copy (ASan).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../../src/pool/refs_aside.h"

#define N (2 * REFS_CHUNK + 7) /* two whole chunks and a short last one */

static void test_frozen_refs_copied_aside(void **state)
{
	(void)state;
	uint32_t *live = malloc(N * sizeof(*live));
	assert_non_null(live);
	for (uint64_t i = 0; i < N; i++)
		live[i] = (uint32_t)(i % 3);
	struct pool_refs_freeze f = {0};
	pool_refs_touch(&f, live, 5); /* not active: nothing */
	assert_null(f.aside);
	assert_int_equal(pool_refs_freeze_begin(&f, N), 0);
	assert_int_equal(f.n_chunks, 3);
	/* chunk 0 changed twice, the short last chunk's last entry once, chunk 1 never */
	const uint64_t changed[] = {0, 17, REFS_CHUNK - 1, 17, N - 1};
	for (size_t k = 0; k < sizeof(changed) / sizeof(changed[0]); k++) {
		pool_refs_touch(&f, live, changed[k]);
		live[changed[k]] += 10;
	}
	assert_non_null(f.aside[0]);
	assert_null(f.aside[1]);
	assert_non_null(f.aside[2]);
	for (uint64_t i = 0; i < N; i++)
		assert_int_equal(pool_refs_frozen(&f, live, i), (uint32_t)(i % 3));
	assert_int_equal(live[17], 17 % 3 + 20);
	/* chunk 1 read live until it changes, then from its copy */
	live[REFS_CHUNK + 1] = 99; /* (a change without touch: what the image must not see) */
	assert_int_equal(pool_refs_frozen(&f, live, REFS_CHUNK + 1), 99);
	live[REFS_CHUNK + 1] = (REFS_CHUNK + 1) % 3;
	pool_refs_touch(&f, live, REFS_CHUNK + 1);
	live[REFS_CHUNK + 1] = 99;
	assert_int_equal(pool_refs_frozen(&f, live, REFS_CHUNK + 1), (REFS_CHUNK + 1) % 3);
	assert_false(f.broken);
	pool_refs_freeze_end(&f);
	assert_false(f.active);
	pool_refs_touch(&f, live, 5); /* ended: nothing */
	assert_null(f.aside);
	free(live);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frozen_refs_copied_aside),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
