/*
 * The previous holder's fence at open (src/io/vblk_rbd.c fence_previous;
 * docs/ceph.md "One writer, fenced"), against the fixture's cluster.
 *
 * How this works: client A is a librados client of this process of its own
 * (another nonce, so another Ceph address: what another gateway's is) that does
 * what a vaaid holder does -- takes the image's lock, records itself in the
 * owner record as vblk_rbd does, writes -- and then releases the lock cleanly
 * while it stays connected: a gateway whose write timed out and that was then
 * stopped normally, its write still queued in an OSD. B then opens the image
 * (vblk_rbd_open: a free lock, no break) and writes; A's late write, sent
 * straight to the data object as a queued OSD op would land (no lock in the
 * way), must be refused with -ESHUTDOWN (Ceph's EBLOCKLISTED), and B's block
 * must read back intact. Red without fence_previous: A's write succeeded and
 * B read A's bytes. Then an open of the image without a record fences nobody
 * (the last holder, unnamed, stays off the blocklist); both opens are timed.
 * Also: a standby open (the lock held), a read-only view and an owner peek
 * never blocklist anyone (A, the holder named in the record, still writes and
 * is not on the blocklist); an open whose record names no single client fails
 * rather than serving unfenced.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <rados/librados.h>
#include <rbd/librbd.h>

#include "vaaid/io.h"
#include "vaaid/rbd_owner.h"

#define MIB (1024u * 1024)
#define BLK 4096u
#define OFF (2 * MIB) /* object 2 of the image (1 MiB objects, vblk_rbd's create) */

static char spec[128];
static const char *image;
static struct vblk_rbd_conf conf;

static int setup(void **state)
{
	(void)state;
	snprintf(spec, sizeof(spec), "rbd:rbd/fence-test-%d", (int)getpid());
	image = spec + strlen("rbd:rbd/");
	conf.conf_path = getenv("CEPH_CONF");
	vblk_rbd_remove(spec, &conf);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	vblk_rbd_remove(spec, &conf);
	return 0;
}

/* Client A: a vaaid-like holder on a librados client of its own. */
struct holder {
	rados_t cl;
	rados_ioctx_t io;
	rbd_image_t img;
	char addr[128];
	char data_oid[128]; /* the object holding OFF */
};

static void holder_connect(struct holder *h)
{
	memset(h, 0, sizeof(*h));
	assert_int_equal(rados_create(&h->cl, NULL), 0);
	assert_int_equal(rados_conf_read_file(h->cl, conf.conf_path), 0);
	assert_int_equal(rados_conf_set(h->cl, "rados_osd_op_timeout", "30"), 0);
	assert_int_equal(rados_connect(h->cl), 0);
	assert_int_equal(rados_ioctx_create(h->cl, "rbd", &h->io), 0);
	assert_int_equal(rbd_open(h->io, image, &h->img, NULL), 0);
	char *a = NULL;
	assert_int_equal(rados_getaddrs(h->cl, &a), 0);
	snprintf(h->addr, sizeof(h->addr), "%s", a);
	rados_buffer_free(a);
	assert_true(vblk_rbd_addr_instance(h->addr));
	char prefix[64];
	assert_int_equal(rbd_get_block_name_prefix(h->img, prefix, sizeof(prefix)), 0);
	snprintf(h->data_oid, sizeof(h->data_oid), "%s.%016x", prefix, (unsigned)(OFF / MIB));
}

/* Take the lock and record A as vblk_rbd's owner_set does. */
static void holder_acquire(struct holder *h)
{
	assert_int_equal(rbd_lock_acquire(h->img, RBD_LOCK_MODE_EXCLUSIVE), 0);
	struct vblk_rbd_owner me;
	char rec[VBLK_RBD_OWNER_MAX];
	assert_int_equal(vblk_rbd_owner_self(&me, 0, h->addr), 0);
	assert_int_equal(vblk_rbd_owner_format(&me, rec, sizeof(rec)), 0);
	assert_int_equal(rbd_metadata_set(h->img, VBLK_RBD_OWNER_KEY, rec), 0);
}

/* A write of A's reaching the OSD now (as one queued since before would):
 * straight to the data object, past librbd's lock. 0 or -errno. */
static int holder_late_write(struct holder *h, uint8_t fill)
{
	uint8_t buf[BLK];
	memset(buf, fill, sizeof(buf));
	return rados_write(h->io, h->data_oid, (const char *)buf, sizeof(buf), OFF % MIB);
}

static void holder_close(struct holder *h)
{
	rbd_close(h->img);
	rados_ioctx_destroy(h->io);
	rados_shutdown(h->cl);
}

/* Is addr on the cluster's blocklist (osd blocklist ls, asked by a client of its own)? */
static bool blocklisted(const char *addr)
{
	rados_t cl;
	assert_int_equal(rados_create(&cl, NULL), 0);
	assert_int_equal(rados_conf_read_file(cl, conf.conf_path), 0);
	assert_int_equal(rados_connect(cl), 0);
	const char *cmd[] = {"{\"prefix\": \"osd blocklist ls\", \"format\": \"json\"}"};
	char *out = NULL, *st = NULL;
	size_t outl = 0, stl = 0;
	assert_int_equal(rados_mon_command(cl, cmd, 1, "", 0, &out, &outl, &st, &stl), 0);
	char quoted[160];
	snprintf(quoted, sizeof(quoted), "\"%s\"", addr);
	bool found = out && memmem(out, outl, quoted, strlen(quoted)) != NULL;
	rados_buffer_free(out);
	rados_buffer_free(st);
	rados_shutdown(cl);
	return found;
}

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

static int rw(struct vreactor *r, struct vblk *b, bool write, uint8_t *buf)
{
	struct wait w = {0};
	vio_op_init(&w.op, wait_cb, &w);
	struct iovec iov = {buf, BLK};
	int rc = write ? vblk_writev(b, &iov, 1, OFF, VBLK_DSYNC, &w.op)
		       : vblk_readv(b, &iov, 1, OFF, &w.op);
	if (rc < 0)
		return rc;
	assert_int_equal(vreactor_run_until(r, &w.done), 0);
	return w.res;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static void test_clean_release_then_open(void **state)
{
	(void)state;
	struct vreactor *r;
	assert_int_equal(vreactor_create(64, &r), 0);
	struct vblk *b;
	/* the image, made by vblk_rbd (1 MiB objects), and a block written there */
	assert_int_equal(vblk_rbd_open(r, spec, &conf, 8 * MIB, &b), 0);
	uint8_t *mine = vblk_alloc_buf(BLK), *back = vblk_alloc_buf(BLK);
	memset(mine, 0x11, BLK);
	assert_int_equal(rw(r, b, true, mine), (int)BLK);
	vblk_close(b);

	struct holder a;
	holder_connect(&a);
	holder_acquire(&a);
	assert_int_equal(holder_late_write(&a, 0xaa), 0); /* A may write while it holds */
	assert_int_equal(rbd_lock_release(a.img), 0);     /* cleanly: no break follows */
	assert_false(blocklisted(a.addr));

	/* B: a free lock, whose record names A */
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(vblk_rbd_open(r, spec, &conf, 0, &b), 0);
	double open_ms = ms_since(&t0);
	memset(mine, 0x22, BLK);
	assert_int_equal(rw(r, b, true, mine), (int)BLK); /* acknowledged by B */

	/* A's write that was still queued lands now: refused */
	int late = holder_late_write(&a, 0xbb);
	memset(back, 0, BLK);
	assert_int_equal(rw(r, b, false, back), (int)BLK);
	printf("test_rbd_fence: B's open (fencing A %s) took %.0f ms; A's late write: %d (%s)\n",
	       a.addr, open_ms, late, late < 0 ? strerror(-late) : "accepted");
	assert_int_equal(late, -ESHUTDOWN);
	assert_memory_equal(back, mine, BLK);
	assert_true(blocklisted(a.addr));
	/* B (the same IP, another nonce) is not touched: it still writes */
	memset(mine, 0x33, BLK);
	assert_int_equal(rw(r, b, true, mine), (int)BLK);
	struct vblk_rbd_owner o;
	assert_int_equal(vblk_rbd_owner_peek(r, spec, &conf, &o), 0);
	assert_int_equal(o.pid, (int)getpid());
	assert_string_not_equal(o.addr, a.addr); /* B recorded itself */
	vblk_close(b);
	holder_close(&a);

	/* no record (removed by a client that took the lock): the next open fences
	 * nobody -- B, the last holder but unnamed, is not blocklisted -- and its
	 * time is an open's without the fence */
	struct holder c;
	holder_connect(&c);
	assert_int_equal(rbd_lock_acquire(c.img, RBD_LOCK_MODE_EXCLUSIVE), 0);
	assert_int_equal(rbd_metadata_remove(c.img, VBLK_RBD_OWNER_KEY), 0);
	assert_int_equal(rbd_lock_release(c.img), 0);
	holder_close(&c);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(vblk_rbd_open(r, spec, &conf, 0, &b), 0);
	double plain_ms = ms_since(&t0);
	printf("test_rbd_fence: an open with no record (nothing to fence) took %.0f ms\n", plain_ms);
	assert_false(blocklisted(o.addr));
	assert_int_equal(rw(r, b, false, back), (int)BLK);
	assert_memory_equal(back, mine, BLK);
	vblk_close(b);
	free(mine);
	free(back);
	vreactor_destroy(r);
}

static void test_standby_view_peek_fence_nobody(void **state)
{
	(void)state;
	struct vreactor *r;
	assert_int_equal(vreactor_create(64, &r), 0);
	struct vblk *b;
	assert_int_equal(vblk_rbd_open(r, spec, &conf, 8 * MIB, &b), 0);
	vblk_close(b);
	struct holder a;
	holder_connect(&a);
	holder_acquire(&a); /* A holds the lock, its record names it */
	/* a plain open is standby; a read-only view and a peek read the image */
	assert_int_equal(vblk_rbd_open(r, spec, &conf, 0, &b), -EBUSY);
	assert_int_equal(vblk_rbd_open_readonly(r, spec, &conf, &b), 0);
	vblk_close(b);
	struct vblk_rbd_owner o;
	assert_int_equal(vblk_rbd_owner_peek(r, spec, &conf, &o), 0);
	assert_string_equal(o.addr, a.addr);
	/* nobody fenced A */
	assert_int_equal(holder_late_write(&a, 0xcc), 0);
	assert_false(blocklisted(a.addr));
	assert_int_equal(rbd_lock_release(a.img), 0);
	holder_close(&a);
	vreactor_destroy(r);
}

/* A record that names no single client (here a whole IP, nonce 0, which a
 * blocklist would turn against every client of 127.0.0.1): not served. */
static void test_record_without_client_refused(void **state)
{
	(void)state;
	struct vreactor *r;
	assert_int_equal(vreactor_create(64, &r), 0);
	struct vblk *b;
	assert_int_equal(vblk_rbd_open(r, spec, &conf, 8 * MIB, &b), 0);
	vblk_close(b);
	struct holder a;
	holder_connect(&a);
	assert_int_equal(rbd_lock_acquire(a.img, RBD_LOCK_MODE_EXCLUSIVE), 0);
	struct vblk_rbd_owner me;
	char rec[VBLK_RBD_OWNER_MAX];
	assert_int_equal(vblk_rbd_owner_self(&me, 0, "127.0.0.1:0/0"), 0);
	assert_int_equal(vblk_rbd_owner_format(&me, rec, sizeof(rec)), 0);
	assert_int_equal(rbd_metadata_set(a.img, VBLK_RBD_OWNER_KEY, rec), 0);
	assert_int_equal(rbd_lock_release(a.img), 0);
	assert_int_equal(vblk_rbd_open(r, spec, &conf, 0, &b), -EINVAL);
	/* and nothing was blocklisted: A still writes */
	assert_int_equal(holder_late_write(&a, 0xdd), 0);
	holder_close(&a);
	vreactor_destroy(r);
}

int main(void)
{
	if (!getenv("CEPH_CONF")) {
		fprintf(stderr, "test_rbd_fence: CEPH_CONF is not set (run through ctest)\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clean_release_then_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_standby_view_peek_fence_nobody, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_without_client_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
