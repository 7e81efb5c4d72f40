/*
 * fuzz_superblock: the superblock pair (issue 24, on-disk formats).
 *
 * Input: one flags byte, then bytes laid over the two 4 KiB superblock copies
 * of the template pool (pool_image.h; a short input leaves the rest as the
 * engine wrote it). Flags: 0x1 the template with a journal file of its own,
 * 0x2 / 0x4 reseal copy 0 / 1 (vsb_seal: the crc recomputed after the
 * mutation, else coverage would stop at the checksum). The pool is then
 * opened as vaai-check opens it and the outcome checked (fz_image_check).
 * Before that, the copy vsb_read takes: when a copy decodes (vsb_decode), the
 * superblock must be read, and from the copy of the highest generation that
 * decodes and holds a generation of its own parity (copy c holds generations
 * g with g % 2 == c: the writers' rule; the pair is there so that one damaged
 * copy, a torn write, costs nothing; the newer copy is the pool's state: the
 * older one names an older checkpoint and journal start).
 * Seeds: the template's own superblocks, both kinds, sealed and not; one copy
 * damaged (a byte flipped, not resealed), each copy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seeds.h"
#include "pool_image.h"

enum { F_JFILE = 0x1, F_SEAL0 = 0x2, F_SEAL1 = 0x4 };

static _Noreturn void finding(const char *what, int rc, int which)
{
	fprintf(stderr, "fuzz_superblock: FINDING: %s (vsb_read rc %d, copy %d)\n", what, rc, which);
	abort();
}

/* vsb_read takes the readable copy of the highest generation. */
static void check_choice(const struct fz_image *img)
{
	struct vsb d[2], sb;
	int r[2], which = -1;
	for (int c = 0; c < 2; c++) {
		r[c] = vsb_decode(img->store + c * VSB_SIZE, &d[c]);
		/* copy c only ever holds generations of parity c (the writers' rule) */
		if (r[c] == 0 && d[c].generation % 2 != (uint64_t)c)
			r[c] = -EUCLEAN;
	}
	if (r[0] && r[1])
		return; /* neither copy readable: the open must refuse, naming it (fz_image_check) */
	int want = r[0] ? 1 : r[1] ? 0 : d[1].generation > d[0].generation;
	int rc = fz_image_sb_read(img, &sb, &which);
	if (rc == -ENOMEM)
		return;
	if (rc < 0)
		finding("a superblock copy decodes but the superblock was not read", rc, which);
	if (which != want && (r[which] || d[which].generation != d[want].generation))
		finding("the superblock was read from the older or unreadable copy", rc, which);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const struct fz_image *t = fz_template(data[0] & F_JFILE);
	struct fz_image img;
	if (!t || fz_image_copy(t, &img) < 0)
		return 0;
	size_t n = size - 1 < 2 * VSB_SIZE ? size - 1 : 2 * VSB_SIZE;
	memcpy(img.store, data + 1, n);
	for (int c = 0; c < 2; c++)
		if (data[0] & (c ? F_SEAL1 : F_SEAL0))
			vsb_seal(img.store + c * VSB_SIZE);
	check_choice(&img);
	fz_image_check(&img, "fuzz_superblock");
	fz_image_free(&img);
	return 0;
}

int fuzz_make_seeds(const char *dir)
{
	static uint8_t in[1 + 2 * VSB_SIZE];
	for (int jf = 0; jf < 2; jf++) {
		const struct fz_image *t = fz_template(jf);
		if (!t)
			return -1;
		memcpy(in + 1, t->store, 2 * VSB_SIZE);
		for (int seal = 0; seal < 2; seal++) {
			char name[64];
			in[0] = (uint8_t)(jf | (seal ? F_SEAL0 | F_SEAL1 : 0));
			snprintf(name, sizeof(name), "template%s%s", jf ? "-jfile" : "",
				 seal ? "-sealed" : "");
			if (fuzz_write_seed(dir, name, in, sizeof(in)) < 0)
				return -1;
		}
		for (int c = 0; c < 2; c++) { /* one copy damaged (its crc no longer matches) */
			char name[64];
			in[0] = (uint8_t)jf;
			memcpy(in + 1, t->store, 2 * VSB_SIZE);
			in[1 + c * VSB_SIZE + 48] ^= 0x01; /* a bit of DEVICE SIZE */
			snprintf(name, sizeof(name), "copy%d-damaged%s", c, jf ? "-jfile" : "");
			if (fuzz_write_seed(dir, name, in, sizeof(in)) < 0)
				return -1;
		}
	}
	return 0;
}
