/*
 * ackgen: load generators that log what was acknowledged, and the oracle that
 * checks a LUN against those logs (tests/vm/t_kill9.sh, tests/host/power_cut.sh;
 * docs/durability.md). `ackgen relay` (relay.c) is the host's end of a log that
 * must survive the whole guest; `ackgen kill` (kill.c) the daemon's kill.
 *
 * How it works. Every generator issues one command at a time per log tag and
 * appends two records to its log (O_APPEND, one write(2) per record, so the
 * log survives the generator's own death and that of the daemon; or, when the
 * log is a virtio-serial port, one write(2) and the host relay's receipt, so it
 * survives the guest's):
 *   S TAG ID T OP LUN LBA N SRCLUN SRCLBA          just before the submitting system call
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
 * A command with an S and no A (the log ends, or the tag's next record is a new
 * S: a power cut took generator and answer alike) was in flight: each of its
 * sectors may hold its old content or the command's, and a CAW's outcome is
 * unknown (the counter's upper bound); with --cuts N it says, per power cut
 * (run R = 1..N: the high 32 bits of a command id), which generators had one.
 * 512-byte logical blocks are assumed (setup-luns.sh's default).
 *
 * Marks (tests/vm/t_log_writes.sh): with --mark DM, a generator sends the mark
 * "A:TAG:ID" to the dm-log-writes device DM after each command answered GOOD
 * (dmmark.c), before its next command. The replay of that log gives, at each
 * point, the marks logged so far; `verify --acked FILE` (FILE: those marks, one
 * a line) then judges a crash state instead of the live LUN: the commands
 * marked are the acknowledged ones (exact bytes, as above); per tag, the first
 * command answered GOOD but not marked may have been in flight at that point
 * (the in-flight rule above: each of its sectors old or new); later commands of
 * the tag were submitted after their predecessor's mark, which the log has
 * after the point: none of their bytes may be there. The same rules, with the
 * acknowledged set given by the marks instead of the log's A records.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ackgen.h"
#include "dmmark.h"
#include "kill.h"
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
	bool relay;            /* the log is a virtio-serial port to `ackgen relay` on the host */
	pthread_mutex_t loglk; /* relay: one writer of records and reader of receipts at a time */
	size_t unreceipted;    /* relay: records written whose receipt was not read yet */
};

struct worker {
	struct gen *g;
	char tag[64];
	uint64_t h, rng, next, lba, blocks;
	int rc;
};

/* Relay port: read the receipts of every record written so far (loglk held). */
static int log_drain(struct gen *g)
{
	char r[64];
	while (g->unreceipted) {
		ssize_t got = read(g->logfd, r, g->unreceipted < sizeof(r) ? g->unreceipted : sizeof(r));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		g->unreceipted -= (size_t)got;
	}
	return 0;
}

/*
 * One record, one write(2). To a relay port (the virtio-serial port of an
 * `ackgen relay` on the host) the relay sends back one receipt byte per record,
 * after it wrote the record to its file: a virtio_console write returns when
 * the buffer is queued for the host, not when the host took it
 * (port_fops_write, drivers/char/virtio_console.c: "nonblock = true" before
 * __send_to_port), so the receipt is what makes "S on the host before the
 * submit" hold whatever qemu does with the buffer. With wait (an S record)
 * the call returns once every record written so far on this port has its
 * receipt; without (an A record) it does not wait: the port is one ordered
 * stream, so the next S's receipt also says its A is on the host. (Waiting for
 * the A too would leave the generator, as the host sees it, idle between its
 * commands for a whole round trip; a command whose A is lost with the guest
 * is merely counted as in flight, never wrongly as acknowledged.) A failure
 * to log or to get a receipt ends the generator (exit 4): a command must never
 * be submitted unrecorded.
 */
static void logrec(struct gen *g, bool wait, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logrec(struct gen *g, bool wait, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n <= 0 || (size_t)n >= sizeof(line)) { /* never submit a command unrecorded */
		fprintf(stderr, "ackgen: log: a record of %d bytes does not fit %zu\n", n,
			sizeof(line));
		_exit(4);
	}
	if (g->relay)
		pthread_mutex_lock(&g->loglk);
	bool ok = write(g->logfd, line, (size_t)n) == n;
	if (ok && g->relay) {
		g->unreceipted++;
		ok = !wait || log_drain(g) == 0;
	}
	if (g->relay)
		pthread_mutex_unlock(&g->loglk);
	if (!ok) {
		perror("ackgen: log");
		_exit(4);
	}
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
		logrec(w->g, true, "S %s %" PRIu64 " %" PRIu64 " %s\n", w->tag, id, now_ns(), fmt_tail);
		int rc = fn(w, arg, what, sizeof(what));
		uint64_t t = now_ns();
		if (rc == 1)
			snprintf(what, sizeof(what), "mc");
		logrec(w->g, false, "A %s %" PRIu64 " %" PRIu64 " %s %s\n", w->tag, id, t, what, fmt_tail);
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

static void fill(struct worker *w, uint8_t *buf, uint64_t id, uint64_t lba, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		pattern(buf + i * BS, w->h, id, lba + i);
}

/* A pattern write. Its bytes are made after its S record is logged (first
 * attempt): the window in which the generator has answered one command and not
 * yet logged the next stays a few instructions long (what a cut that counts
 * needs: every generator with a command in flight). */
struct wr_arg {
	uint8_t *buf;
	uint64_t lba, n, id;
	bool filled;
};

static void wr_fill(struct worker *w, struct wr_arg *a)
{
	if (!a->filled)
		fill(w, a->buf, a->id, a->lba, a->n);
	a->filled = true;
}

static int issue_pwrite(struct worker *w, void *arg, char *what, size_t wlen)
{
	struct wr_arg *a = arg;
	wr_fill(w, a);
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
	wr_fill(w, a);
	sb_rw16_cdb(cdb, 0x8A, a->lba, (uint32_t)a->n); /* WRITE(16), SBC-4 5.42 */
	return sgio(w->g->fd, cdb, 16, SG_DXFER_TO_DEV, a->buf, (unsigned)(a->n * BS), what, wlen);
}

static int do_write(struct worker *w, uint8_t *buf, uint64_t lba, uint64_t n, bool sd)
{
	uint64_t id = w->next++;
	struct wr_arg a = {.buf = buf, .lba = lba, .n = n, .id = id};
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
		"       ackgen verify [--kills FILE | --cuts N] [--gens G1,G2,...] [--acked MARKS]\n"
		"              --lun L=/dev/sdX|FILE... LOG...\n"
		"       ackgen relay SOCKET FILE\n"
		"       ackgen busy --run R --gens G1,G2,... LOG...\n"
		"         (--log: a file, or a virtio-serial port to an ackgen relay on the host)\n");
	return 2;
}

/* The end of a generator: the receipts of its last records (relay), then rc. */
static int log_finish(struct gen *g, int rc)
{
	if (g->relay && log_drain(g)) {
		perror("ackgen: log");
		return 4;
	}
	return rc;
}

/* Whether fd is a virtio-serial port (its char device's sysfs class is virtio-ports). */
static bool is_virtio_port(int fd)
{
	struct stat st;
	char path[96], link[256];
	if (fd < 0 || fstat(fd, &st) || !S_ISCHR(st.st_mode))
		return false;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/subsystem", major(st.st_rdev), minor(st.st_rdev));
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	const char *base = strrchr(link, '/');
	return base && !strcmp(base + 1, "virtio-ports");
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
	g.logfd = open(g.log, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	g.relay = is_virtio_port(g.logfd);
	pthread_mutex_init(&g.loglk, NULL);
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
				return log_finish(&g, 3);
		}
		return log_finish(&g, w[0].rc);
	}
	if (!strcmp(g.kind, "fill")) { /* the whole range once, 256 KiB at a time */
		uint8_t *buf;
		if (posix_memalign((void **)&buf, 4096, MAX_IO * BS))
			return 2;
		for (uint64_t o = 0; o < g.blocks && w[0].rc == 0; o += MAX_IO)
			do_write(&w[0], buf, g.lba + o, g.blocks - o < MAX_IO ? g.blocks - o : MAX_IO, true);
		free(buf);
		return log_finish(&g, w[0].rc);
	}
	for (unsigned i = 0; i < g.threads; i++)
		if (pthread_create(&th[i], NULL, run_worker, &w[i]))
			return 2;
	int rc = 0;
	for (unsigned i = 0; i < g.threads; i++) {
		pthread_join(th[i], NULL);
		rc = rc ? rc : w[i].rc;
	}
	return log_finish(&g, rc);
}

/* ---- the oracle ---- */

enum { X_NONE, X_ZERO, X_PAT, X_COUNTER };
struct exp {
	uint8_t kind;
	uint32_t alt;        /* other contents the sector may hold (o->alts[alt]); 0: none */
	uint64_t h, id, lba; /* X_PAT: the pattern (h, id, lba) */
};
/*
 * What a command that was in flight at a power cut (an S without an A) may
 * have left: per sector the old content or the command's. A sector's
 * alternatives are a set shared by the sectors of one command: a pattern is
 * kept relative to the sector (delta = pattern LBA - sector LBA, constant over
 * a write or a copy), so one set serves a whole range. Sets are never changed
 * once made (copy on add): a copy of a sector's expectation may share it.
 */
#define MAX_ALTS 6
struct alt {
	uint8_t kind;
	uint64_t h, id;
	int64_t delta;
};
struct altset {
	unsigned n;
	bool over; /* more alternatives than MAX_ALTS: the sector is not checked */
	struct alt v[MAX_ALTS];
};
struct lun {
	char name[16];
	const char *dev;
	struct exp *e;
	uint64_t n; /* sectors tracked */
};
struct counter {
	char lun[16];
	uint64_t lba, ok, unknown, mc;
};
struct span { /* one command of one tag: submitted at s, answered at a (0: never) */
	char tag[64];
	char op;
	uint64_t s, a, id;
	/* from the S record (a power-cut log): what the command does */
	bool what;
	char lun[16], srclun[16];
	uint64_t lba, n, srclba;
	bool inflight; /* no answer before the next command of its tag or the end of its log */
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
	struct altset *alts; /* [0] unused */
	size_t nalts, capalts;
	unsigned long inflight, unchecked, altheld;
	/* --acked: the marked commands (tag hash, id), sorted; the tags already past
	 * their first unmarked command */
	struct ack { uint64_t h, id; } *ack;
	size_t nack;
	bool acked_mode;
	uint64_t cut[64];
	unsigned ncut;
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
			if (!e)
				return NULL;
			memset(e + l->n, 0, (n - l->n) * sizeof(*e));
			l->e = e;
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

static struct alt alt_of(const struct exp *e, uint64_t lba)
{
	if (e->kind == X_PAT)
		return (struct alt){X_PAT, e->h, e->id, (int64_t)(e->lba - lba)};
	return (struct alt){.kind = e->kind};
}

static bool alt_has(const struct altset *a, const struct alt *v)
{
	for (unsigned i = 0; i < a->n; i++)
		if (a->v[i].kind == v->kind && a->v[i].h == v->h && a->v[i].id == v->id &&
		    a->v[i].delta == v->delta)
			return true;
	return false;
}

static void alt_add(struct altset *a, struct alt v)
{
	if (v.kind != X_ZERO && v.kind != X_PAT)
		return; /* nothing known to check (X_NONE) or not data (X_COUNTER) */
	if (alt_has(a, &v))
		return;
	if (a->n == MAX_ALTS)
		a->over = true;
	else
		a->v[a->n++] = v;
}

/*
 * A new set: the alternatives of `keep` (a set of this sector; 0 none), those
 * of `from` (a source sector's set, 0 none) shifted by `shift` (source LBA -
 * this LBA) and `extra` (kind X_NONE: nothing). Returns its index, 0 if it
 * would be empty, -1 without memory. `cache` remembers the last call of one
 * command: its sectors mostly share the same inputs and so the same set.
 */
struct alt_cache {
	bool valid;
	uint32_t keep, from, out;
	struct alt extra;
};

static int64_t alt_make(struct oracle *o, uint32_t keep, uint32_t from, int64_t shift, struct alt extra,
			struct alt_cache *cache)
{
	if (cache->valid && cache->keep == keep && cache->from == from && cache->extra.kind == extra.kind &&
	    cache->extra.h == extra.h && cache->extra.id == extra.id && cache->extra.delta == extra.delta)
		return cache->out;
	struct altset a = {0};
	if (keep)
		a = o->alts[keep];
	if (from) {
		const struct altset *f = &o->alts[from];
		for (unsigned i = 0; i < f->n; i++) {
			struct alt v = f->v[i];
			v.delta += v.kind == X_PAT ? shift : 0;
			alt_add(&a, v);
		}
		a.over |= f->over;
	}
	alt_add(&a, extra);
	uint32_t idx = 0;
	if (a.n || a.over) {
		if (o->nalts == o->capalts) {
			size_t n = o->capalts ? 2 * o->capalts : 1024;
			struct altset *p = realloc(o->alts, n * sizeof(*p));
			if (!p)
				return -1;
			o->alts = p;
			o->capalts = n;
			if (!o->nalts)
				o->nalts = 1; /* index 0 means none */
		}
		idx = (uint32_t)o->nalts;
		o->alts[o->nalts++] = a;
	}
	*cache = (struct alt_cache){true, keep, from, idx, extra};
	return idx;
}

/* The effect of a command with no answer in the logs (in flight at a power
 * cut): each sector it names may hold its old content or the command's; a
 * COMPARE AND WRITE has an unknown outcome. */
static int in_flight(struct oracle *o, struct span *sp)
{
	sp->inflight = true;
	if (!sp->what || sp->op == 'r')
		return 0;
	o->inflight++;
	struct lun *l = lun_get(o, sp->lun, sp->lba + sp->n);
	if (!l)
		return -1;
	if (sp->op == 'c') {
		struct counter *c = ctr_get(o, sp->lun, sp->lba);
		if (!c)
			return -1;
		c->unknown++;
		l->e[sp->lba].kind = X_COUNTER;
		return 0;
	}
	struct lun *src = NULL;
	if (sp->op == 'x' && (!(src = lun_get(o, sp->srclun, sp->srclba + sp->n)) ||
			      !(l = lun_get(o, sp->lun, sp->lba + sp->n))))
		return -1;
	struct alt_cache cache = {0};
	uint64_t h = tag_hash(sp->tag);
	for (uint64_t i = 0; i < sp->n; i++) {
		struct exp *e = &l->e[sp->lba + i];
		int64_t a;
		if (sp->op == 'x') {
			const struct exp *se = &src->e[sp->srclba + i];
			a = alt_make(o, e->alt, se->alt, (int64_t)sp->srclba - (int64_t)sp->lba,
				     alt_of(se, sp->lba + i), &cache);
		} else {
			struct alt v = sp->op == 'w' ? (struct alt){X_PAT, h, sp->id, 0} : (struct alt){.kind = X_ZERO};
			a = alt_make(o, e->alt, 0, 0, v, &cache);
		}
		if (a < 0)
			return -1;
		e->alt = (uint32_t)a;
	}
	return 0;
}

/* A command with no answer in the logs: in flight (a power cut or kill took
 * it), except with --acked, whose logs end with every generator done (the
 * marks, not the logs, say what was acknowledged at a point): there it is an
 * incomplete log, refused. */
static int unanswered(struct oracle *o, struct span *sp, const char *path)
{
	if (o->acked_mode) {
		fprintf(stderr, "%s: %s command %" PRIu64 " has no answer: --acked needs complete logs\n",
			path, sp->tag, sp->id);
		return -1;
	}
	return in_flight(o, sp);
}

static int replay(struct oracle *o, const char *path)
{
	size_t first = o->nsp; /* this log's commands (a tag logs to one file) */
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
		int k = sscanf(line, "S %63s %" SCNu64 " %" SCNu64 " %c %15s %" SCNu64 " %" SCNu64 " %15s %" SCNu64,
			       tag, &id, &t, &op, lun, &lba, &n, srclun, &srclba);
		if (k == 3 || k == 9) {
			for (size_t i = o->nsp; i-- > first;) /* the tag's previous command */
				if (!strcmp(o->sp[i].tag, tag)) {
					if (!o->sp[i].a && !o->sp[i].inflight && unanswered(o, &o->sp[i], path) < 0) {
						fclose(f);
						return -1;
					}
					break;
				}
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
			s->id = id;
			s->inflight = false;
			s->what = k == 9;
			s->op = s->what ? op : '?';
			if (s->what) {
				snprintf(s->lun, sizeof(s->lun), "%s", lun);
				snprintf(s->srclun, sizeof(s->srclun), "%s", srclun);
				s->lba = lba;
				s->n = n;
				s->srclba = srclba;
			}
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
			continue; /* submitted after the point */
		if (cls == 1) { /* answered, but not marked at the point: in flight there */
			struct span q = {.op = op, .id = id, .what = true, .lba = lba, .n = n, .srclba = srclba};
			snprintf(q.tag, sizeof(q.tag), "%s", tag);
			snprintf(q.lun, sizeof(q.lun), "%s", lun);
			snprintf(q.srclun, sizeof(q.srclun), "%s", srclun);
			if (in_flight(o, &q) < 0) {
				fclose(f);
				return -1;
			}
			continue;
		}
		o->acked++;
		if (op == 'x') {
			struct lun *s = lun_get(o, srclun, srclba + n);
			if (!s)
				return -1;
			l = lun_get(o, lun, lba + n); /* (s may have moved l's table when they are one) */
			memmove(&l->e[lba], &s->e[srclba], n * sizeof(struct exp));
			struct alt_cache cache = {0};
			for (uint64_t i = 0; i < n; i++) /* the copied alternatives: relative to the new LBA */
				if (l->e[lba + i].alt) {
					int64_t a = alt_make(o, 0, l->e[lba + i].alt, (int64_t)srclba - (int64_t)lba,
							     (struct alt){.kind = X_NONE}, &cache);
					if (a < 0)
						return -1;
					l->e[lba + i].alt = (uint32_t)a;
				}
			continue;
		}
		for (uint64_t i = 0; i < n; i++)
			l->e[lba + i] = op == 'w' ? (struct exp){X_PAT, 0, h, id, lba + i}
						  : (struct exp){.kind = X_ZERO};
	}
	fclose(f);
	for (size_t i = first; i < o->nsp; i++) /* unanswered at the end of the log */
		if (!o->sp[i].a && !o->sp[i].inflight && unanswered(o, &o->sp[i], path) < 0)
			return -1;
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
			if (e->kind == X_ZERO)
				memset(want, 0, BS);
			else
				pattern(want, e->h, e->id, e->lba);
			bool match = !memcmp(got, want, BS);
			if (!match && e->alt) { /* a command in flight at a cut may have left its content */
				const struct altset *a = &o->alts[e->alt];
				if (a->over) {
					o->unchecked++;
					(*checked)--;
					continue;
				}
				for (unsigned k = 0; k < a->n && !match; k++) {
					if (a->v[k].kind == X_ZERO)
						memset(want, 0, BS);
					else
						pattern(want, a->v[k].h, a->v[k].id, (uint64_t)((int64_t)(base + i) + a->v[k].delta));
					match = !memcmp(got, want, BS);
				}
				o->altheld += match;
			}
			if (!match) {
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

/* Whether span s was open at event `at`: for a kill (K instant), submitted before
 * it and not answered by then; for a power cut (run number), a command of that
 * run left without an answer. */
static bool open_at_kill(const struct span *s, uint64_t tk)
{
	return s->s < tk && (s->a == 0 || s->a > tk);
}

static bool open_at_cut(const struct span *s, uint64_t run)
{
	return s->inflight && s->id >> 32 == run;
}

/* One line per event: which generators (tags up to '/') had a command open at it
 * (and of which ops). The event counts when every generator did. */
static void report_event(const struct oracle *o, char gens[][64], unsigned ng, const char *what,
			 unsigned c, bool (*open)(const struct span *, uint64_t), uint64_t at,
			 unsigned *counted, unsigned *events)
{
	char idle[512] = "", busy[1024] = "";
	unsigned nidle = 0;
	for (unsigned j = 0; j < ng; j++) {
		size_t gl = strlen(gens[j]);
		char ops[16] = "";
		for (size_t i = 0; i < o->nsp; i++) {
			const struct span *s = &o->sp[i];
			if (strncmp(s->tag, gens[j], gl) || (s->tag[gl] && s->tag[gl] != '/'))
				continue;
			if (open(s, at) && strlen(ops) < sizeof(ops) - 1 && !strchr(ops, s->op))
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
	(*events)++;
	*counted += nidle == 0;
	printf("%s %u: %s; unanswered at the %s:%s%s%s\n", what, c, nidle ? "does not count" : "counts",
	       what, busy, nidle ? "; idle:" : "", idle);
}

unsigned parse_gens(const char *list, char gens[32][64])
{
	unsigned ng = 0;
	for (const char *p = list; *p && ng < 32;) {
		size_t n = strcspn(p, ",");
		snprintf(gens[ng++], 64, "%.*s", (int)n, p);
		p += n + (p[n] == ',');
	}
	return ng;
}

/* Per kill (K lines of the kills file) and per power cut (runs 1..cuts). */
static int report_events(struct oracle *o, const char *kills, unsigned cuts, const char *list,
			 unsigned *counted, unsigned *events)
{
	char gens[32][64];
	unsigned ng = parse_gens(list, gens);
	for (unsigned r = 1; r <= cuts; r++)
		report_event(o, gens, ng, "cut", r, open_at_cut, r, counted, events);
	if (!kills)
		return 0;
	FILE *f = fopen(kills, "r");
	if (!f) {
		perror(kills);
		return -1;
	}
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		unsigned c;
		uint64_t tk;
		if (sscanf(line, "K %u %" SCNu64, &c, &tk) == 2)
			report_event(o, gens, ng, "kill", c, open_at_kill, tk, counted, events);
	}
	fclose(f);
	return 0;
}

/* verify_main with the oracle's memory owned by the caller (freed on every path). */
static int verify_with(struct oracle *o, int argc, char **argv)
{
	const char *kills = NULL, *gens = "";
	unsigned cuts = 0; /* power cuts: runs 1..cuts each ended by one */
	int i = 0;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--kills") && i + 1 < argc) {
			kills = argv[++i];
		} else if (!strcmp(argv[i], "--cuts") && i + 1 < argc) {
			cuts = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--gens") && i + 1 < argc) {
			gens = argv[++i];
		} else if (!strcmp(argv[i], "--acked") && i + 1 < argc) {
			if (load_acked(o, argv[++i]) < 0)
				return 2;
		} else if (!strcmp(argv[i], "--lun") && i + 1 < argc && o->nluns < MAX_LUNS) {
			char *eq = strchr(argv[++i], '=');
			if (!eq)
				return usage();
			struct lun *l = &o->luns[o->nluns++];
			snprintf(l->name, sizeof(l->name), "%.*s", (int)(eq - argv[i]), argv[i]);
			l->dev = eq + 1;
		} else
			break;
	}
	if (i == argc || !o->nluns)
		return usage();
	if (kills) {
		FILE *f = fopen(kills, "r");
		char line[256];
		unsigned c;
		if (!f) {
			perror(kills);
			return 2;
		}
		while (fgets(line, sizeof(line), f) && o->nkill < 256)
			if (sscanf(line, "K %u %" SCNu64, &c, &o->kill[o->nkill]) == 2)
				o->nkill++;
		fclose(f);
	}
	for (; i < argc; i++)
		if (replay(o, argv[i]) < 0)
			return 2;
	unsigned counted = 0, cycles = 0;
	if ((kills || cuts) && report_events(o, kills, cuts, gens, &counted, &cycles) < 0)
		return 2;
	unsigned long checked = 0;
	int bad = 0;
	for (unsigned j = 0; j < o->nluns; j++) {
		int b = check_lun(o, &o->luns[j], &checked);
		if (b < 0)
			return 2;
		bad += b;
	}
	if (o->acked_mode)
		printf("%lu marked commands (of %zu marks), %lu in flight (%lu of their sectors held the new bytes), ",
		       o->acked, o->nack, o->inflight, o->altheld);
	if (cuts)
		printf("%lu commands in flight at the cuts (their sectors may hold old or new content: "
		       "%lu sectors hold the new), %lu sectors not checked (too many alternatives)\n",
		       o->inflight, o->altheld, o->unchecked);
	printf("%lu data commands acknowledged (%lu attempts failed and were re-issued), %lu sectors "
	       "checked, %d wrong; %u of %u %s count\n",
	       o->acked, o->failed, checked, bad, counted, cycles, cuts ? "cuts" : "kills");
	return bad ? 1 : 0;
}

static void oracle_free(struct oracle *o)
{
	for (unsigned j = 0; j < o->nluns; j++)
		free(o->luns[j].e);
	free(o->sp);
	free(o->alts);
	free(o->ack);
}

static int verify_main(int argc, char **argv)
{
	struct oracle o = {0};
	int rc = verify_with(&o, argc, argv);
	oracle_free(&o);
	return rc;
}

/* Reads + writes completed and in flight on a block device (its stat and inflight files). */
int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "kill"))
		return ackgen_kill_main(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "now")) {
		printf("%" PRIu64 "\n", now_ns());
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "gen"))
		return gen_main(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "verify"))
		return verify_main(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "relay"))
		return relay_main(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "busy"))
		return busy_main(argc - 2, argv + 2);
	return usage();
}
