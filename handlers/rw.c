/*
 * READ and WRITE 6/10/12/16 (SBC-4 5.15-5.18 READ, 5.40-5.43 WRITE).
 * DPO and FUA are accepted: with WCE=0 every write is durable when it
 * completes, which is what FUA asks for (SBC-4 5.40).
 */
#include <errno.h>
#include <stdlib.h>

#include "handler_util.h"
#include "vaaid/handlers.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"

static void read_done(void *arg, int res)
{
	struct scsi_cmd *cmd = arg;
	if (res == 0)
		cmd->data_in_len = (size_t)(uintptr_t)cmd->handler_priv;
	handler_complete_pool_result(cmd, res, false);
}

/* A data-in buffer that ends inside a block: read the blocks it touches into a bounce buffer. */
struct short_read {
	struct scsi_cmd *cmd;
	uint8_t *buf;
	struct iovec iov;
};

static void short_read_done(void *arg, int res)
{
	struct short_read *sr = arg;
	struct scsi_cmd *cmd = sr->cmd;
	if (res == 0)
		scsi_copy_to_data_in(cmd, sr->buf, cmd->iov_len);
	free(sr->buf);
	free(sr);
	handler_complete_pool_result(cmd, res, false);
}

static void short_read(struct scsi_cmd *cmd, uint64_t lba, uint32_t bs)
{
	uint64_t len = (cmd->iov_len + bs - 1) / bs * bs;
	struct short_read *sr = calloc(1, sizeof(*sr));
	uint8_t *buf = sr ? vblk_alloc_buf(len) : NULL;
	if (!buf) {
		free(sr);
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	*sr = (struct short_read){.cmd = cmd, .buf = buf, .iov = {.iov_base = buf, .iov_len = len}};
	int rc = vvol_read(cmd->lun->vol, lba * bs, len, &sr->iov, 1, short_read_done, sr);
	if (rc < 0) {
		free(buf);
		free(sr);
		handler_complete_pool_result(cmd, rc, false);
	}
}

void handler_read(struct scsi_cmd *cmd)
{
	uint64_t lba;
	uint32_t n;
	if (!handler_decode_rw(cmd, &lba, &n, true))
		return;
	uint32_t bs = cmd->lun->info.block_size;
	uint64_t bytes = (uint64_t)n * bs;
	/*
	 * A data-in buffer shorter than the transfer (an underflow LIO lets through with a
	 * residual) gets the first iov_len bytes of the data. It must never be left partly
	 * unwritten: TCMU cannot report a read length of 0 or a partial block, and the ring's
	 * data area still holds the previous command's bytes (stale data, another volume's
	 * or initiator's). Whole blocks are read in place; a buffer ending inside a block
	 * goes through a bounce buffer.
	 */
	if (bytes > cmd->iov_len) {
		if (cmd->iov_len % bs) {
			short_read(cmd, lba, bs);
			return;
		}
		bytes = cmd->iov_len;
	}
	if (!bytes) {
		/* SBC-4 5.16: TRANSFER LENGTH 0 is not an error. A data-in buffer given anyway
		 * is zeroed (nothing stale reaches the initiator: see above). */
		scsi_clear_data_in(cmd);
		scsi_complete_good(cmd);
		return;
	}
	cmd->handler_priv = (void *)(uintptr_t)bytes;
	int rc = vvol_read(cmd->lun->vol, lba * bs, bytes, cmd->iov, cmd->iovcnt, read_done, cmd);
	if (rc < 0)
		handler_complete_pool_result(cmd, rc, false);
}

static void write_done(void *arg, int res)
{
	handler_complete_pool_result(arg, res, true);
}

void handler_write(struct scsi_cmd *cmd)
{
	uint64_t lba;
	uint32_t n;
	if (!handler_decode_rw(cmd, &lba, &n, true))
		return;
	uint32_t bs = cmd->lun->info.block_size;
	if (!handler_check_data_out(cmd, (uint64_t)n * bs))
		return;
	if (!n) {
		scsi_complete_good(cmd); /* SBC-4 5.41: TRANSFER LENGTH 0 is not an error */
		return;
	}
	int rc = vvol_write(cmd->lun->vol, lba * bs, (uint64_t)n * bs, cmd->iov, cmd->iovcnt,
			    write_done, cmd);
	if (rc < 0)
		handler_complete_pool_result(cmd, rc, true);
}
