/*
 * Validity of 4 KiB granules inside physical extents.
 *
 * How this works: an extent that is fully valid (the common case once
 * written) has no bitmap and its bit in p->partial is 0. A freshly allocated
 * extent starts with an all-zero bitmap (nothing valid: reads return zeros,
 * so reused space never shows another volume's old bytes without writing
 * zeros). Setting bits may complete the bitmap, which is then dropped;
 * clearing bits of a full extent creates a bitmap. Bitmaps live in a hash map
 * keyed by physical extent, so memory is spent only on partial extents.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"
#include "vaaid/endian.h"

static inline bool partial_get(const struct vpool *p, uint64_t pext)
{
	return p->partial[pext / 64] >> (pext % 64) & 1;
}

uint64_t *pool_validity(const struct vpool *p, uint64_t pext)
{
	if (!partial_get(p, pext))
		return NULL;
	return hmap_get(&p->validity, pext);
}

bool pool_granule_valid(const struct vpool *p, uint64_t pext, uint32_t g)
{
	const uint64_t *bm = pool_validity(p, pext);
	return !bm || (bm[g / 64] >> (g % 64) & 1);
}

bool pool_granules_valid(const struct vpool *p, uint64_t pext, uint32_t g0, uint32_t g1)
{
	const uint64_t *bm = pool_validity(p, pext);
	if (!bm)
		return true;
	for (uint32_t g = g0; g <= g1; g++)
		if (!(bm[g / 64] >> (g % 64) & 1))
			return false;
	return true;
}

static uint64_t *bitmap_new(struct vpool *p, uint64_t pext, bool full)
{
	uint64_t *bm = calloc(p->bm_words, sizeof(uint64_t));
	if (!bm)
		return NULL;
	if (full)
		for (uint32_t g = 0; g < p->gran_per_ext; g++)
			bm[g / 64] |= 1ull << (g % 64);
	if (hmap_put(&p->validity, pext, bm) < 0) {
		free(bm);
		return NULL;
	}
	p->partial[pext / 64] |= 1ull << (pext % 64);
	return bm;
}

void pool_validity_drop(struct vpool *p, uint64_t pext)
{
	if (!partial_get(p, pext))
		return;
	free(hmap_del(&p->validity, pext));
	p->partial[pext / 64] &= ~(1ull << (pext % 64));
}

int pool_validity_set_empty(struct vpool *p, uint64_t pext)
{
	uint64_t *bm = pool_validity(p, pext);
	if (bm) {
		memset(bm, 0, p->bm_words * sizeof(uint64_t));
		return 0;
	}
	return bitmap_new(p, pext, false) ? 0 : -ENOMEM;
}

int pool_validity_load(struct vpool *p, uint64_t pext, const uint8_t *words)
{
	bool full = true;
	for (uint32_t k = 0; k < p->bm_words; k++) {
		uint64_t w = vget_le64(words + 8 * k);
		for (uint32_t b = 0; b < 64; b++) {
			uint32_t g = k * 64 + b;
			bool set = w >> b & 1;
			if (set && g >= p->gran_per_ext)
				return -EUCLEAN; /* a granule past the extent */
			if (!set && g < p->gran_per_ext)
				full = false;
		}
	}
	if (full)
		return -EUCLEAN; /* a complete bitmap is dropped, never stored */
	int rc = pool_validity_set_empty(p, pext);
	if (rc < 0)
		return rc;
	uint64_t *bm = pool_validity(p, pext);
	for (uint32_t k = 0; k < p->bm_words; k++)
		bm[k] = vget_le64(words + 8 * k);
	return 0;
}

int pool_validity_change(struct vpool *p, uint64_t pext, uint32_t g0, uint32_t n, bool set)
{
	if (g0 >= p->gran_per_ext || n > p->gran_per_ext - g0)
		return -EUCLEAN;
	if (n == 0)
		return 0; /* nothing changes (a clear must not leave a complete bitmap) */
	uint64_t *bm = pool_validity(p, pext);
	if (!bm) {
		if (set)
			return 0; /* already fully valid */
		bm = bitmap_new(p, pext, true);
		if (!bm)
			return -ENOMEM;
	}
	for (uint32_t g = g0; g < g0 + n; g++) {
		if (set)
			bm[g / 64] |= 1ull << (g % 64);
		else
			bm[g / 64] &= ~(1ull << (g % 64));
	}
	if (set) {
		for (uint32_t g = 0; g < p->gran_per_ext; g++)
			if (!(bm[g / 64] >> (g % 64) & 1))
				return 0;
		pool_validity_drop(p, pext);
	}
	return 0;
}

bool pool_any_valid(const struct vpool *p, uint64_t pext, uint32_t g0, uint32_t g1)
{
	const uint64_t *bm = pool_validity(p, pext);
	if (!bm)
		return g0 < g1;
	for (uint32_t g = g0; g < g1; g++)
		if (bm[g / 64] >> (g % 64) & 1)
			return true;
	return false;
}
