/*
 * vaai-bench engine: 4 KiB random I/O at queue depth 32 through the whole
 * engine, against fio on the same file system.
 *
 * How this works: one pool file (uring I/O, O_DIRECT) holds two volumes:
 * "full" (--size, default 1 GiB) is written completely first (1 MiB
 * writes), "fresh" (--alloc-size, default 4 GiB, so that a 20 s run does
 * not run out of never-written granules) never is. The engine runs on
 * simhost's engine thread; this thread plays the kernel: it keeps --qd
 * commands queued in the LUN's ring (simhost_submit), and every reaped
 * completion is replaced at once by a new command. IOPS = commands
 * completed / time until the last completion.
 *   randwrite: WRITE(16) of 4 KiB at uniformly random 4 KiB offsets of "full"
 *              (in-place overwrites: one DSYNC write each, no metadata);
 *   randread:  READ(16) likewise;
 *   alloc:     WRITE(16) of 4 KiB into "fresh", each 4 KiB granule once, in a
 *              random order (first writes: data + MAP/VALID records, group
 *              committed).
 * fio runs the same patterns with --ioengine=io_uring --direct=1 --bs=4k
 * --iodepth=32 (--sync=dsync for writes) on a file of the same size: written
 * completely first (then dropped from the page cache) for randwrite and
 * randread, a fresh sparse file of --alloc-size for each alloc run (fio's
 * random map: each block once, like the engine's order).
 * --bs 512: randwrite / randread of 512 bytes at random 512-byte offsets
 * (lines named randwrite_512_qd32 / randread_512_qd32; fio likewise);
 * --qd N: N in flight on both sides, the lines named _qdN;
 * --whole-granules on|off|auto: partial-granule writes in place as
 * read-modify-writes of whole granules, or not, or as detected for the pool
 * file (the default; datapath.c);
 * --group-flush N: DSYNC writes made durable by group fsyncs, at most N in
 * flight (default: as detected, 4 on a volatile cache without FUA), or 0:
 * RWF_DSYNC per write (vblk_uring.c).
 * Per pattern the order is engine, fio, fio, engine, each for half of
 * --runtime, after a sync and a 2 s pause each (--settle S; 3 s after the
 * fills), so that what the disk is still flushing weighs on both sides alike;
 * each side totals --runtime.
 * --rbd CEPHPOOL (issue 26): the pool is the RBD image CEPHPOOL/vaai-bench-engine
 * of CEPH_CONF's cluster (journal inside, librbd's cache off: vblk_rbd), and
 * fio runs --ioengine=rbd --clientname=admin on CEPHPOOL/vaai-bench-fio, an
 * image made by vblk_rbd's own create rule (1 MiB objects, default features),
 * of --size (written completely first by fio with 1 MiB writes) for randwrite
 * and randread, made anew (--alloc-size, never written) before each alloc run;
 * the cache is off for fio through ceph.conf (scripts/ceph/cluster: rbd cache
 * = false). No --sync: librbd without cache acknowledges a write once the OSDs
 * have it, as for the engine. Lines named rbd_<pattern> with fio_rbd_iops=.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "scsi_build.h"
#include "simhost.h"

#define BLK 512u
#define IO 4096u

struct ecfg {
	const char *dir;
	uint64_t size;
	uint64_t alloc_size;
	double runtime;
	unsigned qd;
	const char *fio;
	const char *only; /* run only this pattern (name prefix) */
	bool no_fio;      /* engine only (profiling) */
	bool spin;        /* the kernel side busy-polls for completions (profiling) */
	bool keep;
	unsigned bs;      /* --bs: randwrite / randread size and alignment (512 or 4096) */
	int whole;        /* --whole-granules on|off|auto: 1 / 0 / -1 (simhost_whole_granules) */
	int group_flush;  /* --group-flush N: simhost_group_flush; -1 = the default */
	unsigned settle;  /* --settle S: pause before each step (smoke tests: 0) */
	const char *rbd;  /* --rbd CEPHPOOL: pool and fio on RBD images of CEPH_CONF's cluster */
	char fio_img[200]; /* --rbd: fio's image (rbd:CEPHPOOL/vaai-bench-fio) */
};

enum pattern { P_RANDWRITE, P_RANDREAD, P_ALLOC };

struct eng_run {
	uint64_t done, errors;
	double seconds;
	bool exhausted; /* alloc: every granule written before the time was up */
};

/* Keep qd commands in flight until runtime passes (or the order runs out). */
static int engine_run(struct simhost *h, int lun, enum pattern pat, uint64_t n_io, unsigned bs,
		      const uint32_t *order, uint64_t *order_next, double runtime, unsigned qd,
		      bool spin, struct eng_run *out)
{
	uint8_t *buf = malloc(IO);
	if (!buf)
		return -ENOMEM;
	memset(buf, 0x5a, IO);
	uint64_t rs = 0x9E3779B97F4A7C15ull ^ (uint64_t)pat ^ *order_next, next = *order_next;
	unsigned inflight = 0;
	struct simhost_result res[64];
	memset(out, 0, sizeof(*out));
	double t0 = bench_now(), end = t0 + runtime, last = t0;
	int rc = 0;
	for (;;) {
		bool time_left = bench_now() < end;
		while (time_left && inflight < qd && !out->exhausted) {
			uint64_t k;
			if (pat == P_ALLOC) {
				if (next == n_io) {
					out->exhausted = true;
					break;
				}
				k = order[next];
			} else {
				k = vrng_next(&rs) % n_io;
			}
			uint8_t cdb[16];
			bool wr = pat != P_RANDREAD;
			sb_rw16_cdb(cdb, wr ? 0x8a : 0x88, k * (bs / BLK), bs / BLK);
			rc = simhost_submit(h, lun, cdb, 16, wr ? buf : NULL, wr ? bs : 0, wr ? 0 : bs, NULL);
			if (rc == -EAGAIN)
				break;
			if (rc < 0)
				goto out;
			if (pat == P_ALLOC)
				next++;
			inflight++;
		}
		if (!inflight)
			break;
		/* 0: nothing within 1 s (spinning: nothing yet); give up after 60 s without any */
		int n = simhost_reap(h, res, 64, spin ? 0 : 1000);
		if (n < 0) {
			rc = n;
			goto out;
		}
		if (n == 0) {
			if (bench_now() - last > 60) {
				fprintf(stderr, "vaai-bench: no completion within 60 s\n");
				rc = -ETIMEDOUT;
				goto out;
			}
			continue;
		}
		for (int i = 0; i < n; i++) {
			if (res[i].r.status != 0) {
				if (!out->errors)
					fprintf(stderr, "vaai-bench: command failed: status 0x%02x sense key 0x%x asc 0x%02x\n",
						res[i].r.status, res[i].r.sense[2] & 0xf, res[i].r.sense[12]);
				out->errors++;
			}
			simhost_result_free(&res[i]);
		}
		inflight -= (unsigned)n;
		out->done += (uint64_t)n;
		last = bench_now();
	}
out:
	out->seconds = last - t0;
	*order_next = next;
	free(buf);
	return rc;
}

/* Fill a volume with 1 MiB writes, 8 in flight. */
static int engine_fill(struct simhost *h, int lun, uint64_t size)
{
	const uint32_t chunk = 1u << 20;
	uint8_t *buf = malloc(chunk);
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < chunk; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	uint64_t off = 0;
	unsigned inflight = 0;
	int rc = 0;
	double last = bench_now();
	struct simhost_result res[16];
	while (off < size || inflight) {
		while (off < size && inflight < 8) {
			uint32_t len = size - off < chunk ? (uint32_t)(size - off) : chunk;
			uint8_t cdb[16];
			sb_rw16_cdb(cdb, 0x8a, off / BLK, len / BLK);
			rc = simhost_submit(h, lun, cdb, 16, buf, len, 0, NULL);
			if (rc == -EAGAIN)
				break;
			if (rc < 0)
				goto out;
			off += len;
			inflight++;
		}
		int n = simhost_reap(h, res, 16, 1000);
		if (n < 0) {
			rc = n;
			goto out;
		}
		if (n == 0) {
			if (bench_now() - last > 60) {
				rc = -ETIMEDOUT;
				goto out;
			}
			continue;
		}
		last = bench_now();
		for (int i = 0; i < n; i++) {
			if (res[i].r.status != 0)
				rc = -EIO;
			simhost_result_free(&res[i]);
		}
		inflight -= (unsigned)n;
		if (rc < 0)
			goto out;
	}
out:
	free(buf);
	return rc;
}

/*
 * --rbd: fio's image made anew (size bytes, vblk_rbd's create rule: the same
 * object size and features as the pool's image), closed again so that fio's
 * librbd takes its lock; written completely by fio (1 MiB writes) when full.
 */
static int fio_rbd_image(const struct ecfg *c, uint64_t size, bool full)
{
	vblk_rbd_remove(c->fio_img, NULL); /* -ENOENT the first time */
	struct vreactor *r;
	int rc = vreactor_create(16, &r);
	if (rc < 0)
		return rc;
	struct vblk *b = NULL;
	rc = vblk_rbd_open(r, c->fio_img, NULL, size, &b);
	if (rc == 0)
		vblk_close(b);
	vreactor_destroy(r);
	if (rc < 0 || !full)
		return rc;
	char a_pool[200], a_img[200], a_size[64];
	snprintf(a_pool, sizeof(a_pool), "--pool=%s", c->rbd);
	snprintf(a_img, sizeof(a_img), "--rbdname=%s", strchr(c->fio_img, '/') + 1);
	snprintf(a_size, sizeof(a_size), "--size=%llu", (unsigned long long)size);
	char *argv[] = {(char *)c->fio, "--name=fill", "--ioengine=rbd", "--clientname=admin",
			a_pool, a_img, a_size, "--bs=1M", "--iodepth=8", "--rw=write",
			"--output-format=json", NULL};
	double iops;
	return bench_fio_iops(argv, "write", &iops, NULL);
}

static int run_fio(const struct ecfg *c, const char *file, enum pattern pat, double runtime,
		   double *iops)
{
	uint64_t fsize = pat == P_ALLOC ? c->alloc_size : c->size;
	char a_file[4200], a_size[64], a_rt[64], a_qd[64];
	snprintf(a_file, sizeof(a_file), "--filename=%s", file);
	snprintf(a_size, sizeof(a_size), "--size=%llu", (unsigned long long)fsize);
	/* fio counts whole seconds and takes 0 as "no limit" */
	snprintf(a_rt, sizeof(a_rt), "--runtime=%.0f", runtime < 1 ? 1 : runtime);
	snprintf(a_qd, sizeof(a_qd), "--iodepth=%u", c->qd);
	char *argv[32];
	int n = 0;
	char a_pool[200], a_img[200];
	argv[n++] = (char *)c->fio;
	argv[n++] = "--name=bench";
	argv[n++] = a_size;
	if (c->rbd) {
		snprintf(a_pool, sizeof(a_pool), "--pool=%s", c->rbd);
		snprintf(a_img, sizeof(a_img), "--rbdname=%s", strchr(c->fio_img, '/') + 1);
		argv[n++] = "--ioengine=rbd";
		argv[n++] = "--clientname=admin";
		argv[n++] = a_pool;
		argv[n++] = a_img;
	} else {
		argv[n++] = a_file;
		argv[n++] = "--ioengine=io_uring";
		argv[n++] = "--direct=1";
		argv[n++] = "--fallocate=none";
	}
	char a_bs[32];
	snprintf(a_bs, sizeof(a_bs), "--bs=%u", pat == P_ALLOC ? IO : c->bs);
	argv[n++] = a_bs;
	argv[n++] = a_qd;
	argv[n++] = "--time_based";
	argv[n++] = a_rt;
	argv[n++] = "--output-format=json";
	if (pat == P_RANDREAD) {
		argv[n++] = "--rw=randread";
		argv[n++] = "--norandommap";
	} else {
		argv[n++] = "--rw=randwrite";
		if (!c->rbd) /* librbd without cache: acknowledged once the OSDs have it */
			argv[n++] = "--sync=dsync";
		if (pat == P_RANDWRITE)
			argv[n++] = "--norandommap";
	}
	argv[n] = NULL;
	return bench_fio_iops(argv, pat == P_RANDREAD ? "read" : "write", iops, NULL);
}

static int parse_args(struct ecfg *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--keep")) {
			c->keep = true;
			continue;
		}
		if (!strcmp(a, "--no-fio")) {
			c->no_fio = true;
			continue;
		}
		if (!strcmp(a, "--spin")) {
			c->spin = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "vaai-bench engine: %s needs a value\n", a);
			return -EINVAL;
		}
		i++;
		if (!strcmp(a, "--dir")) {
			c->dir = v;
		} else if (!strcmp(a, "--size")) {
			if (bench_parse_size(v, &c->size) < 0 || c->size < (64u << 20) || c->size % (1u << 20)) {
				fprintf(stderr, "vaai-bench engine: --size must be a multiple of 1M, >= 64M\n");
				return -EINVAL;
			}
		} else if (!strcmp(a, "--alloc-size")) {
			if (bench_parse_size(v, &c->alloc_size) < 0 || c->alloc_size < (64u << 20) ||
			    c->alloc_size % (1u << 20)) {
				fprintf(stderr, "vaai-bench engine: --alloc-size must be a multiple of 1M, >= 64M\n");
				return -EINVAL;
			}
		} else if (!strcmp(a, "--runtime")) {
			c->runtime = atof(v);
			if (c->runtime < 1) {
				fprintf(stderr, "vaai-bench engine: --runtime must be >= 1 s\n");
				return -EINVAL;
			}
		} else if (!strcmp(a, "--qd")) {
			c->qd = (unsigned)atoi(v);
			if (c->qd < 1 || c->qd > 256) {
				fprintf(stderr, "vaai-bench engine: --qd must be 1..256\n");
				return -EINVAL;
			}
		} else if (!strcmp(a, "--only")) {
			c->only = v;
		} else if (!strcmp(a, "--bs")) {
			c->bs = (unsigned)atoi(v);
			if (c->bs != 512 && c->bs != 4096) {
				fprintf(stderr, "vaai-bench engine: --bs must be 512 or 4096\n");
				return -EINVAL;
			}
		} else if (!strcmp(a, "--whole-granules")) {
			c->whole = !strcmp(v, "on") ? 1 : !strcmp(v, "off") ? 0 : !strcmp(v, "auto") ? -1 : -2;
			if (c->whole == -2) {
				fprintf(stderr, "vaai-bench engine: --whole-granules must be on, off or auto\n");
				return -EINVAL;
			}
		} else if (!strcmp(a, "--group-flush")) {
			c->group_flush = atoi(v);
			if (c->group_flush < 0 || c->group_flush > (int)VBLK_GROUP_FLUSH_MAX) {
				fprintf(stderr, "vaai-bench engine: --group-flush must be 0..%u\n", VBLK_GROUP_FLUSH_MAX);
				return -EINVAL;
			}
		} else if (!strcmp(a, "--fio")) {
			c->fio = v;
		} else if (!strcmp(a, "--settle")) {
			c->settle = (unsigned)atoi(v);
			if (c->settle > 60 || (!c->settle && strcmp(v, "0"))) {
				fprintf(stderr, "vaai-bench engine: --settle must be 0..60 s\n");
				return -EINVAL;
			}
		} else if (!strcmp(a, "--rbd")) {
			c->rbd = v;
			if (!*v || strchr(v, '/') ||
			    snprintf(c->fio_img, sizeof(c->fio_img), "rbd:%s/vaai-bench-fio", v) >=
				    (int)sizeof(c->fio_img)) {
				fprintf(stderr, "vaai-bench engine: --rbd takes a Ceph pool's name\n");
				return -EINVAL;
			}
		} else {
			fprintf(stderr, "vaai-bench engine: unknown option %s\n", a);
			return -EINVAL;
		}
	}
	if (c->rbd && c->group_flush >= 0) {
		fprintf(stderr, "vaai-bench engine: --group-flush is for pool files, not --rbd\n");
		return -EINVAL;
	}
	return 0;
}

/* --rbd: rbd_<name> ... fio_rbd_iops= (new lines; the file lines stay as they are) */
static void print_line(const char *name, const struct eng_run *e, double fio, bool rbd)
{
	double eng = e->seconds > 0 ? (double)e->done / e->seconds : 0;
	printf("%s%s engine_iops=%.0f %s=%.0f ratio=%.2f\n", rbd ? "rbd_" : "", name, eng,
	       rbd ? "fio_rbd_iops" : "fio_iops", fio, fio > 0 ? eng / fio : 0);
	fflush(stdout);
}

int bench_engine_main(int argc, char **argv)
{
	struct ecfg c = {.dir = "build/bench-tmp", .size = 1ull << 30, .alloc_size = 4ull << 30,
			 .runtime = 20, .qd = 32, .bs = IO, .whole = -1, .group_flush = -1,
			 .fio = "/usr/bin/fio", .settle = 2};
	if (parse_args(&c, argc, argv) < 0)
		return 2;
	char pool[4096], ffile[4096];
	if (c.rbd) {
		snprintf(pool, sizeof(pool), "rbd:%s/vaai-bench-engine", c.rbd);
		snprintf(ffile, sizeof(ffile), "%s", c.fio_img);
	} else {
		mkdir(c.dir, 0755);
		snprintf(pool, sizeof(pool), "%s/engine.pool", c.dir);
		snprintf(ffile, sizeof(ffile), "%s/fio.file", c.dir);
	}
	simhost_remove_pool(pool); /* an RBD image too (vblk_remove_store) */
	/* The two volumes + room for the metadata (journal, checkpoints). */
	uint64_t psize = c.size + c.alloc_size + (256u << 20);
	struct vpool_params prm = {0};
	struct simhost *h;
	char err[512] = "";
	/* On RBD the journal is inside the image, as the daemon and vaai-sim keep it. */
	int rc = simhost_create_pool_ex(pool, psize, &prm, !c.rbd, SIMHOST_IO_URING, 1, &h, err,
					sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "vaai-bench: %s\n", err);
		return 1;
	}
	int status = 1;
	if ((rc = simhost_whole_granules(h, c.whole)) < 0) {
		fprintf(stderr, "vaai-bench: --whole-granules: %s\n", strerror(-rc));
		simhost_close(h);
		return 1;
	}
	if (c.group_flush >= 0 && (rc = simhost_group_flush(h, (unsigned)c.group_flush)) < 0) {
		fprintf(stderr, "vaai-bench: --group-flush: %s\n", strerror(-rc));
		simhost_close(h);
		return 1;
	}
	struct eng_run e;
	double fio = 0;
	uint64_t n_io = c.size / c.bs, n_alloc = c.alloc_size / IO;
	uint32_t *order = NULL;
	if ((rc = simhost_volume_create(h, "full", c.size, BLK)) < 0 ||
	    (rc = simhost_volume_create(h, "fresh", c.alloc_size, BLK)) < 0 ||
	    (rc = simhost_attach(h, "full", 0)) < 0 || (rc = simhost_attach(h, "fresh", 1)) < 0) {
		fprintf(stderr, "vaai-bench: volume setup: %s\n", strerror(-rc));
		goto out;
	}
	fprintf(stderr, "# filling volume 'full' (%llu MiB) and %s\n",
		(unsigned long long)(c.size >> 20), ffile);
	double t = bench_now();
	if ((rc = engine_fill(h, 0, c.size)) < 0) {
		fprintf(stderr, "vaai-bench: filling the volume failed: %s\n", strerror(-rc));
		goto out;
	}
	fprintf(stderr, "# engine fill: %.1f s\n", bench_now() - t);
	if ((rc = c.rbd ? fio_rbd_image(&c, c.size, true) : bench_make_file(ffile, c.size, true)) < 0) {
		fprintf(stderr, "vaai-bench: %s: %s\n", ffile, strerror(-rc));
		goto out;
	}

	/* (--bs 512: the randwrite and randread lines are named _512_ instead of _4k_;
	 * --qd N: _qdN instead of _qd32) */
	struct {
		enum pattern p;
		char name[40];
	} runs[] = {{.p = P_RANDWRITE}, {.p = P_RANDREAD}, {.p = P_ALLOC}};
	const char *bsname = c.bs == IO ? "4k" : "512";
	snprintf(runs[0].name, sizeof(runs[0].name), "randwrite_%s_qd%u", bsname, c.qd);
	snprintf(runs[1].name, sizeof(runs[1].name), "randread_%s_qd%u", bsname, c.qd);
	snprintf(runs[2].name, sizeof(runs[2].name), "alloc_write_4k_qd%u", c.qd);
	/* Let the fills reach the disk: a run must not pay for the previous one's writeback. */
	sync();
	sleep(c.settle + 1);
	order = malloc(n_alloc * sizeof(*order));
	if (!order)
		goto out;
	for (int r = 0; r < 3; r++) {
		int lun = runs[r].p == P_ALLOC ? 1 : 0;
		if (c.only && strncmp(runs[r].name, c.only, strlen(c.only)))
			continue;
		if (runs[r].p == P_ALLOC) {
			uint64_t rs = 12345;
			for (uint64_t i = 0; i < n_alloc; i++)
				order[i] = (uint32_t)i;
			for (uint64_t i = n_alloc - 1; i > 0; i--) {
				uint64_t j = vrng_next(&rs) % (i + 1);
				uint32_t x = order[i];
				order[i] = order[j];
				order[j] = x;
			}
		}
		/*
		 * engine, fio, fio, engine, each for half the runtime: whatever the
		 * (virtual) disk is still flushing from the previous step weighs on
		 * both sides alike. Each side totals --runtime seconds.
		 */
		double half = c.runtime / 2;
		struct eng_run ea = {0}, eb = {0};
		double fa = 0, fb = 0;
		uint64_t next = 0;
		for (int step = 0; step < 4; step++) {
			sync();
			sleep(c.settle);
			if (step == 1 || step == 2) {
				if (c.no_fio)
					continue;
				if (runs[r].p == P_ALLOC &&
				    (rc = c.rbd ? fio_rbd_image(&c, c.alloc_size, false)
						: bench_make_file(ffile, c.alloc_size, false)) < 0) {
					fprintf(stderr, "vaai-bench: %s: %s\n", ffile, strerror(-rc));
					goto out;
				}
				if ((rc = run_fio(&c, ffile, runs[r].p, half, step == 1 ? &fa : &fb)) < 0)
					goto out;
				fprintf(stderr, "# fio: %.0f IOPS\n", step == 1 ? fa : fb);
				continue;
			}
			struct eng_run *e = step == 0 ? &ea : &eb;
			fprintf(stderr, "# engine %s, %.0f s\n", runs[r].name, half);
			rc = engine_run(h, lun, runs[r].p, runs[r].p == P_ALLOC ? n_alloc : n_io,
					runs[r].p == P_ALLOC ? IO : c.bs, order,
					&next, half, c.qd, c.spin, e);
			if (rc < 0 || e->errors) {
				fprintf(stderr, "vaai-bench: engine run failed: %s, %llu command errors\n",
					strerror(-rc), (unsigned long long)e->errors);
				goto out;
			}
			fprintf(stderr, "# engine: %llu commands in %.2f s (%.0f IOPS)%s\n",
				(unsigned long long)e->done, e->seconds,
				e->seconds > 0 ? (double)e->done / e->seconds : 0,
				e->exhausted ? " (every granule written before the time was up)" : "");
		}
		e.done = ea.done + eb.done;
		e.seconds = ea.seconds + eb.seconds;
		fio = (fa + fb) / 2;
		print_line(runs[r].name, &e, fio, c.rbd != NULL);
	}
	char *js = simhost_stats_json(h);
	if (js)
		fprintf(stderr, "# pool stats: %s\n", js);
	free(js);
	status = 0;
out:
	free(order);
	rc = simhost_close(h);
	if (rc < 0) {
		fprintf(stderr, "vaai-bench: closing the pool: %s\n", strerror(-rc));
		status = 1;
	}
	if (!c.keep && c.rbd) {
		simhost_remove_pool(pool);
		vblk_rbd_remove(c.fio_img, NULL);
	} else if (!c.keep) {
		simhost_remove_pool(pool);
		unlink(ffile);
		rmdir(c.dir); /* only if empty */
	}
	return status;
}
