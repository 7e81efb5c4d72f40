/*
 * Helpers shared by the data handlers (handlers/): CDB checks common to the
 * READ/WRITE/VERIFY families and the mapping of pool errors to sense data.
 */
#ifndef VAAID_HANDLER_UTIL_H
#define VAAID_HANDLER_UTIL_H

#include <stdbool.h>
#include "vaaid/scsi.h"

/*
 * Decode LBA and TRANSFER LENGTH and check them (SBC-4 4.5, 5.x):
 * *PROTECT field (byte 1 bits 7..5) non-zero -> 24h/00h (no protection
 * information is supported, SBC-4 4.22); transfer length above the reported
 * MAXIMUM TRANSFER LENGTH -> 24h/00h pointing at the field (SBC-4 6.6.4);
 * range past the capacity -> 21h/00h. On failure the command is completed and
 * false returned.
 */
bool handler_decode_rw(struct scsi_cmd *cmd, uint64_t *lba, uint32_t *nblocks, bool check_max);

/* Data-out must hold exactly `bytes` (else 0Eh/03h, as LIO's size check). */
bool handler_check_data_out(struct scsi_cmd *cmd, uint64_t bytes);

/* Complete with the sense that matches a pool error (0 -> GOOD). */
void handler_complete_pool_result(struct scsi_cmd *cmd, int res, bool write);

/*
 * A handler's per-command context, tracked on the LUN's pool while pool
 * requests it started are in flight (vpool_ctx_track): a simulated power
 * loss (vpool_abandon) frees it with discard instead of leaking it. Untrack
 * before freeing it on the normal path.
 */
struct vpool_ctx;
void handler_ctx_track(struct scsi_cmd *cmd, struct vpool_ctx *c,
		       void (*discard)(struct vpool_ctx *c));
void handler_ctx_untrack(struct scsi_cmd *cmd, struct vpool_ctx *c);

#endif
