/*
 * Unit tests of the crash-simulating device (src/io/vblk_crashsim.c):
 * read-after-write, completions only from the loop, DSYNC durability, what a
 * crash does to unflushed writes over many seeds (dropped / applied / torn at
 * 512 bytes, never garbage), flush semantics (only writes completed before the
 * flush was submitted), overlapping writes, arm(n), the dead device (write
 * callbacks never run, even those already queued or in the same delivery
 * batch; reads fail -EIO), power_on with a new reactor after destroying the
 * old one with completions still queued (clean under ASan), the file round
 * trip, io_count, grow; the fault models: trashed sectors (random bytes only
 * where an unsynced write changed them), lost allocations and grows
 * (VBLK_CS_LOST_ALLOC), garbage injected for oracle self-tests; kept images
 * (vblk_cs_images): a device made on them after another starts from zeros
 * whatever the other wrote (visible, durable, crash outcomes, garbage, a grow).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "vaaid/buf_cache.h"
#include "vaaid/io.h"

#define MIB (1024u * 1024)
#define SEC VBLK_SECTOR

struct wait {
	struct vio_op op;
	bool done;
	int res;
	int calls;
};

static void wait_cb(void *arg, int res)
{
	struct wait *w = arg;
	w->res = res;
	w->done = true;
	w->calls++;
}

static void wait_init(struct wait *w)
{
	memset(w, 0, sizeof(*w));
	vio_op_init(&w->op, wait_cb, w);
}

static void fill(uint8_t *p, size_t len, uint8_t v)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(v ^ (i / SEC));
}

static void run_idle(struct vreactor *r)
{
	for (int i = 0; i < 5; i++)
		assert_true(vreactor_run_once(r, 0) >= 0);
}

static struct vreactor *new_reactor(void)
{
	struct vreactor *r;
	assert_int_equal(vreactor_create(64, &r), 0);
	return r;
}

static struct vblk *new_mem(struct vreactor *r, uint64_t size, uint64_t seed)
{
	struct vblk *b = NULL;
	assert_int_equal(vblk_crashsim_create_mem(r, size, seed, &b), 0);
	assert_true(vblk_is_crashsim(b));
	return b;
}

static int submit_write(struct vblk *b, const void *buf, size_t len, uint64_t off, unsigned fl,
			struct wait *w)
{
	wait_init(w);
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	return vblk_writev(b, &iov, 1, off, fl, &w->op);
}

/* Crash now, power back on (same reactor), read [off, off+len). */
static void crash_and_read(struct vblk *b, void *buf, size_t len, uint64_t off)
{
	vblk_crashsim_crash_now(b);
	assert_true(vblk_crashsim_crashed(b));
	vblk_crashsim_power_on(b, b->reactor);
	assert_false(vblk_crashsim_crashed(b));
	assert_int_equal(vblk_pread_sync(b, buf, len, off), 0);
}

static void test_read_after_write(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor();
	struct vblk *b = new_mem(r, MIB, 1);
	uint8_t w[4096], rd[4096];
	fill(w, sizeof(w), 0x11);
	struct wait wt;
	assert_int_equal(submit_write(b, w, sizeof(w), 8192, 0, &wt), 0);
	assert_false(wt.done); /* never from inside the submitting call */
	/* Visible to reads at once, before the write's callback. */
	struct wait rw;
	wait_init(&rw);
	struct iovec iov[2] = {{rd, 1024}, {rd + 1024, 3072}};
	assert_int_equal(vblk_readv(b, iov, 2, 8192, &rw.op), 0);
	assert_false(rw.done);
	assert_int_equal(vreactor_run_until(r, &rw.done), 0);
	assert_int_equal(rw.res, 4096);
	assert_memory_equal(w, rd, sizeof(w));
	assert_int_equal(vreactor_run_until(r, &wt.done), 0);
	assert_int_equal(wt.res, 4096);
	assert_int_equal(wt.calls, 1);
	run_idle(r);
	assert_int_equal(wt.calls, 1);
	/* Argument checks: synchronous, no callback. */
	assert_int_equal(submit_write(b, w, 100, 0, 0, &wt), -EINVAL);
	assert_int_equal(submit_write(b, w, 512, 3, 0, &wt), -EINVAL);
	assert_int_equal(submit_write(b, w, 1024, MIB - 512, 0, &wt), -EINVAL);
	run_idle(r);
	assert_int_equal(wt.calls, 0);
	assert_int_equal(b->stats.write_ops, 1);
	assert_int_equal(b->stats.read_ops, 1);
	assert_int_equal(b->stats.bytes_written, 4096);
	vblk_close(b);
	vreactor_destroy(r);
}

static void test_dsync_survives(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct vreactor *r = new_reactor();
		struct vblk *b = new_mem(r, MIB, seed);
		uint8_t w[8192], rd[8192];
		fill(w, sizeof(w), 0x22);
		assert_int_equal(vblk_pwrite_sync(b, w, sizeof(w), 65536, VBLK_DSYNC), 0);
		crash_and_read(b, rd, sizeof(rd), 65536);
		assert_memory_equal(w, rd, sizeof(w));
		vblk_close(b);
		vreactor_destroy(r);
	}
}

/* Outcome of an unflushed 8-sector write over old data: each sector old or new. */
enum { ALL_OLD = 1, ALL_NEW = 2, TORN = 4 };

static int classify(const uint8_t *got, const uint8_t *old, const uint8_t *neu, size_t len)
{
	int n_old = 0, n_new = 0;
	for (size_t s = 0; s < len; s += SEC) {
		if (memcmp(got + s, old + s, SEC) == 0)
			n_old++;
		else if (memcmp(got + s, neu + s, SEC) == 0)
			n_new++;
		else
			fail_msg("sector %zu is neither old nor new", s / SEC);
	}
	int total = (int)(len / SEC);
	return n_old == total ? ALL_OLD : n_new == total ? ALL_NEW : TORN;
}

static void test_unflushed_outcomes(void **state)
{
	(void)state;
	uint8_t old[4096], neu[4096], got[4096];
	fill(old, sizeof(old), 0x33);
	fill(neu, sizeof(neu), 0xc4);
	int seen = 0;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		struct vreactor *r = new_reactor();
		struct vblk *b = new_mem(r, MIB, seed);
		assert_int_equal(vblk_pwrite_sync(b, old, sizeof(old), 4096, VBLK_DSYNC), 0);
		/* Completed (callback ran) but never flushed. */
		assert_int_equal(vblk_pwrite_sync(b, neu, sizeof(neu), 4096, 0), 0);
		assert_int_equal(vblk_pread_sync(b, got, sizeof(got), 4096), 0);
		assert_memory_equal(got, neu, sizeof(got));
		crash_and_read(b, got, sizeof(got), 4096);
		seen |= classify(got, old, neu, sizeof(got));
		vblk_close(b);
		vreactor_destroy(r);
	}
	assert_int_equal(seen, ALL_OLD | ALL_NEW | TORN);
}

static void test_flush_makes_durable(void **state)
{
	(void)state;
	uint8_t a[4096], c[4096], got[4096];
	fill(a, sizeof(a), 0x44);
	fill(c, sizeof(c), 0x55);
	for (uint64_t seed = 1; seed <= 50; seed++) {
		struct vreactor *r = new_reactor();
		struct vblk *b = new_mem(r, MIB, seed);
		assert_int_equal(vblk_pwrite_sync(b, a, sizeof(a), 0, 0), 0);
		assert_int_equal(vblk_pwrite_sync(b, c, sizeof(c), 2 * MIB / 4, 0), 0);
		assert_int_equal(vblk_flush_sync(b), 0);
		crash_and_read(b, got, sizeof(got), 0);
		assert_memory_equal(got, a, sizeof(a));
		assert_int_equal(vblk_pread_sync(b, got, sizeof(got), 2 * MIB / 4), 0);
		assert_memory_equal(got, c, sizeof(c));
		vblk_close(b);
		vreactor_destroy(r);
	}
}

/* A flush covers only writes whose callback ran before the flush was submitted. */
static void test_flush_only_completed(void **state)
{
	(void)state;
	uint8_t old[2048], neu[2048], got[2048];
	memset(old, 0, sizeof(old));
	fill(neu, sizeof(neu), 0x66);
	int seen = 0;
	for (uint64_t seed = 1; seed <= 100; seed++) {
		struct vreactor *r = new_reactor();
		struct vblk *b = new_mem(r, MIB, seed);
		struct wait ww, fw;
		assert_int_equal(submit_write(b, neu, sizeof(neu), 0, 0, &ww), 0);
		wait_init(&fw);
		assert_int_equal(vblk_flush(b, &fw.op), 0); /* before the write's callback */
		assert_int_equal(vreactor_run_until(r, &fw.done), 0);
		assert_true(ww.done);
		assert_int_equal(fw.res, 0);
		crash_and_read(b, got, sizeof(got), 0);
		seen |= classify(got, old, neu, sizeof(got));
		vblk_close(b);
		vreactor_destroy(r);
	}
	assert_true(seen & ALL_OLD); /* not made durable by that flush */
}

/* An older unflushed write never overrides a newer durable one. */
static void test_overlap_newer_wins(void **state)
{
	(void)state;
	uint8_t a[4096], bb[4096], got[4096];
	fill(a, sizeof(a), 0x77);
	fill(bb, sizeof(bb), 0x88);
	for (uint64_t seed = 1; seed <= 50; seed++) {
		struct vreactor *r = new_reactor();
		struct vblk *b = new_mem(r, MIB, seed);
		assert_int_equal(vblk_pwrite_sync(b, a, sizeof(a), 0, 0), 0);          /* pending */
		assert_int_equal(vblk_pwrite_sync(b, bb + 1024, 2048, 1024, VBLK_DSYNC), 0); /* durable */
		crash_and_read(b, got, sizeof(got), 0);
		assert_memory_equal(got + 1024, bb + 1024, 2048);
		for (size_t s = 0; s < 4096; s += SEC) {
			if (s >= 1024 && s < 3072)
				continue;
			bool zero = true;
			for (size_t i = 0; i < SEC; i++)
				zero = zero && got[s + i] == 0;
			assert_true(zero || memcmp(got + s, a + s, SEC) == 0);
		}
		vblk_close(b);
		vreactor_destroy(r);
	}
}

static void test_arm(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct vreactor *r = new_reactor();
		struct vblk *b = new_mem(r, MIB, seed);
		uint8_t w[5][4096], got[4096];
		for (int i = 0; i < 5; i++)
			fill(w[i], 4096, (uint8_t)(0x10 * (i + 1)));
		uint64_t base = vblk_crashsim_io_count(b);
		vblk_crashsim_arm(b, 3);
		assert_int_equal(vblk_pwrite_sync(b, w[0], 4096, 0, VBLK_DSYNC), 0);
		assert_int_equal(vblk_pwrite_sync(b, w[1], 4096, 4096, VBLK_DSYNC), 0);
		assert_false(vblk_crashsim_crashed(b));
		struct wait wt;
		assert_int_equal(submit_write(b, w[2], 4096, 8192, VBLK_DSYNC, &wt), 0);
		assert_true(vblk_crashsim_crashed(b));
		assert_int_equal(vblk_crashsim_io_count(b), base + 3);
		assert_int_equal(vblk_pwrite_sync(b, w[3], 4096, 12288, VBLK_DSYNC), -EIO);
		assert_int_equal(vblk_flush_sync(b), -EIO);
		run_idle(r);
		/* The write that fired the crash fails (it may or may not have landed). */
		assert_true(wt.done);
		assert_int_equal(wt.res, -EIO);
		assert_int_equal(wt.calls, 1);
		vblk_crashsim_power_on(b, r);
		for (int i = 0; i < 4; i++) {
			assert_int_equal(vblk_pread_sync(b, got, 4096, (uint64_t)i * 4096), 0);
			if (i < 2) {
				assert_memory_equal(got, w[i], 4096);
			} else {
				for (int k = 0; k < 4096; k++)
					assert_int_equal(got[k], 0);
			}
		}
		/* Disarmed by the crash; the device works again. */
		assert_int_equal(vblk_pwrite_sync(b, w[4], 4096, 0, VBLK_DSYNC), 0);
		assert_int_equal(wt.calls, 1);
		vblk_close(b);
		vreactor_destroy(r);
	}
}

/*
 * A pair (vblk_crashsim_link): one countdown over both devices' writes, one
 * power loss for both, one power-on for both; a flush of one makes nothing of
 * the other durable (over many seeds, some crash loses the other's unsynced
 * write); closing one unpairs the other.
 */
static void test_pair(void **state)
{
	(void)state;
	int lost = 0;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct vreactor *r = new_reactor();
		struct vblk *a = new_mem(r, MIB, seed), *b = new_mem(r, MIB, seed + 100);
		assert_int_equal(vblk_crashsim_link(a, b), 0);
		assert_int_equal(vblk_crashsim_link(a, b), -EBUSY);
		uint8_t w[3][4096], got[4096];
		for (int i = 0; i < 3; i++)
			fill(w[i], 4096, (uint8_t)(0x21 * (i + 1)));
		uint64_t base = vblk_crashsim_io_count(a);
		vblk_crashsim_arm(b, 4); /* the follower's arm is the leader's countdown */
		assert_int_equal(vblk_pwrite_sync(a, w[0], 4096, 0, 0), 0);          /* 1: not synced */
		assert_int_equal(vblk_pwrite_sync(b, w[1], 4096, 0, VBLK_DSYNC), 0); /* 2 */
		assert_int_equal(vblk_flush_sync(b), 0);                             /* 3 */
		assert_int_equal(vblk_crashsim_io_count(b), base + 3);
		assert_false(vblk_crashsim_crashed(a) || vblk_crashsim_crashed(b));
		struct wait wt;
		assert_int_equal(submit_write(a, w[2], 4096, 8192, VBLK_DSYNC, &wt), 0); /* 4: fires */
		assert_true(vblk_crashsim_crashed(a));
		assert_true(vblk_crashsim_crashed(b));
		assert_int_equal(vblk_pwrite_sync(b, w[2], 4096, 4096, VBLK_DSYNC), -EIO);
		run_idle(r);
		assert_int_equal(wt.res, -EIO);
		vblk_crashsim_power_on(b, r); /* powers both on */
		assert_false(vblk_crashsim_crashed(a));
		assert_int_equal(vblk_pread_sync(b, got, 4096, 0), 0);
		assert_memory_equal(got, w[1], 4096); /* DSYNC: durable */
		assert_int_equal(vblk_pread_sync(a, got, 4096, 0), 0);
		if (memcmp(got, w[0], 4096))
			lost++; /* b's flush did not make a's write durable */
		vblk_close(a); /* unpairs: b alone from now on */
		vblk_crashsim_crash_now(b);
		vblk_crashsim_power_on(b, r);
		assert_int_equal(vblk_pwrite_sync(b, w[0], 4096, 0, VBLK_DSYNC), 0);
		vblk_close(b);
		vreactor_destroy(r);
	}
	assert_true(lost > 0);
}

static void test_dead_device(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor();
	struct vblk *b = new_mem(r, MIB, 7);
	uint8_t w[4096], rd[4096];
	fill(w, sizeof(w), 0x99);
	/* Everything in flight at the crash fails with -EIO, and everything after it. */
	struct wait w1, w2, f1, rdw;
	assert_int_equal(submit_write(b, w, 4096, 0, VBLK_DSYNC, &w1), 0);
	assert_int_equal(submit_write(b, w, 4096, 4096, 0, &w2), 0);
	wait_init(&f1);
	assert_int_equal(vblk_flush(b, &f1.op), 0);
	wait_init(&rdw);
	struct iovec riov = {rd, 4096};
	assert_int_equal(vblk_readv(b, &riov, 1, 0, &rdw.op), 0);
	vblk_crashsim_crash_now(b);
	assert_int_equal(vreactor_run_until(r, &rdw.done), 0);
	assert_int_equal(rdw.res, -EIO); /* a read in flight fails */
	struct wait w3, f2, a1;
	assert_int_equal(submit_write(b, w, 4096, 8192, VBLK_DSYNC, &w3), 0);
	wait_init(&f2);
	assert_int_equal(vblk_flush(b, &f2.op), 0);
	wait_init(&a1);
	assert_int_equal(vblk_allocate(b, 0, 4096, &a1.op), 0);
	assert_int_equal(vblk_pread_sync(b, rd, 4096, 0), -EIO);
	assert_int_equal(vblk_pwrite_sync(b, w, 4096, 12288, VBLK_DSYNC), -EIO);
	run_idle(r);
	struct wait *all[] = {&w1, &w2, &f1, &w3, &f2, &a1};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		assert_int_equal(all[i]->calls, 1);
		assert_int_equal(all[i]->res, -EIO);
	}
	assert_int_equal(b->ops->grow(b, 2 * MIB), -EIO);
	vblk_crashsim_power_on(b, r);
	run_idle(r);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		assert_int_equal(all[i]->calls, 1);
	assert_int_equal(rdw.calls, 1);
	/* Nothing written after the crash landed. */
	for (uint64_t off = 8192; off <= 12288; off += 4096) {
		assert_int_equal(vblk_pread_sync(b, rd, 4096, off), 0);
		for (int k = 0; k < 4096; k++)
			assert_int_equal(rd[k], 0);
	}
	vblk_close(b);
	vreactor_destroy(r);
}

/* A callback that crashes the device: the rest of its delivery batch fails. */
struct crasher {
	struct wait w;
	struct vblk *b;
};

static void crasher_cb(void *arg, int res)
{
	struct crasher *c = arg;
	wait_cb(&c->w, res);
	vblk_crashsim_crash_now(c->b);
}

static void test_crash_inside_callback(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor();
	struct vblk *b = new_mem(r, MIB, 3);
	uint8_t w[4096];
	fill(w, sizeof(w), 0xab);
	struct crasher c = {.b = b};
	wait_init(&c.w);
	c.w.op.cb = crasher_cb;
	c.w.op.arg = &c;
	struct iovec iov = {w, 4096};
	assert_int_equal(vblk_writev(b, &iov, 1, 0, VBLK_DSYNC, &c.w.op), 0);
	struct wait w2, f;
	assert_int_equal(submit_write(b, w, 4096, 4096, VBLK_DSYNC, &w2), 0);
	wait_init(&f);
	assert_int_equal(vblk_flush(b, &f.op), 0);
	assert_int_equal(vreactor_run_until(r, &c.w.done), 0);
	run_idle(r);
	assert_int_equal(c.w.calls, 1);
	assert_int_equal(w2.calls, 1);
	assert_int_equal(w2.res, -EIO);
	assert_int_equal(f.calls, 1);
	assert_int_equal(f.res, -EIO);
	assert_true(vblk_crashsim_crashed(b));
	vblk_crashsim_power_on(b, r);
	uint8_t got[4096];
	assert_int_equal(vblk_pread_sync(b, got, 4096, 0), 0);
	assert_memory_equal(got, w, 4096); /* durable before its callback ran */
	vblk_close(b);
	vreactor_destroy(r);
}

static void test_power_on_new_reactor(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor();
	struct vblk *b = new_mem(r, 4 * MIB, 11);
	uint8_t w[8192], got[8192];
	fill(w, sizeof(w), 0x5c);
	assert_int_equal(vblk_pwrite_sync(b, w, sizeof(w), MIB, VBLK_DSYNC), 0);
	/* Leave completions queued and a kick in flight, then lose the reactor. */
	struct wait ws[8], rw;
	for (int i = 0; i < 8; i++)
		assert_int_equal(submit_write(b, w, 4096, (uint64_t)i * 4096, 0, &ws[i]), 0);
	wait_init(&rw);
	struct iovec riov = {got, 4096};
	assert_int_equal(vblk_readv(b, &riov, 1, 0, &rw.op), 0);
	vblk_crashsim_crash_now(b);
	vreactor_destroy(r);
	struct vreactor *r2 = new_reactor();
	vblk_crashsim_power_on(b, r2);
	assert_ptr_equal(b->reactor, r2);
	assert_int_equal(vblk_pread_sync(b, got, sizeof(got), MIB), 0);
	assert_memory_equal(got, w, sizeof(w));
	assert_int_equal(vblk_pwrite_sync(b, w, 4096, 0, VBLK_DSYNC), 0);
	for (int i = 0; i < 8; i++)
		assert_int_equal(ws[i].calls, 0);
	assert_int_equal(rw.calls, 0);
	/* And once more without a crash in between (power_on cuts the power). */
	struct wait pending;
	assert_int_equal(submit_write(b, w, 4096, 8192, 0, &pending), 0);
	vreactor_destroy(r2);
	struct vreactor *r3 = new_reactor();
	vblk_crashsim_power_on(b, r3);
	assert_int_equal(vblk_pread_sync(b, got, 4096, 0), 0);
	assert_memory_equal(got, w, 4096);
	assert_int_equal(pending.calls, 0);
	vblk_close(b);
	vreactor_destroy(r3);
}

static void tmp_path(char *buf, size_t len, const char *name)
{
	const char *dir = getenv("VAAID_TEST_TMP");
	if (!dir || !*dir)
		dir = "/tmp";
	mkdir(dir, 0755);
	snprintf(buf, len, "%s/%s.%d", dir, name, (int)getpid());
}

static void test_file_round_trip(void **state)
{
	(void)state;
	char path[512];
	tmp_path(path, sizeof(path), "test_io_crashsim.img");
	unlink(path);
	struct vreactor *r = new_reactor();
	struct vblk *b = NULL;
	assert_int_equal(vblk_crashsim_open(r, path, 8 * MIB, 5, &b), 0);
	assert_int_equal(b->size, 8 * MIB);
	struct vblk *b2 = NULL;
	assert_int_equal(vblk_crashsim_open(r, path, 8 * MIB, 5, &b2), -EEXIST);
	uint8_t w[8192], got[8192];
	fill(w, sizeof(w), 0x3d);
	assert_int_equal(vblk_pwrite_sync(b, w, sizeof(w), 3 * MIB + 512, VBLK_DSYNC), 0);
	assert_int_equal(vblk_pwrite_sync(b, w, 4096, 5 * MIB, 0), 0);
	assert_int_equal(vblk_flush_sync(b), 0);
	assert_int_equal(vblk_pwrite_sync(b, w, 4096, 6 * MIB, 0), 0); /* never durable */
	uint64_t n = vblk_crashsim_io_count(b);
	assert_int_equal(n, 4); /* 3 writes + 1 flush */
	vblk_close(b);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 8 * MIB);
	assert_true((uint64_t)st.st_blocks * 512 <= 256 * 1024); /* zero blocks are holes */
	assert_int_equal(vblk_crashsim_open(r, path, 0, 5, &b), 0);
	assert_int_equal(b->size, 8 * MIB);
	assert_int_equal(vblk_crashsim_io_count(b), 0);
	assert_int_equal(vblk_pread_sync(b, got, sizeof(got), 3 * MIB + 512), 0);
	assert_memory_equal(got, w, sizeof(w));
	assert_int_equal(vblk_pread_sync(b, got, 4096, 5 * MIB), 0);
	assert_memory_equal(got, w, 4096);
	assert_int_equal(vblk_pread_sync(b, got, 4096, 6 * MIB), 0);
	for (int i = 0; i < 4096; i++)
		assert_int_equal(got[i], 0);
	/* Overwrite with zeros: the block becomes a hole again on close. */
	memset(got, 0, sizeof(got));
	assert_int_equal(vblk_pwrite_sync(b, got, sizeof(got), 3 * MIB, VBLK_DSYNC), 0);
	assert_int_equal(vblk_pwrite_sync(b, got, sizeof(got), 3 * MIB + 8192, VBLK_DSYNC), 0);
	vblk_close(b);
	assert_int_equal(vblk_crashsim_open(r, path, 0, 5, &b), 0);
	assert_int_equal(vblk_pread_sync(b, got, sizeof(got), 3 * MIB + 512), 0);
	for (size_t i = 0; i < sizeof(got); i++)
		assert_int_equal(got[i], 0);
	assert_int_equal(vblk_pread_sync(b, got, 4096, 5 * MIB), 0);
	assert_memory_equal(got, w, 4096);
	vblk_close(b);
	unlink(path);
	assert_int_equal(vblk_crashsim_open(r, path, 0, 5, &b), -ENOENT);
	vreactor_destroy(r);
}

static void test_grow_allocate(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor();
	struct vblk *b = new_mem(r, MIB, 9);
	uint8_t w[4096], got[4096];
	fill(w, sizeof(w), 0xee);
	assert_int_equal(b->ops->grow(b, 512 * 1024), -EINVAL);
	assert_int_equal(b->ops->grow(b, 2 * MIB), 0);
	assert_int_equal(b->size, 2 * MIB);
	assert_int_equal(vblk_pwrite_sync(b, w, 4096, 2 * MIB - 4096, VBLK_DSYNC), 0);
	struct wait a;
	wait_init(&a);
	assert_int_equal(vblk_allocate(b, 0, 2 * MIB, &a.op), 0);
	assert_false(a.done);
	assert_int_equal(vreactor_run_until(r, &a.done), 0);
	assert_int_equal(a.res, 0);
	crash_and_read(b, got, 4096, 2 * MIB - 4096);
	assert_memory_equal(got, w, 4096);
	vblk_close(b);
	vreactor_destroy(r);
}

/* ---- fault models */

static bool is_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * VBLK_CS_TRASH: an unsynced write's sectors come back old, new or random (some seed
 * shows each); never random where the write did not change the bytes, nor where a
 * newer durable write covers them, nor in a durable write.
 */
static void test_trash(void **state)
{
	(void)state;
	uint8_t old[4096], neu[4096], got[4096], dur[4096];
	fill(old, sizeof(old), 0x31);
	fill(neu, sizeof(neu), 0xb7);
	fill(dur, sizeof(dur), 0x5a);
	memcpy(neu + 3 * SEC, old + 3 * SEC, SEC); /* sector 3: rewritten with the same bytes */
	unsigned n_old = 0, n_new = 0, n_trash = 0;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		struct vreactor *r = new_reactor();
		struct vblk *b = new_mem(r, MIB, seed);
		vblk_crashsim_set_faults(b, VBLK_CS_TRASH);
		assert_int_equal(vblk_pwrite_sync(b, old, sizeof(old), 4096, VBLK_DSYNC), 0);
		assert_int_equal(vblk_pwrite_sync(b, neu, sizeof(neu), 4096, 0), 0); /* unsynced */
		/* A newer durable write over sectors 6-7: they never come back random. */
		assert_int_equal(vblk_pwrite_sync(b, dur, 2 * SEC, 4096 + 6 * SEC, VBLK_DSYNC), 0);
		/* Elsewhere an unsynced write then a durable one: the durable stays. */
		assert_int_equal(vblk_pwrite_sync(b, neu, sizeof(neu), 65536, 0), 0);
		assert_int_equal(vblk_pwrite_sync(b, dur, sizeof(dur), 65536, VBLK_DSYNC), 0);
		crash_and_read(b, got, sizeof(got), 4096);
		for (size_t s = 0; s < 6 * SEC; s += SEC) {
			if (!memcmp(got + s, old + s, SEC))
				n_old++;
			else if (!memcmp(got + s, neu + s, SEC))
				n_new++;
			else
				n_trash++;
			if (s == 3 * SEC)
				assert_memory_equal(got + s, old + s, SEC);
		}
		assert_memory_equal(got + 6 * SEC, dur, 2 * SEC);
		assert_int_equal(vblk_pread_sync(b, got, sizeof(got), 65536), 0);
		assert_memory_equal(got, dur, sizeof(dur));
		struct vblk_crashsim_fault_stats st;
		vblk_crashsim_fault_stats(b, &st);
		assert_true(st.trashed_sectors <= 5);
		vblk_close(b);
		vreactor_destroy(r);
	}
	assert_true(n_old > 0 && n_new > 0 && n_trash > 0);
	/* Off by default: never random (test_unflushed_outcomes checks old / new only). */
}

/* VBLK_CS_LOST_ALLOC, grows: lost unless a flush or a DSYNC write came after. */
static void test_lost_grow(void **state)
{
	(void)state;
	uint8_t w[4096], got[4096];
	fill(w, sizeof(w), 0x6e);
	/* nothing; a flush; a DSYNC write inside the old size (need not commit the size:
	 * POSIX data integrity asks only for what reading it back needs); a DSYNC write
	 * past the old end (needs the size, so commits it) */
	for (int how = 0; how < 4; how++) {
		struct vreactor *r = new_reactor();
		struct vblk *b = new_mem(r, MIB, 3);
		vblk_crashsim_set_faults(b, VBLK_CS_LOST_ALLOC);
		assert_int_equal(b->ops->grow(b, 2 * MIB), 0);
		assert_int_equal(b->size, 2 * MIB);
		/* Unsynced data past the old end: lost with the size, or kept with it. */
		assert_int_equal(vblk_pwrite_sync(b, w, 4096, MIB + 8192, 0), 0);
		if (how == 1)
			assert_int_equal(vblk_flush_sync(b), 0);
		if (how == 2)
			assert_int_equal(vblk_pwrite_sync(b, w, 4096, 0, VBLK_DSYNC), 0);
		if (how == 3)
			assert_int_equal(vblk_pwrite_sync(b, w, 4096, MIB + 16384, VBLK_DSYNC), 0);
		bool lost = how == 0 || how == 2;
		vblk_crashsim_crash_now(b);
		vblk_crashsim_power_on(b, r);
		struct vblk_crashsim_fault_stats st;
		vblk_crashsim_fault_stats(b, &st);
		assert_int_equal(b->size, lost ? MIB : 2 * MIB);
		assert_int_equal(st.lost_grows, lost ? 1 : 0);
		if (how == 1) { /* flushed: the data too */
			assert_int_equal(vblk_pread_sync(b, got, 4096, MIB + 8192), 0);
			assert_memory_equal(got, w, 4096);
		}
		if (lost) { /* grown again: what was past the old end reads zeros */
			assert_int_equal(b->ops->grow(b, 2 * MIB), 0);
			assert_int_equal(vblk_pread_sync(b, got, 4096, MIB + 8192), 0);
			assert_true(is_zero(got, 4096));
		}
		vblk_close(b);
		vreactor_destroy(r);
	}
	/* Without the fault model a grow is durable at once (test_grow_allocate). */
}

/*
 * VBLK_CS_LOST_ALLOC, allocations: an unsynced write into a 4 KiB block never
 * durably mapped is always lost (a hole / unwritten extent reads zeros); once a
 * flush made the allocate durable, or a durable write mapped the block, an
 * unsynced write there may survive (some seed); an allocate without a later
 * flush is counted lost.
 */
static void test_lost_alloc(void **state)
{
	(void)state;
	uint8_t w[4096], d[4096], got[4096];
	fill(w, sizeof(w), 0x1d);
	fill(d, sizeof(d), 0x2e);
	int kept_alloc = 0, kept_written = 0;
	for (uint64_t seed = 1; seed <= 60; seed++) {
		struct vreactor *r = new_reactor();
		struct vblk *b = new_mem(r, MIB, seed);
		vblk_crashsim_set_faults(b, VBLK_CS_LOST_ALLOC);
		/* Block at 0: allocated, never flushed. Block at 64 KiB: allocated and flushed.
		 * Block at 128 KiB: written durably once (mapped). */
		assert_int_equal(vblk_allocate_sync(b, 65536, 4096), 0);
		assert_int_equal(vblk_pwrite_sync(b, d, 4096, 131072, VBLK_DSYNC), 0);
		assert_int_equal(vblk_flush_sync(b), 0);
		assert_int_equal(vblk_allocate_sync(b, 0, 4096), 0); /* after the flush: pending */
		for (uint64_t off = 0; off <= 131072; off += 65536)
			assert_int_equal(vblk_pwrite_sync(b, w, 4096, off, 0), 0);
		/* A DSYNC write elsewhere does not make the allocation at 0 durable. */
		assert_int_equal(vblk_pwrite_sync(b, d, 4096, 4096 * 40, VBLK_DSYNC), 0);
		crash_and_read(b, got, 4096, 0);
		assert_true(is_zero(got, 4096));
		assert_int_equal(vblk_pread_sync(b, got, 4096, 65536), 0);
		kept_alloc += !memcmp(got, w, 4096);
		assert_int_equal(vblk_pread_sync(b, got, 4096, 131072), 0);
		kept_written += !memcmp(got, w, 4096);
		struct vblk_crashsim_fault_stats st;
		vblk_crashsim_fault_stats(b, &st);
		assert_int_equal(st.lost_allocs, 1);
		vblk_close(b);
		vreactor_destroy(r);
	}
	assert_true(kept_alloc > 0 && kept_written > 0);
}

/* VBLK_CS_INJECT_GARBAGE: the last durable data write's first sector goes bad. */
static void test_inject_garbage(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor();
	struct vblk *b = new_mem(r, MIB, 4);
	vblk_crashsim_set_faults(b, VBLK_CS_INJECT_GARBAGE);
	uint8_t w[4096], m[4096], got[4096];
	fill(w, sizeof(w), 0x44);
	fill(m, sizeof(m), 0x55);
	assert_int_equal(vblk_pwrite_sync(b, w, 4096, 8192, VBLK_DSYNC), 0);
	assert_int_equal(vblk_pwrite_sync(b, m, 4096, 0, VBLK_DSYNC | VBLK_META), 0);
	crash_and_read(b, got, 4096, 8192);
	assert_memory_not_equal(got, w, SEC);      /* the data write's first sector */
	assert_memory_equal(got + SEC, w + SEC, 4096 - SEC);
	assert_int_equal(vblk_pread_sync(b, got, 4096, 0), 0);
	assert_memory_equal(got, m, 4096);          /* metadata is left alone */
	struct vblk_crashsim_fault_stats st;
	vblk_crashsim_fault_stats(b, &st);
	assert_int_equal(st.injected, 1);
	vblk_close(b);
	vreactor_destroy(r);
}

/* Both images of a kept set all zeros: a device on them reads zeros, and after a
 * power loss (visible := durable) still does. */
static void assert_images_zero(struct vblk_cs_images *im, uint64_t seed)
{
	struct vreactor *r = new_reactor();
	struct vblk *b = NULL;
	assert_int_equal(vblk_crashsim_create_on(r, im, seed, &b), 0);
	uint8_t *got = malloc(MIB);
	assert_non_null(got);
	assert_int_equal(vblk_pread_sync(b, got, MIB, 0), 0);
	assert_true(is_zero(got, MIB)); /* visible */
	crash_and_read(b, got, MIB, 0);
	assert_true(is_zero(got, MIB)); /* durable */
	free(got);
	vblk_close(b);
	vreactor_destroy(r);
}

/* Every kind of write a device makes is undone when it closes: unsynced (visible
 * only), DSYNC and flushed (durable), what a crash applies, tears or trashes of
 * the pending ones, injected garbage, writes after power_on; one device at a time. */
static void test_kept_images(void **state)
{
	(void)state;
	struct vblk_cs_images *im = NULL;
	assert_int_equal(vblk_cs_images_new(MIB, &im), 0);
	assert_int_equal(vblk_cs_images_size(im), MIB);
	uint8_t w[8192];
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct vreactor *r = new_reactor();
		struct vblk *b = NULL, *other = NULL;
		assert_int_equal(vblk_crashsim_create_on(r, im, seed, &b), 0);
		assert_int_equal(vblk_crashsim_create_on(r, im, seed, &other), -EBUSY);
		vblk_crashsim_set_faults(b, VBLK_CS_TRASH | VBLK_CS_INJECT_GARBAGE);
		struct wait fw;
		fill(w, sizeof(w), (uint8_t)seed);
		assert_int_equal(vblk_pwrite_sync(b, w, 4096, 0, VBLK_DSYNC | VBLK_META), 0);
		assert_int_equal(vblk_pwrite_sync(b, w, 8192, 65536 + 512, VBLK_DSYNC), 0);
		assert_int_equal(vblk_pwrite_sync(b, w, 4096, 131072, 0), 0);
		wait_init(&fw);
		assert_int_equal(vblk_flush(b, &fw.op), 0);
		while (!fw.done)
			assert_true(vreactor_run_once(r, 10) >= 0);
		/* pending at the crash: applied, torn, dropped or trashed */
		assert_int_equal(vblk_pwrite_sync(b, w, 8192, 200 * 1024, 0), 0);
		assert_int_equal(vblk_pwrite_sync(b, w, 4096, MIB - 4096, 0), 0);
		vblk_crashsim_crash_now(b);
		vblk_crashsim_power_on(b, r);
		assert_int_equal(vblk_pwrite_sync(b, w, 4096, 512 * 1024, 0), 0); /* visible only */
		vblk_close(b);
		vreactor_destroy(r);
		assert_images_zero(im, seed);
	}
	/* a device that grows leaves the images (zeroed) and keeps what it wrote */
	struct vreactor *r = new_reactor();
	struct vblk *b = NULL;
	uint8_t got[4096];
	assert_int_equal(vblk_crashsim_create_on(r, im, 7, &b), 0);
	fill(w, sizeof(w), 0x6c);
	assert_int_equal(vblk_pwrite_sync(b, w, 4096, 8192, VBLK_DSYNC), 0);
	assert_int_equal(b->ops->grow(b, 2 * MIB), 0);
	assert_int_equal(vblk_pwrite_sync(b, w, 4096, MIB + 4096, VBLK_DSYNC), 0);
	assert_int_equal(vblk_pread_sync(b, got, 4096, 8192), 0);
	assert_memory_equal(got, w, 4096);
	vblk_close(b);
	vreactor_destroy(r);
	assert_images_zero(im, 8);
	vblk_cs_images_free(im);
}

/* Pending writes of several sizes, overlapping, some durable, then a crash
 * (TRASH: every outcome); got: the whole device after power_on. */
static void pending_run(struct vbuf_cache *bufs, uint64_t seed, uint8_t *got)
{
	struct vreactor *r = new_reactor();
	struct vblk *b = new_mem(r, 2 * MIB, seed);
	b->bufs = bufs;
	vblk_crashsim_set_faults(b, VBLK_CS_TRASH);
	const size_t big = 576u << 10;
	uint8_t *w = malloc(big);
	assert_non_null(w);
	fill(w, big, (uint8_t)seed);
	assert_int_equal(vblk_pwrite_sync(b, w, 4096, 0, VBLK_DSYNC), 0);
	assert_int_equal(vblk_pwrite_sync(b, w, big, 65536, 0), 0);
	struct wait fw;
	wait_init(&fw);
	assert_int_equal(vblk_flush(b, &fw.op), 0);
	while (!fw.done)
		assert_true(vreactor_run_once(r, 10) >= 0);
	fill(w, big, (uint8_t)(seed + 1));
	assert_int_equal(vblk_pwrite_sync(b, w, 8192, 100 * 1024, 0), 0);
	assert_int_equal(vblk_pwrite_sync(b, w, big, MIB, 0), 0);
	assert_int_equal(vblk_pwrite_sync(b, w + 512, 4096, MIB + 4096, VBLK_DSYNC), 0);
	assert_int_equal(vblk_pwrite_sync(b, w, 12288, MIB + 8192, 0), 0);
	crash_and_read(b, got, 2 * MIB, 0);
	free(w);
	vblk_close(b);
	vreactor_destroy(r);
}

/* Pending-write copies from a lent cache (vbuf_take) go back to it and are
 * reused by the next device; what a crash leaves is byte for byte what a
 * device without the cache leaves. */
static void test_pending_copies_kept(void **state)
{
	(void)state;
	struct vbuf_cache *c;
	assert_int_equal(vbuf_cache_new(0, &c), 0);
	uint8_t *with = malloc(2 * MIB), *without = malloc(2 * MIB);
	assert_non_null(with);
	assert_non_null(without);
	size_t kept = 0;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		pending_run(c, seed, with);
		pending_run(NULL, seed, without);
		assert_memory_equal(with, without, 2 * MIB);
		assert_true(vbuf_taken_kept(c) > 0); /* given back */
		if (seed == 1)
			kept = vbuf_taken_kept(c);
		assert_int_equal(vbuf_taken_kept(c), kept); /* taken again, not new ones */
	}
	free(with);
	free(without);
	vbuf_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_after_write),
		cmocka_unit_test(test_dsync_survives),
		cmocka_unit_test(test_unflushed_outcomes),
		cmocka_unit_test(test_flush_makes_durable),
		cmocka_unit_test(test_flush_only_completed),
		cmocka_unit_test(test_overlap_newer_wins),
		cmocka_unit_test(test_arm),
		cmocka_unit_test(test_pair),
		cmocka_unit_test(test_dead_device),
		cmocka_unit_test(test_crash_inside_callback),
		cmocka_unit_test(test_power_on_new_reactor),
		cmocka_unit_test(test_file_round_trip),
		cmocka_unit_test(test_grow_allocate),
		cmocka_unit_test(test_trash),
		cmocka_unit_test(test_lost_grow),
		cmocka_unit_test(test_lost_alloc),
		cmocka_unit_test(test_inject_garbage),
		cmocka_unit_test(test_kept_images),
		cmocka_unit_test(test_pending_copies_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
