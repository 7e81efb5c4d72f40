/*
 * fuzz_pool_image: a whole small pool image (issue 24, on-disk formats), as a
 * sparse patch list over the template pool.
 *
 * Input: one flags byte, then patches {offset u32 LE, length u16 LE, bytes}.
 * The offset addresses the store followed by its journal file (modulo their
 * total size); the bytes of all patches together are at most 64 KiB. Then, as
 * the flags ask, the checksums are made right again (else coverage stops at
 * them), each by the engine's own rule:
 *   0x01 the template with a journal file of its own
 *   0x02 reseal both superblock copies (vsb_seal)
 *   0x04 for each copy that then decodes: its checkpoint crc recomputed over
 *        the area and length it names, the copy re-encoded (vsb_encode)
 *   0x08 for the newer copy that decodes: the commits of its journal, walked from
 *        its start as replay walks them, resealed (as many as the template has) (vj_commit_seal: its uuid, the
 *        expected sequence number, their length and record count as found)
 *   0x10 the journal file's header resealed (vsb_seal)
 * The pool is then opened as vaai-check opens it and the outcome checked.
 * Seeds: the template unchanged, and one no-op patch (the template's own bytes)
 * on each region: superblocks, checkpoint, journal ring, journal file header, data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_image.h"
#include "seeds.h"
#include "vaaid/util.h"

enum { F_JFILE = 0x01, F_SB = 0x02, F_CKPT = 0x04, F_JOURNAL = 0x08, F_JHDR = 0x10 };
#define PATCH_BUDGET (64u << 10)

static uint8_t *byte_at(struct fz_image *img, uint64_t off)
{
	return off < img->store_size ? img->store + off : img->jstore + (off - img->store_size);
}

/* Reseal the commits replay would read from sb's journal position: as many as
 * the template has (the ring beyond holds stale commits of older sequence numbers,
 * which replay must not read and a reseal would make valid). */
static void reseal_journal(struct fz_image *img, const struct vsb *sb, uint64_t commits)
{
	uint8_t *ring = fz_image_ring(img, sb);
	if (!ring)
		return;
	uint64_t pos = sb->journal_start, seq = sb->journal_seq, used = 0;
	for (uint64_t k = 0; k < commits && used < sb->journal_size; k++) {
		uint64_t s;
		uint32_t plen, nrec;
		if (pos + VJ_BLOCK > sb->journal_size || vj_commit_peek(ring + pos, &s, &plen, &nrec)) {
			if (pos == 0 || vj_commit_peek(ring, &s, &plen, &nrec))
				return;
			used += sb->journal_size - pos;
			pos = 0;
		}
		if (plen > VJ_MAX_COMMIT - VJ_HDR_SIZE)
			plen = VJ_MAX_COMMIT - VJ_HDR_SIZE;
		uint64_t len = vround_up(VJ_HDR_SIZE + plen, VJ_BLOCK);
		if (pos + len > sb->journal_size)
			return;
		vj_commit_seal(ring + pos, sb->uuid, seq, plen, nrec);
		pos = (pos + len) % sb->journal_size;
		used += len;
		seq++;
	}
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
	uint64_t total = img.store_size + (img.jstore ? img.jstore_size : 0);
	size_t at = 1, budget = PATCH_BUDGET;
	while (size - at >= 6 && budget) {
		uint64_t off = (data[at] | (uint32_t)data[at + 1] << 8 | (uint32_t)data[at + 2] << 16 |
				(uint32_t)data[at + 3] << 24) % total;
		size_t len = data[at + 4] | (size_t)data[at + 5] << 8;
		at += 6;
		if (len > size - at)
			len = size - at;
		if (len > budget)
			len = budget;
		budget -= len;
		for (size_t i = 0; i < len; i++) /* a patch may run from the store into the journal file */
			*byte_at(&img, (off + i) % total) = data[at + i];
		at += len;
	}
	struct vsb sb[2];
	int newest = -1;
	for (int c = 0; c < 2; c++) {
		uint8_t *blk = img.store + c * VSB_SIZE;
		if (flags & F_SB)
			vsb_seal(blk);
		if (vsb_decode(blk, &sb[c]) < 0)
			continue;
		if ((flags & F_CKPT) && sb[c].ckpt_off[sb[c].ckpt_active] <= img.store_size &&
		    sb[c].ckpt_len <= img.store_size - sb[c].ckpt_off[sb[c].ckpt_active]) {
			sb[c].ckpt_crc =
				vcrc32c(0, img.store + sb[c].ckpt_off[sb[c].ckpt_active], sb[c].ckpt_len);
			vsb_encode(&sb[c], blk);
		}
		if (newest < 0 || sb[c].generation > sb[newest].generation)
			newest = c;
	}
	/* The journal of the copy the open will use (the newer; the older names an
	 * older position, whose sequence numbers would break the newer's). */
	if ((flags & F_JOURNAL) && newest >= 0)
		reseal_journal(&img, &sb[newest], t->j_commits);
	if ((flags & F_JHDR) && img.jstore)
		vsb_seal(img.jstore);
	fz_image_check(&img, "fuzz_pool_image");
	fz_image_free(&img);
	return 0;
}

/* A seed: flags and one patch of the template's own bytes at off (or none). */
static int seed(const struct fz_image *t, uint8_t flags, uint64_t off, size_t len, const char *dir,
		const char *name)
{
	uint8_t *in = malloc(1 + 6 + len);
	if (!in)
		return -1;
	in[0] = flags;
	size_t n = 1;
	if (len) {
		for (int i = 0; i < 4; i++)
			in[n++] = (uint8_t)(off >> (8 * i));
		in[n++] = (uint8_t)len;
		in[n++] = (uint8_t)(len >> 8);
		for (size_t i = 0; i < len; i++) {
			uint64_t o = off + i;
			in[n++] = o < t->store_size ? t->store[o] : t->jstore[o - t->store_size];
		}
	}
	int rc = fuzz_write_seed(dir, name, in, n);
	free(in);
	return rc;
}

int fuzz_make_seeds(const char *dir)
{
	const uint8_t all = F_SB | F_CKPT | F_JOURNAL | F_JHDR;
	for (int jf = 0; jf < 2; jf++) {
		const struct fz_image *t = fz_template(jf);
		if (!t)
			return -1;
		const struct vsb *sb = &t->sb;
		uint8_t f = (uint8_t)(all | jf);
		uint64_t ring = (jf ? t->store_size : 0) + sb->journal_off + sb->journal_start;
		char name[64];
		const struct {
			const char *what;
			uint64_t off;
			size_t len;
		} s[] = {
			{"unchanged", 0, 0},
			{"superblock0", 0, 256},
			{"superblock1", VSB_SIZE, 256},
			{"checkpoint", sb->ckpt_off[sb->ckpt_active], 1024},
			{"journal", ring, 512},
			{"data", sb->data_off, 512},
			{"journal-header", jf ? t->store_size : 0, jf ? 64 : 0},
		};
		for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
			if (i && !s[i].len)
				continue;
			snprintf(name, sizeof(name), "%s%s", s[i].what, jf ? "-jfile" : "");
			if (seed(t, f, s[i].off, s[i].len, dir, name) < 0)
				return -1;
		}
	}
	return 0;
}
