/*
 * The owner record of an RBD pool image (src/io/rbd_owner.c): this process
 * described, the record formatted and parsed back, damaged records refused,
 * and the rule that lets a restarted gateway take back its dead
 * predecessor's lock -- only on the same machine, and only when that boot is
 * over or that process (pid + start time) is gone; never another machine's,
 * never a live process's, never this process's own.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vaaid/rbd_owner.h"

static bool always_alive(int pid, unsigned long long start)
{
	(void)pid, (void)start;
	return true;
}

static bool never_alive(int pid, unsigned long long start)
{
	(void)pid, (void)start;
	return false;
}

static void test_self_and_round_trip(void **state)
{
	(void)state;
	struct vblk_rbd_owner me, back;
	assert_int_equal(vblk_rbd_owner_self(&me, 7), 0);
	assert_int_equal(me.pid, (int)getpid());
	assert_true(me.machine[0] && me.boot[0] && me.start > 0);
	assert_int_equal(me.group, 7);
	char buf[VBLK_RBD_OWNER_MAX];
	assert_int_equal(vblk_rbd_owner_format(&me, buf, sizeof(buf)), 0);
	assert_int_equal(vblk_rbd_owner_parse(buf, &back), 0);
	assert_memory_equal(&me, &back, sizeof(me));
	/* this very process is alive; its pid with another start time is not */
	assert_true(vblk_rbd_owner_process_alive(me.pid, me.start));
	assert_false(vblk_rbd_owner_process_alive(me.pid, me.start + 1));
	char small[16];
	assert_int_equal(vblk_rbd_owner_format(&me, small, sizeof(small)), -ENAMETOOLONG);
}

static void test_parse_refuses_damage(void **state)
{
	(void)state;
	struct vblk_rbd_owner o;
	const char *bad[] = {
		"",
		"machine=m boot=b pid=1 start=2",              /* no group */
		"machine=m boot=b pid=1 start=2 group=3 x=1",  /* trailing field */
		"machine=m boot=b pid=0 start=2 group=3",      /* pid 0 */
		"machine=m boot=b pid=-1 start=2 group=3",
		"machine=m boot=b pid=+1 start=2 group=3",
		"machine=m boot=b pid=1 start=2 group=65536",  /* group beyond 16 bits */
		"machine=m boot=b pid=2147483648 start=2 group=3",
		"machine=m  boot=b pid=1 start=2 group=3",     /* empty word */
		"boot=b machine=m pid=1 start=2 group=3",      /* out of order */
		"machine=m boot=b pid=1x start=2 group=3",
		"machine=m boot=b pid=01 start=2 group=3",     /* not as formatted */
		"machine=m boot=b pid= 1 start=2 group=3",
		"machine=m boot=b pid=1 start=2 group=3 ",     /* trailing space (found by fuzz_rbd_owner) */
		"machine=m\x01 boot=b pid=1 start=2 group=3",
		"machine=m boot=b pid=1 start=99999999999999999999 group=3",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.pid = 99;
		assert_int_equal(vblk_rbd_owner_parse(bad[i], &o), -EINVAL);
		assert_int_equal(o.pid, 0); /* nothing half-parsed is left behind */
	}
	char longm[200];
	memset(longm, 'a', sizeof(longm));
	memcpy(longm, "machine=", 8);
	snprintf(longm + 150, 50, " boot=b pid=1 start=2 group=3");
	assert_int_equal(vblk_rbd_owner_parse(longm, &o), -EINVAL);
	assert_int_equal(vblk_rbd_owner_parse("machine=m boot=b pid=1 start=2 group=3", &o), 0);
	assert_int_equal(o.pid, 1);
	assert_int_equal(o.group, 3);
}

static void test_dead_predecessor_rule(void **state)
{
	(void)state;
	struct vblk_rbd_owner me = {.machine = "m1", .boot = "b1", .pid = 100, .start = 5000};
	struct vblk_rbd_owner h = me;
	/* this very process: never */
	assert_false(vblk_rbd_owner_is_dead_local(&h, &me, never_alive));
	/* another process of this boot: only when it is gone */
	h.pid = 42;
	h.start = 10;
	assert_false(vblk_rbd_owner_is_dead_local(&h, &me, always_alive));
	assert_true(vblk_rbd_owner_is_dead_local(&h, &me, never_alive));
	/* the same pid number, another start time: an earlier process that is gone */
	h.pid = me.pid;
	assert_true(vblk_rbd_owner_is_dead_local(&h, &me, never_alive));
	/* an earlier boot of this machine: gone, whatever the pid */
	h = me;
	snprintf(h.boot, sizeof(h.boot), "b0");
	assert_true(vblk_rbd_owner_is_dead_local(&h, &me, always_alive));
	/* another machine: never, even if its process looks dead from here */
	h = me;
	snprintf(h.machine, sizeof(h.machine), "m2");
	h.pid = 42;
	assert_false(vblk_rbd_owner_is_dead_local(&h, &me, never_alive));
	/* no record (all zero): never */
	memset(&h, 0, sizeof(h));
	assert_false(vblk_rbd_owner_is_dead_local(&h, &me, never_alive));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_and_round_trip),
		cmocka_unit_test(test_parse_refuses_damage),
		cmocka_unit_test(test_dead_predecessor_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
