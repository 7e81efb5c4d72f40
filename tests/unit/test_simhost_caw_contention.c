/*
 * COMPARE AND WRITE contention through the real ring and engine (simhost): N
 * incrementers keep commands in flight on one block at the same time, each
 * doing READ(10) -> COMPARE AND WRITE(old -> old + 1), retrying after a
 * MISCOMPARE. If COMPARE AND WRITE were not atomic against the other
 * incrementers' writes, two of them could both succeed from the same old value
 * and the final counter would be lower than the number of successes. Final
 * value must be exactly N x ITERATIONS, with miscompares seen on the way (the
 * test really contended), and the same after a reopen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "simhost_test_env.h"

#define N_WORKERS 8
#define ITERATIONS 25
#define LBA 7
#define BS 512

struct worker {
	uint64_t tag;
	bool reading; /* else a CAW is in flight */
	uint64_t seen;
	unsigned done;
};

static void block_of(uint64_t v, uint8_t *b)
{
	memset(b, 0, BS);
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t value_of(const uint8_t *b)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static void submit_read(struct simhost *h, struct worker *w)
{
	const uint8_t cdb[10] = {0x28, 0, 0, 0, 0, LBA, 0, 0, 1, 0};
	w->reading = true;
	assert_int_equal(simhost_submit(h, 0, cdb, sizeof(cdb), NULL, 0, BS, &w->tag), 0);
}

static void submit_caw(struct simhost *h, struct worker *w)
{
	const uint8_t cdb[16] = {0x89, 0, 0, 0, 0, 0, 0, 0, 0, LBA, 0, 0, 0, 1, 0, 0};
	uint8_t out[2 * BS];
	block_of(w->seen, out);
	block_of(w->seen + 1, out + BS);
	w->reading = false;
	assert_int_equal(simhost_submit(h, 0, cdb, sizeof(cdb), out, sizeof(out), 0, &w->tag), 0);
}

static uint64_t read_counter(struct simhost *h)
{
	const uint8_t cdb[10] = {0x28, 0, 0, 0, 0, LBA, 0, 0, 1, 0};
	struct simhost_result r;
	test_cmd(h, cdb, sizeof(cdb), NULL, 0, BS, &r);
	assert_int_equal(r.r.status, 0);
	uint64_t v = value_of(r.r.data_in);
	simhost_result_free(&r);
	return v;
}

static void test_caw_contention(void **state)
{
	(void)state;
	char path[512];
	struct vpool_params prm = {0};
	struct simhost *h = test_pool_create("caw_contention", 64u << 20, &prm, path, sizeof(path));
	assert_int_equal(simhost_volume_create(h, "v", 8u << 20, BS), 0);
	assert_int_equal(simhost_attach(h, "v", 0), 0);

	struct worker w[N_WORKERS] = {0};
	for (int i = 0; i < N_WORKERS; i++)
		submit_read(h, &w[i]);
	unsigned busy = N_WORKERS, successes = 0, miscompares = 0;
	while (busy) {
		struct simhost_result r[N_WORKERS];
		int n = simhost_reap(h, r, N_WORKERS, 60000);
		assert_true(n > 0);
		for (int k = 0; k < n; k++) {
			struct worker *x = NULL;
			for (int i = 0; i < N_WORKERS; i++)
				if (w[i].tag == r[k].tag && w[i].done < ITERATIONS)
					x = &w[i];
			assert_non_null(x);
			if (x->reading) {
				assert_int_equal(r[k].r.status, 0);
				x->seen = value_of(r[k].r.data_in);
				submit_caw(h, x);
			} else if (r[k].r.status == 0) {
				successes++;
				if (++x->done < ITERATIONS)
					submit_read(h, x);
				else
					busy--;
			} else {
				/* only MISCOMPARE / MISCOMPARE DURING VERIFY OPERATION is expected */
				assert_int_equal(r[k].r.status, 2);
				assert_int_equal(r[k].r.sense[2] & 0x0F, 0x0E);
				assert_int_equal(r[k].r.sense[12], 0x1D);
				miscompares++;
				submit_read(h, x);
			}
			simhost_result_free(&r[k]);
		}
	}
	assert_int_equal(successes, N_WORKERS * ITERATIONS);
	assert_true(miscompares > 0); /* the incrementers really raced */
	assert_int_equal(read_counter(h), (uint64_t)N_WORKERS * ITERATIONS);
	assert_int_equal(simhost_reopen(h), 0);
	assert_int_equal(read_counter(h), (uint64_t)N_WORKERS * ITERATIONS);
	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
	printf("caw contention: %u successes, %u miscompares\n", successes, miscompares);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_caw_contention),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
