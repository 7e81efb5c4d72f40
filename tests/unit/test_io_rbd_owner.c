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

#include <sys/socket.h>

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
	assert_int_equal(vblk_rbd_owner_self(&me, 7, "127.0.0.1:0/3701806198"), 0);
	assert_string_equal(me.addr, "127.0.0.1:0/3701806198");
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
		"machine=m boot=b pid=1 start=2 group=3 addr",  /* no address value */
		"machine=m boot=b pid=1 start=2 group=3 addr=a b", /* a space in it */
		"machine=m boot=b pid=1 start=2 group=3 addr=a x=1",  /* trailing field */
		"machine=m boot=b pid=0 start=2 group=3 addr=a",      /* pid 0 */
		"machine=m boot=b pid=-1 start=2 group=3 addr=a",
		"machine=m boot=b pid=+1 start=2 group=3 addr=a",
		"machine=m boot=b pid=1 start=2 group=65536 addr=a",  /* group beyond 16 bits */
		"machine=m boot=b pid=2147483648 start=2 group=3 addr=a",
		"machine=m  boot=b pid=1 start=2 group=3 addr=a",     /* empty word */
		"boot=b machine=m pid=1 start=2 group=3 addr=a",      /* out of order */
		"machine=m boot=b pid=1x start=2 group=3 addr=a",
		"machine=m boot=b pid=01 start=2 group=3 addr=a",     /* not as formatted */
		"machine=m boot=b pid= 1 start=2 group=3 addr=a",
		"machine=m boot=b pid=1 start=2 group=3 addr=a ", /* trailing space (found by fuzz_rbd_owner) */
		"machine=m boot=b pid=1 start=2 group=3",      /* no address (a first draft's form) */
		"machine=m\x01 boot=b pid=1 start=2 group=3 addr=a",
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
	snprintf(longm + 150, 50, " boot=b pid=1 start=2 group=3 addr=a");
	assert_int_equal(vblk_rbd_owner_parse(longm, &o), -EINVAL);
	assert_int_equal(vblk_rbd_owner_parse("machine=m boot=b pid=1 start=2 group=3 addr=a", &o), 0);
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
	/* no record (all zero), or a machine without a machine-id: never */
	memset(&h, 0, sizeof(h));
	assert_false(vblk_rbd_owner_is_dead_local(&h, &me, never_alive));
	struct vblk_rbd_owner anon = me;
	snprintf(anon.machine, sizeof(anon.machine), "-");
	h = anon;
	snprintf(h.boot, sizeof(h.boot), "b0");
	assert_false(vblk_rbd_owner_is_dead_local(&h, &anon, never_alive));
}

static bool only_127_0_0_1(int family, const void *ip)
{
	static const unsigned char lo[4] = {127, 0, 0, 1};
	return family == AF_INET && !memcmp(ip, lo, 4);
}

static bool only_v6_loopback(int family, const void *ip)
{
	static const unsigned char lo[16] = {[15] = 1};
	return family == AF_INET6 && !memcmp(ip, lo, 16);
}

static void test_addr_is_local(void **state)
{
	(void)state;
	assert_true(vblk_rbd_addr_is_local("127.0.0.1:0/3701806198", only_127_0_0_1));
	assert_true(vblk_rbd_addr_is_local("v2:127.0.0.1:0/5", only_127_0_0_1));
	assert_false(vblk_rbd_addr_is_local("192.0.2.7:0/5", only_127_0_0_1));
	assert_true(vblk_rbd_addr_is_local("[::1]:0/9", only_v6_loopback));
	assert_false(vblk_rbd_addr_is_local("[::2]:0/9", only_v6_loopback));
	const char *bad[] = {"", "-", "127.0.0.1", "[::1", "300.0.0.1:0/1", ":0/1", "v2:", NULL};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(vblk_rbd_addr_is_local(bad[i], only_127_0_0_1));
	/* the host's own interfaces: loopback is one of them */
	assert_true(vblk_rbd_addr_is_local("127.0.0.1:0/1", NULL));
}

/* One client instance: an address a blocklist entry confines to that client.
 * Nonce 0 would blocklist every client of the IP (Ceph's whole-IP entry). */
static void test_addr_instance(void **state)
{
	(void)state;
	const char *good[] = {"127.0.0.1:0/3701806198", "v2:127.0.0.1:0/5", "v1:10.0.0.2:6800/1",
			      "[::1]:0/9", "192.0.2.7:0/4294967295"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(vblk_rbd_addr_instance(good[i]));
	const char *bad[] = {"",           "-",           "127.0.0.1",        "127.0.0.1:0",
			     "127.0.0.1:0/0", "127.0.0.1:0/", "127.0.0.1:0/01",  "127.0.0.1:0/1x",
			     "127.0.0.1:70000/1", "127.0.0.1:0/4294967296", "[::1]/1", "[::1:0/1",
			     ":0/1", "300.0.0.1:0/1", "127.0.0.1:0/1 ", NULL};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(vblk_rbd_addr_instance(bad[i]));
}

/* Whom an open that took the lock fences: the record's client, unless there is
 * no record, it is this client, or the lock break already blocklisted it; a
 * record naming no single client fails (-EINVAL: never serve unfenced). */
static void test_fence_needed(void **state)
{
	(void)state;
	struct vblk_rbd_owner rec;
	assert_int_equal(vblk_rbd_owner_self(&rec, 0, "127.0.0.1:0/111"), 0);
	const char *self = "127.0.0.1:0/222";
	assert_int_equal(vblk_rbd_owner_fence_needed(NULL, self, NULL), 0);
	assert_int_equal(vblk_rbd_owner_fence_needed(&rec, self, NULL), 1);
	assert_int_equal(vblk_rbd_owner_fence_needed(&rec, self, "127.0.0.1:0/333"), 1);
	assert_int_equal(vblk_rbd_owner_fence_needed(&rec, self, "127.0.0.1:0/111"), 0);
	assert_int_equal(vblk_rbd_owner_fence_needed(&rec, "127.0.0.1:0/111", NULL), 0);
	assert_int_equal(vblk_rbd_owner_fence_needed(&rec, NULL, NULL), 1);
	const char *none[] = {"-", "127.0.0.1:0/0", "garbage"};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		snprintf(rec.addr, sizeof(rec.addr), "%s", none[i]);
		assert_int_equal(vblk_rbd_owner_fence_needed(&rec, self, none[i]), -EINVAL);
	}
}

/* The shared ALUA record from rbd_metadata_list's answer: the keys under the
 * prefix (sorted, as the OSD lists them), fenced groups ascending and distinct,
 * anything else ignored; the list ends at the first key past the prefix. */
static void test_alua_record_parse(void **state)
{
	(void)state;
	static const char keys[] = "vaaid.alua.fenced.12\0vaaid.alua.fenced.3\0"
				   "vaaid.alua.fenced.x\0vaaid.alua.fenced.0\0"
				   "vaaid.alua.fenced.70000\0vaaid.alua.owner\0vaaid.owner\0"
				   "vaaid.zzz\0";
	static const char vals[] = "2\0" "2\0" "2\0" "2\0" "2\0" "2\0" "machine=m\0" "1\0";
	struct vblk_rbd_alua r;
	vblk_rbd_alua_parse(keys, sizeof(keys) - 1, vals, sizeof(vals) - 1, &r);
	assert_int_equal(r.owner, 2);
	assert_int_equal(r.n_fenced, 2);
	assert_int_equal(r.fenced[0], 3);
	assert_int_equal(r.fenced[1], 12);
	assert_true(vblk_rbd_alua_fenced(&r, 12));
	assert_false(vblk_rbd_alua_fenced(&r, 2));
	/* an owner that is not a group id: not known; an empty list: an empty record */
	static const char k2[] = "vaaid.alua.owner\0", v2[] = "02\0";
	vblk_rbd_alua_parse(k2, sizeof(k2) - 1, v2, sizeof(v2) - 1, &r);
	assert_int_equal(r.owner, 0);
	struct vblk_rbd_alua e = {0};
	vblk_rbd_alua_parse("", 0, "", 0, &r);
	assert_true(vblk_rbd_alua_equal(&r, &e));
	/* at most 8 fenced groups; a repeat counts once */
	char kb[512], vb[64];
	size_t kl = 0, vl = 0;
	for (unsigned g = 1; g <= 10; g++) {
		kl += (size_t)snprintf(kb + kl, sizeof(kb) - kl, "vaaid.alua.fenced.%u", g) + 1;
		vb[vl++] = '1';
		vb[vl++] = 0;
	}
	vblk_rbd_alua_parse(kb, kl, vb, vl, &r);
	assert_int_equal(r.n_fenced, VBLK_RBD_ALUA_MAX_FENCED);
	/* the first 8 listed are kept (here 1..8), ascending */
	assert_int_equal(r.fenced[0], 1);
	assert_int_equal(r.fenced[7], 8);
	struct vblk_rbd_alua a = {.owner = 1, .n_fenced = 1, .fenced = {2}}, b = a;
	assert_true(vblk_rbd_alua_equal(&a, &b));
	b.fenced[0] = 3;
	assert_false(vblk_rbd_alua_equal(&a, &b));
}

/* The look client's back-off: 2, 4, 8, 16 looks skipped after 1..4 failures in a
 * row, then the cap (2 min of 5 s periods) for good; nothing without a failure. */
/* Stale fenced marks (vblk_rbd_alua_mark_stale): only marks of groups outside the
 * holder's group and peers, and only when the peers are known. */
static void test_alua_mark_stale(void **state)
{
	(void)state;
	const uint16_t peers[] = {2, 3};
	assert_true(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "100", 1, 0, peers, 2));
	assert_true(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "65535", 1, 0, peers, 2));
	assert_false(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "2", 1, 0, peers, 2));
	assert_false(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "3", 1, 0, peers, 2));
	assert_false(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "1", 1, 0, peers, 2));
	assert_false(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "100", 1, 0, peers, 0));
	assert_false(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "100", 1, 0, NULL, 2));
	/* not marks this code writes: left alone */
	assert_false(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_OWNER_KEY, 1, 0, peers, 2));
	assert_false(vblk_rbd_alua_mark_stale(VBLK_RBD_OWNER_KEY, 1, 0, peers, 2));
	assert_false(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "0", 1, 0, peers, 2));
	assert_false(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "65536", 1, 0, peers, 2));
	assert_false(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "07", 1, 0, peers, 2));
	assert_false(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "", 1, 0, peers, 2));
	assert_false(vblk_rbd_alua_mark_stale(NULL, 1, 0, peers, 2));
	/* the group this open fenced stays, in no peer list or not */
	assert_false(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "100", 1, 100, peers, 2));
	assert_true(vblk_rbd_alua_mark_stale(VBLK_RBD_ALUA_FENCED_KEY "101", 1, 100, peers, 2));
}

static void test_look_backoff(void **state)
{
	(void)state;
	assert_int_equal(vblk_rbd_look_backoff(0), 0);
	assert_int_equal(vblk_rbd_look_backoff(1), 2);
	assert_int_equal(vblk_rbd_look_backoff(2), 4);
	assert_int_equal(vblk_rbd_look_backoff(3), 8);
	assert_int_equal(vblk_rbd_look_backoff(4), 16);
	assert_int_equal(vblk_rbd_look_backoff(5), VBLK_RBD_LOOK_BACKOFF_MAX);
	assert_int_equal(vblk_rbd_look_backoff(40), VBLK_RBD_LOOK_BACKOFF_MAX);
	assert_int_equal(vblk_rbd_look_backoff(~0u), VBLK_RBD_LOOK_BACKOFF_MAX);
	assert_true(VBLK_RBD_LOOK_BACKOFF_MAX * 5 <= 120); /* ~2 min at most */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_and_round_trip),
		cmocka_unit_test(test_parse_refuses_damage),
		cmocka_unit_test(test_dead_predecessor_rule),
		cmocka_unit_test(test_addr_is_local),
		cmocka_unit_test(test_addr_instance),
		cmocka_unit_test(test_fence_needed),
		cmocka_unit_test(test_alua_record_parse),
		cmocka_unit_test(test_look_backoff),
		cmocka_unit_test(test_alua_mark_stale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
