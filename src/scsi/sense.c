/*
 * Command completion and fixed-format sense data (SPC-4 4.5.3).
 *
 * How this file works: every helper fills the first 18 bytes of cmd->sense
 * (response code 70h, current error; ADDITIONAL SENSE LENGTH 0Ah) and sets
 * sense_len = 18; the optional fields (INFORMATION, COMMAND-SPECIFIC
 * INFORMATION, sense-key specific field pointer) are written on top.
 * scsi_cmd_complete() hands the command back through cmd->done exactly once:
 * it clears cmd->done before calling it, so a second completion trips the
 * assertion instead of completing a command the transport may have reused.
 */
#include <assert.h>
#include <string.h>

#include "vaaid/scsi.h"

void scsi_cmd_complete(struct scsi_cmd *cmd)
{
	scsi_done_fn done = cmd->done;
	assert(done && "scsi_cmd_complete called twice (or without a done callback)");
	cmd->done = NULL;
	done(cmd);
}

void scsi_complete_good(struct scsi_cmd *cmd)
{
	cmd->status = SAM_STAT_GOOD;
	cmd->sense_len = 0;
	scsi_cmd_complete(cmd);
}

void scsi_set_sense(struct scsi_cmd *cmd, uint8_t key, uint16_t asc_ascq)
{
	uint8_t *s = cmd->sense;
	memset(s, 0, SCSI_FIXED_SENSE_LEN);
	s[0] = 0x70;              /* RESPONSE CODE: current error, fixed format */
	s[2] = key & 0x0F;        /* SENSE KEY */
	s[7] = SCSI_FIXED_SENSE_LEN - 8; /* ADDITIONAL SENSE LENGTH = 10 */
	s[12] = (uint8_t)(asc_ascq >> 8);
	s[13] = (uint8_t)asc_ascq;
	cmd->sense_len = SCSI_FIXED_SENSE_LEN;
}

void scsi_set_sense_info(struct scsi_cmd *cmd, uint8_t key, uint16_t asc_ascq, uint32_t info)
{
	scsi_set_sense(cmd, key, asc_ascq);
	cmd->sense[0] |= 0x80; /* VALID: the INFORMATION field is defined (SPC-4 4.5.3) */
	scsi_put_be32(cmd->sense + 3, info);
}

void scsi_set_sense_csi(struct scsi_cmd *cmd, uint32_t csi)
{
	scsi_put_be32(cmd->sense + 8, csi);
}

void scsi_set_sense_field(struct scsi_cmd *cmd, uint16_t asc_ascq, bool in_cdb, uint16_t byte,
			  int bit)
{
	scsi_set_sense(cmd, SK_ILLEGAL_REQUEST, asc_ascq);
	/* SPC-4 4.5.2.4.2 field pointer: SKSV, C/D, BPV + BIT POINTER, FIELD POINTER. */
	uint8_t b = 0x80;
	if (in_cdb)
		b |= 0x40;
	if (bit >= 0)
		b |= 0x08 | (bit & 7);
	cmd->sense[15] = b;
	scsi_put_be16(cmd->sense + 16, byte);
}

void scsi_complete_sense(struct scsi_cmd *cmd, uint8_t key, uint16_t asc_ascq)
{
	scsi_set_sense(cmd, key, asc_ascq);
	cmd->status = SAM_STAT_CHECK_CONDITION;
	scsi_cmd_complete(cmd);
}

void scsi_complete_invalid_cdb(struct scsi_cmd *cmd, uint16_t byte, int bit)
{
	scsi_set_sense_field(cmd, ASC_INVALID_FIELD_IN_CDB, true, byte, bit);
	cmd->status = SAM_STAT_CHECK_CONDITION;
	scsi_cmd_complete(cmd);
}

void scsi_complete_invalid_param(struct scsi_cmd *cmd, uint16_t byte, int bit)
{
	scsi_set_sense_field(cmd, ASC_INVALID_FIELD_IN_PARAM_LIST, false, byte, bit);
	cmd->status = SAM_STAT_CHECK_CONDITION;
	scsi_cmd_complete(cmd);
}

void scsi_complete_field(struct scsi_cmd *cmd, uint16_t asc_ascq, bool in_cdb, uint16_t byte,
			 int bit)
{
	scsi_set_sense_field(cmd, asc_ascq, in_cdb, byte, bit);
	cmd->status = SAM_STAT_CHECK_CONDITION;
	scsi_cmd_complete(cmd);
}
