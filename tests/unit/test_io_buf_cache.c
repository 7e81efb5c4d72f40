/*
 * vaaid/buf_cache.h: kept large buffers. A buffer given back and taken again is
 * the same memory (no fresh pages), zeroed as vblk_alloc_buf's, aligned; sizes
 * are matched exactly (rounded as vblk_alloc_buf rounds); beyond its room the
 * cache lets its oldest buffer go for the new one (LeakSanitizer sees no leak:
 * the one let go is freed), so that sizes used once (WRITE SAME's patterns)
 * do not keep the journal's buffers out for good; a NULL cache is plain allocation;
 * under ASan a kept buffer is poisoned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vaaid/buf_cache.h"
#include "vaaid/io.h"

#include "vaaid/asan_poison.h"

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void test_reuse_zeroed(void **state)
{
	(void)state;
	struct vbuf_cache *c;
	assert_int_equal(vbuf_cache_new(2, &c), 0);
	const size_t big = 256u << 10;
	uint8_t *a = vbuf_get(c, big);
	assert_non_null(a);
	assert_int_equal((uintptr_t)a % VBLK_ALIGN, 0);
	assert_true(all_zero(a, big));
	memset(a, 0xA5, big);
	vbuf_put(c, a, big);
#if VAAID_ASAN
	assert_true(__asan_address_is_poisoned(a));
	assert_true(__asan_address_is_poisoned(a + big - 1));
#endif
	uint8_t *other = vbuf_get(c, big / 2); /* another size: not the kept one */
	assert_ptr_not_equal(other, a);
	uint8_t *b = vbuf_get(c, big);
	assert_ptr_equal(b, a);
	assert_true(all_zero(b, big));
	uint8_t *odd = vbuf_get(c, 1000); /* rounded to VBLK_ALIGN, as vblk_alloc_buf */
	memset(odd, 1, 1000);
	vbuf_put(c, odd, 1000);
	uint8_t *odd2 = vbuf_get(c, VBLK_ALIGN);
	assert_ptr_equal(odd2, odd);
	assert_true(all_zero(odd2, VBLK_ALIGN));
	/* room for two: the third put lets the oldest (b) go, freed (a leak would
	 * fail LeakSanitizer); the two newest are what comes back */
	vbuf_put(c, b, big);
	vbuf_put(c, other, big / 2);
	vbuf_put(c, odd2, VBLK_ALIGN);
	vbuf_put(c, NULL, 10);
	uint8_t *o2 = vbuf_get(c, big / 2), *a2 = vbuf_get(c, VBLK_ALIGN);
	assert_ptr_equal(o2, other);
	assert_ptr_equal(a2, odd2);
	vbuf_put(c, o2, big / 2);
	vbuf_put(c, a2, VBLK_ALIGN);
	vbuf_cache_free(c);
	/* no cache: plain allocations */
	uint8_t *p = vbuf_get(NULL, big);
	assert_true(all_zero(p, big));
	vbuf_put(NULL, p, big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reuse_zeroed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
