/*
 * A volume's map: the directory's allocation and growth (the accessors are inline,
 * in map.h, which says what the map is and which rules every representation keeps).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"

static uint64_t leaves_for(uint64_t n)
{
	return (n + POOL_MAP_LEAF - 1) >> POOL_MAP_LEAF_SHIFT;
}

int pool_map_init(struct vvol *v, uint64_t n)
{
	uint64_t nl = leaves_for(n);
	struct pool_map_leaf **d = calloc(nl ? nl : 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	v->map.dir = d;
	v->map.n_leaves = nl;
	v->n_vext = n;
	v->mapped = 0;
	return 0;
}

int pool_map_grow(struct vvol *v, uint64_t n)
{
	if (n <= v->n_vext)
		return 0;
	uint64_t nl = leaves_for(n);
	if (nl > v->map.n_leaves) {
		struct pool_map_leaf **d = realloc(v->map.dir, nl * sizeof(*d));
		if (!d)
			return -ENOMEM;
		memset(d + v->map.n_leaves, 0, (nl - v->map.n_leaves) * sizeof(*d));
		v->map.dir = d;
		v->map.n_leaves = nl;
	}
	/* Entries of the last leaf past the old end are 0 already: nothing maps there. */
	v->n_vext = n;
	return 0;
}

void pool_map_free(struct vvol *v)
{
	if (v->map.dir)
		for (uint64_t i = 0; i < v->map.n_leaves; i++)
			if (v->map.dir[i])
				pool_map_leaf_drop(&v->map, v->map.dir[i]); /* frozen: the image's */
	free(v->map.dir);
	v->map.dir = NULL;
	v->map.n_leaves = 0;
}

int pool_map_share_dir(struct vvol *dst, const struct vvol *src)
{
	uint64_t nl = src->map.n_leaves;
	dst->map.dir = malloc((nl ? nl : 1) * sizeof(*dst->map.dir));
	dst->map.n_leaves = dst->map.dir ? nl : 0;
	dst->map.fz = NULL;
	if (!dst->map.dir)
		return -ENOMEM;
	if (nl)
		memcpy(dst->map.dir, src->map.dir, nl * sizeof(*dst->map.dir));
	return 0;
}

void pool_map_unshare_dir(struct vvol *dst)
{
	for (uint64_t i = 0; dst->map.dir && i < dst->map.n_leaves; i++)
		if (dst->map.dir[i] && dst->map.dir[i]->aside)
			free(dst->map.dir[i]); /* no map holds it any more */
	free(dst->map.dir);
	dst->map.dir = NULL;
	dst->map.n_leaves = 0;
}

uint64_t pool_map_leaves(const struct vvol *v)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < v->map.n_leaves; i++)
		n += v->map.dir[i] != NULL;
	return n;
}
