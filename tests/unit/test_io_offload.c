/*
 * voffload_run (src/io/offload.c): fn runs on another thread while the caller
 * keeps running the reactor. The proof is a dependency, not a time: fn blocks
 * until a reactor timer's callback releases it (a pipe), so it returns 0 only
 * if the reactor ran callbacks while fn was blocked; run in the caller, fn
 * gives up after its own wait and the test is red (and never hangs). Also: the
 * result passes through (negative errno too), the worker's writes to its
 * argument are seen after the call, many calls in a row leave no fd or poll
 * behind, r NULL runs fn in the caller.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "vaaid/io.h"

struct gate {
	int pipe[2];
	struct vio_timer t;
	bool released;   /* the timer's callback ran */
	pthread_t who;   /* the thread fn ran on */
	int waited_ms;   /* fn's own limit */
};

static void release(void *arg, int res)
{
	struct gate *g = arg;
	(void)res;
	g->released = true;
	assert_int_equal(write(g->pipe[1], "x", 1), 1);
}

/* Blocks until the pipe is readable (the reactor's timer wrote it), at most waited_ms. */
static int wait_gate(void *arg)
{
	struct gate *g = arg;
	g->who = pthread_self();
	struct pollfd p = {.fd = g->pipe[0], .events = POLLIN};
	int n = poll(&p, 1, g->waited_ms);
	return n == 1 ? 0 : -ETIMEDOUT;
}

static void test_reactor_runs_while_fn_blocks(void **state)
{
	(void)state;
	struct vreactor *r;
	assert_int_equal(vreactor_create(64, &r), 0);
	struct gate g = {.waited_ms = 10000};
	assert_int_equal(pipe(g.pipe), 0);
	vio_op_init(&g.t.op, release, &g);
	assert_int_equal(vreactor_timeout(r, &g.t, 1000000), 0); /* 1 ms */
	assert_int_equal(voffload_run(r, wait_gate, &g), 0);
	assert_true(g.released);
	assert_false(pthread_equal(g.who, pthread_self())); /* on a worker thread */
	assert_int_equal(vreactor_inflight(r), 0); /* its poll completed: nothing left behind */
	close(g.pipe[0]);
	close(g.pipe[1]);
	vreactor_destroy(r);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int fail_with(void *arg) { return -*(int *)arg; }

static int count_up(void *arg)
{
	(*(int *)arg)++;
	return 7;
}

static void test_results_and_reuse(void **state)
{
	(void)state;
	struct vreactor *r;
	assert_int_equal(vreactor_create(8, &r), 0);
	int e = EROFS;
	assert_int_equal(voffload_run(r, fail_with, &e), -EROFS);
	int n = 0, fds = open_fds();
	for (int i = 0; i < 2000; i++) /* an fd or a poll left behind per call would show */
		assert_int_equal(voffload_run(r, count_up, &n), 7);
	assert_int_equal(n, 2000);
	assert_int_equal(open_fds(), fds);
	assert_int_equal(vreactor_inflight(r), 0);
	assert_int_equal(voffload_run(r, NULL, &n), -EINVAL);
	vreactor_destroy(r);
}

static void test_no_reactor_runs_in_caller(void **state)
{
	(void)state;
	struct gate g = {.waited_ms = 0};
	assert_int_equal(pipe(g.pipe), 0);
	assert_int_equal(voffload_run(NULL, wait_gate, &g), -ETIMEDOUT);
	assert_true(pthread_equal(g.who, pthread_self()));
	close(g.pipe[0]);
	close(g.pipe[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reactor_runs_while_fn_blocks),
		cmocka_unit_test(test_results_and_reuse),
		cmocka_unit_test(test_no_reactor_runs_in_caller),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
