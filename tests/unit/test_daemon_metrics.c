/*
 * The Prometheus endpoint (include/vaaid/metrics.h, issue 25):
 *  - [metrics] listen addresses (vd_metrics_parse_listen);
 *  - the exposition of known counters: values, labels, cumulative histogram
 *    buckets with +Inf = _count, and the format's rule that each family is
 *    written whole after its HELP and TYPE;
 *  - HTTP through libmicrohttpd on 127.0.0.1 (a port the kernel picks), with
 *    this thread as the daemon's main loop (vd_metrics_service when the
 *    eventfd is readable) and a client thread: GET /metrics is the snapshot's
 *    text, other paths 404, other methods 405, a malformed request 400, a
 *    client that connects and sends nothing does not hold up another's GET,
 *    and a main loop that never answers gives 503 after 5 s;
 *  - a source whose snapshot is a copy of the counters (what vaaid serves):
 *    taken on the main loop's thread, formatted on another (the HTTP
 *    connection's) into exactly vd_metrics_format's text, every copy freed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "vaaid/metrics.h"

static void test_listen(void **state)
{
	(void)state;
	struct sockaddr_storage ss;
	socklen_t len;
	assert_int_equal(vd_metrics_parse_listen("127.0.0.1:9612", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9612);
	assert_int_equal(vd_metrics_parse_listen("[::1]:9612", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(vd_metrics_parse_listen("0.0.0.0:1", &ss, &len), 0);
	const char *bad[] = {"", "9612", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
			     "127.0.0.1:-1", "127.0.0.1:+5", "localhost:9612", "::1:9612",
			     "[::1]9612", "[127.0.0.1]:9612", "1.2.3:80", "127.0.0.1:80x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(vd_metrics_parse_listen(bad[i], &ss, &len), -EINVAL);
}

static struct vd_metrics_lun lun;
static struct vd_metrics_pool pool;

static void fill(void)
{
	memset(&lun, 0, sizeof(lun));
	lun.pool = "default";
	lun.volume = "ds1";
	for (int i = 0; i < 16; i++)
		lun.naa[i] = (uint8_t)(0x60 + i);
	lun.stats.cmd[VSTAT_CAW].ok = 3;
	lun.stats.cmd[VSTAT_CAW].failed = 2;
	lun.stats.cmd[VSTAT_CAW].bytes = 1536;
	lun.stats.cmd[VSTAT_CAW].lat_ok = (struct vstat_lat){.count = 3, .sum_ns = 1500000};
	lun.stats.cmd[VSTAT_CAW].lat_ok.bucket[9] = 2; /* < 2^19 ns */
	lun.stats.cmd[VSTAT_CAW].lat_ok.bucket[10] = 1;
	lun.stats.xcopy_dst_bytes = 4194304;
	lun.stats.xcopy_shared_bytes = 3145728;
	lun.stats.xcopy_copied_bytes = 1048576;
	lun.stats.ws_deallocated_bytes = 12288;
	lun.stats.unmap_deallocated_bytes = 8192;
	lun.stats.caw_miscompares = 2;
	lun.stats.out_of_space = 1;
	lun.stats.ua_posted[VSTAT_UA_THRESHOLD] = 1;
	memset(&pool, 0, sizeof(pool));
	pool.name = "default";
	pool.luns = 1;
	pool.stats.capacity = 1000;
	pool.stats.used = 250;
	pool.soft_threshold = 800;
	pool.stats.journal_commits = 12;
	pool.stats.checkpoint_ns = 1500000000;
	pool.stats.share_room_refused = 7;
	pool.stats.store_io.write_ops = 7;
}

#define L "pool=\"default\",volume=\"ds1\",naa=\"606162636465666768696a6b6c6d6e6f\""

/* Every sample after its family's TYPE, every family in one run. */
static void check_grouping(const char *text)
{
	char fam[128] = "", type[32] = "";
	char seen[64][128];
	int nseen = 0;
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, '\n');
		assert_non_null(e);
		char line[1024];
		size_t n = (size_t)(e - p) < sizeof(line) - 1 ? (size_t)(e - p) : sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = 0;
		p = e + 1;
		if (!strncmp(line, "# TYPE ", 7)) {
			assert_int_equal(sscanf(line + 7, "%127s %31s", fam, type), 2);
			for (int i = 0; i < nseen; i++)
				assert_string_not_equal(seen[i], fam); /* a family written twice */
			assert_true(nseen < 64);
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", fam);
			continue;
		}
		if (line[0] == '#')
			continue;
		char name[128];
		size_t k = strcspn(line, "{ ");
		assert_true(k < sizeof(name));
		memcpy(name, line, k);
		name[k] = 0;
		if (!strcmp(type, "histogram")) {
			size_t fl = strlen(fam);
			assert_memory_equal(name, fam, fl);
			assert_true(!strcmp(name + fl, "_bucket") || !strcmp(name + fl, "_sum") ||
				    !strcmp(name + fl, "_count"));
		} else {
			assert_string_equal(name, fam);
		}
	}
}

static void test_format(void **state)
{
	(void)state;
	fill();
	size_t len;
	char *t = vd_metrics_format(&lun, 1, &pool, 1, &len);
	assert_non_null(t);
	assert_int_equal(strlen(t), len);
	assert_non_null(strstr(t, "vaaid_commands_total{" L ",kind=\"caw\",result=\"ok\"} 3\n"));
	assert_non_null(strstr(t, "vaaid_commands_total{" L ",kind=\"caw\",result=\"failed\"} 2\n"));
	assert_non_null(strstr(t, "vaaid_command_bytes_total{" L ",kind=\"caw\"} 1536\n"));
	assert_non_null(strstr(t, "vaaid_xcopy_bytes_total{" L ",side=\"destination\"} 4194304\n"));
	assert_non_null(strstr(t, "vaaid_xcopy_shared_bytes_total{" L "} 3145728\n"));
	assert_non_null(strstr(t, "vaaid_xcopy_copied_bytes_total{" L "} 1048576\n"));
	assert_non_null(strstr(t, "vaaid_deallocated_bytes_total{" L ",kind=\"write_same\"} 12288\n"));
	assert_non_null(strstr(t, "vaaid_deallocated_bytes_total{" L ",kind=\"unmap\"} 8192\n"));
	assert_non_null(strstr(t, "# TYPE vaaid_deallocated_bytes_total counter\n"));
	assert_non_null(strstr(t, "vaaid_caw_miscompares_total{" L "} 2\n"));
	assert_non_null(strstr(t, "vaaid_out_of_space_total{" L "} 1\n"));
	assert_non_null(strstr(t, "vaaid_unit_attentions_total{" L ",condition=\"threshold\"} 1\n"));
	/* cumulative: 0 up to le 2^18 ns, 2 from 2^19, 3 from 2^20; +Inf = _count */
	assert_non_null(strstr(t, "_bucket{" L ",kind=\"caw\",result=\"ok\",le=\"0.000262144\"} 0\n"));
	assert_non_null(strstr(t, "_bucket{" L ",kind=\"caw\",result=\"ok\",le=\"0.000524288\"} 2\n"));
	assert_non_null(strstr(t, "_bucket{" L ",kind=\"caw\",result=\"ok\",le=\"0.001048576\"} 3\n"));
	assert_non_null(strstr(t, "_bucket{" L ",kind=\"caw\",result=\"ok\",le=\"+Inf\"} 3\n"));
	assert_non_null(strstr(t, "vaaid_command_latency_seconds_sum{" L
				  ",kind=\"caw\",result=\"ok\"} 0.001500000\n"));
	assert_non_null(strstr(t, "vaaid_command_latency_seconds_count{" L
				  ",kind=\"caw\",result=\"ok\"} 3\n"));
	assert_non_null(strstr(t, "vaaid_pool_used_bytes{pool=\"default\"} 250\n"));
	assert_non_null(strstr(t, "vaaid_pool_luns{pool=\"default\"} 1\n"));
	assert_non_null(strstr(t, "vaaid_pool_soft_threshold_bytes{pool=\"default\"} 800\n"));
	assert_non_null(strstr(t, "vaaid_pool_journal_commits_total{pool=\"default\"} 12\n"));
	assert_non_null(strstr(t, "vaaid_pool_checkpoint_seconds_total{pool=\"default\"} 1.500000000\n"));
	assert_non_null(strstr(t, "vaaid_pool_share_room_refused_total{pool=\"default\"} 7\n"));
	assert_non_null(strstr(t, "vaaid_pool_io_operations_total{pool=\"default\",store=\"data\","
				  "op=\"write\"} 7\n"));
	assert_null(strstr(t, "store=\"journal\"")); /* no journal file */
	check_grouping(t);
	free(t);
}

/* ---- HTTP */

struct http {
	uint16_t port;
	int snaps;      /* texts made by the main loop */
	bool serve;     /* the main loop answers */
	bool done;      /* the client thread ended */
	bool client_failed; /* a connection or a write of the client thread failed */
	char got[6][65536];
	char *expect;
};

static char *snap(void *arg, size_t *len)
{
	struct http *h = arg;
	h->snaps++;
	*len = strlen(h->expect);
	return strdup(h->expect);
}

/* (no cmocka assert here: the client thread calls these; failures come back as -1) */
static int dial(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Send req, read the whole answer (the server closes) into out: 0, or -1. */
static int roundtrip(uint16_t port, const char *req, char *out, size_t cap)
{
	out[0] = 0;
	int fd = dial(port);
	if (fd < 0)
		return -1;
	size_t n = strlen(req);
	if (write(fd, req, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	size_t got = 0;
	ssize_t r;
	while (got + 1 < cap && (r = read(fd, out + got, cap - 1 - got)) > 0)
		got += (size_t)r;
	out[got] = 0;
	close(fd);
	return 0;
}

static void *client(void *arg)
{
	struct http *h = arg;
	int idle = dial(h->port); /* a client that says nothing, held open meanwhile */
	h->client_failed = idle < 0;
	h->client_failed |= roundtrip(h->port, "GET /metrics HTTP/1.0\r\n\r\n", h->got[0],
				      sizeof(h->got[0])) < 0;
	h->client_failed |= roundtrip(h->port, "GET /other HTTP/1.0\r\n\r\n", h->got[1],
				      sizeof(h->got[1])) < 0;
	h->client_failed |= roundtrip(h->port,
				      "POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc",
				      h->got[2], sizeof(h->got[2])) < 0;
	h->client_failed |= roundtrip(h->port, "\x01\x02 nonsense\r\n\r\n", h->got[3],
				      sizeof(h->got[3])) < 0;
	if (idle >= 0)
		close(idle);
	__atomic_store_n(&h->done, true, __ATOMIC_SEQ_CST);
	return NULL;
}

/* This thread as the daemon's main loop until the client thread ends. */
static void main_loop(struct vd_metrics *m, struct http *h)
{
	while (!__atomic_load_n(&h->done, __ATOMIC_SEQ_CST)) {
		struct pollfd pf = {.fd = vd_metrics_fd(m), .events = POLLIN};
		if (poll(&pf, 1, 50) > 0 && h->serve)
			vd_metrics_service(m);
	}
}

static void test_http(void **state)
{
	(void)state;
	struct http *h = calloc(1, sizeof(*h));
	assert_non_null(h);
	h->serve = true;
	h->expect = "# HELP vaaid_x x\n# TYPE vaaid_x counter\nvaaid_x 1\n";
	struct vd_metrics *m;
	char err[256];
	assert_int_equal(vd_metrics_start("127.0.0.1:0", snap, h, &m, err, sizeof(err)), 0);
	h->port = vd_metrics_port(m);
	assert_true(h->port > 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, client, h), 0);
	main_loop(m, h);
	pthread_join(t, NULL);
	assert_false(h->client_failed);
	assert_non_null(strstr(h->got[0], " 200 OK\r\n"));
	assert_non_null(strstr(h->got[0], "text/plain; version=0.0.4"));
	assert_non_null(strstr(h->got[0], "\r\n\r\n# HELP vaaid_x x\n# TYPE vaaid_x counter\nvaaid_x 1\n"));
	assert_int_equal(h->snaps, 1); /* only the GET of /metrics asked the main loop */
	assert_non_null(strstr(h->got[1], " 404 "));
	assert_non_null(strstr(h->got[2], " 405 "));
	assert_non_null(strstr(h->got[3], " 400 "));
	vd_metrics_stop(m);
	free(h);
}

static void test_http_unanswered(void **state)
{
	(void)state;
	struct http *h = calloc(1, sizeof(*h));
	assert_non_null(h);
	h->expect = "";
	struct vd_metrics *m;
	char err[256];
	assert_int_equal(vd_metrics_start("127.0.0.1:0", snap, h, &m, err, sizeof(err)), 0);
	/* nobody runs vd_metrics_service: 503 after the 5 s wait */
	assert_int_equal(roundtrip(vd_metrics_port(m), "GET /metrics HTTP/1.0\r\n\r\n", h->got[0],
				   sizeof(h->got[0])), 0);
	assert_non_null(strstr(h->got[0], " 503 "));
	assert_int_equal(h->snaps, 0);
	vd_metrics_stop(m);
	free(h);
}

/* ---- a copy of the counters, formatted on the HTTP thread */

struct split {
	uint16_t port;
	pthread_t loop;       /* the main loop's thread */
	int takes, renders, drops;
	bool take_elsewhere;  /* a take not on the main loop's thread */
	bool render_on_loop;  /* a render on it */
	bool done, client_failed;
	char got[2][262144];
};

static void *split_take(void *arg)
{
	struct split *h = arg;
	h->takes++;
	h->take_elsewhere |= !pthread_equal(pthread_self(), h->loop);
	struct vd_metrics_snapshot *s = vd_metrics_snapshot_alloc(1, 1);
	if (!s)
		return NULL;
	s->luns[0] = lun;
	s->luns[0].pool = strdup(lun.pool);
	s->luns[0].volume = strdup(lun.volume);
	s->pools[0] = pool;
	s->pools[0].name = strdup(pool.name);
	return s;
}

static struct split *split_h; /* render and drop have no argument of their own */

static char *split_render(const void *snap, size_t *len)
{
	__atomic_add_fetch(&split_h->renders, 1, __ATOMIC_SEQ_CST);
	if (pthread_equal(pthread_self(), split_h->loop))
		__atomic_store_n(&split_h->render_on_loop, true, __ATOMIC_SEQ_CST);
	return vd_metrics_snapshot_text(snap, len);
}

static void split_drop(void *snap)
{
	__atomic_add_fetch(&split_h->drops, 1, __ATOMIC_SEQ_CST);
	vd_metrics_snapshot_free(snap);
}

static void *split_client(void *arg)
{
	struct split *h = arg;
	for (int i = 0; i < 2; i++)
		h->client_failed |= roundtrip(h->port, "GET /metrics HTTP/1.0\r\n\r\n", h->got[i],
					      sizeof(h->got[i])) < 0;
	__atomic_store_n(&h->done, true, __ATOMIC_SEQ_CST);
	return NULL;
}

static void test_http_split(void **state)
{
	(void)state;
	fill();
	struct split *h = calloc(1, sizeof(*h));
	assert_non_null(h);
	split_h = h;
	h->loop = pthread_self();
	const struct vd_metrics_source src = {split_take, split_render, split_drop, h};
	struct vd_metrics *m;
	char err[256];
	assert_int_equal(vd_metrics_start_source("127.0.0.1:0", &src, &m, err, sizeof(err)), 0);
	h->port = vd_metrics_port(m);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, split_client, h), 0);
	while (!__atomic_load_n(&h->done, __ATOMIC_SEQ_CST)) {
		struct pollfd pf = {.fd = vd_metrics_fd(m), .events = POLLIN};
		if (poll(&pf, 1, 50) > 0)
			vd_metrics_service(m);
	}
	pthread_join(t, NULL);
	vd_metrics_stop(m);
	assert_false(h->client_failed);
	size_t len;
	char *want = vd_metrics_format(&lun, 1, &pool, 1, &len);
	assert_non_null(want);
	assert_true(len + 1024 < sizeof(h->got[0]));
	for (int i = 0; i < 2; i++) {
		assert_non_null(strstr(h->got[i], " 200 OK\r\n"));
		const char *body = strstr(h->got[i], "\r\n\r\n");
		assert_non_null(body);
		assert_string_equal(body + 4, want); /* byte for byte */
	}
	free(want);
	assert_int_equal(h->takes, 2);
	assert_false(h->take_elsewhere);
	assert_int_equal(h->renders, 2);
	assert_false(h->render_on_loop); /* the text is not made on the main loop's thread */
	assert_int_equal(h->drops, 2);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_http_unanswered),
		cmocka_unit_test(test_http_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
