/*
 * vaai-bench scrape: the Prometheus endpoint's scrape latency under full
 * data-path load, on the host (issue 25's goal: p99 loaded <= 3x p99 idle;
 * scripts/bench/scrape-host; docs/observability.md "Scrape latency on the
 * host"). The same goal as scripts/bench/scrape, without the TCG guest.
 *
 * How this works: one pool file (vblk_uring, as the other engine benchmarks)
 * serves --luns LUNs through simhost: the real ring, dispatch, handlers and
 * pool on simhost's engine thread, fed by the simulated kernel on this
 * (main) thread. vaaid's own endpoint serves their counters: the daemon's
 * vd_metrics_start_source (src/daemon/metrics.c, libmicrohttpd) with a source
 * whose take runs on the engine thread (simhost_engine_hook: the engine
 * thread calls vd_metrics_service between reactor turns, as vaaid's main loop
 * does) and copies the counters into a struct vd_metrics_snapshot, which the
 * HTTP thread formats with the daemon's vd_metrics_snapshot_text and frees.
 * Only the copying differs from vaaid's metrics_take (src/daemon/main.c):
 * simhost's LUN table instead of the daemon's devices; pool "sim".
 *
 * A scraper thread GETs /metrics on a new connection (HTTP/1.0, the whole
 * body read until the server closes), times each GET from connect to close,
 * checks the answer (200, the metrics text: a "vaaid_commands_total{" line,
 * ending in a newline) and waits --gap s after each answer, as
 * tests/vm/metrics_load.py does. Each of --rounds rounds: scrapes with the
 * data path idle (for --runtime s, so that both p99s are over about as many
 * scrapes; --k N: N scrapes, as the guest's benchmark); then the load for
 * --runtime s with the scraper running (the loaded scrapes: those from
 * --warmup s into the load that ended before the load did) and the load for
 * --runtime s alone, these two in turn first from round to round. Alone, the
 * scraper thread still wakes every --gap s (and scrapes nothing): without
 * that control, a CPU-bound load ran 1.4-2.3x faster with the scraper than
 * alone on the 2-vCPU VM it was written on (thread wake-ups change how fast
 * the engine and kernel threads run there); with it, 0.65-2.2 per round: the
 * cost line is no cost measure there (docs/observability.md). The load:
 * on every LUN, --qd 4 KiB commands in flight, random READ(16) / WRITE(16)
 * half and half over the first --area bytes (written first), as many as the
 * engine takes. With --dir on a tmpfs (/dev/shm) the pool's I/O costs no disk
 * time and the load is CPU-bound (both cores busy); on a disk it is bound by
 * the disk.
 *
 * Where a scrape's time went (stderr, from timestamps: struct parts): the
 * snapshot's take (engine thread) and the formatting (HTTP thread) note their
 * times, the scraper its connect and its last byte.
 *
 * stdout:
 *   scrape_size_host bytes=B lines=L
 *   scrape_latency_host luns=N idle_p99_ms=A loaded_p99_ms=B ratio=R idle_p50_ms=.. loaded_p50_ms=..
 *   scrape_cost_host iops_noscrape=X iops_scraping=Y ratio=Z scrapes_idle=.. scrapes_loaded=.. rounds=..
 * (p99: nearest rank over every scrape of its kind in the run; IOPS: the
 * median of the rounds'). stderr: per round "# ..." lines. Times are printed,
 * never asserted; exit 1 when a scrape or a command failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "flow.h"
#include "scsi_build.h"
#include "simhost.h"
#include "vaaid/lun_stats.h"
#include "vaaid/metrics.h"

#define MIB (1ull << 20)
#define BLK 512u
#define IO 4096u
#define MAX_SCRAPES 100000u

struct scfg {
	const char *dir, *dump;
	unsigned luns, rounds, k, qd;
	double runtime, gap, warmup;
	uint64_t area, vol_size;
	bool keep;
};

/* ---- the endpoint's source: the engine thread copies, the HTTP thread formats */

struct source {
	struct simhost *h;
	unsigned luns;
	struct vd_metrics *m;
	/* when (bench_now) the last snapshot was taken (engine thread) and formatted
	 * (HTTP thread: start, end), for the scraper's breakdown of a scrape's time */
	_Atomic double t_take, t_fmt0, t_fmt1;
};

/* The endpoint's snapshot: the daemon's, and the source that timestamps it. */
struct snap {
	struct vd_metrics_snapshot *sn;
	struct source *src;
};

static void drop(void *arg)
{
	struct snap *w = arg;
	vd_metrics_snapshot_free(w->sn);
	free(w);
}

static void *take(void *arg)
{
	struct source *s = arg;
	struct snap *w = malloc(sizeof(*w));
	struct vd_metrics_snapshot *sn = vd_metrics_snapshot_alloc(s->luns, 1);
	if (!w || !sn) {
		free(w);
		vd_metrics_snapshot_free(sn);
		return NULL;
	}
	*w = (struct snap){sn, s};
	bool oom = false;
	size_t k = 0;
	for (unsigned i = 0; i < s->luns && !oom; i++) {
		struct vd_metrics_lun *l = &sn->luns[k];
		const char *vol;
		if (simhost_engine_lun(s->h, (int)i, &l->stats, l->naa, &vol) < 0)
			continue;
		l->pool = strdup("sim");
		l->volume = strdup(vol);
		oom = !l->pool || !l->volume;
		k++;
	}
	sn->nluns = k;
	struct vd_metrics_pool *p = &sn->pools[0];
	p->name = strdup("sim");
	p->luns = (unsigned)k;
	simhost_engine_pool(s->h, &p->stats, &p->soft_threshold);
	if (oom || !p->name) {
		drop(w);
		return NULL;
	}
	atomic_store(&s->t_take, bench_now());
	return w;
}

/* The daemon's formatter (vd_metrics_snapshot_text), timed. */
static char *render(const void *arg, size_t *len)
{
	const struct snap *w = arg;
	atomic_store(&w->src->t_fmt0, bench_now());
	char *text = vd_metrics_snapshot_text(w->sn, len);
	atomic_store(&w->src->t_fmt1, bench_now());
	return text;
}

static void service(void *arg) { vd_metrics_service(((struct source *)arg)->m); }

/* ---- the scraper */

struct scrape_body {
	char *buf;
	size_t len, cap;
};

/* One GET /metrics on a new connection: its seconds; 0 when answered 200 with the
 * metrics text (the body in *b), else -errno or -EPROTO. */
static int scrape(uint16_t port, struct scrape_body *b, double *secs)
{
	double t0 = bench_now();
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	static const char req[] = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n";
	int rc = 0;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof(req) - 1))
		rc = -errno;
	b->len = 0;
	while (!rc) {
		if (b->cap - b->len < 65536) {
			size_t nc = b->cap ? b->cap * 2 : 1 << 20;
			char *n = realloc(b->buf, nc);
			if (!n) {
				rc = -ENOMEM;
				break;
			}
			b->buf = n;
			b->cap = nc;
		}
		ssize_t r = recv(fd, b->buf + b->len, b->cap - b->len - 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			rc = -errno;
		if (r <= 0)
			break;
		b->len += (size_t)r;
	}
	close(fd);
	*secs = bench_now() - t0;
	if (rc)
		return rc;
	b->buf[b->len] = 0;
	char *body = strstr(b->buf, "\r\n\r\n");
	if (strncmp(b->buf, "HTTP/1.", 7) || strncmp(b->buf + 8, " 200 ", 5) || !body ||
	    !strstr(body, "\nvaaid_commands_total{") || b->buf[b->len - 1] != '\n')
		return -EPROTO;
	body += 4;
	b->len -= (size_t)(body - b->buf);
	memmove(b->buf, body, b->len + 1);
	return 0;
}

enum job { J_NONE, J_IDLE, J_LOADED, J_WAKE, J_QUIT };

/* One scrape's time, seconds, and where it went (from the source's timestamps):
 * connect to snapshot taken (the connection, libmicrohttpd's thread, the request
 * posted, the reactor's turn), taken to formatting started (the hand-over to the
 * HTTP thread), formatting, formatted to the last byte read and closed. */
struct parts {
	double total, snap, hand, fmt, send;
};

struct scraper {
	pthread_t t;
	uint16_t port;
	double gap, warmup;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	enum job job;      /* what to do now (J_NONE: wait) */
	unsigned idle_n;   /* J_IDLE: scrapes to make, or 0: */
	double idle_s;     /* scrapes for this long */
	atomic_bool loaded; /* J_LOADED: the load runs */
	struct source *src;
	struct parts *idle, *load; /* the scrapes */
	unsigned n_idle, n_load, failed;
	int first_err;
	struct scrape_body body;
	size_t size, lines; /* the first scrape's text */
};

/* One scrape; its time in *p. false when it failed (counted). */
static bool scrape_one(struct scraper *s, struct parts *p)
{
	double t0 = bench_now();
	int rc = scrape(s->port, &s->body, &p->total);
	double tk = atomic_load(&s->src->t_take), f0 = atomic_load(&s->src->t_fmt0),
	       f1 = atomic_load(&s->src->t_fmt1);
	if (tk >= t0 && f0 >= tk && f1 >= f0) { /* this scrape's */
		p->snap = tk - t0;
		p->hand = f0 - tk;
		p->fmt = f1 - f0;
		p->send = t0 + p->total - f1;
	} else {
		p->snap = p->hand = p->fmt = p->send = -1;
	}
	if (rc < 0) {
		if (!s->failed++)
			s->first_err = rc;
		return false;
	}
	if (!s->size) {
		s->size = s->body.len;
		for (size_t i = 0; i < s->body.len; i++)
			s->lines += s->body.buf[i] == '\n';
	}
	return true;
}

static void pause_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

static void *scraper_main(void *arg)
{
	struct scraper *s = arg;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (s->job == J_NONE)
			pthread_cond_wait(&s->cv, &s->mu);
		enum job j = s->job;
		pthread_mutex_unlock(&s->mu);
		if (j == J_QUIT)
			break;
		struct parts p;
		if (j == J_IDLE) {
			/* idle_n scrapes, or (0) for idle_s seconds */
			double end = bench_now() + s->idle_s;
			for (unsigned i = 0; s->idle_n ? i < s->idle_n : bench_now() < end; i++) {
				if (scrape_one(s, &p) && s->n_idle < MAX_SCRAPES)
					s->idle[s->n_idle++] = p;
				pause_s(s->gap);
			}
		} else {
			pause_s(s->warmup); /* the load at full depth */
			while (atomic_load(&s->loaded)) {
				if (j == J_WAKE) { /* the control: this thread wakes as often, no scrape */
					pause_s(s->gap);
					continue;
				}
				bool ok = scrape_one(s, &p);
				/* one that ended after the load did is not a loaded one */
				if (ok && atomic_load(&s->loaded) && s->n_load < MAX_SCRAPES)
					s->load[s->n_load++] = p;
				pause_s(s->gap);
			}
		}
		pthread_mutex_lock(&s->mu);
		s->job = J_NONE;
		pthread_cond_broadcast(&s->cv);
	}
	return NULL;
}

static void scraper_post(struct scraper *s, enum job j)
{
	pthread_mutex_lock(&s->mu);
	s->job = j;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void scraper_wait(struct scraper *s)
{
	pthread_mutex_lock(&s->mu);
	while (s->job != J_NONE)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
}

/* ---- the load: qd 4 KiB random READ(16) / WRITE(16) per LUN */

struct load {
	uint64_t rs, nio; /* the LUN's generator; 4 KiB blocks in the area */
	const uint8_t *buf;
	uint64_t errors;
	bool fill;        /* the area written once, 1 MiB at a time */
	uint64_t fill_off, area;
};

static int load_next(void *ctx, struct vcmd *c)
{
	struct load *l = ctx;
	if (l->fill) {
		if (l->fill_off >= l->area)
			return 0;
		uint32_t len = (uint32_t)(l->area - l->fill_off < MIB ? l->area - l->fill_off : MIB);
		sb_rw16_cdb(c->cdb, 0x8a, l->fill_off / BLK, len / BLK);
		c->out = l->buf;
		c->out_len = len;
		l->fill_off += len;
	} else {
		uint64_t r = vrng_next(&l->rs);
		bool wr = r & 1;
		sb_rw16_cdb(c->cdb, wr ? 0x8a : 0x88, (r >> 1) % l->nio * (IO / BLK), IO / BLK);
		c->out = wr ? l->buf : NULL;
		c->out_len = wr ? IO : 0;
		c->in_len = wr ? 0 : IO;
	}
	c->cdb_len = 16;
	return 1;
}

static int load_done(void *ctx, const struct vcmd *c, const struct simk_result *r, double lat)
{
	struct load *l = ctx;
	(void)c;
	(void)lat;
	if (r->status) {
		if (!l->errors)
			print_sense("command failed", r);
		l->errors++;
	}
	return 0;
}

/* Every LUN loaded for runtime s (0: the fill): commands completed per second, or < 0. */
static double run_load(struct simhost *h, const struct scfg *c, struct load *ld, struct flow *f,
		       double runtime, uint64_t *errors)
{
	double t0 = bench_now();
	for (unsigned i = 0; i < c->luns; i++) {
		ld[i].fill = runtime == 0;
		ld[i].fill_off = 0;
		f[i] = (struct flow){.lun = (int)i, .qd = runtime == 0 ? 8 : c->qd,
				     .deadline = runtime == 0 ? 0 : t0 + runtime,
				     .next = load_next, .done = load_done, .ctx = &ld[i]};
	}
	int rc = flows_run(h, f, c->luns);
	if (rc < 0) {
		fprintf(stderr, "vaai-bench scrape: the load failed: %s\n", strerror(-rc));
		return rc;
	}
	uint64_t n = 0;
	double first = 0, last = 0;
	for (unsigned i = 0; i < c->luns; i++) {
		n += f[i].completed;
		*errors += ld[i].errors;
		ld[i].errors = 0;
		if (!i || f[i].t_first < first)
			first = f[i].t_first;
		if (f[i].t_last > last)
			last = f[i].t_last;
	}
	return last > first ? (double)n / (last - first) : 0;
}

/* ---- statistics */

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile pct of n values (sorted here). */
static double pctl(double *v, unsigned n, unsigned pct)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_d);
	unsigned rank = (pct * n + 99) / 100;
	return v[rank ? rank - 1 : 0];
}

static double median(double *v, unsigned n) { return pctl(v, n, 50); }

/* ---- the run */

static int parse_args(struct scfg *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--keep")) {
			c->keep = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "vaai-bench scrape: %s needs a value\n", a);
			return -EINVAL;
		}
		i++;
		char *end = NULL;
		unsigned long u = strtoul(v, &end, 10);
		bool num = *v && !*end;
		double d = strtod(v, &end);
		bool dnum = *v && !*end;
		if (!strcmp(a, "--dir")) {
			c->dir = v;
		} else if (!strcmp(a, "--dump")) {
			c->dump = v;
		} else if (!strcmp(a, "--luns") && num && u >= 1 && u <= SIMHOST_MAX_LUNS) {
			c->luns = (unsigned)u;
		} else if (!strcmp(a, "--rounds") && num && u >= 1 && u <= 100) {
			c->rounds = (unsigned)u;
		} else if (!strcmp(a, "--k") && num && u <= 10000) {
			c->k = (unsigned)u;
		} else if (!strcmp(a, "--qd") && num && u >= 1 && u <= 256) {
			c->qd = (unsigned)u;
		} else if (!strcmp(a, "--runtime") && dnum && d >= 0.5 && d <= 3600) {
			c->runtime = d;
		} else if (!strcmp(a, "--gap") && dnum && d >= 0 && d <= 60) {
			c->gap = d;
		} else if (!strcmp(a, "--warmup") && dnum && d >= 0 && d <= 60) {
			c->warmup = d;
		} else if (!strcmp(a, "--area") && bench_parse_size(v, &c->area) == 0 &&
			   c->area >= MIB && c->area % MIB == 0) {
		} else {
			fprintf(stderr, "vaai-bench scrape: bad option or value: %s %s\n", a, v);
			return -EINVAL;
		}
	}
	if (c->area > c->vol_size) {
		fprintf(stderr, "vaai-bench scrape: --area is larger than a volume\n");
		return -EINVAL;
	}
	return 0;
}

static int dump_body(const char *path, const struct scrape_body *b)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	size_t w = fwrite(b->buf, 1, b->len, f);
	return fclose(f) == 0 && w == b->len ? 0 : -EIO;
}

/* The nearest-rank percentile pct of one part (offset into struct parts) of n
 * scrapes, those without it (-1) left out; 0 when none has it. */
static double part_pctl(const struct parts *p, unsigned n, size_t off, unsigned pct)
{
	double *v = malloc((n + 1) * sizeof(double));
	unsigned k = 0;
	for (unsigned i = 0; v && i < n; i++) {
		double x = *(const double *)((const char *)&p[i] + off);
		if (x >= 0)
			v[k++] = x;
	}
	double r = v ? pctl(v, k, pct) : 0;
	free(v);
	return r;
}

#define PART(f) offsetof(struct parts, f)

/* Where the scrapes' time went: the median of each part, and every scrape at or
 * above the p99 part by part (stderr). */
static void breakdown(const char *kind, const struct parts *p, unsigned n)
{
	fprintf(stderr,
		"# %s scrapes (%u), medians, ms: total %.2f; to the snapshot %.2f, hand-over %.2f, "
		"format %.2f, send %.2f\n",
		kind, n, part_pctl(p, n, PART(total), 50) * 1e3, part_pctl(p, n, PART(snap), 50) * 1e3,
		part_pctl(p, n, PART(hand), 50) * 1e3, part_pctl(p, n, PART(fmt), 50) * 1e3,
		part_pctl(p, n, PART(send), 50) * 1e3);
	double p99 = part_pctl(p, n, PART(total), 99);
	for (unsigned i = 0; i < n; i++)
		if (p[i].total >= p99)
			fprintf(stderr,
				"#   %s scrape %u (>= p99), ms: total %.2f = to the snapshot %.2f + "
				"hand-over %.2f + format %.2f + send %.2f\n",
				kind, i + 1, p[i].total * 1e3, p[i].snap * 1e3, p[i].hand * 1e3,
				p[i].fmt * 1e3, p[i].send * 1e3);
}

/* Setup done: the rounds, the lines. 0, 1 (a scrape or command failed), -errno. */
static int rounds(struct simhost *h, const struct scfg *c, struct scraper *sc, struct load *ld,
		  struct flow *f)
{
	double *iops_s = calloc(c->rounds, sizeof(double)), *iops_a = calloc(c->rounds, sizeof(double));
	if (!iops_s || !iops_a) {
		free(iops_s);
		free(iops_a);
		return -ENOMEM;
	}
	uint64_t errors = 0;
	int rc = 0;
	for (unsigned r = 0; r < c->rounds && !rc; r++) {
		unsigned i0 = sc->n_idle, l0 = sc->n_load;
		sc->idle_n = c->k;
		sc->idle_s = c->runtime;
		scraper_post(sc, J_IDLE);
		scraper_wait(sc);
		/* the load with scrapes and alone, their order alternating from round to round */
		double a = 0, b = 0;
		for (int step = 0; step < 2 && a >= 0 && b >= 0; step++) {
			if ((step == 0) == (r % 2 == 0)) {
				atomic_store(&sc->loaded, true);
				scraper_post(sc, J_LOADED);
				a = run_load(h, c, ld, f, c->runtime, &errors);
				atomic_store(&sc->loaded, false);
				scraper_wait(sc);
			} else {
				atomic_store(&sc->loaded, true);
				scraper_post(sc, J_WAKE);
				b = run_load(h, c, ld, f, c->runtime, &errors);
				atomic_store(&sc->loaded, false);
				scraper_wait(sc);
			}
		}
		if (a < 0 || b < 0) {
			rc = a < 0 ? (int)a : (int)b;
			break;
		}
		iops_s[r] = a;
		iops_a[r] = b;
		unsigned ni = sc->n_idle - i0, nl = sc->n_load - l0;
		const struct parts *pi = sc->idle + i0, *pl = sc->load + l0;
		fprintf(stderr,
			"# round %u: idle %u scrapes p50 %.1f ms max %.1f ms; loaded %u scrapes "
			"p50 %.1f ms max %.1f ms; %.0f IOPS scraping, %.0f alone (%.3f)\n",
			r + 1, ni, part_pctl(pi, ni, PART(total), 50) * 1e3,
			part_pctl(pi, ni, PART(total), 100) * 1e3, nl,
			part_pctl(pl, nl, PART(total), 50) * 1e3,
			part_pctl(pl, nl, PART(total), 100) * 1e3, a, b, b > 0 ? a / b : 0);
	}
	if (!rc) {
		double ip99 = part_pctl(sc->idle, sc->n_idle, PART(total), 99);
		double lp99 = part_pctl(sc->load, sc->n_load, PART(total), 99);
		double ip50 = part_pctl(sc->idle, sc->n_idle, PART(total), 50);
		double lp50 = part_pctl(sc->load, sc->n_load, PART(total), 50);
		double ms = median(iops_s, c->rounds), ma = median(iops_a, c->rounds);
		breakdown("idle", sc->idle, sc->n_idle);
		breakdown("loaded", sc->load, sc->n_load);
		printf("scrape_size_host bytes=%zu lines=%zu\n", sc->size, sc->lines);
		printf("scrape_latency_host luns=%u idle_p99_ms=%.1f loaded_p99_ms=%.1f ratio=%.2f "
		       "idle_p50_ms=%.1f loaded_p50_ms=%.1f\n",
		       c->luns, ip99 * 1e3, lp99 * 1e3, ip99 > 0 ? lp99 / ip99 : 0, ip50 * 1e3,
		       lp50 * 1e3);
		printf("scrape_cost_host iops_noscrape=%.0f iops_scraping=%.0f ratio=%.3f "
		       "scrapes_idle=%u scrapes_loaded=%u rounds=%u\n",
		       ma, ms, ma > 0 ? ms / ma : 0, sc->n_idle, sc->n_load, c->rounds);
		fflush(stdout);
		if (sc->failed)
			fprintf(stderr, "vaai-bench scrape: %u scrapes failed (the first: %s)\n",
				sc->failed, sc->first_err == -EPROTO ? "not 200 with the metrics text"
								     : strerror(-sc->first_err));
		if (errors)
			fprintf(stderr, "vaai-bench scrape: %llu commands failed\n",
				(unsigned long long)errors);
		if (!sc->n_idle || !sc->n_load)
			fprintf(stderr, "vaai-bench scrape: no %s scrape\n", sc->n_idle ? "loaded" : "idle");
		rc = sc->failed || errors || !sc->n_idle || !sc->n_load;
	}
	if (!rc && c->dump) {
		/* the text of a scrape after the rounds: the counters of everything above */
		double dt;
		int d = scrape(sc->port, &sc->body, &dt);
		if (d == 0)
			d = dump_body(c->dump, &sc->body);
		if (d < 0) {
			fprintf(stderr, "vaai-bench scrape: --dump: %s\n", strerror(-d));
			rc = 1;
		}
	}
	free(iops_s);
	free(iops_a);
	return rc;
}

int bench_scrape_main(int argc, char **argv)
{
	struct scfg c = {.dir = "build/bench-tmp", .luns = 8, .rounds = 3, .k = 0, .qd = 32,
			 .runtime = 20, .gap = 0.1, .warmup = 0.5, .area = 64 * MIB,
			 .vol_size = 2048 * MIB};
	if (parse_args(&c, argc, argv) < 0)
		return 2;
	mkdir(c.dir, 0755);
	char pool[4096];
	snprintf(pool, sizeof(pool), "%s/scrape.pool", c.dir);
	simhost_remove_pool(pool);
	uint64_t psize = c.luns * c.area + 256 * MIB;
	struct vpool_params prm = {0};
	struct simhost *h;
	char err[512] = "";
	int rc = simhost_create_pool(pool, psize, &prm, SIMHOST_IO_URING, 1, &h, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "vaai-bench scrape: %s\n", err);
		return 1;
	}
	struct source src = {.h = h, .luns = c.luns};
	struct scraper sc = {.gap = c.gap, .warmup = c.warmup, .src = &src};
	struct load *ld = calloc(c.luns, sizeof(*ld));
	struct flow *f = calloc(c.luns, sizeof(*f));
	uint8_t *buf = malloc(MIB);
	sc.idle = calloc(MAX_SCRAPES, sizeof(*sc.idle));
	sc.load = calloc(MAX_SCRAPES, sizeof(*sc.load));
	bool thread = false;
	int status = 1;
	if (!ld || !f || !buf || !sc.idle || !sc.load)
		goto out;
	for (size_t i = 0; i < MIB; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	for (unsigned i = 0; i < c.luns; i++) {
		char vol[32];
		snprintf(vol, sizeof(vol), "v%u", i);
		if ((rc = simhost_volume_create(h, vol, c.vol_size, BLK)) < 0 ||
		    (rc = simhost_attach(h, vol, (int)i)) < 0) {
			fprintf(stderr, "vaai-bench scrape: volume %s: %s\n", vol, strerror(-rc));
			goto out;
		}
		ld[i] = (struct load){.rs = 0x9E3779B97F4A7C15ull + i, .nio = c.area / IO, .buf = buf,
				      .area = c.area};
	}
	fprintf(stderr, "# %u LUNs, pool %s (%llu MiB): writing each one's first %llu MiB\n",
		c.luns, pool, (unsigned long long)(psize / MIB), (unsigned long long)(c.area / MIB));
	uint64_t errors = 0;
	if (run_load(h, &c, ld, f, 0, &errors) < 0 || errors) {
		fprintf(stderr, "vaai-bench scrape: writing the areas failed\n");
		goto out;
	}
	rc = vd_metrics_start_source("127.0.0.1:0",
				     &(struct vd_metrics_source){take, render, drop, &src},
				     &src.m, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "vaai-bench scrape: %s\n", err);
		goto out;
	}
	if ((rc = simhost_engine_hook(h, vd_metrics_fd(src.m), service, &src)) < 0) {
		fprintf(stderr, "vaai-bench scrape: engine hook: %s\n", strerror(-rc));
		goto out;
	}
	sc.port = vd_metrics_port(src.m);
	fprintf(stderr, "# metrics on http://127.0.0.1:%u/metrics; %u rounds: idle scrapes (%s%u), "
		"%.1f s loaded (qd %u per LUN) with scrapes every %.2f s after each answer, %.1f s alone\n",
		sc.port, c.rounds, c.k ? "" : "seconds: ", c.k ? c.k : (unsigned)c.runtime, c.runtime,
		c.qd, c.gap, c.runtime);
	pthread_mutex_init(&sc.mu, NULL);
	pthread_cond_init(&sc.cv, NULL);
	if (pthread_create(&sc.t, NULL, scraper_main, &sc)) {
		fprintf(stderr, "vaai-bench scrape: cannot start the scraper thread\n");
		goto out;
	}
	thread = true;
	rc = rounds(h, &c, &sc, ld, f);
	if (rc < 0)
		fprintf(stderr, "vaai-bench scrape: %s\n", strerror(-rc));
	status = rc != 0;
out:
	if (thread) {
		scraper_post(&sc, J_QUIT);
		pthread_join(sc.t, NULL);
	}
	if ((rc = simhost_close(h)) < 0) { /* first: the engine thread calls the endpoint */
		fprintf(stderr, "vaai-bench scrape: closing the pool: %s\n", strerror(-rc));
		status = 1;
	}
	vd_metrics_stop(src.m);
	if (!c.keep) {
		simhost_remove_pool(pool);
		rmdir(c.dir); /* only if empty */
	}
	free(sc.body.buf);
	free(sc.idle);
	free(sc.load);
	free(ld);
	free(f);
	free(buf);
	if (status)
		fprintf(stderr, "vaai-bench scrape: FAILED (see above)\n");
	return status;
}
