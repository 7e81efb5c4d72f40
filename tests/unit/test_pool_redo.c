/*
 * Small writes carried in the journal (src/pool/redo.c), through the pool's
 * public API on the crash-simulating device: their home writes are not
 * durable until a checkpoint, so a power loss right after they completed
 * drops, applies or tears them at random, and recovery must write them home
 * again from the journal -- in order, and never over newer data. Each case
 * runs under many crash seeds and fails unless some seed really lost a home
 * write (the raw device is read before the pool is opened again).
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

#define MIB (1024u * 1024)
#define KIB 1024u
#define POOL_SIZE (16 * MIB)
#define SEEDS 24

struct env {
	struct vreactor *r;
	struct vblk *dev;
	struct vpool *p;
	struct vvol *v;
	uint64_t data_off;
};

static int run(struct env *e, struct wait *w) { return wait_run(e->r, w); }

/*
 * The journal fails (power loss on its commit) while allocating writes wait
 * for room in it: nothing of theirs was logged, so every extent they reserved
 * must go back (datapath.c, sub_fail_unlogged) -- the failed pool's used space
 * counts only what its maps reference, and vpool_verify finds no leaked
 * extent once every command has been answered. A minimum journal is filled by
 * 32 KiB writes (carried in it, data and all) while 64 KiB writes, too large
 * to be carried, log their MAP after their data and so wait for room; the
 * power fails after a varying number of I/Os. Checked by mutation: without
 * the give-back, some of these runs leak.
 */
static void test_failed_journal_gives_reservations_back(void **state)
{
	(void)state;
	enum { N = 96 };
	uint8_t *small = vblk_alloc_buf(32 * KIB), *large = vblk_alloc_buf(64 * KIB);
	assert_non_null(small);
	assert_non_null(large);
	memset(small, 0x5a, 32 * KIB);
	memset(large, 0xa5, 64 * KIB);
	unsigned failed_runs = 0, nospace = 0;
	for (uint64_t arm = 8; arm <= 200; arm += 8) {
		struct env e = {0};
		assert_int_equal(vreactor_create(256, &e.r), 0);
		assert_int_equal(vblk_crashsim_create_mem(e.r, 48 * MIB, arm, &e.dev), 0);
		struct vpool_params prm = {.size = 48 * MIB, .extent_size = 64 * KIB,
					   .journal_size = 520 * KIB};
		assert_int_equal(vpool_format(e.dev, &prm), 0);
		assert_int_equal(vpool_open(e.dev, &e.p), 0);
		assert_int_equal(vpool_volume_create(e.p, "v", 2 * N * 64 * KIB, 512, &e.v), 0);
		vblk_crashsim_arm(e.dev, arm);
		struct wait w[2 * N];
		struct iovec iov[2 * N]; /* the pool uses them until each write is answered */
		memset(w, 0, sizeof(w));
		for (unsigned i = 0; i < 2 * N; i++) {
			iov[i] = (struct iovec){.iov_base = i % 2 ? large : small,
						.iov_len = i % 2 ? 64 * KIB : 32 * KIB};
			assert_int_equal(vvol_write(e.v, (uint64_t)i * 64 * KIB, iov[i].iov_len, &iov[i],
						    1, done_cb, &w[i]),
					 0);
		}
		unsigned failed = 0;
		for (unsigned i = 0; i < 2 * N; i++) {
			int res = run(&e, &w[i]);
			failed += res < 0;
			nospace += res == -ENOSPC;
		}
		failed_runs += failed > 0 && vblk_crashsim_crashed(e.dev);
		assert_int_equal(vpool_verify(e.p, stderr), 0);
		vpool_abandon(e.p);
		vblk_close(e.dev);
		vreactor_destroy(e.r);
	}
	/* the power failed with commands still waiting in most runs */
	assert_true(failed_runs >= 12);
	assert_int_equal(nospace, 0);
	free(small);
	free(large);
}

static void vwrite(struct env *e, uint64_t off, const void *buf, size_t len)
{
	struct wait w = {0};
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	assert_int_equal(vvol_write(e->v, off, len, &iov, 1, done_cb, &w), 0);
	assert_int_equal(run(e, &w), 0);
}

static void vread(struct env *e, uint64_t off, void *buf, size_t len)
{
	struct wait w = {0};
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	assert_int_equal(vvol_read(e->v, off, len, &iov, 1, done_cb, &w), 0);
	assert_int_equal(run(e, &w), 0);
}

static void env_open(struct env *e, uint64_t seed)
{
	memset(e, 0, sizeof(*e));
	assert_int_equal(vreactor_create(64, &e->r), 0);
	assert_int_equal(vblk_crashsim_create_mem(e->r, POOL_SIZE, seed, &e->dev), 0);
	struct vpool_params prm = {.size = POOL_SIZE, .extent_size = MIB};
	assert_int_equal(vpool_format(e->dev, &prm), 0);
	assert_int_equal(vpool_open(e->dev, &e->p), 0);
	assert_int_equal(vpool_volume_create(e->p, "v", 8 * MIB, 512, &e->v), 0);
	struct vpool_stats st;
	vpool_get_stats(e->p, &st);
	e->data_off = st.data_off;
}

static void env_close(struct env *e)
{
	assert_int_equal(vpool_verify(e->p, stderr), 0);
	assert_int_equal(vpool_close(e->p), 0);
	vblk_close(e->dev);
	vreactor_destroy(e->r);
}

/* Is this exact buffer anywhere in the raw data area (sector aligned)? */
static bool on_disk(struct env *e, const uint8_t *want, size_t len)
{
	uint8_t *area = vblk_alloc_buf(POOL_SIZE - e->data_off);
	assert_non_null(area);
	assert_int_equal(vblk_pread_sync(e->dev, area, POOL_SIZE - e->data_off, e->data_off), 0);
	bool found = false;
	for (uint64_t o = 0; !found && o + len <= POOL_SIZE - e->data_off; o += 512)
		found = !memcmp(area + o, want, len);
	free(area);
	return found;
}

/* Power loss now; power on; count the home writes lost (checked raw); reopen. */
static void crash_reopen(struct env *e, const uint8_t *const *bufs, const size_t *lens, int n,
			 unsigned *lost, uint64_t *replayed)
{
	vblk_crashsim_crash_now(e->dev);
	vpool_abandon(e->p);
	vreactor_destroy(e->r);
	assert_int_equal(vreactor_create(64, &e->r), 0);
	vblk_crashsim_power_on(e->dev, e->r);
	bool home[8];
	assert_true(n <= 8);
	for (int i = 0; i < n; i++) {
		home[i] = on_disk(e, bufs[i], lens[i]);
		*lost += !home[i];
	}
	/* A read-only open (vaai-check) counts the bytes a replay writes home, writes none. */
	struct vpool_open_report ro = {0}, rep = {0};
	struct vpool *rp;
	assert_int_equal(vpool_open_ex(e->dev, VPOOL_OPEN_READONLY, &rp, &ro), 0);
	vpool_abandon(rp);
	for (int i = 0; i < n; i++)
		assert_int_equal(on_disk(e, bufs[i], lens[i]), home[i]);
	assert_int_equal(vpool_open_ex(e->dev, 0, &e->p, &rep), 0);
	assert_int_equal(rep.data_bytes, ro.data_bytes);
	*replayed += rep.data_bytes;
	assert_int_equal(vpool_verify(e->p, stderr), 0);
	e->v = vpool_volume_find(e->p, "v");
	assert_non_null(e->v);
}

static void fill(uint8_t *b, size_t len, unsigned tag)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(tag * 131 + i * 7 + (i >> 9));
}

/* Allocating 4 KiB writes and a 512-byte one into a new extent: all survive. */
static void test_small_writes_survive_lost_home_writes(void **state)
{
	(void)state;
	unsigned lost = 0;
	uint64_t replayed = 0;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct env e;
		env_open(&e, seed);
		uint8_t *a = vblk_alloc_buf(4 * KIB), *b = vblk_alloc_buf(4 * KIB),
			*c = vblk_alloc_buf(512), *r = vblk_alloc_buf(4 * KIB);
		fill(a, 4 * KIB, 1);
		fill(b, 4 * KIB, 2);
		fill(c, 512, 3);
		vwrite(&e, 0, a, 4 * KIB);            /* ALLOC, extent 0 */
		vwrite(&e, 2 * MIB + 8 * KIB, b, 4 * KIB); /* ALLOC, extent 2 */
		vwrite(&e, 16 * KIB + 1024, c, 512);  /* VALIDATE, partial granule of extent 0 */
		const uint8_t *bufs[] = {a, b};
		const size_t lens[] = {4 * KIB, 4 * KIB};
		crash_reopen(&e, bufs, lens, 2, &lost, &replayed);
		vread(&e, 0, r, 4 * KIB);
		assert_memory_equal(r, a, 4 * KIB);
		vread(&e, 2 * MIB + 8 * KIB, r, 4 * KIB);
		assert_memory_equal(r, b, 4 * KIB);
		vread(&e, 16 * KIB, r, 4 * KIB);
		for (int i = 0; i < 1024; i++)
			assert_int_equal(r[i], 0);
		assert_memory_equal(r + 1024, c, 512);
		for (int i = 1536; i < 4096; i++)
			assert_int_equal(r[i], 0);
		free(a);
		free(b);
		free(c);
		free(r);
		env_close(&e);
	}
	assert_true(replayed > 0);
	assert_true(lost > 0); /* otherwise nothing here needed the journal's copy */
}

/* An overwrite right after a journal-carried write must not be undone by its replay. */
static void test_overwrite_after_small_write_not_undone(void **state)
{
	(void)state;
	unsigned lost = 0;
	uint64_t replayed = 0;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct env e;
		env_open(&e, seed);
		uint8_t *a = vblk_alloc_buf(4 * KIB), *b = vblk_alloc_buf(4 * KIB),
			*r = vblk_alloc_buf(4 * KIB);
		fill(a, 4 * KIB, 4);
		fill(b, 4 * KIB, 5);
		vwrite(&e, MIB, a, 4 * KIB); /* allocates: carried in the journal */
		vwrite(&e, MIB, b, 4 * KIB); /* same blocks: a plain in-place write would lose */
		const uint8_t *bufs[] = {b};
		const size_t lens[] = {4 * KIB};
		crash_reopen(&e, bufs, lens, 1, &lost, &replayed);
		vread(&e, MIB, r, 4 * KIB);
		assert_memory_equal(r, b, 4 * KIB);
		free(a);
		free(b);
		free(r);
		env_close(&e);
	}
	assert_true(replayed > 0);
	assert_true(lost > 0);
}

/*
 * A small write, then a large one (not carried in the journal) that covers
 * only part of the small one's granule: the large one's record makes the
 * small one's journal copy stale, so it must have written that granule whole.
 */
static void test_large_write_keeps_small_bytes_in_shared_granule(void **state)
{
	(void)state;
	unsigned lost = 0;
	uint64_t replayed = 0;
	const size_t big = 256 * KIB;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct env e;
		env_open(&e, seed);
		uint8_t *a = vblk_alloc_buf(512), *b = vblk_alloc_buf(big), *r = vblk_alloc_buf(big + 4 * KIB);
		fill(a, 512, 6);
		fill(b, big, 7);
		vwrite(&e, 3 * MIB + 512, a, 512);       /* sector 1 of granule 0 of extent 3 */
		vwrite(&e, 3 * MIB + 2048, b, big);      /* from sector 4 of the same granule */
		const uint8_t *bufs[] = {a};
		const size_t lens[] = {512};
		crash_reopen(&e, bufs, lens, 1, &lost, &replayed);
		vread(&e, 3 * MIB, r, big + 4 * KIB);
		for (int i = 0; i < 512; i++)
			assert_int_equal(r[i], 0);
		assert_memory_equal(r + 512, a, 512);
		for (int i = 1024; i < 2048; i++)
			assert_int_equal(r[i], 0);
		assert_memory_equal(r + 2048, b, big);
		free(a);
		free(b);
		free(r);
		env_close(&e);
	}
	/* The small write's bytes are always on disk here (the large write wrote the
	 * granule whole), so `lost` stays 0; without the whole-granule write this test
	 * fails on the read-back (checked by disabling it in datapath.c). */
	(void)lost;
	(void)replayed;
}

/* A checkpoint retires the journal's copies: it must make the home writes durable first. */
static void test_checkpoint_makes_home_writes_durable(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct env e;
		env_open(&e, seed);
		uint8_t *a = vblk_alloc_buf(4 * KIB), *r = vblk_alloc_buf(4 * KIB);
		fill(a, 4 * KIB, 8);
		vwrite(&e, 5 * MIB, a, 4 * KIB);
		assert_int_equal(vpool_checkpoint(e.p), 0);
		unsigned lost = 0;
		uint64_t replayed = 0;
		const uint8_t *bufs[] = {a};
		const size_t lens[] = {4 * KIB};
		crash_reopen(&e, bufs, lens, 1, &lost, &replayed);
		assert_int_equal(lost, 0);     /* flushed before the journal was retired */
		assert_int_equal(replayed, 0); /* and not in the journal any more */
		vread(&e, 5 * MIB, r, 4 * KIB);
		assert_memory_equal(r, a, 4 * KIB);
		free(a);
		free(r);
		env_close(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_writes_survive_lost_home_writes),
		cmocka_unit_test(test_failed_journal_gives_reservations_back),
		cmocka_unit_test(test_overwrite_after_small_write_not_undone),
		cmocka_unit_test(test_large_write_keeps_small_bytes_in_shared_granule),
		cmocka_unit_test(test_checkpoint_makes_home_writes_durable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
