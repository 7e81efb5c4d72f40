/*
 * Provisioning status of a byte range of a volume (the pool side of GET LBA
 * STATUS, and of WRITE SAME's "is this partial granule holding data?").
 *
 * How this works: read-only and synchronous, on the reactor thread like
 * every pool operation, so the map and the validity bitmaps cannot change
 * under it. A byte is "mapped" when its virtual extent is mapped and its
 * 4 KiB granule is valid -- exactly the bytes a read returns from the backing
 * store (from the extent, or from its redirect source until hydrated);
 * every other byte reads as zeros and is "deallocated". Starting at
 * off, the walk extends the run while the status stays the same: whole
 * unmapped extents and fully valid extents (no bitmap) are skipped in one
 * step, partial extents granule by granule. Runs therefore start and end on
 * granule boundaries, except at off itself and at off + len.
 */
#include <errno.h>

#include "pool_internal.h"

/* Status of granule g of virtual extent vext. */
static bool granule_mapped(const struct vvol *v, uint64_t vext, uint32_t g)
{
	uint64_t m = pool_map_get(v, vext);
	return m && pool_granule_has_data(v->pool, m - 1, g);
}

int vvol_lba_status(const struct vvol *v, uint64_t off, uint64_t len, uint64_t *run,
		    bool *mapped)
{
	const struct vpool *p = v->pool;
	if (off % VBLK_SECTOR || len % VBLK_SECTOR || !len || off >= v->size ||
	    len > v->size - off)
		return -EINVAL;
	uint64_t end = off + len;
	uint64_t vext = off / p->ext;
	uint32_t g = (uint32_t)(off % p->ext / VPOOL_GRANULE);
	bool st = granule_mapped(v, vext, g);
	uint64_t pos = off; /* everything in [off, pos) has status st */
	while (pos < end) {
		vext = pos / p->ext;
		uint64_t ebase = vext * p->ext;
		uint64_t m = pool_map_get(v, vext);
		const uint64_t *bm = m ? pool_validity(p, m - 1) : NULL;
		if (!m || !bm) {
			/* Whole extent with one status: unmapped (false) or fully valid (true). */
			if ((m != 0) != st)
				break;
			pos = ebase + p->ext;
			continue;
		}
		g = (uint32_t)((pos - ebase) / VPOOL_GRANULE);
		bool src = pool_hydr(p, m - 1) != NULL; /* granules may read from the source */
		for (; g < p->gran_per_ext; g++) {
			bool has = src ? pool_granule_has_data(p, m - 1, g) : (bm[g / 64] >> (g % 64) & 1);
			if (has != st)
				break;
		}
		pos = ebase + (uint64_t)g * VPOOL_GRANULE;
		if (g < p->gran_per_ext)
			break;
	}
	*run = (pos < end ? pos : end) - off;
	*mapped = st;
	return 0;
}
