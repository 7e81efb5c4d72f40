/*
 * GET LBA STATUS (SERVICE ACTION IN(16) 9Eh, service action 12h; SBC-4 5.20).
 *
 * How this works: starting at STARTING LOGICAL BLOCK ADDRESS, the pool is
 * asked for runs of equal provisioning status (vvol_lba_status: mapped =
 * the block reads stored data, deallocated = it reads zeros because nothing
 * is stored), each run becoming one LBA status descriptor. Runs are exact to
 * the 4 KiB validity granule, so the answer is what reads return. The
 * number of descriptors follows the ALLOCATION LENGTH (at least one, at most
 * GLS_MAX_DESC); PARAMETER DATA LENGTH describes the descriptors built and
 * the data is truncated to the ALLOCATION LENGTH (SPC-4 4.2.5.6).
 */
#include <stdlib.h>

#include "handler_util.h"
#include "vaaid/handlers.h"
#include "vaaid/pool.h"

#define GLS_HDR 8u
#define GLS_DESC 16u
#define GLS_MAX_DESC 1024u

enum { LBA_STATUS_MAPPED = 0x0, LBA_STATUS_DEALLOCATED = 0x1 }; /* SBC-4 5.20.3 Table 63 */

void handler_get_lba_status(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	const struct scsi_lun_info *in = &cmd->lun->info;
	uint64_t lba = scsi_get_be64(cdb + 2);
	uint32_t alloc = scsi_get_be32(cdb + 10);
	/* SBC-4 5.20.2: STARTING LOGICAL BLOCK ADDRESS past the last LBA -> LOGICAL BLOCK
	 * ADDRESS OUT OF RANGE. */
	if (lba >= in->nblocks) {
		scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
		return;
	}
	/* SPC-4 4.2.5.6: ALLOCATION LENGTH 0 is not an error; nothing is transferred. The
	 * data-in buffer is still cleared: TCMU cannot report a read length of 0, and the
	 * ring buffer holds an earlier command's data. */
	if (!alloc) {
		scsi_clear_data_in(cmd);
		scsi_complete_good(cmd);
		return;
	}
	size_t maxd = alloc > GLS_HDR + GLS_DESC ? (alloc - GLS_HDR) / GLS_DESC : 1;
	if (maxd > GLS_MAX_DESC)
		maxd = GLS_MAX_DESC;
	uint8_t *b = calloc(1, GLS_HDR + maxd * GLS_DESC);
	if (!b) {
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	uint32_t bs = in->block_size;
	uint64_t off = lba * bs, end = in->nblocks * bs;
	/* NUMBER OF LOGICAL BLOCKS is 32 bits: a longer run takes several descriptors. */
	uint64_t max_run = (uint64_t)UINT32_MAX / (4096 / 512) * (4096 / 512) * bs;
	size_t nd = 0;
	while (off < end && nd < maxd) {
		uint64_t lim = end - off < max_run ? end - off : max_run;
		uint64_t run;
		bool mapped;
		int rc = vvol_lba_status(cmd->lun->vol, off, lim, &run, &mapped);
		if (rc < 0 || !run) {
			free(b);
			scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
			return;
		}
		/* LBA status descriptor, SBC-4 5.20.3 Table 62. */
		uint8_t *d = b + GLS_HDR + nd * GLS_DESC;
		scsi_put_be64(d, off / bs);
		scsi_put_be32(d + 8, (uint32_t)(run / bs));
		d[12] = mapped ? LBA_STATUS_MAPPED : LBA_STATUS_DEALLOCATED; /* PROVISIONING STATUS */
		off += run;
		nd++;
	}
	size_t total = GLS_HDR + nd * GLS_DESC;
	scsi_put_be32(b, (uint32_t)(total - 4)); /* PARAMETER DATA LENGTH (n - 3) */
	scsi_copy_to_data_in(cmd, b, total < alloc ? total : alloc);
	free(b);
	scsi_complete_good(cmd);
}
