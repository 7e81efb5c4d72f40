/*
 * Unit tests of CDB decoding and the data buffer helpers (src/scsi/cdb.c,
 * data.c): CDB length by group code (SPC-4 4.2.5.1), LBA / TRANSFER LENGTH of
 * the 6/10/12/16-byte block commands and COMPARE AND WRITE (SBC-4 5.x), the
 * field offsets used for field pointers, and iovec copies with truncation.
 */
#include <errno.h>

#include "scsi_test_env.h"

static void test_cdb_length(void **state)
{
	(void)state;
	assert_int_equal(scsi_cdb_length(0x00), 6);
	assert_int_equal(scsi_cdb_length(0x1F), 6);
	assert_int_equal(scsi_cdb_length(0x28), 10);
	assert_int_equal(scsi_cdb_length(0x5A), 10);
	assert_int_equal(scsi_cdb_length(0x7E), 0); /* group 3 reserved */
	assert_int_equal(scsi_cdb_length(0x7F), 0); /* variable: needs byte 7 */
	assert_int_equal(scsi_cdb_length(0x88), 16);
	assert_int_equal(scsi_cdb_length(0x9E), 16);
	assert_int_equal(scsi_cdb_length(0xA3), 12);
	assert_int_equal(scsi_cdb_length(0xC0), 0); /* vendor specific */
	assert_int_equal(scsi_cdb_length(0xFF), 0);
	uint8_t v[40] = {0x7F};
	v[7] = 0x18;
	assert_int_equal(scsi_cdb_length_full(v), 32);
	v[0] = 0x2A;
	assert_int_equal(scsi_cdb_length_full(v), 10);
}

static void test_rw6(void **state)
{
	(void)state;
	uint64_t lba;
	uint32_t n;
	/* 21-bit LBA: the top 3 bits of byte 1 are not part of it. */
	const uint8_t r6[6] = {0x08, 0xFF, 0x34, 0x56, 0x00, 0};
	assert_int_equal(scsi_cdb_lba_len(r6, &lba, &n), 0);
	assert_int_equal(lba, 0x1F3456);
	assert_int_equal(n, 256); /* TRANSFER LENGTH 0 = 256 */
	const uint8_t w6[6] = {0x0A, 0x00, 0x00, 0x10, 0x07, 0};
	assert_int_equal(scsi_cdb_lba_len(w6, &lba, &n), 0);
	assert_int_equal(lba, 0x10);
	assert_int_equal(n, 7);
	assert_int_equal(scsi_cdb_len_field_offset(0x08), 4);
	assert_int_equal(scsi_cdb_lba_field_offset(0x0A), 1);
}

static void test_10_12_16(void **state)
{
	(void)state;
	uint64_t lba;
	uint32_t n;
	const uint8_t ops10[] = {0x28, 0x2A, 0x2E, 0x2F, 0x35, 0x41};
	for (size_t i = 0; i < sizeof(ops10); i++) {
		uint8_t c[10] = {ops10[i], 0, 0xDE, 0xAD, 0xBE, 0xEF, 0x99, 0x12, 0x34, 0};
		assert_int_equal(scsi_cdb_lba_len(c, &lba, &n), 0);
		assert_int_equal(lba, 0xDEADBEEF);
		assert_int_equal(n, 0x1234);
		assert_int_equal(scsi_cdb_len_field_offset(ops10[i]), 7);
		assert_int_equal(scsi_cdb_lba_field_offset(ops10[i]), 2);
	}
	const uint8_t ops12[] = {0xA8, 0xAA, 0xAE, 0xAF};
	for (size_t i = 0; i < sizeof(ops12); i++) {
		uint8_t c[12] = {ops12[i], 0, 0, 0, 0, 9, 0x80, 0, 0, 1, 0x77, 0};
		assert_int_equal(scsi_cdb_lba_len(c, &lba, &n), 0);
		assert_int_equal(lba, 9);
		assert_int_equal(n, 0x80000001u);
		assert_int_equal(scsi_cdb_len_field_offset(ops12[i]), 6);
	}
	const uint8_t ops16[] = {0x88, 0x8A, 0x8E, 0x8F, 0x91, 0x93};
	for (size_t i = 0; i < sizeof(ops16); i++) {
		uint8_t c[16] = {ops16[i], 0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF,
				 0xFF, 0xFF, 0xFF, 0xFE, 0x55, 0};
		assert_int_equal(scsi_cdb_lba_len(c, &lba, &n), 0);
		assert_true(lba == 0x0123456789ABCDEFull);
		assert_int_equal(n, 0xFFFFFFFEu);
		assert_int_equal(scsi_cdb_len_field_offset(ops16[i]), 10);
	}
}

static void test_caw_and_unknown(void **state)
{
	(void)state;
	uint64_t lba = 7;
	uint32_t n = 7;
	uint8_t caw[16] = {0x89, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x00, 0, 0, 0, 2, 0, 0};
	assert_int_equal(scsi_cdb_lba_len(caw, &lba, &n), 0);
	assert_int_equal(lba, 0x1000);
	assert_int_equal(n, 2);
	assert_int_equal(scsi_cdb_len_field_offset(0x89), 13);
	uint8_t inq[6] = {0x12, 0, 0, 0, 96, 0};
	assert_int_equal(scsi_cdb_lba_len(inq, &lba, &n), -EINVAL);
	assert_int_equal(scsi_cdb_len_field_offset(0x12), -EINVAL);
	assert_int_equal(scsi_cdb_lba_field_offset(0x00), -EINVAL);
}

static void test_lba_range(void **state)
{
	(void)state;
	struct scsi_lun lun;
	tenv_lun_init(&lun);
	lun.info.nblocks = 100;
	assert_true(scsi_lba_range_ok(&lun, 0, 100));
	assert_true(scsi_lba_range_ok(&lun, 100, 0));
	assert_false(scsi_lba_range_ok(&lun, 99, 2));
	assert_false(scsi_lba_range_ok(&lun, 101, 0));
	assert_false(scsi_lba_range_ok(&lun, UINT64_MAX, 2)); /* no wrap-around */
	assert_false(scsi_lba_range_ok(&lun, 1, UINT64_MAX));
}

static void test_data_copies(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	memset(e->buf, 0, sizeof(e->buf));
	tenv_setup(e, CDB(0x12, 0, 0, 0, 0, 0), 10); /* two iovecs of 5 bytes */
	uint8_t src[16];
	for (int i = 0; i < 16; i++)
		src[i] = (uint8_t)(i + 1);
	assert_int_equal(scsi_copy_to_data_in(&e->cmd, src, 16), 10); /* truncated */
	assert_int_equal(e->cmd.data_in_len, 10);
	assert_memory_equal(e->buf, src, 10);
	assert_int_equal(e->buf[10], 0);
	assert_int_equal(scsi_copy_to_data_in(&e->cmd, src, 3), 3);
	assert_int_equal(e->cmd.data_in_len, 3);
	/* the rest of the buffer is zeroed: no stale bytes reach the initiator */
	for (int i = 3; i < 10; i++)
		assert_int_equal(e->buf[i], 0);
	memcpy(e->buf, src, 10); /* the same buffer as data-out from here */

	uint8_t out[16] = {0};
	assert_int_equal(scsi_copy_from_data_out(&e->cmd, 4, out, 16), 6); /* crosses the iovecs */
	assert_memory_equal(out, src + 4, 6);
	assert_int_equal(scsi_copy_from_data_out(&e->cmd, 10, out, 1), 0);
	assert_int_equal(scsi_copy_from_data_out(&e->cmd, 99, out, 1), 0);
}

static void test_be_helpers(void **state)
{
	(void)state;
	uint8_t b[8];
	scsi_put_be64(b, 0x0102030405060708ull);
	assert_true(scsi_get_be64(b) == 0x0102030405060708ull);
	assert_int_equal(scsi_get_be24(b + 1), 0x020304);
	scsi_put_be16(b, 0xBEEF);
	assert_int_equal(scsi_get_be16(b), 0xBEEF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cdb_length),
		cmocka_unit_test(test_rw6),
		cmocka_unit_test(test_10_12_16),
		cmocka_unit_test(test_caw_and_unknown),
		cmocka_unit_test(test_lba_range),
		cmocka_unit_test(test_data_copies),
		cmocka_unit_test(test_be_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
