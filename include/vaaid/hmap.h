/*
 * A u64 -> pointer hash map with open addressing and linear probing
 * (src/util/hmap.c). Key UINT64_MAX is reserved: hmap_get and hmap_del find
 * nothing under it, hmap_put refuses it (-EINVAL), so a key read from disk
 * needs no check of its own to be safe here. Deletion uses backward-shift,
 * so there are no tombstones and lookups stay short.
 */
#ifndef VAAID_HMAP_H
#define VAAID_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	uint64_t key;
	void *val;
};

struct hmap {
	struct hmap_slot *slots;
	size_t cap; /* power of two */
	size_t n;
};

int hmap_init(struct hmap *m, size_t initial_cap);
void hmap_free(struct hmap *m);
void *hmap_get(const struct hmap *m, uint64_t key);
/* Insert or replace; -ENOMEM on failure. */
int hmap_put(struct hmap *m, uint64_t key, void *val);
/* Remove; returns the old value or NULL. */
void *hmap_del(struct hmap *m, uint64_t key);
/* Iterate: for (size_t i = 0; hmap_next(m, &i, &k, &v); ) */
int hmap_next(const struct hmap *m, size_t *it, uint64_t *key, void **val);

#endif
