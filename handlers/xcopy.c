/*
 * EXTENDED COPY(LID1) (83h/00h, SPC-4 6.4), RECEIVE COPY RESULTS (84h,
 * SPC-4 6.18: COPY STATUS 00h, OPERATING PARAMETERS 03h) and the
 * Third-party Copy VPD page (8Fh, SPC-4 7.8.17): the copy manager.
 *
 * How this file works: xcopy_parse() checks the whole parameter list before
 * anything is done, in the order SPC-4 6.4 implies and ESXi expects:
 * list lengths (PARAMETER LIST LENGTH ERROR), then the CSCD count, the
 * segment count, unsupported CSCD and segment descriptor types, then every
 * other field (ILLEGAL REQUEST, INVALID FIELD IN PARAMETER LIST with a field
 * pointer). Only identification CSCD descriptors (E4h, a 16-byte NAA LU
 * designator) and block -> block segment descriptors (02h) are supported.
 * Then the segments run one after the other (xc_seg_start): both CSCDs are
 * resolved to LUNs -- the receiving LUN by its own NAA, any other through the
 * transport's lun->xcopy_peer hook (which applies the pool and co-visibility
 * rules) -- and checked (DISK BLOCK LENGTH, range); a failure there is COPY
 * ABORTED with the segment number in the COMMAND-SPECIFIC INFORMATION field
 * (SPC-4 6.4.1); a range past the end of either LUN is 0Dh/02h, as LIO answers
 * it; the real cause is kept (xc_range_ok) and logged when the command
 * answers that COPY ABORTED (xc_abort: the segments before it have run
 * without error by then). The pool then copies the
 * segment as one unit (vvol_copy, src/pool/copy.c): both ranges locked until
 * it is durable, so concurrent writes to either land wholly before or after
 * it; when source and destination offsets are congruent modulo the pool
 * extent, the middle is shared (no data moved) and head/tail are copied;
 * otherwise (or for overlapping ranges of one volume, copied in the safe
 * direction) every byte is copied. GOOD means the copy is durable.
 *
 * List identifiers of copies with LIST ID USAGE 00b/10b are kept in
 * lun->copies (the last SCSI_COPY_HELD) for COPY STATUS.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handler_util.h"
#include "vaaid/handlers.h"
#include "vaaid/pool.h"
#include "vaaid/util.h"

#define XC_HDR 16u
#define XC_CSCD_LEN 32u
#define XC_SEG02_LEN 28u

struct xc_seg {
	uint16_t src, dst; /* CSCD indexes */
	bool dc;
	uint32_t nblocks;
	uint64_t slba, dlba;
};

struct xcopy {
	struct vpool_ctx link; /* first: tracked on the pool (freed if abandoned) */
	struct scsi_cmd *cmd;
	struct scsi_copy_status *held; /* NULL: LIST ID USAGE 11b */
	uint8_t cscd[XCOPY_MAX_CSCD][XC_CSCD_LEN];
	unsigned ncscd, nseg, cur;
	struct xc_seg seg[XCOPY_MAX_SEGMENTS];
	/* execution (xc_seg_start) */
	struct xc_run {
		struct xcopy *x;
		struct vvol *sv, *dv;
		/* their CSCDs: the LUNs are looked up again when the segment is done (the
		 * counters, lun_stats.h), as a peer LUN may have gone meanwhile */
		uint16_t src, dst;
		uint64_t so, dO, len; /* bytes */
		struct vvol_report rep; /* what the pool did: shared, copied (the counters) */
	} run[XCOPY_MAX_SEGMENTS];
	unsigned nok;      /* segments before the first that fails its checks */
	uint16_t bad_asc;  /* that one's COPY ABORTED ASC */
	struct xc_past_end { /* why, when it runs past the end of a copy target */
		bool set;
		const char *side; /* "source" / "destination" */
		uint64_t lba, n, nblocks;
		uint32_t block_size;
		char lun[64];
	} past_end;
	bool concurrent;
	unsigned pending;
	int err;
	uint64_t bytes; /* transferred, for COPY STATUS */
};

/* ---- parameter list checks */

struct xc_err {
	uint16_t asc;
	int field; /* parameter list byte for the field pointer, -1 none */
};

static int xc_fail(struct xc_err *e, uint16_t asc, int field)
{
	e->asc = asc;
	e->field = field;
	return -1;
}

/*
 * SPC-4 6.4.3 parameter list header: byte 0 LIST IDENTIFIER, byte 1 STR (bit 5),
 * LIST ID USAGE (bits 4-3), PRIORITY (bits 2-0); bytes 2-3 CSCD DESCRIPTOR LIST
 * LENGTH; 8-11 SEGMENT DESCRIPTOR LIST LENGTH; 12-15 INLINE DATA LENGTH.
 */
static int xcopy_parse(struct xcopy *x, const uint8_t *b, size_t len, struct xc_err *e)
{
	/* SPC-4 6.4.3: the list must hold its header and everything the lengths announce;
	 * descriptor lists over MAXIMUM DESCRIPTOR LIST LENGTH -> PARAMETER LIST LENGTH ERROR. */
	if (len < XC_HDR)
		return xc_fail(e, ASC_PARAM_LIST_LENGTH_ERROR, -1);
	uint32_t cl = scsi_get_be16(b + 2), sl = scsi_get_be32(b + 8), il = scsi_get_be32(b + 12);
	if ((uint64_t)cl + sl > XCOPY_MAX_DESC_LIST ||
	    (uint64_t)XC_HDR + cl + sl + il > len)
		return xc_fail(e, ASC_PARAM_LIST_LENGTH_ERROR, -1);
	/* SPC-4 6.4.3: more CSCD descriptors than MAXIMUM CSCD DESCRIPTOR COUNT ->
	 * TOO MANY TARGET DESCRIPTORS (every CSCD descriptor type is 32 bytes here). */
	unsigned nc = (cl + XC_CSCD_LEN - 1) / XC_CSCD_LEN;
	if (nc > XCOPY_MAX_CSCD)
		return xc_fail(e, ASC_TOO_MANY_TARGET_DESCRIPTORS, 2);
	/* Count the segment descriptors (DESCRIPTOR LENGTH at bytes 2-3 of each). */
	const uint8_t *sd = b + XC_HDR + cl;
	unsigned ns = 0;
	for (uint32_t off = 0; off < sl; ns++) {
		if (sl - off < 4)
			return xc_fail(e, ASC_INVALID_FIELD_IN_PARAM_LIST, (int)(XC_HDR + cl + off));
		uint32_t dl = 4u + scsi_get_be16(sd + off + 2);
		/* SPC-4 6.4.3: more than MAXIMUM SEGMENT DESCRIPTOR COUNT -> TOO MANY SEGMENT DESCRIPTORS */
		if (ns + 1 > XCOPY_MAX_SEGMENTS)
			return xc_fail(e, ASC_TOO_MANY_SEGMENT_DESCRIPTORS, 8);
		/* a descriptor running past SEGMENT DESCRIPTOR LIST LENGTH */
		if (dl > sl - off)
			return xc_fail(e, ASC_INVALID_FIELD_IN_PARAM_LIST, (int)(XC_HDR + cl + off + 2));
		off += dl;
	}
	/* SPC-4 6.4.5.1: unsupported CSCD descriptor type -> UNSUPPORTED TARGET DESCRIPTOR TYPE CODE. */
	for (unsigned i = 0; i < nc; i++)
		if (b[XC_HDR + i * XC_CSCD_LEN] != 0xE4)
			return xc_fail(e, ASC_UNSUPPORTED_TARGET_DESCRIPTOR_TYPE,
				       (int)(XC_HDR + i * XC_CSCD_LEN));
	/* SPC-4 6.4.6.1: unsupported segment descriptor type -> UNSUPPORTED SEGMENT DESCRIPTOR TYPE CODE. */
	for (uint32_t off = 0; off < sl; off += 4 + scsi_get_be16(sd + off + 2))
		if (sd[off] != 0x02)
			return xc_fail(e, ASC_UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE, (int)(XC_HDR + cl + off));
	/* SPC-4 6.4.3 Table 105 LIST ID USAGE: 01b reserved; 11b: LIST IDENTIFIER shall be 0. */
	uint8_t usage = (b[1] >> 3) & 3;
	if (usage == 1)
		return xc_fail(e, ASC_INVALID_FIELD_IN_PARAM_LIST, 1);
	if (usage == 3 && b[0])
		return xc_fail(e, ASC_INVALID_FIELD_IN_PARAM_LIST, 0);
	/* SPC-4 6.4.3: MAXIMUM INLINE DATA LENGTH is 0. */
	if (il)
		return xc_fail(e, ASC_INVALID_FIELD_IN_PARAM_LIST, 12);
	if (cl % XC_CSCD_LEN)
		return xc_fail(e, ASC_INVALID_FIELD_IN_PARAM_LIST, 2);
	for (unsigned i = 0; i < nc; i++) {
		const uint8_t *d = b + XC_HDR + i * XC_CSCD_LEN;
		int base = (int)(XC_HDR + i * XC_CSCD_LEN);
		/* SPC-4 6.4.5.5 identification descriptor: PERIPHERAL DEVICE TYPE 00h (block),
		 * NUL=0; designator (SPC-4 7.8.6.1): CODE SET 1 (binary), ASSOCIATION 00b (LU),
		 * DESIGNATOR TYPE 3 (NAA), DESIGNATOR LENGTH 16. */
		if ((d[1] & 0x1F) != 0x00 || (d[1] & 0x20))
			return xc_fail(e, ASC_INVALID_FIELD_IN_PARAM_LIST, base + 1);
		if ((d[4] & 0x0F) != 0x01)
			return xc_fail(e, ASC_INVALID_FIELD_IN_PARAM_LIST, base + 4);
		if ((d[5] & 0x30) != 0x00 || (d[5] & 0x0F) != 0x03)
			return xc_fail(e, ASC_INVALID_FIELD_IN_PARAM_LIST, base + 5);
		if (d[7] != 16)
			return xc_fail(e, ASC_INVALID_FIELD_IN_PARAM_LIST, base + 7);
		memcpy(x->cscd[i], d, XC_CSCD_LEN);
	}
	x->ncscd = nc;
	unsigned k = 0;
	for (uint32_t off = 0; off < sl; off += XC_SEG02_LEN, k++) {
		const uint8_t *d = sd + off;
		int base = (int)(XC_HDR + cl + off);
		/* SPC-4 6.4.6.5 block device to block device: DESCRIPTOR LENGTH 0018h. */
		if (scsi_get_be16(d + 2) != XC_SEG02_LEN - 4)
			return xc_fail(e, ASC_INVALID_FIELD_IN_PARAM_LIST, base + 2);
		struct xc_seg *s = &x->seg[k];
		s->src = scsi_get_be16(d + 4);
		s->dst = scsi_get_be16(d + 6);
		/* A CSCD DESCRIPTOR ID that names no descriptor of the list is found when the
		 * segment is processed: its copy target cannot be reached (xc_resolve). */
		s->dc = d[1] & 0x02; /* DC: NUMBER OF BLOCKS counts destination blocks */
		/* CAT (bit 0) is accepted: with equal block sizes there is never a residue. */
		s->nblocks = scsi_get_be16(d + 10);
		s->slba = scsi_get_be64(d + 12);
		s->dlba = scsi_get_be64(d + 20);
	}
	x->nseg = k;
	return 0;
}

/* ---- execution */

static void xc_discard(struct vpool_ctx *link)
{
	struct xcopy *x = (struct xcopy *)link;
	free(x);
}

/* Every xcopy that reaches xc_free was tracked (handler_xcopy, before the first segment). */
static void xc_free(struct xcopy *x)
{
	handler_ctx_untrack(x->cmd, &x->link);
	xc_discard(&x->link);
}

static void xc_finish(struct xcopy *x, int res)
{
	struct scsi_cmd *cmd = x->cmd;
	if (x->held) {
		/* SPC-4 6.18.2 COPY MANAGER STATUS: 01h completed without errors, 02h with errors. */
		x->held->status = res ? 2 : 1;
		x->held->segments = (uint16_t)x->cur;
		x->held->bytes = x->bytes;
	}
	cmd->acct.bytes = x->bytes; /* the counters' (lun_stats.h): bytes of segments done */
	cmd->acct.set_bytes = 1;
	xc_free(x);
	handler_complete_pool_result(cmd, res, true);
}

/* COPY ABORTED while processing segment x->cur (SPC-4 6.4.1: COMMAND-SPECIFIC
 * INFORMATION = the number of the segment descriptor being processed). */
static void xc_abort(struct xcopy *x, uint16_t asc)
{
	struct scsi_cmd *cmd = x->cmd;
	if (x->held) {
		x->held->status = 2;
		x->held->segments = (uint16_t)x->cur;
		x->held->bytes = x->bytes;
	}
	unsigned seg = x->cur;
	const struct xc_past_end *pe = &x->past_end;
	/* The initiator only gets 0Dh/02h: say why where an admin sees it (the daemon's
	 * default level shows warnings), now that it is what the command answers; at
	 * most one line per 10 s per LUN (any initiator can send such copies). */
	if (pe->set)
		vlog_warn_limited(&cmd->lun->xcopy_range_log, cmd->lun->name,
			  "EXTENDED COPY segment %u: %s LBA %" PRIu64 " + %" PRIu64
			  " blocks runs past the end of LUN %s (%" PRIu64 " blocks of %" PRIu32
			  " bytes): COPY ABORTED 0Dh/02h; the segments before it are done, "
			  "it and later ones not",
			  seg, pe->side, pe->lba, pe->n, pe->lun, pe->nblocks, pe->block_size);
	xc_free(x);
	cmd->status = SAM_STAT_CHECK_CONDITION;
	scsi_set_sense(cmd, SK_COPY_ABORTED, asc);
	scsi_set_sense_csi(cmd, seg);
	scsi_cmd_complete(cmd);
}

/* Resolve CSCD i to a LUN: the receiving LUN itself or the transport's peer. */
static struct scsi_lun *xc_resolve(struct xcopy *x, unsigned i)
{
	struct scsi_lun *self = x->cmd->lun;
	if (i >= x->ncscd)
		return NULL; /* no such CSCD descriptor in the list */
	const uint8_t *naa = x->cscd[i] + 8;
	if (!memcmp(naa, self->info.naa, 16))
		return self;
	if (!self->xcopy_peer)
		return NULL;
	int why = SCSI_PEER_UNKNOWN;
	struct scsi_lun *l = self->xcopy_peer(self, naa, &why);
	if (l && (!l->vol || !self->vol || vvol_pool(l->vol) != vvol_pool(self->vol)))
		return NULL; /* another pool: not reachable */
	return l;
}

/* Is [lba, lba + n) within CSCD LUN l? If not, keep why for xc_abort's log line
 * (logged only if the command does answer 0Dh/02h for it: an earlier segment may
 * still fail otherwise). */
static bool xc_range_ok(struct xcopy *x, const char *side, const struct scsi_lun *l,
			uint64_t lba, uint64_t n)
{
	if (scsi_lba_range_ok(l, lba, n))
		return true;
	struct xc_past_end *pe = &x->past_end;
	*pe = (struct xc_past_end){.set = true, .side = side, .lba = lba, .n = n,
				   .nblocks = l->info.nblocks, .block_size = l->info.block_size};
	snprintf(pe->lun, sizeof(pe->lun), "%s", l->name ? l->name : "-");
	return false;
}

/*
 * Check segment i (SPC-4 6.4.1, 6.4.5.5, 6.4.6.5) and fill in its byte ranges;
 * 0, or the ASC of the COPY ABORTED it gets.
 */
static uint16_t xc_check(struct xcopy *x, unsigned i, struct xc_run *r)
{
	const struct xc_seg *s = &x->seg[i];
	struct scsi_lun *sl = xc_resolve(x, s->src), *dl = xc_resolve(x, s->dst);
	/* SPC-4 6.4.1: a CSCD that cannot be accessed (a CSCD DESCRIPTOR ID past the
	 * list, an unknown NAA, another pool, not co-visible) -> COPY ABORTED, COPY
	 * TARGET DEVICE NOT REACHABLE, the segment number in COMMAND-SPECIFIC INFORMATION. */
	if (!sl || !dl)
		return ASC_COPY_TARGET_NOT_REACHABLE;
	/* SPC-4 6.4.5.5 / Table 122: DISK BLOCK LENGTH (bytes 29-31) must be the logical
	 * block length of the LU; otherwise the copy is refused (INVALID FIELD IN
	 * PARAMETER LIST). */
	if (scsi_get_be24(x->cscd[s->src] + 29) != sl->info.block_size ||
	    scsi_get_be24(x->cscd[s->dst] + 29) != dl->info.block_size)
		return ASC_INVALID_FIELD_IN_PARAM_LIST;
	uint32_t sbs = sl->info.block_size, dbs = dl->info.block_size;
	uint64_t bytes = (uint64_t)s->nblocks * (s->dc ? dbs : sbs);
	/* SPC-4 6.4.6.5: a transfer that is not a whole number of blocks of the other
	 * side -> UNEXPECTED INEXACT SEGMENT. */
	if (bytes % sbs || bytes % dbs)
		return ASC_UNEXPECTED_INEXACT_SEGMENT;
	/* SPC-4 6.4.1: a range past the end of a copy target (source or destination)
	 * means the copy manager cannot complete the segment on that CSCD: COPY
	 * ABORTED, COPY TARGET DEVICE NOT REACHABLE (0Dh/02h), as LIO's own copy
	 * manager answers it (target_core_xcopy.c: a failed READ or WRITE of a
	 * segment -> TCM_COPY_TARGET_DEVICE_NOT_REACHABLE, on either side) and as
	 * libiscsi's ExtendedCopy.ValidSegDescr requires (issue 22, replacing
	 * 21h/00h). Found before the segment starts: it writes nothing. */
	if (!xc_range_ok(x, "source", sl, s->slba, bytes / sbs) ||
	    !xc_range_ok(x, "destination", dl, s->dlba, bytes / dbs))
		return ASC_COPY_TARGET_NOT_REACHABLE;
	*r = (struct xc_run){.sv = sl->vol, .dv = dl->vol, .src = s->src, .dst = s->dst, .so = s->slba * sbs,
			     .dO = s->dlba * dbs, .len = bytes};
	return 0;
}

static bool ranges_meet(const struct vvol *a, uint64_t ao, const struct vvol *b, uint64_t bo,
			uint64_t len_a, uint64_t len_b)
{
	return a == b && ao < bo + len_b && bo < ao + len_a;
}

/* Does segment j (later) depend on segment i: does either write what the other touches? */
static bool xc_conflict(const struct xc_run *i, const struct xc_run *j)
{
	return ranges_meet(i->dv, i->dO, j->sv, j->so, i->len, j->len) ||
	       ranges_meet(i->dv, i->dO, j->dv, j->dO, i->len, j->len) ||
	       ranges_meet(i->sv, i->so, j->dv, j->dO, i->len, j->len);
}

static void xc_launch(struct xcopy *x);

/* All segments launched so far are done: abort at the bad one, finish, or go on. */
static void xc_settle(struct xcopy *x)
{
	if (x->err) {
		xc_finish(x, x->err);
		return;
	}
	if (x->cur < x->nok) {
		xc_launch(x); /* sequential mode: the next one */
		return;
	}
	if (x->nok < x->nseg) {
		xc_abort(x, x->bad_asc); /* x->cur is the failing segment's number */
		return;
	}
	xc_finish(x, 0);
}

static void xc_seg_done(void *arg, int res)
{
	struct xc_run *r = arg;
	struct xcopy *x = r->x;
	if (res < 0 && !x->err)
		x->err = res;
	struct scsi_lun *sl = xc_resolve(x, r->src), *dl = xc_resolve(x, r->dst);
	if (res >= 0) {
		x->bytes += r->len;
		if (sl)
			sl->stats.xcopy_src_bytes += r->len;
		if (dl)
			dl->stats.xcopy_dst_bytes += r->len;
	}
	if (dl) { /* what the pool did to the destination's map, also when it failed part-way */
		dl->stats.xcopy_shared_bytes += r->rep.shared;
		dl->stats.xcopy_copied_bytes += r->rep.copied;
	}
	if (--x->pending == 0)
		xc_settle(x);
}

/* Start segment x->cur, or (concurrent mode) every checked segment. */
static void xc_launch(struct xcopy *x)
{
	unsigned last = x->concurrent ? x->nok : x->cur + 1;
	x->pending = 1; /* held while launching */
	for (; x->cur < last; x->cur++) {
		struct xc_run *r = &x->run[x->cur];
		r->x = x;
		x->pending++;
		r->rep = (struct vvol_report){0};
		int rc = vvol_copy_ex(r->sv, r->so, r->dv, r->dO, r->len, &r->rep, xc_seg_done, r);
		if (rc < 0) {
			x->pending--;
			if (!x->err)
				x->err = rc;
			break;
		}
	}
	if (--x->pending == 0)
		xc_settle(x);
}

/*
 * Run the segments: check them all in order first (the first bad one ends the
 * list: the ones before it are done, then COPY ABORTED names it), then let the
 * pool copy each as one unit (vvol_copy: both ranges locked until it is
 * durable; aligned parts shared, the rest copied). Segments none of which
 * writes what another reads or writes run at the same time -- their metadata
 * then goes to disk in common journal commits instead of one commit each;
 * otherwise they run one after the other, in order (SPC-4 6.4.1: as if
 * processed in order).
 */
static void xc_seg_start(struct xcopy *x)
{
	x->nok = x->nseg;
	for (unsigned i = 0; i < x->nseg; i++) {
		uint16_t asc = xc_check(x, i, &x->run[i]);
		if (asc) {
			x->nok = i;
			x->bad_asc = asc;
			break;
		}
	}
	x->concurrent = true;
	for (unsigned i = 0; i < x->nok && x->concurrent; i++)
		for (unsigned j = i + 1; j < x->nok; j++)
			if (xc_conflict(&x->run[i], &x->run[j])) {
				x->concurrent = false;
				break;
			}
	x->cur = 0;
	if (!x->nok) {
		xc_settle(x);
		return;
	}
	xc_launch(x);
}

static struct scsi_copy_status *xc_hold(struct scsi_lun *lun, uint8_t id)
{
	struct scsi_copy_status *c = NULL;
	for (unsigned i = 0; i < SCSI_COPY_HELD; i++)
		if (lun->copies[i].used && lun->copies[i].list_id == id)
			c = &lun->copies[i];
	if (!c) {
		c = &lun->copies[lun->copies_next];
		lun->copies_next = (lun->copies_next + 1) % SCSI_COPY_HELD;
	}
	*c = (struct scsi_copy_status){.used = true, .list_id = id, .status = 0};
	return c;
}

void handler_xcopy(struct scsi_cmd *cmd)
{
	/* SPC-4 6.4.1: PARAMETER LIST LENGTH (bytes 10-13) 0 -> no copy, not an error. */
	uint32_t pll = scsi_get_be32(cmd->cdb + 10);
	if (!pll) {
		scsi_complete_good(cmd);
		return;
	}
	size_t len = pll < cmd->iov_len ? pll : cmd->iov_len;
	uint8_t *b = malloc(len ? len : 1);
	struct xcopy *x = calloc(1, sizeof(*x));
	if (!b || !x) {
		free(b);
		free(x);
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	scsi_copy_from_data_out(cmd, 0, b, len);
	struct xc_err e;
	x->cmd = cmd;
	int rc = xcopy_parse(x, b, len, &e);
	uint8_t list_id = len ? b[0] : 0, usage = len > 1 ? (b[1] >> 3) & 3 : 3;
	free(b);
	if (rc < 0) {
		free(x);
		if (e.field >= 0)
			scsi_complete_field(cmd, e.asc, false, (uint16_t)e.field, -1);
		else
			scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, e.asc);
		return;
	}
	/* SPC-4 6.4.3 LIST ID USAGE 00b/10b: the list identifier's status is held for
	 * RECEIVE COPY RESULTS; 11b: none. */
	if (usage != 3)
		x->held = xc_hold(cmd->lun, list_id);
	handler_ctx_track(cmd, &x->link, xc_discard);
	xc_seg_start(x);
}

/* ---- RECEIVE COPY RESULTS */

static unsigned log2u(uint32_t v)
{
	unsigned n = 0;
	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

void handler_receive_copy_results(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	struct scsi_lun *lun = cmd->lun;
	uint32_t alloc = scsi_get_be32(cdb + 10); /* ALLOCATION LENGTH, SPC-4 6.18.1 */
	uint8_t b[64];
	size_t n;
	memset(b, 0, sizeof(b));
	if ((cdb[1] & 0x1F) == 0x03) {
		/* SPC-4 6.18.4 OPERATING PARAMETERS (Table 371). */
		uint32_t bs = lun->info.block_size;
		b[4] = 0x01;                                  /* SNLID: LIST ID USAGE 11b supported */
		scsi_put_be16(b + 8, XCOPY_MAX_CSCD);         /* MAXIMUM CSCD DESCRIPTOR COUNT */
		scsi_put_be16(b + 10, XCOPY_MAX_SEGMENTS);    /* MAXIMUM SEGMENT DESCRIPTOR COUNT */
		scsi_put_be32(b + 12, XCOPY_MAX_DESC_LIST);   /* MAXIMUM DESCRIPTOR LIST LENGTH */
		scsi_put_be32(b + 16, XCOPY_MAX_SEG_BLOCKS * bs); /* MAXIMUM SEGMENT LENGTH (bytes) */
		scsi_put_be32(b + 20, 0);                     /* MAXIMUM INLINE DATA LENGTH */
		scsi_put_be32(b + 24, 0);                     /* HELD DATA LIMIT */
		scsi_put_be32(b + 28, 0);                     /* MAXIMUM STREAM DEVICE TRANSFER SIZE */
		scsi_put_be16(b + 34, SCSI_COPY_HELD);        /* TOTAL CONCURRENT COPIES */
		b[36] = SCSI_COPY_HELD;                       /* MAXIMUM CONCURRENT COPIES */
		b[37] = (uint8_t)log2u(bs);                   /* DATA SEGMENT GRANULARITY (log2) */
		b[38] = (uint8_t)log2u(bs);                   /* INLINE DATA GRANULARITY (log2) */
		b[39] = (uint8_t)log2u(bs);                   /* HELD DATA GRANULARITY (log2) */
		b[43] = 2;                                    /* IMPLEMENTED DESCRIPTOR LIST LENGTH */
		b[44] = 0x02;                                 /* block -> block segment */
		b[45] = 0xE4;                                 /* identification CSCD */
		n = 46;
	} else {
		/* SPC-4 6.18.2 COPY STATUS for the LIST IDENTIFIER (byte 2); one not held ->
		 * INVALID FIELD IN CDB. */
		struct scsi_copy_status *c = NULL;
		for (unsigned i = 0; i < SCSI_COPY_HELD; i++)
			if (lun->copies[i].used && lun->copies[i].list_id == cdb[2])
				c = &lun->copies[i];
		if (!c) {
			scsi_complete_invalid_cdb(cmd, 2, -1);
			return;
		}
		/* TRANSFER COUNT UNITS (Table 367): 00h bytes, 01h KiB, 02h MiB, 03h GiB. */
		uint64_t cnt = c->bytes;
		uint8_t units = 0;
		while (cnt > UINT32_MAX) {
			cnt >>= 10;
			units++;
		}
		b[4] = c->status & 0x7F;           /* HDD=0, COPY MANAGER STATUS */
		scsi_put_be16(b + 5, c->segments); /* SEGMENTS PROCESSED */
		b[7] = units;
		scsi_put_be32(b + 8, (uint32_t)cnt); /* TRANSFER COUNT */
		n = 12;
		/* SPC-4 5.17.4.3 (held data): the status of a completed copy is discarded
		 * once it has been reported whole (ALLOCATION LENGTH covering it); asking
		 * again is an unknown list identifier. (Held data is per LUN, not per I_T
		 * nexus: TCMU gives no nexus; docs/xcopy.md.) */
		if (c->status != 0 && alloc >= n)
			c->used = false;
	}
	scsi_put_be32(b, (uint32_t)(n - 4)); /* AVAILABLE DATA (n - 3) */
	scsi_copy_to_data_in(cmd, b, n < alloc ? n : alloc);
	scsi_complete_good(cmd);
}

/* ---- VPD 8Fh */

/* One third-party copy descriptor (SPC-4 7.8.17.1): type, length padded to a
 * multiple of 4. Returns the bytes used. */
static size_t tpc_desc(uint8_t *d, uint16_t type, size_t body)
{
	size_t len = (4 + body + 3) / 4 * 4;
	scsi_put_be16(d, type);
	scsi_put_be16(d + 2, (uint16_t)(len - 4));
	return len;
}

size_t xcopy_vpd_tpc_page(const struct scsi_lun *lun, uint8_t *buf, size_t cap)
{
	uint32_t bs = lun->info.block_size;
	uint8_t *d = buf + 4;
	(void)cap; /* the page is 4 + 12 + 32 + 8 + 36 = 92 bytes */
	/* Supported Commands (0001h, SPC-4 7.8.17.3): EXTENDED COPY SA 00h (LID1),
	 * RECEIVE COPY RESULTS SAs 00h (COPY STATUS) and 03h (OPERATING PARAMETERS). */
	static const uint8_t cmds[] = {0x83, 1, 0x00, 0x84, 2, 0x00, 0x03};
	d[4] = sizeof(cmds);
	memcpy(d + 5, cmds, sizeof(cmds));
	d += tpc_desc(d, 0x0001, 1 + sizeof(cmds));
	/* Parameter Data (0004h, SPC-4 7.8.17.5). */
	scsi_put_be16(d + 8, XCOPY_MAX_CSCD);
	scsi_put_be16(d + 10, XCOPY_MAX_SEGMENTS);
	scsi_put_be32(d + 12, XCOPY_MAX_DESC_LIST);
	scsi_put_be32(d + 16, 0); /* MAXIMUM INLINE DATA LENGTH */
	d += tpc_desc(d, 0x0004, 28);
	/* Supported Descriptors (0008h, SPC-4 7.8.17.6): 02h, E4h. */
	d[4] = 2;
	d[5] = 0x02;
	d[6] = 0xE4;
	d += tpc_desc(d, 0x0008, 3);
	/* General Copy Operations (8001h, SPC-4 7.8.17.9). */
	scsi_put_be32(d + 4, SCSI_COPY_HELD);            /* TOTAL CONCURRENT COPIES */
	scsi_put_be32(d + 8, SCSI_COPY_HELD);            /* MAXIMUM IDENTIFIED CONCURRENT COPIES */
	scsi_put_be32(d + 12, XCOPY_MAX_SEG_BLOCKS * bs); /* MAXIMUM SEGMENT LENGTH */
	d[16] = (uint8_t)log2u(bs);                      /* DATA SEGMENT GRANULARITY */
	d[17] = (uint8_t)log2u(bs);                      /* INLINE DATA GRANULARITY */
	d += tpc_desc(d, 0x8001, 32);
	return (size_t)(d - buf);
}
