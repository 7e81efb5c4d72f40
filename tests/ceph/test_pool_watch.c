/*
 * The pool watch (vaaid/pool_watch.h; docs/ceph.md "ALUA", "The pool watch")
 * through the real ring code (simhost: ring, dispatch, handlers, the engine's
 * reactor, the daemon's watch on the engine thread) on RBD pools of the test
 * cluster. No command sent here reaches the pool (TEST UNIT READY and REPORT
 * TARGET PORT GROUPS are answered by the engine), so what changes is found by the
 * watch alone:
 *  - an idle gateway taken over (lock broken, blocklisted) answers the fenced
 *    state within the watch's period: ASYMMETRIC ACCESS STATE CHANGED
 *    (06h/2Ah/06h, SPC-4 5.16.2) once, then NOT READY, LOGICAL UNIT NOT
 *    ACCESSIBLE, TARGET PORT IN UNAVAILABLE STATE (02h/04h/0Ch, SPC-4
 *    5.16.2.4.5), and RTPG shows its group unavailable; its store sent no I/O;
 *  - a standby gateway follows the owner: a third gateway's takeover moves the
 *    active/optimized group in its RTPG from the old owner's to the new one's,
 *    with the unit attention; meanwhile data commands get the standby sense
 *    (02h/04h/0Bh, SPC-4 5.16.2.4.4).
 *  - three gateways (groups 1, 2, 3, each with the other two as peers) answer
 *    REPORT TARGET PORT GROUPS with the same bytes: A takes the pool, then B takes
 *    it from A (C standby throughout): all three show group 1 unavailable (the
 *    pool's shared record marks it fenced), group 2 active/optimized (the fenced
 *    A learns the owner through a client of its own: with two peers it could
 *    not guess it) and group 3 standby; A coming back (an open that finds the
 *    lock held: standby) clears its mark, and B's answer shows group 1 standby.
 *  - a LUN added after the record changed (no pool watch running) brings the
 *    pool's other LUNs along: their RTPG shows the new record too, not the one
 *    they were attached with (the same rule as the watch's, vd_alua_record_update).
 * Each wait is bounded (30 s, six periods); the time seen is printed.
 */
#include <signal.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "simhost.h"
#include "vaaid/io.h"
#include "vaaid/pool_watch.h"
#include "vaaid/scsi.h"

static const uint8_t TUR[6] = {0};
static const uint8_t RTPG[12] = {0xA3, 0x0A, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
static const uint8_t READ10[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0};

static struct simhost_result run(struct simhost *h, const uint8_t *cdb, size_t len, size_t in_len)
{
	uint64_t tag;
	assert_int_equal(simhost_submit(h, 0, cdb, len, NULL, 0, in_len, &tag), 0);
	struct simhost_result r;
	assert_int_equal(simhost_reap(h, &r, 1, 60000), 1);
	return r;
}

static void expect_sense(struct simhost_result r, uint8_t key, uint8_t asc, uint8_t ascq)
{
	assert_int_equal(r.r.status, 2); /* CHECK CONDITION */
	assert_int_equal(r.r.sense[2] & 0x0F, key);
	assert_int_equal(r.r.sense[12], asc);
	assert_int_equal(r.r.sense[13], ascq);
	simhost_result_free(&r);
}

/* The RTPG answer's bytes (length only header; 4 + 12 per group). */
static size_t rtpg_bytes(struct simhost *h, uint8_t *out, size_t cap)
{
	struct simhost_result r = run(h, RTPG, 12, 256);
	while (r.r.status == 2 && (r.r.sense[2] & 0x0F) == SK_UNIT_ATTENTION) {
		simhost_result_free(&r); /* a state change reported: taken */
		r = run(h, RTPG, 12, 256);
	}
	assert_int_equal(r.r.status, 0);
	size_t n = 4 + scsi_get_be32(r.r.data_in);
	assert_true(n <= cap);
	memcpy(out, r.r.data_in, n);
	simhost_result_free(&r);
	return n;
}

/* The RTPG states of groups 1, 2, ... (length only header; ascending ids). */
static void expect_rtpg(struct simhost *h, unsigned n, const uint8_t *states)
{
	uint8_t d[256];
	assert_int_equal(rtpg_bytes(h, d, sizeof(d)), 4 + 12 * n);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(scsi_get_be16(d + 4 + 12 * i + 2), i + 1);
		assert_int_equal(d[4 + 12 * i] & 0x0F, states[i]);
	}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* TEST UNIT READY every 100 ms until it answers 06h/2Ah/06h; each other answer
 * must be `key/asc/ascq` (0: GOOD). Fails after 30 s. Returns the seconds waited. */
static double wait_state_changed(struct simhost *h, uint8_t key, uint8_t asc, uint8_t ascq)
{
	double t0 = now_s();
	for (;;) {
		struct simhost_result r = run(h, TUR, 6, 0);
		if (r.r.status == 2 && (r.r.sense[2] & 0x0F) == SK_UNIT_ATTENTION) {
			expect_sense(r, SK_UNIT_ATTENTION, 0x2A, 0x06);
			return now_s() - t0;
		}
		if (key)
			expect_sense(r, key, asc, ascq);
		else {
			assert_int_equal(r.r.status, 0);
			simhost_result_free(&r);
		}
		if (now_s() - t0 > 30)
			fail_msg("no ASYMMETRIC ACCESS STATE CHANGED within 30 s (the watch's period "
				 "is %llu s)", (unsigned long long)(VD_POOL_WATCH_PERIOD_NS / 1000000000ull));
		usleep(100000);
	}
}

static void test_idle_gateway_fenced(void **state)
{
	(void)state;
	char spec[64], err[512];
	snprintf(spec, sizeof(spec), "rbd:rbd/watch-fence-%d", (int)getpid());
	vblk_rbd_remove(spec, NULL);
	struct vpool_params prm = {.extent_size = 1u << 20};
	struct simhost *a;
	assert_int_equal(simhost_create_pool_ex(spec, 64u << 20, &prm, false, SIMHOST_IO_URING, 1, &a,
						err, sizeof(err)), 0);
	assert_int_equal(simhost_volume_create(a, "v", 16u << 20, 512), 0);
	const uint16_t peer = 2;
	assert_int_equal(simhost_alua(a, 1, &peer, 1), 0);
	assert_int_equal(simhost_attach(a, "v", 0), 0);
	assert_int_equal(simhost_pool_watch(a), 0);
	struct simhost_result r = run(a, READ10, 10, 4096);
	assert_int_equal(r.r.status, 0);
	simhost_result_free(&r);
	/* more than a period idle: the watch looks and finds the lock still its own
	 * (a healthy gateway is not fenced by its own look) */
	sleep((unsigned)(VD_POOL_WATCH_PERIOD_NS / 1000000000ull) + 1);
	r = run(a, TUR, 6, 0);
	assert_int_equal(r.r.status, 0);
	simhost_result_free(&r);
	const uint8_t active[] = {SCSI_ALUA_ACTIVE_OPTIMIZED, SCSI_ALUA_STANDBY};
	expect_rtpg(a, 2, active);

	/* another gateway takes the image over while this one sends nothing */
	struct vblk_stats before = simhost_blk_stats(a);
	struct vreactor *rb;
	struct vblk *b;
	assert_int_equal(vreactor_create(64, &rb), 0);
	assert_int_equal(vblk_rbd_takeover(rb, spec, NULL, &b), 0);
	double waited = wait_state_changed(a, 0, 0, 0);
	fprintf(stderr, "idle gateway: fenced state after %.1f s\n", waited);
	expect_sense(run(a, TUR, 6, 0), SK_NOT_READY, 0x04, 0x0C);
	/* its group unavailable; the one peer took the pool */
	const uint8_t fenced[] = {SCSI_ALUA_UNAVAILABLE, SCSI_ALUA_ACTIVE_OPTIMIZED};
	expect_rtpg(a, 2, fenced);
	struct vblk_stats after = simhost_blk_stats(a);
	assert_int_equal(after.read_ops, before.read_ops); /* found without any I/O */
	assert_int_equal(after.write_ops, before.write_ops);
	assert_int_equal(after.flush_ops, before.flush_ops);
	expect_sense(run(a, READ10, 10, 4096), SK_NOT_READY, 0x04, 0x0C);

	vblk_close(b);
	vreactor_destroy(rb);
	simhost_close(a); /* fenced: cannot checkpoint */
	vblk_rbd_remove(spec, NULL);
}

static void test_standby_follows_owner(void **state)
{
	(void)state;
	char spec[64], err[512];
	snprintf(spec, sizeof(spec), "rbd:rbd/watch-owner-%d", (int)getpid());
	vblk_rbd_remove(spec, NULL);
	struct vpool_params prm = {.extent_size = 1u << 20};
	struct simhost *a;
	assert_int_equal(simhost_create_pool_ex(spec, 64u << 20, &prm, false, SIMHOST_IO_URING, 1, &a,
						err, sizeof(err)), 0);
	assert_int_equal(simhost_volume_create(a, "v", 16u << 20, 512), 0);
	assert_int_equal(simhost_close(a), 0);
	/* gateway 2 holds the image (its owner record says group 2) */
	struct vreactor *r;
	assert_int_equal(vreactor_create(64, &r), 0);
	struct vblk_rbd_conf g2 = {.alua_group = 2}, g3 = {.alua_group = 3};
	struct vblk *holder, *third;
	assert_int_equal(vblk_rbd_open(r, spec, &g2, 0, &holder), 0);
	/* this gateway (group 1) standby, peers 2 and 3 */
	struct simhost *s;
	if (simhost_open_standby(spec, &s, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	const uint16_t peers[] = {2, 3};
	assert_int_equal(simhost_alua(s, 1, peers, 2), 0);
	assert_int_equal(simhost_attach(s, "v", 0), 0);
	assert_int_equal(simhost_pool_watch(s), 0);
	const uint8_t owner2[] = {SCSI_ALUA_STANDBY, SCSI_ALUA_ACTIVE_OPTIMIZED, SCSI_ALUA_STANDBY};
	expect_rtpg(s, 3, owner2);

	/* gateway 3 takes it over */
	assert_int_equal(vblk_rbd_takeover(r, spec, &g3, &third), 0);
	double waited = wait_state_changed(s, SK_NOT_READY, 0x04, 0x0B);
	fprintf(stderr, "standby gateway: new owner seen after %.1f s\n", waited);
	/* group 2, whose lock group 3 broke, is marked fenced in the pool's record */
	const uint8_t owner3[] = {SCSI_ALUA_STANDBY, SCSI_ALUA_UNAVAILABLE,
				  SCSI_ALUA_ACTIVE_OPTIMIZED};
	expect_rtpg(s, 3, owner3);
	expect_sense(run(s, READ10, 10, 4096), SK_NOT_READY, 0x04, 0x0B); /* still standby */

	assert_int_equal(simhost_close(s), 0);
	vblk_close(third);
	vblk_close(holder);
	vreactor_destroy(r);
	vblk_rbd_remove(spec, NULL);
}

/* RTPG through h, polled every 100 ms (unit attentions taken) until it is the bytes
 * want; fails after 30 s. */
static void wait_rtpg(struct simhost *h, const uint8_t *want, size_t n, const char *who)
{
	double t0 = now_s();
	for (;;) {
		struct simhost_result r = run(h, TUR, 6, 0);
		simhost_result_free(&r);
		uint8_t got[256];
		size_t m = rtpg_bytes(h, got, sizeof(got));
		if (m == n && !memcmp(got, want, n))
			return;
		if (now_s() - t0 > 30) {
			for (size_t i = 4; i + 12 <= m; i += 12)
				fprintf(stderr, "%s: group %u state %u status %u\n", who,
					scsi_get_be16(got + i + 2), got[i] & 0x0F, got[i + 5]);
			fail_msg("%s: RTPG not the same as the owner's within 30 s", who);
		}
		usleep(100000);
	}
}

static struct simhost *gateway(const char *spec, uint16_t group)
{
	char err[512];
	struct simhost *h;
	if (simhost_open_standby(spec, &h, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	uint16_t peers[2], n = 0;
	for (uint16_t g = 1; g <= 3; g++)
		if (g != group)
			peers[n++] = g;
	assert_int_equal(simhost_alua(h, group, peers, 2), 0);
	assert_int_equal(simhost_attach(h, "v", 0), 0);
	assert_int_equal(simhost_pool_watch(h), 0);
	return h;
}

static void test_three_gateways_agree(void **state)
{
	(void)state;
	char spec[64], err[512];
	snprintf(spec, sizeof(spec), "rbd:rbd/watch-three-%d", (int)getpid());
	vblk_rbd_remove(spec, NULL);
	struct vpool_params prm = {.extent_size = 1u << 20};
	struct simhost *mk;
	assert_int_equal(simhost_create_pool_ex(spec, 64u << 20, &prm, false, SIMHOST_IO_URING, 1,
						&mk, err, sizeof(err)), 0);
	assert_int_equal(simhost_volume_create(mk, "v", 16u << 20, 512), 0);
	assert_int_equal(simhost_close(mk), 0);
	struct simhost *a = gateway(spec, 1), *b = gateway(spec, 2), *c = gateway(spec, 3);
	int lost;
	/* A takes the free pool: everyone shows group 1 active/optimized */
	assert_int_equal(simhost_takeover(a, &lost), 0);
	assert_int_equal(lost, 0);
	uint8_t want[256];
	size_t n = rtpg_bytes(a, want, sizeof(want));
	const uint8_t a_owns[] = {SCSI_ALUA_ACTIVE_OPTIMIZED, SCSI_ALUA_STANDBY, SCSI_ALUA_STANDBY};
	expect_rtpg(a, 3, a_owns);
	double t = now_s();
	wait_rtpg(b, want, n, "B");
	double tb = now_s() - t;
	wait_rtpg(c, want, n, "C");
	fprintf(stderr, "three gateways, after A's takeover: B agrees %.1f s after it, C %.1f s\n",
		tb, now_s() - t);

	/* B takes it from A (A idle: no command reaches its pool) */
	assert_int_equal(simhost_takeover(b, &lost), 0);
	assert_int_equal(lost, 0);
	n = rtpg_bytes(b, want, sizeof(want));
	const uint8_t b_owns[] = {SCSI_ALUA_UNAVAILABLE, SCSI_ALUA_ACTIVE_OPTIMIZED,
				  SCSI_ALUA_STANDBY};
	expect_rtpg(b, 3, b_owns); /* the group it fenced: unavailable, not standby */
	t = now_s();
	wait_rtpg(a, want, n, "A (fenced)");
	double ta = now_s() - t;
	wait_rtpg(c, want, n, "C");
	fprintf(stderr, "three gateways, after B's takeover: A (fenced) agrees %.1f s after it, "
		"C %.1f s\n", ta, now_s() - t);
	expect_sense(run(a, READ10, 10, 4096), SK_NOT_READY, 0x04, 0x0C);
	expect_sense(run(c, READ10, 10, 4096), SK_NOT_READY, 0x04, 0x0B);
	uint8_t got[256];
	assert_int_equal(rtpg_bytes(a, got, sizeof(got)), n);
	assert_memory_equal(got, want, n);
	assert_int_equal(rtpg_bytes(c, got, sizeof(got)), n);
	assert_memory_equal(got, want, n);

	/* A comes back: its open finds B's lock (standby) and clears A's mark */
	simhost_close(a); /* fenced: cannot checkpoint */
	struct vreactor *r;
	struct vblk *again;
	assert_int_equal(vreactor_create(64, &r), 0);
	struct vblk_rbd_conf g1 = {.alua_group = 1};
	assert_int_equal(vblk_rbd_open(r, spec, &g1, 0, &again), -EBUSY);
	vreactor_destroy(r);
	const uint8_t back[] = {SCSI_ALUA_STANDBY, SCSI_ALUA_ACTIVE_OPTIMIZED, SCSI_ALUA_STANDBY};
	n = rtpg_bytes(b, want, sizeof(want));
	double t0 = now_s();
	while ((want[4] & 0x0F) != SCSI_ALUA_STANDBY) {
		if (now_s() - t0 > 30)
			fail_msg("B still shows group 1 unavailable 30 s after A came back");
		usleep(100000);
		struct simhost_result u = run(b, TUR, 6, 0);
		simhost_result_free(&u);
		n = rtpg_bytes(b, want, sizeof(want));
	}
	expect_rtpg(b, 3, back);
	fprintf(stderr, "three gateways: B shows group 1 standby %.1f s after A came back\n",
		now_s() - t0);
	wait_rtpg(c, want, n, "C");

	assert_int_equal(simhost_close(c), 0);
	assert_int_equal(simhost_close(b), 0);
	vblk_rbd_remove(spec, NULL);
}

/* A LUN added after the record changed: the pool's LUN already there follows
 * the record the add read, without any watch. */
static void test_lun_add_updates_others(void **state)
{
	(void)state;
	char spec[64], err[512];
	snprintf(spec, sizeof(spec), "rbd:rbd/watch-add-%d", (int)getpid());
	vblk_rbd_remove(spec, NULL);
	struct vpool_params prm = {.extent_size = 1u << 20};
	struct simhost *mk;
	assert_int_equal(simhost_create_pool_ex(spec, 64u << 20, &prm, false, SIMHOST_IO_URING, 1,
						&mk, err, sizeof(err)), 0);
	assert_int_equal(simhost_volume_create(mk, "v", 16u << 20, 512), 0);
	assert_int_equal(simhost_volume_create(mk, "w", 16u << 20, 512), 0);
	assert_int_equal(simhost_close(mk), 0);
	struct simhost *a = NULL, *b = NULL, *c = NULL;
	if (simhost_open_standby(spec, &a, err, sizeof(err)) != 0 ||
	    simhost_open_standby(spec, &b, err, sizeof(err)) != 0 ||
	    simhost_open_standby(spec, &c, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	const uint16_t pa[2] = {2, 3}, pb[2] = {1, 3}, pc[2] = {1, 2};
	assert_int_equal(simhost_alua(a, 1, pa, 2), 0);
	assert_int_equal(simhost_alua(b, 2, pb, 2), 0);
	assert_int_equal(simhost_alua(c, 3, pc, 2), 0);
	int lost;
	assert_int_equal(simhost_takeover(a, &lost), 0); /* the record: owner 1 */
	assert_int_equal(simhost_attach(b, "v", 0), 0);
	const uint8_t a_owns[] = {SCSI_ALUA_ACTIVE_OPTIMIZED, SCSI_ALUA_STANDBY, SCSI_ALUA_STANDBY};
	expect_rtpg(b, 3, a_owns);
	assert_int_equal(simhost_takeover(c, &lost), 0); /* owner 3, group 1 fenced */
	assert_int_equal(simhost_attach(b, "w", 1), 0);  /* reads the record */
	const uint8_t c_owns[] = {SCSI_ALUA_UNAVAILABLE, SCSI_ALUA_STANDBY,
				  SCSI_ALUA_ACTIVE_OPTIMIZED};
	expect_rtpg(b, 3, c_owns); /* LUN 0, attached before: follows it too */
	assert_int_equal(simhost_close(b), 0);
	assert_int_equal(simhost_close(c), 0);
	simhost_close(a); /* fenced */
	vblk_rbd_remove(spec, NULL);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (!getenv("CEPH_CONF")) {
		fprintf(stderr, "test_pool_watch: CEPH_CONF is not set (run through ctest)\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_gateway_fenced),
		cmocka_unit_test(test_standby_follows_owner),
		cmocka_unit_test(test_three_gateways_agree),
		cmocka_unit_test(test_lun_add_updates_others),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
