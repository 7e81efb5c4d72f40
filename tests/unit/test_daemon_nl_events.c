/*
 * The daemon's TCMU netlink events (vd_nl_ops, src/daemon/nl_events.c) through
 * tcmu_nl_handle, as the kernel sends them, with two vaaids on one host in mind
 * (vaaid.conf [tcmu], docs/ceph.md "Two gateway identities on one host"): this
 * daemon serves user:vaai and leaves user:vaaib to the other one.
 *  - ADDED / REMOVED / RECONFIG of a user:vaaib backstore while its daemon runs
 *    (holds its name: vd_handler_hold): no reply at all (the kernel takes the other
 *    daemon's), and nothing is served;
 *  - the same while no daemon serves user:vaaib: answered here (ADDED and RECONFIG
 *    -ENODEV, REMOVED 0), so that the configfs write does not wait for ever;
 *  - vd_handler_hold: one holder per handler and configfs root; the name goes with
 *    the holder's fd;
 *  - ADDED of an unknown handler (user:other): still refused, with a reply
 *    (-ENOENT, "not user:vaai"), so that the configfs writer never waits for ever;
 *    its REMOVED answered 0, its RECONFIG -ENODEV;
 *  - the own handler reaches the devices (here: an unknown pool, refused as such);
 *  - with [tcmu] handler = vaaib, the roles swap.
 * The daemon has no pool and no device here: nothing is mapped.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <sys/uio.h>
#define __LINUX_UIO_H /* linux/target_core_user.h would pull in a clashing struct iovec */
#include <linux/target_core_user.h>

#include "stderr_capture.h"
#include "vaaid/daemon.h"
#include "vaaid/io.h"
#include "vaaid/tcmu_nl.h"

struct env {
	struct vd_config conf;
	struct vreactor *r;
	struct vd_pools pools;
	struct vd_devices *devs;
	struct vd_nl_target t;
};

static struct env *env_new(const char *handler, const char *leave)
{
	struct env *e = calloc(1, sizeof(*e));
	assert_non_null(e);
	vd_config_defaults(&e->conf);
	e->conf.n_pools = 0;
	snprintf(e->conf.tcmu.handler, sizeof(e->conf.tcmu.handler), "%s", handler);
	snprintf(e->conf.tcmu.leave[0], sizeof(e->conf.tcmu.leave[0]), "%s", leave);
	e->conf.tcmu.n_leave = 1;
	snprintf(e->conf.sysfs_root, sizeof(e->conf.sysfs_root), "/nonexistent");
	/* a root of this process's own: parallel runs of this test never meet */
	snprintf(e->conf.configfs_root, sizeof(e->conf.configfs_root), "/nonexistent/nl_events.%d",
		 (int)getpid());
	assert_int_equal(vreactor_create(16, &e->r), 0);
	char err[1200];
	assert_int_equal(vd_pools_open(&e->pools, &e->conf, e->r, err, sizeof(err)), 0);
	struct vd_env de = {.r = e->r, .pools = &e->pools, .conf = &e->conf};
	assert_int_equal(vd_devices_new(&de, &e->devs), 0);
	e->t = (struct vd_nl_target){
		.devs = e->devs, .tcmu = &e->conf.tcmu, .configfs_root = e->conf.configfs_root};
	return e;
}

static void env_free(struct env *e)
{
	vd_devices_free(e->devs);
	vd_pools_close(&e->pools);
	vreactor_destroy(e->r);
	free(e);
}

/* tcmu_nl_handle of one kernel message cmd for device dev; its log in *log (freed
 * by the caller), its return (1: reply in *r, 0: none). */
static int event(struct env *e, uint8_t cmd, const char *dev, struct tcmu_nl_reply *r, char **log)
{
	struct nl_msg *m = nlmsg_alloc();
	assert_non_null(m);
	assert_non_null(genlmsg_put(m, 0, 0, 0x20, 0, 0, cmd, 2));
	nlmsg_hdr(m)->nlmsg_pid = 0; /* from the kernel */
	assert_int_equal(nla_put_string(m, TCMU_ATTR_DEVICE, dev), 0);
	assert_int_equal(nla_put_u32(m, TCMU_ATTR_MINOR, 4), 0);
	assert_int_equal(nla_put_u32(m, TCMU_ATTR_DEVICE_ID, 42), 0);
	if (cmd == TCMU_CMD_RECONFIG_DEVICE)
		assert_int_equal(nla_put_u64(m, TCMU_ATTR_DEV_SIZE, 1ull << 30), 0);
	struct stderr_capture cap;
	stderr_capture_begin(&cap);
	int rc = tcmu_nl_handle(&vd_nl_ops, &e->t, m, r);
	*log = stderr_capture_end(&cap);
	nlmsg_free(m);
	return rc;
}

static void expect_reply(struct env *e, uint8_t cmd, const char *dev, uint8_t done, int status,
			 const char *said)
{
	struct tcmu_nl_reply r;
	char *log;
	assert_int_equal(event(e, cmd, dev, &r, &log), 1);
	assert_int_equal(r.cmd, done);
	assert_int_equal(r.status, status);
	assert_int_equal(r.device_id, 42);
	if (said && !strstr(log, said))
		fail_msg("%s: the log '%s' lacks '%s'", dev, log, said);
	free(log);
	assert_int_equal(vd_devices_count(e->devs), 0);
}

static void expect_no_reply(struct env *e, uint8_t cmd, const char *dev)
{
	struct tcmu_nl_reply r;
	char *log;
	assert_int_equal(event(e, cmd, dev, &r, &log), 0);
	free(log);
	assert_int_equal(vd_devices_count(e->devs), 0);
}

static void test_left_handler_unanswered(void **state)
{
	(void)state;
	struct env *e = env_new("vaai", "vaaib");
	int other = vd_handler_hold(e->conf.configfs_root, "vaaib"); /* the other daemon */
	assert_true(other >= 0);
	const char *b = "tcm-user/1/gwb/vaaib/ceph/vol0";
	expect_no_reply(e, TCMU_CMD_ADDED_DEVICE, b);
	expect_no_reply(e, TCMU_CMD_RECONFIG_DEVICE, b);
	expect_no_reply(e, TCMU_CMD_REMOVED_DEVICE, b);
	close(other);
	env_free(e);
}

static void test_left_handler_not_running(void **state)
{
	(void)state;
	struct env *e = env_new("vaai", "vaaib");
	const char *b = "tcm-user/1/gwb/vaaib/ceph/vol0";
	expect_reply(e, TCMU_CMD_ADDED_DEVICE, b, TCMU_CMD_ADDED_DEVICE_DONE, -ENODEV,
		     "user:vaaib, whose daemon is not running on this host");
	expect_reply(e, TCMU_CMD_RECONFIG_DEVICE, b, TCMU_CMD_RECONFIG_DEVICE_DONE, -ENODEV,
		     "not running");
	expect_reply(e, TCMU_CMD_REMOVED_DEVICE, b, TCMU_CMD_REMOVED_DEVICE_DONE, 0, "not running");
	/* the other daemon starts: silent again; it stops: answered again */
	int other = vd_handler_hold(e->conf.configfs_root, "vaaib");
	assert_true(other >= 0);
	expect_no_reply(e, TCMU_CMD_ADDED_DEVICE, b);
	close(other);
	expect_reply(e, TCMU_CMD_ADDED_DEVICE, b, TCMU_CMD_ADDED_DEVICE_DONE, -ENODEV, "not running");
	env_free(e);
}

static void test_handler_hold(void **state)
{
	(void)state;
	char root[64];
	snprintf(root, sizeof(root), "/nonexistent/hold.%d", (int)getpid());
	assert_int_equal(vd_handler_running(root, "vaai"), 0);
	int a = vd_handler_hold(root, "vaai");
	assert_true(a >= 0);
	assert_int_equal(vd_handler_running(root, "vaai"), 1);
	assert_int_equal(vd_handler_hold(root, "vaai"), -EADDRINUSE); /* a second daemon */
	/* another handler, or the same handler on another configfs root, is free */
	assert_int_equal(vd_handler_running(root, "vaaib"), 0);
	char other_root[80];
	snprintf(other_root, sizeof(other_root), "%s/x", root);
	assert_int_equal(vd_handler_running(other_root, "vaai"), 0);
	close(a);
	assert_int_equal(vd_handler_running(root, "vaai"), 0);
}

static void test_unknown_handler_refused(void **state)
{
	(void)state;
	struct env *e = env_new("vaai", "vaaib");
	const char *o = "tcm-user/1/x/other/ceph/vol0";
	expect_reply(e, TCMU_CMD_ADDED_DEVICE, o, TCMU_CMD_ADDED_DEVICE_DONE, -ENOENT,
		     "backstore x is user:other, not user:vaai: refused");
	expect_reply(e, TCMU_CMD_RECONFIG_DEVICE, o, TCMU_CMD_RECONFIG_DEVICE_DONE, -ENODEV,
		     "not served here");
	expect_reply(e, TCMU_CMD_REMOVED_DEVICE, o, TCMU_CMD_REMOVED_DEVICE_DONE, 0, NULL);
	/* a name that only starts like a left one is not left */
	expect_reply(e, TCMU_CMD_ADDED_DEVICE, "tcm-user/1/y/vaaibb/ceph/vol0",
		     TCMU_CMD_ADDED_DEVICE_DONE, -ENOENT, "is user:vaaibb, not user:vaai: refused");
	/* the own handler reaches the devices: no pool "ceph" here */
	expect_reply(e, TCMU_CMD_ADDED_DEVICE, "tcm-user/1/a/vaai/ceph/vol0",
		     TCMU_CMD_ADDED_DEVICE_DONE, -ENOENT, "unknown pool 'ceph'");
	env_free(e);
}

static void test_second_daemon(void **state)
{
	(void)state;
	struct env *e = env_new("vaaib", "vaai");
	int other = vd_handler_hold(e->conf.configfs_root, "vaai");
	assert_true(other >= 0);
	expect_no_reply(e, TCMU_CMD_ADDED_DEVICE, "tcm-user/1/a/vaai/ceph/vol0");
	expect_no_reply(e, TCMU_CMD_REMOVED_DEVICE, "tcm-user/1/a/vaai/ceph/vol0");
	close(other);
	expect_reply(e, TCMU_CMD_ADDED_DEVICE, "tcm-user/1/b/vaaib/ceph/vol0",
		     TCMU_CMD_ADDED_DEVICE_DONE, -ENOENT, "unknown pool 'ceph'");
	expect_reply(e, TCMU_CMD_ADDED_DEVICE, "tcm-user/1/x/other/ceph/vol0",
		     TCMU_CMD_ADDED_DEVICE_DONE, -ENOENT, "is user:other, not user:vaaib: refused");
	env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_left_handler_unanswered),
		cmocka_unit_test(test_unknown_handler_refused),
		cmocka_unit_test(test_second_daemon),
		cmocka_unit_test(test_left_handler_not_running),
		cmocka_unit_test(test_handler_hold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
