/*
 * Unit attention conditions (SAM-5 5.14, SPC-4 5.9 / 6.39).
 *
 * How this file works: each LUN keeps a small queue of pending conditions
 * (ASC/ASCQ, and an INFORMATION field for those that have one), oldest
 * first, without duplicate ASC/ASCQ values. A full queue keeps the oldest
 * conditions and replaces the newest one (the initiator still learns that
 * something changed). Dispatch reports the oldest pending condition on any
 * command except INQUIRY, REPORT LUNS and REQUEST SENSE (SAM-5 5.14:
 * these are not refused because of a unit attention; REQUEST SENSE returns
 * the condition as its sense data instead, SPC-4 6.39), and clears it.
 * vaaid serves one I_T nexus per LUN through LIO (UA_INTLCK_CTRL 00b).
 */
#include <string.h>

#include "vaaid/scsi.h"

/* Counted when posted (include/vaaid/lun_stats.h), also when already pending. */
static void count(struct scsi_lun *lun, uint16_t asc_ascq)
{
	enum vstat_ua u = asc_ascq == ASC_CAPACITY_DATA_CHANGED      ? VSTAT_UA_CAPACITY_CHANGED
			  : asc_ascq == ASC_MODE_PARAMETERS_CHANGED ? VSTAT_UA_MODE_CHANGED
			  : asc_ascq == ASC_INQUIRY_DATA_CHANGED    ? VSTAT_UA_INQUIRY_CHANGED
			  : asc_ascq == ASC_THIN_PROV_SOFT_THRESHOLD ? VSTAT_UA_THRESHOLD
								     : VSTAT_UA_OTHER;
	lun->stats.ua_posted[u]++;
}

static void post(struct scsi_lun *lun, struct scsi_ua ua)
{
	count(lun, ua.asc_ascq);
	for (unsigned i = 0; i < lun->n_ua; i++)
		if (lun->ua[i].asc_ascq == ua.asc_ascq) {
			lun->ua[i] = ua; /* already pending: report the latest information */
			return;
		}
	if (lun->n_ua < SCSI_UA_MAX)
		lun->ua[lun->n_ua++] = ua;
	else
		lun->ua[SCSI_UA_MAX - 1] = ua;
}

void scsi_lun_post_ua(struct scsi_lun *lun, uint16_t asc_ascq)
{
	post(lun, (struct scsi_ua){.asc_ascq = asc_ascq});
}

void scsi_lun_post_ua_info(struct scsi_lun *lun, uint16_t asc_ascq, uint32_t info)
{
	post(lun, (struct scsi_ua){.asc_ascq = asc_ascq, .info_valid = true, .info = info});
}

/* SBC-4 4.7.3.7.6: the unit attention of a logical block provisioning threshold
 * carries, in the INFORMATION field, the offset of the threshold descriptor in the
 * Logical Block Provisioning mode page. */
void scsi_lun_post_soft_threshold_ua(struct scsi_lun *lun)
{
	scsi_lun_post_ua_info(lun, ASC_THIN_PROV_SOFT_THRESHOLD, SCSI_LBP_MODE_DESC_OFFSET);
}

bool scsi_lun_pop_ua(struct scsi_lun *lun, struct scsi_ua *ua)
{
	if (!lun->n_ua)
		return false;
	*ua = lun->ua[0];
	lun->n_ua--;
	memmove(lun->ua, lun->ua + 1, lun->n_ua * sizeof(lun->ua[0]));
	return true;
}

void scsi_set_ua_sense(struct scsi_cmd *cmd, const struct scsi_ua *ua)
{
	if (ua->info_valid)
		scsi_set_sense_info(cmd, SK_UNIT_ATTENTION, ua->asc_ascq, ua->info);
	else
		scsi_set_sense(cmd, SK_UNIT_ATTENTION, ua->asc_ascq);
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
	struct scsi_ua ua;
	if (!scsi_lun_pop_ua(lun, &ua))
		return false;
	scsi_set_ua_sense(cmd, &ua);
	cmd->status = SAM_STAT_CHECK_CONDITION;
	scsi_cmd_complete(cmd);
	return true;
}
