/*
 * The pool watch (include/vaaid/pool_watch.h; docs/ceph.md "ALUA").
 *
 * How this works: a one-shot reactor timer of VD_POOL_WATCH_PERIOD_NS whose
 * callback only sets a flag; the loop that owns the reactor (the daemon's main
 * loop, simhost's engine thread) sees it between two reactor iterations and
 * looks at each pool's store with vd_store_watch, whose librbd calls run on
 * voffload_run's worker while the reactor keeps serving every ring; then it
 * arms the timer again. What a look finds is applied to the pool's LUNs by
 * vd_lun_watch_apply, the same rule wherever the look ran.
 *
 *  - An active pool on RBD: is the image's lock still this client's
 *    (vblk_rbd_check_lock)? A gateway another one took the pool from while it
 *    sent no I/O learns it here, within one period, instead of at its next
 *    I/O: the store is marked fenced exactly as an I/O that met the blocklist
 *    marks it, and its LUNs answer the fenced state at once.
 *  - A standby pool (its read-only view): which ALUA group does the owner record
 *    name now? A third gateway's takeover, or a takeover that failed and left
 *    the old owner, changes the peers' states in REPORT TARGET PORT GROUPS.
 */
#include <errno.h>

#include "vaaid/pool_watch.h"

static void tick(void *arg, int res)
{
	struct vd_pool_watch *w = arg;
	w->armed = false;
	if (res != -ECANCELED)
		w->due = true;
}

void vd_pool_watch_arm(struct vd_pool_watch *w, struct vreactor *r)
{
	w->r = r;
	if (w->armed || w->due)
		return;
	vio_op_init(&w->timer.op, tick, w);
	w->armed = vreactor_timeout(r, &w->timer, VD_POOL_WATCH_PERIOD_NS) == 0;
}

bool vd_pool_watch_due(struct vd_pool_watch *w)
{
	bool due = w->due;
	w->due = false;
	return due;
}

enum vd_watch_event vd_store_watch(struct vblk *dev, bool standby, uint16_t *owner)
{
	if (!dev || dev->fenced)
		return VD_WATCH_NONE;
	if (!standby)
		return vblk_rbd_check_lock(dev) == 1 ? VD_WATCH_FENCED : VD_WATCH_NONE;
	unsigned g;
	if (vblk_rbd_owner_group(dev, &g) < 0 || g > UINT16_MAX || g == *owner)
		return VD_WATCH_NONE;
	*owner = (uint16_t)g;
	return VD_WATCH_OWNER;
}

void vd_lun_watch_apply(struct scsi_lun *lun, enum vd_watch_event ev, uint16_t owner)
{
	switch (ev) {
	case VD_WATCH_FENCED:
		/* the state dispatch would set at the next command (scsi_alua_refresh:
		 * SPC-4 5.16.2.4 unavailable, 02h/04h/0Ch), set now, so that the unit
		 * attention (06h/2Ah/06h, SPC-4 5.16.2) and REPORT TARGET PORT GROUPS tell
		 * the initiator before it sends any I/O */
		scsi_alua_refresh(lun);
		break;
	case VD_WATCH_OWNER:
		/* this gateway's state stays (standby); the new owner's group becomes
		 * active/optimized and the old one's standby (SPC-4 5.16.2.4) */
		if (lun->alua.enabled)
			scsi_alua_set_states(lun, lun->alua.local.state, owner);
		break;
	case VD_WATCH_NONE:
		break;
	}
}
