/*
 * Unit tests of what the pool reports it did (struct vvol_report, the figures
 * behind issue 25's counters): vvol_copy_ex's bytes shared and copied for a
 * copy of whole extents (all shared), inside one extent (all copied), with an
 * unaligned head and tail around shared extents (mixed), at offsets not
 * congruent modulo the extent (all copied); the deallocation family's bytes
 * deallocated: only granules that held data and left the volume's map count
 * (a fully written extent, a partly written one, an unmapped one; partly
 * covered granules that get zeros and stay mapped do not; a shared extent's
 * reference dropped counts for this volume although the pool's used space does
 * not drop; a redirected extent still reading from its source counts what it
 * read from there). Reports add up across calls, are untouched by a call that
 * fails at once, and every figure is cross-checked with GET LBA STATUS
 * (vvol_lba_status): deallocated = mapped bytes before - mapped bytes after.
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

#include "pool_test_env.h"

#define MIB (1024u * 1024)
#define EXT (64u * 1024)
#define G VPOOL_GRANULE

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

/* Bytes of [off, off+len) GET LBA STATUS calls mapped. */
static uint64_t lba_mapped_bytes(const struct vvol *v, uint64_t off, uint64_t len)
{
	uint64_t n = 0;
	while (len) {
		uint64_t run_len;
		bool m;
		assert_int_equal(vvol_lba_status(v, off, len, &run_len, &m), 0);
		assert_true(run_len > 0 && run_len <= len);
		n += m ? run_len : 0;
		off += run_len;
		len -= run_len;
	}
	return n;
}

static struct vvol_report vcopy(struct env *e, struct vvol *s, uint64_t so, struct vvol *d,
				uint64_t dof, uint64_t len)
{
	struct vvol_report r = {0};
	struct wait w = {0};
	assert_int_equal(vvol_copy_ex(s, so, d, dof, len, &r, done_cb, &w), 0);
	assert_int_equal(run(e, &w), 0);
	return r;
}

enum dkind { D_DEALLOC, D_UNMAP, D_ZERO };

/* One deallocation; its report, checked against GET LBA STATUS over the whole volume. */
static uint64_t vdeall(struct env *e, enum dkind k, struct vvol *v, uint64_t off, uint64_t len)
{
	struct vvol_report r = {0};
	struct wait w = {0};
	struct vvol_info vi;
	vvol_get_info(v, &vi);
	uint64_t before = lba_mapped_bytes(v, 0, vi.size);
	int rc = k == D_DEALLOC ? vvol_deallocate_ex(v, off, len, &r, done_cb, &w)
		 : k == D_UNMAP ? vvol_unmap_ex(v, off, len, &r, done_cb, &w)
				 : vvol_zero_ex(v, off, len, &r, done_cb, &w);
	assert_int_equal(rc, 0);
	assert_int_equal(run(e, &w), 0);
	assert_int_equal(r.shared, 0);
	assert_int_equal(r.copied, 0);
	assert_int_equal(before - lba_mapped_bytes(v, 0, vi.size), r.deallocated);
	return r.deallocated;
}

static void test_copy_shared_and_copied(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 16 * MIB, EXT, 0);
	struct vvol *a, *b;
	assert_int_equal(vpool_volume_create(e.p, "a", MIB, 512, &a), 0);
	assert_int_equal(vpool_volume_create(e.p, "b", MIB, 512, &b), 0);
	fill(&e, a, 0, 8 * EXT, 0x11);
	/* whole extents at congruent offsets: all shared */
	struct vvol_report r = vcopy(&e, a, 0, b, 0, 2 * EXT);
	assert_int_equal(r.shared, 2 * EXT);
	assert_int_equal(r.copied, 0);
	/* inside one extent: all copied */
	r = vcopy(&e, a, 4 * EXT + 4096, b, 4 * EXT + 4096, 8192);
	assert_int_equal(r.shared, 0);
	assert_int_equal(r.copied, 8192);
	/* unaligned head (4 KiB), one shared extent, unaligned tail (8 KiB) */
	r = vcopy(&e, a, 3 * EXT - 4096, b, 5 * EXT - 4096, 4096 + EXT + 8192);
	assert_int_equal(r.shared, EXT);
	assert_int_equal(r.copied, 4096 + 8192);
	/* not congruent modulo the extent: all copied, also whole extents' worth */
	r = vcopy(&e, a, 0, b, 8 * EXT + 512, 2 * EXT);
	assert_int_equal(r.shared, 0);
	assert_int_equal(r.copied, 2 * EXT);
	/* overlapping ranges of one volume: copied (backwards), nothing shared */
	r = vcopy(&e, a, 0, a, EXT, 2 * EXT);
	assert_int_equal(r.shared, 0);
	assert_int_equal(r.copied, 2 * EXT);
	/* more than the 1 MiB buffer in one part: every chunk counted */
	struct vvol *c;
	assert_int_equal(vpool_volume_create(e.p, "c", 8 * MIB, 512, &c), 0);
	r = vcopy(&e, c, 512, c, 4 * MIB + 1024, 2 * MIB);
	assert_int_equal(r.copied, 2 * MIB);
	assert_int_equal(r.shared, 0);
	/* a report adds up; one given to a call refused at once is untouched */
	struct wait w = {0};
	r = (struct vvol_report){.shared = 1, .copied = 2, .deallocated = 3};
	assert_int_equal(vvol_copy_ex(b, 0, a, 0, EXT + 512, &r, done_cb, &w), 0);
	assert_int_equal(run(&e, &w), 0);
	assert_int_equal(r.shared, 1 + EXT);
	assert_int_equal(r.copied, 2 + 512);
	assert_int_equal(r.deallocated, 3);
	assert_int_equal(vvol_copy_ex(b, 100, a, 0, 512, &r, done_cb, &w), -EINVAL);
	assert_int_equal(r.shared, 1 + EXT);
	assert_int_equal(r.copied, 2 + 512);
	env_close(&e);
}

/* A copy that runs out of space part-way reports the parts it did. */
static void test_copy_report_out_of_space(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 8 * MIB, EXT, 0);
	struct vpool_stats st;
	vpool_get_stats(e.p, &st);
	struct vvol *a, *b;
	assert_int_equal(vpool_volume_create(e.p, "a", st.capacity, 512, &a), 0);
	assert_int_equal(vpool_volume_create(e.p, "b", MIB, 512, &b), 0);
	fill(&e, a, 0, st.capacity - EXT, 0x11); /* one extent left */
	/* head of 8 KiB copied into b's extent 0 (the last free extent), the middle
	 * shared, the tail needs a new extent: -ENOSPC */
	struct vvol_report r = {0};
	struct wait w = {0};
	assert_int_equal(vvol_copy_ex(a, EXT - 8192, b, EXT - 8192, 8192 + EXT + 4096, &r, done_cb,
				      &w),
			 0);
	assert_int_equal(run(&e, &w), -ENOSPC);
	assert_int_equal(r.copied, 8192);
	assert_int_equal(r.shared, EXT);
	env_close(&e);
}

static void test_dealloc_mapped_only(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 16 * MIB, EXT, 0);
	struct vvol *v;
	assert_int_equal(vpool_volume_create(e.p, "v", MIB, 512, &v), 0);
	/* extent 0 fully written, extent 1: granules 2 and 5, extent 2 never written */
	fill(&e, v, 0, EXT, 0x11);
	fill(&e, v, EXT + 2 * G, G, 0x22);
	fill(&e, v, EXT + 5 * G, G, 0x22);
	assert_int_equal(vdeall(&e, D_DEALLOC, v, 0, 3 * EXT), EXT + 2 * G);
	assert_int_equal(vdeall(&e, D_DEALLOC, v, 0, 3 * EXT), 0); /* nothing mapped now */
	assert_int_equal(used(&e), 0);
	/* fully covered granules of a fully written extent: cleared, counted; the
	 * partly covered granules at both ends (sectors 1-7, 16) are not */
	fill(&e, v, 0, EXT, 0x11);
	assert_int_equal(vdeall(&e, D_DEALLOC, v, 512, 2 * G), G);
	assert_int_equal(vdeall(&e, D_UNMAP, v, 2 * G + 512, 2 * G), G); /* + zeros at the ends */
	assert_int_equal(vdeall(&e, D_ZERO, v, 4 * G + 512, 2 * G), G);
	assert_true(reads(&e, v, 2 * G + 512, 2 * G, 0));
	assert_true(reads(&e, v, 4 * G + 512, 2 * G, 0));
	assert_true(reads(&e, v, 0, 512, 0x11));
	/* inside one granule: zeros written (UNMAP, WRITE SAME), mapped: nothing counted */
	assert_int_equal(vdeall(&e, D_UNMAP, v, 8 * G + 512, 1024), 0);
	assert_int_equal(vdeall(&e, D_ZERO, v, 9 * G + 512, 1024), 0);
	assert_int_equal(vdeall(&e, D_DEALLOC, v, 10 * G + 512, 1024), 0);
	/* a range over mapped and unmapped extents: what was mapped (extent 0 has 3
	 * granules cleared already) */
	fill(&e, v, 2 * EXT, 3 * G, 0x33);
	assert_int_equal(vdeall(&e, D_ZERO, v, 0, 4 * EXT), (EXT - 3 * G) + 3 * G);
	assert_int_equal(used(&e), 0);
	/* reports add up; a call refused at once leaves the report alone */
	fill(&e, v, 0, 2 * EXT, 0x44);
	struct vvol_report r = {.deallocated = 7};
	struct wait w1 = {0}, w2 = {0};
	assert_int_equal(vvol_unmap_ex(v, 0, EXT, &r, done_cb, &w1), 0);
	assert_int_equal(vvol_unmap_ex(v, EXT, G, &r, done_cb, &w2), 0);
	assert_int_equal(run(&e, &w1), 0);
	assert_int_equal(run(&e, &w2), 0);
	assert_int_equal(r.deallocated, 7 + EXT + G);
	assert_int_equal(vvol_unmap_ex(v, 100, 512, &r, done_cb, &w1), -EINVAL);
	assert_int_equal(r.deallocated, 7 + EXT + G);
	env_close(&e);
}

/*
 * Shared extents (after vvol_copy): a fully covered one leaves this volume's map
 * (counted, though the other volume keeps it and the pool's used space stays);
 * a partly covered one keeps its data (UNMAP) or gets zeros by redirect (WRITE
 * SAME): mapped, not counted. A redirected extent still reading from its
 * source counts every granule it read, from itself or from the source.
 */
static void test_dealloc_shared_and_redirected(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 16 * MIB, EXT, 0);
	struct vvol *a, *b;
	assert_int_equal(vpool_volume_create(e.p, "a", MIB, 512, &a), 0);
	assert_int_equal(vpool_volume_create(e.p, "b", MIB, 512, &b), 0);
	fill(&e, a, 0, 4 * EXT, 0x11);
	assert_int_equal(vcopy(&e, a, 0, b, 0, 4 * EXT).shared, 4 * EXT);
	assert_int_equal(used(&e), 4 * EXT);
	assert_int_equal(vdeall(&e, D_UNMAP, b, 0, EXT), EXT);
	assert_int_equal(used(&e), 4 * EXT); /* a still has it */
	assert_int_equal(vdeall(&e, D_UNMAP, b, EXT, 2 * G), 0);   /* kept, shared */
	assert_int_equal(vdeall(&e, D_DEALLOC, b, EXT, 2 * G), 0); /* kept, shared */
	assert_int_equal(vdeall(&e, D_ZERO, b, EXT, 2 * G), 0);    /* redirected: zeros, mapped */
	assert_true(reads(&e, b, EXT, 2 * G, 0));
	assert_true(reads(&e, a, EXT, 2 * G, 0x11));
	/* b's extent 2 redirected by a write of one granule, hydration paused: the rest
	 * reads from a's extent; deallocating it whole counts every granule */
	vpool_hydration_pause(e.p, true);
	fill(&e, b, 2 * EXT + G, G, 0x22);
	assert_int_equal(vdeall(&e, D_DEALLOC, b, 2 * EXT, EXT), EXT);
	/* extent 3 redirected the same way: the fully covered granules of a partly
	 * covered range that its source still provides get zeros (UNMAP) and stay
	 * mapped (clearing them would read the source again): nothing counted */
	fill(&e, b, 3 * EXT + G, G, 0x22);
	assert_int_equal(vdeall(&e, D_UNMAP, b, 3 * EXT, 4 * G), 0);
	assert_true(reads(&e, b, 3 * EXT, 4 * G, 0));
	vpool_hydration_pause(e.p, false);
	assert_int_equal(vpool_hydration_wait(e.p), 0);
	assert_int_equal(vdeall(&e, D_DEALLOC, b, 0, 4 * EXT), 2 * EXT);
	assert_int_equal(vdeall(&e, D_ZERO, a, 0, 4 * EXT), 4 * EXT);
	assert_int_equal(used(&e), 0);
	env_close(&e);
}

/*
 * 1 MiB extents (256 granules: a validity bitmap of 4 words): the granules
 * counted across word boundaries, at the range's ends and in the middle, for a
 * cleared range and for an extent unmapped whole; a redirected extent counts
 * its own granules and its source's.
 */
static void test_dealloc_count_words(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 32 * MIB, MIB, 0);
	struct vvol *v, *b;
	assert_int_equal(vpool_volume_create(e.p, "v", 8 * MIB, 512, &v), 0);
	assert_int_equal(vpool_volume_create(e.p, "b", 8 * MIB, 512, &b), 0);
	static const uint32_t gs[] = {1, 62, 63, 64, 65, 127, 128, 130, 191, 192, 254, 255};
	for (unsigned i = 0; i < sizeof(gs) / sizeof(gs[0]); i++)
		fill(&e, v, (uint64_t)gs[i] * G, G, 0x11);
	/* granules 63..199 fully covered (the range starts and ends inside granules 62
	 * and 200): 63, 64, 65, 127, 128, 130, 191, 192 */
	assert_int_equal(vdeall(&e, D_DEALLOC, v, 62 * G + 512, (200 - 62) * G), 8 * G);
	/* granules 0..63 (a word): 1 and 62 */
	assert_int_equal(vdeall(&e, D_DEALLOC, v, 0, 64 * G), 2 * G);
	/* the rest, 254 and 255, with the extent unmapped whole */
	assert_int_equal(vdeall(&e, D_DEALLOC, v, 0, MIB), 2 * G);
	assert_int_equal(used(&e), 0);
	/* redirected, source granules 0..99 and 200..255, its own 150 and 250 */
	fill(&e, v, 0, 100 * G, 0x22);
	fill(&e, v, 200 * G, 56 * G, 0x22);
	assert_int_equal(vcopy(&e, v, 0, b, 0, MIB).shared, MIB);
	vpool_hydration_pause(e.p, true);
	fill(&e, b, 150 * G, G, 0x33);
	fill(&e, b, 250 * G, G, 0x33);
	assert_int_equal(vdeall(&e, D_DEALLOC, b, 0, MIB), (100 + 1 + 56) * G);
	vpool_hydration_pause(e.p, false);
	assert_int_equal(vpool_hydration_wait(e.p), 0);
	env_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_shared_and_copied),
		cmocka_unit_test(test_copy_report_out_of_space),
		cmocka_unit_test(test_dealloc_mapped_only),
		cmocka_unit_test(test_dealloc_shared_and_redirected),
		cmocka_unit_test(test_dealloc_count_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
