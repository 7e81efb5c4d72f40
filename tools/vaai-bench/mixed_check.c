/*
 * vaai-bench mixed: a LUN's counters against a generator's tally (mixed.h).
 *
 * How this file works: the counters are read as the daemon reports them
 * (simhost_lun_stats_json, parsed with json-c); each key a generator can know
 * is looked up by its dotted path in the snapshot after the load and in the
 * one before it, and their difference compared with the tally. Keys not looked
 * up (any added later) cannot make the comparison fail; a key looked up and
 * missing is a mismatch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mixed.h"

json_object *tally_snapshot(struct simhost *h, int lun)
{
	char *js = simhost_lun_stats_json(h, lun);
	json_object *o = js ? json_tokener_parse(js) : NULL;
	free(js);
	return o;
}

/* The value at a dotted path ("commands.read.ok"); NULL when absent. */
static json_object *at(json_object *o, const char *path)
{
	char key[64];
	while (o && *path) {
		size_t n = strcspn(path, ".");
		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		if (!json_object_object_get_ex(o, key, &o))
			return NULL;
		path += n + (path[n] == '.');
	}
	return o;
}

struct cmp {
	json_object *before, *after;
	int lun;
	uint64_t mismatches, compared;
};

/* after - before of a counter; false (a mismatch printed) when it is missing. */
static bool delta(struct cmp *x, const char *path, uint64_t *d)
{
	json_object *a = at(x->after, path), *b = at(x->before, path);
	if (!a || !b) {
		fprintf(stderr, "counters_exact: LUN %d %s: missing from the counters\n", x->lun, path);
		x->mismatches++;
		return false;
	}
	*d = json_object_get_uint64(a) - json_object_get_uint64(b);
	return true;
}

static void expect_eq(struct cmp *x, const char *path, uint64_t want)
{
	uint64_t d;
	x->compared++;
	if (delta(x, path, &d) && d != want) {
		fprintf(stderr, "counters_exact: LUN %d %s: counters %llu, generator %llu\n", x->lun, path,
			(unsigned long long)d, (unsigned long long)want);
		x->mismatches++;
	}
}

/* A latency histogram: count, the sum of its buckets, sum_ns <= the generator's. */
static void expect_lat(struct cmp *x, const char *kind, const char *which, uint64_t count,
		       uint64_t gen_ns)
{
	char p[96];
	snprintf(p, sizeof(p), "commands.%s.%s.count", kind, which);
	expect_eq(x, p, count);
	snprintf(p, sizeof(p), "commands.%s.%s.sum_ns", kind, which);
	uint64_t ns;
	x->compared++;
	if (delta(x, p, &ns) && (ns > gen_ns || (count && !ns))) {
		fprintf(stderr, "counters_exact: LUN %d %s: counters %llu ns, generator %llu ns "
			"(submission to reap contains dispatch to completion)\n", x->lun, p,
			(unsigned long long)ns, (unsigned long long)gen_ns);
		x->mismatches++;
	}
	snprintf(p, sizeof(p), "commands.%s.%s.buckets", kind, which);
	json_object *a = at(x->after, p), *b = at(x->before, p);
	uint64_t sum = 0;
	x->compared++;
	if (!a || !b || json_object_array_length(a) != VSTAT_BUCKETS ||
	    json_object_array_length(b) != VSTAT_BUCKETS) {
		fprintf(stderr, "counters_exact: LUN %d %s: missing or not %u buckets\n", x->lun, p,
			VSTAT_BUCKETS);
		x->mismatches++;
		return;
	}
	for (size_t i = 0; i < VSTAT_BUCKETS; i++)
		sum += json_object_get_uint64(json_object_array_get_idx(a, i)) -
		       json_object_get_uint64(json_object_array_get_idx(b, i));
	if (sum != count) {
		fprintf(stderr, "counters_exact: LUN %d %s: buckets sum to %llu, generator %llu\n", x->lun, p,
			(unsigned long long)sum, (unsigned long long)count);
		x->mismatches++;
	}
}

static void compare_lun(struct cmp *x, const struct tally *t, unsigned qd)
{
	char p[96];
	for (unsigned k = 0; k < VSTAT_KINDS; k++) {
		const char *kn = vstat_kind_name((enum vstat_kind)k);
		snprintf(p, sizeof(p), "commands.%s.ok", kn);
		expect_eq(x, p, t->k[k].ok);
		snprintf(p, sizeof(p), "commands.%s.failed", kn);
		expect_eq(x, p, t->k[k].failed);
		snprintf(p, sizeof(p), "commands.%s.bytes", kn);
		expect_eq(x, p, t->k[k].bytes);
		expect_lat(x, kn, "latency_ok", t->k[k].ok, t->k[k].lat_ok_ns);
		expect_lat(x, kn, "latency_failed", t->k[k].failed, t->k[k].lat_failed_ns);
	}
	expect_eq(x, "xcopy.src_bytes", t->xcopy_src_bytes);
	expect_eq(x, "xcopy.dst_bytes", t->xcopy_dst_bytes);
	expect_eq(x, "caw.miscompares", t->caw_miscompares);
	expect_eq(x, "write_same.zero", t->ws_zero);
	expect_eq(x, "write_same.pattern", t->ws_pattern);
	expect_eq(x, "write_same.unmap_bit", t->ws_unmap_bit);
	expect_eq(x, "write_same.zero_bytes", t->ws_zero_bytes);
	expect_eq(x, "write_same.pattern_bytes", t->ws_pattern_bytes);
	expect_eq(x, "unmap.descriptors", t->unmap_descriptors);
	expect_eq(x, "unmap.bytes", t->unmap_bytes);
	expect_eq(x, "out_of_space", 0);
	for (unsigned u = 0; u < VSTAT_UAS; u++) {
		snprintf(p, sizeof(p), "unit_attentions.%s", vstat_ua_name((enum vstat_ua)u));
		expect_eq(x, p, 0);
	}
	/* absolute: nothing in flight now; at most --qd at once, whatever the setup saw */
	json_object *in = at(x->after, "inflight"), *mx = at(x->after, "inflight_max");
	uint64_t vin = in ? json_object_get_uint64(in) : UINT64_MAX;
	uint64_t vmx = mx ? json_object_get_uint64(mx) : UINT64_MAX;
	x->compared += 2;
	if (vin != 0) {
		fprintf(stderr, "counters_exact: LUN %d inflight: counters %llu, generator 0\n", x->lun,
			(unsigned long long)vin);
		x->mismatches++;
	}
	fprintf(stderr, "# LUN %d counters: inflight_max %llu (--qd %u)\n", x->lun,
		(unsigned long long)vmx, qd);
	if (vmx < 1 || vmx > qd) {
		fprintf(stderr, "counters_exact: LUN %d inflight_max: counters %llu, generator 1..%u\n", x->lun,
			(unsigned long long)vmx, qd);
		x->mismatches++;
	}
}

uint64_t tally_compare(json_object *before, json_object *after, int lun, const struct tally *t,
		       unsigned qd, uint64_t *compared)
{
	struct cmp x = {.before = before, .after = after, .lun = lun};
	compare_lun(&x, t, qd);
	*compared += x.compared;
	return x.mismatches;
}

void tally_print(const struct tally *t, int lun)
{
	for (unsigned k = 0; k < VSTAT_KINDS; k++)
		fprintf(stderr, "# LUN %d %-14s ok %8llu  failed %6llu  bytes %12llu\n", lun,
			vstat_kind_name((enum vstat_kind)k), (unsigned long long)t->k[k].ok,
			(unsigned long long)t->k[k].failed, (unsigned long long)t->k[k].bytes);
	fprintf(stderr, "# LUN %d xcopy src_bytes %llu dst_bytes %llu; caw miscompares %llu; write_same "
		"zero %llu (%llu bytes) pattern %llu (%llu bytes) unmap_bit %llu; unmap descriptors %llu "
		"(%llu bytes)\n", lun, (unsigned long long)t->xcopy_src_bytes,
		(unsigned long long)t->xcopy_dst_bytes, (unsigned long long)t->caw_miscompares,
		(unsigned long long)t->ws_zero, (unsigned long long)t->ws_zero_bytes,
		(unsigned long long)t->ws_pattern, (unsigned long long)t->ws_pattern_bytes,
		(unsigned long long)t->ws_unmap_bit, (unsigned long long)t->unmap_descriptors,
		(unsigned long long)t->unmap_bytes);
}
