/*
 * systemd's service notification protocol for the daemon (sd_notify(3),
 * issue 25): the unit is Type=notify.
 *
 * How this works: vd_notify_ready() sends READY=1 and a STATUS line once the
 * daemon serves (pools open, netlink and the control socket up, the D-Bus name
 * taken); from then on a reactor timer fires every STATUS_PERIOD, or at half the
 * unit's WatchdogSec= when that is shorter, and sends WATCHDOG=1 (with the
 * watchdog enabled) and the STATUS line again. The ping comes from the reactor
 * thread, between commands, so a reactor that hangs stops pinging and systemd
 * restarts the daemon (WatchdogSec=, Restart=on-failure). vd_notify_stopping()
 * sends STOPPING=1; the pings go on while the pools close. Outside systemd (no
 * NOTIFY_SOCKET) sd_notify does nothing. Free it after the reactor is
 * destroyed (its timer may be queued).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <systemd/sd-daemon.h>

#include "vaaid/daemon.h"
#include "vaaid/io.h"

#define STATUS_PERIOD_NS (10ull * 1000000000ull)

struct vd_notify {
	struct vreactor *r;
	vd_status_fn status;
	void *arg;
	uint64_t period_ns;
	bool watchdog, armed, stopping;
	bool ready; /* READY=1 sent: the timer runs (re-armed by vd_notify_service if its
		     * submission failed) */
	struct vio_timer timer;
};

static void send_status(struct vd_notify *n, bool ping)
{
	char line[512];
	n->status(n->arg, line, sizeof(line));
	sd_notifyf(0, "%sSTATUS=%s", ping ? "WATCHDOG=1\n" : "", line);
}

static void tick(void *arg, int res);

static void arm(struct vd_notify *n)
{
	vio_op_init(&n->timer.op, tick, n);
	n->armed = vreactor_timeout(n->r, &n->timer, n->period_ns) == 0;
}

static void tick(void *arg, int res)
{
	struct vd_notify *n = arg;
	n->armed = false;
	if (res == -ECANCELED)
		return;
	if (!n->stopping)
		send_status(n, n->watchdog);
	else if (n->watchdog) /* still pinging: closing the pools may take a while */
		sd_notify(0, "WATCHDOG=1");
	arm(n);
}

int vd_notify_new(struct vreactor *r, vd_status_fn status, void *arg, struct vd_notify **out)
{
	struct vd_notify *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->r = r;
	n->status = status;
	n->arg = arg;
	n->period_ns = STATUS_PERIOD_NS;
	uint64_t usec = 0;
	if (sd_watchdog_enabled(0, &usec) > 0 && usec) {
		n->watchdog = true;
		if (usec * 1000 / 2 < n->period_ns)
			n->period_ns = usec * 1000 / 2;
	}
	*out = n;
	return 0;
}

bool vd_notify_watchdog(const struct vd_notify *n) { return n && n->watchdog; }

void vd_notify_ready(struct vd_notify *n)
{
	char line[512];
	n->status(n->arg, line, sizeof(line));
	sd_notifyf(0, "READY=1\nSTATUS=%s", line);
	if (n->watchdog)
		sd_notify(0, "WATCHDOG=1");
	n->ready = true;
	arm(n);
}

void vd_notify_service(struct vd_notify *n)
{
	if (n && n->ready && !n->armed)
		arm(n);
}

void vd_notify_stopping(struct vd_notify *n)
{
	if (!n || n->stopping)
		return;
	n->stopping = true;
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: in-flight commands complete, pools are "
		     "checkpointed");
}

void vd_notify_free(struct vd_notify *n)
{
	/* a timer still queued dies with the ring (vreactor_destroy runs no callback) */
	free(n);
}
