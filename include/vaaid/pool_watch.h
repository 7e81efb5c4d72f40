/*
 * The pool watch (src/daemon/pool_watch.c; docs/ceph.md "ALUA", "The pool
 * watch"): every VD_POOL_WATCH_PERIOD_NS a gateway looks at the RBD stores of
 * its pools, off the reactor: an active pool's lock (still this gateway's?), and
 * the pool's shared ALUA record (which group owns it, which are fenced?), and
 * its LUNs follow.
 *
 * One copy for the daemon (src/daemon/devices.c vd_devices_watch, driven from
 * main.c's loop) and for the engine host (tools/simhost, simhost_pool_watch),
 * so what the sim tests check through the ring is what the daemon runs.
 */
#ifndef VAAID_POOL_WATCH_H
#define VAAID_POOL_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "vaaid/io.h"
#include "vaaid/rbd_owner.h"
#include "vaaid/scsi.h"

/* 5 s, not configurable: the worst case for an idle gateway to notice it was
 * fenced (or a standby one that the owner changed) is one period plus one OSD
 * read; one OSD read per RBD pool per period is the whole cost. */
#define VD_POOL_WATCH_PERIOD_NS (5ull * 1000000000ull)

/* The period's timer: its callback only sets due (it runs inside the reactor,
 * where voffload_run may not be called); the owner's loop, between reactor
 * iterations, asks vd_pool_watch_due, looks, then vd_pool_watch_arm counts the
 * next period from the end of the look (looks never overlap). */
struct vd_pool_watch {
	struct vreactor *r;
	struct vio_timer timer;
	bool armed, due;
};
/* Arm the timer (again) unless it is armed: at start, and after each look (also a
 * timer whose submission failed). From r's thread. */
void vd_pool_watch_arm(struct vd_pool_watch *w, struct vreactor *r);
/* Did a period pass? Clears the flag. */
bool vd_pool_watch_due(struct vd_pool_watch *w);

/* What a look found (a bit set; both may come from one look). */
enum vd_watch_event {
	VD_WATCH_NONE = 0,
	VD_WATCH_FENCED = 1, /* the active store's lock is gone: vblk.fenced is set */
	VD_WATCH_OWNER = 2,  /* the pool's shared ALUA record changed: *rec is the new one */
};
/* One look at a pool's store: dev is the store of an active (or fenced) pool, or
 * the read-only view of a standby one (standby true); *rec is the shared ALUA
 * record (rbd_owner.h) known so far (NULL: the lock only, for a pool without
 * LUNs). An active store's lock is checked first; then the record is read, through a client of the store's own when it is fenced
 * (vblk_rbd_alua_get). A store not on RBD answers NONE; so does a read that fails
 * (the cluster does not answer): the next period looks again. From dev's reactor
 * thread, outside its callbacks (the reads run on voffload_run's worker). */
unsigned vd_store_watch(struct vblk *dev, bool standby, struct vblk_rbd_alua *rec);
/* The one rule for a shared ALUA record just read (now), by the watch or a LUN
 * add: when it differs from the one the pool's LUNs show (*known), *known
 * becomes it and the answer is VD_WATCH_OWNER (the caller applies it to every
 * LUN of the pool with vd_lun_watch_apply); otherwise VD_WATCH_NONE. */
unsigned vd_alua_record_update(struct vblk_rbd_alua *known, const struct vblk_rbd_alua *now);
/* What a LUN of that pool does about ev (SPC-4 5.16.2): FENCED: the fenced state
 * (scsi_alua_refresh: unavailable with ALUA, the standby sense without); OWNER:
 * every group's state follows the record (scsi_alua_set_record, its own state
 * kept). Either posts ASYMMETRIC ACCESS STATE CHANGED when a state changed. */
void vd_lun_watch_apply(struct scsi_lun *lun, unsigned ev, const struct vblk_rbd_alua *rec);

#endif
