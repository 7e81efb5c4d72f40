/*
 * vaaictl's arguments (tools/vaaictl/args.h): options first (--json,
 * --socket PATH, --help), then the command's words. A typo gets a message
 * naming it, then the usage; names and paths with white space or control
 * characters are refused, the request being one line of words. The command becomes the request line
 * vaaid reads (include/vaaid/control.h): sizes as plain byte counts, --extent
 * as a fifth word, --force as "force".
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "vaaid/control_request.h"
#include "vaaid/util.h"

_Static_assert(VAAICTL_LINE_MAX == VD_CTL_LINE_MAX, "vaaictl sends what vaaid reads");

/* q->line = printf of fmt; 2 with a message when it is longer than vaaid reads
 * (it would refuse the request as too long). */
__attribute__((format(printf, 3, 4)))
static int put_line(struct vaaictl_req *q, FILE *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(q->line, sizeof(q->line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(q->line)) {
		fprintf(err, "vaaictl: the request would be longer than vaaid reads (%d bytes): "
			     "a shorter name or path\n", VAAICTL_LINE_MAX);
		q->line[0] = 0;
		return 2;
	}
	return 0;
}

int vaaictl_usage(FILE *err)
{
	fprintf(err,
		"usage: vaaictl [--socket PATH] [--json] status\n"
		"       vaaictl [--socket PATH] [--json] pool list | volume list\n"
		"       vaaictl [--socket PATH] pool create NAME PATH SIZE [--extent SIZE] [--force]\n"
		"       vaaictl [--socket PATH] pool grow NAME SIZE\n"
		"       vaaictl [--socket PATH] pool takeover NAME\n"
		"       vaaictl [--socket PATH] volume delete POOL/VOLUME\n"
		"       vaaictl [--socket PATH] [--json] stats [POOL[/VOLUME]]\n"
		"       vaaictl [--socket PATH] top [--interval SECONDS]\n"
		"pool create makes PATH a new sparse file; with --force PATH may also be an\n"
		"existing block device or file (at least SIZE bytes, not in use, holding no\n"
		"vaaid pool), which is then formatted: its data is lost. PATH rbd:CEPHPOOL/IMAGE\n"
		"makes a new Ceph RBD image of SIZE bytes (vaaid.conf [ceph]; docs/ceph.md).\n"
		"pool takeover serves a standby RBD pool here, fencing the gateway that held it.\n");
	return 2;
}

/* A malformed command: say what is wrong, then how it is used. */
static int usage_error(FILE *err, const char *what)
{
	fprintf(err, "vaaictl: %s\n", what);
	return vaaictl_usage(err);
}

/* pool create NAME PATH SIZE [--extent SIZE] [--force] */
static int pool_create(FILE *err, char **a, int n, struct vaaictl_req *q)
{
	if (n < 5)
		return usage_error(err, "'pool create' needs NAME PATH SIZE");
	uint64_t size, ext = 0;
	bool force = false;
	if (vparse_size(a[4], &size) < 0 || size == 0) {
		fprintf(err, "vaaictl: bad size '%s' (e.g. 100G)\n", a[4]);
		return 2;
	}
	for (int k = 5; k < n; k++) {
		if (!strcmp(a[k], "--force") && !force) {
			force = true;
		} else if (!strcmp(a[k], "--extent") && k + 1 < n && !ext) {
			k++;
			if (vparse_size(a[k], &ext) < 0 || !vis_pow2(ext) || ext < (64u << 10) ||
			    ext > (16u << 20)) {
				fprintf(err, "vaaictl: bad extent size '%s' (a power of two, 64K..16M)\n",
					a[k]);
				return 2;
			}
		} else {
			fprintf(err, "vaaictl: pool create: unexpected '%s'\n", a[k]);
			return vaaictl_usage(err);
		}
	}
	if (a[3][0] != '/' && strncmp(a[3], "rbd:", 4)) {
		fprintf(err, "vaaictl: pool path '%s' must be absolute (or rbd:CEPHPOOL/IMAGE)\n", a[3]);
		return 2;
	}
	char extw[32] = "";
	if (ext)
		snprintf(extw, sizeof(extw), " %" PRIu64, ext);
	return put_line(q, err, "pool create %s %s %" PRIu64 "%s%s", a[2], a[3], size, extw,
			force ? " force" : "");
}

int vaaictl_parse(int argc, char **argv, FILE *err, struct vaaictl_req *q)
{
	memset(q, 0, sizeof(*q));
	q->sock = "/run/vaaid/control";
	q->pools = q->volumes = true;
	int i = 1;
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--json"))
			q->json = true;
		else if (!strcmp(argv[i], "--socket") && i + 1 >= argc)
			return usage_error(err, "'--socket' needs a path");
		else if (!strcmp(argv[i], "--socket"))
			q->sock = argv[++i];
		else if (!strcmp(argv[i], "--help")) {
			vaaictl_usage(err);
			q->help = true;
			return 0;
		} else {
			fprintf(err, "vaaictl: unknown option '%s'\n", argv[i]);
			return vaaictl_usage(err);
		}
	}
	int n = argc - i;
	char **a = argv + i;
	q->nwords = n;
	q->words = a;
	if (n == 0)
		return vaaictl_usage(err);
	/* The request is one line of words: a word with white space in it (a name or
	 * path) would be split into others by the daemon. */
	for (int k = 0; k < n; k++) {
		if (!a[k][0])
			return usage_error(err, "an empty argument");
		if (strpbrk(a[k], " \t\r\n\v\f")) {
			fprintf(err, "vaaictl: '%s': names and paths may not contain white space\n",
				a[k]);
			return 2;
		}
		for (const char *c = a[k]; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f) { /* (not echoed: it is one) */
				fprintf(err, "vaaictl: argument %d: names and paths may not contain "
					     "control characters\n", i + k);
				return 2;
			}
	}
	bool is_pool = !strcmp(a[0], "pool"), is_volume = !strcmp(a[0], "volume");
	if (n == 1 && is_pool)
		return usage_error(err, "'pool' needs a command: create, grow or list");
	if (n == 1 && is_volume)
		return usage_error(err, "'volume' needs a command: delete or list");
	const char *verb = n >= 2 ? a[1] : "";
	if (!strcmp(a[0], "status")) {
		if (n != 1)
			return usage_error(err, "'status' takes no arguments");
		return put_line(q, err, "status");
	} else if (!strcmp(a[0], "top")) {
		q->interval_ms = 2000;
		if (n == 3 && !strcmp(a[1], "--interval")) {
			char *end;
			double sec = strtod(a[2], &end);
			if (end == a[2] || *end || !(sec >= 0.1 && sec <= 3600)) {
				fprintf(err, "vaaictl: bad interval '%s' (seconds, 0.1 to 3600)\n", a[2]);
				return 2;
			}
			q->interval_ms = (unsigned)(sec * 1000 + 0.5);
		} else if (n != 1) {
			return usage_error(err, "'top' takes only --interval SECONDS");
		}
		q->top = true;
		return put_line(q, err, "stats");
	} else if (!strcmp(a[0], "stats")) {
		if (n > 2)
			return usage_error(err, "'stats' takes at most POOL or POOL/VOLUME");
		return n == 2 ? put_line(q, err, "stats %s", a[1]) : put_line(q, err, "stats");
	} else if ((is_pool || is_volume) && !strcmp(verb, "list")) {
		if (n != 2)
			return usage_error(err, "'list' takes no arguments");
		q->pools = is_pool;
		q->volumes = is_volume;
		return put_line(q, err, "%s list", a[0]);
	} else if (is_pool && !strcmp(verb, "create")) {
		return pool_create(err, a, n, q);
	} else if (is_pool && !strcmp(verb, "grow")) {
		if (n != 4)
			return usage_error(err, "'pool grow' needs NAME SIZE");
		uint64_t size;
		if (vparse_size(a[3], &size) < 0 || size == 0) {
			fprintf(err, "vaaictl: bad size '%s' (e.g. 200G)\n", a[3]);
			return 2;
		}
		return put_line(q, err, "pool grow %s %" PRIu64, a[2], size);
	} else if (is_pool && !strcmp(verb, "takeover")) {
		if (n != 3)
			return usage_error(err, "'pool takeover' needs NAME");
		return put_line(q, err, "pool takeover %s", a[2]);
	} else if (is_volume && !strcmp(verb, "delete")) {
		if (n != 3)
			return usage_error(err, "'volume delete' needs POOL/VOLUME");
		return put_line(q, err, "volume delete %s", a[2]);
	} else if (is_pool || is_volume) {
		fprintf(err, "vaaictl: unknown %s command '%s'%s\n", a[0], verb,
			is_volume && !strcmp(verb, "create")
				? " (volumes are created with their LUN: targetcli /backstores/user:vaai "
				  "create ... cfgstring=POOL/VOLUME)"
				: "");
		return vaaictl_usage(err);
	}
	fprintf(err, "vaaictl: unknown command '%s'\n", a[0]);
	return vaaictl_usage(err);
}
