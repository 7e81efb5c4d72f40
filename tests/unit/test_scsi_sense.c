/*
 * Unit tests of sense building, completion and unit attentions
 * (src/scsi/sense.c, ua.c): fixed-format layout (SPC-4 4.5.3), INFORMATION
 * and COMMAND-SPECIFIC INFORMATION, field pointers (SPC-4 4.5.2.4.2), the UA
 * queue (SAM-5 5.14) and which commands a UA is reported on.
 */
#include "scsi_test_env.h"

static void test_fixed_sense_layout(void **state)
{
	(void)state;
	struct scsi_cmd c;
	memset(&c, 0xEE, sizeof(c));
	scsi_set_sense(&c, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	uint8_t want[18] = {0x70, 0, 0x03, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x11, 0x00, 0, 0, 0, 0};
	assert_int_equal(c.sense_len, 18);
	assert_memory_equal(c.sense, want, 18);
}

static void test_sense_info_and_csi(void **state)
{
	(void)state;
	struct scsi_cmd c = {0};
	scsi_set_sense_info(&c, SK_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY, 0x01020304);
	scsi_set_sense_csi(&c, 0xA1B2C3D4);
	assert_int_equal(c.sense[0], 0xF0); /* VALID | 70h */
	assert_int_equal(c.sense[2], 0x0E);
	assert_int_equal(scsi_get_be32(c.sense + 3), 0x01020304);
	assert_int_equal(scsi_get_be32(c.sense + 8), 0xA1B2C3D4);
	assert_int_equal(c.sense[12], 0x1D);
	assert_int_equal(c.sense[13], 0x00);
	assert_int_equal(c.sense[15], 0); /* no SKSV */
}

static void test_field_pointer(void **state)
{
	(void)state;
	struct scsi_cmd c = {0};
	scsi_set_sense_field(&c, ASC_INVALID_FIELD_IN_CDB, true, 9, 2);
	assert_int_equal(c.sense[2], SK_ILLEGAL_REQUEST);
	assert_int_equal(c.sense[15], 0x80 | 0x40 | 0x08 | 2);
	assert_int_equal(scsi_get_be16(c.sense + 16), 9);
	scsi_set_sense_field(&c, ASC_INVALID_FIELD_IN_PARAM_LIST, false, 300, -1);
	assert_int_equal(c.sense[15], 0x80);
	assert_int_equal(scsi_get_be16(c.sense + 16), 300);
	assert_int_equal(c.sense[12], 0x26);
	scsi_set_sense_field(&c, ASC_INVALID_FIELD_IN_CDB, true, 1, 7);
	assert_int_equal(c.sense[15], 0xCF);
}

static void test_complete_helpers(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	tenv_setup(e, CDB(0, 0, 0, 0, 0, 0), 0);
	scsi_complete_invalid_param(&e->cmd, 12, 3);
	assert_int_equal(e->completions, 1);
	assert_field(e, ASC_INVALID_FIELD_IN_PARAM_LIST, false, 12, 3);
	assert_null(e->cmd.done); /* cleared: a second completion would assert */

	e->cmd.done = tenv_done;
	scsi_complete_field(&e->cmd, ASC_SAVING_PARAMS_NOT_SUPPORTED, true, 2, 7);
	assert_field(e, ASC_SAVING_PARAMS_NOT_SUPPORTED, true, 2, 7);

	e->cmd.done = tenv_done;
	scsi_complete_sense(&e->cmd, SK_DATA_PROTECT, ASC_SPACE_ALLOC_FAILED_WRITE_PROTECT);
	assert_sense(e, SK_DATA_PROTECT, ASC_SPACE_ALLOC_FAILED_WRITE_PROTECT);

	e->cmd.done = tenv_done;
	scsi_complete_good(&e->cmd);
	assert_good(e);
	assert_int_equal(e->completions, 4);
}

static void test_ua_queue_order_and_dups(void **state)
{
	(void)state;
	struct scsi_lun lun;
	tenv_lun_init(&lun);
	scsi_lun_post_ua(&lun, ASC_POWER_ON_RESET);
	scsi_lun_post_ua(&lun, ASC_CAPACITY_DATA_CHANGED);
	scsi_lun_post_ua(&lun, ASC_POWER_ON_RESET); /* duplicate: ignored */
	assert_int_equal(lun.n_ua, 2);
	struct scsi_ua a;
	assert_true(scsi_lun_pop_ua(&lun, &a));
	assert_int_equal(a.asc_ascq, ASC_POWER_ON_RESET);
	assert_false(a.info_valid);
	assert_true(scsi_lun_pop_ua(&lun, &a));
	assert_int_equal(a.asc_ascq, ASC_CAPACITY_DATA_CHANGED);
	assert_false(scsi_lun_pop_ua(&lun, &a));
}

static void test_ua_queue_overflow(void **state)
{
	(void)state;
	struct scsi_lun lun;
	tenv_lun_init(&lun);
	for (uint16_t i = 0; i < SCSI_UA_MAX; i++)
		scsi_lun_post_ua(&lun, (uint16_t)(0x2A00 + i));
	scsi_lun_post_ua(&lun, ASC_THIN_PROV_SOFT_THRESHOLD);
	assert_int_equal(lun.n_ua, SCSI_UA_MAX);
	assert_int_equal(lun.ua[0].asc_ascq, 0x2A00); /* oldest kept */
	assert_int_equal(lun.ua[SCSI_UA_MAX - 2].asc_ascq, 0x2A00 + SCSI_UA_MAX - 2);
	assert_int_equal(lun.ua[SCSI_UA_MAX - 1].asc_ascq, ASC_THIN_PROV_SOFT_THRESHOLD); /* replaced */
}

static void report(struct scsi_cmd *c)
{
	if (!scsi_lun_report_ua(c->lun, c))
		scsi_complete_good(c);
}

static void test_ua_report_skips(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	scsi_lun_post_ua(&e->lun, ASC_CAPACITY_DATA_CHANGED);
	/* INQUIRY, REPORT LUNS, REQUEST SENSE: not refused, UA stays pending. */
	run_cmd(e, report, CDB(0x12, 0, 0, 0, 0, 0), 0);
	assert_good(e);
	run_cmd(e, report, CDB(0xA0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0);
	assert_good(e);
	run_cmd(e, report, CDB(0x03, 0, 0, 0, 0, 0), 0);
	assert_good(e);
	assert_int_equal(e->lun.n_ua, 1);
	/* TEST UNIT READY gets it, once. */
	run_cmd(e, report, CDB(0x00, 0, 0, 0, 0, 0), 0);
	assert_sense(e, SK_UNIT_ATTENTION, ASC_CAPACITY_DATA_CHANGED);
	assert_int_equal(e->lun.n_ua, 0);
	run_cmd(e, report, CDB(0x00, 0, 0, 0, 0, 0), 0);
	assert_good(e);
}

/* SBC-4 4.7.3.7.6: the soft threshold unit attention has VALID=1 and INFORMATION = the
 * offset of the threshold descriptor in mode page 1Ch/02h (16); other unit attentions
 * have no INFORMATION (VALID=0). Posting a pending condition again keeps one entry. */
static void test_ua_soft_threshold_info(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	scsi_lun_post_ua(&e->lun, ASC_CAPACITY_DATA_CHANGED);
	scsi_lun_post_soft_threshold_ua(&e->lun);
	scsi_lun_post_soft_threshold_ua(&e->lun);
	assert_int_equal(e->lun.n_ua, 2);
	run_cmd(e, report, CDB(0x00, 0, 0, 0, 0, 0), 0);
	assert_sense(e, SK_UNIT_ATTENTION, ASC_CAPACITY_DATA_CHANGED);
	assert_int_equal(e->cmd.sense[0], 0x70); /* VALID=0 */
	assert_int_equal(scsi_get_be32(e->cmd.sense + 3), 0);
	run_cmd(e, report, CDB(0x00, 0, 0, 0, 0, 0), 0);
	assert_sense(e, SK_UNIT_ATTENTION, ASC_THIN_PROV_SOFT_THRESHOLD);
	assert_int_equal(e->cmd.sense[0], 0xF0); /* VALID=1 */
	assert_int_equal(scsi_get_be32(e->cmd.sense + 3), SCSI_LBP_MODE_DESC_OFFSET);
	assert_int_equal(SCSI_LBP_MODE_DESC_OFFSET, 16);
	assert_int_equal(e->lun.n_ua, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_sense_layout),
		cmocka_unit_test(test_sense_info_and_csi),
		cmocka_unit_test(test_field_pointer),
		cmocka_unit_test(test_complete_helpers),
		cmocka_unit_test(test_ua_queue_order_and_dups),
		cmocka_unit_test(test_ua_queue_overflow),
		cmocka_unit_test(test_ua_report_skips),
		cmocka_unit_test(test_ua_soft_threshold_info),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
