/*
 * A standby gateway clears its own fenced mark from the shared ALUA record
 * (docs/ceph.md "The shared ALUA record") without ever touching the holder's
 * lock. The image's lock is held by a process of its own (this program with
 * --hold SPEC: vblk_rbd_open, group 1), frozen with SIGSTOP: alive, its watch
 * still registered, but answering no notify -- as a gateway that is stuck or
 * cut off. The mark "vaaid.alua.fenced.2" is on the image; a gateway of group
 * 2 then opens the image: it is refused (-EBUSY: standby), its mark is gone,
 * and the lock is still the frozen holder's (the same owner, not blocklisted).
 * Red with librbd's rbd_metadata_remove on the standby's handle: a non-owner's
 * metadata update is sent to the owner, which does not answer, and librbd then
 * acquires the lock itself, breaking it and blocklisting the holder (or the
 * open waits for that and fails).
 * test_owner_past_stale_marks: twelve stale fenced marks (groups 100..111,
 * which sort before "vaaid.alua.owner") do not hide the owner from
 * vblk_rbd_alua_get (red when the owner is read from the bounded list alone).
 * test_owner_prunes_stale_marks: the same twelve stale marks and a peer's
 * (group 2); a holder of group 5 with peers 2 and 6 removes the twelve at
 * open (groups no gateway of its deployment answers for) and keeps the peer's:
 * the record then reads owner 5, fenced {2} (red without the removal: the
 * twelve stay and crowd the list, fenced.2 sorting past its bound).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "holder_process.h"
#include <rados/librados.h>
#include <rbd/librbd.h>

#include "vaaid/io.h"
#include "vaaid/rbd_owner.h"

static const char *self_exe;
static pid_t holder = -1; /* the holder process while it runs (a failed test's: killed) */
static char spec[64], image[48];

/* --hold SPEC: hold SPEC's lock as group 1 until killed. */
static int hold(const char *s)
{
	struct vreactor *r;
	struct vblk *b;
	struct vblk_rbd_conf c = {.conf_path = getenv("CEPH_CONF"), .alua_group = 1};
	if (vreactor_create(64, &r) < 0 || vblk_rbd_open(r, s, &c, 0, &b) < 0)
		return 1;
	printf("held\n");
	fflush(stdout);
	for (;;)
		pause();
}

static void kill_holder(void)
{
	if (holder > 0) {
		kill(holder, SIGKILL);
		waitpid(holder, NULL, 0);
		holder = -1;
	}
}

static int teardown(void **state)
{
	(void)state;
	kill_holder(); /* a failed test's: frozen, it would keep ctest's pipe open */
	return 0;
}

/* The test's own client on the pool "rbd". */
static void connect_rbd(rados_t *cl, rados_ioctx_t *io)
{
	assert_int_equal(rados_create(cl, NULL), 0);
	assert_int_equal(rados_conf_read_file(*cl, getenv("CEPH_CONF")), 0);
	assert_int_equal(rados_connect(*cl), 0);
	assert_int_equal(rados_ioctx_create(*cl, "rbd", io), 0);
}

/* The lock's single owner into out; the number of owners. */
static size_t lock_owner(rados_ioctx_t io, char *out, size_t cap)
{
	rbd_image_t img; /* not read-only: librbd answers lock queries only then */
	assert_int_equal(rbd_open(io, image, &img, NULL), 0);
	rbd_lock_mode_t mode;
	char *owners[4];
	size_t n = 4;
	int rc = rbd_lock_get_owners(img, &mode, owners, &n);
	if (rc == -ENOENT)
		n = 0;
	else
		assert_int_equal(rc, 0);
	out[0] = '\0';
	if (n > 0)
		snprintf(out, cap, "%s", owners[0]);
	if (n > 0)
		rbd_lock_get_owners_cleanup(owners, n);
	rbd_close(img);
	return n;
}

static int mark_get(rados_ioctx_t io)
{
	rbd_image_t img;
	assert_int_equal(rbd_open_read_only(io, image, &img, NULL), 0);
	char v[16];
	size_t len = sizeof(v);
	int rc = rbd_metadata_get(img, VBLK_RBD_ALUA_FENCED_KEY "2", v, &len);
	rbd_close(img);
	return rc;
}

static void test_standby_unfence_keeps_lock(void **state)
{
	(void)state;
	rados_t cl;
	rados_ioctx_t io;
	connect_rbd(&cl, &io);
	rbd_remove(io, image);
	int order = 20;
	assert_int_equal(rbd_create(io, image, 16u << 20, &order), 0);
	rbd_image_t img;
	assert_int_equal(rbd_open(io, image, &img, NULL), 0);
	assert_int_equal(rbd_metadata_set(img, VBLK_RBD_ALUA_FENCED_KEY "2", "1"), 0);
	assert_int_equal(rbd_close(img), 0);

	holder = ceph_holder_start(self_exe, spec, "the lock");
	char before[128], after[128];
	assert_int_equal(lock_owner(io, before, sizeof(before)), 1);
	assert_int_equal(kill(holder, SIGSTOP), 0); /* alive, answering nothing */

	struct vreactor *r;
	assert_int_equal(vreactor_create(64, &r), 0);
	struct vblk_rbd_conf c = {.conf_path = getenv("CEPH_CONF"), .alua_group = 2};
	struct vblk *b = NULL;
	assert_int_equal(vblk_rbd_open(r, spec, &c, 0, &b), -EBUSY); /* standby */
	assert_int_equal(mark_get(io), -ENOENT);                      /* its mark is gone */
	assert_int_equal(lock_owner(io, after, sizeof(after)), 1);
	assert_string_equal(before, after); /* the holder's lock untouched */

	/* the holder was not blocklisted: alive again, it still holds the lock */
	assert_int_equal(kill(holder, SIGCONT), 0);
	assert_int_equal(lock_owner(io, after, sizeof(after)), 1);
	assert_string_equal(before, after);
	kill_holder();
	vreactor_destroy(r);
	rados_ioctx_destroy(io);
	rados_shutdown(cl);
}

/* A new 16 MiB image IMAGE-SUFFIX (its name and its spec "rbd:rbd/NAME" given
 * back), open, holding twelve fenced marks of groups 100..111 (value 9) that no
 * gateway answers for. */
static rbd_image_t image_with_stale_marks(rados_ioctx_t io, const char *suffix, char *name,
					  size_t nl, char *spec, size_t sl)
{
	snprintf(name, nl, "%s-%s", image, suffix);
	snprintf(spec, sl, "rbd:rbd/%s", name);
	rbd_remove(io, name);
	int order = 20;
	assert_int_equal(rbd_create(io, name, 16u << 20, &order), 0);
	rbd_image_t img;
	assert_int_equal(rbd_open(io, name, &img, NULL), 0);
	for (unsigned g = 100; g < 112; g++) {
		char k[64];
		snprintf(k, sizeof(k), VBLK_RBD_ALUA_FENCED_KEY "%u", g);
		assert_int_equal(rbd_metadata_set(img, k, "9"), 0);
	}
	return img;
}

static void test_owner_past_stale_marks(void **state)
{
	(void)state;
	rados_t cl;
	rados_ioctx_t io;
	connect_rbd(&cl, &io);
	char img_name[64], sp[96];
	rbd_image_t img = image_with_stale_marks(io, "stale", img_name, sizeof(img_name), sp,
						 sizeof(sp));
	assert_int_equal(rbd_close(img), 0);
	struct vreactor *r;
	assert_int_equal(vreactor_create(64, &r), 0);
	struct vblk_rbd_conf c = {.conf_path = getenv("CEPH_CONF"), .alua_group = 5};
	struct vblk *b;
	assert_int_equal(vblk_rbd_open(r, sp, &c, 0, &b), 0); /* writes owner 5 */
	struct vblk_rbd_alua rec;
	assert_int_equal(vblk_rbd_alua_get(b, &rec), 0);
	assert_int_equal(rec.owner, 5);
	assert_int_equal(rec.n_fenced, VBLK_RBD_ALUA_MAX_FENCED);
	vblk_close(b);
	vreactor_destroy(r);
	rbd_remove(io, img_name);
	rados_ioctx_destroy(io);
	rados_shutdown(cl);
}

static void test_owner_prunes_stale_marks(void **state)
{
	(void)state;
	rados_t cl;
	rados_ioctx_t io;
	connect_rbd(&cl, &io);
	char img_name[64], sp[96];
	rbd_image_t img = image_with_stale_marks(io, "prune", img_name, sizeof(img_name), sp,
						 sizeof(sp));
	assert_int_equal(rbd_metadata_set(img, VBLK_RBD_ALUA_FENCED_KEY "2", "6"), 0);
	assert_int_equal(rbd_close(img), 0);
	struct vreactor *r;
	assert_int_equal(vreactor_create(64, &r), 0);
	const uint16_t peers[] = {2, 6};
	struct vblk_rbd_conf c = {.conf_path = getenv("CEPH_CONF"), .alua_group = 5,
				  .alua_peers = peers, .alua_n_peers = 2};
	struct vblk *b;
	assert_int_equal(vblk_rbd_open(r, sp, &c, 0, &b), 0); /* writes owner 5, prunes */
	struct vblk_rbd_alua rec;
	assert_int_equal(vblk_rbd_alua_get(b, &rec), 0);
	assert_int_equal(rec.owner, 5);
	assert_int_equal(rec.n_fenced, 1); /* the peer's mark only */
	assert_int_equal(rec.fenced[0], 2);
	vblk_close(b);
	vreactor_destroy(r);
	rbd_remove(io, img_name);
	rados_ioctx_destroy(io);
	rados_shutdown(cl);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	self_exe = argv[0];
	if (argc == 3 && !strcmp(argv[1], "--hold"))
		return hold(argv[2]);
	if (!getenv("CEPH_CONF")) {
		fprintf(stderr, "test_alua_unfence: CEPH_CONF is not set (run through ctest)\n");
		return 1;
	}
	snprintf(image, sizeof(image), "unfence-%d", (int)getpid());
	snprintf(spec, sizeof(spec), "rbd:rbd/%s", image);
	const struct CMUnitTest tests[] = {cmocka_unit_test_teardown(test_standby_unfence_keeps_lock, teardown),
					   cmocka_unit_test(test_owner_past_stale_marks),
					   cmocka_unit_test(test_owner_prunes_stale_marks)};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	vblk_rbd_remove(spec, NULL);
	return rc;
}
