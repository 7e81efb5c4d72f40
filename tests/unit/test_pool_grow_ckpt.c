/*
 * `pool grow` while a checkpoint is writing its blob (found by session 25's
 * review): the checkpoint's view of the pool keeps the refcount array it
 * serializes (ckpt_image.c pool_ckpt_view_live), and vpool_grow reallocated
 * that array before it waited for the running checkpoint, so the rest of the
 * blob was read from freed memory (ASan: heap-use-after-free in ser_fill; a
 * release build could fault, or write a blob of garbage refcounts under a
 * valid CRC). The grow must wait for the running checkpoint first.
 *
 * How this file works: a sparse 17 GiB pool file with 64 KiB extents (273,355
 * extents); its refcounts are set alternately 0/1 in memory (a stand-in for a
 * fragmented pool: one run per extent, so the blob's refcount runs span many
 * 1 MiB windows; the pool is thrown away afterwards), a checkpoint is started
 * and run until it writes the blob, then the pool grows by 64 MiB. Red in the
 * ASan build (the use after free); in every build the grow must succeed and
 * the pool reopen with the new size.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vaaid/io.h"
#include "vaaid/pool.h"

#include "../../src/pool/pool_internal.h"

#define MIB (1024ull * 1024)
#define SIZE (17ull * 1024 * MIB)

static void test_grow_during_checkpoint(void **state)
{
	(void)state;
	const char *tmp = getenv("VAAID_TEST_TMP");
	char path[512];
	snprintf(path, sizeof(path), "%s/grow-ckpt-%d.img", tmp ? tmp : "/tmp", (int)getpid());
	unlink(path);
	struct vreactor *r;
	struct vblk *dev;
	struct vpool *p;
	assert_int_equal(vreactor_create(64, &r), 0);
	assert_int_equal(vblk_uring_open(r, path, SIZE, &dev), 0);
	struct vpool_params prm = {.size = SIZE, .extent_size = 64 * 1024};
	assert_int_equal(vpool_format(dev, &prm), 0);
	assert_int_equal(vpool_open(dev, &p), 0);
	assert_true(p->n_ext > 262144); /* > 1 MiB of refcount runs: more than one window */
	for (uint64_t i = 0; i < p->n_ext; i++)
		p->refs[i] = i & 1;
	pool_ckpt_request(p);
	struct vpool_diag d;
	for (int i = 0; i < 1000000; i++) {
		vpool_get_diag(p, &d);
		if (d.ckpt_phase == VPOOL_CKPT_BLOB)
			break;
		assert_true(vreactor_run_once(r, -1) >= 0);
	}
	vpool_get_diag(p, &d);
	assert_int_equal(d.ckpt_phase, VPOOL_CKPT_BLOB); /* the blob is being written */
	assert_int_equal(vpool_grow(p, SIZE + 64 * MIB), 0);
	/* the stand-in refcounts cleared again before the pool's last checkpoint */
	for (uint64_t i = 0; i < p->n_ext; i++)
		p->refs[i] = 0;
	vpool_close(p);
	vblk_close(dev);
	assert_int_equal(vblk_uring_open(r, path, 0, &dev), 0);
	assert_int_equal(vpool_open(dev, &p), 0);
	struct vpool_stats st;
	vpool_get_stats(p, &st);
	assert_int_equal(st.size, SIZE + 64 * MIB);
	vpool_close(p);
	vblk_close(dev);
	vreactor_destroy(r);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_grow_during_checkpoint)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
