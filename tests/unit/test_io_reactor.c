/*
 * Unit tests of the reactor (src/io/reactor.c): deferred callbacks run in FIFO
 * order from the loop (never from inside vreactor_defer, and those deferred
 * while the queue runs wait for the next iteration), poll_fd fires only when
 * the fd becomes readable, cancel gives -ECANCELED, run_until, timeouts,
 * batching far more operations than the SQ holds, callbacks submitting more
 * operations, and destroy with operations pending runs no callback.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <liburing.h>

#include "vaaid/io.h"

struct rec {
	int order[16];
	int n;
};

struct tagged {
	struct vio_op op;
	struct rec *rec;
	int tag;
	int res;
	struct vreactor *r;
	struct tagged *defer_next; /* deferred from inside the callback */
};

static void tagged_cb(void *arg, int res)
{
	struct tagged *t = arg;
	t->res = res;
	t->rec->order[t->rec->n++] = t->tag;
	if (t->defer_next)
		vreactor_defer(t->r, &t->defer_next->op, t->defer_next->tag * 10);
}

static void tagged_init(struct tagged *t, struct rec *rec, int tag, struct vreactor *r)
{
	memset(t, 0, sizeof(*t));
	vio_op_init(&t->op, tagged_cb, t);
	t->rec = rec;
	t->tag = tag;
	t->r = r;
}

static struct vreactor *new_reactor(unsigned entries)
{
	struct vreactor *r = NULL;
	assert_int_equal(vreactor_create(entries, &r), 0);
	assert_non_null(r);
	return r;
}

static void test_defer_order(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor(8);
	struct rec rec = {0};
	struct tagged t[4];
	for (int i = 0; i < 4; i++)
		tagged_init(&t[i], &rec, i + 1, r);
	t[0].defer_next = &t[3]; /* deferred while the queue runs */
	vreactor_defer(r, &t[0].op, 11);
	vreactor_defer(r, &t[1].op, 22);
	vreactor_defer(r, &t[2].op, -5);
	assert_int_equal(rec.n, 0); /* never from inside vreactor_defer */
	assert_int_equal(vreactor_run_once(r, -1), 3);
	assert_int_equal(rec.n, 3);
	assert_int_equal(rec.order[0], 1);
	assert_int_equal(rec.order[1], 2);
	assert_int_equal(rec.order[2], 3);
	assert_int_equal(t[0].res, 11);
	assert_int_equal(t[1].res, 22);
	assert_int_equal(t[2].res, -5);
	/* t[3] was deferred during the run: next iteration. */
	assert_int_equal(vreactor_run_once(r, 0), 1);
	assert_int_equal(rec.order[3], 4);
	assert_int_equal(t[3].res, 40);
	assert_int_equal(vreactor_run_once(r, 0), 0);
	vreactor_destroy(r);
}

static void test_poll_eventfd(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor(8);
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	assert_true(efd >= 0);
	struct rec rec = {0};
	struct tagged t;
	tagged_init(&t, &rec, 1, r);
	assert_int_equal(vreactor_poll_fd(r, efd, &t.op), 0);
	assert_int_equal(vreactor_inflight(r), 1);
	assert_int_equal(vreactor_run_once(r, 0), 0);
	assert_int_equal(vreactor_run_once(r, 20), 0);
	assert_int_equal(rec.n, 0);
	uint64_t one = 1;
	assert_int_equal(write(efd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(vreactor_run_once(r, -1), 1);
	assert_int_equal(rec.n, 1);
	assert_true(t.res & POLLIN);
	assert_int_equal(vreactor_inflight(r), 0);
	/* One-shot: nothing more even though the fd stays readable. */
	assert_int_equal(vreactor_run_once(r, 10), 0);
	assert_int_equal(rec.n, 1);
	close(efd);
	vreactor_destroy(r);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_timeout(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor(8);
	int efd = eventfd(0, EFD_CLOEXEC);
	struct rec rec = {0};
	struct tagged t;
	tagged_init(&t, &rec, 1, r);
	assert_int_equal(vreactor_poll_fd(r, efd, &t.op), 0);
	double t0 = now_ms();
	assert_int_equal(vreactor_run_once(r, 100), 0);
	double dt = now_ms() - t0;
	assert_true(dt >= 90 && dt < 2000);
	/* Deferred callbacks pending: no wait at all. */
	struct tagged d;
	tagged_init(&d, &rec, 2, r);
	vreactor_defer(r, &d.op, 0);
	t0 = now_ms();
	assert_int_equal(vreactor_run_once(r, 5000), 1);
	assert_true(now_ms() - t0 < 1000);
	/* Nothing in flight and told to wait forever: an error, not a hang. */
	assert_int_equal(vreactor_cancel(r, &t.op), 0);
	while (vreactor_inflight(r) > 0)
		assert_true(vreactor_run_once(r, -1) >= 0);
	assert_int_equal(vreactor_run_once(r, -1), -EDEADLK);
	close(efd);
	vreactor_destroy(r);
}

static void test_cancel_poll(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor(8);
	int efd = eventfd(0, EFD_CLOEXEC);
	struct rec rec = {0};
	struct tagged t;
	tagged_init(&t, &rec, 7, r);
	assert_int_equal(vreactor_poll_fd(r, efd, &t.op), 0);
	assert_int_equal(vreactor_run_once(r, 0), 0); /* poll armed in the kernel */
	assert_int_equal(vreactor_cancel(r, &t.op), 0);
	while (rec.n == 0)
		assert_true(vreactor_run_once(r, -1) >= 0);
	assert_int_equal(t.res, -ECANCELED);
	while (vreactor_inflight(r) > 0) /* the cancel request's own completion */
		assert_true(vreactor_run_once(r, -1) >= 0);
	assert_int_equal(rec.n, 1);
	/* Cancel of a poll prepared in the same batch works too. */
	tagged_init(&t, &rec, 8, r);
	assert_int_equal(vreactor_poll_fd(r, efd, &t.op), 0);
	assert_int_equal(vreactor_cancel(r, &t.op), 0);
	while (rec.n == 1)
		assert_true(vreactor_run_once(r, -1) >= 0);
	assert_int_equal(t.res, -ECANCELED);
	close(efd);
	vreactor_destroy(r);
}

struct chain {
	struct vio_op op;
	struct vreactor *r;
	int left;
	bool done;
};

static void chain_cb(void *arg, int res)
{
	(void)res;
	struct chain *c = arg;
	if (--c->left == 0)
		c->done = true;
	else
		vreactor_defer(c->r, &c->op, 0);
}

static void test_run_until(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor(8);
	struct chain c = {.r = r, .left = 50};
	vio_op_init(&c.op, chain_cb, &c);
	vreactor_defer(r, &c.op, 0);
	assert_int_equal(vreactor_run_until(r, &c.done), 0);
	assert_true(c.done);
	assert_int_equal(c.left, 0);
	/* Already done: returns at once. */
	assert_int_equal(vreactor_run_until(r, &c.done), 0);
	vreactor_destroy(r);
}

struct counter {
	struct vio_op op;
	int *count;
	int res;
};

static void count_cb(void *arg, int res)
{
	struct counter *c = arg;
	c->res = res;
	(*c->count)++;
}

static void test_many_nops(void **state)
{
	(void)state;
	enum { N = 1000 };
	struct vreactor *r = new_reactor(16); /* far fewer SQ slots than ops */
	static struct counter c[N];
	int count = 0;
	for (int i = 0; i < N; i++) {
		vio_op_init(&c[i].op, count_cb, &c[i]);
		c[i].count = &count;
		c[i].res = 1;
		struct io_uring_sqe *sqe = vreactor_get_sqe(r);
		assert_non_null(sqe);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data(sqe, &c[i].op);
	}
	assert_int_equal(vreactor_inflight(r), N);
	int runs = 0;
	while (count < N) {
		int n = vreactor_run_once(r, -1);
		assert_true(n >= 0);
		runs++;
		assert_true(runs < 10 * N);
	}
	assert_int_equal(count, N);
	assert_int_equal(vreactor_inflight(r), 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(c[i].res, 0);
	vreactor_destroy(r);
}

/* A completion callback that submits the next operation. */
struct relay {
	struct vio_op op;
	struct vreactor *r;
	int left;
};

static void relay_cb(void *arg, int res)
{
	assert_int_equal(res, 0);
	struct relay *x = arg;
	if (--x->left == 0)
		return;
	struct io_uring_sqe *sqe = vreactor_get_sqe(x->r);
	assert_non_null(sqe);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data(sqe, &x->op);
}

static void test_callback_submits(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor(4);
	struct relay x = {.r = r, .left = 100};
	vio_op_init(&x.op, relay_cb, &x);
	struct io_uring_sqe *sqe = vreactor_get_sqe(r);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data(sqe, &x.op);
	while (x.left > 0)
		assert_true(vreactor_run_once(r, -1) >= 0);
	assert_int_equal(vreactor_inflight(r), 0);
	vreactor_destroy(r);
}

static void never_cb(void *arg, int res)
{
	(void)arg;
	(void)res;
	fail_msg("callback run by vreactor_destroy");
}

static void test_destroy_runs_nothing(void **state)
{
	(void)state;
	struct vreactor *r = new_reactor(8);
	int efd = eventfd(0, EFD_CLOEXEC);
	struct vio_op a, b, c;
	vio_op_init(&a, never_cb, NULL);
	vio_op_init(&b, never_cb, NULL);
	vio_op_init(&c, never_cb, NULL);
	vreactor_defer(r, &a, 0);
	assert_int_equal(vreactor_poll_fd(r, efd, &b), 0);
	struct io_uring_sqe *sqe = vreactor_get_sqe(r);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data(sqe, &c);
	vreactor_destroy(r);
	close(efd);
	assert_int_equal(vreactor_create(0, &r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defer_order),
		cmocka_unit_test(test_poll_eventfd),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_cancel_poll),
		cmocka_unit_test(test_run_until),
		cmocka_unit_test(test_many_nops),
		cmocka_unit_test(test_callback_submits),
		cmocka_unit_test(test_destroy_runs_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
