/* CDB checks shared by the data handlers and the pool-error -> sense mapping. */
#include <errno.h>

#include "handler_util.h"
#include "vaaid/pool.h"

static bool has_protect_field(uint8_t op)
{
	/* READ/WRITE/VERIFY/WRITE AND VERIFY 10/12/16 have RDPROTECT/WRPROTECT/VRPROTECT. */
	switch (op) {
	case 0x28: case 0xA8: case 0x88: case 0x2A: case 0xAA: case 0x8A:
	case 0x2F: case 0xAF: case 0x8F: case 0x2E: case 0xAE: case 0x8E:
		return true;
	default:
		return false;
	}
}

bool handler_decode_rw(struct scsi_cmd *cmd, uint64_t *lba, uint32_t *nblocks, bool check_max)
{
	const uint8_t *cdb = cmd->cdb;
	if (scsi_cdb_lba_len(cdb, lba, nblocks) < 0) {
		scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
		return false;
	}
	/* SBC-4 4.22.2: protection information not enabled -> PROTECT fields must be 0. */
	if (has_protect_field(cdb[0]) && (cdb[1] & 0xE0)) {
		scsi_complete_invalid_cdb(cmd, 1, 7);
		return false;
	}
	/* SBC-4 6.6.4: a transfer above MAXIMUM TRANSFER LENGTH is an invalid field. */
	if (check_max && cmd->lun->info.max_xfer_blocks && *nblocks > cmd->lun->info.max_xfer_blocks) {
		scsi_complete_invalid_cdb(cmd, (uint16_t)scsi_cdb_len_field_offset(cdb[0]), -1);
		return false;
	}
	/* SBC-4 4.5: LBA + TRANSFER LENGTH beyond the capacity. */
	if (!scsi_lba_range_ok(cmd->lun, *lba, *nblocks)) {
		scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
		return false;
	}
	return true;
}

bool handler_check_data_out(struct scsi_cmd *cmd, uint64_t bytes)
{
	if (cmd->iov_len != bytes) {
		/* LIO (target_cmd_size_check) refuses such a data CDB with this sense. */
		scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CMD_IU);
		return false;
	}
	return true;
}

void handler_complete_pool_result(struct scsi_cmd *cmd, int res, bool write)
{
	if (res < 0 && res != -ENOSPC && vpool_fenced(vvol_pool(cmd->lun->vol))) {
		/* Another gateway took the pool over and fenced this one (docs/ceph.md):
		 * the local target port group is no longer active (src/scsi/alua.c: the same
		 * rule dispatch applies to the next commands), so the initiator sends the
		 * command again on another path, to the gateway that serves the pool now. */
		scsi_alua_complete_not_active(cmd);
		return;
	}
	switch (res) {
	case 0:
		scsi_complete_good(cmd);
		break;
	case -ENOSPC:
		/* SBC-4 4.7.3.6: thin provisioning, no space: SPACE ALLOCATION FAILED WRITE PROTECT. */
		scsi_complete_sense(cmd, SK_DATA_PROTECT, ASC_SPACE_ALLOC_FAILED_WRITE_PROTECT);
		break;
	case -EIO:
		scsi_complete_sense(cmd, SK_MEDIUM_ERROR,
				    write ? ASC_WRITE_ERROR : ASC_UNRECOVERED_READ_ERROR);
		break;
	default:
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		break;
	}
}

void handler_ctx_track(struct scsi_cmd *cmd, struct vpool_ctx *c,
		       void (*discard)(struct vpool_ctx *c))
{
	vpool_ctx_track(vvol_pool(cmd->lun->vol), c, discard);
}

void handler_ctx_untrack(struct scsi_cmd *cmd, struct vpool_ctx *c)
{
	vpool_ctx_untrack(vvol_pool(cmd->lun->vol), c);
}
