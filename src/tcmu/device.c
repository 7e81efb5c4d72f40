/*
 * vaaid TCMU device: one LUN's ring served by the reactor (API in
 * include/vaaid/tcmu_dev.h, ring protocol in ring.c).
 *
 * How this file works.
 *  - Wake-ups: a one-shot vreactor_poll_fd() on event_fd. When it fires, the
 *    event counter is read first (4 bytes from a UIO fd, 8 from an eventfd;
 *    told apart with fstat: UIO is a character device), then the ring is
 *    drained, then the poll is re-armed. Anything the kernel queues after the
 *    read bumps the counter again, so no wake-up is lost. create() also
 *    defers one drain ("kick") for commands queued before we attached.
 *  - Drain: tcmu_ring_next() until empty. Each command gets a struct
 *    dev_cmd (struct scsi_cmd + the struct tcmu_ring_cmd it points into) and
 *    goes to scsi_dispatch(). A malformed entry (-EBADMSG) is completed at
 *    once with CHECK CONDITION, ILLEGAL REQUEST / INVALID FIELD IN CDB. An
 *    unwalkable ring (-EPROTO) stops the drain; once nothing is in flight a
 *    later wake-up resyncs to cmd_tail (which recovers after the kernel
 *    resets the ring, and is a no-op otherwise).
 *  - Completion (scsi_cmd.done, any order, maybe from inside dispatch):
 *    tcmu_ring_complete() with status, sense and read_len = data_in_len when
 *    the handler produced data-in, else -1 (no TCMU_UFLAG_READ_LEN). The
 *    transport cannot see the data direction in the entry; the kernel uses
 *    read_len only for DMA_FROM_DEVICE and treats 0 as "not reported", so
 *    this is the same as "data_in_len for data-in commands, -1 for data-out".
 *    Then the doorbell is batched: a flag + vreactor_defer() make it one
 *    notify_fd write (uint32 1 to UIO, uint64 1 to an eventfd) per reactor
 *    iteration however many commands completed in it.
 *  - Stop: no more drains; the poll is cancelled (vreactor_cancel). In-flight
 *    commands still complete. Destroy: flushes a pending doorbell; the three
 *    vio_ops live in a separately allocated struct dev_ev which, if one of
 *    them is still queued in the reactor, is left behind and freed by the
 *    last of their callbacks (never touching the freed device).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tcmu_abi.h"
#include "vaaid/dispatch.h"
#include "vaaid/ring.h"
#include "vaaid/scsi.h"
#include "vaaid/tcmu_dev.h"
#include "vaaid/util.h"

struct dev_ev {
	struct tcmu_dev *dev; /* NULL once the device is destroyed */
	struct vio_op poll_op, notify_op, kick_op;
	bool poll_armed, cancel_sent, notify_queued, kick_queued;
};

struct tcmu_dev {
	struct vreactor *r;
	struct tcmu_ring ring;
	int event_fd, notify_fd;
	bool event_is_eventfd, notify_is_eventfd;
	struct scsi_lun *lun;
	struct dev_ev *ev;
	unsigned inflight;
	bool stopped, broken;
	uint64_t wakeups, drains, taken, completed, doorbells; /* for tcmu_dev_get_diag */
	struct dev_cmd *cmds; /* in flight, so that tcmu_dev_abandon() can free them */
};

struct dev_cmd {
	struct scsi_cmd sc;
	struct tcmu_ring_cmd rc;
	struct tcmu_dev *dev;
	struct dev_cmd *prev, *next;
};

static void cmd_link(struct tcmu_dev *d, struct dev_cmd *c)
{
	c->prev = NULL;
	c->next = d->cmds;
	if (d->cmds)
		d->cmds->prev = c;
	d->cmds = c;
}

static void cmd_unlink(struct tcmu_dev *d, struct dev_cmd *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		d->cmds = c->next;
	if (c->next)
		c->next->prev = c->prev;
}

static const char *dev_name(const struct tcmu_dev *d)
{
	return d->lun && d->lun->name ? d->lun->name : "tcmu";
}

static void ev_maybe_free(struct dev_ev *ev)
{
	if (!ev->dev && !ev->poll_armed && !ev->notify_queued && !ev->kick_queued)
		free(ev);
}

static void kick(struct tcmu_dev *d)
{
	if (!d->ev->kick_queued) {
		d->ev->kick_queued = true;
		vreactor_defer(d->r, &d->ev->kick_op, 0);
	}
}

static void arm(struct tcmu_dev *d)
{
	struct dev_ev *ev = d->ev;
	if (d->stopped || ev->poll_armed)
		return;
	int rc = vreactor_poll_fd(d->r, d->event_fd, &ev->poll_op);
	if (rc < 0) {
		vlog_err(dev_name(d), "cannot poll the event fd: %s", strerror(-rc));
		kick(d); /* try again next iteration */
		return;
	}
	ev->poll_armed = true;
	ev->cancel_sent = false;
}

static void notify_now(struct tcmu_dev *d)
{
	uint64_t v64 = 1;
	uint32_t v32 = 1;
	const void *p = d->notify_is_eventfd ? (const void *)&v64 : (const void *)&v32;
	size_t n = d->notify_is_eventfd ? sizeof(v64) : sizeof(v32);
	ssize_t w;
	d->doorbells++;
	do
		w = write(d->notify_fd, p, n);
	while (w < 0 && errno == EINTR);
	if (w < 0 && errno != EAGAIN)
		vlog_err(dev_name(d), "doorbell write failed: %s", strerror(errno));
}

static void schedule_notify(struct tcmu_dev *d)
{
	if (!d->ev->notify_queued) {
		d->ev->notify_queued = true;
		vreactor_defer(d->r, &d->ev->notify_op, 0);
	}
}

static void on_notify(void *arg, int res)
{
	(void)res;
	struct dev_ev *ev = arg;
	ev->notify_queued = false;
	if (!ev->dev) {
		ev_maybe_free(ev);
		return;
	}
	notify_now(ev->dev);
}

static void on_cmd_done(struct scsi_cmd *sc)
{
	struct dev_cmd *c = (struct dev_cmd *)((char *)sc - offsetof(struct dev_cmd, sc));
	struct tcmu_dev *d = c->dev;
	long read_len = -1;
	if (sc->data_in_len > 0)
		read_len = (long)(sc->data_in_len < sc->iov_len ? sc->data_in_len : sc->iov_len);
	int rc = tcmu_ring_complete(&d->ring, c->rc.cmd_id, sc->status, sc->sense, sc->sense_len,
				    read_len);
	if (rc < 0)
		vlog_err(dev_name(d), "cannot complete cmd_id %u: %s", c->rc.cmd_id, strerror(-rc));
	tcmu_ring_cmd_release(&c->rc);
	cmd_unlink(d, c);
	free(c);
	d->inflight--;
	d->completed++;
	schedule_notify(d);
}

/* Read (and so reset) the event counter after a wake-up. */
static void clear_event(struct tcmu_dev *d)
{
	uint64_t v64;
	uint32_t v32;
	void *p = d->event_is_eventfd ? (void *)&v64 : (void *)&v32;
	size_t n = d->event_is_eventfd ? sizeof(v64) : sizeof(v32);
	ssize_t rd;
	do
		rd = read(d->event_fd, p, n);
	while (rd < 0 && errno == EINTR);
	if (rd < 0 && errno != EAGAIN)
		vlog_warn(dev_name(d), "event fd read failed: %s", strerror(errno));
}

static void drain(struct tcmu_dev *d)
{
	d->drains++;
	if (d->broken && d->inflight == 0) {
		tcmu_ring_resync(&d->ring);
		d->broken = false;
	}
	while (!d->stopped && !d->broken) {
		struct tcmu_ring_cmd rcmd;
		int rc = tcmu_ring_next(&d->ring, &rcmd);
		if (rc == 0)
			return;
		if (rc == -ENOMEM) { /* nothing consumed: retry next iteration */
			kick(d);
			return;
		}
		if (rc < 0 && rc != -EBADMSG) {
			vlog_err(dev_name(d), "command ring is broken (%s); waiting for a reset",
				 strerror(-rc));
			d->broken = true;
			return;
		}
		struct dev_cmd *c = calloc(1, sizeof(*c));
		if (!c) {
			/* Consumed already: answer it so the kernel is not left waiting. */
			tcmu_ring_complete(&d->ring, rcmd.cmd_id, SAM_STAT_TASK_SET_FULL, NULL, 0, -1);
			tcmu_ring_cmd_release(&rcmd);
			schedule_notify(d);
			continue;
		}
		c->rc = rcmd;
		c->dev = d;
		d->taken++;
		cmd_link(d, c);
		struct scsi_cmd *sc = &c->sc;
		sc->cdb = c->rc.cdb;
		sc->cdb_len = c->rc.cdb_len;
		sc->iov = c->rc.iov;
		sc->iovcnt = c->rc.iovcnt;
		sc->iov_len = c->rc.data_len;
		sc->lun = d->lun;
		sc->done = on_cmd_done;
		sc->transport_priv = d;
		d->inflight++;
		if (rc == -EBADMSG) {
			vlog_warn(dev_name(d), "malformed ring entry (cmd_id %u)", c->rc.cmd_id);
			scsi_complete_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
			continue;
		}
		scsi_dispatch(sc); /* may complete (and free c) before returning */
	}
}

static void on_event(void *arg, int res)
{
	struct dev_ev *ev = arg;
	ev->poll_armed = false;
	struct tcmu_dev *d = ev->dev;
	if (!d) {
		ev_maybe_free(ev);
		return;
	}
	if (d->stopped)
		return;
	if (res < 0 && res != -EINTR && res != -EAGAIN && res != -ECANCELED) {
		vlog_err(dev_name(d), "event fd poll failed: %s", strerror(-res));
		return;
	}
	d->wakeups++;
	clear_event(d);
	drain(d);
	arm(d);
}

static void on_kick(void *arg, int res)
{
	(void)res;
	struct dev_ev *ev = arg;
	ev->kick_queued = false;
	struct tcmu_dev *d = ev->dev;
	if (!d) {
		ev_maybe_free(ev);
		return;
	}
	if (d->stopped)
		return;
	drain(d);
	arm(d);
}

static bool fd_is_eventfd(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && !S_ISCHR(st.st_mode);
}

int tcmu_dev_create(struct vreactor *r, void *map, size_t map_size, int event_fd, int notify_fd,
		    struct scsi_lun *lun, struct tcmu_dev **out)
{
	if (!r || !map || !out || event_fd < 0 || notify_fd < 0)
		return -EINVAL;
	*out = NULL;
	struct tcmu_dev *d = calloc(1, sizeof(*d));
	struct dev_ev *ev = calloc(1, sizeof(*ev));
	if (!d || !ev) {
		free(d);
		free(ev);
		return -ENOMEM;
	}
	int rc = tcmu_ring_attach(&d->ring, map, map_size);
	if (rc < 0) {
		free(d);
		free(ev);
		return rc;
	}
	d->r = r;
	d->event_fd = event_fd;
	d->notify_fd = notify_fd;
	d->event_is_eventfd = fd_is_eventfd(event_fd);
	d->notify_is_eventfd = fd_is_eventfd(notify_fd);
	d->lun = lun;
	d->ev = ev;
	ev->dev = d;
	vio_op_init(&ev->poll_op, on_event, ev);
	vio_op_init(&ev->notify_op, on_notify, ev);
	vio_op_init(&ev->kick_op, on_kick, ev);
	kick(d); /* commands queued before we attached */
	*out = d;
	return 0;
}

unsigned tcmu_dev_inflight(const struct tcmu_dev *d)
{
	return d ? d->inflight : 0;
}

void tcmu_dev_get_diag(const struct tcmu_dev *d, struct tcmu_dev_diag *out)
{
	memset(out, 0, sizeof(*out));
	if (!d)
		return;
	out->cmd_head = tcmu_abi_load_head(d->ring.map);
	out->cmd_tail = tcmu_abi_load_tail(d->ring.map);
	out->next = d->ring.next;
	out->inflight = d->inflight;
	out->poll_armed = d->ev->poll_armed;
	out->kick_queued = d->ev->kick_queued;
	out->notify_queued = d->ev->notify_queued;
	out->broken = d->broken;
	out->stopped = d->stopped;
	out->wakeups = d->wakeups;
	out->drains = d->drains;
	out->taken = d->taken;
	out->completed = d->completed;
	out->doorbells = d->doorbells;
}

void tcmu_dev_stop(struct tcmu_dev *d)
{
	if (!d)
		return;
	d->stopped = true;
	if (d->ev->poll_armed && !d->ev->cancel_sent) {
		int rc = vreactor_cancel(d->r, &d->ev->poll_op);
		if (rc == 0)
			d->ev->cancel_sent = true;
	}
}

bool tcmu_dev_quiesced(const struct tcmu_dev *d)
{
	return !d || (!d->ev->poll_armed && !d->ev->kick_queued && !d->ev->notify_queued);
}

void tcmu_dev_destroy(struct tcmu_dev *d)
{
	if (!d)
		return;
	tcmu_dev_stop(d);
	if (d->ev->notify_queued)
		notify_now(d); /* completions posted since the last doorbell */
	struct dev_ev *ev = d->ev;
	ev->dev = NULL;
	ev_maybe_free(ev);
	free(d);
}

void tcmu_dev_abandon(struct tcmu_dev *d)
{
	if (!d)
		return;
	while (d->cmds) { /* their completions will never come */
		struct dev_cmd *c = d->cmds;
		d->cmds = c->next;
		tcmu_ring_cmd_release(&c->rc);
		free(c);
	}
	free(d->ev);
	free(d);
}
