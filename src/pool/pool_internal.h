/*
 * Internal structures of the thin pool (src/pool), shared by its files:
 *   pool.c        format, open (recovery), close, stats, volumes
 *   alloc.c       free bitmap, reservations, free-after-durable queue
 *   map.h, map.c  a volume (struct vvol) and its map: the only code that knows
 *                 the map's representation
 *   validity.c    4 KiB validity bitmaps of partly written extents
 *   records.c     journal record encoding and the one function per record
 *                 type that applies it to memory (used live and by replay)
 *   checkpoint.c  checkpoint blob (serialize / load) and the async checkpoint
 *   extent_lock.c per-(volume, virtual extent) shared/exclusive locks
 *   datapath.c    read and write requests
 *   dealloc.c     deallocation (unmap extents, clear granules)
 *   share.c       extent sharing (EXTENDED COPY), the SHARE record
 *   hydrate.c     background hydration of redirected extents, the HYDRATED record
 *   acct.c        space accounting counters kept per reference change
 *   lba_status.c  provisioning status queries (mapped / deallocated runs)
 *   bench.c       benchmark/test-only helpers (vpool_bench_map_full)
 */
#ifndef VAAID_POOL_INTERNAL_H
#define VAAID_POOL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "vaaid/hmap.h"
#include "vaaid/meta.h"
#include "vaaid/pool.h"

#include "map.h" /* struct vvol and its map */
#include "refs_aside.h"

/* Journal record types (docs/design.md "Records"). */
enum {
	REC_VOL_CREATE = 1,
	REC_MAP = 2,   /* volume map entry change; refcounts follow */
	REC_VALID = 3, /* set or clear validity of a granule range of a physical extent */
	REC_VOL_RESIZE = 4, /* a volume grows (never shrinks) */
	REC_VOL_DELETE = 5, /* a volume and all its references go */
	REC_SHARE = 6,      /* n map entries of one volume copied to another (refcounts follow) */
	REC_HYDRATED = 7,   /* a redirected extent holds all its data: its source reference goes */
	REC_DATA = 8,       /* a small write's bytes, carried in the journal (redo.c) */
};
#define REC_MAP_NEW_EMPTY 0x1 /* flags: the new extent starts with no valid granule */
/* flags: redirect-on-write. The new extent's granules that are not valid read from the old
 * one (its "source"), which keeps this map entry's reference until REC_HYDRATED. */
#define REC_MAP_ROW 0x2
#define REC_VALID_SET 0x1     /* flags: set (else clear) */
/* flags: set by a write whose bytes follow in a DATA record: older DATA bytes of these
 * granules stay live (the new ones may cover only part of a granule; redo.c) */
#define REC_VALID_REDO 0x2

/* Bound on references so the checkpoint area always fits (pool_ckpt_room: SHARE, grow). */
#define POOL_MAX_REFS_PER_EXTENT_AVG 4

/*
 * A redirected extent waiting for hydration (hydrate.c): pext's granules that
 * are not valid read from src, which holds one reference for it. pext itself
 * is private (refcount 1, mapped at idx/vext) until the HYDRATED record.
 */
struct hydr_ent {
	uint64_t pext, src;
	uint16_t idx;
	uint64_t vext;
};

struct hydrator;

struct pend_free {
	uint64_t pext;
	uint64_t seq;
};

struct ckpt_state;
struct redo_scan;

/*
 * Every request in flight is on the pool's list, so that vpool_abandon()
 * (after a simulated power loss, when no callback will ever come) can free it.
 */
struct pool_req {
	struct pool_req *prev, *next;
	void (*discard)(struct pool_req *r); /* free without completing */
};
void pool_req_track(struct vpool *p, struct pool_req *r, void (*discard)(struct pool_req *));
void pool_req_untrack(struct vpool *p, struct pool_req *r);

struct preq;

struct vpool {
	struct vblk *dev;
	struct vblk *jdev; /* the journal's store: dev, or a journal file (VSB_INCOMPAT_JOURNAL_FILE) */
	struct vreactor *r;
	struct vsb sb;
	uint64_t ext;          /* extent size in bytes */
	uint32_t gran_per_ext; /* granules per extent */
	uint32_t bm_words;     /* u64 words per validity bitmap */
	uint64_t n_ext;
	uint32_t *refs;
	uint64_t total_refs;   /* map references (hydration sources' not counted) */
	uint32_t *hx;          /* acct.c: per extent, XOR of its references' holders */
	uint64_t n_ref_ext;    /* acct.c: extents with a reference */
	uint64_t n_mref_ext;   /* acct.c: extents with a map reference */
	uint64_t *freebits; /* 1 = free */
	uint64_t n_free;
	uint64_t cursor;
	uint64_t *backed;      /* 1 = the pool file's space is reserved (alloc.c) */
	uint64_t n_backed_free, bcursor;
	struct prebacker *pb;  /* preback.c */
	uint64_t *partial; /* 1 = has a validity bitmap in `validity` */
	struct hmap validity;
	struct vvol *vols[VPOOL_MAX_VOLUMES];
	uint16_t order[VPOOL_MAX_VOLUMES]; /* creation order of slots */
	unsigned n_vols;
	struct vjournal *j;
	struct hmap locks;
	struct pend_free *pend;
	size_t pend_head, pend_tail, pend_cap;
	/* Extents whose refcount dropped to 1 in a commit not durable yet (alloc.c): until
	 * it is, a crash may bring the other reference back, so nothing is written there
	 * in place (the data path redirects as for a shared extent). pext -> seq. */
	struct hmap unshared;
	struct pend_free *unsh;
	size_t unsh_head, unsh_tail, unsh_cap;
	struct ckpt_state *ckpt;
	struct pool_map_freeze map_fz; /* map.h: a live checkpoint's frozen leaves (ckpt_image.c) */
	struct pool_refs_freeze refs_fz; /* refs_aside.h: its frozen refcounts */
	uint64_t checkpoints;
	uint64_t checkpoint_ns; /* summed time of the completed ones */
	uint64_t share_room_refused; /* shares refused by pool_ckpt_room (share.c) */
	struct hmap hydr;           /* pext -> struct hydr_ent (redirected, not yet hydrated) */
	struct hmap hsrc;           /* source pext -> its source references (uintptr_t) */
	struct hmap xdup;           /* acct.c: pext -> struct acct_xdup (its holders by volume) */
	struct hydrator *hyd;       /* the background hydrator (hydrate.c) */
	unsigned inflight; /* data requests in flight */
	unsigned discards; /* freed extents being discarded (discard.c): counted as free */
	struct preq *space_wait; /* requests waiting for those extents (datapath.c) */
	uint64_t discard_errors;
	uint64_t fg_last_ns; /* vclock_ns of the last data request's completion (hydrator pace) */
	struct pool_req *reqs; /* the requests in flight */
	struct vpool_ctx *ctxs; /* callers' contexts (vpool_ctx_track) */
	/* redo.c: extents with DATA records since the last checkpoint (pext -> 1) */
	struct hmap redo_pending;
	/* redo.c: a live checkpoint's pending set as of its freeze point, retired when its
	 * superblock is durable (the records after the freeze stay in redo_pending) */
	struct hmap redo_retiring;
	unsigned redo_inflight;        /* home writes of DATA records in flight */
	struct vio_op *redo_ckpt_wait; /* run when redo_inflight reaches 0 */
	struct vio_op *redo_then;      /* the checkpoint's continuation */
	struct vio_op redo_wait_op, redo_flush_op;
	struct redo_scan *redo_scan;   /* open: the first pass over the journal */
	uint64_t redo_replayed;        /* bytes written home by replay */
	bool replaying;
	bool failed;
	bool readonly;
	/* soft threshold (vpool_set_soft_threshold) */
	uint64_t thr_used;
	bool thr_above;
	void (*thr_cb)(void *arg, bool above);
	void *thr_arg;
};

static inline uint64_t pool_lock_key(uint16_t idx, uint64_t vext)
{
	return (uint64_t)idx << 48 | vext;
}
static inline uint64_t pool_ext_off(const struct vpool *p, uint64_t pext)
{
	return p->sb.data_off + pext * p->ext;
}

/* alloc.c */
int pool_alloc_init(struct vpool *p);            /* free map from refs */
int pool_reserve(struct vpool *p, uint64_t *out); /* -ENOSPC */
/* Prefers a backed free extent: 1 = backed (no fallocate needed), 0 = not, -ENOSPC. */
int pool_reserve_backed(struct vpool *p, uint64_t *out);
void pool_mark_backed(struct vpool *p, uint64_t pext); /* its fallocate succeeded */
/* The first free extent of a kind at or after from (wrapping); false if none. */
enum free_kind { FREE_ANY, FREE_BACKED, FREE_UNBACKED };
bool pool_find_free(const struct vpool *p, enum free_kind kind, uint64_t from, uint64_t *out);
void pool_unreserve(struct vpool *p, uint64_t pext);
/* Is pext in the free map? Reserve it if it is (the store sweep, sweep.c): true if it was. */
bool pool_ext_is_free(const struct vpool *p, uint64_t pext);
bool pool_take_if_free(struct vpool *p, uint64_t pext);
/* The pool has failed (a journal commit, a metadata write or a data write failed:
 * such a write may still land later, e.g. an RBD op that timed out), or its store
 * fenced this gateway (vpool_fenced: then it fails from now on): entry points
 * refuse requests, and so does a request that waited for locks (req_issue checks
 * again once it holds them): after a failed commit, mappings applied in memory
 * are not durable, so an overwrite through them would be acknowledged and lost at
 * the next open (tests/unit/test_pool_write_failure.c). */
static inline bool pool_check_failed(struct vpool *p)
{
	if (!p->failed && (vpool_fenced(p) || (p->j && vjournal_failed(p->j))))
		p->failed = true;
	return p->failed;
}
/* discard.c: a freed extent, durable as free, back to the free map (discarded in the
 * store first where the store can); pool_discards_busy: some still in flight. */
void pool_release_extent(struct vpool *p, uint64_t pext);
bool pool_discards_busy(const struct vpool *p);
/* datapath.c: extents came back to the free map; requests that waited for them go on. */
void pool_space_freed(struct vpool *p);
int pool_free_after(struct vpool *p, uint64_t pext, uint64_t seq);
/* Live: pext's refcount dropped to 1 in commit seq (private once that is durable). */
int pool_unshared_after(struct vpool *p, uint64_t pext, uint64_t seq);
/* Is pext shared, or was it until a commit that is not durable yet? */
bool pool_extent_shared(const struct vpool *p, uint64_t pext);
void pool_durable(void *owner, uint64_t seq);     /* journal callback */
void pool_thr_check(struct vpool *p);             /* after n_free changed */

/* preback.c: keeps a few free extents backed ahead of need */
struct prebacker;
int pool_preback_init(struct vpool *p);
void pool_preback_free(struct vpool *p);
void pool_preback_kick(struct vpool *p);  /* after reservations, frees, growth */
void pool_preback_stop(struct vpool *p);  /* closing */
bool pool_preback_busy(const struct vpool *p);
void pool_preback_unstall(struct vpool *p); /* space may be there again */

/* redo.c: small writes carried in the journal */
#define POOL_REDO_MAX (32u * 1024) /* bytes of one write's part in one extent */
uint16_t pool_redo_record_len(uint32_t len);
bool pool_redo_pending(const struct vpool *p, uint64_t pext);
int pool_log_valid_redo(struct vpool *p, uint64_t pext, uint32_t g0, uint32_t n);
int pool_log_data(struct vpool *p, uint64_t pext, uint32_t eoff, const struct iovec *iov,
		  int iovcnt, uint32_t len);
int pool_redo_scan(struct vpool *p, struct vblk *dev); /* open: before the replay */
void pool_redo_scan_free(struct vpool *p);
int pool_apply_data(struct vpool *p, const uint8_t *b, uint16_t len);
void pool_redo_home_done(struct vpool *p);
void pool_redo_before_ckpt(struct vpool *p, struct vio_op *then);
void pool_redo_retired(struct vpool *p);
/* A live checkpoint's freeze point: the pending set so far retires with its superblock
 * (pool_redo_retired_frozen); extents with DATA records after it stay pending. -ENOMEM. */
int pool_redo_freeze(struct vpool *p);
void pool_redo_retired_frozen(struct vpool *p);

/* validity.c */
uint64_t *pool_validity(const struct vpool *p, uint64_t pext); /* NULL = fully valid */
bool pool_granules_valid(const struct vpool *p, uint64_t pext, uint32_t g0, uint32_t g1);
bool pool_granule_valid(const struct vpool *p, uint64_t pext, uint32_t g);
int pool_validity_set_empty(struct vpool *p, uint64_t pext);
/* A bitmap as a checkpoint stores it (bm_words little-endian u64): -EUCLEAN when a
 * bit past the extent is set or every granule is (a complete bitmap is never kept). */
int pool_validity_load(struct vpool *p, uint64_t pext, const uint8_t *words);
int pool_validity_change(struct vpool *p, uint64_t pext, uint32_t g0, uint32_t n, bool set);
void pool_validity_drop(struct vpool *p, uint64_t pext);
/* Is any granule of [g0, g1) valid? */
bool pool_any_valid(const struct vpool *p, uint64_t pext, uint32_t g0, uint32_t g1);

/* records.c: apply (memory only) */
/* The largest volume: VPOOL_MAX_VOLUME_EXTENTS (its map is then 512 MiB).
 * Creating or growing past it is refused (-EFBIG); a checkpoint or journal record
 * naming a larger volume is damage (-EUCLEAN), never an allocation attempted. */
static inline bool pool_vol_size_ok(const struct vpool *p, uint64_t size)
{
	return size <= vpool_volume_size_max(p->ext);
}
int pool_apply_vol_create(struct vpool *p, uint16_t idx, const char *name, uint64_t size,
			  uint32_t block_size, const uint8_t naa[16], const char *serial);
/* Live, extents whose last reference goes are queued to be freed once the
 * current commit is durable (pool_free_after); in replay they simply become free. */
int pool_apply_map(struct vpool *p, uint16_t idx, uint64_t vext, uint64_t old1, uint64_t new1,
		   uint8_t flags);
/* Drop one reference of pext (a map entry's or a hydration source's), with what follows. */
int pool_ref_drop(struct vpool *p, uint64_t pext, uint32_t holder); /* POOL_HOLDER_* */
int pool_apply_valid(struct vpool *p, uint64_t pext, uint32_t g0, uint32_t n, bool set);
int pool_replay_record(void *arg, uint8_t type, uint8_t flags, const uint8_t *payload,
		       uint16_t len);
/* records.c: live (append to the journal, then apply); -EAGAIN when the journal has no room */
#define REC_MAP_LEN 28
#define REC_VALID_LEN 16
int pool_log_map(struct vpool *p, struct vvol *v, uint64_t vext, uint64_t new1, uint8_t flags);
int pool_log_valid(struct vpool *p, uint64_t pext, uint32_t g0, uint32_t n, bool set);
int pool_apply_vol_resize(struct vpool *p, uint16_t idx, uint64_t size);
int pool_log_vol_resize(struct vpool *p, struct vvol *v, uint64_t size);
/* live: freed extents are queued with pool_free_after(seq); replay: simply free. */
int pool_apply_vol_delete(struct vpool *p, uint16_t idx);
int pool_log_vol_delete(struct vpool *p, struct vvol *v);
#define REC_SHARE_LEN 28
/* share.c: live, freed extents are queued with pool_free_after(seq); replay: simply free. */
int pool_apply_share(struct vpool *p, uint16_t sidx, uint16_t didx, uint64_t svext,
		     uint64_t dvext, uint64_t n);
int pool_log_share(struct vpool *p, struct vvol *src, struct vvol *dst, uint64_t svext,
		   uint64_t dvext, uint64_t n);
int pool_log_vol_create(struct vpool *p, uint16_t idx, const char *name, uint64_t size,
			uint32_t block_size, const uint8_t naa[16], const char *serial);

/* datapath.c / share.c: the same requests for a caller that already holds every
 * extent of the range(s) exclusive (copy.c); nothing is locked or released. */
int pool_rw_locked(struct vvol *v, bool write, uint64_t off, uint64_t len, const struct iovec *iov,
		   int iovcnt, vvol_cb cb, void *arg);
/*
 * datapath.c: vvol_write that takes no new space: an extent that is unmapped or
 * shared (redirect-on-write would allocate) is left as it is, and the request
 * still succeeds. The zeros of an advisory UNMAP (dealloc.c).
 */
int pool_write_noalloc(struct vvol *v, uint64_t off, uint64_t len, const struct iovec *iov,
		       int iovcnt, vvol_cb cb, void *arg);
int pool_share_locked(struct vvol *src, uint64_t soff, struct vvol *dst, uint64_t doff,
		      uint64_t len, vvol_cb cb, void *arg);

/* checkpoint.c */
uint8_t *pool_blob_alloc(uint64_t len); /* checkpoint blobs: mmap'd, aligned, zeroed */
void pool_blob_free(uint8_t *b, uint64_t len);
uint64_t pool_ckpt_size_for(uint64_t n_ext, uint32_t bm_words);
/* Read (through a 1 MiB window), check the crc, and load the blob at dev offset off. */
int pool_ckpt_load(struct vpool *p, struct vblk *dev, uint64_t off, uint64_t len, uint32_t crc);
int pool_ckpt_serialize(const struct vpool *p, uint8_t **out, uint64_t *len);
void pool_ckpt_request(void *owner);              /* journal callback: start async */
int pool_ckpt_sync(struct vpool *p);              /* start (or join) and wait */
bool pool_ckpt_busy(const struct vpool *p);
/* vpool_get_diag */
void pool_ckpt_phase(const struct vpool *p, int *phase, int *fail_phase, uint64_t *live_records);
void pool_ckpt_steps(const struct vpool *p, struct vpool_ckpt_steps *last);
void pool_ckpt_free(struct vpool *p);

/* acct.c: space accounting (docs/snapshots.md section 6). A reference's holder: a
 * volume's map entry (slot + 1) or a hydration source reference. */
#define POOL_HOLDER_SRC (1u << 31) /* | the slot + 1 of the redirected extent's volume */
static inline uint32_t pool_holder_vol(uint16_t idx) { return (uint32_t)idx + 1; }
static inline uint32_t pool_holder_src(uint16_t idx) { return POOL_HOLDER_SRC | pool_holder_vol(idx); }
/* Before a map reference of x is added (pool_apply_map): room for it in x's holder
 * list when x has a reference already; -ENOMEM, nothing changed. */
int pool_acct_prepare(struct vpool *p, uint64_t x);
int pool_acct_init(struct vpool *p); /* hx for p->n_ext extents; -ENOMEM */
void pool_acct_free(struct vpool *p);
void pool_acct_ref_added(struct vpool *p, uint64_t x, uint32_t holder);   /* after refs[x]++ */
void pool_acct_ref_dropped(struct vpool *p, uint64_t x, uint32_t holder); /* after refs[x]-- */
/* A map entry's reference became a hydration source's (a redirect), counted by
 * hydrate.c already; refs[x] unchanged. */
void pool_acct_map_to_src(struct vpool *p, uint64_t x, uint32_t holder);
int pool_acct_rebuild(struct vpool *p);             /* from the maps (checkpoint load) */
int pool_acct_verify(const struct vpool *p, FILE *f); /* recount: number of problems, -ENOMEM */
/* checkpoint.c: can the checkpoint area hold every map reference the pool can come
 * to have with add_refs more (a SHARE) and n_ext extents (a grow)? -ENOSPC if not. */
int pool_ckpt_room(const struct vpool *p, uint64_t add_refs, uint64_t n_ext);

/* hydrate.c */
#define REC_HYDRATED_LEN 16
static inline struct hydr_ent *pool_hydr(const struct vpool *p, uint64_t pext)
{
	return p->hydr.n ? hmap_get(&p->hydr, pext) : NULL;
}
/* Source of pext's granules that are not valid: UINT64_MAX if none. */
static inline uint64_t pool_hydr_src(const struct vpool *p, uint64_t pext)
{
	struct hydr_ent *h = pool_hydr(p, pext);
	return h ? h->src : UINT64_MAX;
}
/* Does granule g of pext read data (valid in pext, or in its hydration source)? */
bool pool_granule_has_data(const struct vpool *p, uint64_t pext, uint32_t g);
bool pool_any_data(const struct vpool *p, uint64_t pext, uint32_t g0, uint32_t g1);
/* How many granules of [g0, g1) hold data (pool_granule_has_data)? */
uint32_t pool_count_data(const struct vpool *p, uint64_t pext, uint32_t g0, uint32_t g1);
int pool_apply_hydrated(struct vpool *p, uint64_t pext, uint64_t src);
/* pext has a source, and holds everything the source has (writes filled it): done. */
bool pool_hydr_complete(const struct vpool *p, uint64_t pext);
int pool_log_hydrated(struct vpool *p, uint64_t pext, uint64_t src); /* live; -EAGAIN: no room */
/* records: apply a MAP_ROW's source (memory only) */
int pool_hydr_add(struct vpool *p, uint64_t pext, uint64_t src, uint16_t idx, uint64_t vext);
void pool_hydr_forget(struct vpool *p, uint64_t pext); /* pext freed: entry gone, not its ref */
int pool_hydrator_init(struct vpool *p);
void pool_hydrator_free(struct vpool *p);
void pool_hydrator_kick(struct vpool *p);  /* new work, or a request completed */
void pool_hydrator_stop(struct vpool *p);  /* closing: start nothing new */
void pool_hydrator_hold(struct vpool *p, bool hold); /* nested: no new job while held */
bool pool_hydrator_busy(const struct vpool *p);
/* Control path: start a job now, unpaced. 1: one runs; 0: nothing waits; -EIO: cannot. */
int pool_hydrator_start_now(struct vpool *p);
unsigned pool_hydrator_errors(const struct vpool *p);
/*
 * Hydrate pext now; the caller holds pext's extent lock exclusive. done(arg, err)
 * runs from the reactor once the HYDRATED record is durable (at once if pext
 * has no source).
 */
int pool_hydrate_locked(struct vpool *p, uint64_t pext, void (*done)(void *arg, int err), void *arg);

/* extent_lock.c */
enum { XLOCK_SHARED = 1, XLOCK_EXCL = 2 };
struct xlock_wait {
	struct xlock_wait *next;
	uint8_t mode;
	void (*granted)(struct xlock_wait *w);
};
/* Returns 1 if granted now, 0 if queued (granted() runs later, from the reactor). */
int xlock_acquire(struct vpool *p, uint64_t key, uint8_t mode, struct xlock_wait *w);
void xlock_release(struct vpool *p, uint64_t key, uint8_t mode);
/*
 * A set of extent locks taken by one request: add keys, then acquire them all
 * (sorted ascending, duplicates merged, the stronger mode kept); done(arg, 0)
 * runs once all are held (possibly at once), done(arg, -errno) on failure
 * (those taken are released by xlockset_release). Release, then free.
 */
struct xlock_ent {
	uint64_t key;
	uint8_t mode;
	bool locked;
};
struct xlockset {
	struct xlock_ent *ents;
	size_t n, cap, next;
	struct vpool *p;
	void (*done)(void *arg, int err);
	void *arg;
	struct xlock_wait lw;
	struct vio_op op;
};
int xlockset_add(struct xlockset *s, uint64_t key, uint8_t mode);
void xlockset_acquire(struct xlockset *s, struct vpool *p, void (*done)(void *arg, int err),
		      void *arg);
void xlockset_release(struct xlockset *s);
void xlockset_free(struct xlockset *s);

#endif
