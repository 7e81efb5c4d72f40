/*
 * fuzz_journal: the journal ring and the journal file's header (issue 24,
 * on-disk formats).
 *
 * Input (structure-aware, so that commits pass their checks unless told not to):
 *   byte 0: flags
 *     0x01 the template with a journal file of its own
 *     0x02 append: the commits go after the template's (its replay end),
 *          else they replace them from the superblock's journal start
 *     0x04 fresh ring: zero the ring first (else the template's old commits stay)
 *     0x08 journal file header: the next 64 bytes are laid over its first 64
 *          (magic, version, uuid, geometry), resealed (vsb_seal) unless 0x10
 *   then commits, each: ctl (1 byte), payload length (2 bytes, little endian),
 *   payload (the records as the engine writes them: type, flags, length u16, bytes).
 *     ctl 0x01 damage the crc (a header byte flipped after sealing)
 *         0x02 skip a sequence number   0x04 record count one too many
 *         0x08 another pool's uuid      0x10 written at ring offset 0 (a wrap)
 * Each commit is sealed by the engine's rule (vj_commit_seal) with the pool's
 * uuid and the next sequence number and placed as the journal places it (a
 * commit that does not fit before the ring's end goes to offset 0). The pool
 * is then opened as vaai-check opens it and the outcome checked.
 * Seeds: the template's own commits (records of every type), both kinds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_image.h"
#include "seeds.h"
#include "vaaid/util.h"

enum { F_JFILE = 0x01, F_APPEND = 0x02, F_FRESH = 0x04, F_JHDR = 0x08, F_JHDR_RAW = 0x10 };
enum { C_BADCRC = 0x01, C_SKIPSEQ = 0x02, C_NREC = 0x04, C_UUID = 0x08, C_WRAP = 0x10 };
#define JHDR_OVERLAY 64u

/* Records in a payload, by the record header rule (stops at the first that overruns). */
static uint32_t count_records(const uint8_t *b, uint32_t len)
{
	uint32_t off = 0, n = 0;
	while (len - off >= sizeof(struct vj_rec_hdr)) {
		uint32_t rlen = b[off + 2] | (uint32_t)b[off + 3] << 8;
		if (rlen > len - off - sizeof(struct vj_rec_hdr))
			break;
		off += (uint32_t)sizeof(struct vj_rec_hdr) + rlen;
		n++;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t flags = data[0];
	const struct fz_image *t = fz_template(flags & F_JFILE);
	struct fz_image img;
	if (!t || fz_image_copy(t, &img) < 0)
		return 0;
	const struct vsb *sb = &t->sb;
	size_t at = 1;
	if ((flags & F_JHDR) && img.jstore) {
		size_t n = size - at < JHDR_OVERLAY ? size - at : JHDR_OVERLAY;
		memcpy(img.jstore, data + at, n);
		at += n;
		if (!(flags & F_JHDR_RAW))
			vsb_seal(img.jstore);
	}
	uint8_t *ring = fz_image_ring(&img, sb);
	uint8_t *c = vblk_alloc_buf(VJ_MAX_COMMIT);
	if (!ring || !c) {
		free(c);
		fz_image_free(&img);
		return 0;
	}
	if (flags & F_FRESH)
		memset(ring, 0, sb->journal_size);
	uint64_t pos = (flags & F_APPEND) ? t->j_end : sb->journal_start;
	uint64_t seq = (flags & F_APPEND) ? t->j_next_seq : sb->journal_seq;
	uint64_t written = 0;
	while (size - at >= 3 && written < sb->journal_size) {
		uint8_t ctl = data[at];
		uint32_t plen = data[at + 1] | (uint32_t)data[at + 2] << 8;
		at += 3;
		if (plen > size - at)
			plen = (uint32_t)(size - at);
		if (plen > VJ_MAX_COMMIT - VJ_HDR_SIZE)
			plen = VJ_MAX_COMMIT - VJ_HDR_SIZE;
		uint32_t len = (uint32_t)vround_up(VJ_HDR_SIZE + plen, VJ_BLOCK);
		memset(c, 0, len);
		memcpy(c + VJ_HDR_SIZE, data + at, plen);
		at += plen;
		uint8_t uuid[16];
		memcpy(uuid, sb->uuid, 16);
		if (ctl & C_UUID)
			uuid[15] ^= 1;
		if (ctl & C_SKIPSEQ)
			seq++;
		vj_commit_seal(c, uuid, seq, plen,
			       count_records(c + VJ_HDR_SIZE, plen) + !!(ctl & C_NREC));
		if (ctl & C_BADCRC)
			c[VJ_HDR_SIZE - 1] ^= 0x80; /* inside what the crc covers */
		if ((ctl & C_WRAP) || pos + len > sb->journal_size)
			pos = 0;
		memcpy(ring + pos, c, len);
		pos = (pos + len) % sb->journal_size;
		written += len;
		seq++;
	}
	free(c);
	fz_image_check(&img, "fuzz_journal");
	fz_image_free(&img);
	return 0;
}

/* The template's commits in this target's encoding (vj_commit_peek walks the ring). */
static int seed_from(const struct fz_image *t, uint8_t flags, const char *dir, const char *name)
{
	const uint8_t *ring = fz_image_ring(t, &t->sb);
	size_t cap = 1 + JHDR_OVERLAY + t->sb.journal_size, n = 0;
	uint8_t *in = malloc(cap);
	if (!ring || !in) {
		free(in);
		return -1;
	}
	in[n++] = flags;
	if (flags & F_JHDR) {
		memcpy(in + n, t->jstore, JHDR_OVERLAY);
		n += JHDR_OVERLAY;
	}
	uint64_t pos = t->sb.journal_start, seq = t->sb.journal_seq;
	for (unsigned k = 0; k < 1000; k++) {
		uint64_t s;
		uint32_t plen, nrec;
		if (pos + VJ_BLOCK > t->sb.journal_size || vj_commit_peek(ring + pos, &s, &plen, &nrec) ||
		    s != seq) {
			if (pos == 0 || vj_commit_peek(ring, &s, &plen, &nrec) || s != seq)
				break;
			pos = 0;
		}
		if (plen > VJ_MAX_COMMIT || n + 3 + plen > cap ||
		    pos + VJ_HDR_SIZE + plen > t->sb.journal_size)
			break;
		in[n++] = 0;
		in[n++] = (uint8_t)plen;
		in[n++] = (uint8_t)(plen >> 8);
		memcpy(in + n, ring + pos + VJ_HDR_SIZE, plen);
		n += plen;
		pos = (pos + vround_up(VJ_HDR_SIZE + plen, VJ_BLOCK)) % t->sb.journal_size;
		seq++;
	}
	int rc = fuzz_write_seed(dir, name, in, n);
	free(in);
	return rc;
}

int fuzz_make_seeds(const char *dir)
{
	const struct fz_image *t = fz_template(false), *tj = fz_template(true);
	if (!t || !tj)
		return -1;
	if (seed_from(t, 0, dir, "template") < 0 || seed_from(t, F_FRESH, dir, "template-fresh") < 0 ||
	    seed_from(tj, F_JFILE, dir, "template-jfile") < 0 ||
	    seed_from(tj, F_JFILE | F_JHDR | F_FRESH, dir, "template-jfile-header") < 0)
		return -1;
	/* Appended after the template's own: its records again (most then fail to apply). */
	return seed_from(t, F_APPEND, dir, "template-appended");
}
