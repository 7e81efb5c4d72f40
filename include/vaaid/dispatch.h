/*
 * vaaid dispatch table: operation code (+ service action) -> handler.
 *
 * How this works: one static, sorted table (src/scsi/dispatch.c) lists every
 * command vaaid implements, with its CDB length and CDB usage map (the bit
 * mask REPORT SUPPORTED OPERATION CODES returns, SPC-4 6.35.3). scsi_dispatch()
 * finds the entry: an unknown operation code completes with ILLEGAL REQUEST /
 * INVALID COMMAND OPERATION CODE (SPC-4 4.5.6), an unknown service action
 * with INVALID FIELD IN CDB pointing at the service action field, NACA=1 with
 * INVALID FIELD IN CDB pointing at the CONTROL byte. Then a pending unit
 * attention is delivered (SAM-5 5.14) and otherwise the handler is called.
 */
#ifndef VAAID_DISPATCH_H
#define VAAID_DISPATCH_H

#include "vaaid/scsi.h"

typedef void (*scsi_handler_fn)(struct scsi_cmd *cmd);

struct scsi_opcode_desc {
	uint8_t opcode;
	bool has_sa;         /* service action in byte 1 (bits 4..0) or, for 0x7F, bytes 8-9 */
	uint16_t sa;
	uint8_t cdb_len;
	uint8_t usage[16];   /* CDB USAGE DATA (SPC-4 6.35.3): usage[0] is the operation code
			      * itself, the service action sits in its field, then the bit map */
	const char *name;
	scsi_handler_fn fn;
};

/* The table and its length. */
const struct scsi_opcode_desc *scsi_opcode_table(size_t *n);
/* Lookup; NULL when not implemented. */
const struct scsi_opcode_desc *scsi_opcode_find(uint8_t opcode, bool has_sa, uint16_t sa);

/* Does this LUN implement the entry? (REPORT TARGET PORT GROUPS: only with ALUA.) */
bool scsi_opcode_enabled(const struct scsi_lun *lun, const struct scsi_opcode_desc *e);

/* Entry point for the transport. */
void scsi_dispatch(struct scsi_cmd *cmd);

#endif
