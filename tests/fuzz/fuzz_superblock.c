/*
 * fuzz_superblock: the superblock pair (issue 24, on-disk formats).
 *
 * Input: one flags byte, then bytes laid over the two 4 KiB superblock copies
 * of the template pool (pool_image.h; a short input leaves the rest as the
 * engine wrote it). Flags: 0x1 the template with a journal file of its own,
 * 0x2 / 0x4 reseal copy 0 / 1 (vsb_seal: the crc recomputed after the
 * mutation, else coverage would stop at the checksum). The pool is then
 * opened as vaai-check opens it and the outcome checked (fz_image_check).
 * Seeds: the template's own superblocks, both kinds, sealed and not.
 */
#include <stdio.h>
#include <string.h>

#include "seeds.h"
#include "pool_image.h"

enum { F_JFILE = 0x1, F_SEAL0 = 0x2, F_SEAL1 = 0x4 };

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
	}
	return 0;
}
