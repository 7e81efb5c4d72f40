/*
 * The "TCM-USER" generic netlink family (see include/vaaid/tcmu_nl.h).
 *
 * How this works: one libnl socket joins the family's "config" multicast
 * group. At open, SET_FEATURES (TCMU_ATTR_SUPP_KERN_CMD_REPLY = 1) is sent
 * with NLM_F_ACK and waited for (blocking, once); if the kernel accepts it,
 * every ADDED/REMOVED/RECONFIG_DEVICE it sends from then on blocks the
 * configfs writer until our *_DONE reply arrives (drivers/target/
 * target_core_user.c: tcmu_wait_genl_cmd_reply()), so a reply is sent for
 * every such message, whatever happens -- except one whose callback says the
 * device is another daemon's on this host (TCMU_NL_NO_REPLY: the kernel takes
 * the first reply, that daemon's). After open the socket is
 * non-blocking; tcmu_nl_dispatch() drains it with nl_recvmsgs().
 *
 * Attribute validation (tcmu_nl_handle): only messages from the kernel (port
 * 0) with a whole generic netlink header are looked at; nla_policy checks
 * types and lengths (strings must be NUL-terminated within TCMU_NL_NAME_MAX);
 * a message without TCMU_ATTR_DEVICE or TCMU_ATTR_MINOR is answered -EINVAL
 * and logged. The reply echoes DEVICE_ID whenever it is readable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <sys/uio.h>
#define __LINUX_UIO_H /* linux/target_core_user.h would pull in a clashing struct iovec */
#include <linux/target_core_user.h>

#include "vaaid/tcmu_nl.h"
#include "vaaid/util.h"

#define TCMU_GENL_NAME "TCM-USER"
#define TCMU_GENL_GROUP "config"
#define TCMU_GENL_VERSION 2 /* the kernel's tcmu_genl_family.version */

struct tcmu_nl {
	struct nl_sock *sock;
	int family;
	bool replies;
	const struct tcmu_nl_ops *ops;
	void *arg;
};

static struct nla_policy tcmu_policy[TCMU_ATTR_MAX + 1] = {
	[TCMU_ATTR_DEVICE] = {.type = NLA_STRING, .maxlen = TCMU_NL_NAME_MAX},
	[TCMU_ATTR_MINOR] = {.type = NLA_U32},
	[TCMU_ATTR_DEV_CFG] = {.type = NLA_STRING, .maxlen = TCMU_NL_NAME_MAX},
	[TCMU_ATTR_DEV_SIZE] = {.type = NLA_U64},
	[TCMU_ATTR_WRITECACHE] = {.type = NLA_U8},
	[TCMU_ATTR_CMD_STATUS] = {.type = NLA_S32},
	[TCMU_ATTR_DEVICE_ID] = {.type = NLA_U32},
	[TCMU_ATTR_SUPP_KERN_CMD_REPLY] = {.type = NLA_U8},
};

int tcmu_parse_uio_name(const char *name, struct tcmu_uio_name *out)
{
	memset(out, 0, sizeof(*out));
	if (strlen(name) >= sizeof(out->buf) || strncmp(name, "tcm-user/", 9))
		return -EINVAL;
	strcpy(out->buf, name);
	/* tcm-user/<hba>/<dev>/<subtype>/<cfgstring>: the cfgstring may hold '/' */
	char *p = out->buf + 9;
	const char **fields[3] = {&out->hba, &out->dev, &out->subtype};
	for (int i = 0; i < 3; i++) {
		char *slash = strchr(p, '/');
		if (!slash || slash == p)
			return -EINVAL;
		*slash = 0;
		*fields[i] = p;
		p = slash + 1;
	}
	out->cfg = p;
	return 0;
}

static int send_reply(struct tcmu_nl *nl, uint8_t cmd, int status, uint32_t device_id)
{
	struct nl_msg *msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	int rc = -EMSGSIZE;
	if (genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, 0, cmd, TCMU_GENL_VERSION) &&
	    nla_put_s32(msg, TCMU_ATTR_CMD_STATUS, status) == 0 &&
	    nla_put_u32(msg, TCMU_ATTR_DEVICE_ID, device_id) == 0) {
		rc = nl_send_auto(nl->sock, msg);
		rc = rc < 0 ? -EIO : 0;
	}
	nlmsg_free(msg);
	if (rc < 0)
		vlog_err(NULL, "cannot send the netlink reply %u (status %d): %s", cmd, status,
			 strerror(-rc));
	return rc;
}

int tcmu_nl_handle(const struct tcmu_nl_ops *ops, void *arg, struct nl_msg *msg,
		   struct tcmu_nl_reply *reply)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	memset(reply, 0, sizeof(*reply));
	/* Device commands come from the kernel (port 0): anything else -- another
	 * process's message sent to our port -- is not ours to act on, or to answer. */
	if (nlh->nlmsg_pid != 0) {
		vlog_warn(NULL, "netlink message from port %u (not the kernel): ignored", nlh->nlmsg_pid);
		return 0;
	}
	if (!genlmsg_valid_hdr(nlh, 0)) {
		vlog_err(NULL, "TCM-USER message too short for its generic netlink header: ignored");
		return 0;
	}
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *a[TCMU_ATTR_MAX + 1];
	int (*cb)(void *, const struct tcmu_nl_event *);
	switch (gh->cmd) {
	case TCMU_CMD_ADDED_DEVICE:
		reply->cmd = TCMU_CMD_ADDED_DEVICE_DONE;
		cb = ops->added;
		break;
	case TCMU_CMD_REMOVED_DEVICE:
		reply->cmd = TCMU_CMD_REMOVED_DEVICE_DONE;
		cb = ops->removed;
		break;
	case TCMU_CMD_RECONFIG_DEVICE:
		reply->cmd = TCMU_CMD_RECONFIG_DEVICE_DONE;
		cb = ops->reconfig;
		break;
	default:
		return 0; /* our own replies' echoes, future commands */
	}
	struct tcmu_nl_event ev;
	memset(&ev, 0, sizeof(ev));
	/* The kernel finds the waiting command by DEVICE_ID: echo it whenever it is
	 * readable, even when another attribute is bad, or the configfs writer waits on. */
	struct nlattr *ids[TCMU_ATTR_MAX + 1];
	if (genlmsg_parse(nlh, 0, ids, TCMU_ATTR_MAX, NULL) == 0 && ids[TCMU_ATTR_DEVICE_ID] &&
	    nla_len(ids[TCMU_ATTR_DEVICE_ID]) == sizeof(uint32_t))
		ev.device_id = nla_get_u32(ids[TCMU_ATTR_DEVICE_ID]);
	int rc = genlmsg_parse(nlh, 0, a, TCMU_ATTR_MAX, tcmu_policy);
	if (rc < 0) {
		vlog_err(NULL, "malformed TCM-USER message (command %u): %s", gh->cmd, nl_geterror(rc));
		rc = -EINVAL;
	} else if (!a[TCMU_ATTR_DEVICE] || !a[TCMU_ATTR_MINOR]) {
		vlog_err(NULL, "TCM-USER message %u without device name or minor: ignored", gh->cmd);
		rc = -EINVAL;
	} else {
		snprintf(ev.device, sizeof(ev.device), "%s", nla_get_string(a[TCMU_ATTR_DEVICE]));
		ev.minor = nla_get_u32(a[TCMU_ATTR_MINOR]);
		if (a[TCMU_ATTR_DEV_CFG]) {
			ev.has_cfg = true;
			snprintf(ev.cfg, sizeof(ev.cfg), "%s", nla_get_string(a[TCMU_ATTR_DEV_CFG]));
		}
		if (a[TCMU_ATTR_DEV_SIZE]) {
			ev.has_size = true;
			ev.size = nla_get_u64(a[TCMU_ATTR_DEV_SIZE]);
		}
		if (a[TCMU_ATTR_WRITECACHE]) {
			ev.has_writecache = true;
			ev.writecache = nla_get_u8(a[TCMU_ATTR_WRITECACHE]);
		}
	}
	if (rc == 0)
		rc = cb ? cb(arg, &ev) : -EOPNOTSUPP;
	if (rc == TCMU_NL_NO_REPLY)
		return 0; /* another daemon's device: that daemon answers */
	reply->status = rc;
	reply->device_id = ev.device_id;
	return 1;
}

static int on_message(struct nl_msg *msg, void *arg)
{
	struct tcmu_nl *nl = arg;
	struct tcmu_nl_reply reply;
	if (tcmu_nl_handle(nl->ops, nl->arg, msg, &reply) && nl->replies)
		send_reply(nl, reply.cmd, reply.status, reply.device_id);
	return NL_OK;
}

static int set_features(struct tcmu_nl *nl)
{
	struct nl_msg *msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	int rc = -EMSGSIZE;
	if (genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, NLM_F_ACK,
			TCMU_CMD_SET_FEATURES, TCMU_GENL_VERSION) &&
	    nla_put_u8(msg, TCMU_ATTR_SUPP_KERN_CMD_REPLY, 1) == 0)
		rc = nl_send_sync(nl->sock, msg); /* frees msg */
	else
		nlmsg_free(msg);
	return rc < 0 ? -EOPNOTSUPP : 0;
}

int tcmu_nl_open(const struct tcmu_nl_ops *ops, void *arg, struct tcmu_nl **out)
{
	struct tcmu_nl *nl = calloc(1, sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	nl->ops = ops;
	nl->arg = arg;
	int rc = -ENOMEM;
	nl->sock = nl_socket_alloc();
	if (!nl->sock)
		goto fail;
	rc = -EIO;
	if (genl_connect(nl->sock) < 0)
		goto fail;
	rc = -ENOENT;
	nl->family = genl_ctrl_resolve(nl->sock, TCMU_GENL_NAME);
	if (nl->family < 0)
		goto fail;
	int grp = genl_ctrl_resolve_grp(nl->sock, TCMU_GENL_NAME, TCMU_GENL_GROUP);
	if (grp < 0)
		goto fail;
	rc = -EIO;
	if (nl_socket_add_membership(nl->sock, grp) < 0)
		goto fail;
	nl->replies = set_features(nl) == 0;
	nl_socket_disable_seq_check(nl->sock);
	nl_socket_modify_cb(nl->sock, NL_CB_VALID, NL_CB_CUSTOM, on_message, nl);
	if (nl_socket_set_nonblocking(nl->sock) < 0)
		goto fail;
	*out = nl;
	return 0;
fail:
	tcmu_nl_close(nl);
	return rc;
}

int tcmu_nl_fd(const struct tcmu_nl *nl) { return nl_socket_get_fd(nl->sock); }

bool tcmu_nl_replies(const struct tcmu_nl *nl) { return nl->replies; }

int tcmu_nl_dispatch(struct tcmu_nl *nl)
{
	for (;;) {
		int rc = nl_recvmsgs_default(nl->sock);
		if (rc == -NLE_AGAIN)
			return 0;
		if (rc >= 0)
			continue;
		if (rc < 0) {
			/* NLE_NOMEM (overrun) etc.: log and keep serving; the next read resyncs */
			vlog_warn(NULL, "netlink receive: %s", nl_geterror(rc));
			return rc == -NLE_BAD_SOCK ? -EBADF : 0;
		}
	}
}

void tcmu_nl_close(struct tcmu_nl *nl)
{
	if (!nl)
		return;
	if (nl->sock)
		nl_socket_free(nl->sock);
	free(nl);
}
