/*
 * vblk_crashsim: a crash-simulating block device (the SQLite crash-VFS idea).
 *
 * How this works:
 *   - Two images of the whole device: "visible" (what reads return: every
 *     write applied at submission, in submission order) and "durable" (what
 *     survives a power loss). Both are anonymous mappings (img_map), so
 *     untouched pages cost nothing; not malloc'd, because under ASan an
 *     allocation that large is a fresh mapping whose shadow is written at
 *     allocation and again at free (a fuzz target makes and drops a device per
 *     input: a third of its page faults). A PROT_NONE page after each image
 *     keeps an overrun a fault. A device made on a vblk_cs_images (a pair of
 *     images kept by the caller across devices: a fuzz target makes a device
 *     per input) uses those instead: every write into either image marks its
 *     4 KiB blocks in the set's dirty map (mark_dirty: the durable image only
 *     ever changes where a write was), and closing the device
 *     zeroes exactly the blocks marked, so the next device starts from zeros
 *     as a fresh one does, without fresh pages (test_io_crashsim checks that
 *     every kind of write is undone).
 *   - Every write is also kept in a pending list (seq order) with a copy of
 *     its data until it becomes durable: a DSYNC write when its callback runs;
 *     any write whose callback ran before a flush was submitted, when that
 *     flush's callback runs (a logical clock orders callbacks and flush
 *     submissions). When a write becomes durable, the overlapping part of each
 *     older pending write is overwritten with the newer data, so applying the
 *     older one later can never resurrect stale bytes. The copies come from
 *     the device's lent buffer cache (struct vblk's bufs, vbuf_take: kept
 *     across devices by a fuzz target or the crash suite, so a 576 KiB write is
 *     not a fresh mapping under ASan each time) and go back to it; with none
 *     (the daemon), malloc.
 *   - Completions are never delivered from inside the submitting call: they
 *     go into a device-owned FIFO, and a "kick" (a NOP SQE on the reactor whose
 *     user_data is the device's embedded vio_op) delivers the FIFO from the
 *     reactor loop. A NOP instead of vreactor_defer keeps the device free of
 *     any pointer into a reactor's queue: if the reactor is destroyed with the
 *     kick in flight, nothing dangles; if it survives, an extra kick finds an
 *     empty FIFO.
 *   - Crash (armed countdown over write/flush submissions, or crash_now):
 *     each pending write, in a random order from a seeded splitmix64, is
 *     dropped, applied, or torn (every 512-byte sector applied or not).
 *     Fault models (vblk_crashsim_set_faults, all off by default):
 *     VBLK_CS_TRASH adds a fourth outcome, "trashed": each sector old, new or
 *     random bytes -- random only where the write changes the bytes (not a
 *     rewrite of the same bytes, not a sector a newer durable write covers:
 *     patch_older gave it the newer data). VBLK_CS_LOST_ALLOC makes file-system
 *     metadata volatile too: an allocate (fallocate) and a grow (size change)
 *     are pending until a flush submitted after them completes; a DSYNC write
 *     makes the blocks it covers mapped, and a pending grow's size when the write
 *     reaches past the durable size (POSIX data integrity: the size is then
 *     needed to read it back; ext4 and XFS commit the size with any fdatasync,
 *     but the engine must not count on that).
 *     At the crash, pending allocations are lost, the size falls back to the
 *     durable one, and the sectors of pending writes that lie in 4 KiB blocks
 *     never durably mapped (a hole or an unwritten extent reads zeros) or past
 *     the durable size are dropped, whatever the outcome drawn for them. The
 *     device is then dead: every operation in flight (the one that fired the
 *     crash included) and every later one completes with -EIO, so that a
 *     caller waiting synchronously (vpool_grow's checkpoint) gets its answer
 *     instead of hanging; nothing it writes lands. A generation counter makes
 *     a delivery batch already taken off the FIFO notice a crash that happens
 *     in one of its callbacks (the rest of the batch then fails too).
 *   - power_on: visible := durable, the FIFO is freed (its callers belong to
 *     the old life), attach to the given reactor.
 *   - close: write the durable image back to the file (non-zero 4 KiB blocks
 *     only, so zero blocks stay holes) and free everything. Close (like any
 *     device) must not be followed by running a reactor that still holds one
 *     of its kicks; destroying that reactor is fine.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <liburing.h>

#include "vaaid/buf_cache.h"
#include "vaaid/io.h"
#include "vaaid/rng.h"

#define CS_BLOCK 4096u

struct pwrite { /* a write that is not durable yet */
	struct pwrite *prev, *next;
	uint64_t seq, off;
	size_t len;
	bool dsync, meta, cb_done;
	uint64_t done_clock; /* when its callback ran */
	struct vbuf_cache *from; /* the device's bufs when it was made (pwrite_free) */
	uint8_t data[];
};

/* VBLK_CS_LOST_ALLOC: an allocate or grow not yet made durable by a flush. */
struct pmeta {
	struct pmeta *next;
	bool grow;           /* a size change to len; else an allocation of [off, off+len) */
	uint64_t off, len;
	uint64_t done_clock; /* when it completed */
};

enum cs_kind { CS_READ, CS_WRITE, CS_FLUSH, CS_ALLOC };

struct cs_comp { /* a completion waiting for delivery */
	struct cs_comp *next;
	enum cs_kind kind;
	struct vio_op *user;
	int res;
	struct pwrite *pw;    /* CS_WRITE */
	uint64_t flush_clock; /* CS_FLUSH: submission time */
	uint64_t alloc_off, alloc_len; /* CS_ALLOC */
};

/* Images kept across devices (the dirty map: a bit per CS_BLOCK written since reset). */
struct vblk_cs_images {
	uint8_t *visible, *durable;
	uint64_t size;
	uint8_t *dirty;
	bool busy; /* a device uses them */
	uint64_t uses; /* devices made on them: every CS_ZERO_CHECK_EVERY-th checks the reset */
};

/* A tripwire for the dirty map: a write path that forgot to mark its blocks would
 * leave bytes that the next device (the next fuzz input) sees as its own. Checking
 * every image whole at every use would cost more than the reset saves. */
#define CS_ZERO_CHECK_EVERY 64

struct csdev {
	struct vblk b;
	struct vblk_cs_images *im; /* the images are im's (NULL: the device's own) */
	uint8_t *visible, *durable;
	size_t vis_cap, dur_cap; /* their sizes (img_map); b.size may lag after a failed grow */
	char *path; /* NULL: memory only */
	struct pwrite *p_head, *p_tail;
	size_t npending;
	struct cs_comp *c_head, *c_tail;
	struct vio_op kick;
	bool kick_pending;
	/* dead and io_count are also read by other threads (a test polling for the
	 * crash while an engine thread runs the device): atomic. */
	atomic_bool dead;
	_Atomic uint64_t io_count;
	uint64_t gen, seq, clock, arm_left, rng;
	uint64_t alloc_limit; /* 0: none; else allocate past this offset fails (ENOSPC) */
	unsigned faults;      /* VBLK_CS_* */
	uint64_t dur_size;    /* the size a power loss leaves (VBLK_CS_LOST_ALLOC) */
	uint8_t *mapped;      /* bit per CS_BLOCK: durably allocated (tracked always) */
	struct pmeta *meta;   /* pending allocations and grows, newest first */
	struct vblk_crashsim_fault_stats fst;
	uint64_t last_data_off; /* VBLK_CS_INJECT_GARBAGE: last durable DSYNC data write + 1 */
	/* vblk_crashsim_link: the other device of a pair that loses power together;
	 * the leader (follower == false) counts both devices' crash points. */
	struct csdev *peer;
	bool follower;
};

static const struct vblk_ops cs_ops;

static int meta_add(struct csdev *d, bool grow, uint64_t off, uint64_t len);
static uint64_t round_up_block(uint64_t x) { return (x + CS_BLOCK - 1) / CS_BLOCK * CS_BLOCK; }

static struct csdev *to_cs(struct vblk *b) { return (struct csdev *)b; }

/* --------------------------------------------------------- pending writes */

static void pending_unlink(struct csdev *d, struct pwrite *pw)
{
	if (pw->prev)
		pw->prev->next = pw->next;
	else
		d->p_head = pw->next;
	if (pw->next)
		pw->next->prev = pw->prev;
	else
		d->p_tail = pw->prev;
	d->npending--;
}

static void pending_append(struct csdev *d, struct pwrite *pw)
{
	pw->next = NULL;
	pw->prev = d->p_tail;
	if (d->p_tail)
		d->p_tail->next = pw;
	else
		d->p_head = pw;
	d->p_tail = pw;
	d->npending++;
}

/* Back to the cache it came from (vbuf_take: kept across devices), or freed. */
static void pwrite_free(struct pwrite *pw)
{
	if (pw)
		vbuf_give(pw->from, pw, sizeof(*pw) + pw->len);
}

static void pending_free_all(struct csdev *d)
{
	while (d->p_head) {
		struct pwrite *pw = d->p_head;
		pending_unlink(d, pw);
		pwrite_free(pw);
	}
}

/* Older pending writes take the newer data where they overlap pw. */
static void patch_older(struct csdev *d, const struct pwrite *pw)
{
	for (struct pwrite *q = d->p_head; q && q->seq < pw->seq; q = q->next) {
		uint64_t lo = q->off > pw->off ? q->off : pw->off;
		uint64_t qe = q->off + q->len, pe = pw->off + pw->len;
		uint64_t hi = qe < pe ? qe : pe;
		if (lo < hi)
			memcpy(q->data + (lo - q->off), pw->data + (lo - pw->off), hi - lo);
	}
}

/* ------------------------------------------------- file-system metadata */

static bool is_mapped(const struct csdev *d, uint64_t off)
{
	uint64_t k = off / CS_BLOCK;
	return d->mapped[k / 8] >> (k % 8) & 1;
}

static void map_range(struct csdev *d, uint64_t off, uint64_t len)
{
	if (!len)
		return;
	for (uint64_t k = off / CS_BLOCK; k <= (off + len - 1) / CS_BLOCK; k++)
		d->mapped[k / 8] |= (uint8_t)(1u << (k % 8));
}

static void meta_free_all(struct csdev *d)
{
	while (d->meta) {
		struct pmeta *m = d->meta;
		d->meta = m->next;
		free(m);
	}
}

/* Pending metadata completed before clock. A flush: all of it. A DSYNC write
 * (need_end != 0): only grows, and only when the write reaches past the durable
 * size -- the size is then metadata needed to read that data back (POSIX
 * synchronized I/O data integrity); a DSYNC write inside the old size need not
 * commit a size change (ext4 and XFS happen to, which the engine must not rely
 * on: vpool_grow flushes). */
static void meta_durable(struct csdev *d, uint64_t clock, uint64_t need_end)
{
	bool grows_only = need_end != 0;
	if (grows_only && need_end <= d->dur_size)
		return;
	for (struct pmeta **pp = &d->meta; *pp;) {
		struct pmeta *m = *pp;
		if (m->done_clock >= clock || (grows_only && !m->grow)) {
			pp = &m->next;
			continue;
		}
		if (m->grow) {
			if (m->len > d->dur_size)
				d->dur_size = m->len;
		} else {
			map_range(d, m->off, m->len);
		}
		*pp = m->next;
		free(m);
	}
}

/* Bytes [off, off+len) are written: with kept images, their blocks are zeroed at
 * close. Called where bytes enter the device (cs_writev, create_image): whatever
 * else changes an image (a write made durable, a crash's applied, torn or trashed
 * sectors, injected garbage) changes bytes a write covered before. */
static void mark_dirty(struct csdev *d, uint64_t off, uint64_t len)
{
	if (!d->im || !len)
		return;
	for (uint64_t blk = off / CS_BLOCK; blk <= (off + len - 1) / CS_BLOCK; blk++)
		d->im->dirty[blk / 8] |= (uint8_t)(1u << (blk % 8));
}

static void make_durable(struct csdev *d, struct pwrite *pw)
{
	memcpy(d->durable + pw->off, pw->data, pw->len);
	map_range(d, pw->off, pw->len); /* a durable write maps what it covers */
	if (pw->dsync && !pw->meta)
		d->last_data_off = pw->off + 1;
	if (pw->dsync)
		meta_durable(d, pw->done_clock, pw->off + pw->len); /* the size it needs */
	patch_older(d, pw);
	pending_unlink(d, pw);
	pwrite_free(pw);
}

/* Flush: every write whose callback ran before the flush was submitted (and metadata). */
static void flush_durable(struct csdev *d, uint64_t flush_clock)
{
	meta_durable(d, flush_clock, 0);
	struct pwrite *pw = d->p_head;
	while (pw) {
		struct pwrite *next = pw->next;
		if (pw->cb_done && pw->done_clock < flush_clock)
			make_durable(d, pw);
		pw = next;
	}
}

/* ------------------------------------------------------------------ crash */

/* Sector s (byte offset in pw) lands as src, unless lost with its block's mapping. */
static void land(struct csdev *d, const struct pwrite *pw, size_t s, const uint8_t *src)
{
	uint64_t off = pw->off + s;
	if ((d->faults & VBLK_CS_LOST_ALLOC) && (off >= d->dur_size || !is_mapped(d, off))) {
		d->fst.unmapped_dropped++; /* reads zeros: a hole, an unwritten extent, past EOF */
		return;
	}
	memcpy(d->durable + off, src, VBLK_SECTOR);
}

static void random_sector(struct csdev *d, uint8_t *p)
{
	for (size_t i = 0; i < VBLK_SECTOR; i += 8) {
		uint64_t x = vrng_next(&d->rng);
		memcpy(p + i, &x, 8);
	}
}

static void crash_one(struct csdev *d, const struct pwrite *pw)
{
	uint64_t how = vrng_next(&d->rng) % (d->faults & VBLK_CS_TRASH ? 4 : 3);
	if (how == 0)
		return; /* dropped */
	for (size_t s = 0; s < pw->len; s += VBLK_SECTOR) {
		uint64_t r = how == 1 ? 1 : vrng_next(&d->rng) % (how == 2 ? 2 : 3);
		/* Bytes a write does not change are not trashed: a rewrite of the same bytes
		 * (a read-modify-write of a whole granule, zero padding) leaves them
		 * (docs/crash.md); so is a sector a newer durable write covers, whose data
		 * patch_older put into this one. */
		bool same = !memcmp(d->durable + pw->off + s, pw->data + s, VBLK_SECTOR);
		if (r == 1 || (r == 2 && same)) {
			land(d, pw, s, pw->data + s); /* applied */
		} else if (r == 2) { /* trashed: random bytes */
			uint8_t junk[VBLK_SECTOR];
			random_sector(d, junk);
			land(d, pw, s, junk);
			d->fst.trashed_sectors++;
		}
	}
}

/* Every pending write, in a random order, is dropped, applied or torn. */
static void crash_pending(struct csdev *d)
{
	size_t n = d->npending;
	struct pwrite **v = n ? malloc(n * sizeof(*v)) : NULL;
	if (!v) { /* nothing pending, or no memory: seq order */
		for (struct pwrite *pw = d->p_head; pw; pw = pw->next)
			crash_one(d, pw);
		pending_free_all(d);
		return;
	}
	size_t i = 0;
	for (struct pwrite *pw = d->p_head; pw; pw = pw->next)
		v[i++] = pw;
	for (i = n; i > 1; i--) {
		size_t j = vrng_next(&d->rng) % i;
		struct pwrite *t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
	for (i = 0; i < n; i++)
		crash_one(d, v[i]);
	free(v);
	pending_free_all(d);
}

/* Queued completions all fail (what they wrote is in crash_pending's hands). */
static void comps_after_crash(struct csdev *d)
{
	for (struct cs_comp *c = d->c_head; c; c = c->next) {
		c->res = -EIO;
		c->pw = NULL; /* freed with the pending writes */
	}
}

static void cs_crash(struct csdev *d)
{
	if (d->dead)
		return;
	crash_pending(d);
	if ((d->faults & VBLK_CS_INJECT_GARBAGE) && d->last_data_off) {
		/* A broken device: a durable (so maybe acknowledged) data sector goes bad. */
		random_sector(d, d->durable + d->last_data_off - 1);
		d->last_data_off = 0;
		d->fst.injected++;
	}
	if (d->faults & VBLK_CS_LOST_ALLOC) {
		for (struct pmeta *m = d->meta; m; m = m->next)
			if (m->grow)
				d->fst.lost_grows++;
			else
				d->fst.lost_allocs++;
	}
	meta_free_all(d);
	comps_after_crash(d);
	d->dead = true;
	d->arm_left = 0;
	d->gen++;
	if (d->peer)
		cs_crash(d->peer); /* one power loss for both devices of a pair */
}

/* The device that counts crash points for d (itself, or its pair's leader). */
static struct csdev *counter_of(struct csdev *d) { return d->follower ? d->peer : d; }

/* Count a write/flush submission; true when the armed crash fires on it. */
static bool count_io(struct csdev *d)
{
	struct csdev *l = counter_of(d);
	l->io_count++;
	if (l->arm_left == 0 || --l->arm_left > 0)
		return false;
	cs_crash(d);
	return true;
}

/* ------------------------------------------------------------- completion */

static void comps_free_all(struct csdev *d)
{
	while (d->c_head) {
		struct cs_comp *c = d->c_head;
		d->c_head = c->next;
		free(c);
	}
	d->c_tail = NULL;
}

static void comp_enqueue(struct csdev *d, struct cs_comp *c)
{
	c->next = NULL;
	if (d->c_tail)
		d->c_tail->next = c;
	else
		d->c_head = c;
	d->c_tail = c;
}

static void deliver(struct csdev *d, struct cs_comp *c)
{
	struct vio_op *user = c->user;
	int res = c->res;
	if (res < 0) {
		/* -EIO after the crash (no write record any more), -ENOSPC of an allocate */
	} else if (c->kind == CS_WRITE) {
		c->pw->cb_done = true;
		c->pw->done_clock = ++d->clock;
		d->b.stats.bytes_written += (uint64_t)res;
		if (c->pw->meta)
			d->b.stats.meta_bytes_written += (uint64_t)res;
		if ((c->pw->off | (uint64_t)res) % VBLK_ALIGN)
			d->b.stats.unaligned_writes++;
		if (c->pw->dsync)
			make_durable(d, c->pw); /* frees c->pw */
	} else if (c->kind == CS_FLUSH) {
		flush_durable(d, c->flush_clock);
	} else if (c->kind == CS_ALLOC) {
		if (meta_add(d, false, c->alloc_off, c->alloc_len) < 0)
			res = -ENOMEM;
	} else if (c->kind == CS_READ && res > 0) {
		d->b.stats.bytes_read += (uint64_t)res;
	}
	free(c);
	user->cb(user->arg, res);
}

/* A completion taken off the FIFO before a crash that happened meanwhile: it fails. */
static void deliver_stale(struct cs_comp *c)
{
	struct vio_op *user = c->user;
	free(c);
	user->cb(user->arg, -EIO);
}

/* The kick: deliver what is queued now; later completions get a new kick. */
static void kick_cb(void *arg, int res)
{
	(void)res;
	struct csdev *d = arg;
	d->kick_pending = false;
	struct cs_comp *c = d->c_head;
	d->c_head = d->c_tail = NULL;
	uint64_t gen = d->gen;
	while (c) {
		struct cs_comp *next = c->next;
		if (d->gen == gen)
			deliver(d, c);
		else
			deliver_stale(c);
		c = next;
	}
}

static int ensure_kick(struct csdev *d)
{
	if (d->kick_pending)
		return 0;
	struct io_uring_sqe *sqe = vreactor_get_sqe(d->b.reactor);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data(sqe, &d->kick);
	d->kick_pending = true;
	return 0;
}

static struct cs_comp *comp_new(enum cs_kind kind, struct vio_op *user, int res)
{
	struct cs_comp *c = calloc(1, sizeof(*c));
	if (c) {
		c->kind = kind;
		c->user = user;
		c->res = res;
	}
	return c;
}

/* Queue a completion (kick first, so failure leaves nothing behind). */
static int queue_comp(struct csdev *d, enum cs_kind kind, struct vio_op *user, int res,
		      struct cs_comp **out)
{
	struct cs_comp *c = comp_new(kind, user, res);
	if (!c)
		return -ENOMEM;
	int rc = ensure_kick(d);
	if (rc < 0) {
		free(c);
		return rc;
	}
	comp_enqueue(d, c);
	if (out)
		*out = c;
	return 0;
}

/* -------------------------------------------------------------- submission */

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

/* Validate an I/O; returns its length or -errno. */
static int64_t check_io(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
			const struct vio_op *op)
{
	int64_t total = iov_total(iov, iovcnt);
	if (total < 0)
		return total;
	if (!op || !op->cb)
		return -EINVAL;
	int rc = check_range(b, off, (uint64_t)total);
	return rc < 0 ? rc : total;
}

static int cs_readv(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
		    struct vio_op *op)
{
	struct csdev *d = to_cs(b);
	int64_t total = check_io(b, iov, iovcnt, off, op);
	if (total < 0)
		return (int)total;
	int rc = queue_comp(d, CS_READ, op, d->dead ? -EIO : (int)total, NULL);
	if (rc < 0)
		return rc;
	b->stats.read_ops++;
	if (d->dead)
		return 0;
	const uint8_t *src = d->visible + off;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(iov[i].iov_base, src, iov[i].iov_len);
		src += iov[i].iov_len;
	}
	return 0;
}

/* The copy of a write: every byte of it written here (a kept buffer's old bytes
 * never show), from the device's lent cache when it has one. */
static struct pwrite *pwrite_new(struct csdev *d, const struct iovec *iov, int iovcnt,
				 uint64_t off, size_t len, unsigned flags)
{
	struct pwrite *pw = vbuf_take(d->b.bufs, sizeof(*pw) + len);
	if (!pw)
		return NULL;
	memset(pw, 0, sizeof(*pw));
	pw->from = d->b.bufs;
	pw->off = off;
	pw->len = len;
	pw->dsync = flags & VBLK_DSYNC;
	pw->meta = flags & VBLK_META;
	uint8_t *dst = pw->data;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(dst, iov[i].iov_base, iov[i].iov_len);
		dst += iov[i].iov_len;
	}
	return pw;
}

static int cs_writev(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
		     unsigned flags, struct vio_op *op)
{
	struct csdev *d = to_cs(b);
	int64_t total = check_io(b, iov, iovcnt, off, op);
	if (total < 0)
		return (int)total;
	if (d->dead || count_io(d))
		return queue_comp(d, CS_WRITE, op, -EIO, NULL); /* the power is off */
	struct pwrite *pw = pwrite_new(d, iov, iovcnt, off, (size_t)total, flags);
	if (!pw)
		return -ENOMEM;
	struct cs_comp *c;
	int rc = queue_comp(d, CS_WRITE, op, (int)total, &c);
	if (rc < 0) {
		pwrite_free(pw);
		return rc;
	}
	c->pw = pw;
	pw->seq = ++d->seq;
	pending_append(d, pw);
	mark_dirty(d, off, pw->len);
	memcpy(d->visible + off, pw->data, pw->len);
	b->stats.write_ops++;
	return 0;
}

static int cs_flush(struct vblk *b, struct vio_op *op)
{
	struct csdev *d = to_cs(b);
	if (!op || !op->cb)
		return -EINVAL;
	if (d->dead || count_io(d))
		return queue_comp(d, CS_FLUSH, op, -EIO, NULL);
	struct cs_comp *c;
	int rc = queue_comp(d, CS_FLUSH, op, 0, &c);
	if (rc < 0)
		return rc;
	c->flush_clock = ++d->clock;
	b->stats.flush_ops++;
	return 0;
}

static int cs_allocate(struct vblk *b, uint64_t off, uint64_t len, struct vio_op *op)
{
	struct csdev *d = to_cs(b);
	if (!op || !op->cb || len == 0)
		return -EINVAL;
	int rc = check_range(b, off, len);
	if (rc < 0)
		return rc;
	if (d->dead)
		return queue_comp(d, CS_ALLOC, op, -EIO, NULL);
	/* A full file system below the device (vblk_crashsim_set_alloc_limit). */
	if (d->alloc_limit && off + len > d->alloc_limit)
		return queue_comp(d, CS_ALLOC, op, -ENOSPC, NULL);
	struct cs_comp *c;
	rc = queue_comp(d, CS_ALLOC, op, 0, &c);
	if (rc == 0) {
		c->alloc_off = off;
		c->alloc_len = len;
	}
	return rc;
}

/* Record an allocate or grow that just completed (durable at once without LOST_ALLOC). */
static int meta_add(struct csdev *d, bool grow, uint64_t off, uint64_t len)
{
	if (!(d->faults & VBLK_CS_LOST_ALLOC)) {
		if (grow)
			d->dur_size = len;
		else
			map_range(d, off, len);
		return 0;
	}
	struct pmeta *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	*m = (struct pmeta){.next = d->meta, .grow = grow, .off = off, .len = len,
			    .done_clock = ++d->clock};
	d->meta = m;
	return 0;
}

/* Kept images back to zeros: the blocks marked dirty, and only those. */
static void images_reset(struct vblk_cs_images *im)
{
	uint64_t nblk = (im->size + CS_BLOCK - 1) / CS_BLOCK;
	for (uint64_t blk = 0; blk < nblk; blk++) {
		if (!im->dirty[blk / 8]) {
			blk |= 7; /* a byte of clean blocks */
			continue;
		}
		if (!(im->dirty[blk / 8] & (1u << (blk % 8))))
			continue;
		uint64_t off = blk * CS_BLOCK;
		size_t n = im->size - off < CS_BLOCK ? (size_t)(im->size - off) : CS_BLOCK;
		memset(im->visible + off, 0, n);
		memset(im->durable + off, 0, n);
	}
	memset(im->dirty, 0, (size_t)((nblk + 7) / 8));
	im->busy = false;
}

/* An image: zero pages, then one PROT_NONE page (so an overrun faults). */
static size_t img_len(size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	return (size + pg - 1) / pg * pg + pg;
}

static uint8_t *img_map(size_t size)
{
	size_t len = img_len(size), pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + len - pg, pg, PROT_NONE) < 0) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

static void img_unmap(uint8_t *p, size_t size)
{
	if (p)
		munmap(p, img_len(size));
}

static int img_grow(uint8_t **img, size_t *cap, uint64_t new_size)
{
	if (new_size <= *cap) /* grown already by a grow that failed later */
		return 0;
	uint8_t *p = img_map((size_t)new_size);
	if (!p)
		return -ENOMEM;
	memcpy(p, *img, *cap);
	img_unmap(*img, *cap);
	*img = p;
	*cap = (size_t)new_size;
	return 0;
}

static int grow_image(uint8_t **img, uint64_t old_size, uint64_t new_size)
{
	uint8_t *p = realloc(*img, new_size);
	if (!p)
		return -ENOMEM;
	memset(p + old_size, 0, new_size - old_size);
	*img = p;
	return 0;
}

static uint64_t map_bytes(uint64_t size) { return (size + 8ull * CS_BLOCK - 1) / (8ull * CS_BLOCK); }

static int cs_grow(struct vblk *b, uint64_t new_size)
{
	struct csdev *d = to_cs(b);
	if (d->dead)
		return -EIO;
	if (new_size < b->size || new_size % VBLK_SECTOR || new_size > SIZE_MAX)
		return -EINVAL;
	if (new_size == b->size)
		return 0;
	if (d->im) { /* kept images do not grow: the device takes copies of its own, grown */
		uint8_t *v = img_map((size_t)new_size), *du = img_map((size_t)new_size);
		if (!v || !du) {
			img_unmap(v, (size_t)new_size);
			img_unmap(du, (size_t)new_size);
			return -ENOMEM;
		}
		memcpy(v, d->visible, d->vis_cap);
		memcpy(du, d->durable, d->dur_cap);
		images_reset(d->im);
		d->im = NULL;
		d->visible = v;
		d->durable = du;
		d->vis_cap = d->dur_cap = (size_t)new_size; /* img_grow below: nothing to do */
	}
	int rc = img_grow(&d->visible, &d->vis_cap, new_size);
	if (rc == 0)
		rc = img_grow(&d->durable, &d->dur_cap, new_size);
	if (rc == 0)
		rc = grow_image(&d->mapped, map_bytes(b->size), map_bytes(new_size));
	if (rc == 0)
		rc = meta_add(d, true, 0, new_size);
	if (rc == 0)
		b->size = new_size; /* on failure the images may be larger: harmless */
	return rc;
}

/* ------------------------------------------------------------ file image */

static bool block_is_zero(const uint8_t *p, size_t len)
{
	return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

static int pwrite_all(int fd, const uint8_t *p, size_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int pread_all(int fd, uint8_t *p, size_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Write runs of non-zero 4 KiB blocks; zero blocks stay holes. */
static int write_image(int fd, const uint8_t *img, uint64_t size)
{
	uint64_t run = 0;
	bool in_run = false;
	for (uint64_t off = 0; off < size; off += CS_BLOCK) {
		size_t n = size - off < CS_BLOCK ? (size_t)(size - off) : CS_BLOCK;
		bool zero = block_is_zero(img + off, n);
		if (!zero && !in_run) {
			run = off;
			in_run = true;
		} else if (zero && in_run) {
			int rc = pwrite_all(fd, img + run, off - run, run);
			if (rc < 0)
				return rc;
			in_run = false;
		}
	}
	return in_run ? pwrite_all(fd, img + run, size - run, run) : 0;
}

static int save_image(const char *path, const uint8_t *img, uint64_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int rc = 0;
	if (ftruncate(fd, 0) < 0 || ftruncate(fd, (off_t)size) < 0)
		rc = -errno;
	if (rc == 0)
		rc = write_image(fd, img, size);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Read the data regions of fd into img (holes are already zero). */
static int load_image(int fd, uint8_t *img, uint64_t size)
{
	uint64_t off = 0;
	while (off < size) {
		off_t data = lseek(fd, (off_t)off, SEEK_DATA);
		if (data < 0)
			return errno == ENXIO ? 0 : pread_all(fd, img + off, size - off, off);
		if ((uint64_t)data >= size)
			return 0;
		off_t hole = lseek(fd, data, SEEK_HOLE);
		uint64_t end = hole < 0 || (uint64_t)hole > size ? size : (uint64_t)hole;
		int rc = pread_all(fd, img + data, end - (uint64_t)data, (uint64_t)data);
		if (rc < 0)
			return rc;
		off = end;
	}
	return 0;
}

/* -------------------------------------------------------- open / close */

static void cs_free(struct csdev *d)
{
	pending_free_all(d);
	comps_free_all(d);
	meta_free_all(d);
	free(d->mapped);
	if (d->im) {
		images_reset(d->im);
		d->visible = d->durable = NULL;
	}
	img_unmap(d->visible, d->vis_cap);
	img_unmap(d->durable, d->dur_cap);
	free(d->path);
	free(d);
}

static void cs_close(struct vblk *b)
{
	struct csdev *d = to_cs(b);
	if (d->peer) {
		d->peer->peer = NULL;
		d->peer->follower = false;
	}
	if (d->path) {
		int rc = save_image(d->path, d->durable, b->size);
		if (rc < 0)
			fprintf(stderr, "vaaid: %s: cannot save the crashsim image: %s\n", d->path,
				strerror(-rc));
	}
	cs_free(d);
}

static const struct vblk_ops cs_ops = {
	.readv = cs_readv,
	.writev = cs_writev,
	.flush = cs_flush,
	.allocate = cs_allocate,
	.grow = cs_grow,
	.close = cs_close,
};

static int cs_new(struct vreactor *r, uint64_t size, uint64_t seed, struct vblk_cs_images *im,
		  struct csdev **out)
{
	if (!r || !out || size == 0 || size % VBLK_SECTOR || size > SIZE_MAX)
		return -EINVAL;
	if (im && (im->busy || im->size != size))
		return im->busy ? -EBUSY : -EINVAL;
	struct csdev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	if (im) {
		im->busy = true;
		d->im = im;
	}
	d->visible = im ? im->visible : img_map((size_t)size);
	d->durable = im ? im->durable : img_map((size_t)size);
	d->vis_cap = d->visible ? (size_t)size : 0;
	d->dur_cap = d->durable ? (size_t)size : 0;
	d->mapped = calloc(1, (size_t)map_bytes(size));
	d->dur_size = size;
	if (!d->visible || !d->durable || !d->mapped) {
		cs_free(d);
		return -ENOMEM;
	}
	d->b.ops = &cs_ops;
	d->b.reactor = r;
	d->b.size = size;
	d->rng = seed;
	vio_op_init(&d->kick, kick_cb, d);
	*out = d;
	return 0;
}

int vblk_crashsim_create_mem(struct vreactor *r, uint64_t size, uint64_t seed, struct vblk **out)
{
	struct csdev *d;
	int rc = cs_new(r, size, seed, NULL, &d);
	if (rc < 0)
		return rc;
	*out = &d->b;
	return 0;
}

int vblk_cs_images_new(uint64_t size, struct vblk_cs_images **out)
{
	if (!out || size == 0 || size % VBLK_SECTOR || size > SIZE_MAX)
		return -EINVAL;
	struct vblk_cs_images *im = calloc(1, sizeof(*im));
	if (!im)
		return -ENOMEM;
	im->size = size;
	im->visible = img_map((size_t)size);
	im->durable = img_map((size_t)size);
	im->dirty = calloc(1, (size_t)((size + CS_BLOCK - 1) / CS_BLOCK + 7) / 8);
	if (!im->visible || !im->durable || !im->dirty) {
		vblk_cs_images_free(im);
		return -ENOMEM;
	}
	*out = im;
	return 0;
}

void vblk_cs_images_free(struct vblk_cs_images *im)
{
	if (!im)
		return;
	img_unmap(im->visible, (size_t)im->size);
	img_unmap(im->durable, (size_t)im->size);
	free(im->dirty);
	free(im);
}

uint64_t vblk_cs_images_size(const struct vblk_cs_images *im) { return im ? im->size : 0; }

static bool all_zero(const uint8_t *p, uint64_t n)
{
	for (uint64_t off = 0; off < n; off += CS_BLOCK)
		if (!block_is_zero(p + off, n - off < CS_BLOCK ? (size_t)(n - off) : CS_BLOCK))
			return false;
	return true;
}

int vblk_crashsim_create_on(struct vreactor *r, struct vblk_cs_images *im, uint64_t seed,
			    struct vblk **out)
{
	if (!im)
		return -EINVAL;
	if (!im->busy && im->uses++ % CS_ZERO_CHECK_EVERY == 0 &&
	    (!all_zero(im->visible, im->size) || !all_zero(im->durable, im->size))) {
		fprintf(stderr, "vblk_crashsim: kept images not zero after their reset (a write "
				"path that does not mark its blocks dirty)\n");
		return -EUCLEAN;
	}
	struct csdev *d;
	int rc = cs_new(r, im->size, seed, im, &d);
	if (rc < 0)
		return rc;
	*out = &d->b;
	return 0;
}

int vblk_crashsim_create_image(struct vreactor *r, const uint8_t *bytes, uint64_t size,
			       uint64_t seed, struct vblk **out)
{
	if (!bytes)
		return -EINVAL;
	struct csdev *d;
	int rc = cs_new(r, size, seed, NULL, &d);
	if (rc < 0)
		return rc;
	/* As a file holding bytes would load (cs_open_existing): zero blocks stay holes;
	 * only the others are copied, so the pages of the images touched follow them. */
	for (uint64_t off = 0; off < size; off += CS_BLOCK) {
		size_t n = size - off < CS_BLOCK ? (size_t)(size - off) : CS_BLOCK;
		if (block_is_zero(bytes + off, n))
			continue;
		mark_dirty(d, off, n);
		memcpy(d->durable + off, bytes + off, n);
		memcpy(d->visible + off, bytes + off, n);
		map_range(d, off, 1);
	}
	*out = &d->b;
	return 0;
}

/* Create path (must not exist) with create_size bytes of zeros. */
static int cs_create_file(const char *path, uint64_t create_size)
{
	if (create_size % VBLK_SECTOR)
		return -EINVAL;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int rc = ftruncate(fd, (off_t)create_size) < 0 ? -errno : 0;
	close(fd);
	if (rc < 0)
		unlink(path);
	return rc;
}

/* Open an existing image file: size, then content. */
static int cs_open_existing(struct vreactor *r, const char *path, uint64_t seed,
			    struct csdev **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc = fstat(fd, &st) < 0 ? -errno : 0;
	if (rc == 0 && !S_ISREG(st.st_mode))
		rc = -EINVAL;
	struct csdev *d = NULL;
	if (rc == 0)
		rc = cs_new(r, (uint64_t)st.st_size, seed, NULL, &d);
	if (rc == 0)
		rc = load_image(fd, d->durable, d->b.size);
	close(fd);
	for (uint64_t off = 0; rc == 0 && off < d->b.size; off += CS_BLOCK) /* holes: unmapped */
		if (!block_is_zero(d->durable + off, (size_t)(d->b.size - off < CS_BLOCK
								     ? d->b.size - off : CS_BLOCK)))
			map_range(d, off, 1);
	if (rc < 0) {
		if (d)
			cs_free(d);
		return rc;
	}
	memcpy(d->visible, d->durable, (size_t)d->b.size);
	*out = d;
	return 0;
}

int vblk_crashsim_open(struct vreactor *r, const char *path, uint64_t create_size, uint64_t seed,
		       struct vblk **out)
{
	if (!r || !path || !out)
		return -EINVAL;
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	struct csdev *d = NULL;
	int rc = 0;
	if (create_size > 0) {
		rc = cs_new(r, create_size, seed, NULL, &d);
		if (rc == 0)
			rc = cs_create_file(path, create_size);
		if (rc < 0 && d)
			cs_free(d);
	} else {
		rc = cs_open_existing(r, path, seed, &d);
	}
	if (rc < 0) {
		free(p);
		return rc;
	}
	d->path = p;
	*out = &d->b;
	return 0;
}

/* ------------------------------------------------------------- control */

bool vblk_is_crashsim(const struct vblk *b) { return b && b->ops == &cs_ops; }

void vblk_crashsim_arm(struct vblk *b, uint64_t n)
{
	if (vblk_is_crashsim(b))
		counter_of(to_cs(b))->arm_left = n;
}

int vblk_crashsim_link(struct vblk *leader, struct vblk *follower)
{
	if (!vblk_is_crashsim(leader) || !vblk_is_crashsim(follower) || leader == follower)
		return -EINVAL;
	struct csdev *l = to_cs(leader), *f = to_cs(follower);
	if (l->peer || f->peer)
		return -EBUSY;
	l->peer = f;
	f->peer = l;
	f->follower = true;
	return 0;
}

void vblk_crashsim_crash_now(struct vblk *b)
{
	if (vblk_is_crashsim(b))
		cs_crash(to_cs(b));
}

bool vblk_crashsim_crashed(const struct vblk *b)
{
	return vblk_is_crashsim(b) && ((const struct csdev *)b)->dead;
}

uint64_t vblk_crashsim_io_count(const struct vblk *b)
{
	return vblk_is_crashsim(b) ? counter_of(to_cs((struct vblk *)b))->io_count : 0;
}

static void power_on_one(struct csdev *d, struct vreactor *r);

void vblk_crashsim_power_on(struct vblk *b, struct vreactor *r)
{
	if (!vblk_is_crashsim(b) || !r)
		return;
	struct csdev *d = to_cs(b);
	cs_crash(d); /* powering on a running device cuts its power first (its pair's too) */
	power_on_one(d, r);
	if (d->peer)
		power_on_one(d->peer, r);
}

static void power_on_one(struct csdev *d, struct vreactor *r)
{
	struct vblk *b = &d->b;
	comps_free_all(d);
	if (d->dur_size < b->size) { /* a grow lost: the file is shorter, what was past it gone */
		memset(d->durable + d->dur_size, 0, (size_t)(b->size - d->dur_size));
		memset(d->visible + d->dur_size, 0, (size_t)(b->size - d->dur_size));
		for (uint64_t off = round_up_block(d->dur_size); off < b->size; off += CS_BLOCK) {
			uint64_t k = off / CS_BLOCK;
			d->mapped[k / 8] &= (uint8_t)~(1u << (k % 8));
		}
		b->size = d->dur_size;
	}
	memcpy(d->visible, d->durable, (size_t)b->size);
	d->kick_pending = false; /* an old kick, if it ever runs, finds nothing */
	d->dead = false;
	d->arm_left = 0;
	d->gen++;
	b->reactor = r;
}

void vblk_crashsim_set_alloc_limit(struct vblk *b, uint64_t limit)
{
	to_cs(b)->alloc_limit = limit;
}

void vblk_crashsim_set_faults(struct vblk *b, unsigned faults)
{
	if (vblk_is_crashsim(b))
		to_cs(b)->faults = faults;
}

void vblk_crashsim_fault_stats(const struct vblk *b, struct vblk_crashsim_fault_stats *st)
{
	if (vblk_is_crashsim(b))
		*st = ((const struct csdev *)b)->fst;
	else
		memset(st, 0, sizeof(*st));
}
