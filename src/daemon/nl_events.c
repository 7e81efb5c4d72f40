/*
 * The TCMU netlink events of this daemon (vd_nl_ops, include/vaaid/daemon.h):
 * ADDED / REMOVED / RECONFIG_DEVICE handed to the devices (src/daemon/devices.c).
 *
 * How this works: every daemon listening on the TCM-USER family receives every
 * event (a multicast), and the kernel waits for the first *_DONE reply
 * (target_core_user.c tcmu_wait_genl_cmd_reply, uninterruptibly). A host may run
 * two vaaids, each with its own handler name ([tcmu] handler; docs/ceph.md "Two
 * gateway identities on one host"): an event for a backstore of a handler named in
 * [tcmu] leave is the other daemon's, and gets no reply at all here
 * (TCMU_NL_NO_REPLY) -- neither served nor refused -- while that daemon runs
 * (vd_handler_running: src/daemon/handler_alive.c). When it does not run, nobody
 * else would answer: this daemon answers in its place (ADDED and RECONFIG refused
 * with -ENODEV, REMOVED 0: nothing holds the device), so that the configfs write
 * fails at once instead of waiting for ever. Everything else goes to the devices,
 * which serve the own handler's backstores and refuse any other (the reply carries
 * the refusal, so that an unknown handler never hangs the writer).
 */
#include <errno.h>
#include <stdbool.h>

#include "vaaid/daemon.h"
#include "vaaid/tcmu_nl.h"
#include "vaaid/util.h"

enum left_as { NOT_LEFT, LEFT_RUNNING, LEFT_NOT_RUNNING };

/* Is the event's device of a handler this daemon leaves alone, and does that
 * handler's daemon run? */
static enum left_as left(const struct vd_nl_target *t, const struct tcmu_nl_event *ev)
{
	struct tcmu_uio_name un;
	if (tcmu_parse_uio_name(ev->device, &un) < 0 ||
	    vd_handler_claim(t->tcmu, un.subtype) != VD_HANDLER_LEAVE)
		return NOT_LEFT;
	int run = vd_handler_running(t->configfs_root ? t->configfs_root : "", un.subtype);
	if (run == 0) {
		vlog_warn(un.dev, "%s is user:%s, whose daemon is not running on this host ([tcmu] "
			  "leave): answered here (ADDED and RECONFIG refused)", un.dev, un.subtype);
		return LEFT_NOT_RUNNING;
	}
	/* running, or it cannot be told (then as before: the other daemon's to answer) */
	vlog_debug(un.dev, "%s is user:%s: another daemon's ([tcmu] leave), not answered", un.dev,
		   un.subtype);
	return LEFT_RUNNING;
}

/* An event of a left handler: true, its reply in *rc (TCMU_NL_NO_REPLY while that
 * handler's daemon runs, absent when it does not); false when it is not left. */
static bool left_reply(const struct vd_nl_target *t, const struct tcmu_nl_event *ev, int absent,
		       int *rc)
{
	switch (left(t, ev)) {
	case LEFT_RUNNING:
		*rc = TCMU_NL_NO_REPLY;
		return true;
	case LEFT_NOT_RUNNING:
		*rc = absent;
		return true;
	default:
		return false;
	}
}

static int added(void *arg, const struct tcmu_nl_event *ev)
{
	const struct vd_nl_target *t = arg;
	int rc;
	return left_reply(t, ev, -ENODEV, &rc) ? rc
					       : vd_device_add(t->devs, ev->device, ev->minor, false);
}

/* (nothing holds a device of a handler whose daemon is not running: removed, 0) */
static int removed(void *arg, const struct tcmu_nl_event *ev)
{
	const struct vd_nl_target *t = arg;
	int rc;
	return left_reply(t, ev, 0, &rc) ? rc : vd_device_remove(t->devs, ev->device);
}

static int reconfig(void *arg, const struct tcmu_nl_event *ev)
{
	const struct vd_nl_target *t = arg;
	int rc;
	if (left_reply(t, ev, -ENODEV, &rc))
		return rc;
	int wc = ev->writecache;
	return vd_device_reconfig(t->devs, ev->device, ev->has_cfg ? ev->cfg : NULL,
				  ev->has_size ? &ev->size : NULL, ev->has_writecache ? &wc : NULL);
}

const struct tcmu_nl_ops vd_nl_ops = {
	.added = added,
	.removed = removed,
	.reconfig = reconfig,
};
