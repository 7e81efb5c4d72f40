/*
 * SYNCHRONIZE CACHE 10/16 (SBC-4 5.30, 5.31). vaaid reports WCE=0: every
 * acknowledged write is already durable, so the command only checks its
 * range and completes (after the pool confirms it is healthy). IMMED and
 * SYNC_NV are accepted.
 */
#include "handler_util.h"
#include "vaaid/handlers.h"
#include "vaaid/pool.h"

static void sync_done(void *arg, int res)
{
	handler_complete_pool_result(arg, res, true);
}

void handler_sync_cache(struct scsi_cmd *cmd)
{
	uint64_t lba;
	uint32_t n;
	if (scsi_cdb_lba_len(cmd->cdb, &lba, &n) < 0) {
		scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
		return;
	}
	/* NUMBER OF LOGICAL BLOCKS 0 = through the last LBA; the range must lie inside. */
	if (!scsi_lba_range_ok(cmd->lun, lba, n)) {
		scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
		return;
	}
	int rc = vvol_flush(cmd->lun->vol, sync_done, cmd);
	if (rc < 0)
		handler_complete_pool_result(cmd, rc, true);
}
