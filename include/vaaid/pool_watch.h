/*
 * The pool watch (src/daemon/pool_watch.c; docs/ceph.md "ALUA", "The pool
 * watch"): every VD_POOL_WATCH_PERIOD_NS a gateway looks at the RBD stores of
 * its pools, off the reactor: an active pool's lock (still this gateway's?), a
 * standby pool's owner record (which group owns it now?), and its LUNs follow.
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

enum vd_watch_event {
	VD_WATCH_NONE,
	VD_WATCH_FENCED, /* the active store's lock is gone: vblk.fenced is set */
	VD_WATCH_OWNER,  /* a standby store's owner group changed: *owner is the new one */
};
/* One look at a pool's store: dev is the store of an active pool, or the read-only
 * view of a standby one (standby true); *owner is the owner group known so far. A
 * store that is not on RBD, or already fenced, answers NONE; so does a look that
 * fails (the cluster does not answer): the next period looks again. From dev's
 * reactor thread, outside its callbacks (the reads run on voffload_run's worker). */
enum vd_watch_event vd_store_watch(struct vblk *dev, bool standby, uint16_t *owner);
/* What a LUN of that pool does about ev (SPC-4 5.16.2): FENCED: the fenced state
 * (scsi_alua_refresh: unavailable with ALUA, the standby sense without); OWNER: its
 * peers' states follow the new owner group (scsi_alua_set_states, its own state
 * kept). Either posts ASYMMETRIC ACCESS STATE CHANGED when a state changed. */
void vd_lun_watch_apply(struct scsi_lun *lun, enum vd_watch_event ev, uint16_t owner);

#endif
