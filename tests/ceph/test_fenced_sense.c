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
 * With ALUA ([alua], src/scsi/alua.c) the fenced gateway's group is unavailable
 * instead: 02h/04h/0Ch, after one ASYMMETRIC ACCESS STATE CHANGED (06h/2Ah/06h),
 * and REPORT TARGET PORT GROUPS says so (and shows the one peer active/optimized:
 * it took the pool) while the data commands are refused.
 * Also when the first command to meet the fence is an EXTENDED COPY (extent
 * sharing: a journal record the blocklisted client cannot write), not the
 * copy's own COPY ABORTED: the same standby sense, and GET LBA STATUS after it
 * (which memory alone could answer, stale) is refused too.
 */
#include <signal.h>
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

#include "scsi_build.h"
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

/* a 16-byte CDB without data-out, in_len bytes of data-in */
static struct simhost_result run16(struct simhost *h, const uint8_t cdb[16], size_t in_len)
{
	uint64_t tag;
	assert_int_equal(simhost_submit(h, 0, cdb, 16, NULL, 0, in_len, &tag), 0);
	struct simhost_result r;
	assert_int_equal(simhost_reap(h, &r, 1, 60000), 1);
	return r;
}

static void expect_sense(struct simhost_result r, uint8_t key, uint8_t asc, uint8_t ascq)
{
	assert_int_equal(r.r.status, 2); /* CHECK CONDITION */
	assert_int_equal(r.r.sense[2] & 0xf, key);
	assert_int_equal(r.r.sense[12], asc);
	assert_int_equal(r.r.sense[13], ascq);
	simhost_result_free(&r);
}

/* NOT READY, LOGICAL UNIT NOT ACCESSIBLE: standby (0Bh) without ALUA, unavailable
 * (0Ch) with it */
static uint8_t not_accessible_ascq;
static void expect_standby(struct simhost_result r)
{
	expect_sense(r, 0x2, 0x04, not_accessible_ascq);
}

/* the commands that meet the fence first: a READ, or an EXTENDED COPY */
enum first { FIRST_READ, FIRST_XCOPY };

/* EXTENDED COPY(LID1) of 2048 blocks (1 MiB: one whole extent, shared) from
 * LBA 0 to LBA 8192 of LUN 0, as ESXi sends it */
static struct simhost_result xcopy(struct simhost *h)
{
	struct sb_cscd cscd[1] = {{.block_size = 512}};
	assert_int_equal(simhost_lun_naa(h, 0, cscd[0].naa), 0);
	const struct sb_segment seg[1] = {{.src = 0, .dst = 0, .nblocks = 2048, .src_lba = 0,
					   .dst_lba = 8192}};
	uint8_t list[SB_XCOPY_HDR + SB_XCOPY_CSCD_LEN + SB_XCOPY_SEG_LEN];
	size_t len = sb_xcopy_list(list, sizeof(list), 0, SB_LIST_ID_NONE, cscd, 1, seg, 1);
	assert_int_equal(len, sizeof(list));
	uint8_t cdb[16];
	sb_xcopy_cdb(cdb, (uint32_t)len);
	uint64_t tag;
	assert_int_equal(simhost_submit(h, 0, cdb, sizeof(cdb), list, len, 0, &tag), 0);
	struct simhost_result r;
	assert_int_equal(simhost_reap(h, &r, 1, 60000), 1);
	return r;
}

static void fenced_lun(bool alua, enum first first)
{
	snprintf(spec, sizeof(spec), "rbd:rbd/fenced-%d%s%s", (int)getpid(), alua ? "-alua" : "",
		 first == FIRST_XCOPY ? "-xcopy" : "");
	not_accessible_ascq = alua ? 0x0C : 0x0B;
	vblk_rbd_remove(spec, NULL);
	struct vpool_params prm = {.extent_size = 1u << 20};
	struct simhost *h;
	char err[512];
	assert_int_equal(simhost_create_pool_ex(spec, 64u << 20, &prm, false, SIMHOST_IO_URING, 1, &h,
						err, sizeof(err)), 0);
	assert_int_equal(simhost_volume_create(h, "v", 16u << 20, 512), 0);
	const uint16_t peer = 2;
	if (alua)
		assert_int_equal(simhost_alua(h, 1, &peer, 1), 0);
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
	if (first == FIRST_XCOPY) { /* the copy works before the fence */
		r = xcopy(h);
		assert_int_equal(r.r.status, 0);
		simhost_result_free(&r);
	}

	/* another gateway takes the image over */
	struct vreactor *rb;
	struct vblk *b;
	assert_int_equal(vreactor_create(64, &rb), 0);
	assert_int_equal(vblk_rbd_takeover(rb, spec, NULL, &b), 0);

	/* a READ meets the fence first (a failed read does not fail the pool by
	 * itself); then a READ of blocks never written, which memory alone could
	 * answer (stale: the new owner may have written them), an overwrite in place,
	 * an allocating WRITE */
	if (first == FIRST_XCOPY) {
		expect_standby(xcopy(h));
		/* GET LBA STATUS (SBC-4 5.8, 9Eh/12h) of LBA 0: refused, not answered
		 * from the map in memory */
		const uint8_t gls[16] = {0x9E, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0};
		if (alua) /* (the state change is reported once first) */
			expect_sense(run16(h, gls, 32), 0x6, 0x2A, 0x06);
		expect_standby(run16(h, gls, 32));
	} else {
		expect_standby(run(h, r0, NULL, 0, sizeof(data)));
	}
	if (alua && first == FIRST_READ) { /* the change is reported once, then RTPG: group 1 unavailable */
		expect_sense(run(h, r9, NULL, 0, sizeof(data)), 0x6, 0x2A, 0x06);
		const uint8_t rtpg[12] = {0xA3, 0x0A, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
		uint64_t tag;
		assert_int_equal(simhost_submit(h, 0, rtpg, 12, NULL, 0, 256, &tag), 0);
		struct simhost_result g;
		assert_int_equal(simhost_reap(h, &g, 1, 60000), 1);
		assert_int_equal(g.r.status, 0);
		assert_int_equal(g.r.data_in[4], 0x03); /* group 1: unavailable */
		assert_int_equal(g.r.data_in[7], 1);
		assert_int_equal(g.r.data_in[16], 0x00); /* group 2, the one peer: the new owner */
		simhost_result_free(&g);
	}
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

static void test_fenced_lun(void **state)
{
	(void)state;
	fenced_lun(false, FIRST_READ);
}

static void test_fenced_lun_alua(void **state)
{
	(void)state;
	fenced_lun(true, FIRST_READ);
}

static void test_fenced_xcopy(void **state)
{
	(void)state;
	fenced_lun(false, FIRST_XCOPY);
}

static void test_fenced_xcopy_alua(void **state)
{
	(void)state;
	fenced_lun(true, FIRST_XCOPY);
}

int main(void)
{
	/* a write to a peer that is gone (a holder child, a socket) fails with
	 * EPIPE and the test says which, instead of dying of SIGPIPE unexplained */
	signal(SIGPIPE, SIG_IGN);
	if (!getenv("CEPH_CONF")) {
		fprintf(stderr, "test_fenced_sense: CEPH_CONF is not set (run through ctest)\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fenced_lun), cmocka_unit_test(test_fenced_lun_alua),
		cmocka_unit_test(test_fenced_xcopy), cmocka_unit_test(test_fenced_xcopy_alua)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
