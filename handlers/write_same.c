/*
 * WRITE SAME (10) (41h, SBC-4 5.48) and WRITE SAME (16) (93h, SBC-4 5.49).
 *
 * How this works: after the CDB checks, the one-block data-out (or, with
 * NDOB=1 in the 16-byte form, an implied block of zeros) decides the path:
 *   - zeros (UNMAP bit set or not): the blocks are deallocated, which is
 *     allowed because deallocated blocks read as zeros (LBPRZ=1, SBC-4
 *     4.7.3.5) and is what the arrays ESXi is used to do. The whole range
 *     goes to vvol_zero(): fully covered 4 KiB granules/extents are
 *     deallocated -- nothing written, nothing allocated, except where an
 *     extent shared by EXTENDED COPY is only partly covered: deallocating
 *     there would change nothing (its validity is every sharer's), so the
 *     pool writes zeros, redirecting the extent. The partly covered granule
 *     at either end (512-byte volumes only) holds its neighbours' data, so
 *     the pool writes zeros into exactly the LBAs of the range there, and
 *     only if that granule holds data at all (a deallocated granule already
 *     reads zeros) -- the same code that UNMAP's zeros go through
 *     (src/pool/dealloc.c).
 *   - any other pattern (UNMAP bit or not: SBC-4 5.49 lets the device write
 *     instead of unmapping): written for real through vvol_write() in one
 *     request whose iovec repeats one buffer of at most WS_CHUNK bytes filled
 *     with the replicated block.
 * The parts run concurrently; the command completes, with the first error,
 * when all of them are durable (the pool's callbacks run only then).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "handler_util.h"
#include "vaaid/buf_cache.h"
#include "vaaid/handlers.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"

#define WS_CHUNK (1u << 20)

struct ws_ctx {
	struct vpool_ctx link; /* first: tracked on the pool (freed if abandoned) */
	struct scsi_cmd *cmd;
	unsigned pending;
	int err;
	uint8_t *buf;
	size_t buf_len;
	struct vbuf_cache *bufs; /* the pool device's lent buffers (vaaid/buf_cache.h) */
	struct iovec *iov;
	struct vvol_report rep; /* what the pool did (zeros: deallocated), for the counters */
};

static void ws_discard(struct vpool_ctx *link)
{
	struct ws_ctx *w = (struct ws_ctx *)link;
	vbuf_put(w->bufs, w->buf, w->buf_len);
	free(w->iov);
	free(w);
}

static void ws_put(struct ws_ctx *w)
{
	if (--w->pending)
		return;
	struct scsi_cmd *cmd = w->cmd;
	int err = w->err;
	cmd->acct.deallocated = w->rep.deallocated; /* the counters (lun_stats.h) */
	handler_ctx_untrack(cmd, &w->link);
	vbuf_put(w->bufs, w->buf, w->buf_len);
	free(w->iov);
	free(w);
	handler_complete_pool_result(cmd, err, true);
}

static void ws_done(void *arg, int res)
{
	struct ws_ctx *w = arg;
	if (res < 0 && !w->err)
		w->err = res;
	ws_put(w);
}

static void ws_started(struct ws_ctx *w, int rc)
{
	if (rc < 0) { /* the pool refused at once: its callback will not run */
		if (!w->err)
			w->err = rc;
		w->pending--;
	}
}

static bool all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void ws_pattern(struct ws_ctx *w, const uint8_t *block, uint32_t bs, uint64_t off,
		       uint64_t len)
{
	size_t chunk = len < WS_CHUNK ? (size_t)len : WS_CHUNK; /* a multiple of bs */
	size_t niov = (size_t)((len + chunk - 1) / chunk);
	w->bufs = vpool_dev(vvol_pool(w->cmd->lun->vol))->bufs;
	w->buf_len = chunk;
	if (w->bufs) { /* a power of two: kept buffers are reused by size (none in the daemon) */
		w->buf_len = 4096;
		while (w->buf_len < chunk)
			w->buf_len *= 2;
	}
	w->buf = vbuf_get(w->bufs, w->buf_len);
	w->iov = calloc(niov, sizeof(*w->iov));
	if (!w->buf || !w->iov) {
		w->err = -ENOMEM;
		return;
	}
	for (size_t o = 0; o < chunk; o += bs)
		memcpy(w->buf + o, block, bs);
	for (size_t i = 0; i < niov; i++) {
		uint64_t left = len - (uint64_t)i * chunk;
		w->iov[i] = (struct iovec){.iov_base = w->buf, .iov_len = left < chunk ? left : chunk};
	}
	w->pending++;
	ws_started(w, vvol_write(w->cmd->lun->vol, off, len, w->iov, (int)niov, ws_done, w));
}

void handler_write_same(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	const struct scsi_lun_info *in = &cmd->lun->info;
	bool ws16 = cdb[0] == 0x93;
	uint64_t lba;
	uint32_t n;
	if (scsi_cdb_lba_len(cdb, &lba, &n) < 0) {
		scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
		return;
	}
	uint16_t len_field = (uint16_t)scsi_cdb_len_field_offset(cdb[0]);
	/* SBC-4 4.22.2: no protection information -> WRPROTECT must be 0 (INVALID FIELD IN CDB). */
	if (cdb[1] & 0xE0) {
		scsi_complete_invalid_cdb(cmd, 1, 7);
		return;
	}
	/* SBC-4 5.48/5.49: ANCHOR=1 with ANC_SUP=0 in VPD B2 -> INVALID FIELD IN CDB. */
	if ((cdb[1] & 0x10) && !in->anc_sup) {
		scsi_complete_invalid_cdb(cmd, 1, 4);
		return;
	}
	/* PBDATA / LBDATA (obsolete in SBC-4, SBC-3 5.41): block-address patterns are not
	 * supported -> INVALID FIELD IN CDB, as LIO does. */
	if (cdb[1] & 0x06) {
		scsi_complete_invalid_cdb(cmd, 1, (cdb[1] & 0x04) ? 2 : 1);
		return;
	}
	/* SBC-4 5.48/5.49 with VPD B0 WSNZ=1 (SBC-4 6.6.4): NUMBER OF LOGICAL BLOCKS 0
	 * ("to the end of the medium") is refused with INVALID FIELD IN CDB. */
	if (!n) {
		scsi_complete_invalid_cdb(cmd, len_field, -1);
		return;
	}
	/* SBC-4 5.48/5.49: more than MAXIMUM WRITE SAME LENGTH -> INVALID FIELD IN CDB. */
	if (in->max_write_same_len && n > in->max_write_same_len) {
		scsi_complete_invalid_cdb(cmd, len_field, -1);
		return;
	}
	/* SBC-4 4.5: the range past the capacity -> LOGICAL BLOCK ADDRESS OUT OF RANGE. */
	if (!scsi_lba_range_ok(cmd->lun, lba, n)) {
		scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
		return;
	}
	/* SBC-4 5.49: NDOB=1 -> no data-out buffer, the block is zeros. Otherwise exactly
	 * one logical block of data-out (anything else: 0Eh/03h, as for WRITE). */
	bool ndob = ws16 && (cdb[1] & 0x01);
	uint32_t bs = in->block_size;
	if (!handler_check_data_out(cmd, ndob ? 0 : bs))
		return;
	uint8_t block[4096];
	if (bs > sizeof(block)) {
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	memset(block, 0, bs);
	if (!ndob && scsi_copy_from_data_out(cmd, 0, block, bs) != bs) {
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	struct ws_ctx *w = calloc(1, sizeof(*w));
	if (!w) {
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	w->cmd = cmd;
	w->pending = 1; /* held until every part is started */
	handler_ctx_track(cmd, &w->link, ws_discard);
	uint64_t off = lba * bs, len = (uint64_t)n * bs;
	cmd->acct.ws_zero = all_zero(block, bs); /* for the counters (lun_stats.h) */
	if (cmd->acct.ws_zero) {
		w->pending++;
		ws_started(w, vvol_zero_ex(cmd->lun->vol, off, len, &w->rep, ws_done, w));
	} else
		ws_pattern(w, block, bs, off, len);
	ws_put(w);
}
