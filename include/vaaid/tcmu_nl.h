/*
 * vaaid netlink attach (src/tcmu/netlink.c): the "TCM-USER" generic netlink
 * family of target_core_user.
 *
 * How this works: tcmu_nl_open() resolves the family and its "config"
 * multicast group, joins it and asks the kernel (TCMU_CMD_SET_FEATURES,
 * TCMU_ATTR_SUPP_KERN_CMD_REPLY = 1) to wait for our *_DONE replies. The
 * caller polls tcmu_nl_fd() and calls tcmu_nl_dispatch() when it is
 * readable: every ADDED/REMOVED/RECONFIG_DEVICE message is validated (a
 * message missing a required attribute or with a malformed one is logged and
 * answered -EINVAL, never trusted), handed to the matching callback, and the
 * callback's result (0 or -errno) is sent back as the *_DONE reply's
 * TCMU_ATTR_CMD_STATUS — when the kernel accepted SET_FEATURES; older kernels
 * do not wait for replies and get none.
 */
#ifndef VAAID_TCMU_NL_H
#define VAAID_TCMU_NL_H

#include <stdbool.h>
#include <stdint.h>

#define TCMU_NL_NAME_MAX 256

struct tcmu_nl_event {
	uint32_t minor;                  /* UIO minor: /dev/uio<minor> */
	uint32_t device_id;              /* echoed in the reply (0 on old kernels) */
	char device[TCMU_NL_NAME_MAX];   /* UIO name: tcm-user/<hba>/<dev>/<subtype>/<cfgstring> */
	bool has_cfg, has_size, has_writecache;
	char cfg[TCMU_NL_NAME_MAX];      /* RECONFIG: new dev_config */
	uint64_t size;                   /* RECONFIG: new dev_size */
	uint8_t writecache;              /* RECONFIG: new emulate_write_cache */
};

/* A callback's result for a device that is another daemon's on this host (vaaid.conf
 * [tcmu] leave): no *_DONE reply at all, so that the kernel takes that daemon's. */
#define TCMU_NL_NO_REPLY 1

struct tcmu_nl_ops {
	int (*added)(void *arg, const struct tcmu_nl_event *ev);
	int (*removed)(void *arg, const struct tcmu_nl_event *ev);
	int (*reconfig)(void *arg, const struct tcmu_nl_event *ev);
};

struct tcmu_nl;

/* -ENOENT when the family is unknown (target_core_user not loaded). */
int tcmu_nl_open(const struct tcmu_nl_ops *ops, void *arg, struct tcmu_nl **out);
int tcmu_nl_fd(const struct tcmu_nl *nl);
/* The kernel waits for *_DONE replies (SET_FEATURES accepted). */
bool tcmu_nl_replies(const struct tcmu_nl *nl);
/* Receive and handle every message queued on the socket (non-blocking). */
int tcmu_nl_dispatch(struct tcmu_nl *nl);
void tcmu_nl_close(struct tcmu_nl *nl);

/*
 * One received message (what tcmu_nl_dispatch does with each; exposed for
 * tests). Messages not from the kernel (port != 0), too short for their
 * generic netlink header, or of other commands are ignored: returns 0, no
 * reply. ADDED/REMOVED/RECONFIG_DEVICE: validated, handed to the callback
 * when valid (-EINVAL without calling it when not), and returns 1 with the
 * *_DONE reply to send in *reply (status: the callback's result or -EINVAL;
 * device_id echoed when it was readable) -- or 0, no reply, when the callback
 * returned TCMU_NL_NO_REPLY.
 */
struct nl_msg;
struct tcmu_nl_reply {
	uint8_t cmd;
	int status;
	uint32_t device_id;
};
int tcmu_nl_handle(const struct tcmu_nl_ops *ops, void *arg, struct nl_msg *msg,
		   struct tcmu_nl_reply *reply);

/*
 * Split a UIO name "tcm-user/<hba>/<dev>/<subtype>/<cfgstring>". The
 * pointers point into buf (a copy of name). Returns -EINVAL when the name is
 * not a TCMU one.
 */
struct tcmu_uio_name {
	char buf[TCMU_NL_NAME_MAX];
	const char *hba, *dev, *subtype, *cfg;
};
int tcmu_parse_uio_name(const char *name, struct tcmu_uio_name *out);

#endif
