/*
 * Per-LUN command counters (issue 25): what the VAAI primitives and the
 * ordinary commands did, as the target saw it. The host's view of the same
 * is esxtop's VAAISTATS / VAAILATSTATS (docs/observability.md maps them).
 *
 * How this works: every command dispatched to a LUN is timed from
 * scsi_dispatch() to its completion (handlers/lun_stats.c puts a trampoline in
 * front of the transport's done callback) and counted there by kind: a
 * success (GOOD) or a failure (anything else), the
 * bytes a successful command moved, its latency into a histogram (what the
 * transport answers without dispatching -- TASK SET FULL when a command cannot
 * be allocated, a malformed ring entry -- is not counted). What only a
 * handler knows it reports into cmd->acct before completing (a WRITE SAME of
 * zeros, UNMAP's descriptors and bytes, EXTENDED COPY's bytes, the bytes the
 * pool deallocated); EXTENDED COPY also counts the bytes on the LUNs the data
 * comes from and goes to, and what the pool shared and copied on the
 * destination. What the pool did (shared, copied, deallocated) is the pool's
 * own report (struct vvol_report, include/vaaid/pool.h), never recomputed
 * here. What the
 * sense data says is read at completion (MISCOMPARE, out of space). Unit attentions are
 * counted when posted (src/scsi/ua.c). Monotonic since the LUN came up; all
 * on the reactor thread, read by a snapshot (a copy) on the same thread.
 */
#ifndef VAAID_LUN_STATS_H
#define VAAID_LUN_STATS_H

#include <stdint.h>

/* The kinds of command counted apart (esxtop's columns where one exists). */
enum vstat_kind {
	VSTAT_READ,           /* READ(6/10/12/16) */
	VSTAT_WRITE,          /* WRITE(6/10/12/16), WRITE AND VERIFY */
	VSTAT_VERIFY,         /* VERIFY(10/16) */
	VSTAT_SYNC,           /* SYNCHRONIZE CACHE(10/16) */
	VSTAT_XCOPY,          /* EXTENDED COPY (esxtop CLONE_*) */
	VSTAT_CAW,            /* COMPARE AND WRITE (ATS) */
	VSTAT_WRITE_SAME,     /* WRITE SAME(10/16) (ZERO) */
	VSTAT_UNMAP,          /* UNMAP (DELETE) */
	VSTAT_GET_LBA_STATUS, /* GET LBA STATUS */
	VSTAT_OTHER,          /* everything else (INQUIRY, MODE SENSE, unknown opcodes, ...) */
	VSTAT_KINDS
};

/* Latency histogram: bucket i counts latencies below 2^(i + VSTAT_LAT_SHIFT) ns
 * (1 us up to 2^34 ns, about 17 s); the last bucket counts the rest. */
#define VSTAT_LAT_SHIFT 10
#define VSTAT_BUCKETS 26

/* The bucket a latency of ns falls in (handlers/lun_stats.c). */
unsigned vstat_lat_bucket(uint64_t ns);

struct vstat_lat {
	uint64_t count, sum_ns;
	uint64_t bucket[VSTAT_BUCKETS];
};

struct vstat_cmd {
	uint64_t ok, failed;
	uint64_t bytes; /* data the successful ones moved (read, written, compared, zeroed, ...) */
	struct vstat_lat lat_ok, lat_failed;
};

/* Unit attentions counted apart when posted (src/scsi/ua.c); the rest are "other". */
enum vstat_ua {
	VSTAT_UA_CAPACITY_CHANGED,  /* 2Ah/09h */
	VSTAT_UA_MODE_CHANGED,      /* 2Ah/01h */
	VSTAT_UA_INQUIRY_CHANGED,   /* 3Fh/03h */
	VSTAT_UA_THRESHOLD,         /* 38h/07h */
	VSTAT_UA_OTHER,
	VSTAT_UAS
};

struct vaai_lun_stats {
	struct vstat_cmd cmd[VSTAT_KINDS];
	/* EXTENDED COPY: bytes of successful segments read from this LUN (as source) and
	 * written to it (as destination), whichever LUN received the command */
	uint64_t xcopy_src_bytes, xcopy_dst_bytes;
	/* EXTENDED COPY, on the destination LUN (whose map changed), as the pool reported
	 * it (vvol_report): bytes done by sharing whole extents and bytes read and written;
	 * counted for every segment the pool ran, also one that failed part-way (the parts
	 * it did), so after successful segments only shared + copied = dst_bytes */
	uint64_t xcopy_shared_bytes, xcopy_copied_bytes;
	/* COMPARE AND WRITE answered MISCOMPARE (esxtop ATSF counts these with the rest
	 * of the failures: cmd[VSTAT_CAW].failed includes them) */
	uint64_t caw_miscompares;
	/* WRITE SAME, successful ones: of zeros (the block, or NDOB: deallocated where
	 * whole granules allow, handlers/write_same.c) and of a pattern; with the UNMAP bit */
	uint64_t ws_zero, ws_pattern, ws_unmap_bit, ws_zero_bytes, ws_pattern_bytes;
	/* bytes the pool deallocated (vvol_report.deallocated: granules that held data and
	 * left the volume's map) for WRITE SAMEs of zeros and for UNMAPs, whatever the
	 * command's outcome (what the pool did is done) */
	uint64_t ws_deallocated_bytes;
	/* UNMAP, successful ones: block descriptors and bytes they named */
	uint64_t unmap_descriptors, unmap_bytes;
	uint64_t unmap_deallocated_bytes;
	/* commands answered DATA PROTECT / SPACE ALLOCATION FAILED WRITE PROTECT (27h/07h:
	 * the pool is out of space, SBC-4 4.7.3.6) */
	uint64_t out_of_space;
	uint64_t ua_posted[VSTAT_UAS];
	/* commands in flight now, and the most seen at once */
	uint64_t inflight, inflight_max;
};

/* What a handler reports for the counters before it completes its command. */
struct scsi_cmd_acct {
	uint64_t bytes;       /* overrides the bytes the CDB names, when set_bytes */
	uint64_t deallocated; /* WRITE SAME, UNMAP: the pool's vvol_report.deallocated */
	uint32_t descriptors; /* UNMAP: block descriptors */
	uint8_t set_bytes;
	uint8_t ws_zero;      /* WRITE SAME: the block is zeros */
};

struct scsi_cmd;
/* The dispatcher's first step for every command (handlers/lun_stats.c). */
void vstat_begin(struct scsi_cmd *cmd);
/* sum += st (a pool's sum of its LUNs; inflight_max: the largest of them). */
void vaai_lun_stats_add(struct vaai_lun_stats *sum, const struct vaai_lun_stats *st);
/* The names of a kind and of a unit attention in every view (JSON keys, labels). */
const char *vstat_kind_name(enum vstat_kind k);
const char *vstat_ua_name(enum vstat_ua u);
/* The counters as a JSON object (handlers/lun_stats_json.c; the caller owns it). */
struct json_object;
struct json_object *vaai_lun_stats_json(const struct vaai_lun_stats *st);

#endif
