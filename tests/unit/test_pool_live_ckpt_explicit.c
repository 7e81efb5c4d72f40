/*
 * Explicit checkpoints in live mode under load (found by session 25's review):
 * a live checkpoint's end released the ring before the freeze point and woke
 * the room waiters there (vjournal_release_to) before it resumed the journal
 * (ckpt_finish); a waiter that still found no room asked for the next
 * checkpoint, which started (the first had cleared `running`) and paused the
 * journal to quiesce -- and the first's vjournal_resume then unpaused it.
 * Appends went on under a quiescing checkpoint, whose quiesce never completed:
 * the ring filled and every metadata write waited for ever (the reactor
 * reported -EDEADLK). It needs a checkpoint that starts on a nearly empty ring
 * (vpool_checkpoint, close, grow) and a ring that fills while its blob is
 * written: the half-full trigger of test_pool_live_ckpt never gets there.
 *
 * How this file works: a minimum journal (520 KiB), QD 48 of 16 KiB writes and
 * 64 KiB unmaps at random places of a 40 MiB volume (each completion submits
 * the next), and vpool_checkpoint whenever none runs, every 50 reactor steps.
 * Every step: the reactor progresses, the pool has not failed, and no
 * checkpoint is quiescing while the journal takes appends. Then the load
 * stops, the pool closes and reopens (its checkpoint and replay) and passes
 * vpool_verify. Red without the fix at the first steps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vaaid/io.h"
#include "vaaid/pool.h"

#define KIB 1024u
#define MIB (1024u * KIB)
#define QD 48
#define OPS 60000u

struct load {
	struct vvol *v;
	uint64_t rng;
	unsigned inflight;
	uint64_t done, errs;
	uint8_t *buf;
	int stop;
	struct iovec iov;
};

static uint64_t rnd(struct load *c, uint64_t n)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng % n;
}

static void submit(struct load *c);

static void op_done(void *arg, int res)
{
	struct load *c = arg;
	c->inflight--;
	c->done++;
	if (res)
		c->errs++;
	if (!c->stop)
		submit(c);
}

static void submit(struct load *c)
{
	uint64_t vext = rnd(c, 640);
	if (rnd(c, 2)) {
		c->iov = (struct iovec){.iov_base = c->buf, .iov_len = 16 * KIB};
		if (vvol_write(c->v, vext * 64 * KIB, 16 * KIB, &c->iov, 1, op_done, c) == 0)
			c->inflight++;
	} else if (vvol_unmap(c->v, vext * 64 * KIB, 64 * KIB, op_done, c) == 0) {
		c->inflight++;
	}
}

static void test_explicit_checkpoints_under_load(void **state)
{
	(void)state;
	struct vreactor *r;
	struct vblk *dev;
	struct vpool *p;
	assert_int_equal(vreactor_create(256, &r), 0);
	assert_int_equal(vblk_crashsim_create_mem(r, 48 * MIB, 7, &dev), 0);
	struct vpool_params prm = {.size = 48 * MIB, .extent_size = 64 * KIB, .journal_size = 520 * KIB};
	assert_int_equal(vpool_format(dev, &prm), 0);
	assert_int_equal(vpool_open(dev, &p), 0);
	vpool_set_live_checkpoints(p, true);
	struct load c = {.rng = 88172645463325252ull};
	assert_int_equal(vpool_volume_create(p, "v", 40 * MIB, 512, &c.v), 0);
	c.buf = vblk_alloc_buf(64 * KIB);
	assert_non_null(c.buf);
	memset(c.buf, 0x5a, 64 * KIB);
	for (int i = 0; i < QD; i++)
		submit(&c);
	uint64_t ckpts = 0;
	for (uint64_t step = 0; c.done < OPS; step++) {
		assert_true(vreactor_run_once(r, -1) >= 0); /* -EDEADLK: the hang */
		struct vpool_diag d;
		vpool_get_diag(p, &d);
		assert_false(d.failed);
		if (d.ckpt_running && d.ckpt_phase == VPOOL_CKPT_QUIESCE && !d.journal.paused)
			fail_msg("step %llu: a checkpoint quiesces while the journal takes appends "
				 "(used %llu of %llu)", (unsigned long long)step,
				 (unsigned long long)d.journal.used, (unsigned long long)d.journal.size);
		if (!d.ckpt_running && step % 50 == 0) { /* on a nearly empty ring */
			assert_int_equal(vpool_checkpoint(p), 0);
			ckpts++;
		}
	}
	c.stop = 1;
	while (c.inflight)
		assert_true(vreactor_run_once(r, -1) >= 0);
	assert_int_equal(c.errs, 0);
	assert_true(ckpts > 10);
	vpool_close(p);
	assert_int_equal(vpool_open(dev, &p), 0);
	assert_int_equal(vpool_verify(p, stderr), 0);
	vpool_close(p);
	vblk_close(dev);
	free(c.buf);
	vreactor_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_explicit_checkpoints_under_load)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
