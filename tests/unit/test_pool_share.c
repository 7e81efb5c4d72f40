/*
 * Unit tests of extent sharing (vvol_share, the pool half of EXTENDED COPY)
 * and redirect-on-write: shared data reads the same on both sides with no
 * new space, a write to either side gets a private extent and leaves the
 * other untouched, granules the source never wrote stay zeros, deallocation
 * of a shared extent only drops a reference, overlapping copies within one
 * volume behave like memmove, out of space changes nothing, an extent whose
 * other reference was dropped is not written in place before that drop is
 * durable, vvol_copy is one unit against concurrent writes to both ranges,
 * and all of it is durable across a power loss (checked with vpool_verify: refcounts equal
 * references, free map consistent).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "vaaid/io.h"
#include "vaaid/pool.h"

#include "pool_test_env.h"

#define MIB (1024u * 1024)

static int vshare(struct env *e, struct vvol *s, uint64_t so, struct vvol *d, uint64_t dof, uint64_t len)
{
	struct wait w = {0};
	int rc = vvol_share(s, so, d, dof, len, done_cb, &w);
	return rc < 0 ? rc : run(e, &w);
}

#define EXT (64u * 1024)

static void fill(struct env *e, struct vvol *v, uint64_t off, uint64_t len, uint8_t c)
{
	uint8_t *b = vblk_alloc_buf(len);
	memset(b, c, len);
	assert_int_equal(vwrite(e, v, off, b, len), 0);
	free(b);
}

static bool reads(struct env *e, struct vvol *v, uint64_t off, uint64_t len, uint8_t c)
{
	uint8_t *b = vblk_alloc_buf(len);
	assert_int_equal(vread(e, v, off, b, len), 0);
	bool ok = all_bytes(b, len, c);
	free(b);
	return ok;
}

static void test_share_then_redirect_on_write(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 16 * MIB, EXT, 0);
	struct vvol *a, *b;
	assert_int_equal(vpool_volume_create(e.p, "a", 1 * MIB, 512, &a), 0);
	assert_int_equal(vpool_volume_create(e.p, "b", 1 * MIB, 512, &b), 0);
	fill(&e, a, 0, 2 * EXT, 0x11);
	/* extent 2: one valid granule only, stale bytes on disk in the others */
	fill(&e, a, 2 * EXT, EXT, 0x66);
	assert_int_equal(vdealloc(&e, a, 2 * EXT, 8192), 0);
	assert_int_equal(vdealloc(&e, a, 2 * EXT + 12288, EXT - 12288), 0);
	fill(&e, a, 2 * EXT + 8192, 4096, 0x22);
	uint64_t u0 = used(&e);
	/* misaligned or cross-pool requests are refused */
	assert_int_equal(vvol_share(a, 512, b, 0, EXT, done_cb, NULL), -EINVAL);
	assert_int_equal(vvol_share(a, 0, b, 0, 17 * EXT, done_cb, NULL), -EINVAL);
	assert_int_equal(vshare(&e, a, 0, b, 4 * EXT, 3 * EXT), 0);
	assert_int_equal(used(&e), u0); /* nothing copied, nothing allocated */
	assert_int_equal(mapped(b), 3 * EXT);
	assert_true(reads(&e, b, 4 * EXT, 2 * EXT, 0x11));
	assert_true(reads(&e, b, 6 * EXT, 8192, 0));
	assert_true(reads(&e, b, 6 * EXT + 8192, 4096, 0x22));
	assert_true(reads(&e, b, 6 * EXT + 12288, EXT - 12288, 0));
	assert_int_equal(vpool_verify(e.p, stderr), 0);
	/* a write into b's shared extent: b gets a private copy, a is unchanged */
	fill(&e, b, 4 * EXT + 4096, 512, 0x33);
	assert_int_equal(used(&e), u0 + EXT);
	assert_true(reads(&e, b, 4 * EXT, 4096, 0x11));
	assert_true(reads(&e, b, 4 * EXT + 4096, 512, 0x33));
	assert_true(reads(&e, b, 4 * EXT + 4608, EXT - 4608, 0x11));
	assert_true(reads(&e, a, 0, 2 * EXT, 0x11));
	/* the redirected copy of the partly valid extent keeps zeros where the source had none */
	fill(&e, b, 6 * EXT, 512, 0x44);
	assert_true(reads(&e, b, 6 * EXT, 512, 0x44));
	assert_true(reads(&e, b, 6 * EXT + 512, 8192 - 512, 0));
	assert_true(reads(&e, b, 6 * EXT + 8192, 4096, 0x22));
	assert_true(reads(&e, b, 6 * EXT + 12288, EXT - 12288, 0));
	assert_true(reads(&e, a, 2 * EXT, 8192, 0));
	/* a write into the source side redirects too (extent 1 is still shared) */
	fill(&e, a, EXT, 4096, 0x55);
	assert_true(reads(&e, a, EXT, 4096, 0x55));
	assert_true(reads(&e, b, 5 * EXT, EXT, 0x11));
	assert_int_equal(vpool_verify(e.p, stderr), 0);
	crash_and_recover(&e);
	a = vpool_volume_find(e.p, "a");
	b = vpool_volume_find(e.p, "b");
	assert_true(reads(&e, a, 0, EXT, 0x11));
	assert_true(reads(&e, a, EXT, 4096, 0x55));
	assert_true(reads(&e, b, 4 * EXT + 4096, 512, 0x33));
	assert_true(reads(&e, b, 5 * EXT, EXT, 0x11));
	env_close(&e);
}

static void test_share_dealloc_and_overlap(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 16 * MIB, EXT, 0);
	struct vvol *a, *b;
	assert_int_equal(vpool_volume_create(e.p, "a", 1 * MIB, 4096, &a), 0);
	assert_int_equal(vpool_volume_create(e.p, "b", 1 * MIB, 512, &b), 0);
	for (int i = 0; i < 4; i++)
		fill(&e, a, (uint64_t)i * EXT, EXT, (uint8_t)(0xA0 + i));
	assert_int_equal(vshare(&e, a, 0, b, 0, 4 * EXT), 0);
	uint64_t u0 = used(&e);
	/* deallocating a shared extent drops a reference only: the other side keeps the data */
	assert_int_equal(vdealloc(&e, a, 0, EXT), 0);
	assert_int_equal(used(&e), u0);
	assert_true(reads(&e, a, 0, EXT, 0));
	assert_true(reads(&e, b, 0, EXT, 0xA0));
	/* partly covered shared extent: left as it is (advisory) */
	assert_int_equal(vdealloc(&e, b, EXT, 8192), 0);
	assert_true(reads(&e, b, EXT, EXT, 0xA1));
	/* the last reference gone: the space comes back */
	assert_int_equal(vdealloc(&e, b, 0, EXT), 0);
	assert_int_equal(used(&e), u0 - EXT);
	/* overlapping copy inside one volume: memmove semantics, both directions */
	assert_int_equal(vshare(&e, a, EXT, a, 2 * EXT, 2 * EXT), 0); /* forward overlap */
	assert_true(reads(&e, a, 2 * EXT, EXT, 0xA1));
	assert_true(reads(&e, a, 3 * EXT, EXT, 0xA2));
	assert_int_equal(vshare(&e, a, 2 * EXT, a, EXT, 2 * EXT), 0); /* backward overlap */
	assert_true(reads(&e, a, EXT, EXT, 0xA1));
	assert_true(reads(&e, a, 2 * EXT, EXT, 0xA2));
	assert_true(reads(&e, a, 3 * EXT, EXT, 0xA2));
	assert_int_equal(vpool_verify(e.p, stderr), 0);
	crash_and_recover(&e);
	a = vpool_volume_find(e.p, "a");
	assert_true(reads(&e, a, EXT, EXT, 0xA1));
	assert_true(reads(&e, a, 3 * EXT, EXT, 0xA2));
	env_close(&e);
}

static void test_cow_out_of_space_changes_nothing(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 8 * MIB, EXT, 0);
	struct vpool_stats st;
	vpool_get_stats(e.p, &st);
	struct vvol *a, *b;
	assert_int_equal(vpool_volume_create(e.p, "a", st.capacity, 512, &a), 0);
	assert_int_equal(vpool_volume_create(e.p, "b", st.capacity, 512, &b), 0);
	for (uint64_t off = 0; off < st.capacity; off += EXT)
		fill(&e, a, off, EXT, 0x77);
	assert_int_equal(vshare(&e, a, 0, b, 0, st.capacity), 0);
	assert_int_equal(used(&e), st.capacity);
	/* full pool: a write into a shared extent needs space and is refused, nothing changes */
	uint8_t *buf = vblk_alloc_buf(4096);
	memset(buf, 0x99, 4096);
	assert_int_equal(vwrite(&e, b, 0, buf, 4096), -ENOSPC);
	assert_true(reads(&e, b, 0, EXT, 0x77));
	assert_true(reads(&e, a, 0, EXT, 0x77));
	/* dropping a's references makes b's extents private: overwrites work again, no space needed */
	assert_int_equal(vdealloc(&e, a, 0, st.capacity), 0);
	assert_int_equal(vwrite(&e, b, 0, buf, 4096), 0);
	assert_true(reads(&e, b, 0, 4096, 0x99));
	free(buf);
	env_close(&e);
}

/*
 * The other reference of a shared extent goes (b deallocates it: refcount 2 -> 1) in a
 * commit that is not durable yet, and a write into a's copy arrives meanwhile. Written
 * in place, it would land in an extent that a power loss gives back to b: b would read
 * a's new data. The extent must count as shared until the drop is durable (the write
 * is redirected). The journal is kept busy so that the drop waits for the next commit,
 * and the power fails as soon as a's write is acknowledged; over several seeds the
 * crash drops, applies or tears that commit. unmap: the same for the zeros of a's
 * UNMAP of one sector (vvol_unmap): they would need a redirect, so the sector keeps
 * its data (advisory) -- it never reaches the extent b may get back.
 */
static void unshare_not_durable(bool unmap)
{
	for (uint64_t seed = 1; seed <= 16; seed++) {
		struct env e;
		memset(&e, 0, sizeof(e));
		assert_int_equal(vreactor_create(64, &e.r), 0);
		assert_int_equal(vblk_crashsim_create_mem(e.r, 16 * MIB, seed, &e.dev), 0);
		struct vpool_params prm = {.size = 16 * MIB, .extent_size = EXT};
		assert_int_equal(vpool_format(e.dev, &prm), 0);
		assert_int_equal(vpool_open(e.dev, &e.p), 0);
		struct vvol *a, *b, *c;
		assert_int_equal(vpool_volume_create(e.p, "a", 1 * MIB, 512, &a), 0);
		assert_int_equal(vpool_volume_create(e.p, "b", 1 * MIB, 512, &b), 0);
		assert_int_equal(vpool_volume_create(e.p, "c", 1 * MIB, 512, &c), 0);
		fill(&e, a, 0, EXT, 0x11);
		fill(&e, c, 0, EXT, 0x33);
		assert_int_equal(vshare(&e, a, 0, b, 0, EXT), 0);
		/* c's deallocation puts a commit in flight; b's drop waits for the next one */
		struct wait wc = {0}, wb = {0}, wa = {0};
		assert_int_equal(vvol_deallocate(c, 0, EXT, done_cb, &wc), 0);
		assert_int_equal(vvol_deallocate(b, 0, EXT, done_cb, &wb), 0);
		uint8_t *buf = vblk_alloc_buf(4096);
		memset(buf, 0x22, 4096);
		struct iovec iov = {.iov_base = buf, .iov_len = 4096};
		if (unmap)
			assert_int_equal(vvol_unmap(a, 512, 512, done_cb, &wa), 0);
		else
			assert_int_equal(vvol_write(a, 0, 4096, &iov, 1, done_cb, &wa), 0);
		assert_int_equal(run(&e, &wa), 0);
		free(buf);
		crash_and_recover(&e);
		a = vpool_volume_find(e.p, "a");
		b = vpool_volume_find(e.p, "b");
		if (unmap) {
			/* the UNMAPped sector too: its zeros would have been written in
			 * place into an extent that still counted as shared */
			assert_true(reads(&e, a, 0, 512, 0x11));
			assert_true(reads(&e, a, 512, 512, 0x11));
			assert_true(reads(&e, a, 1024, EXT - 1024, 0x11));
		} else {
			assert_true(reads(&e, a, 0, 4096, 0x22));
			assert_true(reads(&e, a, 4096, EXT - 4096, 0x11));
		}
		/* b: its copy (the drop was lost) or zeros (it was durable), never a's write */
		assert_true(reads(&e, b, 0, EXT, 0x11) || reads(&e, b, 0, EXT, 0));
		env_close(&e);
	}
}

static void test_unshare_not_durable_no_write_in_place(void **state)
{
	(void)state;
	unshare_not_durable(false);
}

static void test_unmap_unshare_not_durable_no_zeros_in_place(void **state)
{
	(void)state;
	unshare_not_durable(true);
}

static int vunmap(struct env *e, struct vvol *v, uint64_t off, uint64_t len)
{
	struct wait w = {0};
	int rc = vvol_unmap(v, off, len, done_cb, &w);
	return rc < 0 ? rc : run(e, &w);
}

static bool lba_mapped(struct vvol *v, uint64_t off)
{
	uint64_t run_len;
	bool m;
	assert_int_equal(vvol_lba_status(v, off, 512, &run_len, &m), 0);
	return m;
}

/*
 * vvol_unmap (UNMAP): the sectors it names in a partly covered granule get zeros where
 * that needs no new space. A shared extent would need a redirect: the sectors keep their
 * data, mapped, nothing is allocated, and it still succeeds -- also in a full pool,
 * where vvol_zero (WRITE SAME) gets -ENOSPC. A redirected extent that still reads the
 * granule from its source is private: zeros written there, no space taken.
 */
static void test_unmap_partial_shared_and_redirected(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 8 * MIB, EXT, 0);
	struct vpool_stats st;
	vpool_get_stats(e.p, &st);
	uint64_t n = st.capacity / EXT;
	struct vvol *a, *b, *c;
	assert_int_equal(vpool_volume_create(e.p, "a", MIB, 512, &a), 0);
	assert_int_equal(vpool_volume_create(e.p, "b", MIB, 512, &b), 0);
	assert_int_equal(vpool_volume_create(e.p, "c", n * EXT, 512, &c), 0);
	fill(&e, a, 0, 2 * EXT, 0x11);
	assert_int_equal(vshare(&e, a, 0, b, 0, 2 * EXT), 0);
	/* shared: b sector 1 and a sector 9 keep their data, nothing allocated */
	assert_int_equal(vunmap(&e, b, 512, 512), 0);
	assert_int_equal(vunmap(&e, a, 9 * 512, 512), 0);
	assert_true(reads(&e, a, 0, 2 * EXT, 0x11));
	assert_true(reads(&e, b, 0, 2 * EXT, 0x11));
	assert_true(lba_mapped(b, 512) && lba_mapped(a, 9 * 512));
	assert_int_equal(used(&e), 2 * EXT);
	/* b's extent 1 redirected by a write of its granule 0 (hydration paused: it reads
	 * the rest from the shared extent); b's sector in granule 1 gets zeros there */
	vpool_hydration_pause(e.p, true);
	fill(&e, b, EXT, 4096, 0x22);
	assert_int_equal(used(&e), 3 * EXT);
	assert_int_equal(vunmap(&e, b, EXT + 4096 + 1024, 1024), 0);
	assert_true(reads(&e, b, EXT, 4096, 0x22));
	assert_true(reads(&e, b, EXT + 4096, 1024, 0x11));
	assert_true(reads(&e, b, EXT + 5120, 1024, 0));
	assert_true(reads(&e, b, EXT + 6144, EXT - 6144, 0x11));
	assert_true(lba_mapped(b, EXT + 5120));
	assert_true(reads(&e, a, 0, 2 * EXT, 0x11));
	assert_int_equal(used(&e), 3 * EXT);
	/* a full pool */
	vpool_get_stats(e.p, &st);
	fill(&e, c, 0, st.capacity - st.used, 0x33);
	vpool_get_stats(e.p, &st);
	assert_int_equal(st.used, st.capacity);
	assert_int_equal(vunmap(&e, b, 2048, 512), 0);
	assert_true(reads(&e, b, 0, EXT, 0x11));
	struct wait w = {0};
	assert_int_equal(vvol_zero(b, 2048, 512, done_cb, &w), 0);
	assert_int_equal(run(&e, &w), -ENOSPC);
	/* private: zeros in place, no space needed */
	assert_int_equal(vunmap(&e, c, 512, 1024), 0);
	assert_true(reads(&e, c, 0, 512, 0x33));
	assert_true(reads(&e, c, 512, 1024, 0));
	assert_true(reads(&e, c, 1536, 4096 - 1536, 0x33));
	assert_true(lba_mapped(c, 512));
	assert_int_equal(vpool_verify(e.p, NULL), 0);
	env_close(&e);
}

/*
 * vvol_copy is one unit against concurrent writes: a copy with an unaligned
 * head, a shared middle and a copied tail, and writes to the source's head and
 * tail and to the destination's middle submitted right after it. The copy took
 * its locks first, so each write lands after it: the destination is the source
 * as it was, except the destination write (later, so it wins), and the source
 * has its writes. (Copied in pieces without one lock over both ranges, the
 * source's tail write would land before the tail was copied.)
 */
static void test_copy_is_one_unit(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 32 * MIB, EXT, 1 * MIB);
	struct vvol *a, *b;
	assert_int_equal(vpool_volume_create(e.p, "a", 4 * MIB, 512, &a), 0);
	assert_int_equal(vpool_volume_create(e.p, "b", 4 * MIB, 512, &b), 0);
	fill(&e, a, 0, 1 * MIB, 0x11);
	/* a [4K, 4K + 5 x 64K) -> b [4K, ...): head 60K copied, 4 extents shared, tail 4K copied */
	uint64_t off = 4096, len = 5 * EXT;
	struct wait wc = {0}, w1 = {0}, w2 = {0}, w3 = {0};
	assert_int_equal(vvol_copy(a, off, b, off, len, done_cb, &wc), 0);
	uint8_t *x = vblk_alloc_buf(4096), *y = vblk_alloc_buf(4096);
	memset(x, 0x22, 4096);
	memset(y, 0x33, 4096);
	struct iovec ix = {.iov_base = x, .iov_len = 4096}, iy = {.iov_base = y, .iov_len = 4096};
	assert_int_equal(vvol_write(a, off, 4096, &ix, 1, done_cb, &w1), 0);            /* source head */
	assert_int_equal(vvol_write(a, off + len - 4096, 4096, &ix, 1, done_cb, &w2), 0); /* source tail */
	assert_int_equal(vvol_write(b, 2 * EXT, 4096, &iy, 1, done_cb, &w3), 0);         /* dest middle */
	assert_int_equal(run(&e, &wc), 0);
	assert_int_equal(run(&e, &w1), 0);
	assert_int_equal(run(&e, &w2), 0);
	assert_int_equal(run(&e, &w3), 0);
	assert_true(reads(&e, b, off, 2 * EXT - off, 0x11));
	assert_true(reads(&e, b, 2 * EXT, 4096, 0x33));
	assert_true(reads(&e, b, 2 * EXT + 4096, off + len - 2 * EXT - 4096, 0x11));
	assert_true(reads(&e, a, off, 4096, 0x22));
	assert_true(reads(&e, a, off + len - 4096, 4096, 0x22));
	assert_true(reads(&e, a, off + 4096, len - 8192, 0x11));
	/* the middle was shared, not copied: a's 4 middle extents are b's too */
	struct vpool_stats st;
	vpool_get_stats(e.p, &st);
	assert_true(st.sharing_savings >= 3 * EXT); /* one redirected by the write into b */
	/* overlapping ranges of one volume, destination after the source: memmove */
	wc.done = false;
	assert_int_equal(vvol_copy(a, 0, a, 512, 2 * EXT, done_cb, &wc), 0);
	assert_int_equal(run(&e, &wc), 0);
	assert_true(reads(&e, a, 512, off - 512, 0x11));
	assert_true(reads(&e, a, off + 512, 4096, 0x22));
	/* bad arguments */
	assert_int_equal(vvol_copy(a, 100, b, 0, 512, done_cb, &wc), -EINVAL);
	assert_int_equal(vvol_copy(a, 0, b, 4 * MIB, 512, done_cb, &wc), -EINVAL);
	free(x);
	free(y);
	crash_and_recover(&e);
	b = vpool_volume_find(e.p, "b");
	assert_true(reads(&e, b, 2 * EXT, 4096, 0x33));
	assert_true(reads(&e, b, off, 2 * EXT - off, 0x11));
	env_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_share_then_redirect_on_write),
		cmocka_unit_test(test_share_dealloc_and_overlap),
		cmocka_unit_test(test_cow_out_of_space_changes_nothing),
		cmocka_unit_test(test_unshare_not_durable_no_write_in_place),
		cmocka_unit_test(test_copy_is_one_unit),
		cmocka_unit_test(test_unmap_partial_shared_and_redirected),
		cmocka_unit_test(test_unmap_unshare_not_durable_no_zeros_in_place),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
