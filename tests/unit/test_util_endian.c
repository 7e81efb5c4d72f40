/*
 * include/vaaid/endian.h: the on-disk formats' little-endian fields have the
 * least significant byte first, at any alignment, and read back what was put.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vaaid/endian.h"

static void test_byte_order(void **state)
{
	(void)state;
	uint8_t b[1 + 8 + 8] = {0};
	uint8_t *p = b + 1; /* unaligned on purpose */
	vput_le16(p, 0x1122);
	assert_memory_equal(p, ((uint8_t[]){0x22, 0x11}), 2);
	assert_int_equal(vget_le16(p), 0x1122);
	vput_le32(p, 0x11223344u);
	assert_memory_equal(p, ((uint8_t[]){0x44, 0x33, 0x22, 0x11}), 4);
	assert_int_equal(vget_le32(p), 0x11223344u);
	vput_le64(p, 0x1122334455667788ull);
	assert_memory_equal(p, ((uint8_t[]){0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}), 8);
	assert_true(vget_le64(p) == 0x1122334455667788ull);
	/* a field ends where it says: the next byte is untouched */
	p[8] = 0xEE;
	vput_le64(p, ~0ull);
	assert_int_equal(p[8], 0xEE);
	assert_int_equal(b[0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_byte_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
