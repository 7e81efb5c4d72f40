/*
 * simhost_engine_hook (tools/simhost/simhost.h; vaai-bench scrape serves
 * vaaid's metrics endpoint with it): a readable fd makes the engine thread
 * call the hook between reactor turns -- on the engine thread, not the
 * caller's --, once per wake-up and again after the next one, also after
 * simhost_reopen (a new reactor: the hook polled again); from the hook, the
 * engine-thread accessors read an attached LUN (its counters after commands
 * answered) and the pool. One hook per host; NULL refused.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "simhost_test_env.h"
#include "vaaid/lun_stats.h"

struct hook {
	struct simhost *h;
	int fd;
	pthread_t caller;
	atomic_uint calls, on_caller, lun_ok, lun1_nodev;
	atomic_ullong other_ok; /* LUN 0's counted TEST UNIT READYs, as the hook read them */
	atomic_ullong capacity;
};

static void hook_fn(void *arg)
{
	struct hook *k = arg;
	uint64_t v;
	if (read(k->fd, &v, sizeof(v)) < 0) {
		/* drained already */
	}
	atomic_fetch_add(&k->on_caller, pthread_equal(pthread_self(), k->caller) ? 1u : 0u);
	struct vaai_lun_stats st;
	uint8_t naa[16];
	const char *vol = NULL;
	if (simhost_engine_lun(k->h, 0, &st, naa, &vol) == 0 && vol && !strcmp(vol, "v")) {
		atomic_fetch_add(&k->lun_ok, 1u);
		atomic_store(&k->other_ok, st.cmd[VSTAT_OTHER].ok);
	}
	if (simhost_engine_lun(k->h, 1, &st, naa, &vol) == -ENODEV)
		atomic_fetch_add(&k->lun1_nodev, 1u);
	struct vpool_stats ps;
	uint64_t soft;
	simhost_engine_pool(k->h, &ps, &soft);
	atomic_store(&k->capacity, ps.capacity);
	atomic_fetch_add(&k->calls, 1u); /* last: the test reads the rest after it */
}

/* Post the fd and wait (60 s at most: a liveness bound, not a timing) for call n. */
static void poke_and_wait(struct hook *k, unsigned n)
{
	uint64_t one = 1;
	assert_int_equal(write(k->fd, &one, sizeof(one)), (ssize_t)sizeof(one));
	for (int i = 0; i < 60000 && atomic_load(&k->calls) < n; i++) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	assert_int_equal(atomic_load(&k->calls), n);
}

static void hook_called_on_engine_thread(void **state)
{
	(void)state;
	char path[256];
	struct vpool_params prm = {0};
	struct simhost *h = test_pool_create("enginehook", 64ull << 20, &prm, path, sizeof(path));
	assert_int_equal(simhost_volume_create(h, "v", 8ull << 20, 512), 0);
	assert_int_equal(simhost_attach(h, "v", 0), 0);
	struct hook k = {.h = h, .fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), .caller = pthread_self()};
	assert_true(k.fd >= 0);
	assert_int_equal(simhost_engine_hook(h, k.fd, NULL, &k), -EINVAL);
	assert_int_equal(simhost_engine_hook(h, k.fd, hook_fn, &k), 0);
	assert_int_equal(simhost_engine_hook(h, k.fd, hook_fn, &k), -EBUSY);

	uint8_t tur[6] = {0}; /* TEST UNIT READY: counted as "other" */
	for (int i = 0; i < 3; i++) {
		struct simhost_result r;
		test_cmd(h, tur, sizeof(tur), NULL, 0, 0, &r);
		assert_int_equal(r.r.status, 0);
		simhost_result_free(&r);
	}
	poke_and_wait(&k, 1);
	assert_int_equal(atomic_load(&k.other_ok), 3);
	poke_and_wait(&k, 2); /* polled again after each call */

	assert_int_equal(simhost_reopen(h), 0); /* a new reactor */
	poke_and_wait(&k, 3);
	struct simhost_result r;
	test_cmd(h, tur, sizeof(tur), NULL, 0, 0, &r);
	simhost_result_free(&r);
	poke_and_wait(&k, 4);
	assert_int_equal(atomic_load(&k.other_ok), 1); /* a reopened LUN counts from 0 */

	assert_int_equal(atomic_load(&k.on_caller), 0);
	assert_int_equal(atomic_load(&k.lun_ok), 4);
	assert_int_equal(atomic_load(&k.lun1_nodev), 4);
	assert_true(atomic_load(&k.capacity) > 0);
	assert_int_equal(simhost_close(h), 0);
	close(k.fd);
	simhost_remove_pool(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hook_called_on_engine_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
