/*
 * vd_covisible() on a fake configfs tree (directories and symlinks laid out
 * like LIO's): demo-mode TPGs, ACL-mapped LUNs, a LUN exported through one
 * TPG only, a backstore exported nowhere. And on a large tree (many LUNs and
 * ACLs, mapped under other LUN numbers), where vd_covisible -- which reads
 * only what matters for the two backstores -- must answer as the rule over
 * the full read (vd_views_read, vd_views_covisible) does.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "vaaid/covisible.h"

static char root[1024];

static void mk(const char *rel)
{
	char p[PATH_MAX], cmd[PATH_MAX + 16];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	assert_int_equal(system(cmd), 0);
}

static void ln(const char *target_rel, const char *link_rel)
{
	char t[PATH_MAX], l[PATH_MAX];
	snprintf(t, sizeof(t), "%s/%s", root, target_rel);
	snprintf(l, sizeof(l), "%s/%s", root, link_rel);
	assert_int_equal(symlink(t, l), 0);
}

static void remove_root(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* root = $VAAID_TEST_TMP (or /tmp)/<name>.<pid>, nothing there yet. */
static void fresh_root(const char *name)
{
	const char *tmp = getenv("VAAID_TEST_TMP");
	snprintf(root, sizeof(root), "%s/%s.%d", tmp ? tmp : "/tmp", name, (int)getpid());
	remove_root();
}

static void tree(void)
{
	fresh_root("covis");
	mk("target/core/user_1/vol0");
	mk("target/core/user_1/vol1");
	mk("target/core/user_1/vol2");
	mk("target/core/user_1/vol3");
	/* tcm_loop TPG: vol0, vol1, vol2 (demo mode) */
	mk("target/loopback/naa.1/tpgt_1/lun/lun_0");
	mk("target/loopback/naa.1/tpgt_1/lun/lun_1");
	mk("target/loopback/naa.1/tpgt_1/lun/lun_2");
	ln("target/core/user_1/vol0", "target/loopback/naa.1/tpgt_1/lun/lun_0/a");
	ln("target/core/user_1/vol1", "target/loopback/naa.1/tpgt_1/lun/lun_1/b");
	ln("target/core/user_1/vol2", "target/loopback/naa.1/tpgt_1/lun/lun_2/c");
	/* iSCSI TPG: vol0 and vol1, ACL init1 sees only lun_0; vol2 is not exported here */
	mk("target/iscsi/iqn.x/tpgt_1/lun/lun_0");
	mk("target/iscsi/iqn.x/tpgt_1/lun/lun_1");
	ln("target/core/user_1/vol0", "target/iscsi/iqn.x/tpgt_1/lun/lun_0/a");
	ln("target/core/user_1/vol1", "target/iscsi/iqn.x/tpgt_1/lun/lun_1/b");
	mk("target/iscsi/iqn.x/tpgt_1/acls/init1/lun_0");
	ln("target/iscsi/iqn.x/tpgt_1/lun/lun_0", "target/iscsi/iqn.x/tpgt_1/acls/init1/lun_0/m");
	mk("target/iscsi/iqn.x/tpgt_1/acls/init2/lun_0");
	mk("target/iscsi/iqn.x/tpgt_1/acls/init2/lun_1");
	ln("target/iscsi/iqn.x/tpgt_1/lun/lun_1", "target/iscsi/iqn.x/tpgt_1/acls/init2/lun_0/m");
	ln("target/iscsi/iqn.x/tpgt_1/lun/lun_0", "target/iscsi/iqn.x/tpgt_1/acls/init2/lun_1/m");
}

static void test_covisibility(void **state)
{
	(void)state;
	tree();
	/* vol2 only through tcm_loop, which also exports vol0 and vol1 */
	assert_int_equal(vd_covisible(root, "user_1/vol2", "user_1/vol0"), 1);
	assert_int_equal(vd_covisible(root, "user_1/vol2", "user_1/vol1"), 1);
	/* vol0 is exported by iSCSI too, where vol2 is not */
	assert_int_equal(vd_covisible(root, "user_1/vol0", "user_1/vol2"), 0);
	/* vol0 and vol1 in both TPGs, but ACL init1 maps vol0 without vol1 */
	assert_int_equal(vd_covisible(root, "user_1/vol0", "user_1/vol1"), 0);
	/* from vol1: init2 maps vol1 and vol0; init1 does not map vol1 at all */
	assert_int_equal(vd_covisible(root, "user_1/vol1", "user_1/vol0"), 1);
	/* a backstore exported nowhere is co-visible with nothing */
	assert_int_equal(vd_covisible(root, "user_1/vol3", "user_1/vol0"), 0);
	assert_int_equal(vd_covisible(root, "user_1/vol0", "user_1/vol3"), 0);
	/* names are compared whole: vol1 is not vol11 */
	assert_int_equal(vd_covisible(root, "user_1/vol2", "user_1/vol"), 0);
	remove_root();
}

#define BIG_LUNS 64
#define BIG_ACLS 8

static void mkd(const char *fmt, int i, int k)
{
	char rel[256], p[PATH_MAX];
	snprintf(rel, sizeof(rel), fmt, i, k);
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void lnk(const char *tfmt, int ti, const char *lfmt, int li, int lk)
{
	char tr[256], lr[256];
	snprintf(tr, sizeof(tr), tfmt, ti);
	snprintf(lr, sizeof(lr), lfmt, li, lk);
	ln(tr, lr);
}

/*
 * iSCSI TPG: vol0..vol63 as lun_0..lun_63 (vol63 also as lun_64, a second LUN of
 * one backstore); ACL init<k> maps TPG LUN (i + 7k) % 64 as its lun_i, all of them,
 * except: init1 leaves out the TPG's lun_5 (vol5), init2 maps only vol0..vol15.
 * tcm_loop TPG: vol0..vol3 and vol40. vol99 exists, exported nowhere.
 */
static void big_tree(void)
{
	fresh_root("covis_big");
	mk("target/core/user_1");
	mk("target/iscsi/iqn.big/tpgt_1/lun");
	mk("target/iscsi/iqn.big/tpgt_1/acls");
	mk("target/loopback/naa.big/tpgt_1/lun");
	mkd("target/core/user_1/vol%d", 99, 0);
	for (int i = 0; i < BIG_LUNS; i++) {
		mkd("target/core/user_1/vol%d", i, 0);
		mkd("target/iscsi/iqn.big/tpgt_1/lun/lun_%d", i, 0);
		lnk("target/core/user_1/vol%d", i, "target/iscsi/iqn.big/tpgt_1/lun/lun_%d/x", i, 0);
		if (i < 4 || i == 40) {
			mkd("target/loopback/naa.big/tpgt_1/lun/lun_%d", i, 0);
			lnk("target/core/user_1/vol%d", i, "target/loopback/naa.big/tpgt_1/lun/lun_%d/x",
			    i, 0);
		}
	}
	mkd("target/iscsi/iqn.big/tpgt_1/lun/lun_%d", BIG_LUNS, 0);
	lnk("target/core/user_1/vol%d", BIG_LUNS - 1, "target/iscsi/iqn.big/tpgt_1/lun/lun_%d/x",
	    BIG_LUNS, 0);
	for (int k = 0; k < BIG_ACLS; k++) {
		mkd("target/iscsi/iqn.big/tpgt_1/acls/init%d", k, 0);
		for (int i = 0; i < BIG_LUNS; i++) {
			int m = (i + 7 * k) % BIG_LUNS;
			if ((k == 1 && m == 5) || (k == 2 && m >= 16))
				continue;
			mkd("target/iscsi/iqn.big/tpgt_1/acls/init%d/lun_%d", k, i);
			lnk("target/iscsi/iqn.big/tpgt_1/lun/lun_%d", m,
			    "target/iscsi/iqn.big/tpgt_1/acls/init%d/lun_%d/m", k, i);
		}
	}
}

static void test_covisibility_big(void **state)
{
	(void)state;
	big_tree();
	struct vd_views *all;
	assert_int_equal(vd_views_read(root, &all), 0);
	const int vols[] = {0, 1, 3, 4, 5, 6, 15, 16, 40, 62, 63, 99};
	const int nv = (int)(sizeof(vols) / sizeof(vols[0]));
	int ones = 0;
	for (int i = 0; i < nv; i++)
		for (int j = 0; j < nv; j++) {
			char a[32], b[32];
			snprintf(a, sizeof(a), "user_1/vol%d", vols[i]);
			snprintf(b, sizeof(b), "user_1/vol%d", vols[j]);
			int full = vd_views_covisible(all, a, b), cv = vd_covisible(root, a, b);
			if (full != cv)
				fail_msg("%s -> %s: vd_covisible %d, the full read %d", a, b, cv, full);
			ones += cv;
		}
	vd_views_free(all);
	/* both answers occur, and some known ones: */
	assert_true(ones > 0 && ones < nv * nv);
	/* vol4..vol15 are seen by the iSCSI TPG and every ACL (init1 lacks only vol5) */
	assert_int_equal(vd_covisible(root, "user_1/vol6", "user_1/vol15"), 1);
	assert_int_equal(vd_covisible(root, "user_1/vol6", "user_1/vol5"), 0);
	assert_int_equal(vd_covisible(root, "user_1/vol5", "user_1/vol6"), 1);
	/* init2 sees vol15 but not vol16 */
	assert_int_equal(vd_covisible(root, "user_1/vol15", "user_1/vol16"), 0);
	assert_int_equal(vd_covisible(root, "user_1/vol16", "user_1/vol15"), 1);
	/* vol40 also through tcm_loop, without vol62; vol62 only through iSCSI */
	assert_int_equal(vd_covisible(root, "user_1/vol40", "user_1/vol62"), 0);
	assert_int_equal(vd_covisible(root, "user_1/vol62", "user_1/vol40"), 1);
	/* vol3 (tcm_loop, iSCSI, every ACL), vol40 (not init2) */
	assert_int_equal(vd_covisible(root, "user_1/vol40", "user_1/vol3"), 1);
	assert_int_equal(vd_covisible(root, "user_1/vol3", "user_1/vol40"), 0);
	/* a backstore exported nowhere */
	assert_int_equal(vd_covisible(root, "user_1/vol99", "user_1/vol0"), 0);
	assert_int_equal(vd_covisible(root, "user_1/vol0", "user_1/vol99"), 0);
	remove_root();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_covisibility),
		cmocka_unit_test(test_covisibility_big),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
