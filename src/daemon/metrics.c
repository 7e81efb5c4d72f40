/*
 * The Prometheus endpoint (include/vaaid/metrics.h): libmicrohttpd serves
 * HTTP on threads of its own (one per connection, at most 16 connections,
 * 10 s each), and the counters are read on the reactor's thread only.
 *
 * How this works: a GET /metrics takes the one request slot (a mutex and a
 * condition variable; requests one after the other), writes the eventfd the
 * main loop polls, and waits up to 5 s. The main loop's vd_metrics_service
 * sees the slot taken, calls the source's take (a copy of the counters:
 * src/daemon/main.c) and hands the snapshot over. The request frees the slot,
 * then formats the text from the snapshot on its own thread (the source's
 * render: src/daemon/metrics_snapshot.c, metrics_text.c) and frees it (drop):
 * the reactor only copies. A request that gave up (5 s) frees its slot; a
 * snapshot taken for it after that is dropped (generation numbers tell).
 * Stopping wakes any waiter first. vd_metrics_start (text made by the
 * reactor) is this with a source whose snapshot is the text.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "vaaid/metrics.h"

#define WAIT_NS (5ull * 1000000000ull)

struct vd_metrics {
	struct MHD_Daemon *d;
	int efd;
	struct vd_metrics_source src;
	vd_metrics_snap_fn text_snap; /* vd_metrics_start's, or NULL */
	void *text_arg;
	uint16_t port;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool busy;      /* a request holds the slot */
	bool asked;     /* it waits for the reactor */
	bool stopping;
	uint64_t gen;   /* of the request asking */
	uint64_t done;  /* the generation answered */
	void *snap;     /* taken for generation done, not yet collected */
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body,
			     const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static void deadline(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	uint64_t ns = (uint64_t)ts->tv_nsec + WAIT_NS;
	ts->tv_sec += (time_t)(ns / 1000000000u);
	ts->tv_nsec = (long)(ns % 1000000000u);
}

/* A snapshot from the reactor, or NULL (5 s passed, stopping, out of memory). */
static void *ask(struct vd_metrics *m)
{
	struct timespec until;
	deadline(&until);
	void *snap = NULL;
	pthread_mutex_lock(&m->mu);
	int rc = 0;
	while (m->busy && !m->stopping && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&m->cv, &m->mu, &until);
	if (!m->busy && !m->stopping) {
		m->busy = m->asked = true;
		uint64_t gen = ++m->gen;
		uint64_t one = 1;
		if (write(m->efd, &one, sizeof(one)) < 0) {
			/* an eventfd cannot overflow here */
		}
		rc = 0;
		while (m->done != gen && !m->stopping && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&m->cv, &m->mu, &until);
		if (m->done == gen) {
			snap = m->snap;
			m->snap = NULL;
		}
		m->busy = m->asked = false;
		pthread_cond_broadcast(&m->cv);
	}
	pthread_mutex_unlock(&m->mu);
	return snap;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req)
{
	struct vd_metrics *m = cls;
	(void)version;
	(void)upload;
	(void)req;
	if (*upload_size) { /* a body (only other methods have one): not read */
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics\n", "GET, HEAD");
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "not found: vaaid serves /metrics\n", NULL);
	size_t len = 0;
	char *text = NULL;
	void *snap = ask(m);
	if (snap) { /* formatted here, on this connection's thread */
		text = m->src.render(snap, &len);
		m->src.drop(snap);
	}
	if (!text)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "vaaid did not answer in time\n", NULL);
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

void vd_metrics_service(struct vd_metrics *m)
{
	uint64_t v;
	if (read(m->efd, &v, sizeof(v)) < 0) {
		/* nothing posted: a spurious wakeup */
	}
	pthread_mutex_lock(&m->mu);
	bool asked = m->asked && m->done != m->gen;
	uint64_t gen = m->gen;
	pthread_mutex_unlock(&m->mu);
	if (!asked)
		return;
	void *snap = m->src.take(m->src.arg); /* the reactor's thread: the counters are read here */
	pthread_mutex_lock(&m->mu);
	if (m->asked && m->gen == gen) {
		if (m->snap)
			m->src.drop(m->snap);
		m->snap = snap;
		m->done = gen;
		snap = NULL;
		pthread_cond_broadcast(&m->cv);
	}
	pthread_mutex_unlock(&m->mu);
	if (snap)
		m->src.drop(snap); /* its request gave up */
}

/* vd_metrics_start's source: the snapshot is the text, made by the reactor. */
struct text_snap {
	char *text;
	size_t len;
};

static void *text_take(void *arg)
{
	struct vd_metrics *m = arg;
	struct text_snap *t = malloc(sizeof(*t));
	if (t && !(t->text = m->text_snap(m->text_arg, &t->len))) {
		free(t);
		t = NULL;
	}
	return t;
}

static char *text_render(const void *snap, size_t *len)
{
	const struct text_snap *t = snap;
	char *c = malloc(t->len ? t->len : 1);
	if (c) {
		memcpy(c, t->text, t->len);
		*len = t->len;
	}
	return c;
}

static void text_drop(void *snap)
{
	struct text_snap *t = snap;
	free(t->text);
	free(t);
}

static int start(const char *listen, const struct vd_metrics_source *src, vd_metrics_snap_fn snap,
		 void *arg, struct vd_metrics **out, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	if (vd_metrics_parse_listen(listen, &ss, &sl) < 0) {
		snprintf(err, errlen, "metrics: bad listen address '%s'", listen);
		return -EINVAL;
	}
	struct vd_metrics *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	if (snap) {
		m->src = (struct vd_metrics_source){text_take, text_render, text_drop, m};
		m->text_snap = snap;
		m->text_arg = arg;
	} else {
		m->src = *src;
	}
	m->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&m->mu, NULL);
	/* (no MHD_USE_ERROR_LOG: a client sending garbage must not fill the journal) */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	if (m->efd >= 0)
		m->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR,
					(struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, 16u,
					MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (!m->d) {
		snprintf(err, errlen, "metrics: cannot listen on %s (%s)", listen,
			 m->efd < 0 ? strerror(errno) : "in use, or not an address of this host");
		vd_metrics_stop(m);
		return -EADDRNOTAVAIL;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_BIND_PORT);
	m->port = info ? info->port : 0;
	*out = m;
	return 0;
}

int vd_metrics_start_source(const char *listen, const struct vd_metrics_source *src,
			    struct vd_metrics **out, char *err, size_t errlen)
{
	return start(listen, src, NULL, NULL, out, err, errlen);
}

int vd_metrics_start(const char *listen, vd_metrics_snap_fn snap, void *arg,
		     struct vd_metrics **out, char *err, size_t errlen)
{
	return start(listen, NULL, snap, arg, out, err, errlen);
}

int vd_metrics_fd(const struct vd_metrics *m) { return m->efd; }

uint16_t vd_metrics_port(const struct vd_metrics *m) { return m->port; }

void vd_metrics_stop(struct vd_metrics *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->mu);
	m->stopping = true;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
	if (m->d)
		MHD_stop_daemon(m->d);
	if (m->snap)
		m->src.drop(m->snap);
	if (m->efd >= 0)
		close(m->efd);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m);
}
