/*
 * fuzz_config: the daemon's configuration file (issue 24): vd_config_load over
 * the defaults, from a memfd holding the input (read through /proc/self/fd).
 * Checked: a file refused says where and what (err non-empty); an accepted one
 * leaves names vaaid takes for every pool; vd_config_finish frees it all (the
 * leak checker sees the rest).
 * Seeds: the commented default configuration the package ships
 * (tools/dist/vaaid.conf, uncommented) and small files of each section.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "seeds.h"
#include "vaaid/daemon.h"

static _Noreturn void finding(const char *what)
{
	fprintf(stderr, "fuzz_config: FINDING: %s\n", what);
	abort();
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
