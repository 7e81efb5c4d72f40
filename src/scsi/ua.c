/*
 * Unit attention conditions (SAM-5 5.14, SPC-4 5.9 / 6.39).
 *
 * How this file works: each LUN keeps a small queue of pending ASC/ASCQ
 * values, oldest first, without duplicates. A full queue keeps the oldest
 * conditions and replaces the newest one (the initiator still learns that
 * something changed). Dispatch reports the oldest pending condition on any
 * command except INQUIRY, REPORT LUNS and REQUEST SENSE (SAM-5 5.14:
 * these are not refused because of a unit attention; REQUEST SENSE returns
 * the condition as its sense data instead, SPC-4 6.39), and clears it.
 * vaaid serves one I_T nexus per LUN through LIO (UA_INTLCK_CTRL 00b).
 */
#include <string.h>

#include "vaaid/scsi.h"

void scsi_lun_post_ua(struct scsi_lun *lun, uint16_t asc_ascq)
{
	for (unsigned i = 0; i < lun->n_ua; i++)
		if (lun->ua[i] == asc_ascq)
			return; /* already pending */
	if (lun->n_ua < SCSI_UA_MAX)
		lun->ua[lun->n_ua++] = asc_ascq;
	else
		lun->ua[SCSI_UA_MAX - 1] = asc_ascq;
}

bool scsi_lun_pop_ua(struct scsi_lun *lun, uint16_t *asc_ascq)
{
	if (!lun->n_ua)
		return false;
	*asc_ascq = lun->ua[0];
	lun->n_ua--;
	memmove(lun->ua, lun->ua + 1, lun->n_ua * sizeof(lun->ua[0]));
	return true;
}

bool scsi_lun_report_ua(struct scsi_lun *lun, struct scsi_cmd *cmd)
{
	switch (cmd->cdb[0]) {
	case 0x12: /* INQUIRY */
	case 0xA0: /* REPORT LUNS */
	case 0x03: /* REQUEST SENSE */
		return false;
	default:
		break;
	}
	uint16_t asc;
	if (!scsi_lun_pop_ua(lun, &asc))
		return false;
	scsi_complete_sense(cmd, SK_UNIT_ATTENTION, asc);
	return true;
}
