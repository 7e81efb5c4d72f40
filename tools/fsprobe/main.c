/*
 * fsprobe: what the file system under a pool file charges for a first write
 * into fallocated space (docs/performance.md, "journal in a file of its own").
 *
 * How this works: it replays, with plain synchronous pwritev2 calls on
 * O_DIRECT files, the I/O pattern of vaaid's first write into a new extent
 * when the write is carried in the journal (docs/design.md rule 11): a 4 KiB
 * home write without DSYNC into fallocated (unwritten) space, then a 4 KiB
 * DSYNC journal write to space written before. Blocks of 10 such first writes
 * alternate with blocks of 10 DSYNC overwrites of written space (as
 * `vaai-bench xcopy`'s first-write measurement does), and the mean latency of
 * each kind is printed. Two layouts, alternated round by round in one run:
 *   same_file: the journal area lies in the data file (vaaid's layout today);
 *   own_file:  the journal is another file of the same file system.
 * On ext4, a DSYNC write commits the file system's journal whenever its inode
 * has changed metadata, such as unwritten extents converted by earlier home
 * writes; a journal in its own file does not pay for the data file's.
 * Nothing of vaaid runs here: this measures the file system, not the engine.
 *
 *   fsprobe [--dir DIR] [--blocks N] [--rounds R]
 * Files are created in DIR (default .) and removed afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BLK 4096
#define PER_BLOCK 10
#define EXT (1ull << 20)
#define JSLOTS 256

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int wr(int fd, const struct iovec *iov, off_t off, int flags)
{
	ssize_t n = pwritev2(fd, iov, 1, off, flags);
	return n == BLK ? 0 : n < 0 ? -errno : -EIO;
}

struct result {
	double first_us, over_us;
	unsigned n;
};

/* One round of `blocks` blocks in one layout; adds to r. Returns 0 or -errno. */
static int round_once(const char *dir, bool own_file, unsigned blocks, void *buf,
		      struct result *r)
{
	char dpath[4096], jpath[4096];
	snprintf(dpath, sizeof(dpath), "%s/fsprobe.data", dir);
	snprintf(jpath, sizeof(jpath), "%s/fsprobe.journal", dir);
	int d = open(dpath, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	if (d < 0)
		return -errno;
	int j = own_file ? open(jpath, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600) : d;
	int rc = j < 0 ? -errno : 0;
	uint64_t first_area = (uint64_t)blocks * PER_BLOCK * EXT;  /* fallocated, never written */
	off_t over_off = (off_t)first_area;                         /* written: the overwrites */
	off_t j_off = own_file ? 0 : over_off + JSLOTS * BLK;       /* written: the journal */
	struct iovec iov = {.iov_base = buf, .iov_len = BLK};
	if (rc == 0 && fallocate(d, 0, 0, (off_t)first_area) < 0)
		rc = -errno;
	for (unsigned i = 0; rc == 0 && i < JSLOTS; i++)
		rc = wr(d, &iov, over_off + (off_t)i * BLK, 0);
	for (unsigned i = 0; rc == 0 && i < JSLOTS; i++)
		rc = wr(j, &iov, j_off + (off_t)i * BLK, 0);
	if (rc == 0 && (fsync(d) < 0 || fsync(j) < 0))
		rc = -errno;
	unsigned k = 0;
	for (unsigned b = 0; rc == 0 && b < blocks; b++) {
		double t0 = now_us();
		for (unsigned i = 0; rc == 0 && i < PER_BLOCK; i++, k++) {
			rc = wr(d, &iov, (off_t)k * (off_t)EXT, 0);
			if (rc == 0)
				rc = wr(j, &iov, j_off + (off_t)(k % JSLOTS) * BLK, RWF_DSYNC);
		}
		double t1 = now_us();
		for (unsigned i = 0; rc == 0 && i < PER_BLOCK; i++)
			rc = wr(d, &iov, over_off + (off_t)((b * PER_BLOCK + i) % JSLOTS) * BLK, RWF_DSYNC);
		double t2 = now_us();
		r->first_us += t1 - t0;
		r->over_us += t2 - t1;
		r->n += PER_BLOCK;
	}
	if (own_file && j >= 0)
		close(j);
	close(d);
	unlink(dpath);
	if (own_file)
		unlink(jpath);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = ".";
	unsigned blocks = 100, rounds = 3;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--blocks") && i + 1 < argc)
			blocks = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = (unsigned)strtoul(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: fsprobe [--dir DIR] [--blocks N] [--rounds R]\n");
			return 2;
		}
	}
	if (!blocks || !rounds || blocks > 10000) {
		fprintf(stderr, "fsprobe: --blocks must be 1..10000 and --rounds at least 1\n");
		return 2;
	}
	void *buf;
	if (posix_memalign(&buf, BLK, BLK))
		return 1;
	memset(buf, 0x5A, BLK);
	struct result res[2] = {{0}};
	for (unsigned r = 0; r < rounds; r++)
		for (int own = 0; own < 2; own++) {
			int rc = round_once(dir, own, blocks, buf, &res[own]);
			if (rc < 0) {
				fprintf(stderr, "fsprobe: %s: %s\n", dir, strerror(-rc));
				free(buf);
				return 1;
			}
		}
	for (int own = 0; own < 2; own++)
		printf("fsprobe journal=%s first_write_us=%.0f overwrite_us=%.0f ratio=%.2f "
		       "writes=%u\n",
		       own ? "own_file" : "same_file", res[own].first_us / res[own].n,
		       res[own].over_us / res[own].n, res[own].first_us / res[own].over_us,
		       res[own].n);
	free(buf);
	return 0;
}
