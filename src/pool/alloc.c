/*
 * Physical extent allocation.
 *
 * How this works: a bitmap (1 = free) rebuilt at open from the refcounts (it
 * is never logged). pool_reserve takes the next free extent after a moving
 * cursor (spreading allocations, finding runs quickly with 64-bit word scans).
 * A reserved extent has refcount 0 and is not free: if the command that
 * reserved it fails before its map record is logged, pool_unreserve gives it
 * back at once, since no durable metadata ever referenced it. An extent whose
 * refcount drops to 0 goes to a FIFO tagged with the sequence number of the
 * journal commit that carries the drop; it becomes free only when that commit
 * is durable (pool_durable), so a crash can never leave durable metadata
 * pointing at an extent that was already reused.
 * Backing: the pool file's space for an extent is reserved (fallocate) before
 * its first data write (datapath.c). `backed` remembers, for this process
 * lifetime, which extents have that reservation (nothing ever punches it
 * out, so a freed extent stays backed); pool_reserve_backed prefers free
 * backed extents, which need no fallocate in the write's path, and the
 * pre-backer (preback.c) keeps a few free extents backed ahead of need.
 * Likewise an extent whose refcount drops from 2 to 1 (the other sharer
 * rewrote, unmapped or deleted its copy) stays "shared" for the data path
 * until the commit carrying that drop is durable: an in-place write before
 * would land in an extent that a crash gives back to the other volume.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"

static inline void bit_set(uint64_t *b, uint64_t i) { b[i / 64] |= 1ull << (i % 64); }
static inline void bit_clr(uint64_t *b, uint64_t i) { b[i / 64] &= ~(1ull << (i % 64)); }
static inline bool bit_get(const uint64_t *b, uint64_t i) { return b[i / 64] >> (i % 64) & 1; }

int pool_alloc_init(struct vpool *p)
{
	uint64_t words = (p->n_ext + 63) / 64;
	free(p->freebits);
	p->freebits = calloc(words ? words : 1, sizeof(uint64_t));
	if (!p->freebits)
		return -ENOMEM;
	p->n_free = 0;
	for (uint64_t i = 0; i < p->n_ext; i++)
		if (!p->refs[i]) {
			bit_set(p->freebits, i);
			p->n_free++;
		}
	p->cursor = 0;
	free(p->backed);
	p->backed = calloc(words ? words : 1, sizeof(uint64_t)); /* nothing known at open */
	p->n_backed_free = 0;
	return p->backed ? 0 : -ENOMEM;
}

void pool_mark_backed(struct vpool *p, uint64_t pext)
{
	if (bit_get(p->backed, pext))
		return;
	bit_set(p->backed, pext);
	if (bit_get(p->freebits, pext))
		p->n_backed_free++;
}

/* Take free extent i (its bit is set). */
static void take(struct vpool *p, uint64_t i)
{
	bit_clr(p->freebits, i);
	p->n_free--;
	if (bit_get(p->backed, i))
		p->n_backed_free--;
	pool_thr_check(p);
}

bool pool_take_if_free(struct vpool *p, uint64_t pext)
{
	if (pext >= p->n_ext || !bit_get(p->freebits, pext))
		return false;
	take(p, pext);
	return true;
}

bool pool_find_free(const struct vpool *p, enum free_kind kind, uint64_t from, uint64_t *out)
{
	uint64_t words = (p->n_ext + 63) / 64;
	if (!words)
		return false;
	uint64_t w = from / 64;
	for (uint64_t k = 0; k <= words; k++, w = (w + 1) % words) {
		uint64_t bits = p->freebits[w];
		if (kind == FREE_BACKED)
			bits &= p->backed[w];
		else if (kind == FREE_UNBACKED)
			bits &= ~p->backed[w];
		if (k == 0)
			bits &= ~0ull << (from % 64);
		if (!bits)
			continue;
		uint64_t i = w * 64 + (uint64_t)__builtin_ctzll(bits);
		if (i >= p->n_ext)
			continue;
		*out = i;
		return true;
	}
	return false;
}

int pool_reserve_backed(struct vpool *p, uint64_t *out)
{
	if (p->n_backed_free && pool_find_free(p, FREE_BACKED, p->bcursor, out)) {
		take(p, *out);
		p->bcursor = (*out + 1) % p->n_ext;
		return 1;
	}
	int rc = pool_reserve(p, out);
	return rc < 0 ? rc : 0;
}

int pool_reserve(struct vpool *p, uint64_t *out)
{
	if (!p->n_free || !pool_find_free(p, FREE_ANY, p->cursor, out))
		return -ENOSPC;
	take(p, *out);
	p->cursor = (*out + 1) % p->n_ext;
	return 0;
}

void pool_unreserve(struct vpool *p, uint64_t pext)
{
	if (!bit_get(p->freebits, pext)) {
		bit_set(p->freebits, pext);
		p->n_free++;
		if (bit_get(p->backed, pext))
			p->n_backed_free++;
		pool_thr_check(p);
	}
}

/*
 * Soft threshold (SBC-4 4.7.3.7.2): report each crossing once. Used space counts
 * reserved extents (a command that fails gives them back, which may cross back).
 */
void pool_thr_check(struct vpool *p)
{
	if (!p->thr_used || !p->thr_cb || p->replaying)
		return;
	bool above = (p->n_ext - p->n_free - p->discards) * p->ext >= p->thr_used;
	if (above == p->thr_above)
		return;
	p->thr_above = above;
	p->thr_cb(p->thr_arg, above);
}

void vpool_set_soft_threshold(struct vpool *p, uint64_t used_limit,
			      void (*cb)(void *arg, bool above), void *arg)
{
	/* The same watcher with a new limit (e.g. after vpool_grow) keeps its state:
	 * only a real crossing is reported. */
	if (p->thr_cb != cb || p->thr_arg != arg)
		p->thr_above = false;
	p->thr_used = used_limit;
	p->thr_cb = cb;
	p->thr_arg = arg;
	pool_thr_check(p);
}

bool vpool_above_soft_threshold(const struct vpool *p)
{
	return p->thr_used && p->thr_above;
}

/* Append to a FIFO of (pext, seq) kept in a growing ring. */
static int fifo_push(struct pend_free **a, size_t *head, size_t *tail, size_t *cap, uint64_t pext,
		     uint64_t seq)
{
	if (*tail - *head == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct pend_free *n = malloc(ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		size_t cnt = *tail - *head;
		for (size_t i = 0; i < cnt; i++)
			n[i] = (*a)[(*head + i) % *cap];
		free(*a);
		*a = n;
		*cap = ncap;
		*head = 0;
		*tail = cnt;
	}
	(*a)[(*tail)++ % *cap] = (struct pend_free){.pext = pext, .seq = seq};
	return 0;
}

int pool_free_after(struct vpool *p, uint64_t pext, uint64_t seq)
{
	if (p->replaying)
		return 0; /* the free map is rebuilt after replay */
	return fifo_push(&p->pend, &p->pend_head, &p->pend_tail, &p->pend_cap, pext, seq);
}

int pool_unshared_after(struct vpool *p, uint64_t pext, uint64_t seq)
{
	int rc = hmap_put(&p->unshared, pext, (void *)(uintptr_t)seq);
	if (rc == 0)
		rc = fifo_push(&p->unsh, &p->unsh_head, &p->unsh_tail, &p->unsh_cap, pext, seq);
	return rc;
}

bool pool_extent_shared(const struct vpool *p, uint64_t pext)
{
	return p->refs[pext] > 1 || (p->unshared.n && hmap_get(&p->unshared, pext));
}

void pool_durable(void *owner, uint64_t seq)
{
	struct vpool *p = owner;
	while (p->pend_head != p->pend_tail) {
		struct pend_free *f = &p->pend[p->pend_head % p->pend_cap];
		if (f->seq > seq)
			break;
		/* A freed extent may have been referenced again meanwhile (sharing): only free at 0. */
		if (!p->refs[f->pext])
			pool_release_extent(p, f->pext);
		p->pend_head++;
	}
	if (p->pend_head == p->pend_tail)
		p->pend_head = p->pend_tail = 0;
	while (p->unsh_head != p->unsh_tail) {
		struct pend_free *f = &p->unsh[p->unsh_head % p->unsh_cap];
		if (f->seq > seq)
			break;
		/* a later drop of the same extent (shared again meanwhile) keeps its own entry */
		if ((uintptr_t)hmap_get(&p->unshared, f->pext) == f->seq)
			hmap_del(&p->unshared, f->pext);
		p->unsh_head++;
	}
	if (p->unsh_head == p->unsh_tail)
		p->unsh_head = p->unsh_tail = 0;
}
