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

/* ---- lock sets: many extents, one request (sharing, copies) */

static int cmp_key(const void *a, const void *b)
{
	const struct xlock_ent *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

int xlockset_add(struct xlockset *s, uint64_t key, uint8_t mode)
{
	if (s->n == s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 16;
		struct xlock_ent *e = realloc(s->ents, ncap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		s->ents = e;
		s->cap = ncap;
	}
	s->ents[s->n++] = (struct xlock_ent){.key = key, .mode = mode};
	return 0;
}

static void set_next(struct xlockset *s);

static void set_granted_deferred(void *arg, int res)
{
	(void)res;
	struct xlockset *s = arg;
	s->ents[s->next++].locked = true;
	set_next(s);
}

static void set_granted(struct xlock_wait *w)
{
	struct xlockset *s = (struct xlockset *)((char *)w - offsetof(struct xlockset, lw));
	vio_op_init(&s->op, set_granted_deferred, s);
	vreactor_defer(s->p->r, &s->op, 0);
}

static void set_next(struct xlockset *s)
{
	while (s->next < s->n) {
		struct xlock_ent *l = &s->ents[s->next];
		s->lw.granted = set_granted;
		int rc = xlock_acquire(s->p, l->key, l->mode, &s->lw);
		if (rc < 0) {
			s->done(s->arg, rc);
			return;
		}
		if (rc == 0)
			return;
		l->locked = true;
		s->next++;
	}
	s->done(s->arg, 0);
}

void xlockset_acquire(struct xlockset *s, struct vpool *p, void (*done)(void *arg, int err),
		      void *arg)
{
	/* Ascending key order, one entry per key (both modes -> exclusive): no deadlock. */
	if (s->n) /* (ents is NULL when empty) */
		qsort(s->ents, s->n, sizeof(*s->ents), cmp_key);
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (k && s->ents[k - 1].key == s->ents[i].key) {
			if (s->ents[i].mode == XLOCK_EXCL)
				s->ents[k - 1].mode = XLOCK_EXCL;
			continue;
		}
		s->ents[k++] = s->ents[i];
	}
	s->n = k;
	s->p = p;
	s->done = done;
	s->arg = arg;
	s->next = 0;
	set_next(s);
}

void xlockset_release(struct xlockset *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->ents[i].locked) {
			xlock_release(s->p, s->ents[i].key, s->ents[i].mode);
			s->ents[i].locked = false;
		}
}

void xlockset_free(struct xlockset *s)
{
	free(s->ents);
	s->ents = NULL;
	s->n = s->cap = 0;
}
