/*
 * Unit tests of the SPC/SBC emulation handlers (src/scsi/emul_*.c) on a LUN
 * whose identity is filled by hand: INQUIRY + every VPD page, READ CAPACITY
 * 10/16, MODE SENSE/SELECT 6/10, LOG SENSE, TEST UNIT READY, REQUEST SENSE,
 * START STOP UNIT — returned data byte by byte, every error with its sense
 * key, ASC/ASCQ and field pointer, and ALLOCATION LENGTH truncation.
 * REPORT SUPPORTED OPERATION CODES needs the dispatch table: it is tested in
 * test_handlers_dispatch.c.
 */
#include "scsi_test_env.h"
#include "vaaid/scsi_emul.h"

#define PAT 0xA5 /* run_in() fills the buffer with it: bytes not transferred keep it */

/* ---------------------------------------------------------------- INQUIRY */

static void inquiry(struct tenv *e, bool evpd, uint8_t page, uint16_t alloc)
{
	run_in(e, scsi_emul_inquiry,
	       CDB(0x12, evpd ? 1 : 0, page, (uint8_t)(alloc >> 8), (uint8_t)alloc, 0), TENV_BUF);
}

static void test_inquiry_standard(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	inquiry(e, false, 0, 255);
	assert_good(e);
	const uint8_t *b = e->buf;
	assert_int_equal(e->cmd.data_in_len, 96);
	assert_int_equal(b[0], 0x00);
	assert_int_equal(b[1], 0x00);
	assert_int_equal(b[2], 0x06);
	assert_int_equal(b[3], 0x12);
	assert_int_equal(b[4], 91);
	assert_int_equal(b[5], 0x00); /* 3PC off */
	assert_int_equal(b[6], 0x00);
	assert_int_equal(b[7], 0x02);
	assert_memory_equal(b + 8, "VAAID   ", 8);
	assert_memory_equal(b + 16, "VAAID THIN LUN  ", 16);
	assert_memory_equal(b + 32, "0001", 4);
	for (int i = 36; i < 58; i++)
		assert_int_equal(b[i], 0);
	assert_int_equal(scsi_get_be16(b + 58), 0x00A0);
	assert_int_equal(scsi_get_be16(b + 60), 0x0460);
	assert_int_equal(scsi_get_be16(b + 62), 0x04C0);
	for (int i = 64; i < 96; i++)
		assert_int_equal(b[i], 0);
	assert_int_equal(b[96], UNTOUCHED(e, 96));

	e->lun.info.tpc = true;
	inquiry(e, false, 0, 96);
	assert_int_equal(e->buf[5], 0x08);
}

static void test_inquiry_alloc_len(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	inquiry(e, false, 0, 36);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 36);
	assert_int_equal(e->buf[4], 91); /* ADDITIONAL LENGTH is not truncated */
	assert_int_equal(e->buf[36], UNTOUCHED(e, 36));
	inquiry(e, false, 0, 0);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 0);
	assert_int_equal(e->buf[0], UNTOUCHED(e, 0));
	/* A data-in buffer shorter than the allocation length truncates too. */
	run_in(e, scsi_emul_inquiry, CDB(0x12, 0, 0, 0, 96, 0), 20);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 20);
}

static void test_inquiry_errors(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	inquiry(e, false, 0x80, 96); /* EVPD=0, PAGE CODE != 0 */
	assert_invalid_cdb(e, 2, -1);
	run_in(e, scsi_emul_inquiry, CDB(0x12, 0x02, 0, 0, 96, 0), TENV_BUF); /* CMDDT */
	assert_invalid_cdb(e, 1, 1);
	inquiry(e, true, 0x85, 96); /* unsupported VPD page */
	assert_invalid_cdb(e, 2, -1);
	inquiry(e, true, 0x8F, 96); /* 8Fh without 3PC */
	assert_invalid_cdb(e, 2, -1);
}

static void test_vpd_supported(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	inquiry(e, true, 0x00, 255);
	assert_good(e);
	const uint8_t want[] = {0x00, 0x00, 0x00, 6, 0x00, 0x80, 0x83, 0xB0, 0xB1, 0xB2};
	assert_int_equal(e->cmd.data_in_len, sizeof(want));
	assert_memory_equal(e->buf, want, sizeof(want));
	/* tpc but no copy manager page builder: still not listed */
	e->lun.info.tpc = true;
	inquiry(e, true, 0x00, 255);
	assert_int_equal(e->buf[3], 6);
}

static size_t fake_tpc_page(const struct scsi_lun *lun, uint8_t *b, size_t cap)
{
	(void)lun;
	assert_true(cap >= 8);
	assert_int_equal(b[4], 0); /* zeroed */
	memcpy(b + 4, "\x00\x01\x00\x00", 4);
	return 8;
}

static void test_vpd_tpc_hook(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	e->lun.info.tpc = true;
	scsi_vpd_tpc_page = fake_tpc_page;
	inquiry(e, true, 0x00, 255);
	const uint8_t want[] = {0x00, 0x00, 0x00, 7, 0x00, 0x80, 0x83, 0x8F, 0xB0, 0xB1, 0xB2};
	assert_memory_equal(e->buf, want, sizeof(want));
	inquiry(e, true, 0x8F, 255);
	assert_good(e);
	const uint8_t want8f[] = {0x00, 0x8F, 0x00, 0x04, 0x00, 0x01, 0x00, 0x00};
	assert_int_equal(e->cmd.data_in_len, 8);
	assert_memory_equal(e->buf, want8f, 8);
	e->lun.info.tpc = false;
	inquiry(e, true, 0x8F, 255);
	assert_invalid_cdb(e, 2, -1);
	scsi_vpd_tpc_page = NULL;
}

static void test_vpd_serial(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	inquiry(e, true, 0x80, 255);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 4 + 16);
	assert_memory_equal(e->buf, "\x00\x80\x00\x10", 4);
	assert_memory_equal(e->buf + 4, "0123456789abcdef", 16);
}

static void test_vpd_devid(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	inquiry(e, true, 0x83, 255);
	assert_good(e);
	const uint8_t *b = e->buf;
	size_t t10len = 8 + 16;
	assert_int_equal(e->cmd.data_in_len, 4 + 20 + 4 + t10len);
	assert_int_equal(b[1], 0x83);
	assert_int_equal(scsi_get_be16(b + 2), 20 + 4 + t10len);
	/* NAA: code set 1, PIV 0, assoc 00b, type 3, length 16 */
	assert_memory_equal(b + 4, "\x01\x03\x00\x10", 4);
	assert_memory_equal(b + 8, e->lun.info.naa, 16);
	/* T10 vendor ID: code set 2, type 1 */
	const uint8_t *d = b + 24;
	assert_int_equal(d[0], 0x02);
	assert_int_equal(d[1], 0x01);
	assert_int_equal(d[3], t10len);
	assert_memory_equal(d + 4, "VAAID   0123456789abcdef", t10len);
	/* truncated to the header: PAGE LENGTH still the full one */
	inquiry(e, true, 0x83, 4);
	assert_int_equal(e->cmd.data_in_len, 4);
	assert_int_equal(scsi_get_be16(e->buf + 2), 20 + 4 + t10len);
	assert_int_equal(e->buf[4], UNTOUCHED(e, 4));
}

static void test_vpd_block_limits(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	struct scsi_lun_info *in = &e->lun.info;
	in->max_unmap_lba_count = 0x10000;
	in->max_unmap_desc_count = 64;
	in->max_write_same_len = 0x123456789ull;
	inquiry(e, true, 0xB0, 255);
	assert_good(e);
	const uint8_t *b = e->buf;
	assert_int_equal(e->cmd.data_in_len, 64);
	assert_memory_equal(b, "\x00\xB0\x00\x3C", 4);
	assert_int_equal(b[4], 0x01); /* WSNZ */
	assert_int_equal(b[5], 1);    /* MAXIMUM COMPARE AND WRITE LENGTH */
	assert_int_equal(scsi_get_be16(b + 6), 8);
	assert_int_equal(scsi_get_be32(b + 8), 2048);
	assert_int_equal(scsi_get_be32(b + 12), 1024);
	assert_int_equal(scsi_get_be32(b + 16), 0);
	assert_int_equal(scsi_get_be32(b + 20), 0x10000);
	assert_int_equal(scsi_get_be32(b + 24), 64);
	assert_int_equal(scsi_get_be32(b + 28), 0);
	assert_int_equal(scsi_get_be32(b + 32), 0); /* UGAVALID=0 without a granularity */
	assert_true(scsi_get_be64(b + 36) == 0x123456789ull);
	for (int i = 44; i < 64; i++)
		assert_int_equal(b[i], 0);
	in->opt_unmap_gran = 2048;
	inquiry(e, true, 0xB0, 255);
	assert_int_equal(scsi_get_be32(b + 28), 2048);
	assert_int_equal(scsi_get_be32(b + 32), 0x80000000u); /* UGAVALID, alignment 0 */
}

static void test_vpd_bdc_lbp(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	inquiry(e, true, 0xB1, 255);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 64);
	assert_memory_equal(e->buf, "\x00\xB1\x00\x3C\x00\x01\x00\x00", 8);

	inquiry(e, true, 0xB2, 255);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 8);
	/* threshold exponent 11, LBPRZ only, provisioning type 2 (thin) */
	assert_memory_equal(e->buf, "\x00\xB2\x00\x04\x0B\x04\x02\x00", 8);
	struct scsi_lun_info *in = &e->lun.info;
	in->lbpu = in->lbpws = in->lbpws10 = in->anc_sup = true;
	in->lbprz = false;
	inquiry(e, true, 0xB2, 255);
	assert_int_equal(e->buf[5], 0x80 | 0x40 | 0x20 | 0x02); /* DP=0 */
}

/* ------------------------------------------------------------ READ CAPACITY */

static void test_read_capacity10(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	run_in(e, scsi_emul_read_capacity10, CDB(0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0), TENV_BUF);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 8);
	assert_int_equal(scsi_get_be32(e->buf), 2097151);
	assert_int_equal(scsi_get_be32(e->buf + 4), 512);
	/* last LBA FFFFFFFEh fits; one more block does not */
	e->lun.info.nblocks = 0xFFFFFFFFull;
	run_in(e, scsi_emul_read_capacity10, CDB(0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0), TENV_BUF);
	assert_int_equal(scsi_get_be32(e->buf), 0xFFFFFFFEu);
	e->lun.info.nblocks = 0x100000000ull;
	run_in(e, scsi_emul_read_capacity10, CDB(0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0), TENV_BUF);
	assert_int_equal(scsi_get_be32(e->buf), 0xFFFFFFFFu);
	/* PMI=0 with an LBA -> 24h at byte 2; PMI=1 accepted */
	run_in(e, scsi_emul_read_capacity10, CDB(0x25, 0, 0, 0, 0, 1, 0, 0, 0, 0), TENV_BUF);
	assert_invalid_cdb(e, 2, -1);
	run_in(e, scsi_emul_read_capacity10, CDB(0x25, 0, 0, 0, 0, 1, 0, 0, 1, 0), TENV_BUF);
	assert_good(e);
}

static void rc16(struct tenv *e, uint32_t alloc, uint8_t lba_lsb, uint8_t pmi)
{
	run_in(e, scsi_emul_read_capacity16,
	       CDB(0x9E, 0x10, 0, 0, 0, 0, 0, 0, 0, lba_lsb, (uint8_t)(alloc >> 24),
		   (uint8_t)(alloc >> 16), (uint8_t)(alloc >> 8), (uint8_t)alloc, pmi, 0),
	       TENV_BUF);
}

static void test_read_capacity16(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	e->lun.info.nblocks = 0x200000000ull;
	rc16(e, 32, 0, 0);
	assert_good(e);
	const uint8_t *b = e->buf;
	assert_int_equal(e->cmd.data_in_len, 32);
	assert_true(scsi_get_be64(b) == 0x1FFFFFFFFull);
	assert_int_equal(scsi_get_be32(b + 8), 512);
	assert_int_equal(b[12], 0);
	assert_int_equal(b[13], 3);    /* LBPPBE */
	assert_int_equal(b[14], 0x40); /* LBPME=0, LBPRZ=1 */
	for (int i = 15; i < 32; i++)
		assert_int_equal(b[i], 0);
	e->lun.info.lbpme = true;
	e->lun.info.lbprz = false;
	rc16(e, 64, 0, 0);
	assert_int_equal(e->cmd.data_in_len, 32);
	assert_int_equal(b[14], 0x80);
	rc16(e, 12, 0, 0); /* ALLOCATION LENGTH truncates */
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 12);
	assert_int_equal(b[12], UNTOUCHED(e, 12));
	rc16(e, 0, 0, 0);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 0);
	rc16(e, 32, 5, 0);
	assert_invalid_cdb(e, 2, -1);
	rc16(e, 32, 5, 1);
	assert_good(e);
}

/* -------------------------------------------------------------- MODE SENSE */

static void ms6(struct tenv *e, uint8_t b1, uint8_t b2, uint8_t sub, uint8_t alloc)
{
	run_in(e, scsi_emul_mode_sense6, CDB(0x1A, b1, b2, sub, alloc, 0), TENV_BUF);
}

static void ms10(struct tenv *e, uint8_t b1, uint8_t b2, uint8_t sub, uint16_t alloc)
{
	run_in(e, scsi_emul_mode_sense10,
	       CDB(0x5A, b1, b2, sub, 0, 0, 0, (uint8_t)(alloc >> 8), (uint8_t)alloc, 0), TENV_BUF);
}

/* Read-Write Error Recovery (SBC-4 6.5.8): LBPERE=1 (byte 7 bit 7), the rest 0 */
static const uint8_t rw_cur[12] = {0x01, 0x0A, 0, 0, 0, 0, 0, 0x80};
static const uint8_t caching_cur[20] = {0x08, 0x12};
static const uint8_t control_cur[12] = {0x0A, 0x0A, 0x00, 0x10, 0x00, 0x40};

static void test_mode_sense6_all(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	ms6(e, 0, 0x3F, 0, 255);
	assert_good(e);
	const uint8_t *b = e->buf;
	assert_int_equal(e->cmd.data_in_len, 4 + 8 + 12 + 20 + 12);
	assert_int_equal(b[0], 55); /* MODE DATA LENGTH */
	assert_int_equal(b[1], 0);
	assert_int_equal(b[2], 0x10); /* DPOFUA=1, WP=0 */
	assert_int_equal(b[3], 8);
	assert_int_equal(scsi_get_be32(b + 4), 2097152);
	assert_int_equal(b[8], 0);
	assert_int_equal(scsi_get_be24(b + 9), 512);
	assert_memory_equal(b + 12, rw_cur, 12);
	assert_memory_equal(b + 24, caching_cur, 20);
	assert_memory_equal(b + 44, control_cur, 12);
	/* 3Fh/FFh: also the subpages: Logical Block Provisioning 1Ch/02h (SBC-4 6.5.7), here
	 * with no soft threshold configured (descriptor not ENABLED) */
	ms6(e, 0, 0x3F, 0xFF, 255);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 80);
	assert_memory_equal(b + 44, control_cur, 12);
	const uint8_t lbp_off[24] = {0x5C, 0x02, 0x00, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				     0x01, 0x02, 0, 0, 0, 0, 0, 0};
	assert_memory_equal(b + 56, lbp_off, 24);
	/* 1Ch/02h alone, soft threshold 819 sets of 2^11 blocks: ENABLED, soft, arming 001b,
	 * used resources */
	e->lun.info.soft_threshold_blocks = 819ull << 11;
	ms6(e, 0x08, 0x1C, 0x02, 255);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 4 + 24);
	const uint8_t lbp_on[24] = {0x5C, 0x02, 0x00, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				    0x81, 0x02, 0, 0, 0x00, 0x00, 0x03, 0x33};
	assert_memory_equal(b + 4, lbp_on, 24);
	/* THRESHOLD COUNT rounds up to whole threshold sets */
	e->lun.info.soft_threshold_blocks = (819ull << 11) + 1;
	ms6(e, 0x08, 0x1C, 0x02, 255);
	assert_good(e);
	assert_int_equal(scsi_get_be32(b + 4 + 20), 820);
	/* 1Ch/00h does not exist: INVALID FIELD IN CDB at the SUBPAGE CODE */
	ms6(e, 0x08, 0x1C, 0x00, 255);
	assert_invalid_cdb(e, 3, 7);
}

static void test_mode_sense6_pages(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	const uint8_t *b = e->buf;
	ms6(e, 0x08, 0x08, 0, 255); /* DBD, caching */
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 24);
	assert_int_equal(b[0], 23);
	assert_int_equal(b[3], 0);
	assert_memory_equal(b + 4, caching_cur, 20);
	ms6(e, 0x08, 0x0A, 0, 255);
	assert_int_equal(e->cmd.data_in_len, 16);
	assert_memory_equal(b + 4, control_cur, 12);
	ms6(e, 0x08, 0x0A, 0xFF, 255); /* page + all its subpages */
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 16);
	ms6(e, 0x08, 0x01, 0, 255); /* Read-Write Error Recovery */
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 16);
	assert_memory_equal(b + 4, rw_cur, 12);
	/* changeable (PC 01b): all-zero masks (LBPERE is not changeable) */
	ms6(e, 0x08, 0x40 | 0x3F, 0, 255);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 48);
	const uint8_t chg[44] = {0x01, 0x0A, [12] = 0x08, 0x12, [32] = 0x0A, 0x0A};
	assert_memory_equal(b + 4, chg, 44);
	/* default (PC 10b) = current */
	ms6(e, 0x08, 0x80 | 0x0A, 0, 255);
	assert_good(e);
	assert_memory_equal(b + 4, control_cur, 12);
}

static void test_mode_sense_errors(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	ms6(e, 0, 0xC0 | 0x08, 0, 255); /* saved values */
	assert_field(e, ASC_SAVING_PARAMS_NOT_SUPPORTED, true, 2, 7);
	ms10(e, 0, 0xC0 | 0x3F, 0, 255);
	assert_field(e, ASC_SAVING_PARAMS_NOT_SUPPORTED, true, 2, 7);
	ms6(e, 0, 0x19, 0, 255); /* unsupported page */
	assert_invalid_cdb(e, 2, 5);
	ms6(e, 0, 0x19, 0xFF, 255);
	assert_invalid_cdb(e, 2, 5);
	ms6(e, 0, 0x08, 0x01, 255); /* known page, unsupported subpage */
	assert_invalid_cdb(e, 3, 7);
	ms10(e, 0, 0x3F, 0x05, 255);
	assert_invalid_cdb(e, 3, 7);
}

static void test_mode_sense_alloc_and_big(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	ms6(e, 0, 0x3F, 0, 10);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 10);
	assert_int_equal(e->buf[0], 55); /* full length */
	assert_int_equal(e->buf[10], UNTOUCHED(e, 10));
	ms6(e, 0, 0x3F, 0, 0);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 0);
	/* more blocks than 32 bits: short descriptor reports FFFFFFFFh */
	e->lun.info.nblocks = 0x123456789ull;
	ms6(e, 0, 0x08, 0, 255);
	assert_int_equal(scsi_get_be32(e->buf + 4), 0xFFFFFFFFu);
	ms10(e, 0, 0x08, 0, 255);
	assert_int_equal(scsi_get_be32(e->buf + 8), 0xFFFFFFFFu);
}

static void test_mode_sense10(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	const uint8_t *b = e->buf;
	e->lun.info.nblocks = 0x123456789ull;
	e->lun.info.block_size = 4096;
	ms10(e, 0x10, 0x3F, 0, 1024); /* LLBAA */
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 8 + 16 + 44);
	assert_int_equal(scsi_get_be16(b), 66);
	assert_int_equal(b[3], 0x10);
	assert_int_equal(b[4], 0x01); /* LONGLBA */
	assert_int_equal(scsi_get_be16(b + 6), 16);
	assert_true(scsi_get_be64(b + 8) == 0x123456789ull);
	assert_int_equal(scsi_get_be32(b + 16), 0);
	assert_int_equal(scsi_get_be32(b + 20), 4096);
	assert_memory_equal(b + 24, rw_cur, 12);
	assert_memory_equal(b + 36, caching_cur, 20);
	assert_memory_equal(b + 56, control_cur, 12);
	ms10(e, 0x00, 0x3F, 0, 1024); /* short descriptor */
	assert_int_equal(e->cmd.data_in_len, 8 + 8 + 44);
	assert_int_equal(scsi_get_be16(b), 58);
	assert_int_equal(b[4], 0);
	assert_int_equal(scsi_get_be16(b + 6), 8);
	assert_int_equal(scsi_get_be24(b + 13), 4096);
	ms10(e, 0x18, 0x0A, 0, 1024); /* LLBAA + DBD: no descriptor, LONGLBA=0 */
	assert_int_equal(e->cmd.data_in_len, 8 + 12);
	assert_int_equal(b[4], 0);
	assert_int_equal(scsi_get_be16(b + 6), 0);
	ms10(e, 0x00, 0x3F, 0, 9); /* truncated */
	assert_int_equal(e->cmd.data_in_len, 9);
	assert_int_equal(scsi_get_be16(b), 58);
}

/* ------------------------------------------------------------- MODE SELECT */

static void msel6(struct tenv *e, uint8_t b1, const uint8_t *list, uint8_t len)
{
	memcpy(e->buf, list, len);
	run_cmd(e, scsi_emul_mode_select6, CDB(0x15, b1, 0, 0, len, 0), len);
}

static void msel10(struct tenv *e, uint8_t b1, const uint8_t *list, uint16_t len)
{
	memcpy(e->buf, list, len);
	run_cmd(e, scsi_emul_mode_select10,
		CDB(0x55, b1, 0, 0, 0, 0, 0, (uint8_t)(len >> 8), (uint8_t)len, 0), len);
}

static void test_mode_select_roundtrip(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	uint8_t l[256];
	/* What MODE SENSE returns, sent back, is accepted (MODE DATA LENGTH reserved). */
	ms6(e, 0, 0x3F, 0, 255);
	memcpy(l, e->buf, 56);
	msel6(e, 0x10, l, 56);
	assert_good(e);
	l[0] = 0;
	l[2] = 0; /* DPOFUA/WP ignored in MODE SELECT */
	msel6(e, 0x10, l, 56);
	assert_good(e);
	/* header + descriptor only, header only, one page without descriptor */
	msel6(e, 0x10, l, 12);
	assert_good(e);
	l[3] = 0;
	msel6(e, 0x10, l, 4);
	assert_good(e);
	memcpy(l + 4, control_cur, 12);
	msel6(e, 0x10, l, 16);
	assert_good(e);
	/* NUMBER OF LOGICAL BLOCKS 0: no change requested */
	ms6(e, 0, 0x08, 0, 255);
	memcpy(l, e->buf, 32);
	memset(l + 4, 0, 4);
	msel6(e, 0x10, l, 32);
	assert_good(e);
	/* MODE SELECT(10) with a long LBA descriptor */
	ms10(e, 0x10, 0x3F, 0, 255);
	memcpy(l, e->buf, 68);
	msel10(e, 0x10, l, 68);
	assert_good(e);
	/* PARAMETER LIST LENGTH 0: nothing to do, even with PF=0 */
	msel6(e, 0x00, l, 0);
	assert_good(e);
}

static void test_mode_select_cdb_errors(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	uint8_t l[4] = {0};
	msel6(e, 0x11, l, 4); /* SP=1 */
	assert_invalid_cdb(e, 1, 0);
	msel10(e, 0x11, l, 0); /* SP=1 refused even without data */
	assert_invalid_cdb(e, 1, 0);
	msel6(e, 0x00, l, 4); /* PF=0 */
	assert_invalid_cdb(e, 1, 4);
}

static void test_mode_select_list_errors(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	uint8_t l[256];
	ms6(e, 0, 0x3F, 0, 255);
	uint8_t good[56];
	memcpy(good, e->buf, 56);

	/* Each change of a field that is not changeable -> 26h with the field pointer at
	 * the first differing byte (and bit, or no bit for a whole field). The list: 4-byte
	 * header, 8-byte block descriptor, pages 01h at 12, 08h at 24, 0Ah at 44. */
	static const struct {
		const char *what; /* (the expected byte/bit tells a failing case apart) */
		uint16_t at;
		uint8_t mask, val; /* l[at] = (l[at] & ~mask) | val */
		uint16_t byte;
		int bit;
	} bad[] = {
		{"LBPERE=0 (Read-Write Error Recovery)", 12 + 7, 0x80, 0x00, 19, 7},
		{"WCE=1 (caching)", 24 + 2, 0x04, 0x04, 26, 2},
		{"D_SENSE=1 (control)", 44 + 2, 0x04, 0x04, 46, 2},
		{"logical block length 512 -> 4096", 10, 0xFF, 0x10, 10, 4},
		{"capacity", 7, 0xFF, 0x01, 7, 0},
		{"MEDIUM TYPE", 1, 0xFF, 0x05, 1, 2},
		{"BLOCK DESCRIPTOR LENGTH 5", 3, 0xFF, 0x05, 3, -1},
		{"unsupported page 19h", 44, 0xFF, 0x19, 44, 5},
		{"wrong PAGE LENGTH", 25, 0xFF, 0x0A, 25, -1},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(l, good, 56);
		l[bad[i].at] = (uint8_t)((l[bad[i].at] & ~bad[i].mask) | bad[i].val);
		msel6(e, 0x10, l, 56);
		assert_field(e, ASC_INVALID_FIELD_IN_PARAM_LIST, false, bad[i].byte, bad[i].bit);
	}
	/* PS bit is ignored */
	memcpy(l, good, 56);
	l[24] |= 0x80;
	msel6(e, 0x10, l, 56);
	assert_good(e);
}

static void test_mode_select_short_lists(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	ms6(e, 0, 0x3F, 0, 255);
	uint8_t good[56];
	memcpy(good, e->buf, 56);
	msel6(e, 0x10, good, 3); /* header cut */
	assert_sense(e, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH_ERROR);
	msel6(e, 0x10, good, 10); /* descriptor cut */
	assert_sense(e, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH_ERROR);
	msel6(e, 0x10, good, 13); /* page header cut */
	assert_sense(e, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH_ERROR);
	msel6(e, 0x10, good, 52); /* control page cut */
	assert_sense(e, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH_ERROR);
	/* the Data-Out buffer shorter than PARAMETER LIST LENGTH */
	memcpy(e->buf, good, 56);
	run_cmd(e, scsi_emul_mode_select6, CDB(0x15, 0x10, 0, 0, 56, 0), 20);
	assert_sense(e, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH_ERROR);
	uint8_t h10[8] = {0};
	msel10(e, 0x10, h10, 7);
	assert_sense(e, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH_ERROR);
	msel10(e, 0x10, h10, 8);
	assert_good(e);
	h10[4] = 1; /* LONGLBA with an 8-byte descriptor length */
	h10[7] = 8;
	uint8_t l10[16] = {0};
	memcpy(l10, h10, 8);
	msel10(e, 0x10, l10, 16);
	assert_field(e, ASC_INVALID_FIELD_IN_PARAM_LIST, false, 6, -1);
}

/* --------------------------------------------------------------- LOG SENSE */

static void logsense_ptr(struct tenv *e, uint8_t b1, uint8_t b2, uint8_t sub, uint16_t ptr,
			uint16_t alloc)
{
	run_in(e, scsi_emul_log_sense,
	       CDB(0x4D, b1, b2, sub, 0, (uint8_t)(ptr >> 8), (uint8_t)ptr, (uint8_t)(alloc >> 8),
		   (uint8_t)alloc, 0),
	       TENV_BUF);
}

static void logsense(struct tenv *e, uint8_t b1, uint8_t b2, uint8_t sub, uint16_t alloc)
{
	logsense_ptr(e, b1, b2, sub, 0, alloc);
}

static void test_log_sense(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	logsense(e, 0, 0x40 | 0x00, 0, 255); /* PC 01b cumulative */
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 6);
	assert_memory_equal(e->buf, "\x00\x00\x00\x02\x00\x0C", 6);
	logsense(e, 0, 0x00, 0xFF, 255);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 10);
	assert_memory_equal(e->buf, "\x40\xFF\x00\x06\x00\x00\x00\xFF\x0C\x00", 10);
	logsense(e, 0, 0x00, 0xFF, 3);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 3);
	assert_int_equal(e->buf[3], UNTOUCHED(e, 3));
}

static void test_log_sense_errors(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	logsense(e, 0x02, 0, 0, 255); /* PPC */
	assert_invalid_cdb(e, 1, 1);
	logsense(e, 0x01, 0, 0, 255); /* SP */
	assert_invalid_cdb(e, 1, 0);
	logsense(e, 0, 0x30, 0, 255);
	assert_invalid_cdb(e, 2, 5);
	logsense(e, 0, 0x0D, 0, 255); /* Temperature: not supported */
	assert_invalid_cdb(e, 2, 5);
	logsense(e, 0, 0x0C, 0x01, 255); /* 0Ch exists, subpage 01h does not */
	assert_invalid_cdb(e, 3, 7);
	logsense(e, 0, 0x00, 0x05, 255);
	assert_invalid_cdb(e, 3, 7);
}

static void fake_resources(const struct scsi_lun *lun, uint64_t *avail, uint64_t *used)
{
	(void)lun;
	*avail = 300;
	*used = 0x1FFFFFFFFull; /* above 32 bits: saturates */
}

/* Logical Block Provisioning log page (SBC-4 6.4.6): DS=1 (the page's table fixes it),
 * 0001h available, 0002h used, in threshold sets, SCOPE 10b (a shared pool); zeros when
 * the LUN has no resources hook. */
static void test_log_sense_lbp(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	logsense(e, 0, 0x40 | 0x0C, 0, 255);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 4 + 24);
	const uint8_t none[28] = {0x8C, 0, 0, 24, 0, 1, 0x23, 8, 0, 0, 0, 0, 0x02, 0, 0, 0,
				  0, 2, 0x23, 8, 0, 0, 0, 0, 0x02, 0, 0, 0};
	assert_memory_equal(e->buf, none, 28);
	e->lun.lbp_resources = fake_resources;
	logsense(e, 0, 0x40 | 0x0C, 0, 255);
	assert_good(e);
	const uint8_t some[28] = {0x8C, 0, 0, 24, 0, 1, 0x23, 8, 0, 0, 0x01, 0x2C, 0x02, 0, 0, 0,
				  0, 2, 0x23, 8, 0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0, 0, 0};
	assert_memory_equal(e->buf, some, 28);
	logsense(e, 0, 0x40 | 0x0C, 0, 10); /* truncated; PAGE LENGTH stays 24 */
	assert_int_equal(e->cmd.data_in_len, 10);
	assert_int_equal(e->buf[3], 24);
	/* PARAMETER POINTER (SPC-4 6.8): from that parameter code on */
	logsense_ptr(e, 0, 0x40 | 0x0C, 0, 0x0001, 255);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 28);
	assert_memory_equal(e->buf, some, 28);
	logsense_ptr(e, 0, 0x40 | 0x0C, 0, 0x0002, 255);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 4 + 12);
	const uint8_t used_only[16] = {0x8C, 0, 0, 12, 0, 2, 0x23, 8, 0xFF, 0xFF, 0xFF, 0xFF,
				       0x02, 0, 0, 0};
	assert_memory_equal(e->buf, used_only, 16);
	/* above the largest parameter code -> INVALID FIELD IN CDB at byte 5 */
	logsense_ptr(e, 0, 0x40 | 0x0C, 0, 0x0003, 255);
	assert_invalid_cdb(e, 5, -1);
	logsense_ptr(e, 0, 0x40 | 0x0C, 0, 0xFFFF, 255);
	assert_invalid_cdb(e, 5, -1);
	/* the supported-pages lists have no parameters: any non-zero pointer is refused */
	logsense_ptr(e, 0, 0x00, 0, 0x0001, 255);
	assert_invalid_cdb(e, 5, -1);
	logsense_ptr(e, 0, 0x00, 0xFF, 0x0100, 255);
	assert_invalid_cdb(e, 5, -1);
}

/* ------------------------------------------- TUR, REQUEST SENSE, START STOP */

static void test_tur(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	run_cmd(e, scsi_emul_test_unit_ready, CDB(0, 0, 0, 0, 0, 0), 0);
	assert_good(e);
}

static void test_request_sense(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	run_in(e, scsi_emul_request_sense, CDB(0x03, 0, 0, 0, 252, 0), TENV_BUF);
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 18);
	const uint8_t nosense[18] = {0x70, 0, 0, 0, 0, 0, 0, 10};
	assert_memory_equal(e->buf, nosense, 18);

	scsi_lun_post_ua(&e->lun, ASC_POWER_ON_RESET);
	scsi_lun_post_ua(&e->lun, ASC_CAPACITY_DATA_CHANGED);
	run_in(e, scsi_emul_request_sense, CDB(0x03, 0, 0, 0, 252, 0), TENV_BUF);
	assert_good(e);
	assert_int_equal(e->buf[2], SK_UNIT_ATTENTION);
	assert_int_equal(e->buf[12], 0x29);
	assert_int_equal(e->buf[13], 0x00);
	assert_int_equal(e->lun.n_ua, 1);
	run_in(e, scsi_emul_request_sense, CDB(0x03, 0, 0, 0, 8, 0), TENV_BUF); /* truncated */
	assert_good(e);
	assert_int_equal(e->cmd.data_in_len, 8);
	assert_int_equal(e->buf[2], SK_UNIT_ATTENTION);
	assert_int_equal(e->buf[8], UNTOUCHED(e, 8));
	assert_int_equal(e->lun.n_ua, 0);

	run_in(e, scsi_emul_request_sense, CDB(0x03, 0x01, 0, 0, 252, 0), TENV_BUF); /* DESC */
	assert_invalid_cdb(e, 1, 0);
}

static void ssu(struct tenv *e, uint8_t b1, uint8_t b4)
{
	run_cmd(e, scsi_emul_start_stop_unit, CDB(0x1B, b1, 0, 0, b4, 0), 0);
}

static void test_start_stop_unit(void **state)
{
	(void)state;
	struct tenv *e = tenv_new();
	ssu(e, 0, 0x01); /* START */
	assert_good(e);
	ssu(e, 0x01, 0x00); /* IMMED, STOP */
	assert_good(e);
	ssu(e, 0, 0x03); /* LOEJ + START: load, nothing to do */
	assert_good(e);
	ssu(e, 0, 0x04); /* NO_FLUSH */
	assert_good(e);
	ssu(e, 0, 0x02); /* eject a non-removable medium */
	assert_invalid_cdb(e, 4, 1);
	const uint8_t ok[] = {0x1, 0x2, 0x3, 0x7, 0xA, 0xB};
	for (size_t i = 0; i < sizeof(ok); i++) {
		ssu(e, 0, (uint8_t)(ok[i] << 4 | 0x02)); /* LOEJ ignored with a power condition */
		assert_good(e);
	}
	const uint8_t bad[] = {0x4, 0x5, 0x6, 0x8, 0x9, 0xC, 0xF};
	for (size_t i = 0; i < sizeof(bad); i++) {
		ssu(e, 0, (uint8_t)(bad[i] << 4));
		assert_invalid_cdb(e, 4, 7);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inquiry_standard),
		cmocka_unit_test(test_inquiry_alloc_len),
		cmocka_unit_test(test_inquiry_errors),
		cmocka_unit_test(test_vpd_supported),
		cmocka_unit_test(test_vpd_tpc_hook),
		cmocka_unit_test(test_vpd_serial),
		cmocka_unit_test(test_vpd_devid),
		cmocka_unit_test(test_vpd_block_limits),
		cmocka_unit_test(test_vpd_bdc_lbp),
		cmocka_unit_test(test_read_capacity10),
		cmocka_unit_test(test_read_capacity16),
		cmocka_unit_test(test_mode_sense6_all),
		cmocka_unit_test(test_mode_sense6_pages),
		cmocka_unit_test(test_mode_sense_errors),
		cmocka_unit_test(test_mode_sense_alloc_and_big),
		cmocka_unit_test(test_mode_sense10),
		cmocka_unit_test(test_mode_select_roundtrip),
		cmocka_unit_test(test_mode_select_cdb_errors),
		cmocka_unit_test(test_mode_select_list_errors),
		cmocka_unit_test(test_mode_select_short_lists),
		cmocka_unit_test(test_log_sense),
		cmocka_unit_test(test_log_sense_errors),
		cmocka_unit_test(test_log_sense_lbp),
		cmocka_unit_test(test_tur),
		cmocka_unit_test(test_request_sense),
		cmocka_unit_test(test_start_stop_unit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
