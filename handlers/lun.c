/* A LUN's identity and limits from its volume (see include/vaaid/lun.h). */
#include <string.h>

#include "vaaid/handlers.h"
#include "vaaid/lun.h"

/* LOG SENSE 0Ch (SBC-4 6.4.6): the pool's free and used extents are its LBA mapping
 * resources; one extent is one threshold set. */
static void lun_lbp_resources(const struct scsi_lun *lun, uint64_t *avail, uint64_t *used)
{
	struct vpool_stats st;
	vpool_get_stats(vvol_pool(lun->vol), &st);
	*avail = st.free / st.extent;
	*used = st.used / st.extent;
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

void vaaid_lun_set_soft_threshold(struct scsi_lun *lun, uint64_t used_limit_bytes)
{
	struct vpool_stats st;
	vpool_get_stats(vvol_pool(lun->vol), &st);
	uint64_t sets = used_limit_bytes / st.extent;
	lun->info.soft_threshold_sets = sets > UINT32_MAX ? UINT32_MAX : (uint32_t)sets;
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
	/* VPD B2 THRESHOLD EXPONENT (SBC-4 6.6.5): a threshold set is one extent. */
	uint8_t e = 0;
	while (((uint64_t)vi.block_size << e) < st.extent)
		e++;
	in->threshold_exponent = e;
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
}
