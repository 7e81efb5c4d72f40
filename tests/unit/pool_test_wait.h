/*
 * Waiting for a pool callback in the pool unit tests (test_pool_*.c): a
 * struct wait that done_cb fills, and wait_run() running the reactor until it
 * has (every reactor step must succeed).
 */
#ifndef VAAID_POOL_TEST_WAIT_H
#define VAAID_POOL_TEST_WAIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <cmocka.h>

#include "vaaid/io.h"

struct wait {
	bool done;
	int res;
};

static inline void done_cb(void *arg, int res)
{
	struct wait *w = arg;
	w->res = res;
	w->done = true;
}

static inline int wait_run(struct vreactor *r, struct wait *w)
{
	while (!w->done)
		assert_true(vreactor_run_once(r, -1) >= 0);
	return w->res;
}

#endif
