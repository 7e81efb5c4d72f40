/*
 * vaaid command handlers that move data (handlers/): one file per command
 * family. Each is a scsi_handler_fn; it validates the CDB, talks to the pool
 * (cmd->lun->vol) and completes the command from the pool's callback.
 */
#ifndef VAAID_HANDLERS_H
#define VAAID_HANDLERS_H

#include "vaaid/scsi.h"

/* handlers/rw.c: READ/WRITE 6/10/12/16 (SBC-4 5.15-5.18, 5.40-5.43) */
void handler_read(struct scsi_cmd *cmd);
void handler_write(struct scsi_cmd *cmd);
/* handlers/verify.c: VERIFY 10/16 (SBC-4 5.34, 5.35), WRITE AND VERIFY 10/16 (5.45, 5.46) */
void handler_verify(struct scsi_cmd *cmd);
void handler_write_verify(struct scsi_cmd *cmd);
/* handlers/compare_write.c: COMPARE AND WRITE (SBC-4 5.3) */
void handler_compare_and_write(struct scsi_cmd *cmd);
/* Advertised MAXIMUM COMPARE AND WRITE LENGTH (VPD B0): at most this many blocks,
 * and never more than half the maximum transfer (the data-out holds two instances).
 * 128, not the field's 255: a CAW holds its extents exclusive, so it is kept short
 * (ESXi's ATS uses 1 block), and an initiator testing "limit + 1" (libiscsi's
 * CompareAndWrite suite) can still express it in the 8-bit field. */
#define VAAID_MAX_CAW_BLOCKS 128u
/* handlers/sync.c: SYNCHRONIZE CACHE 10/16 (SBC-4 5.30, 5.31) */
void handler_sync_cache(struct scsi_cmd *cmd);
/* handlers/write_same.c: WRITE SAME 10/16 (SBC-4 5.48, 5.49) */
void handler_write_same(struct scsi_cmd *cmd);
/* handlers/unmap.c: UNMAP (SBC-4 5.31) */
void handler_unmap(struct scsi_cmd *cmd);
/* handlers/get_lba_status.c: GET LBA STATUS, SERVICE ACTION IN(16) 12h (SBC-4 5.20) */
void handler_get_lba_status(struct scsi_cmd *cmd);
/* handlers/xcopy.c: EXTENDED COPY(LID1) 83h/00h (SPC-4 6.4), RECEIVE COPY RESULTS 84h
 * (SPC-4 6.18) with COPY STATUS (00h) and OPERATING PARAMETERS (03h), VPD 8Fh (7.8.17). */
void handler_xcopy(struct scsi_cmd *cmd);
void handler_receive_copy_results(struct scsi_cmd *cmd);
size_t xcopy_vpd_tpc_page(const struct scsi_lun *lun, uint8_t *buf, size_t cap);
/* Copy manager limits (reported by RECEIVE COPY RESULTS and VPD 8Fh, enforced). */
#define XCOPY_MAX_CSCD 8u
#define XCOPY_MAX_SEGMENTS 64u
#define XCOPY_MAX_DESC_LIST 2064u /* 16 + 8 x 32 + 64 x 28 */
#define XCOPY_MAX_SEG_BLOCKS 65535u

/*
 * The UNMAP parameter list parser (handlers/unmap.c; exported for its unit
 * test). buf/len: the data-out bytes actually received (at most PARAMETER
 * LIST LENGTH). On success returns the number of descriptors (0..max_desc)
 * and fills out[] (room for max_desc entries) with the non-empty ones'
 * (lba, count) -- *n_out of them. On failure returns -1 and sets *asc_ascq
 * (ASC_PARAM_LIST_LENGTH_ERROR, ASC_INVALID_FIELD_IN_PARAM_LIST or
 * ASC_LBA_OUT_OF_RANGE) and *field (the parameter list byte a field pointer
 * should name, or -1 for none).
 */
struct unmap_extent {
	uint64_t lba;
	uint32_t count;
};
int unmap_parse(const uint8_t *buf, size_t len, uint64_t nblocks, uint32_t max_desc,
		uint64_t max_lbas, struct unmap_extent *out, size_t *n_out, uint16_t *asc_ascq,
		int *field);

#endif
