/*
 * Unit tests of vblk_uring (src/io/vblk_uring.c) and the synchronous helpers
 * (src/io/blk_sync.c) on files in $VAAID_TEST_TMP: sparse creation with the
 * right size and -EEXIST on a second create, DSYNC write + read back, readv
 * with several iovecs, flush, allocate, grow, argument checks (no callback on
 * a synchronous error), a transfer that runs into EOF (short read continued,
 * then -EIO), an empty file refused at open, stats; the group flush of DSYNC
 * writes (each write's callback only after an fsync prepared once it had
 * completed; fewer fsyncs than writes; RWF_DSYNC per write when turned off).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "vaaid/io.h"

#define MIB (1024u * 1024)

struct env {
	char path[512];
	struct vreactor *r;
	struct vblk *b;
};

struct wait {
	struct vio_op op;
	bool done;
	int res;
};

static void wait_cb(void *arg, int res)
{
	struct wait *w = arg;
	w->res = res;
	w->done = true;
}

static void wait_init(struct wait *w)
{
	memset(w, 0, sizeof(*w));
	vio_op_init(&w->op, wait_cb, w);
}

static int wait_run(struct env *e, struct wait *w)
{
	assert_int_equal(vreactor_run_until(e->r, &w->done), 0);
	return w->res;
}

static void tmp_path(char *buf, size_t len, const char *name)
{
	const char *dir = getenv("VAAID_TEST_TMP");
	if (!dir || !*dir)
		dir = "/tmp";
	mkdir(dir, 0755);
	snprintf(buf, len, "%s/%s.%d", dir, name, (int)getpid());
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	tmp_path(e->path, sizeof(e->path), "test_io_uring.img");
	unlink(e->path);
	assert_int_equal(vreactor_create(32, &e->r), 0);
	assert_int_equal(vblk_uring_open(e->r, e->path, 4 * MIB, &e->b), 0);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	vblk_close(e->b);
	vreactor_destroy(e->r);
	unlink(e->path);
	free(e);
	return 0;
}

static void fill(uint8_t *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

static void test_create(void **state)
{
	struct env *e = *state;
	assert_false(vblk_is_crashsim(e->b));
	assert_int_equal(e->b->size, 4 * MIB);
	struct stat st;
	assert_int_equal(stat(e->path, &st), 0);
	assert_int_equal(st.st_size, 4 * MIB);
	assert_true((uint64_t)st.st_blocks * 512 < 4 * MIB); /* sparse */
	struct vblk *b2 = NULL;
	assert_int_equal(vblk_uring_open(e->r, e->path, 4 * MIB, &b2), -EEXIST);
	assert_null(b2);
	assert_int_equal(vblk_uring_open(e->r, e->path, 1000, &b2), -EINVAL);
	/* The store has an owner (e->b): a second open, exclusive or shared, is refused. */
	assert_int_equal(vblk_uring_open(e->r, e->path, 0, &b2), -EBUSY);
	assert_null(b2);
	assert_int_equal(vblk_uring_open_flags(e->r, e->path, 0, VBLK_OPEN_SHARED, &b2), -EBUSY);
	assert_null(b2);
	assert_int_equal(vblk_uring_open_flags(e->r, e->path, 0, 0x2, &b2), -EINVAL);
	assert_int_equal(vblk_uring_open_flags(e->r, e->path, 4 * MIB, VBLK_OPEN_SHARED, &b2), -EINVAL);
	/* Open the existing file once its owner has closed it. */
	vblk_close(e->b);
	e->b = NULL;
	assert_int_equal(vblk_uring_open(e->r, e->path, 0, &b2), 0);
	assert_int_equal(b2->size, 4 * MIB);
	e->b = b2; /* the fixture's teardown closes it */
}

/* Readers share (VBLK_OPEN_SHARED); an owner excludes them and they exclude owners. */
static void test_open_shared_readers(void **state)
{
	struct env *e = *state;
	vblk_close(e->b);
	e->b = NULL;
	struct vblk *r1 = NULL, *r2 = NULL, *w = NULL;
	assert_int_equal(vblk_uring_open_flags(e->r, e->path, 0, VBLK_OPEN_SHARED, &r1), 0);
	assert_int_equal(vblk_uring_open_flags(e->r, e->path, 0, VBLK_OPEN_SHARED, &r2), 0);
	assert_int_equal(vblk_uring_open(e->r, e->path, 0, &w), -EBUSY);
	assert_null(w);
	vblk_close(r1);
	assert_int_equal(vblk_uring_open(e->r, e->path, 0, &w), -EBUSY); /* r2 still reads */
	vblk_close(r2);
	assert_int_equal(vblk_uring_open(e->r, e->path, 0, &w), 0);
	e->b = w;
}

static void test_write_read(void **state)
{
	struct env *e = *state;
	uint8_t *w = vblk_alloc_buf(64 * 1024), *r = vblk_alloc_buf(64 * 1024);
	fill(w, 64 * 1024, 3);
	struct iovec iov = {.iov_base = w, .iov_len = 64 * 1024};
	struct wait wt;
	wait_init(&wt);
	assert_int_equal(vblk_writev(e->b, &iov, 1, MIB, VBLK_DSYNC, &wt.op), 0);
	assert_false(wt.done);
	assert_int_equal(wait_run(e, &wt), 64 * 1024);
	struct iovec riov = {.iov_base = r, .iov_len = 64 * 1024};
	wait_init(&wt);
	assert_int_equal(vblk_readv(e->b, &riov, 1, MIB, &wt.op), 0);
	assert_int_equal(wait_run(e, &wt), 64 * 1024);
	assert_memory_equal(w, r, 64 * 1024);
	/* The bytes really are in the file. */
	int fd = open(e->path, O_RDONLY);
	uint8_t *chk = malloc(64 * 1024);
	assert_int_equal(pread(fd, chk, 64 * 1024, MIB), 64 * 1024);
	assert_memory_equal(chk, w, 64 * 1024);
	close(fd);
	free(chk);
	assert_int_equal(e->b->stats.write_ops, 1);
	assert_int_equal(e->b->stats.read_ops, 1);
	assert_int_equal(e->b->stats.bytes_written, 64 * 1024);
	assert_int_equal(e->b->stats.bytes_read, 64 * 1024);
	free(w);
	free(r);
}

/* iovecs on the stack go out of scope before the reactor submits. */
static int submit_readv3(struct env *e, uint8_t *bufs[3], struct wait *wt)
{
	struct iovec iov[3] = {
		{.iov_base = bufs[0], .iov_len = 4096},
		{.iov_base = bufs[1], .iov_len = 8192},
		{.iov_base = bufs[2], .iov_len = 4096},
	};
	return vblk_readv(e->b, iov, 3, 8192, &wt->op);
}

static void test_readv_multi(void **state)
{
	struct env *e = *state;
	uint8_t *w = vblk_alloc_buf(16384);
	fill(w, 16384, 9);
	assert_int_equal(vblk_pwrite_sync(e->b, w, 16384, 8192, 0), 0);
	uint8_t *bufs[3] = {vblk_alloc_buf(4096), vblk_alloc_buf(8192), vblk_alloc_buf(4096)};
	struct wait wt;
	wait_init(&wt);
	assert_int_equal(submit_readv3(e, bufs, &wt), 0);
	char junk[256];
	memset(junk, 0x5a, sizeof(junk)); /* scribble over the old stack frame */
	assert_int_equal(wait_run(e, &wt), 16384);
	assert_memory_equal(bufs[0], w, 4096);
	assert_memory_equal(bufs[1], w + 4096, 8192);
	assert_memory_equal(bufs[2], w + 12288, 4096);
	/* writev with several iovecs too */
	fill(bufs[0], 4096, 1);
	fill(bufs[1], 8192, 2);
	fill(bufs[2], 4096, 3);
	struct iovec iov[3] = {{bufs[0], 4096}, {bufs[1], 8192}, {bufs[2], 4096}};
	wait_init(&wt);
	assert_int_equal(vblk_writev(e->b, iov, 3, 2 * MIB, 0, &wt.op), 0);
	assert_int_equal(wait_run(e, &wt), 16384);
	assert_int_equal(vblk_pread_sync(e->b, w, 16384, 2 * MIB), 0);
	assert_memory_equal(w, bufs[0], 4096);
	assert_memory_equal(w + 4096, bufs[1], 8192);
	assert_memory_equal(w + 12288, bufs[2], 4096);
	for (int i = 0; i < 3; i++)
		free(bufs[i]);
	free(w);
}

static void test_flush_allocate(void **state)
{
	struct env *e = *state;
	struct wait wt;
	wait_init(&wt);
	assert_int_equal(vblk_flush(e->b, &wt.op), 0);
	assert_int_equal(wait_run(e, &wt), 0);
	assert_int_equal(e->b->stats.flush_ops, 1);
	assert_int_equal(vblk_flush_sync(e->b), 0);
	struct stat st0, st1;
	assert_int_equal(stat(e->path, &st0), 0);
	wait_init(&wt);
	assert_int_equal(vblk_allocate(e->b, 0, 2 * MIB, &wt.op), 0);
	assert_int_equal(wait_run(e, &wt), 0);
	assert_int_equal(stat(e->path, &st1), 0);
	assert_true((uint64_t)st1.st_blocks * 512 >= 2 * MIB);
	assert_true(st1.st_blocks > st0.st_blocks);
	assert_int_equal(st1.st_size, 4 * MIB);
	/* beyond the device */
	wait_init(&wt);
	assert_int_equal(vblk_allocate(e->b, 3 * MIB, 2 * MIB, &wt.op), -EINVAL);
}

static void test_grow(void **state)
{
	struct env *e = *state;
	assert_int_equal(e->b->ops->grow(e->b, 8 * MIB), 0);
	assert_int_equal(e->b->size, 8 * MIB);
	struct stat st;
	assert_int_equal(stat(e->path, &st), 0);
	assert_int_equal(st.st_size, 8 * MIB);
	assert_int_equal(e->b->ops->grow(e->b, 2 * MIB), -EINVAL);
	assert_int_equal(e->b->size, 8 * MIB);
	uint8_t *w = vblk_alloc_buf(4096), *r = vblk_alloc_buf(4096);
	fill(w, 4096, 5);
	assert_int_equal(vblk_pwrite_sync(e->b, w, 4096, 8 * MIB - 4096, VBLK_DSYNC), 0);
	assert_int_equal(vblk_pread_sync(e->b, r, 4096, 8 * MIB - 4096), 0);
	assert_memory_equal(w, r, 4096);
	free(w);
	free(r);
}

static void never_cb(void *arg, int res)
{
	(void)arg;
	(void)res;
	fail_msg("callback after a synchronous error");
}

static void test_bad_args(void **state)
{
	struct env *e = *state;
	uint8_t *buf = vblk_alloc_buf(8192);
	struct vio_op op;
	vio_op_init(&op, never_cb, NULL);
	struct iovec iov = {.iov_base = buf, .iov_len = 4096};
	assert_int_equal(vblk_readv(e->b, &iov, 1, 100, &op), -EINVAL);
	assert_int_equal(vblk_writev(e->b, &iov, 1, 4096 + 1, 0, &op), -EINVAL);
	assert_int_equal(vblk_writev(e->b, &iov, 1, 4 * MIB, 0, &op), -EINVAL);
	assert_int_equal(vblk_readv(e->b, &iov, 1, 4 * MIB - 512, &op), -EINVAL);
	struct iovec odd = {.iov_base = buf, .iov_len = 1000};
	assert_int_equal(vblk_writev(e->b, &odd, 1, 0, 0, &op), -EINVAL);
	assert_int_equal(vblk_readv(e->b, &iov, 0, 0, &op), -EINVAL);
	assert_int_equal(vblk_pread_sync(e->b, buf, 4096, 512 + 7), -EINVAL);
	assert_int_equal(vblk_pwrite_sync(e->b, buf, 100, 0, 0), -EINVAL);
	assert_int_equal(vreactor_inflight(e->r), 0);
	assert_int_equal(vreactor_run_once(e->r, 0), 0);
	assert_int_equal(e->b->stats.read_ops + e->b->stats.write_ops, 0);
	free(buf);
}

static void test_sync_helpers(void **state)
{
	struct env *e = *state;
	uint8_t *w = vblk_alloc_buf(12288), *r = vblk_alloc_buf(12288);
	assert_int_equal((uintptr_t)w % VBLK_ALIGN, 0);
	for (size_t i = 0; i < 12288; i++)
		assert_int_equal(r[i], 0);
	fill(w, 12288, 11);
	assert_int_equal(vblk_pwrite_sync(e->b, w, 12288, 512 * 3, 0), 0);
	assert_int_equal(vblk_flush_sync(e->b), 0);
	assert_int_equal(vblk_pread_sync(e->b, r, 12288, 512 * 3), 0);
	assert_memory_equal(w, r, 12288);
	free(w);
	free(r);
	void *odd = vblk_alloc_buf(100);
	assert_non_null(odd);
	assert_int_equal((uintptr_t)odd % VBLK_ALIGN, 0);
	free(odd);
}

/* The file shrinks under the device: the read continues after the short part, then -EIO. */
static void test_short_read_eof(void **state)
{
	struct env *e = *state;
	uint8_t *buf = vblk_alloc_buf(8192);
	assert_int_equal(truncate(e->path, 2 * MIB), 0);
	struct iovec iov = {.iov_base = buf, .iov_len = 8192};
	struct wait wt;
	wait_init(&wt);
	assert_int_equal(vblk_readv(e->b, &iov, 1, 2 * MIB - 4096, &wt.op), 0);
	assert_int_equal(wait_run(e, &wt), -EIO);
	assert_int_equal(vblk_pread_sync(e->b, buf, 4096, 3 * MIB), -EIO);
	assert_int_equal(vblk_pread_sync(e->b, buf, 4096, 2 * MIB - 4096), 0);
	free(buf);
}

/* ---- group flush: what the observer saw for each of N concurrent DSYNC writes */
#define GF_N 24

struct gf_log;
struct gf_item {
	struct vio_op op;
	struct gf_log *g;
	bool done;
	int res;
	int step_at_cb; /* the observer's step when the callback ran */
};

struct gf_log {
	struct gf_item w[GF_N];
	int step[GF_N]; /* events seen, in order: 1 WRITTEN, 2 BATCHED, 3 DURABLE */
	int bad;        /* events out of order or for an unknown write */
};

static void gf_observe(void *arg, enum vblk_uring_event ev, const struct vio_op *op)
{
	struct gf_log *g = arg;
	int i = 0;
	while (i < GF_N && &g->w[i].op != op)
		i++;
	int want = ev == VBLK_URING_EV_WRITTEN ? 0 : ev == VBLK_URING_EV_BATCHED ? 1 : 2;
	if (i == GF_N || g->step[i] != want || g->w[i].done)
		g->bad++;
	else
		g->step[i]++;
}

static void gf_cb(void *arg, int res)
{
	struct gf_item *w = arg;
	w->res = res;
	w->done = true;
	w->step_at_cb = w->g->step[w - w->g->w];
}

static void gf_init(struct gf_log *g)
{
	memset(g, 0, sizeof(*g));
	for (int i = 0; i < GF_N; i++) {
		g->w[i].g = g;
		vio_op_init(&g->w[i].op, gf_cb, &g->w[i]);
	}
}

/* Submit GF_N 4 KiB DSYNC writes at once, run until all callbacks ran. */
static void gf_run(struct env *e, struct gf_log *g, uint8_t *buf)
{
	gf_init(g);
	for (int i = 0; i < GF_N; i++) {
		struct iovec iov = {buf + (size_t)i * 4096, 4096};
		assert_int_equal(vblk_writev(e->b, &iov, 1, (uint64_t)i * 8192, VBLK_DSYNC, &g->w[i].op), 0);
	}
	for (int i = 0; i < GF_N; i++) {
		assert_int_equal(vreactor_run_until(e->r, &g->w[i].done), 0);
		assert_int_equal(g->w[i].res, 4096);
	}
}

static void test_group_flush(void **state)
{
	struct env *e = *state;
	uint8_t *buf = vblk_alloc_buf((size_t)GF_N * 4096), *rd = vblk_alloc_buf(4096);
	for (int i = 0; i < GF_N; i++)
		fill(buf + (size_t)i * 4096, 4096, 100 + (unsigned)i);
	struct gf_log *g = calloc(1, sizeof(*g));
	assert_int_equal(vblk_uring_set_observer(e->b, gf_observe, g), 0);
	/* whatever was detected for this file's device (test_group_flush_detect) */
	assert_int_equal(vblk_uring_set_group_flush(e->b, VBLK_GROUP_FLUSH_DEFAULT), 0);
	assert_int_equal(vblk_uring_group_flush(e->b), (int)VBLK_GROUP_FLUSH_DEFAULT);

	/* default: group flush */
	uint64_t f0 = e->b->stats.dsync_flushes, gw0 = e->b->stats.grouped_writes,
		 ns0 = e->b->stats.dsync_flush_ns, wns0 = e->b->stats.write_ns,
		 rns0 = e->b->stats.read_ns;
	gf_run(e, g, buf);
	assert_int_equal(g->bad, 0);
	/* the first was submitted alone (RWF_DSYNC, no event); the others: WRITTEN,
	 * BATCHED, DURABLE, each once, in order, then the callback */
	assert_int_equal(g->w[0].step_at_cb, 0);
	for (int i = 1; i < GF_N; i++)
		assert_int_equal(g->w[i].step_at_cb, 3);
	uint64_t nf = e->b->stats.dsync_flushes - f0;
	assert_true(nf >= 1 && nf <= GF_N);
	/* the diagnostics: every grouped write counted once, the fsyncs took time */
	assert_int_equal(e->b->stats.grouped_writes - gw0, GF_N - 1);
	assert_true(e->b->stats.dsync_flush_ns > ns0);
	assert_true(e->b->stats.write_ns > wns0);
	assert_int_equal(e->b->stats.read_ns, rns0);
	assert_int_equal(e->b->stats.flush_ops, 0); /* group fsyncs are not vblk_flush calls */
	for (int i = 0; i < GF_N; i++) {
		assert_int_equal(vblk_pread_sync(e->b, rd, 4096, (uint64_t)i * 8192), 0);
		assert_memory_equal(rd, buf + (size_t)i * 4096, 4096);
	}
	assert_true(e->b->stats.read_ns > rns0);
	/* a write without DSYNC is not held for a flush */
	struct wait wt;
	wait_init(&wt);
	struct iovec iov = {buf, 4096};
	f0 = e->b->stats.dsync_flushes;
	assert_int_equal(vblk_writev(e->b, &iov, 1, MIB, 0, &wt.op), 0);
	assert_int_equal(wait_run(e, &wt), 4096);
	assert_int_equal(e->b->stats.dsync_flushes, f0);

	/* turned off: RWF_DSYNC on each write, no group fsync, no event */
	assert_int_equal(vblk_uring_set_group_flush(e->b, 0), 0);
	f0 = e->b->stats.dsync_flushes;
	gw0 = e->b->stats.grouped_writes;
	gf_run(e, g, buf);
	assert_int_equal(e->b->stats.dsync_flushes, f0);
	assert_int_equal(e->b->stats.grouped_writes, gw0);
	assert_int_equal(g->bad, 0);
	for (int i = 0; i < GF_N; i++)
		assert_int_equal(g->w[i].step_at_cb, 0);

	/* one fsync in flight at most: still every write durable before its callback */
	assert_int_equal(vblk_uring_set_group_flush(e->b, 1), 0);
	gf_run(e, g, buf);
	assert_int_equal(g->bad, 0);
	for (int i = 1; i < GF_N; i++)
		assert_int_equal(g->w[i].step_at_cb, 3);

	/* a lone DSYNC write keeps RWF_DSYNC: no group fsync */
	f0 = e->b->stats.dsync_flushes;
	gf_init(g);
	assert_int_equal(vblk_writev(e->b, &iov, 1, 0, VBLK_DSYNC, &g->w[0].op), 0);
	assert_int_equal(vreactor_run_until(e->r, &g->w[0].done), 0);
	assert_int_equal(g->w[0].res, 4096);
	assert_int_equal(g->w[0].step_at_cb, 0);
	assert_int_equal(e->b->stats.dsync_flushes, f0);

	/* limits; not while a DSYNC write is in flight */
	assert_int_equal(vblk_uring_set_group_flush(e->b, VBLK_GROUP_FLUSH_MAX + 1), -EINVAL);
	assert_int_equal(vblk_uring_set_group_flush(NULL, 1), -EINVAL);
	gf_init(g);
	struct iovec iov2 = {buf + 4096, 4096};
	assert_int_equal(vblk_writev(e->b, &iov, 1, 0, VBLK_DSYNC, &g->w[0].op), 0);
	assert_int_equal(vblk_writev(e->b, &iov2, 1, 8192, VBLK_DSYNC, &g->w[1].op), 0);
	assert_int_equal(vblk_uring_set_group_flush(e->b, 2), -EBUSY); /* submitted, grouped */
	while (g->step[1] < 1)
		assert_true(vreactor_run_once(e->r, 1000) >= 0);
	if (!g->w[1].done) /* written, waiting for or in its fsync */
		assert_int_equal(vblk_uring_set_group_flush(e->b, 2), -EBUSY);
	assert_int_equal(vreactor_run_until(e->r, &g->w[1].done), 0);
	assert_int_equal(vreactor_run_until(e->r, &g->w[0].done), 0);
	assert_int_equal(g->w[0].res, 4096);
	assert_int_equal(g->w[1].res, 4096);
	assert_int_equal(g->bad, 0);
	assert_int_equal(vblk_uring_set_group_flush(e->b, 2), 0);
	assert_int_equal(vblk_uring_set_observer(e->b, NULL, NULL), 0);
	free(g);
	free(buf);
	free(rd);
}

/* ---- which devices get group flushes: a fake sysfs tree */
static void put_file(const char *dir, const char *name, const char *text)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void fake_queue(const char *root, const char *wc, const char *fua)
{
	char q[768];
	snprintf(q, sizeof(q), "%s/devices/vdx/queue", root);
	put_file(q, "write_cache", wc);
	put_file(q, "fua", fua);
}

static void test_group_flush_detect(void **state)
{
	(void)state;
	char root[256], p[768], cmd[2048];
	tmp_path(root, sizeof(root), "fake_sysfs");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s/devices/vdx/queue' '%s/devices/vdx/vdx1' "
		 "'%s/dev/block' && ln -s ../../devices/vdx '%s/dev/block/250:0' && "
		 "ln -s ../../devices/vdx/vdx1 '%s/dev/block/250:1'", root, root, root, root, root, root);
	assert_int_equal(system(cmd), 0);
	fake_queue(root, "write back\n", "0\n");
	assert_int_equal(vblk_queue_wants_group_flush(root, 250, 0), 1);
	assert_int_equal(vblk_queue_wants_group_flush(root, 250, 1), 1); /* a partition: its disk's queue */
	fake_queue(root, "write back\n", "1\n");
	assert_int_equal(vblk_queue_wants_group_flush(root, 250, 0), 0); /* FUA: RWF_DSYNC is one FUA write */
	fake_queue(root, "write through\n", "0\n");
	assert_int_equal(vblk_queue_wants_group_flush(root, 250, 1), 0); /* no cache to flush */
	fake_queue(root, "sometimes\n", "0\n");
	assert_int_equal(vblk_queue_wants_group_flush(root, 250, 0), -EINVAL);
	fake_queue(root, "write back\n", "yes\n");
	assert_int_equal(vblk_queue_wants_group_flush(root, 250, 0), -EINVAL);
	assert_int_equal(vblk_queue_wants_group_flush(root, 250, 7), -ENOENT); /* no such device */
	snprintf(p, sizeof(p), "%s/devices/vdx/queue/fua", root);
	unlink(p);
	assert_int_equal(vblk_queue_wants_group_flush(root, 250, 0), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static void test_open_errors(void **state)
{
	struct env *e = *state;
	char p[600];
	snprintf(p, sizeof(p), "%s.empty", e->path);
	int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_true(fd >= 0);
	close(fd);
	struct vblk *b = NULL;
	assert_int_equal(vblk_uring_open(e->r, p, 0, &b), -EINVAL); /* nothing to probe */
	assert_null(b);
	unlink(p);
	assert_int_equal(vblk_uring_open(e->r, p, 0, &b), -ENOENT);
	assert_int_equal(vblk_uring_open(e->r, "/proc/self", 0, &b) < 0, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_shared_readers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readv_multi, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_allocate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_helpers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_read_eof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_flush, setup, teardown),
		cmocka_unit_test(test_group_flush_detect),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
