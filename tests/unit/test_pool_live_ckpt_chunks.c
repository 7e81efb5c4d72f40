/*
 * A live checkpoint on a pool of more than one refcount chunk (refs_aside.h:
 * 4,096 extents a chunk). The other live-checkpoint tests use pools of at most
 * 768 extents, one chunk, which the first refcount change after the freeze
 * copies aside whichever path makes it: a change path without its
 * pool_refs_touch went unseen there (session 26's review). Here the changes
 * during the checkpoint are of one kind only and fall in the second chunk:
 *   - drops: UNMAPs of allocated extents, top of the volume first
 *     (pool_ref_drop's touch);
 *   - adds: allocating writes into the volume's untouched top
 *     (pool_apply_map's touch).
 * Power is cut right after the live checkpoint's superblock; the recovery reads
 * its blob and replays from the freeze point, and vpool_verify must pass (the
 * blob's refcounts are those at the freeze, or the replay counts twice).
 * Red with either pool_refs_touch removed (vpool_open refuses: -EUCLEAN).
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
#define EXT (64 * KIB)
#define POOL (320 * MIB) /* 5,120 extents: two refcount chunks */
#define VEXT 4800u
#define QD 32

struct load {
	struct vvol *v;
	unsigned inflight, next, end;
	uint64_t done, errs;
	bool unmap, stop, top_down;
	uint8_t *buf;
	struct iovec iov[QD];
};

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
	if (c->next >= c->end)
		return;
	uint64_t vext = c->top_down ? VEXT - 1 - c->next : c->next;
	c->next++;
	int rc;
	if (c->unmap) {
		rc = vvol_unmap(c->v, vext * EXT, EXT, op_done, c);
	} else {
		struct iovec *iov = &c->iov[c->next % QD];
		*iov = (struct iovec){.iov_base = c->buf, .iov_len = EXT};
		rc = vvol_write(c->v, vext * EXT, EXT, iov, 1, op_done, c);
	}
	if (rc == 0)
		c->inflight++;
	else
		c->errs++;
}

static void run(struct vreactor *r, struct load *c)
{
	for (int i = 0; i < QD; i++)
		submit(c);
	while (c->inflight)
		assert_true(vreactor_run_once(r, -1) >= 0);
	assert_int_equal(c->errs, 0);
}

/* prefill: extents written (from vext 0 up) before; then during the live
 * checkpoint the load unmaps (drops) or writes (adds) from the top down. */
static void live_ckpt_second_chunk(unsigned prefill, bool drops)
{
	struct vreactor *r;
	struct vblk *dev;
	struct vpool *p;
	assert_int_equal(vreactor_create(256, &r), 0);
	assert_int_equal(vblk_crashsim_create_mem(r, POOL, 7, &dev), 0);
	struct vpool_params prm = {.size = POOL, .extent_size = EXT, .journal_size = 2 * MIB};
	assert_int_equal(vpool_format(dev, &prm), 0);
	assert_int_equal(vpool_open(dev, &p), 0);
	struct load *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	assert_int_equal(vpool_volume_create(p, "v", (uint64_t)VEXT * EXT, 512, &c->v), 0);
	c->buf = vblk_alloc_buf(EXT);
	assert_non_null(c->buf);
	memset(c->buf, 0x5a, EXT);
	c->end = prefill;
	run(r, c);
	assert_int_equal(vpool_checkpoint(p), 0); /* paused: the prefill at rest */

	assert_int_equal(vpool_set_live_checkpoints(p, true), 0);
	*c = (struct load){.v = c->v, .buf = c->buf, .unmap = drops, .top_down = true,
			   .end = drops ? VEXT : VEXT - prefill};
	for (int i = 0; i < QD; i++)
		submit(c);
	for (int i = 0; i < 20; i++) /* some changes before the freeze too */
		assert_true(vreactor_run_once(r, -1) >= 0);
	assert_int_equal(vpool_checkpoint(p), 0); /* live: the load goes on meanwhile */
	struct vpool_diag d;
	vpool_get_diag(p, &d);
	assert_true(d.ckpt_live_records > 0); /* changes made while the blob was written */

	c->stop = true;
	vblk_crashsim_crash_now(dev); /* right after the live checkpoint's superblock */
	vpool_abandon(p);
	vreactor_destroy(r);
	assert_int_equal(vreactor_create(256, &r), 0);
	vblk_crashsim_power_on(dev, r);
	assert_int_equal(vpool_open(dev, &p), 0);
	assert_int_equal(vpool_verify(p, stderr), 0);
	assert_int_equal(vpool_close(p), 0);
	vblk_close(dev);
	vreactor_destroy(r);
	free(c->buf);
	free(c);
}

static void test_drops_in_second_chunk(void **state)
{
	(void)state;
	live_ckpt_second_chunk(VEXT, true);
}

static void test_adds_in_second_chunk(void **state)
{
	(void)state;
	live_ckpt_second_chunk(4200, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drops_in_second_chunk),
		cmocka_unit_test(test_adds_in_second_chunk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
