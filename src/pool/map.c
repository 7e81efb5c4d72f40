/*
 * A volume's map: allocation and growth (the accessors are inline, in map.h, which
 * says what the map is and which rules every representation keeps).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"

int pool_map_init(struct vvol *v, uint64_t n)
{
	/* calloc of a large map is backed by untouched zero pages: RSS follows what is mapped. */
	uint64_t *e = calloc(n ? n : 1, sizeof(uint64_t));
	if (!e)
		return -ENOMEM;
	v->map.ent = e;
	v->n_vext = n;
	v->mapped = 0;
	return 0;
}

int pool_map_grow(struct vvol *v, uint64_t n)
{
	if (n <= v->n_vext)
		return 0;
	uint64_t *e = realloc(v->map.ent, n * sizeof(uint64_t));
	if (!e)
		return -ENOMEM;
	memset(e + v->n_vext, 0, (n - v->n_vext) * sizeof(uint64_t));
	v->map.ent = e;
	v->n_vext = n;
	return 0;
}

void pool_map_free(struct vvol *v)
{
	free(v->map.ent);
	v->map.ent = NULL;
}
