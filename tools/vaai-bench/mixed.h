/*
 * vaai-bench mixed: a load generator's own counts of one LUN (mixed.c) and
 * their comparison with the LUN's counters as the daemon reports them
 * (mixed_check.c: simhost_lun_stats_json, include/vaaid/lun_stats.h), through
 * either kernel port (kport.h): simhost's simulated kernel (mixed.c) or two
 * /dev/sgN of a real kernel with the counters from a command such as
 * `vaaictl --json stats POOL` (mixed_sg.c).
 */
#ifndef VAAI_BENCH_MIXED_H
#define VAAI_BENCH_MIXED_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "kport.h"
#include "simhost.h"
#include "vaaid/lun_stats.h"

#define MIXED_LUNS 2

struct mixed_opts {
	const char *dir;       /* simhost: where the pool file goes */
	double runtime;
	unsigned qd;
	uint64_t seed;
	bool keep;
	const char *sg;        /* --sg DEV=VOLUME,DEV=VOLUME: through the real kernel */
	const char *stats_cmd; /* --stats-cmd: prints `vaaictl --json stats`'s answer */
};

/* Where the load goes and where its counters come from. */
struct mixed_port {
	struct kport k;
	uint8_t naa[MIXED_LUNS][16]; /* each LUN's NAA designator (the copies' CSCDs) */
	/* Just before the first snapshot (NULL: none): 0 or -errno. */
	int (*settle)(void *ctx);
	/* A LUN's counters now (vaai_lun_stats_json's object; the caller puts it), or NULL. */
	json_object *(*snapshot)(void *ctx, int lun);
	void *ctx;
	const char *what; /* "simhost", "sg": for the header line */
};

/* Run the mix on the port's two LUNs and compare (mixed.c): 0 exact, 1 a mismatch or
 * a check failed, -errno. */
int mixed_load(const struct mixed_port *p, const struct mixed_opts *o);
/* --sg: open the devices, settle, run mixed_load (mixed_sg.c); the exit status. */
int mixed_sg(const struct mixed_opts *o);

/* The generator's counts for one LUN (the counters' meaning, lun_stats.h). */
struct tally {
	struct {
		uint64_t ok, failed, bytes;
		uint64_t lat_ok_ns, lat_failed_ns; /* its own latencies: submission to reap */
	} k[VSTAT_KINDS];
	uint64_t xcopy_src_bytes, xcopy_dst_bytes, caw_miscompares;
	uint64_t ws_zero, ws_pattern, ws_unmap_bit, ws_zero_bytes, ws_pattern_bytes;
	uint64_t unmap_descriptors, unmap_bytes;
};

/* A LUN's counters now (a JSON object, the caller puts it), or NULL. */
json_object *tally_snapshot(struct simhost *h, int lun);
/*
 * Compare after - before with t, key by key (only the keys a generator can know):
 * per kind ok, failed, bytes, latency counts (and their buckets' sum), latency sums
 * no larger than t's; xcopy, caw, write_same, unmap; out_of_space and unit
 * attentions 0; absolute inflight 0 and 1 <= inflight_max <= qd. Every mismatch
 * is printed on stderr; returns their number, adds the comparisons to *compared.
 */
uint64_t tally_compare(json_object *before, json_object *after, int lun, const struct tally *t,
		       unsigned qd, uint64_t *compared);
/* t on stderr, "# LUN lun ..." lines: per kind, then the primitives' details. */
void tally_print(const struct tally *t, int lun);

#endif
