/*
 * vaaid: the daemon. Serves LIO user:vaai backstores from thin pools.
 *
 * How this works: configuration (defaults, then --config FILE), pools opened
 * (the default pool is created in the state directory on first start), then
 * one reactor serves everything: each TCMU device's ring, the pools' I/O, and
 * poll operations on the netlink socket, a signalfd, the control socket and
 * the D-Bus connection. Those poll callbacks only set flags; the loop below
 * handles them between reactor iterations, because handling them may run
 * synchronous control-path pool functions (volume create/grow), which drive
 * the reactor themselves and must not run inside one of its callbacks.
 *
 * Startup order: pools, netlink (so that no ADDED_DEVICE is missed), the scan
 * of devices that already exist (a restarted daemon serves live LUNs again),
 * control socket, D-Bus. On SIGTERM/SIGINT: stop taking commands, let every
 * in-flight command complete, checkpoint and close the pools, exit 0.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "vaaid/daemon.h"
#include "vaaid/dbus.h"
#include "vaaid/lun.h"
#include "vaaid/metrics.h"
#include "vaaid/pool_watch.h"
#include "vaaid/control.h"
#include "vaaid/tcmu_nl.h"
#include "vaaid/util.h"

struct daemon {
	struct vd_config conf;
	struct vreactor *r;
	struct vd_pools pools;
	struct vd_devices *devs;
	struct tcmu_nl *nl;
	struct vd_nl_target nl_target; /* the netlink callbacks' argument (vd_nl_ops) */
	struct vd_control *ctl;
	struct vd_dbus *bus;
	struct vd_notify *notify; /* systemd: READY, STATUS, watchdog */
	struct vd_pool_watch watch; /* the RBD pools' lock and owner, every 5 s (pool_watch.h) */
	struct vd_metrics *metrics; /* the Prometheus endpoint ([metrics] listen), or NULL */
	struct vio_op metrics_op;
	bool metrics_ready;
	int sig_fd;
	int handler_fd; /* vd_handler_hold's: this daemon serves [tcmu] handler here */
	struct vio_op nl_op, sig_op, ctl_op, bus_op;
	bool nl_ready, sig_ready, ctl_ready, bus_ready, stop;
};

/* ---- poll callbacks: flags only */
static void on_nl(void *arg, int res) { (void)res; ((struct daemon *)arg)->nl_ready = true; }
static void on_sig(void *arg, int res) { (void)res; ((struct daemon *)arg)->sig_ready = true; }
static void on_ctl(void *arg, int res) { (void)res; ((struct daemon *)arg)->ctl_ready = true; }
static void on_bus(void *arg, int res) { (void)res; ((struct daemon *)arg)->bus_ready = true; }

static int arm(struct daemon *dm, int fd, struct vio_op *op, vio_cb cb)
{
	vio_op_init(op, cb, dm);
	return vreactor_poll_fd(dm->r, fd, op);
}

/* CheckConfig from targetcli: "<handler>/<pool>/<volume>" ([tcmu] handler, vaai) */
static int check_cfg(void *arg, const char *cfg, char *msg, size_t len)
{
	struct daemon *dm = arg;
	char pool[VD_POOL_NAME_MAX + 1], vol[VPOOL_NAME_MAX + 1];
	const char *handler = dm->conf.tcmu.handler;
	size_t sl = strlen(handler);
	if (strncmp(cfg, handler, sl) || cfg[sl] != '/') {
		snprintf(msg, len, "'%s' is not a %s configuration", cfg, handler);
		return -EINVAL;
	}
	int rc = vd_parse_cfgstring(cfg + sl + 1, pool, sizeof(pool), vol, sizeof(vol), msg, len);
	if (rc < 0)
		return rc;
	if (!vd_pool_find(&dm->pools, pool)) {
		snprintf(msg, len, "unknown pool '%s' (vaaictl pool list shows the pools)", pool);
		return -ENOENT;
	}
	if (vd_devices_uses(dm->devs, pool, vol)) {
		snprintf(msg, len, "volume %s/%s is already served by another backstore", pool, vol);
		return -EBUSY;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vaaid [--config FILE] [--state-dir DIR] [--log-level err|warn|info|debug]\n"
		"             [--control-socket PATH] [--no-dbus]\n"
		"Serves LIO user:vaai backstores (cfgstring <pool>/<volume>) from thin pools\n"
		"(user:NAME with [tcmu] handler = NAME in the configuration).\n"
		"Without --config, /etc/vaaid/vaaid.conf is read when it exists.\n");
}

static int parse_args(struct daemon *dm, int argc, char **argv, bool *no_dbus)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"state-dir", required_argument, NULL, 's'},
		{"log-level", required_argument, NULL, 'l'},
		{"control-socket", required_argument, NULL, 'S'},
		{"sysfs-root", required_argument, NULL, 1},
		{"configfs-root", required_argument, NULL, 2},
		{"dev-root", required_argument, NULL, 3},
		{"no-dbus", no_argument, NULL, 4},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	const char *config = NULL, *state = NULL, *level = NULL, *sock = NULL;
	const char *roots[3] = {NULL, NULL, NULL};
	int c;
	while ((c = getopt_long(argc, argv, "c:s:l:S:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 's': state = optarg; break;
		case 'l': level = optarg; break;
		case 'S': sock = optarg; break;
		case 1: case 2: case 3: roots[c - 1] = optarg; break;
		case 4: *no_dbus = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vaaid: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -EINVAL;
	}
	vd_config_defaults(&dm->conf);
	char err[600];
	if (!config && access("/etc/vaaid/vaaid.conf", F_OK) == 0)
		config = "/etc/vaaid/vaaid.conf";
	if (config && vd_config_load(&dm->conf, config, err, sizeof(err)) < 0) {
		fprintf(stderr, "vaaid: %s\n", err);
		return -EINVAL;
	}
	if (state) {
		if (state[0] != '/' || strlen(state) >= sizeof(dm->conf.state_dir)) {
			fprintf(stderr, "vaaid: --state-dir '%s' must be an absolute path\n", state);
			return -EINVAL;
		}
		snprintf(dm->conf.state_dir, sizeof(dm->conf.state_dir), "%s", state);
	}
	if (sock) {
		if (sock[0] != '/' || strlen(sock) >= sizeof(dm->conf.control_socket)) {
			fprintf(stderr, "vaaid: --control-socket '%s' must be an absolute path\n", sock);
			return -EINVAL;
		}
		snprintf(dm->conf.control_socket, sizeof(dm->conf.control_socket), "%s", sock);
	}
	if (level) {
		static const char *names[] = {"err", "warn", "info", "debug"};
		int l = -1;
		for (int i = 0; i < 4; i++)
			if (!strcmp(level, names[i]))
				l = i;
		if (l < 0) {
			fprintf(stderr, "vaaid: --log-level '%s' is not one of err, warn, info, debug\n",
				level);
			return -EINVAL;
		}
		dm->conf.log_level = l;
	}
	char *dst[3] = {dm->conf.sysfs_root, dm->conf.configfs_root, dm->conf.dev_root};
	for (int i = 0; i < 3; i++)
		if (roots[i])
			snprintf(dst[i], sizeof(dm->conf.sysfs_root), "%s", roots[i]);
	/* pools created with vaaictl are remembered in the state directory */
	char extra[VD_PATH_MAX + 32];
	snprintf(extra, sizeof(extra), "%s/pools.conf", dm->conf.state_dir);
	if (access(extra, F_OK) == 0 &&
	    vd_config_load_recorded(&dm->conf, extra, err, sizeof(err)) < 0) {
		fprintf(stderr, "vaaid: %s\n", err);
		return -EINVAL;
	}
	vd_config_finish(&dm->conf);
	return 0;
}

/* systemd's STATUS line: what is served and how full each pool is. */
static void status_line(void *arg, char *buf, size_t len)
{
	struct daemon *dm = arg;
	int n = snprintf(buf, len, "serving %u LUN(s)", vd_devices_count(dm->devs));
	for (unsigned i = 0; i < dm->pools.n && n >= 0 && (size_t)n < len; i++) {
		struct vpool_stats st;
		if (dm->pools.p[i].standby) {
			n += snprintf(buf + n, len - (size_t)n, "%s pool %s standby", i ? "," : ";",
				      dm->pools.p[i].name);
			continue;
		}
		vpool_get_stats(dm->pools.p[i].pool, &st);
		unsigned pct = st.capacity ? (unsigned)(st.used * 100 / st.capacity) : 0;
		n += snprintf(buf + n, len - (size_t)n, "%s pool %s %u%% used", i ? "," : ";",
			      dm->pools.p[i].name, pct);
	}
}

static void on_metrics(void *arg, int res) { (void)res; ((struct daemon *)arg)->metrics_ready = true; }

/* A copy of the counters for the Prometheus endpoint, on the reactor's thread
 * (vd_metrics_service calls it); the endpoint's HTTP thread formats and frees it. */
static void *metrics_take(void *arg)
{
	struct daemon *dm = arg;
	unsigned n = vd_devices_count(dm->devs);
	struct vd_metrics_snapshot *s = vd_metrics_snapshot_alloc(n, dm->pools.n);
	if (!s)
		return NULL;
	bool oom = false;
	struct vd_device_info info;
	unsigned k = 0;
	for (; k < n && vd_device_stats(dm->devs, k, &info, &s->luns[k].stats) == 0; k++) {
		s->luns[k].pool = strdup(info.pool);
		s->luns[k].volume = strdup(info.volume);
		oom |= !s->luns[k].pool || !s->luns[k].volume;
		memcpy(s->luns[k].naa, info.naa, 16);
	}
	s->nluns = k;
	size_t np = 0; /* the pools served here (not the standby ones) */
	for (unsigned i = 0; i < dm->pools.n && !oom; i++) {
		if (dm->pools.p[i].standby)
			continue;
		struct vd_metrics_pool *mp = &s->pools[np++];
		mp->name = strdup(dm->pools.p[i].name);
		oom |= !mp->name;
		vpool_get_stats(dm->pools.p[i].pool, &mp->stats);
		mp->soft_threshold = vaaid_soft_threshold_bytes(dm->pools.p[i].pool,
								dm->conf.soft_threshold);
		for (unsigned j = 0; j < k && !oom; j++)
			mp->luns += !strcmp(s->luns[j].pool, dm->pools.p[i].name);
	}
	s->npools = np;
	if (oom) {
		vd_metrics_snapshot_free(s);
		return NULL;
	}
	return s;
}

static void handle_signals(struct daemon *dm)
{
	struct signalfd_siginfo si;
	while (read(dm->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			vlog_info(NULL, "signal %u: stopping (in-flight commands complete first)",
				  si.ssi_signo);
			dm->stop = true;
			vd_notify_stopping(dm->notify);
		}
	}
}

/* Is anything flagged that the loop has not served yet? A handler that runs the
 * reactor nested (a control operation such as a takeover, a pool-watch look:
 * voffload_run) lets the other sources' callbacks set their flags after the
 * loop passed their checks: the next turn must then not block (it would wait
 * for the next event or the watch's 5 s timer with a netlink reply, a signal
 * or a request pending). */
static bool loop_pending(const struct daemon *dm)
{
	return dm->sig_ready || dm->nl_ready || dm->ctl_ready || dm->bus_ready ||
	       dm->metrics_ready || dm->watch.due || vd_control_pending(dm->ctl);
}

static int loop(struct daemon *dm)
{
	while (!dm->stop) {
		int rc = vreactor_run_once(dm->r, loop_pending(dm) ? 0 : -1);
		if (rc < 0 && rc != -EINTR) {
			vlog_err(NULL, "reactor: %s", strerror(-rc));
			return rc;
		}
		if (dm->sig_ready) {
			dm->sig_ready = false;
			handle_signals(dm);
			arm(dm, dm->sig_fd, &dm->sig_op, on_sig);
		}
		if (dm->nl_ready) {
			dm->nl_ready = false;
			if (tcmu_nl_dispatch(dm->nl) == -EBADF)
				return -EBADF;
			arm(dm, tcmu_nl_fd(dm->nl), &dm->nl_op, on_nl);
		}
		if (dm->ctl_ready) {
			dm->ctl_ready = false;
			vd_control_handle(dm->ctl);
			arm(dm, vd_control_fd(dm->ctl), &dm->ctl_op, on_ctl);
		}
		vd_control_service(dm->ctl); /* connections the reactor marked */
		if (dm->bus_ready) {
			dm->bus_ready = false;
			vd_dbus_process(dm->bus);
			arm(dm, vd_dbus_fd(dm->bus), &dm->bus_op, on_bus);
		}
		vd_notify_service(dm->notify); /* a timer whose submission failed is armed again */
		if (vd_pool_watch_due(&dm->watch))
			vd_devices_watch(dm->devs);
		vd_pool_watch_arm(&dm->watch, dm->r); /* the next period from the end of this look */
		if (dm->metrics_ready) {
			dm->metrics_ready = false;
			vd_metrics_service(dm->metrics);
			arm(dm, vd_metrics_fd(dm->metrics), &dm->metrics_op, on_metrics);
		}
	}
	return 0;
}

/* Another daemon serves this [tcmu] handler on this host: the exit status. */
static int second_daemon(const struct daemon *dm)
{
	vlog_err(NULL, "another vaaid on this host serves user:%s backstores (both would answer "
		 "every netlink event): not starting; give this one its own [tcmu] handler "
		 "(docs/ceph.md)", dm->conf.tcmu.handler);
	return 1;
}

/* Start everything, serve until SIGTERM / SIGINT; the exit status. On any early
 * failure what was started is left for teardown() (pools closed cleanly). */
static int run(struct daemon *dm, bool no_dbus)
{
	char err[1200];
	vlog_set_level((enum vlog_level)dm->conf.log_level);
	int rc = vreactor_create(1024, &dm->r);
	if (rc < 0) {
		vlog_err(NULL, "io_uring setup failed: %s", strerror(-rc));
		return 1;
	}
	/* before anything is opened or made: a daemon already serving this handler here
	 * (the hold below, once netlink listens, settles a start race between two) */
	if (vd_handler_running(dm->conf.configfs_root, dm->conf.tcmu.handler) == 1) {
		return second_daemon(dm);
	}
	rc = vd_pools_open(&dm->pools, &dm->conf, dm->r, err, sizeof(err));
	if (rc < 0) {
		vlog_err(NULL, "%s", err);
		return 1;
	}
	struct vd_env env = {.r = dm->r, .pools = &dm->pools, .conf = &dm->conf};
	if (vd_devices_new(&env, &dm->devs) < 0)
		return 1;
	vd_devices_watch_pools(dm->devs);
	dm->nl_target = (struct vd_nl_target){
		.devs = dm->devs, .tcmu = &dm->conf.tcmu, .configfs_root = dm->conf.configfs_root};
	rc = tcmu_nl_open(&vd_nl_ops, &dm->nl_target, &dm->nl);
	if (rc == -ENOENT) {
		vlog_err(NULL, "the kernel has no TCM-USER netlink family: load target_core_user "
			 "(modprobe target_core_user) and start vaaid again");
		return 1;
	}
	if (rc < 0) {
		vlog_err(NULL, "netlink: %s", strerror(-rc));
		return 1;
	}
	/* listening now: the daemons that leave this handler keep silent from here on */
	dm->handler_fd = vd_handler_hold(dm->conf.configfs_root, dm->conf.tcmu.handler);
	if (dm->handler_fd == -EADDRINUSE) {
		return second_daemon(dm);
	}
	if (dm->handler_fd < 0) {
		vlog_err(NULL, "cannot mark handler user:%s as served here: %s",
			 dm->conf.tcmu.handler, strerror(-dm->handler_fd));
		return 1;
	}
	if (!tcmu_nl_replies(dm->nl))
		vlog_warn(NULL, "this kernel does not wait for netlink replies: errors on attach are "
			  "only logged");
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	dm->sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (dm->sig_fd < 0) {
		vlog_err(NULL, "signalfd: %s", strerror(errno));
		return 1;
	}
	int n = vd_devices_scan(dm->devs);
	if (n > 0)
		vlog_info(NULL, "picked up %d existing device(s)", n);
	rc = vd_control_open(&dm->conf, dm->r, &dm->pools, dm->devs, &dm->ctl);
	if (rc < 0) {
		vlog_err(NULL, "control socket %s: %s", dm->conf.control_socket, strerror(-rc));
		return 1;
	}
	if (!no_dbus) {
		rc = vd_dbus_open(dm->conf.tcmu.handler, check_cfg, dm, &dm->bus);
		if (rc < 0)
			vlog_warn(NULL, "D-Bus service org.kernel.TCMUService1 not available (%s): "
				  "targetcli will not list user:%s", strerror(-rc), dm->conf.tcmu.handler);
	}
	if (dm->conf.metrics_listen[0]) {
		err[0] = 0;
		const struct vd_metrics_source src = {metrics_take, vd_metrics_snapshot_text,
						      vd_metrics_snapshot_free, dm};
		rc = vd_metrics_start_source(dm->conf.metrics_listen, &src, &dm->metrics, err,
					     sizeof(err));
		if (rc < 0) { /* an optional endpoint: the LUNs are served without it */
			vlog_err(NULL, "%s: serving without the metrics endpoint",
				 err[0] ? err : strerror(-rc));
			dm->metrics = NULL;
		} else {
			arm(dm, vd_metrics_fd(dm->metrics), &dm->metrics_op, on_metrics);
			vlog_info(NULL, "Prometheus metrics on http://%s/metrics",
				  dm->conf.metrics_listen);
		}
	}
	arm(dm, dm->sig_fd, &dm->sig_op, on_sig);
	arm(dm, tcmu_nl_fd(dm->nl), &dm->nl_op, on_nl);
	arm(dm, vd_control_fd(dm->ctl), &dm->ctl_op, on_ctl);
	if (dm->bus)
		arm(dm, vd_dbus_fd(dm->bus), &dm->bus_op, on_bus);
	vlog_info(NULL, "vaaid ready: %u pool(s), state directory %s", dm->pools.n,
		  dm->conf.state_dir);
	if (vd_notify_new(dm->r, status_line, dm, &dm->notify) == 0) {
		vd_notify_ready(dm->notify);
		if (vd_notify_watchdog(dm->notify))
			vlog_info(NULL, "systemd watchdog: pinged from the reactor");
	}
	vd_pool_watch_arm(&dm->watch, dm->r);
	rc = loop(dm);
	/* Whatever ended the loop (a signal, or an error), the STATUS line's sources are
	 * torn down next: from here the timer only pings the watchdog. */
	vd_notify_stopping(dm->notify);
	return rc < 0 ? 1 : 0;
}

/* Stop and free whatever run() started (each part may be absent). */
static void teardown(struct daemon *dm)
{
	/* netlink is no longer read: a daemon leaving this handler answers from now on */
	if (dm->handler_fd >= 0)
		close(dm->handler_fd);
	dm->handler_fd = -1;
	vd_metrics_stop(dm->metrics); /* first: its snapshot reads the devices and pools */
	dm->metrics = NULL;
	if (dm->devs) {
		vd_devices_shutdown(dm->devs);
		vd_devices_free(dm->devs);
	}
	vd_pools_close(&dm->pools);
	vd_control_close(dm->ctl);
	vd_dbus_close(dm->bus);
	tcmu_nl_close(dm->nl);
	/* the poll ops still queued die with the ring: vreactor_destroy runs no callback */
	vreactor_destroy(dm->r);
	vd_notify_free(dm->notify); /* its timer died with the ring */
	if (dm->sig_fd >= 0)
		close(dm->sig_fd);
}

int main(int argc, char **argv)
{
	struct daemon *dm = calloc(1, sizeof(*dm));
	bool no_dbus = false;
	if (!dm)
		return 1;
	dm->sig_fd = -1;
	dm->handler_fd = -1;
	if (parse_args(dm, argc, argv, &no_dbus) < 0) {
		free(dm);
		return 2;
	}
	int status = run(dm, no_dbus);
	bool served = dm->ctl != NULL;
	teardown(dm);
	free(dm);
	if (served)
		vlog_info(NULL, "vaaid stopped");
	return status;
}
