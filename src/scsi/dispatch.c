/*
 * The dispatch table and scsi_dispatch() (see include/vaaid/dispatch.h).
 *
 * How this file works: opcodes[] is sorted by (operation code, service
 * action) and holds, per command, the CDB length, the CDB USAGE DATA that
 * REPORT SUPPORTED OPERATION CODES returns (SPC-4 6.35.3: byte 0 the
 * operation code, the service action in its field, then a 1 for every CDB bit
 * the device server evaluates; reserved, obsolete and ignored bits are 0) and
 * the handler. Every CONTROL byte maps NACA (bit 2): dispatch evaluates it.
 *
 * scsi_dispatch() checks, in order: the operation code is implemented
 * (else ILLEGAL REQUEST / INVALID COMMAND OPERATION CODE, SPC-4 4.5.6); the
 * service action is implemented (else INVALID FIELD IN CDB at byte 1 bits
 * 4..0); NACA=0 (ACA is not supported, SAM-5 5.9.1: else INVALID FIELD IN
 * CDB at the CONTROL byte bit 2); then a pending unit
 * attention is reported (SAM-5 5.14); then the ALUA rule (SPC-4 5.16.2.4,
 * src/scsi/alua.c): a command the local target port group's state does not
 * allow (standby, unavailable, transitioning; a fenced gateway is one of these)
 * is refused with NOT READY / LOGICAL UNIT NOT ACCESSIBLE and the state's ASCQ,
 * here and nowhere else; and only then the handler runs. REPORT TARGET PORT
 * GROUPS exists only on a LUN with ALUA (scsi_opcode_enabled; else it is an
 * unsupported service action, and REPORT SUPPORTED OPERATION CODES omits it).
 */
#include "vaaid/dispatch.h"
#include "vaaid/handlers.h"
#include "vaaid/scsi_emul.h"

#define C 0x04 /* CONTROL byte: NACA */
#define RW10 0xF8 /* RD/WRPROTECT (checked to be 0), DPO, FUA */
#define L4 0xFF, 0xFF, 0xFF, 0xFF
#define L8 L4, L4

static const struct scsi_opcode_desc opcodes[] = {
	{0x00, false, 0, 6, {0x00, 0, 0, 0, 0, C}, "TEST UNIT READY", scsi_emul_test_unit_ready},
	{0x03, false, 0, 6, {0x03, 0x01, 0, 0, 0xFF, C}, "REQUEST SENSE", scsi_emul_request_sense},
	{0x08, false, 0, 6, {0x08, 0x1F, 0xFF, 0xFF, 0xFF, C}, "READ(6)", handler_read},
	{0x0A, false, 0, 6, {0x0A, 0x1F, 0xFF, 0xFF, 0xFF, C}, "WRITE(6)", handler_write},
	/* CMDDT is evaluated (refused), EVPD, PAGE CODE, ALLOCATION LENGTH */
	{0x12, false, 0, 6, {0x12, 0x03, 0xFF, 0xFF, 0xFF, C}, "INQUIRY", scsi_emul_inquiry},
	{0x15, false, 0, 6, {0x15, 0x11, 0, 0, 0xFF, C}, "MODE SELECT(6)", scsi_emul_mode_select6},
	{0x1A, false, 0, 6, {0x1A, 0x08, 0xFF, 0xFF, 0xFF, C}, "MODE SENSE(6)", scsi_emul_mode_sense6},
	/* IMMED; POWER CONDITION, LOEJ, START (NO_FLUSH and the modifier are ignored) */
	{0x1B, false, 0, 6, {0x1B, 0x01, 0, 0, 0xF3, C}, "START STOP UNIT", scsi_emul_start_stop_unit},
	/* LOGICAL BLOCK ADDRESS (checked against PMI), PMI */
	{0x25, false, 0, 10, {0x25, 0, L4, 0, 0, 0x01, C}, "READ CAPACITY(10)", scsi_emul_read_capacity10},
	{0x28, false, 0, 10, {0x28, RW10, L4, 0, 0xFF, 0xFF, C}, "READ(10)", handler_read},
	{0x2A, false, 0, 10, {0x2A, RW10, L4, 0, 0xFF, 0xFF, C}, "WRITE(10)", handler_write},
	/* WRPROTECT, DPO (BYTCHK ignored: the data is always read back and compared) */
	{0x2E, false, 0, 10, {0x2E, 0xF0, L4, 0, 0xFF, 0xFF, C}, "WRITE AND VERIFY(10)", handler_write_verify},
	/* VRPROTECT, DPO, BYTCHK */
	{0x2F, false, 0, 10, {0x2F, 0xF6, L4, 0, 0xFF, 0xFF, C}, "VERIFY(10)", handler_verify},
	/* IMMED */
	{0x35, false, 0, 10, {0x35, 0x02, L4, 0, 0xFF, 0xFF, C}, "SYNCHRONIZE CACHE(10)", handler_sync_cache},
	/* WRPROTECT (refused if set), ANCHOR (refused: ANC_SUP=0), UNMAP, PBDATA and LBDATA
	 * (refused), LBA, NUMBER OF LOGICAL BLOCKS */
	{0x41, false, 0, 10, {0x41, 0xFE, L4, 0, 0xFF, 0xFF, C}, "WRITE SAME(10)", handler_write_same},
	/* ANCHOR (refused), PARAMETER LIST LENGTH */
	{0x42, false, 0, 10, {0x42, 0x01, 0, 0, 0, 0, 0, 0xFF, 0xFF, C}, "UNMAP", handler_unmap},
	/* PPC and SP (both refused), PC + PAGE CODE, SUBPAGE CODE, PARAMETER POINTER,
	 * ALLOCATION LENGTH */
	{0x4D, false, 0, 10, {0x4D, 0x03, 0xFF, 0xFF, 0, 0xFF, 0xFF, 0xFF, 0xFF, C}, "LOG SENSE", scsi_emul_log_sense},
	{0x55, false, 0, 10, {0x55, 0x11, 0, 0, 0, 0, 0, 0xFF, 0xFF, C}, "MODE SELECT(10)", scsi_emul_mode_select10},
	{0x5A, false, 0, 10, {0x5A, 0x18, 0xFF, 0xFF, 0, 0, 0, 0xFF, 0xFF, C}, "MODE SENSE(10)", scsi_emul_mode_sense10},
	/* EXTENDED COPY(LID1) (SPC-4 6.4): PARAMETER LIST LENGTH */
	{0x83, true, 0x00, 16, {0x83, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, L4, 0, C}, "EXTENDED COPY(LID1)",
	 handler_xcopy},
	/* RECEIVE COPY RESULTS (SPC-4 6.18) / COPY STATUS: LIST IDENTIFIER, ALLOCATION LENGTH */
	{0x84, true, 0x00, 16, {0x84, 0x00, 0xFF, 0, 0, 0, 0, 0, 0, 0, L4, 0, C}, "RECEIVE COPY STATUS(LID1)",
	 handler_receive_copy_results},
	/* RECEIVE COPY RESULTS / OPERATING PARAMETERS: ALLOCATION LENGTH */
	{0x84, true, 0x03, 16, {0x84, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, L4, 0, C}, "RECEIVE COPY OPERATING PARAMETERS",
	 handler_receive_copy_results},
	{0x88, false, 0, 16, {0x88, RW10, L8, L4, 0, C}, "READ(16)", handler_read},
	/* WRPROTECT (refused if set), DPO, FUA; LBA; NUMBER OF LOGICAL BLOCKS (byte 13) */
	{0x89, false, 0, 16, {0x89, 0xF8, L8, 0, 0, 0, 0xFF, 0, C}, "COMPARE AND WRITE",
	 handler_compare_and_write},
	{0x8A, false, 0, 16, {0x8A, RW10, L8, L4, 0, C}, "WRITE(16)", handler_write},
	{0x8E, false, 0, 16, {0x8E, 0xF0, L8, L4, 0, C}, "WRITE AND VERIFY(16)", handler_write_verify},
	{0x8F, false, 0, 16, {0x8F, 0xF6, L8, L4, 0, C}, "VERIFY(16)", handler_verify},
	{0x91, false, 0, 16, {0x91, 0x02, L8, L4, 0, C}, "SYNCHRONIZE CACHE(16)", handler_sync_cache},
	/* as WRITE SAME(10), plus NDOB */
	{0x93, false, 0, 16, {0x93, 0xFF, L8, L4, 0, C}, "WRITE SAME(16)", handler_write_same},
	/* SERVICE ACTION IN(16) / READ CAPACITY(16): LBA (checked against PMI), ALLOCATION LENGTH, PMI */
	{0x9E, true, 0x10, 16, {0x9E, 0x10, L8, L4, 0x01, C}, "READ CAPACITY(16)", scsi_emul_read_capacity16},
	/* SERVICE ACTION IN(16) / GET LBA STATUS: STARTING LBA, ALLOCATION LENGTH (REPORT TYPE
	 * in byte 14 is not evaluated: every descriptor is reported) */
	{0x9E, true, 0x12, 16, {0x9E, 0x12, L8, L4, 0, C}, "GET LBA STATUS", handler_get_lba_status},
	/* MAINTENANCE IN / REPORT TARGET PORT GROUPS (SPC-4 6.36): PARAMETER DATA FORMAT,
	 * ALLOCATION LENGTH; only with ALUA (scsi_opcode_enabled) */
	{0xA3, true, 0x0A, 12, {0xA3, 0xEA, 0, 0, 0, 0, L4, 0, C}, "REPORT TARGET PORT GROUPS",
	 scsi_emul_report_tpgs},
	/* MAINTENANCE IN / REPORT SUPPORTED OPERATION CODES: RCTD, REPORTING OPTIONS, ... */
	{0xA3, true, 0x0C, 12, {0xA3, 0x0C, 0x87, 0xFF, 0xFF, 0xFF, L4, 0, C}, "REPORT SUPPORTED OPERATION CODES",
	 scsi_emul_report_supported_opcodes},
	{0xA8, false, 0, 12, {0xA8, RW10, L4, L4, 0, C}, "READ(12)", handler_read},
	{0xAA, false, 0, 12, {0xAA, RW10, L4, L4, 0, C}, "WRITE(12)", handler_write},
};
#define N_OPCODES (sizeof(opcodes) / sizeof(opcodes[0]))

const struct scsi_opcode_desc *scsi_opcode_table(size_t *n)
{
	*n = N_OPCODES;
	return opcodes;
}

bool scsi_opcode_enabled(const struct scsi_lun *lun, const struct scsi_opcode_desc *e)
{
	return e->fn != scsi_emul_report_tpgs || (lun && lun->alua.enabled);
}

static uint32_t key_of(uint8_t op, uint16_t sa)
{
	return (uint32_t)op << 16 | sa;
}

const struct scsi_opcode_desc *scsi_opcode_find(uint8_t opcode, bool has_sa, uint16_t sa)
{
	uint32_t key = key_of(opcode, has_sa ? sa : 0);
	size_t lo = 0, hi = N_OPCODES;
	while (lo < hi) { /* binary search on (opcode, service action) */
		size_t mid = lo + (hi - lo) / 2;
		uint32_t k = key_of(opcodes[mid].opcode, opcodes[mid].has_sa ? opcodes[mid].sa : 0);
		if (k == key)
			return opcodes[mid].has_sa == has_sa ? &opcodes[mid] : NULL;
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Any entry of this operation code with a service action? (then byte 1 bits 4..0 select it) */
static bool opcode_has_sa(uint8_t op)
{
	for (size_t i = 0; i < N_OPCODES; i++)
		if (opcodes[i].opcode == op)
			return opcodes[i].has_sa;
	return false;
}

static bool opcode_known(uint8_t op)
{
	for (size_t i = 0; i < N_OPCODES; i++)
		if (opcodes[i].opcode == op)
			return true;
	return false;
}

void scsi_dispatch(struct scsi_cmd *cmd)
{
	vstat_begin(cmd); /* counted at completion, whatever completes it */
	const uint8_t *cdb = cmd->cdb;
	uint8_t op = cdb[0];
	if (!opcode_known(op)) {
		scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
		return;
	}
	const struct scsi_opcode_desc *e;
	if (opcode_has_sa(op)) {
		e = scsi_opcode_find(op, true, cdb[1] & 0x1F);
		if (!e || !scsi_opcode_enabled(cmd->lun, e)) {
			/* SPC-4 4.2.5.2: unsupported service action -> INVALID FIELD IN CDB. */
			scsi_complete_invalid_cdb(cmd, 1, 4);
			return;
		}
	} else {
		e = scsi_opcode_find(op, false, 0);
	}
	/* A CDB shorter than the command's (a transport error): refuse it rather than
	 * read past its end. cdb_len 0 means "not given". */
	if (cmd->cdb_len && cmd->cdb_len < e->cdb_len) {
		scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
		return;
	}
	/* SAM-5 5.9.1: NACA=1 and ACA not supported (standard INQUIRY NORMACA=0) ->
	 * INVALID FIELD IN CDB at CONTROL bit 2. */
	if (cdb[e->cdb_len - 1] & 0x04) {
		scsi_complete_invalid_cdb(cmd, (uint16_t)(e->cdb_len - 1), 2);
		return;
	}
	scsi_alua_refresh(cmd->lun); /* a fence found now is reported as a UA first */
	if (scsi_lun_report_ua(cmd->lun, cmd))
		return;
	/* SPC-4 5.16.2.4: what the local target port group's state allows (alua.c). */
	if (scsi_alua_refuse(cmd->lun, cmd))
		return;
	e->fn(cmd);
}
