/*
 * The checkpoint's view of the pool state (ckpt_image.h): the live state, or a
 * frozen image of it for the live checkpoint. The image takes the volume table
 * and each map's directory (O(leaves): the leaves are shared and copied aside
 * by their first change, map.h), and copies the refcounts (4 bytes per extent),
 * the hydration list and the validity bitmaps (their hash tables slot for slot,
 * the values into one block each): memcpy on the reactor, no I/O.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_image.h"
#include "pool_internal.h"
#include "vaaid/io.h"

void pool_ckpt_view_live(const struct vpool *p, struct ckpt_view *v)
{
	memset(v, 0, sizeof(*v));
	v->n_ext = p->n_ext;
	v->bm_words = p->bm_words;
	v->n_vols = p->n_vols;
	for (unsigned i = 0; i < p->n_vols; i++)
		v->vols[i] = p->vols[p->order[i]];
	v->refs = p->refs;
	v->hydr = &p->hydr;
	v->validity = &p->validity;
}

/* dst = src with every value copied (vsize bytes each) into *block; -ENOMEM. */
static int clone_hmap(struct hmap *dst, const struct hmap *src, size_t vsize, void **block)
{
	memset(dst, 0, sizeof(*dst));
	*block = NULL;
	size_t cap = src->cap ? src->cap : 1;
	if (!(dst->slots = malloc(cap * sizeof(*dst->slots))) ||
	    !(*block = malloc(src->n ? src->n * vsize : 1))) {
		free(dst->slots);
		dst->slots = NULL;
		return -ENOMEM;
	}
	if (src->cap)
		memcpy(dst->slots, src->slots, src->cap * sizeof(*dst->slots));
	dst->cap = src->cap;
	dst->n = src->n;
	size_t k = 0;
	uint64_t key;
	void *val;
	for (size_t it = 0; hmap_next(src, &it, &key, &val);) {
		uint8_t *to = (uint8_t *)*block + k++ * vsize;
		memcpy(to, val, vsize);
		/* the slot of this key in dst is the slot it has in src */
		dst->slots[it - 1].val = to;
	}
	return 0;
}

int pool_ckpt_view_freeze(struct vpool *p, struct ckpt_view *v)
{
	pool_ckpt_view_live(p, v);
	v->own_vols = calloc(p->n_vols ? p->n_vols : 1, sizeof(*v->own_vols));
	if (!v->own_vols || pool_refs_freeze_begin(&p->refs_fz, p->n_ext) < 0)
		goto nomem;
	v->rfz = &p->refs_fz;
	/* A new generation: every leaf that exists now is the image's until copied aside. */
	v->fz = &p->map_fz;
	v->fz->gen = (v->fz->gen + 1) & 0x7fffffffu;
	v->fz->active = true;
	v->fz->broken = false;
	for (unsigned i = 0; i < p->n_vols; i++) {
		struct vvol *c = &v->own_vols[i];
		*c = *p->vols[p->order[i]];
		c->map.dir = NULL;
		c->map.n_leaves = 0;
		if (pool_map_share_dir(c, p->vols[p->order[i]]) < 0)
			goto nomem;
		v->vols[i] = c;
	}
	uint64_t t = vclock_ns();
	if (clone_hmap(&v->own_hydr, &p->hydr, sizeof(struct hydr_ent), &v->own_hvals) < 0 ||
	    clone_hmap(&v->own_validity, &p->validity, 8ull * p->bm_words, &v->own_bvals) < 0)
		goto nomem;
	v->hydr = &v->own_hydr;
	v->validity = &v->own_validity;
	v->copy_ns = vclock_ns() - t;
	return 0;
nomem:
	pool_ckpt_view_free(v);
	return -ENOMEM;
}

void pool_ckpt_view_free(struct ckpt_view *v)
{
	if (v->own_vols)
		for (unsigned i = 0; i < v->n_vols; i++)
			pool_map_unshare_dir(&v->own_vols[i]);
	if (v->fz)
		v->fz->active = false; /* the maps own all their leaves again */
	if (v->rfz)
		pool_refs_freeze_end((struct pool_refs_freeze *)v->rfz); /* the pool's */
	free(v->own_vols);
	hmap_free(&v->own_hydr);
	hmap_free(&v->own_validity);
	free(v->own_hvals);
	free(v->own_bvals);
	memset(v, 0, sizeof(*v));
}

bool pool_ckpt_view_broken(const struct ckpt_view *v)
{
	return (v->fz && v->fz->broken) || (v->rfz && v->rfz->broken);
}
