/*
 * vaaictl: the admin CLI of vaaid, over its control socket (root only).
 *
 *   vaaictl [--socket PATH] [--json] status
 *   vaaictl pool create NAME PATH SIZE [--extent SIZE] [--force]
 *   vaaictl pool grow NAME SIZE
 *   vaaictl pool list | volume list
 *   vaaictl volume delete POOL/VOLUME
 *
 * How this works: the arguments are checked here (a typo gets a message
 * naming it, then the usage, without a daemon; names and paths with white
 * space are refused, the request being one line of words), turned into one
 * request line, sent; the JSON
 * answer is printed as is (--json) or as a table. Sizes in the table are
 * human-readable (1024-based); the definitions are the ones of vaai-sim
 * `stats`: capacity = bytes for data extents, used + free = capacity,
 * mapped = bytes of extents a volume references, unshared = the part of
 * mapped no other reference shares, saved = bytes extent sharing saves.
 * Exit status: 0 ok, 1 the daemon refused (its message printed), 2 usage,
 * 3 no daemon.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "vaaid/util.h"

static int usage(void)
{
	fprintf(stderr,
		"usage: vaaictl [--socket PATH] [--json] status\n"
		"       vaaictl [--socket PATH] [--json] pool list | volume list\n"
		"       vaaictl [--socket PATH] pool create NAME PATH SIZE [--extent SIZE] [--force]\n"
		"       vaaictl [--socket PATH] pool grow NAME SIZE\n"
		"       vaaictl [--socket PATH] volume delete POOL/VOLUME\n"
		"pool create makes PATH a new sparse file; with --force PATH may also be an\n"
		"existing block device or file (at least SIZE bytes, not in use, holding no\n"
		"vaaid pool), which is then formatted: its data is lost.\n");
	return 2;
}

/* A malformed command: say what is wrong, then how it is used. */
static int usage_error(const char *what)
{
	fprintf(stderr, "vaaictl: %s\n", what);
	return usage();
}

static void human(uint64_t v, char *buf, size_t len)
{
	static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double d = (double)v;
	int i = 0;
	while (d >= 1024 && i < 5) {
		d /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%" PRIu64 " B", v);
	else
		snprintf(buf, len, "%.1f %s", d, u[i]);
}

static uint64_t get_u64(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) ? (uint64_t)json_object_get_uint64(v) : 0;
}

static const char *get_str(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "";
}

static void print_tables(json_object *ans, bool pools, bool volumes)
{
	json_object *arr;
	if (!json_object_object_get_ex(ans, "pools", &arr))
		return;
	char a[32], b[32], c[32], d[32], f[32], g[32];
	if (pools) {
		printf("%-16s %12s %12s %12s %12s %12s %10s %8s  %s\n", "POOL", "SIZE", "CAPACITY",
		       "USED", "FREE", "SAVED", "HYDRATING", "EXTENT", "PATH");
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *p, *e = json_object_array_get_idx(arr, i);
			if (!json_object_object_get_ex(e, "pool", &p))
				continue;
			human(get_u64(p, "size"), a, sizeof(a));
			human(get_u64(p, "capacity"), b, sizeof(b));
			human(get_u64(p, "used"), c, sizeof(c));
			human(get_u64(p, "free"), d, sizeof(d));
			human(get_u64(p, "sharing_savings"), f, sizeof(f));
			human(get_u64(p, "hydrating"), g, sizeof(g));
			char ext[32];
			human(get_u64(p, "extent"), ext, sizeof(ext));
			printf("%-16s %12s %12s %12s %12s %12s %10s %8s  %s\n", get_str(p, "name"), a, b, c,
			       d, f, g, ext, get_str(p, "path"));
		}
		/* Per pool: its journal file (pools in regular files: part of the pool, kept
		 * with it), whether it writes partial granules whole (design rule 14), and
		 * whether its durable writes share cache flushes (rule 15). */
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *p, *j, *w, *e = json_object_array_get_idx(arr, i);
			if (!json_object_object_get_ex(e, "pool", &p))
				continue;
			if (json_object_object_get_ex(p, "journal_file", &j))
				printf("%-16s journal file %s\n", get_str(p, "name"), json_object_get_string(j));
			if (json_object_object_get_ex(p, "whole_granule_writes", &w) &&
			    json_object_get_boolean(w))
				printf("%-16s writes partial 4 KiB granules whole (docs/design.md rule 14)\n",
				       get_str(p, "name"));
			if (json_object_object_get_ex(p, "group_flush", &w) && json_object_get_boolean(w))
				printf("%-16s durable writes share cache flushes (docs/design.md rule 15)\n",
				       get_str(p, "name"));
		}
	}
	if (pools && volumes)
		printf("\n");
	if (volumes) {
		printf("%-16s %-24s %12s %12s %12s %6s %s\n", "POOL", "VOLUME", "SIZE", "MAPPED",
		       "UNSHARED", "BLOCK", "ATTACHED");
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *p, *vols, *e = json_object_array_get_idx(arr, i);
			if (!json_object_object_get_ex(e, "pool", &p) ||
			    !json_object_object_get_ex(e, "volumes", &vols))
				continue;
			for (size_t k = 0; k < json_object_array_length(vols); k++) {
				json_object *v = json_object_array_get_idx(vols, k), *att;
				human(get_u64(v, "size"), a, sizeof(a));
				human(get_u64(v, "mapped"), b, sizeof(b));
				human(get_u64(v, "unshared"), c, sizeof(c));
				bool attached = json_object_object_get_ex(v, "attached", &att) &&
						json_object_get_boolean(att);
				printf("%-16s %-24s %12s %12s %12s %6" PRIu64 " %s\n", get_str(p, "name"),
				       get_str(v, "name"), a, b, c, get_u64(v, "block_size"),
				       attached ? "yes" : "no");
			}
		}
	}
}

static int request(const char *sock, const char *line, json_object **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(sock) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "vaaictl: socket path too long\n");
		return 2;
	}
	memcpy(sa.sun_path, sock, strlen(sock) + 1); /* length checked above */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "vaaictl: cannot reach vaaid at %s: %s (is vaaid running? are you root?)\n",
			sock, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 3;
	}
	size_t len = strlen(line);
	if (write(fd, line, len) != (ssize_t)len || write(fd, "\n", 1) != 1) {
		fprintf(stderr, "vaaictl: write to %s: %s\n", sock, strerror(errno));
		close(fd);
		return 3;
	}
	char *buf = NULL;
	size_t got = 0, cap = 0;
	for (;;) {
		if (got + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				close(fd);
				return 3;
			}
			buf = nb;
		}
		ssize_t n = read(fd, buf + got, cap - got - 1);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf || !got) {
		fprintf(stderr, "vaaictl: no answer from vaaid\n");
		free(buf);
		return 3;
	}
	buf[got] = 0;
	*out = json_tokener_parse(buf);
	free(buf);
	if (!*out) {
		fprintf(stderr, "vaaictl: vaaid answered something that is not JSON\n");
		return 3;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *sock = "/run/vaaid/control";
	bool json = false;
	int i = 1;
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--socket") && i + 1 >= argc)
			return usage_error("'--socket' needs a path");
		else if (!strcmp(argv[i], "--socket"))
			sock = argv[++i];
		else if (!strcmp(argv[i], "--help"))
		{
			usage();
			return 0;
		}
		else {
			fprintf(stderr, "vaaictl: unknown option '%s'\n", argv[i]);
			return usage();
		}
	}
	int n = argc - i;
	char **a = argv + i;
	char line[4096];
	bool pools = true, volumes = true;
	if (n == 0)
		return usage();
	/* The request is one line of words: a word with white space in it (a name or
	 * path) would be split into others by the daemon. */
	for (int k = 0; k < n; k++) {
		if (!a[k][0])
			return usage_error("an empty argument");
		if (strpbrk(a[k], " \t\r\n\v\f")) {
			fprintf(stderr, "vaaictl: '%s': names and paths may not contain white space\n",
				a[k]);
			return 2;
		}
	}
	bool is_pool = !strcmp(a[0], "pool"), is_volume = !strcmp(a[0], "volume");
	if (n == 1 && is_pool)
		return usage_error("'pool' needs a command: create, grow or list");
	if (n == 1 && is_volume)
		return usage_error("'volume' needs a command: delete or list");
	const char *verb = n >= 2 ? a[1] : "";
	if (!strcmp(a[0], "status")) {
		if (n != 1)
			return usage_error("'status' takes no arguments");
		snprintf(line, sizeof(line), "status");
	} else if ((is_pool || is_volume) && !strcmp(verb, "list")) {
		if (n != 2)
			return usage_error("'list' takes no arguments");
		snprintf(line, sizeof(line), "%s list", a[0]);
		pools = is_pool;
		volumes = is_volume;
	} else if (is_pool && !strcmp(verb, "create")) {
		if (n < 5)
			return usage_error("'pool create' needs NAME PATH SIZE");
		uint64_t size, ext = 0;
		bool force = false;
		if (vparse_size(a[4], &size) < 0 || size == 0) {
			fprintf(stderr, "vaaictl: bad size '%s' (e.g. 100G)\n", a[4]);
			return 2;
		}
		for (int k = 5; k < n; k++) {
			if (!strcmp(a[k], "--force") && !force) {
				force = true;
			} else if (!strcmp(a[k], "--extent") && k + 1 < n && !ext) {
				k++;
				if (vparse_size(a[k], &ext) < 0 || !vis_pow2(ext) || ext < (64u << 10) ||
				    ext > (16u << 20)) {
					fprintf(stderr,
						"vaaictl: bad extent size '%s' (a power of two, 64K..16M)\n",
						a[k]);
					return 2;
				}
			} else {
				fprintf(stderr, "vaaictl: pool create: unexpected '%s'\n", a[k]);
				return usage();
			}
		}
		if (a[3][0] != '/') {
			fprintf(stderr, "vaaictl: pool path '%s' must be absolute\n", a[3]);
			return 2;
		}
		snprintf(line, sizeof(line), "pool create %s %s %" PRIu64, a[2], a[3], size);
		if (ext)
			snprintf(line, sizeof(line), "pool create %s %s %" PRIu64 " %" PRIu64, a[2], a[3],
				 size, ext);
		if (force)
			strncat(line, " force", sizeof(line) - strlen(line) - 1);
	} else if (is_pool && !strcmp(verb, "grow")) {
		if (n != 4)
			return usage_error("'pool grow' needs NAME SIZE");
		uint64_t size;
		if (vparse_size(a[3], &size) < 0 || size == 0) {
			fprintf(stderr, "vaaictl: bad size '%s' (e.g. 200G)\n", a[3]);
			return 2;
		}
		snprintf(line, sizeof(line), "pool grow %s %" PRIu64, a[2], size);
	} else if (is_volume && !strcmp(verb, "delete")) {
		if (n != 3)
			return usage_error("'volume delete' needs POOL/VOLUME");
		snprintf(line, sizeof(line), "volume delete %s", a[2]);
	} else if (is_pool || is_volume) {
		fprintf(stderr, "vaaictl: unknown %s command '%s'%s\n", a[0], verb,
			is_volume && !strcmp(verb, "create")
				? " (volumes are created with their LUN: targetcli /backstores/user:vaai "
				  "create ... cfgstring=POOL/VOLUME)"
				: "");
		return usage();
	} else {
		fprintf(stderr, "vaaictl: unknown command '%s'\n", a[0]);
		return usage();
	}
	json_object *ans = NULL;
	int rc = request(sock, line, &ans);
	if (rc)
		return rc;
	json_object *ok;
	bool good = json_object_object_get_ex(ans, "ok", &ok) && json_object_get_boolean(ok);
	if (json)
		printf("%s\n", json_object_to_json_string_ext(ans, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	else if (!good)
		fprintf(stderr, "vaaictl: %s\n", get_str(ans, "error"));
	else if (!strncmp(line, "pool create", 11))
		printf("pool %s created\n", a[2]);
	else if (!strncmp(line, "pool grow", 9))
		printf("pool %s grown to %s\n", a[2], a[3]);
	else if (!strncmp(line, "volume delete", 13))
		printf("volume %s deleted\n", a[2]);
	else
		print_tables(ans, pools, volumes);
	json_object_put(ans);
	return good ? 0 : 1;
}
