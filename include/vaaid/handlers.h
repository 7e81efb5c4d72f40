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
/* handlers/sync.c: SYNCHRONIZE CACHE 10/16 (SBC-4 5.30, 5.31) */
void handler_sync_cache(struct scsi_cmd *cmd);

#endif
