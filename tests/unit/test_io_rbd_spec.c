/*
 * The name of an RBD store (src/io/rbd_spec.c): "rbd:POOL/IMAGE" parsed, and
 * every malformed one refused with -EINVAL (no pool, no image, a snapshot
 * "@", a second "/", spaces and control characters, "." and "..", names too long).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vaaid/io.h"
#include "vaaid/rbd_spec.h"

static void test_parse(void **state)
{
	(void)state;
	struct vblk_rbd_name n;
	assert_int_equal(vblk_rbd_parse("rbd:rbd/img1", &n), 0);
	assert_string_equal(n.pool, "rbd");
	assert_string_equal(n.image, "img1");
	assert_int_equal(vblk_rbd_parse("rbd:vaai.pool-1/ds_1.img", &n), 0);
	assert_string_equal(n.pool, "vaai.pool-1");
	assert_string_equal(n.image, "ds_1.img");
	assert_true(vblk_rbd_spec("rbd:x/y"));
	assert_false(vblk_rbd_spec("/var/lib/vaaid/pool"));
	assert_false(vblk_rbd_spec(NULL));
	const char *bad[] = {"rbd:", "rbd:/img", "rbd:pool/", "rbd:pool", "rbd:a/b/c", "rbd:a/b@snap",
			     "rbd:a b/c", "rbd:a/b\tc", "rbd:./x", "rbd:a/..", "file:/x", "rbd:a/\x7f"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(vblk_rbd_parse(bad[i], &n), -EINVAL);
	char lng[300] = "rbd:p/";
	memset(lng + 6, 'i', 95);
	assert_int_equal(vblk_rbd_parse(lng, &n), 0); /* 95 characters: fits */
	lng[6 + 95] = 'i';
	assert_int_equal(vblk_rbd_parse(lng, &n), -EINVAL);
	memset(lng, 0, sizeof(lng));
	memcpy(lng, "rbd:", 4);
	memset(lng + 4, 'p', 128);
	strcat(lng, "/i");
	assert_int_equal(vblk_rbd_parse(lng, &n), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_parse)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
