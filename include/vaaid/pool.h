/*
 * vaaid thin pool (src/pool): volumes carved out of one backing store in
 * extents, with exact refcounts, 4 KiB validity, crash-safe metadata.
 *
 * How this works (details in docs/design.md): the backing store holds two
 * superblock copies, two checkpoint areas, a journal ring and the data
 * extents. In memory each volume has a dense map (virtual extent -> physical
 * extent + 1, 0 = unmapped), each physical extent a refcount, and extents
 * that are only partly written a validity bitmap (one bit per 4 KiB
 * granule). Unmapped extents and invalid granules read as zeros.
 * Every metadata change is a journal record; records are group-committed
 * (one journal write carries every record queued while the previous one was
 * in flight); a command that changed metadata completes only when its record
 * is durable. Data always goes to space no durable metadata references before
 * the record that makes it visible. Freed extents are reused only after the
 * freeing record is durable. Checkpoints write the whole state to the
 * inactive checkpoint area and then switch the superblock; recovery = load
 * the newest valid checkpoint + replay the journal from its position.
 *
 * Concurrency: everything runs on one reactor thread. Commands lock the
 * virtual extents they touch (shared for reads and in-place overwrites,
 * exclusive for metadata changes) so an extent is never freed or remapped
 * under I/O in flight.
 */
#ifndef VAAID_POOL_H
#define VAAID_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>
#include "vaaid/io.h"
#include "vaaid/meta.h"

#define VPOOL_GRANULE 4096u
#define VPOOL_NAME_MAX 64        /* volume name bytes, without NUL */
#define VPOOL_MAX_VOLUMES 1024
#define VPOOL_MIN_EXTENT (64u * 1024)
#define VPOOL_MAX_EXTENT (16u * 1024 * 1024)
#define VPOOL_DEFAULT_EXTENT (1024u * 1024)

struct vpool;
struct vvol;

struct vpool_params {
	uint64_t size;          /* bytes of the backing store to use (0: the whole device) */
	uint32_t extent_size;   /* power of two, VPOOL_MIN_EXTENT..VPOOL_MAX_EXTENT; 0 = default */
	uint32_t journal_size;  /* bytes; 0 = default (scaled with the pool, 1..64 MiB) */
	uint64_t max_size;      /* the size vpool_grow may reach: the checkpoint areas are
				   sized for it; 0 = 4 x size */
	struct vblk *journal_dev; /* NULL: the journal is in the store; else the journal ring
				     goes to this store of its own (VSB_INCOMPAT_JOURNAL_FILE),
				     which must hold VJF_HDR_SIZE + journal size bytes
				     (vpool_journal_store_size) */
};
/* The journal file of a pool in the regular file `store`: "<store>.journal"
 * (written to out; -ENAMETOOLONG if it does not fit). */
int vpool_journal_path(const char *store, char *out, size_t n);
/* Bytes a journal store needs for a pool of these parameters. */
uint64_t vpool_journal_store_size(const struct vpool_params *p, uint64_t dev_size);

struct vpool_stats {
	uint64_t size;      /* backing store bytes */
	uint64_t capacity;  /* bytes available for data extents */
	uint64_t extent;    /* extent size */
	uint64_t used;      /* bytes of physical extents in use (referenced, being written, or freed but not yet durable) */
	uint64_t free;      /* capacity - used */
	uint64_t sharing_savings; /* bytes sharing saves: sum over extents of (map references - 1) x extent */
	uint64_t hydrating; /* bytes of redirected extents still reading part of their data from their source */
	/* counters since the pool was opened (also for tests and benchmarks) */
	uint64_t journal_commits, journal_records, checkpoints;
	uint64_t journal_bytes;  /* of the commits written */
	uint64_t checkpoint_ns;  /* summed time of the completed checkpoints */
	uint64_t share_room_refused; /* shares (EXTENDED COPY) refused for lack of checkpoint-area room:
					those ranges were copied as bytes instead (share.c) */
	bool journal_file;       /* the journal has a store of its own (journal_io) */
	struct vblk_stats store_io, journal_io; /* the backing stores' I/O (vblk_stats) */
	uint64_t journal_used, journal_size; /* ring bytes since the last checkpoint, ring size */
	uint64_t data_off; /* backing store offset of the first data extent */
};

struct vvol_info {
	char name[VPOOL_NAME_MAX + 1];
	uint64_t size;        /* bytes */
	uint32_t block_size;  /* 512 or 4096 */
	uint8_t naa[16];      /* NAA-6 designator, chosen at creation */
	char serial[33];      /* unit serial, chosen at creation */
	uint64_t mapped;      /* bytes of extents this volume references */
	uint64_t unshared;    /* of those, bytes of extents no other reference shares (refcount 1) */
	uint64_t exclusive;   /* bytes of extents all of whose references this volume holds
				 (hydration sources counted with their redirected extent's volume):
				 what deleting it frees, other volumes unchanged */
	uint64_t shared;      /* mapped minus the bytes of its entries on its exclusive extents */
};

/* ---- pool lifecycle (control path: synchronous, runs the device's reactor) */
/* Format dev as an empty pool. Fails with -EINVAL naming the bad parameter on stderr. */
int vpool_format(struct vblk *dev, const struct vpool_params *p);
/* Open (with recovery: newest valid checkpoint + journal replay). */
int vpool_open(struct vblk *dev, struct vpool **out);
#define VPOOL_OPEN_READONLY 0x1u /* replay in memory only; nothing is written (vaai-check) */
struct vpool_open_report {
	uint64_t commits, records; /* journal replayed */
	uint64_t data_bytes;       /* of writes carried in the journal, written home again
				      (read-only open: that a read-write open would write) */
	char error[256];           /* what failed, when open fails */
};
int vpool_open_ex(struct vblk *dev, unsigned flags, struct vpool **out,
		  struct vpool_open_report *rep);
/*
 * The same for a pool whose journal may be in a store of its own: jdev is that
 * store (NULL: none given). A pool formatted with a journal store refuses to
 * open without it, or with another pool's; a journal store given for a pool
 * whose journal is in its store is refused too (-EINVAL), naming the problem in
 * rep->error.
 */
int vpool_open_stores(struct vblk *dev, struct vblk *jdev, unsigned flags, struct vpool **out,
		      struct vpool_open_report *rep);
/* Does the store hold a pool formatted with a journal store of its own?
 * 1 yes, 0 no (or not a pool), -errno on an I/O error. */
int vpool_store_has_journal_file(struct vblk *dev);
/*
 * Check every invariant of the loaded state (map entries in range, refcounts
 * equal to the references, validity only on referenced extents, free map
 * consistent with refcounts, space accounting). Prints one line per problem
 * to f; returns the number of problems (0 = consistent) or -errno.
 */
int vpool_verify(const struct vpool *p, FILE *f);
/*
 * Background hydration of redirected extents (redirect-on-write after EXTENDED
 * COPY): pause (tests, benchmarks) or resume it; how many extents are waiting
 * and how many were hydrated since open. vpool_hydration_wait runs the reactor
 * until nothing waits (control path; resumes a paused hydrator).
 */
void vpool_hydration_pause(struct vpool *p, bool pause);
void vpool_hydration_stats(const struct vpool *p, uint64_t *pending, uint64_t *hydrated);
int vpool_hydration_wait(struct vpool *p);
/* Wait for in-flight work, write a checkpoint, free. Does not close dev. */
int vpool_close(struct vpool *p);
/* Free all memory without writing anything (after a simulated crash). */
void vpool_abandon(struct vpool *p);
/*
 * A caller's per-command context (a SCSI handler's state) that lives while
 * the pool requests it started are in flight. Tracked on the pool, it is
 * discarded (freed, never completed) by vpool_abandon and vpool_close, like
 * the pool's own requests: after a simulated power loss their callbacks never
 * run, and whatever they would have freed would leak. Untrack before freeing
 * it normally. Reactor thread only.
 */
struct vpool_ctx {
	struct vpool_ctx *prev, *next;
	void (*discard)(struct vpool_ctx *c);
};
void vpool_ctx_track(struct vpool *p, struct vpool_ctx *c, void (*discard)(struct vpool_ctx *c));
void vpool_ctx_untrack(struct vpool *p, struct vpool_ctx *c);
/* Write a checkpoint now (synchronous). */
int vpool_checkpoint(struct vpool *p);
/*
 * Live checkpoints (docs/snapshots.md sections 8 and 12, step 3; off by default):
 * metadata appends pause only until the checkpoint's freeze point (the journal
 * quiesced, the home copies of journal-carried writes durable, the state copied
 * in memory), not while the blob and the superblock are written; the superblock
 * names the freeze point as the replay start. From the next checkpoint on.
 */
int vpool_set_live_checkpoints(struct vpool *p, bool on);
/* Where a checkpoint is (vpool_diag.ckpt_phase): idle, quiescing (appends paused; the
 * default mode stays paused through all phases), writing the blob, writing the
 * superblock. */
enum { VPOOL_CKPT_IDLE, VPOOL_CKPT_QUIESCE, VPOOL_CKPT_BLOB, VPOOL_CKPT_SUPERBLOCK };
/*
 * Give back to the store what it still holds of free extents (src/pool/sweep.c):
 * after a crash between a free's durable commit and its discard, an RBD image
 * keeps that data although no volume references it. Each free extent the store
 * reports data for is reserved and discarded like a freed one (pool_release_
 * extent: back in the free map once the discard completes; writes needing it
 * wait). *swept: how many. 0 with nothing done on a store that cannot discard
 * or cannot tell what it holds; -errno from the store's report.
 */
int vpool_sweep_store(struct vpool *p, uint64_t *swept);

void vpool_get_stats(const struct vpool *p, struct vpool_stats *st);
/* What the pool is waiting for, to diagnose a stall (vaaictl status --json). */
struct vpool_diag {
	unsigned inflight;            /* data requests in flight */
	bool ckpt_running, failed;
	int ckpt_phase, ckpt_fail_phase; /* VPOOL_CKPT_*: now; where the last failed one was */
	uint64_t ckpt_live_records; /* journal records appended while live checkpoints wrote */
	/* The last completed checkpoint's steps, ns (vaai-bench ckpt's breakdown,
	 * docs/snapshots.md step 3): appends paused (request to freeze or, paused, to
	 * the end), the quiesce's commit, the redo homes' flush, the freeze's copies
	 * (of them, the hydration list's and validity bitmaps'),
	 * ser_init's counting pass, the longest window's serialization (ser_fill + CRC,
	 * on the reactor) and its write, the superblock, and the whole checkpoint. */
	struct vpool_ckpt_steps {
		uint64_t paused_ns, quiesce_ns, homes_ns, freeze_ns, freeze_hmaps_ns, ser_init_ns;
		uint64_t fill_max_ns, fill_total_ns, window_io_max_ns, sb_ns, total_ns;
		unsigned windows;
		bool live; /* it let metadata appends go on after its freeze point */
	} ckpt_last;
	unsigned redo_inflight;       /* home writes of DATA records in flight */
	size_t redo_pending;          /* extents with DATA records since the checkpoint */
	bool redo_ckpt_waiting;       /* a checkpoint waits for redo_inflight == 0 */
	bool have_journal;
	struct vj_diag journal;
};
void vpool_get_diag(const struct vpool *p, struct vpool_diag *out);
/* The accounting as JSON (src/pool/stats_json.c); the caller json_object_put()s it. */
typedef struct json_object json_object;
json_object *vpool_stats_json(const struct vpool *p);
/* The pool's counters since it was opened (journal, checkpoints, the stores' I/O):
 * `stats` of the control socket and of vaai-sim put it in the pool object as
 * "counters" (vpool_stats_json leaves it out: `status` keeps its shape). */
json_object *vpool_counters_json(const struct vpool *p);
struct vblk *vpool_dev(const struct vpool *p);
/* Another gateway took the pool's store over and fenced this one (vblk.fenced):
 * every command that reaches the pool fails (it has failed: p->failed) and the
 * LUNs answer as a standby path (handlers/handler_util.c). */
bool vpool_fenced(const struct vpool *p);
/*
 * Soft threshold (SBC-4 4.7.3.7): cb(arg, true) when the pool's used bytes reach
 * used_limit from below, cb(arg, false) when they drop below it again; each
 * crossing once, on the pool's reactor thread. used_limit 0 or cb NULL: none.
 * A pool already at or above the limit calls cb(arg, true) before this returns.
 */
void vpool_set_soft_threshold(struct vpool *p, uint64_t used_limit,
			      void (*cb)(void *arg, bool above), void *arg);
bool vpool_above_soft_threshold(const struct vpool *p);

/* ---- volumes */
/*
 * A volume's largest size, in extents. Its map is dense in memory (8 bytes per
 * virtual extent, allocated when it is created or loaded, scanned by
 * verification), so its virtual size costs memory and time: 2^26 extents is a
 * 512 MiB map, 64 TiB with the default 1 MiB extents (VMFS-6's largest
 * datastore). One rule for create, grow and the loaders, which refuse a larger
 * volume as damage (docs/design.md, "Volume size").
 */
#define VPOOL_MAX_VOLUME_EXTENTS (1ull << 26)
/* The largest volume size of a pool with extent_size-byte extents. */
static inline uint64_t vpool_volume_size_max(uint64_t extent_size)
{
	return VPOOL_MAX_VOLUME_EXTENTS * extent_size;
}
/* Create a thin volume; size is rounded up to a multiple of block_size. -EEXIST, -EINVAL, -ENOSPC;
 * -EFBIG: larger than vpool_volume_size_max. */
int vpool_volume_create(struct vpool *p, const char *name, uint64_t size, uint32_t block_size,
			struct vvol **out);
struct vvol *vpool_volume_find(const struct vpool *p, const char *name);
/*
 * Delete a volume: every extent reference dropped (space back to the pool
 * once the record is durable), the name free again. Durable on return. The
 * caller guarantees nothing uses the volume (no LUN attached). Control path.
 */
int vpool_volume_delete(struct vpool *p, const char *name);
unsigned vpool_volume_count(const struct vpool *p);
struct vvol *vpool_volume_at(const struct vpool *p, unsigned i); /* i < count, creation order */
void vvol_get_info(const struct vvol *v, struct vvol_info *info);
/*
 * Grow a volume to size bytes (rounded up to its block size), durable on
 * return. -EINVAL for a shrink (never done: it would cut data off); -EFBIG:
 * larger than vpool_volume_size_max. Control path: synchronous, runs the reactor; not from a reactor callback.
 */
int vvol_grow(struct vvol *v, uint64_t size);
/*
 * Grow the pool to new_size bytes of its backing store (a file is extended; a
 * block device must already be that large): the new extents become free once a
 * checkpoint with the new geometry is durable (before that a crash leaves the
 * old size, with nothing lost). Control path, synchronous. -EINVAL: smaller
 * than now; -EFBIG: more extents than the checkpoint areas were sized for at
 * format (pool_ckpt_size_for); -ENOSPC: a block device not that large.
 */
int vpool_grow(struct vpool *p, uint64_t new_size);
struct vpool *vvol_pool(const struct vvol *v);

/* ---- data path (asynchronous; offsets and lengths in bytes, multiples of 512) */
typedef void (*vvol_cb)(void *arg, int res); /* res: 0, -ENOSPC (no space), -EIO, ... */

/* Read [off, off+len) into iov (never-written parts read as zeros). The iovec
 * array and its buffers must stay valid until cb runs. */
int vvol_read(struct vvol *v, uint64_t off, uint64_t len, const struct iovec *iov, int iovcnt,
	      vvol_cb cb, void *arg);
/*
 * Write [off, off+len) from iov; cb runs when data and metadata are durable.
 * A partly covered granule that was never written is filled with zeros.
 * The iovec array and its buffers must stay valid until cb runs.
 * Returns 0 (cb will run) or -errno (cb will not run).
 */
int vvol_write(struct vvol *v, uint64_t off, uint64_t len, const struct iovec *iov, int iovcnt,
	       vvol_cb cb, void *arg);
/*
 * Compare and write (the pool half of COMPARE AND WRITE, SBC-4 5.3): under
 * exclusive locks on every extent of [off, off+len) -- so no other read,
 * write, deallocation or share of those extents runs in between -- read the
 * range, compare it with cmp (len bytes; never-written blocks compare as
 * zeros), and only if it is equal write wiov there (durable on completion,
 * as vvol_write). A difference completes with -EILSEQ and *miscompare_at =
 * offset of the first differing byte; nothing is written. -ENOSPC when the
 * write needs space the pool does not have (nothing written).
 */
int vvol_compare_write(struct vvol *v, uint64_t off, uint64_t len, const void *cmp,
		       const struct iovec *wiov, int wiovcnt, uint64_t *miscompare_at, vvol_cb cb,
		       void *arg);
/*
 * What a copy or a deallocation did, in the pool's own terms (issue 25's
 * counters: the handlers report these figures, never recompute the rules
 * behind them). The _ex forms below take one: the pool ADDS its figures to
 * *rep just before cb runs, also when the request fails (then: the parts it
 * did), so one report may sum several requests (UNMAP's descriptors). NULL:
 * no report. *rep must stay valid until cb runs; it is not touched when the
 * call returns -errno, nor after vpool_abandon. The forms without _ex are
 * the _ex forms with NULL.
 */
struct vvol_report {
	/* vvol_copy: bytes of the range done by sharing whole extents (extent-aligned
	 * parts at congruent offsets: references taken, no data moved; an unmapped
	 * source extent is "shared" too: the destination becomes unmapped there) */
	uint64_t shared;
	/* vvol_copy: bytes read from the source and written to the destination (the
	 * rest: unaligned head and tail, or everything) */
	uint64_t copied;
	/* vvol_deallocate / vvol_unmap / vvol_zero: bytes of 4 KiB granules that held
	 * data in this volume (GET LBA STATUS: mapped; valid in its extent or in that
	 * extent's redirect source) and were released from its map -- their extent
	 * unmapped from this volume, or the granule cleared -- so they now read zeros,
	 * deallocated. Not counted: granules that held no data, and sectors that got
	 * zeros written and stay mapped (partly covered granules, a shared or
	 * redirected extent's granules). The pool's used space drops by whole extents
	 * only, and only when no other volume still references them: a figure of
	 * this volume's map, before sharing. */
	uint64_t deallocated;
};

/*
 * Deallocate [off, off+len): extents fully covered are unmapped (their space
 * returns to the pool once the record is durable), fully covered 4 KiB
 * granules of other extents stop being valid (they read as zeros), and an
 * extent left with no valid granule is unmapped too. Partly covered granules
 * keep their data. cb runs when the change is durable. A shared extent
 * (refcount > 1, after vvol_share) fully covered loses this volume's
 * reference; partly covered, it is left unchanged (its data stays readable:
 * a caller that needs zeros there must write them).
 */
int vvol_deallocate(struct vvol *v, uint64_t off, uint64_t len, vvol_cb cb, void *arg);
int vvol_deallocate_ex(struct vvol *v, uint64_t off, uint64_t len, struct vvol_report *rep,
		       vvol_cb cb, void *arg);
/*
 * UNMAP (SBC-4 5.31, LBPRZ=1): deallocate [off, off+len) as vvol_deallocate
 * does, and, once that is durable, write zeros into the range's sectors in
 * partly covered granules that hold data, where that takes no new space: in
 * place (they stay mapped and read zeros), durable before cb runs; likewise
 * the fully covered granules of a redirected extent whose source still
 * provides them (clearing them would bring the source's data back; the
 * extent is private, so the zeros take no new space). Where the zeros would
 * need a new extent (a shared extent: redirect-on-write -- hence also in a
 * full pool) those sectors, and the fully covered granules of a shared
 * extent partly covered, keep their data (UNMAP is advisory, SBC-4
 * 4.7.3.4). Never -ENOSPC.
 */
int vvol_unmap(struct vvol *v, uint64_t off, uint64_t len, vvol_cb cb, void *arg);
int vvol_unmap_ex(struct vvol *v, uint64_t off, uint64_t len, struct vvol_report *rep,
		  vvol_cb cb, void *arg);
/*
 * Zero [off, off+len) the way vvol_deallocate does, except that nothing keeps
 * its data: once the deallocation is durable, zeros are written (vvol_write:
 * redirect-on-write where shared, so the other sharers keep their data) into
 * the fully covered granules of a shared extent partly covered (or of a
 * redirected one whose source provides them) that hold data, and into the
 * range's sectors in partly covered granules that hold data. On completion
 * the whole range reads as zeros (the WRITE SAME of zeros). -ENOSPC: a
 * redirect found no free extent (some of the range may be zeroed already).
 */
int vvol_zero(struct vvol *v, uint64_t off, uint64_t len, vvol_cb cb, void *arg);
int vvol_zero_ex(struct vvol *v, uint64_t off, uint64_t len, struct vvol_report *rep,
		 vvol_cb cb, void *arg);
/*
 * Provisioning status at byte off (read-only, synchronous, never fails for a
 * valid range): *mapped is true when the byte reads from stored data (its
 * extent is mapped and its 4 KiB granule valid), false when it reads as zeros
 * because nothing is stored (deallocated). *run is the length in bytes from
 * off, at most len, over which that status stays the same (src/pool/lba_status.c).
 * -EINVAL: off/len not multiples of 512, len 0, or the range outside the volume.
 */
int vvol_lba_status(const struct vvol *v, uint64_t off, uint64_t len, uint64_t *run,
		    bool *mapped);
/*
 * Share whole extents: dst [doff, doff+len) becomes the same data as src
 * [soff, soff+len) without copying (refcounts + 1; a later write to either
 * side is redirected to a private extent). Offsets and len are multiples of
 * the pool's extent size and cover whole extents of both volumes; src and
 * dst may be the same volume (overlap allowed). cb runs when durable.
 * -EXDEV: different pools; -EINVAL: misaligned or out of range.
 */
int vvol_share(struct vvol *src, uint64_t soff, struct vvol *dst, uint64_t doff, uint64_t len,
	       vvol_cb cb, void *arg);
/*
 * Copy len bytes (multiples of 512) of src at soff to dst at doff, volumes of
 * one pool (-EXDEV otherwise), as one unit: every extent of both ranges is
 * locked exclusive until the copy is durable, so concurrent writes to either
 * range land wholly before or after it. Extent-aligned parts at congruent
 * offsets are shared (as vvol_share), the rest copied; overlapping ranges of
 * one volume are copied in the safe direction. -ENOSPC (through cb) when a
 * copied part needs space the pool does not have (parts before it are done).
 */
int vvol_copy(struct vvol *src, uint64_t soff, struct vvol *dst, uint64_t doff, uint64_t len,
	      vvol_cb cb, void *arg);
int vvol_copy_ex(struct vvol *src, uint64_t soff, struct vvol *dst, uint64_t doff, uint64_t len,
		 struct vvol_report *rep, vvol_cb cb, void *arg);
/* Completes when every write acknowledged before it is durable (always already true). */
int vvol_flush(struct vvol *v, vvol_cb cb, void *arg);

/*
 * ---- benchmarks and tests only (src/pool/bench.c; the daemon never calls it)
 * Map count virtual extents of v from first_vext on (all must be unmapped) to
 * freshly reserved physical extents as FULLY VALID without writing any data:
 * their content is whatever the backing store holds (zeros on a fresh sparse
 * file). Each mapping is an ordinary MAP record without NEW_EMPTY (what a
 * clone of a fully written extent logs), group-committed like any other, so
 * checkpoints and replay see nothing special. order_seed != 0 maps the
 * extents in a pseudo-random order, so physical extents follow no virtual
 * order (one map run per extent: the largest checkpoint). Synchronous
 * (control path, runs the reactor). -EEXIST, -ENOSPC, -EINVAL, -EIO.
 */
int vpool_bench_map_full(struct vvol *v, uint64_t first_vext, uint64_t count, uint64_t order_seed);

#endif
