/*
 * TCM-USER netlink messages (tcmu_nl_handle, src/tcmu/netlink.c): well-formed
 * ADDED / REMOVED / RECONFIG_DEVICE reach their callback with every attribute;
 * bad ones never do, and still get the *_DONE reply the kernel waits for
 * (status -EINVAL, DEVICE_ID echoed when readable); messages not from the
 * kernel, with a cut header, or of other commands are ignored without a reply.
 * The messages are built with libnl as the kernel builds them
 * (tcmu_netlink_event_init: genl header version 2, then the attributes).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <sys/uio.h>
#define __LINUX_UIO_H /* linux/target_core_user.h would pull in a clashing struct iovec */
#include <linux/target_core_user.h>

#include "vaaid/tcmu_nl.h"

#define FAMILY 0x20 /* any id: the handler does not look at it */

struct seen {
	int calls;
	int which; /* 1 added, 2 removed, 3 reconfig */
	struct tcmu_nl_event ev;
	int result; /* what the callback returns */
};

static int cb(struct seen *s, int which, const struct tcmu_nl_event *ev)
{
	s->calls++;
	s->which = which;
	s->ev = *ev;
	return s->result;
}
static int on_added(void *a, const struct tcmu_nl_event *ev) { return cb(a, 1, ev); }
static int on_removed(void *a, const struct tcmu_nl_event *ev) { return cb(a, 2, ev); }
static int on_reconfig(void *a, const struct tcmu_nl_event *ev) { return cb(a, 3, ev); }

static const struct tcmu_nl_ops ops = {on_added, on_removed, on_reconfig};

static struct nl_msg *msg_new(uint8_t cmd)
{
	struct nl_msg *m = nlmsg_alloc();
	assert_non_null(m);
	assert_non_null(genlmsg_put(m, 0, 0, FAMILY, 0, 0, cmd, 2));
	nlmsg_hdr(m)->nlmsg_pid = 0; /* from the kernel */
	return m;
}

static void put_device(struct nl_msg *m, const char *dev, uint32_t minor, uint32_t id)
{
	assert_int_equal(nla_put_string(m, TCMU_ATTR_DEVICE, dev), 0);
	assert_int_equal(nla_put_u32(m, TCMU_ATTR_MINOR, minor), 0);
	assert_int_equal(nla_put_u32(m, TCMU_ATTR_DEVICE_ID, id), 0);
}

static int handle(struct seen *s, struct nl_msg *m, struct tcmu_nl_reply *r)
{
	int rc = tcmu_nl_handle(&ops, s, m, r);
	nlmsg_free(m);
	return rc;
}

static void test_added_removed(void **state)
{
	(void)state;
	struct seen s = {0};
	struct tcmu_nl_reply r;
	struct nl_msg *m = msg_new(TCMU_CMD_ADDED_DEVICE);
	put_device(m, "tcm-user/1/ds1/vaai/default/ds1", 3, 77);
	assert_int_equal(handle(&s, m, &r), 1);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.which, 1);
	assert_string_equal(s.ev.device, "tcm-user/1/ds1/vaai/default/ds1");
	assert_int_equal(s.ev.minor, 3);
	assert_int_equal(s.ev.device_id, 77);
	assert_false(s.ev.has_cfg || s.ev.has_size || s.ev.has_writecache);
	assert_int_equal(r.cmd, TCMU_CMD_ADDED_DEVICE_DONE);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.device_id, 77);

	/* the callback's error is the reply's status */
	s.result = -ENOENT;
	m = msg_new(TCMU_CMD_REMOVED_DEVICE);
	put_device(m, "tcm-user/1/ds1/vaai/default/ds1", 3, 77);
	assert_int_equal(handle(&s, m, &r), 1);
	assert_int_equal(s.which, 2);
	assert_int_equal(r.cmd, TCMU_CMD_REMOVED_DEVICE_DONE);
	assert_int_equal(r.status, -ENOENT);
	assert_int_equal(r.device_id, 77);

	/* another daemon's device (TCMU_NL_NO_REPLY): no reply at all */
	s.result = TCMU_NL_NO_REPLY;
	s.calls = 0;
	m = msg_new(TCMU_CMD_ADDED_DEVICE);
	put_device(m, "tcm-user/1/ds2/vaaib/default/ds2", 4, 78);
	assert_int_equal(handle(&s, m, &r), 0);
	assert_int_equal(s.calls, 1);
}

static void test_reconfig_attributes(void **state)
{
	(void)state;
	struct seen s = {0};
	struct tcmu_nl_reply r;
	struct nl_msg *m = msg_new(TCMU_CMD_RECONFIG_DEVICE);
	put_device(m, "tcm-user/1/ds1/vaai/default/ds1", 5, 9);
	assert_int_equal(nla_put_string(m, TCMU_ATTR_DEV_CFG, "default/ds2"), 0);
	assert_int_equal(nla_put_u64(m, TCMU_ATTR_DEV_SIZE, 1ull << 40), 0);
	assert_int_equal(nla_put_u8(m, TCMU_ATTR_WRITECACHE, 1), 0);
	assert_int_equal(handle(&s, m, &r), 1);
	assert_int_equal(s.which, 3);
	assert_true(s.ev.has_cfg && s.ev.has_size && s.ev.has_writecache);
	assert_string_equal(s.ev.cfg, "default/ds2");
	assert_true(s.ev.size == 1ull << 40);
	assert_int_equal(s.ev.writecache, 1);
	assert_int_equal(r.cmd, TCMU_CMD_RECONFIG_DEVICE_DONE);
	assert_int_equal(r.status, 0);
}

/* A bad message: answered -EINVAL with DEVICE_ID want_id (the message is freed). */
static void expect_invalid(struct seen *s, struct nl_msg *m, uint8_t done, uint32_t want_id)
{
	struct tcmu_nl_reply r;
	assert_int_equal(handle(s, m, &r), 1);
	assert_int_equal(r.cmd, done);
	assert_int_equal(r.status, -EINVAL);
	assert_int_equal(r.device_id, want_id);
}

/* Bad attributes: -EINVAL reply with DEVICE_ID echoed, the callback never called. */
static void test_bad_attributes(void **state)
{
	(void)state;
	struct seen s = {0};
	/* no MINOR */
	struct nl_msg *m = msg_new(TCMU_CMD_ADDED_DEVICE);
	assert_int_equal(nla_put_string(m, TCMU_ATTR_DEVICE, "tcm-user/1/a/vaai/p/v"), 0);
	assert_int_equal(nla_put_u32(m, TCMU_ATTR_DEVICE_ID, 12), 0);
	expect_invalid(&s, m, TCMU_CMD_ADDED_DEVICE_DONE, 12);

	/* no DEVICE */
	m = msg_new(TCMU_CMD_REMOVED_DEVICE);
	assert_int_equal(nla_put_u32(m, TCMU_ATTR_MINOR, 1), 0);
	assert_int_equal(nla_put_u32(m, TCMU_ATTR_DEVICE_ID, 13), 0);
	expect_invalid(&s, m, TCMU_CMD_REMOVED_DEVICE_DONE, 13);

	/* DEVICE not NUL-terminated */
	m = msg_new(TCMU_CMD_ADDED_DEVICE);
	assert_int_equal(nla_put(m, TCMU_ATTR_DEVICE, 5, "tcm-u"), 0);
	assert_int_equal(nla_put_u32(m, TCMU_ATTR_MINOR, 1), 0);
	assert_int_equal(nla_put_u32(m, TCMU_ATTR_DEVICE_ID, 14), 0);
	expect_invalid(&s, m, TCMU_CMD_ADDED_DEVICE_DONE, 14);

	/* DEVICE longer than TCMU_NL_NAME_MAX */
	char longname[TCMU_NL_NAME_MAX + 40];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	m = msg_new(TCMU_CMD_ADDED_DEVICE);
	put_device(m, longname, 1, 15);
	expect_invalid(&s, m, TCMU_CMD_ADDED_DEVICE_DONE, 15);

	/* MINOR of the wrong size (2 bytes) */
	m = msg_new(TCMU_CMD_ADDED_DEVICE);
	assert_int_equal(nla_put_string(m, TCMU_ATTR_DEVICE, "tcm-user/1/a/vaai/p/v"), 0);
	assert_int_equal(nla_put_u16(m, TCMU_ATTR_MINOR, 1), 0);
	assert_int_equal(nla_put_u32(m, TCMU_ATTR_DEVICE_ID, 16), 0);
	expect_invalid(&s, m, TCMU_CMD_ADDED_DEVICE_DONE, 16);

	/* DEVICE_ID itself unreadable (1 byte): -EINVAL, id 0 */
	m = msg_new(TCMU_CMD_ADDED_DEVICE);
	assert_int_equal(nla_put_string(m, TCMU_ATTR_DEVICE, "tcm-user/1/a/vaai/p/v"), 0);
	assert_int_equal(nla_put_u32(m, TCMU_ATTR_MINOR, 1), 0);
	assert_int_equal(nla_put_u8(m, TCMU_ATTR_DEVICE_ID, 1), 0);
	expect_invalid(&s, m, TCMU_CMD_ADDED_DEVICE_DONE, 0);

	assert_int_equal(s.calls, 0);
}

/* Not the kernel's, cut short, or another command: ignored, no reply, no callback. */
static void test_ignored(void **state)
{
	(void)state;
	struct seen s = {0};
	struct tcmu_nl_reply r;

	struct nl_msg *m = msg_new(TCMU_CMD_ADDED_DEVICE);
	put_device(m, "tcm-user/1/a/vaai/p/v", 1, 1);
	nlmsg_hdr(m)->nlmsg_pid = 4242; /* another process */
	assert_int_equal(handle(&s, m, &r), 0);

	m = msg_new(TCMU_CMD_SET_FEATURES); /* not a device command (our own request's echo) */
	assert_int_equal(handle(&s, m, &r), 0);
	m = msg_new(0xEE);
	put_device(m, "tcm-user/1/a/vaai/p/v", 1, 1);
	assert_int_equal(handle(&s, m, &r), 0);

	/* a netlink message too short for the generic netlink header */
	m = nlmsg_alloc_simple(FAMILY, 0);
	assert_non_null(m);
	assert_int_equal(handle(&s, m, &r), 0);

	assert_int_equal(s.calls, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_added_removed),
		cmocka_unit_test(test_reconfig_attributes),
		cmocka_unit_test(test_bad_attributes),
		cmocka_unit_test(test_ignored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
