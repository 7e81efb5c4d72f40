/*
 * Benchmark / test-only pool operations (declared at the end of
 * include/vaaid/pool.h; the daemon never calls them).
 *
 * How this works: vpool_bench_map_full() builds a large mapped pool without
 * writing 1 MiB of data per extent: each virtual extent gets a freshly
 * reserved physical extent through an ordinary MAP record (flags 0: no
 * validity bitmap, i.e. fully valid, as a clone of a fully written extent
 * would log). Records go into the open commit as long as it takes them; when
 * it is full the function waits for room (which starts the commit; a
 * checkpoint at half a journal runs as usual meanwhile), and at the end it
 * waits for the last commit. Synchronous: control path only, like
 * vpool_volume_create.
 */
#include <errno.h>

#include "pool_internal.h"

struct bench_wait {
	struct vj_waiter w;
	bool done;
	int res;
};

static void bench_wait_done(void *arg, int res)
{
	struct bench_wait *bw = arg;
	bw->res = res;
	bw->done = true;
}

/* Wait for room in the journal (commit == false) or for the open commit to be durable. */
static int bench_wait_journal(struct vpool *p, bool commit)
{
	struct bench_wait bw = {.w = {.fn = bench_wait_done}};
	bw.w.arg = &bw;
	if (commit)
		vjournal_wait_commit(p->j, &bw.w);
	else
		vjournal_wait_room(p->j, &bw.w);
	int rc = vreactor_run_until(p->r, &bw.done);
	return rc < 0 ? rc : bw.res;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

int vpool_bench_map_full(struct vvol *v, uint64_t first_vext, uint64_t count, uint64_t order_seed)
{
	struct vpool *p = v->pool;
	if (p->readonly)
		return -EROFS;
	if (p->failed)
		return -EIO;
	if (first_vext > v->n_vext || count > v->n_vext - first_vext)
		return -EINVAL;
	for (uint64_t k = 0; k < count; k++)
		if (pool_map_get(v, first_vext + k))
			return -EEXIST;
	if (count > p->n_free)
		return -ENOSPC;
	/* i -> (a*i + b) mod count is a permutation when gcd(a, count) == 1. */
	uint64_t a = 1, b = 0;
	if (order_seed && count > 2) {
		a = (order_seed * 0x9E3779B97F4A7C15ull) % count;
		if (a < 2)
			a = 2;
		while (gcd64(a, count) != 1)
			a = a + 1 < count ? a + 1 : 2;
		b = order_seed % count;
	}
	for (uint64_t i = 0; i < count; i++) {
		uint64_t vext = first_vext + (uint64_t)(((unsigned __int128)i * a + b) % count);
		while (!vjournal_can_append(p->j, REC_MAP_LEN)) {
			if (vjournal_failed(p->j) || p->failed)
				return -EIO;
			int rc = bench_wait_journal(p, false);
			if (rc < 0)
				return rc;
		}
		uint64_t pext;
		int rc = pool_reserve(p, &pext);
		if (rc < 0)
			return rc;
		rc = pool_log_map(p, v, vext, pext + 1, 0);
		if (rc < 0) {
			pool_unreserve(p, pext);
			return rc;
		}
	}
	return bench_wait_journal(p, true);
}
