/*
 * A pool with ~N mapped extents on an RBD image (ceph_takeover --mapped N):
 * the takeover benchmark's "pool with 1 M mapped extents" (issue 26 item 5).
 *
 * How this works: writing 1 M extents' worth of data into the test cluster's
 * memstore OSD (RAM) is out of reach, and so is committing 1 M writes one by
 * one through Ceph. So the pool is built on the crash-simulating memory store
 * (vblk_crashsim, written back to a sparse file on close), with 64 KiB extents:
 * N/4 physical extents get one 4 KiB write each, alternating between two data
 * volumes (so no two neighbours in a volume's map are physically consecutive:
 * one map run per extent, the checkpoint's largest form), then each data
 * volume is shared whole into three clones (vvol_share: the map entries copied,
 * refcounts 4 -- the pool's average limit), giving N mapped extents over N/4
 * physical ones, plus the volume "vol" the takeover rounds write. The pool is
 * closed (a checkpoint holding all of it), and the file's metadata region
 * (superblocks, checkpoint areas, journal: everything before the first data
 * extent) is copied into a new RBD image of the same size: the same bytes, so
 * the image holds that pool (the format does not depend on the store) --
 * except the filler extents' data, which is not copied: the test cluster's
 * memstore keeps every object it touches whole in RAM (250 K extents at a
 * 64 KiB stride would be 16 GiB), so on RBD the filler volumes read zeros.
 * Recovery and the takeover read no data extent, and the rounds check only
 * "vol" (written through the engine after the copy), so what is timed is the
 * same; the filler volumes' content is not meaningful there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapped_pool.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"

#define EXT (64u * 1024)
#define BLK 4096u
#define QD 64u

struct fill {
	struct vvol *d[2];
	uint64_t next, total, done;
	int err;
	unsigned busy;
	uint8_t *buf;
	struct iovec iov;
};

static void fill_submit(struct fill *f);

static void fill_done(void *arg, int res)
{
	struct fill *f = arg;
	f->busy--;
	f->done++;
	if (res < 0 && !f->err)
		f->err = res;
	if (!f->err)
		fill_submit(f);
}

static void fill_submit(struct fill *f)
{
	while (f->busy < QD && f->next < f->total && !f->err) {
		uint64_t i = f->next++;
		/* extent i/2 of data volume i%2: allocation alternates between the two */
		int rc = vvol_write(f->d[i % 2], (i / 2) * EXT, BLK, &f->iov, 1, fill_done, f);
		if (rc < 0) {
			f->err = rc;
			return;
		}
		f->busy++;
	}
}

struct shared {
	bool done;
	int res;
};

static void share_done(void *arg, int res)
{
	struct shared *s = arg;
	s->res = res;
	s->done = true;
}

/* Copy the data regions of the sparse file at path below `upto` into the store spec (created). */
static int transplant(struct vreactor *r, const char *path, const char *spec, uint64_t size,
		      uint64_t upto)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct vblk *dev;
	int rc = vblk_open_store(r, spec, size, NULL, &dev);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	const size_t win = 4u << 20;
	uint8_t *buf = vblk_alloc_buf(win);
	uint64_t copied = 0;
	off_t pos = 0;
	while (rc == 0 && buf) {
		off_t data = lseek(fd, pos, SEEK_DATA);
		if (data < 0)
			break; /* ENXIO: no more data */
		if ((uint64_t)data >= upto)
			break;
		off_t hole = lseek(fd, data, SEEK_HOLE);
		if ((uint64_t)hole > upto)
			hole = (off_t)upto;
		data &= ~(off_t)(BLK - 1);
		for (off_t o = data; o < hole && rc == 0; o += (off_t)win) {
			size_t n = (size_t)(hole - o) < win ? (size_t)(hole - o) : win;
			n = (n + BLK - 1) & ~(size_t)(BLK - 1);
			memset(buf, 0, n);
			if (pread(fd, buf, n, o) < 0)
				rc = -errno;
			else
				rc = vblk_pwrite_sync(dev, buf, n, (uint64_t)o, 0);
			copied += n;
		}
		pos = hole;
	}
	if (!buf)
		rc = -ENOMEM;
	if (rc == 0)
		rc = vblk_flush_sync(dev);
	fprintf(stderr, "mapped_pool: %llu MiB copied into %s\n", (unsigned long long)(copied >> 20),
		spec);
	free(buf);
	vblk_close(dev);
	close(fd);
	return rc;
}

int mapped_pool_build(const char *spec, uint64_t mapped, const char *tmpdir, uint64_t *mapped_out,
		      uint64_t *phys_out)
{
	uint64_t phys = (mapped / 4 + 1) & ~1ull; /* even: two data volumes */
	uint64_t dvol = phys / 2 * EXT;
	/* data extents, "vol" (1024), headroom; + the metadata (journal, checkpoint areas) */
	uint64_t size = ((phys + 1024) * 5 / 4) * EXT + (512ull << 20);
	char path[512];
	snprintf(path, sizeof(path), "%s/mapped-pool-%d.img", tmpdir, (int)getpid());
	unlink(path);
	struct vreactor *r;
	struct vblk *dev = NULL;
	struct vpool *p;
	struct vpool_open_report rep;
	struct vpool_params prm = {.size = size, .extent_size = EXT, .max_size = size};
	uint64_t data_off = 0;
	int rc = vreactor_create(256, &r);
	if (rc < 0)
		return rc;
	rc = vblk_crashsim_open(r, path, size, 1, &dev);
	if (rc == 0 && (rc = vpool_format(dev, &prm)) == 0)
		rc = vpool_open_stores(dev, NULL, 0, &p, &rep);
	if (rc < 0) {
		fprintf(stderr, "mapped_pool: cannot make the pool: %s\n", strerror(-rc));
		if (dev)
			vblk_close(dev);
		goto out;
	}
	struct vvol *v, *clone;
	struct fill f = {.total = phys, .buf = vblk_alloc_buf(BLK)};
	memset(f.buf, 0xa5, BLK);
	f.iov = (struct iovec){f.buf, BLK};
	if ((rc = vpool_volume_create(p, "vol", 64u << 20, 512, &v)) < 0 ||
	    (rc = vpool_volume_create(p, "d0", dvol, 4096, &f.d[0])) < 0 ||
	    (rc = vpool_volume_create(p, "d1", dvol, 4096, &f.d[1])) < 0)
		goto close;
	fill_submit(&f);
	uint64_t shown = 0;
	while (f.busy && (rc = vreactor_run_once(r, -1)) >= 0) {
		if (f.done >= shown + 65536) {
			shown = f.done;
			fprintf(stderr, "mapped_pool: %llu of %llu extents written\n",
				(unsigned long long)f.done, (unsigned long long)phys);
		}
	}
	rc = f.err ? f.err : rc < 0 ? rc : 0;
	for (unsigned c = 0; rc == 0 && c < 6; c++) {
		char name[8];
		snprintf(name, sizeof(name), "c%u", c);
		struct shared s = {0};
		if ((rc = vpool_volume_create(p, name, dvol, 4096, &clone)) == 0 &&
		    (rc = vvol_share(f.d[c % 2], 0, clone, 0, dvol, share_done, &s)) == 0 &&
		    (rc = vreactor_run_until(r, &s.done)) == 0)
			rc = s.res;
	}
	*mapped_out = phys * 4;
	*phys_out = phys;
	struct vpool_stats st;
	vpool_get_stats(p, &st);
	data_off = st.data_off;
close:
	free(f.buf);
	if (rc < 0)
		fprintf(stderr, "mapped_pool: cannot fill the pool: %s\n", strerror(-rc));
	int crc = vpool_close(p); /* a checkpoint holding every map entry */
	rc = rc < 0 ? rc : crc;
	vblk_close(dev); /* the durable image written back to path */
	if (rc == 0)
		rc = transplant(r, path, spec, size, data_off);
out:
	unlink(path);
	vreactor_destroy(r);
	return rc;
}
