/*
 * What the daemon makes of a LIO user:vaai backstore (src/daemon/lun_policy.c):
 * the volume behind it, the LUN it brings up (limits, soft threshold), and
 * which other LUNs an EXTENDED COPY received on that LUN may name.
 *
 * One copy for the daemon (src/daemon/devices.c, fed by configfs) and for the
 * engine host of vaai-sim, the crash suite and the benchmarks (tools/simhost,
 * fed what configfs would say), so what the sim tests check is what the
 * daemon runs.
 */
#ifndef VAAID_LUN_POLICY_H
#define VAAID_LUN_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vaaid/covisible.h"
#include "vaaid/pool.h"
#include "vaaid/rbd_owner.h"
#include "vaaid/scsi.h"
#include "vaaid/tcmu_uio.h"

/* xcopy_scope: which LUNs an EXTENDED COPY may name (docs/xcopy.md). */
enum { VD_XCOPY_COVISIBLE = 0, VD_XCOPY_POOL, VD_XCOPY_LUN };

/* A backstore core/user_<hba>/<dev> with cfgstring <pool>/<volume>, as configfs shows it. */
struct vd_backstore {
	const char *hba, *dev;
	const char *pool, *volume;
	const char *label;            /* for log lines */
	struct tcmu_lio_attrs attrs;  /* hw_block_size, hw_max_sectors, size, write cache */
};

/* The backstore as configfs names it in links and co-visibility facts: "user_<hba>/<dev>". */
void vd_backstore_so(const struct vd_backstore *bs, char *buf, size_t len);

/*
 * The volume of bs in pool (bs->pool): 512- or 4096-byte blocks that are the
 * volume's, no write cache (vaaid reports WCE=0), never smaller than the
 * volume; a missing volume is created thin with LIO's size, a larger size
 * grows it. 0 and *out, or -errno (logged).
 */
int vd_backstore_volume(struct vpool *pool, const struct vd_backstore *bs, struct vvol **out);

/*
 * Brings up bs's LUN on volume v: identity and limits (VPD B0 MAXIMUM TRANSFER
 * LENGTH within hw_max_sectors and the ring's data area of data_area bytes,
 * SBC-4 6.6.4), named bs->label; the soft threshold of the pool at soft_pct
 * percent (mode page 1Ch/02h), with its unit attention at once when the pool
 * is above it already (SBC-4 4.7.3.7.2). Returns the maximum transfer in bytes.
 */
uint64_t vd_backstore_lun_init(struct scsi_lun *lun, struct vvol *v, const struct vd_backstore *bs,
			       uint64_t data_area, unsigned soft_pct);

/*
 * ALUA ([alua], docs/ceph.md "ALUA") for bs's LUN: group 0 claims nothing. A pool
 * other gateways can serve too (shared: on RBD) reports this gateway's group in
 * state local and the peers' groups as the pool's shared record rec says (NULL:
 * none known; scsi_alua_configure);
 * a pool only this gateway reaches (a file) reports this gateway's group alone,
 * active/optimized, whatever local says: no other target port group leads to its
 * logical unit (SPC-4 5.16.2.1, 6.36).
 */
void vd_backstore_alua(struct scsi_lun *lun, uint16_t group, const uint16_t *peers,
		       unsigned n_peers, bool shared, uint8_t local,
		       const struct vblk_rbd_alua *rec);

/* Is volume in p the one lun exports (the same NAA and block size)? *v: p's volume of
 * that name (NULL: none). */
bool vd_lun_same_volume(const struct scsi_lun *lun, struct vpool *p, const char *volume,
			struct vvol **v);
/* Serve lun from v, the same volume in another view of its pool (or the pool itself
 * after a takeover); a capacity changed meanwhile is announced (vaaid_lun_resize). */
void vd_lun_bind_volume(struct scsi_lun *lun, struct vvol *v);
/*
 * A standby pool was taken over here (docs/ceph.md "The LUNs of a standby pool"): a
 * LUN that exported volume from the read-only view moves to pool's volume of that name
 * when it is the same volume, and goes active/optimized, the other groups as the
 * pool's shared record rec says (the one the takeover wrote: the group it fenced
 * unavailable; NULL: none known): 0. Otherwise (deleted or
 * replaced by the owner meanwhile) it is lost: unavailable (SPC-4 5.16.2.4.5: only
 * INQUIRY, REPORT LUNS, REPORT TARGET PORT GROUPS and REQUEST SENSE are answered, from
 * the LUN's own identity) and pointing at no volume, so that the view can be closed:
 * -ESTALE. Either way lun->vol is the LUN's volume from now on.
 */
int vd_lun_pool_served(struct scsi_lun *lun, struct vpool *pool, const char *volume,
		       const struct vblk_rbd_alua *rec);

/* The data area of a mapped TCMU ring: the map minus mailbox and command ring. */
uint64_t vd_ring_data_area(const void *map, uint64_t map_size);

/* The EXTENDED COPY peer rule's inputs besides the two LUNs. */
struct vd_xcopy_policy {
	int scope;                    /* VD_XCOPY_* */
	const char *configfs_root;    /* covisible: the views read here at the time of the copy, */
	const struct vd_views *views; /* unless given (simhost: its visibility groups) */
};

/*
 * May an EXTENDED COPY received on self (backstore self_bs) name peer (backstore
 * peer_bs; NULL: no LUN has the NAA named)? Copies never cross pools; then
 * scope lun: only self; pool: any LUN of the pool; covisible: a LUN every view
 * that sees self's backstore also sees. Returns peer (or self), else NULL with
 * *why = SCSI_PEER_* (a refusal for co-visibility is logged as a warning, at most
 * one per 10 s per LUN: self->xcopy_peer_log).
 */
struct scsi_lun *vd_xcopy_peer(const struct vd_xcopy_policy *pol, struct scsi_lun *self,
			       const struct vd_backstore *self_bs, struct scsi_lun *peer,
			       const struct vd_backstore *peer_bs, int *why);

#endif
