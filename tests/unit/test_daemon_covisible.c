/*
 * vd_covisible() on a fake configfs tree (directories and symlinks laid out
 * like LIO's): demo-mode TPGs, ACL-mapped LUNs, a LUN exported through one
 * TPG only, a backstore exported nowhere.
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

static void tree(void)
{
	const char *tmp = getenv("VAAID_TEST_TMP");
	snprintf(root, sizeof(root), "%s/covis.%d", tmp ? tmp : "/tmp", (int)getpid());
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
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
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_covisibility),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
