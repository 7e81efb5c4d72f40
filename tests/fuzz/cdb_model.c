/* The data model of fuzz_cdb's fuzzed LUN (see cdb_model.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cdb_model.h"
#include "vaaid/scsi.h"

int cm_init(struct cdb_model *m, uint64_t nblk)
{
	m->nblk = nblk;
	m->data = calloc(nblk, CM_BS);
	m->state = calloc(nblk, 1);
	if (!m->data || !m->state) {
		cm_free(m);
		return -ENOMEM;
	}
	return 0;
}

void cm_reset(struct cdb_model *m)
{
	memset(m->data, 0, (size_t)m->nblk * CM_BS);
	memset(m->state, 0, (size_t)m->nblk);
}

void cm_free(struct cdb_model *m)
{
	free(m->data);
	free(m->state);
	m->data = m->state = NULL;
}

bool cm_rw_range(const uint8_t *cdb, uint64_t *lba, uint64_t *n)
{
	switch (cdb[0]) {
	case 0x08: case 0x0A: /* READ(6), WRITE(6) */
		*lba = (uint64_t)(cdb[1] & 0x1F) << 16 | (uint64_t)cdb[2] << 8 | cdb[3];
		*n = cdb[4] ? cdb[4] : 256;
		return true;
	case 0x28: case 0x2A: case 0x2E: /* READ(10), WRITE(10), WRITE AND VERIFY(10) */
		*lba = scsi_get_be32(cdb + 2);
		*n = scsi_get_be16(cdb + 7);
		return true;
	case 0xA8: case 0xAA: /* READ(12), WRITE(12) */
		*lba = scsi_get_be32(cdb + 2);
		*n = scsi_get_be32(cdb + 6);
		return true;
	case 0x88: case 0x8A: case 0x8E: /* READ(16), WRITE(16), WRITE AND VERIFY(16) */
		*lba = scsi_get_be64(cdb + 2);
		*n = scsi_get_be32(cdb + 10);
		return true;
	default:
		return false;
	}
}

static bool is_write(uint8_t op)
{
	return op == 0x0A || op == 0x2A || op == 0xAA || op == 0x8A || op == 0x2E || op == 0x8E;
}

/* Commands that never change a block's data, whatever their fields. */
static bool is_read_only(uint8_t op)
{
	static const uint8_t ro[] = {
		0x00, 0x03, 0x08, 0x12, 0x15, 0x1A, 0x1B, 0x1E, 0x25, 0x28, 0x2F, 0x35, 0x4D,
		0x55, 0x5A, 0x84, 0x88, 0x8F, 0x91, 0x9E, 0xA0, 0xA3, 0xA8,
	};
	for (size_t i = 0; i < sizeof(ro); i++)
		if (ro[i] == op)
			return true;
	return false;
}

/* Set blocks [lba, lba + n) (clipped to the volume) to state s, data from src (NULL: keep). */
static void set_range(struct cdb_model *m, uint64_t lba, uint64_t n, enum cm_state s,
		      const uint8_t *src, size_t src_stride)
{
	for (uint64_t i = 0; i < n && lba < m->nblk && lba + i < m->nblk; i++) {
		m->state[lba + i] = (uint8_t)s;
		if (src)
			memcpy(m->data + (lba + i) * CM_BS, src + i * src_stride, CM_BS);
	}
}

static void all_unknown(struct cdb_model *m) { memset(m->state, CM_UNKNOWN, m->nblk); }

/* UNMAP's block descriptors (SBC-4 5.31.2), each range to state s. */
static void unmap_ranges(struct cdb_model *m, const uint8_t *out, size_t out_len, enum cm_state s)
{
	if (out_len < 8)
		return;
	size_t n = scsi_get_be16(out + 2) / 16;
	if (n > (out_len - 8) / 16)
		n = (out_len - 8) / 16;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *d = out + 8 + 16 * i;
		uint64_t lba = scsi_get_be64(d), cnt = scsi_get_be32(d + 8);
		/* a GOOD UNMAP leaves a block either zero or as it was: an UNKNOWN block
		 * stays UNKNOWN (what it was is not known: a raced write's bytes, say;
		 * making it ZERO_OR_KNOWN would take the model's stale bytes for known) */
		for (uint64_t b = 0; b < cnt && lba < m->nblk && lba + b < m->nblk; b++)
			if (!(s == CM_ZERO_OR_KNOWN && m->state[lba + b] == CM_UNKNOWN))
				set_range(m, lba + b, 1, s, NULL, 0);
	}
}

void cm_apply(struct cdb_model *m, const uint8_t *cdb, const uint8_t *out, size_t out_len,
	      const struct simk_result *k)
{
	uint8_t op = cdb[0], sk = k->sense[2] & 0x0F;
	bool good = k->status == SAM_STAT_GOOD;
	if (k->status == SAM_STAT_TASK_SET_FULL || is_read_only(op))
		return;
	if (!good && sk == SK_ILLEGAL_REQUEST)
		return; /* refused before anything was done */
	uint64_t lba, n;
	static const uint8_t zero[CM_BS];
	if (is_write(op) && cm_rw_range(cdb, &lba, &n)) {
		if (good && out_len == n * CM_BS)
			set_range(m, lba, n, CM_KNOWN, out, CM_BS);
		else
			set_range(m, lba, n, CM_UNKNOWN, NULL, 0);
		return;
	}
	if (op == 0x41 || op == 0x93) { /* WRITE SAME(10) / (16) */
		bool sixteen = op == 0x93;
		lba = sixteen ? scsi_get_be64(cdb + 2) : scsi_get_be32(cdb + 2);
		n = sixteen ? scsi_get_be32(cdb + 10) : scsi_get_be16(cdb + 7);
		bool ndob = sixteen && (cdb[1] & 0x01);
		if (n == 0) /* to the end of the medium (WSNZ 0) */
			n = m->nblk > lba ? m->nblk - lba : 0;
		if (!good || (cdb[1] & 0x06) || (!ndob && out_len < CM_BS)) {
			set_range(m, lba, n, CM_UNKNOWN, NULL, 0);
			return;
		}
		const uint8_t *blk = ndob ? zero : out;
		for (uint64_t i = 0; i < n && lba + i < m->nblk; i++)
			set_range(m, lba + i, 1, CM_KNOWN, blk, 0);
		return;
	}
	if (op == 0x42) { /* UNMAP: the blocks read zeros, or keep their data (advisory) */
		unmap_ranges(m, out, out_len, good ? CM_ZERO_OR_KNOWN : CM_UNKNOWN);
		if (good)
			for (uint64_t b = 0; b < m->nblk; b++)
				if (m->state[b] == CM_ZERO_OR_KNOWN &&
				    !memcmp(m->data + b * CM_BS, zero, CM_BS))
					m->state[b] = CM_KNOWN;
		return;
	}
	if (op == 0x89) { /* COMPARE AND WRITE: the second half of the data-out is written */
		lba = scsi_get_be64(cdb + 2);
		n = cdb[13];
		if ((!good && sk == SK_MISCOMPARE) || n == 0) /* 0 blocks: nothing compared or written */
			return;
		if (good && out && out_len == 2 * n * CM_BS)
			set_range(m, lba, n, CM_KNOWN, out + n * CM_BS, CM_BS);
		else
			set_range(m, lba, n, CM_UNKNOWN, NULL, 0);
		return;
	}
	all_unknown(m); /* EXTENDED COPY, or an opcode the model does not follow */
}

/* The LUN CSCD descriptor i of list names: 0 the modelled one, 1 another, -1 unknown. */
static int xc_lun(const uint8_t *cscd, size_t ncscd, uint16_t i, const uint8_t naa0[16],
		  const uint8_t (*others)[16], unsigned n_others)
{
	if (i >= ncscd)
		return -1;
	const uint8_t *d = cscd + 32 * (size_t)i;
	if (d[0] != 0xE4 || (d[5] & 0x0F) != 0x03 || d[7] != 16)
		return -1; /* not an identification descriptor with a 16-byte NAA */
	if (!memcmp(d + 8, naa0, 16))
		return 0;
	for (unsigned k = 0; k < n_others; k++)
		if (!memcmp(d + 8, others[k], 16))
			return 1;
	return -1;
}

void cm_xcopy(struct cdb_model *m, const uint8_t *cdb, const uint8_t *list, size_t len,
	      const uint8_t naa0[16], const uint8_t (*others)[16], unsigned n_others)
{
	uint32_t plen = scsi_get_be32(cdb + 10);
	if (plen < len)
		len = plen;
	if ((cdb[1] & 0x1F) || len < 16) {
		all_unknown(m);
		return;
	}
	size_t cl = scsi_get_be16(list + 2), sl = scsi_get_be32(list + 8);
	if (cl % 32 || scsi_get_be32(list + 12) || 16 + cl > len || sl > len - 16 - cl) {
		all_unknown(m);
		return;
	}
	const uint8_t *cscd = list + 16, *seg = cscd + cl, *end = seg + sl;
	while (seg < end) {
		if (end - seg < 28 || seg[0] != 0x02 || scsi_get_be16(seg + 2) != 0x18) {
			all_unknown(m);
			return;
		}
		int src = xc_lun(cscd, cl / 32, scsi_get_be16(seg + 4), naa0, others, n_others);
		int dst = xc_lun(cscd, cl / 32, scsi_get_be16(seg + 6), naa0, others, n_others);
		uint64_t n = scsi_get_be16(seg + 10), sl0 = scsi_get_be64(seg + 12),
			 dl0 = scsi_get_be64(seg + 20);
		bool dc = seg[1] & 0x02; /* NUMBER OF BLOCKS counts destination blocks */
		seg += 28;
		if (src < 0 || dst < 0) {
			all_unknown(m);
			return;
		}
		if (dst == 1 || !n)
			continue; /* the modelled LUN is not written */
		if (src == 1 && !dc) {
			all_unknown(m); /* NUMBER OF BLOCKS counts the other LUN's blocks (DC 0) */
			return;
		}
		if (dl0 >= m->nblk || n > m->nblk - dl0) {
			all_unknown(m); /* a GOOD copy past the end: the checks of the answer say so */
			return;
		}
		/* From another LUN (any block size), or overlapping its source: not followed. */
		if (src == 1 || sl0 >= m->nblk || n > m->nblk - sl0 || (sl0 < dl0 + n && dl0 < sl0 + n)) {
			set_range(m, dl0, n, CM_UNKNOWN, NULL, 0);
			continue;
		}
		memmove(m->data + dl0 * CM_BS, m->data + sl0 * CM_BS, n * CM_BS);
		memmove(m->state + dl0, m->state + sl0, n);
	}
}

const char *cm_caw_check(const struct cdb_model *m, const uint8_t *cdb, const uint8_t *out,
			 size_t out_len, const struct simk_result *k)
{
	static const uint8_t zero[CM_BS];
	uint64_t lba = scsi_get_be64(cdb + 2), n = cdb[13];
	if (cdb[0] != 0x89 || !n || out_len != 2 * n * CM_BS || lba >= m->nblk || n > m->nblk - lba)
		return NULL;
	bool good = k->status == SAM_STAT_GOOD;
	bool mis = k->status == SAM_STAT_CHECK_CONDITION && (k->sense[2] & 0x0F) == SK_MISCOMPARE;
	bool all_known = true;
	uint64_t first = UINT64_MAX; /* the first differing byte, where all blocks are known */
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *have = m->data + (lba + i) * CM_BS, *cmp = out + i * CM_BS;
		uint8_t st = m->state[lba + i];
		bool differs = (st == CM_KNOWN && memcmp(have, cmp, CM_BS)) ||
			       (st == CM_ZERO_OR_KNOWN && memcmp(have, cmp, CM_BS) &&
				memcmp(zero, cmp, CM_BS));
		if (good && differs)
			return "a GOOD COMPARE AND WRITE over a block other than its verify data";
		all_known &= st == CM_KNOWN;
		if (st == CM_KNOWN && first == UINT64_MAX && differs)
			for (uint32_t b = 0; b < CM_BS && first == UINT64_MAX; b++)
				if (have[b] != cmp[b])
					first = i * CM_BS + b;
	}
	if (mis && all_known && first == UINT64_MAX)
		return "a MISCOMPARE of COMPARE AND WRITE over blocks equal to its verify data";
	if (mis && all_known && (!(k->sense[0] & 0x80) || scsi_get_be32(k->sense + 3) != first))
		return "a MISCOMPARE whose INFORMATION is not the first differing byte";
	return NULL;
}

int cm_check(const struct cdb_model *m, uint64_t lba, uint64_t n, const uint8_t *got, uint64_t *bad)
{
	static const uint8_t zero[CM_BS];
	for (uint64_t i = 0; i < n && lba + i < m->nblk; i++) {
		uint64_t b = lba + i;
		const uint8_t *g = got + i * CM_BS, *want = m->data + b * CM_BS;
		bool ok = m->state[b] == CM_UNKNOWN || !memcmp(g, want, CM_BS) ||
			  (m->state[b] == CM_ZERO_OR_KNOWN && !memcmp(g, zero, CM_BS));
		if (!ok) {
			*bad = b;
			return -1;
		}
	}
	return 0;
}

void cm_set_unknown(struct cdb_model *m, uint64_t lba, uint64_t n)
{
	set_range(m, lba, n, CM_UNKNOWN, NULL, 0);
}

bool cm_footprint(const struct cdb_model *m, int lun, const uint8_t *cdb, bool *modifies,
		  uint64_t *lba, uint64_t *n)
{
	uint8_t op = cdb[0];
	*modifies = !is_read_only(op);
	if (lun != 0 && op != 0x83) /* only EXTENDED COPY reaches LUN 0 from another LUN */
		return false;
	if (cm_rw_range(cdb, lba, n))
		return *n > 0;
	if (*modifies && (op == 0x41 || op == 0x93)) { /* WRITE SAME(10) / (16) */
		bool sixteen = op == 0x93;
		*lba = sixteen ? scsi_get_be64(cdb + 2) : scsi_get_be32(cdb + 2);
		*n = sixteen ? scsi_get_be32(cdb + 10) : scsi_get_be16(cdb + 7);
		if (*n == 0) /* to the end of the medium */
			*n = m->nblk > *lba ? m->nblk - *lba : 0;
		return true;
	}
	if (op == 0x89) { /* COMPARE AND WRITE */
		*lba = scsi_get_be64(cdb + 2);
		*n = cdb[13];
		return true;
	}
	if (!*modifies)
		return false; /* VERIFY, INQUIRY, ...: reads no block the model checks */
	*lba = 0; /* UNMAP, EXTENDED COPY, an opcode the model does not follow: all of it */
	*n = m->nblk;
	return true;
}
