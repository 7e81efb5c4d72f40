/*
 * Shared fixture of the SCSI core unit tests (test_scsi_*.c,
 * test_handlers_dispatch.c): a LUN with hand-filled identity, one command
 * with an iovec over a local buffer, and a done callback that counts
 * completions. run_cmd() executes a handler synchronously and checks it
 * completed exactly once.
 */
#ifndef VAAID_SCSI_TEST_ENV_H
#define VAAID_SCSI_TEST_ENV_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "vaaid/scsi.h"

#define TENV_BUF 8192

struct tenv {
	struct scsi_lun lun;
	struct scsi_cmd cmd;
	uint8_t cdb[32];
	uint8_t buf[TENV_BUF];
	struct iovec iov[2];
	int completions;
};

static inline void tenv_done(struct scsi_cmd *c)
{
	struct tenv *e = c->transport_priv;
	e->completions++;
}

static inline void tenv_lun_init(struct scsi_lun *lun)
{
	memset(lun, 0, sizeof(*lun));
	struct scsi_lun_info *in = &lun->info;
	snprintf(in->vendor, sizeof(in->vendor), "VAAID");
	snprintf(in->product, sizeof(in->product), "VAAID THIN LUN");
	snprintf(in->revision, sizeof(in->revision), "0001");
	snprintf(in->serial, sizeof(in->serial), "0123456789abcdef");
	for (int i = 0; i < 16; i++)
		in->naa[i] = (uint8_t)(0x60 + i);
	in->block_size = 512;
	in->nblocks = 2097152; /* 1 GiB */
	in->lbppbe = 3;
	in->max_xfer_blocks = 2048;
	in->opt_xfer_blocks = 1024;
	in->opt_xfer_gran = 8;
	in->provisioning_type = 2;
	in->lbprz = true;
	in->threshold_exponent = 11;
	in->max_caw_len = 1;
	lun->name = "test";
}

static inline struct tenv *tenv_new(void)
{
	static struct tenv e;
	memset(&e, 0, sizeof(e));
	tenv_lun_init(&e.lun);
	return &e;
}

/*
 * Run fn on a CDB (cdb_len bytes). buflen is the data buffer size (the
 * data-in buffer, or the data-out list already placed in e->buf). The buffer
 * is split in two iovecs to exercise the iovec paths.
 */
static inline void tenv_setup(struct tenv *e, const uint8_t *cdb, size_t cdb_len, size_t buflen)
{
	memset(e->cdb, 0, sizeof(e->cdb));
	memcpy(e->cdb, cdb, cdb_len);
	struct scsi_cmd *c = &e->cmd;
	memset(c, 0, sizeof(*c));
	c->cdb = e->cdb;
	c->cdb_len = cdb_len;
	size_t half = buflen / 2;
	e->iov[0] = (struct iovec){.iov_base = e->buf, .iov_len = half};
	e->iov[1] = (struct iovec){.iov_base = e->buf + half, .iov_len = buflen - half};
	c->iov = e->iov;
	c->iovcnt = 2;
	c->iov_len = buflen;
	c->lun = &e->lun;
	c->done = tenv_done;
	c->transport_priv = e;
	c->data_in_len = 0xDEAD;
	e->completions = 0;
}

static inline void run_cmd(struct tenv *e, void (*fn)(struct scsi_cmd *), const uint8_t *cdb,
			   size_t cdb_len, size_t buflen)
{
	tenv_setup(e, cdb, cdb_len, buflen);
	fn(&e->cmd);
	assert_int_equal(e->completions, 1);
}

/* CDB literal helper: CDB(0x12, 0, 0, 0, 96, 0) -> pointer and length. */
#define CDB(...) (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})

/*
 * What a byte the command did not produce holds: inside the data-in buffer
 * it is zeroed (never stale ring data, src/scsi/data.c), past the buffer the
 * pattern run_in() wrote stays.
 */
#define UNTOUCHED(e, i) ((size_t)(i) < (e)->cmd.iov_len ? 0 : 0xA5)

/* Data-in command: clear the buffer with a pattern first so untouched bytes show. */
static inline void run_in(struct tenv *e, void (*fn)(struct scsi_cmd *), const uint8_t *cdb,
		   size_t cdb_len, size_t buflen)
{
	memset(e->buf, 0xA5, sizeof(e->buf));
	run_cmd(e, fn, cdb, cdb_len, buflen);
}

static inline void assert_good(struct tenv *e)
{
	assert_int_equal(e->cmd.status, SAM_STAT_GOOD);
	assert_int_equal(e->cmd.sense_len, 0);
}

static inline void assert_sense(struct tenv *e, uint8_t key, uint16_t asc)
{
	const uint8_t *s = e->cmd.sense;
	assert_int_equal(e->cmd.status, SAM_STAT_CHECK_CONDITION);
	assert_int_equal(e->cmd.sense_len, 18);
	assert_int_equal(s[0] & 0x7F, 0x70);
	assert_int_equal(s[7], 10);
	assert_int_equal(s[2] & 0x0F, key);
	assert_int_equal(s[12], asc >> 8);
	assert_int_equal(s[13], asc & 0xFF);
}

/* ILLEGAL REQUEST with a field pointer; bit < 0: BPV=0. */
static inline void assert_field(struct tenv *e, uint16_t asc, bool in_cdb, uint16_t byte, int bit)
{
	const uint8_t *s = e->cmd.sense;
	assert_sense(e, SK_ILLEGAL_REQUEST, asc);
	assert_true(s[15] & 0x80); /* SKSV */
	assert_int_equal(!!(s[15] & 0x40), in_cdb);
	if (bit >= 0) {
		assert_true(s[15] & 0x08);
		assert_int_equal(s[15] & 7, bit);
	} else {
		assert_false(s[15] & 0x08);
	}
	assert_int_equal(s[16] << 8 | s[17], byte);
}

static inline void assert_invalid_cdb(struct tenv *e, uint16_t byte, int bit)
{
	assert_field(e, ASC_INVALID_FIELD_IN_CDB, true, byte, bit);
}

#endif
