/*
 * voffload_run: a blocking call of the control path run on a short-lived
 * worker thread while the caller keeps the reactor running (the contract is in
 * include/vaaid/io.h).
 *
 * Why: the daemon is one reactor thread. A library call that blocks for
 * seconds (librados' connect, librbd's open, lock break and resize: Ceph's
 * mon and OSD round trips; up to a few of vblk_rbd's op_timeout, 30 s by
 * default, for a cluster that does not answer)
 * made on that thread stalls the rings of every LUN of every pool. The control
 * path stays synchronous for its caller, as the blk_sync helpers are: the
 * caller waits by running the reactor (nested vreactor_run_once), so the other
 * LUNs' I/O goes on meanwhile.
 *
 * How this works: a job (heap) holds the function, its argument, its result
 * and an eventfd. A worker thread (pthread, joinable) runs fn(arg), then
 * writes the eventfd. The caller polls the eventfd through the reactor (one
 * one-shot poll whose callback sets job->done) and runs the reactor until it
 * fired, then joins the worker (which has only its return left to do) and
 * returns fn's result, read after the join (the join orders the worker's
 * writes before the caller's reads). The worker may finish before the poll is
 * armed: the eventfd stays readable, the poll fires at once.
 *
 * What fn may touch: its own argument only (data nobody else reaches while it
 * runs, and handles of thread-safe libraries such as librados/librbd), never
 * the reactor, a pool or a device other threads use: the reactor thread runs
 * callbacks meanwhile. Nothing here is global; the worker inherits the
 * caller's signal mask (the daemon's signals are blocked for its signalfd).
 *
 * Failure paths: no worker thread (pthread_create fails) or no SQE for the
 * poll: fn runs (or is waited for) in the caller, blocking as before, rather
 * than failing the operation. A reactor that fails while the caller waits
 * (vreactor_run_once < 0): the caller joins the worker (blocking) and returns
 * fn's result; the poll still queued then owns the job, and its callback frees
 * it when a later run of the reactor delivers it (vreactor_destroy runs no
 * callback: the job is leaked then, a few bytes and an fd, on a path that
 * never happens in practice).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "vaaid/io.h"

struct job {
	voffload_fn fn;
	void *arg;
	int res;     /* fn's result: written by the worker, read after the join */
	int efd;     /* written by the worker when fn returned */
	bool done;   /* reactor thread: the eventfd's poll fired */
	bool orphan; /* reactor thread: the caller left, the poll's callback frees the job */
	struct vio_op op;
};

static void job_free(struct job *j)
{
	close(j->efd);
	free(j);
}

static void *worker(void *p)
{
	struct job *j = p;
	j->res = j->fn(j->arg);
	uint64_t one = 1;
	while (write(j->efd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	return NULL;
}

static void on_ready(void *arg, int res)
{
	struct job *j = arg;
	(void)res; /* an error of the poll itself (none expected) also ends the wait: the join follows */
	j->done = true;
	if (j->orphan)
		job_free(j);
}

int voffload_run(struct vreactor *r, voffload_fn fn, void *arg)
{
	if (!fn)
		return -EINVAL;
	if (!r)
		return fn(arg);
	struct job *j = calloc(1, sizeof(*j));
	if (!j)
		return fn(arg);
	j->fn = fn;
	j->arg = arg;
	j->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_t th;
	if (j->efd < 0 || pthread_create(&th, NULL, worker, j) != 0) {
		if (j->efd >= 0)
			close(j->efd);
		free(j);
		return fn(arg); /* no thread: block here as before rather than fail */
	}
	vio_op_init(&j->op, on_ready, j);
	bool polled = vreactor_poll_fd(r, j->efd, &j->op) == 0;
	while (polled && !j->done)
		if (vreactor_run_once(r, -1) < 0)
			break;
	pthread_join(th, NULL);
	int res = j->res;
	if (polled && !j->done)
		j->orphan = true; /* the poll still queued frees it (see the top of this file) */
	else
		job_free(j);
	return res;
}
