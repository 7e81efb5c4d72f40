/*
 * Space accounting kept per change (docs/snapshots.md section 6, build order step 2):
 * vvol_get_info and vpool_get_stats read counters instead of scanning every map
 * entry or every refcount on the reactor.
 *
 * How this works. Every reference of a physical extent x has a holder: a volume's
 * map entry (holder id = slot + 1) or a redirected extent's hydration source
 * reference (POOL_HOLDER_SRC | slot + 1 of the redirected extent's volume, its
 * owner). hx[x] is the XOR of x's holders' ids, so when refs[x] == 1 it names the
 * one holder without a reverse map. The counters:
 *   - v->alone: entries of v whose extent has no other reference (refs == 1 and
 *     the holder is a map entry): vvol_info's `unshared`;
 *   - v->excl, v->excl_ent: extents all of whose holders v owns, and v's entries on
 *     them (vvol_info's `exclusive`, and `shared` = mapped - excl_ent). An extent
 *     with two references or more has a holder list by owner (struct acct_xdup in
 *     p->xdup; room for the next holder is made by pool_acct_prepare before an
 *     apply changes anything), so its owner is read before and after each change;
 *   - n_ref_ext: extents with a reference (any): the checkpoint-room bound;
 *   - n_mref_ext: extents with at least one *map* reference. Sharing saves
 *     total_refs - n_mref_ext extents (a hydration source's reference saves nothing:
 *     its redirected extent is allocated too), i.e. the sum over extents of
 *     (map references - 1), what vpool_get_stats computed by a scan before.
 *     An extent's map references are refs[x] minus its source references, which
 *     hydrate.c counts per source (p->hsrc, only while redirected extents wait).
 * The hooks are called by the one apply function that changes a reference
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

/*
 * x's holders by volume while x has two references or more (and, after a
 * pool_acct_prepare whose change then failed, possibly one): per owning volume
 * (slot + 1; a hydration source reference is owned by its redirected extent's
 * volume) its map and source references. A short list: ~ one owner per volume
 * that shares x.
 */
struct acct_own {
	uint32_t owner, nmap, nsrc;
};
struct acct_xdup {
	uint32_t n, cap;
	struct acct_own o[];
};

int pool_acct_init(struct vpool *p)
{
	p->hx = calloc(p->n_ext ? p->n_ext : 1, sizeof(uint32_t));
	return p->hx ? 0 : -ENOMEM;
}

static void xdup_clear(struct vpool *p)
{
	size_t it = 0;
	uint64_t k;
	void *val;
	while (hmap_next(&p->xdup, &it, &k, &val))
		free(val);
	hmap_free(&p->xdup);
}

void pool_acct_free(struct vpool *p)
{
	free(p->hx);
	p->hx = NULL;
	xdup_clear(p);
}

static uint64_t src_refs(const struct vpool *p, uint64_t x)
{
	return p->hsrc.n ? (uintptr_t)hmap_get(&p->hsrc, x) : 0;
}

/* The volume of a holder id or an owner (slot + 1); NULL for none. */
static struct vvol *holder_vol(const struct vpool *p, uint32_t h)
{
	return h && h <= VPOOL_MAX_VOLUMES ? p->vols[h - 1] : NULL;
}

static struct acct_xdup *xdup_get(const struct vpool *p, uint64_t x)
{
	return p->xdup.n ? hmap_get(&p->xdup, x) : NULL;
}

static struct acct_own *xdup_find(struct acct_xdup *d, uint32_t owner)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (d->o[i].owner == owner)
			return &d->o[i];
	return NULL;
}

/* Add (sign 1) or remove (-1) one holder h in d; room was made by pool_acct_prepare. */
static void xdup_change(struct acct_xdup *d, uint32_t h, int sign)
{
	uint32_t owner = h & ~POOL_HOLDER_SRC;
	struct acct_own *o = xdup_find(d, owner);
	if (!o) {
		if (sign < 0 || d->n == d->cap)
			return; /* cannot happen: vpool_verify's recount would report it */
		o = &d->o[d->n++];
		*o = (struct acct_own){.owner = owner};
	}
	if (h & POOL_HOLDER_SRC)
		o->nsrc += (uint32_t)sign;
	else
		o->nmap += (uint32_t)sign;
	if (!o->nmap && !o->nsrc)
		*o = d->o[--d->n];
}

int pool_acct_prepare(struct vpool *p, uint64_t x)
{
	struct acct_xdup *d = xdup_get(p, x);
	if (d && d->n < d->cap)
		return 0;
	uint32_t cap = d ? d->cap * 2 : 2;
	struct acct_xdup *nd = realloc(d, sizeof(*nd) + cap * sizeof(nd->o[0]));
	if (!nd)
		return -ENOMEM;
	nd->cap = cap;
	if (d) { /* moved: deleted and put back, which never grows the map, cannot fail */
		hmap_del(&p->xdup, x);
		(void)hmap_put(&p->xdup, x, nd);
		return 0;
	}
	nd->n = 0;
	if (p->refs[x]) { /* x has one holder: hx names it */
		nd->n = 1;
		nd->o[0] = (struct acct_own){.owner = p->hx[x] & ~POOL_HOLDER_SRC,
					     .nmap = !(p->hx[x] & POOL_HOLDER_SRC),
					     .nsrc = !!(p->hx[x] & POOL_HOLDER_SRC)};
	}
	if (hmap_put(&p->xdup, x, nd) < 0) {
		free(nd);
		return -ENOMEM;
	}
	return 0;
}

/* The volume x is exclusive to (0 if none) and its entries on x, from r references. */
static uint32_t excl_owner(const struct vpool *p, uint64_t x, uint32_t r, uint32_t *nmap)
{
	*nmap = 0;
	if (!r)
		return 0;
	const struct acct_xdup *d = xdup_get(p, x);
	if (d) {
		if (d->n != 1)
			return 0;
		*nmap = d->o[0].nmap;
		return d->o[0].owner;
	}
	*nmap = !(p->hx[x] & POOL_HOLDER_SRC); /* one reference: hx names it */
	return p->hx[x] & ~POOL_HOLDER_SRC;
}

static void excl_count(const struct vpool *p, uint32_t owner, uint32_t nmap, int sign)
{
	struct vvol *v = holder_vol(p, owner);
	if (v) {
		v->excl += (uint64_t)(int64_t)sign;
		v->excl_ent += (uint64_t)((int64_t)sign * nmap);
	}
}

void pool_acct_ref_added(struct vpool *p, uint64_t x, uint32_t holder)
{
	uint32_t r = p->refs[x], n0, n1;
	uint32_t o0 = excl_owner(p, x, r - 1, &n0);
	excl_count(p, o0, n0, -1);
	uint32_t before = p->hx[x];
	p->hx[x] ^= holder;
	struct acct_xdup *d = xdup_get(p, x);
	if (d)
		xdup_change(d, holder, 1);
	uint32_t o1 = excl_owner(p, x, r, &n1);
	excl_count(p, o1, n1, 1);
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
	if (!(holder & POOL_HOLDER_SRC) && r - 1 == src_refs(p, x))
		p->n_mref_ext++; /* its first map reference */
}

void pool_acct_ref_dropped(struct vpool *p, uint64_t x, uint32_t holder)
{
	uint32_t r = p->refs[x], n0, n1;
	uint32_t o0 = excl_owner(p, x, r + 1, &n0);
	excl_count(p, o0, n0, -1);
	p->hx[x] ^= holder;
	struct acct_xdup *d = xdup_get(p, x);
	if (d) {
		xdup_change(d, holder, -1);
		if (r <= 1)
			free(hmap_del(&p->xdup, x)); /* hx names a single holder */
	}
	uint32_t o1 = excl_owner(p, x, r, &n1);
	excl_count(p, o1, n1, 1);
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
	if (!(holder & POOL_HOLDER_SRC) && r == src_refs(p, x))
		p->n_mref_ext--; /* its last map reference */
}

void pool_acct_map_to_src(struct vpool *p, uint64_t x, uint32_t holder)
{
	/* refs[x] unchanged; hydrate.c counts the new source reference already. The
	 * owner stays: the redirected extent is mapped by the same volume. */
	uint32_t r = p->refs[x], n0, n1;
	uint32_t o0 = excl_owner(p, x, r, &n0);
	excl_count(p, o0, n0, -1);
	p->hx[x] ^= holder ^ (holder | POOL_HOLDER_SRC);
	struct acct_xdup *d = xdup_get(p, x);
	if (d) {
		xdup_change(d, holder, -1);
		xdup_change(d, holder | POOL_HOLDER_SRC, 1); /* same owner: no room needed */
	}
	uint32_t o1 = excl_owner(p, x, r, &n1);
	excl_count(p, o1, n1, 1);
	if (r == 1) {
		struct vvol *v = holder_vol(p, holder);
		if (v)
			v->alone--;
	}
	if (r == src_refs(p, x))
		p->n_mref_ext--;
}

/* Counts from scratch: hx (when hx != NULL), mcnt = map references per extent, the
 * volumes' alone counts (alone[slot]), and the pool's counters. */
#define OWN_MIXED UINT32_MAX
struct acct_count {
	uint64_t n_ref_ext, n_mref_ext, alone[VPOOL_MAX_VOLUMES];
	uint64_t excl[VPOOL_MAX_VOLUMES], excl_ent[VPOOL_MAX_VOLUMES];
	uint64_t lists_bad; /* extents whose holder list differs from the references */
	uint64_t saved; /* sum over extents of (map references - 1), as a scan counts it */
};

static int acct_count(const struct vpool *p, uint32_t *hx, struct acct_count *c)
{
	uint32_t *mcnt = calloc(p->n_ext ? p->n_ext : 1, sizeof(uint32_t));
	uint32_t *all = calloc(p->n_ext ? p->n_ext : 1, sizeof(uint32_t));
	uint32_t *own = calloc(p->n_ext ? p->n_ext : 1, sizeof(uint32_t)); /* owner, MIXED */
	if (!mcnt || !all || !own) {
		free(mcnt);
		free(all);
		free(own);
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
			uint32_t o = (uint32_t)v->idx + 1;
			own[x] = !own[x] || own[x] == o ? o : OWN_MIXED;
			if (hx)
				hx[x] ^= o;
		}
	}
	size_t it = 0;
	uint64_t k;
	void *val;
	while (hmap_next(&p->hydr, &it, &k, &val)) {
		const struct hydr_ent *h = val;
		uint64_t s = h->src;
		if (s >= p->n_ext)
			continue;
		all[s]++;
		uint32_t o = (uint32_t)h->idx + 1; /* owned with its redirected extent */
		own[s] = !own[s] || own[s] == o ? o : OWN_MIXED;
		if (hx)
			hx[s] ^= POOL_HOLDER_SRC | o;
	}
	for (uint64_t x = 0; x < p->n_ext; x++) {
		c->n_ref_ext += all[x] != 0;
		c->n_mref_ext += mcnt[x] != 0;
		c->saved += mcnt[x] > 1 ? mcnt[x] - 1 : 0;
		if (own[x] && own[x] != OWN_MIXED && own[x] <= VPOOL_MAX_VOLUMES)
			c->excl[own[x] - 1]++;
		/* The holder list (acct.c): there for two references or more, and then
		 * holding them all. */
		const struct acct_xdup *d = xdup_get(p, x);
		uint64_t listed = 0;
		for (uint32_t i = 0; d && i < d->n; i++)
			listed += (uint64_t)d->o[i].nmap + d->o[i].nsrc;
		if ((all[x] >= 2 && !d) || (d && listed != all[x]))
			c->lists_bad++;
	}
	for (unsigned i = 0; i < p->n_vols; i++) {
		const struct vvol *v = p->vols[p->order[i]];
		for (uint64_t e = pool_map_next(v, 0); e < v->n_vext; e = pool_map_next(v, e + 1)) {
			uint64_t x = pool_map_get(v, e) - 1;
			if (x < p->n_ext && all[x] == 1)
				c->alone[v->idx]++;
			if (x < p->n_ext && own[x] == (uint32_t)v->idx + 1)
				c->excl_ent[v->idx]++;
		}
	}
	free(mcnt);
	free(all);
	free(own);
	return 0;
}

/* At load, from the refcounts the loader just checked against the maps: no array
 * besides hx (the open's peak memory is the pool's, docs/performance.md); holder
 * lists for the extents with several references. */
static int rebuild_holder(struct vpool *p, uint64_t x, uint32_t h)
{
	p->hx[x] ^= h;
	if (p->refs[x] < 2)
		return 0;
	struct acct_xdup *d = xdup_get(p, x);
	if (!d || d->n == d->cap) {
		uint32_t keep = p->refs[x]; /* prepare reads hx for a new list only when refs */
		p->refs[x] = 0;            /* says one holder: start the list empty */
		int rc = pool_acct_prepare(p, x);
		p->refs[x] = keep;
		if (rc < 0)
			return rc;
		d = xdup_get(p, x);
	}
	xdup_change(d, h, 1);
	return 0;
}

int pool_acct_rebuild(struct vpool *p)
{
	memset(p->hx, 0, (p->n_ext ? p->n_ext : 1) * sizeof(uint32_t));
	xdup_clear(p);
	int rc = hmap_init(&p->xdup, 16);
	if (rc < 0)
		return rc;
	p->n_ref_ext = p->n_mref_ext = 0;
	for (unsigned i = 0; i < p->n_vols; i++) {
		struct vvol *v = p->vols[p->order[i]];
		v->alone = v->excl = v->excl_ent = 0;
		for (uint64_t e = pool_map_next(v, 0); e < v->n_vext; e = pool_map_next(v, e + 1)) {
			uint64_t x = pool_map_get(v, e) - 1;
			if ((rc = rebuild_holder(p, x, pool_holder_vol(v->idx))) < 0)
				return rc;
			v->alone += p->refs[x] == 1;
		}
	}
	size_t it = 0;
	uint64_t k;
	void *val;
	while (hmap_next(&p->hydr, &it, &k, &val)) {
		const struct hydr_ent *h = val;
		if ((rc = rebuild_holder(p, h->src, pool_holder_src(h->idx))) < 0)
			return rc;
	}
	for (uint64_t x = 0; x < p->n_ext; x++)
		if (p->refs[x]) {
			p->n_ref_ext++;
			p->n_mref_ext += p->refs[x] > src_refs(p, x);
			uint32_t nmap, owner = excl_owner(p, x, p->refs[x], &nmap);
			excl_count(p, owner, nmap, 1);
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
		if (v->excl != c->excl[v->idx] || v->excl_ent != c->excl_ent[v->idx]) {
			fprintf(f, "volume %s: exclusive counter %llu extents (%llu entries), recount %llu (%llu)\n",
				v->name, (unsigned long long)v->excl, (unsigned long long)v->excl_ent,
				(unsigned long long)c->excl[v->idx], (unsigned long long)c->excl_ent[v->idx]);
			bad++;
		}
	}
	if (c->lists_bad) {
		fprintf(f, "pool: %llu extents with a holder list that differs from their references\n",
			(unsigned long long)c->lists_bad);
		bad++;
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
