/*
 * One volume, two gateways (issue 26 item 3; docs/ceph.md "ALUA"), through the
 * real ring code of two engines on the same RBD pool: the owner (group 1, the
 * image's lock) and a standby gateway (group 2) that sees the pool through a
 * read-only view (simhost_open_standby: the image opened without its lock, the
 * pool replayed in memory, as the daemon's vd_pool_view_refresh). Both answer
 * the same logical unit: standard INQUIRY, VPD 80h (serial), the VPD 83h
 * logical unit designators (NAA, T10 vendor ID), VPD B0h (Block Limits), B2h,
 * READ CAPACITY(16) and REPORT TARGET PORT GROUPS byte for byte; only the
 * target port designators differ (relative port and group 1 vs 2). The standby
 * gateway refuses data commands (02h/04h/0Bh); the owner serves them.
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

#include "simhost.h"
#include "vaaid/io.h"
#include "vaaid/scsi.h"

static struct simhost_result run(struct simhost *h, const uint8_t *cdb, size_t len, size_t in_len)
{
	uint64_t tag;
	assert_int_equal(simhost_submit(h, 0, cdb, len, NULL, 0, in_len, &tag), 0);
	struct simhost_result r;
	assert_int_equal(simhost_reap(h, &r, 1, 60000), 1);
	return r;
}

/* The same command on both gateways: GOOD on both, the same bytes (skip bytes
 * [skip_from, skip_to) which may differ). */
static void same_answer(struct simhost *a, struct simhost *b, const uint8_t *cdb, size_t len,
			size_t in_len, size_t skip_from, size_t skip_to)
{
	struct simhost_result ra = run(a, cdb, len, in_len), rb = run(b, cdb, len, in_len);
	assert_int_equal(ra.r.status, 0);
	assert_int_equal(rb.r.status, 0);
	assert_int_equal(ra.r.data_in_len, rb.r.data_in_len);
	for (size_t i = 0; i < ra.r.data_in_len; i++)
		if (i < skip_from || i >= skip_to)
			if (ra.r.data_in[i] != rb.r.data_in[i])
				fail_msg("cdb %02x/%02x: byte %zu differs: %02x vs %02x", cdb[0], cdb[2],
					 i, ra.r.data_in[i], rb.r.data_in[i]);
	simhost_result_free(&ra);
	simhost_result_free(&rb);
}

static void test_identity(void **state)
{
	(void)state;
	char spec[64], err[512];
	snprintf(spec, sizeof(spec), "rbd:rbd/alua-%d", (int)getpid());
	vblk_rbd_remove(spec, NULL);
	struct vpool_params prm = {.extent_size = 1u << 20};
	struct simhost *a, *b;
	assert_int_equal(simhost_create_pool_ex(spec, 64u << 20, &prm, false, SIMHOST_IO_URING, 1,
						&a, err, sizeof(err)), 0);
	assert_int_equal(simhost_volume_create(a, "v", 16u << 20, 512), 0);
	const uint16_t peer_of_a = 2, peer_of_b = 1;
	assert_int_equal(simhost_alua(a, 1, &peer_of_a, 1), 0);
	assert_int_equal(simhost_attach(a, "v", 0), 0);
	/* the second gateway: the owner holds the lock; a read-only view */
	if (simhost_open_standby(spec, &b, err, sizeof(err)) != 0)
		fail_msg("standby view: %s", err);
	assert_int_equal(simhost_alua(b, 2, &peer_of_b, 1), 0);
	assert_int_equal(simhost_attach(b, "v", 0), 0);

	const uint8_t inq[6] = {0x12, 0, 0, 0, 96, 0};
	same_answer(a, b, inq, 6, 96, 0, 0);
	const uint8_t vpd80[6] = {0x12, 1, 0x80, 0, 255, 0};
	same_answer(a, b, vpd80, 6, 255, 0, 0);
	const uint8_t vpdb0[6] = {0x12, 1, 0xB0, 0, 255, 0};
	same_answer(a, b, vpdb0, 6, 255, 0, 0);
	const uint8_t vpdb2[6] = {0x12, 1, 0xB2, 0, 255, 0};
	same_answer(a, b, vpdb2, 6, 255, 0, 0);
	const uint8_t rc16[16] = {0x9E, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0};
	same_answer(a, b, rc16, 16, 32, 0, 0); /* READ CAPACITY(16): allowed in standby */
	/* VPD 83h: the LU designators (NAA 20 bytes + T10 vendor ID 8 + 8 + serial 24)
	 * the same; the two 8-byte port designators at the end name each gateway */
	const uint8_t vpd83[6] = {0x12, 1, 0x83, 0, 255, 0};
	struct simhost_result ra = run(a, vpd83, 6, 255), rb = run(b, vpd83, 6, 255);
	assert_int_equal(ra.r.status, 0);
	assert_int_equal(rb.r.status, 0);
	size_t n = scsi_get_be16(ra.r.data_in + 2) + 4;
	assert_int_equal(n, scsi_get_be16(rb.r.data_in + 2) + 4);
	assert_memory_equal(ra.r.data_in, rb.r.data_in, n - 16);
	assert_int_equal(scsi_get_be16(ra.r.data_in + n - 10), 1); /* relative target port */
	assert_int_equal(scsi_get_be16(rb.r.data_in + n - 10), 2);
	assert_int_equal(scsi_get_be16(ra.r.data_in + n - 2), 1);  /* target port group */
	assert_int_equal(scsi_get_be16(rb.r.data_in + n - 2), 2);
	simhost_result_free(&ra);
	simhost_result_free(&rb);
	/* REPORT TARGET PORT GROUPS: the same on both paths (group 1 active/optimized) */
	const uint8_t rtpg[12] = {0xA3, 0x0A, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
	same_answer(a, b, rtpg, 12, 256, 0, 0);
	ra = run(a, rtpg, 12, 256);
	assert_int_equal(ra.r.data_in[4], SCSI_ALUA_ACTIVE_OPTIMIZED);
	assert_int_equal(ra.r.data_in[16], SCSI_ALUA_STANDBY);
	simhost_result_free(&ra);

	/* data: the owner serves, the standby gateway refuses (SPC-4 5.16.2.4) */
	const uint8_t rd[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0};
	ra = run(a, rd, 10, 4096);
	assert_int_equal(ra.r.status, 0);
	simhost_result_free(&ra);
	rb = run(b, rd, 10, 4096);
	assert_int_equal(rb.r.status, 2);
	assert_int_equal(rb.r.sense[2] & 0x0F, SK_NOT_READY);
	assert_int_equal(rb.r.sense[12], 0x04);
	assert_int_equal(rb.r.sense[13], 0x0B);
	simhost_result_free(&rb);

	assert_int_equal(simhost_close(b), 0);
	assert_int_equal(simhost_close(a), 0);
	vblk_rbd_remove(spec, NULL);
}

static void expect_sense(struct simhost_result r, uint8_t key, uint8_t asc, uint8_t ascq)
{
	assert_int_equal(r.r.status, 2);
	assert_int_equal(r.r.sense[2] & 0x0F, key);
	assert_int_equal(r.r.sense[12], asc);
	assert_int_equal(r.r.sense[13], ascq);
	simhost_result_free(&r);
}

static struct simhost_result run_on(struct simhost *h, int lun, const uint8_t *cdb, size_t len,
				    size_t in_len)
{
	uint64_t tag;
	assert_int_equal(simhost_submit(h, lun, cdb, len, NULL, 0, in_len, &tag), 0);
	struct simhost_result r;
	assert_int_equal(simhost_reap(h, &r, 1, 60000), 1);
	return r;
}

/* The takeover of a standby gateway's pool (simhost_takeover, as `vaaictl pool
 * takeover`): the LUN whose volume is the same serves, active/optimized; the LUN
 * whose volume the owner replaced meanwhile is lost: unavailable (02h/04h/0Ch,
 * SPC-4 5.16.2.4.5) after one 06h/2Ah/06h, its identity still answered, while the
 * view it was attached from is closed (it points at no volume: under ASan, a LUN
 * still pointing into the closed view is a use-after-free at its next command). */
static void test_takeover_moves_luns(void **state)
{
	(void)state;
	char spec[64], err[512];
	snprintf(spec, sizeof(spec), "rbd:rbd/alua-move-%d", (int)getpid());
	vblk_rbd_remove(spec, NULL);
	struct vpool_params prm = {.extent_size = 1u << 20};
	struct simhost *a, *b;
	assert_int_equal(simhost_create_pool_ex(spec, 64u << 20, &prm, false, SIMHOST_IO_URING, 1, &a,
						err, sizeof(err)), 0);
	assert_int_equal(simhost_volume_create(a, "v", 16u << 20, 512), 0);
	assert_int_equal(simhost_volume_create(a, "w", 16u << 20, 512), 0);
	if (simhost_open_standby(spec, &b, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	const uint16_t peer = 1;
	assert_int_equal(simhost_alua(b, 2, &peer, 1), 0);
	assert_int_equal(simhost_attach(b, "v", 0), 0);
	assert_int_equal(simhost_attach(b, "w", 1), 0);
	uint8_t naa_w[16], naa_after[16];
	assert_int_equal(simhost_lun_naa(b, 1, naa_w), 0);
	/* the owner replaces w (a new volume of the same name: another NAA) */
	assert_int_equal(simhost_volume_delete(a, "w"), 0);
	assert_int_equal(simhost_volume_create(a, "w", 16u << 20, 512), 0);

	int lost = -1;
	assert_int_equal(simhost_takeover(b, &lost), 0);
	assert_int_equal(lost, 1);
	const uint8_t tur[6] = {0};
	const uint8_t rd[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0};
	expect_sense(run_on(b, 0, tur, 6, 0), SK_UNIT_ATTENTION, 0x2A, 0x06);
	struct simhost_result r = run_on(b, 0, rd, 10, 4096);
	assert_int_equal(r.r.status, 0); /* served here now */
	simhost_result_free(&r);
	expect_sense(run_on(b, 1, tur, 6, 0), SK_UNIT_ATTENTION, 0x2A, 0x06);
	expect_sense(run_on(b, 1, tur, 6, 0), SK_NOT_READY, 0x04, 0x0C);
	expect_sense(run_on(b, 1, rd, 10, 4096), SK_NOT_READY, 0x04, 0x0C);
	const uint8_t inq[6] = {0x12, 0, 0, 0, 96, 0};
	r = run_on(b, 1, inq, 6, 96);
	assert_int_equal(r.r.status, 0);
	simhost_result_free(&r);
	assert_int_equal(simhost_lun_naa(b, 1, naa_after), 0);
	assert_memory_equal(naa_w, naa_after, 16); /* the LUN keeps what it exported */

	assert_int_equal(simhost_close(b), 0);
	simhost_close(a); /* fenced by the takeover */
	vblk_rbd_remove(spec, NULL);
}

int main(void)
{
	/* a write to a peer that is gone (a holder child, a socket) fails with
	 * EPIPE and the test says which, instead of dying of SIGPIPE unexplained */
	signal(SIGPIPE, SIG_IGN);
	if (!getenv("CEPH_CONF")) {
		fprintf(stderr, "test_alua_identity: CEPH_CONF is not set (run through ctest)\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_identity),
					   cmocka_unit_test(test_takeover_moves_luns)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
