/*
 * TEST UNIT READY (SPC-4 6.47), REQUEST SENSE (SPC-4 6.39) and START STOP
 * UNIT (SBC-4 5.25). The logical unit is always ready: there is no medium to
 * spin up or eject and no power condition to change.
 */
#include "emul_internal.h"
#include "vaaid/scsi_emul.h"

void scsi_emul_test_unit_ready(struct scsi_cmd *cmd)
{
	/* SPC-4 6.47: GOOD when the logical unit is ready (pending UAs were reported by dispatch). */
	scsi_complete_good(cmd);
}

void scsi_emul_request_sense(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	/* SPC-4 6.39: DESC=1 and descriptor format sense data not supported -> INVALID FIELD IN CDB. */
	if (cdb[1] & 0x01) {
		scsi_complete_invalid_cdb(cmd, 1, 0);
		return;
	}
	size_t alloc = cdb[4];
	struct scsi_ua ua;
	/* SPC-4 6.39 / SAM-5 5.14: a pending unit attention is returned as the sense data
	 * (and cleared, UA_INTLCK_CTRL 00b); otherwise NO SENSE, no additional sense
	 * information. Sense data is built in a scratch command so cmd->sense stays empty:
	 * the command itself completes with GOOD. */
	struct scsi_cmd tmp = {0};
	if (scsi_lun_pop_ua(cmd->lun, &ua))
		scsi_set_ua_sense(&tmp, &ua);
	else
		scsi_set_sense(&tmp, SK_NO_SENSE, ASC_NONE);
	emul_return_data(cmd, tmp.sense, tmp.sense_len, alloc);
}

void scsi_emul_start_stop_unit(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	uint8_t pc = cdb[4] >> 4;
	bool loej = cdb[4] & 0x02, start = cdb[4] & 0x01;
	/* SBC-4 5.25 Table 77, POWER CONDITION: 0h START_VALID, 1h ACTIVE, 2h IDLE,
	 * 3h STANDBY, 7h LU_CONTROL, Ah FORCE_IDLE_0, Bh FORCE_STANDBY_0 are defined; the
	 * others are reserved -> INVALID FIELD IN CDB. The defined non-zero values are
	 * accepted and change nothing: vaaid has no power conditions to enter (LOEJ and
	 * START are ignored for them, SBC-4 5.25). */
	switch (pc) {
	case 0x0:
		break;
	case 0x1: case 0x2: case 0x3: case 0x7: case 0xA: case 0xB:
		scsi_complete_good(cmd);
		return;
	default:
		scsi_complete_invalid_cdb(cmd, 4, 7);
		return;
	}
	/* POWER CONDITION 0h: LOEJ=1 START=0 asks to eject the medium, which a
	 * non-removable logical unit (RMB=0) cannot do -> INVALID FIELD IN CDB.
	 * START=0 (stop) is accepted and the unit stays ready (nothing to spin down);
	 * START=1 and LOEJ=1 START=1 (load) are no-ops. IMMED and NO_FLUSH: completion is
	 * immediate anyway, and there is no volatile cache to flush (WCE=0). */
	if (loej && !start) {
		scsi_complete_invalid_cdb(cmd, 4, 1);
		return;
	}
	scsi_complete_good(cmd);
}
