/*
 * A volume and its map (src/pool): the map takes a volume's virtual extents to
 * physical extents. An entry is pext + 1, or 0 where nothing is mapped.
 *
 * Every access to a map goes through the functions below (docs/snapshots.md,
 * build order step 0), so that its representation is known in this header and in
 * map.c only. Today that representation is one dense array of n_vext entries,
 * allocated zeroed (calloc: the pages of a large thin volume stay untouched until
 * something is mapped there).
 *
 * Rules the callers rely on, kept by every representation:
 *   - vext < v->n_vext for pool_map_get and pool_map_set (callers check);
 *   - pool_map_set keeps v->mapped (the number of entries that are not 0);
 *   - pool_map_set may fail (-ENOMEM) only when it maps an entry (new1 != 0) that was
 *     0; setting an entry to 0, or changing a mapped entry, never fails;
 *   - pool_map_next visits mapped entries only, in ascending order.
 */
#ifndef VAAID_POOL_MAP_H
#define VAAID_POOL_MAP_H

#include <stdint.h>

#include "vaaid/pool.h"

struct vpool;

/* The representation: private to this header and map.c. */
struct pool_map {
	uint64_t *ent; /* n_vext entries */
};

struct vvol {
	struct vpool *pool;
	uint16_t idx; /* persistent slot */
	char name[VPOOL_NAME_MAX + 1];
	uint64_t size;
	uint32_t block_size;
	uint8_t naa[16];
	char serial[33];
	uint64_t n_vext;     /* entries of the map */
	struct pool_map map; /* only through pool_map_* */
	uint64_t mapped;     /* entries that are not 0 (kept by pool_map_set) */
};

/* map.c: an empty map of n entries (v->n_vext = n); -ENOMEM. */
int pool_map_init(struct vvol *v, uint64_t n);
/* Grow to n >= v->n_vext entries, the new ones 0 (v->n_vext = n); -ENOMEM, the map
 * unchanged. */
int pool_map_grow(struct vvol *v, uint64_t n);
void pool_map_free(struct vvol *v);

static inline uint64_t pool_map_get(const struct vvol *v, uint64_t vext)
{
	return v->map.ent[vext];
}

static inline int pool_map_set(struct vvol *v, uint64_t vext, uint64_t new1)
{
	uint64_t *e = &v->map.ent[vext];
	v->mapped += (new1 != 0) - (*e != 0);
	*e = new1;
	return 0;
}

/* The first mapped entry at or after vext (vext <= v->n_vext), v->n_vext if none. */
static inline uint64_t pool_map_next(const struct vvol *v, uint64_t vext)
{
	const uint64_t *e = v->map.ent;
	while (vext < v->n_vext && !e[vext])
		vext++;
	return vext;
}

#endif
