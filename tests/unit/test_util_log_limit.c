/*
 * The log rate limiter (src/util/log_limit.c) with injected CLOCK_MONOTONIC
 * times: the first occurrence passes, then at most one per 10 s carrying the
 * count held back since the last; the held-back lines go out at debug level
 * only. vlog writes to stderr, captured here in a file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "stderr_capture.h"
#include "vaaid/log_limit.h"

#define S 1000000000ull

static void test_allow_counts(void **state)
{
	(void)state;
	struct vlog_limit l = {0};
	uint64_t n = 99, t0 = 5 * S;
	assert_true(vlog_limit_allow(&l, t0, &n)); /* the first, whatever the time */
	assert_int_equal(n, 0);
	n = 99;
	assert_false(vlog_limit_allow(&l, t0, &n));
	assert_false(vlog_limit_allow(&l, t0 + 1, &n));
	assert_false(vlog_limit_allow(&l, t0 + 10 * S - 1, &n));
	assert_int_equal(n, 99); /* untouched when held back */
	assert_true(vlog_limit_allow(&l, t0 + 10 * S, &n));
	assert_int_equal(n, 3);
	/* the window starts at the line let through, the count again at 0 */
	assert_false(vlog_limit_allow(&l, t0 + 19 * S, &n));
	assert_true(vlog_limit_allow(&l, t0 + 20 * S, &n));
	assert_int_equal(n, 1);
	/* a quiet spell: the next passes with nothing held back */
	assert_true(vlog_limit_allow(&l, t0 + 100 * S, &n));
	assert_int_equal(n, 0);
	/* the first one even at time 0 */
	struct vlog_limit z = {0};
	assert_true(vlog_limit_allow(&z, 0, &n));
	assert_false(vlog_limit_allow(&z, 0, &n));
}

/* What vlog_write_limited writes to stderr for each call at times t[0..n). */
static char *written(struct vlog_limit *l, const uint64_t *t, int n)
{
	struct stderr_capture cap;
	stderr_capture_begin(&cap);
	for (int i = 0; i < n; i++)
		vlog_write_limited(l, t[i], VLOG_WARN, "lun0", "f", "bad copy %d", i);
	return stderr_capture_end(&cap);
}

static void test_write_limited(void **state)
{
	(void)state;
	const uint64_t t[] = {1 * S, 2 * S, 3 * S, 11 * S, 12 * S};
	struct vlog_limit l = {0};
	vlog_set_level(VLOG_WARN);
	char *out = written(&l, t, 5);
	assert_string_equal(out, "vaaid[warn] lun0 f: bad copy 0\n"
				 "vaaid[warn] lun0 f: bad copy 3 (2 more suppressed since the last)\n");
	free(out);
	/* at debug level the held-back lines are there, as debug */
	struct vlog_limit d = {0};
	vlog_set_level(VLOG_DEBUG);
	out = written(&d, t, 5);
	assert_string_equal(out, "vaaid[warn] lun0 f: bad copy 0\n"
				 "vaaid[debug] lun0 f: bad copy 1\n"
				 "vaaid[debug] lun0 f: bad copy 2\n"
				 "vaaid[warn] lun0 f: bad copy 3 (2 more suppressed since the last)\n"
				 "vaaid[debug] lun0 f: bad copy 4\n");
	free(out);
	vlog_set_level(VLOG_WARN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allow_counts),
		cmocka_unit_test(test_write_limited),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
