/*
 * The daemon's pools on Ceph RBD (src/daemon/pools.c with vblk_rbd) against a
 * real single-node cluster (ctest fixture ceph/cluster; CEPH_CONF): a pool
 * whose configured path is rbd:rbd/IMAGE is created (image made, formatted,
 * journal inside) when the image is missing, and opened again after a close
 * with a volume's acknowledged data intact; `pool create` makes a new image
 * and refuses an existing one (-EEXIST, the image kept), --force (-EINVAL) and
 * a second pool on the same image; in a second daemon the pool whose image the
 * first holds is standby (not served; the first keeps serving), until `pool
 * takeover` there: the first is fenced (its writes and reads fail, also of
 * blocks never written), the second serves the acknowledged data.
 * Thin through to Ceph: the data region of the image holds exactly the bytes
 * written (what Ceph stores, read through a read-only open), and once a
 * deallocation is durable its extents are discarded in the image: Ceph holds
 * none of them afterwards, and the pool counts the discards.
 * A gateway restarted after its machine crashed (the dead client's lock still
 * on the image: its watch has not timed out) takes its pool back at once --
 * its predecessor recorded itself as the owner (src/io/rbd_owner.c), on this
 * machine, in an earlier boot -- and serves what was acknowledged; while a
 * holder of this boot lives, the pool is standby there. (After a kill -9 the
 * OSDs drop the dead client's watch with its connection, and librbd's own
 * acquire breaks the lock: that case needs no record.)
 * A holder on another machine that died (its watch not lapsed yet, or lapsed)
 * leaves the pool standby here on a plain open -- librbd would break a lapsed
 * holder's lock by itself after ~30 s -- until an explicit takeover.
 * A free extent whose data the image still holds (as after a crash between a
 * free's durable commit and its discard) is discarded when the pool opens;
 * the extents in use keep their data.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

#include "vaaid/daemon.h"
#include "vaaid/pool_watch.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"
#include "vaaid/rbd_owner.h"

#define MIB (1024u * 1024)

static char img_a[64], img_b[64];

static void conf_with(struct vd_config *c, const char *path)
{
	vd_config_defaults(c);
	c->n_pools = 1;
	snprintf(c->pools[0].name, sizeof(c->pools[0].name), "cp");
	snprintf(c->pools[0].path, sizeof(c->pools[0].path), "%s", path);
	c->pools[0].size = 256 * MIB;
	c->pools[0].create = VD_CREATE_YES; /* made at the first open (test_missing_image) */
	snprintf(c->ceph.conf, sizeof(c->ceph.conf), "%s", getenv("CEPH_CONF"));
}

struct done {
	bool done;
	int res;
};
static void on_done(void *arg, int res)
{
	struct done *d = arg;
	d->res = res;
	d->done = true;
}

static int io(struct vreactor *r, struct vvol *v, bool write, void *buf, uint64_t off, size_t len)
{
	struct iovec iov = {buf, len};
	struct done d = {0};
	int rc = write ? vvol_write(v, off, len, &iov, 1, on_done, &d)
		       : vvol_read(v, off, len, &iov, 1, on_done, &d);
	if (rc < 0)
		return rc;
	assert_int_equal(vreactor_run_until(r, &d.done), 0);
	return d.res;
}

static int count_extent(uint64_t off, size_t len, int exists, void *arg)
{
	(void)off;
	if (exists)
		*(uint64_t *)arg += len;
	return 0;
}

/* Bytes Ceph stores for [off, end) of the image (a read-only open, no lock). */
static uint64_t ceph_bytes(const char *spec, uint64_t off)
{
	rados_t cl;
	rados_ioctx_t io;
	rbd_image_t img;
	assert_int_equal(rados_create(&cl, NULL), 0);
	assert_int_equal(rados_conf_read_file(cl, NULL), 0);
	assert_int_equal(rados_connect(cl), 0);
	assert_int_equal(rados_ioctx_create(cl, "rbd", &io), 0);
	assert_int_equal(rbd_open_read_only(io, strchr(spec, '/') + 1, &img, NULL), 0);
	uint64_t size, n = 0;
	assert_int_equal(rbd_get_size(img, &size), 0);
	assert_int_equal(rbd_diff_iterate2(img, NULL, off, size - off, 0, 0, count_extent, &n), 0);
	rbd_close(img);
	rados_ioctx_destroy(io);
	rados_shutdown(cl);
	return n;
}

static int setup(void **state)
{
	(void)state;
	snprintf(img_a, sizeof(img_a), "rbd:rbd/pools-a-%d", (int)getpid());
	snprintf(img_b, sizeof(img_b), "rbd:rbd/pools-b-%d", (int)getpid());
	vblk_rbd_remove(img_a, NULL);
	vblk_rbd_remove(img_b, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	vblk_rbd_remove(img_a, NULL);
	vblk_rbd_remove(img_b, NULL);
	return 0;
}

/* A configured image that is missing is refused, and not made, unless create = yes:
 * "auto" (the default) and "no" name the image and `vaaictl pool create`. */
static void test_missing_image(void **state)
{
	(void)state;
	struct vreactor *r;
	assert_int_equal(vreactor_create(256, &r), 0);
	struct vd_config c;
	conf_with(&c, img_a);
	struct vd_pools *ps = calloc(1, sizeof(*ps));
	const uint8_t modes[] = {VD_CREATE_AUTO, VD_CREATE_NO};
	for (unsigned i = 0; i < 2; i++) {
		char err[1200] = "";
		c.pools[0].create = modes[i];
		assert_int_equal(vd_pools_open(ps, &c, r, err, sizeof(err)), -ENOENT);
		assert_non_null(strstr(err, img_a));
		assert_non_null(strstr(err, "vaaictl pool create"));
		vd_pools_close(ps);
		struct vblk *dev;
		struct vblk_rbd_conf rc_conf = {.conf_path = c.ceph.conf};
		assert_int_equal(vblk_rbd_open(r, img_a, &rc_conf, 0, &dev), -ENOENT); /* not made */
	}
	free(ps);
	vreactor_destroy(r);
}

static void test_configured_pool(void **state)
{
	(void)state;
	struct vreactor *r;
	assert_int_equal(vreactor_create(256, &r), 0);
	struct vd_config c;
	conf_with(&c, img_a);
	c.alua.group = 4; /* this daemon's group, in its owner record */
	struct vd_pools *ps = calloc(1, sizeof(*ps)), *ps2 = calloc(1, sizeof(*ps2));
	char err[1200] = "";
	assert_int_equal(vd_pools_open(ps, &c, r, err, sizeof(err)), 0);
	assert_int_equal(ps->n, 1);
	assert_non_null(ps->p[0].pool);
	assert_null(ps->p[0].jdev); /* the journal is inside the image */
	struct vvol *v;
	assert_int_equal(vpool_volume_create(ps->p[0].pool, "vol", 64 * MIB, 512, &v), 0);
	uint8_t *buf = vblk_alloc_buf(MIB), *back = vblk_alloc_buf(MIB);
	for (unsigned i = 0; i < MIB; i++)
		buf[i] = (uint8_t)(i * 13 + 1);
	assert_int_equal(io(r, v, true, buf, 3 * MIB, MIB), 0);
	assert_int_equal(io(r, v, true, buf, 8 * MIB + 4096, 8192), 0); /* a small write */

	/* a second daemon: the image is held, the pool is standby there, the first
	 * keeps serving */
	err[0] = 0;
	c.alua.group = 5; /* the second daemon's group: its takeover fences group 4 */
	assert_int_equal(vd_pools_open(ps2, &c, r, err, sizeof(err)), 0);
	assert_true(ps2->p[0].standby);
	assert_null(ps2->p[0].pool);
	assert_int_equal(io(r, v, false, back, 3 * MIB, MIB), 0);
	assert_memory_equal(buf, back, MIB);
	assert_int_equal(vd_pool_takeover(ps, r, "cp", err, sizeof(err)), -EINVAL); /* served here */
	assert_non_null(strstr(err, "already"));
	assert_int_equal(vd_pool_takeover(ps2, r, "nope", err, sizeof(err)), -ENOENT);

	/* pool create: a new image; never an existing one or the same image twice */
	assert_int_equal(vd_pool_create(ps, r, "cp2", img_b, 128 * MIB, 0, false, err, sizeof(err)), 0);
	assert_int_equal(ps->n, 2);
	assert_int_equal(vd_pool_create(ps, r, "cp3", img_b, 128 * MIB, 0, false, err, sizeof(err)),
			 -EEXIST);
	assert_int_equal(vd_pool_create(ps, r, "cp3", img_b, 128 * MIB, 0, true, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "--force"));
	assert_int_equal(vd_pool_create(ps, r, "cp3", "rbd:rbd", 128 * MIB, 0, false, err, sizeof(err)),
			 -EINVAL);
	/* the pool watch's look (vd_devices_watch, no LUNs needed): both pools here
	 * still hold their locks, nothing is marked */
	struct vd_env env = {.r = r, .pools = ps, .conf = &c};
	struct vd_devices *ds;
	assert_int_equal(vd_devices_new(&env, &ds), 0);
	vd_devices_watch(ds);
	assert_false(vpool_fenced(ps->p[0].pool));
	assert_false(vpool_fenced(ps->p[1].pool));
	/* the second daemon takes the pool over: the first, idle, learns it from the
	 * pool watch's lock check before any I/O of its own meets the fence (its store
	 * sent nothing meanwhile); `vaaictl status` shows vpool_fenced as "fenced" */
	assert_int_equal(vd_pool_takeover(ps2, r, "cp", err, sizeof(err)), 0);
	assert_false(ps2->p[0].standby);
	assert_non_null(ps2->p[0].pool);
	assert_int_equal(ps2->p[0].alua.owner, 5); /* the record, read right after the takeover */
	assert_int_equal(ps2->p[0].alua.n_fenced, 1);
	assert_int_equal(ps2->p[0].alua.fenced[0], 4);
	struct vblk_stats before = ps->p[0].dev->stats;
	vd_devices_watch(ds);
	assert_true(vpool_fenced(ps->p[0].pool));
	/* the fenced daemon reads the shared ALUA record through a client of its own
	 * (its own is blocklisted): the new owner and its own fence mark */
	struct vblk_rbd_alua rec = {.owner = 4};
	assert_int_equal(vd_store_watch(ps->p[0].dev, false, &rec), VD_WATCH_OWNER);
	assert_int_equal(rec.owner, 5);
	assert_int_equal(rec.n_fenced, 1);
	assert_int_equal(rec.fenced[0], 4);
	assert_false(vpool_fenced(ps->p[1].pool)); /* the other pool is still this gateway's */
	assert_int_equal(ps->p[0].dev->stats.read_ops, before.read_ops);
	assert_int_equal(ps->p[0].dev->stats.write_ops, before.write_ops);
	vd_devices_free(ds);
	/* its writes and reads fail from now on, the second serves the acknowledged data */
	assert_true(io(r, v, true, buf, 5 * MIB, 4096) < 0);
	assert_true(vpool_fenced(ps->p[0].pool));
	assert_true(io(r, v, false, back, 40 * MIB, 4096) < 0); /* never written: not from memory */
	struct vvol *v2 = vpool_volume_find(ps2->p[0].pool, "vol");
	assert_non_null(v2);
	memset(back, 0, MIB);
	assert_int_equal(io(r, v2, false, back, 3 * MIB, MIB), 0);
	assert_memory_equal(buf, back, MIB);
	assert_int_equal(vd_pool_takeover(ps2, r, "cp", err, sizeof(err)), -EINVAL);
	vd_pools_close(ps2); /* releases the lock */
	vd_pools_close(ps);  /* fenced: cannot checkpoint; its stores close */

	/* reopened (the image exists now): the acknowledged data is there */
	assert_int_equal(vd_pools_open(ps, &c, r, err, sizeof(err)), 0);
	v = vpool_volume_find(ps->p[0].pool, "vol");
	assert_non_null(v);
	memset(back, 0, MIB);
	assert_int_equal(io(r, v, false, back, 3 * MIB, MIB), 0);
	assert_memory_equal(buf, back, MIB);
	assert_int_equal(io(r, v, false, back, 8 * MIB + 4096, 8192), 0);
	assert_memory_equal(buf, back, 8192);
	/* thin through to Ceph: the data region holds about what was written (1 MiB and
	 * the 8 KiB write's granules: the OSD's store rounds a little), not the two
	 * 1 MiB extents the pool mapped */
	struct vpool_stats st;
	vpool_get_stats(ps->p[0].pool, &st);
	uint64_t held = ceph_bytes(img_a, st.data_off);
	assert_in_range(held, MIB + 8192, MIB + 65536);
	struct done d = {0};
	assert_int_equal(vvol_deallocate(v, 0, 16 * MIB, on_done, &d), 0);
	assert_int_equal(vreactor_run_until(r, &d.done), 0);
	assert_int_equal(d.res, 0);
	for (int i = 0; i < 1000; i++) { /* the discards follow the durable commit */
		vpool_get_stats(ps->p[0].pool, &st);
		if (st.store_io.discard_ops >= 2)
			break;
		assert_true(vreactor_run_once(r, 10) >= 0);
	}
	assert_int_equal(st.store_io.discard_ops, 2); /* the two extents freed */
	assert_int_equal(st.store_io.bytes_discarded, 2 * MIB);
	assert_int_equal(ceph_bytes(img_a, st.data_off), 0);
	vd_pools_close(ps);
	free(buf);
	free(back);
	free(ps);
	free(ps2);
	vreactor_destroy(r);
}

/* A standby pool's read-only view (vd_pool_view_refresh, docs/ceph.md "ALUA") and
 * the pool's shared ALUA record (vd_pool_alua_read: the owner's group, the fenced ones): the volumes the owner made, with their identity (NAA, serial, size), read without the
 * lock; a refresh shows a volume made since and hands the old view back; the owner
 * keeps serving; the view is closed with the pools. */
static void test_standby_view(void **state)
{
	(void)state;
	struct vreactor *r;
	assert_int_equal(vreactor_create(256, &r), 0);
	struct vd_config c;
	conf_with(&c, img_a);
	c.alua.group = 7; /* the owner's [alua] group, in its owner record */
	struct vd_pools *ps = calloc(1, sizeof(*ps)), *ps2 = calloc(1, sizeof(*ps2));
	char err[1200] = "";
	assert_int_equal(vd_pools_open(ps, &c, r, err, sizeof(err)), 0);
	c.alua.group = 8;
	struct vvol *v, *w;
	assert_int_equal(vpool_volume_create(ps->p[0].pool, "vol", 64 * MIB, 4096, &v), 0);
	assert_int_equal(vd_pools_open(ps2, &c, r, err, sizeof(err)), 0);
	assert_true(ps2->p[0].standby);
	/* the standby gateway reads which group owns the pool (its LUNs' RTPG) */
	vd_pool_alua_read(ps2, &ps2->p[0], r, &ps2->p[0].alua);
	assert_int_equal(ps2->p[0].alua.owner, 7);
	assert_int_equal(ps2->p[0].alua.n_fenced, 0);
	struct vpool *old;
	struct vblk *old_dev;
	assert_int_equal(vd_pool_view_refresh(ps, &ps->p[0], r, &old, &old_dev), -EINVAL); /* served */
	assert_int_equal(vd_pool_view_refresh(ps2, &ps2->p[0], r, &old, &old_dev), 0);
	assert_null(old);
	struct vvol *sv = vpool_volume_find(ps2->p[0].view, "vol");
	assert_non_null(sv);
	struct vvol_info a, b;
	vvol_get_info(v, &a);
	vvol_get_info(sv, &b);
	assert_memory_equal(a.naa, b.naa, sizeof(a.naa));
	assert_string_equal(a.serial, b.serial);
	assert_true(a.size == b.size);
	assert_int_equal(a.block_size, b.block_size);
	assert_int_equal(vpool_volume_create(ps2->p[0].view, "x", MIB, 512, NULL), -EROFS);
	/* a volume made by the owner since: in the next view */
	assert_int_equal(vpool_volume_create(ps->p[0].pool, "new", 8 * MIB, 512, &w), 0);
	assert_null(vpool_volume_find(ps2->p[0].view, "new"));
	assert_int_equal(vd_pool_view_refresh(ps2, &ps2->p[0], r, &old, &old_dev), 0);
	assert_non_null(old);
	/* the old view's close (librbd's close, the connection's shutdown) runs off the
	 * reactor: the reactor runs meanwhile (a callback deferred before it has run
	 * when it returns; with the close on the reactor's thread it would not have) */
	struct done ran = {0};
	struct vio_op op;
	vio_op_init(&op, on_done, &ran);
	vreactor_defer(r, &op, 0);
	vd_pool_view_close_old(old, old_dev);
	assert_true(ran.done);
	assert_non_null(vpool_volume_find(ps2->p[0].view, "new"));
	/* with the view open, the owner's group is read through it (the pool watch's
	 * look, vd_store_watch, does the same every period) */
	ps2->p[0].alua = (struct vblk_rbd_alua){0};
	vd_pool_alua_read(ps2, &ps2->p[0], r, &ps2->p[0].alua);
	assert_int_equal(ps2->p[0].alua.owner, 7);
	struct vblk_rbd_alua rec = ps2->p[0].alua;
	assert_int_equal(vd_store_watch(ps2->p[0].view_dev, true, &rec), VD_WATCH_NONE);
	assert_int_equal(rec.owner, 7);
	/* the owner was not disturbed */
	uint8_t *buf = vblk_alloc_buf(MIB);
	memset(buf, 7, MIB);
	assert_int_equal(io(r, v, true, buf, 0, MIB), 0);
	assert_false(vpool_fenced(ps->p[0].pool));
	/* a third gateway (group 9) takes the pool over: the standby one's look finds
	 * the new owner group in the record, through the same view, and the group it
	 * fenced (7) marked */
	struct vd_pools *ps3 = calloc(1, sizeof(*ps3));
	c.alua.group = 9;
	assert_int_equal(vd_pools_open(ps3, &c, r, err, sizeof(err)), 0);
	assert_int_equal(vd_pool_takeover(ps3, r, "cp", err, sizeof(err)), 0);
	assert_int_equal(vd_store_watch(ps2->p[0].view_dev, true, &rec), VD_WATCH_OWNER);
	assert_int_equal(rec.owner, 9);
	assert_int_equal(rec.n_fenced, 1);
	assert_int_equal(rec.fenced[0], 7);
	assert_int_equal(vd_store_watch(ps2->p[0].view_dev, true, &rec), VD_WATCH_NONE);
	vd_pools_close(ps3);
	free(ps3);
	free(buf);
	vd_pools_close(ps2); /* and its view */
	vd_pools_close(ps);
	free(ps);
	free(ps2);
	vreactor_destroy(r);
}

static void fill(uint8_t *buf)
{
	for (unsigned i = 0; i < MIB; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
}

/* Overwrite the image's owner record (through a client of its own: librbd
 * passes the change to the lock holder), its machine or boot id replaced. */
static int forge_owner(const char *img, const char *machine, const char *boot, const char *addr)
{
	struct vblk_rbd_owner o;
	char rec[VBLK_RBD_OWNER_MAX];
	rados_t cl;
	rados_ioctx_t io;
	rbd_image_t im;
	int rc = vblk_rbd_owner_peek(NULL, img, &(struct vblk_rbd_conf){.conf_path = getenv("CEPH_CONF")},
				     &o);
	if (rc < 0)
		return rc;
	if (boot)
		snprintf(o.boot, sizeof(o.boot), "%s", boot);
	if (machine)
		snprintf(o.machine, sizeof(o.machine), "%s", machine);
	if (addr)
		snprintf(o.addr, sizeof(o.addr), "%s", addr);
	if ((rc = vblk_rbd_owner_format(&o, rec, sizeof(rec))) < 0)
		return rc;
	if ((rc = rados_create(&cl, NULL)) < 0)
		return rc;
	if ((rc = rados_conf_read_file(cl, getenv("CEPH_CONF"))) == 0 &&
	    (rc = rados_connect(cl)) == 0 && (rc = rados_ioctx_create(cl, "rbd", &io)) == 0) {
		if ((rc = rbd_open(io, img + strlen("rbd:rbd/"), &im, NULL)) == 0) {
			rc = rbd_metadata_set(im, VBLK_RBD_OWNER_KEY, rec);
			rbd_close(im);
		}
		rados_ioctx_destroy(io);
	}
	rados_shutdown(cl);
	return rc;
}

/*
 * The holder's side (this program run again with --holder IMAGE FD: a fresh
 * process, since a child forked after this one used librados would draw the
 * same client nonces, i.e. the same Ceph address, as its parent): open the
 * pool, write and acknowledge, say 'k'; then on 'f' make its owner record
 * claim an earlier boot of this machine and say 'k' (a vaaid that lived
 * before this machine rebooted, whose client's watch the OSDs have not timed
 * out yet: to Ceph that client still holds the lock), on 'm' another
 * machine; wait to be killed.
 */
static int holder_main(const char *img, int fd)
{
	struct vd_config c;
	conf_with(&c, img);
	uint8_t *buf = vblk_alloc_buf(MIB);
	fill(buf);
	struct vreactor *r;
	struct vd_pools *ps = calloc(1, sizeof(*ps));
	char err[1200] = "";
	struct vvol *v;
	char ok = 'x';
	if (vreactor_create(256, &r) == 0 && vd_pools_open(ps, &c, r, err, sizeof(err)) == 0 &&
	    ps->p[0].pool && !ps->p[0].standby &&
	    vpool_volume_create(ps->p[0].pool, "vol", 64 * MIB, 512, &v) == 0 &&
	    io(r, v, true, buf, 2 * MIB, MIB) == 0)
		ok = 'k';
	if (write(fd, &ok, 1) != 1)
		return 2;
	/* 'f': an earlier boot of this machine; 'm': another machine; 's': an earlier
	 * boot, but naming another client than the lock's owner (a stale record) */
	char cmd;
	struct vblk_rbd_owner mine; /* the true record: each forgery starts from it */
	if (vblk_rbd_owner_peek(NULL, img, &(struct vblk_rbd_conf){.conf_path = getenv("CEPH_CONF")},
				&mine) < 0)
		return 2;
	while (read(fd, &cmd, 1) == 1) {
		ok = forge_owner(img, cmd == 'm' ? "another-gateway" : NULL,
				 cmd == 'm' ? NULL : "00000000-earlier-boot",
				 cmd == 's' ? "127.0.0.1:0/1" : mine.addr) == 0 ? 'k' : 'x';
		if (write(fd, &ok, 1) != 1)
			return 2;
	}
	for (;;) /* serving, as far as Ceph can tell */
		vreactor_run_once(r, 1000);
}

/* This program run again as the holder of img (holder_main), talking over
 * *sock; its pid, or -errno. */
static pid_t spawn_holder(const char *img, int *sock)
{
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid == 0) {
		char fd[16];
		int keep = dup(sp[1]); /* without CLOEXEC */
		snprintf(fd, sizeof(fd), "%d", keep);
		execl("/proc/self/exe", "test_daemon_rbd_pools", "--holder", img, fd, (char *)NULL);
		_exit(127);
	}
	int e = pid < 0 ? -errno : 0;
	close(sp[1]);
	if (pid < 0) {
		close(sp[0]);
		return e;
	}
	*sock = sp[0];
	return pid;
}

static char ask(int fd, char what)
{
	char ok = 0;
	if (what && write(fd, &what, 1) != 1)
		return 0;
	return read(fd, &ok, 1) == 1 ? ok : 0;
}

static void test_restart_after_crash(void **state)
{
	(void)state;
	struct vd_config c;
	conf_with(&c, img_a);
	struct vblk_rbd_conf rc_conf = {.conf_path = c.ceph.conf};
	uint8_t *buf = vblk_alloc_buf(MIB), *back = vblk_alloc_buf(MIB);
	fill(buf);
	int sock;
	pid_t pid = spawn_holder(img_a, &sock);
	assert_true(pid > 0);
	struct vreactor *r;
	assert_int_equal(vreactor_create(256, &r), 0);
	struct vd_pools *ps = calloc(1, sizeof(*ps));
	char err[1200] = "";
	struct vblk_rbd_owner o;
	int peek = -1, orc = -1, forged = 0, reopen = -1, stale = 0;
	bool stale_standby = false;
	bool standby = false, standby2 = true;
	if (ask(sock, 0) == 'k') {
		/* the holder records itself; it lives: standby here */
		peek = vblk_rbd_owner_peek(NULL, img_a, &rc_conf, &o);
		orc = vd_pools_open(ps, &c, r, err, sizeof(err));
		standby = orc == 0 && ps->p[0].standby;
		vd_pools_close(ps);
		/* a record of an earlier boot that names another client than the lock's
		 * owner (a later holder has not written its own yet): standby */
		stale = ask(sock, 's');
		int src = vd_pools_open(ps, &c, r, err, sizeof(err));
		stale_standby = src == 0 && ps->p[0].standby;
		vd_pools_close(ps);
		/* its record now says: this machine, an earlier boot -- a restart here
		 * takes the lock back at once (broken, the holder blocklisted) */
		forged = ask(sock, 'f');
		reopen = vd_pools_open(ps, &c, r, err, sizeof(err));
		standby2 = reopen == 0 && ps->p[0].standby;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(sock);
	assert_int_equal(peek, 0);
	assert_int_equal(o.pid, (int)pid);
	assert_int_equal(orc, 0);
	assert_true(standby);
	assert_int_equal(stale, 'k');
	assert_true(stale_standby);
	assert_int_equal(forged, 'k');
	assert_int_equal(reopen, 0);
	assert_false(standby2);
	assert_non_null(ps->p[0].pool);
	struct vvol *v = vpool_volume_find(ps->p[0].pool, "vol");
	assert_non_null(v);
	assert_int_equal(io(r, v, false, back, 2 * MIB, MIB), 0);
	assert_memory_equal(buf, back, MIB);
	assert_int_equal(vblk_rbd_owner_peek(NULL, img_a, &rc_conf, &o), 0);
	assert_int_equal(o.pid, (int)getpid()); /* and records itself */
	vd_pools_close(ps);
	free(ps);
	free(buf);
	free(back);
	vreactor_destroy(r);
}

/*
 * A holder on another machine that died (killed; its watch lapses after ~30 s):
 * a plain open here is standby at once -- it never waits for librbd to break
 * the lapsed holder's lock by itself (a takeover nobody decided) -- and an
 * explicit takeover then serves the acknowledged data.
 */
static void test_dead_foreign_holder(void **state)
{
	(void)state;
	struct vd_config c;
	conf_with(&c, img_a);
	uint8_t *buf = vblk_alloc_buf(MIB), *back = vblk_alloc_buf(MIB);
	fill(buf);
	int sock;
	pid_t pid = spawn_holder(img_a, &sock);
	assert_true(pid > 0);
	char ready = ask(sock, 0), forged = ready == 'k' ? ask(sock, 'm') : 0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(sock);
	assert_int_equal(ready, 'k');
	assert_int_equal(forged, 'k');
	struct vreactor *r;
	assert_int_equal(vreactor_create(256, &r), 0);
	struct vd_pools *ps = calloc(1, sizeof(*ps));
	char err[1200] = "";
	assert_int_equal(vd_pools_open(ps, &c, r, err, sizeof(err)), 0);
	assert_true(ps->p[0].standby);
	assert_null(ps->p[0].pool);
	assert_int_equal(vd_pool_takeover(ps, r, "cp", err, sizeof(err)), 0);
	struct vvol *v = vpool_volume_find(ps->p[0].pool, "vol");
	assert_non_null(v);
	assert_int_equal(io(r, v, false, back, 2 * MIB, MIB), 0);
	assert_memory_equal(buf, back, MIB);
	vd_pools_close(ps);
	free(ps);
	free(buf);
	free(back);
	vreactor_destroy(r);
}

static void test_sweep_at_open(void **state)
{
	(void)state;
	struct vreactor *r;
	assert_int_equal(vreactor_create(256, &r), 0);
	struct vd_config c;
	conf_with(&c, img_b);
	struct vd_pools *ps = calloc(1, sizeof(*ps));
	char err[1200] = "";
	assert_int_equal(vd_pools_open(ps, &c, r, err, sizeof(err)), 0);
	struct vvol *v;
	assert_int_equal(vpool_volume_create(ps->p[0].pool, "vol", 64 * MIB, 512, &v), 0);
	uint8_t *buf = vblk_alloc_buf(MIB), *back = vblk_alloc_buf(MIB);
	fill(buf);
	assert_int_equal(io(r, v, true, buf, 0, MIB), 0); /* an extent in use */
	struct vpool_stats st;
	vpool_get_stats(ps->p[0].pool, &st);
	uint64_t n_ext = st.capacity / st.extent;
	uint64_t used = ceph_bytes(img_b, st.data_off);
	/* data left in the last extent, which is free: what a crash between a free's
	 * commit and its discard leaves behind */
	assert_int_equal(vblk_pwrite_sync(ps->p[0].dev, buf, MIB, st.data_off + (n_ext - 1) * st.extent,
					  0), 0);
	assert_int_equal(vblk_flush_sync(ps->p[0].dev), 0);
	assert_true(ceph_bytes(img_b, st.data_off) >= used + MIB);
	vd_pools_close(ps);
	/* opened again: given back, the extent in use intact */
	assert_int_equal(vd_pools_open(ps, &c, r, err, sizeof(err)), 0);
	for (int i = 0; i < 1000; i++) {
		vpool_get_stats(ps->p[0].pool, &st);
		if (st.store_io.discard_ops >= 1)
			break;
		assert_true(vreactor_run_once(r, 10) >= 0);
	}
	assert_true(st.store_io.discard_ops >= 1);
	assert_int_equal(ceph_bytes(img_b, st.data_off), used);
	v = vpool_volume_find(ps->p[0].pool, "vol");
	assert_non_null(v);
	assert_int_equal(io(r, v, false, back, 0, MIB), 0);
	assert_memory_equal(buf, back, MIB);
	vd_pools_close(ps);
	free(ps);
	free(buf);
	free(back);
	vreactor_destroy(r);
}

/* Another client takes the image's lock without blocklisting this one (a lock break
 * with rbd_blocklist_on_break_lock off: vaaid never does it, an admin's tool could):
 * this gateway's writes would still reach the OSDs, yet it is no longer the writer.
 * The pool watch's lock check finds the other holder and marks the pool fenced
 * (the lock's owner is not this client's address), so nothing more is acknowledged;
 * before the break it marks nothing. */
static void test_lock_taken_without_blocklist(void **state)
{
	(void)state;
	struct vreactor *r;
	assert_int_equal(vreactor_create(256, &r), 0);
	struct vd_config c;
	conf_with(&c, img_a);
	struct vd_pools *ps = calloc(1, sizeof(*ps));
	char err[1200] = "";
	assert_int_equal(vd_pools_open(ps, &c, r, err, sizeof(err)), 0);
	struct vd_env env = {.r = r, .pools = ps, .conf = &c};
	struct vd_devices *ds;
	assert_int_equal(vd_devices_new(&env, &ds), 0);
	vd_devices_watch(ds);
	assert_false(vpool_fenced(ps->p[0].pool));

	rados_t cl;
	rados_ioctx_t io;
	rbd_image_t im;
	assert_int_equal(rados_create(&cl, NULL), 0);
	assert_int_equal(rados_conf_read_file(cl, getenv("CEPH_CONF")), 0);
	assert_int_equal(rados_conf_set(cl, "rbd_blocklist_on_break_lock", "false"), 0);
	assert_int_equal(rados_connect(cl), 0);
	assert_int_equal(rados_ioctx_create(cl, "rbd", &io), 0);
	assert_int_equal(rbd_open(io, img_a + strlen("rbd:rbd/"), &im, NULL), 0);
	rbd_lock_mode_t mode;
	char *owners[4];
	size_t n = 4;
	assert_int_equal(rbd_lock_get_owners(im, &mode, owners, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rbd_lock_break(im, RBD_LOCK_MODE_EXCLUSIVE, owners[0]), 0);
	rbd_lock_get_owners_cleanup(owners, n);
	assert_int_equal(rbd_lock_acquire(im, RBD_LOCK_MODE_EXCLUSIVE), 0);

	struct vblk_stats before = ps->p[0].dev->stats;
	vd_devices_watch(ds);
	assert_true(vpool_fenced(ps->p[0].pool));
	assert_int_equal(ps->p[0].dev->stats.write_ops, before.write_ops);
	vd_devices_free(ds);
	rbd_close(im); /* releases the lock */
	rados_ioctx_destroy(io);
	rados_shutdown(cl);
	vd_pools_close(ps); /* fenced: no checkpoint */
	free(ps);
	vreactor_destroy(r);
}

int main(int argc, char **argv)
{
	/* a write to a peer that is gone (a holder child, a socket) fails with
	 * EPIPE and the test says which, instead of dying of SIGPIPE unexplained */
	signal(SIGPIPE, SIG_IGN);
	if (argc == 4 && !strcmp(argv[1], "--holder"))
		return holder_main(argv[2], atoi(argv[3]));
	if (!getenv("CEPH_CONF")) {
		fprintf(stderr, "test_daemon_rbd_pools: CEPH_CONF is not set (run through ctest)\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_missing_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_configured_pool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_standby_view, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_after_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_foreign_holder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep_at_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_taken_without_blocklist, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
