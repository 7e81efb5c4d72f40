/*
 * vaai-bench: entry point and shared helpers (see bench.h for the layout).
 *
 *   vaai-bench engine   [options]   (scripts/bench/engine)
 *   vaai-bench recovery [options]   (scripts/bench/recovery)
 *   vaai-bench vaai     [options]   (scripts/bench/vaai)
 *   vaai-bench xcopy    [options]   (scripts/bench/xcopy)
 *   vaai-bench mixed    [options]   (scripts/bench/counters-exact)
 *   vaai-bench scrape   [options]   (scripts/bench/scrape-host)
 * Each prints its result lines on stdout and progress on stderr ("# ...").
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bench.h"
#include "vaaid/util.h"

double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bench_parse_size(const char *s, uint64_t *out) { return vparse_size(s, out); }

const char *bench_self(void)
{
	static const char self[] = "/proc/self/exe"; /* resolved by execv in the child */
	return self;
}

int bench_run_capture(char *const argv[], char **out)
{
	int fd[2];
	if (pipe(fd) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fd[0]);
		close(fd[1]);
		return -e;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execv(argv[0], argv);
		fprintf(stderr, "vaai-bench: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);
	for (;;) {
		if (b && n + 1 == cap) {
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				b = NULL;
			} else {
				b = nb;
				cap *= 2;
			}
		}
		char scratch[4096];
		ssize_t r = b ? read(fd[0], b + n, cap - n - 1) : read(fd[0], scratch, sizeof(scratch));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (b)
			n += (size_t)r;
	}
	close(fd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
	}
	if (!b)
		return -ENOMEM;
	b[n] = 0;
	*out = b;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: vaai-bench engine [--dir DIR] [--size SIZE] [--alloc-size SIZE] [--runtime S] [--qd N]\n"
		"                         [--fio PATH] [--only randwrite|randread|alloc] [--no-fio] [--keep]\n"
		"                         [--bs 512|4096] [--whole-granules on|off|auto] [--group-flush N]\n"
		"                         [--settle S] [--rbd CEPHPOOL]  (pool and fio on RBD images: scripts/bench/ceph-engine)\n"
		"       vaai-bench recovery [--dir DIR] [--extents N] [--partial N] [--crashes N]\n"
		"                         [--crash-fill F] [--keep]\n"
		"       vaai-bench vaai [options]    (WRITE SAME, UNMAP, COMPARE AND WRITE: scripts/bench/vaai)\n"
		"       vaai-bench xcopy [options]   (EXTENDED COPY vs host copy: scripts/bench/xcopy)\n"
		"       vaai-bench mixed [--runtime S] [--qd N] [--seed N] [--dir DIR] [--keep]\n"
		"                         [--sg /dev/sgA=VOL,/dev/sgB=VOL --stats-cmd CMD]\n"
		"                         (counters exact under a mixed load: scripts/bench/counters-exact;\n"
		"                         --sg: through a real kernel, tests/vm/t_counters_load.sh)\n"
		"       vaai-bench scrape [--luns N] [--rounds N] [--k N] [--runtime S] [--gap S] [--qd N]\n"
		"                         [--warmup S] [--area SIZE] [--dir DIR] [--dump FILE] [--keep]\n"
		"                         (the metrics endpoint's scrape latency under load: scripts/bench/scrape-host)\n"
		"       vaai-bench ckpt [--extents N] [--seconds S] [--every S] [--qd N] [--dir DIR]\n"
		"                         (alloc-write p99 with/without a checkpoint, paused vs live: scripts/bench/ckpt)\n"
		"(the options of each are in its script's header; see docs/performance.md)\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage();
		return 2;
	}
	if (!strcmp(argv[1], "engine"))
		return bench_engine_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "recovery"))
		return bench_recovery_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "xcopy"))
		return bench_xcopy_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "vaai"))
		return bench_vaai_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "mixed"))
		return bench_mixed_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "scrape"))
		return bench_scrape_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "ckpt"))
		return bench_ckpt_main(argc - 1, argv + 1);
	if (argv[1][0] == '_')
		return bench_recovery_helper(argc - 1, argv + 1);
	usage();
	return 2;
}

int bench_fio_iops(char *const argv[], const char *side, double *iops, double *lat_us)
{
	fprintf(stderr, "# fio:");
	for (int i = 0; argv[i]; i++)
		fprintf(stderr, " %s", argv[i]);
	fprintf(stderr, "\n");
	char *outp = NULL;
	int rc = bench_run_capture(argv, &outp);
	if (rc != 0) {
		fprintf(stderr, "vaai-bench: fio failed (%d)\n", rc);
		free(outp);
		return rc < 0 ? rc : -EIO;
	}
	const char *js = strchr(outp, '{');
	json_object *o = js ? json_tokener_parse(js) : NULL, *jobs, *job, *sj, *v, *lat, *mean;
	rc = -EPROTO;
	if (o && json_object_object_get_ex(o, "jobs", &jobs) && json_object_array_length(jobs) > 0 &&
	    (job = json_object_array_get_idx(jobs, 0)) && json_object_object_get_ex(job, side, &sj) &&
	    json_object_object_get_ex(sj, "iops", &v)) {
		*iops = json_object_get_double(v);
		rc = 0;
		if (lat_us) {
			if (json_object_object_get_ex(sj, "lat_ns", &lat) &&
			    json_object_object_get_ex(lat, "mean", &mean))
				*lat_us = json_object_get_double(mean) / 1000;
			else
				rc = -EPROTO;
		}
	}
	if (rc)
		fprintf(stderr, "vaai-bench: cannot parse fio's JSON output\n");
	json_object_put(o);
	free(outp);
	return rc;
}

int bench_make_file(const char *path, uint64_t size, bool full)
{
	unlink(path);
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int rc = 0;
	if (!full) {
		if (ftruncate(fd, (off_t)size) < 0)
			rc = -errno;
	} else {
		const size_t chunk = 1u << 20;
		uint8_t *buf = malloc(chunk);
		if (!buf) {
			close(fd);
			return -ENOMEM;
		}
		for (size_t i = 0; i < chunk; i++)
			buf[i] = (uint8_t)(i * 13 + 3);
		for (uint64_t off = 0; off < size && !rc; off += chunk) {
			size_t len = size - off < chunk ? (size_t)(size - off) : chunk;
			if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len)
				rc = -EIO;
		}
		free(buf);
		if (!rc && fsync(fd) < 0)
			rc = -errno;
		/* No page cache left: fio's O_DIRECT I/O must not pay for invalidating it. */
		if (!rc)
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	}
	close(fd);
	return rc;
}
