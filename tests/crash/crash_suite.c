/*
 * Crash suite: the real engine (ring, dispatch, handlers, pool, journal) on a
 * crash-simulating block device (vblk_crashsim), against an independent
 * in-memory model.
 *
 * How this works: one long seeded workload runs over several volumes of one
 * pool (allocating writes, overwrites, partial-granule writes, 512-byte and
 * 4096-byte volumes, deallocations that free extents for reuse by other
 * volumes, an over-committed pool that answers DATA PROTECT, a journal small
 * enough to wrap and force checkpoints, clean reopens) and, through the ring,
 * UNMAP, WRITE SAME(16) of a zero block (UNMAP bit or not) and COMPARE AND
 * WRITE of one block (its verify data built from the model, so it must
 * succeed, and an acknowledged CAW must survive like any write). Before each crash
 * point the device is armed to lose power at a random write/flush; when it
 * fires, every write not yet durable is dropped, applied or torn at 512-byte
 * sectors, and the pool is recovered (checkpoint + journal replay).
 *
 * The model keeps, per 512-byte sector, the id of the last acknowledged write
 * (0 = zeros) and the id of at most one write in flight (the workload never
 * has two overlapping writes in flight). Every sector's content encodes the
 * id and the sector's address, so after a crash each sector must decode to
 * either its acknowledged id or its in-flight id: an acknowledged write lost,
 * stale data from another volume or garbage all fail. After each recovery
 * the pool's invariants are checked (vpool_verify, the code vaai-check runs),
 * and every CHECK_EVERY points the pool is closed and build/bin/vaai-check
 * is run on the file.
 *
 *   crash_suite [--points N] [--seed S] [--check VAAI_CHECK] [--verbose]
 * A failure prints the seed and the crash point; rerun with that seed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "simhost.h"

#define NVOL 5
#define SECT 512u
#define QD 16
#define NONE UINT32_MAX
#define CHECK_EVERY 100u
#define POOL_SIZE (12u << 20)
#define EXTENT (64u << 10)
#define JOURNAL (640u << 10)
#define READ_CHUNK (1u << 20)

struct vmodel {
	char name[16];
	uint32_t block;
	uint64_t nsect;      /* 512-byte sectors */
	uint32_t *acked;     /* id of the last acknowledged write (0 = zeros) */
	uint32_t *pend;      /* id of the write in flight, NONE, or 0 for a deallocation */
};

struct inflight {
	bool used;
	uint64_t tag;
	int vol;
	uint64_t s0, ns; /* sectors the command changes (UNMAP: whole granules only) */
	uint32_t id;     /* 0: a zeroing command (UNMAP, WRITE SAME zero) */
	uint8_t kind;    /* K_WRITE, K_ZERO, K_CAW */
};
enum { K_WRITE, K_ZERO, K_CAW };

struct suite {
	uint64_t seed, rng;
	unsigned points;
	const char *check_bin;
	bool verbose;
	char path[4096];
	struct simhost *h;
	struct vmodel v[NVOL];
	struct inflight q[QD];
	unsigned nq;
	uint32_t next_id;
	unsigned point;
	uint64_t writes_acked, writes_nospc, deallocs, reopens, sectors_checked, torn_seen;
	uint64_t zeroes_acked, caws_acked;
};

static void fail(struct suite *s, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void fail(struct suite *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "crash_suite: FAIL (seed %" PRIu64 ", crash point %u): ", s->seed, s->point);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fprintf(stderr, "crash_suite: reproduce with: crash_suite --seed %" PRIu64 " --points %u\n",
		s->seed, s->point + 1);
	exit(1);
}

static uint64_t rnd(struct suite *s)
{
	uint64_t z = (s->rng += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}
static uint64_t rnd_below(struct suite *s, uint64_t n) { return n ? rnd(s) % n : 0; }

/* ---- sector contents: id, volume and sector encoded, the rest derived from them */

static void fill_sector(uint8_t *p, uint32_t id, int vol, uint64_t sect)
{
	uint64_t x = ((uint64_t)id << 32) ^ ((uint64_t)vol << 56) ^ sect ^ 0xA5A5A5A5DEADBEEFull;
	memcpy(p, &id, 4);
	uint32_t v32 = (uint32_t)vol;
	memcpy(p + 4, &v32, 4);
	memcpy(p + 8, &sect, 8);
	for (unsigned i = 16; i < SECT; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

/* The id a sector holds: 0 for zeros, the id for a well-formed sector, NONE for garbage. */
static uint32_t decode_sector(const uint8_t *p, int vol, uint64_t sect)
{
	static const uint8_t zero[SECT];
	if (!memcmp(p, zero, SECT))
		return 0;
	uint32_t id;
	memcpy(&id, p, 4);
	uint8_t want[SECT];
	fill_sector(want, id, vol, sect);
	return memcmp(p, want, SECT) ? NONE : id;
}

/* ---- commands */

static void cdb16(uint8_t *cdb, uint8_t op, uint64_t lba, uint32_t n)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	for (int i = 0; i < 8; i++)
		cdb[2 + i] = (uint8_t)(lba >> (56 - 8 * i));
	for (int i = 0; i < 4; i++)
		cdb[10 + i] = (uint8_t)(n >> (24 - 8 * i));
}

/* Complete one in-flight write in the model. */
static void write_done(struct suite *s, struct inflight *f, const struct simhost_result *r)
{
	struct vmodel *m = &s->v[f->vol];
	bool good = r->r.status == 0;
	bool nospc = r->r.status == 2 && r->r.sense_len >= 14 && (r->r.sense[2] & 0xF) == 0x7 &&
		     r->r.sense[12] == 0x27 && r->r.sense[13] == 0x07;
	if (!good && !nospc)
		fail(s, "write vol %d sectors %" PRIu64 "+%" PRIu64 ": status %u sense %02x/%02x/%02x",
		     f->vol, f->s0, f->ns, r->r.status, r->r.sense[2] & 0xF, r->r.sense[12],
		     r->r.sense[13]);
	for (uint64_t i = f->s0; i < f->s0 + f->ns; i++) {
		if (good)
			m->acked[i] = f->id;
		m->pend[i] = NONE;
	}
	if (!good)
		s->writes_nospc++;
	else if (f->kind == K_ZERO)
		s->zeroes_acked++;
	else if (f->kind == K_CAW)
		s->caws_acked++;
	else
		s->writes_acked++;
	f->used = false;
	s->nq--;
}

static struct inflight *find_tag(struct suite *s, uint64_t tag)
{
	for (int i = 0; i < QD; i++)
		if (s->q[i].used && s->q[i].tag == tag)
			return &s->q[i];
	return NULL;
}

/* Reap what completed (waiting up to timeout_ms). */
static void reap(struct suite *s, int timeout_ms)
{
	struct simhost_result r[QD];
	int n = simhost_reap(s->h, r, QD, timeout_ms);
	if (n < 0)
		fail(s, "reap: %s", strerror(-n));
	for (int i = 0; i < n; i++) {
		struct inflight *f = find_tag(s, r[i].tag);
		if (!f)
			fail(s, "completion for an unknown tag %" PRIu64, r[i].tag);
		/* After the power failed, errors are the dead disk's: the write stays "in flight". */
		if (r[i].r.status == 0 || !simhost_crashed(s->h))
			write_done(s, f, &r[i]);
		simhost_result_free(&r[i]);
	}
}

static bool overlaps_inflight(struct suite *s, int vol, uint64_t s0, uint64_t ns)
{
	for (uint64_t i = s0; i < s0 + ns; i++)
		if (s->v[vol].pend[i] != NONE)
			return true;
	return false;
}

/* A random block-aligned range, often not granule-aligned, sometimes spanning extents. */
static void pick_range(struct suite *s, int vol, uint64_t *s0, uint64_t *ns)
{
	struct vmodel *m = &s->v[vol];
	uint64_t per_block = m->block / SECT;
	uint64_t nblocks = m->nsect / per_block;
	uint64_t len;
	switch (rnd_below(s, 4)) {
	case 0: len = 1 + rnd_below(s, 8); break;                        /* partial granule */
	case 1: len = (4096 / m->block) * (1 + rnd_below(s, 4)); break; /* whole granules */
	case 2: len = 1 + rnd_below(s, 256); break;                      /* up to 128 KiB */
	default: len = (EXTENT / m->block) * (1 + rnd_below(s, 2)); break; /* extent-sized */
	}
	if (len > nblocks)
		len = nblocks;
	uint64_t lba = rnd_below(s, nblocks - len + 1);
	if (rnd_below(s, 3) == 0)
		lba -= lba % (4096 / m->block); /* granule-aligned start */
	*s0 = lba * per_block;
	*ns = len * per_block;
}

static void submit_write(struct suite *s)
{
	int vol = (int)rnd_below(s, NVOL);
	struct vmodel *m = &s->v[vol];
	uint64_t s0, ns;
	pick_range(s, vol, &s0, &ns);
	if (overlaps_inflight(s, vol, s0, ns))
		return;
	uint32_t id = s->next_id++;
	uint8_t *buf = malloc(ns * SECT);
	if (!buf)
		fail(s, "out of memory");
	for (uint64_t i = 0; i < ns; i++)
		fill_sector(buf + i * SECT, id, vol, s0 + i);
	uint8_t cdb[16];
	cdb16(cdb, 0x8A, s0 * SECT / m->block, (uint32_t)(ns * SECT / m->block));
	if (rnd_below(s, 4) == 0)
		cdb[1] |= 0x08; /* FUA: accepted, the same as without under WCE=0 */
	uint64_t tag;
	int rc = simhost_submit(s->h, vol, cdb, 16, buf, ns * SECT, 0, &tag);
	free(buf);
	if (rc == -EAGAIN) {
		reap(s, 100);
		return;
	}
	if (rc < 0)
		fail(s, "submit: %s", strerror(-rc));
	struct inflight *f = NULL;
	for (int i = 0; i < QD && !f; i++)
		if (!s->q[i].used)
			f = &s->q[i];
	*f = (struct inflight){.used = true, .tag = tag, .vol = vol, .s0 = s0, .ns = ns, .id = id};
	s->nq++;
	for (uint64_t i = s0; i < s0 + ns; i++)
		m->pend[i] = id;
}

/* Queue one command changing sectors [s0, s0+ns) of vol to id (0: zeros). */
static void track(struct suite *s, int vol, uint64_t tag, uint64_t s0, uint64_t ns, uint32_t id,
		  uint8_t kind)
{
	struct inflight *f = NULL;
	for (int i = 0; i < QD && !f; i++)
		if (!s->q[i].used)
			f = &s->q[i];
	*f = (struct inflight){.used = true, .tag = tag, .vol = vol, .s0 = s0, .ns = ns, .id = id,
			       .kind = kind};
	s->nq++;
	for (uint64_t i = s0; i < s0 + ns; i++)
		s->v[vol].pend[i] = id;
}

/* UNMAP (SBC-4 5.31) or WRITE SAME(16) of a zero block (5.49), UNMAP bit or not. */
static void submit_zero(struct suite *s)
{
	int vol = (int)rnd_below(s, NVOL);
	struct vmodel *m = &s->v[vol];
	uint64_t s0, ns;
	pick_range(s, vol, &s0, &ns);
	if (overlaps_inflight(s, vol, s0, ns))
		return;
	bool unmap_cmd = rnd_below(s, 2);
	uint64_t lba = s0 * SECT / m->block;
	uint32_t nb = (uint32_t)(ns * SECT / m->block);
	uint8_t cdb[16] = {0};
	uint8_t out[4096] = {0}; /* one zero block (up to 4096 bytes), or the UNMAP list */
	size_t out_len, cdb_len = 16;
	uint64_t a = s0, b = s0 + ns;
	if (unmap_cmd) {
		/* UNMAP changes whole 4 KiB granules only; partial ones keep their data */
		uint64_t g_sect = VPOOL_GRANULE / SECT;
		a = (s0 + g_sect - 1) / g_sect * g_sect;
		b = (s0 + ns) / g_sect * g_sect;
		if (b < a)
			b = a;
		cdb[0] = 0x42;
		cdb[8] = 24;
		cdb_len = 10;
		out[1] = 22;
		out[3] = 16;
		for (int i = 0; i < 8; i++)
			out[8 + i] = (uint8_t)(lba >> (56 - 8 * i));
		for (int i = 0; i < 4; i++)
			out[16 + i] = (uint8_t)(nb >> (24 - 8 * i));
		out_len = 24;
	} else {
		cdb16(cdb, 0x93, lba, nb);
		if (rnd_below(s, 2))
			cdb[1] |= 0x08; /* UNMAP bit */
		out_len = m->block;
	}
	uint64_t tag;
	int rc = simhost_submit(s->h, vol, cdb, cdb_len, out, out_len, 0, &tag);
	if (rc == -EAGAIN) {
		reap(s, 100);
		return;
	}
	if (rc < 0)
		fail(s, "submit: %s", strerror(-rc));
	track(s, vol, tag, a, b - a, 0, K_ZERO);
}

/* COMPARE AND WRITE (SBC-4 5.3) of one block whose current data the model knows. */
static void submit_caw(struct suite *s)
{
	int vol = (int)rnd_below(s, NVOL);
	struct vmodel *m = &s->v[vol];
	uint64_t per_block = m->block / SECT;
	uint64_t lba = rnd_below(s, m->nsect / per_block), s0 = lba * per_block;
	if (overlaps_inflight(s, vol, s0, per_block))
		return;
	uint32_t id = s->next_id++;
	uint8_t *buf = calloc(2, m->block);
	if (!buf)
		fail(s, "out of memory");
	for (uint64_t i = 0; i < per_block; i++) {
		if (m->acked[s0 + i])
			fill_sector(buf + i * SECT, m->acked[s0 + i], vol, s0 + i);
		fill_sector(buf + m->block + i * SECT, id, vol, s0 + i);
	}
	uint8_t cdb[16] = {0x89};
	for (int i = 0; i < 8; i++)
		cdb[2 + i] = (uint8_t)(lba >> (56 - 8 * i));
	cdb[13] = 1;
	uint64_t tag;
	int rc = simhost_submit(s->h, vol, cdb, 16, buf, 2 * m->block, 0, &tag);
	free(buf);
	if (rc == -EAGAIN) {
		reap(s, 100);
		return;
	}
	if (rc < 0)
		fail(s, "submit: %s", strerror(-rc));
	track(s, vol, tag, s0, per_block, id, K_CAW);
}

/* Deallocate a range through the pool (synchronous); in flight meanwhile as "may be zero". */
static void deallocate(struct suite *s)
{
	int vol = (int)rnd_below(s, NVOL);
	struct vmodel *m = &s->v[vol];
	uint64_t s0, ns;
	pick_range(s, vol, &s0, &ns);
	if (rnd_below(s, 2)) { /* whole extents, to return space to the pool */
		uint64_t per_ext = EXTENT / SECT;
		s0 -= s0 % per_ext;
		ns = per_ext * (1 + rnd_below(s, 3));
		if (s0 + ns > m->nsect)
			ns = m->nsect - s0;
	}
	if (overlaps_inflight(s, vol, s0, ns))
		return;
	/* Only whole 4 KiB granules change; partial ones keep their data. */
	uint64_t g_sect = VPOOL_GRANULE / SECT;
	uint64_t a = (s0 + g_sect - 1) / g_sect * g_sect, b = (s0 + ns) / g_sect * g_sect;
	for (uint64_t i = a; i < b; i++)
		m->pend[i] = 0;
	int rc = simhost_deallocate(s->h, m->name, s0 * SECT, ns * SECT);
	if (rc < 0 && simhost_crashed(s->h))
		return; /* stays "may be zero" until the check after recovery */
	if (rc < 0)
		fail(s, "deallocate %s %" PRIu64 "+%" PRIu64 ": %s", m->name, s0, ns, strerror(-rc));
	for (uint64_t i = a; i < b; i++) {
		m->acked[i] = 0;
		m->pend[i] = NONE;
	}
	s->deallocs++;
}

/* ---- checking */

static void check_volume(struct suite *s, int vol)
{
	struct vmodel *m = &s->v[vol];
	for (uint64_t s0 = 0; s0 < m->nsect; s0 += READ_CHUNK / SECT) {
		uint64_t ns = m->nsect - s0 < READ_CHUNK / SECT ? m->nsect - s0 : READ_CHUNK / SECT;
		uint8_t cdb[16];
		cdb16(cdb, 0x88, s0 * SECT / m->block, (uint32_t)(ns * SECT / m->block));
		uint64_t tag;
		int rc = simhost_submit(s->h, vol, cdb, 16, NULL, 0, ns * SECT, &tag);
		if (rc < 0)
			fail(s, "read submit: %s", strerror(-rc));
		struct simhost_result r;
		int n = simhost_reap(s->h, &r, 1, 60000);
		if (n != 1 || r.tag != tag)
			fail(s, "read of %s did not complete", m->name);
		if (r.r.status != 0 || r.r.data_in_len != ns * SECT)
			fail(s, "read %s at sector %" PRIu64 ": status %u sense %02x/%02x/%02x len %zu",
			     m->name, s0, r.r.status, r.r.sense[2] & 0xF, r.r.sense[12], r.r.sense[13],
			     r.r.data_in_len);
		for (uint64_t i = 0; i < ns; i++) {
			uint64_t sect = s0 + i;
			uint32_t got = decode_sector(r.r.data_in + i * SECT, vol, sect);
			uint32_t want = m->acked[sect], alt = m->pend[sect];
			if (got != want && got != alt)
				fail(s, "%s sector %" PRIu64 ": holds %s %u, expected write %u%s%u",
				     m->name, sect, got == NONE ? "garbage, not write" : "write",
				     got == NONE ? 0 : got, want, alt == NONE ? "" : " or ",
				     alt == NONE ? 0 : alt);
			if (alt != NONE && got == alt && alt != want)
				s->torn_seen++;
			m->acked[sect] = got;
			m->pend[sect] = NONE;
		}
		s->sectors_checked += ns;
		simhost_result_free(&r);
	}
}

static void check_all(struct suite *s, const char *when)
{
	for (int i = 0; i < NVOL; i++)
		check_volume(s, i);
	int problems = simhost_verify(s->h, stderr);
	if (problems != 0)
		fail(s, "pool invariants violated after %s (%d problems, listed above)", when, problems);
}

static void exec_check(struct suite *s)
{
	pid_t pid = fork();
	if (pid == 0) {
		execl(s->check_bin, s->check_bin, s->path, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail(s, "%s %s failed (status %d)", s->check_bin, s->path, st);
}

/* Close cleanly, run vaai-check on the file, open again. */
static void run_vaai_check(struct suite *s)
{
	if (!s->check_bin)
		return;
	int rc = simhost_close(s->h);
	s->h = NULL;
	if (rc < 0)
		fail(s, "clean close: %s", strerror(-rc));
	exec_check(s);
	char err[512];
	rc = simhost_open_pool(s->path, SIMHOST_IO_CRASHSIM, s->seed + s->point, &s->h, err,
			       sizeof(err));
	if (rc < 0)
		fail(s, "reopen after vaai-check: %s", err);
	for (int i = 0; i < NVOL; i++)
		if (simhost_attach(s->h, s->v[i].name, i) < 0)
			fail(s, "attach %s", s->v[i].name);
}

/* ---- setup and the main loop */

static void setup(struct suite *s)
{
	const char *tmp = getenv("VAAID_TEST_TMP");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	mkdir(tmp, 0755);
	snprintf(s->path, sizeof(s->path), "%s/crash_suite.%d.pool", tmp, (int)getpid());
	unlink(s->path);
	struct vpool_params prm = {.extent_size = EXTENT, .journal_size = JOURNAL};
	char err[512];
	int rc = simhost_create_pool(s->path, POOL_SIZE, &prm, SIMHOST_IO_CRASHSIM, s->seed, &s->h,
				     err, sizeof(err));
	if (rc < 0)
		fail(s, "create pool: %s", err);
	/* 15 MiB of volumes on a pool with 11 MiB of capacity: thin and over-committed,
	 * so allocating writes meet DATA PROTECT and must change nothing. */
	static const uint32_t mib[NVOL] = {4, 4, 3, 2, 2};
	for (int i = 0; i < NVOL; i++) {
		struct vmodel *m = &s->v[i];
		snprintf(m->name, sizeof(m->name), "vol%d", i);
		m->block = i == 2 ? 4096 : 512;
		m->nsect = (uint64_t)mib[i] << 20 >> 9;
		m->acked = calloc(m->nsect, sizeof(uint32_t));
		m->pend = malloc(m->nsect * sizeof(uint32_t));
		if (!m->acked || !m->pend)
			fail(s, "out of memory");
		memset(m->pend, 0xFF, m->nsect * sizeof(uint32_t));
		rc = simhost_volume_create(s->h, m->name, (uint64_t)mib[i] << 20, m->block);
		if (rc == 0)
			rc = simhost_attach(s->h, m->name, i);
		if (rc < 0)
			fail(s, "volume %s: %s", m->name, strerror(-rc));
	}
	s->next_id = 1;
}

/* A clean reopen (checkpoint on close, recovery without replay), keeping the armed crash. */
static void clean_reopen(struct suite *s, uint64_t target)
{
	uint64_t done = simhost_io_ops(s->h);
	int rc = simhost_arm_crash(s->h, 0);
	if (rc == 0)
		rc = simhost_reopen(s->h);
	if (rc < 0)
		fail(s, "clean reopen: %s", strerror(-rc));
	if (rc == 0 && target > done)
		rc = simhost_arm_crash(s->h, target - done);
	if (rc < 0)
		fail(s, "arm: %s", strerror(-rc));
	s->reopens++;
}

static void one_point(struct suite *s)
{
	uint64_t target = 1 + rnd_below(s, rnd_below(s, 4) == 0 ? 2000 : 300);
	int rc = simhost_arm_crash(s->h, target);
	if (rc < 0)
		fail(s, "arm: %s", strerror(-rc));
	unsigned steps = 0;
	while (!simhost_crashed(s->h)) {
		if (++steps > 1000000)
			fail(s, "the armed crash (%" PRIu64 " I/Os) never fired", target);
		unsigned what = (unsigned)rnd_below(s, 100);
		if (s->nq >= QD || what < 30)
			reap(s, s->nq >= QD ? 50 : 0);
		else if (what < 82)
			submit_write(s);
		else if (what < 88)
			submit_zero(s);
		else if (what < 92)
			submit_caw(s);
		else if (what < 99)
			deallocate(s);
		else if (s->nq == 0)
			clean_reopen(s, target);
	}
	/* Power is gone: commands in flight never complete; recover. */
	rc = simhost_crash(s->h);
	if (rc < 0)
		fail(s, "recovery after the crash failed: %s", strerror(-rc));
	for (int i = 0; i < QD; i++)
		s->q[i].used = false;
	s->nq = 0;
	check_all(s, "recovery");
}

int main(int argc, char **argv)
{
	struct suite s = {.points = 1000, .seed = 1};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--points") && i + 1 < argc)
			s.points = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			s.seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--check") && i + 1 < argc)
			s.check_bin = argv[++i];
		else if (!strcmp(argv[i], "--verbose"))
			s.verbose = true;
		else {
			fprintf(stderr, "usage: crash_suite [--points N] [--seed S] [--check VAAI_CHECK] [--verbose]\n");
			return 2;
		}
	}
	const char *env = getenv("VAAID_CRASH_POINTS");
	if (env && *env)
		s.points = (unsigned)strtoul(env, NULL, 0);
	s.rng = s.seed;
	setup(&s);
	for (s.point = 0; s.point < s.points; s.point++) {
		one_point(&s);
		if ((s.point + 1) % CHECK_EVERY == 0)
			run_vaai_check(&s);
		if (s.verbose)
			fprintf(stderr, "point %u ok\n", s.point);
	}
	int rc = simhost_close(s.h);
	if (rc < 0)
		fail(&s, "final close: %s", strerror(-rc));
	if (s.check_bin)
		exec_check(&s);
	unlink(s.path);
	printf("crash_suite: %u crash points passed (seed %" PRIu64 "): %" PRIu64
	       " writes acknowledged, %" PRIu64 " refused for space, %" PRIu64
	       " deallocations, %" PRIu64 " clean reopens, %" PRIu64
	       " sectors checked, %" PRIu64 " sectors found holding unacknowledged data; %" PRIu64
	       " UNMAP/WRITE SAME zero and %" PRIu64 " COMPARE AND WRITE acknowledged\n",
	       s.points, s.seed, s.writes_acked, s.writes_nospc, s.deallocs, s.reopens,
	       s.sectors_checked, s.torn_seen, s.zeroes_acked, s.caws_acked);
	/* The workload must have exercised what it claims to (a suite that cannot fail is no test). */
	if (s.points >= 100 && (!s.writes_nospc || !s.deallocs || !s.reopens || !s.torn_seen ||
				!s.zeroes_acked || !s.caws_acked))
		fail(&s, "the workload did not exercise out-of-space, deallocation, clean reopens "
			 "and unacknowledged data all at once; widen it");
	for (int i = 0; i < NVOL; i++) {
		free(s.v[i].acked);
		free(s.v[i].pend);
	}
	/* The suite must have exercised what it claims to. */
	if (!s.writes_acked || !s.deallocs || !s.torn_seen) {
		fprintf(stderr, "crash_suite: workload too weak: acked %" PRIu64 " deallocs %" PRIu64
				" unacked-present %" PRIu64 "\n",
			s.writes_acked, s.deallocs, s.torn_seen);
		return 1;
	}
	return 0;
}
