/*
 * Unit tests of the dispatch table and scsi_dispatch() (src/scsi/dispatch.c)
 * and of REPORT SUPPORTED OPERATION CODES (src/scsi/emul_rsoc.c), which reads
 * the table: table consistency, unknown operation code, unknown service
 * action, NACA, unit attention ordering, and every RSOC reporting option.
 * Only handlers that need no pool are executed.
 */
#include "scsi_test_env.h"
#include "vaaid/dispatch.h"
#include "vaaid/scsi_emul.h"

static void dispatch(struct scsi_cmd *c)
{
	scsi_dispatch(c);
}

static void test_table_consistent(void **state)
{
	(void)state;
	size_t n;
	const struct scsi_opcode_desc *t = scsi_opcode_table(&n);
	assert_int_equal(n, 35);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(t[i].fn);
		assert_non_null(t[i].name);
		assert_int_equal(t[i].cdb_len, scsi_cdb_length(t[i].opcode));
		assert_int_equal(t[i].usage[0], t[i].opcode);
		assert_int_equal(t[i].usage[t[i].cdb_len - 1], 0x04); /* CONTROL: NACA */
		if (t[i].has_sa)
			assert_int_equal(t[i].usage[1] & 0x1F, t[i].sa);
		for (size_t j = t[i].cdb_len; j < 16; j++)
			assert_int_equal(t[i].usage[j], 0);
		if (i) {
			uint32_t a = (uint32_t)t[i - 1].opcode << 16 | t[i - 1].sa;
			uint32_t b = (uint32_t)t[i].opcode << 16 | t[i].sa;
			assert_true(a < b); /* sorted, unique */
		}
		assert_ptr_equal(scsi_opcode_find(t[i].opcode, t[i].has_sa, t[i].sa), &t[i]);
	}
	const uint8_t want[] = {0x00, 0x03, 0x08, 0x0A, 0x12, 0x15, 0x1A, 0x1B, 0x25, 0x28,
				0x2A, 0x2E, 0x2F, 0x35, 0x41, 0x42, 0x4D, 0x55, 0x5A, 0x83,
				0x84, 0x84, 0x88, 0x89, 0x8A, 0x8E, 0x8F, 0x91, 0x93, 0x9E, 0x9E,
				0xA3, 0xA3, 0xA8, 0xAA};
	for (size_t i = 0; i < sizeof(want); i++)
		assert_int_equal(t[i].opcode, want[i]);
	/* a few usage maps in full */
	const uint8_t r10[10] = {0x28, 0xF8, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0x04};
	assert_memory_equal(scsi_opcode_find(0x28, false, 0)->usage, r10, 10);
	const uint8_t rc16[16] = {0x9E, 0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
				  0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x04};
	assert_memory_equal(scsi_opcode_find(0x9E, true, 0x10)->usage, rc16, 16);
	/* the logical block provisioning commands (SBC-4 5.20, 5.31, 5.48, 5.49) */
	const uint8_t ws10[10] = {0x41, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0x04};
	assert_memory_equal(scsi_opcode_find(0x41, false, 0)->usage, ws10, 10);
	const uint8_t unmap[10] = {0x42, 0x01, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0x04};
	assert_memory_equal(scsi_opcode_find(0x42, false, 0)->usage, unmap, 10);
	const uint8_t ws16[16] = {0x93, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
				  0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x04};
	assert_memory_equal(scsi_opcode_find(0x93, false, 0)->usage, ws16, 16);
	const uint8_t gls[16] = {0x9E, 0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
				 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x04};
	assert_memory_equal(scsi_opcode_find(0x9E, true, 0x12)->usage, gls, 16);
}

static void test_find(void **state)
{
	(void)state;
	assert_non_null(scsi_opcode_find(0x00, false, 0));
	assert_non_null(scsi_opcode_find(0xAA, false, 0));
	assert_non_null(scsi_opcode_find(0xA3, true, 0x0C));
	assert_null(scsi_opcode_find(0x9E, false, 0));
	assert_non_null(scsi_opcode_find(0x9E, true, 0x12));
	assert_null(scsi_opcode_find(0x9E, true, 0x11));
	assert_null(scsi_opcode_find(0x28, true, 0));
	assert_non_null(scsi_opcode_find(0x42, false, 0));
	assert_null(scsi_opcode_find(0x3B, false, 0));
	assert_null(scsi_opcode_find(0xFF, false, 0));
}

static void test_unknown_opcode(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	run_cmd(e, dispatch, CDB(0x3B, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0); /* WRITE BUFFER */
	assert_sense(e, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
	assert_int_equal(e->cmd.sense[15], 0); /* no field pointer */
	run_cmd(e, dispatch, CDB(0xC5, 0, 0, 0, 0, 0), 0);
	assert_sense(e, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
}

static void test_bad_service_action(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	/* SERVICE ACTION IN(16) / 11h: not implemented */
	run_cmd(e, dispatch, CDB(0x9E, 0x11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0), 64);
	assert_invalid_cdb(e, 1, 4);
	/* MAINTENANCE IN / REPORT TARGET PORT GROUPS (0Ah) */
	run_cmd(e, dispatch, CDB(0xA3, 0x0A, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0), 64);
	assert_invalid_cdb(e, 1, 4);
}

static void test_naca(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	run_cmd(e, dispatch, CDB(0x00, 0, 0, 0, 0, 0x04), 0);
	assert_invalid_cdb(e, 5, 2);
	run_cmd(e, dispatch, CDB(0x9E, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0x04), 64);
	assert_invalid_cdb(e, 15, 2);
	run_cmd(e, dispatch, CDB(0x00, 0, 0, 0, 0, 0x80), 0); /* vendor specific bits: ignored */
	assert_good(e);
}

/* COMPARE AND WRITE (SBC-4 5.3): NUMBER OF LOGICAL BLOCKS above the advertised MAXIMUM
 * COMPARE AND WRITE LENGTH (1 in this fixture) -> INVALID FIELD IN CDB at byte 13, checked
 * before the data-out length and before the pool is touched (this LUN has no volume). */
static void test_caw_length_limit(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	run_cmd(e, dispatch, CDB(0x89, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0), 2048);
	assert_invalid_cdb(e, 13, -1);
	e->lun.info.max_caw_len = 0; /* not supported at all: every NoLB > 0 is refused */
	run_cmd(e, dispatch, CDB(0x89, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0), 1024);
	assert_invalid_cdb(e, 13, -1);
	/* NoLB 0: GOOD, nothing done (no volume needed) */
	run_cmd(e, dispatch, CDB(0x89, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0);
	assert_good(e);
}

static void test_dispatch_runs_handler(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	memset(e->buf, 0, sizeof(e->buf));
	run_cmd(e, dispatch, CDB(0x9E, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0), 64);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 32);
	assert_int_equal(scsi_get_be32(e->buf + 8), 512);
	/* a CDB shorter than the command's is refused */
	tenv_setup(e, CDB(0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0), 512);
	e->cmd.cdb_len = 6;
	scsi_dispatch(&e->cmd);
	assert_int_equal(e->completions, 1);
	assert_sense(e, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
}

static void test_ua_ordering(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	scsi_lun_post_ua(&e->lun, ASC_POWER_ON_RESET);
	scsi_lun_post_ua(&e->lun, ASC_CAPACITY_DATA_CHANGED);
	/* CDB errors are reported before the UA, which stays pending */
	run_cmd(e, dispatch, CDB(0x3B, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0);
	assert_sense(e, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
	run_cmd(e, dispatch, CDB(0x9E, 0x11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0), 64);
	assert_invalid_cdb(e, 1, 4);
	run_cmd(e, dispatch, CDB(0x00, 0, 0, 0, 0, 0x04), 0);
	assert_invalid_cdb(e, 5, 2);
	assert_int_equal(e->lun.n_ua, 2);
	/* INQUIRY is not refused */
	run_cmd(e, dispatch, CDB(0x12, 0, 0, 0, 96, 0), 96);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 96);
	/* then the UAs, oldest first, one per command */
	run_cmd(e, dispatch, CDB(0x00, 0, 0, 0, 0, 0), 0);
	assert_sense(e, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
	/* REQUEST SENSE returns the next one as data */
	memset(e->buf, 0, sizeof(e->buf));
	run_cmd(e, dispatch, CDB(0x03, 0, 0, 0, 18, 0), 18);
	assert_good(e);
	assert_int_equal(e->buf[2], SK_UNIT_ATTENTION);
	assert_int_equal(e->buf[12], 0x2A);
	assert_int_equal(e->buf[13], 0x09);
	run_cmd(e, dispatch, CDB(0x00, 0, 0, 0, 0, 0), 0);
	assert_good(e);
}

/* ------------------------------------------- REPORT SUPPORTED OPERATION CODES */

static void rsoc(struct tenv *e, uint8_t b2, uint8_t op, uint16_t sa, uint32_t alloc)
{
	memset(e->buf, 0xA5, sizeof(e->buf));
	run_cmd(e, dispatch,
		CDB(0xA3, 0x0C, b2, op, (uint8_t)(sa >> 8), (uint8_t)sa, (uint8_t)(alloc >> 24),
		    (uint8_t)(alloc >> 16), (uint8_t)(alloc >> 8), (uint8_t)alloc, 0, 0),
		TENV_BUF);
}

static void test_rsoc_all(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	size_t nt, n = 0;
	const struct scsi_opcode_desc *all = scsi_opcode_table(&nt);
	/* the LUN's commands: all but REPORT TARGET PORT GROUPS (no ALUA here) */
	const struct scsi_opcode_desc *t[64];
	assert_true(nt <= 64);
	for (size_t i = 0; i < nt; i++)
		if (scsi_opcode_enabled(&e->lun, &all[i]))
			t[n++] = &all[i];
		else
			assert_true(all[i].opcode == 0xA3 && all[i].sa == 0x0A);
	assert_int_equal(n, nt - 1);
	rsoc(e, 0x00, 0x55, 0x1234, TENV_BUF); /* requested fields ignored */
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 4 + 8 * n);
	assert_int_equal(scsi_get_be32(e->buf), 8 * n);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *d = e->buf + 4 + 8 * i;
		assert_int_equal(d[0], t[i]->opcode);
		assert_int_equal(d[1], 0);
		assert_int_equal(scsi_get_be16(d + 2), t[i]->has_sa ? t[i]->sa : 0);
		assert_int_equal(d[4], 0);
		assert_int_equal(d[5], t[i]->has_sa ? 0x01 : 0x00);
		assert_int_equal(scsi_get_be16(d + 6), t[i]->cdb_len);
	}
	/* RCTD: 20-byte descriptors with CTDP and a command timeouts descriptor */
	rsoc(e, 0x80, 0, 0, TENV_BUF);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 4 + 20 * n);
	assert_int_equal(scsi_get_be32(e->buf), 20 * n);
	const uint8_t *d = e->buf + 4 + 20 * 29; /* 9Eh/10h */
	assert_int_equal(d[0], 0x9E);
	assert_int_equal(scsi_get_be16(d + 2), 0x10);
	assert_int_equal(d[5], 0x03);
	assert_int_equal(scsi_get_be16(d + 6), 16);
	assert_int_equal(scsi_get_be16(d + 8), 0x0A);
	for (int i = 10; i < 20; i++)
		assert_int_equal(d[i], 0);
	/* ALLOCATION LENGTH truncates; COMMAND DATA LENGTH stays complete */
	rsoc(e, 0x00, 0, 0, 6);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 6);
	assert_int_equal(scsi_get_be32(e->buf), 8 * n);
	assert_int_equal(e->buf[6], UNTOUCHED(e, 6));
}

static void test_rsoc_one(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	const struct scsi_opcode_desc *r10 = scsi_opcode_find(0x28, false, 0);
	/* 001b READ(10) */
	rsoc(e, 0x01, 0x28, 0x77, 512);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 14);
	assert_int_equal(e->buf[0], 0);
	assert_int_equal(e->buf[1], 0x03); /* SUPPORT 011b */
	assert_int_equal(scsi_get_be16(e->buf + 2), 10);
	assert_memory_equal(e->buf + 4, r10->usage, 10);
	/* 001b on an operation code with service actions */
	rsoc(e, 0x01, 0x9E, 0x10, 512);
	assert_invalid_cdb(e, 3, -1);
	/* 001b not implemented: SUPPORT 001b, no usage data */
	rsoc(e, 0x01, 0x3B, 0, 512);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 4);
	assert_memory_equal(e->buf, "\x00\x01\x00\x00", 4);
	/* 010b READ CAPACITY(16) */
	rsoc(e, 0x02, 0x9E, 0x10, 512);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 20);
	assert_int_equal(e->buf[1], 0x03);
	assert_int_equal(scsi_get_be16(e->buf + 2), 16);
	assert_memory_equal(e->buf + 4, scsi_opcode_find(0x9E, true, 0x10)->usage, 16);
	rsoc(e, 0x02, 0x9E, 0x11, 512); /* service action 11h: not implemented */
	assert_good(e);
	assert_int_equal(e->buf[1], 0x01);
	rsoc(e, 0x02, 0x28, 0, 512); /* no service actions */
	assert_invalid_cdb(e, 3, -1);
	rsoc(e, 0x02, 0x83, 1, 512); /* EXTENDED COPY(LID4): service action not implemented */
	assert_good(e);
	assert_int_equal(e->buf[1], 0x01);
	rsoc(e, 0x02, 0xC5, 0, 512); /* unknown operation code */
	assert_good(e);
	assert_int_equal(e->buf[1], 0x01);
	/* 001b COMPARE AND WRITE (SBC-4 5.3): WRPROTECT, DPO, FUA, LBA, NUMBER OF LOGICAL BLOCKS */
	const uint8_t caw[16] = {0x89, 0xF8, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
				 0, 0, 0, 0xFF, 0, 0x04};
	rsoc(e, 0x01, 0x89, 0, 512);
	assert_good(e);
	assert_int_equal(e->buf[1], 0x03);
	assert_memory_equal(e->buf + 4, caw, 16);
	/* 010b EXTENDED COPY(LID1), RECEIVE COPY RESULTS 00h/03h (SPC-4 6.4, 6.18) */
	const uint8_t xc[16] = {0x83, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0x04};
	rsoc(e, 0x02, 0x83, 0, 512);
	assert_good(e);
	assert_int_equal(e->buf[1], 0x03);
	assert_memory_equal(e->buf + 4, xc, 16);
	const uint8_t rcs[16] = {0x84, 0, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0x04};
	rsoc(e, 0x02, 0x84, 0, 512);
	assert_int_equal(e->buf[1], 0x03);
	assert_memory_equal(e->buf + 4, rcs, 16);
	const uint8_t rop[16] = {0x84, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0x04};
	rsoc(e, 0x02, 0x84, 3, 512);
	assert_int_equal(e->buf[1], 0x03);
	assert_memory_equal(e->buf + 4, rop, 16);
	rsoc(e, 0x02, 0x84, 1, 512); /* RECEIVE COPY DATA(LID1): not implemented */
	assert_int_equal(e->buf[1], 0x01);
	/* 011b: either form */
	rsoc(e, 0x03, 0x28, 0, 512);
	assert_int_equal(e->buf[1], 0x03);
	rsoc(e, 0x03, 0x28, 1, 512);
	assert_good(e);
	assert_int_equal(e->buf[1], 0x01);
	rsoc(e, 0x03, 0xA3, 0x0C, 512);
	assert_int_equal(e->buf[1], 0x03);
	assert_int_equal(scsi_get_be16(e->buf + 2), 12);
	rsoc(e, 0x03, 0xA3, 0x0A, 512);
	assert_int_equal(e->buf[1], 0x01);
	/* RCTD in the one-command form */
	rsoc(e, 0x81, 0x28, 0, 512);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 4 + 10 + 12);
	assert_int_equal(e->buf[1], 0x83);
	assert_int_equal(scsi_get_be16(e->buf + 14), 0x0A);
	/* truncated */
	rsoc(e, 0x01, 0x28, 0, 5);
	assert_int_equal(e->cmd.data_in_len, 5);
	assert_int_equal(e->buf[5], UNTOUCHED(e, 5));
	/* reserved reporting options */
	for (uint8_t o = 4; o < 8; o++) {
		rsoc(e, o, 0x28, 0, 512);
		assert_invalid_cdb(e, 2, 2);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_consistent),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_unknown_opcode),
		cmocka_unit_test(test_bad_service_action),
		cmocka_unit_test(test_naca),
		cmocka_unit_test(test_dispatch_runs_handler),
		cmocka_unit_test(test_ua_ordering),
		cmocka_unit_test(test_rsoc_all),
		cmocka_unit_test(test_rsoc_one),
		cmocka_unit_test(test_caw_length_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
