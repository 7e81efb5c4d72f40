/*
 * A live checkpoint whose refcount chunk cannot be copied aside (out of memory:
 * pool_refs_copy_aside, src/pool/refs_aside.c; docs/snapshots.md step 3). The
 * change goes ahead in place (a refcount change must not fail), the image is
 * marked broken and the checkpoint fails with -ENOMEM at its blob's end, never
 * writing a superblock that names a wrong blob: the pool stops (vpool_diag.failed,
 * as a paused checkpoint that runs out of memory does). Its store must then hold
 * a consistent pool: reopened, it recovers from the previous checkpoint and the
 * journal, vpool_verify (what vaai-check runs) is clean, every acknowledged write
 * reads back, and a later live checkpoint succeeds (and is itself read back
 * clean by another reopen).
 *
 * The allocation fails through the freeze's own hook (pool_refs_freeze.alloc, on
 * the pool's struct: no global state), set to an allocator that always fails.
 */
#include <errno.h>
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

#include "../../src/pool/pool_internal.h"
#include "pool_test_env.h"

#define KIB 1024u
#define MIB (1024u * KIB)
#define EXT (64 * KIB)
#define POOL (64 * MIB)
#define VEXT 512u     /* the volume: 32 MiB */
#define PREFILL 128u  /* extents written before the live checkpoint */
#define QD 8

struct load {
	struct vvol *v;
	unsigned inflight, next, end;
	bool stop;
	uint8_t round; /* in each extent's pattern: an overwrite differs */
	uint8_t acked[VEXT]; /* 1: its write was acknowledged GOOD */
	uint64_t errs;
	struct op {
		struct load *c;
		unsigned vext;
		uint8_t *buf;
		struct iovec iov;
	} ops[VEXT];
	uint8_t expect[VEXT]; /* the pattern of its acknowledged write */
	unsigned failed_allocs; /* by no_memory */
};

static void submit(struct load *c);

static uint8_t pattern(const struct load *c, unsigned vext)
{
	return (uint8_t)(0x11 + 37 * c->round + vext % 200);
}

static void op_done(void *arg, int res)
{
	struct op *o = arg;
	struct load *c = o->c;
	c->inflight--;
	free(o->buf);
	if (res == 0) {
		c->acked[o->vext] = 1;
		c->expect[o->vext] = pattern(c, o->vext);
	}
	else
		c->errs++;
	if (!c->stop)
		submit(c);
}


static void submit(struct load *c)
{
	if (c->next >= c->end)
		return;
	unsigned vext = c->next++;
	struct op *o = &c->ops[vext];
	*o = (struct op){.c = c, .vext = vext, .buf = vblk_alloc_buf(EXT)};
	assert_non_null(o->buf);
	memset(o->buf, pattern(c, vext), EXT);
	o->iov = (struct iovec){.iov_base = o->buf, .iov_len = EXT};
	if (vvol_write(c->v, (uint64_t)vext * EXT, EXT, &o->iov, 1, op_done, o) == 0) {
		c->inflight++;
	} else {
		free(o->buf);
		c->errs++;
	}
}

static void drain(struct vreactor *r, struct load *c)
{
	for (int i = 0; c->inflight && i < 100000; i++)
		assert_true(vreactor_run_once(r, 100) >= 0);
	assert_int_equal(c->inflight, 0);
}

static void *no_memory(void *ctx, size_t size)
{
	(void)size;
	((struct load *)ctx)->failed_allocs++;
	return NULL;
}

/* Every acknowledged extent reads back its pattern. */
static void check_acked(struct env *e, struct vvol *v, const struct load *c)
{
	uint8_t *b = vblk_alloc_buf(EXT);
	assert_non_null(b);
	for (unsigned x = 0; x < VEXT; x++) {
		if (!c->acked[x])
			continue;
		assert_int_equal(vread(e, v, (uint64_t)x * EXT, b, EXT), 0);
		for (unsigned i = 0; i < EXT; i++)
			if (b[i] != c->expect[x])
				fail_msg("extent %u byte %u: 0x%02x, acknowledged 0x%02x", x, i, b[i],
					 c->expect[x]);
	}
	free(b);
}

static void test_refs_copy_aside_oom(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, POOL, EXT, 2 * MIB);
	struct vreactor *r = e.r;
	struct vpool *p = e.p;
	struct load *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	assert_int_equal(vpool_volume_create(p, "v", (uint64_t)VEXT * EXT, 512, &c->v), 0);
	c->end = PREFILL;
	for (int i = 0; i < QD; i++)
		submit(c);
	drain(r, c);
	assert_int_equal(c->errs, 0);
	assert_int_equal(vpool_checkpoint(p), 0); /* paused: the prefill at rest */

	/* a live checkpoint under allocating writes (refcount changes after its freeze),
	 * every chunk copy failing */
	assert_int_equal(vpool_set_live_checkpoints(p, true), 0);
	p->refs_fz.alloc = no_memory;
	p->refs_fz.alloc_ctx = c;
	c->end = VEXT;
	for (int i = 0; i < QD; i++)
		submit(c);
	for (int i = 0; i < 10; i++)
		assert_true(vreactor_run_once(r, -1) >= 0);
	assert_int_equal(vpool_checkpoint(p), -ENOMEM);
	assert_true(c->failed_allocs > 0);
	struct vpool_diag d;
	vpool_get_diag(p, &d);
	assert_true(d.failed);
	assert_int_equal(d.ckpt_fail_phase, VPOOL_CKPT_BLOB); /* no superblock named the blob */
	assert_false(d.ckpt_running);
	c->stop = true;
	drain(r, c);
	unsigned acked = 0;
	for (unsigned x = 0; x < VEXT; x++)
		acked += c->acked[x];
	/* the load's writes were acknowledged (most before the checkpoint began, few
	 * or none while it ran: not asserted); all of them read back after the reopen */
	assert_true(acked > PREFILL);
	assert_int_equal(vpool_close(p), 0); /* a failed pool: closed without a checkpoint */

	/* the store: the previous checkpoint and the journal */
	assert_int_equal(vpool_open(e.dev, &p), 0);
	assert_int_equal(vpool_verify(p, stderr), 0);
	assert_non_null(c->v = vpool_volume_find(p, "v"));
	check_acked(&e, c->v, c);
	/* a later live checkpoint succeeds (the hook is gone with the old pool) */
	assert_int_equal(vpool_set_live_checkpoints(p, true), 0);
	assert_null(p->refs_fz.alloc);
	c->stop = false;
	c->errs = 0; /* phase 1's writes after the pool failed did fail */
	c->round = 1;
	c->next = PREFILL; /* overwrite the top again (refcounts change: new extents) */
	c->end = VEXT;
	for (int i = 0; i < QD; i++)
		submit(c);
	for (int i = 0; i < 10; i++)
		assert_true(vreactor_run_once(r, -1) >= 0);
	assert_int_equal(vpool_checkpoint(p), 0);
	vpool_get_diag(p, &d);
	assert_false(d.failed);
	assert_true(d.ckpt_last.live);
	c->stop = true;
	drain(r, c);
	assert_int_equal(c->errs, 0); /* no write failed around the good checkpoint */
	assert_int_equal(vpool_close(p), 0);
	assert_int_equal(vpool_open(e.dev, &e.p), 0);
	assert_non_null(c->v = vpool_volume_find(e.p, "v"));
	check_acked(&e, c->v, c);
	env_close(&e); /* vpool_verify, close */
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refs_copy_aside_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
