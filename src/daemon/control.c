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
 * CTL_MAX_CONNS connections are open (more are closed at once). Pools
 * created here are appended to <state_dir>/pools.conf so that the daemon
 * opens them again after a restart.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "vaaid/control.h"
#include "vaaid/tcmu_dev.h"
#include "vaaid/util.h"

#define CTL_MAX_CONNS 16
#define CTL_DEADLINE_MS 10000u /* a whole exchange: request in, answer out */
#define CTL_LINE_MAX 2048

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
	const struct vd_config *conf;
	struct vreactor *r;
	struct vd_pools *pools;
	struct vd_devices *devs;
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
	c->conf = conf;
	c->r = r;
	c->pools = pools;
	c->devs = devs;
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

/* {"ok": false, "error": <printf of fmt>}. The message is sized to fit (no
 * fixed buffer: a long pool path or a long error from below is never cut). */
__attribute__((format(printf, 1, 2)))
static json_object *err_obj(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(n >= 0 ? msg : "out of memory"));
	if (n >= 0)
		free(msg);
	return o;
}

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_bool(json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

/* Every served device with its ring state: what a stalled LUN is waiting for
 * (ring.next != ring.cmd_head: queued and not taken; inflight > 0: taken and
 * not answered; notify_queued without doorbells growing: answers not rung). */
static json_object *devices_obj(struct vd_control *c)
{
	json_object *arr = json_object_new_array();
	struct vd_device_info info;
	struct tcmu_dev_diag g;
	for (unsigned i = 0; vd_device_diag(c->devs, i, &info, &g) == 0; i++) {
		json_object *d = json_object_new_object(), *r = json_object_new_object();
		json_object_object_add(d, "dev", json_object_new_string(info.dev));
		json_object_object_add(d, "pool", json_object_new_string(info.pool));
		json_object_object_add(d, "volume", json_object_new_string(info.volume));
		add_u64(d, "uio", info.minor);
		add_u64(r, "cmd_head", g.cmd_head);
		add_u64(r, "cmd_tail", g.cmd_tail);
		add_u64(r, "next", g.next);
		add_u64(r, "inflight", g.inflight);
		add_bool(r, "poll_armed", g.poll_armed);
		add_bool(r, "kick_queued", g.kick_queued);
		add_bool(r, "notify_queued", g.notify_queued);
		add_bool(r, "broken", g.broken);
		add_bool(r, "stopped", g.stopped);
		add_u64(r, "wakeups", g.wakeups);
		add_u64(r, "drains", g.drains);
		add_u64(r, "taken", g.taken);
		add_u64(r, "completed", g.completed);
		add_u64(r, "doorbells", g.doorbells);
		json_object_object_add(d, "ring", r);
		json_object_array_add(arr, d);
	}
	return arr;
}

/* What the pool waits for (a stall: journal paused with room waiters, a checkpoint
 * that does not end, data requests that never complete). */
static json_object *pool_diag_obj(const struct vpool *p)
{
	struct vpool_diag g;
	vpool_get_diag(p, &g);
	json_object *o = json_object_new_object();
	add_u64(o, "inflight", g.inflight);
	add_bool(o, "checkpoint_running", g.ckpt_running);
	add_bool(o, "failed", g.failed);
	add_u64(o, "redo_inflight", g.redo_inflight);
	add_u64(o, "redo_pending", g.redo_pending);
	add_bool(o, "redo_checkpoint_waiting", g.redo_ckpt_waiting);
	if (g.have_journal) {
		json_object *j = json_object_new_object();
		add_u64(j, "used", g.journal.used);
		add_u64(j, "size", g.journal.size);
		add_bool(j, "commit_inflight", g.journal.inflight);
		add_bool(j, "paused", g.journal.paused);
		add_bool(j, "failed", g.journal.failed);
		add_bool(j, "checkpoint_requested", g.journal.ckpt_requested);
		add_bool(j, "quiesce_waiting", g.journal.quiesce_waiting);
		add_u64(j, "room_waiters", g.journal.room_waiters);
		add_u64(j, "open_records", g.journal.open_records);
		json_object_object_add(o, "journal", j);
	}
	return o;
}

static json_object *status_obj(struct vd_control *c)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object *arr = json_object_new_array();
	for (unsigned i = 0; i < c->pools->n; i++) {
		struct vd_pool *vp = &c->pools->p[i];
		json_object *pj = vpool_stats_json(vp->pool);
		json_object *pool;
		if (json_object_object_get_ex(pj, "pool", &pool)) {
			json_object_object_add(pool, "name", json_object_new_string(vp->name));
			json_object_object_add(pool, "path", json_object_new_string(vp->path));
			/* A pool in a regular file keeps its journal in a file of its own
			 * (docs/design.md rule 12): the admin must keep the two together. */
			char jpath[VD_PATH_MAX + 16];
			if (vp->jdev && vpool_journal_path(vp->path, jpath, sizeof(jpath)) == 0)
				json_object_object_add(pool, "journal_file", json_object_new_string(jpath));
			/* docs/design.md rule 14: partial granules written whole (read first) */
			json_object_object_add(pool, "whole_granule_writes",
					       json_object_new_boolean(vp->dev->unaligned_writes_serialize));
			/* docs/design.md rule 15: DSYNC writes made durable by group flushes */
			json_object_object_add(pool, "group_flush",
					       json_object_new_boolean(vblk_uring_group_flush(vp->dev) > 0));
		}
		json_object *vols;
		if (json_object_object_get_ex(pj, "volumes", &vols))
			for (size_t k = 0; k < json_object_array_length(vols); k++) {
				json_object *v = json_object_array_get_idx(vols, k), *name;
				json_object_object_get_ex(v, "name", &name);
				json_object_object_add(v, "attached",
					json_object_new_boolean(vd_devices_uses(c->devs, vp->name,
						json_object_get_string(name))));
			}
		json_object_object_add(pj, "diag", pool_diag_obj(vp->pool));
		json_object_array_add(arr, pj);
	}
	json_object_object_add(o, "pools", arr);
	json_object_object_add(o, "devices", json_object_new_uint64(vd_devices_count(c->devs)));
	json_object_object_add(o, "device_list", devices_obj(c));
	return o;
}

static int remember_pool(struct vd_control *c, const char *name, const char *path, uint64_t size,
			 uint32_t extent)
{
	char file[VD_PATH_MAX + 32];
	snprintf(file, sizeof(file), "%s/pools.conf", c->conf->state_dir);
	FILE *f = fopen(file, "a");
	if (!f)
		return -errno;
	fprintf(f, "[pool %s]\npath = %s\nsize = %llu\n", name, path, (unsigned long long)size);
	if (extent)
		fprintf(f, "extent = %u\n", extent);
	int rc = fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -errno;
	fclose(f);
	return rc;
}

/* pool create NAME PATH SIZE [EXTENT] [force] */
static json_object *pool_create(struct vd_control *c, char **tok, int nt)
{
	bool force = nt >= 6 && !strcmp(tok[nt - 1], "force");
	if (force)
		nt--;
	if (nt < 5 || nt > 6)
		return err_obj("usage: pool create NAME PATH SIZE [EXTENT] [force]");
	uint64_t size, extent = 0;
	if (vparse_size(tok[4], &size) < 0 || size == 0)
		return err_obj("bad size '%s' (e.g. 100G)", tok[4]);
	if (nt == 6 && (vparse_size(tok[5], &extent) < 0 || !vis_pow2(extent) ||
			extent < VPOOL_MIN_EXTENT || extent > VPOOL_MAX_EXTENT))
		return err_obj("bad extent size '%s' (a power of two from 64K to 16M)", tok[5]);
	char err[1200];
	int rc = vd_pool_create(c->pools, c->r, tok[2], tok[3], size, (uint32_t)extent, force, err,
				sizeof(err));
	if (rc < 0)
		return err_obj("%s", err);
	vd_devices_watch_pools(c->devs);
	rc = remember_pool(c, tok[2], tok[3], size, (uint32_t)extent);
	if (rc < 0)
		return err_obj("pool created but not recorded in the state directory: %s",
			       strerror(-rc));
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

/* pool grow NAME SIZE: grow the backing file (or take a grown block device) online;
 * writes refused with 27h/07h for want of space succeed again at once. */
static json_object *pool_grow(struct vd_control *c, char **tok, int nt)
{
	if (nt != 4)
		return err_obj("usage: pool grow NAME SIZE");
	uint64_t size;
	if (vparse_size(tok[3], &size) < 0 || size == 0)
		return err_obj("bad size '%s' (e.g. 200G)", tok[3]);
	struct vd_pool *vp = vd_pool_find(c->pools, tok[2]);
	if (!vp)
		return err_obj("unknown pool '%s'", tok[2]);
	int rc = vpool_grow(vp->pool, size);
	if (rc == -EINVAL)
		return err_obj("pool grow: %s is not larger than the pool by at least one extent "
			       "(pools never shrink)", tok[3]);
	if (rc == -EFBIG)
		return err_obj("pool grow: %s is beyond what the pool's metadata was sized for when "
			       "it was created (4 x its size)", tok[3]);
	if (rc == -ENOSPC)
		return err_obj("pool grow: the block device is smaller than %s (grow it first)", tok[3]);
	if (rc < 0)
		return err_obj("pool grow failed: %s", strerror(-rc));
	vd_devices_threshold_update(c->devs, vp);
	vlog_info(vp->name, "pool %s grown to %s bytes", vp->name, tok[3]);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

static json_object *volume_delete(struct vd_control *c, char **tok, int nt)
{
	if (nt != 3)
		return err_obj("usage: volume delete POOL/VOLUME");
	char pool[VD_POOL_NAME_MAX + 1], vol[VPOOL_NAME_MAX + 1], err[600];
	if (vd_parse_cfgstring(tok[2], pool, sizeof(pool), vol, sizeof(vol), err, sizeof(err)) < 0)
		return err_obj("%s", err);
	struct vd_pool *vp = vd_pool_find(c->pools, pool);
	if (!vp)
		return err_obj("unknown pool '%s'", pool);
	if (!vpool_volume_find(vp->pool, vol))
		return err_obj("no volume '%s' in that pool", vol);
	if (vd_devices_uses(c->devs, pool, vol))
		return err_obj("volume %s is in use by a LUN: delete the backstore first", tok[2]);
	int rc = vpool_volume_delete(vp->pool, vol);
	if (rc < 0) {
		char msg[300];
		snprintf(msg, sizeof(msg), "deleting %s: %s", tok[2], strerror(-rc));
		return err_obj("%s", msg);
	}
	vlog_info(vp->name, "volume %s deleted", tok[2]);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

static json_object *answer(struct vd_control *c, char *line)
{
	char *tok[8];
	int nt = 0;
	for (char *s = strtok(line, " \t\r\n"); s && nt < 8; s = strtok(NULL, " \t\r\n"))
		tok[nt++] = s;
	if (nt == 0)
		return err_obj("empty request");
	if (nt == 1 && !strcmp(tok[0], "status"))
		return status_obj(c);
	if (nt == 2 && (!strcmp(tok[0], "pool") || !strcmp(tok[0], "volume")) &&
	    !strcmp(tok[1], "list"))
		return status_obj(c);
	if (nt >= 2 && !strcmp(tok[0], "pool") && !strcmp(tok[1], "create"))
		return pool_create(c, tok, nt);
	if (nt >= 2 && !strcmp(tok[0], "pool") && !strcmp(tok[1], "grow"))
		return pool_grow(c, tok, nt);
	if (nt >= 2 && !strcmp(tok[0], "volume") && !strcmp(tok[1], "delete"))
		return volume_delete(c, tok, nt);
	return err_obj("unknown request '%s'", tok[0]);
}

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
			conn_set_answer(k, err_obj("request too long"));
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
			conn_set_answer(k, answer(k->c, k->line));
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
		conn_set_answer(k, err_obj("permission denied: the control socket is for root only"));
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
