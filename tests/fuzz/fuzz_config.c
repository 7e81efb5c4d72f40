/*
 * fuzz_config: the daemon's configuration file (issue 24): vd_config_load over
 * the defaults, from a memfd holding the input (read through /proc/self/fd).
 * Checked: a file refused says where and what: "FILE:LINE: what" with LINE a
 * line of the file, or, for the rules over the whole file (a pool without a
 * path, two pools on one path), "FILE: pool ..." naming the pool, or
 * "FILE: [alua] ..." (peers without a group, or naming the group itself), or
 * "FILE: [tcmu] ..." (leave naming the daemon's own handler), or
 * "FILE: larger than 1 MiB"; an accepted one leaves pool names vaaid takes and that
 * are safe (fz_name_safe); vd_config_finish frees it all (the leak checker
 * sees the rest).
 * Seeds: the commented default configuration the package ships
 * (tools/dist/vaaid.conf, uncommented), small files of each section, pool
 * names that must be refused (.., a leading .), the whole-file rules, [alua]
 * group/peers good and bad, [tcmu] handler/leave good and bad, and
 * lines longer than inih reads whole (a comment, a setting).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "name_oracle.h"
#include "seeds.h"
#include "vaaid/daemon.h"

static _Noreturn void finding(const char *what)
{
	fprintf(stderr, "fuzz_config: FINDING: %s\n", what);
	abort();
}

/* err is "PATH:LINE: what" (LINE within the file) or "PATH: pool(s) '...". */
static void check_where(const char *err, const char *path, const uint8_t *data, size_t size)
{
	size_t pl = strlen(path);
	if (strncmp(err, path, pl) || err[pl] != ':')
		finding("a refusal that does not name the file");
	const char *at = err + pl + 1;
	if (!strncmp(at, " pool '", 7) || !strncmp(at, " pools '", 8))
		return; /* a rule over the whole file, naming the pool */
	if (!strncmp(at, " [alua] ", 8) || !strncmp(at, " [tcmu] ", 8))
		return; /* a rule over a whole section (its keys in any order) */
	if (size >= (1u << 20) && !strcmp(at, " larger than 1 MiB"))
		return;
	char *end;
	unsigned long line = strtoul(at, &end, 10);
	size_t lines = size && data[size - 1] != '\n'; /* a last line without its newline */
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (end == at || strncmp(end, ": ", 2) || line < 1 || line > lines || !end[2])
		finding("a refusal without FILE:LINE: what (or a line not in the file)");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("vaaid-fuzz-conf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	char path[64], err[512] = "";
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct vd_config c;
	vd_config_defaults(&c);
	int rc = vd_config_load(&c, path, err, sizeof(err));
	if (rc < 0 && !err[0])
		finding("a configuration refused without saying where and what");
	if (rc < 0)
		check_where(err, path, data, size);
	for (unsigned i = 0; rc == 0 && i < c.n_pools; i++)
		if (!vd_valid_name(c.pools[i].name, VD_POOL_NAME_MAX) ||
		    !fz_name_safe(c.pools[i].name, VD_POOL_NAME_MAX))
			finding("a configuration accepted with a pool name vaaid refuses or an unsafe one");
	vd_config_finish(&c);
	close(fd);
	return 0;
}

int fuzz_make_seeds(const char *dir)
{
	static const char *files[][2] = {
		{"daemon", "[daemon]\nlog_level = info\ncontrol_socket = /run/vaaid/control\n"},
		{"pools", "[pool default]\npath = /var/lib/vaaid/default.pool\n\n[pool fast]\npath = /dev/sdb\n"},
		{"empty", ""},
		{"bad-line", "[daemon]\nthis is not a setting\n"},
		{"pool-dotdot", "[pool ..]\npath = /var/lib/vaaid/x.pool\n"},
		{"pool-live", "[pool p]\npath = /srv/p.pool\nlive_checkpoints = yes\n"},
		{"pool-live-bad", "[pool p]\npath = /srv/p.pool\nlive_checkpoints = on\n"},
		{"pool-hidden", "[pool default]\n[pool .x]\npath = /var/lib/vaaid/x.pool\n"},
		{"pool-no-path", "[pool fast]\nsize = 1G\n"},
		{"pools-same-path", "[pool a]\npath = /dev/sdb\n[pool b]\npath = /dev/sdb\n"},
		{"alua", "[alua]\ngroup = 1\npeers = 2, 3\n"},
		{"alua-peers-first", "[alua]\npeers = 2\ngroup = 1\n"},
		{"alua-no-group", "[alua]\npeers = 2\n"},
		{"alua-own-group", "[alua]\ngroup = 2\npeers = 1,2\n"},
		{"alua-bad", "[alua]\ngroup = 65536\npeers = 2,,2\n"},
		{"tcmu", "[tcmu]\nhandler = vaaib\nleave = vaai, other_1\n"},
		{"tcmu-leave-first", "[tcmu]\nleave = vaai\nhandler = vaaib\n"},
		{"tcmu-leave-own", "[tcmu]\nleave = vaai\n"},
		{"tcmu-bad", "[tcmu]\nhandler = va-ai\nleave = a,,a,b,c,d,e\n"},
		/* lines longer than inih reads whole (198 bytes): a comment, a setting */
		{"long-comment", "[daemon]\n# ----------------------------------------------------------"
				 "----------------------------------------------------------------"
				 "----------------------------------------------------------------"
				 "----------------------------------------------------------------\n"
				 "log_level = debug\n"},
		{"long-setting", "[daemon]\nstate_dir = /srv/vaaid/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (fuzz_write_seed(dir, files[i][0], files[i][1], strlen(files[i][1])) < 0)
			return -1;
	/* The shipped file with every setting uncommented (a real input). */
	FILE *f = fopen(VAAID_DIST_CONF, "r");
	if (!f)
		return -1;
	char buf[16384], out[16384];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f), o = 0;
	fclose(f);
	buf[n] = 0;
	for (char *line = strtok(buf, "\n"); line && o + strlen(line) + 2 < sizeof(out);
	     line = strtok(NULL, "\n")) {
		if (line[0] == '#' && line[1] != ' ' && line[1] != '#' && line[1])
			line++; /* "#key = value" -> "key = value" */
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s\n", line);
	}
	return fuzz_write_seed(dir, "dist-uncommented", out, o);
}
