/*
 * UNMAP (42h, SBC-4 5.31): deallocate the LBA ranges of a parameter list;
 * afterwards every LBA it named reads zeros (LBPRZ=1, VPD B2), except where
 * that would need new space.
 *
 * How this works: the whole parameter list is parsed and checked first
 * (unmap_parse) -- list lengths, the descriptor count against MAXIMUM UNMAP
 * BLOCK DESCRIPTOR COUNT, every range against the capacity and the total
 * against MAXIMUM UNMAP LBA COUNT -- so that a bad list changes nothing.
 * Then every non-empty descriptor (consecutive ones that continue one another
 * merged) becomes one vvol_unmap() (at most
 * UNMAP_WINDOW in flight; they may overlap, the pool's extent locks order
 * them) and the command completes when the last one is durable. The pool
 * unmaps fully covered extents and clears fully covered 4 KiB granules
 * (deallocated: they read zeros, LBPRZ=1: SBC-4 4.7.3.5); in a partly
 * covered granule (512-byte volumes) it writes zeros into the named LBAs, in
 * place -- the granule stays mapped (GET LBA STATUS says mapped) and its
 * other LBAs keep their data -- the same code as WRITE SAME's zeros there.
 * Fully covered granules of a redirected extent whose shared source still
 * provides them get zeros the same way (clearing them would bring the
 * source's data back). Where those zeros would take new space -- a granule
 * of an extent shared by EXTENDED COPY (redirect-on-write), hence also in a
 * full pool; a private extent's granules get their zeros in a full pool too
 * -- the LBAs keep their data, mapped: UNMAP is advisory (SBC-4 4.7.3.4),
 * and the command succeeds.
 */
#include <errno.h>
#include <stdlib.h>

#include "handler_util.h"
#include "vaaid/handlers.h"
#include "vaaid/pool.h"

#define UNMAP_WINDOW 32u
#define UNMAP_HDR 8u
#define UNMAP_DESC 16u

/*
 * SBC-4 5.31.2 (UNMAP parameter list): bytes 0-1 UNMAP DATA LENGTH (the bytes
 * that follow it), bytes 2-3 UNMAP BLOCK DESCRIPTOR DATA LENGTH, 4-7 reserved,
 * then 16-byte descriptors (LBA, NUMBER OF LOGICAL BLOCKS, 4 reserved bytes).
 */
int unmap_parse(const uint8_t *buf, size_t len, uint64_t nblocks, uint32_t max_desc,
		uint64_t max_lbas, struct unmap_extent *out, size_t *n_out, uint16_t *asc_ascq,
		int *field)
{
	*n_out = 0;
	*field = -1;
	/* A list too short to hold its own header, or one that says it is longer
	 * than what was transferred: PARAMETER LIST LENGTH ERROR (SPC-4 4.5.6). */
	if (len < UNMAP_HDR) {
		*asc_ascq = ASC_PARAM_LIST_LENGTH_ERROR;
		return -1;
	}
	size_t dl = scsi_get_be16(buf), bddl = scsi_get_be16(buf + 2);
	if (dl + 2 > len) {
		*asc_ascq = ASC_PARAM_LIST_LENGTH_ERROR;
		return -1;
	}
	/* The descriptors must lie inside the UNMAP DATA LENGTH: else INVALID FIELD IN
	 * PARAMETER LIST pointing at the inconsistent length. */
	if (dl < UNMAP_HDR - 2) {
		*asc_ascq = ASC_INVALID_FIELD_IN_PARAM_LIST;
		*field = 0;
		return -1;
	}
	if (bddl > dl - (UNMAP_HDR - 2)) {
		*asc_ascq = ASC_INVALID_FIELD_IN_PARAM_LIST;
		*field = 2;
		return -1;
	}
	/* SBC-4 5.31.2: a BLOCK DESCRIPTOR DATA LENGTH that is not a multiple of 16
	 * leaves an incomplete last descriptor, which is ignored; 0 is not an error. */
	size_t nd = bddl / UNMAP_DESC;
	/* SBC-4 5.31.1: more descriptors than MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT ->
	 * INVALID FIELD IN PARAMETER LIST. */
	if (nd > max_desc) {
		*asc_ascq = ASC_INVALID_FIELD_IN_PARAM_LIST;
		*field = 2;
		return -1;
	}
	uint64_t total = 0;
	for (size_t i = 0; i < nd; i++) {
		const uint8_t *d = buf + UNMAP_HDR + i * UNMAP_DESC;
		uint64_t lba = scsi_get_be64(d);
		uint32_t n = scsi_get_be32(d + 8);
		/* SBC-4 5.31.1: LBA + NUMBER OF LOGICAL BLOCKS past the capacity -> LOGICAL
		 * BLOCK ADDRESS OUT OF RANGE (a 0-block descriptor at the capacity is fine). */
		if (lba > nblocks || n > nblocks - lba) {
			*asc_ascq = ASC_LBA_OUT_OF_RANGE;
			*n_out = 0;
			return -1;
		}
		/* SBC-4 5.31.1: more blocks in total than MAXIMUM UNMAP LBA COUNT ->
		 * INVALID FIELD IN PARAMETER LIST. */
		total += n;
		if (total > max_lbas) {
			*asc_ascq = ASC_INVALID_FIELD_IN_PARAM_LIST;
			*field = (int)(UNMAP_HDR + i * UNMAP_DESC + 8);
			*n_out = 0;
			return -1;
		}
		if (n) /* SBC-4 5.31.2: NUMBER OF LOGICAL BLOCKS 0 is not an error */
			out[(*n_out)++] = (struct unmap_extent){lba, n};
	}
	return (int)nd;
}

struct unmap_ctx {
	struct vpool_ctx link; /* first: tracked on the pool (freed if abandoned) */
	struct scsi_cmd *cmd;
	struct unmap_extent *ext;
	size_t n, next;
	unsigned pending;
	int err;
	struct vvol_report rep; /* what the pool did, summed over the deallocations */
};

static void unmap_issue(struct unmap_ctx *u);

static void unmap_discard(struct vpool_ctx *link)
{
	struct unmap_ctx *u = (struct unmap_ctx *)link;
	free(u->ext);
	free(u);
}

static void unmap_finish(struct unmap_ctx *u)
{
	struct scsi_cmd *cmd = u->cmd;
	int err = u->err;
	cmd->acct.deallocated = u->rep.deallocated; /* the counters (lun_stats.h) */
	handler_ctx_untrack(cmd, &u->link);
	free(u->ext);
	free(u);
	handler_complete_pool_result(cmd, err, true);
}

static void unmap_done(void *arg, int res)
{
	struct unmap_ctx *u = arg;
	if (res < 0 && !u->err)
		u->err = res;
	u->pending--;
	unmap_issue(u);
}

/* Keep up to UNMAP_WINDOW deallocations in flight; complete after the last. */
static void unmap_issue(struct unmap_ctx *u)
{
	uint32_t bs = u->cmd->lun->info.block_size;
	/* the extra count keeps u alive while this loop runs */
	u->pending++;
	while (!u->err && u->next < u->n && u->pending <= UNMAP_WINDOW) {
		const struct unmap_extent *e = &u->ext[u->next++];
		u->pending++;
		int rc = vvol_unmap_ex(u->cmd->lun->vol, e->lba * bs, (uint64_t)e->count * bs,
				       &u->rep, unmap_done, u);
		if (rc < 0) {
			u->pending--;
			if (!u->err)
				u->err = rc;
		}
	}
	if (--u->pending == 0 && (u->err || u->next == u->n))
		unmap_finish(u);
}

/*
 * Descriptors that continue one another (as a host splitting a large range
 * sends them) become one deallocation: fewer requests and commits, and a
 * granule split between two descriptors is then covered and cleared (each
 * alone would write zeros into its part of it, leaving it mapped).
 */
static size_t merge_adjacent(struct unmap_extent *e, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && e[k - 1].lba + e[k - 1].count == e[i].lba &&
		    (uint64_t)e[k - 1].count + e[i].count <= UINT32_MAX) {
			e[k - 1].count += e[i].count;
			continue;
		}
		e[k++] = e[i];
	}
	return k;
}

void handler_unmap(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	const struct scsi_lun_info *in = &cmd->lun->info;
	/* SBC-4 5.31.1: ANCHOR=1 while ANC_SUP=0 (VPD B2) -> INVALID FIELD IN CDB. */
	if ((cdb[1] & 0x01) && !in->anc_sup) {
		scsi_complete_invalid_cdb(cmd, 1, 0);
		return;
	}
	/* SBC-4 5.31.1: PARAMETER LIST LENGTH 0 -> no data, nothing done, not an error. */
	size_t pll = scsi_get_be16(cdb + 7);
	size_t len = pll < cmd->iov_len ? pll : cmd->iov_len;
	if (!pll) {
		scsi_complete_good(cmd);
		return;
	}
	uint8_t *buf = malloc(len ? len : 1);
	size_t cap = in->max_unmap_desc_count ? in->max_unmap_desc_count : 1;
	struct unmap_ctx *u = calloc(1, sizeof(*u));
	struct unmap_extent *ext = calloc(cap, sizeof(*ext));
	if (!buf || !u || !ext) {
		free(buf);
		free(u);
		free(ext);
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	scsi_copy_from_data_out(cmd, 0, buf, len);
	uint16_t asc;
	int field;
	size_t n;
	int rc = unmap_parse(buf, len, in->nblocks, in->max_unmap_desc_count, in->max_unmap_lba_count,
			     ext, &n, &asc, &field);
	free(buf);
	if (rc < 0) {
		free(u);
		free(ext);
		if (field >= 0)
			scsi_complete_field(cmd, asc, false, (uint16_t)field, -1);
		else
			scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, asc);
		return;
	}
	if (!n) { /* an empty list, or only 0-block descriptors: GOOD (SBC-4 5.31.2) */
		free(u);
		free(ext);
		scsi_complete_good(cmd);
		return;
	}
	/* for the counters (lun_stats.h): the non-empty descriptors and what they name */
	cmd->acct.descriptors = (uint32_t)n;
	cmd->acct.set_bytes = 1;
	for (size_t i = 0; i < n; i++)
		cmd->acct.bytes += (uint64_t)ext[i].count * in->block_size;
	u->cmd = cmd;
	u->ext = ext;
	u->n = merge_adjacent(ext, n);
	handler_ctx_track(cmd, &u->link, unmap_discard);
	unmap_issue(u);
}
