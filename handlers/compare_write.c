/*
 * COMPARE AND WRITE (SBC-4 5.3), the VAAI "ATS" primitive.
 *
 * How this works: the CDB is checked (WRPROTECT, NUMBER OF LOGICAL BLOCKS
 * against the advertised MAXIMUM COMPARE AND WRITE LENGTH, the range against
 * the capacity, the Data-Out Buffer length against 2 x NoLB blocks), the
 * Data-Out Buffer (verify instance then write instance, NoLB blocks each) is
 * copied into one aligned buffer, and the pool does the
 * rest under exclusive locks on the extents involved (vvol_compare_write):
 * no WRITE, WRITE SAME, UNMAP, EXTENDED COPY or other COMPARE AND WRITE can
 * touch the range between the read and the write, and nothing on other
 * extents is waited for. A difference completes with MISCOMPARE / MISCOMPARE
 * DURING VERIFY OPERATION, VALID=1 and INFORMATION = offset of the first
 * differing byte from the start of the Data-Out Buffer (SBC-4 5.3), nothing
 * written. Blocks never written compare as zeros (they read as zeros). DPO and
 * FUA are accepted (WCE=0: every write is durable when it completes).
 */
#include <errno.h>
#include <stdlib.h>

#include "handler_util.h"
#include "vaaid/handlers.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"

struct caw_ctx {
	struct vpool_ctx link; /* first: tracked on the pool (freed if abandoned) */
	struct scsi_cmd *cmd;
	uint8_t *buf; /* verify instance, then write instance */
	struct iovec wiov;
	uint64_t miscompare_at;
};

static void caw_discard(struct vpool_ctx *link)
{
	struct caw_ctx *c = (struct caw_ctx *)link;
	free(c->buf);
	free(c);
}

static void caw_done(void *arg, int res)
{
	struct caw_ctx *c = arg;
	struct scsi_cmd *cmd = c->cmd;
	uint64_t at = c->miscompare_at;
	handler_ctx_untrack(cmd, &c->link);
	free(c->buf);
	free(c);
	if (res == -EILSEQ) {
		scsi_set_sense_info(cmd, SK_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY, (uint32_t)at);
		cmd->status = SAM_STAT_CHECK_CONDITION;
		scsi_cmd_complete(cmd);
		return;
	}
	handler_complete_pool_result(cmd, res, true);
}

void handler_compare_and_write(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	uint64_t lba;
	uint32_t n;
	/* SBC-4 5.3: no protection information -> WRPROTECT (byte 1 bits 7..5) must be 0. */
	if (cdb[1] & 0xE0) {
		scsi_complete_invalid_cdb(cmd, 1, 7);
		return;
	}
	if (!handler_decode_rw(cmd, &lba, &n, false))
		return;
	/* SBC-4 5.3: NUMBER OF LOGICAL BLOCKS above MAXIMUM COMPARE AND WRITE LENGTH
	 * (VPD B0, 6.6.4) -> INVALID FIELD IN CDB pointing at byte 13. */
	if (n > cmd->lun->info.max_caw_len) {
		scsi_complete_invalid_cdb(cmd, 13, -1);
		return;
	}
	uint32_t bs = cmd->lun->info.block_size;
	uint64_t bytes = (uint64_t)n * bs;
	/* SBC-4 5.3: the Data-Out Buffer holds the verify and the write instance. One of
	 * another length disagrees with NUMBER OF LOGICAL BLOCKS: INVALID FIELD IN CDB at
	 * byte 13 (also for NoLB 0 with data sent: an initiator asking for 256 blocks
	 * wraps the 8-bit field to 0 and must not get GOOD). */
	if (cmd->iov_len != 2 * bytes) {
		scsi_complete_invalid_cdb(cmd, 13, -1);
		return;
	}
	if (!n) {
		/* SBC-4 5.3: 0 blocks -> nothing compared or written; not an error. */
		scsi_complete_good(cmd);
		return;
	}
	struct caw_ctx *c = calloc(1, sizeof(*c));
	uint8_t *buf = c ? vblk_alloc_buf(2 * bytes) : NULL;
	if (!buf) {
		free(c);
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	scsi_copy_from_data_out(cmd, 0, buf, 2 * bytes);
	c->cmd = cmd;
	c->buf = buf;
	c->wiov = (struct iovec){.iov_base = buf + bytes, .iov_len = bytes};
	handler_ctx_track(cmd, &c->link, caw_discard);
	int rc = vvol_compare_write(cmd->lun->vol, lba * bs, bytes, buf, &c->wiov, 1,
				    &c->miscompare_at, caw_done, c);
	if (rc < 0) {
		handler_ctx_untrack(cmd, &c->link);
		free(buf);
		free(c);
		handler_complete_pool_result(cmd, rc, true);
	}
}
