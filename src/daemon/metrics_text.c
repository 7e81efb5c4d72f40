/*
 * The Prometheus text exposition (format 0.0.4) of the counters (issue 25):
 * every served LUN's command counters (include/vaaid/lun_stats.h) labelled
 * pool, volume and naa, and every pool's space and counters labelled pool.
 * Names follow Prometheus' conventions: the vaaid_ prefix, _total for
 * counters, _bytes and _seconds units, histograms with _bucket{le}, _sum and
 * _count (the buckets are lun_stats.h's: le = 2^(i+10) ns). Each metric family
 * is written whole (HELP, TYPE, then its samples for every LUN or pool), as
 * the format requires. docs/observability.md lists the names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vaaid/metrics.h"

/* A label value: \, " and newline escaped. */
static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*s, f);
	}
}

static void lun_labels(FILE *f, const struct vd_metrics_lun *l)
{
	fputs("pool=\"", f);
	esc(f, l->pool);
	fputs("\",volume=\"", f);
	esc(f, l->volume);
	fputs("\",naa=\"", f);
	for (int i = 0; i < 16; i++)
		fprintf(f, "%02x", l->naa[i]);
	fputc('"', f);
}

/* A LUN's labels as lun_labels writes them (malloc'd), or NULL: made once per
 * LUN for the histogram's hundreds of lines. */
static char *lun_labels_text(const struct vd_metrics_lun *l)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return NULL;
	lun_labels(f, l);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample per LUN of the value get() picks. */
#define PER_LUN(f, luns, n, name, extra, expr)                                                   \
	do {                                                                                      \
		for (size_t i_ = 0; i_ < (n); i_++) {                                             \
			const struct vd_metrics_lun *l = &(luns)[i_];                              \
			const struct vaai_lun_stats *st = &l->stats;                               \
			(void)st;                                                                  \
			fprintf(f, "%s{", name);                                                   \
			lun_labels(f, l);                                                          \
			fprintf(f, "%s} %llu\n", extra, (unsigned long long)(expr));               \
		}                                                                                  \
	} while (0)

/*
 * The histogram: VSTAT_BUCKETS + 2 lines per LUN, kind and result (about 560
 * per LUN), the bulk of the text. What repeats is made once: each LUN's
 * labels, and each bucket's le. Returns -ENOMEM (the text is then incomplete).
 */
static int latency(FILE *f, const struct vd_metrics_lun *luns, size_t n)
{
	static const char *const name = "vaaid_command_latency_seconds";
	head(f, name, "histogram", "Time from the command's dispatch to its answer, by kind "
				   "and result (ok: GOOD).");
	char le[VSTAT_BUCKETS][32];
	for (unsigned b = 0; b + 1 < VSTAT_BUCKETS; b++)
		snprintf(le[b], sizeof(le[b]), "%.9g", (double)(1ull << (b + VSTAT_LAT_SHIFT)) / 1e9);
	for (size_t i = 0; i < n; i++) {
		char *labels = lun_labels_text(&luns[i]);
		if (!labels)
			return -ENOMEM;
		for (unsigned k = 0; k < VSTAT_KINDS; k++)
			for (int r = 0; r < 2; r++) {
				const struct vstat_lat *lat =
					r ? &luns[i].stats.cmd[k].lat_failed : &luns[i].stats.cmd[k].lat_ok;
				char tail[96]; /* ,kind="...",result="..." */
				snprintf(tail, sizeof(tail), ",kind=\"%s\",result=\"%s\"", vstat_kind_name(k),
					 r ? "failed" : "ok");
				uint64_t cum = 0;
				for (unsigned b = 0; b + 1 < VSTAT_BUCKETS; b++) {
					cum += lat->bucket[b];
					fprintf(f, "%s_bucket{%s%s,le=\"%s\"} %llu\n", name, labels, tail, le[b],
						(unsigned long long)cum);
				}
				fprintf(f, "%s_bucket{%s%s,le=\"+Inf\"} %llu\n", name, labels, tail,
					(unsigned long long)lat->count);
				fprintf(f, "%s_sum{%s%s} %.9f\n", name, labels, tail, (double)lat->sum_ns / 1e9);
				fprintf(f, "%s_count{%s%s} %llu\n", name, labels, tail,
					(unsigned long long)lat->count);
			}
		free(labels);
	}
	return 0;
}

static int lun_metrics(FILE *f, const struct vd_metrics_lun *luns, size_t n)
{
	char extra[96];
	head(f, "vaaid_commands_total", "counter",
	     "SCSI commands answered, by kind and result (ok: GOOD; failed: anything else).");
	for (unsigned k = 0; k < VSTAT_KINDS; k++) {
		snprintf(extra, sizeof(extra), ",kind=\"%s\",result=\"ok\"", vstat_kind_name(k));
		PER_LUN(f, luns, n, "vaaid_commands_total", extra, st->cmd[k].ok);
		snprintf(extra, sizeof(extra), ",kind=\"%s\",result=\"failed\"", vstat_kind_name(k));
		PER_LUN(f, luns, n, "vaaid_commands_total", extra, st->cmd[k].failed);
	}
	head(f, "vaaid_command_bytes_total", "counter",
	     "Bytes the commands answered GOOD moved, by kind.");
	for (unsigned k = 0; k < VSTAT_KINDS; k++) {
		snprintf(extra, sizeof(extra), ",kind=\"%s\"", vstat_kind_name(k));
		PER_LUN(f, luns, n, "vaaid_command_bytes_total", extra, st->cmd[k].bytes);
	}
	if (latency(f, luns, n) < 0)
		return -ENOMEM;
	head(f, "vaaid_xcopy_bytes_total", "counter",
	     "Bytes of EXTENDED COPY segments done, read from this LUN (source) or written to it "
	     "(destination).");
	PER_LUN(f, luns, n, "vaaid_xcopy_bytes_total", ",side=\"source\"", st->xcopy_src_bytes);
	PER_LUN(f, luns, n, "vaaid_xcopy_bytes_total", ",side=\"destination\"", st->xcopy_dst_bytes);
	head(f, "vaaid_xcopy_shared_bytes_total", "counter",
	     "Bytes of EXTENDED COPY the pool did by sharing whole extents (no data moved), on the "
	     "destination LUN.");
	PER_LUN(f, luns, n, "vaaid_xcopy_shared_bytes_total", "", st->xcopy_shared_bytes);
	head(f, "vaaid_xcopy_copied_bytes_total", "counter",
	     "Bytes of EXTENDED COPY the pool read and wrote, on the destination LUN.");
	PER_LUN(f, luns, n, "vaaid_xcopy_copied_bytes_total", "", st->xcopy_copied_bytes);
	head(f, "vaaid_caw_miscompares_total", "counter",
	     "COMPARE AND WRITE (ATS) answered MISCOMPARE.");
	PER_LUN(f, luns, n, "vaaid_caw_miscompares_total", "", st->caw_miscompares);
	head(f, "vaaid_write_same_total", "counter",
	     "WRITE SAME answered GOOD, by data (zero: deallocated where whole granules allow).");
	PER_LUN(f, luns, n, "vaaid_write_same_total", ",data=\"zero\"", st->ws_zero);
	PER_LUN(f, luns, n, "vaaid_write_same_total", ",data=\"pattern\"", st->ws_pattern);
	head(f, "vaaid_write_same_bytes_total", "counter", "Bytes of WRITE SAME answered GOOD.");
	PER_LUN(f, luns, n, "vaaid_write_same_bytes_total", ",data=\"zero\"", st->ws_zero_bytes);
	PER_LUN(f, luns, n, "vaaid_write_same_bytes_total", ",data=\"pattern\"", st->ws_pattern_bytes);
	head(f, "vaaid_write_same_unmap_total", "counter",
	     "WRITE SAME answered GOOD with the UNMAP bit set.");
	PER_LUN(f, luns, n, "vaaid_write_same_unmap_total", "", st->ws_unmap_bit);
	head(f, "vaaid_unmap_descriptors_total", "counter",
	     "Non-empty block descriptors of UNMAPs answered GOOD.");
	PER_LUN(f, luns, n, "vaaid_unmap_descriptors_total", "", st->unmap_descriptors);
	head(f, "vaaid_unmap_bytes_total", "counter", "Bytes named by UNMAPs answered GOOD.");
	PER_LUN(f, luns, n, "vaaid_unmap_bytes_total", "", st->unmap_bytes);
	head(f, "vaaid_deallocated_bytes_total", "counter",
	     "Bytes that held data and the pool deallocated (left the volume's map), by kind of "
	     "command (write_same: of zeros; unmap).");
	PER_LUN(f, luns, n, "vaaid_deallocated_bytes_total", ",kind=\"write_same\"",
		st->ws_deallocated_bytes);
	PER_LUN(f, luns, n, "vaaid_deallocated_bytes_total", ",kind=\"unmap\"",
		st->unmap_deallocated_bytes);
	head(f, "vaaid_out_of_space_total", "counter",
	     "Commands answered DATA PROTECT / SPACE ALLOCATION FAILED WRITE PROTECT (27h/07h).");
	PER_LUN(f, luns, n, "vaaid_out_of_space_total", "", st->out_of_space);
	head(f, "vaaid_unit_attentions_total", "counter", "Unit attention conditions posted.");
	for (unsigned u = 0; u < VSTAT_UAS; u++) {
		snprintf(extra, sizeof(extra), ",condition=\"%s\"", vstat_ua_name(u));
		PER_LUN(f, luns, n, "vaaid_unit_attentions_total", extra, st->ua_posted[u]);
	}
	head(f, "vaaid_commands_in_flight", "gauge", "Commands taken and not yet answered.");
	PER_LUN(f, luns, n, "vaaid_commands_in_flight", "", st->inflight);
	head(f, "vaaid_commands_in_flight_max", "gauge", "The most commands in flight at once.");
	PER_LUN(f, luns, n, "vaaid_commands_in_flight_max", "", st->inflight_max);
	return 0;
}

#define PER_POOL(f, pools, n, fam_, extra_, expr_)                                               \
	do {                                                                                      \
		for (size_t i_ = 0; i_ < (n); i_++) {                                             \
			const struct vpool_stats *ps = &(pools)[i_].stats;                         \
			(void)ps;                                                                  \
			fprintf(f, "%s{pool=\"", fam_);                                           \
			esc(f, (pools)[i_].name);                                                  \
			fprintf(f, "\"%s} %llu\n", extra_, (unsigned long long)(expr_));          \
		}                                                                                  \
	} while (0)

static void pool_metrics(FILE *f, const struct vd_metrics_pool *pools, size_t n)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} gauges[] = {
		{"vaaid_pool_capacity_bytes", "Bytes for data extents.",
		 offsetof(struct vpool_stats, capacity)},
		{"vaaid_pool_used_bytes", "Bytes of extents in use.", offsetof(struct vpool_stats, used)},
		{"vaaid_pool_free_bytes", "Capacity minus used.", offsetof(struct vpool_stats, free)},
		{"vaaid_pool_sharing_savings_bytes", "Bytes extent sharing saves.",
		 offsetof(struct vpool_stats, sharing_savings)},
		{"vaaid_pool_hydrating_bytes", "Bytes of redirected extents still reading their source.",
		 offsetof(struct vpool_stats, hydrating)},
	};
	for (size_t g = 0; g < sizeof(gauges) / sizeof(gauges[0]); g++) {
		head(f, gauges[g].name, "gauge", gauges[g].help);
		PER_POOL(f, pools, n, gauges[g].name, "",
			 *(const uint64_t *)((const char *)ps + gauges[g].off));
	}
	head(f, "vaaid_pool_soft_threshold_bytes", "gauge",
	     "Used bytes at which the pool's LUNs report the soft threshold (38h/07h); 0: none.");
	PER_POOL(f, pools, n, "vaaid_pool_soft_threshold_bytes", "", pools[i_].soft_threshold);
	head(f, "vaaid_pool_luns", "gauge", "LUNs served from the pool.");
	for (size_t i = 0; i < n; i++) {
		fputs("vaaid_pool_luns{pool=\"", f);
		esc(f, pools[i].name);
		fprintf(f, "\"} %u\n", pools[i].luns);
	}
	head(f, "vaaid_pool_journal_commits_total", "counter", "Journal commits written.");
	PER_POOL(f, pools, n, "vaaid_pool_journal_commits_total", "", ps->journal_commits);
	head(f, "vaaid_pool_journal_bytes_total", "counter", "Bytes of journal commits written.");
	PER_POOL(f, pools, n, "vaaid_pool_journal_bytes_total", "", ps->journal_bytes);
	head(f, "vaaid_pool_checkpoints_total", "counter", "Checkpoints completed.");
	PER_POOL(f, pools, n, "vaaid_pool_checkpoints_total", "", ps->checkpoints);
	head(f, "vaaid_pool_share_room_refused_total", "counter",
	     "Extent shares refused for lack of checkpoint-area room (copied as bytes instead).");
	PER_POOL(f, pools, n, "vaaid_pool_share_room_refused_total", "", ps->share_room_refused);
	head(f, "vaaid_pool_checkpoint_seconds_total", "counter", "Time spent in checkpoints.");
	for (size_t i = 0; i < n; i++) {
		fputs("vaaid_pool_checkpoint_seconds_total{pool=\"", f);
		esc(f, pools[i].name);
		fprintf(f, "\"} %.9f\n", (double)pools[i].stats.checkpoint_ns / 1e9);
	}
}

/* The backing stores' I/O, one family at a time (data store; journal file when there is one). */
static void pool_io(FILE *f, const struct vd_metrics_pool *pools, size_t n)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{"vaaid_pool_io_operations_total", "Backing store operations, by store (data; journal "
						   "for a journal file of its own) and op."},
		{"vaaid_pool_io_bytes_total", "Backing store bytes, by store and op."},
		{"vaaid_pool_group_flushes_total", "Flushes that made a group of durable writes durable "
						   "at once, by store."},
	};
	for (int m = 0; m < 3; m++) {
		head(f, fam[m].name, "counter", fam[m].help);
		for (size_t i = 0; i < n; i++)
			for (int j = 0; j < 2; j++) {
				if (j && !pools[i].stats.journal_file)
					continue;
				const struct vblk_stats *io = j ? &pools[i].stats.journal_io
								: &pools[i].stats.store_io;
				const uint64_t v[3][3] = {{io->read_ops, io->write_ops, io->flush_ops},
							  {io->bytes_read, io->bytes_written, 0},
							  {io->dsync_flushes, 0, 0}};
				static const char *const op[3] = {"read", "write", "flush"};
				int nops = m == 0 ? 3 : m == 1 ? 2 : 1;
				for (int o = 0; o < nops; o++) {
					fprintf(f, "%s{pool=\"", fam[m].name);
					esc(f, pools[i].name);
					fprintf(f, "\",store=\"%s\"", j ? "journal" : "data");
					if (m < 2)
						fprintf(f, ",op=\"%s\"", op[o]);
					fprintf(f, "} %llu\n", (unsigned long long)v[m][o]);
				}
			}
	}
}

char *vd_metrics_format(const struct vd_metrics_lun *luns, size_t nluns,
			const struct vd_metrics_pool *pools, size_t npools, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return NULL;
	int rc = lun_metrics(f, luns, nluns);
	pool_metrics(f, pools, npools);
	pool_io(f, pools, npools);
	if (fclose(f) != 0 || rc < 0) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}
