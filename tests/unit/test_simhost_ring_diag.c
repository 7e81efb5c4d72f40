/*
 * The ring state a stalled LUN is diagnosed with (tcmu_dev_get_diag, shown by
 * vaaictl status --json as device_list[].ring), through the real ring and
 * engine (simhost): after N commands answered, taken == completed == N, the
 * read pointer, cmd_head and cmd_tail all meet, nothing is in flight, the
 * doorbell was rung; the state read is the engine thread's (simhost stops it).
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

#include "simhost_test_env.h"
#include "vaaid/tcmu_dev.h"

static void answered_commands_counted(void **state)
{
	(void)state;
	char path[256];
	struct vpool_params prm = {0};
	struct simhost *h = test_pool_create("ringdiag", 64ull << 20, &prm, path, sizeof(path));
	assert_int_equal(simhost_volume_create(h, "v", 8ull << 20, 512), 0);
	assert_int_equal(simhost_attach(h, "v", 0), 0);

	struct tcmu_dev_diag g;
	assert_int_equal(simhost_lun_diag(h, 0, &g), 0);
	assert_int_equal(g.taken, 0);
	assert_int_equal(simhost_lun_diag(h, 1, &g), -ENODEV);

	const unsigned n = 5;
	for (unsigned i = 0; i < n; i++) {
		uint8_t tur[6] = {0}; /* TEST UNIT READY */
		struct simhost_result r;
		test_cmd(h, tur, sizeof(tur), NULL, 0, 0, &r);
		assert_int_equal(r.r.status, 0);
		simhost_result_free(&r);
	}
	uint8_t data[4096];
	memset(data, 0xA5, sizeof(data));
	uint8_t w16[16] = {0x8A};
	w16[13] = 8; /* 8 blocks at LBA 0 */
	struct simhost_result r;
	test_cmd(h, w16, sizeof(w16), data, sizeof(data), 0, &r);
	assert_int_equal(r.r.status, 0);
	simhost_result_free(&r);

	assert_int_equal(simhost_lun_diag(h, 0, &g), 0);
	assert_int_equal(g.taken, n + 1);
	assert_int_equal(g.completed, n + 1);
	assert_int_equal(g.inflight, 0);
	assert_int_equal(g.next, g.cmd_head);
	assert_int_equal(g.cmd_tail, g.cmd_head);
	assert_true(g.cmd_head != 0); /* the ring moved */
	assert_true(g.doorbells >= 1);
	assert_true(g.wakeups >= 1);
	assert_true(g.drains >= g.wakeups);
	assert_false(g.broken);
	assert_false(g.stopped);
	assert_false(g.notify_queued);

	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(answered_commands_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
