/*
 * The daemon's systemd notifications (src/daemon/notify.c) against a fake
 * NOTIFY_SOCKET (a datagram socket of this test, as systemd's): READY=1 with
 * the STATUS line, then WATCHDOG=1 + STATUS from the reactor timer at half of
 * WATCHDOG_USEC, STOPPING=1, and pings still after it; without a watchdog no
 * WATCHDOG=1 at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "vaaid/daemon.h"
#include "vaaid/io.h"

static void status(void *arg, char *buf, size_t len)
{
	snprintf(buf, len, "serving %d LUN(s)", *(int *)arg);
}

/* A datagram socket bound to a fresh path; NOTIFY_SOCKET names it. */
static int fake_systemd(char *path, size_t len)
{
	const char *tmp = getenv("VAAID_TEST_TMP");
	snprintf(path, len, "%s/notify.%d.sock", tmp ? tmp : "/tmp", (int)getpid());
	unlink(path);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(fd >= 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(setenv("NOTIFY_SOCKET", path, 1), 0);
	return fd;
}

/* Every message received so far, joined with '|'. */
static void drain(int fd, char *out, size_t len)
{
	size_t n = strlen(out);
	char m[1024];
	ssize_t r;
	while ((r = recv(fd, m, sizeof(m) - 1, 0)) > 0) {
		m[r] = 0;
		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s|", m);
	}
}

static void run_for(struct vreactor *r, uint64_t ms)
{
	uint64_t end = vclock_ns() + ms * 1000000u;
	while (vclock_ns() < end)
		vreactor_run_once(r, 10);
}

static unsigned count(const char *s, const char *what)
{
	unsigned n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void test_ready_status_watchdog_stopping(void **state)
{
	(void)state;
	char path[256], got[8192] = "";
	int fd = fake_systemd(path, sizeof(path));
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	setenv("WATCHDOG_USEC", "200000", 1); /* 200 ms: a ping every 100 ms */
	struct vreactor *r;
	assert_int_equal(vreactor_create(16, &r), 0);
	int luns = 3;
	struct vd_notify *n;
	assert_int_equal(vd_notify_new(r, status, &luns, &n), 0);
	assert_true(vd_notify_watchdog(n));
	vd_notify_ready(n);
	drain(fd, got, sizeof(got));
	assert_non_null(strstr(got, "READY=1\nSTATUS=serving 3 LUN(s)"));
	/* one with READY, then one every 100 ms: 3 within 10 s however slow the machine */
	for (int i = 0; i < 1000 && count(got, "WATCHDOG=1") < 3; i++) {
		run_for(r, 10);
		drain(fd, got, sizeof(got));
	}
	assert_true(count(got, "WATCHDOG=1") >= 3);
	assert_non_null(strstr(got, "WATCHDOG=1\nSTATUS=serving 3 LUN(s)"));
	vd_notify_stopping(n);
	const char *stop = NULL;
	for (int i = 0; i < 1000 && !(stop && count(stop, "WATCHDOG=1") >= 1); i++) {
		run_for(r, 10);
		drain(fd, got, sizeof(got));
		stop = strstr(got, "STOPPING=1");
	}
	assert_non_null(stop);
	assert_true(count(stop, "WATCHDOG=1") >= 1); /* pings go on while the pools close */
	vreactor_destroy(r);
	vd_notify_free(n);
	close(fd);
	unlink(path);
	unsetenv("WATCHDOG_PID");
	unsetenv("WATCHDOG_USEC");
	unsetenv("NOTIFY_SOCKET");
}

static void test_no_watchdog_no_ping(void **state)
{
	(void)state;
	char path[256], got[8192] = "";
	int fd = fake_systemd(path, sizeof(path));
	unsetenv("WATCHDOG_USEC");
	struct vreactor *r;
	assert_int_equal(vreactor_create(16, &r), 0);
	int luns = 0;
	struct vd_notify *n;
	assert_int_equal(vd_notify_new(r, status, &luns, &n), 0);
	assert_false(vd_notify_watchdog(n));
	vd_notify_ready(n);
	run_for(r, 150);
	drain(fd, got, sizeof(got));
	assert_non_null(strstr(got, "READY=1\nSTATUS=serving 0 LUN(s)"));
	assert_null(strstr(got, "WATCHDOG=1"));
	vreactor_destroy(r);
	vd_notify_free(n);
	close(fd);
	unlink(path);
	unsetenv("NOTIFY_SOCKET");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ready_status_watchdog_stopping),
		cmocka_unit_test(test_no_watchdog_no_ping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
