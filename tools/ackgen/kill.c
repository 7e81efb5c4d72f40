/*
 * ackgen kill PID [BLOCKDEV]: kill -9 of the daemon at an instant after which
 * it answers nothing, and what was unanswered then (tests/vm/t_kill9.sh).
 *
 * How this works: the daemon answers a command only from user space (it
 * writes the ring entry and kicks the kernel through the uio fd). So we first
 * freeze it with SIGSTOP and wait until every one of its threads has stopped
 * (io_uring's kernel workers, "iou-*", answer nothing and are not waited
 * for), take the kill instant K there (CLOCK_MONOTONIC, printed "K <ns>"),
 * then send SIGKILL and wait for the death. From K on nothing is answered, so
 * a command whose acknowledgement is logged after K was unanswered at K, and
 * BLOCKDEV's in-flight count read at K (after 20 ms for completions already
 * handed to the kernel) is exactly how many of its commands the dead daemon
 * left unanswered: "held <n> in_flight <n> completed_until_dead <n>" (the
 * last must be 0; held = in_flight - completed_until_dead, never more).
 * The freeze changes nothing the test relies on: SIGKILL too only takes
 * effect at a thread's next return to user space, and the pool I/O the
 * daemon had queued completes in the kernel after either signal.
 * A thread in an uninterruptible kernel wait (slow pool I/O, say) stops or
 * dies only when that wait ends: both waits last up to 120 s (the kernel's
 * cmd_time_out scale), and how long each took is printed ("stop_ms <n>
 * dead_ms <n>"), so that a slow kill is reported, not mistaken for a lost
 * one. Exit 1 (with the reason) when a thread has not stopped or the process
 * is not dead after 120 s.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kill.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* BLOCKDEV's completed requests (reads + writes) and its requests in flight. */
static int blk_counts(const char *dev, uint64_t *done, uint64_t *inflight)
{
	char path[256];
	uint64_t f[5] = {0}, r = 0, w = 0;
	snprintf(path, sizeof(path), "/sys/block/%s/stat", dev);
	FILE *a = fopen(path, "r");
	snprintf(path, sizeof(path), "/sys/block/%s/inflight", dev);
	FILE *b = fopen(path, "r");
	int n = a ? fscanf(a, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &f[0], &f[1],
			   &f[2], &f[3], &f[4]) : 0;
	int m = b ? fscanf(b, "%" SCNu64 " %" SCNu64, &r, &w) : 0;
	if (a)
		fclose(a);
	if (b)
		fclose(b);
	*done = f[0] + f[4];
	*inflight = r + w;
	return n == 5 && m == 2 ? 0 : -EIO;
}

/* The state letter of /proc/<pid>[/task/<tid>]/stat and the thread's name;
 * 0 when it is gone. */
static char stat_state(const char *path, char *comm, size_t len)
{
	char buf[512];
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *o = strchr(buf, '('), *c = strrchr(buf, ')');
	if (!o || !c || c[1] != ' ')
		return 0;
	if (comm) {
		size_t l = (size_t)(c - o - 1) < len - 1 ? (size_t)(c - o - 1) : len - 1;
		memcpy(comm, o + 1, l);
		comm[l] = 0;
	}
	return c[2];
}

/* Dead: gone, or its leader a zombie with no thread left. */
static bool proc_dead(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	char s = stat_state(path, NULL, 0);
	return s == 0 || s == 'Z' || s == 'X';
}

/* Every thread that can answer a command is stopped (or gone). */
static bool proc_frozen(pid_t pid)
{
	char dir[64], path[64 + sizeof(((struct dirent *)0)->d_name) + 8], comm[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return true;
	bool frozen = true;
	struct dirent *e;
	while (frozen && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/stat", dir, e->d_name);
		char s = stat_state(path, comm, sizeof(comm));
		if (s && !strncmp(comm, "iou-", 4))
			continue; /* io_uring's workers: pool I/O only */
		frozen = s == 0 || s == 'T' || s == 't' || s == 'Z' || s == 'X';
	}
	closedir(d);
	return frozen;
}

#define KILL_WAIT_NS (120ull * 1000000000ull)

/* Wait (polling every ms) until done(pid), at most KILL_WAIT_NS; the time it took in *ms. */
static bool wait_for(bool (*done)(pid_t), pid_t pid, uint64_t *ms)
{
	uint64_t t0 = mono_ns(), t = t0;
	bool ok;
	while (!(ok = done(pid)) && (t = mono_ns()) - t0 < KILL_WAIT_NS)
		usleep(1000);
	*ms = (mono_ns() - t0) / 1000000u;
	return ok;
}

int ackgen_kill_main(int argc, char **argv)
{
	if (argc < 1) {
		fprintf(stderr, "usage: ackgen kill PID [BLOCKDEV]\n");
		return 2;
	}
	pid_t pid = (pid_t)strtol(argv[0], NULL, 10);
	uint64_t d0 = 0, in0 = 0, d1 = 0, in1 = 0;
	if (argc > 1 && blk_counts(argv[1], &d0, &in0) < 0) {
		fprintf(stderr, "ackgen kill: no block-layer counters for %s\n", argv[1]);
		return 2;
	}
	if (pid <= 1 || kill(pid, SIGSTOP) < 0) {
		perror("ackgen kill");
		return 2;
	}
	uint64_t stop_ms = 0, dead_ms = 0;
	if (!wait_for(proc_frozen, pid, &stop_ms)) {
		fprintf(stderr, "ackgen kill: %d not stopped 120 s after SIGSTOP\n", (int)pid);
		kill(pid, SIGKILL);
		return 1;
	}
	usleep(20000); /* completions the daemon handed to the kernel before it stopped */
	uint64_t t = mono_ns();
	if (argc > 1)
		blk_counts(argv[1], &d0, &in0);
	if (kill(pid, SIGKILL) < 0) {
		perror("ackgen kill");
		return 2;
	}
	if (!wait_for(proc_dead, pid, &dead_ms)) {
		fprintf(stderr, "ackgen kill: %d still alive 120 s after SIGKILL\n", (int)pid);
		return 1;
	}
	printf("K %" PRIu64 "\n", t);
	printf("stop_ms %" PRIu64 " dead_ms %" PRIu64 "\n", stop_ms, dead_ms);
	if (argc > 1) {
		blk_counts(argv[1], &d1, &in1);
		printf("held %" PRId64 " in_flight %" PRIu64 " completed_until_dead %" PRIu64 "\n",
		       (int64_t)in0 - (int64_t)(d1 - d0), in0, d1 - d0);
	}
	return 0;
}
