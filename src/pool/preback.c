/*
 * The pre-backer: keeps PREBACK_TARGET free extents "backed" (their space in
 * the pool file reserved with fallocate) ahead of need, so that an allocating
 * write -- including the first write into an extent shared by EXTENDED COPY
 * (redirect-on-write) -- normally takes a backed extent and goes straight to
 * its data write instead of waiting for a fallocate first (alloc.c,
 * datapath.c). Nothing ever punches the space out, so freed extents stay
 * backed and are preferred too (also after the file system was full).
 *
 * How this works: one fallocate at a time, from the reactor, while fewer
 * than PREBACK_TARGET free extents are backed: the next free extent that is
 * not backed, after a cursor. The extent stays free meanwhile (fallocate of
 * a range that a write reserves and writes at the same time is harmless).
 * A failing fallocate (ENOSPC: the file system is full) stalls the
 * pre-backer until the pool grows or a foreground fallocate succeeds again;
 * the write path reserves space for unbacked extents itself, so a stall only
 * costs latency. The file space reserved ahead is at most PREBACK_TARGET
 * extents beyond what is used.
 *
 * Tried and dropped: writing zeros instead of fallocate (ext4 keeps
 * fallocated space "unwritten", and the first O_DSYNC write into it also
 * commits the conversion: 212 us vs 95 us per random 4 KiB write here). The
 * 1 MiB zero writes running next to foreground writes made every allocating
 * write wait for the file system's journal (median 1.8 ms instead of 0.46 ms
 * in scripts/bench/xcopy's first-write phase); docs/performance.md.
 */
#include <errno.h>
#include <stdlib.h>

#include "pool_internal.h"

#define PREBACK_TARGET 16u

struct prebacker {
	bool busy, stalled, stopped;
	uint64_t pext, cursor;
	struct vio_op op;
};

int pool_preback_init(struct vpool *p)
{
	p->pb = calloc(1, sizeof(*p->pb));
	return p->pb ? 0 : -ENOMEM;
}

void pool_preback_free(struct vpool *p)
{
	free(p->pb);
	p->pb = NULL;
}

static void preback_done(void *arg, int res)
{
	struct vpool *p = arg;
	struct prebacker *pb = p->pb;
	pb->busy = false;
	if (res >= 0 || res == -EOPNOTSUPP) /* no fallocate: as the write path, write anyway */
		pool_mark_backed(p, pb->pext);
	else
		pb->stalled = true;
	pool_preback_kick(p);
}

void pool_preback_kick(struct vpool *p)
{
	struct prebacker *pb = p->pb;
	if (!pb || pb->busy || pb->stalled || pb->stopped || p->failed || p->readonly || p->replaying)
		return;
	if (p->n_backed_free >= PREBACK_TARGET || p->n_free <= p->n_backed_free)
		return;
	if (!pool_find_free(p, FREE_UNBACKED, pb->cursor, &pb->pext))
		return;
	pb->cursor = (pb->pext + 1) % p->n_ext;
	pb->busy = true;
	vio_op_init(&pb->op, preback_done, p);
	int rc = vblk_allocate(p->dev, pool_ext_off(p, pb->pext), p->ext, &pb->op);
	if (rc < 0)
		vreactor_defer(p->r, &pb->op, rc);
}

void pool_preback_stop(struct vpool *p)
{
	if (p->pb)
		p->pb->stopped = true;
}

bool pool_preback_busy(const struct vpool *p) { return p->pb && p->pb->busy; }

void pool_preback_unstall(struct vpool *p)
{
	if (p->pb && p->pb->stalled) {
		p->pb->stalled = false;
		pool_preback_kick(p);
	}
}
