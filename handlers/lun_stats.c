/*
 * Per-LUN command counters (include/vaaid/lun_stats.h).
 *
 * How this file works: scsi_dispatch() calls vstat_begin() first, which
 * stamps the command, counts it in flight and puts acct_done() in front of
 * the transport's done callback; whichever path completes the command (the
 * dispatcher's own refusals, a unit attention, a handler), acct_done() counts
 * it by kind and outcome, then hands it to the transport. Runs on the reactor
 * thread, like every handler.
 */
#include <string.h>

#include "vaaid/io.h"
#include "vaaid/scsi.h"

static enum vstat_kind kind_of(const uint8_t *cdb)
{
	switch (cdb[0]) {
	case 0x08: case 0x28: case 0xA8: case 0x88:
		return VSTAT_READ;
	case 0x0A: case 0x2A: case 0xAA: case 0x8A: case 0x2E: case 0x8E:
		return VSTAT_WRITE;
	case 0x2F: case 0x8F:
		return VSTAT_VERIFY;
	case 0x35: case 0x91:
		return VSTAT_SYNC;
	case 0x83:
		return (cdb[1] & 0x1F) == 0x00 ? VSTAT_XCOPY : VSTAT_OTHER;
	case 0x89:
		return VSTAT_CAW;
	case 0x41: case 0x93:
		return VSTAT_WRITE_SAME;
	case 0x42:
		return VSTAT_UNMAP;
	case 0x9E:
		return (cdb[1] & 0x1F) == 0x12 ? VSTAT_GET_LBA_STATUS : VSTAT_OTHER;
	default:
		return VSTAT_OTHER;
	}
}

unsigned vstat_lat_bucket(uint64_t ns)
{
	/* the first bucket whose bound 2^(b + SHIFT) is above ns: b = bits(ns) - SHIFT */
	unsigned bits = ns ? 64u - (unsigned)__builtin_clzll(ns) : 0;
	unsigned b = bits > VSTAT_LAT_SHIFT ? bits - VSTAT_LAT_SHIFT : 0;
	return b < VSTAT_BUCKETS ? b : VSTAT_BUCKETS - 1;
}

static void lat_add(struct vstat_lat *l, uint64_t ns)
{
	unsigned b = vstat_lat_bucket(ns);
	l->bucket[b]++;
	l->count++;
	l->sum_ns += ns;
}

/* The bytes a successful command moved, from its CDB (handlers override). */
static uint64_t cdb_bytes(const struct scsi_cmd *cmd, enum vstat_kind k)
{
	uint64_t lba;
	uint32_t n;
	if (k == VSTAT_SYNC || k == VSTAT_OTHER || k == VSTAT_GET_LBA_STATUS || k == VSTAT_XCOPY ||
	    k == VSTAT_UNMAP || scsi_cdb_lba_len(cmd->cdb, &lba, &n) < 0)
		return 0;
	return (uint64_t)n * cmd->lun->info.block_size;
}

static void account(struct scsi_cmd *cmd)
{
	struct vaai_lun_stats *st = &cmd->lun->stats;
	enum vstat_kind k = kind_of(cmd->cdb);
	struct vstat_cmd *c = &st->cmd[k];
	uint64_t ns = vclock_ns() - cmd->t_start_ns;
	bool ok = cmd->status == SAM_STAT_GOOD;
	uint8_t key = cmd->sense_len > 13 ? cmd->sense[2] & 0x0F : 0;
	uint16_t asc = cmd->sense_len > 13 ? (uint16_t)(cmd->sense[12] << 8 | cmd->sense[13]) : 0;
	if (st->inflight)
		st->inflight--;
	/* what the pool reported it did, whatever the outcome */
	if (k == VSTAT_WRITE_SAME)
		st->ws_deallocated_bytes += cmd->acct.deallocated;
	else if (k == VSTAT_UNMAP)
		st->unmap_deallocated_bytes += cmd->acct.deallocated;
	if (!ok) {
		c->failed++;
		lat_add(&c->lat_failed, ns);
		if (k == VSTAT_CAW && cmd->status == SAM_STAT_CHECK_CONDITION &&
		    key == SK_MISCOMPARE)
			st->caw_miscompares++;
		if (cmd->status == SAM_STAT_CHECK_CONDITION && key == SK_DATA_PROTECT &&
		    asc == ASC_SPACE_ALLOC_FAILED_WRITE_PROTECT)
			st->out_of_space++;
		return;
	}
	uint64_t bytes = cmd->acct.set_bytes ? cmd->acct.bytes : cdb_bytes(cmd, k);
	c->ok++;
	c->bytes += bytes;
	lat_add(&c->lat_ok, ns);
	if (k == VSTAT_WRITE_SAME) {
		bool unmap_bit = cmd->cdb[1] & 0x08;
		st->ws_unmap_bit += unmap_bit;
		if (cmd->acct.ws_zero) {
			st->ws_zero++;
			st->ws_zero_bytes += bytes;
		} else {
			st->ws_pattern++;
			st->ws_pattern_bytes += bytes;
		}
	} else if (k == VSTAT_UNMAP) {
		st->unmap_descriptors += cmd->acct.descriptors;
		st->unmap_bytes += bytes;
	}
}

static void acct_done(struct scsi_cmd *cmd)
{
	scsi_done_fn done = cmd->acct_done;
	cmd->acct_done = NULL;
	account(cmd);
	done(cmd);
}

void vstat_begin(struct scsi_cmd *cmd)
{
	struct vaai_lun_stats *st = &cmd->lun->stats;
	memset(&cmd->acct, 0, sizeof(cmd->acct));
	cmd->t_start_ns = vclock_ns();
	cmd->acct_done = cmd->done;
	cmd->done = acct_done;
	if (++st->inflight > st->inflight_max)
		st->inflight_max = st->inflight;
}

static void lat_sum(struct vstat_lat *a, const struct vstat_lat *b)
{
	a->count += b->count;
	a->sum_ns += b->sum_ns;
	for (unsigned i = 0; i < VSTAT_BUCKETS; i++)
		a->bucket[i] += b->bucket[i];
}

void vaai_lun_stats_add(struct vaai_lun_stats *sum, const struct vaai_lun_stats *st)
{
	for (unsigned k = 0; k < VSTAT_KINDS; k++) {
		struct vstat_cmd *a = &sum->cmd[k];
		const struct vstat_cmd *b = &st->cmd[k];
		a->ok += b->ok;
		a->failed += b->failed;
		a->bytes += b->bytes;
		lat_sum(&a->lat_ok, &b->lat_ok);
		lat_sum(&a->lat_failed, &b->lat_failed);
	}
	sum->xcopy_src_bytes += st->xcopy_src_bytes;
	sum->xcopy_dst_bytes += st->xcopy_dst_bytes;
	sum->xcopy_shared_bytes += st->xcopy_shared_bytes;
	sum->xcopy_copied_bytes += st->xcopy_copied_bytes;
	sum->caw_miscompares += st->caw_miscompares;
	sum->ws_zero += st->ws_zero;
	sum->ws_pattern += st->ws_pattern;
	sum->ws_unmap_bit += st->ws_unmap_bit;
	sum->ws_zero_bytes += st->ws_zero_bytes;
	sum->ws_pattern_bytes += st->ws_pattern_bytes;
	sum->ws_deallocated_bytes += st->ws_deallocated_bytes;
	sum->unmap_descriptors += st->unmap_descriptors;
	sum->unmap_bytes += st->unmap_bytes;
	sum->unmap_deallocated_bytes += st->unmap_deallocated_bytes;
	sum->out_of_space += st->out_of_space;
	for (unsigned u = 0; u < VSTAT_UAS; u++)
		sum->ua_posted[u] += st->ua_posted[u];
	sum->inflight += st->inflight;
	if (st->inflight_max > sum->inflight_max) /* the most one LUN saw, not a sum */
		sum->inflight_max = st->inflight_max;
}
