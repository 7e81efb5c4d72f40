/*
 * The on-disk fuzz targets' pool (fuzz_superblock, fuzz_checkpoint,
 * fuzz_journal, fuzz_pool_image): a small pool the engine builds and writes
 * (the template), laid onto a fresh crashsim memory device per input after the
 * target changed it, then opened the way vaai-check opens a pool, and the
 * outcome checked:
 *   - the open refuses with an error that names what is damaged (rep.error), or
 *   - it succeeds with a pool that passes vpool_verify (vaai-check's check);
 *     then a read-write open (replay written home, a checkpoint), a close and
 *     a read-only reopen must succeed and verify too.
 * Anything else aborts with a message (a finding); a crash or a sanitizer
 * report is one too, a hang is caught by libFuzzer's -timeout.
 *
 * The template is deterministic (a fixed pool uuid; the volumes' random NAA
 * designators are opaque bytes no decision depends on), so an input reproduces
 * in any process. It is built once per process and per kind (journal in the
 * store, or in a journal file of its own) and holds one record of every
 * journal type after its checkpoint (fz_template_build says which).
 */
#ifndef VAAID_FUZZ_POOL_IMAGE_H
#define VAAID_FUZZ_POOL_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vaaid/meta.h"

struct fz_image {
	uint8_t *store;   /* the pool's store */
	uint64_t store_size;
	uint8_t *jstore;  /* its journal file (VSB_INCOMPAT_JOURNAL_FILE), or NULL */
	uint64_t jstore_size;
	struct vsb sb;    /* the template's newest superblock (vsb_read) */
	int sb_which;     /* its copy */
	uint64_t j_end, j_next_seq; /* where its journal's replay ends: the next commit */
	uint64_t j_commits;         /* commits its replay reads */
	/* fz_image_share: memfds holding store / jstore (-1: none; 0 in a zeroed struct
	 * means none too: valid only with shared set), so that copies are
	 * copy-on-write mappings; a copy made so has mapped set (munmap to free) */
	int store_fd, jstore_fd;
	bool shared, mapped;
};

/* The template (built on first use; NULL when it cannot be: a message says why). */
const struct fz_image *fz_template(bool jfile);
/* Copies of img from now on share its pages until they write them (a private
 * mapping of a memfd holding its bytes: a copy costs the pages it damages, not
 * the whole image). For images kept for the process (the template, a settled
 * base). 0 or -errno (then copies are plain copies). */
int fz_image_share(struct fz_image *img);
/* A private copy to damage (0 or -ENOMEM); fz_image_free frees it. */
int fz_image_copy(const struct fz_image *from, struct fz_image *to);
void fz_image_free(struct fz_image *img);
/* The journal ring of an image as sb places it (sb->journal_size bytes). */
uint8_t *fz_image_ring(const struct fz_image *img, const struct vsb *sb);
/* The image after vaaid opened it for writing and closed it (replay written
 * home, a checkpoint of everything, an empty journal): 0 or -errno. */
int fz_image_settle(const struct fz_image *from, struct fz_image *to);
/* The superblock vsb_read takes from the image's store (laid onto a device):
 * vsb_read's result, the copy in *which. */
int fz_image_sb_read(const struct fz_image *img, struct vsb *sb, int *which);
/* Open the image as vaai-check does and check the outcome (above); target
 * names the target in the messages. Returns true when the open succeeded. */
bool fz_image_check(const struct fz_image *img, const char *target);

#endif
