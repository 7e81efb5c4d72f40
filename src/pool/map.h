/*
 * A volume and its map (src/pool): the map takes a volume's virtual extents to
 * physical extents. An entry is pext + 1, or 0 where nothing is mapped.
 *
 * Every access to a map goes through the functions below (docs/snapshots.md,
 * build order steps 0 and 1), so that its representation is known in this header
 * and in map.c only. The representation: a directory of pointers to leaves of
 * POOL_MAP_LEAF entries (4 KiB of entries, 512 MiB of volume with 1 MiB extents);
 * a leaf exists only while it holds a mapped entry (allocated by the first
 * pool_map_set that maps one, freed by the one that unmaps its last), so memory
 * follows what a volume holds, not its virtual size: the directory costs 8 bytes
 * per 512 extents (1 MiB at the 2^26-extent maximum, in pages of zeros until
 * leaves are there), and the scans (pool_map_next) skip absent leaves.
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

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vaaid/pool.h"

struct vpool;

#define POOL_MAP_LEAF_SHIFT 9
#define POOL_MAP_LEAF (1u << POOL_MAP_LEAF_SHIFT) /* entries per leaf */
#define POOL_MAP_LEAF_MASK ((uint64_t)POOL_MAP_LEAF - 1)

/* The representation: private to this header and map.c. */
struct pool_map_leaf {
	uint64_t ent[POOL_MAP_LEAF];
	uint32_t n_mapped; /* entries that are not 0: never 0 while the leaf exists */
	uint32_t gen : 31; /* the freeze generation it was made in (struct pool_map_freeze) */
	uint32_t aside : 1; /* a frozen image's only: no map holds it any more */
};

/*
 * A live checkpoint's frozen image shares the maps' leaves (ckpt_image.c): at its
 * freeze point the pool's generation goes up and `active` is set; a leaf made in an
 * older generation is then the image's too, and pool_map_set copies it before the
 * first change ("aside": the map takes the copy, the image keeps the old leaf, which
 * it frees), and never frees it (a leaf emptied or a map freed leaves it to the
 * image). Generations are compared for equality modulo 2^31: a leaf untouched for
 * exactly 2^31 checkpoints would be taken for a new one (68 years at one per second).
 */
struct pool_map_freeze {
	uint32_t gen;
	bool active;
	bool broken; /* a leaf could not be copied aside: the image is wrong, the checkpoint fails */
};

struct pool_map {
	struct pool_map_leaf **dir; /* n_leaves pointers, NULL = every entry 0 */
	uint64_t n_leaves;
	const struct pool_map_freeze *fz; /* the pool's (NULL: never frozen) */
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
	uint64_t alone;      /* entries whose extent has no other reference (acct.c) */
	uint64_t excl;       /* extents all of whose references this volume holds (acct.c) */
	uint64_t excl_ent;   /* entries of this volume on those extents (acct.c) */
};

/* map.c: an empty map of n entries (v->n_vext = n); -ENOMEM. */
int pool_map_init(struct vvol *v, uint64_t n);
/* Grow to n >= v->n_vext entries, the new ones 0 (v->n_vext = n); -ENOMEM, the map
 * unchanged. */
int pool_map_grow(struct vvol *v, uint64_t n);
void pool_map_free(struct vvol *v);
/* A live checkpoint's frozen image (ckpt_image.c), with the pool's generation raised and
 * active (struct pool_map_freeze): dst's map = a copy of src's directory sharing its
 * leaves (O(leaves)); -ENOMEM, dst's map empty. pool_map_unshare_dir frees the copy and
 * the leaves only the image held (copied aside, emptied, or of a map freed meanwhile). */
int pool_map_share_dir(struct vvol *dst, const struct vvol *src);
void pool_map_unshare_dir(struct vvol *dst);
/* How many leaves the map holds now (tests, benchmarks). */
uint64_t pool_map_leaves(const struct vvol *v);

static inline uint64_t pool_map_get(const struct vvol *v, uint64_t vext)
{
	const struct pool_map_leaf *l = v->map.dir[vext >> POOL_MAP_LEAF_SHIFT];
	return l ? l->ent[vext & POOL_MAP_LEAF_MASK] : 0;
}

/* Is l shared with a live checkpoint's frozen image (struct pool_map_freeze)? */
static inline bool pool_map_leaf_frozen(const struct pool_map *m, const struct pool_map_leaf *l)
{
	return m->fz && m->fz->active && l->gen != (m->fz->gen & 0x7fffffffu);
}

/* Leave a frozen leaf to the image (it frees it); free any other. */
static inline void pool_map_leaf_drop(const struct pool_map *m, struct pool_map_leaf *l)
{
	if (pool_map_leaf_frozen(m, l))
		l->aside = 1;
	else
		free(l);
}

static inline int pool_map_set(struct vvol *v, uint64_t vext, uint64_t new1)
{
	struct pool_map_leaf **slot = &v->map.dir[vext >> POOL_MAP_LEAF_SHIFT];
	struct pool_map_leaf *l = *slot;
	uint64_t *e = l ? &l->ent[vext & POOL_MAP_LEAF_MASK] : NULL;
	int d = (new1 != 0) - (e && *e != 0);
	if (!l) {
		if (!new1)
			return 0;
		if (!(l = calloc(1, sizeof(*l))))
			return -ENOMEM;
		l->gen = v->map.fz ? v->map.fz->gen & 0x7fffffffu : 0;
		*slot = l;
	} else if (*e == new1) {
		return 0;
	} else if (pool_map_leaf_frozen(&v->map, l)) {
		if (!(l->n_mapped + (uint32_t)d)) { /* emptied: the image keeps it as it is */
			v->mapped--;
			l->aside = 1;
			*slot = NULL;
			return 0;
		}
		/* Copied aside: the frozen image keeps l. Out of memory, l changes in place
		 * and the image is marked broken, so that the checkpoint fails (never a wrong
		 * blob): a change of a mapped entry never fails (the rules above). */
		struct pool_map_leaf *c = malloc(sizeof(*c));
		if (c) {
			memcpy(c, l, sizeof(*c));
			c->gen = v->map.fz->gen & 0x7fffffffu;
			c->aside = 0;
			l->aside = 1;
			*slot = l = c;
		} else {
			((struct pool_map_freeze *)v->map.fz)->broken = true;
		}
	}
	e = &l->ent[vext & POOL_MAP_LEAF_MASK];
	*e = new1;
	v->mapped += (uint64_t)(int64_t)d;
	l->n_mapped += (uint32_t)d;
	if (!l->n_mapped) {
		*slot = NULL;
		pool_map_leaf_drop(&v->map, l); /* broken image: a frozen one emptied in place */
	}
	return 0;
}

/* The first mapped entry at or after vext (vext <= v->n_vext), v->n_vext if none. */
static inline uint64_t pool_map_next(const struct vvol *v, uint64_t vext)
{
	while (vext < v->n_vext) {
		const struct pool_map_leaf *l = v->map.dir[vext >> POOL_MAP_LEAF_SHIFT];
		if (!l) {
			vext = (vext | POOL_MAP_LEAF_MASK) + 1;
			continue;
		}
		if (l->ent[vext & POOL_MAP_LEAF_MASK])
			return vext;
		vext++;
	}
	return v->n_vext;
}

#endif
