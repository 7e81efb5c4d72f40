/*
 * The pool unit tests' environment (test_pool_thin.c, test_pool_share.c): a
 * pool formatted on an in-memory crash-simulating device, synchronous
 * wrappers of the volume calls, space accounting helpers, and a power loss
 * followed by recovery.
 */
#ifndef VAAID_POOL_TEST_ENV_H
#define VAAID_POOL_TEST_ENV_H

#include <stdio.h>
#include <string.h>

#include "vaaid/io.h"
#include "vaaid/pool.h"

#include "pool_test_wait.h"

struct env {
	struct vreactor *r;
	struct vblk *dev;
	struct vblk *jdev; /* env_open_mem_jfile: the journal store, paired with dev */
	struct vpool *p;
};

static inline int run(struct env *e, struct wait *w) { return wait_run(e->r, w); }

static inline int vwrite(struct env *e, struct vvol *v, uint64_t off, const void *buf, size_t len)
{
	struct wait w = {0};
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	int rc = vvol_write(v, off, len, &iov, 1, done_cb, &w);
	return rc < 0 ? rc : run(e, &w);
}

static inline int vread(struct env *e, struct vvol *v, uint64_t off, void *buf, size_t len)
{
	struct wait w = {0};
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	int rc = vvol_read(v, off, len, &iov, 1, done_cb, &w);
	return rc < 0 ? rc : run(e, &w);
}

static inline int vdealloc(struct env *e, struct vvol *v, uint64_t off, uint64_t len)
{
	struct wait w = {0};
	int rc = vvol_deallocate(v, off, len, done_cb, &w);
	return rc < 0 ? rc : run(e, &w);
}

static inline void env_open_mem(struct env *e, uint64_t size, uint32_t extent, uint32_t journal)
{
	memset(e, 0, sizeof(*e));
	assert_int_equal(vreactor_create(64, &e->r), 0);
	assert_int_equal(vblk_crashsim_create_mem(e->r, size, 1, &e->dev), 0);
	struct vpool_params prm = {.size = size, .extent_size = extent, .journal_size = journal};
	assert_int_equal(vpool_format(e->dev, &prm), 0);
	assert_int_equal(vpool_open(e->dev, &e->p), 0);
}

/* The same with the journal in a store of its own (rule 12), paired for crashes. */
static inline void env_open_mem_jfile(struct env *e, uint64_t size, uint32_t extent,
				      uint32_t journal)
{
	memset(e, 0, sizeof(*e));
	assert_int_equal(vreactor_create(64, &e->r), 0);
	assert_int_equal(vblk_crashsim_create_mem(e->r, size, 1, &e->dev), 0);
	struct vpool_params prm = {.size = size, .extent_size = extent, .journal_size = journal};
	assert_int_equal(vblk_crashsim_create_mem(e->r, vpool_journal_store_size(&prm, size), 2,
						  &e->jdev),
			 0);
	assert_int_equal(vblk_crashsim_link(e->dev, e->jdev), 0);
	prm.journal_dev = e->jdev;
	assert_int_equal(vpool_format(e->dev, &prm), 0);
	assert_int_equal(vpool_open_stores(e->dev, e->jdev, 0, &e->p, NULL), 0);
}

static inline void env_close(struct env *e)
{
	assert_int_equal(vpool_verify(e->p, stderr), 0);
	assert_int_equal(vpool_close(e->p), 0);
	vblk_close(e->jdev);
	vblk_close(e->dev);
	vreactor_destroy(e->r);
}

static inline uint64_t used(struct env *e)
{
	struct vpool_stats st;
	vpool_get_stats(e->p, &st);
	assert_int_equal(st.used + st.free, st.capacity);
	return st.used;
}

static inline uint64_t mapped(struct vvol *v)
{
	struct vvol_info vi;
	vvol_get_info(v, &vi);
	return vi.mapped;
}

static inline bool all_bytes(const uint8_t *b, size_t len, uint8_t c)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != c)
			return false;
	return true;
}

/* Power loss right after a control-path call returned: durable means durable. */
static inline void crash_and_recover(struct env *e)
{
	vblk_crashsim_crash_now(e->dev);
	vpool_abandon(e->p);
	vreactor_destroy(e->r);
	assert_int_equal(vreactor_create(64, &e->r), 0);
	vblk_crashsim_power_on(e->dev, e->r); /* (and its journal store, if paired) */
	assert_int_equal(vpool_open_stores(e->dev, e->jdev, 0, &e->p, NULL), 0);
	assert_int_equal(vpool_verify(e->p, stderr), 0);
}

#endif
