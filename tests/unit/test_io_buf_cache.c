/*
 * vaaid/buf_cache.h: kept large buffers. A buffer given back and taken again is
 * the same memory (no fresh pages), zeroed as vblk_alloc_buf's, aligned; sizes
 * are matched exactly (rounded as vblk_alloc_buf rounds); beyond its room the
 * cache lets its oldest buffer go for the new one (LeakSanitizer sees no leak:
 * the one let go is freed), so that sizes used once (WRITE SAME's patterns)
 * do not keep the journal's buffers out for good; a NULL cache is plain allocation;
 * under ASan a kept buffer is poisoned. Scratch (vbuf_take/vbuf_give): the same
 * memory back for any length of its power-of-two class, bytes past the length
 * poisoned, a class keeps at most 16 and the cache 64 MiB (the rest freed: a
 * leak would fail LeakSanitizer), too large or no cache: plain malloc.
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

static void test_take_give(void **state)
{
	(void)state;
	struct vbuf_cache *c;
	assert_int_equal(vbuf_cache_new(2, &c), 0);
	uint8_t *a = vbuf_take(c, 5000); /* the 8 KiB class */
	assert_non_null(a);
	memset(a, 0x5a, 5000);
#if VAAID_ASAN
	assert_true(__asan_address_is_poisoned(a + 5000));
	assert_true(__asan_address_is_poisoned(a + 8191));
#endif
	vbuf_give(c, a, 5000);
	assert_int_equal(vbuf_taken_kept(c), 8192);
#if VAAID_ASAN
	assert_true(__asan_address_is_poisoned(a));
#endif
	uint8_t *b = vbuf_take(c, 8192); /* same class: the same memory, all of it usable */
	assert_ptr_equal(b, a);
	assert_int_equal(vbuf_taken_kept(c), 0);
	b[8191] = 1;
	uint8_t *d = vbuf_take(c, 8193); /* the next class */
	assert_ptr_not_equal(d, a);
	vbuf_give(c, b, 8192);
	vbuf_give(c, d, 8193);
	assert_int_equal(vbuf_taken_kept(c), 8192 + 16384);
	/* a class keeps 16: the 17th given back is freed */
	uint8_t *v[17];
	for (int i = 0; i < 17; i++)
		assert_non_null(v[i] = vbuf_take(c, 4096));
	for (int i = 0; i < 17; i++)
		vbuf_give(c, v[i], 4096);
	assert_int_equal(vbuf_taken_kept(c), 8192 + 16384 + 16 * 4096);
	for (int i = 16; i > 0; i--) /* newest first */
		assert_ptr_equal(vbuf_take(c, 100 * i), v[i - 1]);
	for (int i = 0; i < 16; i++)
		vbuf_give(c, v[i], 4096);
	/* too large for a class, no cache, nothing: plain malloc and free */
	uint8_t *big = vbuf_take(c, (16u << 20) + 1);
	assert_non_null(big);
	vbuf_give(c, big, (16u << 20) + 1);
	vbuf_give(c, NULL, 10);
	uint8_t *p = vbuf_take(NULL, 100);
	assert_non_null(p);
	vbuf_give(NULL, p, 100);
	assert_int_equal(vbuf_taken_kept(c), 8192 + 16384 + 16 * 4096);
	vbuf_cache_free(c);
	/* the cache keeps 64 MiB at most: the fifth 16 MiB buffer is freed */
	assert_int_equal(vbuf_cache_new(0, &c), 0);
	uint8_t *m[5];
	for (int i = 0; i < 5; i++)
		assert_non_null(m[i] = vbuf_take(c, 16u << 20));
	for (int i = 0; i < 5; i++)
		vbuf_give(c, m[i], 16u << 20);
	assert_int_equal(vbuf_taken_kept(c), 64u << 20);
	vbuf_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reuse_zeroed),
		cmocka_unit_test(test_take_give),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
