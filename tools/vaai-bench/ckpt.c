/*
 * vaai-bench ckpt: allocating-write latency with and without a checkpoint
 * running, paused checkpoints (the default) and live ones
 * (vpool_set_live_checkpoints) side by side in one run (scripts/bench/ckpt,
 * docs/snapshots.md section 12, step 3).
 *
 * How this works: a pool file gets one volume with --extents extents mapped in
 * a pseudo-random physical order (vpool_bench_map_full: the largest
 * checkpoint blob), then, for each mode, a closed loop of --qd 4 KiB writes
 * each into a never-written extent of a fresh volume (allocation, MAP + VALID +
 * DATA records: every one waits for a journal commit) runs for --seconds while a
 * checkpoint is started every --every seconds (vpool_checkpoint, which keeps the
 * reactor and so the load running). Each write's latency is filed under
 * "checkpoint running" if one was running when it was submitted or completed,
 * else "none". Prints per mode:
 *   alloc_write_p99_us mode=paused|live none=X ckpt=X ratio=X max_us=X samples=N/N checkpoints=N
 * and the ratio of the two modes' p99 while a checkpoint runs. Ratios, no absolute
 * asserts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"

#define EXT (1ull << 20)
#define BS 4096u
#define MAXQD 128

struct slot {
	struct load *ld;
	double t0;
	bool ckpt_at_submit;
	int phase_at_submit;
	uint64_t room_waits_at_submit;
	struct iovec iov;
};

struct load {
	struct vpool *p;
	struct vvol *v;
	uint64_t next_vext, n_vext;
	uint8_t *buf;
	double end;
	unsigned inflight;
	int err;
	double *lat[2]; /* [0] none, [1] checkpoint running (microseconds) */
	double worst;   /* the worst write's latency (us), its phases and the room waits meanwhile */
	int worst_phase[2];
	uint64_t worst_room_waits;
	size_t n[2], cap[2];
	struct slot slots[MAXQD];
};

static bool ckpt_running(struct vpool *p, int *phase, uint64_t *room_waits)
{
	struct vpool_diag d;
	vpool_get_diag(p, &d);
	*phase = d.ckpt_phase;
	*room_waits = d.journal.room_full_waits;
	return d.ckpt_running;
}

static void submit(struct slot *s);

static void done(void *arg, int res)
{
	struct slot *s = arg;
	struct load *ld = s->ld;
	ld->inflight--;
	if (res < 0) {
		ld->err = res;
		return;
	}
	int phase;
	uint64_t rw;
	int k = ckpt_running(ld->p, &phase, &rw) || s->ckpt_at_submit;
	double us = (bench_now() - s->t0) * 1e6;
	if (us > ld->worst) {
		ld->worst = us;
		ld->worst_phase[0] = s->phase_at_submit;
		ld->worst_phase[1] = phase;
		ld->worst_room_waits = rw - s->room_waits_at_submit;
	}
	if (ld->n[k] == ld->cap[k]) {
		size_t cap = ld->cap[k] ? 2 * ld->cap[k] : 4096;
		double *l = realloc(ld->lat[k], cap * sizeof(*l));
		if (!l) {
			ld->err = -ENOMEM;
			return;
		}
		ld->lat[k] = l;
		ld->cap[k] = cap;
	}
	ld->lat[k][ld->n[k]++] = us;
	if (bench_now() < ld->end && ld->next_vext < ld->n_vext)
		submit(s);
}

static void submit(struct slot *s)
{
	struct load *ld = s->ld;
	s->t0 = bench_now();
	s->ckpt_at_submit = ckpt_running(ld->p, &s->phase_at_submit, &s->room_waits_at_submit);
	s->iov = (struct iovec){.iov_base = ld->buf, .iov_len = BS};
	int rc = vvol_write(ld->v, ld->next_vext++ * EXT, BS, &s->iov, 1, done, s);
	if (rc < 0)
		ld->err = rc;
	else
		ld->inflight++;
}

/* Merge the last checkpoint's steps into the mode's worst of each. */
/* The worst of each step over the run's checkpoints (the setup's own, before ck0,
 * ran unloaded: not counted). */
static void steps_max(struct vpool *p, unsigned ck0, struct vpool_ckpt_steps *m)
{
	struct vpool_stats st;
	vpool_get_stats(p, &st);
	if (st.checkpoints <= ck0)
		return;
	struct vpool_diag d;
	vpool_get_diag(p, &d);
	const struct vpool_ckpt_steps *l = &d.ckpt_last;
#define M(f) m->f = l->f > m->f ? l->f : m->f
	M(paused_ns); M(quiesce_ns); M(homes_ns); M(freeze_ns); M(freeze_hmaps_ns); M(ser_init_ns);
	M(fill_max_ns); M(fill_total_ns); M(window_io_max_ns); M(sb_ns); M(total_ns); M(windows);
#undef M
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double q)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_d);
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);
	return v[i];
}

int bench_ckpt_main(int argc, char **argv)
{
	const char *dir = "build/bench-tmp";
	uint64_t extents = 262144, wext = 65536;
	double seconds = 6, every = 0.5;
	unsigned qd = 32;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "--extents"))
			extents = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--every"))
			every = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--qd"))
			qd = (unsigned)atoi(argv[i + 1]);
		else {
			fprintf(stderr, "usage: vaai-bench ckpt [--dir DIR] [--extents N] [--seconds S] [--every S] [--qd N]\n");
			return 2;
		}
	}
	if (!qd || qd > MAXQD || extents < 16 || seconds <= 0 || every <= 0)
		return 2;
	mkdir(dir, 0755);
	char path[4096];
	snprintf(path, sizeof(path), "%s/ckpt.pool", dir);
	unlink(path);
	uint64_t size = (extents + 2 * wext) * EXT + (1ull << 30) + (extents + 2 * wext) * 2048;
	struct vreactor *r = NULL;
	struct vblk *dev = NULL;
	struct vpool *p = NULL;
	struct vvol *big = NULL;
	int rc = vreactor_create(256, &r);
	if (rc == 0)
		rc = vblk_uring_open(r, path, size, &dev);
	struct vpool_params prm = {0};
	if (rc == 0)
		rc = vpool_format(dev, &prm);
	if (rc == 0)
		rc = vpool_open(dev, &p);
	if (rc == 0)
		rc = vpool_volume_create(p, "big", extents * EXT, 512, &big);
	double t = bench_now();
	if (rc == 0)
		rc = vpool_bench_map_full(big, 0, extents, 1);
	if (rc < 0) {
		fprintf(stderr, "vaai-bench ckpt: building the pool: %s\n", strerror(-rc));
		return 1;
	}
	fprintf(stderr, "# %llu extents mapped in %.1f s\n", (unsigned long long)extents, bench_now() - t);
	uint8_t *buf = vblk_alloc_buf(BS);
	memset(buf, 0x5a, BS);
	double p99ck[2] = {0};
	int status = 0;
	for (int live = 0; live < 2 && status == 0; live++) {
		struct load *ld = calloc(1, sizeof(*ld));
		ld->p = p;
		ld->buf = buf;
		ld->n_vext = wext;
		if ((rc = vpool_volume_create(p, live ? "wlive" : "wpaused", wext * EXT, 512, &ld->v)) < 0 ||
		    (rc = vpool_set_live_checkpoints(p, live)) < 0 || (rc = vpool_checkpoint(p)) < 0) {
			fprintf(stderr, "vaai-bench ckpt: setup: %s\n", strerror(-rc));
			return 1;
		}
		unsigned ck0 = 0;
		struct vpool_stats st;
		vpool_get_stats(p, &st);
		ck0 = (unsigned)st.checkpoints;
		ld->end = bench_now() + seconds;
		for (unsigned i = 0; i < qd; i++) {
			ld->slots[i].ld = ld;
			submit(&ld->slots[i]);
		}
		double next_ck = bench_now() + every;
		struct vpool_ckpt_steps sm = {0};
		struct vpool_diag d0;
		vpool_get_diag(p, &d0);
		while (ld->inflight && !ld->err) {
			if (bench_now() >= next_ck && bench_now() < ld->end) {
				if ((rc = vpool_checkpoint(p)) < 0)
					ld->err = rc;
				next_ck = bench_now() + every;
				steps_max(p, ck0, &sm);
				continue;
			}
			if ((rc = vreactor_run_once(r, 10)) < 0)
				ld->err = rc;
			steps_max(p, ck0, &sm);
		}
		struct vpool_diag d1;
		vpool_get_diag(p, &d1);
		if (ld->err) {
			fprintf(stderr, "vaai-bench ckpt: load: %s\n", strerror(-ld->err));
			status = 1;
		}
		vpool_get_stats(p, &st);
		size_t nn = ld->n[0], nc = ld->n[1];
		double maxc = nc ? pct(ld->lat[1], nc, 1.0) : 0;
		double p_none = pct(ld->lat[0], nn, 0.99), p_ck = pct(ld->lat[1], nc, 0.99);
		p99ck[live] = p_ck;
		printf("alloc_write_p99_us mode=%s none=%.0f ckpt=%.0f ratio=%.2f max_us=%.0f samples=%zu/%zu checkpoints=%u\n",
		       live ? "live" : "paused", p_none, p_ck, p_none > 0 ? p_ck / p_none : 0, maxc, nn, nc,
		       (unsigned)st.checkpoints - ck0);
		static const char *const ph[] = {"none", "quiesce", "blob", "superblock"};
		printf("ckpt_steps_max_us mode=%s paused=%.0f quiesce=%.0f homes=%.0f freeze=%.0f freeze_hmaps=%.0f ser_init=%.0f "
		       "window_fill_max=%.0f fill_total=%.0f window_io_max=%.0f windows=%u superblock=%.0f total=%.0f\n",
		       live ? "live" : "paused", sm.paused_ns / 1e3, sm.quiesce_ns / 1e3, sm.homes_ns / 1e3,
		       sm.freeze_ns / 1e3, sm.freeze_hmaps_ns / 1e3, sm.ser_init_ns / 1e3, sm.fill_max_ns / 1e3, sm.fill_total_ns / 1e3,
		       sm.window_io_max_ns / 1e3, sm.windows, sm.sb_ns / 1e3, sm.total_ns / 1e3);
		printf("worst_write mode=%s us=%.0f phase_at_submit=%s phase_at_completion=%s ring_room_waits_meanwhile=%llu "
		       "ring_room_waits=%llu\n",
		       live ? "live" : "paused", ld->worst, ph[ld->worst_phase[0] & 3], ph[ld->worst_phase[1] & 3],
		       (unsigned long long)ld->worst_room_waits,
		       (unsigned long long)(d1.journal.room_full_waits - d0.journal.room_full_waits));
		free(ld->lat[0]);
		free(ld->lat[1]);
		free(ld);
	}
	if (status == 0)
		printf("alloc_write_p99_ckpt_live_vs_paused ratio=%.2f extents=%llu qd=%u\n",
		       p99ck[0] > 0 ? p99ck[1] / p99ck[0] : 0, (unsigned long long)extents, qd);
	free(buf);
	vpool_close(p);
	vblk_close(dev);
	vreactor_destroy(r);
	unlink(path);
	return status;
}
