/*
 * ackgen: load generators that log what was acknowledged, and the oracle that
 * checks a LUN against those logs (tests/vm/wip_kill9.sh; docs/durability.md).
 *
 * How it works. Every generator issues one command at a time per log tag and
 * appends two records to its log (O_APPEND, one write(2) per record, so the
 * log survives the generator's own death and that of the daemon):
 *   S TAG ID T                                  just before the submitting system call
 *   A TAG ID T STATUS OP LUN LBA N SRCLUN SRCLBA   just after it returned
 * T is CLOCK_MONOTONIC in ns; STATUS is ok, mc (MISCOMPARE) or err:<what the
 * kernel said>; OP is w (pattern write), z (zeroing: UNMAP / WRITE SAME),
 * x (EXTENDED COPY from SRCLUN/SRCLBA), c (COMPARE AND WRITE increment) or
 * r (READ of a counter). A command that failed is re-issued with the same ID
 * and the same bytes until it succeeds (a late execution of the first attempt
 * then writes what the retry wrote), so every data command ends acknowledged.
 * Pattern sectors are self-describing: "ACKGEN" magic, LBA, ID, tag hash, bytes
 * drawn from those, crc32c; a counter block is "ACKCOUNT" + its value (LE64).
 *
 * The oracle (verify) replays the acknowledged commands of the logs in order
 * (one command in flight per tag; different tags write disjoint ranges), which
 * gives the exact expected bytes of every sector: the last acknowledged write,
 * zeros after an acknowledged UNMAP / WRITE SAME, the source's expected bytes
 * as of the copy after an EXTENDED COPY. It reads the LUNs through their sd
 * disks with O_DIRECT and compares every sector byte for byte; each counter
 * must satisfy acknowledged CAWs <= value <= acknowledged + CAWs that failed
 * (outcome unknown). With the kill times (K lines of --kills) it also says,
 * per kill, which generators had a command submitted and not answered then.
 * 512-byte logical blocks are assumed (setup-luns.sh's default).
 *
 * Marks (tests/vm/t_log_writes.sh): with --mark DM, a generator sends the mark
 * "A:TAG:ID" to the dm-log-writes device DM after each command answered GOOD
 * (dmmark.c), before its next command. The replay of that log gives, at each
 * point, the marks logged so far; `verify --acked FILE` (FILE: those marks, one
 * a line) then judges a crash state instead of the live LUN: the commands
 * marked are the acknowledged ones (exact bytes, as above); per tag, the first
 * command answered GOOD but not marked may have been in flight at that point
 * (each of its sectors may hold the old or the new bytes); later commands of
 * the tag were submitted after their predecessor's mark, which the log has
 * after the point: none of their bytes may be there. The same rule, with the
 * acknowledged set given instead of taken from the whole log.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <scsi/sg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "dmmark.h"
#include "scsi_build.h"
#include "vaaid/rng.h"
#include "vaaid/scsi.h"
#include "vaaid/util.h"

#define BS 512u
#define GRAN 8u          /* 4 KiB granule, in blocks */
#define MAX_IO 512u      /* 256 KiB, in blocks */
#define MAX_XCOPY 2048u  /* 1 MiB, in blocks */
#define RETRY_US 50000
#define MAX_ATTEMPTS 2400 /* 2 minutes of retries: then the generator gives up (exit 3) */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t tag_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

/* The 512 bytes a pattern write of (tag hash h, command id) puts at lba. */
static void pattern(uint8_t *p, uint64_t h, uint64_t id, uint64_t lba)
{
	uint64_t st = h ^ (id * 0x9E3779B97F4A7C15ull) ^ (lba << 17);
	memcpy(p, "ACKGEN\0\1", 8);
	memcpy(p + 8, &lba, 8);
	memcpy(p + 16, &id, 8);
	memcpy(p + 24, &h, 8);
	for (unsigned o = 32; o < BS - 4; o += 8) {
		uint64_t v = vrng_next(&st);
		memcpy(p + o, &v, o + 8 <= BS - 4 ? 8 : BS - 4 - o);
	}
	uint32_t c = vcrc32c(0, p, BS - 4);
	memcpy(p + BS - 4, &c, 4);
}

/* ---- generators ---- */

struct gen {
	const char *kind, *tag, *log, *stop, *dev, *src, *lun, *srclun, *mark;
	uint64_t lba, blocks, src_lba, run, seed;
	unsigned threads;
	int logfd, fd, srcfd, ctl;
	uint64_t deadline;
};

struct worker {
	struct gen *g;
	char tag[64];
	uint64_t h, rng, next, lba, blocks;
	int rc;
};

static void logrec(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logrec(int fd, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, line, (size_t)n) != n)
		perror("ackgen: log");
}

/* One SG_IO command; 0 GOOD, 1 MISCOMPARE, -1 anything else (described in what). */
static int sgio(int fd, const uint8_t *cdb, unsigned cdblen, int dir, void *buf, unsigned len,
		char *what, size_t wlen)
{
	uint8_t sense[64] = {0};
	struct sg_io_hdr io = {.interface_id = 'S', .dxfer_direction = dir, .cmd_len = (uint8_t)cdblen,
			       .mx_sb_len = sizeof(sense), .dxfer_len = len, .dxferp = buf,
			       .cmdp = (uint8_t *)cdb, .sbp = sense, .timeout = 180000};
	if (ioctl(fd, SG_IO, &io) < 0) {
		snprintf(what, wlen, "err:ioctl-%s", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
		return -1;
	}
	if (io.status == 0 && io.host_status == 0 && (io.driver_status & 0xF) == 0)
		return 0;
	unsigned sk = 0, asc = 0, ascq = 0;
	if (io.sb_len_wr >= 14 && (sense[0] & 0x7F) >= 0x70 && (sense[0] & 0x7F) <= 0x71) {
		sk = sense[2] & 0xF;
		asc = sense[12];
		ascq = sense[13];
	} else if (io.sb_len_wr >= 4 && (sense[0] & 0x7F) >= 0x72) {
		sk = sense[1] & 0xF;
		asc = sense[2];
		ascq = sense[3];
	}
	if (io.status == SAM_STAT_CHECK_CONDITION && sk == SK_MISCOMPARE)
		return 1;
	snprintf(what, wlen, "err:status-%02x/host-%x/driver-%x/sense-%x/%02x/%02x", io.status,
		 io.host_status, io.driver_status, sk, asc, ascq);
	return -1;
}

static bool stopped(const struct worker *w)
{
	return access(w->g->stop, F_OK) == 0 || now_ns() > w->g->deadline;
}

static uint64_t pick(struct worker *w, uint64_t n, uint64_t first, uint64_t blocks)
{
	return first + GRAN * (vrng_next(&w->rng) % ((blocks - n) / GRAN + 1));
}

/* Issue one command until it is answered GOOD (or, for CAW, MISCOMPARE). */
typedef int (*issue_fn)(struct worker *w, void *arg, char *what, size_t wlen);

static int until_answered(struct worker *w, uint64_t id, issue_fn fn, void *arg, const char *fmt_tail)
{
	for (unsigned attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
		char what[96] = "ok";
		logrec(w->g->logfd, "S %s %" PRIu64 " %" PRIu64 "\n", w->tag, id, now_ns());
		int rc = fn(w, arg, what, sizeof(what));
		uint64_t t = now_ns();
		if (rc == 1)
			snprintf(what, sizeof(what), "mc");
		logrec(w->g->logfd, "A %s %" PRIu64 " %" PRIu64 " %s %s\n", w->tag, id, t, what, fmt_tail);
		if (rc == 0 && w->g->mark) {
			char m[128];
			snprintf(m, sizeof(m), "A:%s:%" PRIu64, w->tag, id);
			int e = dmmark_send(w->g->ctl, w->g->mark, m);
			if (e < 0) {
				fprintf(stderr, "ackgen %s: mark on %s: %s\n", w->tag, w->g->mark, strerror(-e));
				w->rc = 3;
				return -2;
			}
		}
		if (rc >= 0)
			return rc;
		if (fmt_tail[0] == 'c')
			return -1; /* a CAW is not re-issued: its outcome is unknown, read again */
		usleep(RETRY_US);
	}
	fprintf(stderr, "ackgen %s: command %" PRIu64 " failed %d times: giving up\n", w->tag, id,
		MAX_ATTEMPTS);
	w->rc = 3;
	return -2;
}

struct wr_arg {
	uint8_t *buf;
	uint64_t lba, n;
};

static int issue_pwrite(struct worker *w, void *arg, char *what, size_t wlen)
{
	struct wr_arg *a = arg;
	ssize_t r = pwrite(w->g->fd, a->buf, a->n * BS, (off_t)(a->lba * BS));
	if (r == (ssize_t)(a->n * BS))
		return 0;
	snprintf(what, wlen, "err:pwrite-%s", r < 0 ? strerrorname_np(errno) : "short");
	return -1;
}

static int issue_write16(struct worker *w, void *arg, char *what, size_t wlen)
{
	struct wr_arg *a = arg;
	uint8_t cdb[16];
	sb_rw16_cdb(cdb, 0x8A, a->lba, (uint32_t)a->n); /* WRITE(16), SBC-4 5.42 */
	return sgio(w->g->fd, cdb, 16, SG_DXFER_TO_DEV, a->buf, (unsigned)(a->n * BS), what, wlen);
}

static void fill(struct worker *w, uint8_t *buf, uint64_t id, uint64_t lba, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		pattern(buf + i * BS, w->h, id, lba + i);
}

static int do_write(struct worker *w, uint8_t *buf, uint64_t lba, uint64_t n, bool sd)
{
	uint64_t id = w->next++;
	fill(w, buf, id, lba, n);
	struct wr_arg a = {.buf = buf, .lba = lba, .n = n};
	char tail[128];
	snprintf(tail, sizeof(tail), "w %s %" PRIu64 " %" PRIu64 " - 0", w->g->lun, lba, n);
	return until_answered(w, id, sd ? issue_pwrite : issue_write16, &a, tail) < 0 ? -1 : 0;
}

struct zero_arg {
	uint64_t lba, n;
	bool ws, unmap_bit;
};

static int issue_zero(struct worker *w, void *arg, char *what, size_t wlen)
{
	struct zero_arg *a = arg;
	uint8_t cdb[16], data[BS] = {0};
	if (a->ws) {
		/* WRITE SAME(16) of one zero block, UNMAP bit as chosen (SBC-4 5.49): reads zeros */
		sb_rw16_cdb(cdb, 0x93, a->lba, (uint32_t)a->n);
		if (a->unmap_bit)
			cdb[1] = 0x08;
		return sgio(w->g->fd, cdb, 16, SG_DXFER_TO_DEV, data, BS, what, wlen);
	}
	/* UNMAP (SBC-4 5.31) with one block descriptor; the LUN reads zeros after it (LBPRZ) */
	memset(cdb, 0, 10);
	cdb[0] = 0x42;
	scsi_put_be16(cdb + 7, 24);
	scsi_put_be16(data, 22);
	scsi_put_be16(data + 2, 16);
	scsi_put_be64(data + 8, a->lba);
	scsi_put_be32(data + 16, (uint32_t)a->n);
	return sgio(w->g->fd, cdb, 10, SG_DXFER_TO_DEV, data, 24, what, wlen);
}

struct xcopy_arg {
	uint8_t list[128];
	size_t len;
};

static int issue_xcopy(struct worker *w, void *arg, char *what, size_t wlen)
{
	struct xcopy_arg *a = arg;
	uint8_t cdb[16];
	sb_xcopy_cdb(cdb, (uint32_t)a->len);
	return sgio(w->g->fd, cdb, 16, SG_DXFER_TO_DEV, a->list, (unsigned)a->len, what, wlen);
}

struct caw_arg {
	uint8_t buf[2 * BS];
	uint64_t lba;
	bool read;
};

static int issue_caw(struct worker *w, void *arg, char *what, size_t wlen)
{
	struct caw_arg *a = arg;
	uint8_t cdb[16];
	if (a->read) {
		sb_rw16_cdb(cdb, 0x88, a->lba, 1); /* READ(16) */
		return sgio(w->g->fd, cdb, 16, SG_DXFER_FROM_DEV, a->buf, BS, what, wlen);
	}
	/* COMPARE AND WRITE (SBC-4 5.3): verify block then write block, NUMBER OF BLOCKS 1 */
	memset(cdb, 0, 16);
	cdb[0] = 0x89;
	scsi_put_be64(cdb + 2, a->lba);
	cdb[13] = 1;
	return sgio(w->g->fd, cdb, 16, SG_DXFER_TO_DEV, a->buf, 2 * BS, what, wlen);
}

static int naa_of(int fd, uint8_t naa[16])
{
	uint8_t cdb[6], page[255];
	char what[96];
	sb_inquiry_vpd_cdb(cdb, 0x83, sizeof(page));
	if (sgio(fd, cdb, 6, SG_DXFER_FROM_DEV, page, sizeof(page), what, sizeof(what)) != 0)
		return -1;
	return sb_vpd83_naa(page, sizeof(page), naa);
}

static void *run_worker(void *p)
{
	struct worker *w = p;
	struct gen *g = w->g;
	uint8_t *buf;
	if (posix_memalign((void **)&buf, 4096, MAX_XCOPY * BS)) {
		w->rc = 2;
		return NULL;
	}
	char tail[160];
	if (!strcmp(g->kind, "caw")) {
		struct caw_arg a = {.lba = w->lba};
		while (!stopped(w)) {
			a.read = true;
			uint64_t id = w->next++;
			snprintf(tail, sizeof(tail), "r %s %" PRIu64 " 1 - 0", g->lun, a.lba);
			if (until_answered(w, id, issue_caw, &a, tail) < 0)
				break;
			uint64_t v = 0;
			if (!memcmp(a.buf, "ACKCOUNT", 8))
				memcpy(&v, a.buf + 8, 8);
			else
				for (unsigned i = 0; i < BS; i++)
					if (a.buf[i]) {
						fprintf(stderr, "ackgen %s: the counter block holds neither a counter nor zeros\n", w->tag);
						w->rc = 3;
						goto out;
					}
			memset(a.buf + BS, 0, BS);
			memcpy(a.buf + BS, "ACKCOUNT", 8);
			v++;
			memcpy(a.buf + BS + 8, &v, 8);
			a.read = false;
			id = w->next++;
			snprintf(tail, sizeof(tail), "c %s %" PRIu64 " 1 - 0", g->lun, a.lba);
			if (until_answered(w, id, issue_caw, &a, tail) == -2)
				break;
		}
		goto out;
	}
	uint8_t naa[2][16];
	if (!strcmp(g->kind, "xcopy") && (naa_of(g->srcfd, naa[0]) || naa_of(g->fd, naa[1]))) {
		fprintf(stderr, "ackgen %s: no NAA designator in VPD page 83h\n", w->tag);
		w->rc = 2;
		goto out;
	}
	while (!stopped(w) && w->rc == 0) {
		uint64_t n = GRAN * (1 + vrng_next(&w->rng) % (MAX_IO / GRAN)), lba;
		bool zero = vrng_next(&w->rng) & 1;
		if (!strcmp(g->kind, "write")) {
			do_write(w, buf, pick(w, n, w->lba, w->blocks), n, true);
		} else if (!strcmp(g->kind, "unmap") || !strcmp(g->kind, "wsz")) {
			lba = pick(w, n, w->lba, w->blocks);
			if (!zero) {
				do_write(w, buf, lba, n, false);
				continue;
			}
			struct zero_arg a = {.lba = lba, .n = n, .ws = !strcmp(g->kind, "wsz"),
					     .unmap_bit = vrng_next(&w->rng) & 1};
			snprintf(tail, sizeof(tail), "z %s %" PRIu64 " %" PRIu64 " - 0", g->lun, lba, n);
			until_answered(w, w->next++, issue_zero, &a, tail);
		} else { /* xcopy: a granule-aligned piece of the (static) source to the destination range */
			n = GRAN * (1 + vrng_next(&w->rng) % (MAX_XCOPY / GRAN));
			if (n > g->blocks)
				n = g->blocks;
			uint64_t s = pick(w, n, g->src_lba, g->blocks), d = pick(w, n, w->lba, w->blocks);
			struct sb_cscd c[2];
			memcpy(c[0].naa, naa[0], 16);
			memcpy(c[1].naa, naa[1], 16);
			c[0].block_size = c[1].block_size = BS;
			struct sb_segment seg = {.src = 0, .dst = 1, .nblocks = (uint16_t)n,
						 .src_lba = s, .dst_lba = d};
			struct xcopy_arg a;
			a.len = sb_xcopy_list(a.list, sizeof(a.list), 0, SB_LIST_ID_NONE, c, 2, &seg, 1);
			snprintf(tail, sizeof(tail), "x %s %" PRIu64 " %" PRIu64 " %s %" PRIu64, g->lun, d, n,
				 g->srclun, s);
			until_answered(w, w->next++, issue_xcopy, &a, tail);
		}
	}
out:
	free(buf);
	return NULL;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: ackgen now | ackgen kill PID [sdX]\n"
		"       ackgen gen KIND --dev DEV --lun L --lba LBA --blocks N --log FILE --tag TAG\n"
		"              --run R --stop FILE [--threads T] [--seed S] [--seconds S]\n"
		"              [--src SG --srclun L --src-lba LBA (a source range of N blocks)]\n"
		"              [--mark DM (a dm-log-writes mark A:TAG:ID after each GOOD answer)]\n"
		"         KIND: write (sd, O_DIRECT) | fill (sd, once over the range) | zero (once) |\n"
		"               unmap | wsz | xcopy | caw (SG_IO)\n"
		"       ackgen verify [--kills FILE --gens G1,G2,...] [--acked MARKS] --lun L=/dev/sdX|FILE... LOG...\n");
	return 2;
}

static int gen_main(int argc, char **argv)
{
	struct gen g = {.kind = argv[0], .threads = 1, .seed = 1, .lun = "A", .srclun = "-", .ctl = -1};
	uint64_t seconds = 600;
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (!strcmp(k, "--dev")) g.dev = v;
		else if (!strcmp(k, "--src")) g.src = v;
		else if (!strcmp(k, "--lun")) g.lun = v;
		else if (!strcmp(k, "--srclun")) g.srclun = v;
		else if (!strcmp(k, "--lba")) g.lba = strtoull(v, NULL, 0);
		else if (!strcmp(k, "--src-lba")) g.src_lba = strtoull(v, NULL, 0);
		else if (!strcmp(k, "--blocks")) g.blocks = strtoull(v, NULL, 0);
		else if (!strcmp(k, "--log")) g.log = v;
		else if (!strcmp(k, "--tag")) g.tag = v;
		else if (!strcmp(k, "--stop")) g.stop = v;
		else if (!strcmp(k, "--run")) g.run = strtoull(v, NULL, 0);
		else if (!strcmp(k, "--seed")) g.seed = strtoull(v, NULL, 0);
		else if (!strcmp(k, "--threads")) g.threads = (unsigned)strtoul(v, NULL, 0);
		else if (!strcmp(k, "--seconds")) seconds = strtoull(v, NULL, 0);
		else if (!strcmp(k, "--mark")) g.mark = v;
		else return usage();
	}
	bool sd = !strcmp(g.kind, "write") || !strcmp(g.kind, "fill");
	bool once = !strcmp(g.kind, "fill") || !strcmp(g.kind, "zero");
	if (!g.dev || !g.log || !g.tag || (!g.stop && !once) || !g.threads || g.threads > 16 ||
	    (!once && strcmp(g.kind, "caw") && (g.blocks < MAX_IO * g.threads || g.lba % GRAN)) ||
	    (!strcmp(g.kind, "xcopy") && (!g.src || g.blocks < MAX_XCOPY)))
		return usage();
	g.stop = g.stop ? g.stop : "/nonexistent";
	g.deadline = now_ns() + seconds * 1000000000ull;
	g.logfd = open(g.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	g.fd = open(g.dev, O_RDWR | O_CLOEXEC | (sd ? O_DIRECT : 0));
	g.srcfd = g.src ? open(g.src, O_RDWR | O_CLOEXEC) : -1;
	if (g.logfd < 0 || g.fd < 0 || (g.src && g.srcfd < 0)) {
		perror("ackgen: open");
		return 2;
	}
	if (g.mark && (g.ctl = dmmark_open()) < 0) {
		fprintf(stderr, "ackgen: /dev/mapper/control: %s\n", strerror(-g.ctl));
		return 2;
	}
	struct worker w[16];
	pthread_t th[16];
	uint64_t per = (g.blocks / g.threads) / GRAN * GRAN;
	for (unsigned i = 0; i < g.threads; i++) {
		w[i] = (struct worker){.g = &g, .rng = g.seed ^ (g.run << 20) ^ i,
				       .next = g.run << 32, .lba = g.lba + i * per, .blocks = per};
		if (g.threads > 1)
			snprintf(w[i].tag, sizeof(w[i].tag), "%s/%u", g.tag, i);
		else
			snprintf(w[i].tag, sizeof(w[i].tag), "%s", g.tag);
		w[i].h = tag_hash(w[i].tag);
	}
	if (!strcmp(g.kind, "zero")) { /* the whole range once: WRITE SAME(16) zero, UNMAP bit set */
		char tail[160];
		for (uint64_t o = 0; o < g.blocks && w[0].rc == 0; o += MAX_XCOPY) {
			struct zero_arg a = {.lba = g.lba + o, .n = g.blocks - o < MAX_XCOPY ? g.blocks - o : MAX_XCOPY,
					     .ws = true, .unmap_bit = true};
			snprintf(tail, sizeof(tail), "z %s %" PRIu64 " %" PRIu64 " - 0", g.lun, a.lba, a.n);
			if (until_answered(&w[0], w[0].next++, issue_zero, &a, tail) < 0)
				return 3;
		}
		return w[0].rc;
	}
	if (!strcmp(g.kind, "fill")) { /* the whole range once, 256 KiB at a time */
		uint8_t *buf;
		if (posix_memalign((void **)&buf, 4096, MAX_IO * BS))
			return 2;
		for (uint64_t o = 0; o < g.blocks && w[0].rc == 0; o += MAX_IO)
			do_write(&w[0], buf, g.lba + o, g.blocks - o < MAX_IO ? g.blocks - o : MAX_IO, true);
		free(buf);
		return w[0].rc;
	}
	for (unsigned i = 0; i < g.threads; i++)
		if (pthread_create(&th[i], NULL, run_worker, &w[i]))
			return 2;
	int rc = 0;
	for (unsigned i = 0; i < g.threads; i++) {
		pthread_join(th[i], NULL);
		rc = rc ? rc : w[i].rc;
	}
	return rc;
}

/* ---- the oracle ---- */

enum { X_NONE, X_ZERO, X_PAT, X_COUNTER };
struct exp {
	uint8_t kind;
	uint64_t h, id, lba; /* X_PAT: the pattern (h, id, lba) */
};
struct lun {
	char name[16];
	const char *dev;
	struct exp *e;
	struct exp *alt; /* --acked: what an in-flight command may have put there instead */
	uint64_t n; /* sectors tracked */
};
struct counter {
	char lun[16];
	uint64_t lba, ok, unknown, mc;
};
struct span { /* one command of one tag: submitted at s, answered at a (0: never) */
	char tag[64];
	char op;
	uint64_t s, a;
};

#define MAX_LUNS 8
#define MAX_COUNTERS 8

struct oracle {
	struct lun luns[MAX_LUNS];
	unsigned nluns;
	struct counter ctr[MAX_COUNTERS];
	unsigned nctr;
	struct span *sp;
	size_t nsp, capsp;
	unsigned long acked, failed;
	uint64_t kill[256]; /* the kill instants (K lines of --kills) */
	unsigned nkill;
	/* --acked: the marked commands (tag hash, id), sorted; the tags already past
	 * their first unmarked command */
	struct ack { uint64_t h, id; } *ack;
	size_t nack;
	bool acked_mode;
	uint64_t cut[64];
	unsigned ncut;
	unsigned long inflight, alt_sectors;
};

static int ack_cmp(const void *a, const void *b)
{
	const struct ack *x = a, *y = b;
	return x->h != y->h ? (x->h < y->h ? -1 : 1) : x->id != y->id ? (x->id < y->id ? -1 : 1) : 0;
}

static bool ack_has(const struct oracle *o, uint64_t h, uint64_t id)
{
	struct ack k = {h, id};
	return bsearch(&k, o->ack, o->nack, sizeof(k), ack_cmp) != NULL;
}

static int load_acked(struct oracle *o, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	char line[512];
	size_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		char *c = strrchr(line, ':');
		if (strncmp(line, "A:", 2) || !c || c == line + 1)
			continue; /* other marks (the test's own) */
		*c = 0;
		if (o->nack == cap) {
			cap = cap ? 2 * cap : 4096;
			struct ack *a = realloc(o->ack, cap * sizeof(*a));
			if (!a) {
				fclose(f);
				return -1;
			}
			o->ack = a;
		}
		o->ack[o->nack++] = (struct ack){tag_hash(line + 2), strtoull(c + 1, NULL, 10)};
	}
	fclose(f);
	qsort(o->ack, o->nack, sizeof(*o->ack), ack_cmp);
	o->acked_mode = true;
	return 0;
}

/* --acked: 0 apply (marked), 1 the tag's in-flight command (either), 2 ignore (later). */
static int ack_class(struct oracle *o, uint64_t h, uint64_t id)
{
	if (!o->acked_mode || ack_has(o, h, id))
		return 0;
	for (unsigned i = 0; i < o->ncut; i++)
		if (o->cut[i] == h)
			return 2;
	if (o->ncut < 64)
		o->cut[o->ncut++] = h;
	return 1;
}

/* Whether a kill fell between a command's submission s and its answer a. */
static bool held(const struct oracle *o, uint64_t s, uint64_t a)
{
	for (unsigned i = 0; i < o->nkill; i++)
		if (s < o->kill[i] && o->kill[i] < a)
			return true;
	return false;
}

static struct lun *lun_get(struct oracle *o, const char *name, uint64_t need)
{
	for (unsigned i = 0; i < o->nluns; i++) {
		struct lun *l = &o->luns[i];
		if (strcmp(l->name, name))
			continue;
		if (need > l->n) {
			uint64_t n = need + (need >> 1);
			struct exp *e = realloc(l->e, n * sizeof(*e));
			if (e)
				l->e = e;
			struct exp *alt = e ? realloc(l->alt, n * sizeof(*alt)) : NULL;
			if (!alt)
				return NULL;
			memset(e + l->n, 0, (n - l->n) * sizeof(*e));
			memset(alt + l->n, 0, (n - l->n) * sizeof(*alt));
			l->alt = alt;
			l->n = n;
		}
		return l;
	}
	return NULL;
}

static struct counter *ctr_get(struct oracle *o, const char *lun, uint64_t lba)
{
	for (unsigned i = 0; i < o->nctr; i++)
		if (!strcmp(o->ctr[i].lun, lun) && o->ctr[i].lba == lba)
			return &o->ctr[i];
	if (o->nctr == MAX_COUNTERS)
		return NULL;
	struct counter *c = &o->ctr[o->nctr++];
	snprintf(c->lun, sizeof(c->lun), "%s", lun);
	c->lba = lba;
	return c;
}

static int replay(struct oracle *o, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	char line[512];
	unsigned long ln = 0;
	while (fgets(line, sizeof(line), f)) {
		ln++;
		char tag[64], st[96], op, lun[16], srclun[16];
		uint64_t id, t, lba, n, srclba;
		if (sscanf(line, "S %63s %" SCNu64 " %" SCNu64, tag, &id, &t) == 3) {
			if (o->nsp == o->capsp) {
				o->capsp = o->capsp ? 2 * o->capsp : 4096;
				o->sp = realloc(o->sp, o->capsp * sizeof(*o->sp));
				if (!o->sp)
					return -1;
			}
			struct span *s = &o->sp[o->nsp++];
			snprintf(s->tag, sizeof(s->tag), "%s", tag);
			s->s = t;
			s->a = 0;
			s->op = '?';
			continue;
		}
		if (sscanf(line, "A %63s %" SCNu64 " %" SCNu64 " %95s %c %15s %" SCNu64 " %" SCNu64
			   " %15s %" SCNu64, tag, &id, &t, st, &op, lun, &lba, &n, srclun, &srclba) != 10) {
			fprintf(stderr, "%s:%lu: not a log record (a torn last line is one too): %s", path,
				ln, line);
			fclose(f);
			return -1;
		}
		uint64_t sent = 0;
		for (size_t i = o->nsp; i-- > 0;) /* the tag's open command */
			if (!strcmp(o->sp[i].tag, tag)) {
				o->sp[i].a = t;
				o->sp[i].op = op;
				sent = o->sp[i].s;
				break;
			}
		bool ok = !strcmp(st, "ok");
		struct lun *l = lun_get(o, lun, lba + n);
		if (!l) {
			fprintf(stderr, "%s:%lu: LUN %s was not named with --lun\n", path, ln, lun);
			fclose(f);
			return -1;
		}
		if ((op == 'c' || op == 'r') && o->acked_mode) {
			fprintf(stderr, "%s:%lu: COMPARE AND WRITE counters are not judged with --acked\n", path, ln);
			fclose(f);
			return -1;
		}
		if (op == 'c' || op == 'r') {
			struct counter *c = ctr_get(o, lun, lba);
			if (!c)
				return -1;
			/* A CAW answered MISCOMPARE after a kill it was held across may have
			 * been executed before the kill and then retried (LIO answers held
			 * commands BUSY at the ring reset; the SCSI midlayer retries BUSY):
			 * its outcome is unknown, as that of a CAW that failed. */
			bool mc = !strcmp(st, "mc"), unknown = !ok && (!mc || held(o, sent, t));
			c->ok += op == 'c' && ok;
			c->mc += op == 'c' && mc && !unknown;
			c->unknown += op == 'c' && unknown;
			l->e[lba].kind = X_COUNTER;
			continue;
		}
		if (!ok) {
			o->failed++;
			continue;
		}
		uint64_t h = tag_hash(tag);
		int cls = ack_class(o, h, id);
		if (cls == 2)
			continue;
		o->acked += cls == 0;
		o->inflight += cls == 1;
		if (op == 'x') {
			struct lun *s = lun_get(o, srclun, srclba + n);
			if (!s)
				return -1;
			l = lun_get(o, lun, lba + n); /* (s may have moved l's table when they are one) */
			memmove(cls ? &l->alt[lba] : &l->e[lba], &s->e[srclba], n * sizeof(struct exp));
			continue;
		}
		struct exp *dst = cls ? l->alt : l->e;
		for (uint64_t i = 0; i < n; i++)
			dst[lba + i] = op == 'w' ? (struct exp){X_PAT, h, id, lba + i}
						 : (struct exp){.kind = X_ZERO};
	}
	fclose(f);
	return 0;
}

static void describe(const uint8_t *p, char *out, size_t len)
{
	uint64_t lba, id;
	bool zero = true;
	for (unsigned i = 0; i < BS && zero; i++)
		zero = !p[i];
	if (zero)
		snprintf(out, len, "zeros");
	else if (!memcmp(p, "ACKGEN\0\1", 8)) {
		memcpy(&lba, p + 8, 8);
		memcpy(&id, p + 16, 8);
		snprintf(out, len, "pattern of LBA %" PRIu64 " command %" PRIu64 ".%" PRIu64 "%s", lba,
			 id >> 32, id & 0xFFFFFFFF, vcrc32c(0, p, BS - 4) == *(const uint32_t *)(p + BS - 4) ? "" : " (bad crc)");
	} else
		snprintf(out, len, "unknown bytes %02x%02x%02x%02x...", p[0], p[1], p[2], p[3]);
}

static void expect(const struct exp *e, uint8_t *want)
{
	if (e->kind == X_ZERO)
		memset(want, 0, BS);
	else
		pattern(want, e->h, e->id, e->lba);
}

static int check_lun(struct oracle *o, struct lun *l, unsigned long *checked)
{
	int fd = open(l->dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 && errno == EINVAL) /* a copy in a file system without O_DIRECT (tmpfs) */
		fd = open(l->dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(l->dev);
		return -1;
	}
	const uint64_t chunk = 2048;
	uint8_t *buf, want[BS];
	if (posix_memalign((void **)&buf, 4096, chunk * BS))
		return -1;
	int bad = 0;
	for (uint64_t base = 0; base < l->n; base += chunk) {
		uint64_t n = l->n - base < chunk ? l->n - base : chunk;
		bool any = false;
		for (uint64_t i = 0; i < n && !any; i++)
			any = l->e[base + i].kind != X_NONE;
		if (!any)
			continue;
		if (pread(fd, buf, n * BS, (off_t)(base * BS)) != (ssize_t)(n * BS)) {
			perror(l->dev);
			free(buf);
			close(fd);
			return -1;
		}
		for (uint64_t i = 0; i < n; i++) {
			const struct exp *e = &l->e[base + i];
			const uint8_t *got = buf + i * BS;
			if (e->kind == X_COUNTER) {
				struct counter *c = ctr_get(o, l->name, base + i);
				uint64_t v = 0;
				if (!memcmp(got, "ACKCOUNT", 8))
					memcpy(&v, got + 8, 8);
				printf("counter %s:%" PRIu64 " = %" PRIu64 ": %" PRIu64 " CAWs acknowledged, %" PRIu64
				       " with unknown outcome, %" PRIu64 " miscompares\n",
				       l->name, base + i, v, c->ok, c->unknown, c->mc);
				if (v < c->ok || v > c->ok + c->unknown) {
					printf("FAIL counter %s:%" PRIu64 " is %" PRIu64 ", outside [%" PRIu64 ", %" PRIu64 "]\n",
					       l->name, base + i, v, c->ok, c->ok + c->unknown);
					bad++;
				}
				continue;
			}
			if (e->kind == X_NONE)
				continue;
			(*checked)++;
			expect(e, want);
			const struct exp *alt = &l->alt[base + i];
			if (memcmp(got, want, BS) && alt->kind != X_NONE) {
				expect(alt, want); /* an in-flight command's bytes instead */
				o->alt_sectors += !memcmp(got, want, BS);
				if (memcmp(got, want, BS))
					expect(e, want);
			}
			if (memcmp(got, want, BS)) {
				char d[128];
				describe(got, d, sizeof(d));
				if (bad++ < 20)
					printf("FAIL %s LBA %" PRIu64 ": expected %s (command %" PRIu64 ".%" PRIu64
					       "), holds %s\n", l->name, base + i,
					       e->kind == X_ZERO ? "zeros" : "a pattern", e->id >> 32,
					       e->id & 0xFFFFFFFF, d);
			}
		}
	}
	free(buf);
	close(fd);
	return bad;
}

/* Per kill: which generators (tags up to '/') had a command submitted before it and not
 * answered by then. A cycle counts when every generator did. */
static int report_kills(struct oracle *o, const char *kills, const char *list, unsigned *counted,
			unsigned *cycles)
{
	FILE *f = fopen(kills, "r");
	if (!f) {
		perror(kills);
		return -1;
	}
	char line[256], gens[32][64];
	unsigned ng = 0;
	for (const char *p = list; *p && ng < 32;) {
		size_t n = strcspn(p, ",");
		snprintf(gens[ng++], 64, "%.*s", (int)n, p);
		p += n + (p[n] == ',');
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned c;
		uint64_t tk;
		if (sscanf(line, "K %u %" SCNu64, &c, &tk) != 2)
			continue;
		char idle[512] = "", busy[1024] = "";
		unsigned nidle = 0;
		for (unsigned j = 0; j < ng; j++) {
			size_t gl = strlen(gens[j]);
			char ops[16] = "";
			for (size_t i = 0; i < o->nsp; i++) {
				const struct span *s = &o->sp[i];
				if (strncmp(s->tag, gens[j], gl) || (s->tag[gl] && s->tag[gl] != '/'))
					continue;
				if (s->s < tk && (s->a == 0 || s->a > tk) && strlen(ops) < sizeof(ops) - 1 &&
				    !strchr(ops, s->op))
					ops[strlen(ops)] = s->op;
			}
			if (!ops[0]) {
				nidle++;
				strncat(idle, " ", sizeof(idle) - strlen(idle) - 1);
				strncat(idle, gens[j], sizeof(idle) - strlen(idle) - 1);
			} else {
				char b[96];
				snprintf(b, sizeof(b), " %s:%s", gens[j], ops);
				strncat(busy, b, sizeof(busy) - strlen(busy) - 1);
			}
		}
		(*cycles)++;
		*counted += nidle == 0;
		printf("kill %u: %s; unanswered at the kill:%s%s%s\n", c, nidle ? "does not count" : "counts",
		       busy, nidle ? "; idle:" : "", idle);
	}
	fclose(f);
	return 0;
}

static int verify_main(int argc, char **argv)
{
	struct oracle o = {0};
	const char *kills = NULL, *gens = "";
	int i = 0;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--kills") && i + 1 < argc) {
			kills = argv[++i];
		} else if (!strcmp(argv[i], "--gens") && i + 1 < argc) {
			gens = argv[++i];
		} else if (!strcmp(argv[i], "--acked") && i + 1 < argc) {
			if (load_acked(&o, argv[++i]) < 0)
				return 2;
		} else if (!strcmp(argv[i], "--lun") && i + 1 < argc && o.nluns < MAX_LUNS) {
			char *eq = strchr(argv[++i], '=');
			if (!eq)
				return usage();
			struct lun *l = &o.luns[o.nluns++];
			snprintf(l->name, sizeof(l->name), "%.*s", (int)(eq - argv[i]), argv[i]);
			l->dev = eq + 1;
		} else
			break;
	}
	if (i == argc || !o.nluns)
		return usage();
	if (kills) {
		FILE *f = fopen(kills, "r");
		char line[256];
		unsigned c;
		if (!f) {
			perror(kills);
			return 2;
		}
		while (fgets(line, sizeof(line), f) && o.nkill < 256)
			if (sscanf(line, "K %u %" SCNu64, &c, &o.kill[o.nkill]) == 2)
				o.nkill++;
		fclose(f);
	}
	for (; i < argc; i++)
		if (replay(&o, argv[i]) < 0)
			return 2;
	unsigned counted = 0, cycles = 0;
	if (kills && report_kills(&o, kills, gens, &counted, &cycles) < 0)
		return 2;
	unsigned long checked = 0;
	int bad = 0;
	for (unsigned j = 0; j < o.nluns; j++) {
		int b = check_lun(&o, &o.luns[j], &checked);
		if (b < 0)
			return 2;
		bad += b;
	}
	if (o.acked_mode)
		printf("%lu marked commands (of %zu marks), %lu in flight (%lu of their sectors held the new bytes), ",
		       o.acked, o.nack, o.inflight, o.alt_sectors);
	printf("%lu data commands acknowledged (%lu attempts failed and were re-issued), %lu sectors "
	       "checked, %d wrong; %u of %u kills count\n",
	       o.acked, o.failed, checked, bad, counted, cycles);
	for (unsigned j = 0; j < o.nluns; j++) {
		free(o.luns[j].e);
		free(o.luns[j].alt);
	}
	free(o.ack);
	free(o.sp);
	return bad ? 1 : 0;
}

/* Reads + writes completed and in flight on a block device (its stat and inflight files). */
static int blk_counts(const char *dev, uint64_t *done, uint64_t *inflight)
{
	char path[256];
	uint64_t f[11] = {0}, r = 0, w = 0;
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
	return n == 5 && m == 2 ? 0 : -1;
}

static bool proc_dead(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return true;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'Z';
}

/*
 * ackgen kill PID [BLOCKDEV]: SIGKILL to PID, the instant printed as "K <ns>",
 * then wait (at most 10 s) until it is dead. With BLOCKDEV (sdX): its commands
 * in flight just before the kill minus those completed from then until the
 * death, i.e. how many of them at least stayed unanswered: "held <n>".
 */
static int kill_main(int argc, char **argv)
{
	if (argc < 1)
		return usage();
	pid_t pid = (pid_t)strtol(argv[0], NULL, 10);
	uint64_t d0 = 0, in0 = 0, d1 = 0, in1 = 0;
	if (argc > 1 && blk_counts(argv[1], &d0, &in0) < 0) {
		fprintf(stderr, "ackgen kill: no block-layer counters for %s\n", argv[1]);
		return 2;
	}
	uint64_t t = now_ns();
	if (pid <= 1 || kill(pid, SIGKILL) < 0) {
		perror("ackgen kill");
		return 2;
	}
	for (unsigned i = 0; i < 10000 && !proc_dead(pid); i++)
		usleep(1000);
	if (!proc_dead(pid)) {
		fprintf(stderr, "ackgen kill: %d still alive 10 s after SIGKILL\n", (int)pid);
		return 1;
	}
	printf("K %" PRIu64 "\n", t);
	if (argc > 1) {
		blk_counts(argv[1], &d1, &in1);
		printf("held %" PRId64 " in_flight %" PRIu64 " completed_until_dead %" PRIu64 "\n",
		       (int64_t)in0 - (int64_t)(d1 - d0), in0, d1 - d0);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "kill"))
		return kill_main(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "now")) {
		printf("%" PRIu64 "\n", now_ns());
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "gen"))
		return gen_main(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "verify"))
		return verify_main(argc - 2, argv + 2);
	return usage();
}
