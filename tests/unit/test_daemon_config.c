/*
 * The daemon's configuration file (vd_config_load, src/daemon/config.c): every
 * key is read; every bad value, unknown key or section, syntax error, pool
 * without a path and two pools on one path is refused with a message naming
 * the file and, where there is one, the line -- never half applied silently.
 * The commented default file the package ships shows every key at its default.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vaaid/daemon.h"
#include "vaaid/util.h"

struct file {
	char path[512];
};

static void write_conf(struct file *f, const char *text)
{
	const char *tmp = getenv("VAAID_TEST_TMP");
	snprintf(f->path, sizeof(f->path), "%s/daemon_config.%d.conf", tmp ? tmp : "/tmp", (int)getpid());
	FILE *fp = fopen(f->path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* Load text; returns the result, err gets the message. */
static int load(const char *text, struct vd_config *c, char *err, size_t errlen)
{
	struct file f;
	write_conf(&f, text);
	vd_config_defaults(c);
	err[0] = 0;
	int rc = vd_config_load(c, f.path, err, errlen);
	unlink(f.path);
	return rc;
}

static void test_every_key(void **state)
{
	(void)state;
	struct vd_config c;
	char err[512];
	assert_int_equal(load("[daemon]\n"
			      "state_dir = /srv/vaaid\n"
			      "control_socket = /run/v/ctl\n"
			      "log_level = debug\n"
			      "soft_threshold = 90\n"
			      "default_pool_size = 2T\n"
			      "xcopy_scope = pool\n"
			      "whole_granule_writes = off\n"
			      "group_flush = off\n"
			      "[pool fast]\n"
			      "path = /dev/nvme0n1\n"
			      "extent = 4M\n"
			      "live_checkpoints = yes\n"
			      "[pool slow]\n"
			      "path = /srv/slow.pool\n"
			      "size = 512G\n"
			      "live_checkpoints = no\n"
			      "[pool ceph]\n"
			      "path = rbd:vaai/ds1.pool\n"
			      "size = 1T\n"
			      "create = yes\n"
			      "[alua]\n"
			      "group = 65535\n"
			      "peers = 1, 2 ,300\n"
			      "[tcmu]\n"
			      "leave = vaai , other_2\n"
			      "handler = vaaib\n"
			      "[ceph]\n"
			      "conf = /etc/ceph/site.conf\n"
			      "client_id = vaaid.gw1\n"
			      "keyring = /etc/ceph/ceph.client.vaaid.keyring\n"
			      "op_timeout = 3600\n",
			      &c, err, sizeof(err)),
			 0);
	assert_string_equal(c.pools[2].path, "rbd:vaai/ds1.pool");
	assert_int_equal(c.pools[2].create, VD_CREATE_YES);
	assert_int_equal(c.pools[1].create, VD_CREATE_AUTO);
	assert_true(c.pools[0].live_checkpoints);
	assert_false(c.pools[1].live_checkpoints);
	assert_false(c.pools[2].live_checkpoints); /* the default */
	assert_string_equal(c.ceph.conf, "/etc/ceph/site.conf");
	assert_int_equal(c.alua.group, 65535);
	assert_int_equal(c.alua.n_peers, 3);
	assert_int_equal(c.alua.peers[0], 1);
	assert_int_equal(c.alua.peers[1], 2);
	assert_int_equal(c.alua.peers[2], 300);
	assert_string_equal(c.tcmu.handler, "vaaib");
	assert_int_equal(c.tcmu.n_leave, 2);
	assert_string_equal(c.tcmu.leave[0], "vaai");
	assert_string_equal(c.tcmu.leave[1], "other_2");
	assert_int_equal(vd_handler_claim(&c.tcmu, "vaaib"), VD_HANDLER_SERVE);
	assert_int_equal(vd_handler_claim(&c.tcmu, "vaai"), VD_HANDLER_LEAVE);
	assert_int_equal(vd_handler_claim(&c.tcmu, "other_2"), VD_HANDLER_LEAVE);
	assert_int_equal(vd_handler_claim(&c.tcmu, "other"), VD_HANDLER_REFUSE);
	assert_int_equal(vd_handler_claim(&c.tcmu, "vaaibb"), VD_HANDLER_REFUSE);
	assert_string_equal(c.ceph.client_id, "vaaid.gw1");
	assert_string_equal(c.ceph.keyring, "/etc/ceph/ceph.client.vaaid.keyring");
	assert_int_equal(c.ceph.op_timeout, 3600);
	assert_string_equal(c.state_dir, "/srv/vaaid");
	assert_string_equal(c.control_socket, "/run/v/ctl");
	assert_int_equal(c.soft_threshold, 90);
	assert_true(c.default_pool_size == 2ull << 40);
	assert_int_equal(c.xcopy_scope, VD_XCOPY_POOL);
	assert_int_equal(c.whole_granule_writes, VD_WHOLE_OFF);
	assert_int_equal(c.group_flush, VD_GROUP_OFF);
	assert_int_equal(c.n_pools, 3);
	assert_string_equal(c.pools[0].name, "fast");
	assert_int_equal(c.pools[0].extent, 4u << 20);
	assert_true(c.pools[1].size == 512ull << 30);
	vd_config_finish(&c);
	assert_int_equal(c.n_pools, 4); /* "default" added, in the state directory */
	assert_string_equal(c.pools[3].path, "/srv/vaaid/default.pool");
	assert_true(c.pools[0].size == 2ull << 40); /* default_pool_size where none is given */

	assert_int_equal(load("[daemon]\nwhole_granule_writes = on\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.whole_granule_writes, VD_WHOLE_ON);
	assert_int_equal(load("[daemon]\nwhole_granule_writes = auto\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.whole_granule_writes, VD_WHOLE_AUTO);
	assert_int_equal(load("[daemon]\ngroup_flush = on\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.group_flush, VD_GROUP_ON);
	assert_int_equal(load("", &c, err, sizeof(err)), 0); /* an empty file: the defaults */
	assert_string_equal(c.tcmu.handler, "vaai"); /* user:vaai, nothing left to others */
	assert_int_equal(c.tcmu.n_leave, 0);
	assert_int_equal(vd_handler_claim(&c.tcmu, "vaai"), VD_HANDLER_SERVE);
	assert_int_equal(vd_handler_claim(&c.tcmu, "vaaib"), VD_HANDLER_REFUSE);
	assert_int_equal(c.whole_granule_writes, VD_WHOLE_AUTO);
	assert_int_equal(c.group_flush, VD_GROUP_AUTO);
}

/* Each bad file: -EINVAL, and the message holds want (and ":LINE:" when line > 0). */
static void refused(const char *text, int line, const char *want)
{
	struct vd_config c;
	char err[512];
	assert_int_equal(load(text, &c, err, sizeof(err)), -EINVAL);
	if (!strstr(err, want)) {
		fprintf(stderr, "message '%s' lacks '%s'\n", err, want);
		fail();
	}
	if (line > 0) {
		char at[32];
		snprintf(at, sizeof(at), ":%d: ", line);
		if (!strstr(err, at)) {
			fprintf(stderr, "message '%s' names no line %d\n", err, line);
			fail();
		}
	}
}

static void test_bad_files(void **state)
{
	(void)state;
	refused("[daemon]\nstate_dir = relative/dir\n", 2, "must be an absolute path");
	refused("[daemon]\ncontrol_socket = sock\n", 2, "must be an absolute path");
	refused("[daemon]\nlog_level = loud\n", 2, "log_level 'loud' is not one of");
	refused("[daemon]\nsoft_threshold = 0\n", 2, "percentage 1..100");
	refused("[daemon]\nsoft_threshold = 101\n", 2, "percentage 1..100");
	refused("[daemon]\nsoft_threshold = 8O\n", 2, "percentage 1..100");
	refused("[daemon]\ndefault_pool_size = lots\n", 2, "is not a size");
	refused("[daemon]\ndefault_pool_size = 0\n", 2, "is not a size");
	refused("[daemon]\nxcopy_scope = anywhere\n", 2, "xcopy_scope 'anywhere' is not one of");
	refused("[daemon]\nwhole_granule_writes = yes\n", 2, "whole_granule_writes 'yes' is not one of auto, on, off");
	refused("[daemon]\ngroup_flush = 4\n", 2, "group_flush '4' is not one of auto, on, off");
	refused("[daemon]\nthreads = 4\n", 2, "unknown key 'threads' in [daemon]");
	refused("[daemon]\n\n[cache]\nsize = 1G\n", 4, "unknown section [cache]");
	refused("[pool p]\npath = /x\nsize = big\n", 3, "pool size 'big' is not a size");
	refused("[pool p]\npath = /x\nextent = 3M\n", 3, "power of two from 64K to 16M");
	refused("[pool p]\npath = /x\nextent = 32K\n", 3, "power of two from 64K to 16M");
	refused("[pool p]\npath = /x\nextent = 32M\n", 3, "power of two from 64K to 16M");
	refused("[pool p]\npath = x.pool\n", 2, "must be an absolute path");
	refused("[pool p]\ncolour = red\n", 2, "unknown key 'colour' in a [pool] section");
	refused("[pool p]\npath = rbd:pool\n", 2, "absolute path or rbd:CEPHPOOL/IMAGE");
	refused("[pool p]\ncreate = maybe\n", 2, "create 'maybe' is not one of auto, yes, no");
	refused("[pool p]\nlive_checkpoints = on\n", 2, "live_checkpoints 'on' is not one of yes, no");
	refused("[pool p]\npath = rbd:pool/img@snap\n", 2, "absolute path or rbd:CEPHPOOL/IMAGE");
	refused("[ceph]\nconf = ceph.conf\n", 2, "[ceph] conf 'ceph.conf' must be an absolute path");
	refused("[ceph]\nkeyring = k\n", 2, "[ceph] keyring 'k' must be an absolute path");
	refused("[ceph]\nclient_id = a b\n", 2, "[ceph] client_id 'a b' is not a name");
	refused("[ceph]\nmon_host = 1.2.3.4\n", 2, "unknown key 'mon_host' in [ceph]");
	refused("[ceph]\nop_timeout = 0\n", 2, "[ceph] op_timeout '0' must be seconds, 1..3600");
	refused("[ceph]\nop_timeout = 3601\n", 2, "[ceph] op_timeout '3601' must be seconds");
	refused("[ceph]\nop_timeout = 5s\n", 2, "[ceph] op_timeout '5s' must be seconds");
	refused("[pool ../etc]\npath = /x\n", 2, "bad pool name '../etc'");
	refused("[daemon]\nthis is not a key value line\n", 2, "syntax error");
	refused("[metrics]\nlisten = localhost:9612\n", 2, "[metrics] listen 'localhost:9612' is not ADDRESS:PORT");
	refused("[metrics]\nlisten = 127.0.0.1:0\n", 2, "is not ADDRESS:PORT");
	refused("[metrics]\nlisten = 127.0.0.1\n", 2, "is not ADDRESS:PORT");
	refused("[metrics]\nport = 9612\n", 2, "unknown key 'port' in [metrics]");
	refused("[alua]\ngroup = 0\n", 2, "[alua] group '0' is not a target port group id 1..65535");
	refused("[alua]\ngroup = 65536\n", 2, "is not a target port group id");
	refused("[alua]\ngroup = -1\n", 2, "is not a target port group id");
	refused("[alua]\ngroup = 1x\n", 2, "is not a target port group id");
	refused("[alua]\ngroup = 1\npeers = 2,,3\n", 3, "[alua] peers '2,,3' is not a list");
	refused("[alua]\ngroup = 1\npeers = 2,2\n", 3, "is not a list of distinct group ids");
	refused("[alua]\ngroup = 1\npeers = 2,\n", 3, "is not a list");
	refused("[alua]\ngroup = 1\npeers = 2,3,4,5,6,7,8,9\n", 3, "at most 7");
	refused("[alua]\ngroup = 1\npeers = 0\n", 3, "is not a list");
	refused("[alua]\nport = 1\n", 2, "unknown key 'port' in [alua]");
	refused("[alua]\npeers = 2\n", 0, "[alua] peers without group");
	refused("[alua]\ngroup = 2\npeers = 1, 2\n", 0, "[alua] peers name this gateway's own group 2");
	refused("[tcmu]\nhandler = \n", 2, "[tcmu] handler '' is not a handler name");
	refused("[tcmu]\nhandler = va-ai\n", 2, "[tcmu] handler 'va-ai' is not a handler name");
	refused("[tcmu]\nhandler = v.a\n", 2, "is not a handler name");
	refused("[tcmu]\nhandler = vaai/x\n", 2, "is not a handler name");
	refused("[tcmu]\nhandler = HandlerManager1\n", 2, "the D-Bus handler manager's name");
	refused("[tcmu]\nhandler = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 2, "at most 32"); /* 33 */
	refused("[tcmu]\nleave = \n", 2, "[tcmu] leave '' is not a list of distinct handler names");
	refused("[tcmu]\nleave = a,,b\n", 2, "[tcmu] leave 'a,,b' is not a list");
	refused("[tcmu]\nleave = a,a\n", 2, "is not a list of distinct");
	refused("[tcmu]\nleave = a,\n", 2, "is not a list");
	refused("[tcmu]\nleave = a b\n", 2, "is not a list");
	refused("[tcmu]\nleave = a-b\n", 2, "is not a list");
	refused("[tcmu]\nleave = a,b,c,d,e\n", 2, "at most 4");
	refused("[tcmu]\nserve = a\n", 2, "unknown key 'serve' in [tcmu]");
	refused("[tcmu]\nleave = vaai\n", 0, "[tcmu] leave names this daemon's own handler vaai");
	refused("[tcmu]\nleave = x, vaaib\nhandler = vaaib\n", 0,
		"[tcmu] leave names this daemon's own handler vaaib");
	refused("[pool p]\nsize = 1G\n", 0, "pool 'p' has no path");
	refused("[pool a]\npath = /srv/x.pool\n[pool b]\npath = /srv/x.pool\n", 0,
		"pools 'a' and 'b' have the same path /srv/x.pool");
}

static void test_missing_file(void **state)
{
	(void)state;
	struct vd_config c;
	char err[512];
	vd_config_defaults(&c);
	assert_int_equal(vd_config_load(&c, "/nonexistent/vaaid.conf", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/vaaid.conf"));
}

/*
 * <state_dir>/pools.conf (vd_config_load_recorded): the pools it adds are refused
 * when their store is missing (create = no) unless their record names create;
 * the pools of vaaid.conf keep theirs.
 */
static void test_recorded_pools(void **state)
{
	(void)state;
	struct vd_config c;
	char err[512] = "";
	assert_int_equal(load("[pool a]\npath = /srv/a.pool\n", &c, err, sizeof(err)), 0);
	struct file f;
	write_conf(&f, "[pool b]\npath = /srv/b.pool\nsize = 1073741824\n"
		       "[pool c]\npath = /srv/c.pool\ncreate = yes\n");
	assert_int_equal(vd_config_load_recorded(&c, f.path, err, sizeof(err)), 0);
	unlink(f.path);
	assert_int_equal(c.n_pools, 3);
	assert_string_equal(c.pools[0].name, "a");
	assert_int_equal(c.pools[0].create, VD_CREATE_AUTO);
	assert_string_equal(c.pools[1].name, "b");
	assert_int_equal(c.pools[1].create, VD_CREATE_NO);
	assert_string_equal(c.pools[2].name, "c");
	assert_int_equal(c.pools[2].create, VD_CREATE_YES);
}

/*
 * The commented default configuration the package installs as
 * /etc/vaaid/vaaid.conf (tools/dist/vaaid.conf; VAAID_DIST_CONF is set by the
 * top-level CMakeLists.txt): as shipped it changes nothing; with every
 * commented "#key = value" and "#[pool NAME]" line uncommented it still loads,
 * names every key, and each [daemon] value it shows is the built-in default.
 */
static void test_shipped_file(void **state)
{
	(void)state;
	struct vd_config d, c;
	char err[512];
	vd_config_defaults(&d);
	vd_config_defaults(&c);
	int rc = vd_config_load(&c, VAAID_DIST_CONF, err, sizeof(err));
	if (rc < 0)
		fail_msg("%s", err);
	assert_int_equal(c.n_pools, 0);
	assert_memory_equal(&c, &d, sizeof(c));

	FILE *f = fopen(VAAID_DIST_CONF, "r");
	assert_non_null(f);
	char text[16384] = "", line[512];
	static const char *const keys[] = {"state_dir", "control_socket", "log_level",
		"soft_threshold", "default_pool_size", "xcopy_scope", "whole_granule_writes",
		"group_flush", "path", "size", "extent", "live_checkpoints", "listen", "group", "peers", "handler", "leave", "op_timeout"};
	bool seen[sizeof(keys) / sizeof(keys[0])] = {false};
	while (fgets(line, sizeof(line), f)) {
		const char *l = line;
		if (line[0] == '#' && (line[1] == '[' || (line[1] >= 'a' && line[1] <= 'z'))) {
			l = line + 1;
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
				if (!strncmp(l, keys[k], strlen(keys[k])) && l[strlen(keys[k])] == ' ')
					seen[k] = true;
		}
		assert_true(strlen(text) + strlen(l) < sizeof(text));
		strcat(text, l);
	}
	fclose(f);
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (!seen[k])
			fail_msg("tools/dist/vaaid.conf does not show the key %s", keys[k]);
	rc = load(text, &c, err, sizeof(err));
	if (rc < 0)
		fail_msg("uncommented: %s", err);
	assert_int_equal(c.n_pools, 1);
	c.n_pools = 0;
	memset(&c.pools[0], 0, sizeof(c.pools[0]));
	assert_string_equal(c.state_dir, d.state_dir);
	assert_string_equal(c.control_socket, d.control_socket);
	assert_int_equal(c.log_level, d.log_level);
	assert_int_equal(c.soft_threshold, d.soft_threshold);
	assert_true(c.default_pool_size == d.default_pool_size);
	assert_int_equal(c.xcopy_scope, d.xcopy_scope);
	assert_int_equal(c.whole_granule_writes, d.whole_granule_writes);
	assert_int_equal(c.group_flush, d.group_flush);
	/* the example's [metrics] listen: an endpoint only where it is set */
	assert_string_equal(d.metrics_listen, "");
	assert_string_equal(c.metrics_listen, "127.0.0.1:9612");
	memset(c.metrics_listen, 0, sizeof(c.metrics_listen));
	/* the example's [ceph] settings: librados' defaults where they are not set */
	assert_string_equal(d.ceph.conf, "");
	assert_string_equal(c.ceph.conf, "/etc/ceph/ceph.conf");
	assert_string_equal(c.ceph.client_id, "vaaid");
	assert_string_equal(c.ceph.keyring, "/etc/ceph/ceph.client.vaaid.keyring");
	assert_int_equal(d.ceph.op_timeout, VBLK_RBD_OP_TIMEOUT_DEFAULT); /* the example shows the default */
	assert_int_equal(c.ceph.op_timeout, d.ceph.op_timeout);
	c.ceph = d.ceph;
	/* the example's [alua]: none by default */
	assert_int_equal(d.alua.group, 0);
	assert_int_equal(c.alua.group, 1);
	assert_int_equal(c.alua.n_peers, 1);
	assert_int_equal(c.alua.peers[0], 2);
	memset(&c.alua, 0, sizeof(c.alua));
	/* the example's [tcmu]: the default handler, nothing left by default */
	assert_string_equal(d.tcmu.handler, "vaai");
	assert_int_equal(d.tcmu.n_leave, 0);
	assert_string_equal(c.tcmu.handler, "vaai");
	assert_int_equal(c.tcmu.n_leave, 1);
	assert_string_equal(c.tcmu.leave[0], "vaaib");
	memset(&c.tcmu.leave, 0, sizeof(c.tcmu.leave));
	c.tcmu.n_leave = 0;
	assert_memory_equal(&c, &d, sizeof(c)); /* nothing else differs */
}

/* inih reads at most 198 bytes of a line whole (Debian's libinih, INI_MAX_LINE
 * 200): a comment may be longer, a setting is taken whole or refused. */
static void test_long_lines(void **state)
{
	(void)state;
	struct vd_config c;
	char err[512], text[1024], path[200];
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	/* "state_dir = " + 186 bytes: 198 bytes, the longest line taken whole */
	snprintf(text, sizeof(text), "[daemon]\nstate_dir = %.186s\n", path);
	assert_int_equal(load(text, &c, err, sizeof(err)), 0);
	assert_int_equal(strlen(c.state_dir), 186);
	/* one byte more: refused at its line (it was cut to 187 bytes and the rest
	 * refused as a syntax error at line 3 of a 2-line file) */
	snprintf(text, sizeof(text), "[daemon]\nstate_dir = %.187s\n", path);
	refused(text, 2, "line longer than 198 bytes");
	/* a long comment (it was refused: "syntax error" at a line past it) */
	char comment[400];
	memset(comment, '-', sizeof(comment) - 1);
	comment[sizeof(comment) - 1] = 0;
	snprintf(text, sizeof(text), "[daemon]\n# %s\n  ; %s\nlog_level = debug\nthreads = 4\n", comment,
		 comment);
	refused(text, 5, "unknown key 'threads'"); /* the line numbers stay */
	snprintf(text, sizeof(text), "[daemon]\n# %s\nlog_level = debug\n", comment);
	assert_int_equal(load(text, &c, err, sizeof(err)), 0);
	assert_int_equal(c.log_level, VLOG_DEBUG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_shipped_file),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_recorded_pools),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
