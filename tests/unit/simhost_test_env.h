/*
 * The simhost unit tests' environment (test_simhost_*.c): a fresh pool file
 * in $VAAID_TEST_TMP (or /tmp), named after the test and the process, served
 * through the real ring and engine with io_uring. Include after cmocka.h.
 */
#ifndef VAAID_SIMHOST_TEST_ENV_H
#define VAAID_SIMHOST_TEST_ENV_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "simhost.h"

/* Create the pool (any earlier one of that path removed); path receives its path. */
static inline struct simhost *test_pool_create(const char *name, uint64_t size,
					       const struct vpool_params *prm, char *path,
					       size_t path_len)
{
	const char *tmp = getenv("VAAID_TEST_TMP");
	char err[256];
	snprintf(path, path_len, "%s/%s.%d.pool", tmp ? tmp : "/tmp", name, (int)getpid());
	simhost_remove_pool(path);
	struct simhost *h = NULL;
	int rc = simhost_create_pool(path, size, prm, SIMHOST_IO_URING, 0, &h, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "pool create %s: %s\n", path, err);
	assert_int_equal(rc, 0);
	return h;
}

/* One command on LUN 0, waited for (60 s at most); r is the caller's to free. */
static inline void test_cmd(struct simhost *h, const uint8_t *cdb, size_t cdb_len, const void *out,
			    size_t out_len, size_t in_len, struct simhost_result *r)
{
	uint64_t tag;
	assert_int_equal(simhost_submit(h, 0, cdb, cdb_len, out, out_len, in_len, &tag), 0);
	assert_int_equal(simhost_reap(h, r, 1, 60000), 1);
	assert_true(r->tag == tag);
}

#endif
