/*
 * What a checkpoint serializes (checkpoint.c): the pool's state as one view.
 * The paused checkpoint (the default) serializes the live state, which cannot
 * change while appends are paused: pool_ckpt_view_live only points at it. The
 * live checkpoint (vpool_set_live_checkpoints, docs/snapshots.md section 8)
 * freezes it (pool_ckpt_view_freeze) and serializes the frozen image while
 * appends go on: the maps' directories are copied, their leaves shared and
 * copied aside by the first change after the freeze (map.h), the refcounts
 * likewise per chunk of 4,096 (refs_aside.h); the hydration list and validity
 * bitmaps are copied whole.
 */
#ifndef VAAID_POOL_CKPT_IMAGE_H
#define VAAID_POOL_CKPT_IMAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "vaaid/hmap.h"
#include "vaaid/pool.h"

#include "refs_aside.h"

struct vpool;
struct vvol;

struct ckpt_view {
	uint64_t n_ext;
	uint32_t bm_words;
	unsigned n_vols;
	const struct vvol *vols[VPOOL_MAX_VOLUMES]; /* in creation order */
	const uint32_t *refs;                        /* n_ext refcounts (live) */
	const struct pool_refs_freeze *rfz; /* frozen: refs through it (ckpt_view_ref) */
	const struct hmap *hydr;                     /* pext -> struct hydr_ent */
	const struct hmap *validity;                 /* pext -> bm_words x u64 */
	/* pool_ckpt_view_freeze's copies (NULL / empty for a live view): the volumes with
	 * directories sharing the maps' leaves (map.h, struct pool_map_freeze) */
	struct pool_map_freeze *fz;
	struct vvol *own_vols;
	struct hmap own_hydr, own_validity;
	void *own_hvals, *own_bvals;
	uint64_t copy_ns; /* the freeze's copies of the hydration list and validity bitmaps */
};

/* Extent i's refcount in the view. */
static inline uint32_t ckpt_view_ref(const struct ckpt_view *v, uint64_t i)
{
	return v->rfz ? pool_refs_frozen(v->rfz, v->refs, i) : v->refs[i];
}

void pool_ckpt_view_live(const struct vpool *p, struct ckpt_view *v);
/* The frozen image of the state now; -ENOMEM (nothing to free then). */
int pool_ckpt_view_freeze(struct vpool *p, struct ckpt_view *v);
/* Free a frozen view's copies (a live view: nothing) and end the freeze; v is empty
 * afterwards. */
void pool_ckpt_view_free(struct ckpt_view *v);
/* A leaf or refcount chunk could not be copied aside (out of memory): the frozen
 * image is wrong. */
bool pool_ckpt_view_broken(const struct ckpt_view *v);

#endif
