/*
 * fuzz_checkpoint: the checkpoint blob (issue 24, on-disk formats).
 *
 * Input: one flags byte, then the blob. The blob is written into the
 * checkpoint area the template's newest superblock names (zero-padded to
 * 4 KiB, cut at the area's size), and that superblock is rewritten to name it:
 * its length and crc32c recomputed (else coverage would stop at the checksum),
 * encoded by the engine (vsb_encode). Flags: 0x1 the template with a journal
 * file, 0x2 the settled template (fz_image_settle: its checkpoint holds all of
 * the template's state, the journal is empty), 0x4 no journal replay (the
 * superblock's journal sequence moved past every commit). The pool is then
 * opened as vaai-check opens it and the outcome checked (fz_image_check).
 * Seeds: the checkpoints the engine wrote, of both templates, settled or not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_image.h"
#include "seeds.h"
#include "vaaid/util.h"

enum { F_JFILE = 0x1, F_SETTLED = 0x2, F_NO_REPLAY = 0x4 };

/* The base image: the template, or once per process its settled form. */
static const struct fz_image *base(uint8_t flags)
{
	static struct fz_image settled[2];
	static bool made[2];
	bool jf = flags & F_JFILE;
	const struct fz_image *t = fz_template(jf);
	if (!t || !(flags & F_SETTLED))
		return t;
	if (!made[jf]) {
		if (fz_image_settle(t, &settled[jf]) < 0)
			return NULL;
		fz_image_share(&settled[jf]); /* on failure, copies are plain copies */
		made[jf] = true;
	}
	return &settled[jf];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const struct fz_image *t = base(data[0]);
	struct fz_image img;
	if (!t || fz_image_copy(t, &img) < 0)
		return 0;
	struct vsb sb = t->sb;
	uint8_t *area = img.store + sb.ckpt_off[sb.ckpt_active];
	uint64_t n = size - 1 < sb.ckpt_size ? size - 1 : sb.ckpt_size;
	memset(area, 0, sb.ckpt_size);
	memcpy(area, data + 1, n);
	sb.ckpt_len = vround_up(n, VJ_BLOCK);
	sb.ckpt_crc = vcrc32c(0, area, sb.ckpt_len);
	if (data[0] & F_NO_REPLAY)
		sb.journal_seq += 1ull << 32;
	vsb_encode(&sb, img.store + t->sb_which * VSB_SIZE);
	fz_image_check(&img, "fuzz_checkpoint");
	fz_image_free(&img);
	return 0;
}

int fuzz_make_seeds(const char *dir)
{
	for (uint8_t f = 0; f < 8; f++) {
		const struct fz_image *t = base(f);
		if (!t)
			return -1;
		uint64_t len = t->sb.ckpt_len;
		uint8_t *in = malloc(1 + len);
		if (!in)
			return -1;
		in[0] = f;
		memcpy(in + 1, t->store + t->sb.ckpt_off[t->sb.ckpt_active], len);
		char name[64];
		snprintf(name, sizeof(name), "ckpt%s%s%s", f & F_JFILE ? "-jfile" : "",
			 f & F_SETTLED ? "-settled" : "", f & F_NO_REPLAY ? "-no-replay" : "");
		int rc = fuzz_write_seed(dir, name, in, 1 + len);
		free(in);
		if (rc < 0)
			return -1;
	}
	return 0;
}
