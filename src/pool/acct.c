/*
 * Space accounting kept per change (docs/snapshots.md section 6, build order step 2):
 * vvol_get_info and vpool_get_stats read counters instead of scanning every map
 * entry or every refcount on the reactor.
 *
 * How this works. Every reference of a physical extent x has a holder: a volume's
 * map entry (holder id = slot + 1) or a redirected extent's hydration source
 * reference (POOL_HOLDER_SRC). hx[x] is the XOR of x's holders' ids, so when
 * refs[x] == 1 it names the one holder without a reverse map. The counters:
 *   - v->alone: entries of v whose extent has no other reference (refs == 1 and
 *     the holder is a map entry): vvol_info's `unshared`;
 *   - n_ref_ext: extents with a reference (any): the checkpoint-room bound;
 *   - n_mref_ext: extents with at least one *map* reference. Sharing saves
 *     total_refs - n_mref_ext extents (a hydration source's reference saves nothing:
 *     its redirected extent is allocated too), i.e. the sum over extents of
 *     (map references - 1), what vpool_get_stats computed by a scan before.
 *     An extent's map references are refs[x] minus its source references, which
 *     hydrate.c counts per source (p->hsrc, only while redirected extents wait).
 * The three hooks are called by the one apply function that changes a reference
 * (records.c: pool_apply_map, pool_ref_drop), live and in replay alike; a
 * checkpoint load rebuilds everything from the maps (pool_acct_rebuild), and
 * pool_acct_verify recounts from scratch for vpool_verify (vaai-check, the crash
 * suite, the simulator, the unit tests).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"

int pool_acct_init(struct vpool *p)
{
	p->hx = calloc(p->n_ext ? p->n_ext : 1, sizeof(uint32_t));
	return p->hx ? 0 : -ENOMEM;
}

void pool_acct_free(struct vpool *p)
{
	free(p->hx);
	p->hx = NULL;
}

static uint64_t src_refs(const struct vpool *p, uint64_t x)
{
	return p->hsrc.n ? (uintptr_t)hmap_get(&p->hsrc, x) : 0;
}

static struct vvol *holder_vol(const struct vpool *p, uint32_t h)
{
	return h && h <= VPOOL_MAX_VOLUMES ? p->vols[h - 1] : NULL;
}

void pool_acct_ref_added(struct vpool *p, uint64_t x, uint32_t holder)
{
	uint32_t before = p->hx[x];
	p->hx[x] ^= holder;
	uint32_t r = p->refs[x];
	if (r == 1) {
		p->n_ref_ext++;
		struct vvol *v = holder_vol(p, holder);
		if (v)
			v->alone++;
	} else if (r == 2) {
		struct vvol *v = holder_vol(p, before); /* the one holder until now */
		if (v)
			v->alone--;
	}
	if (holder != POOL_HOLDER_SRC && r - 1 == src_refs(p, x))
		p->n_mref_ext++; /* its first map reference */
}

void pool_acct_ref_dropped(struct vpool *p, uint64_t x, uint32_t holder)
{
	p->hx[x] ^= holder;
	uint32_t r = p->refs[x];
	if (r == 0) {
		p->n_ref_ext--;
		struct vvol *v = holder_vol(p, holder);
		if (v)
			v->alone--;
	} else if (r == 1) {
		struct vvol *v = holder_vol(p, p->hx[x]); /* the one holder left */
		if (v)
			v->alone++;
	}
	/* A source reference goes after hydrate.c forgot it (src_refs counts it no more). */
	if (holder != POOL_HOLDER_SRC && r == src_refs(p, x))
		p->n_mref_ext--; /* its last map reference */
}

void pool_acct_map_to_src(struct vpool *p, uint64_t x, uint32_t holder)
{
	/* refs[x] unchanged; hydrate.c counts the new source reference already. */
	p->hx[x] ^= holder ^ POOL_HOLDER_SRC;
	if (p->refs[x] == 1) {
		struct vvol *v = holder_vol(p, holder);
		if (v)
			v->alone--;
	}
	if (p->refs[x] == src_refs(p, x))
		p->n_mref_ext--;
}

/* Counts from scratch: hx (when hx != NULL), mcnt = map references per extent, the
 * volumes' alone counts (alone[slot]), and the pool's counters. */
struct acct_count {
	uint64_t n_ref_ext, n_mref_ext, alone[VPOOL_MAX_VOLUMES];
	uint64_t saved; /* sum over extents of (map references - 1), as a scan counts it */
};

static int acct_count(const struct vpool *p, uint32_t *hx, struct acct_count *c)
{
	uint32_t *mcnt = calloc(p->n_ext ? p->n_ext : 1, sizeof(uint32_t));
	uint32_t *all = calloc(p->n_ext ? p->n_ext : 1, sizeof(uint32_t));
	if (!mcnt || !all) {
		free(mcnt);
		free(all);
		return -ENOMEM;
	}
	memset(c, 0, sizeof(*c));
	for (unsigned i = 0; i < p->n_vols; i++) {
		const struct vvol *v = p->vols[p->order[i]];
		for (uint64_t e = pool_map_next(v, 0); e < v->n_vext; e = pool_map_next(v, e + 1)) {
			uint64_t x = pool_map_get(v, e) - 1;
			if (x >= p->n_ext)
				continue; /* vpool_verify reports it */
			mcnt[x]++;
			all[x]++;
			if (hx)
				hx[x] ^= (uint32_t)v->idx + 1;
		}
	}
	size_t it = 0;
	uint64_t k;
	void *val;
	while (hmap_next(&p->hydr, &it, &k, &val)) {
		uint64_t s = ((const struct hydr_ent *)val)->src;
		if (s >= p->n_ext)
			continue;
		all[s]++;
		if (hx)
			hx[s] ^= POOL_HOLDER_SRC;
	}
	for (uint64_t x = 0; x < p->n_ext; x++) {
		c->n_ref_ext += all[x] != 0;
		c->n_mref_ext += mcnt[x] != 0;
		c->saved += mcnt[x] > 1 ? mcnt[x] - 1 : 0;
	}
	for (unsigned i = 0; i < p->n_vols; i++) {
		const struct vvol *v = p->vols[p->order[i]];
		for (uint64_t e = pool_map_next(v, 0); e < v->n_vext; e = pool_map_next(v, e + 1)) {
			uint64_t x = pool_map_get(v, e) - 1;
			if (x < p->n_ext && all[x] == 1)
				c->alone[v->idx]++;
		}
	}
	free(mcnt);
	free(all);
	return 0;
}

/* At load, from the refcounts the loader just checked against the maps: no array
 * besides hx (the open's peak memory is the pool's, docs/performance.md). */
int pool_acct_rebuild(struct vpool *p)
{
	memset(p->hx, 0, (p->n_ext ? p->n_ext : 1) * sizeof(uint32_t));
	p->n_ref_ext = p->n_mref_ext = 0;
	for (unsigned i = 0; i < p->n_vols; i++) {
		struct vvol *v = p->vols[p->order[i]];
		v->alone = 0;
		for (uint64_t e = pool_map_next(v, 0); e < v->n_vext; e = pool_map_next(v, e + 1)) {
			uint64_t x = pool_map_get(v, e) - 1;
			p->hx[x] ^= pool_holder_vol(v->idx);
			v->alone += p->refs[x] == 1;
		}
	}
	size_t it = 0;
	uint64_t k;
	void *val;
	while (hmap_next(&p->hydr, &it, &k, &val))
		p->hx[((const struct hydr_ent *)val)->src] ^= POOL_HOLDER_SRC;
	for (uint64_t x = 0; x < p->n_ext; x++)
		if (p->refs[x]) {
			p->n_ref_ext++;
			p->n_mref_ext += p->refs[x] > src_refs(p, x);
		}
	return 0;
}

int pool_acct_verify(const struct vpool *p, FILE *f)
{
	uint32_t *hx = calloc(p->n_ext ? p->n_ext : 1, sizeof(uint32_t));
	struct acct_count *c = malloc(sizeof(*c));
	int rc = hx && c ? acct_count(p, hx, c) : -ENOMEM;
	if (rc < 0) {
		free(hx);
		free(c);
		return rc;
	}
	int bad = 0;
	for (unsigned i = 0; i < p->n_vols; i++) {
		const struct vvol *v = p->vols[p->order[i]];
		if (v->alone != c->alone[v->idx]) {
			fprintf(f, "volume %s: unshared counter %llu extents, recount %llu\n", v->name,
				(unsigned long long)v->alone, (unsigned long long)c->alone[v->idx]);
			bad++;
		}
	}
	if (p->n_ref_ext != c->n_ref_ext) {
		fprintf(f, "pool: referenced-extent counter %llu, recount %llu\n",
			(unsigned long long)p->n_ref_ext, (unsigned long long)c->n_ref_ext);
		bad++;
	}
	if (p->n_mref_ext != c->n_mref_ext) {
		fprintf(f, "pool: mapped-extent counter %llu (sharing savings), recount %llu\n",
			(unsigned long long)p->n_mref_ext, (unsigned long long)c->n_mref_ext);
		bad++;
	}
	if (p->total_refs - p->n_mref_ext != c->saved) {
		fprintf(f, "pool: sharing savings %llu extents, a scan counts %llu\n",
			(unsigned long long)(p->total_refs - p->n_mref_ext),
			(unsigned long long)c->saved);
		bad++;
	}
	for (uint64_t x = 0; x < p->n_ext; x++)
		if (hx[x] != p->hx[x] && bad < 100) {
			fprintf(f, "extent %llu: holder XOR %#x, recount %#x\n", (unsigned long long)x,
				p->hx[x], hx[x]);
			bad++;
		}
	/* The per-source counts of source references (hydrate.c). */
	size_t it = 0;
	uint64_t k;
	void *val;
	uint64_t nsrc = 0;
	while (hmap_next(&p->hsrc, &it, &k, &val))
		nsrc += (uintptr_t)val;
	if (nsrc != p->hydr.n) {
		fprintf(f, "pool: %llu source references counted per source, %llu redirected extents\n",
			(unsigned long long)nsrc, (unsigned long long)p->hydr.n);
		bad++;
	}
	free(hx);
	free(c);
	return bad;
}
