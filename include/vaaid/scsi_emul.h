/*
 * vaaid SPC/SBC emulation handlers that need no storage I/O (src/scsi):
 * each is a scsi_handler_fn and completes the command before returning.
 */
#ifndef VAAID_SCSI_EMUL_H
#define VAAID_SCSI_EMUL_H

#include "vaaid/scsi.h"

void scsi_emul_inquiry(struct scsi_cmd *cmd);            /* 0x12, SPC-4 6.6 + VPD 7.8 */
void scsi_emul_test_unit_ready(struct scsi_cmd *cmd);    /* 0x00, SPC-4 6.47 */
void scsi_emul_request_sense(struct scsi_cmd *cmd);      /* 0x03, SPC-4 6.39 */
void scsi_emul_read_capacity10(struct scsi_cmd *cmd);    /* 0x25, SBC-4 5.22 */
void scsi_emul_read_capacity16(struct scsi_cmd *cmd);    /* 0x9E/0x10, SBC-4 5.23 */
void scsi_emul_mode_sense6(struct scsi_cmd *cmd);        /* 0x1A, SPC-4 6.11 */
void scsi_emul_mode_sense10(struct scsi_cmd *cmd);       /* 0x5A, SPC-4 6.12 */
void scsi_emul_mode_select6(struct scsi_cmd *cmd);       /* 0x15, SPC-4 6.9 */
void scsi_emul_mode_select10(struct scsi_cmd *cmd);      /* 0x55, SPC-4 6.10 */
void scsi_emul_log_sense(struct scsi_cmd *cmd);          /* 0x4D, SPC-4 6.8 */
void scsi_emul_report_supported_opcodes(struct scsi_cmd *cmd); /* 0xA3/0x0C, SPC-4 6.35 */
void scsi_emul_start_stop_unit(struct scsi_cmd *cmd);    /* 0x1B, SBC-4 5.25 */
void scsi_emul_report_tpgs(struct scsi_cmd *cmd);        /* 0xA3/0x0A, SPC-4 6.36 (alua.c) */

/*
 * VPD page 8Fh (Third-party Copy, SPC-4 7.8.17) belongs to the copy manager:
 * it installs its builder here. The page is listed in VPD 00h and served only
 * when lun->info.tpc is set and a builder is installed. The builder gets a
 * zeroed buffer of cap bytes, writes the page from byte 4 on (bytes 0-3, the
 * header, are filled by INQUIRY) and returns the whole length (<= cap).
 */
typedef size_t (*scsi_vpd_page_fn)(const struct scsi_lun *lun, uint8_t *buf, size_t cap);
extern scsi_vpd_page_fn scsi_vpd_tpc_page;

#endif
