/*
 * Consistency check of a loaded pool (vaai-check, the crash suite).
 * Independent recount: references are counted from the volume maps (and the
 * hydration sources of redirected extents) into a fresh array and compared with the refcounts the pool maintains (an extent
 * shared by n map entries must have refcount n: more is a leak, less a
 * premature free); the free map, validity bitmaps and space accounting are
 * checked against them: free + referenced extents = all extents when idle
 * (nothing reserved or waiting to be freed), and every extent waiting on the
 * free-after-durable queue is unreferenced, not yet free and queued once
 * (else it would be freed twice). Last, the space accounting counters (acct.c:
 * holders' XOR, unshared per volume, referenced and map-referenced extents,
 * sharing savings) against a recount (pool_acct_verify).
 */
#include <errno.h>
#include <stdlib.h>

#include "pool_internal.h"

int vpool_verify(const struct vpool *p, FILE *f)
{
	int bad = 0;
	uint32_t *cnt = calloc(p->n_ext ? p->n_ext : 1, sizeof(uint32_t));
	if (!cnt)
		return -ENOMEM;
	uint64_t total = 0;
	for (unsigned i = 0; i < p->n_vols; i++) {
		const struct vvol *v = p->vols[p->order[i]];
		uint64_t mapped = 0;
		for (uint64_t e = pool_map_next(v, 0); e < v->n_vext; e = pool_map_next(v, e + 1)) {
			uint64_t m = pool_map_get(v, e);
			if (m > p->n_ext) {
				fprintf(f, "volume %s: extent %llu maps to %llu, past the pool's %llu extents\n",
					v->name, (unsigned long long)e, (unsigned long long)(m - 1),
					(unsigned long long)p->n_ext);
				bad++;
				continue;
			}
			cnt[m - 1]++;
			mapped++;
			total++;
		}
		if (mapped != v->mapped) {
			fprintf(f, "volume %s: mapped count %llu, map holds %llu entries\n", v->name,
				(unsigned long long)v->mapped, (unsigned long long)mapped);
			bad++;
		}
	}
	/* Redirected extents still hydrating: their source holds one reference each. */
	size_t hit = 0;
	uint64_t hkey;
	void *hval;
	while (hmap_next(&p->hydr, &hit, &hkey, &hval)) {
		const struct hydr_ent *h = hval;
		const struct vvol *v = h->idx < VPOOL_MAX_VOLUMES ? p->vols[h->idx] : NULL;
		const char *why = NULL;
		if (h->pext != hkey || h->pext >= p->n_ext || h->src >= p->n_ext || h->src == h->pext)
			why = "names extents past the pool";
		else if (!v || h->vext >= v->n_vext || pool_map_get(v, h->vext) != h->pext + 1)
			why = "is not mapped where its entry says";
		else if (p->refs[h->pext] != 1)
			why = "is shared (a redirected extent must be private until hydrated)";
		else if (pool_hydr(p, h->src))
			why = "has a source that has a source itself";
		if (why) {
			fprintf(f, "extent %llu (hydrating from %llu) %s\n", (unsigned long long)h->pext,
				(unsigned long long)h->src, why);
			bad++;
			continue;
		}
		cnt[h->src]++;
	}
	if (total != p->total_refs) {
		fprintf(f, "pool: total references %llu, maps hold %llu\n",
			(unsigned long long)p->total_refs, (unsigned long long)total);
		bad++;
	}
	uint64_t n_free = 0;
	for (uint64_t x = 0; x < p->n_ext; x++) {
		bool is_free = p->freebits[x / 64] >> (x % 64) & 1;
		n_free += is_free;
		if (cnt[x] != p->refs[x] && bad < 100) {
			fprintf(f, "extent %llu: refcount %u, referenced %u times\n", (unsigned long long)x,
				p->refs[x], cnt[x]);
			bad++;
		}
		if (is_free && p->refs[x] && bad < 100) {
			fprintf(f, "extent %llu: in the free map but referenced\n", (unsigned long long)x);
			bad++;
		}
		if (!p->refs[x] && (p->partial[x / 64] >> (x % 64) & 1) && bad < 100) {
			fprintf(f, "extent %llu: validity bitmap on an unreferenced extent\n",
				(unsigned long long)x);
			bad++;
		}
		/* When idle (nothing reserved or pending), every unreferenced extent is free. */
		if (!p->inflight && !p->discards && p->pend_head == p->pend_tail && !p->refs[x] &&
		    !is_free &&
		    bad < 100) {
			fprintf(f, "extent %llu: unreferenced but not free (leaked)\n",
				(unsigned long long)x);
			bad++;
		}
	}
	uint64_t n_ref = 0;
	for (uint64_t x = 0; x < p->n_ext; x++)
		n_ref += p->refs[x] != 0;
	bool idle = !p->inflight && !p->discards && p->pend_head == p->pend_tail;
	if (idle ? n_free + n_ref != p->n_ext : n_free + n_ref > p->n_ext) {
		fprintf(f, "pool: %llu free + %llu referenced extents %s %llu extents\n",
			(unsigned long long)n_free, (unsigned long long)n_ref, idle ? "!=" : ">",
			(unsigned long long)p->n_ext);
		bad++;
	}
	/* The free-after-durable queue (alloc.c): unreferenced, not free yet, each extent once. */
	uint8_t *queued = calloc(p->n_ext ? p->n_ext : 1, 1);
	if (!queued) {
		free(cnt);
		return -ENOMEM;
	}
	for (size_t i = p->pend_head; i != p->pend_tail; i++) {
		uint64_t x = p->pend[i % p->pend_cap].pext;
		const char *why = NULL;
		if (x >= p->n_ext)
			why = "past the pool's extents";
		else if (queued[x])
			why = "queued twice (would be freed twice)";
		else if (p->freebits[x / 64] >> (x % 64) & 1)
			why = "already free (would be freed twice)";
		else if (p->refs[x])
			why = "still referenced";
		if (why && bad < 100) {
			fprintf(f, "extent %llu: waiting to be freed, but %s\n", (unsigned long long)x,
				why);
			bad++;
		}
		if (x < p->n_ext)
			queued[x] = 1;
	}
	free(queued);
	/* The space accounting counters (acct.c) against a recount. */
	int abad = pool_acct_verify(p, f);
	if (abad < 0) {
		free(cnt);
		return abad;
	}
	bad += abad;
	if (n_free != p->n_free) {
		fprintf(f, "pool: free count %llu, free map holds %llu\n", (unsigned long long)p->n_free,
			(unsigned long long)n_free);
		bad++;
	}
	size_t it = 0;
	uint64_t key;
	void *val;
	while (hmap_next(&p->validity, &it, &key, &val)) {
		const uint64_t *bm = val;
		if (key >= p->n_ext || !(p->partial[key / 64] >> (key % 64) & 1)) {
			fprintf(f, "validity bitmap for extent %llu not flagged partial\n",
				(unsigned long long)key);
			bad++;
			continue;
		}
		bool full = true;
		for (uint32_t g = 0; g < p->gran_per_ext; g++)
			if (!(bm[g / 64] >> (g % 64) & 1))
				full = false;
		for (uint32_t g = p->gran_per_ext; g < p->bm_words * 64; g++)
			if (bm[g / 64] >> (g % 64) & 1) {
				fprintf(f, "extent %llu: validity bit %u beyond the extent\n",
					(unsigned long long)key, g);
				bad++;
				break;
			}
		if (full) {
			fprintf(f, "extent %llu: complete validity bitmap kept (should be dropped)\n",
				(unsigned long long)key);
			bad++;
		}
	}
	free(cnt);
	return bad;
}
