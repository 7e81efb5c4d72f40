/* Rings kept across simhosts (see rings.h): a LIFO of reset rings. */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "rings.h"
#include "vaaid/sim.h"

struct kept_ring {
	struct simk *k;
	void *map;
	size_t map_size;
};

struct simhost_rings {
	unsigned n, max;
	struct kept_ring r[];
};

int simhost_rings_new(unsigned max, struct simhost_rings **out)
{
	struct simhost_rings *rs = calloc(1, sizeof(*rs) + sizeof(rs->r[0]) * max);
	if (!rs)
		return -ENOMEM;
	rs->max = max;
	*out = rs;
	return 0;
}

void simhost_rings_free(struct simhost_rings *rs)
{
	if (!rs)
		return;
	for (unsigned i = 0; i < rs->n; i++) {
		munmap(rs->r[i].map, rs->r[i].map_size);
		simk_destroy(rs->r[i].k);
	}
	free(rs);
}

int simhost_rings_get(struct simhost_rings *rs, struct simk **k, void **map, size_t *map_size)
{
	if (!rs || !rs->n)
		return -ENOENT;
	struct kept_ring *r = &rs->r[--rs->n];
	*k = r->k;
	*map = r->map;
	*map_size = r->map_size;
	return 0;
}

int simhost_rings_put(struct simhost_rings *rs, struct simk *k, void *map, size_t map_size)
{
	if (!rs || rs->n == rs->max)
		return -ENOSPC;
	simk_reset(k);
	rs->r[rs->n++] = (struct kept_ring){.k = k, .map = map, .map_size = map_size};
	return 0;
}
