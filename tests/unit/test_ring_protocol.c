/*
 * The TCMU ring protocol end to end, without the reactor: the simulated
 * kernel (src/sim/kernel.c) and the engine's ring code (src/tcmu/ring.c) on
 * the same memfd, the test playing the engine by hand.
 *
 * How this file works: each test creates a simk, maps its memfd a second
 * time (the engine's view, like the daemon's UIO map) and attaches a
 * tcmu_ring to it. Commands are queued with simk_submit(), taken with
 * tcmu_ring_next(), answered with tcmu_ring_complete() + a doorbell write and
 * collected with simk_reap(). Data patterns are derived from a per-command
 * seed carried in the CDB so either side can check the other's bytes.
 * Malformed-entry tests corrupt the entry in the map between submit and
 * tcmu_ring_next(). The last test runs the engine on its own thread.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/tcmu/tcmu_abi.h"
#include "vaaid/ring.h"
#include "vaaid/rng.h"
#include "vaaid/sim.h"

struct env {
	struct simk *k;
	uint8_t *map; /* the engine's mapping */
	size_t map_size;
	struct tcmu_ring r;
};

static void env_open(struct env *e, size_t cmdr, size_t data)
{
	memset(e, 0, sizeof(*e));
	assert_int_equal(simk_create(cmdr, data, &e->k), 0);
	e->map_size = simk_map_size(e->k);
	e->map = mmap(NULL, e->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, simk_map_fd(e->k), 0);
	assert_true(e->map != MAP_FAILED);
	assert_int_equal(tcmu_ring_attach(&e->r, e->map, e->map_size), 0);
}

static void env_close(struct env *e)
{
	munmap(e->map, e->map_size);
	simk_destroy(e->k);
}

static void doorbell(struct env *e)
{
	uint64_t one = 1;
	assert_int_equal(write(simk_doorbell_fd(e->k), &one, 8), 8);
}

static uint8_t pat(uint64_t seed, size_t i)
{
	return (uint8_t)(seed * 131 + i * 7 + (i >> 8) + (i >> 16));
}

/* CDB carrying seed in bytes 2..9: WRITE(16) or READ(16). */
static void mk_cdb16(uint8_t *cdb, uint8_t op, uint64_t seed)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	for (int i = 0; i < 8; i++)
		cdb[2 + i] = (uint8_t)(seed >> (8 * (7 - i)));
}

static uint64_t cdb_seed(const uint8_t *cdb)
{
	uint64_t s = 0;
	for (int i = 0; i < 8; i++)
		s = s << 8 | cdb[2 + i];
	return s;
}

static bool iov_matches(const struct tcmu_ring_cmd *c, uint64_t seed, size_t len)
{
	size_t off = 0;
	for (int i = 0; i < c->iovcnt; i++)
		for (size_t j = 0; j < c->iov[i].iov_len; j++, off++)
			if (off < len && ((uint8_t *)c->iov[i].iov_base)[j] != pat(seed, off))
				return false;
	return off == c->data_len;
}

static void iov_fill(const struct tcmu_ring_cmd *c, uint64_t seed)
{
	size_t off = 0;
	for (int i = 0; i < c->iovcnt; i++)
		for (size_t j = 0; j < c->iov[i].iov_len; j++, off++)
			((uint8_t *)c->iov[i].iov_base)[j] = pat(seed, off);
}

static uint8_t *pattern_buf(uint64_t seed, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);
	assert_non_null(b);
	for (size_t i = 0; i < len; i++)
		b[i] = pat(seed, i);
	return b;
}

/* Every iovec lies in the data area and adjacent iovecs are not contiguous (coalesced). */
static void check_iov_shape(const struct env *e, const struct tcmu_ring_cmd *c)
{
	uint8_t *data = e->map + e->r.cmdr_off + e->r.cmdr_size;
	for (int i = 0; i < c->iovcnt; i++) {
		uint8_t *b = c->iov[i].iov_base;
		assert_true(b >= data && b + c->iov[i].iov_len <= e->map + e->map_size);
		assert_int_equal((size_t)(b - data) % 4096, 0);
		if (i + 1 < c->iovcnt) {
			assert_int_equal(c->iov[i].iov_len % 4096, 0);
			assert_ptr_not_equal(b + c->iov[i].iov_len, c->iov[i + 1].iov_base);
		}
	}
}

/* ------------------------------------------------------------------ tests */

static void test_layout(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, 1 << 20, 1 << 20);
	struct tcmu_mailbox mb;
	memcpy(&mb, e.map, sizeof(mb));
	assert_int_equal(mb.version, 2);
	assert_int_equal(mb.flags, TCMU_MAILBOX_FLAG_CAP_OOOC | TCMU_MAILBOX_FLAG_CAP_READ_LEN);
	assert_int_equal(mb.cmdr_off, sizeof(struct tcmu_mailbox));
	assert_int_equal(mb.cmdr_off + mb.cmdr_size, 1 << 20); /* data area page aligned */
	assert_int_equal(e.map_size, 2u << 20);
	assert_int_equal(mb.cmd_head, 0);
	assert_int_equal(mb.cmd_tail, 0);
	uint8_t cdb[16];
	struct tcmu_ring_cmd c;
	assert_int_equal(tcmu_ring_next(&e.r, &c), 0);
	assert_int_equal(tcmu_ring_complete(&e.r, 1, 0, NULL, 0, -1), -ENOSPC);
	mk_cdb16(cdb, 0x88, 1);
	assert_int_equal(simk_submit(e.k, cdb, 5, NULL, 0, 0, 1), -EINVAL); /* shorter than 16 */
	env_close(&e);
}

static void test_data_out_scattered(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, 1 << 20, 1 << 20);
	const size_t len = 9 * 4096 + 100;
	uint8_t cdb[16];
	mk_cdb16(cdb, 0x8A, 42);
	uint8_t *buf = pattern_buf(42, len);
	assert_int_equal(simk_submit(e.k, cdb, 16, buf, len, 0, 7), 0);
	assert_int_equal(simk_inflight(e.k), 1);
	uint64_t ev = 0;
	assert_int_equal(read(simk_irq_fd(e.k), &ev, 8), 8);
	assert_true(ev >= 1);

	struct tcmu_ring_cmd c;
	assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
	assert_int_equal(c.cdb_len, 16);
	assert_memory_equal(c.cdb, cdb, 16);
	assert_int_equal(c.data_len, len);
	assert_true(c.iovcnt > 1);           /* scattered */
	assert_true((size_t)c.iovcnt < 10);  /* some blocks coalesced */
	check_iov_shape(&e, &c);
	assert_true(iov_matches(&c, 42, len));

	struct tcmu_ring_cmd none;
	assert_int_equal(tcmu_ring_next(&e.r, &none), 0);
	assert_int_equal(tcmu_ring_complete(&e.r, c.cmd_id, 0, NULL, 0, -1), 0);
	tcmu_ring_cmd_release(&c);

	struct simk_result res[4];
	assert_int_equal(simk_reap(e.k, res, 4, 0), 0); /* no doorbell yet */
	doorbell(&e);
	assert_int_equal(simk_reap(e.k, res, 4, 1000), 1);
	assert_int_equal(res[0].tag, 7);
	assert_int_equal(res[0].status, 0);
	assert_int_equal(res[0].sense_len, 0);
	assert_int_equal(res[0].data_in_len, 0);
	assert_null(res[0].data_in);
	assert_int_equal(simk_inflight(e.k), 0);
	free(buf);
	env_close(&e);
}

static void test_data_in_read_len(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, 1 << 20, 1 << 20);
	const size_t in_len = 3 * 4096 + 10;
	uint8_t cdb[16];
	for (int i = 0; i < 3; i++) {
		mk_cdb16(cdb, 0x88, 100 + i);
		assert_int_equal(simk_submit(e.k, cdb, 16, NULL, 0, in_len, 100 + i), 0);
	}
	long rls[3] = {5000, -1, 0}; /* reported, not reported, reported as 0 */
	for (int i = 0; i < 3; i++) {
		struct tcmu_ring_cmd c;
		assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
		assert_int_equal(c.data_len, in_len);
		check_iov_shape(&e, &c);
		iov_fill(&c, cdb_seed(c.cdb));
		uint32_t tail = tcmu_abi_load_tail(e.map);
		assert_int_equal(tcmu_ring_complete(&e.r, c.cmd_id, 0, NULL, 0, rls[i]), 0);
		/* The response is in the slot at the old tail. */
		struct tcmu_cmd_entry ent;
		memcpy(&ent, e.map + e.r.cmdr_off + tail, sizeof(ent));
		assert_int_equal(ent.hdr.cmd_id, c.cmd_id);
		assert_int_equal(tcmu_hdr_get_op(ent.hdr.len_op), TCMU_OP_CMD);
		if (rls[i] >= 0) {
			assert_int_equal(ent.hdr.uflags, TCMU_UFLAG_READ_LEN);
			assert_int_equal(ent.rsp.read_len, rls[i]);
		} else {
			assert_int_equal(ent.hdr.uflags, 0);
		}
		tcmu_ring_cmd_release(&c);
	}
	doorbell(&e);
	struct simk_result res[4];
	assert_int_equal(simk_reap(e.k, res, 4, 1000), 3);
	size_t expect[3] = {5000, in_len, in_len}; /* read_len 0 = whole buffer (kernel) */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(res[i].tag, 100 + i);
		assert_int_equal(res[i].data_in_len, expect[i]);
		uint8_t *want = pattern_buf(100 + i, expect[i]);
		assert_memory_equal(res[i].data_in, want, expect[i]);
		free(want);
		free(res[i].data_in);
	}
	env_close(&e);
}

static void test_sense(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, 1 << 20, 1 << 20);
	uint8_t cdb[16];
	for (int i = 0; i < 4; i++) {
		mk_cdb16(cdb, 0x88, i);
		assert_int_equal(simk_submit(e.k, cdb, 16, NULL, 0, 4096, i), 0);
	}
	uint8_t sense[200];
	for (size_t i = 0; i < sizeof(sense); i++)
		sense[i] = (uint8_t)(0xA0 + i);
	struct tcmu_ring_cmd c[4];
	for (int i = 0; i < 4; i++)
		assert_int_equal(tcmu_ring_next(&e.r, &c[i]), 1);
	/* 0: CHECK CONDITION, 18 bytes of sense, no read_len -> no data.
	 * 1: CHECK CONDITION, oversized sense (capped at 96), read_len 100 -> data.
	 * 2: GOOD after the slots held sense -> sense_len 0.
	 * 3: BUSY without sense -> 96 zero bytes. */
	iov_fill(&c[1], 1);
	assert_int_equal(tcmu_ring_complete(&e.r, c[0].cmd_id, 0x02, sense, 18, -1), 0);
	assert_int_equal(tcmu_ring_complete(&e.r, c[1].cmd_id, 0x02, sense, sizeof(sense), 100), 0);
	iov_fill(&c[2], 2);
	assert_int_equal(tcmu_ring_complete(&e.r, c[2].cmd_id, 0x00, sense, 18, 4096), 0);
	assert_int_equal(tcmu_ring_complete(&e.r, c[3].cmd_id, 0x08, NULL, 50, -1), 0);
	doorbell(&e);
	struct simk_result res[4];
	assert_int_equal(simk_reap(e.k, res, 4, 1000), 4);
	uint8_t zero[96] = {0};

	assert_int_equal(res[0].status, 2);
	assert_int_equal(res[0].sense_len, 96);
	assert_memory_equal(res[0].sense, sense, 18);
	assert_memory_equal(res[0].sense + 18, zero, 96 - 18);
	assert_int_equal(res[0].data_in_len, 0);

	assert_int_equal(res[1].status, 2);
	assert_memory_equal(res[1].sense, sense, 96);
	assert_int_equal(res[1].data_in_len, 100);
	uint8_t *want = pattern_buf(1, 100);
	assert_memory_equal(res[1].data_in, want, 100);
	free(want);

	assert_int_equal(res[2].status, 0);
	assert_int_equal(res[2].sense_len, 0);
	assert_int_equal(res[2].data_in_len, 4096);

	assert_int_equal(res[3].status, 8);
	assert_int_equal(res[3].sense_len, 96);
	assert_memory_equal(res[3].sense, zero, 96);
	for (int i = 0; i < 4; i++) {
		free(res[i].data_in);
		tcmu_ring_cmd_release(&c[i]);
	}
	/* (An oversized sense spilling into the next slot would have changed
	 * that entry's len_op, which simk_reap reports as -EPROTO.) */
	env_close(&e);
}

/* Fisher-Yates (deterministic: vrng_next). */
static void shuffle(struct tcmu_ring_cmd *a, size_t n, uint64_t *s)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = vrng_next(s) % i;
		struct tcmu_ring_cmd t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

/* Expected read_len the engine reports for a data-in command (-1: none). */
static long engine_read_len(uint64_t seed, size_t in_len)
{
	switch (seed % 4) {
	case 0: return -1;
	case 1: return (long)in_len;
	case 2: return (long)(seed % in_len) + 1;
	default: return 0;
	}
}

static size_t expect_din(uint64_t seed, size_t in_len)
{
	long rl = engine_read_len(seed, in_len);
	return rl > 0 ? (size_t)rl : in_len;
}

static void test_out_of_order(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, 1 << 20, 4 << 20);
	enum { N = 300 };
	uint64_t s = 12345;
	size_t in_len[N], out_len[N];
	uint8_t cdb[16];
	for (uint64_t t = 0; t < N; t++) {
		out_len[t] = t % 2 ? vrng_next(&s) % (3 * 4096) + 1 : 0;
		in_len[t] = t % 2 ? 0 : vrng_next(&s) % (3 * 4096) + 1;
		mk_cdb16(cdb, out_len[t] ? 0x8A : 0x88, t);
		uint8_t *b = pattern_buf(t, out_len[t]);
		assert_int_equal(simk_submit(e.k, cdb, 16, b, out_len[t], in_len[t], t), 0);
		free(b);
	}
	struct tcmu_ring_cmd *c = calloc(N, sizeof(*c));
	for (int i = 0; i < N; i++) {
		assert_int_equal(tcmu_ring_next(&e.r, &c[i]), 1);
		uint64_t t = cdb_seed(c[i].cdb);
		assert_true(t < N);
		if (out_len[t])
			assert_true(iov_matches(&c[i], t, out_len[t]));
		else
			iov_fill(&c[i], t);
	}
	shuffle(c, N, &s);
	/* Complete in a random order, in three doorbell batches. */
	bool seen[N] = {false};
	int got = 0;
	for (int i = 0; i < N; i++) {
		uint64_t t = cdb_seed(c[i].cdb);
		long rl = in_len[t] ? engine_read_len(t, in_len[t]) : -1;
		assert_int_equal(tcmu_ring_complete(&e.r, c[i].cmd_id, 0, NULL, 0, rl), 0);
		tcmu_ring_cmd_release(&c[i]);
		if (i == 99 || i == 199 || i == N - 1) {
			doorbell(&e);
			struct simk_result res[N];
			int n = simk_reap(e.k, res, N, 1000);
			assert_int_equal(n, 100);
			for (int j = 0; j < n; j++) {
				uint64_t tg = res[j].tag;
				assert_true(tg < N && !seen[tg]);
				seen[tg] = true;
				assert_int_equal(res[j].status, 0);
				size_t want_len = in_len[tg] ? expect_din(tg, in_len[tg]) : 0;
				assert_int_equal(res[j].data_in_len, want_len);
				uint8_t *want = pattern_buf(tg, want_len);
				assert_memory_equal(res[j].data_in, want, want_len);
				free(want);
				free(res[j].data_in);
			}
			got += n;
		}
	}
	assert_int_equal(got, N);
	assert_int_equal(simk_inflight(e.k), 0);
	assert_int_equal(tcmu_abi_load_tail(e.map), tcmu_abi_load_head(e.map));
	free(c);
	env_close(&e);
}

/* Varied CDB forms: 6, 10, 16 bytes and a 7Fh variable-length CDB of 32. */
static size_t mk_cdb_var(uint8_t *cdb, uint64_t seed)
{
	static const uint8_t ops[4] = {0x08, 0x28, 0x88, 0x7F};
	uint8_t op = ops[seed % 4];
	size_t len = op == 0x7F ? 32 : op == 0x08 ? 6 : op == 0x28 ? 10 : 16;
	memset(cdb, 0, 40);
	cdb[0] = op;
	for (size_t i = 1; i < len; i++)
		cdb[i] = pat(seed, i);
	if (op == 0x7F)
		cdb[7] = 24; /* ADDITIONAL CDB LENGTH */
	return len;
}

static void test_wrap_pad(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, 8192, 256 << 10); /* ring of 8064 bytes */
	assert_int_equal(e.r.cmdr_size, 8192 - 128);
	enum { N = 6000, MAXQ = 64 };
	uint64_t s = 777;
	uint64_t submitted = 0, reaped = 0;
	unsigned pads = 0, eagain = 0;
	struct tcmu_ring_cmd taken[MAXQ];
	size_t ntaken = 0;
	static uint64_t tag_of[65536]; /* cmd_id -> tag, read from the entry at submit */
	uint8_t cdb[40];
	while (reaped < N) {
		/* Submit a random burst until full. */
		unsigned burst = (unsigned)(vrng_next(&s) % 12) + 1;
		for (unsigned b = 0; b < burst && submitted < N; b++) {
			uint64_t t = submitted;
			size_t cl = mk_cdb_var(cdb, t);
			size_t ol = vrng_next(&s) % 3 ? vrng_next(&s) % (12 * 4096) : 0;
			uint8_t *buf = pattern_buf(t, ol);
			uint32_t head0 = tcmu_abi_load_head(e.map);
			int rc = simk_submit(e.k, cdb, cl, buf, ol, 0, t);
			free(buf);
			if (rc == -EAGAIN) {
				eagain++;
				break;
			}
			assert_int_equal(rc, 0);
			uint32_t head1 = tcmu_abi_load_head(e.map);
			struct tcmu_cmd_entry_hdr h0;
			memcpy(&h0, e.map + 128 + head0, sizeof(h0));
			if (tcmu_hdr_get_op(h0.len_op) == TCMU_OP_PAD)
				memcpy(&h0, e.map + 128, sizeof(h0));
			tag_of[h0.cmd_id] = t;
			if (head1 < head0 && head0 != 0) {
				/* Wrapped: unless the entry ended exactly at the
				 * end, a PAD sits at head0 running to the end. */
				struct tcmu_cmd_entry_hdr h;
				memcpy(&h, e.map + 128 + head0, sizeof(h));
				if (tcmu_hdr_get_op(h.len_op) == TCMU_OP_PAD) {
					assert_int_equal(tcmu_hdr_get_len(h.len_op), e.r.cmdr_size - head0);
					pads++;
				}
			}
			submitted++;
		}
		/* Engine: take everything, checking CDB and data. */
		for (;;) {
			if (ntaken == MAXQ)
				break;
			int rc = tcmu_ring_next(&e.r, &taken[ntaken]);
			if (rc == 0)
				break;
			assert_int_equal(rc, 1);
			struct tcmu_ring_cmd *c = &taken[ntaken];
			size_t want_len = c->cdb[0] == 0x7F ? 32 : c->cdb[0] == 0x08 ? 6 :
							 c->cdb[0] == 0x28 ? 10 : 16;
			assert_int_equal(c->cdb_len, want_len);
			for (size_t i = 1; i < want_len; i++)
				if (i != 7 || c->cdb[0] != 0x7F)
					assert_int_equal(c->cdb[i], pat(tag_of[c->cmd_id], i));
			ntaken++;
		}
		/* Complete a random subset, out of order. */
		shuffle(taken, ntaken, &s);
		size_t ncomp = ntaken ? vrng_next(&s) % ntaken + 1 : 0;
		for (size_t i = 0; i < ncomp; i++) {
			struct tcmu_ring_cmd *c = &taken[ntaken - 1 - i];
			assert_int_equal(tcmu_ring_complete(&e.r, c->cmd_id, 0, NULL, 0, -1), 0);
			tcmu_ring_cmd_release(c);
		}
		ntaken -= ncomp;
		if (ncomp) {
			doorbell(&e);
			struct simk_result res[MAXQ];
			int n = simk_reap(e.k, res, MAXQ, 1000);
			assert_int_equal(n, (int)ncomp);
			for (int j = 0; j < n; j++) {
				assert_true(res[j].tag < submitted);
				assert_int_equal(res[j].status, 0);
				assert_int_equal(res[j].data_in_len, 0);
			}
			reaped += (uint64_t)n;
		}
	}
	assert_int_equal(simk_inflight(e.k), 0);
	assert_true(pads > 10);
	assert_true(eagain > 0);
	env_close(&e);
}

/* The data-out of each command arrives intact through wraps (checked via CDB seed). */
static void test_wrap_data(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, 8192, 128 << 10);
	uint64_t s = 99;
	uint8_t cdb[16];
	for (uint64_t t = 0; t < 3000; t++) {
		size_t ol = vrng_next(&s) % (5 * 4096) + 1;
		mk_cdb16(cdb, 0x8A, t);
		uint8_t *buf = pattern_buf(t, ol);
		assert_int_equal(simk_submit(e.k, cdb, 16, buf, ol, 0, t), 0);
		free(buf);
		struct tcmu_ring_cmd c;
		assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
		assert_int_equal(cdb_seed(c.cdb), t);
		assert_int_equal(c.data_len, ol);
		assert_true(iov_matches(&c, t, ol));
		assert_int_equal(tcmu_ring_complete(&e.r, c.cmd_id, 0, NULL, 0, -1), 0);
		tcmu_ring_cmd_release(&c);
		doorbell(&e);
		struct simk_result r;
		assert_int_equal(simk_reap(e.k, &r, 1, 1000), 1);
		assert_int_equal(r.tag, t);
	}
	env_close(&e);
}

/* One command through the engine's side: queued (data-out len ol, data-in il),
 * taken, its data-in filled, completed (read_len unreported) and the doorbell
 * written; with reap, collected and its data-in compared with the pattern. */
static void one_cmd(struct env *e, uint64_t t, size_t ol, size_t il, bool reap)
{
	uint8_t cdb[16];
	mk_cdb16(cdb, il ? 0x88 : 0x8A, t);
	uint8_t *buf = pattern_buf(t, ol);
	assert_int_equal(simk_submit(e->k, cdb, 16, buf, ol, il, t), 0);
	free(buf);
	struct tcmu_ring_cmd c;
	assert_int_equal(tcmu_ring_next(&e->r, &c), 1);
	iov_fill(&c, t + 1);
	assert_int_equal(tcmu_ring_complete(&e->r, c.cmd_id, 0, NULL, 0, -1), 0);
	tcmu_ring_cmd_release(&c);
	doorbell(e);
	if (!reap)
		return;
	struct simk_result r;
	assert_int_equal(simk_reap(e->k, &r, 1, 1000), 1);
	assert_int_equal(r.tag, t);
	assert_int_equal(r.data_in_len, il);
	if (il) {
		uint8_t *want = pattern_buf(t + 1, il);
		assert_memory_equal(r.data_in, want, il);
		free(want);
	}
	free(r.data_in);
}

/*
 * simk_reset makes a used ring what simk_create makes (the fuzz targets keep
 * their LUNs' rings across inputs: an input must not see what an earlier one
 * left): after commands that wrapped the ring (PAD entries), filled data blocks
 * both ways, and some left queued, taken or completed but not reaped, with a
 * doorbell pending, the whole map equals a fresh ring's byte for byte, and the
 * same commands then give the same bytes and the same answers on both.
 */
static void test_reset_as_new(void **state)
{
	(void)state;
	struct env used, fresh;
	env_open(&used, 8192, 256 << 10); /* ring of 8064 bytes: wraps */
	uint64_t s = 4242;
	for (uint64_t t = 0; t < 300; t++)
		one_cmd(&used, t, vrng_next(&s) % (9 * 4096), t % 3 ? vrng_next(&s) % (7 * 4096) : 0,
			true);
	one_cmd(&used, 1000, 4096, 3 * 4096, false); /* completed, doorbell, not reaped */
	uint8_t cdb[16];
	mk_cdb16(cdb, 0x8A, 1001);
	uint8_t *buf = pattern_buf(1001, 20000);
	assert_int_equal(simk_submit(used.k, cdb, 16, buf, 20000, 0, 1001), 0); /* queued only */
	free(buf);
	assert_int_equal(simk_inflight(used.k), 2);
	munmap(used.map, used.map_size); /* the engine side goes first, then the reset */
	simk_reset(used.k);
	assert_int_equal(simk_inflight(used.k), 0);

	env_open(&fresh, 8192, 256 << 10);
	used.map = mmap(NULL, used.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, simk_map_fd(used.k), 0);
	assert_true(used.map != MAP_FAILED);
	assert_int_equal(used.map_size, fresh.map_size);
	assert_true(memcmp(used.map, fresh.map, used.map_size) == 0);
	struct simk_result r;
	assert_int_equal(simk_reap(used.k, &r, 1, 0), 0); /* the pending doorbell is gone */
	assert_int_equal(tcmu_ring_attach(&used.r, used.map, used.map_size), 0);
	uint64_t s1 = 7, s2 = 7;
	for (uint64_t t = 0; t < 40; t++) {
		size_t ol1 = vrng_next(&s1) % (9 * 4096), il1 = vrng_next(&s1) % (7 * 4096);
		size_t ol2 = vrng_next(&s2) % (9 * 4096), il2 = vrng_next(&s2) % (7 * 4096);
		one_cmd(&used, t, ol1, il1, true);
		one_cmd(&fresh, t, ol2, il2, true);
		assert_true(memcmp(used.map, fresh.map, used.map_size) == 0);
	}
	env_close(&used);
	env_close(&fresh);
}

static void test_full(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, 8192, 64 << 10); /* 16 data blocks */
	uint8_t cdb[16];
	mk_cdb16(cdb, 0x8A, 1);
	uint8_t big[68 << 10];
	memset(big, 1, sizeof(big));
	assert_int_equal(simk_submit(e.k, cdb, 16, big, sizeof(big), 0, 1), -E2BIG);
	/* Data area full: 4 x 16 KiB. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(simk_submit(e.k, cdb, 16, big, 16 << 10, 0, i), 0);
	assert_int_equal(simk_submit(e.k, cdb, 16, big, 1, 0, 9), -EAGAIN);
	assert_int_equal(simk_submit(e.k, cdb, 16, NULL, 0, 0, 9), 0); /* no data: fits */
	struct tcmu_ring_cmd c;
	assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
	assert_int_equal(tcmu_ring_complete(&e.r, c.cmd_id, 0, NULL, 0, -1), 0);
	tcmu_ring_cmd_release(&c);
	/* Not free until the kernel side has reaped it. */
	assert_int_equal(simk_submit(e.k, cdb, 16, big, 1, 0, 9), -EAGAIN);
	doorbell(&e);
	struct simk_result r;
	assert_int_equal(simk_reap(e.k, &r, 1, 1000), 1);
	assert_int_equal(simk_submit(e.k, cdb, 16, big, 1, 0, 9), 0);
	env_close(&e);

	/* Ring full: commands without data until -EAGAIN. */
	env_open(&e, 8192, 64 << 10);
	int n = 0;
	int rc;
	while ((rc = simk_submit(e.k, cdb, 16, NULL, 0, 0, (uint64_t)n)) == 0)
		n++;
	assert_int_equal(rc, -EAGAIN);
	assert_int_equal(n, (8192 - 128 - 1) / 128); /* 128-byte entries, one byte kept free */
	for (int i = 0; i < n; i++) {
		assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
		assert_int_equal(tcmu_ring_complete(&e.r, c.cmd_id, 0, NULL, 0, -1), 0);
	}
	assert_int_equal(tcmu_ring_next(&e.r, &c), 0);
	doorbell(&e);
	struct simk_result res[128];
	assert_int_equal(simk_reap(e.k, res, 128, 1000), n);
	assert_int_equal(simk_submit(e.k, cdb, 16, NULL, 0, 0, 1), 0);
	env_close(&e);

	/* An entry that could need more than half the ring: 1 MiB = 256 iovecs. */
	env_open(&e, 8192, 2 << 20);
	assert_int_equal(simk_submit(e.k, cdb, 16, NULL, 0, 1 << 20, 1), -E2BIG);
	assert_int_equal(simk_submit(e.k, cdb, 16, NULL, 0, 64 << 10, 1), 0);
	env_close(&e);
}

/* ------------------------------------------------------- malformed entries */

/* Submit one data-out command (3 blocks) and return its entry in the engine map. */
static uint8_t *one_entry(struct env *e, uint16_t *id)
{
	uint8_t cdb[16];
	mk_cdb16(cdb, 0x8A, 5);
	uint8_t *b = pattern_buf(5, 3 * 4096);
	uint32_t head = tcmu_abi_load_head(e->map);
	assert_int_equal(simk_submit(e->k, cdb, 16, b, 3 * 4096, 0, 5), 0);
	free(b);
	uint8_t *ent = e->map + e->r.cmdr_off + head;
	struct tcmu_cmd_entry_hdr h;
	memcpy(&h, ent, sizeof(h));
	*id = h.cmd_id;
	return ent;
}

static void set_u64(uint8_t *p, size_t off, uint64_t v) { memcpy(p + off, &v, 8); }
static void set_u32(uint8_t *p, size_t off, uint32_t v) { memcpy(p + off, &v, 4); }

enum corrupt {
	C_IOV_IN_MAILBOX, C_IOV_IN_RING, C_IOV_PAST_MAP, C_IOV_LEN_WRAP, C_IOV_ZERO_LEN,
	C_IOV_CNT_HUGE, C_CDB_OFF_PAST_MAP, C_CDB_OFF_BEFORE_IOVS, C_CDB_OFF_PAST_ENTRY,
	C_CDB_VARLEN_PAST_ENTRY, C_BIDI, C_UNKNOWN_OP, C_COUNT
};

static void corrupt(struct env *e, uint8_t *ent, enum corrupt what)
{
	const size_t iov0 = TCMU_ABI_IOV_OFF;
	uint64_t ent_off = (uint64_t)(ent - e->map);
	uint32_t len_op;
	memcpy(&len_op, ent, 4);
	switch (what) {
	case C_IOV_IN_MAILBOX: set_u64(ent, iov0, 0); break;
	case C_IOV_IN_RING: set_u64(ent, iov0, e->r.cmdr_off + 64); break;
	case C_IOV_PAST_MAP: set_u64(ent, iov0, e->map_size); set_u64(ent, iov0 + 8, 1); break;
	case C_IOV_LEN_WRAP: set_u64(ent, iov0 + 8, UINT64_MAX - 10); break;
	case C_IOV_ZERO_LEN: set_u64(ent, iov0 + 8, 0); break;
	case C_IOV_CNT_HUGE: set_u32(ent, offsetof(struct tcmu_cmd_entry, req.iov_cnt), 0xFFFFFFFFu); break;
	case C_CDB_OFF_PAST_MAP:
		set_u64(ent, offsetof(struct tcmu_cmd_entry, req.cdb_off), e->map_size + 100);
		break;
	case C_CDB_OFF_BEFORE_IOVS:
		set_u64(ent, offsetof(struct tcmu_cmd_entry, req.cdb_off), ent_off + 8);
		break;
	case C_CDB_OFF_PAST_ENTRY:
		set_u64(ent, offsetof(struct tcmu_cmd_entry, req.cdb_off),
			ent_off + tcmu_hdr_get_len(len_op));
		break;
	case C_CDB_VARLEN_PAST_ENTRY: {
		uint64_t cdb_off;
		memcpy(&cdb_off, ent + offsetof(struct tcmu_cmd_entry, req.cdb_off), 8);
		e->map[cdb_off] = 0x7F;
		e->map[cdb_off + 7] = 200; /* 208 bytes, the entry has 16 */
		break;
	}
	case C_BIDI: set_u32(ent, offsetof(struct tcmu_cmd_entry, req.iov_bidi_cnt), 1); break;
	case C_UNKNOWN_OP: set_u32(ent, 0, (len_op & ~7u) | 5); break;
	case C_COUNT: break;
	}
}

static void test_malformed_badmsg(void **state)
{
	(void)state;
	for (int w = 0; w < C_COUNT; w++) {
		struct env e;
		env_open(&e, 8192, 1 << 20);
		uint16_t id;
		uint8_t *ent = one_entry(&e, &id);
		uint16_t id2;
		one_entry(&e, &id2); /* a good one behind it */
		corrupt(&e, ent, (enum corrupt)w);
		struct tcmu_ring_cmd c;
		int rc = tcmu_ring_next(&e.r, &c);
		if (rc != -EBADMSG)
			fail_msg("corruption %d: tcmu_ring_next returned %d", w, rc);
		assert_int_equal(c.cmd_id, id);
		assert_int_equal(c.cdb_len, 0);
		assert_null(c.iov);
		/* Consumed: the next command is the good one. */
		struct tcmu_ring_cmd c2;
		assert_int_equal(tcmu_ring_next(&e.r, &c2), 1);
		assert_int_equal(c2.cmd_id, id2);
		assert_true(iov_matches(&c2, 5, 3 * 4096));
		/* Both complete; the bad one with an error. */
		uint8_t sense[18] = {0x70, 0, 0x05};
		assert_int_equal(tcmu_ring_complete(&e.r, c.cmd_id, 0x02, sense, 18, -1), 0);
		assert_int_equal(tcmu_ring_complete(&e.r, c2.cmd_id, 0, NULL, 0, -1), 0);
		tcmu_ring_cmd_release(&c2);
		if (w == C_UNKNOWN_OP) /* the sim checks its own len_op is unchanged */
			set_u32(ent, 0, tcmu_hdr_get_len(*(uint32_t *)ent) | TCMU_OP_CMD);
		doorbell(&e);
		struct simk_result res[2];
		assert_int_equal(simk_reap(e.k, res, 2, 1000), 2);
		assert_int_equal(res[0].status, 2);
		assert_int_equal(res[0].sense[2], 5);
		assert_int_equal(res[1].status, 0);
		env_close(&e);
	}
}

static void test_malformed_unwalkable(void **state)
{
	(void)state;
	struct env e;
	struct tcmu_ring_cmd c;
	uint16_t id;

	/* Entry length 0: cannot be stepped over; nothing consumed. */
	env_open(&e, 8192, 1 << 20);
	uint8_t *ent = one_entry(&e, &id);
	uint32_t saved;
	memcpy(&saved, ent, 4);
	set_u32(ent, 0, TCMU_OP_CMD);
	assert_int_equal(tcmu_ring_next(&e.r, &c), -EPROTO);
	assert_int_equal(tcmu_ring_next(&e.r, &c), -EPROTO);
	set_u32(ent, 0, TCMU_OP_PAD); /* zero-length PAD: same */
	assert_int_equal(tcmu_ring_next(&e.r, &c), -EPROTO);
	/* Length running past cmd_head / the end of the ring. */
	set_u32(ent, 0, ((saved & ~7u) + 8) | TCMU_OP_CMD);
	assert_int_equal(tcmu_ring_next(&e.r, &c), -EPROTO);
	set_u32(ent, 0, 0x7FFFFFF8u | TCMU_OP_PAD);
	assert_int_equal(tcmu_ring_next(&e.r, &c), -EPROTO);
	/* A CMD too short for its response. */
	set_u32(ent, 0, 64 | TCMU_OP_CMD);
	assert_int_equal(tcmu_ring_next(&e.r, &c), -EPROTO);
	/* Restored: it is taken normally. */
	set_u32(ent, 0, saved);
	assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
	assert_int_equal(c.cmd_id, id);
	tcmu_ring_cmd_release(&c);
	/* cmd_head misaligned or outside the ring. */
	uint32_t head = tcmu_abi_load_head(e.map);
	tcmu_abi_store_head(e.map, head + 4);
	assert_int_equal(tcmu_ring_next(&e.r, &c), -EPROTO);
	tcmu_abi_store_head(e.map, e.r.cmdr_size);
	assert_int_equal(tcmu_ring_next(&e.r, &c), -EPROTO);
	tcmu_abi_store_head(e.map, head);
	assert_int_equal(tcmu_ring_next(&e.r, &c), 0);
	/* cmd_tail garbage: completion refused, nothing written. */
	tcmu_abi_store_tail(e.map, 3);
	assert_int_equal(tcmu_ring_complete(&e.r, id, 0, NULL, 0, -1), -EPROTO);
	tcmu_abi_store_tail(e.map, 0);
	/* Entry at cmd_tail shrunk to less than a response after being taken. */
	memcpy(&saved, ent, 4);
	set_u32(ent, 0, 64 | TCMU_OP_CMD);
	assert_int_equal(tcmu_ring_complete(&e.r, id, 0, NULL, 0, -1), -EPROTO);
	set_u32(ent, 0, saved);
	assert_int_equal(tcmu_ring_complete(&e.r, id, 0, NULL, 0, -1), 0);
	assert_int_equal(tcmu_ring_complete(&e.r, id, 0, NULL, 0, -1), -ENOSPC);
	env_close(&e);

	/* A kernel ring reset (tail = head) and resync. */
	env_open(&e, 8192, 1 << 20);
	one_entry(&e, &id);
	uint8_t *bad = one_entry(&e, &id);
	set_u32(bad, 0, TCMU_OP_CMD);
	assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
	tcmu_ring_cmd_release(&c);
	assert_int_equal(tcmu_ring_next(&e.r, &c), -EPROTO);
	tcmu_abi_store_tail(e.map, tcmu_abi_load_head(e.map));
	tcmu_ring_resync(&e.r);
	assert_int_equal(tcmu_ring_next(&e.r, &c), 0);
	env_close(&e);

	/* Bad mailboxes. */
	uint8_t *m = aligned_alloc(4096, 16384);
	memset(m, 0, 16384);
	struct tcmu_mailbox mb = {.version = 2, .flags = 1, .cmdr_off = 128, .cmdr_size = 8192};
	memcpy(m, &mb, sizeof(mb));
	struct tcmu_ring r;
	assert_int_equal(tcmu_ring_attach(&r, m, 16384), 0);
	mb.version = 1;
	memcpy(m, &mb, sizeof(mb));
	assert_int_equal(tcmu_ring_attach(&r, m, 16384), -EPROTONOSUPPORT);
	mb.version = 2;
	mb.flags = TCMU_MAILBOX_FLAG_CAP_READ_LEN; /* no OOOC */
	memcpy(m, &mb, sizeof(mb));
	assert_int_equal(tcmu_ring_attach(&r, m, 16384), -EPROTONOSUPPORT);
	mb.flags = 1;
	mb.cmdr_size = 16384;
	memcpy(m, &mb, sizeof(mb));
	assert_int_equal(tcmu_ring_attach(&r, m, 16384), -EINVAL);
	mb.cmdr_size = 8192;
	mb.cmdr_off = 64;
	memcpy(m, &mb, sizeof(mb));
	assert_int_equal(tcmu_ring_attach(&r, m, 16384), -EINVAL);
	free(m);
}

/* ---------------------------------------------- the simulated kernel's checks */

static void test_sim_rejects(void **state)
{
	(void)state;
	struct env e;
	struct tcmu_ring_cmd c;
	struct simk_result res[4];
	uint16_t id;
	uint8_t cdb[16];

	/* Unknown id. */
	env_open(&e, 8192, 1 << 20);
	one_entry(&e, &id);
	assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
	tcmu_ring_cmd_release(&c);
	assert_int_equal(tcmu_ring_complete(&e.r, (uint16_t)(id + 1), 0, NULL, 0, -1), 0);
	doorbell(&e);
	assert_int_equal(simk_reap(e.k, res, 4, 1000), -EPROTO);
	assert_int_equal(simk_reap(e.k, res, 4, 0), -EPROTO); /* stays broken */
	mk_cdb16(cdb, 0x88, 1);
	assert_int_equal(simk_submit(e.k, cdb, 16, NULL, 0, 0, 1), -EPROTO);
	env_close(&e);

	/* Second completion of the same id (in the other command's slot). */
	env_open(&e, 8192, 1 << 20);
	uint16_t id2;
	one_entry(&e, &id);
	one_entry(&e, &id2);
	assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
	tcmu_ring_cmd_release(&c);
	assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
	tcmu_ring_cmd_release(&c);
	assert_int_equal(tcmu_ring_complete(&e.r, id, 0, NULL, 0, -1), 0);
	assert_int_equal(tcmu_ring_complete(&e.r, id, 0, NULL, 0, -1), 0);
	doorbell(&e);
	int n = simk_reap(e.k, res, 4, 1000);
	assert_int_equal(n, 1); /* the first completion is delivered ... */
	assert_int_equal(simk_reap(e.k, res, 4, 0), -EPROTO); /* ... then the violation */
	env_close(&e);

	/* read_len beyond the data-in buffer. */
	env_open(&e, 8192, 1 << 20);
	mk_cdb16(cdb, 0x88, 1);
	assert_int_equal(simk_submit(e.k, cdb, 16, NULL, 0, 1000, 1), 0);
	assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
	assert_int_equal(c.data_len, 1000);
	assert_int_equal(tcmu_ring_complete(&e.r, c.cmd_id, 0, NULL, 0, 1001), 0);
	tcmu_ring_cmd_release(&c);
	doorbell(&e);
	assert_int_equal(simk_reap(e.k, res, 4, 1000), -EPROTO);
	env_close(&e);

	/* cmd_tail moved past cmd_head. */
	env_open(&e, 8192, 1 << 20);
	one_entry(&e, &id);
	tcmu_abi_store_tail(e.map, tcmu_abi_load_head(e.map) + 128);
	doorbell(&e);
	assert_int_equal(simk_reap(e.k, res, 4, 1000), -EPROTO);
	env_close(&e);

	/* cmd_tail inside an entry. */
	env_open(&e, 8192, 1 << 20);
	one_entry(&e, &id);
	tcmu_abi_store_tail(e.map, 8);
	doorbell(&e);
	assert_int_equal(simk_reap(e.k, res, 4, 1000), -EPROTO);
	env_close(&e);

	/* An entry length rewritten by the engine (two entries made one). */
	env_open(&e, 8192, 1 << 20);
	uint8_t *first = one_entry(&e, &id);
	one_entry(&e, &id2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
		tcmu_ring_cmd_release(&c);
	}
	set_u32(first, 0, 256 | TCMU_OP_CMD);
	assert_int_equal(tcmu_ring_complete(&e.r, id, 0, NULL, 0, -1), 0);
	doorbell(&e);
	assert_int_equal(simk_reap(e.k, res, 4, 1000), -EPROTO);
	env_close(&e);

	/* Timeout without a doorbell. */
	env_open(&e, 8192, 1 << 20);
	one_entry(&e, &id);
	assert_int_equal(tcmu_ring_next(&e.r, &c), 1);
	assert_int_equal(tcmu_ring_complete(&e.r, c.cmd_id, 0, NULL, 0, -1), 0);
	tcmu_ring_cmd_release(&c);
	assert_int_equal(simk_reap(e.k, res, 4, 20), 0);
	doorbell(&e);
	assert_int_equal(simk_reap(e.k, res, 4, 20), 1);
	env_close(&e);
}

/* ------------------------------------------------------------ two threads */

struct engine {
	struct env *e;
	int stop_fd;
	unsigned errors, taken, completed, doorbells;
};

static void *engine_main(void *arg)
{
	struct engine *g = arg;
	struct env *e = g->e;
	struct tcmu_ring_cmd *q = calloc(4096, sizeof(*q));
	size_t nq = 0;
	uint64_t s = 4242;
	for (;;) {
		struct pollfd p[2] = {{.fd = simk_irq_fd(e->k), .events = POLLIN},
				      {.fd = g->stop_fd, .events = POLLIN}};
		int rc = poll(p, 2, 1);
		if (rc < 0)
			continue;
		if (p[1].revents & POLLIN)
			break;
		uint64_t v;
		const bool idle = !(p[0].revents & POLLIN);
		if (!idle)
			(void)!read(simk_irq_fd(e->k), &v, 8);
		for (;;) {
			rc = tcmu_ring_next(&e->r, &q[nq]);
			if (rc == 0)
				break;
			if (rc != 1) {
				g->errors++;
				break;
			}
			struct tcmu_ring_cmd *c = &q[nq++];
			g->taken++;
			uint64_t t = cdb_seed(c->cdb);
			if (c->cdb[0] == 0x8A) {
				if (!iov_matches(c, t, c->data_len))
					g->errors++;
			} else {
				iov_fill(c, t);
			}
		}
		/* Complete a random part (everything after an idle poll), out of order. */
		if (!nq)
			continue;
		shuffle(q, nq, &s);
		size_t ncomp = idle ? nq : vrng_next(&s) % nq + 1;
		for (size_t i = 0; i < ncomp; i++) {
			struct tcmu_ring_cmd *c = &q[nq - 1 - i];
			uint64_t t = cdb_seed(c->cdb);
			long rl = c->cdb[0] == 0x88 ? engine_read_len(t, c->data_len) : -1;
			if (tcmu_ring_complete(&e->r, c->cmd_id, 0, NULL, 0, rl) != 0)
				g->errors++;
			tcmu_ring_cmd_release(c);
			g->completed++;
		}
		nq -= ncomp;
		uint64_t one = 1;
		if (write(simk_doorbell_fd(e->k), &one, 8) != 8)
			g->errors++;
		g->doorbells++;
	}
	for (size_t i = 0; i < nq; i++)
		tcmu_ring_cmd_release(&q[i]);
	free(q);
	return NULL;
}

static void test_two_threads(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, 64 << 10, 1 << 20);
	struct engine g = {.e = &e, .stop_fd = eventfd(0, EFD_CLOEXEC)};
	assert_true(g.stop_fd >= 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, engine_main, &g), 0);

	enum { N = 5000 };
	uint64_t s = 31337;
	size_t len[N];
	bool is_write[N], done[N];
	memset(done, 0, sizeof(done));
	uint64_t next = 0, reaped = 0;
	uint8_t cdb[16];
	struct simk_result res[64];
	while (reaped < N) {
		while (next < N) {
			is_write[next] = vrng_next(&s) % 2;
			len[next] = vrng_next(&s) % (40 * 1024) + 1;
			mk_cdb16(cdb, is_write[next] ? 0x8A : 0x88, next);
			uint8_t *b = is_write[next] ? pattern_buf(next, len[next]) : NULL;
			int rc = simk_submit(e.k, cdb, 16, b, is_write[next] ? len[next] : 0,
					     is_write[next] ? 0 : len[next], next);
			free(b);
			if (rc == -EAGAIN)
				break;
			assert_int_equal(rc, 0);
			next++;
			if (vrng_next(&s) % 8 == 0)
				break;
		}
		int n = simk_reap(e.k, res, 64, next == N || vrng_next(&s) % 2 ? 2000 : 0);
		assert_true(n >= 0);
		for (int j = 0; j < n; j++) {
			uint64_t t = res[j].tag;
			assert_true(t < next && !done[t]);
			done[t] = true;
			assert_int_equal(res[j].status, 0);
			size_t want = is_write[t] ? 0 : expect_din(t, len[t]);
			assert_int_equal(res[j].data_in_len, want);
			uint8_t *w = pattern_buf(t, want);
			assert_memory_equal(res[j].data_in, w, want);
			free(w);
			free(res[j].data_in);
		}
		reaped += (uint64_t)n;
	}
	uint64_t one = 1;
	assert_int_equal(write(g.stop_fd, &one, 8), 8);
	pthread_join(th, NULL);
	assert_int_equal(g.errors, 0);
	assert_int_equal(g.taken, N);
	assert_int_equal(g.completed, N);
	assert_int_equal(simk_inflight(e.k), 0);
	close(g.stop_fd);
	env_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_data_out_scattered),
		cmocka_unit_test(test_data_in_read_len),
		cmocka_unit_test(test_sense),
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_wrap_pad),
		cmocka_unit_test(test_wrap_data),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_reset_as_new),
		cmocka_unit_test(test_malformed_badmsg),
		cmocka_unit_test(test_malformed_unwalkable),
		cmocka_unit_test(test_sim_rejects),
		cmocka_unit_test(test_two_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
