/*
 * vblk_uring: a regular file or block device opened O_DIRECT, I/O through the
 * reactor's io_uring.
 *
 * How this works: every operation gets a small malloc'd request (struct
 * ureq) that embeds the vio_op used as the SQE's user_data, the caller's op
 * and a private copy of the iovec array (the caller's array may be on its
 * stack and gone before the reactor submits). When a read or write completes
 * short, the iovec copy is advanced and the remainder resubmitted, so callers
 * only ever see the full length or -errno (a 0-byte transfer is -EIO). The
 * request is freed before the caller's callback runs. Open probes the store
 * with a 512-byte direct read so a store that cannot do sector-sized direct
 * I/O fails at open with a clear message, not at the first pool write.
 *
 * VBLK_DSYNC writes are made durable by group flushes, not one RWF_DSYNC each:
 * the write goes out plain; when it has completed it waits in the device's
 * list; once per reactor turn (a deferred "kick", after all of the turn's
 * completions were reaped) the whole list becomes one batch and one fdatasync
 * (IORING_OP_FSYNC, DATASYNC) is prepared for it, so it is submitted after
 * every write of the batch had completed and covers them all (the durability
 * contract in io.h: a write's callback runs only when its batch's fsync has
 * completed, with that fsync's error if it failed). At most group_max fsyncs
 * are in flight; writes completing meanwhile wait for the next batch. A DSYNC
 * write submitted while no other is in flight keeps RWF_DSYNC. On the test
 * machine's disk (volatile cache, no FUA), at queue depth 32, where RWF_DSYNC
 * makes the kernel flush the cache once per write: 1.1-1.7x the durable
 * writes per second in a bare io_uring loop, 1.16x random writes and 1.06x
 * COMPARE AND WRITEs through the engine (docs/performance.md, "Session 13").
 * Used where the store's device has a volatile cache without FUA (detected at
 * open from sysfs, vblk_queue_wants_group_flush); vblk_uring_set_group_flush
 * changes it (0: RWF_DSYNC per write).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/fs.h>
#include <linux/magic.h>
#include <liburing.h>

#include "vaaid/io.h"
#include "vaaid/util.h"

struct udev {
	struct vblk b;
	int fd;
	bool is_blkdev;
	bool bench_skip_reserve; /* vblk_uring_bench_skip_reserve (benchmarks only) */
	/* group flush of VBLK_DSYNC writes (see the top of this file) */
	unsigned group_max;            /* fsyncs in flight at most; 0 = RWF_DSYNC per write */
	uint64_t grouped_pending;      /* grouped writes whose callback has not run */
	uint64_t dsync_pending;        /* DSYNC writes (grouped or not) whose callback has not run */
	struct ureq *wait_head, *wait_tail; /* written, waiting for a batch */
	bool kick_queued;
	struct vio_op kick_op;
	struct gflush {
		struct vio_op op;
		struct udev *d;
		struct ureq *batch; /* NULL: slot free */
		uint64_t t_prep;    /* vclock_ns() when its fsync was prepared */
	} gf[VBLK_GROUP_FLUSH_MAX];
	vblk_uring_observer observe; /* tests: see vblk_uring_set_observer */
	void *observe_arg;
};

enum ureq_kind { UREQ_READ, UREQ_WRITE, UREQ_FLUSH, UREQ_ALLOC };

struct ureq {
	struct vio_op op; /* the SQE's user_data */
	struct udev *d;
	struct vio_op *user;
	struct ureq *next; /* in the device's wait list or a batch */
	bool grouped;      /* a DSYNC write made durable by a group flush */
	uint64_t t_sub;    /* vclock_ns() at submission (stats.read_ns / write_ns) */
	enum ureq_kind kind;
	unsigned flags;
	uint64_t off;      /* of the next (re)submission */
	size_t total, done;
	int iovcnt, first; /* iov[first..iovcnt) is what remains */
	struct iovec iov[];
};

static const struct vblk_ops udev_ops;

static struct udev *to_udev(struct vblk *b) { return (struct udev *)b; }

/* ------------------------------------------------------------- completion */

static void ureq_complete(struct ureq *q, int res)
{
	struct vio_op *user = q->user;
	if (q->grouped)
		q->d->grouped_pending--;
	if (q->kind == UREQ_WRITE && (q->flags & VBLK_DSYNC))
		q->d->dsync_pending--;
	if (res >= 0 && q->kind == UREQ_READ) {
		q->d->b.stats.bytes_read += q->total;
		q->d->b.stats.read_ns += vclock_ns() - q->t_sub;
	}
	if (res >= 0 && q->kind == UREQ_WRITE && !q->grouped)
		q->d->b.stats.write_ns += vclock_ns() - q->t_sub;
	if (res >= 0 && q->kind == UREQ_WRITE)
		q->d->b.stats.bytes_written += q->total;
	if (res >= 0 && q->kind == UREQ_WRITE && (q->flags & VBLK_META))
		q->d->b.stats.meta_bytes_written += q->total;
	if (res >= 0 && q->kind == UREQ_WRITE && ((q->off - q->done) | q->total) % VBLK_ALIGN)
		q->d->b.stats.unaligned_writes++;
	free(q);
	user->cb(user->arg, res);
}

/* Drop the first n bytes from the remaining iovecs. */
static void ureq_advance(struct ureq *q, size_t n)
{
	q->done += n;
	q->off += n;
	while (n > 0 && q->first < q->iovcnt) {
		struct iovec *v = &q->iov[q->first];
		size_t k = n < v->iov_len ? n : v->iov_len;
		v->iov_base = (char *)v->iov_base + k;
		v->iov_len -= k;
		n -= k;
		if (v->iov_len == 0)
			q->first++;
	}
}

static int ureq_submit_rw(struct ureq *q)
{
	struct io_uring_sqe *sqe = vreactor_get_sqe(q->d->b.reactor);
	if (!sqe)
		return -EBUSY;
	unsigned cnt = (unsigned)(q->iovcnt - q->first);
	if (q->kind == UREQ_READ) {
		io_uring_prep_readv(sqe, q->d->fd, &q->iov[q->first], cnt, q->off);
	} else {
		io_uring_prep_writev(sqe, q->d->fd, &q->iov[q->first], cnt, q->off);
		if ((q->flags & VBLK_DSYNC) && !q->grouped)
			sqe->rw_flags = RWF_DSYNC;
	}
	io_uring_sqe_set_data(sqe, &q->op);
	return 0;
}

/* ------------------------------------------------------------ group flush */

static void observe(struct udev *d, enum vblk_uring_event ev, const struct vio_op *user)
{
	if (d->observe)
		d->observe(d->observe_arg, ev, user);
}

/* group_start once more at the end of this reactor turn (at most one pending). */
static void queue_kick(struct udev *d)
{
	if (!d->kick_queued) {
		d->kick_queued = true;
		vreactor_defer(d->b.reactor, &d->kick_op, 0);
	}
}

/* Start one fsync per batch while slots are free; what cannot start now waits
 * for a slot (group_done) or, when no SQE could be had, for the next turn. */
static void group_start(struct udev *d)
{
	for (unsigned i = 0; i < d->group_max && d->wait_head; i++) {
		struct gflush *g = &d->gf[i];
		if (g->batch)
			continue;
		struct io_uring_sqe *sqe = vreactor_get_sqe(d->b.reactor);
		if (!sqe) {
			queue_kick(d);
			return;
		}
		g->batch = d->wait_head;
		d->wait_head = d->wait_tail = NULL;
		for (struct ureq *q = g->batch; q; q = q->next) {
			observe(d, VBLK_URING_EV_BATCHED, q->user);
			d->b.stats.grouped_writes++;
		}
		io_uring_prep_fsync(sqe, d->fd, IORING_FSYNC_DATASYNC);
		io_uring_sqe_set_data(sqe, &g->op);
		g->t_prep = vclock_ns();
		d->b.stats.dsync_flushes++;
	}
}

static void group_kick(void *arg, int res)
{
	(void)res;
	struct udev *d = arg;
	d->kick_queued = false;
	group_start(d);
}

/* A DSYNC write has completed: it joins the list the next batch takes. The
 * batch is formed in a deferred callback, after every completion of this
 * reactor turn was reaped, so one fsync covers them all. */
static void group_wait(struct ureq *q)
{
	struct udev *d = q->d;
	observe(d, VBLK_URING_EV_WRITTEN, q->user);
	d->b.stats.write_ns += vclock_ns() - q->t_sub;
	q->next = NULL;
	if (d->wait_tail)
		d->wait_tail->next = q;
	else
		d->wait_head = q;
	d->wait_tail = q;
	queue_kick(d);
}

/* A batch's fsync completed: its writes are durable (or all get its error). */
static void group_done(void *arg, int res)
{
	struct gflush *g = arg;
	struct udev *d = g->d;
	struct ureq *q = g->batch;
	g->batch = NULL;
	d->b.stats.dsync_flush_ns += vclock_ns() - g->t_prep;
	group_start(d); /* writes that waited for a slot; before any callback can close d */
	while (q) {
		struct ureq *next = q->next;
		observe(d, VBLK_URING_EV_DURABLE, q->user);
		ureq_complete(q, res < 0 ? res : (int)q->total);
		q = next;
	}
}

static void ureq_rw_cb(void *arg, int res)
{
	struct ureq *q = arg;
	if (res < 0) {
		ureq_complete(q, res);
		return;
	}
	if (res == 0) { /* past EOF, or the store accepts nothing */
		ureq_complete(q, -EIO);
		return;
	}
	ureq_advance(q, (size_t)res);
	if (q->done >= q->total) {
		if (q->grouped)
			group_wait(q); /* written, not yet durable */
		else
			ureq_complete(q, (int)q->total);
		return;
	}
	int rc = ureq_submit_rw(q); /* short transfer: continue with the rest */
	if (rc < 0)
		ureq_complete(q, rc);
}

static void ureq_simple_cb(void *arg, int res) { ureq_complete(arg, res); }

/* -------------------------------------------------------------- submission */

static struct ureq *ureq_new(struct udev *d, enum ureq_kind kind, int iovcnt, struct vio_op *user)
{
	struct ureq *q = calloc(1, sizeof(*q) + (size_t)iovcnt * sizeof(struct iovec));
	if (!q)
		return NULL;
	vio_op_init(&q->op, kind <= UREQ_WRITE ? ureq_rw_cb : ureq_simple_cb, q);
	q->d = d;
	q->user = user;
	q->kind = kind;
	q->iovcnt = iovcnt;
	return q;
}

/* Total length of iov, or -EINVAL when it is not a valid sector-multiple I/O. */
static int64_t iov_total(const struct iovec *iov, int iovcnt)
{
	if (!iov || iovcnt <= 0 || iovcnt > IOV_MAX)
		return -EINVAL;
	uint64_t total = 0;
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (total == 0 || total % VBLK_SECTOR || total > INT_MAX)
		return -EINVAL;
	return (int64_t)total;
}

static int check_range(const struct vblk *b, uint64_t off, uint64_t len)
{
	if (off % VBLK_SECTOR || len % VBLK_SECTOR || off > b->size || len > b->size - off)
		return -EINVAL;
	return 0;
}

static int udev_rw(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
		   unsigned flags, struct vio_op *op, enum ureq_kind kind)
{
	int64_t total = iov_total(iov, iovcnt);
	if (total < 0)
		return (int)total;
	if (!op || !op->cb)
		return -EINVAL;
	int rc = check_range(b, off, (uint64_t)total);
	if (rc < 0)
		return rc;
	struct ureq *q = ureq_new(to_udev(b), kind, iovcnt, op);
	if (!q)
		return -ENOMEM;
	memcpy(q->iov, iov, (size_t)iovcnt * sizeof(*iov));
	q->flags = flags;
	/* A lone DSYNC write (none other in flight here: the journal's commits on a
	 * journal file of its own, a synchronous control-path write) keeps
	 * RWF_DSYNC: a group of one would only add a round trip. */
	bool dsync = kind == UREQ_WRITE && (flags & VBLK_DSYNC);
	q->grouped = dsync && to_udev(b)->group_max > 0 && to_udev(b)->dsync_pending > 0;
	q->off = off;
	q->total = (size_t)total;
	q->t_sub = vclock_ns();
	rc = ureq_submit_rw(q);
	if (rc < 0) {
		free(q);
		return rc;
	}
	if (q->grouped)
		to_udev(b)->grouped_pending++;
	if (dsync)
		to_udev(b)->dsync_pending++;
	if (kind == UREQ_READ)
		b->stats.read_ops++;
	else
		b->stats.write_ops++;
	return 0;
}

static int udev_readv(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
		      struct vio_op *op)
{
	return udev_rw(b, iov, iovcnt, off, 0, op, UREQ_READ);
}

static int udev_writev(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
		       unsigned flags, struct vio_op *op)
{
	return udev_rw(b, iov, iovcnt, off, flags, op, UREQ_WRITE);
}

static int udev_flush(struct vblk *b, struct vio_op *op)
{
	if (!op || !op->cb)
		return -EINVAL;
	struct ureq *q = ureq_new(to_udev(b), UREQ_FLUSH, 0, op);
	if (!q)
		return -ENOMEM;
	struct io_uring_sqe *sqe = vreactor_get_sqe(b->reactor);
	if (!sqe) {
		free(q);
		return -EBUSY;
	}
	io_uring_prep_fsync(sqe, q->d->fd, IORING_FSYNC_DATASYNC);
	io_uring_sqe_set_data(sqe, &q->op);
	b->stats.flush_ops++;
	return 0;
}

static int udev_allocate(struct vblk *b, uint64_t off, uint64_t len, struct vio_op *op)
{
	if (!op || !op->cb || len == 0)
		return -EINVAL;
	int rc = check_range(b, off, len);
	if (rc < 0)
		return rc;
	struct udev *d = to_udev(b);
	if (d->is_blkdev || d->bench_skip_reserve) {
		/* A block device's space is all there: nothing to reserve (and a
		 * benchmark may skip it: vblk_uring_bench_skip_reserve). */
		vreactor_defer(b->reactor, op, 0);
		return 0;
	}
	struct ureq *q = ureq_new(d, UREQ_ALLOC, 0, op);
	if (!q)
		return -ENOMEM;
	struct io_uring_sqe *sqe = vreactor_get_sqe(b->reactor);
	if (!sqe) {
		free(q);
		return -EBUSY;
	}
	io_uring_prep_fallocate(sqe, d->fd, 0, (off_t)off, (off_t)len);
	io_uring_sqe_set_data(sqe, &q->op);
	return 0;
}

/* ------------------------------------------------------------ size / grow */

static int fd_size(int fd, bool *is_blkdev, uint64_t *size)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		*is_blkdev = true;
		return ioctl(fd, BLKGETSIZE64, size) < 0 ? -errno : 0;
	}
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*is_blkdev = false;
	*size = (uint64_t)st.st_size;
	return 0;
}

static int udev_grow(struct vblk *b, uint64_t new_size)
{
	struct udev *d = to_udev(b);
	if (new_size < b->size || new_size % VBLK_SECTOR)
		return -EINVAL;
	if (d->is_blkdev) {
		bool blk;
		uint64_t now;
		int rc = fd_size(d->fd, &blk, &now);
		if (rc < 0)
			return rc;
		if (now < new_size)
			return -ENOSPC;
	} else if (new_size > b->size && ftruncate(d->fd, (off_t)new_size) < 0) {
		return -errno;
	}
	b->size = new_size;
	return 0;
}

static void udev_close(struct vblk *b)
{
	struct udev *d = to_udev(b);
	close(d->fd);
	free(d);
}

static const struct vblk_ops udev_ops = {
	.readv = udev_readv,
	.writev = udev_writev,
	.flush = udev_flush,
	.allocate = udev_allocate,
	.grow = udev_grow,
	.close = udev_close,
};

int vblk_uring_set_group_flush(struct vblk *b, unsigned max_inflight)
{
	if (!b || b->ops != &udev_ops || max_inflight > VBLK_GROUP_FLUSH_MAX)
		return -EINVAL;
	struct udev *d = to_udev(b);
	if (d->grouped_pending)
		return -EBUSY; /* only between operations */
	d->group_max = max_inflight;
	return 0;
}

int vblk_uring_group_flush(const struct vblk *b)
{
	if (!b || b->ops != &udev_ops)
		return -EINVAL;
	return (int)((const struct udev *)b)->group_max;
}

int vblk_uring_set_observer(struct vblk *b, vblk_uring_observer fn, void *arg)
{
	if (!b || b->ops != &udev_ops)
		return -EINVAL;
	to_udev(b)->observe = fn;
	to_udev(b)->observe_arg = arg;
	return 0;
}

int vblk_uring_bench_skip_reserve(struct vblk *b, bool skip)
{
	if (!b || b->ops != &udev_ops)
		return -EINVAL;
	to_udev(b)->bench_skip_reserve = skip;
	return 0;
}

/* -------------------------------------------------------------------- open */

static int open_direct(const char *path, uint64_t create_size, bool excl_blkdev)
{
	int flags = O_RDWR | O_DIRECT | O_CLOEXEC;
	if (create_size > 0)
		flags |= O_CREAT | O_EXCL;
	else if (excl_blkdev)
		flags |= O_EXCL; /* a block device: the kernel's exclusive claim (EBUSY if mounted or claimed) */
	int fd = open(path, flags, 0644);
	if (fd >= 0)
		return fd;
	int err = errno;
	if (err == EINVAL) {
		fprintf(stderr, "vaaid: %s: backing store does not support O_DIRECT\n", path);
		if (create_size > 0)
			unlink(path); /* O_EXCL: if something is there now, it is ours */
	}
	return -err;
}

/* A 512-byte direct read at offset 0 must work. */
static int probe_direct(int fd, const char *path)
{
	void *buf = vblk_alloc_buf(VBLK_ALIGN);
	if (!buf)
		return -ENOMEM;
	ssize_t n = pread(fd, buf, VBLK_SECTOR, 0);
	int err = n < 0 ? errno : 0;
	free(buf);
	if (n == (ssize_t)VBLK_SECTOR)
		return 0;
	fprintf(stderr, "vaaid: %s: backing store cannot do 512-byte direct I/O (%s)\n", path,
		n < 0 ? strerror(err) : "short read: store smaller than 512 bytes");
	return -EINVAL;
}

static int setup_file(int fd, const char *path, uint64_t create_size, bool *is_blkdev,
		      uint64_t *size)
{
	if (create_size > 0 && ftruncate(fd, (off_t)create_size) < 0)
		return -errno;
	int rc = fd_size(fd, is_blkdev, size);
	if (rc < 0)
		return rc;
	*size -= *size % VBLK_SECTOR;
	return probe_direct(fd, path);
}

/*
 * Does this file's file system serialize direct writes that are not aligned to
 * its 4 KiB blocks? ext4 did for every such write until Linux 6.4 (exclusive
 * inode lock + inode_dio_wait; "ext4: allow concurrent unaligned dio
 * overwrites" let pure overwrites run concurrently); measured on Debian 12's
 * 6.1: 512-byte DSYNC writes do not scale with queue depth at all
 * (docs/performance.md). XFS has let unaligned overwrites run concurrently
 * since 5.12 (IOMAP_DIO_OVERWRITE_ONLY). Other file systems: assumed not.
 */
static bool unaligned_dio_serializes(int fd)
{
	struct statfs fs;
	struct utsname u;
	unsigned major = 0, minor = 0;
	if (fstatfs(fd, &fs) < 0 || fs.f_type != EXT4_SUPER_MAGIC || uname(&u) < 0 ||
	    sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return false;
	return major < 6 || (major == 6 && minor < 4);
}

/* dir/name, a one-word sysfs attribute, into buf; 0 or -errno. */
static int read_attr(const char *dir, const char *name, char *buf, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int rc = vread_small_file(path, buf, len);
	return rc < 0 ? rc : 0;
}

/*
 * Should DSYNC writes to this store be made durable by group flushes? Only
 * where the kernel would otherwise flush a volatile cache once per write: the
 * device under the store (the file system's device for a file, a partition's
 * disk) reports queue/write_cache "write back" and queue/fua 0. With FUA
 * an RWF_DSYNC overwrite is one FUA write; with "write through" there is no
 * flush at all; a device the sysfs does not describe (a file system without
 * a block device, a stacked one we cannot find) keeps RWF_DSYNC too.
 * Returns 1 (group), 0 (per write), or -errno when sysfs does not say.
 */
int vblk_queue_wants_group_flush(const char *sysfs_root, unsigned major, unsigned minor)
{
	char dir[384], wc[32], fua[8];
	/* a whole disk has queue/ in its own directory, a partition in its parent's */
	snprintf(dir, sizeof(dir), "%s/dev/block/%u:%u/queue", sysfs_root, major, minor);
	int rc = read_attr(dir, "write_cache", wc, sizeof(wc));
	if (rc == -ENOENT) {
		snprintf(dir, sizeof(dir), "%s/dev/block/%u:%u/../queue", sysfs_root, major, minor);
		rc = read_attr(dir, "write_cache", wc, sizeof(wc));
	}
	if (rc == 0)
		rc = read_attr(dir, "fua", fua, sizeof(fua));
	if (rc < 0)
		return rc;
	if (strcmp(fua, "0") && strcmp(fua, "1"))
		return -EINVAL;
	if (!strcmp(wc, "write through"))
		return 0;
	if (strcmp(wc, "write back"))
		return -EINVAL;
	return !strcmp(fua, "0");
}

static unsigned detect_group_flush(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return 0;
	dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	return vblk_queue_wants_group_flush("/sys", major(dev), minor(dev)) == 1
		       ? VBLK_GROUP_FLUSH_DEFAULT : 0;
}

/*
 * One owner per store: an open file description lock on the whole store (F_OFD_SETLK;
 * write lock for owners, read lock for VBLK_OPEN_SHARED readers), so a second vaaid,
 * a second pool naming the same path, vaai-sim, or vaai-check on a pool in use is
 * refused instead of writing (or judging) a pool another process is writing. OFD
 * locks conflict between two opens in one process too, and the kernel drops them
 * when the last descriptor closes (a crash included). Advisory: tools that do not
 * lock (dd) are not stopped; block devices are also claimed with O_EXCL.
 */
static int lock_store(int fd, const char *path, bool shared)
{
	struct flock fl = {.l_type = shared ? F_RDLCK : F_WRLCK, .l_whence = SEEK_SET};
	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	int err = errno;
	if (err != EAGAIN && err != EACCES)
		return -err;
	fprintf(stderr, "vaaid: %s: in use (locked by a running vaaid, vaai-sim or vaai-check, "
			"or already open here)\n", path);
	return -EBUSY;
}

int vblk_uring_open(struct vreactor *r, const char *path, uint64_t create_size, struct vblk **out)
{
	return vblk_uring_open_flags(r, path, create_size, 0, out);
}

int vblk_uring_open_flags(struct vreactor *r, const char *path, uint64_t create_size,
			  unsigned flags, struct vblk **out)
{
	if (!r || !path || !out || create_size % VBLK_SECTOR || create_size > (uint64_t)INT64_MAX ||
	    (flags & ~VBLK_OPEN_SHARED) || (create_size && (flags & VBLK_OPEN_SHARED)))
		return -EINVAL;
	bool shared = flags & VBLK_OPEN_SHARED;
	struct stat st;
	bool excl_blkdev = !shared && create_size == 0 && stat(path, &st) == 0 && S_ISBLK(st.st_mode);
	int fd = open_direct(path, create_size, excl_blkdev);
	if (fd == -EBUSY && excl_blkdev)
		fprintf(stderr, "vaaid: %s: block device in use (mounted, or claimed by another "
				"process)\n", path);
	if (fd < 0)
		return fd;
	bool is_blkdev = false;
	uint64_t size = 0;
	int rc = lock_store(fd, path, shared);
	if (rc == 0)
		rc = setup_file(fd, path, create_size, &is_blkdev, &size);
	struct udev *d = rc < 0 ? NULL : calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		if (create_size > 0)
			unlink(path);
		return rc < 0 ? rc : -ENOMEM;
	}
	d->b.ops = &udev_ops;
	d->b.reactor = r;
	d->b.size = size;
	d->fd = fd;
	d->is_blkdev = is_blkdev;
	d->group_max = detect_group_flush(fd);
	vio_op_init(&d->kick_op, group_kick, d);
	for (unsigned i = 0; i < VBLK_GROUP_FLUSH_MAX; i++) {
		d->gf[i].d = d;
		vio_op_init(&d->gf[i].op, group_done, &d->gf[i]);
	}
	d->b.unaligned_writes_serialize = !is_blkdev && unaligned_dio_serializes(fd);
	*out = &d->b;
	return 0;
}
