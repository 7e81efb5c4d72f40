/*
 * Unit tests of the thin pool through its public API, on an in-memory
 * crash-simulating device (and a real file for the persistence test):
 * thin reads, exact accounting, granule zero fill, deallocation and reuse
 * without stale data, free-after-durable, out of space with nothing changed,
 * journal wrap-around with checkpoints, recovery, volume validation.
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

static void test_thin_read_zero_and_accounting(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 32 * MIB, MIB, 0);
	struct vvol *v;
	assert_int_equal(vpool_volume_create(e.p, "v", 64 * MIB, 512, &v), 0); /* over-committed */
	uint8_t *buf = vblk_alloc_buf(2 * MIB);
	memset(buf, 0xEE, 2 * MIB);
	assert_int_equal(vread(&e, v, 0, buf, 2 * MIB), 0);
	assert_true(all_bytes(buf, 2 * MIB, 0));
	assert_int_equal(used(&e), 0);
	assert_int_equal(mapped(v), 0);

	memset(buf, 0x42, 4096);
	assert_int_equal(vwrite(&e, v, 5 * MIB + 8192, buf, 4096), 0);
	assert_int_equal(used(&e), MIB);
	assert_int_equal(mapped(v), MIB);
	/* the rest of the new extent reads zeros */
	assert_int_equal(vread(&e, v, 5 * MIB, buf, MIB), 0);
	assert_true(all_bytes(buf, 8192, 0));
	assert_true(all_bytes(buf + 8192, 4096, 0x42));
	assert_true(all_bytes(buf + 12288, MIB - 12288, 0));
	free(buf);
	env_close(&e);
}

static void test_partial_granule_zero_fill(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 32 * MIB, 64 * 1024, 0);
	struct vvol *v;
	assert_int_equal(vpool_volume_create(e.p, "v", 4 * MIB, 512, &v), 0);
	uint8_t *buf = vblk_alloc_buf(8192);
	memset(buf, 0x33, 512);
	assert_int_equal(vwrite(&e, v, 4096 + 1024, buf, 512), 0);
	assert_int_equal(vread(&e, v, 4096, buf, 4096), 0);
	assert_true(all_bytes(buf, 1024, 0));
	assert_true(all_bytes(buf + 1024, 512, 0x33));
	assert_true(all_bytes(buf + 1536, 4096 - 1536, 0));
	/* unaligned caller buffer (bounce path) */
	uint8_t *odd = malloc(1024 + 1);
	memset(odd + 1, 0x44, 1024);
	struct wait w = {0};
	struct iovec iov = {.iov_base = odd + 1, .iov_len = 1024};
	assert_int_equal(vvol_write(v, 4096 + 2048, 1024, &iov, 1, done_cb, &w), 0);
	assert_int_equal(run(&e, &w), 0);
	assert_int_equal(vread(&e, v, 4096, buf, 4096), 0);
	assert_true(all_bytes(buf + 1024, 512, 0x33));
	assert_true(all_bytes(buf + 1536, 512, 0));
	assert_true(all_bytes(buf + 2048, 1024, 0x44));
	free(odd);
	free(buf);
	env_close(&e);
}

static void test_dealloc_reuse_no_stale_data(void **state)
{
	(void)state;
	struct env e;
	/* A pool with very few extents, so a freed one must be reused. */
	env_open_mem(&e, 8 * MIB, 64 * 1024, 0);
	struct vpool_stats st;
	vpool_get_stats(e.p, &st);
	uint64_t n = st.capacity / (64 * 1024);
	struct vvol *a, *b;
	assert_int_equal(vpool_volume_create(e.p, "a", n * 64 * 1024, 512, &a), 0);
	assert_int_equal(vpool_volume_create(e.p, "b", n * 64 * 1024, 4096, &b), 0);
	uint8_t *buf = vblk_alloc_buf(64 * 1024);
	memset(buf, 0xA5, 64 * 1024);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(vwrite(&e, a, i * 64 * 1024, buf, 64 * 1024), 0);
	assert_int_equal(used(&e), st.capacity);
	/* full: a write into b needs space -> -ENOSPC, nothing changed */
	assert_int_equal(vwrite(&e, b, 0, buf, 4096), -ENOSPC);
	assert_int_equal(mapped(b), 0);
	/* an overwrite of allocated space still works */
	assert_int_equal(vwrite(&e, a, 0, buf, 4096), 0);
	/* free one extent of a; b gets it and must read zeros except what it wrote */
	assert_int_equal(vdealloc(&e, a, 3 * 64 * 1024, 64 * 1024), 0);
	assert_int_equal(mapped(a), (n - 1) * 64 * 1024);
	assert_int_equal(used(&e), st.capacity - 64 * 1024);
	memset(buf, 0x5A, 4096);
	assert_int_equal(vwrite(&e, b, 8192, buf, 4096), 0);
	assert_int_equal(vread(&e, b, 0, buf, 64 * 1024), 0);
	assert_true(all_bytes(buf, 8192, 0));
	assert_true(all_bytes(buf + 8192, 4096, 0x5A));
	assert_true(all_bytes(buf + 12288, 64 * 1024 - 12288, 0));
	/* a reads zeros where it was deallocated */
	assert_int_equal(vread(&e, a, 3 * 64 * 1024, buf, 64 * 1024), 0);
	assert_true(all_bytes(buf, 64 * 1024, 0));
	free(buf);
	env_close(&e);
}

static void test_dealloc_granules(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 16 * MIB, 64 * 1024, 0);
	struct vvol *v;
	assert_int_equal(vpool_volume_create(e.p, "v", MIB, 512, &v), 0);
	uint8_t *buf = vblk_alloc_buf(64 * 1024);
	memset(buf, 0x7E, 64 * 1024);
	assert_int_equal(vwrite(&e, v, 0, buf, 64 * 1024), 0);
	/* [1024, 13312): granule 0 and 3 partial (kept), granules 1-2 cleared */
	assert_int_equal(vdealloc(&e, v, 1024, 12288), 0);
	assert_int_equal(vread(&e, v, 0, buf, 64 * 1024), 0);
	assert_true(all_bytes(buf, 4096, 0x7E));
	assert_true(all_bytes(buf + 4096, 8192, 0));
	assert_true(all_bytes(buf + 12288, 64 * 1024 - 12288, 0x7E));
	assert_int_equal(mapped(v), 64 * 1024);
	/* clearing the rest leaves no valid granule: the extent goes back to the pool */
	assert_int_equal(vdealloc(&e, v, 0, 4096), 0);
	assert_int_equal(mapped(v), 64 * 1024);
	assert_int_equal(vdealloc(&e, v, 12288, 64 * 1024 - 12288), 0);
	assert_int_equal(mapped(v), 0);
	assert_int_equal(used(&e), 0);
	/* out of range */
	assert_int_equal(vvol_deallocate(v, MIB - 512, 1024, done_cb, NULL), -EINVAL);
	free(buf);
	env_close(&e);
}

static void test_journal_wrap_and_recovery(void **state)
{
	(void)state;
	char path[512];
	const char *tmp = getenv("VAAID_TEST_TMP");
	mkdir(tmp ? tmp : "/tmp", 0755);
	snprintf(path, sizeof(path), "%s/test_pool_thin.%d", tmp ? tmp : "/tmp", (int)getpid());
	unlink(path);
	struct env e = {0};
	assert_int_equal(vreactor_create(64, &e.r), 0);
	assert_int_equal(vblk_uring_open(e.r, path, 48 * MIB, &e.dev), 0);
	/* minimum journal: many small allocations wrap it and force checkpoints */
	struct vpool_params prm = {.extent_size = 64 * 1024, .journal_size = 520 * 1024};
	assert_int_equal(vpool_format(e.dev, &prm), 0);
	assert_int_equal(vpool_open(e.dev, &e.p), 0);
	struct vvol *v;
	assert_int_equal(vpool_volume_create(e.p, "v", 40 * MIB, 512, &v), 0);
	uint8_t *buf = vblk_alloc_buf(4096);
	for (int round = 0; round < 6; round++)
		for (uint64_t g = 0; g < 40 * MIB / 4096; g += 7) {
			memset(buf, (int)(g + round) & 0xFF, 4096);
			assert_int_equal(vwrite(&e, v, g * 4096, buf, 4096), 0);
			if (round == 5 && g % 3 == 0)
				assert_int_equal(vdealloc(&e, v, g * 4096, 4096), 0);
		}
	struct vpool_stats st;
	vpool_get_stats(e.p, &st);
	assert_true(st.checkpoints >= 2);
	uint64_t used_before = st.used, mapped_before = mapped(v);
	assert_int_equal(vpool_verify(e.p, stderr), 0);
	/* Abandon without a final checkpoint: recovery must replay the journal. */
	vpool_abandon(e.p);
	struct vpool_open_report rep = {0};
	assert_int_equal(vpool_open_ex(e.dev, 0, &e.p, &rep), 0);
	assert_true(rep.records > 0);
	v = vpool_volume_find(e.p, "v");
	assert_non_null(v);
	assert_int_equal(mapped(v), mapped_before);
	vpool_get_stats(e.p, &st);
	assert_int_equal(st.used, used_before);
	for (uint64_t g = 0; g < 40 * MIB / 4096; g++) {
		assert_int_equal(vread(&e, v, g * 4096, buf, 4096), 0);
		uint8_t want = g % 7 ? 0 : (g % 3 ? (uint8_t)(g + 5) : 0);
		assert_true(all_bytes(buf, 4096, want));
	}
	free(buf);
	env_close(&e);
	unlink(path);
}

static void test_volume_delete_and_grow(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 8 * MIB, 64 * 1024, 0);
	struct vpool_stats st;
	vpool_get_stats(e.p, &st);
	struct vvol *a, *b;
	assert_int_equal(vpool_volume_create(e.p, "a", st.capacity, 512, &a), 0);
	assert_int_equal(vpool_volume_create(e.p, "b", 1 * MIB, 4096, &b), 0);
	struct vvol_info ai;
	vvol_get_info(a, &ai);
	uint8_t *buf = vblk_alloc_buf(64 * 1024);
	memset(buf, 0xA5, 64 * 1024);
	for (uint64_t off = 0; off < st.capacity; off += 64 * 1024)
		assert_int_equal(vwrite(&e, a, off, buf, 64 * 1024), 0);
	assert_int_equal(used(&e), st.capacity);
	/* delete: every extent back, durable on return (survives a power loss) */
	assert_int_equal(vpool_volume_delete(e.p, "nope"), -ENOENT);
	assert_int_equal(vpool_volume_delete(e.p, "a"), 0);
	assert_null(vpool_volume_find(e.p, "a"));
	assert_int_equal(vpool_volume_count(e.p), 1);
	crash_and_recover(&e);
	assert_null(vpool_volume_find(e.p, "a"));
	assert_int_equal(used(&e), 0);
	/* the name is free again; the new volume is a new device and reads zeros */
	assert_int_equal(vpool_volume_create(e.p, "a", st.capacity, 512, &a), 0);
	struct vvol_info ai2;
	vvol_get_info(a, &ai2);
	assert_memory_not_equal(ai.naa, ai2.naa, 16);
	assert_int_equal(vread(&e, a, 0, buf, 64 * 1024), 0);
	assert_true(all_bytes(buf, 64 * 1024, 0));
	/* grow b: durable, the new range reads zeros and is writable; shrink refused */
	b = vpool_volume_find(e.p, "b");
	assert_int_equal(vvol_grow(b, 512 * 1024), -EINVAL);
	assert_int_equal(vvol_grow(b, 3 * MIB), 0);
	crash_and_recover(&e);
	b = vpool_volume_find(e.p, "b");
	struct vvol_info bi;
	vvol_get_info(b, &bi);
	assert_int_equal(bi.size, 3 * MIB);
	memset(buf, 0x3C, 4096);
	assert_int_equal(vwrite(&e, b, 3 * MIB - 4096, buf, 4096), 0);
	assert_int_equal(vread(&e, b, 2 * MIB, buf, 64 * 1024), 0);
	assert_true(all_bytes(buf, 64 * 1024, 0));
	free(buf);
	env_close(&e);
}

/* A grow the power failed inside leaves the device longer than the pool: growing
 * again to any size in between (or to the device's) works, and is durable. */
static void test_grow_after_interrupted_grow(void **state)
{
	(void)state;
	struct env e;
	const uint64_t ext = 64 * 1024;
	env_open_mem(&e, 8 * MIB, ext, 0);
	struct vpool_stats st0, st;
	vpool_get_stats(e.p, &st0);
	assert_int_equal(e.dev->ops->grow(e.dev, 8 * MIB + 4 * ext), 0);
	crash_and_recover(&e);
	vpool_get_stats(e.p, &st);
	assert_int_equal(st.capacity, st0.capacity); /* the superblock names the old size */
	assert_int_equal(vpool_grow(e.p, 8 * MIB + 2 * ext), 0);
	crash_and_recover(&e);
	vpool_get_stats(e.p, &st);
	assert_int_equal(st.size, 8 * MIB + 2 * ext);
	assert_int_equal(st.capacity, st0.capacity + 2 * ext);
	assert_int_equal(st.free, st.capacity);
	assert_int_equal(vpool_grow(e.p, 8 * MIB + ext), -EINVAL); /* never shrinks */
	assert_int_equal(vpool_grow(e.p, 8 * MIB + 6 * ext), 0);   /* past the device: grows it */
	crash_and_recover(&e);
	vpool_get_stats(e.p, &st);
	assert_int_equal(st.capacity, st0.capacity + 6 * ext);
	env_close(&e);
}

/* A grow is durable when vpool_grow returns, on a store where a size change survives a
 * power loss only once flushed (VBLK_CS_LOST_ALLOC; the checkpoint's DSYNC writes lie
 * inside the old size and need not commit it): red without vpool_grow's flush, the
 * superblock then naming a size the file lost. */
static void test_grow_durable_when_size_changes_need_a_flush(void **state)
{
	(void)state;
	struct env e;
	const uint64_t ext = 64 * 1024;
	env_open_mem(&e, 8 * MIB, ext, 0);
	vblk_crashsim_set_faults(e.dev, VBLK_CS_LOST_ALLOC);
	struct vpool_stats st0, st;
	vpool_get_stats(e.p, &st0);
	assert_int_equal(vpool_grow(e.p, 8 * MIB + 4 * ext), 0);
	crash_and_recover(&e);
	vpool_get_stats(e.p, &st);
	assert_int_equal(st.size, 8 * MIB + 4 * ext);
	assert_int_equal(st.capacity, st0.capacity + 4 * ext);
	struct vblk_crashsim_fault_stats fs;
	vblk_crashsim_fault_stats(e.dev, &fs);
	assert_int_equal(fs.lost_grows, 0);
	env_close(&e);
}

/* Opening a store that holds no pool, or whose superblocks are both damaged, names why. */
static void test_open_errors_name_the_problem(void **state)
{
	(void)state;
	struct vreactor *r;
	struct vblk *dev;
	assert_int_equal(vreactor_create(16, &r), 0);
	assert_int_equal(vblk_crashsim_create_mem(r, 8 * MIB, 1, &dev), 0);
	struct vpool *p;
	struct vpool_open_report rep = {0};
	assert_int_equal(vpool_open_ex(dev, 0, &p, &rep), -ENODATA);
	assert_non_null(strstr(rep.error, "no vaaid superblock"));
	struct vpool_params prm = {.size = 8 * MIB, .extent_size = 64 * 1024};
	assert_int_equal(vpool_format(dev, &prm), 0);
	uint8_t *junk = vblk_alloc_buf(8192);
	memset(junk, 0x5A, 8192);
	memcpy(junk, "AAID_PL1", 8); /* the magic: a superblock, damaged */
	memcpy(junk + 4096, "AAID_PL1", 8);
	assert_int_equal(vblk_pwrite_sync(dev, junk, 8192, 0, VBLK_DSYNC), 0);
	memset(&rep, 0, sizeof(rep));
	int rc = vpool_open_ex(dev, 0, &p, &rep);
	assert_true(rc == -EUCLEAN || rc == -EBADMSG);
	assert_non_null(strstr(rep.error, "both superblocks are damaged"));
	free(junk);
	vblk_close(dev);
	vreactor_destroy(r);
}

/*
 * A pool with its journal in a store of its own (docs/design.md rule 12): the
 * commits go there and nowhere else until a checkpoint; small and large first
 * writes, overwrites and deallocations survive a power loss of the pair; the
 * store cannot be opened without its journal store, with another pool's, or
 * with a damaged one, and a journal store given to a pool without one is
 * refused -- each naming the problem.
 */
static void test_journal_file_pool(void **state)
{
	(void)state;
	struct env e;
	env_open_mem_jfile(&e, 32 * MIB, 1 * MIB, 0);
	struct vvol *v;
	assert_int_equal(vpool_volume_create(e.p, "v", 16 * MIB, 512, &v), 0);
	uint64_t meta0 = e.dev->stats.meta_bytes_written, jmeta0 = e.jdev->stats.meta_bytes_written;
	uint8_t *buf = vblk_alloc_buf(256 * 1024);
	for (int i = 0; i < 8; i++) { /* small first writes: carried in the journal (rule 11) */
		memset(buf, 'a' + i, 4096);
		assert_int_equal(vwrite(&e, v, (uint64_t)i * MIB + 8192, buf, 4096), 0);
	}
	memset(buf, 'L', 256 * 1024); /* a large first write: data, then records */
	assert_int_equal(vwrite(&e, v, 10 * MIB, buf, 256 * 1024), 0);
	memset(buf, 'o', 4096); /* an overwrite in place */
	assert_int_equal(vwrite(&e, v, 10 * MIB, buf, 4096), 0);
	assert_int_equal(vdealloc(&e, v, 3 * MIB, MIB), 0);
	/* Every commit went to the journal store; the store got no metadata write. */
	assert_int_equal(e.dev->stats.meta_bytes_written, meta0);
	assert_true(e.jdev->stats.meta_bytes_written > jmeta0);
	crash_and_recover(&e);
	v = vpool_volume_find(e.p, "v");
	assert_non_null(v);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(vread(&e, v, (uint64_t)i * MIB + 8192, buf, 4096), 0);
		assert_true(all_bytes(buf, 4096, i == 3 ? 0 : (uint8_t)('a' + i)));
	}
	assert_int_equal(vread(&e, v, 10 * MIB, buf, 256 * 1024), 0);
	assert_true(all_bytes(buf, 4096, 'o'));
	assert_true(all_bytes(buf + 4096, 252 * 1024, 'L'));
	assert_int_equal(mapped(v), 8 * MIB - MIB + MIB); /* 7 small + the large one's extent */
	free(buf);
	/* Opening it wrongly: each refused, naming why. */
	assert_int_equal(vpool_close(e.p), 0);
	struct vpool *p = NULL;
	struct vpool_open_report rep = {0};
	assert_int_equal(vpool_store_has_journal_file(e.dev), 1);
	assert_int_equal(vpool_open_stores(e.dev, NULL, 0, &p, &rep), -ENOENT);
	assert_non_null(strstr(rep.error, "journal file of its own, which is missing"));
	struct vblk *other, *small;
	assert_int_equal(vblk_crashsim_create_mem(e.r, 8 * MIB, 3, &other), 0);
	struct vpool_params prm = {.size = 4 * MIB, .extent_size = 64 * 1024};
	assert_int_equal(vblk_crashsim_create_mem(e.r, 8 * MIB, 4, &small), 0);
	prm.journal_dev = other; /* another pool with a journal store of its own */
	assert_int_equal(vpool_format(small, &prm), 0);
	assert_int_equal(vpool_store_has_journal_file(small), 1);
	memset(&rep, 0, sizeof(rep));
	assert_int_equal(vpool_open_stores(e.dev, other, 0, &p, &rep), -EXDEV);
	assert_non_null(strstr(rep.error, "belongs to another pool"));
	/* a journal store for a pool that keeps its journal inside */
	struct vblk *inside;
	assert_int_equal(vblk_crashsim_create_mem(e.r, 8 * MIB, 5, &inside), 0);
	struct vpool_params iprm = {.size = 8 * MIB, .extent_size = 64 * 1024};
	assert_int_equal(vpool_format(inside, &iprm), 0);
	assert_int_equal(vpool_store_has_journal_file(inside), 0);
	memset(&rep, 0, sizeof(rep));
	assert_int_equal(vpool_open_stores(inside, e.jdev, 0, &p, &rep), -EINVAL);
	assert_non_null(strstr(rep.error, "journal is in its store"));
	/* a damaged header */
	uint8_t *junk = vblk_alloc_buf(4096);
	assert_int_equal(vblk_pread_sync(e.jdev, junk, 4096, 0), 0);
	junk[100] ^= 0xFF;
	assert_int_equal(vblk_pwrite_sync(e.jdev, junk, 4096, 0, VBLK_DSYNC), 0);
	memset(&rep, 0, sizeof(rep));
	assert_int_equal(vpool_open_stores(e.dev, e.jdev, 0, &p, &rep), -EBADMSG);
	assert_non_null(strstr(rep.error, "header is damaged"));
	junk[100] ^= 0xFF;
	assert_int_equal(vblk_pwrite_sync(e.jdev, junk, 4096, 0, VBLK_DSYNC), 0);
	assert_int_equal(vpool_open_stores(e.dev, e.jdev, 0, &p, NULL), 0);
	assert_int_equal(vpool_verify(p, stderr), 0);
	assert_int_equal(vpool_close(p), 0);
	/* a journal store too small for the journal: refused at format */
	struct vblk *tiny;
	assert_int_equal(vblk_crashsim_create_mem(e.r, 64 * 1024, 6, &tiny), 0);
	prm.journal_dev = tiny;
	assert_int_equal(vpool_format(inside, &prm), -EINVAL);
	free(junk);
	vblk_close(tiny);
	vblk_close(inside);
	vblk_close(small);
	vblk_close(other);
	vblk_close(e.jdev);
	vblk_close(e.dev);
	vreactor_destroy(e.r);
}

static void test_volume_validation(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 16 * MIB, 0, 0);
	struct vvol *v;
	assert_int_equal(vpool_volume_create(e.p, "ok.name-1_x", MIB, 512, &v), 0);
	assert_int_equal(vpool_volume_create(e.p, "ok.name-1_x", MIB, 512, &v), -EEXIST);
	assert_int_equal(vpool_volume_create(e.p, "bad/name", MIB, 512, &v), -EINVAL);
	assert_int_equal(vpool_volume_create(e.p, "", MIB, 512, &v), -EINVAL);
	assert_int_equal(vpool_volume_create(e.p, "b", MIB, 1024, &v), -EINVAL);
	assert_int_equal(vpool_volume_create(e.p, "c", 0, 512, &v), -EINVAL);
	struct vvol *a = vpool_volume_find(e.p, "ok.name-1_x");
	assert_non_null(a);
	assert_int_equal(vpool_volume_create(e.p, "d", MIB, 4096, &v), 0);
	struct vvol_info ia, id;
	vvol_get_info(a, &ia);
	vvol_get_info(v, &id);
	assert_int_equal(ia.naa[0] >> 4, 6); /* NAA-6 */
	assert_memory_not_equal(ia.naa, id.naa, 16);
	assert_string_not_equal(ia.serial, id.serial);
	/* misaligned I/O is refused */
	uint8_t *buf = vblk_alloc_buf(4096);
	assert_int_equal(vwrite(&e, v, 100, buf, 512), -EINVAL);
	assert_int_equal(vwrite(&e, v, MIB - 512, buf, 1024), -EINVAL);
	free(buf);
	env_close(&e);
}

/* A volume holds at most VPOOL_MAX_VOLUME_EXTENTS extents (create and grow; the
 * loaders apply the same rule, tests/fuzz/regress/fuzz_checkpoint/huge-volume-map). */
static void test_volume_size_limit(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 16 * MIB, 64 * 1024, 0);
	const uint64_t max = vpool_volume_size_max(64 * 1024);
	assert_true(max == (1ull << 26) * 64 * 1024); /* 4 TiB with 64 KiB extents */
	struct vvol *v;
	assert_int_equal(vpool_volume_create(e.p, "big", max, 512, &v), 0);
	assert_int_equal(vpool_volume_delete(e.p, "big"), 0);
	assert_int_equal(vpool_volume_create(e.p, "over", max + 512, 512, &v), -EFBIG);
	assert_int_equal(vpool_volume_create(e.p, "g", MIB, 4096, &v), 0);
	assert_int_equal(vvol_grow(v, max + 4096), -EFBIG);
	struct vvol_info vi;
	vvol_get_info(v, &vi);
	assert_true(vi.size == MIB);
	env_close(&e);
}

/* The pool's counters (issue 25): journal commits and their bytes, checkpoints and
 * their time, the store's I/O, as vpool_get_stats reports them. */
static void test_pool_counters(void **state)
{
	(void)state;
	struct env e;
	env_open_mem(&e, 32 * MIB, MIB, 0);
	struct vpool_stats st0, st;
	vpool_get_stats(e.p, &st0);
	struct vvol *v;
	assert_int_equal(vpool_volume_create(e.p, "v", 8 * MIB, 512, &v), 0);
	uint8_t *buf = vblk_alloc_buf(MIB);
	memset(buf, 0x42, MIB);
	for (int i = 0; i < 3; i++) /* 3 new extents: each maps one */
		assert_int_equal(vwrite(&e, v, (uint64_t)i * MIB, buf, MIB), 0);
	assert_int_equal(vread(&e, v, 0, buf, MIB), 0);
	vpool_get_stats(e.p, &st);
	assert_true(st.journal_commits > st0.journal_commits);
	assert_true(st.journal_records >= st0.journal_records + 4); /* the create and 3 maps */
	assert_true(st.journal_bytes - st0.journal_bytes >=
		    (st.journal_commits - st0.journal_commits) * VJ_BLOCK);
	assert_int_equal(st.journal_bytes % VJ_BLOCK, 0);
	assert_false(st.journal_file);
	assert_true(st.store_io.write_ops - st0.store_io.write_ops >= 3);
	assert_true(st.store_io.bytes_written - st0.store_io.bytes_written >=
		    3 * MIB + (st.journal_bytes - st0.journal_bytes));
	assert_true(st.store_io.bytes_read - st0.store_io.bytes_read >= MIB);
	assert_int_equal(vpool_checkpoint(e.p), 0);
	struct vpool_stats st2;
	vpool_get_stats(e.p, &st2);
	assert_int_equal(st2.checkpoints, st.checkpoints + 1);
	assert_true(st2.checkpoint_ns > st.checkpoint_ns);
	free(buf);
	env_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thin_read_zero_and_accounting),
		cmocka_unit_test(test_partial_granule_zero_fill),
		cmocka_unit_test(test_dealloc_reuse_no_stale_data),
		cmocka_unit_test(test_dealloc_granules),
		cmocka_unit_test(test_journal_wrap_and_recovery),
		cmocka_unit_test(test_volume_validation),
		cmocka_unit_test(test_volume_size_limit),
		cmocka_unit_test(test_pool_counters),
		cmocka_unit_test(test_volume_delete_and_grow),
		cmocka_unit_test(test_grow_after_interrupted_grow),
		cmocka_unit_test(test_grow_durable_when_size_changes_need_a_flush),
		cmocka_unit_test(test_open_errors_name_the_problem),
		cmocka_unit_test(test_journal_file_pool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
