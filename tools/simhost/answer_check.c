/* answer_check (answer_check.h): the property of every SCSI answer the fuzzers check. */
#include <stdio.h>

#include "answer_check.h"
#include "vaaid/scsi.h"

int answer_check(const struct simk_result *k, size_t in_len, char *why, size_t n)
{
	if (k->status == SAM_STAT_GOOD) {
		if (in_len && k->data_in_len > in_len) {
			snprintf(why, n, "GOOD with %zu bytes of data-in, the buffer holds %zu",
				 k->data_in_len, in_len);
			return -1;
		}
		return 0;
	}
	if (k->status == SAM_STAT_TASK_SET_FULL)
		return 0;
	if (k->status != SAM_STAT_CHECK_CONDITION) {
		snprintf(why, n, "status %02xh", k->status);
		return -1;
	}
	uint8_t sk = k->sense[2] & 0x0F;
	if ((k->sense[0] & 0x7F) != 0x70 || k->sense[7] < 0x0A || sk == SK_NO_SENSE ||
	    sk == SK_MEDIUM_ERROR || sk == SK_HARDWARE_ERROR) {
		snprintf(why, n, "bad sense %02x key %xh %02xh/%02xh", k->sense[0], sk, k->sense[12],
			 k->sense[13]);
		return -1;
	}
	return 0;
}
