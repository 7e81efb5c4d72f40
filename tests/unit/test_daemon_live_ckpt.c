/*
 * `[pool NAME] live_checkpoints = yes` in vaaid.conf reaches the pool through the
 * daemon's own pool-open path (src/daemon/pools.c, open_store_as: the daemon calls
 * vpool_set_live_checkpoints at every open; docs/snapshots.md step 3), at the
 * creation of a missing pool file and at the open of an existing one, and only for
 * the pool that says so. test_daemon_config checks the parsing alone.
 *
 * How it tells: vpool_diag.ckpt_last.live, set by checkpoint.c's ckpt_finish for
 * a checkpoint that resumed appends at its freeze point.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vaaid/daemon.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"

/* One checkpoint of vp's pool: was it live? */
static bool checkpoint_was_live(struct vd_pool *vp)
{
	assert_non_null(vp->pool);
	assert_int_equal(vpool_checkpoint(vp->pool), 0);
	struct vpool_diag d;
	vpool_get_diag(vp->pool, &d);
	assert_true(d.ckpt_last.total_ns > 0);
	assert_true(d.ckpt_last.paused_ns <= d.ckpt_last.total_ns);
	return d.ckpt_last.live;
}

static void live_checkpoints_reach_the_pool(void **state)
{
	(void)state;
	char dir[512], cmd[1100];
	const char *tmp = getenv("VAAID_TEST_TMP");
	snprintf(dir, sizeof(dir), "%s/daemon_live_ckpt.%d", tmp ? tmp : "/tmp", (int)getpid());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", dir, dir);
	assert_int_equal(system(cmd), 0);

	struct vd_config *c = calloc(1, sizeof(*c));
	struct vd_pools *ps = calloc(1, sizeof(*ps));
	assert_non_null(c);
	assert_non_null(ps);
	vd_config_defaults(c);
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", dir);
	c->n_pools = 2;
	const char *names[2] = {"live", "paused"};
	for (unsigned i = 0; i < 2; i++) {
		snprintf(c->pools[i].name, sizeof(c->pools[i].name), "%s", names[i]);
		snprintf(c->pools[i].path, sizeof(c->pools[i].path), "%s/%s.pool", dir, names[i]);
		c->pools[i].size = 64 << 20;
	}
	c->pools[0].live_checkpoints = true; /* what `live_checkpoints = yes` parses to */

	struct vreactor *r;
	assert_int_equal(vreactor_create(64, &r), 0);
	char err[1200] = "";
	/* round 0: the files are missing (create_one, then its open); round 1: they exist */
	for (int round = 0; round < 2; round++) {
		assert_int_equal(vd_pools_open(ps, c, r, err, sizeof(err)), 0);
		assert_int_equal(ps->n, 2);
		struct vd_pool *live = vd_pool_find(ps, "live"), *paused = vd_pool_find(ps, "paused");
		assert_non_null(live);
		assert_non_null(paused);
		assert_true(checkpoint_was_live(live));
		assert_false(checkpoint_was_live(paused));
		vd_pools_close(ps);
	}
	vreactor_destroy(r);
	free(ps);
	free(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(live_checkpoints_reach_the_pool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
