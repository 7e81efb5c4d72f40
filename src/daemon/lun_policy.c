/*
 * The daemon's rules for a LIO user:vaai backstore, shared with simhost (see
 * include/vaaid/lun_policy.h): which volume it is, how its LUN comes up, its
 * ALUA groups (vd_backstore_alua: peers only for a shared RBD pool), which
 * volume a standby LUN is bound to when its pool is taken over
 * (vd_lun_same_volume, vd_lun_bind_volume, vd_lun_pool_served: or none, a
 * lost LUN), and which LUNs an EXTENDED COPY received on it may name.
 *
 * How this works: the caller gathers the facts (configfs for the daemon:
 * LIO's attributes, the TPGs and ACLs; simhost invents the same facts from its
 * volumes and visibility groups) and these functions decide. Nothing here
 * reads a device table or the kernel, except vd_xcopy_peer reading configfs's
 * views when it is not given them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vaaid/lun.h"
#include "vaaid/lun_policy.h"
#include "vaaid/util.h"

void vd_backstore_so(const struct vd_backstore *bs, char *buf, size_t len)
{
	snprintf(buf, len, "user_%s/%s", bs->hba, bs->dev);
}

static uint64_t size_max(const struct vpool *pool)
{
	struct vpool_stats st;
	vpool_get_stats(pool, &st);
	return vpool_volume_size_max(st.extent);
}

int vd_backstore_volume(struct vpool *pool, const struct vd_backstore *bs, struct vvol **out)
{
	const struct tcmu_lio_attrs *la = &bs->attrs;
	if (la->hw_block_size != 512 && la->hw_block_size != 4096) {
		vlog_err(bs->label, "%s: hw_block_size %u is not supported (512 or 4096)", bs->dev,
			 la->hw_block_size);
		return -EINVAL;
	}
	if (la->write_cache > 0) {
		vlog_err(bs->label, "%s: emulate_write_cache=1 is refused: vaaid reports WCE=0 and "
			 "completes writes only when durable", bs->dev);
		return -EINVAL;
	}
	int rc;
	struct vvol *v = vpool_volume_find(pool, bs->volume);
	if (!v) {
		if (!la->dev_size) {
			vlog_err(bs->label, "%s: LIO gives no size for the new volume", bs->dev);
			return -EINVAL;
		}
		rc = vpool_volume_create(pool, bs->volume, la->dev_size, la->hw_block_size, &v);
		if (rc == -EFBIG) {
			vlog_err(bs->label, "cannot create volume %s/%s: %" PRIu64 " bytes is larger "
				 "than the largest volume of this pool, %" PRIu64 " bytes (2^26 "
				 "extents)", bs->pool, bs->volume, la->dev_size, size_max(pool));
			return rc;
		}
		if (rc < 0) {
			vlog_err(bs->label, "cannot create volume %s/%s (%" PRIu64 " bytes): %s",
				 bs->pool, bs->volume, la->dev_size, strerror(-rc));
			return rc;
		}
		vlog_info(bs->label, "volume %s/%s created thin, %" PRIu64 " bytes, %u-byte blocks",
			  bs->pool, bs->volume, la->dev_size, la->hw_block_size);
	}
	struct vvol_info vi;
	vvol_get_info(v, &vi);
	if (vi.block_size != la->hw_block_size) {
		vlog_err(bs->label, "%s: volume %s/%s has %u-byte blocks but hw_block_size is %u: "
			 "refused", bs->dev, bs->pool, bs->volume, vi.block_size, la->hw_block_size);
		return -EINVAL;
	}
	if (la->dev_size && la->dev_size < vi.size) {
		vlog_err(bs->label, "%s: size %" PRIu64 " is smaller than volume %s/%s (%" PRIu64
			 " bytes): shrinking is refused", bs->dev, la->dev_size, bs->pool, bs->volume,
			 vi.size);
		return -EINVAL;
	}
	if (la->dev_size > vi.size) {
		rc = vvol_grow(v, la->dev_size);
		if (rc == -EFBIG) {
			vlog_err(bs->label, "cannot grow %s/%s to %" PRIu64 " bytes: larger than the "
				 "largest volume of this pool, %" PRIu64 " bytes (2^26 extents)",
				 bs->pool, bs->volume, la->dev_size, size_max(pool));
			return rc;
		}
		if (rc < 0) {
			vlog_err(bs->label, "cannot grow %s/%s to %" PRIu64 ": %s", bs->pool,
				 bs->volume, la->dev_size, strerror(-rc));
			return rc;
		}
		vlog_info(bs->label, "volume %s/%s grown to %" PRIu64 " bytes", bs->pool, bs->volume,
			  la->dev_size);
	}
	*out = v;
	return 0;
}

void vd_backstore_alua(struct scsi_lun *lun, uint16_t group, const uint16_t *peers,
		       unsigned n_peers, bool shared, uint8_t local,
		       const struct vblk_rbd_alua *rec)
{
	if (!group)
		return;
	if (!shared) { /* only this gateway serves it: no peer group, never standby */
		scsi_alua_configure(lun, group, NULL, 0, SCSI_ALUA_ACTIVE_OPTIMIZED, 0, NULL, 0);
		return;
	}
	scsi_alua_configure(lun, group, peers, n_peers, local, rec ? rec->owner : 0,
			    rec ? rec->fenced : NULL, rec ? rec->n_fenced : 0);
}

bool vd_lun_same_volume(const struct scsi_lun *lun, struct vpool *p, const char *volume,
			struct vvol **v)
{
	*v = vpool_volume_find(p, volume);
	if (!*v)
		return false;
	struct vvol_info vi;
	vvol_get_info(*v, &vi);
	return !memcmp(vi.naa, lun->info.naa, sizeof(vi.naa)) &&
	       vi.block_size == lun->info.block_size;
}

void vd_lun_bind_volume(struct scsi_lun *lun, struct vvol *v)
{
	lun->vol = v;
	struct vvol_info vi;
	vvol_get_info(v, &vi);
	if (vi.size / vi.block_size != lun->info.nblocks)
		vaaid_lun_resize(lun, vi.size / vi.block_size);
}

int vd_lun_pool_served(struct scsi_lun *lun, struct vpool *pool, const char *volume,
		       const struct vblk_rbd_alua *rec)
{
	struct vvol *v;
	if (vd_lun_same_volume(lun, pool, volume, &v)) {
		vd_lun_bind_volume(lun, v);
		if (lun->alua.enabled && rec)
			scsi_alua_set_record(lun, SCSI_ALUA_ACTIVE_OPTIMIZED, rec->owner, rec->fenced,
					     rec->n_fenced);
		else if (lun->alua.enabled)
			scsi_alua_set_states(lun, SCSI_ALUA_ACTIVE_OPTIMIZED, 0);
		return 0;
	}
	/* nothing that state allows reads the volume (dispatch refuses the rest before a
	 * handler runs; the fence poll checks lun->vol first) */
	lun->vol = NULL;
	scsi_alua_set_local(lun, SCSI_ALUA_UNAVAILABLE);
	return -ESTALE;
}

uint64_t vd_ring_data_area(const void *map, uint64_t map_size)
{
	/* struct tcmu_mailbox: version u16, flags u16, cmdr_off u32, cmdr_size u32 */
	uint32_t mb[3];
	memcpy(mb, map, sizeof(mb));
	uint64_t used = (uint64_t)mb[1] + mb[2];
	return used < map_size ? map_size - used : 0;
}

uint64_t vd_backstore_lun_init(struct scsi_lun *lun, struct vvol *v, const struct vd_backstore *bs,
			       uint64_t data_area, unsigned soft_pct)
{
	/* VPD B0 MAXIMUM TRANSFER LENGTH within hw_max_sectors and the data area (SBC-4 6.6.4). */
	uint64_t max_xfer = (uint64_t)bs->attrs.hw_max_sectors * bs->attrs.hw_block_size;
	if (max_xfer > data_area)
		max_xfer = data_area;
	vaaid_lun_init(lun, v, max_xfer);
	lun->name = bs->label;
	/* the pool's soft threshold (mode page 1Ch/02h); a LUN coming up while the pool is
	 * above it gets the unit attention at once (SBC-4 4.7.3.7.2) */
	struct vpool *p = vvol_pool(v);
	vaaid_lun_set_soft_threshold(lun, vaaid_soft_threshold_bytes(p, soft_pct));
	if (vpool_above_soft_threshold(p))
		scsi_lun_post_soft_threshold_ua(lun);
	return max_xfer;
}

struct scsi_lun *vd_xcopy_peer(const struct vd_xcopy_policy *pol, struct scsi_lun *self,
			       const struct vd_backstore *self_bs, struct scsi_lun *peer,
			       const struct vd_backstore *peer_bs, int *why)
{
	*why = SCSI_PEER_UNKNOWN;
	if (!peer)
		return NULL;
	if (peer == self)
		return self;
	if (strcmp(peer_bs->pool, self_bs->pool)) {
		*why = SCSI_PEER_OTHER_POOL;
		return NULL;
	}
	if (pol->scope == VD_XCOPY_POOL)
		return peer;
	if (pol->scope == VD_XCOPY_COVISIBLE) {
		char a[512], b[512];
		vd_backstore_so(self_bs, a, sizeof(a));
		vd_backstore_so(peer_bs, b, sizeof(b));
		int cv = 0;
		if (pol->views)
			cv = vd_views_covisible(pol->views, a, b);
		else if (pol->configfs_root)
			cv = vd_covisible(pol->configfs_root, a, b);
		if (cv == 1)
			return peer;
		/* at most one line per 10 s per LUN: any initiator can send such copies */
		vlog_warn_limited(&self->xcopy_peer_log, self_bs->label,
				  "EXTENDED COPY naming %s refused: not exported everywhere %s is",
				  peer_bs->dev, self_bs->dev);
	}
	*why = SCSI_PEER_NOT_COVISIBLE;
	return NULL;
}
