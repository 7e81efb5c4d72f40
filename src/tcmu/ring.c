/*
 * vaaid TCMU ring: the userspace side of target_core_user's command ring
 * (mailbox version 2) over a mapped region. API in include/vaaid/ring.h;
 * layout helpers and kernel facts in tcmu_abi.h.
 *
 * How this file works.
 *
 * Taking commands. tcmu_ring_next() acquire-loads cmd_head (pairs with the
 * kernel's smp_store_release() in UPDATE_HEAD: every entry before head is
 * fully written) and walks a private read pointer (r->next, starting at
 * cmd_tail) towards it: PAD and TMR entries are stepped over by their length,
 * every other entry is copied out of the map, checked, and returned. The copy
 * is needed because the entry's slot is reused for a completion (see below)
 * and because the map is hostile input.
 *
 * Completing commands, out of order. The kernel does not remember where it
 * put a command. tcmu_handle_completions() walks its private cmdr_last_cleaned
 * up to READ_ONCE(cmd_tail); at each position it reads the entry header from
 * the slot: PAD/TMR -> advance by hdr length; anything else -> look the
 * command up by the hdr.cmd_id found IN THE SLOT (xa_erase; unknown id ->
 * TCMU_DEV_BIT_BROKEN), read rsp.* from the same slot, advance by the slot's
 * hdr length. So a slot is just "the next response", not "the response of the
 * command that was queued here". tcmu_ring_complete(id, ...) therefore:
 *   1. loads cmd_tail and steps over PAD/TMR entries there (as the kernel
 *      would anyway; tcmu-runner's tcmulib_command_complete does the same);
 *   2. writes id into hdr.cmd_id of the first CMD slot at cmd_tail (whoever
 *      was queued there), uflags (READ_LEN or 0) and rsp.{scsi_status,
 *      read_len, sense_buffer}; the len_op word is never written, so the
 *      kernel walks the same lengths it wrote;
 *   3. release-stores cmd_tail = that slot + its length (mod cmdr_size), so
 *      the response is visible before the kernel sees the new tail.
 * This is what TCMU_MAILBOX_FLAG_CAP_OOOC advertises ("out of order
 * completions"); every kernel this was checked against (4.x .. 6.x) sets it
 * together with version 2, and tcmu_ring_attach() refuses a mailbox without it.
 * Correctness needs: number of CMD slots in [cmd_tail, r->next) == number of
 * commands taken and not completed, which holds because every entry
 * tcmu_ring_next() returns (1 or -EBADMSG) occupies exactly one slot there and
 * is completed exactly once by the caller. The slot written is always one
 * already copied out by tcmu_ring_next() (it lies before r->next).
 *
 * rsp.read_len + TCMU_UFLAG_READ_LEN are written when read_len >= 0 and the
 * mailbox has TCMU_MAILBOX_FLAG_CAP_READ_LEN. Kernel semantics (5.x/6.x
 * tcmu_handle_completion): honoured only for DMA_FROM_DEVICE, only when
 * non-zero (0 means "whole buffer"), and clamped to the buffer size; with
 * CHECK CONDITION the data is still returned when read_len is valid.
 *
 * The map is hostile input: the kernel (or a buggy/malicious simulator) may
 * write anything at any time. So
 *  - the mailbox geometry (cmdr_off, cmdr_size, flags) is read once, at
 *    attach, and only the private copy is used afterwards;
 *  - every entry is copied out of the map before it is checked (no double
 *    fetch), and nothing read from the map is used as an offset or a length
 *    before it has been checked against the ring or the map;
 *  - the only writes into the map are the response fields of a CMD slot in
 *    [cmd_tail, r->next) whose bounds were just checked, and cmd_tail.
 *
 * Two kinds of bad input:
 *  - the ring cannot be walked: cmd_head/cmd_tail not 8-aligned or outside the
 *    ring, an entry length of 0, running past cmd_head or past the end of the
 *    ring, or a non-PAD/TMR entry shorter than struct tcmu_cmd_entry (its
 *    response would overwrite the next entry): -EPROTO, nothing is consumed.
 *    There is no way to find the next entry, so there is also no slot to
 *    complete it in; the kernel's answer to such a ring is a ring reset, after
 *    which tcmu_ring_resync() starts again;
 *  - a walkable entry with bad contents (unknown opcode, iov_cnt too large for
 *    the entry or above TCMU_RING_MAX_IOV, BIDI/DIF iovecs, CDB offset outside
 *    the entry, CDB length running past the entry, an iovec of length 0 or
 *    not inside the data area [cmdr_off + cmdr_size, map_size)): -EBADMSG, the
 *    entry is consumed and its cmd_id returned so the caller completes it with
 *    an error.
 *
 * Kernel facts this follows (drivers/target/target_core_user.c, 5.x-6.x):
 *  - queue_cmd_ring(): entries never wrap; ring_insert_padding() first fills
 *    the end of the ring with a PAD entry (cmd_id 0) when the entry does not
 *    fit; cmd_head advances by the entry length mod cmdr_size (UPDATE_HEAD,
 *    smp_store_release). Command ids come from xa_alloc in [1, 0xffff].
 *  - cdb_off = CMDR_OFF + cmd_head + base_command_size: an offset from the
 *    start of the map, inside the entry, after the iovec array.
 *  - new_block_to_iov(): iov_base = data_off + dbi * data_blk_size, an offset
 *    from the start of the map into the data area (data_off = CMDR_OFF +
 *    cmdr_size); adjacent blocks share one iovec; lengths are never 0. The
 *    same iovecs describe data-out (filled) and data-in (to fill) buffers.
 *  - TCMU_UFLAG_KEEP_BUF would keep the data buffer after completion: never
 *    set here (the whole uflags byte is rewritten on completion).
 */
#include "tcmu_abi.h"
#include "vaaid/ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Byte offsets of the response fields inside an entry. */
#define OFF_CMD_ID offsetof(struct tcmu_cmd_entry, hdr.cmd_id)
#define OFF_UFLAGS offsetof(struct tcmu_cmd_entry, hdr.uflags)
#define OFF_STATUS offsetof(struct tcmu_cmd_entry, rsp.scsi_status)
#define OFF_READ_LEN offsetof(struct tcmu_cmd_entry, rsp.read_len)
#define OFF_SENSE offsetof(struct tcmu_cmd_entry, rsp.sense_buffer)

static uint8_t *ring_entry(const struct tcmu_ring *r, uint32_t pos)
{
	return r->map + r->cmdr_off + pos;
}

static uint32_t ring_advance(const struct tcmu_ring *r, uint32_t pos, uint32_t len)
{
	return (uint32_t)(((uint64_t)pos + len) % r->cmdr_size);
}

static bool ring_pos_ok(const struct tcmu_ring *r, uint32_t pos)
{
	return pos < r->cmdr_size && pos % TCMU_ABI_ALIGN == 0;
}

/*
 * Header of the entry at pos (pos checked by ring_pos_ok, so the 8 header
 * bytes are inside the ring), and whether its length lets us walk past it
 * without leaving the ring or the limit bytes that are ours to read.
 */
static bool ring_read_hdr(const struct tcmu_ring *r, uint32_t pos, uint32_t limit,
			  struct tcmu_cmd_entry_hdr *hdr, uint32_t *len, unsigned *op)
{
	tcmu_abi_copy_in(hdr, ring_entry(r, pos), sizeof(*hdr));
	*len = tcmu_hdr_get_len(hdr->len_op);
	*op = tcmu_hdr_get_op(hdr->len_op);
	return *len >= TCMU_ABI_HDR_SIZE && *len % TCMU_ABI_ALIGN == 0 && *len <= limit &&
	       *len <= r->cmdr_size - pos;
}

static bool ring_skipped_op(unsigned op)
{
	return op == TCMU_OP_PAD || op == TCMU_OP_TMR;
}

int tcmu_ring_attach(struct tcmu_ring *r, void *map, size_t map_size)
{
	struct tcmu_mailbox mb;

	if (!r || !map || (uintptr_t)map % 8 || map_size < TCMU_ABI_CMDR_OFF)
		return -EINVAL;
	memset(&mb, 0, sizeof(mb));
	tcmu_abi_copy_in(&mb, map, offsetof(struct tcmu_mailbox, cmd_head));
	if (mb.version != TCMU_MAILBOX_VERSION || !(mb.flags & TCMU_MAILBOX_FLAG_CAP_OOOC))
		return -EPROTONOSUPPORT;
	/* The ring must not overlap the mailbox, must fit in the map, and must
	 * hold at least two minimal entries (the kernel refuses commands larger
	 * than half the ring). */
	if (mb.cmdr_off < TCMU_ABI_CMDR_OFF || mb.cmdr_off % TCMU_ABI_ALIGN ||
	    mb.cmdr_size % TCMU_ABI_ALIGN || mb.cmdr_size < 2 * TCMU_ABI_ENTRY_MIN ||
	    (uint64_t)mb.cmdr_off + mb.cmdr_size > map_size)
		return -EINVAL;

	r->map = map;
	r->map_size = map_size;
	r->cmdr_off = mb.cmdr_off;
	r->cmdr_size = mb.cmdr_size;
	r->mb_flags = mb.flags;
	uint32_t tail = tcmu_abi_load_tail(map);
	if (!ring_pos_ok(r, tail))
		return -EPROTO;
	r->next = tail;
	return 0;
}

void tcmu_ring_resync(struct tcmu_ring *r)
{
	uint32_t tail = tcmu_abi_load_tail(r->map);
	if (ring_pos_ok(r, tail))
		r->next = tail;
}

void tcmu_ring_cmd_release(struct tcmu_ring_cmd *c)
{
	if (!c)
		return;
	free(c->iov);
	c->iov = NULL;
	c->iovcnt = 0;
	c->data_len = 0;
}

/*
 * Copy the CDB, which must lie inside the entry after the iovec array
 * ([cdb_min, entry_end), map offsets); returns its length or 0 if invalid.
 */
static size_t take_cdb(const struct tcmu_ring *r, uint64_t cdb_off, uint64_t cdb_min,
		       uint64_t entry_end, uint8_t *cdb)
{
	if (cdb_off < cdb_min || cdb_off >= entry_end)
		return 0;
	size_t room = (size_t)(entry_end - cdb_off);
	if (room > TCMU_RING_MAX_CDB)
		room = TCMU_RING_MAX_CDB;
	tcmu_abi_copy_in(cdb, r->map + cdb_off, room);
	if (cdb[0] == 0x7F && room < 8)
		return 0;
	size_t len = tcmu_abi_cdb_len(cdb);
	return len <= room ? len : 0;
}

/* Translate and check the iovec array (inside the entry); false for a bad iovec. */
static bool take_iovs(const struct tcmu_ring *r, const uint8_t *arr, uint32_t cnt,
		      struct iovec *iov, size_t *total)
{
	const uint64_t data_off = (uint64_t)r->cmdr_off + r->cmdr_size;
	const uint64_t map_size = r->map_size;
	size_t sum = 0;

	for (uint32_t i = 0; i < cnt; i++) {
		struct tcmu_abi_iov v;
		tcmu_abi_copy_in(&v, arr + (size_t)i * sizeof(v), sizeof(v));
		/* iov_base is an offset from the start of the map into the data area. */
		if (v.len == 0 || v.base < data_off || v.base > map_size ||
		    v.len > map_size - v.base || v.len > SIZE_MAX - sum)
			return false;
		iov[i].iov_base = r->map + v.base;
		iov[i].iov_len = (size_t)v.len;
		sum += (size_t)v.len;
	}
	*total = sum;
	return true;
}

/* A walkable CMD (or unknown-opcode) entry of len >= ENTRY_MIN bytes at r->next. */
static int take_cmd(struct tcmu_ring *r, unsigned op, uint32_t len, struct tcmu_ring_cmd *out)
{
	const uint32_t pos = r->next;
	const uint8_t *e = ring_entry(r, pos);
	struct tcmu_cmd_entry ent;

	tcmu_abi_copy_in(&ent, e, sizeof(ent)); /* len >= sizeof(ent) was checked */
	out->cmd_id = ent.hdr.cmd_id;

	const uint32_t iov_cnt = ent.req.iov_cnt;
	const uint64_t iov_end = TCMU_ABI_IOV_OFF + (uint64_t)iov_cnt * sizeof(struct tcmu_abi_iov);
	if (op != TCMU_OP_CMD || iov_cnt > TCMU_RING_MAX_IOV || ent.req.iov_bidi_cnt ||
	    ent.req.iov_dif_cnt || iov_end > len)
		goto bad;

	const uint64_t entry_off = (uint64_t)r->cmdr_off + pos;
	size_t cdb_len = take_cdb(r, ent.req.cdb_off, entry_off + iov_end, entry_off + len, out->cdb);
	if (!cdb_len)
		goto bad;

	struct iovec *iov = NULL;
	size_t total = 0;
	if (iov_cnt) {
		iov = malloc(sizeof(*iov) * iov_cnt);
		if (!iov)
			return -ENOMEM; /* not consumed: the caller may retry */
		if (!take_iovs(r, e + TCMU_ABI_IOV_OFF, iov_cnt, iov, &total)) {
			free(iov);
			goto bad;
		}
	}
	out->cdb_len = cdb_len;
	out->iov = iov;
	out->iovcnt = (int)iov_cnt;
	out->data_len = total;
	r->next = ring_advance(r, pos, len);
	return 1;

bad:
	out->cdb_len = 0;
	r->next = ring_advance(r, pos, len);
	return -EBADMSG;
}

int tcmu_ring_next(struct tcmu_ring *r, struct tcmu_ring_cmd *out)
{
	out->cmd_id = 0;
	out->cdb_len = 0;
	out->iov = NULL;
	out->iovcnt = 0;
	out->data_len = 0;

	for (;;) {
		/* Acquire pairs with the kernel's smp_store_release() of cmd_head:
		 * the entries before head are fully written. */
		uint32_t head = tcmu_abi_load_head(r->map);
		if (!ring_pos_ok(r, head))
			return -EPROTO;
		if (r->next == head)
			return 0;

		struct tcmu_cmd_entry_hdr hdr;
		uint32_t len;
		unsigned op;
		uint32_t pending = tcmu_abi_dist(r->next, head, r->cmdr_size);
		if (!ring_read_hdr(r, r->next, pending, &hdr, &len, &op))
			return -EPROTO;
		if (ring_skipped_op(op)) {
			r->next = ring_advance(r, r->next, len);
			continue;
		}
		/* Any other entry is answered in place, so it must hold a response. */
		if (len < TCMU_ABI_ENTRY_MIN)
			return -EPROTO;
		return take_cmd(r, op, len, out);
	}
}

int tcmu_ring_complete(struct tcmu_ring *r, uint16_t cmd_id, uint8_t scsi_status,
		       const uint8_t *sense, size_t sense_len, long read_len)
{
	uint32_t tail = tcmu_abi_load_tail(r->map);
	uint32_t len;

	if (!ring_pos_ok(r, tail))
		return -EPROTO;
	/* The slots between cmd_tail and our read pointer belong to commands we
	 * took; PAD/TMR entries among them are stepped over. */
	for (;;) {
		uint32_t taken = tcmu_abi_dist(tail, r->next, r->cmdr_size);
		struct tcmu_cmd_entry_hdr hdr;
		unsigned op;

		if (!taken)
			return -ENOSPC;
		if (!ring_read_hdr(r, tail, taken, &hdr, &len, &op))
			return -EPROTO;
		if (!ring_skipped_op(op))
			break;
		tail = ring_advance(r, tail, len);
	}
	if (len < TCMU_ABI_ENTRY_MIN)
		return -EPROTO;

	uint8_t *e = ring_entry(r, tail);
	uint8_t uflags = 0;
	uint32_t rl = 0;
	if (read_len >= 0 && (r->mb_flags & TCMU_MAILBOX_FLAG_CAP_READ_LEN)) {
		uflags |= TCMU_UFLAG_READ_LEN;
		rl = (unsigned long)read_len > UINT32_MAX ? UINT32_MAX : (uint32_t)read_len;
	}
	if (!sense)
		sense_len = 0;
	if (sense_len > TCMU_SENSE_BUFFERSIZE)
		sense_len = TCMU_SENSE_BUFFERSIZE;

	/* The completed command's id goes into the slot at cmd_tail (out of
	 * order completion, see the top of the file); the whole uflags byte is
	 * written so that no stale KEEP_BUF/UNKNOWN_OP bit survives. len_op and
	 * kflags are left alone. */
	memcpy(e + OFF_CMD_ID, &cmd_id, sizeof(cmd_id));
	e[OFF_UFLAGS] = uflags;
	memset(e + OFF_STATUS, 0, OFF_SENSE - OFF_STATUS); /* status, pads, read_len */
	e[OFF_STATUS] = scsi_status;
	memcpy(e + OFF_READ_LEN, &rl, sizeof(rl));
	memset(e + OFF_SENSE, 0, TCMU_SENSE_BUFFERSIZE);
	if (sense_len)
		memcpy(e + OFF_SENSE, sense, sense_len);

	/* Release: the response is visible before the kernel sees the new tail. */
	tcmu_abi_store_tail(r->map, ring_advance(r, tail, len));
	return 0;
}
