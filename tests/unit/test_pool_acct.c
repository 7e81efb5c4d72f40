/*
 * Unit tests of the space accounting counters (src/pool/acct.c, docs/snapshots.md
 * section 6 and build order step 2): vvol_get_info's `unshared`, `exclusive` and
 * `shared` and vpool_get_stats' `sharing_savings` are counters kept per reference
 * change, no longer scans.
 *   - by hand: a sequence whose figures are known (XCOPY sharing between volumes and
 *     inside one, a write into a shared extent (redirect, hydration source), its
 *     hydration, UNMAP, volume delete), each figure checked;
 *   - random operations, 8 seeds x 1,500 (writes, XCOPY sharing, EXTENDED COPY
 *     segments, overwrites of shared extents, UNMAP, volume delete and create,
 *     hydration paused or run, power loss with replay, close and open from a
 *     checkpoint): after every one, vpool_verify, whose
 *     recount (pool_acct_verify) compares every counter with a count from scratch;
 *     a delete with the hydrator paused frees exactly the volume's `exclusive`;
 *   - the checkpoint-room check: sharing that would let the references outgrow the
 *     checkpoint area is refused (-ENOSPC; vvol_copy copies the bytes instead), and
 *     the pool still checkpoints.
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
#include "vaaid/rng.h"

#include "pool_test_env.h"

#define MIB (1024u * 1024)
#define EXT (64u * 1024)

static int vshare(struct env *e, struct vvol *s, uint64_t so, struct vvol *d, uint64_t dof,
		  uint64_t len)
{
	struct wait w = {0};
	int rc = vvol_share(s, so, d, dof, len, done_cb, &w);
	return rc < 0 ? rc : run(e, &w);
}

static int vunmap(struct env *e, struct vvol *v, uint64_t off, uint64_t len)
{
	struct wait w = {0};
	int rc = vvol_unmap(v, off, len, done_cb, &w);
	return rc < 0 ? rc : run(e, &w);
}

static int fill(struct env *e, struct vvol *v, uint64_t off, uint64_t len, uint8_t c)
{
	uint8_t *b = vblk_alloc_buf(len);
	memset(b, c, len);
	int rc = vwrite(e, v, off, b, len);
	free(b);
	return rc;
}

static uint64_t unshared(struct vvol *v)
{
	struct vvol_info vi;
	vvol_get_info(v, &vi);
	return vi.unshared;
}

/* exclusive and shared of v, in extents: X(v) == x && S(v) == s */
static bool excl_shared(struct vvol *v, uint64_t x, uint64_t sh)
{
	struct vvol_info vi;
	vvol_get_info(v, &vi);
	if (vi.exclusive == x * EXT && vi.shared == sh * EXT)
		return true;
	fprintf(stderr, "volume %s: exclusive %llu shared %llu extents, expected %llu %llu\n",
		vi.name, (unsigned long long)(vi.exclusive / EXT),
		(unsigned long long)(vi.shared / EXT), (unsigned long long)x,
		(unsigned long long)sh);
	return false;
}

static uint64_t savings(struct env *e)
{
	struct vpool_stats st;
	vpool_get_stats(e->p, &st);
	return st.sharing_savings;
}

static void check(struct env *e) { assert_int_equal(vpool_verify(e->p, stderr), 0); }

static void test_by_hand(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 16 * MIB, EXT, 0);
	struct vvol *a, *b;
	assert_int_equal(vpool_volume_create(e.p, "a", 1 * MIB, 512, &a), 0);
	assert_int_equal(vpool_volume_create(e.p, "b", 1 * MIB, 512, &b), 0);
	vpool_hydration_pause(e.p, true);
	assert_int_equal(fill(&e, a, 0, 4 * EXT, 0x11), 0);
	assert_true(unshared(a) == 4 * EXT && savings(&e) == 0);
	assert_true(excl_shared(a, 4, 0));
	/* a's extents 0, 1 shared into b */
	assert_int_equal(vshare(&e, a, 0, b, 0, 2 * EXT), 0);
	assert_true(unshared(a) == 2 * EXT && unshared(b) == 0 && savings(&e) == 2 * EXT);
	assert_true(excl_shared(a, 2, 2) && excl_shared(b, 0, 2));
	/* XCOPY inside a: extent 0 at a's extent 5 too (three references) */
	assert_int_equal(vshare(&e, a, 0, a, 5 * EXT, EXT), 0);
	assert_true(unshared(a) == 2 * EXT && savings(&e) == 3 * EXT);
	assert_true(excl_shared(a, 2, 3));
	check(&e);
	/* a write into b's extent 0: redirected to a new private extent whose source is the
	 * shared one; the source reference saves nothing */
	assert_int_equal(fill(&e, b, 4096, 4096, 0x22), 0);
	assert_true(unshared(b) == EXT && unshared(a) == 2 * EXT && savings(&e) == 2 * EXT);
	assert_true(excl_shared(a, 2, 3) && excl_shared(b, 1, 1));
	check(&e);
	crash_and_recover(&e); /* replayed with the source reference */
	a = vpool_volume_find(e.p, "a");
	b = vpool_volume_find(e.p, "b");
	vpool_hydration_pause(e.p, true);
	assert_true(unshared(b) == EXT && unshared(a) == 2 * EXT && savings(&e) == 2 * EXT);
	assert_int_equal(vpool_close(e.p), 0); /* and loaded from a checkpoint with it */
	assert_int_equal(vpool_open(e.dev, &e.p), 0);
	a = vpool_volume_find(e.p, "a");
	b = vpool_volume_find(e.p, "b");
	vpool_hydration_pause(e.p, true);
	assert_true(unshared(b) == EXT && unshared(a) == 2 * EXT && savings(&e) == 2 * EXT);
	assert_true(excl_shared(a, 2, 3) && excl_shared(b, 1, 1));
	check(&e);
	/* hydrated: the source reference goes, a's extents 0 and 5 still share */
	vpool_hydration_pause(e.p, false);
	assert_int_equal(vpool_hydration_wait(e.p), 0);
	assert_true(unshared(b) == EXT && unshared(a) == 2 * EXT && savings(&e) == 2 * EXT);
	/* a's extent 0 held twice by a only: exclusive, not unshared */
	assert_true(excl_shared(a, 3, 1) && excl_shared(b, 1, 1));
	/* UNMAP of a's extent 5: a's extent 0 alone again */
	assert_int_equal(vunmap(&e, a, 5 * EXT, EXT), 0);
	assert_true(unshared(a) == 3 * EXT && savings(&e) == EXT);
	assert_true(excl_shared(a, 3, 1));
	check(&e);
	/* both sides of a shared extent written before hydration: the extent has two source
	 * references and no map reference left, and saves nothing */
	vpool_hydration_pause(e.p, true);
	assert_int_equal(vshare(&e, a, 2 * EXT, b, 2 * EXT, EXT), 0);
	assert_true(unshared(a) == 2 * EXT && unshared(b) == EXT && savings(&e) == 2 * EXT);
	assert_true(excl_shared(a, 2, 2) && excl_shared(b, 1, 2));
	assert_int_equal(fill(&e, b, 2 * EXT, 4096, 0x33), 0);
	assert_true(unshared(a) == 2 * EXT && unshared(b) == 2 * EXT && savings(&e) == EXT);
	assert_true(excl_shared(a, 2, 2) && excl_shared(b, 2, 1));
	assert_int_equal(fill(&e, a, 2 * EXT, 4096, 0x44), 0);
	assert_true(unshared(a) == 3 * EXT && unshared(b) == 2 * EXT && savings(&e) == EXT);
	assert_true(excl_shared(a, 3, 1) && excl_shared(b, 2, 1));
	check(&e);
	vpool_hydration_pause(e.p, false);
	assert_int_equal(vpool_hydration_wait(e.p), 0);
	assert_true(unshared(a) == 3 * EXT && unshared(b) == 2 * EXT && savings(&e) == EXT);
	assert_true(excl_shared(a, 3, 1) && excl_shared(b, 2, 1));
	/* b deleted: it frees exactly its exclusive extents; a's extent 1 alone again */
	uint64_t u0 = used(&e);
	assert_int_equal(vpool_volume_delete(e.p, "b"), 0);
	assert_int_equal(used(&e), u0 - 2 * EXT);
	assert_true(unshared(a) == 4 * EXT && savings(&e) == 0);
	assert_true(excl_shared(a, 4, 0));
	env_close(&e);
}

static uint64_t rng = 0x27;
static uint64_t rnd(uint64_t n) { return vrng_next(&rng) % n; }

#define NV 3
#define VSIZE (1 * MIB) /* 16 extents */

static void find_all(struct env *e, struct vvol **v)
{
	for (int i = 0; i < NV; i++) {
		char name[8];
		snprintf(name, sizeof(name), "v%d", i);
		v[i] = vpool_volume_find(e->p, name);
	}
}

static unsigned deletes_checked; /* deletes that freed exactly their exclusive extents */

static void random_ops(uint64_t seed)
{
	rng = seed;
	struct env e;
	env_open_mem(&e, 16 * MIB, EXT, 0);
	struct vvol *v[NV];
	for (int i = 0; i < NV; i++) {
		char name[8];
		snprintf(name, sizeof(name), "v%d", i);
		assert_int_equal(vpool_volume_create(e.p, name, VSIZE, 512, &v[i]), 0);
	}
	unsigned kinds[10] = {0};
	bool paused = false; /* the hydrator (a reopen resumes it) */
	for (int step = 0; step < 1500; step++) {
		unsigned k = (unsigned)rnd(100);
		unsigned si = (unsigned)rnd(NV);
		struct vvol *s = v[si], *d = v[rnd(NV)];
		int rc = 0;
		if (!s || !d) {
			k = 99; /* a deleted volume comes back first */
		}
		if (k < 25) { /* a small write: in place, or redirected when shared */
			rc = fill(&e, s, rnd(VSIZE / 4096) * 4096, 4096, (uint8_t)step);
			kinds[0]++;
		} else if (k < 35) { /* a whole extent */
			rc = fill(&e, s, rnd(VSIZE / EXT) * EXT, EXT, (uint8_t)step);
			kinds[1]++;
		} else if (k < 55) { /* XCOPY sharing, between volumes or inside one */
			uint64_t n = 1 + rnd(4);
			rc = vshare(&e, s, rnd(VSIZE / EXT - n + 1) * EXT, d,
				    rnd(VSIZE / EXT - n + 1) * EXT, n * EXT);
			kinds[2]++;
		} else if (k < 60) { /* an EXTENDED COPY segment: copied head and tail, shared middle */
			uint64_t len = 4096 * (1 + rnd(3 * VSIZE / EXT / 4 * (EXT / 4096)));
			struct wait w = {0};
			rc = vvol_copy(s, rnd((VSIZE - len) / 4096 + 1) * 4096, d,
				       rnd((VSIZE - len) / 4096 + 1) * 4096, len, done_cb, &w);
			if (rc == 0)
				rc = run(&e, &w);
			kinds[9]++;
		} else if (k < 72) { /* UNMAP of whole extents, or of a part */
			uint64_t n = 1 + rnd(2);
			if (rnd(2))
				rc = vunmap(&e, s, rnd(VSIZE / EXT - n + 1) * EXT, n * EXT);
			else
				rc = vunmap(&e, s, rnd(VSIZE / 4096) * 4096, 4096);
			kinds[3]++;
		} else if (k < 78) { /* hydration: paused, or run to the end */
			paused = rnd(2);
			if (paused)
				vpool_hydration_pause(e.p, true);
			else {
				vpool_hydration_pause(e.p, false);
				assert_int_equal(vpool_hydration_wait(e.p), 0);
			}
			kinds[4]++;
		} else if (k < 81) { /* power loss: checkpoint + replay */
			crash_and_recover(&e);
			find_all(&e, v);
			paused = false;
			kinds[5]++;
		} else if (k < 84) { /* close and open: from a checkpoint */
			assert_int_equal(vpool_close(e.p), 0);
			assert_int_equal(vpool_open(e.dev, &e.p), 0);
			find_all(&e, v);
			paused = false;
			kinds[6]++;
		} else if (k < 87) { /* a volume deleted */
			char name[8];
			snprintf(name, sizeof(name), "v%u", si);
			/* Extents freed by the last operation leave the free-after-durable queue with
			 * the next durable commit: one first, so that only the delete frees. */
			struct vvol *tmp;
			assert_int_equal(vpool_volume_create(e.p, "tmp", EXT, 512, &tmp), 0);
			assert_int_equal(vpool_volume_delete(e.p, "tmp"), 0);
			struct vvol_info vi;
			vvol_get_info(s, &vi);
			uint64_t u0 = used(&e);
			assert_int_equal(vpool_volume_delete(e.p, name), 0);
			if (paused) { /* nothing else changes meanwhile: it frees its exclusive extents */
				assert_int_equal(u0 - used(&e), vi.exclusive);
				deletes_checked++;
			}
			find_all(&e, v);
			kinds[7]++;
		} else if (k == 99) { /* deleted volumes created again */
			for (int i = 0; i < NV; i++)
				if (!v[i]) {
					char name[8];
					snprintf(name, sizeof(name), "v%d", i);
					assert_int_equal(vpool_volume_create(e.p, name, VSIZE, 512, &v[i]), 0);
				}
			kinds[8]++;
		}
		if (rc == -ENOSPC)
			rc = 0; /* a small pool: writes may find no room, as they may */
		assert_int_equal(rc, 0);
		check(&e);
	}
	for (int i = 0; i < 10; i++)
		assert_true(kinds[i] > 0); /* every kind ran */
	struct vpool_stats st;
	vpool_get_stats(e.p, &st);
	uint64_t ex = 0;
	for (int i = 0; i < NV; i++) {
		struct vvol_info vi;
		if (!v[i])
			continue; /* deleted last */
		vvol_get_info(v[i], &vi);
		ex += vi.exclusive;
	}
	fprintf(stderr, "# random ops, seed %#llx: sharing_savings %llu, exclusive %llu extents at the end\n",
		(unsigned long long)seed, (unsigned long long)(st.sharing_savings / EXT),
		(unsigned long long)(ex / EXT));
	env_close(&e);
}

static void test_random_ops(void **state)
{
	(void)state;
	for (uint64_t seed = 0x27; seed < 0x27 + 8; seed++)
		random_ops(seed);
	fprintf(stderr, "# %u deletes freed exactly their exclusive extents\n", deletes_checked);
	assert_true(deletes_checked > 0);
}

/*
 * The checkpoint area holds 4 map references per extent on average
 * (POOL_MAX_REFS_PER_EXTENT_AVG): one extent shared into a large volume many times
 * would outgrow it. Sharing is refused before that (-ENOSPC), and the pool checkpoints.
 */
static void test_ckpt_room(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 16 * MIB, EXT, 0);
	struct vvol *a, *big;
	assert_int_equal(vpool_volume_create(e.p, "a", 1 * MIB, 512, &a), 0);
	assert_int_equal(vpool_volume_create(e.p, "big", 1024 * MIB, 512, &big), 0);
	assert_int_equal(fill(&e, a, 0, 1 * MIB, 0x11), 0);
	uint64_t shared = 0;
	int rc = 0;
	for (uint64_t off = 0; off < 1024 * MIB; off += 1 * MIB) {
		rc = vshare(&e, a, 0, big, off, 1 * MIB);
		if (rc < 0)
			break;
		shared += 16;
	}
	assert_int_equal(rc, -ENOSPC);
	assert_true(shared > 0);
	struct vpool_stats st;
	vpool_get_stats(e.p, &st);
	assert_int_equal(st.share_room_refused, 1); /* counted (and logged) */
	fprintf(stderr, "# checkpoint room: %llu references shared, then -ENOSPC\n",
		(unsigned long long)shared);
	check(&e);
	/* vvol_copy (EXTENDED COPY) then copies the bytes instead of sharing */
	struct vvol_report rep = {0};
	struct wait w = {0};
	assert_int_equal(vvol_copy_ex(a, 0, big, 1023 * MIB, 4 * EXT, &rep, done_cb, &w), 0);
	assert_int_equal(run(&e, &w), 0);
	assert_true(rep.shared == 0 && rep.copied == 4 * EXT);
	vpool_get_stats(e.p, &st);
	assert_int_equal(st.share_room_refused, 2);
	check(&e);
	/* what is there still fits a checkpoint, and a write still finds room */
	assert_int_equal(vpool_close(e.p), 0);
	assert_int_equal(vpool_open(e.dev, &e.p), 0);
	a = vpool_volume_find(e.p, "a");
	assert_int_equal(fill(&e, a, 0, 4096, 0x22), 0);
	env_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_hand),
		cmocka_unit_test(test_random_ops),
		cmocka_unit_test(test_ckpt_room),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
