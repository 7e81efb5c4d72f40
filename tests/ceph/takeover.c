/*
 * Takeover under load between two engine processes on one RBD pool (issue 26):
 *
 *   takeover SPEC ROUNDS [--kill] [--mapped N]   (ctest ceph/takeover; scripts/bench/ceph-takeover)
 *
 * How this works: this process (B) creates the pool on the image SPEC with a
 * volume, then runs ROUNDS rounds. In each, it starts a writer process (A: this
 * program again, "takeover --writer SPEC ROUND"), which opens the pool (the lock
 * is free), and writes 4 KiB blocks with 16 in flight: first new blocks
 * (allocating writes: data, then a journal record), then overwrites of them
 * (in place), every block holding (round, block, version). A reports each
 * completion on its stdout: "ack BLOCK VERSION" or "err BLOCK RC". After A has
 * acknowledged 150 writes, B takes the pool over (vblk_rbd_takeover: the lock
 * broken, A's client blocklisted; then recovery, vpool_open_stores) while A
 * keeps writing. A stops once 8 of its writes failed after its first failure,
 * and exits. Then B checks that
 *   - every write A acknowledged reads back through B: the block holds a
 *     well-formed block of this round with that version or a later one (0
 *     acknowledged writes lost), also for acknowledgements A printed after B
 *     had taken over;
 *   - A's writes after the takeover were refused (at least one error, and the
 *     first one -ESHUTDOWN/-EIO: Ceph's blocklist, or the pool that failed on it);
 *   - no write A submitted after it saw its first refusal was acknowledged
 *     (nothing accepted from a fenced gateway). Writes already in flight at
 *     the first refusal may still be acknowledged after it (A prints "ack"
 *     for them after an "err": a refusal can be reported at submission while
 *     a commit that reached the OSDs before the blocklist completes later);
 *     those landed before the fence, and the first check reads them back
 *     through B.
 * With --kill, A is killed instead (SIGKILL) after a random number of
 * acknowledgements (100..3000), and only then does B take the pool over: every
 * write A acknowledged before it died reads back (0 lost after a kill -9 of
 * the engine; the cluster lives on).
 * B closes the pool (the lock released) before the next round. Prints per round
 * "round N: acks A, refused R, takeover_ms T" and at the end
 *   ceph_takeover rounds=N acked=A lost=0 accepted_after_fence=0 takeover_ms_p50=X takeover_ms_max=Y
 *   ceph_takeover_served rounds=N served_ms_p50=X served_ms_max=Y mapped=M
 * (takeover_ms: the lock broken and acquired, then recovery; served_ms: from
 * the same start to the completion of B's first write, a 4 KiB write outside
 * the checked blocks). With --mapped N the pool starts with about N mapped
 * 64 KiB extents besides "vol" (tests/ceph/mapped_pool.c), so the recovery
 * loads a checkpoint of that size. exit 0 only when every round passed.
 * CEPH_CONF names the cluster.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mapped_pool.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"

#define BLOCK 4096u
#define NBLOCKS 512u /* 2 MiB of a 64 MiB volume: 2 extents, allocated then overwritten */
#define QD 16

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void fill(uint8_t *b, uint32_t round, uint32_t blk, uint32_t ver)
{
	for (unsigned i = 0; i < BLOCK; i += 16) {
		memcpy(b + i, &round, 4);
		memcpy(b + i + 4, &blk, 4);
		memcpy(b + i + 8, &ver, 4);
		uint32_t x = round * 2654435761u ^ blk * 40503u ^ ver ^ i;
		memcpy(b + i + 12, &x, 4);
	}
}

/* ------------------------------------------------------------------ writer */

struct wslot {
	struct writer *w;
	uint32_t blk, ver;
	uint8_t *buf;
	struct iovec iov;
	bool busy;
	bool late; /* submitted after the writer saw a refusal */
};

struct writer {
	struct vvol *v;
	uint32_t round;
	uint32_t next; /* next write number: block = next % NBLOCKS, version = next / NBLOCKS */
	unsigned errors;
	bool stop;
	struct wslot slot[QD];
};

static void submit(struct wslot *s);

static void wdone(void *arg, int res)
{
	struct wslot *s = arg;
	struct writer *w = s->w;
	s->busy = false;
	if (res < 0) {
		printf("err %u %d\n", s->blk, res);
		w->errors++;
	} else {
		printf("ack %u %u%s\n", s->blk, s->ver, s->late ? " late" : "");
	}
	fflush(stdout);
	if (w->errors >= 8)
		w->stop = true;
	if (!w->stop)
		submit(s);
}

static void submit(struct wslot *s)
{
	struct writer *w = s->w;
	s->blk = w->next % NBLOCKS;
	s->ver = w->next / NBLOCKS + 1;
	s->late = w->errors > 0;
	w->next++;
	fill(s->buf, w->round, s->blk, s->ver);
	s->iov = (struct iovec){s->buf, BLOCK};
	s->busy = true;
	int rc = vvol_write(w->v, (uint64_t)s->blk * BLOCK, BLOCK, &s->iov, 1, wdone, s);
	if (rc < 0) { /* refused at once (the pool failed): counted as a completion */
		s->busy = false;
		printf("err %u %d\n", s->blk, rc);
		fflush(stdout);
		if (++w->errors >= 8)
			w->stop = true;
	}
}

static int writer_main(const char *spec, uint32_t round)
{
	struct vreactor *r;
	struct vblk *dev;
	struct vpool *p;
	struct vpool_open_report rep;
	if (vreactor_create(256, &r) < 0 || vblk_open_store(r, spec, 0, NULL, &dev) < 0 ||
	    vpool_open_stores(dev, NULL, 0, &p, &rep) < 0) {
		fprintf(stderr, "writer: cannot open the pool %s\n", spec);
		return 2;
	}
	struct writer w = {.v = vpool_volume_find(p, "vol"), .round = round};
	if (!w.v)
		return 2;
	printf("ready\n");
	fflush(stdout);
	for (unsigned i = 0; i < QD; i++) {
		w.slot[i] = (struct wslot){.w = &w, .buf = vblk_alloc_buf(BLOCK)};
		submit(&w.slot[i]);
	}
	bool busy = true;
	while (busy) {
		if (vreactor_run_once(r, 100) < 0)
			break;
		busy = false;
		for (unsigned i = 0; i < QD; i++)
			busy |= w.slot[i].busy;
	}
	/* fenced: the pool cannot be closed cleanly (its checkpoint would be refused) */
	_exit(0);
}

/* ------------------------------------------------------------------ checker */

struct rd {
	bool done;
	int res;
};

static void rd_cb(void *arg, int res)
{
	struct rd *d = arg;
	d->res = res;
	d->done = true;
}

/* Every acknowledged write reads back: the block holds a well-formed block of
 * this round, this block number and a version no older than the one
 * acknowledged (a later write, acknowledged or not, may have landed). Returns the
 * blocks that do not; a block newer than any this process saw submitted is fine
 * (the writer may have gone on past the last line read). */
static unsigned lost_writes(struct vvol *v, struct vreactor *r, uint32_t round,
			    const uint32_t *acked)
{
	uint8_t *buf = vblk_alloc_buf(BLOCK), *want = vblk_alloc_buf(BLOCK);
	unsigned lost = 0;
	for (uint32_t b = 0; b < NBLOCKS; b++) {
		if (!acked[b])
			continue;
		struct rd d = {0};
		struct iovec iov = {buf, BLOCK};
		if (vvol_read(v, (uint64_t)b * BLOCK, BLOCK, &iov, 1, rd_cb, &d) < 0 ||
		    vreactor_run_until(r, &d.done) < 0 || d.res < 0) {
			fprintf(stderr, "block %u: read failed\n", b);
			lost++;
			continue;
		}
		uint32_t got[3];
		memcpy(got, buf, sizeof(got));
		fill(want, got[0], got[1], got[2]);
		bool ok = !memcmp(buf, want, BLOCK) && got[0] == round && got[1] == b &&
			  got[2] >= acked[b];
		if (!ok) {
			fprintf(stderr, "LOST: block %u acknowledged at version %u, reads round %u block %u "
					"version %u%s\n", b, acked[b], got[0], got[1], got[2],
				memcmp(buf, want, BLOCK) ? " (not a well-formed block)" : "");
			lost++;
		}
	}
	free(buf);
	free(want);
	return lost;
}

/* B's first command after the takeover: a 4 KiB write past the checked blocks;
 * ms from t0 to its completion, or -1 if it failed. */
static double first_write_ms(struct vpool *p, struct vreactor *r, double t0)
{
	struct vvol *v = vpool_volume_find(p, "vol");
	uint8_t *b = vblk_alloc_buf(BLOCK);
	struct rd d = {0};
	double ms = -1;
	if (v && b) {
		memset(b, 0x5a, BLOCK);
		struct iovec iov = {b, BLOCK};
		if (vvol_write(v, (uint64_t)(NBLOCKS + 1) * BLOCK, BLOCK, &iov, 1, rd_cb, &d) == 0 &&
		    vreactor_run_until(r, &d.done) == 0 && d.res >= 0)
			ms = now_ms() - t0;
	}
	free(b);
	return ms;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--writer"))
		return writer_main(argv[2], (uint32_t)strtoul(argv[3], NULL, 10));
	bool kill9 = false;
	unsigned long long want_mapped = 0;
	int bad = argc < 3;
	for (int i = 3; i < argc && !bad; i++) {
		if (!strcmp(argv[i], "--kill"))
			kill9 = true;
		else if (!strcmp(argv[i], "--mapped") && i + 1 < argc)
			want_mapped = strtoull(argv[++i], NULL, 10);
		else
			bad = 1;
	}
	if (bad || !getenv("CEPH_CONF")) {
		fprintf(stderr, "usage: CEPH_CONF=... takeover rbd:POOL/IMAGE ROUNDS [--kill] [--mapped N]\n");
		return 2;
	}
	srand((unsigned)getpid());
	const char *spec = argv[1];
	unsigned rounds = (unsigned)strtoul(argv[2], NULL, 10);
	signal(SIGPIPE, SIG_IGN);
	struct vreactor *r;
	struct vblk *dev;
	struct vpool *p;
	struct vpool_open_report rep;
	if (vreactor_create(256, &r) < 0)
		return 2;
	vblk_remove_store(NULL, spec, NULL);
	struct vpool_params prm = {.size = 256u << 20};
	struct vvol *v;
	uint64_t mapped = 0, phys = 0;
	if (want_mapped) {
		const char *tmp = getenv("VAAID_TEST_TMP") ? getenv("VAAID_TEST_TMP") : "/tmp";
		if (mapped_pool_build(spec, want_mapped, tmp, &mapped, &phys) < 0) {
			fprintf(stderr, "takeover: cannot make the mapped pool on %s\n", spec);
			return 2;
		}
		fprintf(stderr, "takeover: pool with %llu mapped extents over %llu physical ones\n",
			(unsigned long long)mapped, (unsigned long long)phys);
	} else if (vblk_open_store(r, spec, prm.size, NULL, &dev) < 0 || vpool_format(dev, &prm) < 0 ||
		   vpool_open_stores(dev, NULL, 0, &p, &rep) < 0 ||
		   vpool_volume_create(p, "vol", 64u << 20, 512, &v) < 0 || vpool_close(p) < 0) {
		fprintf(stderr, "takeover: cannot make the pool on %s\n", spec);
		return 2;
	} else {
		vblk_close(dev);
	}
	unsigned total_acked = 0, total_lost = 0, total_after = 0, failed_rounds = 0;
	double *tk = calloc(rounds ? rounds : 1, sizeof(double));
	double *served = calloc(rounds ? rounds : 1, sizeof(double));
	for (unsigned round = 1; round <= rounds; round++) {
		int out[2];
		if (pipe(out) < 0)
			return 2;
		char rs[16];
		snprintf(rs, sizeof(rs), "%u", round);
		pid_t a = fork();
		if (a == 0) {
			dup2(out[1], 1);
			close(out[0]);
			close(out[1]);
			execl("/proc/self/exe", argv[0], "--writer", spec, rs, (char *)NULL);
			_exit(127);
		}
		close(out[1]);
		FILE *f = fdopen(out[0], "r");
		static uint32_t acked[NBLOCKS];
		memset(acked, 0, sizeof(acked));
		char line[128];
		unsigned acks = 0, refused = 0, after_refusal = 0;
		int first_err = 0;
		bool took = false, killed = false;
		double t0 = 0;
		unsigned kill_at = 100 + (unsigned)rand() % 2901;
		bool hung = false;
		for (;;) {
			/* a writer still writing 20 s after the takeover was not fenced */
			struct pollfd pfd = {.fd = fileno(f), .events = POLLIN};
			if (took && !kill9 && now_ms() - t0 - tk[round - 1] > 20000) {
				hung = true;
				kill(a, SIGKILL);
				break;
			}
			if (took && poll(&pfd, 1, 1000) == 0)
				continue;
			if (!fgets(line, sizeof(line), f))
				break;
			unsigned b, ver;
			int rc;
			if (sscanf(line, "ack %u %u", &b, &ver) == 2 && b < NBLOCKS) {
				acks++;
				if (strstr(line, " late"))
					after_refusal++;
				if (ver > acked[b])
					acked[b] = ver;
			} else if (sscanf(line, "err %u %d", &b, &rc) == 2) {
				if (!refused)
					first_err = rc;
				refused++;
			}
			if (kill9 && !killed && acks >= kill_at) {
				kill(a, SIGKILL); /* what it printed up to now is all it acknowledged */
				killed = true;
			}
			if (!took && (kill9 ? killed : acks >= 150)) {
				t0 = now_ms();
				double t_lock = 0;
				if ((vblk_rbd_spec(spec) ? vblk_rbd_takeover(r, spec, NULL, &dev)
					 : vblk_open_store(r, spec, 0, NULL, &dev)) < 0 ||
				    (t_lock = now_ms() - t0, vpool_open_stores(dev, NULL, 0, &p, &rep)) < 0) {
					fprintf(stderr, "round %u: the takeover failed\n", round);
					kill(a, SIGKILL);
					return 1;
				}
				tk[round - 1] = now_ms() - t0;
				served[round - 1] = first_write_ms(p, r, t0);
				struct vpool_stats st;
				vpool_get_stats(p, &st);
				fprintf(stderr, "round %u: recovery replayed %llu commits, %llu records, %llu "
						"bytes written home; %llu extents mapped over %llu physical; "
						"lock %.0f ms, recovery %.0f ms\n",
					round, (unsigned long long)rep.commits,
					(unsigned long long)rep.records, (unsigned long long)rep.data_bytes,
					(unsigned long long)((st.used + st.sharing_savings) / st.extent),
					(unsigned long long)(st.used / st.extent), t_lock,
					tk[round - 1] - t_lock);
				took = true;
			}
		}
		fclose(f);
		int st;
		waitpid(a, &st, 0);
		if (!took) {
			fprintf(stderr, "round %u: the writer ended before the takeover (%u acks)\n", round,
				acks);
			return 1;
		}
		v = vpool_volume_find(p, "vol");
		unsigned lost = v ? lost_writes(v, r, round, acked) : NBLOCKS;
		if (hung)
			fprintf(stderr, "round %u: the writer still wrote 20 s after the takeover "
					"(not fenced)\n", round);
		bool ok = !hung && lost == 0 && after_refusal == 0 &&
			  (kill9 ? WIFSIGNALED(st)
				 : refused > 0 && (first_err == -ESHUTDOWN || first_err == -EIO) &&
					   WIFEXITED(st) && WEXITSTATUS(st) == 0);
		printf("round %u: acks %u, refused %u (first %d), acks of writes sent after a refusal %u, lost %u, "
		       "takeover_ms %.0f%s\n", round, acks, refused, first_err, after_refusal, lost,
		       tk[round - 1], ok ? "" : "  FAILED");
		fflush(stdout);
		total_acked += acks;
		total_lost += lost;
		total_after += after_refusal;
		failed_rounds += !ok;
		if (vpool_close(p) < 0)
			failed_rounds++;
		vblk_close(dev);
	}
	qsort(tk, rounds, sizeof(double), cmp_double);
	qsort(served, rounds, sizeof(double), cmp_double);
	printf("ceph_takeover rounds=%u acked=%u lost=%u accepted_after_fence=%u takeover_ms_p50=%.0f "
	       "takeover_ms_max=%.0f\n", rounds, total_acked, total_lost, total_after,
	       rounds ? tk[rounds / 2] : 0.0, rounds ? tk[rounds - 1] : 0.0);
	printf("ceph_takeover_served rounds=%u served_ms_p50=%.0f served_ms_max=%.0f mapped=%llu\n",
	       rounds, rounds ? served[rounds / 2] : 0.0, rounds ? served[rounds - 1] : 0.0,
	       (unsigned long long)mapped);
	if (served[0] < 0)
		failed_rounds++; /* a first write failed */
	vblk_remove_store(NULL, spec, NULL);
	vreactor_destroy(r);
	free(tk);
	free(served);
	return failed_rounds ? 1 : 0;
}
