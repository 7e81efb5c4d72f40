/*
 * simhost: the engine (reactor + pool + TCMU devices) on its own thread, fed
 * through simulated kernels (include/vaaid/sim.h), one per LUN. Used by
 * vaai-sim, the crash suite and the engine benchmarks.
 *
 * How this works: the engine thread runs the reactor. The caller's thread
 * plays the kernel: it queues commands into a LUN's memfd ring (simk_submit)
 * and collects completions (simk_reap), the two sides talking only through
 * the shared ring and two eventfds, as LIO and a TCMU daemon do. Control
 * operations (create, open, attach, reopen, crash, stats) stop the engine
 * thread, act from the caller's thread (then the only user of the reactor),
 * and start it again.
 *
 * LUNs come up, and EXTENDED COPY peers are decided, by the daemon's own code
 * (include/vaaid/lun_policy.h), fed what configfs would say: a backstore
 * core/user_sim/lun<N> per LUN (the volume's block size and size), and each
 * visibility group exported by a TPG of its own.
 */
#ifndef VAAID_SIMHOST_H
#define VAAID_SIMHOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vaaid/pool.h"
#include "vaaid/sim.h"

#define SIMHOST_MAX_LUNS 256
#define SIMHOST_MAX_XFER (8u << 20)

/*
 * URING: the pool in files, real io_uring. CRASHSIM: crash-simulating devices
 * over the files (their durable image written back at close). CRASHSIM_MEM:
 * crash-simulating devices in memory only; the path is a name, no file is
 * made, and the pool goes with the host (simhost_reopen: -EOPNOTSUPP).
 * RBD_KILL: the path is an RBD image ("rbd:POOL/IMAGE", CEPH_CONF's cluster;
 * create with journal_file false) behind a kill point (vblk_killpoint.h):
 * simhost_arm_crash / simhost_crashed / simhost_io_ops count its writes,
 * flushes and discards, and simhost_crash is the engine killed and the image
 * taken over by a new client (docs/crash.md). Fault models: none (tear only).
 */
enum simhost_io { SIMHOST_IO_URING, SIMHOST_IO_CRASHSIM, SIMHOST_IO_CRASHSIM_MEM,
		  SIMHOST_IO_RBD_KILL };

struct simhost;

struct simhost_result {
	int lun;
	uint64_t tag;
	struct simk_result r; /* r.data_in is malloc'd: simhost_result_free */
};

/* err receives a message naming the problem on failure. */
int simhost_create_pool(const char *path, uint64_t size, const struct vpool_params *prm,
			enum simhost_io io, uint64_t seed, struct simhost **out, char *err,
			size_t errlen);
/*
 * The same with the journal's place chosen: journal_file true puts it in
 * PATH.journal (what simhost_create_pool does, as the daemon does for pools in
 * regular files), false in the store. Opening finds PATH.journal if it exists.
 * With io=crashsim the two files are paired: one power loss for both.
 */
int simhost_create_pool_ex(const char *path, uint64_t size, const struct vpool_params *prm,
			   bool journal_file, enum simhost_io io, uint64_t seed,
			   struct simhost **out, char *err, size_t errlen);
/*
 * As simhost_create_pool_ex(name, size, prm, false, SIMHOST_IO_CRASHSIM_MEM, ...)
 * with the store a crashsim device on images the caller keeps
 * (vblk_crashsim_create_on; the pool's size is theirs): they are zeros again
 * when the host closes, and make no fresh pages (a fuzz target's pool per input).
 * The host does not own them; one host at a time (-EBUSY). bufs (may be NULL):
 * large buffers lent to the store (vaaid/buf_cache.h), kept by the caller too.
 */
struct vblk_cs_images;
struct vbuf_cache;
int simhost_create_pool_on(const char *name, const struct vpool_params *prm,
			   struct vblk_cs_images *images, struct vbuf_cache *bufs, uint64_t seed,
			   struct simhost **out, char *err, size_t errlen);
int simhost_open_pool(const char *path, enum simhost_io io, uint64_t seed, struct simhost **out,
		      char *err, size_t errlen);
/*
 * A standby gateway's engine on an RBD pool another engine serves (docs/ceph.md
 * "ALUA"): the image opened read-only without its lock, the pool replayed in
 * memory (VPOOL_OPEN_READONLY), as the daemon's view of a standby pool. LUNs of
 * existing volumes attach; with simhost_alua they are standby from the start.
 */
int simhost_open_standby(const char *path, struct simhost **out, char *err, size_t errlen);
/* Remove a pool's files (PATH and PATH.journal); missing ones are fine. */
void simhost_remove_pool(const char *path);
/* Clean shutdown (waits for in-flight commands, checkpoints, closes). */
int simhost_close(struct simhost *h);

int simhost_volume_create(struct simhost *h, const char *name, uint64_t size, uint32_t block);
int simhost_attach(struct simhost *h, const char *volume, int lun);
/* Detach a LUN with nothing in flight (-EBUSY otherwise); its volume stays. */
int simhost_detach(struct simhost *h, int lun);
/*
 * Delete a volume (vpool_volume_delete: every reference dropped, durable on
 * return); no LUN may have it attached (-EBUSY). Control path: runs the reactor
 * from the caller's thread until the record is durable, so a simulated power
 * loss must not be armed to fire meanwhile (it would never return).
 */
int simhost_volume_delete(struct simhost *h, const char *name);
/*
 * Visibility group of a LUN (default 0; kept across reopen): the simulated
 * LIO exports each group's LUNs through one TPG of their own, so EXTENDED COPY
 * (xcopy_scope covisible) reaches only LUNs of the receiving LUN's group, by
 * the daemon's co-visibility rule. May be set before or after attach.
 */
int simhost_set_visibility(struct simhost *h, int lun, int group);
/*
 * Which LUNs an EXTENDED COPY may name, as the daemon's xcopy_scope (VD_XCOPY_*
 * in vaaid/lun_policy.h; default covisible, where the visibility groups are
 * the co-visibility facts). Kept across reopen. -EINVAL for another value.
 */
int simhost_set_xcopy_scope(struct simhost *h, int scope);
/*
 * ALUA as the daemon's [alua] section (src/scsi/alua.c; default group 0: off):
 * LUNs attached from now on get this gateway's group and the peers' groups, the
 * local group active/optimized. -EINVAL for more than SCSI_ALUA_MAX_PEERS peers
 * or peers without a group.
 */
int simhost_alua(struct simhost *h, uint16_t group, const uint16_t *peers, unsigned n_peers);
/* A standby host (simhost_open_standby) takes its pool over, as the daemon's `vaaictl
 * pool takeover` (vd_pool_takeover, vd_devices_pool_served): the image's lock broken
 * and its holder blocklisted, the pool recovered, each LUN moved to the pool's volume
 * of its name and active/optimized, or lost (*lost counts them: the volume was
 * deleted or replaced meanwhile) and unavailable; the view closed. */
int simhost_takeover(struct simhost *h, int *lost);
/* Does the pool count as one other gateways serve too (the peers reported, as for
 * an RBD pool) or as this gateway's alone (a file pool: only the local group,
 * active/optimized; vd_backstore_alua)? Default: as its store, an RBD image shared.
 * For LUNs attached from now on. */
int simhost_alua_shared(struct simhost *h, bool shared);
/* Run the daemon's pool watch (vaaid/pool_watch.h) on the engine thread: every
 * VD_POOL_WATCH_PERIOD_NS the RBD store's lock (lost: the LUNs go to the fenced
 * state) or, standby, the owner record's group (changed: the LUNs' peer states
 * follow), looked at off the reactor. Off until called. */
int simhost_pool_watch(struct simhost *h);
/* What the daemon does when a pool's ownership changes (vd_devices_alua):
 * scsi_alua_set_states(local, owner) on every attached LUN with ALUA. */
int simhost_alua_states(struct simhost *h, uint8_t local, uint16_t owner);
/* The same with the pool's shared ALUA record (scsi_alua_set_record: the owner's
 * group and the groups marked fenced), as the pool watch applies it. */
int simhost_alua_record(struct simhost *h, uint8_t local, uint16_t owner, const uint16_t *fenced,
			unsigned n_fenced);
/* The NAA designator (VPD 83h) of an attached LUN; -ENODEV if not attached. */
int simhost_lun_naa(struct simhost *h, int lun, uint8_t naa[16]);
/* The ring state of an attached LUN's device (tcmu_dev_get_diag); -ENODEV if not attached. */
struct tcmu_dev_diag;
int simhost_lun_diag(struct simhost *h, int lun, struct tcmu_dev_diag *out);

/*
 * A daemon-style service on the engine thread (benchmarks: vaai-bench scrape
 * serves vaaid's metrics endpoint this way): fd is polled by the reactor, and
 * once it is readable fn(arg) is called on the engine thread between two
 * reactor turns, as vaaid's main loop calls its services (src/daemon/main.c),
 * then fd is polled again (also after a reopen or crash). While the engine is
 * stopped (control operations) the call waits. One hook per host, for its
 * whole life (-EBUSY for a second); fd must stay open until simhost_close.
 */
int simhost_engine_hook(struct simhost *h, int fd, void (*fn)(void *arg), void *arg);
/* Only on the engine thread (a hook's fn): LUN lun's counters, NAA and volume name
 * (valid while the LUN stays attached); -ENODEV if not attached. */
struct vaai_lun_stats;
int simhost_engine_lun(const struct simhost *h, int lun, struct vaai_lun_stats *st,
		       uint8_t naa[16], const char **volume);
/* Only on the engine thread: the pool's statistics and its soft threshold in bytes
 * (vaaid_soft_threshold_bytes of simhost_set_threshold's percentage; 0: none). */
void simhost_engine_pool(const struct simhost *h, struct vpool_stats *st, uint64_t *soft_threshold);

/* Queue a command; -EAGAIN when the LUN's ring is full (reap first). tag identifies it. */
int simhost_submit(struct simhost *h, int lun, const uint8_t *cdb, size_t cdb_len,
		   const void *out, size_t out_len, size_t in_len, uint64_t *tag);
/* Collect up to max completed commands (any LUN); waits up to timeout_ms for at least one
 * (0: does not wait; < 0: no limit). Returns their number, 0 when none came in time, or -errno. */
int simhost_reap(struct simhost *h, struct simhost_result *res, unsigned max, int timeout_ms);
unsigned simhost_inflight(const struct simhost *h);
void simhost_result_free(struct simhost_result *r);
/* The same, the buffer kept by the host for a later result's data-in (a few of
 * them: under ASan a large buffer is a fresh mapping, every page a fault, each
 * time it is allocated); r->r.data_in must be what the host's reap gave. */
void simhost_result_release(struct simhost *h, struct simhost_result *r);
/*
 * LUNs brought up from now on take their rings from rings, and rings whose engine
 * is gone (the host closed, crashed or reopened) go back there reset
 * (tools/simhost/rings.h): a caller making a host per input keeps one set of
 * rings for all of them. The caller owns rings and frees them after the host.
 */
struct simhost_rings;
void simhost_use_rings(struct simhost *h, struct simhost_rings *rings);
/* The stores, now and when opened again (recovery, reopen), lend bufs (as
 * simhost_create_pool_on's; the caller's, freed after the host); the engine is
 * stopped meanwhile: the error of its restart. */
int simhost_use_bufs(struct simhost *h, struct vbuf_cache *bufs);

/* Reopen: wait for in-flight commands (their results are kept for the next reap), close
 * cleanly, open again (recovery) and re-attach the same LUNs. */
int simhost_reopen(struct simhost *h);
/* crashsim: power loss now; rbd_kill: the engine killed now (if its kill point has not
 * fired) and the image taken over; commands in flight are lost; recover and re-attach. */
int simhost_crash(struct simhost *h);
/* What the last simhost_crash's recovery replayed (journal commits, records, bytes of
 * journal-carried writes written home again). */
void simhost_last_recovery(const struct simhost *h, struct vpool_open_report *rep);
/* crashsim: where the crashed pool's checkpoint was at the cut (VPOOL_CKPT_*; a failed
 * one: where it failed) and how many journal records were appended while its live
 * checkpoints wrote (vpool_diag). */
void simhost_last_crash_ckpt(const struct simhost *h, int *phase, uint64_t *live_records);
/* io=rbd_kill: what the last simhost_crash did: changes the dead engine had passed to
 * librbd and not seen complete (they may land or not) and those it never sent; the
 * times of the takeover (lock broken, old client blocklisted, lock taken), of the old
 * client's teardown and of the recovery; the free extents the sweep after the
 * recovery found held by the image (vpool_sweep_store, as the daemon's takeover). */
struct simhost_kill_report {
	uint64_t in_flight, dropped, swept;
	uint64_t takeover_ns, old_close_ns, recovery_ns;
};
void simhost_last_kill(const struct simhost *h, struct simhost_kill_report *rep);
/* io=rbd_kill, the oracle's own test only: the I/O the kill is armed at completes
 * with success without being sent, and the kill comes 64 changes later (an engine
 * that acknowledged a journal commit Ceph never got). -EOPNOTSUPP otherwise. */
int simhost_rbd_kill_ack_killed(struct simhost *h, bool on);
/* crashsim, rbd_kill: arm a crash (a kill) at the n-th write/flush (rbd_kill: and
 * discard) from now (the engine keeps running). */
int simhost_arm_crash(struct simhost *h, uint64_t n);
bool simhost_crashed(const struct simhost *h);
uint64_t simhost_io_ops(const struct simhost *h); /* crashsim write+flush count */

/*
 * Deallocate [off, off+len) of a volume through the pool API (vvol_deallocate),
 * from the control thread; returns its result, or -EIO when the simulated
 * power failed meanwhile. Used by the crash suite until UNMAP exists.
 */
int simhost_deallocate(struct simhost *h, const char *volume, uint64_t off, uint64_t len);

/* The pool's statistics (vpool_get_stats; engine stopped while read). */
int simhost_pool_stats(struct simhost *h, struct vpool_stats *st);
/* Stats as JSON (one line, no newline), caller frees. */
char *simhost_stats_json(struct simhost *h);
/* The command counters of attached LUN lun as one JSON line (vaai_lun_stats_json;
 * malloc'd), or NULL when no such LUN is attached. */
char *simhost_lun_stats_json(struct simhost *h, int lun);
/* Run vpool_verify on the live pool (engine stopped meanwhile); returns problems found. */
int simhost_verify(struct simhost *h, FILE *f);
/* The same, unless the simulated power has failed (io=crashsim; checked with the
 * engine stopped, so it cannot fail during the check): then nothing is verified
 * and -ENODEV is returned. A pool whose store died mid-command has failed its
 * commands and is abandoned for recovery: its memory is not what is checked. */
int simhost_verify_powered(struct simhost *h, FILE *f);
/* io=crashsim: fallocate past `limit` bytes of the pool file fails with ENOSPC (a
 * full file system); 0 lifts it. -EOPNOTSUPP for io=uring. */
int simhost_backing_limit(struct simhost *h, uint64_t limit);
/* io=crashsim: the fault models of the pool file and its journal file
 * (vblk_crashsim_set_faults: VBLK_CS_*); kept across simhost_crash and
 * simhost_reopen, not across simhost_close. -EOPNOTSUPP for io=uring. */
int simhost_crash_faults(struct simhost *h, unsigned faults);
/* io=crashsim: the stores' fault counters, summed since the simhost was created or
 * opened (zeros for io=uring). */
void simhost_crash_fault_stats(struct simhost *h, struct vblk_crashsim_fault_stats *st);
/* Soft threshold at pct percent of the pool's capacity (0: none; -EINVAL above 100):
 * LUNs report it (mode page 1Ch/02h) and get UA 38h/07h on each upward crossing. */
int simhost_set_threshold(struct simhost *h, unsigned pct);
/* Grow the pool's backing store to size bytes (vpool_grow's errors). */
int simhost_pool_grow(struct simhost *h, uint64_t size);
/* Background hydration of redirected extents: pause (kept across reopen and crash),
 * resume, wait until none is left (resumes), or only query. pending/hydrated (may be
 * NULL): extents waiting, extents hydrated since the pool was opened. */
enum simhost_hyd { SIMHOST_HYD_QUERY, SIMHOST_HYD_PAUSE, SIMHOST_HYD_RESUME, SIMHOST_HYD_WAIT };
int simhost_hydration(struct simhost *h, enum simhost_hyd op, uint64_t *pending,
		      uint64_t *hydrated);
/* The pool device's I/O counters (engine stopped while they are read). */
struct vblk_stats simhost_blk_stats(struct simhost *h);
/* Benchmarks only: io=uring maps extents without reserving their space in the pool
 * file while skip is true (vblk_uring_bench_skip_reserve; kept across reopen). Off by
 * default; -EOPNOTSUPP for io=crashsim. */
int simhost_bench_skip_reserve(struct simhost *h, bool skip);
/* io=uring: how DSYNC writes are made durable (vblk_uring_set_group_flush: at most
 * max_inflight group fsyncs in flight; 0 = RWF_DSYNC per write), for the pool file
 * and its journal; kept across reopen. -EOPNOTSUPP for io=crashsim. */
int simhost_group_flush(struct simhost *h, unsigned max_inflight);
/* Write whole granules in place (struct vblk unaligned_writes_serialize): 1 on, 0 off,
 * -1 as vblk_uring detected for the pool file (the default; off for io=crashsim).
 * Kept across reopen. */
int simhost_whole_granules(struct simhost *h, int on);
/* Live checkpoints (vpool_set_live_checkpoints): appends go on while a checkpoint
 * writes. Off by default; kept across reopen and crash. */
int simhost_live_checkpoints(struct simhost *h, bool on);
/* Write a checkpoint now (vpool_checkpoint, engine stopped meanwhile: commands in
 * flight go on through the reactor it runs); *live: it resumed metadata appends at
 * its freeze point (vpool_diag.ckpt_last.live). */
int simhost_checkpoint(struct simhost *h, bool *live);

#endif
