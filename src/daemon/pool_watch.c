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
 *  - Every RBD pool (active, fenced, or standby through its read-only view):
 *    the pool's shared ALUA record (rbd_owner.h: the owner's group, the groups
 *    fenced). A takeover anywhere, a fenced gateway coming back as standby, or
 *    a takeover that failed and left the old owner changes the other groups'
 *    states in REPORT TARGET PORT GROUPS, the same on every path.
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

unsigned vd_store_watch(struct vblk *dev, bool standby, struct vblk_rbd_alua *rec)
{
	if (!dev)
		return VD_WATCH_NONE;
	unsigned ev = VD_WATCH_NONE;
	if (!standby && !dev->fenced && vblk_rbd_check_lock(dev) == 1)
		ev |= VD_WATCH_FENCED;
	struct vblk_rbd_alua now;
	if (rec && vblk_rbd_alua_get(dev, &now) == 0)
		ev |= vd_alua_record_update(rec, &now);
	return ev;
}

unsigned vd_alua_record_update(struct vblk_rbd_alua *known, const struct vblk_rbd_alua *now)
{
	if (vblk_rbd_alua_equal(now, known))
		return VD_WATCH_NONE;
	*known = *now;
	return VD_WATCH_OWNER;
}

void vd_lun_watch_apply(struct scsi_lun *lun, unsigned ev, const struct vblk_rbd_alua *rec)
{
	/* the state dispatch would set at the next command (scsi_alua_refresh:
	 * SPC-4 5.16.2.4 unavailable, 02h/04h/0Ch), set now, so that the unit
	 * attention (06h/2Ah/06h, SPC-4 5.16.2) and REPORT TARGET PORT GROUPS tell
	 * the initiator before it sends any I/O */
	if (ev & VD_WATCH_FENCED)
		scsi_alua_refresh(lun);
	/* this gateway's state stays (what it knows of itself); every other group
	 * follows the shared record, as on every other path (SPC-4 5.16.2.4) */
	if ((ev & VD_WATCH_OWNER) && lun->alua.enabled)
		scsi_alua_set_record(lun, lun->alua.local.state, rec->owner, rec->fenced,
				     rec->n_fenced);
}
