/*
 * The control socket's connections (src/daemon/control.c) against real Unix
 * sockets and the real reactor, driven the way vaaid's main loop drives them
 * (accept, reactor turn, service): a client that stalls holds only its own
 * connection -- another client's request is answered meanwhile -- and is
 * disconnected at its deadline; a request too long, a line ended by the
 * client closing its side, an error answer longer than any fixed buffer, a
 * client that connects and leaves, more clients than the connection limit. The daemon has no pool here: "status" answers
 * {"ok":true,"pools":[],...}, unknown requests an error.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "vaaid/control.h"
#include "vaaid/io.h"

struct env {
	char dir[512];
	struct vd_config conf;
	struct vreactor *r;
	struct vd_pools pools;
	struct vd_devices *devs;
	struct vd_control *c;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	assert_non_null(e);
	const char *tmp = getenv("VAAID_TEST_TMP");
	snprintf(e->dir, sizeof(e->dir), "%s/control.%d", tmp ? tmp : "/tmp", (int)getpid());
	char cmd[1100];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", e->dir, e->dir);
	assert_int_equal(system(cmd), 0);
	vd_config_defaults(&e->conf);
	e->conf.n_pools = 0;
	snprintf(e->conf.state_dir, sizeof(e->conf.state_dir), "%s", e->dir);
	snprintf(e->conf.control_socket, sizeof(e->conf.control_socket), "%s/run/control", e->dir);
	assert_int_equal(vreactor_create(64, &e->r), 0);
	char err[1200];
	assert_int_equal(vd_pools_open(&e->pools, &e->conf, e->r, err, sizeof(err)), 0);
	struct vd_env env = {.r = e->r, .pools = &e->pools, .conf = &e->conf};
	assert_int_equal(vd_devices_new(&env, &e->devs), 0);
	assert_int_equal(vd_control_open(&e->conf, e->r, &e->pools, e->devs, &e->c), 0);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	vd_control_close(e->c);
	vd_devices_free(e->devs);
	vd_pools_close(&e->pools);
	vreactor_destroy(e->r);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", e->dir);
	free(e);
	return 0;
}

/* One turn of vaaid's main loop for the control socket. */
static void turn(struct env *e)
{
	vd_control_handle(e->c);
	int rc = vreactor_run_once(e->r, 20);
	assert_true(rc >= 0 || rc == -EDEADLK || rc == -ETIME);
	vd_control_service(e->c);
}

static int client(struct env *e)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	assert_true(strlen(e->conf.control_socket) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, e->conf.control_socket, strlen(e->conf.control_socket) + 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void send_str(int fd, const char *s)
{
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

/* Turn the loop until the client's connection is closed by the daemon; what it sent. */
static size_t read_all(struct env *e, int fd, char *buf, size_t cap)
{
	size_t got = 0;
	for (int i = 0; i < 500; i++) {
		turn(e);
		for (;;) {
			ssize_t n = read(fd, buf + got, cap - 1 - got);
			if (n > 0) {
				got += (size_t)n;
				continue;
			}
			if (n == 0 || (n < 0 && errno == ECONNRESET)) {
				/* closed: done (reset when the daemon closed with our surplus unread) */
				buf[got] = 0;
				return got;
			}
			assert_int_equal(errno, EAGAIN);
			break;
		}
	}
	fail_msg("the daemon did not close the connection");
	return 0;
}

/* Is the client's connection still open (nothing to read, no EOF)? */
static bool still_open(int fd)
{
	char b;
	ssize_t n = read(fd, &b, 1);
	return n < 0 && errno == EAGAIN;
}

/* Every connection gone (the daemon's side closed and freed) within a few turns. */
static void all_closed(struct env *e)
{
	for (int i = 0; i < 10 && vd_control_connections(e->c); i++)
		turn(e);
	assert_int_equal(vd_control_connections(e->c), 0);
}

static void stalled_client_does_not_block_others(void **state)
{
	struct env *e = *state;
	int a = client(e);
	send_str(a, "sta"); /* and then nothing, for now */
	for (int i = 0; i < 5; i++)
		turn(e);
	int b = client(e);
	send_str(b, "status\n");
	char buf[4096];
	read_all(e, b, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"ok\":true"));
	assert_non_null(strstr(buf, "\"pools\":[]"));
	assert_int_equal(buf[strlen(buf) - 1], '\n');
	close(b);
	assert_true(still_open(a));
	assert_int_equal(vd_control_connections(e->c), 1);
	send_str(a, "tus\n"); /* the stalled one finishes its line */
	read_all(e, a, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"ok\":true"));
	close(a);
	all_closed(e);
}

static void silent_client_disconnected_at_deadline(void **state)
{
	struct env *e = *state;
	vd_control_set_deadline_ms(e->c, 200);
	int a = client(e);
	uint64_t t0 = vclock_ns();
	char buf[256];
	assert_int_equal(read_all(e, a, buf, sizeof(buf)), 0); /* closed, unanswered */
	uint64_t ms = (vclock_ns() - t0) / 1000000u;
	assert_true(ms >= 150);
	close(a);
	all_closed(e);
}

static void request_too_long(void **state)
{
	struct env *e = *state;
	int a = client(e);
	char big[3000];
	memset(big, 'x', sizeof(big));
	assert_int_equal(write(a, big, sizeof(big)), (ssize_t)sizeof(big));
	char buf[1024];
	read_all(e, a, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"ok\":false"));
	assert_non_null(strstr(buf, "request too long"));
	close(a);
}

static void line_ended_by_shutdown_and_unknown_request(void **state)
{
	struct env *e = *state;
	int a = client(e);
	send_str(a, "status");
	assert_int_equal(shutdown(a, SHUT_WR), 0);
	char buf[1024];
	read_all(e, a, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"ok\":true"));
	close(a);
	a = client(e);
	send_str(a, "frob\n");
	read_all(e, a, buf, sizeof(buf));
	assert_non_null(strstr(buf, "unknown request 'frob'"));
	close(a);
}

/* An error answer carries the whole message, however long: a pool path of
 * 900 characters under a regular file (so its directory cannot be made)
 * comes back in full with the reason at its end. */
static void long_error_not_cut(void **state)
{
	struct env *e = *state;
	char file[600], path[VD_PATH_MAX], req[1200];
	snprintf(file, sizeof(file), "%s/plain", e->dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	/* the longest path pools.conf can record (VD_CONF_LINE_MAX - "path = "): its error,
	 * with the whole path, comes back whole; a longer path is refused for its length */
	const int longest = VD_CONF_LINE_MAX - 7;
	for (int round = 0; round < 2; round++) {
		int n = snprintf(path, sizeof(path), "%s/", file);
		int to = (round ? 900 : longest) - 9; /* 9: "/pool.img" */
		while (n < to)
			path[n++] = 'd';
		snprintf(path + n, sizeof(path) - (size_t)n, "/pool.img");
		assert_int_equal((int)strlen(path), round ? 900 : longest);
		snprintf(req, sizeof(req), "pool create p1 %s 64M\n", path);
		int a = client(e);
		send_str(a, req);
		char buf[4096];
		read_all(e, a, buf, sizeof(buf));
		json_object *o = json_tokener_parse(buf), *err;
		assert_non_null(o);
		assert_true(json_object_object_get_ex(o, "error", &err));
		char want[VD_PATH_MAX + 128];
		if (round)
			snprintf(want, sizeof(want), "pool path longer than %d bytes (pools.conf records "
				 "it on one line of at most %d)", longest, VD_CONF_LINE_MAX);
		else
			snprintf(want, sizeof(want), "pool 'p1': cannot create the directory of %s: "
				 "Not a directory", path);
		assert_string_equal(json_object_get_string(err), want);
		json_object_put(o);
		close(a);
	}
}

static void client_that_leaves_at_once(void **state)
{
	struct env *e = *state;
	close(client(e));
	all_closed(e);
}

static void connection_limit(void **state)
{
	struct env *e = *state;
	int fds[20];
	for (int i = 0; i < 20; i++) {
		fds[i] = client(e);
		if (i % 4 == 3)
			turn(e); /* accept them (the listen backlog is 16) */
	}
	turn(e);
	assert_int_equal(vd_control_connections(e->c), 16);
	/* the first 16 wait; the 4 beyond the limit were closed unanswered */
	for (int i = 0; i < 20; i++) {
		char b;
		ssize_t n = read(fds[i], &b, 1);
		if (i < 16)
			assert_true(n < 0 && errno == EAGAIN);
		else
			assert_int_equal(n, 0);
	}
	/* and a waiting one is still served */
	send_str(fds[0], "status\n");
	char buf[1024];
	read_all(e, fds[0], buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"ok\":true"));
	for (int i = 0; i < 20; i++)
		close(fds[i]);
	all_closed(e);
}

/* [pool] create = no: a configured pool file that is missing stops the open, naming
 * it, and is not made; the default (auto) makes it, as it always did. */
static void missing_file_pool_create_no(void **state)
{
	struct env *e = *state;
	struct vd_config c;
	vd_config_defaults(&c);
	snprintf(c.state_dir, sizeof(c.state_dir), "%s", e->dir);
	c.n_pools = 1;
	snprintf(c.pools[0].name, sizeof(c.pools[0].name), "nf");
	snprintf(c.pools[0].path, sizeof(c.pools[0].path), "%s/nf.pool", e->dir);
	c.pools[0].size = 64 << 20;
	c.pools[0].create = VD_CREATE_NO;
	struct vd_pools *ps = calloc(1, sizeof(*ps));
	assert_non_null(ps);
	char err[1200] = "";
	assert_int_equal(vd_pools_open(ps, &c, e->r, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, c.pools[0].path));
	assert_non_null(strstr(err, "create = no"));
	vd_pools_close(ps);
	struct stat st;
	assert_int_equal(stat(c.pools[0].path, &st), -1); /* not made */
	c.pools[0].create = VD_CREATE_AUTO;
	assert_int_equal(vd_pools_open(ps, &c, e->r, err, sizeof(err)), 0);
	assert_int_equal(stat(c.pools[0].path, &st), 0);
	vd_pools_close(ps);
	free(ps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(stalled_client_does_not_block_others, setup, teardown),
		cmocka_unit_test_setup_teardown(silent_client_disconnected_at_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(request_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(line_ended_by_shutdown_and_unknown_request, setup,
						teardown),
		cmocka_unit_test_setup_teardown(long_error_not_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_file_pool_create_no, setup, teardown),
		cmocka_unit_test_setup_teardown(client_that_leaves_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(connection_limit, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
