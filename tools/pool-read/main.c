/*
 * pool-read POOL VOLUME OUT: open a pool exactly as vaaid does and copy one
 * volume's bytes into the file OUT, through the engine's pool API (no LIO, no
 * ring). The lost volatile cache test (tests/vm/t_log_writes.sh) runs it on
 * each replayed crash state and hands OUT to `ackgen verify --lun X=OUT`.
 *
 * How it works: the store is opened as src/daemon/pools.c opens a configured
 * pool (vblk_uring_open, its journal file <POOL>.journal when the superblock
 * says it has one, vpool_open_stores for writing: recovery loads the newest
 * checkpoint, replays the journal and writes home the small writes the journal
 * carries), then every invariant of the recovered state is checked
 * (vpool_verify, what vaai-check checks: a problem fails with exit 1), then the
 * volume is read front to back with vvol_read, 1 MiB at a time, and written
 * to OUT. The pool is then abandoned (no checkpoint: the
 * state is thrown away with the snapshot it lives on). Exit 0, 1 when the pool
 * does not open or the volume is missing or a read fails (named on stderr),
 * 2 on usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vaaid/io.h"
#include "vaaid/pool.h"

struct rd {
	bool done;
	int res;
};

static void rd_done(void *arg, int res)
{
	struct rd *r = arg;
	r->res = res;
	r->done = true;
}

static int copy_volume(struct vreactor *re, struct vvol *v, int out)
{
	struct vvol_info info;
	vvol_get_info(v, &info);
	const uint64_t chunk = 1u << 20;
	void *buf = vblk_alloc_buf(chunk);
	if (!buf)
		return -ENOMEM;
	int rc = 0;
	for (uint64_t off = 0; off < info.size && rc == 0; off += chunk) {
		uint64_t len = info.size - off < chunk ? info.size - off : chunk;
		struct iovec iov = {.iov_base = buf, .iov_len = len};
		struct rd r = {0};
		rc = vvol_read(v, off, len, &iov, 1, rd_done, &r);
		if (rc == 0)
			rc = vreactor_run_until(re, &r.done);
		if (rc == 0)
			rc = r.res;
		if (rc == 0) {
			ssize_t w = pwrite(out, buf, len, (off_t)off);
			if (w != (ssize_t)len) /* a short write sets no errno */
				rc = w < 0 ? -errno : -EIO;
		}
	}
	free(buf);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: pool-read POOL VOLUME OUT\n");
		return 2;
	}
	const char *path = argv[1], *name = argv[2];
	struct vreactor *re;
	int rc = vreactor_create(64, &re);
	if (rc < 0) {
		fprintf(stderr, "pool-read: io_uring: %s\n", strerror(-rc));
		return 1;
	}
	struct vblk *dev = NULL, *jdev = NULL;
	rc = vblk_uring_open(re, path, 0, &dev);
	if (rc < 0) {
		fprintf(stderr, "pool-read: %s: cannot open: %s\n", path, strerror(-rc));
		return 1;
	}
	char jpath[4096];
	if (vpool_store_has_journal_file(dev) == 1 && vpool_journal_path(path, jpath, sizeof(jpath)) == 0 &&
	    (rc = vblk_uring_open(re, jpath, 0, &jdev)) < 0)
		fprintf(stderr, "pool-read: %s: %s\n", jpath, strerror(-rc)); /* the open names it too */
	struct vpool *p;
	struct vpool_open_report rep = {0};
	rc = vpool_open_stores(dev, jdev, 0, &p, &rep);
	if (rc < 0) {
		fprintf(stderr, "pool-read: %s: cannot be opened: %s%s%s\n", path, strerror(-rc),
			rep.error[0] ? ": " : "", rep.error);
		return 1;
	}
	printf("pool-read: %s opened: journal replayed %llu commit(s) / %llu record(s), %llu byte(s) of small writes written home\n",
	       path, (unsigned long long)rep.commits, (unsigned long long)rep.records,
	       (unsigned long long)rep.data_bytes);
	int bad = vpool_verify(p, stderr);
	if (bad) {
		fprintf(stderr, "pool-read: %s: the recovered pool is inconsistent (%d problem(s))\n", path, bad);
		return 1;
	}
	struct vvol *v = vpool_volume_find(p, name);
	int out = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!v || out < 0) {
		fprintf(stderr, "pool-read: %s\n", !v ? "no such volume" : strerror(errno));
		return 1;
	}
	rc = copy_volume(re, v, out);
	if (rc < 0)
		fprintf(stderr, "pool-read: reading volume %s: %s\n", name, strerror(-rc));
	if (close(out) < 0 && rc == 0)
		rc = -errno;
	vpool_abandon(p);
	vblk_close(jdev);
	vblk_close(dev);
	vreactor_destroy(re);
	return rc < 0 ? 1 : 0;
}
