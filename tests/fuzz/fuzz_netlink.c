/*
 * fuzz_netlink: TCM-USER generic netlink messages as the kernel sends them
 * (issue 24): ADDED / REMOVED / RECONFIG_DEVICE and their attributes, through
 * tcmu_nl_handle (src/tcmu/netlink.c), then, as the daemon does with an event,
 * the UIO name split (tcmu_parse_uio_name) and its cfgstring parsed
 * (vd_parse_cfgstring).
 *
 * Input: byte 0: the generic netlink command; byte 1: 0x01 from another port
 * than the kernel's; then the attributes as they follow the genl header (a
 * netlink attribute stream: {len u16, type u16, payload, padding}).
 * Checked: the handler returns 0 (ignored) or 1 with the reply of the command's
 * *_DONE; a callback gets a device name and cfg NUL-terminated within
 * TCMU_NL_NAME_MAX; the name and cfgstring parsers give names vaaid accepts and
 * that are safe (fz_name_safe), or an error text.
 * Seeds: messages as target_core_user builds them (device name, minor, device
 * id; RECONFIG with dev_config, dev_size, write cache), as tests/unit/test_tcmu_netlink.c;
 * a device name of the longest length taken, and one character longer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <sys/uio.h>
#define __LINUX_UIO_H
#include <linux/target_core_user.h>

#include "name_oracle.h"
#include "seeds.h"
#include "vaaid/daemon.h"
#include "vaaid/pool.h"
#include "vaaid/tcmu_nl.h"

static _Noreturn void finding(const char *what)
{
	fprintf(stderr, "fuzz_netlink: FINDING: %s\n", what);
	abort();
}

static void check_name(const char *s)
{
	if (strnlen(s, TCMU_NL_NAME_MAX) == TCMU_NL_NAME_MAX)
		finding("a string attribute not terminated within TCMU_NL_NAME_MAX");
}

/* What the daemon does with an event's device name: split it, parse the cfgstring. */
static int on_event(void *arg, const struct tcmu_nl_event *ev)
{
	(void)arg;
	check_name(ev->device);
	check_name(ev->cfg);
	struct tcmu_uio_name un;
	if (tcmu_parse_uio_name(ev->device, &un) == 0) {
		char pool[65], vol[65], err[256] = "";
		int rc = vd_parse_cfgstring(un.cfg, pool, sizeof(pool), vol, sizeof(vol), err, sizeof(err));
		if (rc == 0 && (!vd_valid_name(pool, VD_POOL_NAME_MAX) || !vd_valid_name(vol, VPOOL_NAME_MAX)))
			finding("a cfgstring accepted with a name vaaid refuses");
		if (rc == 0 && (!fz_name_safe(pool, VD_POOL_NAME_MAX) || !fz_name_safe(vol, VPOOL_NAME_MAX)))
			finding("a cfgstring accepted with an unsafe name");
		if (rc < 0 && !err[0])
			finding("a cfgstring refused without an error text");
	}
	return 0;
}

static const struct tcmu_nl_ops ops = {on_event, on_event, on_event};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 || size > 8192)
		return 0;
	struct nl_msg *m = nlmsg_alloc_size(size + 256);
	if (!m)
		return 0;
	if (!genlmsg_put(m, 0, 0, 0x20, 0, 0, data[0], 2) ||
	    (size > 2 && nlmsg_append(m, (void *)(data + 2), size - 2, 0) < 0)) {
		nlmsg_free(m);
		return 0;
	}
	nlmsg_hdr(m)->nlmsg_pid = (data[1] & 0x01) ? 4242 : 0;
	struct tcmu_nl_reply r;
	int rc = tcmu_nl_handle(&ops, NULL, m, &r);
	nlmsg_free(m);
	if (rc != 0 && rc != 1)
		finding("tcmu_nl_handle returned neither 0 nor 1");
	if (rc == 1 && !((data[0] == TCMU_CMD_ADDED_DEVICE && r.cmd == TCMU_CMD_ADDED_DEVICE_DONE) ||
			 (data[0] == TCMU_CMD_REMOVED_DEVICE && r.cmd == TCMU_CMD_REMOVED_DEVICE_DONE) ||
			 (data[0] == TCMU_CMD_RECONFIG_DEVICE &&
			  r.cmd == TCMU_CMD_RECONFIG_DEVICE_DONE)))
		finding("a reply that is not the command's *_DONE");
	return 0;
}

/* ---- seeds: the attribute stream of a message built with libnl, as the kernel's */
static int seed(const char *dir, const char *name, uint8_t cmd, const char *dev, bool reconfig)
{
	struct nl_msg *m = nlmsg_alloc();
	if (!m)
		return -1;
	genlmsg_put(m, 0, 0, 0x20, 0, 0, cmd, 2);
	nla_put_string(m, TCMU_ATTR_DEVICE, dev);
	nla_put_u32(m, TCMU_ATTR_MINOR, 3);
	nla_put_u32(m, TCMU_ATTR_DEVICE_ID, 17);
	if (reconfig) {
		nla_put_string(m, TCMU_ATTR_DEV_CFG, "default/vol2");
		nla_put_u64(m, TCMU_ATTR_DEV_SIZE, 1ull << 30);
		nla_put_u8(m, TCMU_ATTR_WRITECACHE, 1);
	}
	struct nlmsghdr *h = nlmsg_hdr(m);
	uint8_t *attrs = (uint8_t *)genlmsg_attrdata(nlmsg_data(h), 0);
	size_t alen = (size_t)genlmsg_attrlen(nlmsg_data(h), 0);
	uint8_t in[4096];
	in[0] = cmd;
	in[1] = 0;
	memcpy(in + 2, attrs, alen);
	nlmsg_free(m);
	return fuzz_write_seed(dir, name, in, 2 + alen);
}

int fuzz_make_seeds(const char *dir)
{
	const char *dev = "tcm-user/1/ds1/vaai/default/ds1";
	/* names of TCMU_NL_NAME_MAX - 1 characters (the longest the policy takes, with
	 * its NUL) and of TCMU_NL_NAME_MAX (one too long: refused) */
	char longest[TCMU_NL_NAME_MAX + 1];
	int pre = snprintf(longest, sizeof(longest), "tcm-user/1/ds1/vaai/default/");
	memset(longest + pre, 'v', sizeof(longest) - 1 - (size_t)pre);
	longest[TCMU_NL_NAME_MAX] = 0;
	if (seed(dir, "name-too-long", TCMU_CMD_ADDED_DEVICE, longest, false) < 0)
		return -1;
	longest[TCMU_NL_NAME_MAX - 1] = 0;
	if (seed(dir, "name-longest", TCMU_CMD_ADDED_DEVICE, longest, false) < 0 ||
	    seed(dir, "added", TCMU_CMD_ADDED_DEVICE, dev, false) < 0 ||
	    seed(dir, "removed", TCMU_CMD_REMOVED_DEVICE, dev, false) < 0 ||
	    seed(dir, "reconfig", TCMU_CMD_RECONFIG_DEVICE, dev, true) < 0 ||
	    seed(dir, "added-bad-cfg", TCMU_CMD_ADDED_DEVICE, "tcm-user/1/x/vaai/.hidden/..", false) < 0)
		return -1;
	return 0;
}
