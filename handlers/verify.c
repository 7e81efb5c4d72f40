/*
 * VERIFY 10/16 (SBC-4 5.34, 5.35) and WRITE AND VERIFY 10/16 (SBC-4 5.45,
 * 5.46).
 *
 * VERIFY BYTCHK (byte 1 bits 2..1): 00b verify the medium (the range is read;
 * a read error is reported), 01b compare the Data-Out Buffer with the medium,
 * 11b compare one block of Data-Out with every block of the range, 10b is
 * reserved (24h/00h). A difference completes with MISCOMPARE / MISCOMPARE
 * DURING VERIFY OPERATION (1Dh/00h), VALID=1 and INFORMATION = offset of the
 * first differing byte in the Data-Out Buffer (SBC-4 5.34.2; for 11b the buffer
 * as duplicated to cover the whole range, so the offset names the LBA).
 * WRITE AND VERIFY writes the data (durable on completion, WCE=0) and then
 * reads it back and compares it, whatever BYTCHK says (00b asks for a medium
 * verification, 01b for a comparison: the read-back comparison covers both).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "handler_util.h"
#include "vaaid/handlers.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"

#define VERIFY_CHUNK (1024u * 1024)

struct verify_ctx {
	struct scsi_cmd *cmd;
	uint64_t lba, bytes, done; /* the range is read and compared VERIFY_CHUNK at a time */
	uint64_t chunk;
	uint32_t bs;
	uint8_t bytchk;
	uint8_t *buf;
	struct iovec iov;
};

static void ctx_finish(struct verify_ctx *c, int res)
{
	struct scsi_cmd *cmd = c->cmd;
	free(c->buf);
	free(c);
	handler_complete_pool_result(cmd, res, false);
}

static void start_read(struct verify_ctx *c);

static void verify_read_done(void *arg, int res)
{
	struct verify_ctx *c = arg;
	struct scsi_cmd *cmd = c->cmd;
	if (res < 0) {
		ctx_finish(c, res);
		return;
	}
	uint8_t blk[4096];
	for (uint64_t off = 0; c->bytchk && off < c->chunk; off += c->bs) {
		uint64_t out_off = c->bytchk == 3 ? 0 : c->done + off;
		scsi_copy_from_data_out(cmd, out_off, blk, c->bs);
		if (memcmp(blk, c->buf + off, c->bs)) {
			uint32_t i = 0;
			while (blk[i] == c->buf[off + i])
				i++;
			/* SBC-4 5.34.2 (VERIFY(10) BYTCHK): the offset from the start of the
			 * Data-Out Buffer to the first byte that differs. For 11b the device
			 * server duplicates the one block sent and places the copies in the
			 * Data-Out Buffer, so the offset counts every block before the one
			 * that differs (it names the LBA), not only the byte in the block. */
			uint64_t info = c->done + off + i;
			free(c->buf);
			free(c);
			scsi_set_sense_info(cmd, SK_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY, (uint32_t)info);
			cmd->status = SAM_STAT_CHECK_CONDITION;
			scsi_cmd_complete(cmd);
			return;
		}
	}
	c->done += c->chunk;
	if (c->done == c->bytes) {
		ctx_finish(c, 0);
		return;
	}
	start_read(c);
}

static void start_read(struct verify_ctx *c)
{
	c->chunk = c->bytes - c->done < VERIFY_CHUNK ? c->bytes - c->done : VERIFY_CHUNK;
	c->iov = (struct iovec){.iov_base = c->buf, .iov_len = c->chunk};
	int rc = vvol_read(c->cmd->lun->vol, c->lba * c->bs + c->done, c->chunk, &c->iov, 1,
			   verify_read_done, c);
	if (rc < 0)
		ctx_finish(c, rc);
}

static struct verify_ctx *ctx_new(struct scsi_cmd *cmd, uint64_t lba, uint32_t n, uint8_t bytchk)
{
	struct verify_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cmd = cmd;
	c->lba = lba;
	c->bs = cmd->lun->info.block_size;
	c->bytes = (uint64_t)n * c->bs;
	c->bytchk = bytchk;
	c->buf = vblk_alloc_buf(c->bytes < VERIFY_CHUNK ? c->bytes : VERIFY_CHUNK);
	if (!c->buf) {
		free(c);
		return NULL;
	}
	return c;
}

void handler_verify(struct scsi_cmd *cmd)
{
	uint64_t lba;
	uint32_t n;
	uint8_t bytchk = (cmd->cdb[1] >> 1) & 3;
	if (bytchk == 2) {
		scsi_complete_invalid_cdb(cmd, 1, 2); /* SBC-4 5.34.2 Table: 10b reserved */
		return;
	}
	if (!handler_decode_rw(cmd, &lba, &n, bytchk != 0))
		return;
	uint32_t bs = cmd->lun->info.block_size;
	if (bytchk && !handler_check_data_out(cmd, bytchk == 3 ? (n ? bs : 0) : (uint64_t)n * bs))
		return;
	if (!n) {
		scsi_complete_good(cmd); /* VERIFICATION LENGTH 0: nothing to verify */
		return;
	}
	/* BYTCHK 00b moves no data: no MAXIMUM TRANSFER LENGTH applies; the range is read in chunks. */
	struct verify_ctx *c = ctx_new(cmd, lba, n, bytchk);
	if (!c) {
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	start_read(c);
}

static void wv_write_done(void *arg, int res)
{
	struct verify_ctx *c = arg;
	if (res < 0) {
		struct scsi_cmd *cmd = c->cmd;
		free(c->buf);
		free(c);
		handler_complete_pool_result(cmd, res, true);
		return;
	}
	start_read(c);
}

void handler_write_verify(struct scsi_cmd *cmd)
{
	uint64_t lba;
	uint32_t n;
	if (!handler_decode_rw(cmd, &lba, &n, true))
		return;
	uint32_t bs = cmd->lun->info.block_size;
	if (!handler_check_data_out(cmd, (uint64_t)n * bs))
		return;
	if (!n) {
		scsi_complete_good(cmd);
		return;
	}
	struct verify_ctx *c = ctx_new(cmd, lba, n, 1);
	if (!c) {
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	int rc = vvol_write(cmd->lun->vol, lba * bs, c->bytes, cmd->iov, cmd->iovcnt, wv_write_done, c);
	if (rc < 0) {
		free(c->buf);
		free(c);
		handler_complete_pool_result(cmd, rc, true);
	}
}
