/*
 * The reactor: one io_uring plus a FIFO of deferred callbacks, single-threaded.
 *
 * How this works:
 *   - Backends take an SQE with vreactor_get_sqe() (which submits what is
 *     queued when the SQ is full), prepare it and set its user_data to their
 *     struct vio_op *. Nothing is submitted until vreactor_run_once().
 *   - vreactor_run_once() submits, waits (unless deferred callbacks are
 *     pending) for one completion up to the timeout, then runs the callback of
 *     every CQE available at that point (peek + seen, one at a time, so a
 *     callback can prepare new SQEs) and finally the deferred callbacks that
 *     were queued; callbacks deferred while that queue runs wait for the next
 *     iteration.
 *   - SQEs whose user_data is 0 (cancel requests) complete silently.
 *   - inflight = SQEs handed out - CQEs consumed (a CQE flagged F_MORE does not
 *     end its operation).
 *   - vreactor_destroy() never runs callbacks and never touches the ops.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <liburing.h>

#include "vaaid/io.h"

struct vreactor {
	struct io_uring ring;
	unsigned inflight;
	struct vio_op *dq_head, *dq_tail; /* deferred callbacks, FIFO via op->next */
};

static int ring_init(struct io_uring *ring, unsigned entries)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN;
	int rc = io_uring_queue_init_params(entries, ring, &p);
	if (rc == -EINVAL) { /* older kernel: plain ring */
		memset(&p, 0, sizeof(p));
		rc = io_uring_queue_init_params(entries, ring, &p);
	}
	return rc;
}

int vreactor_create(unsigned entries, struct vreactor **out)
{
	if (!out || entries == 0)
		return -EINVAL;
	struct vreactor *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	int rc = ring_init(&r->ring, entries);
	if (rc < 0) {
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void vreactor_destroy(struct vreactor *r)
{
	if (!r)
		return;
	io_uring_queue_exit(&r->ring);
	free(r);
}

struct io_uring_sqe *vreactor_get_sqe(struct vreactor *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
	if (!sqe) {
		io_uring_submit(&r->ring);
		sqe = io_uring_get_sqe(&r->ring);
		if (!sqe)
			return NULL;
	}
	/* A harmless default until the caller prepares it; user_data 0 = no callback. */
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 0);
	r->inflight++;
	return sqe;
}

unsigned vreactor_inflight(const struct vreactor *r) { return r->inflight; }

void vreactor_defer(struct vreactor *r, struct vio_op *op, int res)
{
	op->next = NULL;
	op->res = res;
	if (r->dq_tail)
		r->dq_tail->next = op;
	else
		r->dq_head = op;
	r->dq_tail = op;
}

int vreactor_poll_fd_events(struct vreactor *r, int fd, unsigned events, struct vio_op *op)
{
	if (fd < 0 || !op || !op->cb || !events)
		return -EINVAL;
	struct io_uring_sqe *sqe = vreactor_get_sqe(r);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, fd, events);
	io_uring_sqe_set_data(sqe, op);
	return 0;
}

int vreactor_poll_fd(struct vreactor *r, int fd, struct vio_op *op)
{
	return vreactor_poll_fd_events(r, fd, POLLIN, op);
}

int vreactor_timeout(struct vreactor *r, struct vio_timer *t, uint64_t ns)
{
	if (!t || !t->op.cb)
		return -EINVAL;
	_Static_assert(sizeof(t->ts) == sizeof(struct __kernel_timespec), "timespec layout");
	t->ts.tv_sec = (int64_t)(ns / 1000000000u);
	t->ts.tv_nsec = (long long)(ns % 1000000000u);
	struct io_uring_sqe *sqe = vreactor_get_sqe(r);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_timeout(sqe, (struct __kernel_timespec *)&t->ts, 0, 0);
	io_uring_sqe_set_data(sqe, &t->op);
	return 0;
}

uint64_t vclock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int vreactor_cancel(struct vreactor *r, struct vio_op *op)
{
	if (!op)
		return -EINVAL;
	struct io_uring_sqe *sqe = vreactor_get_sqe(r);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)op, 0);
	io_uring_sqe_set_data64(sqe, 0); /* the cancel's own completion is silent */
	return 0;
}

/* Submit and wait for one completion; -ETIME / -EINTR are not errors. */
static int submit_and_wait(struct vreactor *r, int timeout_ms)
{
	int rc;
	if (r->dq_head || timeout_ms == 0 || io_uring_cq_ready(&r->ring)) {
		rc = io_uring_submit(&r->ring);
	} else if (timeout_ms < 0) {
		if (r->inflight == 0)
			return -EDEADLK; /* nothing could ever complete */
		rc = io_uring_submit_and_wait(&r->ring, 1);
	} else {
		struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
					       .tv_nsec = (long long)(timeout_ms % 1000) * 1000000};
		struct io_uring_cqe *cqe;
		rc = io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts, NULL);
	}
	if (rc == -ETIME || rc == -EINTR || rc == -EAGAIN || rc == -EBUSY)
		return 0; /* EAGAIN/EBUSY: reaping below makes room */
	return rc < 0 ? rc : 0;
}

/* Run the callbacks of the CQEs that are ready now. */
static int reap_cqes(struct vreactor *r)
{
	unsigned avail = io_uring_cq_ready(&r->ring);
	int n = 0;
	struct io_uring_cqe *cqe;
	while (avail-- > 0 && io_uring_peek_cqe(&r->ring, &cqe) == 0) {
		struct vio_op *op = io_uring_cqe_get_data(cqe);
		int res = cqe->res;
		bool more = cqe->flags & IORING_CQE_F_MORE;
		io_uring_cqe_seen(&r->ring, cqe);
		if (!more && r->inflight > 0)
			r->inflight--;
		if (op) {
			op->cb(op->arg, res);
			n++;
		}
	}
	return n;
}

/* Run the deferred callbacks queued so far; new ones wait for the next round. */
static int run_deferred(struct vreactor *r)
{
	struct vio_op *op = r->dq_head;
	r->dq_head = r->dq_tail = NULL;
	int n = 0;
	while (op) {
		struct vio_op *next = op->next;
		op->next = NULL;
		op->cb(op->arg, op->res);
		n++;
		op = next;
	}
	return n;
}

int vreactor_run_once(struct vreactor *r, int timeout_ms)
{
	int rc = submit_and_wait(r, timeout_ms);
	if (rc < 0)
		return rc;
	int n = reap_cqes(r);
	return n + run_deferred(r);
}

int vreactor_run_until(struct vreactor *r, const bool *done)
{
	while (!*done) {
		int rc = vreactor_run_once(r, -1);
		if (rc < 0)
			return rc;
	}
	return 0;
}
