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

/* ---- stats: the command counters (include/vaaid/lun_stats.h, docs/observability.md) */

static json_object *get_obj(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_object) ? v
												: NULL;
}

/* The average latency of a histogram object ({"count","sum_ns"}) in buf. */
static void avg_lat(json_object *lat, char *buf, size_t len)
{
	uint64_t n = get_u64(lat, "count");
	if (!n) {
		snprintf(buf, len, "-");
		return;
	}
	double us = (double)get_u64(lat, "sum_ns") / (double)n / 1000.0;
	if (us < 1000)
		snprintf(buf, len, "%.0f us", us);
	else
		snprintf(buf, len, "%.1f ms", us / 1000);
}

/* One LUN's (or a pool's sum of) counters: a row per command kind, then the primitives. */
static void print_counters(FILE *out, json_object *st)
{
	static const char *const kinds[][2] = {
		{"read", "READ"}, {"write", "WRITE"}, {"verify", "VERIFY"}, {"sync", "SYNC CACHE"},
		{"xcopy", "XCOPY (CLONE)"}, {"caw", "ATS (CAW)"}, {"write_same", "WRITE SAME (ZERO)"},
		{"unmap", "UNMAP (DELETE)"}, {"get_lba_status", "GET LBA STATUS"}, {"other", "other"},
	};
	json_object *cmds = get_obj(st, "commands");
	fprintf(out, "  %-18s %10s %8s %12s %10s %10s\n", "COMMAND", "OK", "FAILED", "BYTES",
		"AVG OK", "AVG FAIL");
	char b[32], l1[32], l2[32];
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		json_object *c = cmds ? get_obj(cmds, kinds[i][0]) : NULL;
		human(get_u64(c, "bytes"), b, sizeof(b));
		avg_lat(c ? get_obj(c, "latency_ok") : NULL, l1, sizeof(l1));
		avg_lat(c ? get_obj(c, "latency_failed") : NULL, l2, sizeof(l2));
		fprintf(out, "  %-18s %10" PRIu64 " %8" PRIu64 " %12s %10s %10s\n", kinds[i][1],
			get_u64(c, "ok"), get_u64(c, "failed"), b, l1, l2);
	}
	json_object *x = get_obj(st, "xcopy"), *ws = get_obj(st, "write_same"),
		    *um = get_obj(st, "unmap"), *ua = get_obj(st, "unit_attentions");
	char s1[32], s2[32], z[32], pt[32], ub[32];
	human(get_u64(x, "src_bytes"), s1, sizeof(s1));
	human(get_u64(x, "dst_bytes"), s2, sizeof(s2));
	human(get_u64(ws, "zero_bytes"), z, sizeof(z));
	human(get_u64(ws, "pattern_bytes"), pt, sizeof(pt));
	human(get_u64(um, "bytes"), ub, sizeof(ub));
	fprintf(out, "  copied from here %s, to here %s; ATS miscompares %" PRIu64 "\n", s1, s2,
		get_u64(get_obj(st, "caw"), "miscompares"));
	/* what the pool did (include/vaaid/pool.h, struct vvol_report): at most 77 columns
	 * with the longest sizes ("1023.9 KiB"); its deallocations after UNMAP's line */
	human(get_u64(x, "shared_bytes"), s1, sizeof(s1));
	human(get_u64(x, "copied_bytes"), s2, sizeof(s2));
	fprintf(out, "  to here: shared %s (whole extents), copied %s (data moved)\n", s1, s2);
	/* (WRITE SAME's and UNMAP's line, and the last one, were wider than 80 columns) */
	fprintf(out, "  WRITE SAME zeros %" PRIu64 " (%s), pattern %" PRIu64 " (%s), UNMAP bit %" PRIu64
		     "\n",
		get_u64(ws, "zero"), z, get_u64(ws, "pattern"), pt, get_u64(ws, "unmap_bit"));
	fprintf(out, "  UNMAP descriptors %" PRIu64 " (%s)\n", get_u64(um, "descriptors"), ub);
	human(get_u64(ws, "deallocated_bytes"), s1, sizeof(s1));
	human(get_u64(um, "deallocated_bytes"), s2, sizeof(s2));
	fprintf(out, "  deallocated: by WRITE SAME %s, by UNMAP %s\n", s1, s2);
	fprintf(out, "  out of space (27h/07h) %" PRIu64 "; in flight %" PRIu64 " (most %" PRIu64 ")\n",
		get_u64(st, "out_of_space"), get_u64(st, "inflight"), get_u64(st, "inflight_max"));
	fprintf(out, "  unit attentions: threshold %" PRIu64 ", capacity %" PRIu64 ", mode %" PRIu64
		     ", inquiry %" PRIu64 ", other %" PRIu64 "\n",
		get_u64(ua, "threshold"), get_u64(ua, "capacity_changed"), get_u64(ua, "mode_changed"),
		get_u64(ua, "inquiry_changed"), get_u64(ua, "other"));
}

static void print_stats(FILE *out, json_object *ans)
{
	json_object *arr;
	if (json_object_object_get_ex(ans, "luns", &arr) && json_object_is_type(arr, json_type_array))
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *l = json_object_array_get_idx(arr, i);
			fprintf(out, "LUN %s (uio%" PRIu64 ") %s/%s\n", get_str(l, "dev"),
				get_u64(l, "uio"), get_str(l, "pool"), get_str(l, "volume"));
			print_counters(out, get_obj(l, "stats"));
		}
	if (!json_object_object_get_ex(ans, "pools", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return;
	char u[32], c[32], jb[32];
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i), *p = get_obj(e, "pool");
		json_object *k = p ? get_obj(p, "counters") : NULL;
		human(get_u64(p, "used"), u, sizeof(u));
		human(get_u64(p, "capacity"), c, sizeof(c));
		human(get_u64(k, "journal_bytes"), jb, sizeof(jb));
		uint64_t ck = get_u64(k, "checkpoints");
		fprintf(out, "POOL %s: %s of %s used; %" PRIu64 " LUN(s)\n  journal %" PRIu64
			     " commits (%s); %" PRIu64 " checkpoint(s)",
			get_str(e, "name"), u, c, get_u64(e, "luns"), get_u64(k, "journal_commits"), jb,
			ck);
		if (ck)
			fprintf(out, ", %.1f ms each", (double)get_u64(k, "checkpoint_ns") / (double)ck / 1e6);
		fprintf(out, "\n");
		print_counters(out, get_obj(e, "lun_sum"));
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
	else if (!strncmp(q->line, "stats", 5))
		print_stats(out, ans);
	else
		print_tables(out, ans, q->pools, q->volumes);
	return good ? 0 : 1;
}
