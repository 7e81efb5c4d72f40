/* A LUN's identity and limits from its volume (see include/vaaid/lun.h). */
#include <string.h>

#include "vaaid/handlers.h"
#include "vaaid/lun.h"

/*
 * VPD B2 THRESHOLD EXPONENT (SBC-4 6.6.5): a threshold set is 2^e logical blocks,
 * e non-zero and small enough that capacity / 2^e < 2^32. A set is one extent (the
 * pool's allocation unit) unless the LUN is so large that the capacity rule needs
 * bigger sets (over 4 Gi extents: e.g. above 256 TiB with 64 KiB extents).
 */
static uint8_t threshold_exponent(uint32_t block_size, uint64_t extent, uint64_t nblocks)
{
	uint8_t e = 1;
	while (((uint64_t)block_size << e) < extent)
		e++;
	while ((nblocks >> e) >= (1ull << 32))
		e++;
	return e;
}

/* LOG SENSE 0Ch (SBC-4 6.4.6): the pool's free and used space are its LBA mapping
 * resources, counted in this LUN's threshold sets (rounded down). */
static void lun_lbp_resources(const struct scsi_lun *lun, uint64_t *avail, uint64_t *used)
{
	struct vpool_stats st;
	vpool_get_stats(vvol_pool(lun->vol), &st);
	uint64_t set = (uint64_t)lun->info.block_size << lun->info.threshold_exponent;
	*avail = st.free / set;
	*used = st.used / set;
}

uint64_t vaaid_soft_threshold_bytes(const struct vpool *p, unsigned pct)
{
	struct vpool_stats st;
	vpool_get_stats(p, &st);
	if (!pct || !st.extent)
		return 0;
	uint64_t n_ext = st.capacity / st.extent;
	uint64_t lim = (n_ext * pct + 99) / 100;
	return (lim ? lim : 1) * st.extent;
}

bool vaaid_lun_set_soft_threshold(struct scsi_lun *lun, uint64_t used_limit_bytes)
{
	struct scsi_lun_info *in = &lun->info;
	uint64_t old_blocks = in->soft_threshold_blocks;
	uint32_t old_count = scsi_lbp_threshold_count(in);
	in->soft_threshold_blocks = used_limit_bytes / in->block_size;
	return !old_blocks != !in->soft_threshold_blocks || old_count != scsi_lbp_threshold_count(in);
}

void vaaid_lun_update_soft_threshold(struct scsi_lun *lun, uint64_t used_limit_bytes)
{
	/* SBC-4 6.5.7: mode page 1Ch/02h changed by other means than MODE SELECT -> MODE
	 * PARAMETERS CHANGED to every I_T nexus. */
	if (vaaid_lun_set_soft_threshold(lun, used_limit_bytes))
		scsi_lun_post_ua(lun, ASC_MODE_PARAMETERS_CHANGED);
}

void vaaid_lun_resize(struct scsi_lun *lun, uint64_t nblocks)
{
	struct scsi_lun_info *in = &lun->info;
	struct vpool_stats st;
	vpool_get_stats(vvol_pool(lun->vol), &st);
	uint8_t old_e = in->threshold_exponent;
	uint32_t old_count = scsi_lbp_threshold_count(in);
	in->nblocks = nblocks;
	in->threshold_exponent = threshold_exponent(in->block_size, st.extent, nblocks);
	/* SBC-4 4.6 / SPC-4 5.9: CAPACITY DATA HAS CHANGED after a resize. */
	scsi_lun_post_ua(lun, ASC_CAPACITY_DATA_CHANGED);
	if (in->threshold_exponent != old_e) {
		/* VPD B2 changed (SPC-4 5.9: INQUIRY DATA HAS CHANGED), and with it the unit of
		 * mode page 1Ch/02h's THRESHOLD COUNT (SBC-4 6.5.7: MODE PARAMETERS CHANGED). */
		scsi_lun_post_ua(lun, ASC_INQUIRY_DATA_CHANGED);
		if (scsi_lbp_threshold_count(in) != old_count)
			scsi_lun_post_ua(lun, ASC_MODE_PARAMETERS_CHANGED);
	}
}

/* Has another gateway taken the LUN's pool over and fenced this one? */
static bool lun_pool_fenced(const struct scsi_lun *lun)
{
	return lun->vol && vpool_fenced(vvol_pool(lun->vol));
}

void vaaid_lun_init(struct scsi_lun *lun, struct vvol *v, uint64_t max_xfer_bytes)
{
	struct vvol_info vi;
	vvol_get_info(v, &vi);
	struct vpool_stats st;
	vpool_get_stats(vvol_pool(v), &st);
	memset(lun, 0, sizeof(*lun));
	struct scsi_lun_info *in = &lun->info;
	snprintf(in->vendor, sizeof(in->vendor), "%s", VAAID_VENDOR);
	snprintf(in->product, sizeof(in->product), "%s", VAAID_PRODUCT);
	snprintf(in->revision, sizeof(in->revision), "%s", VAAID_REVISION);
	snprintf(in->serial, sizeof(in->serial), "%s", vi.serial);
	memcpy(in->naa, vi.naa, 16);
	in->block_size = vi.block_size;
	in->nblocks = vi.size / vi.block_size;
	/* 512-byte volumes are 512e: 4 KiB physical blocks (SBC-4 5.23 LBPPBE), the validity granule. */
	in->lbppbe = vi.block_size == 512 ? 3 : 0;
	in->opt_xfer_gran = (uint16_t)(VPOOL_GRANULE / vi.block_size);
	uint64_t maxb = max_xfer_bytes / vi.block_size;
	in->max_xfer_blocks = maxb > UINT32_MAX ? UINT32_MAX : (uint32_t)maxb;
	/* COMPARE AND WRITE (SBC-4 5.3): the data-out holds both instances, so it must fit
	 * the maximum transfer twice. */
	uint32_t caw = in->max_xfer_blocks / 2;
	in->max_caw_len = (uint8_t)(caw < VAAID_MAX_CAW_BLOCKS ? caw : VAAID_MAX_CAW_BLOCKS);
	uint64_t optb = st.extent / vi.block_size;
	in->opt_xfer_blocks = (uint32_t)(optb < in->max_xfer_blocks ? optb : in->max_xfer_blocks);
	/* Logical block provisioning management (SBC-4 4.7): thin provisioned (4.7.3.3,
	 * VPD B2 PROVISIONING TYPE 010b), deallocated blocks read as zeros (LBPRZ), UNMAP
	 * (LBPU) and WRITE SAME (16)/(10) with UNMAP (LBPWS/LBPWS10) supported; anchored
	 * state not supported (ANC_SUP=0, ANCHOR=1 refused). */
	in->provisioning_type = 2;
	in->lbpme = true;
	in->lbprz = true;
	in->lbpu = true;
	in->lbpws = true;
	in->lbpws10 = true;
	in->anc_sup = false;
	in->threshold_exponent = threshold_exponent(vi.block_size, st.extent, in->nblocks);
	lun->lbp_resources = lun_lbp_resources;
	/* VPD B0 (SBC-4 6.6.4) limits. OPTIMAL UNMAP GRANULARITY: the extent (the unit
	 * UNMAP gives back), at most 1 MiB so that it divides VMFS6's 1 MiB auto-UNMAP
	 * unit; extents are powers of two, so it always does. */
	uint64_t gran = st.extent < (1u << 20) ? st.extent : (1u << 20);
	in->opt_unmap_gran = (uint32_t)(gran / vi.block_size);
	in->max_unmap_lba_count = (uint32_t)(VAAID_MAX_UNMAP_BYTES / vi.block_size);
	in->max_unmap_desc_count = VAAID_MAX_UNMAP_DESCRIPTORS;
	in->max_write_same_len = VAAID_MAX_WRITE_SAME_BYTES / vi.block_size;
	/* Third-party copy (SPC-4 6.4, 7.8.17): EXTENDED COPY between LUNs the transport's
	 * xcopy_peer hook allows (none set here: only the LUN itself). */
	in->tpc = true;
	lun->vpd_tpc_page = xcopy_vpd_tpc_page;
	lun->vol = v;
	/* ALUA (src/scsi/alua.c): off until the transport configures it; the store's
	 * fence makes the local group not active on either. */
	lun->alua.fenced = lun_pool_fenced;
}
