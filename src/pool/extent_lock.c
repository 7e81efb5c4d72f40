/*
 * Shared/exclusive locks on (volume, virtual extent), FIFO fair.
 *
 * How this works: a lock object exists only while held or waited for (hash
 * map keyed by pool_lock_key). Shared holders are reads and in-place
 * overwrites; exclusive holders change metadata (allocate, validate,
 * remap, free). A request is granted at once only when it is compatible and
 * nobody is queued (so a stream of shared holders cannot starve an exclusive
 * waiter). On release, queued requests are granted from the head while
 * compatible; their continuation runs from the reactor (vreactor_defer), not
 * from inside the release. Commands lock their extents in ascending key
 * order, so waits cannot form a cycle.
 */
#include <errno.h>
#include <stdlib.h>

#include "pool_internal.h"

struct xlock {
	uint32_t shared;
	bool excl;
	struct xlock_wait *head, **tail;
};

static bool compatible(const struct xlock *l, uint8_t mode)
{
	return mode == XLOCK_SHARED ? !l->excl : (!l->excl && !l->shared);
}

static void grant(struct xlock *l, uint8_t mode)
{
	if (mode == XLOCK_SHARED)
		l->shared++;
	else
		l->excl = true;
}

int xlock_acquire(struct vpool *p, uint64_t key, uint8_t mode, struct xlock_wait *w)
{
	struct xlock *l = hmap_get(&p->locks, key);
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l || hmap_put(&p->locks, key, l) < 0) {
			free(l);
			return -ENOMEM;
		}
		l->tail = &l->head;
	}
	if (!l->head && compatible(l, mode)) {
		grant(l, mode);
		return 1;
	}
	w->mode = mode;
	w->next = NULL;
	*l->tail = w;
	l->tail = &w->next;
	return 0;
}

void xlock_release(struct vpool *p, uint64_t key, uint8_t mode)
{
	struct xlock *l = hmap_get(&p->locks, key);
	if (!l)
		return;
	if (mode == XLOCK_SHARED)
		l->shared--;
	else
		l->excl = false;
	while (l->head && compatible(l, l->head->mode)) {
		struct xlock_wait *w = l->head;
		l->head = w->next;
		if (!l->head)
			l->tail = &l->head;
		grant(l, w->mode);
		w->granted(w);
	}
	if (!l->shared && !l->excl && !l->head) {
		hmap_del(&p->locks, key);
		free(l);
	}
}
