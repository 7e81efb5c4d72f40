/*
 * replay-log: replay a dm-log-writes log onto a device or file, stopping at
 * chosen points to run a check there (tests/vm/t_log_writes.sh; the lost
 * volatile cache test of docs/durability.md).
 *
 * How it works. dm-log-writes (the kernel's drivers/md/dm-log-writes.c,
 * Documentation/admin-guide/device-mapper/log-writes.rst) logs a write only
 * once it is on stable media: a plain write when a later flush that covers it
 * completes (it is logged just before that flush entry), a FUA write when it
 * completes; marks (`dmsetup message DEV 0 mark NAME`, or ackgen's ioctl) are
 * logged when they are sent. So the log up to any entry is a state the disk
 * may hold after a power cut at that instant: the writes acknowledged by the
 * disk but not yet covered by a flush are not in it (they are lost with the
 * volatile cache). Replaying entries 0..i to a zeroed target gives that state.
 *
 * Log format (little endian): sector 0 holds struct log_write_super (magic,
 * version 1, number of entries, the logged device's logical block size =
 * "sectorsize"); entries follow from byte sectorsize on, each one block of
 * sectorsize holding struct log_write_entry (sector and nr_sectors in
 * sectorsize units, flags, data_len), a mark's name right after it in the same
 * block, then, for a write, nr_sectors blocks of data (a discard has none).
 *
 * Points: the state after each flush entry, and the state at each mark (the
 * last one of a run of marks with no write between them: the same state, with
 * more acknowledgements known). Only points after the mark given with --from
 * are candidates; --points N checks N of them spread evenly over the log (the
 * last one always), 0 = all. At a point the target is made durable
 * (fdatasync), the names of the marks so far are written one a line to
 * --marks FILE, and CMD runs through /bin/sh -c with REPLAY_POINT (1, 2, ...),
 * REPLAY_ENTRY (entries replayed) and REPLAY_KIND (flush or mark) in its
 * environment. A CMD that fails stops the replay (exit 1) unless --keep-going.
 * Discards are replayed as zeros (the loop devices under the test read zeros
 * after a discard).
 *
 * Overlaps: the log does not say when a plain write completed, only which
 * flush covered it, so it puts a plain write after every FUA write that
 * completed before that flush, even one that overwrote the same blocks after
 * the plain write had completed (vaaid does that on a device with FUA: a small
 * write's home write is plain, a later overwrite is RWF_DSYNC = FUA), and the
 * replay would then hold stale blocks no disk would. replay-log cannot tell
 * that order, so it counts the blocks a plain write overwrites after a FUA
 * write of the same flush window ("ambiguous") and says so; the test puts a
 * loop device over the logged device (its queue has no FUA: the block layer
 * turns FUA into a write and a flush) so that no FUA write reaches the log and
 * requires 0 of them, and checks that the replay of the whole log equals the
 * logged device's final contents (cmp).
 *
 * --subsets K (seeded by --seed, printed): at about K of the chosen flush
 * points, first a state where only a random subset of the plain writes that
 * flush covered reached the disk (they were in the volatile cache together
 * and may persist in any order; the marks are those before them), then the
 * point itself.
 * The target holds the state of the last point when replay-log ends.
 *
 * Output: one line per checked point and a summary line
 * "replay-log: N points checked (F failed), E entries, M marks, L flushes".
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vaaid/rng.h"

#define LOG_FLUSH_FLAG (1u << 0)
#define LOG_FUA_FLAG (1u << 1)
#define LOG_DISCARD_FLAG (1u << 2)
#define LOG_MARK_FLAG (1u << 3)
#define WRITE_LOG_VERSION 1u
#define WRITE_LOG_MAGIC 0x6a736677736872ull

struct log_write_super {
	uint64_t magic, version, nr_entries;
	uint32_t sectorsize;
} __attribute__((packed));

struct log_write_entry {
	uint64_t sector, nr_sectors, flags, data_len;
};

struct entry { /* one parsed log entry */
	uint64_t sector, nr, flags, off; /* off: byte offset of its data in the log */
	char *mark;
};

struct opts {
	const char *log, *target, *from, *marks, *cmd;
	unsigned long points, subsets, seed;
	bool keep_going, list;
};

static int usage(void)
{
	fprintf(stderr, "usage: replay-log LOG TARGET [--from MARK] [--points N] [--marks FILE]\n"
			"                  [--check CMD] [--keep-going] [--subsets K --seed S]\n"
			"       replay-log LOG --list\n");
	return 2;
}

static int read_entries(int fd, struct entry **out, uint64_t *n, uint32_t *bs)
{
	struct log_write_super sb;
	if (pread(fd, &sb, sizeof(sb), 0) != (ssize_t)sizeof(sb))
		return -EIO;
	if (sb.magic != WRITE_LOG_MAGIC || sb.version != WRITE_LOG_VERSION || sb.sectorsize < 512 ||
	    sb.sectorsize > 65536 || (sb.sectorsize & (sb.sectorsize - 1))) {
		fprintf(stderr, "replay-log: not a dm-log-writes log (magic %" PRIx64 ", version %" PRIu64
				", sectorsize %u)\n", sb.magic, sb.version, sb.sectorsize);
		return -EINVAL;
	}
	*bs = sb.sectorsize;
	struct entry *e = calloc(sb.nr_entries ? sb.nr_entries : 1, sizeof(*e));
	char *blk = malloc(sb.sectorsize);
	if (!e || !blk)
		return -ENOMEM;
	uint64_t pos = sb.sectorsize;
	for (uint64_t i = 0; i < sb.nr_entries; i++) {
		if (pread(fd, blk, sb.sectorsize, (off_t)pos) != (ssize_t)sb.sectorsize) {
			fprintf(stderr, "replay-log: entry %" PRIu64 " of %" PRIu64 " is past the log's end\n",
				i, sb.nr_entries);
			free(blk);
			free(e);
			return -EIO;
		}
		struct log_write_entry le;
		memcpy(&le, blk, sizeof(le));
		e[i] = (struct entry){.sector = le.sector, .nr = le.nr_sectors, .flags = le.flags,
				      .off = pos + sb.sectorsize};
		pos += sb.sectorsize;
		if (le.flags & LOG_MARK_FLAG) {
			size_t len = le.data_len < sb.sectorsize - sizeof(le) ? le.data_len
									      : sb.sectorsize - sizeof(le);
			e[i].mark = strndup(blk + sizeof(le), len);
		} else if (!(le.flags & LOG_DISCARD_FLAG)) {
			pos += le.nr_sectors * sb.sectorsize;
		}
	}
	free(blk);
	*out = e;
	*n = sb.nr_entries;
	return 0;
}

/* The replay's state: the target, and which of its blocks a FUA write of the
 * current flush window wrote (see "Overlaps" at the top). */
struct rstate {
	int logfd, tfd;
	uint32_t bs;
	char *buf;
	size_t cap;
	uint32_t *fua_win; /* per block: the window of the last FUA write to it (0: none) */
	uint64_t nblocks;
	uint32_t win;      /* flush windows seen, from 1 */
	unsigned long ambiguous; /* blocks a plain write overwrote after a FUA write of its window */
};

static int put(struct rstate *r, uint64_t blk, uint64_t n, const char *data)
{
	size_t len = n * r->bs;
	ssize_t w = pwrite(r->tfd, data, len, (off_t)(blk * r->bs));
	if (w != (ssize_t)len) /* a short write sets no errno */
		return w < 0 ? -errno : -EIO;
	return 0;
}

/* Apply entry e (a write or a discard) to the target. */
static int apply(struct rstate *r, const struct entry *e)
{
	int rc = 0;
	if (!(e->flags & LOG_MARK_FLAG) && e->nr) {
		size_t len = e->nr * r->bs;
		if (e->sector + e->nr > r->nblocks)
			return -ERANGE;
		if (len > r->cap) {
			free(r->buf);
			r->buf = malloc(len);
			r->cap = r->buf ? len : 0;
			if (!r->buf)
				return -ENOMEM;
		}
		if (e->flags & LOG_DISCARD_FLAG)
			memset(r->buf, 0, len);
		else if (pread(r->logfd, r->buf, len, (off_t)e->off) != (ssize_t)len)
			return -EIO;
		for (uint64_t i = 0; i < e->nr; i++) {
			if (e->flags & LOG_FUA_FLAG)
				r->fua_win[e->sector + i] = r->win;
			else
				r->ambiguous += r->fua_win[e->sector + i] == r->win;
		}
		rc = put(r, e->sector, e->nr, r->buf);
	}
	if (e->flags & LOG_FLUSH_FLAG)
		r->win++;
	return rc;
}

static bool is_write(const struct entry *e)
{
	return !(e->flags & LOG_MARK_FLAG) && e->nr;
}

/* Point candidates: indexes i such that the state is entries [0, i). */
static uint64_t *candidates(const struct entry *e, uint64_t n, uint64_t from, uint64_t *nc)
{
	uint64_t *c = malloc((n + 1) * sizeof(*c)), k = 0;
	if (!c)
		return NULL;
	for (uint64_t i = from; i < n; i++) {
		if (e[i].flags & LOG_FLUSH_FLAG)
			c[k++] = i + 1; /* after the flush (and its data, if it carried any) */
		else if ((e[i].flags & LOG_MARK_FLAG) && (i + 1 == n || !(e[i + 1].flags & LOG_MARK_FLAG)))
			c[k++] = i + 1; /* the last mark of a run: its acknowledgements are known */
	}
	*nc = k;
	return c;
}

static int write_marks(const char *path, const struct entry *e, uint64_t upto)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	for (uint64_t i = 0; i < upto; i++)
		if (e[i].mark)
			fprintf(f, "%s\n", e[i].mark);
	return fclose(f) ? -errno : 0;
}

static int run_check(const struct opts *o, unsigned long point, uint64_t entry, const char *kind)
{
	char v[32];
	snprintf(v, sizeof(v), "%lu", point);
	setenv("REPLAY_POINT", v, 1);
	snprintf(v, sizeof(v), "%" PRIu64, entry);
	setenv("REPLAY_ENTRY", v, 1);
	setenv("REPLAY_KIND", kind, 1);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", o->cmd, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int list_main(const struct opts *o)
{
	int fd = open(o->log, O_RDONLY | O_CLOEXEC);
	struct entry *e;
	uint64_t n;
	uint32_t bs;
	if (fd < 0 || read_entries(fd, &e, &n, &bs) < 0) {
		perror(o->log);
		return 1;
	}
	for (uint64_t i = 0; i < n; i++)
		printf("%" PRIu64 " %s%s%s%s sector %" PRIu64 " n %" PRIu64 "%s%s\n", i,
		       e[i].flags & LOG_FLUSH_FLAG ? "F" : "", e[i].flags & LOG_FUA_FLAG ? "U" : "",
		       e[i].flags & LOG_DISCARD_FLAG ? "D" : "", e[i].flags & LOG_MARK_FLAG ? "M" : "W",
		       e[i].sector, e[i].nr, e[i].mark ? " " : "", e[i].mark ? e[i].mark : "");
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {.marks = "/dev/null", .seed = 1};
	int pos = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has = i + 1 < argc;
		if (!strcmp(a, "--from") && has) o.from = argv[++i];
		else if (!strcmp(a, "--points") && has) o.points = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--marks") && has) o.marks = argv[++i];
		else if (!strcmp(a, "--check") && has) o.cmd = argv[++i];
		else if (!strcmp(a, "--subsets") && has) o.subsets = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--seed") && has) o.seed = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--keep-going")) o.keep_going = true;
		else if (!strcmp(a, "--list")) o.list = true;
		else if (a[0] != '-' && pos == 0) { o.log = a; pos++; }
		else if (a[0] != '-' && pos == 1) { o.target = a; pos++; }
		else return usage();
	}
	if (!o.log || (!o.list && !o.target))
		return usage();
	if (o.list)
		return list_main(&o);
	int logfd = open(o.log, O_RDONLY | O_CLOEXEC), tfd = open(o.target, O_WRONLY | O_CLOEXEC);
	if (logfd < 0 || tfd < 0) {
		perror(logfd < 0 ? o.log : o.target);
		return 2;
	}
	struct entry *e;
	uint64_t n, from = 0, nc;
	uint32_t bs;
	int rc = read_entries(logfd, &e, &n, &bs);
	if (rc < 0) {
		fprintf(stderr, "replay-log: %s: %s\n", o.log, strerror(-rc));
		return 2;
	}
	unsigned long marks = 0, flushes = 0;
	for (uint64_t i = 0; i < n; i++) {
		marks += e[i].mark != NULL;
		flushes += (e[i].flags & LOG_FLUSH_FLAG) != 0;
		if (o.from && e[i].mark && !strcmp(e[i].mark, o.from) && !from)
			from = i + 1;
	}
	if (o.from && !from) {
		fprintf(stderr, "replay-log: no mark '%s' in the log\n", o.from);
		return 2;
	}
	uint64_t *c = candidates(e, n, from, &nc);
	if (!c)
		return 2;
	/* choose: all, or N spread evenly (the last always) */
	uint64_t want = o.points && o.points < nc ? o.points : nc, *pick = malloc((want + 1) * sizeof(*pick));
	if (!pick)
		return 2;
	for (uint64_t k = 0; k < want; k++)
		pick[k] = c[nc - 1 - (uint64_t)((double)(want - 1 - k) * (double)(nc - 1) / (double)(want > 1 ? want - 1 : 1))];
	/* subsets: at these flush points (chosen with the seed) */
	uint64_t st = o.seed;
	printf("replay-log: %" PRIu64 " entries, %lu marks, %lu flushes, %" PRIu64 " candidate points from entry %"
	       PRIu64 ", checking %" PRIu64 "%s", n, marks, flushes, nc, from, want,
	       o.subsets ? "" : "\n");
	if (o.subsets)
		printf(", subsets at %lu flush points (seed %lu)\n", o.subsets, o.seed);
	off_t tsize = lseek(tfd, 0, SEEK_END);
	struct rstate r = {.logfd = logfd, .tfd = tfd, .bs = bs, .win = 1,
			   .nblocks = tsize > 0 ? (uint64_t)tsize / bs : 0};
	r.fua_win = calloc(r.nblocks ? r.nblocks : 1, sizeof(*r.fua_win));
	if (!r.fua_win)
		return 2;
	uint64_t done = 0;
	unsigned long point = 0, failed = 0, subsets_left = o.subsets;
	int ret = 0;
	for (uint64_t k = 0; k < want && ret == 0; k++) {
		if (k && pick[k] == pick[k - 1])
			continue;
		uint64_t to = pick[k];
		bool flush = to > 0 && (e[to - 1].flags & LOG_FLUSH_FLAG);
		/* A subset state before an empty flush: the plain writes logged right
		 * before it are the ones it covered (spliced to it at its submission),
		 * in the volatile cache together; any subset of them may be on the disk
		 * if the power goes before the flush completes. Apply everything before
		 * them, then a random subset, check; then the group again in the log's
		 * order (which leaves exactly the state after it) and the flush. */
		if (flush && !e[to - 1].nr && subsets_left &&
		    vrng_next(&st) % (want - k) < subsets_left) {
			subsets_left--;
			uint64_t g0 = to - 1;
			while (g0 > done && is_write(&e[g0 - 1]) && !(e[g0 - 1].flags & (LOG_FUA_FLAG | LOG_FLUSH_FLAG)))
				g0--;
			for (; done < g0 && rc == 0; done++)
				rc = apply(&r, &e[done]);
			unsigned long kept = 0, dropped = 0;
			for (uint64_t i = g0; i + 1 < to && rc == 0; i++) {
				if (vrng_next(&st) & 1) {
					rc = apply(&r, &e[i]);
					kept++;
				} else {
					dropped++;
				}
			}
			if (rc == 0 && dropped) {
				if (fdatasync(tfd) < 0 || (rc = write_marks(o.marks, e, g0)) < 0) {
					fprintf(stderr, "replay-log: %s\n", strerror(rc < 0 ? -rc : errno));
					return 2;
				}
				point++;
				printf("point %lu: entry %" PRIu64 " + %lu of the %lu writes before flush entry %" PRIu64
				       " (subset)\n", point, g0, kept, kept + dropped, to - 1);
				int r = o.cmd ? run_check(&o, point, g0, "subset") : 0;
				if (r) {
					failed++;
					printf("point %lu FAILED (check exit %d)\n", point, r);
					if (!o.keep_going)
						ret = 1;
				}
			}
			for (; done < to && rc == 0; done++)
				rc = apply(&r, &e[done]);
		}
		for (; done < to && rc == 0; done++)
			rc = apply(&r, &e[done]);
		if (rc < 0) {
			fprintf(stderr, "replay-log: entry %" PRIu64 ": %s\n", done, strerror(-rc));
			return 2;
		}
		if (ret)
			break;
		if (fdatasync(tfd) < 0 || (rc = write_marks(o.marks, e, to)) < 0) {
			fprintf(stderr, "replay-log: %s\n", strerror(rc < 0 ? -rc : errno));
			return 2;
		}
		point++;
		printf("point %lu: entry %" PRIu64 " (%s)\n", point, to, flush ? "flush" : "mark");
		if (o.cmd) {
			int r = run_check(&o, point, to, flush ? "flush" : "mark");
			if (r) {
				failed++;
				printf("point %lu FAILED (check exit %d)\n", point, r);
				if (!o.keep_going)
					ret = 1;
			}
		}
	}
	printf("replay-log: %lu points checked (%lu failed), %" PRIu64 " entries, %lu marks, %lu flushes, "
	       "%lu ambiguous blocks (a plain write over a FUA write of its flush window)\n",
	       point, failed, n, marks, flushes, r.ambiguous);
	free(r.buf);
	free(r.fua_win);
	free(pick);
	free(c);
	for (uint64_t i = 0; i < n; i++)
		free(e[i].mark);
	free(e);
	close(logfd);
	close(tfd);
	return failed ? 1 : 0;
}
