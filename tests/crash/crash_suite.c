/*
 * Crash suite: the real engine (ring, dispatch, handlers, pool, journal) on a
 * crash-simulating block device (vblk_crashsim), against an independent
 * in-memory model.
 *
 * How this works: one long seeded workload runs over several volumes of one
 * pool (allocating writes, overwrites, partial-granule writes, 512-byte and
 * 4096-byte volumes, deallocations that free extents for reuse by other
 * volumes, an over-committed pool that answers DATA PROTECT, a journal small
 * enough to wrap and force checkpoints, clean reopens) and, through the ring,
 * UNMAP, WRITE SAME(16) of a zero block (UNMAP bit or not), COMPARE AND
 * WRITE of one block (its verify data built from the model, so it must
 * succeed, and an acknowledged CAW must survive like any write) and EXTENDED
 * COPY(LID1) as ESXi sends it (E4h CSCD descriptors naming the volumes by the
 * NAA designator their VPD 83h reports, 02h block -> block segments, LIST ID
 * USAGE 11b): between volumes and within one, extent-aligned ranges (shared:
 * map entries copied, refcounts raised), congruent but unaligned ones (head
 * and tail copied, the middle shared), incongruent and overlapping ones (all
 * copied), whole-volume clones, several segments per command. Writes, CAWs,
 * UNMAPs, WRITE SAMEs and deallocations then land on shared extents
 * (redirect-on-write; dropped references), and volumes whose extents are
 * shared are deleted and created again (their NAA changes, the copies stay;
 * sometimes the power fails during that).
 * Partial writes into shared extents leave the new extent reading the rest
 * from the shared one until background hydration copies it; the hydrator is
 * paused and resumed at random points, so redirected extents live through
 * crashes, checkpoints and reopens both hydrated and not. Now and then the
 * pool is grown online by one extent (up to 16 times, so it stays
 * over-committed), sometimes losing power inside the grow (the pool must
 * come back at the old size or the new one), and later crashes recover the
 * grown pool.
 * Before each crash point the device is armed to lose power at a random
 * write/flush; when it fires, every write not yet durable is dropped, applied
 * or torn at 512-byte sectors, and the pool is recovered (checkpoint +
 * journal replay). The fault mode (--fault, docs/crash.md) adds to that:
 * tear: nothing more; trash: a sector an unsynced write changes may also come
 * back as random bytes; alloc: fallocate and size changes of the pool file and
 * the journal file are lost at the cut unless a flush (a grow: or a DSYNC
 * write) completed after them, so unsynced writes into blocks never durably
 * mapped read zeros and a grow may be undone.
 *
 * The model keeps, per 512-byte sector, a token for the content of the last
 * acknowledged change (0 = zeros; else the id of the write that produced the
 * bytes plus the volume and sector it wrote them to -- a copy moves tokens),
 * at most one token in flight (the workload never has two overlapping
 * changes in flight; a copy's destination gets the source's acknowledged
 * tokens as of its submission, and is "in flight" -- old or new content --
 * until acknowledged; a write may change a copy's source while the copy runs,
 * and then the destination may hold that write's tokens instead, also once
 * the copy is acknowledged -- the write landed before or after it)
 * and, after an UNMAP that may have met a shared extent, an alternative (an
 * UNMAP that only partly covers a shared extent leaves it as it is: UNMAP is
 * advisory). Every sector's content encodes its token, so after a crash each
 * sector must decode to its acknowledged, alternative or in-flight token (an
 * unset alternative, NONE, matches nothing): an acknowledged write or copy
 * lost, stale data from another volume or garbage (a sector that decodes to no
 * token) all fail -- except in trash mode, in a sector a command in flight at
 * the cut was changing: the model then records those bytes (a token made of
 * their hash, TRASH_TAG) as the sector's content, and later checks and copies
 * require exactly them (COMPARE AND WRITE, whose verify data the model builds,
 * avoids such sectors). A command refused for space changes nothing (WRITE, CAW), or
 * leaves its range "in flight" until the next check (WRITE SAME zero and
 * EXTENDED COPY may have done part of their work). After each recovery the
 * NAAs must be unchanged, the pool's invariants are checked (vpool_verify,
 * the code vaai-check runs: every extent's refcount equals the map entries
 * that reference it, free + referenced extents = all extents, nothing queued
 * to be freed twice -- no leaked, no double-freed extent; also now and then
 * while commands are in flight, unless the power has just failed: counted
 * apart), and every CHECK_EVERY points the pool is
 * closed and build/bin/vaai-check is run on the file.
 *
 * A run fails unless every kind of operation it claims to test was
 * acknowledged at least once (and sharing was found in the pool after a
 * recovery): the model also knows, for counting only, which extents are
 * certainly shared (a copy of an extent holding data acknowledged, neither
 * side rewritten or unmapped since, no crash since).
 *
 *   crash_suite [--fault tear|trash|alloc] [--points N] [--seed S | --commit HASH
 *               [--salt N]] [--check VAAI_CHECK] [--verbose] [--no-coverage-check]
 *               [--whole-granules] [--live-checkpoints] [--self-test]
 *               [--rbd CEPHPOOL [--mutate-ack-killed]]
 * --rbd CEPHPOOL: the same workload and model with the pool on an RBD image of
 * CEPH_CONF's cluster (journal inside, as the daemon's), through simhost's
 * io=rbd_kill: at each crash point the engine is killed instead of the power
 * failing (tools/simhost/vblk_killpoint.c: at the armed write/flush/discard
 * nothing more is sent and nothing more completes for it), a new client takes
 * the image over (lock broken, the old client blocklisted) and recovers the
 * pool; then the same check. Fault mode tear only; --self-test and vaai-check
 * (files only) are skipped and the run says so. --mutate-ack-killed: the I/O a
 * kill is armed at is acknowledged unsent, the kill comes 64 changes later (the
 * oracle's test on RBD: it must fail). docs/crash.md, "RBD".
 * The seed: --seed S; else derived from --commit (tests/crash/run-suite passes
 * `git rev-parse HEAD`), the fault mode, --whole-granules and --salt (the
 * build), so each commit explores other points; else fixed (1 + salt). It is
 * printed first, and a failure prints the command that replays it.
 * --self-test: the device also overwrites, at each crash, the first sector of
 * the last data write that became durable with random bytes
 * (VBLK_CS_INJECT_GARBAGE): the run passes when the data check catches such
 * garbage, and fails if it never does (or fails otherwise).
 * --live-checkpoints: the pool's checkpoints are live (vpool_set_live_checkpoints:
 * appends go on while the blob and the superblock are written; the superblock names
 * the freeze point as the replay start), so power is lost inside every window of
 * one; docs/snapshots.md section 12, step 3.
 * --whole-granules: partial-granule writes in place are read-modify-writes of
 * whole granules, as on a store that serializes unaligned direct writes
 * (datapath.c; simhost_whole_granules).
 * --no-coverage-check drops the "every kind exercised" requirement (printed:
 * how many kinds were missed). For short runs under ThreadSanitizer, whose
 * point is races (scripts/test); its full runs keep the requirement.
 * A failure prints the seed and the crash point; rerun with that seed.
 * VAAID_CRASH_POINTS=N overrides --points.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scsi_build.h"
#include "simhost.h"
#include "rings.h"
#include "vaaid/buf_cache.h"
#include "vaaid/rng.h"
#include "vaaid/util.h"

#define NVOL 5
#define SECT 512u
#define QD 16
#define NONE UINT64_MAX /* unset: matches no sector */
#define GARBAGE (UINT64_MAX - 1) /* what decode_sector says of a sector holding no token */
#define TRASH_TAG (1ull << 63)   /* a token for exact bytes: TRASH_TAG | 62 bits of their hash */
#define CHECK_EVERY 100u
#define POOL_SIZE (12u << 20)
#define EXTENT (64u << 10)
#define EXT_SECT (EXTENT / SECT)
#define GRAN_SECT (VPOOL_GRANULE / SECT)
#define JOURNAL (640u << 10)
#define READ_CHUNK (1u << 20)
#define MAXSEG 4
#define STALL_S 60 /* no command completing for this long: the engine is stuck */

struct vmodel {
	char name[16];
	uint32_t block;
	uint64_t nsect;  /* 512-byte sectors */
	uint64_t next;   /* extents */
	uint64_t *acked; /* token of the last acknowledged content (0 = zeros) */
	uint64_t *alt;   /* NONE, or another content an acknowledged advisory UNMAP allows */
	uint64_t *pend;  /* token of the change in flight (0: zeroing), or NONE */
	uint64_t *race;  /* a copy's destination: the token of a write to its source that the
			    copy, in flight, may have taken instead of pend; or NONE */
	uint8_t *rd;     /* copies in flight reading this sector */
	uint8_t *cut;    /* a change to it was in flight at the last power cut (until checked) */
	bool *maybe_sh;  /* per extent: may be shared or redirected and not yet hydrated (a
			    share of it was submitted since it was last rewritten whole or
			    unmapped) -- decides what an UNMAP does */
	uint32_t *grp;   /* per extent: share group known for certain (0: none); counting only */
	uint8_t naa[16]; /* as VPD 83h reports it */
};

/* One segment of an EXTENDED COPY in flight, in 512-byte sectors. */
struct cseg {
	int sv, dv;
	uint64_t ss, ds, ns;
	uint64_t mid_s, mid_d, mid_n; /* the shared middle (sectors, whole extents) */
	uint64_t src_data;            /* bit k: source extent k of the middle held data */
	bool copied_data;             /* a copied part whose source held data */
	bool raced;                   /* its source was written while it was in flight */
};

struct inflight {
	bool used;
	uint64_t tag;
	uint8_t kind; /* K_WRITE, K_ZERO, K_CAW, K_COPY */
	int vol;
	uint64_t s0, ns; /* sectors the command names */
	uint64_t a, b;   /* sectors it changes (deallocation: whole granules only) */
	bool advisory;   /* UNMAP, deallocation: a partly covered shared extent stays as it is */
	bool raced;      /* WRITE: written while a copy in flight read the range */
	uint64_t e0;     /* first extent of [s0, s0+ns) */
	uint32_t maybe_mask, sure_mask; /* at submission, per extent from e0 */
	unsigned nseg;
	struct cseg seg[MAXSEG];
};
enum { K_WRITE, K_ZERO, K_CAW, K_COPY };

enum fault { F_TEAR, F_TRASH, F_ALLOC };
static const char *const fault_name[] = {"tear", "trash", "alloc"};

struct suite {
	struct simhost_rings *rings; /* the LUNs' rings, kept across crashes and reopens */
	struct vbuf_cache *bufs;     /* the engine's large buffers, the same */
	uint64_t seed, rng;
	enum fault fault; /* --fault */
	const char *seed_from; /* how the seed was chosen (printed) */
	bool self_test;   /* --self-test: garbage injected at each crash must be caught */
	unsigned points;
	const char *check_bin;
	bool verbose;
	bool no_coverage; /* --no-coverage-check */
	bool whole;       /* --whole-granules */
	bool live_ckpt;   /* --live-checkpoints: vpool_set_live_checkpoints */
	const char *rbd;  /* --rbd CEPHPOOL: the pool on an RBD image, the engine killed */
	bool mutate_ack;  /* --mutate-ack-killed (RBD): the oracle's test, must fail */
	enum simhost_io io;
	char path[4096];
	struct simhost *h;
	struct vmodel v[NVOL];
	struct inflight q[QD];
	unsigned nq;
	uint32_t next_id, next_grp;
	unsigned point;
	uint64_t target, arm_base; /* the armed crash: target I/Os from io count arm_base */
	time_t progress;           /* when a command last completed (or the point began) */
	uint64_t writes_acked, writes_nospc, deallocs, reopens, sectors_checked, torn_seen;
	uint64_t zeroes_acked, caws_acked, verifies, verifies_unpowered;
	/* EXTENDED COPY and sharing */
	uint64_t xc_acked, xc_nospc, xc_shared, xc_copied, xc_multi, xc_within, xc_cross,
		xc_clone;
	uint64_t row_writes, row_overwrites, shared_drops, shared_unmap_partial,
		ws_zero_shared_partial, source_deletes, recycles, shared_after_recovery;
	uint64_t hydrating_after_recovery, hydrated_seen, reopens_hydrating, hyd_pauses;
	uint64_t redo_recoveries; /* recoveries that wrote journal-carried writes home */
	uint64_t cut_ckpt[4];     /* power lost with a checkpoint at VPOOL_CKPT_* */
	uint64_t live_records;    /* records appended while live checkpoints wrote (crashed pools) */
	uint64_t grows; /* online pool growths (vpool_grow) */
	uint64_t grow_pending; /* the size a grow the power failed inside asked for, or 0 */
	uint64_t grow_crash_old, grow_crash_new; /* such grows recovered at the old / new size */
	int recycle_pending; /* 1 + the volume the power failed while deleting / creating, or 0 */
	uint64_t recycle_crash_kept, recycle_crash_gone, recycle_crash_new;
	uint64_t xc_raced; /* copies acknowledged whose source was written while in flight */
	uint64_t trash_recorded; /* garbage found where a change was in flight (trash mode) */
	struct vblk_crashsim_fault_stats fst; /* summed over the run's devices */
	/* --rbd: the kills (simhost_last_kill) */
	uint64_t kills, kill_in_flight, kill_dropped, swept;
	uint64_t takeover_ms_sum, takeover_ms_max, recovery_ms_sum, recovery_ms_max;
	uint64_t checks_skipped; /* vaai-check runs not made (--rbd: it opens files only) */
};

static void fail(struct suite *s, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void fail(struct suite *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "crash_suite: FAIL (seed %" PRIu64 ", crash point %u): ", s->seed, s->point);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fprintf(stderr, "crash_suite: reproduce with: %scrash_suite --fault %s --seed %" PRIu64
			" --points %u%s%s%s%s%s%s\n",
		s->rbd ? "CEPH_CONF=... " : "", fault_name[s->fault], s->seed, s->point + 1,
		s->whole ? " --whole-granules" : "", s->live_ckpt ? " --live-checkpoints" : "",
		s->self_test ? " --self-test" : "", s->rbd ? " --rbd " : "", s->rbd ? s->rbd : "",
		s->mutate_ack ? " --mutate-ack-killed" : "");
	/* _exit: no exit handlers. On RBD a killed engine's client is abandoned
	 * with its threads running, and librados' static destructors then abort
	 * the process (SIGABRT under ASan), which ctest counts as a crash even
	 * where the failure is the expected result (ceph/crash_suite_rbd_mutated). */
	fflush(stdout);
	fflush(stderr);
	_exit(1);
}

static uint64_t rnd(struct suite *s) { return vrng_next(&s->rng); }
static uint64_t rnd_below(struct suite *s, uint64_t n) { return n ? rnd(s) % n : 0; }
static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static time_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* ---- sector contents: a token (write id, volume and sector it was written to) */

static uint64_t token(uint32_t id, int vol, uint64_t sect)
{
	return (uint64_t)id << 32 | (uint64_t)vol << 24 | sect;
}

static void fill_sector(uint8_t *p, uint64_t tok)
{
	uint32_t id = (uint32_t)(tok >> 32), v32 = (uint32_t)(tok >> 24 & 0xFF);
	uint64_t sect = tok & 0xFFFFFF;
	uint64_t x = ((uint64_t)id << 32) ^ ((uint64_t)v32 << 56) ^ sect ^ 0xA5A5A5A5DEADBEEFull;
	memcpy(p, &id, 4);
	memcpy(p + 4, &v32, 4);
	memcpy(p + 8, &sect, 8);
	for (unsigned i = 16; i < SECT; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

/* The token a sector holds: 0 for zeros, the token of a well-formed sector, GARBAGE else. */
static uint64_t decode_sector(const uint8_t *p)
{
	static const uint8_t zero[SECT];
	if (!memcmp(p, zero, SECT))
		return 0;
	uint32_t id, v32;
	uint64_t sect;
	memcpy(&id, p, 4);
	memcpy(&v32, p + 4, 4);
	memcpy(&sect, p + 8, 8);
	if (!id || v32 >= NVOL || sect > 0xFFFFFF)
		return GARBAGE;
	uint64_t tok = token(id, (int)v32, sect);
	uint8_t want[SECT];
	fill_sector(want, tok);
	return memcmp(p, want, SECT) ? GARBAGE : tok;
}

/* The token of exact bytes (trash mode records garbage by it): FNV-1a, 62 bits. */
static uint64_t trash_token(const uint8_t *p)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (unsigned i = 0; i < SECT; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return TRASH_TAG | (h & ((1ull << 62) - 1));
}

/* One of the contents the model allows (an unset one, NONE, allows nothing). */
static bool allowed(uint64_t got, uint64_t x) { return x != NONE && got == x; }

/* ---- commands */

static bool is_nospc(const struct simhost_result *r)
{
	return r->r.status == 2 && r->r.sense_len >= 14 && (r->r.sense[2] & 0xF) == 0x7 &&
	       r->r.sense[12] == 0x27 && r->r.sense[13] == 0x07;
}

/* Run one command with nothing else in flight; the caller frees the result. */
static void run_sync(struct suite *s, int vol, const uint8_t *cdb, size_t cdb_len, size_t in_len,
		     struct simhost_result *r)
{
	uint64_t tag;
	int rc = simhost_submit(s->h, vol, cdb, cdb_len, NULL, 0, in_len, &tag);
	if (rc < 0)
		fail(s, "submit: %s", strerror(-rc));
	int n = simhost_reap(s->h, r, 1, 60000);
	if (n != 1 || r->tag != tag)
		fail(s, "command %02x on %s did not complete", cdb[0], s->v[vol].name);
}

/* ---- what the model knows about sharing */

static bool sure_shared(const struct suite *s, int vol, uint64_t e, bool other_volume)
{
	uint32_t g = s->v[vol].grp[e];
	if (!g)
		return false;
	for (int w = 0; w < NVOL; w++) {
		if (other_volume && w == vol)
			continue;
		for (uint64_t k = 0; k < s->v[w].next; k++)
			if (s->v[w].grp[k] == g && (w != vol || k != e))
				return true;
	}
	return false;
}

/*
 * [s0, s0+ns) was rewritten (acknowledged write or CAW): its extents are not shared
 * any more. One rewritten only in part was redirected and may still read the rest
 * from the shared extent until hydrated in the background, so an advisory UNMAP may
 * still leave part of it as it was: it stays "maybe shared" (conservative).
 */
static void extents_private(struct suite *s, int vol, uint64_t s0, uint64_t ns, bool raced)
{
	struct vmodel *m = &s->v[vol];
	for (uint64_t e = s0 / EXT_SECT; e <= (s0 + ns - 1) / EXT_SECT; e++) {
		/* A write that raced a copy reading the range may have come before the copy
		 * shared the extent: it may still be shared. */
		if (!raced && s0 <= e * EXT_SECT && s0 + ns >= (e + 1) * EXT_SECT)
			m->maybe_sh[e] = false;
		m->grp[e] = 0;
	}
}

static uint32_t extent_masks(struct suite *s, int vol, uint64_t s0, uint64_t ns, bool sure)
{
	uint32_t mask = 0;
	for (uint64_t e = s0 / EXT_SECT; e <= (s0 + ns - 1) / EXT_SECT; e++)
		if (sure ? sure_shared(s, vol, e, false) : s->v[vol].maybe_sh[e])
			mask |= 1u << (e - s0 / EXT_SECT);
	return mask;
}

/*
 * An acknowledged UNMAP / deallocation (advisory) or WRITE SAME zero of [s0, s0+ns),
 * changing sectors [a, b): extents covered whole are unmapped; an extent that may be
 * shared and is only partly covered by an advisory command may have been left as it
 * was; everything else in [a, b) reads zeros.
 */
static void zero_acked(struct suite *s, const struct inflight *f)
{
	struct vmodel *m = &s->v[f->vol];
	for (uint64_t e = f->s0 / EXT_SECT; e <= (f->s0 + f->ns - 1) / EXT_SECT; e++) {
		uint64_t eb = e * EXT_SECT, ee = eb + EXT_SECT;
		bool whole = f->s0 <= eb && f->s0 + f->ns >= ee;
		unsigned bit = (unsigned)(e - f->e0);
		bool amb = f->advisory && !whole && (f->maybe_mask >> bit & 1);
		uint64_t ga = max64(f->a, eb), gb = min64(f->b, ee);
		if (f->sure_mask >> bit & 1) {
			if (whole)
				s->shared_drops++;
			else if (gb > ga && f->advisory)
				s->shared_unmap_partial++;
			else if (gb > ga && (ga + GRAN_SECT - 1) / GRAN_SECT < gb / GRAN_SECT)
				s->ws_zero_shared_partial++; /* whole granules zeroed by redirect */
		}
		for (uint64_t i = ga; i < gb; i++) {
			if (amb) {
				if (m->acked[i])
					m->alt[i] = 0;
			} else {
				m->acked[i] = 0;
				m->alt[i] = NONE;
			}
			m->pend[i] = NONE;
		}
		if (whole) {
			m->maybe_sh[e] = false;
			m->grp[e] = 0;
		}
	}
}

/* ---- completions */

static void copy_release(struct suite *s, const struct inflight *f)
{
	for (unsigned k = 0; k < f->nseg; k++) {
		const struct cseg *g = &f->seg[k];
		for (uint64_t i = 0; i < g->ns; i++)
			s->v[g->sv].rd[g->ss + i]--;
	}
}

static void copy_acked(struct suite *s, const struct inflight *f)
{
	bool shared = false, copied = false, within = false, cross = false;
	for (unsigned k = 0; k < f->nseg; k++) {
		const struct cseg *g = &f->seg[k];
		struct vmodel *d = &s->v[g->dv], *src = &s->v[g->sv];
		/* A write to the source while the copy ran lands wholly before or after the
		 * segment (range locks): the destination holds the source's old or new content. */
		for (uint64_t i = 0; i < g->ns; i++) {
			d->acked[g->ds + i] = d->pend[g->ds + i];
			d->alt[g->ds + i] = d->race[g->ds + i];
			d->pend[g->ds + i] = NONE;
			d->race[g->ds + i] = NONE;
		}
		s->xc_raced += g->raced;
		/* Extents the copied parts were written into are not shared for certain any
		 * more (a write redirects a shared extent), but may still read part of their
		 * data from it until hydrated (the copy writes in pieces): maybe_sh stays as
		 * it was. The middle is shared for certain where the source extent held data. */
		for (uint64_t e = g->ds / EXT_SECT; e <= (g->ds + g->ns - 1) / EXT_SECT; e++)
			if (e * EXT_SECT < g->mid_d || e * EXT_SECT >= g->mid_d + g->mid_n)
				d->grp[e] = 0;
		for (uint64_t j = 0; j < g->mid_n / EXT_SECT; j++) {
			uint64_t se = g->mid_s / EXT_SECT + j, de = g->mid_d / EXT_SECT + j;
			if (!(g->src_data >> j & 1) || g->raced) {
				d->grp[de] = 0;
				continue;
			}
			if (!src->grp[se])
				src->grp[se] = ++s->next_grp;
			d->grp[de] = src->grp[se];
			shared = true;
		}
		copied |= g->copied_data;
		within |= g->sv == g->dv;
		cross |= g->sv != g->dv;
	}
	s->xc_acked++;
	s->xc_shared += shared;
	s->xc_copied += copied;
	s->xc_multi += f->nseg > 1;
	s->xc_within += within;
	s->xc_cross += cross;
}

static void complete(struct suite *s, struct inflight *f, const struct simhost_result *r)
{
	struct vmodel *m = &s->v[f->vol];
	bool good = r->r.status == 0, nospc = is_nospc(r);
	if (!good && !nospc)
		fail(s, "%s on vol %d sectors %" PRIu64 "+%" PRIu64 ": status %u sense %02x/%02x/%02x",
		     f->kind == K_COPY ? "EXTENDED COPY" : "command", f->vol, f->s0, f->ns,
		     r->r.status, r->r.sense[2] & 0xF, r->r.sense[12], r->r.sense[13]);
	if (nospc && f->kind == K_ZERO && f->advisory)
		fail(s, "UNMAP refused for space");
	switch (f->kind) {
	case K_WRITE:
	case K_CAW:
		if (good) {
			uint32_t sure = f->sure_mask;
			for (unsigned bit = 0; sure >> bit; bit++) {
				if (!(sure >> bit & 1))
					continue;
				uint64_t eb = (f->e0 + bit) * EXT_SECT;
				if (f->s0 <= eb && f->s0 + f->ns >= eb + EXT_SECT)
					s->row_overwrites++; /* the whole shared extent rewritten */
				else
					s->row_writes++; /* redirect: the rest read from the shared extent */
			}
		}
		for (uint64_t i = f->a; i < f->b; i++) {
			if (good) {
				m->acked[i] = m->pend[i];
				m->alt[i] = NONE;
			}
			m->pend[i] = NONE;
		}
		if (good)
			extents_private(s, f->vol, f->s0, f->ns, f->raced);
		if (!good)
			s->writes_nospc++;
		else if (f->kind == K_CAW)
			s->caws_acked++;
		else
			s->writes_acked++;
		break;
	case K_ZERO:
		if (good) {
			zero_acked(s, f);
			s->zeroes_acked++;
		} else {
			s->writes_nospc++; /* part of it may be done: stays "in flight" until checked */
		}
		break;
	case K_COPY:
		copy_release(s, f);
		if (good)
			copy_acked(s, f);
		else
			s->xc_nospc++; /* segments may be partly done: "in flight" until checked */
		break;
	}
	f->used = false;
	s->nq--;
}

static struct inflight *find_tag(struct suite *s, uint64_t tag)
{
	for (int i = 0; i < QD; i++)
		if (s->q[i].used && s->q[i].tag == tag)
			return &s->q[i];
	return NULL;
}

/* Reap what completed (waiting up to timeout_ms). */
static void reap(struct suite *s, int timeout_ms)
{
	struct simhost_result r[QD];
	int n = simhost_reap(s->h, r, QD, timeout_ms);
	if (n < 0)
		fail(s, "reap: %s", strerror(-n));
	if (n > 0 || !s->nq)
		s->progress = now_s();
	else if (now_s() - s->progress > STALL_S && !simhost_crashed(s->h))
		fail(s, "no command completed for %d s, %u in flight: the engine is stuck", STALL_S,
		     s->nq);
	for (int i = 0; i < n; i++) {
		struct inflight *f = find_tag(s, r[i].tag);
		if (!f)
			fail(s, "completion for an unknown tag %" PRIu64, r[i].tag);
		/* After the power failed, errors are the dead disk's: the command stays "in flight". */
		if (r[i].r.status == 0 || !simhost_crashed(s->h))
			complete(s, f, &r[i]);
		simhost_result_release(s->h, &r[i]); /* kept for a later read: no fresh pages */
	}
}

/* ---- submissions */

static bool busy(struct suite *s, int vol, uint64_t s0, uint64_t ns, bool reads_too)
{
	const struct vmodel *m = &s->v[vol];
	for (uint64_t i = s0; i < s0 + ns; i++)
		if (m->pend[i] != NONE || (reads_too && m->rd[i]))
			return true;
	return false;
}

static bool has_alt(struct suite *s, int vol, uint64_t s0, uint64_t ns)
{
	for (uint64_t i = s0; i < s0 + ns; i++)
		if (s->v[vol].alt[i] != NONE)
			return true;
	return false;
}

/* A sector holding recorded garbage (no token to build CAW verify data from). */
static bool has_trash(struct suite *s, int vol, uint64_t s0, uint64_t ns)
{
	for (uint64_t i = s0; i < s0 + ns; i++)
		if (s->v[vol].acked[i] != NONE && (s->v[vol].acked[i] & TRASH_TAG))
			return true;
	return false;
}

static struct inflight *slot(struct suite *s)
{
	for (int i = 0; i < QD; i++)
		if (!s->q[i].used)
			return &s->q[i];
	fail(s, "no free slot");
}

/* Submit; false when the ring is full (reaped meanwhile; nothing was queued). */
static bool submit(struct suite *s, int lun, const uint8_t *cdb, size_t cdb_len, const void *out,
		   size_t out_len, uint64_t *tag)
{
	int rc = simhost_submit(s->h, lun, cdb, cdb_len, out, out_len, 0, tag);
	if (rc == -EAGAIN) {
		reap(s, 100);
		return false;
	}
	if (rc < 0)
		fail(s, "submit: %s", strerror(-rc));
	return true;
}

/* Queue one command changing sectors [a, b) of vol (tokens in pend already, or set here). */
static struct inflight *track(struct suite *s, int vol, uint64_t tag, uint8_t kind, uint64_t s0,
			      uint64_t ns, uint64_t a, uint64_t b)
{
	struct inflight *f = slot(s);
	*f = (struct inflight){.used = true, .tag = tag, .vol = vol, .kind = kind, .s0 = s0,
			       .ns = ns, .a = a, .b = b, .e0 = s0 / EXT_SECT};
	f->maybe_mask = extent_masks(s, vol, s0, ns, false);
	f->sure_mask = extent_masks(s, vol, s0, ns, true);
	s->nq++;
	return f;
}

/* A random block-aligned range, often not granule-aligned, sometimes spanning extents. */
static void pick_range(struct suite *s, int vol, uint64_t *s0, uint64_t *ns)
{
	struct vmodel *m = &s->v[vol];
	uint64_t per_block = m->block / SECT;
	uint64_t nblocks = m->nsect / per_block;
	uint64_t len;
	switch (rnd_below(s, 4)) {
	case 0: len = 1 + rnd_below(s, 8); break;                        /* partial granule */
	case 1: len = (4096 / m->block) * (1 + rnd_below(s, 4)); break; /* whole granules */
	case 2: len = 1 + rnd_below(s, 256); break;                      /* up to 128 KiB */
	default: len = (EXTENT / m->block) * (1 + rnd_below(s, 2)); break; /* extent-sized */
	}
	if (len > nblocks)
		len = nblocks;
	uint64_t lba = rnd_below(s, nblocks - len + 1);
	if (rnd_below(s, 3) == 0)
		lba -= lba % (4096 / m->block); /* granule-aligned start */
	*s0 = lba * per_block;
	*ns = len * per_block;
}

/*
 * A write to [s0, s0+ns) of vol while copies in flight read part of it: each such
 * copy's destination may get the write's tokens instead of the old ones. With id 0:
 * true when that can be modelled (no destination sector has such an alternative
 * already). Else: mark the alternatives and the segments; true when there was any.
 */
static bool mark_races(struct suite *s, int vol, uint64_t s0, uint64_t ns, uint32_t id)
{
	bool any = false;
	for (int q = 0; q < QD; q++) {
		struct inflight *f = &s->q[q];
		if (!f->used || f->kind != K_COPY)
			continue;
		for (unsigned k = 0; k < f->nseg; k++) {
			struct cseg *g = &f->seg[k];
			uint64_t a = max64(s0, g->ss), b = min64(s0 + ns, g->ss + g->ns);
			if (g->sv != vol || a >= b)
				continue;
			for (uint64_t i = a; i < b; i++) {
				uint64_t *r = &s->v[g->dv].race[g->ds + (i - g->ss)];
				if (!id && *r != NONE)
					return false;
				if (id)
					*r = token(id, vol, i);
			}
			g->raced |= id != 0;
			any = true;
		}
	}
	return id ? any : true;
}

static void submit_write(struct suite *s)
{
	int vol = (int)rnd_below(s, NVOL);
	struct vmodel *m = &s->v[vol];
	uint64_t s0, ns;
	pick_range(s, vol, &s0, &ns);
	/* A third of the writes may change what a copy in flight reads (not what it writes). */
	bool may_race = rnd_below(s, 3) == 0;
	if (busy(s, vol, s0, ns, !may_race) || (may_race && !mark_races(s, vol, s0, ns, 0)))
		return;
	uint32_t id = s->next_id++;
	uint8_t *buf = malloc(ns * SECT);
	if (!buf)
		fail(s, "out of memory");
	for (uint64_t i = 0; i < ns; i++)
		fill_sector(buf + i * SECT, token(id, vol, s0 + i));
	uint8_t cdb[16];
	sb_rw16_cdb(cdb, 0x8A, s0 * SECT / m->block, (uint32_t)(ns * SECT / m->block));
	if (rnd_below(s, 4) == 0)
		cdb[1] |= 0x08; /* FUA: accepted, the same as without under WCE=0 */
	uint64_t tag;
	bool ok = submit(s, vol, cdb, 16, buf, ns * SECT, &tag);
	free(buf);
	if (!ok)
		return;
	struct inflight *f = track(s, vol, tag, K_WRITE, s0, ns, s0, s0 + ns);
	f->raced = may_race && mark_races(s, vol, s0, ns, id);
	for (uint64_t i = s0; i < s0 + ns; i++)
		m->pend[i] = token(id, vol, i);
}

/* UNMAP (SBC-4 5.31) or WRITE SAME(16) of a zero block (5.49), UNMAP bit or not. */
static void submit_zero(struct suite *s)
{
	int vol = (int)rnd_below(s, NVOL);
	struct vmodel *m = &s->v[vol];
	uint64_t s0, ns;
	pick_range(s, vol, &s0, &ns);
	bool unmap_cmd = rnd_below(s, 2);
	if (busy(s, vol, s0, ns, true) || (unmap_cmd && has_alt(s, vol, s0, ns)))
		return;
	uint64_t lba = s0 * SECT / m->block;
	uint32_t nb = (uint32_t)(ns * SECT / m->block);
	uint8_t cdb[16] = {0};
	uint8_t out[4096] = {0}; /* one zero block (up to 4096 bytes), or the UNMAP list */
	size_t out_len, cdb_len = 16;
	uint64_t a = s0, b = s0 + ns;
	if (unmap_cmd) {
		/* UNMAP zeros every sector it names (partly covered granules by writing
		 * zeros), except in an extent that may be shared (zero_acked: advisory) */
		cdb[0] = 0x42;
		cdb[8] = 24;
		cdb_len = 10;
		out[1] = 22;
		out[3] = 16;
		for (int i = 0; i < 8; i++)
			out[8 + i] = (uint8_t)(lba >> (56 - 8 * i));
		for (int i = 0; i < 4; i++)
			out[16 + i] = (uint8_t)(nb >> (24 - 8 * i));
		out_len = 24;
	} else {
		sb_rw16_cdb(cdb, 0x93, lba, nb);
		if (rnd_below(s, 2))
			cdb[1] |= 0x08; /* UNMAP bit */
		out_len = m->block;
	}
	uint64_t tag;
	if (!submit(s, vol, cdb, cdb_len, out, out_len, &tag))
		return;
	struct inflight *f = track(s, vol, tag, K_ZERO, s0, ns, a, b);
	f->advisory = unmap_cmd;
	for (uint64_t i = a; i < b; i++)
		m->pend[i] = 0;
}

/* COMPARE AND WRITE (SBC-4 5.3) of one block whose current data the model knows. */
static void submit_caw(struct suite *s)
{
	int vol = (int)rnd_below(s, NVOL);
	struct vmodel *m = &s->v[vol];
	uint64_t per_block = m->block / SECT;
	uint64_t lba = rnd_below(s, m->nsect / per_block), s0 = lba * per_block;
	if (busy(s, vol, s0, per_block, true) || has_alt(s, vol, s0, per_block) ||
	    has_trash(s, vol, s0, per_block))
		return;
	uint32_t id = s->next_id++;
	uint8_t *buf = calloc(2, m->block);
	if (!buf)
		fail(s, "out of memory");
	for (uint64_t i = 0; i < per_block; i++) {
		if (m->acked[s0 + i])
			fill_sector(buf + i * SECT, m->acked[s0 + i]);
		fill_sector(buf + m->block + i * SECT, token(id, vol, s0 + i));
	}
	uint8_t cdb[16] = {0x89};
	for (int i = 0; i < 8; i++)
		cdb[2 + i] = (uint8_t)(lba >> (56 - 8 * i));
	cdb[13] = 1;
	uint64_t tag;
	bool ok = submit(s, vol, cdb, 16, buf, 2 * m->block, &tag);
	free(buf);
	if (!ok)
		return;
	track(s, vol, tag, K_CAW, s0, per_block, s0, s0 + per_block);
	for (uint64_t i = s0; i < s0 + per_block; i++)
		m->pend[i] = token(id, vol, i);
}

/*
 * One random segment: source and destination volume (the same one a quarter of the
 * time), a range of whole blocks of both; extent-aligned (shared, maybe with an
 * unaligned tail), congruent modulo the extent but unaligned (head and tail copied),
 * anything (copied; overlapping within one volume), or a whole-volume clone.
 */
static bool pick_segment(struct suite *s, struct cseg *g)
{
	g->sv = (int)rnd_below(s, NVOL);
	g->dv = rnd_below(s, 4) == 0 ? g->sv : (int)rnd_below(s, NVOL);
	const struct vmodel *sm = &s->v[g->sv], *dm = &s->v[g->dv];
	uint64_t u = max64(sm->block, dm->block) / SECT; /* sectors per block of both */
	uint64_t len;
	switch (rnd_below(s, 16)) {
	case 0: /* a clone of the whole (smaller) volume */
		g->ss = g->ds = 0;
		len = min64(sm->nsect, dm->nsect);
		if (g->sv == g->dv)
			return false;
		break;
	case 1: case 2: case 3: case 4: case 5: case 6: /* extent-aligned */
		len = EXT_SECT * (1 + rnd_below(s, 3));
		if (rnd_below(s, 3) == 0)
			len += u * rnd_below(s, EXT_SECT / u);
		g->ss = EXT_SECT * rnd_below(s, sm->next);
		g->ds = EXT_SECT * rnd_below(s, dm->next);
		break;
	case 7: case 8: case 9: case 10: case 11: { /* congruent, unaligned */
		len = u * (1 + rnd_below(s, 3 * EXT_SECT / u));
		uint64_t off = u * rnd_below(s, EXT_SECT / u);
		g->ss = EXT_SECT * rnd_below(s, sm->next) + off;
		g->ds = EXT_SECT * rnd_below(s, dm->next) + off;
		break;
	}
	default: /* anything */
		len = u * (1 + rnd_below(s, 3 * EXT_SECT / u));
		g->ss = u * rnd_below(s, sm->nsect / u);
		g->ds = u * rnd_below(s, dm->nsect / u);
		if (g->sv == g->dv && rnd_below(s, 2)) /* overlapping ranges */
			g->ds = g->ss + u * rnd_below(s, 64) * (rnd_below(s, 2) ? 1 : (uint64_t)-1);
		break;
	}
	if (g->ss >= sm->nsect || g->ds >= dm->nsect)
		return false;
	len = min64(len, min64(sm->nsect - g->ss, dm->nsect - g->ds)) / u * u;
	if (!len)
		return false;
	g->ns = len;
	/* The handler's split (handlers/xcopy.c): the extent-aligned middle of congruent,
	 * non-overlapping ranges is shared, the rest copied. */
	bool overlap = g->sv == g->dv && g->ss < g->ds + len && g->ds < g->ss + len;
	g->mid_n = 0;
	if (!overlap && g->ss % EXT_SECT == g->ds % EXT_SECT) {
		uint64_t head = min64((EXT_SECT - g->ss % EXT_SECT) % EXT_SECT, len);
		g->mid_n = (len - head) / EXT_SECT * EXT_SECT;
		g->mid_s = g->ss + head;
		g->mid_d = g->ds + head;
	}
	return true;
}

/* EXTENDED COPY(LID1) of 1..MAXSEG random segments, received by a random LUN. */
static void submit_copy(struct suite *s)
{
	struct inflight f = {.kind = K_COPY};
	unsigned want = rnd_below(s, 3) ? 1 : 2 + (unsigned)rnd_below(s, MAXSEG - 1);
	for (unsigned tries = 0; f.nseg < want && tries < 4 * want; tries++) {
		struct cseg *g = &f.seg[f.nseg];
		if (!pick_segment(s, g))
			continue;
		/* Source: nothing in flight changes it, no ambiguity; destination: nothing in flight
		 * reads or changes it. Earlier segments of this command are in the model already. */
		if (busy(s, g->sv, g->ss, g->ns, false) || has_alt(s, g->sv, g->ss, g->ns) ||
		    busy(s, g->dv, g->ds, g->ns, true))
			continue;
		struct vmodel *sm = &s->v[g->sv], *dm = &s->v[g->dv];
		g->src_data = 0;
		for (uint64_t j = 0; j < g->mid_n / EXT_SECT; j++)
			for (uint64_t i = 0; i < EXT_SECT; i++)
				if (sm->acked[g->mid_s + j * EXT_SECT + i])
					g->src_data |= 1ull << j;
		g->copied_data = false;
		for (uint64_t i = 0; i < g->ns; i++) {
			bool in_mid = g->ss + i >= g->mid_s && g->ss + i < g->mid_s + g->mid_n;
			if (!in_mid && sm->acked[g->ss + i])
				g->copied_data = true;
		}
		/* The destination gets the source's acknowledged content (memmove when they
		 * overlap: every token is taken before any is replaced). */
		uint64_t *tok = malloc(g->ns * sizeof(uint64_t));
		if (!tok)
			fail(s, "out of memory");
		memcpy(tok, sm->acked + g->ss, g->ns * sizeof(uint64_t));
		for (uint64_t i = 0; i < g->ns; i++) {
			sm->rd[g->ss + i]++;
			dm->pend[g->ds + i] = tok[i];
		}
		free(tok);
		for (uint64_t j = 0; j < g->mid_n / EXT_SECT; j++) {
			sm->maybe_sh[g->mid_s / EXT_SECT + j] = true;
			dm->maybe_sh[g->mid_d / EXT_SECT + j] = true;
		}
		for (uint64_t e = g->ds / EXT_SECT; e <= (g->ds + g->ns - 1) / EXT_SECT; e++)
			dm->grp[e] = 0; /* certain again once acknowledged */
		f.nseg++;
	}
	if (!f.nseg)
		return;
	/* The CSCD list: each volume the segments name, with the NAA its VPD 83h reports. */
	struct sb_cscd cscd[NVOL];
	int idx[NVOL];
	unsigned nc = 0;
	for (int v = 0; v < NVOL; v++)
		idx[v] = -1;
	struct sb_segment seg[MAXSEG];
	for (unsigned k = 0; k < f.nseg; k++) {
		const struct cseg *g = &f.seg[k];
		int ends[2] = {g->sv, g->dv};
		for (int e = 0; e < 2; e++)
			if (idx[ends[e]] < 0) {
				idx[ends[e]] = (int)nc;
				memcpy(cscd[nc].naa, s->v[ends[e]].naa, 16);
				cscd[nc++].block_size = s->v[ends[e]].block;
			}
		uint32_t sbs = s->v[g->sv].block, dbs = s->v[g->dv].block;
		bool dc = rnd_below(s, 2);
		seg[k] = (struct sb_segment){.src = (uint16_t)idx[g->sv], .dst = (uint16_t)idx[g->dv],
					     .dc = dc,
					     .nblocks = (uint16_t)(g->ns * SECT / (dc ? dbs : sbs)),
					     .src_lba = g->ss * SECT / sbs, .dst_lba = g->ds * SECT / dbs};
	}
	uint8_t list[SB_XCOPY_HDR + NVOL * SB_XCOPY_CSCD_LEN + MAXSEG * SB_XCOPY_SEG_LEN];
	size_t len = sb_xcopy_list(list, sizeof(list), 0, SB_LIST_ID_NONE, cscd, nc, seg, f.nseg);
	if (!len)
		fail(s, "EXTENDED COPY parameter list does not fit");
	uint8_t cdb[16];
	sb_xcopy_cdb(cdb, (uint32_t)len);
	int lun = (int)rnd_below(s, NVOL); /* any LUN of the pool may receive it (co-visible) */
	int rc = simhost_submit(s->h, lun, cdb, 16, list, len, 0, &f.tag);
	if (rc == -EAGAIN) {
		/* Ring full: undo the model's marks, as if never picked. */
		for (unsigned k = f.nseg; k-- > 0;) {
			const struct cseg *g = &f.seg[k];
			for (uint64_t i = 0; i < g->ns; i++) {
				s->v[g->sv].rd[g->ss + i]--;
				s->v[g->dv].pend[g->ds + i] = NONE;
			}
		}
		reap(s, 100);
		return; /* maybe_sh stays set: conservative */
	}
	if (rc < 0)
		fail(s, "submit: %s", strerror(-rc));
	f.used = true;
	f.vol = f.seg[0].dv;
	f.s0 = f.seg[0].ds;
	f.ns = f.seg[0].ns;
	*slot(s) = f;
	s->nq++;
}

/* Deallocate a range through the pool (synchronous); in flight meanwhile as "may be zero". */
static void deallocate(struct suite *s)
{
	int vol = (int)rnd_below(s, NVOL);
	struct vmodel *m = &s->v[vol];
	uint64_t s0, ns;
	pick_range(s, vol, &s0, &ns);
	if (rnd_below(s, 2)) { /* whole extents, to return space to the pool */
		s0 -= s0 % EXT_SECT;
		ns = EXT_SECT * (1 + rnd_below(s, 3));
		if (s0 + ns > m->nsect)
			ns = m->nsect - s0;
	}
	if (busy(s, vol, s0, ns, true) || has_alt(s, vol, s0, ns))
		return;
	/* Only whole 4 KiB granules change; partial ones keep their data. */
	struct inflight f = {.vol = vol, .kind = K_ZERO, .s0 = s0, .ns = ns, .advisory = true,
			     .e0 = s0 / EXT_SECT};
	f.a = (s0 + GRAN_SECT - 1) / GRAN_SECT * GRAN_SECT;
	f.b = max64(f.a, (s0 + ns) / GRAN_SECT * GRAN_SECT);
	f.maybe_mask = extent_masks(s, vol, s0, ns, false);
	f.sure_mask = extent_masks(s, vol, s0, ns, true);
	for (uint64_t i = f.a; i < f.b; i++)
		m->pend[i] = 0;
	int rc = simhost_deallocate(s->h, m->name, s0 * SECT, ns * SECT);
	if (rc < 0 && simhost_crashed(s->h)) {
		memset(m->cut + f.a, 1, f.b - f.a); /* in flight at the cut */
		return; /* stays "may be zero" until the check after recovery */
	}
	if (rc < 0)
		fail(s, "deallocate %s %" PRIu64 "+%" PRIu64 ": %s", m->name, s0, ns, strerror(-rc));
	zero_acked(s, &f);
	s->deallocs++;
}

/* ---- the NAA designators, as VPD 83h reports them */

static void read_naa(struct suite *s, int vol, uint8_t naa[16])
{
	uint8_t cdb[6];
	sb_inquiry_vpd_cdb(cdb, 0x83, 255);
	struct simhost_result r;
	run_sync(s, vol, cdb, 6, 255, &r);
	if (r.r.status != 0 || sb_vpd83_naa(r.r.data_in, r.r.data_in_len, naa) < 0)
		fail(s, "INQUIRY VPD 83h of %s: status %u, no NAA designator", s->v[vol].name,
		     r.r.status);
	simhost_result_free(&r);
}

static void check_naas(struct suite *s)
{
	for (int i = 0; i < NVOL; i++) {
		uint8_t naa[16];
		read_naa(s, i, naa);
		if (memcmp(naa, s->v[i].naa, 16))
			fail(s, "%s: the NAA designator changed", s->v[i].name);
	}
}

/* ---- checking */

static void check_volume(struct suite *s, int vol)
{
	struct vmodel *m = &s->v[vol];
	for (uint64_t s0 = 0; s0 < m->nsect; s0 += READ_CHUNK / SECT) {
		uint64_t ns = m->nsect - s0 < READ_CHUNK / SECT ? m->nsect - s0 : READ_CHUNK / SECT;
		uint8_t cdb[16];
		sb_rw16_cdb(cdb, 0x88, s0 * SECT / m->block, (uint32_t)(ns * SECT / m->block));
		struct simhost_result r;
		run_sync(s, vol, cdb, 16, ns * SECT, &r);
		if (r.r.status != 0 || r.r.data_in_len != ns * SECT)
			fail(s, "read %s at sector %" PRIu64 ": status %u sense %02x/%02x/%02x len %zu",
			     m->name, s0, r.r.status, r.r.sense[2] & 0xF, r.r.sense[12], r.r.sense[13],
			     r.r.data_in_len);
		for (uint64_t i = 0; i < ns; i++) {
			uint64_t sect = s0 + i;
			const uint8_t *bytes = r.r.data_in + i * SECT;
			uint64_t got = decode_sector(bytes);
			uint64_t want = m->acked[sect], alt = m->alt[sect], pend = m->pend[sect];
			uint64_t race = m->race[sect];
			bool recorded = false;
			if (got == GARBAGE) {
				/* Exact bytes the model recorded (trash mode), or, in trash mode only,
				 * new garbage where a change was in flight at the cut: recorded now,
				 * later checks require these bytes. Else garbage fails. */
				uint64_t h = trash_token(bytes);
				if (allowed(h, want) || allowed(h, alt) || allowed(h, pend) ||
				    allowed(h, race)) {
					got = h;
				} else if (s->fault == F_TRASH && m->cut[sect]) {
					got = h;
					recorded = true;
					s->trash_recorded++;
				}
			}
			if (!recorded && !allowed(got, want) && !allowed(got, alt) &&
			    !allowed(got, pend) && !allowed(got, race)) {
				char msg[160];
				int n = snprintf(msg, sizeof(msg), "%016" PRIx64, want);
				if (alt != NONE)
					n += snprintf(msg + n, sizeof(msg) - (size_t)n, " or %016" PRIx64, alt);
				if (pend != NONE)
					n += snprintf(msg + n, sizeof(msg) - (size_t)n,
						      " or %016" PRIx64 " (in flight)", pend);
				if (race != NONE)
					snprintf(msg + n, sizeof(msg) - (size_t)n,
						 " or %016" PRIx64 " (a copy in flight, its source rewritten)",
						 race);
				if (got == GARBAGE && s->self_test) {
					printf("crash_suite: self-test (%s): the garbage injected into an "
					       "acknowledged sector was caught at crash point %u (%s sector "
					       "%" PRIu64 ")\n", fault_name[s->fault], s->point, m->name, sect);
					exit(0);
				}
				fail(s, "%s sector %" PRIu64 ": holds %s%016" PRIx64 ", expected %s "
				     "(token = write id << 32 | volume << 24 | sector written)",
				     m->name, sect, got == GARBAGE ? "garbage, not " : "",
				     got == GARBAGE ? 0 : got, msg);
			}
			if (pend != NONE && got == pend && pend != want)
				s->torn_seen++;
			m->acked[sect] = got;
			m->alt[sect] = NONE;
			m->pend[sect] = NONE;
			m->race[sect] = NONE;
			m->cut[sect] = 0;
		}
		s->sectors_checked += ns;
		simhost_result_release(s->h, &r);
	}
}

static void verify_pool(struct suite *s, const char *when)
{
	int problems = simhost_verify(s->h, stderr);
	if (problems != 0)
		fail(s, "pool invariants violated %s (%d problems, listed above)", when, problems);
	s->verifies++;
}

/*
 * With commands in flight, the power may fail between the loop's check and this
 * one (the engine thread keeps running): a pool whose store died has failed its
 * commands part way (records applied in memory whose commit then failed, the
 * pool stopped) and goes to recovery, which does not use its memory; so it is
 * not checked then. Such checks are counted apart, never as passed. (The
 * reservations of commands the failure stopped are given back even so:
 * test_pool_redo.)
 */
static void verify_pool_in_flight(struct suite *s)
{
	int problems = simhost_verify_powered(s->h, stderr);
	if (problems == -ENODEV) {
		s->verifies_unpowered++;
		return;
	}
	if (problems != 0)
		fail(s, "pool invariants violated with commands in flight (%d problems, listed above)",
		     problems);
	s->verifies++;
}

/*
 * After a recovery or reopen nothing is in flight: used = referenced extents; sharing =
 * maps hold more. The pool's size is the one of its last completed grow, or, when the
 * power failed inside a grow, that grow's size or the one before (never anything else).
 */
static void note_pool(struct suite *s)
{
	char *js = simhost_stats_json(s->h);
	json_object *o = js ? json_tokener_parse(js) : NULL, *pool, *used, *vols, *size;
	if (!o || !json_object_object_get_ex(o, "pool", &pool) ||
	    !json_object_object_get_ex(pool, "used", &used) ||
	    !json_object_object_get_ex(pool, "size", &size) ||
	    !json_object_object_get_ex(o, "volumes", &vols))
		fail(s, "stats: %s", js ? js : "none");
	uint64_t have = (uint64_t)json_object_get_uint64(size);
	uint64_t before = POOL_SIZE + s->grows * (uint64_t)EXTENT;
	if (s->grow_pending && have == s->grow_pending) {
		s->grows++;
		s->grow_crash_new++;
	} else if (s->grow_pending && have == before) {
		s->grow_crash_old++;
	} else if (have != before) {
		fail(s, "pool size %" PRIu64 " after recovery, expected %" PRIu64 "%s", have, before,
		     s->grow_pending ? " or the interrupted grow's size" : "");
	}
	s->grow_pending = 0;
	uint64_t mapped = 0;
	for (size_t i = 0; i < json_object_array_length(vols); i++) {
		json_object *m;
		if (json_object_object_get_ex(json_object_array_get_idx(vols, i), "mapped", &m))
			mapped += (uint64_t)json_object_get_uint64(m);
	}
	if (mapped > (uint64_t)json_object_get_uint64(used))
		s->shared_after_recovery++;
	json_object_put(o);
	free(js);
	/* Redirected extents recovered still reading from their source; hydrations done. */
	uint64_t pending, hydrated;
	if (simhost_hydration(s->h, SIMHOST_HYD_QUERY, &pending, &hydrated) < 0)
		fail(s, "hydration query failed");
	s->hydrating_after_recovery += pending > 0;
	s->hydrated_seen += hydrated;
}

static void check_all(struct suite *s, const char *when)
{
	check_naas(s);
	for (int i = 0; i < NVOL; i++)
		check_volume(s, i);
	char what[64];
	snprintf(what, sizeof(what), "after %s", when);
	verify_pool(s, what);
	note_pool(s);
}

static void exec_check(struct suite *s)
{
	pid_t pid = fork();
	if (pid == 0) {
		execl(s->check_bin, s->check_bin, s->path, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail(s, "%s %s failed (status %d)", s->check_bin, s->path, st);
}

/* The device faults of the run's mode (set on each new simhost: open or create). */
static void set_faults(struct suite *s)
{
	unsigned f = s->fault == F_TRASH ? VBLK_CS_TRASH : s->fault == F_ALLOC ? VBLK_CS_LOST_ALLOC : 0;
	if (s->self_test)
		f |= VBLK_CS_INJECT_GARBAGE;
	if (simhost_crash_faults(s->h, f) < 0)
		fail(s, "crashsim faults");
}

/* Add the devices' fault counters to the run's (before a close ends the devices). */
static void take_fault_stats(struct suite *s)
{
	struct vblk_crashsim_fault_stats st;
	simhost_crash_fault_stats(s->h, &st);
	s->fst.trashed_sectors += st.trashed_sectors;
	s->fst.unmapped_dropped += st.unmapped_dropped;
	s->fst.lost_allocs += st.lost_allocs;
	s->fst.lost_grows += st.lost_grows;
	s->fst.injected += st.injected;
}

/* Close cleanly, run vaai-check on the file, open again. */
static void run_vaai_check(struct suite *s)
{
	if (!s->check_bin)
		return;
	if (s->rbd) { /* vaai-check opens files only; vpool_verify runs after each recovery */
		s->checks_skipped++;
		return;
	}
	take_fault_stats(s);
	int rc = simhost_close(s->h);
	s->h = NULL;
	if (rc < 0)
		fail(s, "clean close: %s", strerror(-rc));
	exec_check(s);
	char err[512];
	rc = simhost_open_pool(s->path, s->io, s->seed + s->point, &s->h, err,
			       sizeof(err));
	if (rc < 0)
		fail(s, "reopen after vaai-check: %s", err);
	simhost_use_rings(s->h, s->rings);
	if (simhost_use_bufs(s->h, s->bufs) < 0)
		fail(s, "lending the buffers after reopen");
	set_faults(s);
	if (s->whole && simhost_whole_granules(s->h, 1) < 0)
		fail(s, "whole granules after reopen");
	if (s->live_ckpt && simhost_live_checkpoints(s->h, true) < 0)
		fail(s, "live checkpoints after reopen");
	for (int i = 0; i < NVOL; i++)
		if (simhost_attach(s->h, s->v[i].name, i) < 0)
			fail(s, "attach %s", s->v[i].name);
}

/* ---- setup and the main loop */

static void model_reset(struct vmodel *m)
{
	memset(m->acked, 0, m->nsect * sizeof(uint64_t));
	memset(m->alt, 0xFF, m->nsect * sizeof(uint64_t));
	memset(m->pend, 0xFF, m->nsect * sizeof(uint64_t));
	memset(m->race, 0xFF, m->nsect * sizeof(uint64_t));
	memset(m->rd, 0, m->nsect);
	memset(m->cut, 0, m->nsect);
	memset(m->maybe_sh, 0, m->next * sizeof(bool));
	memset(m->grp, 0, m->next * sizeof(uint32_t));
}

static const uint32_t vol_mib[NVOL] = {4, 4, 3, 2, 2};

static void setup(struct suite *s)
{
	const char *tmp = getenv("VAAID_TEST_TMP");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	mkdir(tmp, 0755);
	if (s->rbd) /* an image of CEPH_CONF's cluster, its journal inside (as the daemon's) */
		snprintf(s->path, sizeof(s->path), "rbd:%s/crash_suite.%d.%" PRIu64, s->rbd,
			 (int)getpid(), s->seed);
	else
		snprintf(s->path, sizeof(s->path), "%s/crash_suite.%d.pool", tmp, (int)getpid());
	simhost_remove_pool(s->path);
	struct vpool_params prm = {.extent_size = EXTENT, .journal_size = JOURNAL};
	char err[512];
	int rc = simhost_create_pool_ex(s->path, POOL_SIZE, &prm, !s->rbd, s->io, s->seed, &s->h,
					err, sizeof(err));
	if (rc < 0)
		fail(s, "create pool: %s", err);
	if ((!s->rings && simhost_rings_new(NVOL, &s->rings) < 0) ||
	    (!s->bufs && vbuf_cache_new(8, &s->bufs) < 0))
		fail(s, "no memory for the rings");
	simhost_use_rings(s->h, s->rings);
	if (simhost_use_bufs(s->h, s->bufs) < 0)
		fail(s, "lending the buffers");
	set_faults(s);
	if (s->mutate_ack && simhost_rbd_kill_ack_killed(s->h, true) < 0)
		fail(s, "--mutate-ack-killed");
	if (s->whole && simhost_whole_granules(s->h, 1) < 0)
		fail(s, "whole granules");
	if (s->live_ckpt && simhost_live_checkpoints(s->h, true) < 0)
		fail(s, "live checkpoints");
	/* 15 MiB of volumes on a pool with 11 MiB of capacity: thin and over-committed,
	 * so allocating writes meet DATA PROTECT and must change nothing. */
	for (int i = 0; i < NVOL; i++) {
		struct vmodel *m = &s->v[i];
		snprintf(m->name, sizeof(m->name), "vol%d", i);
		m->block = i == 2 ? 4096 : 512;
		m->nsect = (uint64_t)vol_mib[i] << 20 >> 9;
		m->next = m->nsect / EXT_SECT;
		m->acked = malloc(m->nsect * sizeof(uint64_t));
		m->alt = malloc(m->nsect * sizeof(uint64_t));
		m->pend = malloc(m->nsect * sizeof(uint64_t));
		m->race = malloc(m->nsect * sizeof(uint64_t));
		m->rd = malloc(m->nsect);
		m->cut = malloc(m->nsect);
		m->maybe_sh = malloc(m->next * sizeof(bool));
		m->grp = malloc(m->next * sizeof(uint32_t));
		if (!m->acked || !m->alt || !m->pend || !m->race || !m->rd || !m->cut || !m->maybe_sh || !m->grp)
			fail(s, "out of memory");
		model_reset(m);
		rc = simhost_volume_create(s->h, m->name, (uint64_t)vol_mib[i] << 20, m->block);
		if (rc == 0)
			rc = simhost_attach(s->h, m->name, i);
		if (rc < 0)
			fail(s, "volume %s: %s", m->name, strerror(-rc));
		read_naa(s, i, m->naa);
	}
	s->next_id = 1;
}

/* The armed crash's I/Os still to go (the count restarts with each device). */
static uint64_t crash_left(struct suite *s)
{
	uint64_t done = simhost_io_ops(s->h) - s->arm_base;
	return s->target > done ? s->target - done : 1;
}

static void rearm(struct suite *s, uint64_t left)
{
	int rc = simhost_arm_crash(s->h, left);
	if (rc < 0)
		fail(s, "arm: %s", strerror(-rc));
	s->target = left;
	s->arm_base = simhost_io_ops(s->h);
}

/* A clean reopen (checkpoint on close, recovery without replay), keeping the armed crash. */
static void clean_reopen(struct suite *s)
{
	uint64_t left = crash_left(s);
	uint64_t pending = 0;
	int rc = simhost_arm_crash(s->h, 0);
	if (rc == 0)
		rc = simhost_hydration(s->h, SIMHOST_HYD_QUERY, &pending, NULL);
	if (rc == 0)
		rc = simhost_reopen(s->h); /* pending hydrations go through the checkpoint */
	if (rc < 0)
		fail(s, "clean reopen: %s", strerror(-rc));
	s->reopens_hydrating += pending > 0;
	rearm(s, left);
	s->reopens++;
}

/*
 * Delete a volume whose extents may be shared with others (the copies must keep
 * their data, the references go) and create it again: empty, with a new NAA.
 * Half the time the power fails within the first RECYCLE_IOS writes (the delete's
 * commit, then the create's; the control path then returns -EIO): the recovery
 * must find the volume as it was, deleted, or new and empty (resolve_recycle).
 * Otherwise the crash is disarmed meanwhile; the records stay in the journal for
 * the replays of later crashes.
 */
#define RECYCLE_IOS 2u
static void recycle_volume(struct suite *s)
{
	int vol = (int)rnd_below(s, NVOL);
	struct vmodel *m = &s->v[vol];
	bool shared = false;
	for (uint64_t e = 0; e < m->next; e++)
		shared |= sure_shared(s, vol, e, true);
	uint64_t left = crash_left(s);
	bool crash_inside = rnd_below(s, 2);
	int rc = simhost_arm_crash(s->h, 0);
	if (rc == 0)
		rc = simhost_detach(s->h, vol);
	if (rc == 0 && crash_inside)
		rearm(s, 1 + rnd_below(s, RECYCLE_IOS));
	if (rc == 0)
		rc = simhost_volume_delete(s->h, m->name);
	if (rc == 0)
		rc = simhost_volume_create(s->h, m->name, (uint64_t)vol_mib[vol] << 20, m->block);
	if (rc < 0 && simhost_crashed(s->h)) {
		s->recycle_pending = vol + 1; /* detached: the recovery does not attach it */
		return;
	}
	if (rc == 0)
		rc = simhost_attach(s->h, m->name, vol);
	if (rc < 0)
		fail(s, "delete and create %s again: %s", m->name, strerror(-rc));
	uint8_t old[16];
	memcpy(old, m->naa, 16);
	read_naa(s, vol, m->naa);
	if (!memcmp(old, m->naa, 16))
		fail(s, "%s created again with the NAA of the deleted volume", m->name);
	model_reset(m);
	if (!crash_inside)
		rearm(s, left);
	s->recycles++;
	s->source_deletes += shared;
}

/*
 * After a recovery from a power loss inside recycle_volume: the volume is there
 * with its NAA and data as before (the delete was not durable), or gone (the
 * create was not: create it now), or there new and empty with a new NAA.
 */
static void resolve_recycle(struct suite *s)
{
	if (!s->recycle_pending)
		return;
	int vol = s->recycle_pending - 1;
	struct vmodel *m = &s->v[vol];
	s->recycle_pending = 0;
	bool gone = false;
	int rc = simhost_attach(s->h, m->name, vol);
	if (rc == -ENOENT) {
		gone = true;
		rc = simhost_volume_create(s->h, m->name, (uint64_t)vol_mib[vol] << 20, m->block);
		if (rc == 0)
			rc = simhost_attach(s->h, m->name, vol);
	}
	if (rc < 0)
		fail(s, "%s after a power loss while deleting it: %s", m->name, strerror(-rc));
	uint8_t naa[16];
	read_naa(s, vol, naa);
	if (!gone && !memcmp(naa, m->naa, 16)) {
		s->recycle_crash_kept++; /* the model's content must read back: check_all */
		return;
	}
	if (!memcmp(naa, m->naa, 16))
		fail(s, "%s created again with the NAA of the deleted volume", m->name);
	memcpy(m->naa, naa, 16);
	model_reset(m);
	s->recycles++;
	if (gone)
		s->recycle_crash_gone++;
	else
		s->recycle_crash_new++;
}

/*
 * Grow the pool online by one extent (vpool_grow through simhost: the backing
 * file grows, a checkpoint and a superblock name the new geometry), at most
 * MAX_GROWS times so that it stays over-committed. Half the time the power
 * fails within the grow's first GROW_IOS writes and flushes (a grow does 2-3:
 * the checkpoint, its superblock; the crashed device fails them, so vpool_grow
 * returns an error); the recovery must then find the pool at its old size or
 * at the new one (note_pool). The write a crash fires on never lands, so a
 * grow that fails this way always leaves the old size; the new size after a
 * recovery comes from crashes after the grow.
 */
#define MAX_GROWS 16u
#define GROW_IOS 3u
static void grow_pool(struct suite *s)
{
	uint64_t want = POOL_SIZE + (s->grows + 1) * (uint64_t)EXTENT;
	if (rnd_below(s, 2))
		rearm(s, 1 + rnd_below(s, GROW_IOS));
	int rc = simhost_pool_grow(s->h, want);
	if (rc < 0 && simhost_crashed(s->h)) {
		s->grow_pending = want;
		return;
	}
	if (rc < 0)
		fail(s, "pool grow: %s", strerror(-rc));
	s->grows++;
}

/*
 * --rbd: the control operations (clean reopen, grow, volume recycle) need nothing in
 * flight; on crashsim commands complete at once, so that is common, on RBD they take
 * milliseconds and it almost never is. So on RBD a control operation picked first
 * waits for what is in flight. False when the engine was killed meanwhile.
 */
static bool drain(struct suite *s)
{
	while (s->nq && !simhost_crashed(s->h))
		reap(s, 50);
	return !simhost_crashed(s->h);
}

/* --rbd: what the kill left (simhost_last_kill). */
static void note_kill(struct suite *s)
{
	struct simhost_kill_report k;
	simhost_last_kill(s->h, &k);
	uint64_t tk = k.takeover_ns / 1000000u, rec = k.recovery_ns / 1000000u;
	s->kills++;
	s->kill_in_flight += k.in_flight;
	s->kill_dropped += k.dropped;
	s->swept += k.swept;
	s->takeover_ms_sum += tk;
	s->takeover_ms_max = max64(s->takeover_ms_max, tk);
	s->recovery_ms_sum += rec;
	s->recovery_ms_max = max64(s->recovery_ms_max, rec);
	if (s->verbose)
		fprintf(stderr, "point %u: killed with %" PRIu64 " changes in flight, %" PRIu64
				" never sent; takeover %" PRIu64 " ms, old client closed in %" PRIu64
				" ms, recovery %" PRIu64 " ms\n",
			s->point, k.in_flight, k.dropped, tk, k.old_close_ns / 1000000u, rec);
}

static void one_point(struct suite *s)
{
	/* Background hydration runs during some points and is held off during others, so
	 * that redirected extents also live through crashes and reopens unhydrated. */
	if (rnd_below(s, 3) == 0) {
		bool pause = rnd_below(s, 2);
		if (simhost_hydration(s->h, pause ? SIMHOST_HYD_PAUSE : SIMHOST_HYD_RESUME, NULL,
				      NULL) < 0)
			fail(s, "hydration %s failed", pause ? "pause" : "resume");
		s->hyd_pauses += pause;
	}
	rearm(s, 1 + rnd_below(s, rnd_below(s, 4) == 0 ? 2000 : 300));
	s->progress = now_s();
	unsigned steps = 0;
	while (!simhost_crashed(s->h)) {
		if (++steps > 1000000)
			fail(s, "the armed crash (%" PRIu64 " I/Os) never fired", s->target);
		unsigned what = (unsigned)rnd_below(s, 1000);
		if (s->nq >= QD || what < 300)
			reap(s, s->nq >= QD ? 50 : 0);
		else if (what < 760)
			submit_write(s);
		else if (what < 820)
			submit_zero(s);
		else if (what < 860)
			submit_caw(s);
		else if (what < 930)
			submit_copy(s);
		else if (what < 985)
			deallocate(s);
		else if (what < 988)
			verify_pool_in_flight(s);
		else if (s->rbd && s->nq && !drain(s))
			break; /* killed while draining */
		else if (s->nq == 0 && what < 994)
			clean_reopen(s);
		else if (s->nq == 0 && what >= 994 && what < 996 && s->grows < MAX_GROWS)
			grow_pool(s);
		else if (s->nq == 0)
			recycle_volume(s);
	}
	/* Power is gone: commands in flight never complete; recover. What they change
	 * was in flight at the cut (trash mode: may hold garbage). */
	for (int i = 0; i < QD; i++) {
		const struct inflight *f = &s->q[i];
		if (!f->used)
			continue;
		if (f->kind != K_COPY)
			memset(s->v[f->vol].cut + f->a, 1, f->b - f->a);
		for (unsigned k = 0; f->kind == K_COPY && k < f->nseg; k++)
			memset(s->v[f->seg[k].dv].cut + f->seg[k].ds, 1, f->seg[k].ns);
	}
	int rc = simhost_crash(s->h);
	if (rc < 0)
		fail(s, "recovery after the crash failed: %s", strerror(-rc));
	if (s->rbd)
		note_kill(s);
	for (int i = 0; i < QD; i++)
		if (s->q[i].used && s->q[i].kind == K_COPY)
			copy_release(s, &s->q[i]);
	for (int i = 0; i < QD; i++)
		s->q[i].used = false;
	s->nq = 0;
	struct vpool_open_report rep;
	simhost_last_recovery(s->h, &rep);
	s->redo_recoveries += rep.data_bytes > 0;
	if (!s->rbd) {
		int phase;
		uint64_t lr;
		simhost_last_crash_ckpt(s->h, &phase, &lr);
		s->cut_ckpt[phase >= 0 && phase < 4 ? phase : 0]++;
		s->live_records += lr;
	}
	resolve_recycle(s);
	/* A copy in flight may or may not have shared: nothing is certain any more. */
	for (int i = 0; i < NVOL; i++)
		memset(s->v[i].grp, 0, s->v[i].next * sizeof(uint32_t));
	check_all(s, "recovery");
}

static void usage(void)
{
	fprintf(stderr, "usage: crash_suite [--fault tear|trash|alloc] [--points N] [--seed S | --commit "
			"HASH [--salt N]] [--check VAAI_CHECK] [--verbose] [--no-coverage-check] "
			"[--whole-granules] [--live-checkpoints] [--self-test] [--rbd CEPHPOOL "
			"[--mutate-ack-killed]]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct suite s = {.points = 1000};
	const char *commit = NULL;
	uint64_t salt = 0;
	bool seed_given = false;
	/* I/O errors after the simulated power loss are expected; the model judges. */
	vlog_set_level(VLOG_ERR);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--points") && i + 1 < argc)
			s.points = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			s.seed = strtoull(argv[++i], NULL, 0);
			seed_given = true;
		} else if (!strcmp(argv[i], "--commit") && i + 1 < argc)
			commit = argv[++i];
		else if (!strcmp(argv[i], "--salt") && i + 1 < argc)
			salt = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--fault") && i + 1 < argc) {
			const char *f = argv[++i];
			if (!strcmp(f, "tear"))
				s.fault = F_TEAR;
			else if (!strcmp(f, "trash"))
				s.fault = F_TRASH;
			else if (!strcmp(f, "alloc"))
				s.fault = F_ALLOC;
			else
				usage();
		} else if (!strcmp(argv[i], "--check") && i + 1 < argc)
			s.check_bin = argv[++i];
		else if (!strcmp(argv[i], "--verbose"))
			s.verbose = true;
		else if (!strcmp(argv[i], "--no-coverage-check"))
			s.no_coverage = true;
		else if (!strcmp(argv[i], "--whole-granules"))
			s.whole = true;
		else if (!strcmp(argv[i], "--live-checkpoints"))
			s.live_ckpt = true;
		else if (!strcmp(argv[i], "--self-test"))
			s.self_test = true;
		else if (!strcmp(argv[i], "--rbd") && i + 1 < argc)
			s.rbd = argv[++i];
		else if (!strcmp(argv[i], "--mutate-ack-killed"))
			s.mutate_ack = true;
		else
			usage();
	}
	s.io = s.rbd ? SIMHOST_IO_RBD_KILL : SIMHOST_IO_CRASHSIM;
	/* On RBD the engine is killed, the cluster survives: Ceph is not a disk, so only a
	 * tear applies (what was in flight lands whole per object or not at all), and the
	 * crashsim-only faults and the self-test's garbage have no counterpart. */
	if (s.rbd && (s.fault != F_TEAR || s.self_test)) {
		fprintf(stderr, "crash_suite: --rbd runs fault mode tear only (no %s on RBD: the "
				"store does not lose power)\n",
			s.self_test ? "--self-test" : fault_name[s.fault]);
		return 2;
	}
	if (s.mutate_ack && !s.rbd)
		usage();
	const char *env = getenv("VAAID_CRASH_POINTS");
	if (env && *env)
		s.points = (unsigned)strtoul(env, NULL, 0);
	/* The seed: given; else derived from the commit (each commit explores other crash
	 * points), the fault mode, --whole-granules and the salt (the build); else fixed. */
	char how[160];
	if (seed_given) {
		snprintf(how, sizeof(how), "given");
	} else if (commit && *commit) {
		uint64_t h = vrng_fnv64(commit, VRNG_FNV_BASIS);
		h = vrng_fnv64(fault_name[s.fault], h ^ salt * 0x9E3779B97F4A7C15ull);
		h = vrng_fnv64(s.whole ? "whole" : "", h);
		if (s.live_ckpt)
			h = vrng_fnv64("live", h); /* other points than the paused runs */
		if (s.rbd)
			h = vrng_fnv64("rbd", h); /* other points than the file runs */
		s.seed = vrng_next(&h);
		snprintf(how, sizeof(how), "from commit %.40s, salt %" PRIu64, commit, salt);
	} else {
		s.seed = 1 + salt;
		snprintf(how, sizeof(how), "fixed: no commit known");
	}
	s.seed_from = how;
	printf("crash_suite: fault mode %s, seed %" PRIu64 " (%s), %u crash points%s%s%s%s\n",
	       fault_name[s.fault], s.seed, how, s.points, s.self_test ? ", self-test" : "",
	       s.rbd ? "; on RBD (Ceph pool " : "", s.rbd ? s.rbd : "",
	       s.rbd ? s.mutate_ack ? "), the engine killed at each point, MUTATED: the I/O "
				     "the kill is armed at is acknowledged unsent (must fail)"
				   : "), the engine killed at each point (its image taken over)"
		      : "");
	fflush(stdout);
	s.rng = s.seed;
	setup(&s);
	for (s.point = 0; s.point < s.points; s.point++) {
		one_point(&s);
		if ((s.point + 1) % CHECK_EVERY == 0)
			run_vaai_check(&s);
		if (s.verbose)
			fprintf(stderr, "point %u ok\n", s.point);
	}
	take_fault_stats(&s);
	int rc = simhost_close(s.h);
	simhost_rings_free(s.rings);
	vbuf_cache_free(s.bufs);
	s.rings = NULL;
	s.bufs = NULL;
	if (rc < 0)
		fail(&s, "final close: %s", strerror(-rc));
	if (s.self_test)
		fail(&s, "self-test: %" PRIu64 " sectors of acknowledged data overwritten with garbage, "
			 "never caught", s.fst.injected);
	if (s.check_bin && !s.rbd)
		exec_check(&s);
	else if (s.check_bin)
		s.checks_skipped++;
	simhost_remove_pool(s.path);
	printf("crash_suite: %u crash points passed (seed %" PRIu64 "): %" PRIu64
	       " writes acknowledged, %" PRIu64 " refused for space, %" PRIu64
	       " deallocations, %" PRIu64 " clean reopens, %" PRIu64
	       " sectors checked, %" PRIu64 " sectors found holding unacknowledged data; %" PRIu64
	       " UNMAP/WRITE SAME zero and %" PRIu64 " COMPARE AND WRITE acknowledged; %" PRIu64
	       " pool verifications (%" PRIu64 " more not made: the power had just failed)\n",
	       s.points, s.seed, s.writes_acked, s.writes_nospc, s.deallocs, s.reopens,
	       s.sectors_checked, s.torn_seen, s.zeroes_acked, s.caws_acked, s.verifies,
	       s.verifies_unpowered);
	printf("crash_suite: EXTENDED COPY: %" PRIu64 " acknowledged (%" PRIu64 " sharing extents, %" PRIu64
	       " copying data, %" PRIu64 " multi-segment, %" PRIu64 " within one volume, %" PRIu64
	       " between volumes, %" PRIu64 " refused for space); on certainly shared extents: %" PRIu64
	       " redirect-on-write writes, %" PRIu64 " whole overwrites, %" PRIu64
	       " references dropped by UNMAP/WRITE SAME/deallocation, %" PRIu64
	       " partial UNMAPs, %" PRIu64 " partial WRITE SAME zero; %" PRIu64
	       " volumes deleted and created again (%" PRIu64 " sharing extents with another); sharing "
	       "found in the pool after %" PRIu64 " recoveries; %" PRIu64 " extents hydrated, "
	       "hydration pending after %" PRIu64 " recoveries and at %" PRIu64 " clean reopens; "
	       "pool grown %" PRIu64 " times (%" PRIu64 " power losses inside a grow recovered at "
	       "the old size, %" PRIu64 " at the new)\n",
	       s.xc_acked, s.xc_shared, s.xc_copied, s.xc_multi, s.xc_within, s.xc_cross, s.xc_nospc,
	       s.row_writes, s.row_overwrites, s.shared_drops, s.shared_unmap_partial,
	       s.ws_zero_shared_partial, s.recycles, s.source_deletes, s.shared_after_recovery,
	       s.hydrated_seen, s.hydrating_after_recovery, s.reopens_hydrating, s.grows,
	       s.grow_crash_old, s.grow_crash_new);
	printf("crash_suite: %" PRIu64 " recoveries wrote small writes carried in the journal home; "
	       "%" PRIu64 " copy segments acknowledged whose source was written while they ran; "
	       "power lost while deleting and creating a volume again: found as it was %" PRIu64
	       " times, deleted %" PRIu64 ", new %" PRIu64 "\n",
	       s.redo_recoveries, s.xc_raced, s.recycle_crash_kept, s.recycle_crash_gone,
	       s.recycle_crash_new);
	printf("crash_suite: %s checkpoints; power lost with none running %" PRIu64 ", quiescing %" PRIu64
	       ", writing the blob %" PRIu64 ", writing the superblock %" PRIu64 "; %" PRIu64
	       " journal records appended while live checkpoints wrote (crashed pools)\n",
	       s.live_ckpt ? "live" : "paused", s.cut_ckpt[VPOOL_CKPT_IDLE],
	       s.cut_ckpt[VPOOL_CKPT_QUIESCE], s.cut_ckpt[VPOOL_CKPT_BLOB],
	       s.cut_ckpt[VPOOL_CKPT_SUPERBLOCK], s.live_records);
	if (s.rbd) {
		printf("crash_suite: RBD: %" PRIu64 " kills (engine frozen at the armed I/O, image taken "
		       "over: old client blocklisted); %" PRIu64 " changes passed to librbd and not "
		       "completed at the kills (may land or not), %" PRIu64 " never sent; %" PRIu64
		       " free extents still held by the image given back by the sweep after "
		       "recovery; takeover mean %" PRIu64 " ms, max %" PRIu64 " ms; recovery mean %"
		       PRIu64 " ms, max %" PRIu64 " ms\n",
		       s.kills, s.kill_in_flight, s.kill_dropped, s.swept,
		       s.kills ? s.takeover_ms_sum / s.kills : 0, s.takeover_ms_max,
		       s.kills ? s.recovery_ms_sum / s.kills : 0, s.recovery_ms_max);
		printf("crash_suite: RBD: SKIPPED (not passed, not applicable): fault modes trash and "
		       "alloc, --self-test (crashsim's garbage injection), %" PRIu64 " vaai-check runs "
		       "(it opens files only; vpool_verify, its check, ran after every kill)\n",
		       s.checks_skipped);
	}
	if (!s.rbd) /* the crash-simulating store's counters (none on RBD: SKIPPED above) */
		printf("crash_suite: fault mode %s: %" PRIu64 " sectors left as random bytes by power "
		       "cuts (%" PRIu64 " found where a change was in flight, recorded); %" PRIu64
		       " sectors lost with the mapping of their block, %" PRIu64 " allocations and %"
		       PRIu64 " grows of a file lost\n",
		       fault_name[s.fault], s.fst.trashed_sectors, s.trash_recorded,
		       s.fst.unmapped_dropped, s.fst.lost_allocs, s.fst.lost_grows);
	/* The workload must have exercised what it claims to (a suite that cannot fail is no test). */
	struct {
		const char *what;
		uint64_t n;
	} need[] = {
		{"writes acknowledged", s.writes_acked},
		{"writes refused for space", s.writes_nospc},
		{"deallocations", s.deallocs},
		{"clean reopens", s.reopens},
		{"unacknowledged data found after a crash", s.torn_seen},
		{"UNMAP / WRITE SAME zero", s.zeroes_acked},
		{"COMPARE AND WRITE", s.caws_acked},
		{"EXTENDED COPY sharing extents", s.xc_shared},
		{"EXTENDED COPY copying data", s.xc_copied},
		{"multi-segment EXTENDED COPY", s.xc_multi},
		{"EXTENDED COPY within one volume", s.xc_within},
		{"EXTENDED COPY between volumes", s.xc_cross},
		{"redirect-on-write into a shared extent", s.row_writes},
		{"overwrite of a whole shared extent", s.row_overwrites},
		{"reference of a shared extent dropped by UNMAP/deallocation", s.shared_drops},
		{"UNMAP partly covering a shared extent", s.shared_unmap_partial},
		{"WRITE SAME zero partly covering a shared extent", s.ws_zero_shared_partial},
		{"deletion of a volume sharing extents", s.source_deletes},
		{"sharing found in the pool after a recovery", s.shared_after_recovery},
		{"background hydration of a redirected extent", s.hydrated_seen},
		{"redirected extents still hydrating after a recovery", s.hydrating_after_recovery},
		{"clean reopen with hydration pending (checkpointed)", s.reopens_hydrating},
		{"hydration paused", s.hyd_pauses},
		{"pool grown online", s.grows},
		{"power lost inside a pool grow, recovered at the old size", s.grow_crash_old},
		{"power lost deleting a volume, found as it was", s.recycle_crash_kept},
		{"power lost creating a volume again, found deleted", s.recycle_crash_gone},
		{"EXTENDED COPY whose source was written while it ran", s.xc_raced},
		{"small writes carried in the journal written home by a recovery", s.redo_recoveries},
		/* --live-checkpoints: power lost inside each window of a live checkpoint, and
		 * records appended while one wrote (0 in the paused mode: counted 1 then) */
		{"power lost quiescing for a live checkpoint",
		 !s.live_ckpt || s.cut_ckpt[VPOOL_CKPT_QUIESCE]},
		{"power lost writing a live checkpoint's blob", !s.live_ckpt || s.cut_ckpt[VPOOL_CKPT_BLOB]},
		{"power lost writing a live checkpoint's superblock",
		 !s.live_ckpt || s.cut_ckpt[VPOOL_CKPT_SUPERBLOCK]},
		{"records appended while a live checkpoint wrote", !s.live_ckpt || s.live_records},
		/* the fault mode's own faults (counted 1 when another mode runs) */
		{"sectors left as random bytes by a power cut", s.fault != F_TRASH || s.fst.trashed_sectors},
		{"garbage recorded where a change was in flight", s.fault != F_TRASH || s.trash_recorded},
		{"unsynced writes lost with an unmapped block", s.fault != F_ALLOC || s.fst.unmapped_dropped},
		{"allocations lost by a power cut", s.fault != F_ALLOC || s.fst.lost_allocs},
		/* --rbd: the sweep after a takeover found free extents the image still held */
		{"free extents swept after a kill (RBD)", !s.rbd || s.swept},
	};
	for (size_t i = 0; s.points >= 100 && !s.no_coverage && i < sizeof(need) / sizeof(need[0]); i++)
		if (!need[i].n)
			fail(&s, "the workload never exercised: %s; widen it", need[i].what);
	if (s.no_coverage) {
		unsigned missed = 0;
		for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
			missed += !need[i].n;
		printf("crash_suite: coverage NOT checked (--no-coverage-check): %u of %zu kinds of "
		       "operation never exercised in this run\n",
		       missed, sizeof(need) / sizeof(need[0]));
		for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
			if (!need[i].n)
				printf("crash_suite: never exercised (not checked): %s\n", need[i].what);
	}
	if (!s.writes_acked || !s.deallocs || !s.torn_seen)
		fail(&s, "workload too weak: acked %" PRIu64 " deallocs %" PRIu64
			 " unacked-present %" PRIu64, s.writes_acked, s.deallocs, s.torn_seen);
	for (int i = 0; i < NVOL; i++) {
		free(s.v[i].acked);
		free(s.v[i].alt);
		free(s.v[i].pend);
		free(s.v[i].race);
		free(s.v[i].rd);
		free(s.v[i].cut);
		free(s.v[i].maybe_sh);
		free(s.v[i].grp);
	}
	return 0;
}
