/*
 * vaaictl top: a live, esxtop-like view of the command counters (issue 25).
 *
 * How this works: every interval the daemon's `stats` answer is fetched (the
 * caller's fetch function: the control socket) and compared with the
 * previous one; the screen is redrawn with plain ANSI (cursor home, clear)
 * and no colour, at most 80 columns: per pool its use, per LUN the rates of
 * the interval (commands/s, MB/s of reads and writes, CLONE/s = EXTENDED
 * COPY, ATS/s = COMPARE AND WRITE, ZERO/s = WRITE SAME, DEL/s = UNMAP, their
 * failures/s, and the average latency of the commands answered GOOD). Keys
 * come from stdin (a terminal is put in non-canonical mode and restored at
 * the end): q quits; SIGINT, SIGTERM and SIGHUP quit too (signalfd: no
 * handler, no global). A daemon that does not answer is shown as such, and
 * asked again at the next interval.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "top.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static json_object *obj(json_object *o, const char *k)
{
	json_object *v;
	return o && json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_object)
		       ? v
		       : NULL;
}

static uint64_t u64(json_object *o, const char *k)
{
	json_object *v;
	return o && json_object_object_get_ex(o, k, &v) ? (uint64_t)json_object_get_uint64(v) : 0;
}

static const char *str(json_object *o, const char *k)
{
	json_object *v;
	const char *s = o && json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : NULL;
	return s ? s : "";
}

/* The kinds a LUN's totals are summed over (lun_stats.h). */
static const char *const kinds[] = {"read",       "write", "verify", "sync",           "xcopy",
				    "caw",        "write_same", "unmap", "get_lba_status", "other"};

struct totals {
	uint64_t cmds, failed, bytes, lat_n, lat_ns, clone, ats, zero, del;
};

static struct totals totals_of(json_object *st)
{
	struct totals t = {0};
	json_object *c = obj(st, "commands");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		json_object *k = obj(c, kinds[i]);
		t.cmds += u64(k, "ok") + u64(k, "failed");
		t.failed += u64(k, "failed");
		json_object *l = obj(k, "latency_ok");
		t.lat_n += u64(l, "count");
		t.lat_ns += u64(l, "sum_ns");
	}
	t.bytes = u64(obj(c, "read"), "bytes") + u64(obj(c, "write"), "bytes");
	t.clone = u64(obj(c, "xcopy"), "ok");
	t.ats = u64(obj(c, "caw"), "ok");
	t.zero = u64(obj(c, "write_same"), "ok");
	t.del = u64(obj(c, "unmap"), "ok");
	return t;
}

/* The same LUN (by pool and volume) in an earlier answer, or NULL. */
static json_object *find_lun(json_object *ans, json_object *l)
{
	json_object *arr;
	if (!ans || !json_object_object_get_ex(ans, "luns", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		if (!strcmp(str(e, "pool"), str(l, "pool")) && !strcmp(str(e, "volume"), str(l, "volume")))
			return e;
	}
	return NULL;
}

static double rate(uint64_t a, uint64_t b, double dt)
{
	return b >= a && dt > 0 ? (double)(b - a) / dt : 0;
}

void vaaictl_top_render(FILE *out, json_object *prev, json_object *cur, double dt,
			const char *clock, double interval)
{
	fprintf(out, "vaaictl top  %s  every %.1f s  (q quits)\n", clock, interval);
	json_object *arr;
	if (json_object_object_get_ex(cur, "pools", &arr) && json_object_is_type(arr, json_type_array))
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *e = json_object_array_get_idx(arr, i), *p = obj(e, "pool");
			uint64_t cap = u64(p, "capacity"), used = u64(p, "used");
			fprintf(out, "POOL %-16.16s %7.1f GiB of %7.1f GiB used (%3" PRIu64 "%%), %" PRIu64
				     " LUN(s)\n",
				str(e, "name"), (double)used / (1 << 30), (double)cap / (1 << 30),
				cap ? used * 100 / cap : 0, u64(e, "luns"));
		}
	/* 12 + 9 + 9 + 5 x 8 + 9 = 79 columns (fields and the spaces before them) */
	fprintf(out, "\n%-12s %8s %8s %7s %7s %7s %7s %7s %8s\n", "LUN", "CMD/s", "MB/s", "CLONE/s",
		"ATS/s", "ZERO/s", "DEL/s", "FAIL/s", "LAT ms");
	if (!json_object_object_get_ex(cur, "luns", &arr) || !json_object_is_type(arr, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *l = json_object_array_get_idx(arr, i), *was = find_lun(prev, l);
		struct totals b = totals_of(obj(l, "stats"));
		struct totals a = was ? totals_of(obj(was, "stats")) : b;
		uint64_t n = b.lat_n >= a.lat_n ? b.lat_n - a.lat_n : 0;
		double lat = n ? (double)(b.lat_ns - a.lat_ns) / (double)n / 1e6 : 0;
		char name[64];
		snprintf(name, sizeof(name), "%s", str(l, "volume"));
		fprintf(out, "%-12.12s %8.1f %8.2f %7.1f %7.1f %7.1f %7.1f %7.1f %8.2f\n", name,
			rate(a.cmds, b.cmds, dt), rate(a.bytes, b.bytes, dt) / 1e6,
			rate(a.clone, b.clone, dt), rate(a.ats, b.ats, dt), rate(a.zero, b.zero, dt),
			rate(a.del, b.del, dt), rate(a.failed, b.failed, dt), lat);
	}
}

int vaaictl_top(const struct vaaictl_req *q, vaaictl_fetch_fn fetch)
{
	struct termios saved;
	bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	if (tty) {
		struct termios raw = saved;
		raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) /* nothing would read them: let them end vaaictl as usual */
		sigprocmask(SIG_UNBLOCK, &mask, NULL);
	json_object *prev = NULL;
	uint64_t t_prev = 0;
	bool quit = false, stdin_open = true;
	while (!quit) {
		json_object *cur = NULL;
		char why[256] = "";
		/* a daemon that does not answer within 5 s is shown as such; keys and
		 * signals are looked at again after at most that long */
		int rc = fetch(q->sock, "stats", &cur, why, sizeof(why), 5000);
		uint64_t t = now_ns();
		char clock[16];
		time_t wall = time(NULL);
		struct tm tmv;
		strftime(clock, sizeof(clock), "%H:%M:%S", localtime_r(&wall, &tmv));
		fputs("\033[H\033[2J", stdout);
		if (rc == 0 && cur) {
			vaaictl_top_render(stdout, prev, cur, prev ? (double)(t - t_prev) / 1e9 : 0, clock,
					   q->interval_ms / 1000.0);
			json_object_put(prev);
			prev = cur;
			t_prev = t;
		} else {
			printf("vaaictl top  %s  vaaid does not answer:\n%.80s\n", clock, why);
			json_object_put(cur);
		}
		fflush(stdout);
		uint64_t until = t + (uint64_t)q->interval_ms * 1000000u;
		for (uint64_t n = now_ns(); !quit && n < until; n = now_ns()) {
			struct pollfd pf[2] = {{.fd = stdin_open ? STDIN_FILENO : -1, .events = POLLIN},
					       {.fd = sfd, .events = POLLIN}};
			int ms = (int)((until - n) / 1000000u) + 1;
			if (poll(pf, 2, ms) < 0 && errno != EINTR)
				break;
			if (pf[1].revents)
				quit = true;
			if (pf[0].revents) {
				char c;
				ssize_t r = read(STDIN_FILENO, &c, 1);
				if (r <= 0 || (pf[0].revents & POLLNVAL))
					stdin_open = false; /* input ended or broken: a signal ends top */
				else if (c == 'q' || c == 'Q')
					quit = true;
			}
		}
	}
	json_object_put(prev);
	if (tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	if (sfd >= 0)
		close(sfd);
	return 0;
}
