/*
 * vblk_rbd: a pool's store on a Ceph RBD image, through librbd's asynchronous
 * API (issue 26; the contract of include/vaaid/io.h).
 *
 * How this works:
 *   - Open: a rados_t of its own (ceph.conf, client id, keyring; librbd's cache
 *     off, so librbd acknowledges a write only once the OSDs have it), the
 *     pool's I/O context, the image (created first when asked), then the
 *     image's exclusive lock (rbd_lock_acquire): the store has one writer, and
 *     a lock held by another client fails the open with -EBUSY at once. Taking
 *     the lock explicitly also turns librbd's automatic lock transitions off:
 *     another client's I/O does not move the lock away (tcmu-runner #341).
 *   - Completions: librbd finishes operations on its own threads. Each one is
 *     queued inside librbd for this image and signals an eventfd
 *     (rbd_set_image_notification); the reactor polls that eventfd (one-shot,
 *     armed only while operations are in flight, so a device with nothing in
 *     flight holds nothing in the reactor and can be closed after the reactor
 *     is gone); its callback resets the eventfd first, then takes every
 *     finished completion (rbd_poll_io_events) and runs the callers'
 *     callbacks on the reactor's thread. A completion finishing after the
 *     reset signals the eventfd again, so none is missed.
 *   - A request (struct rreq) holds the caller's op and a copy of the iovec
 *     array (the caller's may be gone before librbd reads it); it is freed
 *     before the caller's callback runs. Reads and writes complete with their
 *     full length or -errno; flush and discard with 0.
 *   - Fencing: once another gateway broke the lock and blocklisted this
 *     client, every operation fails with -ESHUTDOWN (Ceph's EBLOCKLISTED);
 *     the pool then fails (a journal write that fails marks it failed) and
 *     acknowledges nothing more. A lock released cleanly is not broken, so
 *     every open that takes the lock also blocklists the client the owner
 *     record names (the previous holder, unless it is the one just broken)
 *     before it records itself and serves (fence_previous): a write of that
 *     holder still queued in an OSD cannot land later.
 *   - The shared ALUA record (rbd_owner.h, docs/ceph.md "The shared ALUA
 *     record"): right after taking the lock the holder writes its group as the
 *     owner and marks the group whose lock it broke fenced; an open that finds
 *     the lock held (standby) removes this gateway's own fenced mark (librbd
 *     lets a client without the lock change metadata). vblk_rbd_alua_get reads
 *     the record, through a look client of its own once the store is fenced.
 *   - Blocking calls: librados' and librbd's synchronous calls (connect,
 *     create, open, the read-only open of a standby pool's view, lock
 *     acquire, the takeover's lock break and blocklist, the owner record,
 *     resize, close and shutdown, remove) take mon/OSD round trips: 1-2 s
 *     for a takeover (from a dead holder too: its lock is broken before the
 *     acquire, which would otherwise wait ~30 s for its watch). A cluster that
 *     does not answer fails each of them within the conf's op_timeout (every
 *     client's mon and OSD requests and connect: connect_cluster_timeout;
 *     docs/ceph.md "A cluster that does not answer"), so the worker always
 *     returns and the caller (a control request, the pool watch, a stop) with
 *     it. They run on voffload_run's worker thread (src/io/offload.c) while
 *     the caller runs the reactor, so every other LUN's I/O goes on.
 *     The worker touches only its job: a new rdev nobody else reaches until
 *     the open returns (*out is set afterwards, on the reactor's thread), the
 *     caller's conf, or the image handle (librbd takes a resize from one thread
 *     and I/O from another); the owner record's reads of /proc and /etc are
 *     thread-safe too. Re-entrancy while the caller waits (reviewed
 *     for the daemon, src/daemon/main.c): the reactor runs only callbacks --
 *     other LUNs' rings and pools' I/O, timers; control requests, netlink,
 *     D-Bus, metrics and signals only set flags that the outer loop handles
 *     after the operation, so no second control operation starts, and nothing
 *     reaches the pool being opened: a standby pool (takeover) has no LUN and
 *     stays standby until the open and recovery returned, a pool being created
 *     is not in the pool table yet, and a pool being grown serves its own I/O
 *     inside its old size (its state changes only after the resize). The
 *     systemd STATUS line (a timer) skips standby pools, and reads no pool
 *     once the daemon is stopping (vd_pools_close's closes). vaai-sim and the
 *     tools open with their engine stopped: the caller owns the reactor.
 *     Still on the caller's thread: vblk_close (callers whose reactor may be
 *     gone); the daemon closes stores, a standby view's too, with
 *     vblk_close_live (on the worker). vblk_rbd_owner_peek, rdev_mapped (the
 *     sweep's object-map walk) and the pool watch's reads
 *     (vblk_rbd_check_lock, vblk_rbd_alua_get) run on the worker too.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

#include "vaaid/io.h"
#include "vaaid/rbd_owner.h"
#include "vaaid/rbd_spec.h"
#include "vaaid/util.h"

struct rdev {
	struct vblk b;
	rados_t cluster;
	rados_ioctx_t io;
	rbd_image_t img;
	int efd;
	bool readonly;     /* vblk_rbd_open_readonly: a standby view, no lock of its own */
	/* A fenced store's look at the shared ALUA record (vblk_rbd_alua_get): its own
	 * client is blocklisted and cannot read anything, so the first look after the
	 * fence connects a new client (a new address: not blocklisted) and opens the
	 * image read-only; kept until the store is closed. Only the worker touches it. */
	rados_t look_cl;
	rados_ioctx_t look_io;
	rbd_image_t look_img;
	struct vblk_rbd_conf look_conf; /* the open's settings, copied (strings owned) */
	unsigned look_failures; /* failed look connects in a row */
	unsigned look_skip;     /* looks still skipped before the next try (back-off) */
	/* The lock's owner as rbd_lock_get_owners names this client, read right after
	 * this client acquired it ("" if that read failed): the pool watch's "another
	 * client holds the lock" compares owners with it, the same API's string, so
	 * a format difference can never fence a healthy gateway. */
	char self_owner[sizeof(((struct vblk_rbd_owner *)0)->addr)];
	bool armed;        /* the eventfd's poll is in the reactor (then inflight > 0) */
	bool draining;     /* in efd_ready: submissions from callbacks do not arm */
	uint64_t inflight; /* operations whose callback has not run */
	struct vio_op poll_op;
	char name[sizeof("rbd:") + sizeof(((struct vblk_rbd_name *)0)->pool) +
		  sizeof(((struct vblk_rbd_name *)0)->image)];
};

enum rreq_kind { RREQ_READ, RREQ_WRITE, RREQ_FLUSH, RREQ_DISCARD };

struct rreq {
	struct rdev *d;
	struct vio_op *user;
	enum rreq_kind kind;
	unsigned flags;
	uint64_t total;
	uint64_t t_sub;
	struct iovec iov[];
};

static struct rdev *to_rdev(struct vblk *b) { return (struct rdev *)b; }

/* The one fenced path (docs/ceph.md "One writer, fenced"): the store says so
 * (vblk.fenced: the pool fails every request from now on, the LUNs answer the
 * fenced state) and the log says so once. how: what found it (an I/O that met
 * the blocklist, or the lock check of an idle gateway, vblk_rbd_check_lock). */
static void mark_fenced(struct rdev *d, const char *how)
{
	if (d->b.fenced)
		return;
	d->b.fenced = true;
	vlog_err(d->name, "FENCED: another gateway took this image over (%s); nothing more "
			  "is written here", how);
}

/* ------------------------------------------------------------- completion */

static void rreq_complete(struct rreq *q, ssize_t ret)
{
	struct rdev *d = q->d;
	struct vio_op *user = q->user;
	int res = ret < 0 ? (int)ret : 0;
	if (ret == -ESHUTDOWN)
		mark_fenced(d, "an I/O was refused: the cluster blocklisted this client");
	if (res == 0 && (q->kind == RREQ_READ || q->kind == RREQ_WRITE))
		res = q->total > (uint64_t)INT32_MAX ? 0 : (int)q->total;
	if (ret >= 0 && q->kind == RREQ_READ) {
		d->b.stats.bytes_read += q->total;
		d->b.stats.read_ns += vclock_ns() - q->t_sub;
	}
	if (ret >= 0 && q->kind == RREQ_WRITE) {
		d->b.stats.bytes_written += q->total;
		d->b.stats.write_ns += vclock_ns() - q->t_sub;
		if (q->flags & VBLK_META)
			d->b.stats.meta_bytes_written += q->total;
	}
	if (ret >= 0 && q->kind == RREQ_DISCARD) {
		d->b.stats.discard_ops++;
		d->b.stats.bytes_discarded += q->total;
	}
	d->inflight--;
	free(q);
	user->cb(user->arg, res);
}

static void arm(struct rdev *d);

static void efd_ready(void *arg, int res)
{
	struct rdev *d = arg;
	d->armed = false;
	(void)res; /* an error (none expected) is treated as a wake-up: poll anyway */
	uint64_t v;
	if (read(d->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		vlog_warn(d->name, "reading the completion eventfd: %s", strerror(errno));
	rbd_completion_t done[32];
	int n;
	/* Callbacks submit more; what finishes meanwhile is taken by this loop. The
	 * poll is armed once, after it, only if something is still in flight: a poll
	 * armed for an operation this loop then completed would stay in the reactor
	 * with nothing to wake it for, and fire after the device is closed. */
	d->draining = true;
	while ((n = rbd_poll_io_events(d->img, done, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			struct rreq *q = rbd_aio_get_arg(done[i]);
			ssize_t ret = rbd_aio_get_return_value(done[i]);
			rbd_aio_release(done[i]);
			rreq_complete(q, ret);
		}
	}
	d->draining = false;
	arm(d);
}

/* The eventfd's poll, while something is in flight (see the top of this file):
 * armed implies inflight > 0 outside efd_ready, so a device with nothing in
 * flight has nothing in the reactor. */
static void arm(struct rdev *d)
{
	if (d->armed || d->draining || d->inflight == 0)
		return;
	vio_op_init(&d->poll_op, efd_ready, d);
	int rc = vreactor_poll_fd(d->b.reactor, d->efd, &d->poll_op);
	if (rc < 0) { /* no SQE now: look again from the loop */
		vreactor_defer(d->b.reactor, &d->poll_op, rc);
	}
	d->armed = true;
}

/* ------------------------------------------------------------- operations */

static int check_range(const struct vblk *b, uint64_t off, uint64_t len)
{
	if (off % VBLK_SECTOR || len % VBLK_SECTOR || off > b->size || len > b->size - off)
		return -EINVAL;
	return 0;
}

static struct rreq *rreq_new(struct rdev *d, enum rreq_kind kind, int iovcnt, struct vio_op *user)
{
	struct rreq *q = calloc(1, sizeof(*q) + (size_t)iovcnt * sizeof(struct iovec));
	if (!q)
		return NULL;
	q->d = d;
	q->kind = kind;
	q->user = user;
	q->t_sub = vclock_ns();
	return q;
}

/* Hand q to librbd (start: the call that submits with the completion). */
static int rreq_start(struct rreq *q, rbd_completion_t *c)
{
	int rc = rbd_aio_create_completion(q, NULL, c);
	if (rc < 0)
		free(q);
	return rc;
}

static void rreq_started(struct rdev *d, struct rreq *q, rbd_completion_t c, int rc, int *out)
{
	if (rc < 0) {
		rbd_aio_release(c);
		free(q);
		*out = rc;
		return;
	}
	d->inflight++;
	arm(d);
	*out = 0;
}

static int rdev_rw(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
		   unsigned flags, struct vio_op *op, enum rreq_kind kind)
{
	struct rdev *d = to_rdev(b);
	if (!op || !op->cb || iovcnt <= 0 || !iov)
		return -EINVAL;
	uint64_t total = 0;
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	int rc = check_range(b, off, total);
	if (rc < 0 || total == 0)
		return rc < 0 ? rc : -EINVAL;
	struct rreq *q = rreq_new(d, kind, iovcnt, op);
	if (!q)
		return -ENOMEM;
	memcpy(q->iov, iov, (size_t)iovcnt * sizeof(*iov));
	q->flags = flags;
	q->total = total;
	rbd_completion_t c;
	rc = rreq_start(q, &c);
	if (rc < 0)
		return rc;
	if (kind == RREQ_READ)
		rc = rbd_aio_readv(d->img, q->iov, iovcnt, off, c);
	else
		rc = rbd_aio_writev(d->img, q->iov, iovcnt, off, c);
	int out;
	rreq_started(d, q, c, rc, &out);
	if (out == 0) {
		if (kind == RREQ_READ)
			b->stats.read_ops++;
		else
			b->stats.write_ops++;
	}
	return out;
}

static int rdev_readv(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
		      struct vio_op *op)
{
	return rdev_rw(b, iov, iovcnt, off, 0, op, RREQ_READ);
}

static int rdev_writev(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
		       unsigned flags, struct vio_op *op)
{
	/* VBLK_DSYNC: nothing more to do, librbd's cache is off (see the top) */
	return rdev_rw(b, iov, iovcnt, off, flags, op, RREQ_WRITE);
}

static int rdev_flush(struct vblk *b, struct vio_op *op)
{
	struct rdev *d = to_rdev(b);
	if (!op || !op->cb)
		return -EINVAL;
	struct rreq *q = rreq_new(d, RREQ_FLUSH, 0, op);
	if (!q)
		return -ENOMEM;
	rbd_completion_t c;
	int rc = rreq_start(q, &c), out;
	if (rc < 0)
		return rc;
	rreq_started(d, q, c, rbd_aio_flush(d->img, c), &out);
	if (out == 0)
		b->stats.flush_ops++;
	return out;
}

static int rdev_discard(struct vblk *b, uint64_t off, uint64_t len, struct vio_op *op)
{
	struct rdev *d = to_rdev(b);
	if (!op || !op->cb || len == 0)
		return -EINVAL;
	int rc = check_range(b, off, len);
	if (rc < 0)
		return rc;
	struct rreq *q = rreq_new(d, RREQ_DISCARD, 0, op);
	if (!q)
		return -ENOMEM;
	q->total = len;
	rbd_completion_t c;
	int out;
	rc = rreq_start(q, &c);
	if (rc < 0)
		return rc;
	rreq_started(d, q, c, rbd_aio_discard(d->img, off, len, c), &out);
	return out;
}

struct mapped_walk {
	rbd_image_t img;
	uint64_t off, len, obj; /* obj: the image's object size */
	int (*cb)(void *arg, uint64_t off, uint64_t len);
	void *arg;
};

/* One existing range, reported object by object (a caller can then tell an
 * object that holds nothing it uses from one that it partly uses). */
static int mapped_one(uint64_t off, size_t len, int exists, void *arg)
{
	struct mapped_walk *w = arg;
	int rc = 0;
	for (uint64_t o = off, end = off + len; exists && rc >= 0 && o < end;) {
		uint64_t next = w->obj ? (o / w->obj + 1) * w->obj : end;
		if (next > end)
			next = end;
		rc = w->cb(w->arg, o, next - o);
		o = next;
	}
	return rc;
}

/* On voffload_run's worker (without fast-diff the walk asks every object):
 * only the walk, its image handle and the caller's collecting callback. */
static int mapped_blocking(void *arg)
{
	struct mapped_walk *w = arg;
	rbd_image_info_t info;
	int rc = rbd_stat(w->img, &info, sizeof(info));
	if (rc < 0)
		return rc;
	w->obj = info.obj_size;
	return rbd_diff_iterate2(w->img, NULL, w->off, w->len, 0, 1, mapped_one, w);
}

/* Whole objects that exist (rbd_diff_iterate2 against the image's beginning,
 * whole_object: the object map answers, no per-object request), one call of cb
 * per object, from a worker thread while the reactor runs: cb must only
 * collect. */
static int rdev_mapped(struct vblk *b, uint64_t off, uint64_t len,
		       int (*cb)(void *arg, uint64_t off, uint64_t len), void *arg)
{
	struct rdev *d = to_rdev(b);
	int rc = check_range(b, off, len);
	if (rc < 0)
		return rc;
	struct mapped_walk w = {.img = d->img, .off = off, .len = len, .cb = cb, .arg = arg};
	return voffload_run(d->b.reactor, mapped_blocking, &w);
}

static int rdev_allocate(struct vblk *b, uint64_t off, uint64_t len, struct vio_op *op)
{
	if (!op || !op->cb || len == 0)
		return -EINVAL;
	int rc = check_range(b, off, len);
	if (rc < 0)
		return rc;
	/* Ceph cannot reserve space ahead: nothing to do (as for a block device). */
	vreactor_defer(b->reactor, op, 0);
	return 0;
}

struct resize_job {
	rbd_image_t img;
	uint64_t size;
};

static int resize_blocking(void *arg)
{
	struct resize_job *j = arg;
	return rbd_resize(j->img, j->size);
}

static int rdev_grow(struct vblk *b, uint64_t new_size)
{
	struct rdev *d = to_rdev(b);
	if (new_size < b->size || new_size % VBLK_SECTOR)
		return -EINVAL;
	if (new_size > b->size) {
		/* a mon/OSD round trip or more: on a worker, while the reactor serves the
		 * rest (also this pool's I/O, inside the old size; librbd's image handle
		 * takes I/O and a resize from different threads) */
		struct resize_job rj = {.img = d->img, .size = new_size};
		int rc = voffload_run(b->reactor, resize_blocking, &rj);
		if (rc < 0)
			return rc;
	}
	b->size = new_size;
	return 0;
}

static void disconnect(struct rdev *d)
{
	if (d->look_img)
		rbd_close(d->look_img);
	if (d->look_io)
		rados_ioctx_destroy(d->look_io);
	if (d->look_cl)
		rados_shutdown(d->look_cl);
	if (d->img)
		rbd_close(d->img); /* waits for librbd's own in-flight work */
	if (d->io)
		rados_ioctx_destroy(d->io);
	if (d->cluster)
		rados_shutdown(d->cluster);
	if (d->efd >= 0)
		close(d->efd);
}

/*
 * Operations still in flight at close (the reactor destroyed first, as
 * vblk_close allows; the crash suite's kills on RBD do it): wait for librbd to
 * finish them and free them without their callbacks, whose reactor is gone.
 * A fenced client's fail at once; after 10 s of silence they are left.
 */
static void drop_inflight(struct rdev *d)
{
	while (d->inflight > 0 && d->img && d->efd >= 0) {
		struct pollfd p = {.fd = d->efd, .events = POLLIN};
		uint64_t v;
		if (poll(&p, 1, 10000) <= 0 || read(d->efd, &v, sizeof(v)) < 0)
			return;
		rbd_completion_t done[32];
		int n;
		while ((n = rbd_poll_io_events(d->img, done, 32)) > 0) {
			for (int i = 0; i < n; i++) {
				free(rbd_aio_get_arg(done[i]));
				rbd_aio_release(done[i]);
				d->inflight--;
			}
		}
	}
}

static void free_rdev(struct rdev *d)
{
	free((char *)d->look_conf.conf_path);
	free((char *)d->look_conf.client_id);
	free((char *)d->look_conf.keyring);
	free(d);
}

static void rdev_close(struct vblk *b)
{
	struct rdev *d = to_rdev(b);
	drop_inflight(d);
	disconnect(d);
	free_rdev(d);
}

static int disconnect_blocking(void *arg)
{
	disconnect(arg);
	return 0;
}

/* vblk_close_live: librbd's close (the lock's release: an OSD round trip) and the
 * cluster connection's shutdown on a worker, while the reactor serves the rest. */
static void rdev_close_live(struct vblk *b)
{
	struct rdev *d = to_rdev(b);
	voffload_run(b->reactor, disconnect_blocking, d);
	free_rdev(d);
}

static const struct vblk_ops rdev_ops = {
	.readv = rdev_readv,
	.writev = rdev_writev,
	.flush = rdev_flush,
	.allocate = rdev_allocate,
	.grow = rdev_grow,
	.close = rdev_close,
	.close_live = rdev_close_live,
	.discard = rdev_discard,
	.mapped = rdev_mapped,
};

/* ------------------------------------------------------------------- open */

/* mount_max: at most this many s for the connect (client_mount_timeout: how long
 * it waits for the monitors): the conf's op_timeout, shorter for a fenced store's
 * look client (VBLK_RBD_LOOK_MOUNT_TIMEOUT). The same op_timeout bounds every
 * later monitor command (a lock break's blocklist) and OSD request (lock, watch,
 * metadata, I/O) of the client: docs/ceph.md "A cluster that does not answer". */
static int connect_cluster_timeout(const struct vblk_rbd_conf *conf, const char *pool,
				   rados_t *cl, rados_ioctx_t *io, unsigned mount_max)
{
	const char *id = conf && conf->client_id ? conf->client_id : NULL;
	int rc = rados_create(cl, id);
	if (rc < 0)
		return rc;
	rc = rados_conf_read_file(*cl, conf ? conf->conf_path : NULL);
	if (rc < 0 && conf && conf->conf_path) {
		fprintf(stderr, "vblk_rbd: cannot read %s: %s\n", conf->conf_path, strerror(-rc));
		return rc;
	}
	if (conf && conf->keyring && (rc = rados_conf_set(*cl, "keyring", conf->keyring)) < 0)
		return rc;
	/* durable when acknowledged: no write-back cache in this process */
	if ((rc = rados_conf_set(*cl, "rbd_cache", "false")) < 0)
		return rc;
	/* a discard reads zeros afterwards, also where it covers an object partly
	 * (librbd's default skips those parts: they would keep their data) */
	if ((rc = rados_conf_set(*cl, "rbd_skip_partial_discard", "false")) < 0)
		return rc;
	/* a lock break blocklists the holder first (and fails if it cannot): set
	 * here, so the fence does not depend on the cluster's configuration */
	if ((rc = rados_conf_set(*cl, "rbd_blocklist_on_break_lock", "true")) < 0)
		return rc;
	unsigned op = conf && conf->op_timeout ? conf->op_timeout : VBLK_RBD_OP_TIMEOUT_DEFAULT;
	char opv[16], mountv[16];
	snprintf(opv, sizeof(opv), "%u", op);
	snprintf(mountv, sizeof(mountv), "%u", op < mount_max ? op : mount_max);
	if ((rc = rados_conf_set(*cl, "client_mount_timeout", mountv)) < 0 ||
	    (rc = rados_conf_set(*cl, "rados_mon_op_timeout", opv)) < 0 ||
	    (rc = rados_conf_set(*cl, "rados_osd_op_timeout", opv)) < 0)
		return rc;
	if ((rc = rados_connect(*cl)) < 0) {
		fprintf(stderr, "vblk_rbd: cannot connect to the Ceph cluster: %s\n", strerror(-rc));
		return rc;
	}
	rc = rados_ioctx_create(*cl, pool, io);
	if (rc < 0)
		fprintf(stderr, "vblk_rbd: no Ceph pool '%s': %s\n", pool, strerror(-rc));
	return rc;
}

static int connect_cluster(const struct vblk_rbd_conf *conf, const char *pool, rados_t *cl,
			   rados_ioctx_t *io)
{
	return connect_cluster_timeout(conf, pool, cl, io, VBLK_RBD_OP_TIMEOUT_MAX);
}

/*
 * Take the image's exclusive lock from its holder (vblk_rbd_takeover): break
 * the lock, which first blocklists the holder's client on the OSDs (librbd's
 * rbd_blocklist_on_break_lock, set on every client here: the break fails if
 * the blocklist does), then acquire. (Until session 21 the holder was also
 * blocklisted a second time explicitly: one more monitor commit, ~1 s of
 * every takeover, for an option this code now sets itself.) From the moment the
 * blocklist is committed, every operation of the old holder fails with
 * -ESHUTDOWN (Ceph's EBLOCKLISTED), also those already in flight that the
 * OSDs had not applied: a gateway that was only cut off cannot write after.
 */
static int break_lock(struct rdev *d, char *broken, size_t cap)
{
	rbd_lock_mode_t mode;
	char *owners[4];
	size_t n = 4;
	int rc = rbd_lock_get_owners(d->img, &mode, owners, &n);
	if (rc == -ENOENT || (rc == 0 && n == 0))
		return 0; /* released meanwhile */
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++) {
		vlog_warn(d->name, "taking over: breaking the lock of %s and blocklisting it",
			  owners[i]);
		rc = rbd_lock_break(d->img, RBD_LOCK_MODE_EXCLUSIVE, owners[i]);
		if (rc == -ENOENT)
			rc = 0; /* gone already */
		if (rc == 0 && n == 1)
			snprintf(broken, cap, "%s", owners[i]); /* blocklisted by the break */
	}
	rbd_lock_get_owners_cleanup(owners, n);
	return rc;
}

/* The image's owner record (rbd_owner.h): 0, -ENOENT (none), -EINVAL (damaged). */
static int owner_get(rbd_image_t img, struct vblk_rbd_owner *o)
{
	char buf[VBLK_RBD_OWNER_MAX];
	size_t len = sizeof(buf);
	int rc = rbd_metadata_get(img, VBLK_RBD_OWNER_KEY, buf, &len);
	if (rc == -ERANGE)
		return -EINVAL; /* longer than any record this code writes */
	if (rc < 0)
		return rc;
	buf[len < sizeof(buf) ? len : sizeof(buf) - 1] = '\0';
	return vblk_rbd_owner_parse(buf, o);
}

/* How many clients hold the image's lock (*n), and the first one's Ceph client
 * address into out (empty if none). 0 or -errno. */
static int lock_owners(struct rdev *d, char *out, size_t cap, size_t *n)
{
	rbd_lock_mode_t mode;
	char *owners[4];
	*n = 4;
	out[0] = '\0';
	int rc = rbd_lock_get_owners(d->img, &mode, owners, n);
	if (rc == -ENOENT) { /* no lock */
		*n = 0;
		return 0;
	}
	if (rc < 0)
		return rc;
	if (*n > 0)
		snprintf(out, cap, "%s", owners[0]);
	rbd_lock_get_owners_cleanup(owners, *n);
	return 0;
}

/*
 * The lock is held by one other client, owner (its address): is it this
 * machine's dead earlier vaaid (a restart after a crash)? Only when the owner record names the
 * lock's current owner exactly (its client address: a record a later holder
 * has not replaced yet names someone else), that address is on an IP of this
 * host, the record's machine is this one, and that process is gone (another
 * boot, or its pid + start time no longer running). Then it is taken back
 * like a takeover (broken, blocklisted, acquired); otherwise the pool is
 * standby until an explicit takeover.
 */
static bool holder_is_dead_predecessor(struct rdev *d, const char *owner)
{
	struct vblk_rbd_owner holder, me;
	if (owner_get(d->img, &holder) < 0 || vblk_rbd_owner_self(&me, 0, NULL) < 0)
		return false;
	if (strcmp(owner, holder.addr) || !vblk_rbd_addr_is_local(holder.addr, NULL))
		return false; /* the record is not the holder's, or the holder is elsewhere */
	if (!vblk_rbd_owner_is_dead_local(&holder, &me, vblk_rbd_owner_process_alive))
		return false;
	vlog_warn(d->name, "the lock is held by this machine's vaaid pid %d %s (%s), which is "
		  "gone (a restart after a crash): taking it back", holder.pid,
		  strcmp(holder.boot, me.boot) ? "of an earlier boot" : "of this boot", holder.addr);
	return true;
}

/* The ALUA group of the client whose lock is being broken (owner: its address),
 * from the owner record, only when the record is that client's; 0: not known. */
static uint16_t holder_group(struct rdev *d, const char *owner)
{
	struct vblk_rbd_owner holder;
	if (!owner[0] || owner_get(d->img, &holder) < 0 || strcmp(owner, holder.addr) ||
	    holder.group > UINT16_MAX)
		return 0;
	return (uint16_t)holder.group;
}

/*
 * Remove key from the image's metadata with a raw omap operation on its header
 * object ("rbd_header.<id>", where librbd keeps metadata under "metadata_" +
 * key; removing a missing key is a no-op, 0). Never rbd_metadata_remove on a
 * handle without the lock: librbd sends a non-owner's metadata update to the
 * lock owner and, when that one does not answer (dead, cut off, stopped),
 * acquires the lock itself -- breaking it and blocklisting the holder, a
 * fence nobody decided (or a start that hangs while the holder is alive but
 * does not answer). The raw operation bypasses the exclusive lock entirely.
 */
static int metadata_remove_raw(struct rdev *d, const char *key)
{
	char id[64], oid[sizeof("rbd_header.") + sizeof(id)], omkey[128];
	int rc = rbd_get_id(d->img, id, sizeof(id));
	if (rc < 0)
		return rc;
	snprintf(oid, sizeof(oid), "rbd_header.%s", id);
	if ((size_t)snprintf(omkey, sizeof(omkey), "metadata_%s", key) >= sizeof(omkey))
		return -ENAMETOOLONG;
	const char *keys[1] = {omkey};
	rados_write_op_t op = rados_create_write_op();
	if (!op)
		return -ENOMEM;
	rados_write_op_assert_exists(op); /* no header object is made by this */
	rados_write_op_omap_rm_keys(op, keys, 1);
	rc = rados_write_op_operate(op, d->io, oid, NULL, 0);
	rados_release_write_op(op);
	return rc;
}

/* Remove group g's fenced mark (if any) from the shared ALUA record, also from
 * a client that does not hold the lock (a standby: metadata_remove_raw). */
static void alua_unfence(struct rdev *d, unsigned g)
{
	char key[sizeof(VBLK_RBD_ALUA_FENCED_KEY) + 12]; /* (%u: up to 10 digits) */
	snprintf(key, sizeof(key), VBLK_RBD_ALUA_FENCED_KEY "%u", g);
	int rc = metadata_remove_raw(d, key);
	if (rc < 0)
		vlog_warn(d->name, "cannot remove %s from the image: %s", key, strerror(-rc));
}

/* rbd_metadata_list from start (at most max entries) into buffers it allocates
 * (*keys and *vals, NULL on entry: the caller frees both, on failure too) of *kl
 * and *vl bytes to begin with. The listing starts at start but is not limited to
 * keys with that prefix (the owner record's value may follow, and other keys):
 * when the buffers are short librbd says how much it needs (-ERANGE), and the
 * list is read again, three tries in all. */
static int metadata_list(rbd_image_t img, const char *start, uint64_t max, char **keys,
			 size_t *kl, char **vals, size_t *vl)
{
	int rc = -ERANGE;
	for (int tries = 0; tries < 3 && rc == -ERANGE; tries++) {
		free(*keys);
		free(*vals);
		*keys = malloc(*kl);
		*vals = malloc(*vl);
		rc = *keys && *vals ? rbd_metadata_list(img, start, max, *keys, kl, *vals, vl) : -ENOMEM;
	}
	return rc;
}

/* The holder's removal of stale fenced marks (vblk_rbd_alua_mark_stale: groups
 * outside its [alua] group and peers), after its record is written. One list of
 * up to 64 marks per open (more are removed at the next opens); failures are
 * logged: a stale mark left only crowds the list, as before. */
static void alua_prune_stale(struct rdev *d, const struct vblk_rbd_conf *conf, uint16_t broken)
{
	if (!conf || !conf->alua_n_peers || !conf->alua_peers)
		return;
	size_t kl = 4096, vl = 4096;
	char *keys = NULL, *vals = NULL;
	int rc = metadata_list(d->img, VBLK_RBD_ALUA_FENCED_KEY, 64, &keys, &kl, &vals, &vl);
	for (size_t k = 0; rc == 0 && k < kl && keys[k]; k += strlen(keys + k) + 1) {
		if (strnlen(keys + k, kl - k) == kl - k)
			break; /* not NUL-terminated: the list's end */
		if (!vblk_rbd_alua_mark_stale(keys + k, conf->alua_group, broken, conf->alua_peers,
					      conf->alua_n_peers))
			continue;
		rc = metadata_remove_raw(d, keys + k);
		if (rc == 0)
			vlog_info(d->name, "removed the stale ALUA mark %s (no gateway of [alua] "
				  "group and peers answers for that group)", keys + k);
	}
	if (rc < 0)
		vlog_warn(d->name, "cannot remove stale ALUA marks: %s", strerror(-rc));
	free(keys);
	free(vals);
}

/* The lock holder's part of the shared ALUA record (rbd_owner.h), right after
 * the lock is taken: the group it fenced (broken: the broken holder's, 0 for
 * none or not known) marked first, its own mark removed, then itself as the
 * owner, so that a reader between two writes never sees the new owner without
 * the old one's fence. Failures are logged: the other paths then keep their
 * last record until the next open (docs/ceph.md). */
static void alua_record_owner(struct rdev *d, unsigned own, uint16_t broken)
{
	char key[sizeof(VBLK_RBD_ALUA_FENCED_KEY) + 12], val[16]; /* (%u: up to 10 digits) */
	int rc = 0;
	snprintf(val, sizeof(val), "%u", own);
	if (broken && broken != own) {
		snprintf(key, sizeof(key), VBLK_RBD_ALUA_FENCED_KEY "%u", broken);
		rc = rbd_metadata_set(d->img, key, val);
	}
	if (own)
		alua_unfence(d, own);
	if (rc == 0)
		rc = rbd_metadata_set(d->img, VBLK_RBD_ALUA_OWNER_KEY, val);
	if (rc < 0)
		vlog_warn(d->name, "cannot write the ALUA record on the image: %s", strerror(-rc));
}

/* This client's Ceph address (rados_getaddrs: "IP:PORT/NONCE"), one instance
 * (vblk_rbd_addr_instance) or -EADDRNOTAVAIL: the owner record must name it. */
static int self_addr(struct rdev *d, char *out, size_t cap)
{
	char *addr = NULL;
	int rc = rados_getaddrs(d->cluster, &addr);
	if (rc == 0 && (strlen(addr) >= cap || !vblk_rbd_addr_instance(addr)))
		rc = -EADDRNOTAVAIL;
	if (rc == 0)
		snprintf(out, cap, "%s", addr);
	else
		vlog_err(d->name, "this client's Ceph address (%s) is not one client instance: "
			 "the next holder could not fence it; not serving", addr ? addr : "none");
	if (addr)
		rados_buffer_free(addr);
	return rc;
}

/*
 * The previous holder's fence (docs/ceph.md "One writer, fenced"), right after
 * the lock is taken and before the record, recovery or any write: the client
 * the owner record names -- the last vaaid that held the lock and recorded
 * itself before writing anything -- is blocklisted on the OSDs unless it is
 * this client or the one the lock break just blocklisted
 * (vblk_rbd_owner_fence_needed). A lock released cleanly needs no break, so
 * without this a write of that holder still queued in an OSD (it timed out:
 * its pool failed, nothing more acknowledged, then a normal stop released the
 * lock) could land over this holder's acknowledged writes. The blocklist
 * names that client instance (its nonce), no one else, with the expiry the
 * lock break uses (rbd_blocklist_expire_seconds; 0: the cluster's
 * osd_blocklist_default_expire); then this client waits for the latest OSD
 * map (rados_wait_for_latest_osdmap), so its own requests from now on carry an
 * epoch with the entry, and the OSDs refuse the old client before them.
 * A record that names no single client, or a blocklist that fails, fails the
 * open: never serve unfenced.
 */
static int fence_previous(struct rdev *d, const char *self, const char *broken)
{
	struct vblk_rbd_owner rec;
	int rc = owner_get(d->img, &rec);
	if (rc < 0 && rc != -ENOENT && rc != -EINVAL) {
		vlog_err(d->name, "cannot read the owner record, so cannot fence the previous "
			 "holder: %s", strerror(-rc));
		return rc;
	}
	int need = rc == -EINVAL ? -EINVAL
				 : vblk_rbd_owner_fence_needed(rc == 0 ? &rec : NULL, self, broken);
	if (need < 0) {
		vlog_err(d->name, "the owner record (%s) names no single Ceph client, so the previous "
			 "holder cannot be fenced; not serving (after making sure that holder is "
			 "stopped: rbd image-meta remove IMAGE " VBLK_RBD_OWNER_KEY ")",
			 VBLK_RBD_OWNER_KEY);
		return need;
	}
	if (need == 0)
		return 0;
	char expire[16] = "0";
	if (rados_conf_get(d->cluster, "rbd_blocklist_expire_seconds", expire, sizeof(expire)) < 0)
		snprintf(expire, sizeof(expire), "0");
	vlog_warn(d->name, "fencing the previous holder %s (pid %d, its owner record) before "
		  "serving: blocklisting it", rec.addr, rec.pid);
	rc = rados_blocklist_add(d->cluster, rec.addr, (uint32_t)strtoul(expire, NULL, 10));
	if (rc == 0) /* (librados waits for the map itself too: not relied on) */
		rc = rados_wait_for_latest_osdmap(d->cluster);
	if (rc < 0)
		vlog_err(d->name, "cannot blocklist the previous holder %s: %s; not serving",
			 rec.addr, strerror(-rc));
	return rc;
}

/* Record this process as the holder (self: its Ceph address), after the lock is
 * taken and the previous holder fenced, before anything is written: the next
 * holder fences whom this names (fence_previous), so a failure fails the open. */
static int owner_set(struct rdev *d, const struct vblk_rbd_conf *conf, const char *self)
{
	struct vblk_rbd_owner me;
	char buf[VBLK_RBD_OWNER_MAX];
	int rc = vblk_rbd_owner_self(&me, conf ? conf->alua_group : 0, self);
	if (rc == 0)
		rc = vblk_rbd_owner_format(&me, buf, sizeof(buf));
	if (rc == 0)
		rc = rbd_metadata_set(d->img, VBLK_RBD_OWNER_KEY, buf);
	if (rc < 0)
		vlog_err(d->name, "cannot record this gateway as the image's owner: %s; not serving",
			 strerror(-rc));
	return rc;
}

struct peek_job {
	struct vblk_rbd_name nm;
	const struct vblk_rbd_conf *conf;
	struct vblk_rbd_owner *out;
};

/* On voffload_run's worker: only the job and its own librados handles. */
static int peek_blocking(void *arg)
{
	struct peek_job *j = arg;
	rados_t cl = NULL;
	rados_ioctx_t io = NULL;
	rbd_image_t img = NULL;
	int rc = connect_cluster(j->conf, j->nm.pool, &cl, &io);
	if (rc == 0)
		rc = rbd_open_read_only(io, j->nm.image, &img, NULL);
	if (rc == 0) {
		rc = owner_get(img, j->out);
		rbd_close(img);
	}
	if (io)
		rados_ioctx_destroy(io);
	if (cl)
		rados_shutdown(cl);
	return rc;
}

int vblk_rbd_owner_peek(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
			struct vblk_rbd_owner *out)
{
	struct peek_job j = {.conf = conf, .out = out};
	if (!out || vblk_rbd_parse(spec, &j.nm) < 0)
		return -EINVAL;
	return voffload_run(r, peek_blocking, &j);
}

static int open_image(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
		      uint64_t create_size, bool takeover, struct vblk **out);

int vblk_rbd_open(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
		  uint64_t create_size, struct vblk **out)
{
	return open_image(r, spec, conf, create_size, false, out);
}

int vblk_rbd_takeover(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
		      struct vblk **out)
{
	return open_image(r, spec, conf, 0, true, out);
}

/* What open_blocking needs and makes (its only data while it runs on the worker). */
struct open_job {
	const struct vblk_rbd_conf *conf;
	struct vblk_rbd_name nm;
	uint64_t create_size;
	bool takeover;
	struct rdev *d; /* new, reached by nobody else until the open returns */
	uint64_t size;
};

/* The blocking part of an open, on voffload_run's worker: connect, create,
 * open, lock (breaking the holder's on a takeover), the completion eventfd.
 * Failing, it undoes all of it (a created image is removed again). */
static int open_blocking(void *arg)
{
	struct open_job *j = arg;
	struct rdev *d = j->d;
	int rc = connect_cluster(j->conf, j->nm.pool, &d->cluster, &d->io);
	if (rc < 0)
		goto fail;
	if (j->create_size) {
		/* 1 MiB objects (librbd's default is 4 MiB): a pool extent of 1 MiB or more
		 * then covers whole objects, and its discard removes them, which gives the
		 * space back on every OSD store (a part of an object is only zeroed, and
		 * memstore, the tests' store, keeps zeroed parts). The default features
		 * (layering, exclusive-lock, object-map, fast-diff, deep-flatten). */
		int order = 20;
		rc = rbd_create(d->io, j->nm.image, j->create_size, &order);
		if (rc < 0) {
			fprintf(stderr, "vblk_rbd: cannot create %s: %s\n", d->name, strerror(-rc));
			goto fail;
		}
	}
	rc = rbd_open(d->io, j->nm.image, &d->img, NULL);
	if (rc < 0) {
		fprintf(stderr, "vblk_rbd: cannot open %s: %s\n", d->name, strerror(-rc));
		d->img = NULL;
		goto fail;
	}
	/*
	 * A plain open never takes a lock another client holds: librbd's acquire
	 * would wait for the holder and, once its watch has lapsed (~30 s; a gateway
	 * cut off from the cluster as much as a dead one), break the lock and
	 * blocklist it -- a takeover nobody decided (issue 26 item 2). So a held
	 * lock means standby at once, unless the owner record says the holder is
	 * this machine's vaaid that is gone: that one is taken back at once.
	 */
	bool take = j->takeover;
	unsigned own = j->conf ? j->conf->alua_group : 0;
	char owner[sizeof(((struct vblk_rbd_owner *)0)->addr)];
	size_t n;
	rc = lock_owners(d, owner, sizeof(owner), &n);
	if (rc < 0 && !take)
		goto fail;
	if (!take) {
		if (n > 0 && !(n == 1 && holder_is_dead_predecessor(d, owner))) {
			rc = -EROFS;
			/* standby here: a fence of this gateway's from before is over */
			if (own)
				alua_unfence(d, own);
			goto refused;
		}
		take = n > 0;
	}
	/* whose lock is broken: its group is marked fenced in the ALUA record */
	uint16_t broken = take && rc == 0 && n == 1 ? holder_group(d, owner) : 0;
	char broken_addr[sizeof(owner)] = "";
	rc = take ? break_lock(d, broken_addr, sizeof(broken_addr)) : 0;
	if (rc == 0)
		rc = rbd_lock_acquire(d->img, RBD_LOCK_MODE_EXCLUSIVE);
	if (rc == -EROFS && j->takeover) { /* taken by a third client meanwhile */
		rc = break_lock(d, broken_addr, sizeof(broken_addr));
		if (rc == 0)
			rc = rbd_lock_acquire(d->img, RBD_LOCK_MODE_EXCLUSIVE);
	}
refused:
	if (rc < 0) {
		fprintf(stderr, "vblk_rbd: %s: %s\n", d->name,
			rc == -EROFS ? "its exclusive lock is held by another client (another gateway "
				       "serves this pool; `vaaictl pool takeover` breaks it)"
				     : strerror(-rc));
		rc = rc == -EROFS ? -EBUSY : rc;
		goto fail;
	}
	size_t held;
	if (lock_owners(d, d->self_owner, sizeof(d->self_owner), &held) < 0 || held != 1)
		d->self_owner[0] = '\0'; /* not known: the watch then relies on the blocklist */
	/* the previous holder fenced, then this one recorded, before anything is
	 * written or served (recovery runs after the open returns) */
	char self[sizeof(owner)];
	if ((rc = self_addr(d, self, sizeof(self))) < 0 ||
	    (rc = fence_previous(d, self, broken_addr)) < 0 || (rc = owner_set(d, j->conf, self)) < 0)
		goto fail;
	alua_record_owner(d, own, broken);
	alua_prune_stale(d, j->conf, broken);
	if ((rc = rbd_get_size(d->img, &j->size)) < 0 ||
	    (d->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
	    (rc = rbd_set_image_notification(d->img, d->efd, EVENT_TYPE_EVENTFD)) < 0) {
		rc = rc < 0 ? rc : -errno;
		fprintf(stderr, "vblk_rbd: %s: %s\n", d->name, strerror(-rc));
		goto fail;
	}
	return 0;
fail:
	if (j->create_size && rc != -EEXIST && d->io) {
		if (d->img) {
			rbd_close(d->img);
			d->img = NULL;
		}
		rbd_remove(d->io, j->nm.image); /* undo the create */
	}
	disconnect(d);
	return rc;
}

/* The blocking part of a read-only open, on voffload_run's worker (as
 * open_blocking: j->d is new, reached by nobody else). */
static int open_readonly_blocking(void *arg)
{
	struct open_job *j = arg;
	struct rdev *d = j->d;
	int rc = connect_cluster(j->conf, j->nm.pool, &d->cluster, &d->io);
	if (rc == 0 && (rc = rbd_open_read_only(d->io, j->nm.image, &d->img, NULL)) < 0)
		d->img = NULL;
	if (rc == 0 && (rc = rbd_get_size(d->img, &j->size)) == 0 &&
	    (d->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
		rc = -errno;
	if (rc == 0)
		rc = rbd_set_image_notification(d->img, d->efd, EVENT_TYPE_EVENTFD);
	if (rc < 0) {
		fprintf(stderr, "vblk_rbd: %s (read-only): %s\n", d->name, strerror(-rc));
		disconnect(d);
	}
	return rc;
}

/* Open j's image with fn on the offload worker (librados' and librbd's calls
 * block for seconds: mon and OSD round trips, a cluster that does not answer
 * within [ceph] op_timeout, 30 s by default) while r serves everything else. */
static int open_offloaded(struct vreactor *r, struct open_job *j, voffload_fn fn,
			  struct vblk **out)
{
	struct rdev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->efd = -1;
	snprintf(d->name, sizeof(d->name), "rbd:%s/%s", j->nm.pool, j->nm.image);
	j->d = d;
	const struct vblk_rbd_conf *c = j->conf;
	if (c && ((c->conf_path && !(d->look_conf.conf_path = strdup(c->conf_path))) ||
		  (c->client_id && !(d->look_conf.client_id = strdup(c->client_id))) ||
		  (c->keyring && !(d->look_conf.keyring = strdup(c->keyring))))) {
		free_rdev(d);
		return -ENOMEM;
	}
	if (c)
		d->look_conf.op_timeout = c->op_timeout;
	int rc = voffload_run(r, fn, j);
	if (rc < 0) {
		free_rdev(d);
		return rc;
	}
	d->b.ops = &rdev_ops;
	d->b.reactor = r;
	d->b.size = j->size - j->size % VBLK_SECTOR;
	*out = &d->b;
	return 0;
}

/* A standby gateway's read-only look (no lock: rbd_open_read_only). Kept apart
 * from open_image, whose lock handling it does not share. */
int vblk_rbd_open_readonly(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
			   struct vblk **out)
{
	struct open_job j = {.conf = conf};
	if (!r || !out || vblk_rbd_parse(spec, &j.nm) < 0)
		return -EINVAL;
	int rc = open_offloaded(r, &j, open_readonly_blocking, out);
	if (rc == 0)
		to_rdev(*out)->readonly = true;
	return rc;
}

static int open_image(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
		      uint64_t create_size, bool takeover, struct vblk **out)
{
	struct open_job j = {.conf = conf, .create_size = create_size, .takeover = takeover};
	if (!r || !out || vblk_rbd_parse(spec, &j.nm) < 0 || create_size % VBLK_SECTOR)
		return -EINVAL;
	return open_offloaded(r, &j, open_blocking, out);
}

struct remove_job {
	const struct vblk_rbd_conf *conf;
	struct vblk_rbd_name nm;
};

static int remove_blocking(void *arg)
{
	struct remove_job *j = arg;
	rados_t cl = NULL;
	rados_ioctx_t io = NULL;
	int rc = connect_cluster(j->conf, j->nm.pool, &cl, &io);
	if (rc == 0)
		rc = rbd_remove(io, j->nm.image);
	if (io)
		rados_ioctx_destroy(io);
	if (cl)
		rados_shutdown(cl);
	return rc;
}

int vblk_rbd_remove_live(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf)
{
	struct remove_job j = {.conf = conf};
	if (vblk_rbd_parse(spec, &j.nm) < 0)
		return -EINVAL;
	return voffload_run(r, remove_blocking, &j);
}

int vblk_rbd_remove(const char *spec, const struct vblk_rbd_conf *conf)
{
	return vblk_rbd_remove_live(NULL, spec, conf);
}

/* ------------------------------------------------ the pool watch (docs/ceph.md "ALUA") */

/* On voffload_run's worker: the lock's owners, through the image handle only
 * (thread-safe; the reactor's thread may run this image's I/O meanwhile). 1:
 * this client is blocklisted (every OSD request fails with -ESHUTDOWN, Ceph's
 * EBLOCKLISTED); 2: another client holds the lock (the owner string is not the
 * one the same call gave right after this client acquired it, d->self_owner);
 * 0: still this client's, or not known whose (no string of our own was
 * recorded: only the blocklist is trusted then); -errno: not known (e.g. the
 * cluster does not answer). No holder at all is 0: a takeover leaves a holder
 * (or this client blocklisted); a moment without one is not taken for a fence. */
static int lock_check_blocking(void *arg)
{
	struct rdev *d = arg;
	char owner[sizeof(d->self_owner)];
	size_t n;
	int rc = lock_owners(d, owner, sizeof(owner), &n);
	if (rc == -ESHUTDOWN)
		return 1;
	if (rc < 0 || n == 0 || !d->self_owner[0])
		return rc;
	return strcmp(owner, d->self_owner) ? 2 : 0;
}

int vblk_rbd_check_lock(struct vblk *b)
{
	if (!b || b->ops != &rdev_ops)
		return -EOPNOTSUPP;
	struct rdev *d = to_rdev(b);
	if (d->readonly)
		return -EOPNOTSUPP;
	if (b->fenced)
		return 1;
	int rc = voffload_run(b->reactor, lock_check_blocking, d);
	if (rc <= 0)
		return rc;
	/* the flag is set here, on the reactor's thread */
	mark_fenced(d, rc == 1 ? "its lock check, while idle, was refused: blocklisted"
			       : "its lock check, while idle, found another client holding the lock");
	return 1;
}

/* On voffload_run's worker: the shared ALUA record through the store's own
 * image handle, or, for a fenced store (use_look), through the look client
 * (made at the first such look). */
struct alua_job {
	struct rdev *d;
	bool use_look;
	struct vblk_rbd_alua *out;
};

static int alua_blocking(void *arg)
{
	struct alua_job *j = arg;
	struct rdev *d = j->d;
	rbd_image_t img = d->img;
	if (j->use_look) {
		if (!d->look_img) {
			/* backing off after failed connects: a cut-off gateway's watch
			 * (the daemon's main loop) waits for one only now and then */
			if (d->look_skip) {
				d->look_skip--;
				return -EAGAIN;
			}
			struct vblk_rbd_name nm;
			int rc = vblk_rbd_parse(d->name, &nm);
			if (rc == 0)
				rc = connect_cluster_timeout(&d->look_conf, nm.pool, &d->look_cl,
							     &d->look_io, VBLK_RBD_LOOK_MOUNT_TIMEOUT);
			if (rc == 0)
				rc = rbd_open_read_only(d->look_io, nm.image, &d->look_img, NULL);
			d->look_failures = rc < 0 ? d->look_failures + 1 : 0;
			d->look_skip = vblk_rbd_look_backoff(d->look_failures);
			if (rc < 0) {
				d->look_img = NULL;
				if (d->look_io)
					rados_ioctx_destroy(d->look_io);
				if (d->look_cl)
					rados_shutdown(d->look_cl);
				d->look_io = NULL;
				d->look_cl = NULL;
				return rc;
			}
		}
		img = d->look_img;
	}
	/* the owner first, on its own: stale fenced.* keys sort before it and may push
	 * it past the list's bound (the list then names no owner). Read before the
	 * list, so a new owner is never taken without the fence it wrote before
	 * itself; the same parse rule (a one-entry list) */
	struct vblk_rbd_alua own_only;
	char ov[16];
	size_t ol = sizeof(ov);
	int orc = rbd_metadata_get(img, VBLK_RBD_ALUA_OWNER_KEY, ov, &ol);
	if (orc < 0 && orc != -ENOENT && orc != -ERANGE)
		return orc;
	if (orc < 0)
		ol = 0; /* none, or too long to be a group id */
	ov[ol < sizeof(ov) ? ol : sizeof(ov) - 1] = '\0';
	vblk_rbd_alua_parse(VBLK_RBD_ALUA_OWNER_KEY, sizeof(VBLK_RBD_ALUA_OWNER_KEY), ov,
			    strlen(ov) + 1, &own_only);
	/* the record's keys sort first after the prefix: the fenced groups, the
	 * owner, then perhaps vaaid.owner (VBLK_RBD_OWNER_MAX) and others */
	size_t kl = 1024, vl = 4096;
	char *keys = NULL, *vals = NULL;
	int rc = metadata_list(img, VBLK_RBD_ALUA_PREFIX, VBLK_RBD_ALUA_MAX_FENCED + 2, &keys, &kl,
			       &vals, &vl);
	if (rc == 0) {
		vblk_rbd_alua_parse(keys, kl, vals, vl, j->out);
		if (!j->out->owner) /* not within the list's bound */
			j->out->owner = own_only.owner;
	}
	free(keys);
	free(vals);
	return rc;
}

int vblk_rbd_alua_get(struct vblk *b, struct vblk_rbd_alua *out)
{
	if (!b || b->ops != &rdev_ops)
		return -EOPNOTSUPP;
	struct alua_job j = {.d = to_rdev(b), .use_look = b->fenced, .out = out};
	return voffload_run(b->reactor, alua_blocking, &j);
}
