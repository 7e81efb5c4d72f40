/*
 * REPORT SUPPORTED OPERATION CODES (MAINTENANCE IN A3h, service action 0Ch;
 * SPC-4 6.35).
 *
 * How this file works: the command list comes from the dispatch table
 * (scsi_opcode_table(), src/scsi/dispatch.c, linked from vaaid_handlers), so
 * what is reported is exactly what scsi_dispatch() accepts. REPORTING
 * OPTIONS 000b returns a command descriptor (+ a command timeouts descriptor
 * when RCTD=1) per table entry (SPC-4 6.35.2); 001b/010b/011b return the
 * one_command format (SPC-4 6.35.3) with the CDB USAGE DATA from the table.
 * The timeouts are reported as 0 ("no timeout indicated", SPC-4 6.35.4).
 */
#include <stdlib.h>

#include "emul_internal.h"
#include "vaaid/dispatch.h"
#include "vaaid/scsi_emul.h"

#define CTD_LEN 12 /* command timeouts descriptor, SPC-4 6.35.4 */

static void put_timeouts(uint8_t *d)
{
	memset(d, 0, CTD_LEN);
	scsi_put_be16(d, CTD_LEN - 2); /* DESCRIPTOR LENGTH 0Ah */
	/* COMMAND SPECIFIC 0; NOMINAL / RECOMMENDED COMMAND TIMEOUT 0: not indicated. */
}

static bool opcode_has_sa(const struct scsi_opcode_desc *t, size_t n, uint8_t op)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].opcode == op && t[i].has_sa)
			return true;
	return false;
}

static void report_all(struct scsi_cmd *cmd, bool rctd, size_t alloc)
{
	size_t n;
	const struct scsi_opcode_desc *t = scsi_opcode_table(&n);
	size_t dlen = 8 + (rctd ? CTD_LEN : 0);
	size_t m = 0; /* the commands this LUN implements (scsi_opcode_enabled) */
	for (size_t i = 0; i < n; i++)
		m += scsi_opcode_enabled(cmd->lun, &t[i]);
	size_t total = 4 + m * dlen;
	uint8_t *b = calloc(1, total);
	if (!b) {
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	scsi_put_be32(b, (uint32_t)(total - 4)); /* COMMAND DATA LENGTH */
	uint8_t *d = b + 4;
	for (size_t i = 0; i < n; i++) {
		if (!scsi_opcode_enabled(cmd->lun, &t[i]))
			continue;
		/* Command descriptor, SPC-4 6.35.2 Table 277. */
		d[0] = t[i].opcode;
		scsi_put_be16(d + 2, t[i].has_sa ? t[i].sa : 0);
		d[5] = (uint8_t)((rctd ? 0x02 : 0) | (t[i].has_sa ? 0x01 : 0)); /* CTDP, SERVACTV */
		scsi_put_be16(d + 6, t[i].cdb_len);
		if (rctd)
			put_timeouts(d + 8);
		d += dlen;
	}
	emul_return_data(cmd, b, total, alloc);
	free(b);
}

static void report_one(struct scsi_cmd *cmd, const struct scsi_opcode_desc *e, bool rctd,
		       size_t alloc)
{
	uint8_t b[4 + 16 + CTD_LEN] = {0};
	size_t len = 4;
	if (e && !scsi_opcode_enabled(cmd->lun, e))
		e = NULL;
	if (!e) {
		/* SUPPORT 001b: not supported; no CDB usage data (SPC-4 6.35.3 Table 280). */
		b[1] = 0x01;
		emul_return_data(cmd, b, len, alloc);
		return;
	}
	b[1] = (uint8_t)((rctd ? 0x80 : 0) | 0x03); /* CTDP, SUPPORT 011b: as the standard says */
	scsi_put_be16(b + 2, e->cdb_len);           /* CDB SIZE */
	memcpy(b + 4, e->usage, e->cdb_len);        /* CDB USAGE DATA */
	len += e->cdb_len;
	if (rctd) {
		put_timeouts(b + len);
		len += CTD_LEN;
	}
	emul_return_data(cmd, b, len, alloc);
}

void scsi_emul_report_supported_opcodes(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	bool rctd = cdb[2] & 0x80;
	uint8_t opts = cdb[2] & 0x07;
	uint8_t op = cdb[3];
	uint16_t sa = scsi_get_be16(cdb + 4);
	size_t alloc = scsi_get_be32(cdb + 6);
	size_t n;
	const struct scsi_opcode_desc *t = scsi_opcode_table(&n);

	switch (opts) {
	case 0: /* 000b: all commands, REQUESTED OPERATION CODE/SERVICE ACTION ignored */
		report_all(cmd, rctd, alloc);
		return;
	case 1:
		/* 001b: one command without service action; an operation code that has
		 * service actions -> INVALID FIELD IN CDB (SPC-4 6.35.1 Table 274). */
		if (opcode_has_sa(t, n, op)) {
			scsi_complete_invalid_cdb(cmd, 3, -1);
			return;
		}
		report_one(cmd, scsi_opcode_find(op, false, 0), rctd, alloc);
		return;
	case 2:
		/* 010b: one command with service action; an implemented operation code
		 * without service actions -> INVALID FIELD IN CDB. */
		if (!opcode_has_sa(t, n, op) && scsi_opcode_find(op, false, 0)) {
			scsi_complete_invalid_cdb(cmd, 3, -1);
			return;
		}
		report_one(cmd, scsi_opcode_find(op, true, sa), rctd, alloc);
		return;
	case 3:
		/* 011b (SPC-4 6.35.1): supported if the operation code has service actions
		 * and the requested one is implemented, or has none and REQUESTED SERVICE
		 * ACTION is 0; otherwise SUPPORT 001b. */
		if (opcode_has_sa(t, n, op))
			report_one(cmd, scsi_opcode_find(op, true, sa), rctd, alloc);
		else
			report_one(cmd, sa ? NULL : scsi_opcode_find(op, false, 0), rctd, alloc);
		return;
	default:
		/* 100b-111b reserved. */
		scsi_complete_invalid_cdb(cmd, 2, 2);
		return;
	}
}
