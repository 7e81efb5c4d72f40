/*
 * A fenced gateway's LUN, through the real ring code (simhost: ring, dispatch,
 * handlers, pool on an RBD image of the test cluster): after another client
 * took the image over (vblk_rbd_takeover: lock broken, this client
 * blocklisted), every command that reaches the pool -- the READ that meets the
 * fence, a READ of blocks never written (which memory could answer, stale), an
 * overwrite in place, an allocating WRITE -- is answered CHECK
 * CONDITION, NOT READY, LOGICAL UNIT NOT ACCESSIBLE, TARGET PORT IN STANDBY
 * STATE (02h/04h/0Bh, SPC-4 5.16.2.5), so the initiator uses another path;
 * and the data the new owner reads is what was acknowledged before the fence.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "simhost.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"

static char spec[64];

struct rd {
	bool done;
	int res;
};

static void rd_cb(void *arg, int res)
{
	struct rd *d = arg;
	d->res = res;
	d->done = true;
}

static struct simhost_result run(struct simhost *h, const uint8_t *cdb, const void *out,
				 size_t out_len, size_t in_len)
{
	uint64_t tag;
	assert_int_equal(simhost_submit(h, 0, cdb, 10, out, out_len, in_len, &tag), 0);
	struct simhost_result r;
	assert_int_equal(simhost_reap(h, &r, 1, 60000), 1);
	return r;
}

static void expect_standby(struct simhost_result r)
{
	assert_int_equal(r.r.status, 2); /* CHECK CONDITION */
	assert_int_equal(r.r.sense[2] & 0xf, 0x2); /* NOT READY */
	assert_int_equal(r.r.sense[12], 0x04);
	assert_int_equal(r.r.sense[13], 0x0B);
	simhost_result_free(&r);
}

static void test_fenced_lun(void **state)
{
	(void)state;
	snprintf(spec, sizeof(spec), "rbd:rbd/fenced-%d", (int)getpid());
	vblk_rbd_remove(spec, NULL);
	struct vpool_params prm = {.extent_size = 1u << 20};
	struct simhost *h;
	char err[512];
	assert_int_equal(simhost_create_pool_ex(spec, 64u << 20, &prm, false, SIMHOST_IO_URING, 1, &h,
						err, sizeof(err)), 0);
	assert_int_equal(simhost_volume_create(h, "v", 16u << 20, 512), 0);
	assert_int_equal(simhost_attach(h, "v", 0), 0);
	uint8_t data[4096];
	memset(data, 0x5a, sizeof(data));
	const uint8_t w0[10] = {0x2a, 0, 0, 0, 0, 0, 0, 0, 8, 0};       /* WRITE(10) LBA 0, 8 blocks */
	const uint8_t w1[10] = {0x2a, 0, 0, 0, 0x10, 0, 0, 0, 8, 0};    /* LBA 4096 */
	const uint8_t r0[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0};       /* READ(10) LBA 0 */
	const uint8_t r9[10] = {0x28, 0, 0, 0, 0x40, 0, 0, 0, 8, 0};    /* never written */
	struct simhost_result r = run(h, w0, data, sizeof(data), 0);
	assert_int_equal(r.r.status, 0);
	simhost_result_free(&r);

	/* another gateway takes the image over */
	struct vreactor *rb;
	struct vblk *b;
	assert_int_equal(vreactor_create(64, &rb), 0);
	assert_int_equal(vblk_rbd_takeover(rb, spec, NULL, &b), 0);

	/* a READ meets the fence first (a failed read does not fail the pool by
	 * itself); then a READ of blocks never written, which memory alone could
	 * answer (stale: the new owner may have written them), an overwrite in place,
	 * an allocating WRITE */
	expect_standby(run(h, r0, NULL, 0, sizeof(data)));
	expect_standby(run(h, r9, NULL, 0, sizeof(data)));
	expect_standby(run(h, w0, data, sizeof(data), 0));
	expect_standby(run(h, w1, data, sizeof(data), 0));

	/* the new owner has what was acknowledged before */
	struct vpool *p;
	struct vpool_open_report rep;
	assert_int_equal(vpool_open_stores(b, NULL, 0, &p, &rep), 0);
	struct vvol *v = vpool_volume_find(p, "v");
	assert_non_null(v);
	uint8_t back[4096];
	struct iovec iov = {back, sizeof(back)};
	struct rd d = {0};
	assert_int_equal(vvol_read(v, 0, sizeof(back), &iov, 1, rd_cb, &d), 0);
	assert_int_equal(vreactor_run_until(rb, &d.done), 0);
	assert_int_equal(d.res, 0);
	assert_memory_equal(back, data, sizeof(data));
	vpool_close(p);
	vblk_close(b);
	vreactor_destroy(rb);
	simhost_close(h);
	vblk_rbd_remove(spec, NULL);
}

int main(void)
{
	if (!getenv("CEPH_CONF")) {
		fprintf(stderr, "test_fenced_sense: CEPH_CONF is not set (run through ctest)\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_fenced_lun)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
