/*
 * vaaid I/O layer (src/io): the reactor and the block-device API.
 *
 * How this works: one reactor per thread owns one io_uring. Everything that
 * waits (block I/O on the pool's backing store, readiness of a ring's event fd,
 * deferred callbacks) completes through the reactor as a callback
 * `cb(arg, res)`, with res = bytes transferred / 0 on success or -errno.
 * Submissions are batched: preparing an operation only fills an SQE; the
 * reactor submits all of them once per loop iteration (vreactor_run_once) or
 * when the submission queue is full.
 *
 * Block devices (struct vblk) sit on top of a reactor. Two implementations:
 *   - vblk_uring: a file or block device opened O_DIRECT, I/O through io_uring;
 *   - vblk_crashsim: a test device that keeps a "durable image" in memory and
 *     holds every write that is not yet durable, so that a simulated power
 *     loss can drop, reorder or tear (at 512-byte sectors) whatever was not
 *     made durable (the SQLite crash-VFS idea).
 * Durability contract (what the pool relies on):
 *   - a write submitted with VBLK_DSYNC is durable when its callback runs;
 *   - vblk_flush: every write whose callback ran before the flush was
 *     submitted is durable when the flush's callback runs;
 *   - a write whose callback has not run may, after a crash, be absent, fully
 *     present or present in any subset of its 512-byte sectors.
 * Buffers given to vblk I/O must be aligned to VBLK_ALIGN (address and length);
 * vblk_alloc_buf() returns such memory.
 */
#ifndef VAAID_IO_H
#define VAAID_IO_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define VBLK_SECTOR 512u
#define VBLK_ALIGN 4096u

typedef void (*vio_cb)(void *arg, int res);

/* Storage for one operation in flight; owned by the caller until cb runs. */
struct vio_op {
	vio_cb cb;
	void *arg;
	struct vio_op *next; /* reactor-internal (deferred queue) */
	int res;             /* reactor-internal (deferred result) */
};

static inline void vio_op_init(struct vio_op *op, vio_cb cb, void *arg)
{
	op->cb = cb;
	op->arg = arg;
	op->next = NULL;
	op->res = 0;
}

/* ---------------------------------------------------------------- reactor */
struct vreactor;

/* entries: io_uring queue depth (rounded up to a power of two). */
int vreactor_create(unsigned entries, struct vreactor **out);
void vreactor_destroy(struct vreactor *r);

/*
 * Submit what is queued, wait up to timeout_ms (-1 = forever, 0 = don't wait)
 * for at least one completion unless deferred callbacks are pending, then run
 * every available completion's callback. Returns the number of callbacks run,
 * or -errno (-EDEADLK: told to wait forever with nothing in flight and
 * nothing deferred, i.e. nothing could ever complete).
 */
int vreactor_run_once(struct vreactor *r, int timeout_ms);

/* Run the loop until *done becomes true (for synchronous wrappers). */
int vreactor_run_until(struct vreactor *r, const bool *done);

/* Run op->cb(op->arg, res) from the loop, not from inside this call. */
void vreactor_defer(struct vreactor *r, struct vio_op *op, int res);

/* One-shot: op->cb(arg, revents or -errno) when fd is readable. */
int vreactor_poll_fd(struct vreactor *r, int fd, struct vio_op *op);
/* The same for other poll(2) events (e.g. POLLOUT). */
int vreactor_poll_fd_events(struct vreactor *r, int fd, unsigned events, struct vio_op *op);

/*
 * One-shot timer: t->op's callback runs once ns nanoseconds have passed, with
 * res -ETIME (or -ECANCELED after vreactor_cancel(r, &t->op)). t must stay valid
 * until then (the kernel reads t->ts when the operation is submitted).
 */
struct vio_timer {
	struct vio_op op;
	struct {
		int64_t tv_sec;
		long long tv_nsec;
	} ts; /* struct __kernel_timespec */
};
int vreactor_timeout(struct vreactor *r, struct vio_timer *t, uint64_t ns);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t vclock_ns(void);

/* Raw io_uring access for other vio backends (src/io only). */
struct io_uring_sqe;
struct io_uring_sqe *vreactor_get_sqe(struct vreactor *r);

/* Operations submitted and not yet completed (for shutdown / tests). */
unsigned vreactor_inflight(const struct vreactor *r);

/*
 * Ask the kernel to cancel an operation submitted through this reactor's
 * io_uring (a poll, a read, ...), found by its vio_op. Returns 0 when the
 * cancel request was queued, or -errno. If the operation was still pending
 * its callback then runs with -ECANCELED; if it had already completed (or is
 * past the point where it can be stopped) its callback runs with its normal
 * result instead. Either way the callback runs exactly once. Deferred
 * callbacks (vreactor_defer) cannot be cancelled.
 */
int vreactor_cancel(struct vreactor *r, struct vio_op *op);

/* ------------------------------------------------------------ block device */
#define VBLK_DSYNC 0x1u /* the write is durable when it completes */
/* Accounting only (no effect on the I/O): the write is pool metadata (journal,
 * checkpoint, superblock) and is also counted in stats.meta_bytes_written. */
#define VBLK_META 0x2u

struct vblk;
struct vbuf_cache;

struct vblk_stats {
	uint64_t read_ops, write_ops, flush_ops;
	/* fsyncs vblk_uring issued to make VBLK_DSYNC writes durable (group flush),
	 * the writes batched for them (both counted when an fsync is prepared), and
	 * their summed time from preparation to completion (for benchmarks'
	 * diagnostics: writes per fsync, mean fsync) */
	uint64_t dsync_flushes, grouped_writes, dsync_flush_ns;
	/* summed time of reads and writes from submission until the kernel completed
	 * them (a grouped write: until written, its group fsync not included; an
	 * RWF_DSYNC write: including the kernel's flush); vblk_uring only */
	uint64_t read_ns, write_ns;
	uint64_t bytes_read, bytes_written;
	uint64_t discard_ops, bytes_discarded; /* completed discards (vblk_rbd) */
	uint64_t meta_bytes_written; /* the part of bytes_written written with VBLK_META */
	/* Writes whose offset or length is not a multiple of VBLK_ALIGN: a file system
	 * with 4 KiB blocks may serialize those (ext4 in Linux 6.1 drains all of the
	 * file's direct I/O for each), so the pool avoids them where it can. */
	uint64_t unaligned_writes;
};

struct vblk_ops {
	int (*readv)(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
		     struct vio_op *op);
	int (*writev)(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
		      unsigned flags, struct vio_op *op);
	int (*flush)(struct vblk *b, struct vio_op *op);
	/* Reserve backing space for [off, off+len) (fallocate mode 0). */
	int (*allocate)(struct vblk *b, uint64_t off, uint64_t len, struct vio_op *op);
	/* Grow the device to new_size bytes (synchronous; control path only). */
	int (*grow)(struct vblk *b, uint64_t new_size);
	void (*close)(struct vblk *b);
	/* vblk_close_live; NULL: close (nothing of the store's close blocks). */
	void (*close_live)(struct vblk *b);
	/* Give [off, off+len) back to the store (it reads zeros afterwards); NULL: the
	 * store cannot (vblk_discard answers -EOPNOTSUPP). */
	int (*discard)(struct vblk *b, uint64_t off, uint64_t len, struct vio_op *op);
	/* The parts of [off, off+len) that hold data in the store, by cb (in order;
	 * may over-report, e.g. whole RBD objects; cb's negative return stops it).
	 * Synchronous, control path only. NULL: the store cannot tell. */
	int (*mapped)(struct vblk *b, uint64_t off, uint64_t len,
		      int (*cb)(void *arg, uint64_t off, uint64_t len), void *arg);
};

struct vblk {
	const struct vblk_ops *ops;
	struct vreactor *reactor;
	uint64_t size; /* bytes */
	struct vblk_stats stats;
	/* Direct writes not aligned to VBLK_ALIGN stall the whole store here (ext4
	 * before Linux 6.4 takes the inode lock exclusive and drains all of the
	 * file's direct I/O for each): the pool then writes whole 4 KiB granules,
	 * reading what it does not overwrite first (vblk_uring sets it at open). */
	bool unaligned_writes_serialize;
	/* The store refused this client for good: another gateway took the store over
	 * and fenced this one (vblk_rbd: blocklisted, -ESHUTDOWN). Set by the store. */
	bool fenced;
	/* Large buffers lent by whoever made the device (vaaid/buf_cache.h: a fuzz
	 * target's, kept across its pools); NULL (the daemon): plain allocations. */
	struct vbuf_cache *bufs;
};

static inline int vblk_readv(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
			     struct vio_op *op)
{
	return b->ops->readv(b, iov, iovcnt, off, op);
}
static inline int vblk_writev(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
			      unsigned flags, struct vio_op *op)
{
	return b->ops->writev(b, iov, iovcnt, off, flags, op);
}
static inline int vblk_flush(struct vblk *b, struct vio_op *op) { return b->ops->flush(b, op); }
static inline int vblk_allocate(struct vblk *b, uint64_t off, uint64_t len, struct vio_op *op)
{
	return b->ops->allocate(b, off, len, op);
}
static inline int vblk_discard(struct vblk *b, uint64_t off, uint64_t len, struct vio_op *op)
{
	return b->ops->discard ? b->ops->discard(b, off, len, op) : -EOPNOTSUPP;
}
static inline int vblk_mapped(struct vblk *b, uint64_t off, uint64_t len,
			      int (*cb)(void *arg, uint64_t off, uint64_t len), void *arg)
{
	return b->ops->mapped ? b->ops->mapped(b, off, len, cb, arg) : -EOPNOTSUPP;
}
/*
 * Close a device with none of its operations in flight, or after destroying
 * its reactor (vreactor_destroy never runs callbacks): a reactor that runs on
 * after the close must not hold completions of the device.
 */
static inline void vblk_close(struct vblk *b)
{
	if (b)
		b->ops->close(b);
}

/*
 * The same for a device whose reactor runs on (the control path, e.g. a pool
 * closed and opened again after its creation): a store whose close blocks
 * (vblk_rbd: librbd's close releasing the image's lock, the cluster
 * connection's shutdown) waits for it on a worker thread while the reactor
 * serves everything else (voffload_run). Call it from the reactor's thread,
 * outside its callbacks.
 */
static inline void vblk_close_live(struct vblk *b)
{
	if (b)
		(b->ops->close_live ? b->ops->close_live : b->ops->close)(b);
}

/* Synchronous helpers for the control path (run the reactor until done). */
int vblk_pread_sync(struct vblk *b, void *buf, size_t len, uint64_t off);
int vblk_pwrite_sync(struct vblk *b, const void *buf, size_t len, uint64_t off, unsigned flags);
int vblk_flush_sync(struct vblk *b);
int vblk_allocate_sync(struct vblk *b, uint64_t off, uint64_t len); /* -EOPNOTSUPP: cannot reserve */

void *vblk_alloc_buf(size_t len); /* VBLK_ALIGN-aligned, zeroed; free with free() */

/*
 * Run fn(arg) on a short-lived worker thread and wait for it by running r (as
 * the synchronous helpers above do), so the reactor's other work (other LUNs'
 * rings, other pools' I/O) goes on while fn blocks (src/io/offload.c). For the
 * control path's blocking library calls (librados/librbd connect, open, lock
 * break, resize, close). Returns fn's result (negative errno or >= 0). Call it
 * from r's thread, outside r's callbacks. fn may touch only its own argument
 * (and thread-safe library handles in it), never r, a pool or a device the
 * reactor thread uses meanwhile. r NULL: fn runs in the caller. Without a
 * thread (pthread_create fails) fn also runs in the caller, blocking.
 */
typedef int (*voffload_fn)(void *arg);
int voffload_run(struct vreactor *r, voffload_fn fn, void *arg);

/*
 * vblk_uring: path is a regular file or a block device. create_size > 0
 * creates the file (O_EXCL, sparse, ftruncate to create_size); 0 opens an
 * existing one. Opened O_DIRECT; fails with a message on stderr naming the
 * problem when the store cannot do 512-byte direct I/O.
 */
int vblk_uring_open(struct vreactor *r, const char *path, uint64_t create_size, struct vblk **out);
/*
 * The same with flags. A store has one owner: vblk_uring_open takes an exclusive
 * lock on it (and claims a block device with O_EXCL); another open of it, in this
 * process or another, fails with -EBUSY (and a message on stderr) until the owner
 * closes it. VBLK_OPEN_SHARED (readers that write nothing, e.g. vaai-check): a
 * shared lock, refused while an owner holds the store and refusing owners meanwhile.
 */
#define VBLK_OPEN_SHARED 0x1u
int vblk_uring_open_flags(struct vreactor *r, const char *path, uint64_t create_size,
			  unsigned flags, struct vblk **out);
/*
 * Benchmarks only (vaai-bench vaai; the daemon never calls it): while skip is
 * true, vblk_allocate() on this vblk_uring file completes at once with 0 and
 * no fallocate, as for a block device. The benchmark maps hundreds of GiB of
 * extents with one 4 KiB write each into a sparse pool file far larger than
 * the free space of its file system; with the reservation every extent would
 * take 1 MiB of disk. The cost: a full file system is no longer turned into
 * -ENOSPC before the data write (writes may then fail with -EIO). Off by
 * default. -EINVAL if b is not a vblk_uring device.
 */
int vblk_uring_bench_skip_reserve(struct vblk *b, bool skip);

/*
 * How vblk_uring makes VBLK_DSYNC writes durable: written plain, then one
 * fdatasync per batch of completed writes, at most max_inflight of them in
 * flight; 0: RWF_DSYNC on each write (the kernel flushes once per write if the
 * device has a volatile cache without FUA). At open: VBLK_GROUP_FLUSH_DEFAULT
 * where vblk_queue_wants_group_flush says 1 for the store's device, else 0.
 * Setting it: only while no grouped write is in flight (-EBUSY otherwise);
 * -EINVAL if b is not a vblk_uring device or max_inflight > VBLK_GROUP_FLUSH_MAX.
 * vblk_uring_group_flush: the current value (or -EINVAL).
 */
#define VBLK_GROUP_FLUSH_DEFAULT 4u
#define VBLK_GROUP_FLUSH_MAX 8u
int vblk_uring_set_group_flush(struct vblk *b, unsigned max_inflight);
int vblk_uring_group_flush(const struct vblk *b);
/* From SYSFS_ROOT/dev/block/MAJOR:MINOR/queue (a partition: its disk's): 1 if
 * write_cache is "write back" and fua 0 (each RWF_DSYNC write would flush the
 * cache), 0 if "write through" or FUA, -errno if sysfs does not say. */
int vblk_queue_wants_group_flush(const char *sysfs_root, unsigned major, unsigned minor);

/* Tests: what happens to each DSYNC write under the group flush, in order:
 * WRITTEN (its write completed), BATCHED (its batch's fsync was prepared),
 * DURABLE (that fsync completed; the write's callback runs next). */
enum vblk_uring_event { VBLK_URING_EV_WRITTEN, VBLK_URING_EV_BATCHED, VBLK_URING_EV_DURABLE };
typedef void (*vblk_uring_observer)(void *arg, enum vblk_uring_event ev, const struct vio_op *write);
int vblk_uring_set_observer(struct vblk *b, vblk_uring_observer fn, void *arg);

/*
 * vblk_crashsim: the durable image starts as the content of path (if it
 * exists and create_size == 0) or as zeros of create_size bytes (the file is
 * created, must not exist). vblk_close() writes the durable image back to path
 * (sparse: zero 4 KiB blocks are left as holes).
 */
int vblk_crashsim_open(struct vreactor *r, const char *path, uint64_t create_size, uint64_t seed,
		       struct vblk **out);
/* Purely in memory (no file); for tests. */
int vblk_crashsim_create_mem(struct vreactor *r, uint64_t size, uint64_t seed, struct vblk **out);
/*
 * Images kept across crashsim devices (a fuzz target makes a device per input):
 * vblk_crashsim_create_on makes a memory device of the set's size on them (one
 * device at a time: -EBUSY), which starts as zeros like create_mem's; closing
 * it zeroes the 4 KiB blocks it wrote, so the pages stay and the next device
 * starts from zeros again. A device that grows takes copies of its own first.
 */
struct vblk_cs_images;
int vblk_cs_images_new(uint64_t size, struct vblk_cs_images **out);
void vblk_cs_images_free(struct vblk_cs_images *im); /* no device on it any more */
uint64_t vblk_cs_images_size(const struct vblk_cs_images *im);
int vblk_crashsim_create_on(struct vreactor *r, struct vblk_cs_images *im, uint64_t seed,
			    struct vblk **out);
/* In memory, its durable image starting as a copy of size bytes (as a file
 * holding them: zero 4 KiB blocks are holes); for tests and the fuzz targets. */
int vblk_crashsim_create_image(struct vreactor *r, const uint8_t *bytes, uint64_t size,
			       uint64_t seed, struct vblk **out);

/*
 * Arm a crash at the n-th write/flush submitted from now on (n >= 1); 0
 * disarms. When it fires, the device "loses power": every write not yet
 * durable is dropped, applied, or torn at 512-byte sectors, in random order;
 * from then on every operation fails with -EIO and no further callback of a
 * write or flush in flight is delivered. vblk_crashsim_crash_now() fires it
 * immediately.
 */
void vblk_crashsim_arm(struct vblk *b, uint64_t n);
/*
 * Pair two crashsim devices that lose power together (a pool's store and its
 * journal file): a crash of either crashes both at once, power_on of either
 * powers both on, and the leader's countdown (arm, io_count) counts the writes
 * and flushes of both. Each keeps its own durability (a flush or DSYNC write
 * of one makes nothing of the other durable). Closing one unpairs them.
 */
int vblk_crashsim_link(struct vblk *leader, struct vblk *follower);
void vblk_crashsim_crash_now(struct vblk *b);
bool vblk_crashsim_crashed(const struct vblk *b);
/*
 * After a crash: make the device usable again (power back on) with the
 * durable image as its content, attached to reactor r (which may be new).
 */
void vblk_crashsim_power_on(struct vblk *b, struct vreactor *r);
bool vblk_is_crashsim(const struct vblk *b);
/* Writes + flushes submitted to the device while powered so far (crash points). */
uint64_t vblk_crashsim_io_count(const struct vblk *b);
/* Simulate a full file system under the device: allocate (fallocate) of any range
 * ending past `limit` bytes completes with -ENOSPC; 0 removes the limit. Kept
 * across crashes (the same device powers on again). */
void vblk_crashsim_set_alloc_limit(struct vblk *b, uint64_t limit);
/*
 * Fault models beyond "dropped, applied or torn" (docs/crash.md); kept across
 * crashes, off by default. VBLK_CS_TRASH: a crash may also leave any sector of
 * an unsynced write as random bytes. VBLK_CS_LOST_ALLOC: an allocate or grow
 * survives a crash only once a flush submitted after it completed (a grow also
 * once a DSYNC write reaching past the durable size did: POSIX data integrity);
 * unsynced writes into 4 KiB blocks never durably mapped, or past the durable
 * size, are lost, and a lost grow leaves the device at its old size.
 */
#define VBLK_CS_TRASH 0x1u
#define VBLK_CS_LOST_ALLOC 0x2u
/* Self-tests of a crash oracle only: each crash also overwrites the first sector of
 * the last data write (DSYNC, not VBLK_META) that became durable with random bytes,
 * as a device that loses acknowledged data would. */
#define VBLK_CS_INJECT_GARBAGE 0x4u
void vblk_crashsim_set_faults(struct vblk *b, unsigned faults);
struct vblk_crashsim_fault_stats {
	uint64_t trashed_sectors;  /* sectors a crash left as random bytes */
	uint64_t unmapped_dropped; /* sectors a crash would have written, lost with the mapping */
	uint64_t lost_allocs;      /* allocations pending at a crash */
	uint64_t lost_grows;       /* grows pending at a crash */
	uint64_t injected;         /* sectors VBLK_CS_INJECT_GARBAGE overwrote */
};
void vblk_crashsim_fault_stats(const struct vblk *b, struct vblk_crashsim_fault_stats *st);

/*
 * vblk_rbd (src/io/vblk_rbd.c): a Ceph RBD image, spec "rbd:POOL/IMAGE", through
 * librbd's asynchronous API; completions come back on the reactor (librbd
 * signals an eventfd the reactor polls). conf NULL or fields NULL: librados'
 * defaults (CEPH_CONF, client "admin", the configuration's keyring).
 * create_size > 0 creates the image (-EEXIST if it exists); 0 opens it. The
 * image's exclusive lock is taken at open: an image another client holds
 * fails with -EBUSY (no automatic lock transitions). An open that takes the lock
 * first blocklists the previous holder its owner record names (rbd_owner.h,
 * vblk_rbd_owner_fence_needed) and records itself; if either fails, the open
 * fails (docs/ceph.md "A lock released cleanly"). librbd's cache is off, so a
 * write is durable (on the OSDs) when librbd acknowledges it: VBLK_DSYNC adds
 * nothing, flush is librbd's. A build without librbd answers -EPROTONOSUPPORT.
 */
struct vblk_rbd_conf {
	const char *conf_path; /* ceph.conf */
	const char *client_id; /* "admin" for client.admin */
	const char *keyring;
	unsigned alua_group; /* recorded in the owner record (rbd_owner.h); 0 = none */
	/* [alua] peers: the holder removes the fenced marks of groups outside
	 * alua_group + these (vblk_rbd_alua_mark_stale); none: every mark stays */
	const uint16_t *alua_peers;
	unsigned alua_n_peers;
	/* s: the bound of every monitor and OSD request of this client and of its
	 * connect (rados_mon_op_timeout, rados_osd_op_timeout, client_mount_timeout;
	 * docs/ceph.md "A cluster that does not answer"): a request the cluster does
	 * not answer fails with -ETIMEDOUT instead of waiting for ever. 0: the
	 * default, VBLK_RBD_OP_TIMEOUT_DEFAULT ([ceph] op_timeout). */
	unsigned op_timeout;
};
#define VBLK_RBD_OP_TIMEOUT_DEFAULT 30u
#define VBLK_RBD_OP_TIMEOUT_MAX 3600u
bool vblk_rbd_spec(const char *path); /* path names an RBD image ("rbd:" ...) */
int vblk_rbd_open(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
		  uint64_t create_size, struct vblk **out);
/* Open the image, taking its lock from the client that holds it: the lock is
 * broken and that client blocklisted on the OSDs (fenced: everything it sends
 * from then on fails with -ESHUTDOWN) before this one acquires it. Only on an
 * explicit decision (`vaaictl pool takeover`), never on I/O. */
int vblk_rbd_takeover(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
		      struct vblk **out);
/* Open the image read-only, without its lock (another gateway may hold it): a
 * standby gateway's look at the pool (its volumes' identity, docs/ceph.md "ALUA").
 * Writes fail (-EROFS); what is read may be older than the holder's newest writes. */
int vblk_rbd_open_readonly(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
			   struct vblk **out);
/* The owner record of spec's image (include/vaaid/rbd_owner.h; the image opened
 * without its lock): 0, -ENOENT (no record or no image), -EINVAL (damaged).
 * Runs r meanwhile (voffload_run; r NULL: blocks the caller). */
struct vblk_rbd_owner;
int vblk_rbd_owner_peek(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
			struct vblk_rbd_owner *out);
/* The pool watch (docs/ceph.md "ALUA"), from b's reactor thread outside its
 * callbacks; the librbd calls run on voffload_run's worker while the reactor
 * serves everything else (one OSD read each).
 * vblk_rbd_check_lock: does this client still hold the image's lock? 1: no --
 * another client holds it or this one is blocklisted: b is marked fenced
 * exactly as an I/O meeting the fence marks it (vblk.fenced, logged "FENCED");
 * 0: yes; -errno: not known; -EOPNOTSUPP: not an RBD store opened with its lock.
 * vblk_rbd_alua_get: the pool's shared ALUA record (rbd_owner.h: the owner's
 * group, the fenced groups) through b's open image (a standby view's too); a
 * fenced store reads it through a client of its own made at its first such
 * look (its own is blocklisted) and kept until it is closed. 0 (no record: an
 * empty one), -errno, -EOPNOTSUPP (not an RBD store). */
int vblk_rbd_check_lock(struct vblk *b);
struct vblk_rbd_alua;
int vblk_rbd_alua_get(struct vblk *b, struct vblk_rbd_alua *out);
/* Remove the image of spec (tests, and `pool create` undoing itself); -ENOENT if none. */
int vblk_rbd_remove(const char *spec, const struct vblk_rbd_conf *conf);
/* The same, waiting for librados/librbd by running r (voffload_run; r NULL: blocks). */
int vblk_rbd_remove_live(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf);

/*
 * A pool's store by its path (src/io/vblk_open.c): "rbd:POOL/IMAGE" opens the RBD
 * image (rbd: librados settings, may be NULL), anything else vblk_uring_open.
 * An image's librados/librbd calls that block run on a worker thread while the
 * caller runs r (voffload_run): call it from r's thread, outside its callbacks.
 * vblk_remove_store: unlink the file, or remove the image (r: as for the open;
 * NULL: the removal blocks the caller).
 */
int vblk_open_store(struct vreactor *r, const char *path, uint64_t create_size,
		    const struct vblk_rbd_conf *rbd, struct vblk **out);
int vblk_remove_store(struct vreactor *r, const char *path, const struct vblk_rbd_conf *rbd);

#endif
