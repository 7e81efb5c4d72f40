/*
 * A Ceph that does not answer must not wedge vaaid (docs/ceph.md "A cluster that
 * does not answer"; [ceph] op_timeout). On a single-node cluster of its own
 * (scripts/ceph/cluster in TMPDIR, a free mon port: freezing the shared fixture
 * would stall the other ceph/ tests), with engine processes that each hold an
 * RBD store the way vaaid's pools do (vblk_rbd on a reactor, SIGTERM through a
 * signalfd seen only between two operations, as the daemon's main loop sees it,
 * then the store closed with vblk_close_live as vd_pools_close does):
 *
 *  1. the OSD frozen (SIGSTOP by its PID): the holder's write answers an error
 *     (never success), its lock check and ALUA-record look answer "not known";
 *     the daemon's pools (vd_pools_open, a second image): the standby's
 *     `pool takeover` (vd_pool_takeover, what vaaictl's request runs) answers
 *     an error, SIGTERM ends the standby and the owner (vd_pools_close:
 *     checkpoint and close); a second engine's takeover of the first image
 *     (vblk_rbd_takeover) answers an error; SIGTERM during that takeover and SIGTERM of the holder (whose close
 *     releases the lock: an OSD request) end both processes;
 *  2. the OSD thawed (SIGCONT): a takeover serves the pool again, the block the
 *     holder acknowledged before the freeze reads back (the timed-out write's
 *     block holds either the old or the new data, whole);
 *  3. the mon frozen: a new client's open answers an error; the holder (its
 *     OSDs answer) still writes; its SIGTERM ends it; the mon thawed, a
 *     takeover serves again.
 * Each answer must come within BOUND = 10 * op_timeout (op_timeout = 2 s here;
 * without the bound the answers never come: the test fails at that deadline
 * instead of hanging). The times seen are printed (docs/ceph.md's table).
 *
 * Usage: test_stuck_cluster CLUSTER_SCRIPT TMPDIR (ctest ceph/stuck_cluster);
 * `--engine SPEC OP_TIMEOUT` is an engine process (exec'd: its own librados
 * client), commands on stdin, one answer line each on stdout.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vaaid/daemon.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"
#include "vaaid/rbd_owner.h"
#include "vaaid/util.h"

#define OP_TIMEOUT 2u
#define BOUND_MS (10000 * OP_TIMEOUT)
#define BLOCK 4096u
#define DEADLINE_S 340 /* < ctest TIMEOUT 400: cleaned up before SIGKILL */
#define STR_(x) #x
#define STR(x) STR_(x)
#define SIZE (64u * 1024 * 1024)

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ the engine */

/* The daemon's pools with one pool "p" on SPEC + "-pool" (made when missing),
 * [ceph] op_timeout as given; the owner makes a volume (journaled metadata: its
 * stop then has a checkpoint to write). */
static int pool_open(struct vreactor *r, const char *spec, unsigned op_timeout,
		     struct vd_pools **out, char *err, size_t errlen)
{
	static struct vd_config c; /* (large; one engine per process) */
	vd_config_defaults(&c);
	c.n_pools = 1;
	snprintf(c.pools[0].name, sizeof(c.pools[0].name), "p");
	snprintf(c.pools[0].path, sizeof(c.pools[0].path), "%s-pool", spec);
	c.pools[0].size = SIZE;
	c.pools[0].create = VD_CREATE_YES;
	snprintf(c.ceph.conf, sizeof(c.ceph.conf), "%s", getenv("CEPH_CONF"));
	c.ceph.op_timeout = op_timeout;
	struct vd_pools *ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	int rc = vd_pools_open(ps, &c, r, err, errlen);
	struct vvol *v;
	if (rc == 0 && ps->p[0].pool)
		rc = vpool_volume_create(ps->p[0].pool, "vol", 16u << 20, 512, &v);
	if (rc < 0) {
		fprintf(stderr, "engine: pool: %s\n", err);
		vd_pools_close(ps);
		free(ps);
		return rc;
	}
	*out = ps;
	return 0;
}

static int engine(const char *spec, unsigned op_timeout)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	struct vreactor *r = NULL;
	uint8_t *buf = vblk_alloc_buf(BLOCK);
	if (sfd < 0 || !buf || vreactor_create(64, &r) < 0)
		return 1;
	struct vblk_rbd_conf conf = {.conf_path = getenv("CEPH_CONF"), .op_timeout = op_timeout};
	struct vblk *dev = NULL;
	struct vd_pools *ps = NULL; /* "pool": the daemon's pools (src/daemon/pools.c) */
	char err[1200];
	char line[64];
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	for (;;) {
		struct pollfd p[2] = {{.fd = 0, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents) /* the daemon's stop: the store closed on a worker */
			break;
		if (!fgets(line, sizeof(line), stdin))
			break;
		uint64_t t0 = now_ms();
		int rc = -EINVAL;
		char word[16] = "";
		unsigned pat = 0;
		sscanf(line, "%15s %x", word, &pat);
		if (!strcmp(word, "create") || !strcmp(word, "open") || !strcmp(word, "takeover")) {
			rc = dev ? -EALREADY
				 : word[0] == 't' ? vblk_rbd_takeover(r, spec, &conf, &dev)
						  : vblk_rbd_open(r, spec, &conf, word[0] == 'c' ? SIZE : 0,
								  &dev);
		} else if (!strcmp(word, "pool")) {
			rc = ps || dev ? -EALREADY : pool_open(r, spec, op_timeout, &ps, err, sizeof(err));
			pat = rc == 0 && ps->p[0].standby;
		} else if (ps && !strcmp(word, "pooltakeover")) { /* `vaaictl pool takeover p` */
			rc = vd_pool_takeover(ps, r, "p", err, sizeof(err));
		} else if (dev && !strcmp(word, "write")) {
			memset(buf, (int)pat, BLOCK);
			rc = vblk_pwrite_sync(dev, buf, BLOCK, 0, VBLK_DSYNC);
		} else if (dev && !strcmp(word, "read")) {
			rc = vblk_pread_sync(dev, buf, BLOCK, 0);
			pat = buf[0];
			for (unsigned i = 1; rc >= 0 && i < BLOCK; i++)
				if (buf[i] != buf[0])
					rc = -EILSEQ; /* not one whole write's data */
		} else if (dev && !strcmp(word, "check")) {
			rc = vblk_rbd_check_lock(dev);
		} else if (dev && !strcmp(word, "alua")) {
			struct vblk_rbd_alua a;
			rc = vblk_rbd_alua_get(dev, &a);
		}
		printf("%s %d %llu %02x\n", word, rc > 0 ? 0 : rc, (unsigned long long)(now_ms() - t0),
		       pat);
	}
	vblk_close_live(dev);
	if (ps) /* the daemon's stop: checkpoint and close (vd_pools_close) */
		vd_pools_close(ps);
	free(ps);
	vreactor_destroy(r);
	free(buf);
	close(sfd);
	return 0;
}

/* ------------------------------------------------------------ the test */

struct eng {
	pid_t pid;
	int in, out; /* its stdin (we write), its stdout (we read) */
	char name[8];
};

static const char *cluster_script, *cluster_dir;
static char start_log[600];
static pid_t osd_pid, mon_pid, start_pid;
static struct eng engines[8];
static unsigned n_engines;

/* `CLUSTER_SCRIPT stop DIR` with fork/execv/waitpid only (async-signal-safe:
 * cleanup also runs from the signal handler); 0 when the stop succeeded. */
static int cluster_stop(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl(cluster_script, cluster_script, "stop", cluster_dir, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Blocks the signals whose handler runs cleanup (old: the mask before). */
static void block_cleanup_signals(sigset_t *old)
{
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGALRM);
	sigprocmask(SIG_BLOCK, &block, old);
}

/* `CLUSTER_SCRIPT start DIR --mon-port auto` in a process group of its own
 * (start_pid), so that cleanup can end a start still running -- the script and
 * the daemons it started so far -- before it stops the cluster. */
static int cluster_start(void)
{
	/* the signals that run cleanup blocked until start_pid names the child: a
	 * handler between the fork and the assignment would leave the start running */
	sigset_t old;
	block_cleanup_signals(&old);
	pid_t pid = fork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL); /* (the mask survives exec) */
		setpgid(0, 0);
		/* stdout and stderr to a log: a `timeout` of the script runs in a group of
		 * its own, outlives the group's kill and would hold ctest's pipe open */
		int log = open(start_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (log >= 0) {
			dup2(log, 1);
			dup2(log, 2);
		}
		execl(cluster_script, cluster_script, "start", cluster_dir, "--mon-port", "auto",
		      (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid); /* (both sides: whichever runs first) */
	start_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	start_pid = 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void say(const char *msg) /* async-signal-safe */
{
	if (write(2, msg, strlen(msg)) < 0)
		return;
}

/* Stops what the test started, by PID: the engines, the frozen daemons thawed,
 * the cluster. Also the signal handler's (ctest's SIGTERM, Ctrl-C, the test's
 * own deadline): only async-signal-safe calls, the signals blocked meanwhile so
 * that a handler never runs inside a cleanup of the main flow. */
static void cleanup(void)
{
	sigset_t old;
	block_cleanup_signals(&old);
	if (start_pid > 0) { /* a start still running: the script and its daemons */
		kill(-start_pid, SIGKILL);
		waitpid(start_pid, NULL, 0);
		start_pid = 0;
	}
	for (unsigned i = 0; i < n_engines; i++)
		if (engines[i].pid > 0) {
			kill(engines[i].pid, SIGKILL);
			waitpid(engines[i].pid, NULL, 0);
			engines[i].pid = 0;
		}
	if (osd_pid > 0)
		kill(osd_pid, SIGCONT);
	if (mon_pid > 0)
		kill(mon_pid, SIGCONT);
	if (cluster_dir) {
		if (cluster_stop() != 0)
			say("stuck_cluster: cluster stop failed\n");
		cluster_dir = NULL;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "stuck_cluster: FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	cleanup();
	exit(1);
}

/* One line from e within BOUND_MS (or die naming what did not answer). */
static void read_line(struct eng *e, char *out, size_t cap, const char *what)
{
	size_t n = 0;
	uint64_t end = now_ms() + BOUND_MS;
	while (n + 1 < cap) {
		uint64_t t = now_ms();
		struct pollfd p = {.fd = e->out, .events = POLLIN};
		if (t >= end || poll(&p, 1, (int)(end - t)) == 0)
			die("%s: %s did not answer within %u ms (wedged)", e->name, what, BOUND_MS);
		char c;
		if (read(e->out, &c, 1) != 1)
			die("%s: %s: the engine process ended", e->name, what);
		if (c == '\n')
			break;
		out[n++] = c;
	}
	out[n] = '\0';
}

static struct eng *engine_start(const char *exe, const char *spec, const char *name)
{
	int in[2], out[2];
	if (n_engines == sizeof(engines) / sizeof(engines[0]) || pipe(in) || pipe(out))
		die("engine %s: no pipe", name);
	char t[16];
	snprintf(t, sizeof(t), "%u", OP_TIMEOUT);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execl(exe, exe, "--engine", spec, t, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	struct eng *e = &engines[n_engines++];
	*e = (struct eng){.pid = pid, .in = in[1], .out = out[0]};
	snprintf(e->name, sizeof(e->name), "%s", name);
	char line[64];
	read_line(e, line, sizeof(line), "start");
	if (strcmp(line, "ready"))
		die("engine %s: '%s'", name, line);
	return e;
}

static void send_cmd(struct eng *e, const char *cmd)
{
	char b[64];
	int n = snprintf(b, sizeof(b), "%s\n", cmd);
	if (write(e->in, b, (size_t)n) != n)
		die("%s: cannot send %s", e->name, cmd);
}

/* Send cmd, wait for its answer (within BOUND_MS): its rc; *ms: its time; *pat. */
static int ask(struct eng *e, const char *cmd, unsigned *ms, unsigned *pat)
{
	send_cmd(e, cmd);
	char line[64], word[16];
	int rc;
	unsigned t, p;
	read_line(e, line, sizeof(line), cmd);
	if (sscanf(line, "%15s %d %u %x", word, &rc, &t, &p) != 4)
		die("%s: %s: answer '%s'", e->name, cmd, line);
	printf("  %s: %-12s -> %-24s %5u ms\n", e->name, cmd, rc < 0 ? strerror(-rc) : "ok", t);
	if (ms)
		*ms = t;
	if (pat)
		*pat = p;
	return rc;
}

static void expect_ok(struct eng *e, const char *cmd)
{
	int rc = ask(e, cmd, NULL, NULL);
	if (rc < 0)
		die("%s: %s: %s", e->name, cmd, strerror(-rc));
}

/* cmd fails with -ETIMEDOUT (the op timeout's error, not any other failure). */
static void expect_error(struct eng *e, const char *cmd)
{
	int rc = ask(e, cmd, NULL, NULL);
	if (rc >= 0)
		die("%s: %s succeeded against a cluster that does not answer", e->name, cmd);
	if (rc != -ETIMEDOUT)
		die("%s: %s failed with %s, not the op timeout's %s", e->name, cmd, strerror(-rc),
		    strerror(ETIMEDOUT));
}

/* SIGTERM e, wait (within BOUND_MS) for it to exit 0: the time it took. */
static void stop_engine(struct eng *e, const char *when)
{
	uint64_t t0 = now_ms();
	kill(e->pid, SIGTERM);
	int st;
	for (;;) {
		pid_t w = waitpid(e->pid, &st, WNOHANG);
		if (w == e->pid)
			break;
		if (now_ms() - t0 > BOUND_MS)
			die("%s: SIGTERM (%s) did not end it within %u ms (wedged)", e->name, when,
			    BOUND_MS);
		usleep(20000);
	}
	e->pid = 0;
	printf("  %s: SIGTERM (%s) -> exited in %llu ms\n", e->name, when,
	       (unsigned long long)(now_ms() - t0));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("%s: exit status %d after SIGTERM", e->name, st);
}

static pid_t read_pid(const char *dir, const char *d)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s.pid", dir, d);
	FILE *f = fopen(path, "r");
	long v = 0;
	if (!f || fscanf(f, "%ld", &v) != 1 || v <= 0)
		die("no PID in %s", path);
	fclose(f);
	return (pid_t)v;
}

/* Are all of pid's threads stopped (state T in /proc/PID/task/TID/stat)? A
 * SIGSTOP takes effect in each thread when it next runs: until then (a loaded
 * machine) a thread may still answer a request sent right after kill(). */
static bool all_stopped(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *dir = opendir(path);
	if (!dir)
		return false;
	bool all = true;
	struct dirent *e;
	while (all && (e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		char stat[128], buf[512];
		snprintf(stat, sizeof(stat), "%s/%.16s/stat", path, e->d_name);
		FILE *f = fopen(stat, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		const char *st = strrchr(buf, ')'); /* "tid (comm) S ..." */
		if (!st || (st[2] != 'T' && st[2] != 't'))
			all = false; /* (a thread gone meanwhile: looked at again) */
	}
	closedir(dir);
	return all;
}

static void freeze(pid_t pid, const char *what, bool on)
{
	if (kill(pid, on ? SIGSTOP : SIGCONT) < 0)
		die("%s %s: %s", on ? "SIGSTOP" : "SIGCONT", what, strerror(errno));
	for (uint64_t t0 = now_ms(); on && !all_stopped(pid); usleep(10000))
		if (now_ms() - t0 > BOUND_MS)
			die("%s: not every thread stopped within %u ms", what, BOUND_MS);
	printf("%s %s (pid %d)\n", on ? "SIGSTOP" : "SIGCONT", what, (int)pid);
}

static void on_signal(int sig)
{
	if (sig == SIGALRM)
		say("stuck_cluster: FAIL: the test's own deadline of " STR(DEADLINE_S) " s passed; stopping the cluster\n");
	cleanup();
	_exit(1);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--engine"))
		return engine(argv[2], (unsigned)strtoul(argv[3], NULL, 10));
	if (argc != 3) {
		fprintf(stderr, "usage: test_stuck_cluster CLUSTER_SCRIPT TMPDIR\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	/* ctest's TIMEOUT kills with SIGKILL (CMake 3.25 has no TIMEOUT_SIGNAL_NAME),
	 * which would leave the cluster running, maybe frozen: the test ends itself
	 * first, cluster stopped, at its own deadline below ctest's (tests/CMakeLists.txt) */
	signal(SIGALRM, on_signal);
	alarm(DEADLINE_S);
	static char dir[512], conf[600], exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 1;
	exe[n] = '\0';
	cluster_script = argv[1];
	snprintf(dir, sizeof(dir), "%s/stuck-cluster-%d", argv[2], (int)getpid());
	if (mkdir(argv[2], 0755) < 0 && errno != EEXIST)
		die("mkdir %s: %s", argv[2], strerror(errno));
	cluster_dir = dir; /* stopped on every path from here (its script cleans a failed start) */
	snprintf(start_log, sizeof(start_log), "%s.start.log", dir);
	if (cluster_start() != 0)
		die("the cluster did not start (its output: %s)", start_log);
	unlink(start_log);
	snprintf(conf, sizeof(conf), "%s/ceph.conf", dir);
	setenv("CEPH_CONF", conf, 1);
	osd_pid = read_pid(dir, "osd");
	mon_pid = read_pid(dir, "mon");
	const char *spec = "rbd:rbd/stuck";
	unsigned pat;

	printf("op_timeout %u s, every answer within %u ms\n", OP_TIMEOUT, BOUND_MS);
	struct eng *a = engine_start(exe, spec, "A");
	expect_ok(a, "create");
	expect_ok(a, "write 11");
	struct eng *p = engine_start(exe, spec, "P"); /* the daemon's pools: owner */
	if (ask(p, "pool", NULL, &pat) < 0 || pat != 0)
		die("P: the pool did not open as its owner");
	struct eng *q = engine_start(exe, spec, "Q"); /* the daemon's pools: standby */
	if (ask(q, "pool", NULL, &pat) < 0 || pat != 1)
		die("Q: the pool did not open standby");

	/* 1. the OSD does not answer */
	freeze(osd_pid, "the OSD", true);
	expect_error(a, "write 22"); /* a write that timed out: never success */
	expect_error(a, "check");
	expect_error(a, "alua");
	struct eng *b = engine_start(exe, spec, "B");
	expect_error(b, "takeover");
	expect_error(q, "pooltakeover"); /* vd_pool_takeover: `vaaictl pool takeover` */
	stop_engine(q, "pools, standby, OSD frozen");
	stop_engine(p, "pools, owner: checkpoint and close, OSD frozen");
	struct eng *b2 = engine_start(exe, spec, "B2");
	send_cmd(b2, "takeover"); /* Pacemaker stops it during a takeover that hangs */
	usleep(300000);
	stop_engine(b2, "during a takeover, OSD frozen");
	stop_engine(b, "OSD frozen");
	stop_engine(a, "lock holder, OSD frozen");

	/* 2. the OSD back: the pool is served again */
	freeze(osd_pid, "the OSD", false);
	struct eng *c = engine_start(exe, spec, "C");
	expect_ok(c, "takeover");
	if (ask(c, "read", NULL, &pat) < 0 || (pat != 0x11 && pat != 0x22))
		die("C: the block acknowledged before the freeze is not whole (0x%02x)", pat);
	printf("  C: the block holds 0x%02x (0x22: the write that timed out landed later)\n", pat);
	expect_ok(c, "write 33");
	expect_ok(c, "check");

	/* 3. the mon does not answer */
	freeze(mon_pid, "the mon", true);
	struct eng *d = engine_start(exe, spec, "D");
	expect_error(d, "open");
	expect_ok(c, "write 44"); /* the OSD answers: the holder goes on */
	stop_engine(d, "mon frozen");
	stop_engine(c, "lock holder, mon frozen");
	freeze(mon_pid, "the mon", false);
	struct eng *e = engine_start(exe, spec, "E");
	expect_ok(e, "takeover");
	if (ask(e, "read", NULL, &pat) < 0 || pat != 0x44)
		die("E: the block reads 0x%02x, not the acknowledged 0x44", pat);
	stop_engine(e, "lock holder, cluster answering");

	cleanup();
	printf("stuck_cluster: ok\n");
	return 0;
}
