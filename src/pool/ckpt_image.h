/*
 * What a checkpoint serializes (checkpoint.c): the pool's state as one view.
 * The paused checkpoint (the default) serializes the live state, which cannot
 * change while appends are paused: pool_ckpt_view_live only points at it. The
 * live checkpoint (vpool_set_live_checkpoints, docs/snapshots.md section 8)
 * copies it at its freeze point (pool_ckpt_view_freeze) and serializes the
 * copy while appends go on.
 */
#ifndef VAAID_POOL_CKPT_IMAGE_H
#define VAAID_POOL_CKPT_IMAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "vaaid/hmap.h"
#include "vaaid/pool.h"

struct vpool;
struct vvol;

struct ckpt_view {
	uint64_t n_ext;
	uint32_t bm_words;
	unsigned n_vols;
	const struct vvol *vols[VPOOL_MAX_VOLUMES]; /* in creation order */
	const uint32_t *refs;                        /* n_ext refcounts */
	const struct hmap *hydr;                     /* pext -> struct hydr_ent */
	const struct hmap *validity;                 /* pext -> bm_words x u64 */
	/* pool_ckpt_view_freeze's copies (NULL / empty for a live view) */
	struct vvol *own_vols;
	uint32_t *own_refs;
	struct hmap own_hydr, own_validity;
	void *own_hvals, *own_bvals;
};

void pool_ckpt_view_live(const struct vpool *p, struct ckpt_view *v);
/* A copy of the state now; -ENOMEM (nothing to free then). */
int pool_ckpt_view_freeze(const struct vpool *p, struct ckpt_view *v);
/* Free a frozen view's copies (a live view: nothing); v is empty afterwards. */
void pool_ckpt_view_free(struct ckpt_view *v);

#endif
