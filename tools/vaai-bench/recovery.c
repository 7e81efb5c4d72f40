/*
 * vaai-bench recovery: memory and open time of a large pool.
 *
 * How this works: a sparse pool file gets one volume of --extents extents,
 * all mapped and fully valid through vpool_bench_map_full (MAP records,
 * group-committed, checkpointed: no data written), in a pseudo-random order
 * so that no two consecutive virtual extents are physically consecutive (one
 * checkpoint map run per extent: the largest checkpoint). Every measurement
 * runs in a fresh process (this executable re-executed with a helper
 * subcommand), so nothing of the builder's memory is counted:
 *   _open PATH          open the pool (recovery included), report the time,
 *                       VmRSS before, VmRSS after and VmHWM (= ru_maxrss)
 *   _partial PATH N     deallocate one 4 KiB granule in N distinct extents
 *                       (N extents become partially valid), close cleanly
 *   _churn PATH         open, then keep 32 metadata-changing commands in
 *                       flight forever (deallocate a granule, write it back),
 *                       printing the journal fill; the parent kill -9s it
 *                       when the journal is at --crash-fill of its size
 *                       (a checkpoint starts at one half): the records since
 *                       the last checkpoint are then replayed by the next open.
 * Results: rss_per_tib_mapped_mib (peak of the fresh open, minus the process
 * before the open, scaled to 1 TiB mapped), rss_steady_per_tib_mapped_mib
 * (after the open), partial_extent_extra_bytes (steady RSS difference / N),
 * open_clean_s, open_after_crash_s (worst of --crashes crashes); and
 * thin_64t_volume_rss_kib: the peak RSS of opening another pool, whose one volume
 * has the largest size (64 TiB) with 1,024 extents mapped in 256 runs spread over it;
 * volume_info_us, pool_stats_us: vvol_get_info and vpool_get_stats on the built pool
 * with every extent mapped (median of 21 calls each; query_times).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"

#define EXT (1ull << 20)
#define VOLNAME "big"

struct rcfg {
	const char *dir;
	uint64_t extents;
	uint64_t partial;
	unsigned crashes;
	double crash_fill;
	bool keep;
};

/* VmRSS / VmHWM of this process in KiB. */
static void mem_kib(long *rss, long *hwm)
{
	*rss = *hwm = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return;
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "VmRSS:", 6))
			*rss = atol(line + 6);
		else if (!strncmp(line, "VmHWM:", 6))
			*hwm = atol(line + 6);
	}
	fclose(f);
}

struct env {
	struct vreactor *r;
	struct vblk *dev;
	struct vpool *p;
};

static int env_open(struct env *e, const char *path, uint64_t create_size, struct vpool_open_report *rep)
{
	memset(e, 0, sizeof(*e));
	int rc = vreactor_create(256, &e->r);
	if (rc < 0)
		return rc;
	rc = vblk_uring_open(e->r, path, create_size, &e->dev);
	if (rc < 0)
		return rc;
	if (create_size) {
		struct vpool_params prm = {0};
		rc = vpool_format(e->dev, &prm);
		if (rc < 0)
			return rc;
	}
	struct vpool_open_report tmp;
	return vpool_open_ex(e->dev, 0, &e->p, rep ? rep : &tmp);
}

static int env_close(struct env *e)
{
	int rc = e->p ? vpool_close(e->p) : 0;
	vblk_close(e->dev);
	vreactor_destroy(e->r);
	return rc;
}

/* ---- helpers run in a fresh process */

static int helper_open(const char *path)
{
	long rss0, hwm0, rss1, hwm1;
	mem_kib(&rss0, &hwm0);
	struct env e;
	struct vpool_open_report rep = {0};
	double t = bench_now();
	int rc = env_open(&e, path, 0, &rep);
	double dt = bench_now() - t;
	if (rc < 0) {
		fprintf(stderr, "vaai-bench: open %s: %s %s\n", path, strerror(-rc), rep.error);
		return 1;
	}
	mem_kib(&rss1, &hwm1);
	struct vvol *v = vpool_volume_find(e.p, VOLNAME);
	struct vvol_info vi = {0};
	if (v)
		vvol_get_info(v, &vi);
	printf("open_s=%.4f rss0_kib=%ld rss_kib=%ld hwm_kib=%ld mapped=%llu commits=%llu records=%llu\n",
	       dt, rss0, rss1, hwm1, (unsigned long long)(vi.mapped / EXT),
	       (unsigned long long)rep.commits, (unsigned long long)rep.records);
	/* Leave without a checkpoint: nothing changed since the open. */
	vpool_abandon(e.p);
	vblk_close(e.dev);
	vreactor_destroy(e.r);
	return 0;
}

struct cmd_slot {
	struct env *e;
	struct vvol *v;
	uint64_t off;
	int phase; /* 0: deallocate in flight, 1: write in flight */
	unsigned *done;
	int *err;
};

static void slot_cb(void *arg, int res)
{
	struct cmd_slot *s = arg;
	if (res < 0 && !*s->err)
		*s->err = res;
	(*s->done)++;
}

static int helper_partial(const char *path, uint64_t n)
{
	struct env e;
	int rc = env_open(&e, path, 0, NULL);
	struct vvol *v = rc == 0 ? vpool_volume_find(e.p, VOLNAME) : NULL;
	if (!v) {
		fprintf(stderr, "vaai-bench: open %s: %s\n", path, rc ? strerror(-rc) : "no volume");
		return 1;
	}
	struct vvol_info vi;
	vvol_get_info(v, &vi);
	uint64_t n_ext = vi.size / EXT, stride = n ? n_ext / n : 1;
	if (!stride || n > n_ext) {
		fprintf(stderr, "vaai-bench: --partial %llu is more than the extents\n",
			(unsigned long long)n);
		return 1;
	}
	unsigned done = 0, issued = 0;
	int err = 0;
	struct cmd_slot s = {.e = &e, .v = v, .done = &done, .err = &err};
	for (uint64_t k = 0; k < n && !err;) {
		while (k < n && issued - done < 256) {
			/* granule 1 of the extent, so no extent becomes empty */
			rc = vvol_deallocate(v, k * stride * EXT + 4096, 4096, slot_cb, &s);
			if (rc < 0)
				return 1;
			issued++;
			k++;
		}
		while (issued - done >= 256 || (k == n && done < issued))
			if (vreactor_run_once(e.r, -1) < 0)
				return 1;
	}
	if (err) {
		fprintf(stderr, "vaai-bench: deallocate: %s\n", strerror(-err));
		return 1;
	}
	rc = env_close(&e);
	return rc < 0 ? 1 : 0;
}

struct churn {
	struct vvol *v;
	uint64_t n_ext;
	uint64_t rs;
	uint8_t *buf;
	struct iovec iov;
	uint64_t completed;
	int err;
};

struct churn_slot {
	struct churn *c;
	uint64_t off;
	int phase;
};

static void churn_next(struct churn_slot *s);

static void churn_cb(void *arg, int res)
{
	struct churn_slot *s = arg;
	if (res < 0 && !s->c->err)
		s->c->err = res;
	s->c->completed++;
	s->phase = !s->phase;
	churn_next(s);
}

static void churn_next(struct churn_slot *s)
{
	struct churn *c = s->c;
	int rc;
	if (s->phase == 0) {
		s->off = (vrng_next(&c->rs) % c->n_ext) * EXT + (vrng_next(&c->rs) % (EXT / 4096)) * 4096;
		rc = vvol_deallocate(c->v, s->off, 4096, churn_cb, s);
	} else {
		rc = vvol_write(c->v, s->off, 4096, &c->iov, 1, churn_cb, s);
	}
	if (rc < 0 && !c->err)
		c->err = rc;
}

static int helper_churn(const char *path)
{
	struct env e;
	int rc = env_open(&e, path, 0, NULL);
	struct vvol *v = rc == 0 ? vpool_volume_find(e.p, VOLNAME) : NULL;
	if (!v) {
		fprintf(stderr, "vaai-bench: open %s: %s\n", path, rc ? strerror(-rc) : "no volume");
		return 1;
	}
	struct vvol_info vi;
	vvol_get_info(v, &vi);
	struct churn c = {.v = v, .n_ext = vi.size / EXT, .rs = (uint64_t)getpid() * 2654435761u + 1};
	c.buf = vblk_alloc_buf(4096);
	if (!c.buf)
		return 1;
	memset(c.buf, 0xa5, 4096);
	c.iov = (struct iovec){.iov_base = c.buf, .iov_len = 4096};
	struct churn_slot slots[32];
	for (int i = 0; i < 32; i++) {
		slots[i] = (struct churn_slot){.c = &c};
		churn_next(&slots[i]);
	}
	uint64_t last = 0;
	while (!c.err) {
		if (vreactor_run_once(e.r, -1) < 0)
			break;
		if (c.completed - last >= 64) {
			last = c.completed;
			struct vpool_stats st;
			vpool_get_stats(e.p, &st);
			printf("used=%llu size=%llu checkpoints=%llu completed=%llu\n",
			       (unsigned long long)st.journal_used, (unsigned long long)st.journal_size,
			       (unsigned long long)st.checkpoints, (unsigned long long)c.completed);
			fflush(stdout);
		}
	}
	fprintf(stderr, "vaai-bench: churn stopped: %s\n", strerror(-c.err));
	return 1;
}

int bench_recovery_helper(int argc, char **argv)
{
	if (!strcmp(argv[0], "_open") && argc == 2)
		return helper_open(argv[1]);
	if (!strcmp(argv[0], "_partial") && argc == 3)
		return helper_partial(argv[1], strtoull(argv[2], NULL, 0));
	if (!strcmp(argv[0], "_churn") && argc == 2)
		return helper_churn(argv[1]);
	fprintf(stderr, "vaai-bench: unknown helper %s\n", argv[0]);
	return 2;
}

/* ---- the driver */

struct open_res {
	double open_s;
	long rss0, rss, hwm;
	unsigned long long mapped, commits, records;
};

static int measure_open(const char *pool, struct open_res *o)
{
	char *argv[] = {(char *)bench_self(), "_open", (char *)pool, NULL};
	char *out = NULL;
	int rc = bench_run_capture(argv, &out);
	if (rc == 0 && sscanf(out, "open_s=%lf rss0_kib=%ld rss_kib=%ld hwm_kib=%ld mapped=%llu commits=%llu records=%llu",
			      &o->open_s, &o->rss0, &o->rss, &o->hwm, &o->mapped, &o->commits,
			      &o->records) != 7)
		rc = -EPROTO;
	free(out);
	if (rc == 0)
		fprintf(stderr, "# open: %.3f s, RSS %ld KiB before, %ld KiB after, peak %ld KiB, %llu extents mapped, replayed %llu commits / %llu records\n",
			o->open_s, o->rss0, o->rss, o->hwm, o->mapped, o->commits, o->records);
	return rc;
}

/* Run _churn and kill -9 it once the journal holds crash_fill of its size. */
static int crash_once(const char *pool, double fill)
{
	int fd[2];
	if (pipe(fd) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl(bench_self(), bench_self(), "_churn", pool, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	FILE *f = fdopen(fd[0], "r");
	char line[256];
	unsigned long long used = 0, size = 1, ck = 0, done = 0;
	bool killed = false;
	double t0 = bench_now();
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "used=%llu size=%llu checkpoints=%llu completed=%llu", &used, &size, &ck,
			   &done) != 4)
			continue;
		if ((double)used >= fill * (double)size || bench_now() - t0 > 300) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
	}
	if (!killed)
		kill(pid, SIGKILL);
	if (f)
		fclose(f);
	else
		close(fd[0]);
	int st;
	waitpid(pid, &st, 0);
	fprintf(stderr, "# churn killed after %.1f s: %llu commands, %llu checkpoints, journal %llu of %llu bytes in use\n",
		bench_now() - t0, done, ck, used, size);
	return killed ? 0 : -EIO;
}

static int run_helper(char *const argv[])
{
	char *out = NULL;
	int rc = bench_run_capture(argv, &out);
	free(out);
	return rc;
}

/*
 * A pool holding one thin volume of the largest size (2^26 extents: 64 TiB), with
 * THIN_RUNS runs of 4 extents mapped, spread evenly over it (one per 256 GiB): the
 * RSS of opening it (peak minus the process before the open) and the open's time.
 * A map of leaves costs a leaf per run plus the directory's pages (runs this far
 * apart touch every page of its 1 MiB); the dense map it replaced cost a page per
 * run, but the open read through all 512 MiB of it (docs/performance.md).
 */
#define THIN_RUNS 256
static int thin_volume_rss(const struct rcfg *c)
{
	char pool[4096];
	snprintf(pool, sizeof(pool), "%s/recovery-thin.pool", c->dir);
	unlink(pool);
	const uint64_t n = vpool_volume_size_max(EXT) / EXT, step = n / THIN_RUNS;
	struct env e;
	int rc = env_open(&e, pool, (uint64_t)THIN_RUNS * 4 * EXT + (1ull << 30), NULL);
	struct vvol *v = NULL;
	if (rc == 0)
		rc = vpool_volume_create(e.p, VOLNAME, n * EXT, 512, &v);
	for (uint64_t k = 0; rc == 0 && k < THIN_RUNS; k++)
		rc = vpool_bench_map_full(v, k * step + step / 2, 4, 0);
	int rc2 = env_close(&e);
	struct open_res o;
	if (rc == 0 && rc2 == 0)
		rc = measure_open(pool, &o);
	if (!c->keep)
		unlink(pool);
	if (rc < 0 || rc2 < 0) {
		fprintf(stderr, "vaai-bench: the thin 64 TiB volume: %s\n", strerror(rc < 0 ? -rc : -rc2));
		return rc < 0 ? rc : rc2;
	}
	printf("thin_64t_volume_rss_kib=%ld mapped_extents=%llu open_s=%.3f\n", o.hwm - o.rss0,
	       o.mapped, o.open_s);
	fflush(stdout);
	return 0;
}

/*
 * What the control path's queries cost with every extent mapped: vvol_get_info
 * (`volume list`) and vpool_get_stats (`status`, `stats`), each the median of
 * QUERY_RUNS calls, in microseconds. They run on the reactor (docs/snapshots.md
 * section 6: counters, no scan of the map or of the refcounts).
 */
#define QUERY_RUNS 21
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void query_times(struct vpool *p, struct vvol *v, double *info_us, double *stats_us)
{
	double ti[QUERY_RUNS], ts[QUERY_RUNS];
	for (int k = 0; k < QUERY_RUNS; k++) {
		struct vvol_info vi;
		struct vpool_stats st;
		double t = bench_now();
		vvol_get_info(v, &vi);
		ti[k] = (bench_now() - t) * 1e6;
		t = bench_now();
		vpool_get_stats(p, &st);
		ts[k] = (bench_now() - t) * 1e6;
	}
	qsort(ti, QUERY_RUNS, sizeof(double), cmp_double);
	qsort(ts, QUERY_RUNS, sizeof(double), cmp_double);
	*info_us = ti[QUERY_RUNS / 2];
	*stats_us = ts[QUERY_RUNS / 2];
}

int bench_recovery_main(int argc, char **argv)
{
	struct rcfg c = {.dir = "build/bench-tmp", .extents = 1u << 20, .partial = 131072, .crashes = 2,
			 .crash_fill = 0.45};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--keep")) {
			c.keep = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "vaai-bench recovery: %s needs a value\n", a);
			return 2;
		}
		i++;
		if (!strcmp(a, "--dir"))
			c.dir = v;
		else if (!strcmp(a, "--extents"))
			c.extents = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--partial"))
			c.partial = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--crashes"))
			c.crashes = (unsigned)atoi(v);
		else if (!strcmp(a, "--crash-fill"))
			c.crash_fill = atof(v);
		else {
			fprintf(stderr, "vaai-bench recovery: unknown option %s\n", a);
			return 2;
		}
	}
	if (c.extents < 16 || c.partial > c.extents / 2 || c.crash_fill <= 0 || c.crash_fill >= 0.5) {
		fprintf(stderr, "vaai-bench recovery: need --extents >= 16, --partial <= extents/2, 0 < --crash-fill < 0.5\n");
		return 2;
	}
	mkdir(c.dir, 0755);
	char pool[4096];
	snprintf(pool, sizeof(pool), "%s/recovery.pool", c.dir);
	unlink(pool);
	/* The data extents + room for the metadata areas (sparse: only what is written uses
	 * space): the two checkpoint areas are sized for 4x the pool (its default max_size),
	 * ~168 B each per extent of it, so a fixed 1 GiB (as before) left fewer than the
	 * extents asked for from ~750,000 on (ENOSPC at the default 1,048,576). */
	uint64_t size = c.extents * EXT + (1ull << 30) + c.extents * 2048;
	int status = 1;
	struct env e;
	double t = bench_now();
	int rc = env_open(&e, pool, size, NULL);
	struct vvol *v = NULL;
	if (rc == 0)
		rc = vpool_volume_create(e.p, VOLNAME, c.extents * EXT, 512, &v);
	if (rc == 0)
		rc = vpool_bench_map_full(v, 0, c.extents, 1);
	double info_us = 0, stats_us = 0;
	if (rc == 0)
		query_times(e.p, v, &info_us, &stats_us);
	struct vpool_stats st = {0};
	if (e.p)
		vpool_get_stats(e.p, &st);
	int rc2 = env_close(&e);
	if (rc < 0 || rc2 < 0) {
		fprintf(stderr, "vaai-bench: building the pool: %s\n", strerror(rc < 0 ? -rc : -rc2));
		goto out;
	}
	fprintf(stderr, "# built a pool of %llu extents (%.1f GiB virtual), %llu mapped fully valid, in %.1f s (%llu journal commits, %llu checkpoints)\n",
		(unsigned long long)(st.capacity / EXT), (double)size / (1u << 30),
		(unsigned long long)c.extents, bench_now() - t, (unsigned long long)st.journal_commits,
		(unsigned long long)st.checkpoints);
	struct stat sst;
	if (stat(pool, &sst) == 0)
		fprintf(stderr, "# pool file: %llu bytes, %llu bytes allocated\n",
			(unsigned long long)sst.st_size, (unsigned long long)sst.st_blocks * 512);

	double scale = (double)(1ull << 40) / ((double)c.extents * EXT);
	struct open_res o0, o, op;
	double clean_max = 0;
	for (int k = 0; k < 3; k++) {
		if ((rc = measure_open(pool, &o)) < 0)
			goto out;
		if (k == 0)
			o0 = o;
		if (o.open_s > clean_max)
			clean_max = o.open_s;
	}
	printf("rss_per_tib_mapped_mib=%.1f\n", (double)(o0.hwm - o0.rss0) / 1024.0 * scale);
	printf("rss_steady_per_tib_mapped_mib=%.1f\n", (double)(o0.rss - o0.rss0) / 1024.0 * scale);
	printf("open_clean_s=%.3f\n", clean_max);
	fflush(stdout);
	if ((rc = thin_volume_rss(&c)) < 0)
		goto out;
	printf("volume_info_us=%.2f mapped_extents=%llu\n", info_us, (unsigned long long)c.extents);
	printf("pool_stats_us=%.2f mapped_extents=%llu\n", stats_us, (unsigned long long)c.extents);
	fflush(stdout);

	if (c.partial) {
		char n[32];
		snprintf(n, sizeof(n), "%llu", (unsigned long long)c.partial);
		char *pargv[] = {(char *)bench_self(), "_partial", pool, n, NULL};
		if ((rc = run_helper(pargv)) != 0) {
			fprintf(stderr, "vaai-bench: making extents partial failed\n");
			goto out;
		}
		if ((rc = measure_open(pool, &op)) < 0)
			goto out;
		printf("partial_extent_extra_bytes=%.0f\n",
		       (double)((op.rss - op.rss0) - (o0.rss - o0.rss0)) * 1024.0 / (double)c.partial);
		printf("partial_extent_extra_peak_bytes=%.0f\n",
		       (double)((op.hwm - op.rss0) - (o0.hwm - o0.rss0)) * 1024.0 / (double)c.partial);
		fflush(stdout);
	}

	double crash_max = 0;
	unsigned long long rec_max = 0, com_max = 0;
	for (unsigned k = 0; k < c.crashes; k++) {
		if ((rc = crash_once(pool, c.crash_fill)) < 0) {
			fprintf(stderr, "vaai-bench: the churn process did not reach the journal fill\n");
			goto out;
		}
		if ((rc = measure_open(pool, &o)) < 0)
			goto out;
		if (o.open_s > crash_max) {
			crash_max = o.open_s;
			rec_max = o.records;
			com_max = o.commits;
		}
	}
	if (c.crashes) {
		printf("open_after_crash_s=%.3f\n", crash_max);
		printf("open_after_crash_replayed_commits=%llu records=%llu\n", com_max, rec_max);
	}
	status = 0;
out:
	if (!c.keep) {
		unlink(pool);
		rmdir(c.dir);
	}
	return status;
}
