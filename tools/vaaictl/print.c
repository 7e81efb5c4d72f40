/*
 * vaaictl's printing of vaaid's answer (tools/vaaictl/print.h). Sizes in the
 * tables are human-readable (1024-based); the definitions are the ones of
 * vaai-sim `stats`: capacity = bytes for data extents, used + free = capacity,
 * mapped = bytes of extents a volume references, unshared = the part of
 * mapped no other reference shares, saved = bytes extent sharing saves. A key
 * that is missing or null reads as 0 or "" (json-c converts other types), a
 * "pools" or "volumes" that is not an array as none.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "print.h"

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
	const char *s = json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : NULL;
	return s ? s : ""; /* (a null value has no string) */
}

static void print_tables(FILE *out, json_object *ans, bool pools, bool volumes)
{
	json_object *arr;
	if (!json_object_object_get_ex(ans, "pools", &arr) || !json_object_is_type(arr, json_type_array))
		return;
	char a[32], b[32], c[32], d[32], f[32], g[32];
	if (pools) {
		fprintf(out, "%-16s %12s %12s %12s %12s %12s %10s %8s  %s\n", "POOL", "SIZE", "CAPACITY",
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
			fprintf(out, "%-16s %12s %12s %12s %12s %12s %10s %8s  %s\n", get_str(p, "name"), a, b, c,
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
				fprintf(out, "%-16s journal file %s\n", get_str(p, "name"), get_str(p, "journal_file"));
			if (json_object_object_get_ex(p, "whole_granule_writes", &w) &&
			    json_object_get_boolean(w))
				fprintf(out, "%-16s writes partial 4 KiB granules whole (docs/design.md rule 14)\n",
				       get_str(p, "name"));
			if (json_object_object_get_ex(p, "group_flush", &w) && json_object_get_boolean(w))
				fprintf(out, "%-16s durable writes share cache flushes (docs/design.md rule 15)\n",
				       get_str(p, "name"));
		}
	}
	if (pools && volumes)
		fprintf(out, "\n");
	if (volumes) {
		fprintf(out, "%-16s %-24s %12s %12s %12s %6s %s\n", "POOL", "VOLUME", "SIZE", "MAPPED",
		       "UNSHARED", "BLOCK", "ATTACHED");
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *p, *vols, *e = json_object_array_get_idx(arr, i);
			if (!json_object_object_get_ex(e, "pool", &p) ||
			    !json_object_object_get_ex(e, "volumes", &vols) ||
			    !json_object_is_type(vols, json_type_array))
				continue;
			for (size_t k = 0; k < json_object_array_length(vols); k++) {
				json_object *v = json_object_array_get_idx(vols, k), *att;
				human(get_u64(v, "size"), a, sizeof(a));
				human(get_u64(v, "mapped"), b, sizeof(b));
				human(get_u64(v, "unshared"), c, sizeof(c));
				bool attached = json_object_object_get_ex(v, "attached", &att) &&
						json_object_get_boolean(att);
				fprintf(out, "%-16s %-24s %12s %12s %12s %6" PRIu64 " %s\n", get_str(p, "name"),
				       get_str(v, "name"), a, b, c, get_u64(v, "block_size"),
				       attached ? "yes" : "no");
			}
		}
	}
}

int vaaictl_print_answer(FILE *out, FILE *err, const struct vaaictl_req *q, json_object *ans)
{
	json_object *ok;
	bool good = json_object_object_get_ex(ans, "ok", &ok) && json_object_get_boolean(ok);
	char **a = q->words;
	if (q->json)
		fprintf(out, "%s\n",
			json_object_to_json_string_ext(ans, JSON_C_TO_STRING_PLAIN |
								JSON_C_TO_STRING_NOSLASHESCAPE));
	else if (!good)
		fprintf(err, "vaaictl: %s\n", get_str(ans, "error"));
	else if (!strncmp(q->line, "pool create", 11))
		fprintf(out, "pool %s created\n", a[2]);
	else if (!strncmp(q->line, "pool grow", 9))
		fprintf(out, "pool %s grown to %s\n", a[2], a[3]);
	else if (!strncmp(q->line, "volume delete", 13))
		fprintf(out, "volume %s deleted\n", a[2]);
	else
		print_tables(out, ans, q->pools, q->volumes);
	return good ? 0 : 1;
}
