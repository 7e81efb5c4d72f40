/* u64 -> pointer hash map: open addressing, linear probing, backward-shift delete. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vaaid/hmap.h"

#define EMPTY UINT64_MAX

static size_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return (size_t)k;
}

static int alloc_slots(struct hmap *m, size_t cap)
{
	m->slots = malloc(cap * sizeof(*m->slots));
	if (!m->slots)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		m->slots[i].key = EMPTY;
	m->cap = cap;
	m->n = 0;
	return 0;
}

int hmap_init(struct hmap *m, size_t cap)
{
	size_t c = 16;
	while (c < cap)
		c <<= 1;
	return alloc_slots(m, c);
}

void hmap_free(struct hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}

void *hmap_get(const struct hmap *m, uint64_t key)
{
	if (key == EMPTY)
		return NULL; /* reserved: it would match a free slot */
	size_t mask = m->cap - 1;
	for (size_t i = hash64(key) & mask;; i = (i + 1) & mask) {
		if (m->slots[i].key == key)
			return m->slots[i].val;
		if (m->slots[i].key == EMPTY)
			return NULL;
	}
}

static int grow(struct hmap *m)
{
	struct hmap old = *m;
	if (alloc_slots(m, old.cap * 2) < 0) {
		*m = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].key != EMPTY)
			hmap_put(m, old.slots[i].key, old.slots[i].val);
	free(old.slots);
	return 0;
}

int hmap_put(struct hmap *m, uint64_t key, void *val)
{
	if (key == EMPTY)
		return -EINVAL;
	if ((m->n + 1) * 4 > m->cap * 3 && grow(m) < 0)
		return -ENOMEM;
	size_t mask = m->cap - 1;
	for (size_t i = hash64(key) & mask;; i = (i + 1) & mask) {
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return 0;
		}
		if (m->slots[i].key == EMPTY) {
			m->slots[i].key = key;
			m->slots[i].val = val;
			m->n++;
			return 0;
		}
	}
}

void *hmap_del(struct hmap *m, uint64_t key)
{
	if (key == EMPTY)
		return NULL;
	size_t mask = m->cap - 1, i = hash64(key) & mask;
	while (m->slots[i].key != key) {
		if (m->slots[i].key == EMPTY)
			return NULL;
		i = (i + 1) & mask;
	}
	void *val = m->slots[i].val;
	/* Backward-shift: move later entries of the cluster into the hole when allowed. */
	size_t hole = i;
	for (size_t j = (i + 1) & mask; m->slots[j].key != EMPTY; j = (j + 1) & mask) {
		size_t home = hash64(m->slots[j].key) & mask;
		/* Can slot j move to hole? Only if home is not in (hole, j] cyclically. */
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			m->slots[hole] = m->slots[j];
			hole = j;
		}
	}
	m->slots[hole].key = EMPTY;
	m->n--;
	return val;
}

int hmap_next(const struct hmap *m, size_t *it, uint64_t *key, void **val)
{
	for (; *it < m->cap; (*it)++) {
		if (m->slots[*it].key != EMPTY) {
			*key = m->slots[*it].key;
			*val = m->slots[*it].val;
			(*it)++;
			return 1;
		}
	}
	return 0;
}
