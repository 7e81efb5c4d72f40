/*
 * An EXTENDED COPY segment past the end of a copy target (issue 22) answers
 * COPY ABORTED 0Dh/02h (pinned with its sense bytes and data in
 * tests/sim/xcopy_errors.vsim); the initiator learns nothing more, so the
 * daemon must log the real cause where an admin sees it: a warning (shown at
 * the daemon's default log level, info, and at warn) naming the segment, the
 * side, the LBA range, the LUN and its capacity -- only when the command does
 * answer that: if an earlier segment fails first (DATA PROTECT, the pool full),
 * the command answers that failure and the line would lie. Through the real
 * ring and engine (simhost); stderr, where vlog writes, is captured in a file.
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

#include "scsi_build.h"
#include "simhost_test_env.h"
#include "stderr_capture.h"
#include "vaaid/util.h"

#define BS 512u
#define VOL_BLOCKS 131072u /* 64 MiB */

/* Run an EXTENDED COPY on LUN lun with CSCDs a (0) and b (1) and the given two
 * segments; returns what the daemon wrote to stderr meanwhile (caller frees). */
static char *xcopy_logged(struct simhost *h, int lun, const struct sb_segment seg[2],
			  struct simhost_result *r)
{
	struct sb_cscd cscd[2] = {{.block_size = BS}, {.block_size = BS}};
	assert_int_equal(simhost_lun_naa(h, 0, cscd[0].naa), 0);
	assert_int_equal(simhost_lun_naa(h, 1, cscd[1].naa), 0);
	uint8_t list[SB_XCOPY_HDR + 2 * SB_XCOPY_CSCD_LEN + 2 * SB_XCOPY_SEG_LEN];
	size_t len = sb_xcopy_list(list, sizeof(list), 0, SB_LIST_ID_NONE, cscd, 2, seg, 2);
	assert_int_equal(len, sizeof(list));
	uint8_t cdb[16];
	sb_xcopy_cdb(cdb, (uint32_t)len);

	struct stderr_capture cap;
	stderr_capture_begin(&cap);
	uint64_t tag;
	int rc = simhost_submit(h, lun, cdb, sizeof(cdb), list, len, 0, &tag);
	int got = rc == 0 ? simhost_reap(h, r, 1, 60000) : -1;
	char *text = stderr_capture_end(&cap);
	assert_int_equal(rc, 0);
	assert_int_equal(got, 1);
	return text;
}

/* A fresh pool (pool_bytes, prm) with volumes a and b of vol_bytes attached as LUNs 0
 * and 1; path receives the pool's path. */
static struct simhost *two_luns(const char *name, uint64_t pool_bytes,
				const struct vpool_params *prm, uint64_t vol_bytes, char *path,
				size_t path_len)
{
	struct simhost *h = test_pool_create(name, pool_bytes, prm, path, path_len);
	assert_int_equal(simhost_volume_create(h, "a", vol_bytes, BS), 0);
	assert_int_equal(simhost_volume_create(h, "b", vol_bytes, BS), 0);
	assert_int_equal(simhost_attach(h, "a", 0), 0);
	assert_int_equal(simhost_attach(h, "b", 1), 0);
	return h;
}

/* The copy gets COPY ABORTED 0Dh/02h with segment `segment` in COMMAND-SPECIFIC
 * INFORMATION, and the daemon logs `line` of the receiving LUN at `level` ("warn",
 * "debug"), or (level NULL) not at all. */
static void expect_aborted(struct simhost *h, int lun, const struct sb_segment seg[2],
			   uint32_t segment, const char *receiver, const char *level,
			   const char *line)
{
	struct simhost_result r;
	char *log = xcopy_logged(h, lun, seg, &r);
	assert_int_equal(r.r.status, 2);
	assert_int_equal(r.r.sense[2] & 0x0F, 0x0A);
	assert_int_equal(r.r.sense[12], 0x0D);
	assert_int_equal(r.r.sense[13], 0x02);
	uint32_t csi = (uint32_t)r.r.sense[8] << 24 | (uint32_t)r.r.sense[9] << 16 |
		       (uint32_t)r.r.sense[10] << 8 | r.r.sense[11];
	assert_int_equal(csi, segment);
	simhost_result_free(&r);
	if (level) {
		char prefix[64];
		snprintf(prefix, sizeof(prefix), "vaaid[%s] %s ", level, receiver);
		assert_non_null(strstr(log, prefix));
		assert_non_null(strstr(log, line));
		/* a warning: one line, no second copy of it */
		if (!strcmp(level, "warn"))
			assert_int_equal(strchr(log, '\n') - log + 1, (long)strlen(log));
	} else {
		assert_null(strstr(log, line));
	}
	free(log);
}

static void expect_logged(struct simhost *h, int lun, const struct sb_segment seg[2],
			  uint32_t segment, const char *receiver, const char *line)
{
	expect_aborted(h, lun, seg, segment, receiver, "warn", line);
}

static void test_xcopy_range_logged(void **state)
{
	(void)state;
	/* the daemon's default level is info (src/daemon/config.c); warn is the least
	 * verbose level that still shows warnings: the line must be there already */
	vlog_set_level(VLOG_WARN);
	char path[512];
	struct vpool_params prm = {0};
	struct simhost *h =
		two_luns("xcopy_log", 64u << 20, &prm, (uint64_t)VOL_BLOCKS * BS, path, sizeof(path));

	/* received on b: segment 0 fine, segment 1's destination runs 2048 blocks past b's end */
	struct sb_segment seg[2] = {
		{.src = 0, .dst = 1, .nblocks = 8, .src_lba = 0, .dst_lba = 0},
		{.src = 0, .dst = 1, .nblocks = 4096, .src_lba = 0, .dst_lba = VOL_BLOCKS - 2048},
	};
	expect_logged(h, 1, seg, 1, "b",
		      "EXTENDED COPY segment 1: destination LBA 129024 + 4096 blocks "
		      "runs past the end of LUN b (131072 blocks of 512 bytes)");

	/* received on a: segment 0's source starts at a's capacity */
	struct sb_segment seg_b[2] = {seg[0], seg[1]};
	seg[0] = (struct sb_segment){.src = 0, .dst = 1, .nblocks = 1, .src_lba = VOL_BLOCKS};
	expect_logged(h, 0, seg, 0, "a",
		      "EXTENDED COPY segment 0: source LBA 131072 + 1 blocks "
		      "runs past the end of LUN a (131072 blocks of 512 bytes)");

	/* any initiator can send such copies: within 10 s of the last line, b's next ones
	 * get the same answer but no warning (one per 10 s per LUN, src/util/log_limit.c);
	 * at debug level each still shows, as debug */
	const char *b_line = "EXTENDED COPY segment 1: destination LBA 129024 + 4096 blocks "
			     "runs past the end of LUN b (131072 blocks of 512 bytes)";
	expect_aborted(h, 1, seg_b, 1, "b", NULL, b_line);
	expect_aborted(h, 1, seg_b, 1, "b", NULL, b_line);
	vlog_set_level(VLOG_DEBUG);
	expect_aborted(h, 1, seg_b, 1, "b", "debug", b_line);
	vlog_set_level(VLOG_WARN);

	/* a copy within range logs nothing */
	seg[0] = (struct sb_segment){.src = 0, .dst = 1, .nblocks = 8, .src_lba = 0, .dst_lba = 16};
	seg[1] = (struct sb_segment){.src = 1, .dst = 0, .nblocks = 8, .src_lba = 16, .dst_lba = 32};
	struct simhost_result r;
	char *log = xcopy_logged(h, 0, seg, &r);
	assert_int_equal(r.r.status, 0);
	simhost_result_free(&r);
	assert_string_equal(log, "");
	free(log);

	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
}

/* Write 0x5A to [lba, lba + n) of LUN lun; the SCSI status. */
static uint8_t write_blocks(struct simhost *h, int lun, uint64_t lba, uint32_t n)
{
	uint8_t *buf = malloc((size_t)n * BS);
	assert_non_null(buf);
	memset(buf, 0x5A, (size_t)n * BS);
	uint8_t cdb[16];
	sb_rw16_cdb(cdb, 0x8A, lba, n);
	uint64_t tag;
	struct simhost_result r;
	assert_int_equal(simhost_submit(h, lun, cdb, sizeof(cdb), buf, (size_t)n * BS, 0, &tag), 0);
	assert_int_equal(simhost_reap(h, &r, 1, 60000), 1);
	free(buf);
	uint8_t st = r.r.status;
	simhost_result_free(&r);
	return st;
}

/* Segment 1 runs past the end of b, but segment 0 fails first when it runs (it copies
 * data into b, and the pool is full): the command answers DATA PROTECT, SPACE
 * ALLOCATION FAILED WRITE PROTECT (SBC-4 4.7.3.8), and the "past the end ... the
 * segments before it are done" line, untrue now, is not logged. */
static void test_xcopy_range_not_logged_when_earlier_fails(void **state)
{
	(void)state;
	vlog_set_level(VLOG_WARN);
	char path[512];
	struct vpool_params prm = {.extent_size = 64u << 10};
	struct simhost *h = two_luns("xcopy_log_full", 4u << 20, &prm, 1u << 20, path, sizeof(path));
	assert_int_equal(simhost_volume_create(h, "c", 64u << 20, BS), 0);
	assert_int_equal(simhost_attach(h, "c", 2), 0);
	assert_int_equal(write_blocks(h, 0, 0, 128), 0); /* a's extent 0 holds data */
	/* fill the pool through c, one extent at a time, until a write is refused */
	uint64_t lba = 0;
	while (write_blocks(h, 2, lba, 128) == 0) {
		lba += 128;
		assert_true(lba < (64u << 20) / BS);
	}
	/* segment 0: a LBA 1..8 -> b LBA 0..7, not extent-congruent: copied, needs space */
	struct sb_segment seg[2] = {
		{.src = 0, .dst = 1, .nblocks = 8, .src_lba = 1, .dst_lba = 0},
		{.src = 0, .dst = 1, .nblocks = 16, .src_lba = 0, .dst_lba = 2048 - 8},
	};
	struct simhost_result r;
	char *log = xcopy_logged(h, 0, seg, &r);
	assert_int_equal(r.r.status, 2);
	assert_int_equal(r.r.sense[2] & 0x0F, 0x07);
	assert_int_equal(r.r.sense[12], 0x27);
	assert_int_equal(r.r.sense[13], 0x07);
	simhost_result_free(&r);
	assert_null(strstr(log, "runs past the end"));
	free(log);
	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
}

/* A peer refused as not co-visible (xcopy_scope covisible, b in another visibility
 * group than a): COPY ABORTED 0Dh/02h, COPY TARGET DEVICE NOT REACHABLE (SPC-4
 * 6.4.1), and a warning of the receiving LUN -- at most one per 10 s per LUN. */
static void test_xcopy_refusal_rate_limited(void **state)
{
	(void)state;
	vlog_set_level(VLOG_WARN);
	char path[512];
	struct vpool_params prm = {0};
	struct simhost *h = two_luns("xcopy_log_cv", 64u << 20, &prm, (uint64_t)VOL_BLOCKS * BS,
				    path, sizeof(path));
	assert_int_equal(simhost_set_visibility(h, 1, 1), 0);
	struct sb_segment seg[2] = {
		{.src = 0, .dst = 1, .nblocks = 8, .src_lba = 0, .dst_lba = 0},
		{.src = 0, .dst = 1, .nblocks = 8, .src_lba = 8, .dst_lba = 8},
	};
	const char *line = "refused: not exported everywhere";
	expect_aborted(h, 0, seg, 0, "a", "warn", line);
	for (int i = 0; i < 3; i++)
		expect_aborted(h, 0, seg, 0, "a", NULL, line);
	vlog_set_level(VLOG_DEBUG);
	expect_aborted(h, 0, seg, 0, "a", "debug", line);
	vlog_set_level(VLOG_WARN);
	/* the limit is per LUN: b's first refusal (naming a) is a warning */
	expect_aborted(h, 1, seg, 0, "b", "warn", line);
	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xcopy_range_logged),
		cmocka_unit_test(test_xcopy_range_not_logged_when_earlier_fails),
		cmocka_unit_test(test_xcopy_refusal_rate_limited),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
