/*
 * Journal records of the pool: encoding, and applying them to memory.
 *
 * How this works: every metadata change has exactly one apply function
 * (pool_apply_*), used both live and by replay, so the state after recovery
 * is computed by the same code that computed it before the crash. The live
 * pool_log_* functions append the record to the open journal commit and
 * apply it at once (the command that logged it holds the extent lock and
 * completes only after the commit is durable, so nobody acts on a change
 * that could still be lost). Apply functions check what they are told
 * (ranges, old values), so replay of a damaged journal is refused, never
 * applied blindly.
 *
 * Payloads (little endian):
 *   VOL_CREATE: idx u16, block_size u32, size u64, naa[16], serial[33], name_len u8, name
 *   MAP:        idx u16, pad u16, vext u64, old pext+1 u64, new pext+1 u64   (flags: NEW_EMPTY)
 *   VALID:      pext u64, first granule u32, count u32            (flags: SET, REDO)
 *   VOL_RESIZE: idx u16, pad u16, new size u64 (grow only)
 *   VOL_DELETE: idx u16 (every map entry dropped, refcounts follow, slot freed)
 *   SHARE:      src idx u16, dst idx u16, src vext u64, dst vext u64, count u64
 *   HYDRATED:   pext u64, source pext u64
 *   DATA:       pext u64, offset u32, length u32, bytes (a small write, redo.c)
 * MAP with the ROW flag (always with NEW_EMPTY) is a redirect-on-write: the
 * old extent keeps the entry's reference as the new extent's source until a
 * HYDRATED record (hydrate.c) drops it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"
#include "vaaid/endian.h"

#define VOL_CREATE_FIXED (2 + 4 + 8 + 16 + 33 + 1)

int pool_apply_vol_create(struct vpool *p, uint16_t idx, const char *name, uint64_t size,
			  uint32_t block_size, const uint8_t naa[16], const char *serial)
{
	if (idx >= VPOOL_MAX_VOLUMES || p->vols[idx] || (block_size != 512 && block_size != 4096) ||
	    !size || size % block_size || !pool_vol_size_ok(p, size) || strlen(name) == 0 ||
	    strlen(name) > VPOOL_NAME_MAX)
		return -EUCLEAN;
	for (unsigned i = 0; i < p->n_vols; i++)
		if (!strcmp(p->vols[p->order[i]]->name, name))
			return -EUCLEAN;
	struct vvol *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->pool = p;
	v->idx = idx;
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->size = size;
	v->block_size = block_size;
	memcpy(v->naa, naa, 16);
	snprintf(v->serial, sizeof(v->serial), "%s", serial);
	if (pool_map_init(v, (size + p->ext - 1) / p->ext) < 0) {
		free(v);
		return -ENOMEM;
	}
	v->map.fz = &p->map_fz;
	p->vols[idx] = v;
	p->order[p->n_vols++] = idx;
	return 0;
}

#define REC_VOL_RESIZE_LEN 12

static uint8_t *append(struct vpool *p, uint8_t type, uint8_t flags, uint16_t len);

int pool_apply_vol_resize(struct vpool *p, uint16_t idx, uint64_t size)
{
	if (idx >= VPOOL_MAX_VOLUMES || !p->vols[idx])
		return -EUCLEAN;
	struct vvol *v = p->vols[idx];
	if (size < v->size || size % v->block_size || !pool_vol_size_ok(p, size))
		return -EUCLEAN;
	int rc = pool_map_grow(v, (size + p->ext - 1) / p->ext);
	if (rc < 0)
		return rc;
	v->size = size;
	return 0;
}

int pool_log_vol_resize(struct vpool *p, struct vvol *v, uint64_t size)
{
	uint8_t *b = append(p, REC_VOL_RESIZE, 0, REC_VOL_RESIZE_LEN);
	if (!b)
		return vjournal_failed(p->j) ? -EIO : -EAGAIN;
	vput_le16(b, v->idx);
	vput_le16(b + 2, 0);
	vput_le64(b + 4, size);
	return pool_apply_vol_resize(p, v->idx, size);
}

#define REC_VOL_DELETE_LEN 2

int pool_apply_vol_delete(struct vpool *p, uint16_t idx)
{
	if (idx >= VPOOL_MAX_VOLUMES || !p->vols[idx])
		return -EUCLEAN;
	struct vvol *v = p->vols[idx];
	/* Up to the last mapped entry (v->mapped counts them): a large thin volume
	 * holding little is not scanned to its end. */
	for (uint64_t e = 0; v->mapped && (e = pool_map_next(v, e)) < v->n_vext; e++) {
		int rc = pool_apply_map(p, idx, e, pool_map_get(v, e), 0, 0);
		if (rc < 0)
			return rc;
	}
	unsigned n = 0;
	for (unsigned i = 0; i < p->n_vols; i++)
		if (p->order[i] != idx)
			p->order[n++] = p->order[i];
	p->n_vols = n;
	p->vols[idx] = NULL;
	pool_map_free(v);
	free(v);
	return 0;
}

int pool_log_vol_delete(struct vpool *p, struct vvol *v)
{
	uint8_t *b = append(p, REC_VOL_DELETE, 0, REC_VOL_DELETE_LEN);
	if (!b)
		return vjournal_failed(p->j) ? -EIO : -EAGAIN;
	vput_le16(b, v->idx);
	return pool_apply_vol_delete(p, v->idx);
}

int pool_log_share(struct vpool *p, struct vvol *src, struct vvol *dst, uint64_t svext,
		   uint64_t dvext, uint64_t n)
{
	uint8_t *b = append(p, REC_SHARE, 0, REC_SHARE_LEN);
	if (!b)
		return vjournal_failed(p->j) ? -EIO : -EAGAIN;
	vput_le16(b, src->idx);
	vput_le16(b + 2, dst->idx);
	vput_le64(b + 4, svext);
	vput_le64(b + 12, dvext);
	vput_le64(b + 20, n);
	return pool_apply_share(p, src->idx, dst->idx, svext, dvext, n);
}

int pool_ref_drop(struct vpool *p, uint64_t x, uint32_t holder)
{
	bool live = p->j && !p->replaying;
	if (!p->refs[x])
		return -EUCLEAN;
	pool_refs_touch(&p->refs_fz, p->refs, x); /* a live checkpoint's image keeps the old */
	p->refs[x]--;
	pool_acct_ref_dropped(p, x, holder);
	if (p->refs[x] == 0) {
		pool_validity_drop(p, x);
		int rc = 0;
		struct hydr_ent *h = pool_hydr(p, x);
		if (h) { /* freed before it was hydrated: its source reference goes */
			uint64_t src = h->src;
			uint32_t holder = pool_holder_src(h->idx);
			pool_hydr_forget(p, x);
			rc = pool_ref_drop(p, src, holder);
		}
		if (rc == 0 && live)
			rc = pool_free_after(p, x, vjournal_open_seq(p->j));
		return rc;
	}
	/* Live: private only once this record is durable (alloc.c). */
	if (p->refs[x] == 1 && live)
		return pool_unshared_after(p, x, vjournal_open_seq(p->j));
	return 0;
}

int pool_apply_map(struct vpool *p, uint16_t idx, uint64_t vext, uint64_t old1, uint64_t new1,
		   uint8_t flags)
{
	if (idx >= VPOOL_MAX_VOLUMES || !p->vols[idx])
		return -EUCLEAN;
	struct vvol *v = p->vols[idx];
	if (vext >= v->n_vext || pool_map_get(v, vext) != old1 || new1 > p->n_ext || old1 == new1)
		return -EUCLEAN;
	bool row = flags & REC_MAP_ROW;
	/* A redirect names a fresh extent and a source that has no source itself. */
	if (row && (!new1 || !old1 || !(flags & REC_MAP_NEW_EMPTY) ||
		    pool_hydr_src(p, old1 - 1) != UINT64_MAX))
		return -EUCLEAN;
	if (new1) {
		uint64_t n = new1 - 1;
		if ((flags & REC_MAP_NEW_EMPTY) && p->refs[n])
			return -EUCLEAN; /* a fresh extent cannot be in use */
		if (p->refs[n] == UINT32_MAX)
			return -EOVERFLOW;
	}
	/* Room in the new extent's holder list (acct.c), then the map entry: the steps that
	 * may fail for want of memory (map.h), before anything changed; the entry is undone
	 * below (which cannot fail: its place exists now) if a later step fails. */
	int rc = new1 && p->refs[new1 - 1] ? pool_acct_prepare(p, new1 - 1) : 0;
	if (rc < 0)
		return rc;
	rc = pool_map_set(v, vext, new1);
	if (rc < 0)
		return rc;
	if (new1) {
		uint64_t n = new1 - 1;
		if (flags & REC_MAP_NEW_EMPTY)
			rc = pool_validity_set_empty(p, n);
		if (rc == 0 && row)
			rc = pool_hydr_add(p, n, old1 - 1, idx, vext);
		if (rc < 0) {
			pool_map_set(v, vext, old1);
			return rc;
		}
		pool_refs_touch(&p->refs_fz, p->refs, n); /* a live checkpoint's image keeps the old */
		p->refs[n]++;
		p->total_refs++;
		pool_acct_ref_added(p, n, pool_holder_vol(idx));
	}
	if (old1) {
		p->total_refs--;
		/* A redirect: the map entry's reference becomes the new extent's source reference. */
		if (!row)
			return pool_ref_drop(p, old1 - 1, pool_holder_vol(idx));
		pool_acct_map_to_src(p, old1 - 1, pool_holder_vol(idx));
	}
	return 0;
}

int pool_apply_valid(struct vpool *p, uint64_t pext, uint32_t g0, uint32_t n, bool set)
{
	if (pext >= p->n_ext || !p->refs[pext])
		return -EUCLEAN;
	return pool_validity_change(p, pext, g0, n, set);
}

int pool_replay_record(void *arg, uint8_t type, uint8_t flags, const uint8_t *b, uint16_t len)
{
	struct vpool *p = arg;
	switch (type) {
	case REC_VOL_CREATE: {
		if (len < VOL_CREATE_FIXED || len != VOL_CREATE_FIXED + b[VOL_CREATE_FIXED - 1])
			return -EUCLEAN;
		char serial[34], name[VPOOL_NAME_MAX + 1];
		uint8_t nl = b[VOL_CREATE_FIXED - 1];
		if (nl > VPOOL_NAME_MAX)
			return -EUCLEAN;
		memcpy(serial, b + 30, 33);
		serial[33] = 0;
		memcpy(name, b + VOL_CREATE_FIXED, nl);
		name[nl] = 0;
		return pool_apply_vol_create(p, vget_le16(b), name, vget_le64(b + 6), vget_le32(b + 2), b + 14,
					     serial);
	}
	case REC_MAP:
		if (len != REC_MAP_LEN)
			return -EUCLEAN;
		return pool_apply_map(p, vget_le16(b), vget_le64(b + 4), vget_le64(b + 12),
				      vget_le64(b + 20), flags);
	case REC_VALID:
		if (len != REC_VALID_LEN)
			return -EUCLEAN;
		return pool_apply_valid(p, vget_le64(b), vget_le32(b + 8), vget_le32(b + 12),
					flags & REC_VALID_SET);
	case REC_SHARE:
		if (len != REC_SHARE_LEN)
			return -EUCLEAN;
		return pool_apply_share(p, vget_le16(b), vget_le16(b + 2), vget_le64(b + 4), vget_le64(b + 12),
					vget_le64(b + 20));
	case REC_VOL_DELETE:
		if (len != REC_VOL_DELETE_LEN)
			return -EUCLEAN;
		return pool_apply_vol_delete(p, vget_le16(b));
	case REC_HYDRATED:
		if (len != REC_HYDRATED_LEN)
			return -EUCLEAN;
		return pool_apply_hydrated(p, vget_le64(b), vget_le64(b + 8));
	case REC_DATA:
		return pool_apply_data(p, b, len); /* redo.c */
	case REC_VOL_RESIZE:
		if (len != REC_VOL_RESIZE_LEN)
			return -EUCLEAN;
		return pool_apply_vol_resize(p, vget_le16(b), vget_le64(b + 4));
	default:
		return -EUCLEAN;
	}
}

static uint8_t *append(struct vpool *p, uint8_t type, uint8_t flags, uint16_t len)
{
	uint8_t *b = vjournal_append(p->j, type, len);
	if (b)
		b[-3] = flags; /* the record header's flags byte */
	return b;
}

int pool_log_map(struct vpool *p, struct vvol *v, uint64_t vext, uint64_t new1, uint8_t flags)
{
	uint64_t old1 = pool_map_get(v, vext);
	uint8_t *b = append(p, REC_MAP, flags, REC_MAP_LEN);
	if (!b)
		return vjournal_failed(p->j) ? -EIO : -EAGAIN;
	vput_le16(b, v->idx);
	vput_le16(b + 2, 0);
	vput_le64(b + 4, vext);
	vput_le64(b + 12, old1);
	vput_le64(b + 20, new1);
	return pool_apply_map(p, v->idx, vext, old1, new1, flags);
}

int pool_log_hydrated(struct vpool *p, uint64_t pext, uint64_t src)
{
	uint8_t *b = append(p, REC_HYDRATED, 0, REC_HYDRATED_LEN);
	if (!b)
		return vjournal_failed(p->j) ? -EIO : -EAGAIN;
	vput_le64(b, pext);
	vput_le64(b + 8, src);
	return pool_apply_hydrated(p, pext, src);
}

static int log_valid(struct vpool *p, uint64_t pext, uint32_t g0, uint32_t n, uint8_t flags)
{
	bool set = flags & REC_VALID_SET;
	uint8_t *b = append(p, REC_VALID, flags, REC_VALID_LEN);
	if (!b)
		return vjournal_failed(p->j) ? -EIO : -EAGAIN;
	vput_le64(b, pext);
	vput_le32(b + 8, g0);
	vput_le32(b + 12, n);
	return pool_apply_valid(p, pext, g0, n, set);
}

int pool_log_valid(struct vpool *p, uint64_t pext, uint32_t g0, uint32_t n, bool set)
{
	return log_valid(p, pext, g0, n, set ? REC_VALID_SET : 0);
}

int pool_log_valid_redo(struct vpool *p, uint64_t pext, uint32_t g0, uint32_t n)
{
	return log_valid(p, pext, g0, n, REC_VALID_SET | REC_VALID_REDO);
}

int pool_log_vol_create(struct vpool *p, uint16_t idx, const char *name, uint64_t size,
			uint32_t block_size, const uint8_t naa[16], const char *serial)
{
	size_t nl = strlen(name);
	if (nl > VPOOL_NAME_MAX)
		return -EINVAL;
	uint8_t *b = append(p, REC_VOL_CREATE, 0, (uint16_t)(VOL_CREATE_FIXED + nl));
	if (!b)
		return vjournal_failed(p->j) ? -EIO : -EAGAIN;
	vput_le16(b, idx);
	vput_le32(b + 2, block_size);
	vput_le64(b + 6, size);
	memcpy(b + 14, naa, 16);
	memset(b + 30, 0, 33);
	memcpy(b + 30, serial, strnlen(serial, 32));
	b[VOL_CREATE_FIXED - 1] = (uint8_t)nl;
	memcpy(b + VOL_CREATE_FIXED, name, nl);
	return pool_apply_vol_create(p, idx, name, size, block_size, naa, serial);
}
