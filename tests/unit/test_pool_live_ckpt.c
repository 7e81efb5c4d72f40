/*
 * Live checkpoints (vpool_set_live_checkpoints; docs/snapshots.md sections 8
 * and 12, step 3): appends go on while the blob and the superblock are written,
 * and the superblock names the freeze point as the replay start. Power is lost
 * in each window of one -- quiescing (before the freeze), writing the blob
 * (between the freeze and the blob durable), writing the superblock (between
 * the blob and the superblock), and after it (the replay starts at a freeze
 * point with records after it) -- under a QD 1 load of journal-carried 4 KiB
 * writes and allocating 64 KiB ones on a minimum journal (it wraps; a
 * checkpoint starts every few dozen writes); then every acknowledged write
 * must read back (the one in flight: old or new), vpool_verify must pass, and
 * some writes must have been acknowledged while a checkpoint wrote. The crash
 * is made with vblk_crashsim_crash_now when the pool's checkpoint phase
 * (vpool_get_diag) is the window's, after a seeded number of reactor steps in
 * it, so each window is hit on purpose, many times.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vaaid/io.h"
#include "vaaid/pool.h"

#include "pool_test_wait.h"

#define KIB 1024u
#define MIB (1024u * KIB)
#define POOL_SIZE (48 * MIB)
#define EXT (64 * KIB)
#define VSIZE (16 * MIB)
#define NBLK (VSIZE / (4 * KIB))
#define SEEDS 8
#define WINDOW_AFTER 4 /* not a VPOOL_CKPT_* phase: after a live checkpoint ended */

struct env {
	struct vreactor *r;
	struct vblk *dev;
	struct vpool *p;
	struct vvol *v;
	uint32_t acked[NBLK]; /* id of the last acknowledged write of each 4 KiB block */
	uint64_t rng;
};

static uint64_t rnd(struct env *e, uint64_t n)
{
	e->rng ^= e->rng << 13;
	e->rng ^= e->rng >> 7;
	e->rng ^= e->rng << 17;
	return e->rng % n;
}

static void fill(uint8_t *b, uint32_t nblk, uint32_t id)
{
	for (uint32_t i = 0; i < nblk; i++) {
		memset(b + i * 4 * KIB, (int)(id & 0xff), 4 * KIB);
		memcpy(b + i * 4 * KIB, &id, 4);
	}
}

static bool holds(const uint8_t *b, uint32_t id)
{
	uint32_t got;
	memcpy(&got, b, 4);
	if (id == 0) {
		for (uint32_t i = 0; i < 4 * KIB; i++)
			if (b[i])
				return false;
		return true;
	}
	if (got != id)
		return false;
	for (uint32_t i = 4; i < 4 * KIB; i++)
		if (b[i] != (uint8_t)(id & 0xff))
			return false;
	return true;
}

static int phase_of(struct env *e)
{
	struct vpool_diag d;
	vpool_get_diag(e->p, &d);
	return d.ckpt_phase;
}

/*
 * One run: writes until the power is lost in `window` (after `skip` reactor steps in
 * it), then recovery and the check. Returns the records appended while live
 * checkpoints wrote.
 */
static uint64_t run_window(int window, uint64_t seed)
{
	struct env *e = calloc(1, sizeof(*e));
	assert_non_null(e);
	e->rng = seed * 0x9E3779B97F4A7C15ull + 1;
	assert_int_equal(vreactor_create(64, &e->r), 0);
	assert_int_equal(vblk_crashsim_create_mem(e->r, POOL_SIZE, seed, &e->dev), 0);
	struct vpool_params prm = {.size = POOL_SIZE, .extent_size = EXT, .journal_size = 520 * KIB};
	assert_int_equal(vpool_format(e->dev, &prm), 0);
	assert_int_equal(vpool_open(e->dev, &e->p), 0);
	assert_int_equal(vpool_set_live_checkpoints(e->p, true), 0);
	assert_int_equal(vpool_volume_create(e->p, "v", VSIZE, 512, &e->v), 0);
	uint8_t *buf = vblk_alloc_buf(EXT);
	assert_non_null(buf);
	/* the crash comes in the (ckpts + 1)-th checkpoint, after skip steps in the window */
	uint64_t skip = rnd(e, 4), steps = 0, ckpts = rnd(e, 3), done = 0;
	bool crashed = false, live_done = false;
	uint64_t after_acks = 0;
	uint32_t fly_b = 0, fly_n = 0, fly_id = 0;
	for (uint32_t id = 1; id < 20000 && !crashed; id++) {
		uint32_t nblk = rnd(e, 10) < 7 ? 1 : EXT / (4 * KIB);
		uint32_t b = (uint32_t)rnd(e, NBLK / nblk) * nblk;
		fill(buf, nblk, id);
		struct wait w = {0};
		struct iovec iov = {.iov_base = buf, .iov_len = nblk * 4 * KIB};
		assert_int_equal(vvol_write(e->v, (uint64_t)b * 4 * KIB, iov.iov_len, &iov, 1, done_cb, &w), 0);
		fly_b = b, fly_n = nblk, fly_id = id;
		while (!w.done) {
			assert_true(vreactor_run_once(e->r, -1) >= 0);
			int ph = phase_of(e);
			if (window != WINDOW_AFTER && ph == window && done >= ckpts && steps++ >= skip) {
				crashed = true;
				break;
			}
			if (ph == VPOOL_CKPT_SUPERBLOCK && !live_done) {
				live_done = true; /* the crash "after" waits for its end */
			} else if (ph == VPOOL_CKPT_IDLE && live_done) {
				live_done = false;
				done++;
			}
		}
		if (crashed)
			break;
		assert_int_equal(w.res, 0);
		for (uint32_t i = 0; i < nblk; i++)
			e->acked[b + i] = id;
		if (window == WINDOW_AFTER && done > ckpts && after_acks++ >= skip)
			crashed = true;
		fly_n = 0;
	}
	assert_true(crashed);
	struct vpool_diag d;
	vpool_get_diag(e->p, &d);
	uint64_t live_records = d.ckpt_live_records;
	vblk_crashsim_crash_now(e->dev);
	vpool_abandon(e->p);
	vreactor_destroy(e->r);
	assert_int_equal(vreactor_create(64, &e->r), 0);
	vblk_crashsim_power_on(e->dev, e->r);
	assert_int_equal(vpool_open(e->dev, &e->p), 0);
	assert_int_equal(vpool_verify(e->p, stderr), 0);
	e->v = vpool_volume_find(e->p, "v");
	assert_non_null(e->v);
	for (uint32_t b = 0; b < NBLK; b++) {
		struct wait w = {0};
		struct iovec iov = {.iov_base = buf, .iov_len = 4 * KIB};
		assert_int_equal(vvol_read(e->v, (uint64_t)b * 4 * KIB, 4 * KIB, &iov, 1, done_cb, &w), 0);
		assert_int_equal(wait_run(e->r, &w), 0);
		bool in_flight = fly_n && b >= fly_b && b < fly_b + fly_n;
		if (!holds(buf, e->acked[b]) && !(in_flight && holds(buf, fly_id))) {
			fprintf(stderr, "window %d seed %llu: block %u lost write %u\n", window,
				(unsigned long long)seed, b, e->acked[b]);
			fail();
		}
	}
	assert_int_equal(vpool_close(e->p), 0);
	vblk_close(e->dev);
	vreactor_destroy(e->r);
	free(buf);
	free(e);
	return live_records;
}

static void check_window(int window)
{
	uint64_t live = 0;
	for (uint64_t seed = 1; seed <= SEEDS; seed++)
		live += run_window(window, seed + 100 * (uint64_t)window);
	/* appends went on while checkpoints wrote (the point of the mode) */
	assert_true(live > 0);
}

static void test_crash_quiescing(void **state)
{
	(void)state;
	check_window(VPOOL_CKPT_QUIESCE);
}

static void test_crash_writing_blob(void **state)
{
	(void)state;
	check_window(VPOOL_CKPT_BLOB);
}

static void test_crash_writing_superblock(void **state)
{
	(void)state;
	check_window(VPOOL_CKPT_SUPERBLOCK);
}

static void test_crash_after_live_checkpoint(void **state)
{
	(void)state;
	check_window(WINDOW_AFTER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_quiescing),
		cmocka_unit_test(test_crash_writing_blob),
		cmocka_unit_test(test_crash_writing_superblock),
		cmocka_unit_test(test_crash_after_live_checkpoint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
