/*
 * The control socket (see include/vaaid/control.h).
 *
 * How this works: a non-blocking listening socket polled by the main loop;
 * vd_control_handle() accepts every pending connection. A connection is
 * never waited for: it reads what has arrived, and until its request line is
 * complete it waits in the reactor (a POLLIN poll), as its answer does for
 * room (POLLOUT) when the client is slow to take it; a timer ends any
 * connection still waiting for its client CTL_DEADLINE_MS after it was
 * accepted (an answer that is ready is always tried once). So a client
 * that connects and stalls (or never reads a long answer) holds nothing but
 * its own connection: the main loop, and every LUN's I/O, go on. The poll and
 * timer callbacks only mark the connection; vd_control_service(), called by
 * the main loop after each reactor turn, does the work there -- requests
 * must run on the main loop, since pool creation (synchronous) drives the
 * reactor itself. Peers other than root get an error answer; at most
 * CTL_MAX_CONNS connections are open (more are closed at once). What a
 * request line is answered with is src/daemon/control_request.c's job.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "vaaid/control.h"
#include "vaaid/control_request.h"
#include "vaaid/util.h"

#define CTL_MAX_CONNS 16
#define CTL_DEADLINE_MS 10000u /* a whole exchange: request in, answer out */
#define CTL_LINE_MAX (VD_CTL_LINE_MAX + 1) /* the line and its NUL */

enum ctl_state { CTL_READING, CTL_WRITING, CTL_CLOSING };

/* One client connection: its request line, then its answer. */
struct ctl_conn {
	struct vd_control *c;
	int fd;
	enum ctl_state state;
	char line[CTL_LINE_MAX];
	size_t got;
	char *answer; /* JSON + "\n" */
	size_t alen, sent;
	struct vio_op poll_op;
	struct vio_timer timer;
	bool poll_armed, timer_armed, ready, expired;
	struct ctl_conn *next;
};

struct vd_control {
	int fd;
	char path[VD_PATH_MAX];
	struct vd_control_env env; /* what requests act on */
	struct vreactor *r;
	struct ctl_conn *conns;
	unsigned nconns;
	bool pending; /* some connection was marked ready */
	unsigned deadline_ms;
};

static int mkdir_parent(const char *path)
{
	char dir[VD_PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	for (char *s = dir + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		mkdir(dir, 0755);
		*s = '/';
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int vd_control_open(const struct vd_config *conf, struct vreactor *r, struct vd_pools *pools,
		    struct vd_devices *devs, struct vd_control **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(conf->control_socket) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	struct vd_control *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->env = (struct vd_control_env){.conf = conf, .r = r, .pools = pools, .devs = devs};
	c->r = r;
	c->deadline_ms = CTL_DEADLINE_MS;
	snprintf(c->path, sizeof(c->path), "%s", conf->control_socket);
	memcpy(sa.sun_path, conf->control_socket, strlen(conf->control_socket) + 1); /* length checked above */
	int rc = mkdir_parent(c->path);
	if (rc < 0)
		goto fail;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		rc = -errno;
		goto fail;
	}
	unlink(c->path); /* a stale socket of a previous run */
	mode_t old = umask(0177);
	rc = bind(c->fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || listen(c->fd, 16) < 0) {
		rc = -errno;
		close(c->fd);
		goto fail;
	}
	*out = c;
	return 0;
fail:
	free(c);
	return rc;
}

int vd_control_fd(const struct vd_control *c) { return c->fd; }

static void conn_poll_done(void *arg, int res)
{
	struct ctl_conn *k = arg;
	(void)res;
	k->poll_armed = false;
	k->ready = true;
	k->c->pending = true;
}

static void conn_timer_done(void *arg, int res)
{
	struct ctl_conn *k = arg;
	k->timer_armed = false;
	if (res == -ETIME)
		k->expired = true; /* too slow: ends when it next waits for the client */
	k->ready = true;
	k->c->pending = true;
}

/* Wait in the reactor for the client (POLLIN while reading, POLLOUT while writing). */
static void conn_wait(struct ctl_conn *k)
{
	vio_op_init(&k->poll_op, conn_poll_done, k);
	if (vreactor_poll_fd_events(k->c->r, k->fd, k->state == CTL_READING ? POLLIN : POLLOUT,
				    &k->poll_op) == 0)
		k->poll_armed = true;
	else
		k->state = CTL_CLOSING; /* (no SQE: cannot happen with get_sqe's submit) */
}

static void conn_set_answer(struct ctl_conn *k, json_object *o)
{
	const char *js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(js);
	k->answer = malloc(len + 1);
	if (k->answer) {
		memcpy(k->answer, js, len);
		k->answer[len] = '\n';
		k->alen = len + 1;
		k->sent = 0;
		k->state = CTL_WRITING;
	} else {
		k->state = CTL_CLOSING;
	}
	json_object_put(o);
}

/* Read what has arrived; answer once the line is complete (or the client stopped sending). */
static void conn_read(struct ctl_conn *k)
{
	for (;;) {
		if (k->got == sizeof(k->line) - 1) {
			conn_set_answer(k, vd_control_error("request too long"));
			return;
		}
		ssize_t n = read(k->fd, k->line + k->got, sizeof(k->line) - 1 - k->got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return; /* wait for more */
		if (n < 0) {
			k->state = CTL_CLOSING;
			return;
		}
		bool eof = n == 0;
		k->got += (size_t)n;
		k->line[k->got] = 0;
		if (eof || memchr(k->line + k->got - (size_t)n, '\n', (size_t)n)) {
			if (eof && !k->got) {
				k->state = CTL_CLOSING; /* connected, said nothing, left */
				return;
			}
			char *nl = strchr(k->line, '\n');
			if (nl)
				*nl = 0;
			conn_set_answer(k, vd_control_answer(&k->c->env, k->line));
			return;
		}
	}
}

static void conn_write(struct ctl_conn *k)
{
	while (k->sent < k->alen) {
		ssize_t n = send(k->fd, k->answer + k->sent, k->alen - k->sent, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return; /* the client has not taken enough yet: wait for room */
		if (n <= 0) {
			k->state = CTL_CLOSING;
			return;
		}
		k->sent += (size_t)n;
	}
	k->state = CTL_CLOSING; /* answered */
}

/* Advance one connection as far as it goes without waiting. */
static void conn_step(struct ctl_conn *k)
{
	if (k->state == CTL_READING)
		conn_read(k);
	if (k->state == CTL_WRITING)
		conn_write(k);
	if (k->expired)
		k->state = CTL_CLOSING; /* the client is out of time (an answer ready was tried once) */
	if (k->state == CTL_CLOSING) {
		/* its poll and timer must have run before the fd and the memory go */
		if (k->poll_armed)
			vreactor_cancel(k->c->r, &k->poll_op);
		if (k->timer_armed)
			vreactor_cancel(k->c->r, &k->timer.op);
	} else if (!k->poll_armed) {
		conn_wait(k);
	}
}

static void conn_free(struct ctl_conn *k)
{
	close(k->fd);
	free(k->answer);
	free(k);
}

static void conn_new(struct vd_control *c, int fd)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	if (c->nconns >= CTL_MAX_CONNS) {
		close(fd); /* the client sees the connection closed unanswered */
		return;
	}
	struct ctl_conn *k = calloc(1, sizeof(*k));
	if (!k) {
		close(fd);
		return;
	}
	k->c = c;
	k->fd = fd;
	k->state = CTL_READING;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.uid != 0)
		conn_set_answer(k, vd_control_error("permission denied: the control socket is for root only"));
	vio_op_init(&k->timer.op, conn_timer_done, k);
	if (vreactor_timeout(c->r, &k->timer, (uint64_t)c->deadline_ms * 1000000u) == 0)
		k->timer_armed = true;
	k->next = c->conns;
	c->conns = k;
	c->nconns++;
	conn_step(k);
}

void vd_control_handle(struct vd_control *c)
{
	for (;;) {
		int fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return; /* EAGAIN: nothing more pending */
		conn_new(c, fd);
	}
}

void vd_control_service(struct vd_control *c)
{
	while (c && c->pending) {
		c->pending = false;
		for (struct ctl_conn **pp = &c->conns; *pp;) {
			struct ctl_conn *k = *pp;
			if (k->ready) {
				k->ready = false;
				conn_step(k);
			}
			if (k->state == CTL_CLOSING && !k->poll_armed && !k->timer_armed) {
				*pp = k->next;
				c->nconns--;
				conn_free(k);
			} else {
				pp = &k->next;
			}
		}
	}
}

bool vd_control_pending(const struct vd_control *c)
{
	return c && c->pending;
}

void vd_control_set_deadline_ms(struct vd_control *c, unsigned ms)
{
	c->deadline_ms = ms;
}

unsigned vd_control_connections(const struct vd_control *c)
{
	return c->nconns;
}

void vd_control_close(struct vd_control *c)
{
	if (!c)
		return;
	/* Polls and timers still queued die with the ring (vreactor_destroy runs no
	 * callback; the main loop runs no turn after this). */
	while (c->conns) {
		struct ctl_conn *k = c->conns;
		c->conns = k->next;
		conn_free(k);
	}
	close(c->fd);
	unlink(c->path);
	free(c);
}
