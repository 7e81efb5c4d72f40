/*
 * vaaid simulated kernel: target_core_user's side of the TCMU ring, in
 * userspace, over a memfd (API and overview in include/vaaid/sim.h).
 *
 * How this file works.
 *
 * Layout (as tcmu_configure_device() builds it): [mailbox 128 B][command ring
 * mb.cmdr_size B][data area]. The caller's cmdr_size is the kernel's
 * "mailbox + ring" size (cmd_ring_size_mb), rounded up to 4 KiB, so the ring
 * proper is cmdr_size - 128 bytes (not a power of two, like the kernel's) and
 * the data area starts page aligned at data_off = 128 + mb.cmdr_size.
 *
 * Submission (queue_cmd_ring()): the data buffer is max(out_len, in_len)
 * bytes in 4 KiB blocks taken from a LIFO free list whose initial order is
 * 0,1,3,2, 4,5,7,6, ... so a buffer is never one contiguous run; adjacent
 * blocks are merged into one iovec exactly like new_block_to_iov() (the last
 * iovec is cut to the buffer length). Data-out is copied into the blocks
 * first; the same blocks are the data-in buffer. The entry is
 * max(offsetof(req.iov[n]), sizeof(entry)) + roundup(cdb_len, 8) bytes, the
 * CDB stored right after that base (cdb_off = 128 + head + base, an offset
 * from the map start) and cdb_len = scsi_command_size(cdb). A PAD entry fills
 * the end of the ring when the entry does not fit there. cmd_head is
 * release-stored after each entry (PAD and CMD), then irq_fd is written (the
 * UIO interrupt). Ring space is the kernel's: free = size - used - 1 where
 * used runs from the last cleaned position (not cmd_tail) to cmd_head; an
 * entry needing more than half the ring, or a buffer larger than the data
 * area, is -E2BIG. Command ids are 1..65535 (xa_alloc in the kernel; here
 * handed out cyclically so that a stale id is caught rather than reused).
 *
 * Completion (tcmu_irqcontrol() -> tcmu_handle_completions()): completions
 * are only looked at after the engine wrote the doorbell, like the kernel
 * only looks after a write to /dev/uioN. Then cmd_tail is acquire-loaded and
 * the walk goes from last_cleaned to cmd_tail: PAD -> skip; otherwise the
 * command is looked up by the hdr.cmd_id found in that slot (any command may
 * complete in any slot: out-of-order completion) and its response read from
 * the slot. The lengths walked are the ones this side wrote (kept in
 * slot_len[]), and the engine must not have changed len_op. The response:
 *  - sense: the whole 96-byte buffer when status != GOOD (sense_len 96);
 *  - data-in (in_len > 0 only, like DMA_FROM_DEVICE): with
 *    TCMU_UFLAG_READ_LEN and a non-zero rsp.read_len, read_len bytes
 *    (read_len > in_len is a protocol error here; the kernel would clamp);
 *    otherwise in_len bytes, except with CHECK CONDITION, which returns no
 *    data (kernel: data is gathered for CHECK CONDITION only when read_len is
 *    valid; read_len 0 means "not reported", as in the kernel);
 *  - UNKNOWN_OP forces CHECK CONDITION; KEEP_BUF (not offered in the
 *    mailbox) is a protocol error.
 * An unknown id, an id completed twice, cmd_tail outside [last_cleaned,
 * cmd_head] or inside an entry, or a changed len_op breaks the ring (the
 * kernel sets TCMU_DEV_BIT_BROKEN): -EPROTO now and on every later call.
 *
 * Threads: simk_* run on one thread; the engine, on another, touches only the
 * shared map and the two eventfds. No globals.
 */
#include "vaaid/sim.h"
#include "../tcmu/tcmu_abi.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SIMK_MAX_ID 0xFFFFu
/* The command table starts this long and doubles when an id reaches its end
 * (ids are handed out in order, so a LUN given few commands never pays for
 * 65,536 slots: a fresh simk per fuzz input was a 2 MiB calloc). */
#define SIMK_CMDS_FIRST 256u
#define BLK TCMU_ABI_DATA_BLK

struct simk_cmd {
	bool inflight;
	uint64_t tag;
	size_t in_len;
	uint32_t nblk;
	uint32_t *blk; /* data block indices, in buffer order */
};

struct simk {
	int memfd, irq_fd, doorbell_fd;
	uint8_t *map;
	size_t map_size;
	uint32_t ring_size;      /* mb.cmdr_size */
	uint64_t data_off;
	uint32_t nblocks;
	uint32_t *free_blk;      /* LIFO stack of the blocks freed (popped before fresh ones) */
	uint32_t free_top;
	uint32_t fresh;          /* blocks never handed out start at fresh_block(fresh) */
	uint32_t head;           /* cmd_head (this side is its only writer) */
	uint32_t last_cleaned;
	uint32_t *slot_len;      /* len_op written at ring position i*8 (0: none) */
	struct simk_cmd *cmds;   /* indexed by cmd_id; ids below n_cmds (grown on demand) */
	uint32_t n_cmds;
	uint32_t next_id;
	uint32_t top_id;         /* highest id ever handed out (destroy looks no further) */
	unsigned inflight;
	bool rung;               /* doorbell seen, completions not all walked yet */
	bool broken;
	uint32_t ring_hw;        /* ring bytes ever written: [0, ring_hw) (simk_reset zeroes them) */
	void *(*din_alloc)(void *arg, size_t len, size_t *cap); /* simk_set_din_alloc */
	void *din_arg;
};

/* Make the command table hold id (doubling; the new slots zeroed). */
static int grow_cmds(struct simk *k, uint32_t id)
{
	uint32_t n = k->n_cmds;
	while (n <= id)
		n *= 2;
	if (n > SIMK_MAX_ID + 1)
		n = SIMK_MAX_ID + 1;
	struct simk_cmd *c = realloc(k->cmds, sizeof(*c) * n);
	if (!c)
		return -ENOMEM;
	memset(c + k->n_cmds, 0, sizeof(*c) * (n - k->n_cmds));
	k->cmds = c;
	k->n_cmds = n;
	return 0;
}

static uint8_t *ring_at(const struct simk *k, uint32_t pos)
{
	return k->map + TCMU_ABI_CMDR_OFF + pos;
}

/* The mailbox as tcmu_configure_device() writes it (cmd_head = cmd_tail = 0). */
static void put_mailbox(struct simk *k)
{
	struct tcmu_mailbox mb;
	memset(&mb, 0, sizeof(mb));
	mb.version = TCMU_MAILBOX_VERSION;
	mb.flags = TCMU_MAILBOX_FLAG_CAP_OOOC | TCMU_MAILBOX_FLAG_CAP_READ_LEN;
	mb.cmdr_off = TCMU_ABI_CMDR_OFF;
	mb.cmdr_size = k->ring_size;
	memset(k->map, 0, TCMU_ABI_CMDR_OFF);
	memcpy(k->map, &mb, sizeof(mb));
}

int simk_create(size_t cmdr_size, size_t data_size, struct simk **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	uint64_t mb_cmdr = ((uint64_t)cmdr_size + 4095) & ~(uint64_t)4095;
	uint64_t data = ((uint64_t)data_size + BLK - 1) / BLK * BLK;
	if (mb_cmdr < TCMU_ABI_CMDR_OFF + 4 * TCMU_ABI_ENTRY_MIN || mb_cmdr > UINT32_MAX ||
	    data == 0 || data / BLK > UINT32_MAX)
		return -EINVAL;

	struct simk *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->memfd = k->irq_fd = k->doorbell_fd = -1;
	k->ring_size = (uint32_t)(mb_cmdr - TCMU_ABI_CMDR_OFF);
	k->data_off = mb_cmdr;
	k->nblocks = (uint32_t)(data / BLK);
	k->map_size = (size_t)(mb_cmdr + data);
	k->next_id = 1;
	int rc = -ENOMEM;

	k->free_blk = malloc(sizeof(uint32_t) * k->nblocks); /* filled as blocks are freed */
	k->slot_len = calloc(k->ring_size / TCMU_ABI_ALIGN, sizeof(uint32_t));
	k->n_cmds = SIMK_CMDS_FIRST;
	k->cmds = calloc(k->n_cmds, sizeof(*k->cmds));
	if (!k->free_blk || !k->slot_len || !k->cmds)
		goto fail;

	k->memfd = memfd_create("vaaid-simk", MFD_CLOEXEC);
	if (k->memfd < 0 || ftruncate(k->memfd, (off_t)k->map_size) < 0)
		goto fail_errno;
	k->map = mmap(NULL, k->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, k->memfd, 0);
	if (k->map == MAP_FAILED) {
		k->map = NULL;
		goto fail_errno;
	}
	k->irq_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	k->doorbell_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (k->irq_fd < 0 || k->doorbell_fd < 0)
		goto fail_errno;

	put_mailbox(k);
	*out = k;
	return 0;

fail_errno:
	rc = -errno;
fail:
	simk_destroy(k);
	return rc;
}

void simk_destroy(struct simk *k)
{
	if (!k)
		return;
	if (k->cmds)
		for (uint32_t i = 0; i <= k->top_id; i++)
			free(k->cmds[i].blk);
	if (k->map)
		munmap(k->map, k->map_size);
	if (k->memfd >= 0)
		close(k->memfd);
	if (k->irq_fd >= 0)
		close(k->irq_fd);
	if (k->doorbell_fd >= 0)
		close(k->doorbell_fd);
	free(k->cmds);
	free(k->slot_len);
	free(k->free_blk);
	free(k);
}

static void eventfd_drain(int fd)
{
	uint64_t cnt;
	ssize_t n;
	do
		n = read(fd, &cnt, sizeof(cnt));
	while (n < 0 && errno == EINTR);
}

/*
 * Back to simk_create's state on the same memfd: what a fresh one would read as
 * zeros is zeroed (the ring bytes ever written, the data blocks ever handed out:
 * fresh_block() hands out blocks below fresh rounded up to 4; the engine writes
 * only where an entry or a command's blocks are), the mailbox rewritten, the
 * command table emptied (kept as large as it grew: its size is not seen), the
 * eventfds drained. The pages stay mapped (no fault on the next use).
 */
void simk_reset(struct simk *k)
{
	for (uint32_t i = 0; i <= k->top_id && i < k->n_cmds; i++) {
		free(k->cmds[i].blk);
		k->cmds[i] = (struct simk_cmd){0};
	}
	uint64_t used_blk = ((uint64_t)k->fresh + 3) & ~(uint64_t)3;
	if (used_blk > k->nblocks)
		used_blk = k->nblocks;
	memset(k->map + k->data_off, 0, (size_t)(used_blk * BLK));
	memset(k->map + TCMU_ABI_CMDR_OFF, 0, k->ring_hw);
	memset(k->slot_len, 0, sizeof(uint32_t) * ((k->ring_hw + TCMU_ABI_ALIGN - 1) / TCMU_ABI_ALIGN));
	put_mailbox(k);
	eventfd_drain(k->irq_fd);
	eventfd_drain(k->doorbell_fd);
	k->free_top = k->fresh = 0;
	k->head = k->last_cleaned = k->ring_hw = 0;
	k->next_id = 1;
	k->top_id = 0;
	k->inflight = 0;
	k->rung = k->broken = false;
	k->din_alloc = NULL; /* simk_create's: the last user's data-in allocator is gone */
	k->din_arg = NULL;
}

void simk_set_din_alloc(struct simk *k, void *(*fn)(void *arg, size_t len, size_t *cap), void *arg)
{
	k->din_alloc = fn;
	k->din_arg = arg;
}

int simk_map_fd(const struct simk *k) { return k->memfd; }
size_t simk_map_size(const struct simk *k) { return k->map_size; }
int simk_irq_fd(const struct simk *k) { return k->irq_fd; }
int simk_doorbell_fd(const struct simk *k) { return k->doorbell_fd; }
unsigned simk_inflight(const struct simk *k) { return k->inflight; }

static void eventfd_signal(int fd)
{
	uint64_t one = 1;
	ssize_t n;
	do
		n = write(fd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
}

/* The i-th block first handed out: 0,1,3,2, 4,5,7,6, ...: runs of two, never one
 * run (as if the free list started as that stack: computed, not filled, so that a
 * ring is cheap to make). */
static uint32_t fresh_block(const struct simk *k, uint32_t i)
{
	if (i % 4 >= 2 && (i | 3) < k->nblocks)
		return (i & ~3u) + (i % 4 == 2 ? 3 : 2);
	return i;
}

static void blocks_free(struct simk *k, struct simk_cmd *c)
{
	/* Pushed back in reverse, so they pop again in the same order. */
	for (uint32_t i = c->nblk; i-- > 0;)
		k->free_blk[k->free_top++] = c->blk[i];
	free(c->blk);
	c->blk = NULL;
	c->nblk = 0;
}

/* Store a header word sequence at pos: len_op, cmd_id, kflags, uflags. */
static void put_hdr(struct simk *k, uint32_t pos, uint32_t len_op, uint16_t id)
{
	struct tcmu_cmd_entry_hdr h = {.len_op = len_op, .cmd_id = id, .kflags = 0, .uflags = 0};
	memcpy(ring_at(k, pos), &h, sizeof(h));
	k->slot_len[pos / TCMU_ABI_ALIGN] = len_op;
}

int simk_submit(struct simk *k, const uint8_t *cdb, size_t cdb_len, const void *data_out,
		size_t out_len, size_t in_len, uint64_t tag)
{
	if (!k || !cdb || cdb_len == 0 || (out_len && !data_out))
		return -EINVAL;
	if (k->broken)
		return -EPROTO;
	/* The kernel copies scsi_command_size(cdb) bytes. */
	if (cdb[0] == 0x7F && cdb_len < 8)
		return -EINVAL;
	size_t need_cdb = tcmu_abi_cdb_len(cdb);
	if (need_cdb > cdb_len || need_cdb > TCMU_ABI_MAX_CDB)
		return -EINVAL;

	const size_t buf_len = out_len > in_len ? out_len : in_len;
	const uint64_t nblk64 = ((uint64_t)buf_len + BLK - 1) / BLK;
	if (buf_len > UINT32_MAX || nblk64 > k->nblocks)
		return -E2BIG;
	const uint32_t nblk = (uint32_t)nblk64;
	/* Worst case (one iovec per block) must fit in half the ring. */
	if (tcmu_abi_entry_size(nblk, need_cdb) > k->ring_size / 2)
		return -E2BIG;
	if (nblk > k->free_top + (k->nblocks - k->fresh))
		return -EAGAIN;

	/* Ring space: the entry, plus the PAD before it when it does not fit
	 * before the end of the ring (is_ring_space_avail()). Checked with the
	 * worst-case size first so nothing has to be undone. */
	const uint64_t worst = tcmu_abi_entry_size(nblk, need_cdb);
	const uint32_t used = tcmu_abi_dist(k->last_cleaned, k->head, k->ring_size);
	const uint32_t space = k->ring_size - used - 1;
	const uint32_t to_end = k->ring_size - k->head;
	const uint64_t needed = worst + (to_end < worst ? to_end : 0);
	if (space < needed)
		return -EAGAIN;

	/* Command id: cyclic over 1..65535. */
	uint32_t id = k->next_id;
	for (uint32_t tries = 0; id < k->n_cmds && k->cmds[id].inflight; tries++) {
		if (tries == SIMK_MAX_ID)
			return -EAGAIN;
		id = id == SIMK_MAX_ID ? 1 : id + 1;
	}
	if (id >= k->n_cmds && grow_cmds(k, id) < 0)
		return -ENOMEM;
	k->next_id = id == SIMK_MAX_ID ? 1 : id + 1;
	if (id > k->top_id)
		k->top_id = id;

	struct simk_cmd *c = &k->cmds[id];
	c->blk = NULL;
	if (nblk) {
		c->blk = malloc(sizeof(uint32_t) * nblk);
		if (!c->blk)
			return -ENOMEM;
	}
	uint32_t iov_cnt = 0;
	for (uint32_t i = 0; i < nblk; i++) {
		c->blk[i] = k->free_top ? k->free_blk[--k->free_top] : fresh_block(k, k->fresh++);
		if (i == 0 || c->blk[i] != c->blk[i - 1] + 1)
			iov_cnt++;
	}
	c->nblk = nblk;
	c->inflight = true;
	c->tag = tag;
	c->in_len = in_len;

	const uint64_t base = TCMU_ABI_IOV_OFF + (uint64_t)iov_cnt * sizeof(struct tcmu_abi_iov) <
					      TCMU_ABI_ENTRY_MIN
				      ? TCMU_ABI_ENTRY_MIN
				      : TCMU_ABI_IOV_OFF + (uint64_t)iov_cnt * sizeof(struct tcmu_abi_iov);
	const uint32_t esz = (uint32_t)tcmu_abi_entry_size(iov_cnt, need_cdb);

	/* PAD to the end of the ring (ring_insert_padding()). */
	if (k->ring_size - k->head < esz) {
		uint32_t pad = k->ring_size - k->head;
		put_hdr(k, k->head, pad | TCMU_OP_PAD, 0);
		k->ring_hw = k->ring_size;
		k->head = 0;
		tcmu_abi_store_head(k->map, k->head);
	}

	/* Data-out into the blocks; the iovecs (new_block_to_iov()). */
	uint8_t *e = ring_at(k, k->head);
	memset(e, 0, esz);
	struct tcmu_abi_iov v = {0, 0};
	uint32_t vi = 0;
	size_t left = buf_len;
	for (uint32_t i = 0; i < nblk; i++) {
		size_t chunk = left < BLK ? left : BLK;
		uint64_t off = k->data_off + (uint64_t)c->blk[i] * BLK;
		size_t done = buf_len - left;
		if (done < out_len) {
			size_t n = out_len - done < chunk ? out_len - done : chunk;
			memcpy(k->map + off, (const uint8_t *)data_out + done, n);
		}
		if (i > 0 && c->blk[i] != c->blk[i - 1] + 1) {
			memcpy(e + TCMU_ABI_IOV_OFF + (size_t)vi++ * sizeof(v), &v, sizeof(v));
			v.len = 0;
		}
		if (v.len == 0)
			v.base = off;
		v.len += chunk;
		left -= chunk;
	}
	if (nblk)
		memcpy(e + TCMU_ABI_IOV_OFF + (size_t)vi * sizeof(v), &v, sizeof(v));

	struct tcmu_cmd_entry ent;
	memcpy(&ent, e, sizeof(ent));
	ent.req.iov_cnt = iov_cnt;
	ent.req.iov_bidi_cnt = 0;
	ent.req.iov_dif_cnt = 0;
	ent.req.cdb_off = TCMU_ABI_CMDR_OFF + k->head + base;
	memcpy(e, &ent, TCMU_ABI_IOV_OFF); /* req header only: the iovecs are in place */
	memcpy(k->map + ent.req.cdb_off, cdb, need_cdb);
	put_hdr(k, k->head, esz | TCMU_OP_CMD, (uint16_t)id);

	if (k->head + esz > k->ring_hw)
		k->ring_hw = k->head + esz;
	k->head = (k->head + esz) % k->ring_size;
	tcmu_abi_store_head(k->map, k->head); /* release: the entry is complete */
	k->inflight++;
	eventfd_signal(k->irq_fd);
	return 0;
}

/* Gather len bytes of a command's buffer into dst. */
static void gather(const struct simk *k, const struct simk_cmd *c, uint8_t *dst, size_t len)
{
	for (uint32_t i = 0; i < c->nblk && len; i++) {
		size_t n = len < BLK ? len : BLK;
		memcpy(dst, k->map + k->data_off + (uint64_t)c->blk[i] * BLK, n);
		dst += n;
		len -= n;
	}
}

/*
 * Walk last_cleaned -> cmd_tail (tcmu_handle_completions()). Returns the
 * number of results, or -errno when nothing was delivered. *more: stopped
 * because res[] is full.
 */
static int walk_completions(struct simk *k, struct simk_result *res, unsigned max, bool *more)
{
	const uint32_t tail = tcmu_abi_load_tail(k->map); /* acquire: the responses */
	unsigned n = 0;
	int err = 0;

	*more = false;
	if (tail >= k->ring_size || tail % TCMU_ABI_ALIGN ||
	    tcmu_abi_dist(k->last_cleaned, tail, k->ring_size) >
		    tcmu_abi_dist(k->last_cleaned, k->head, k->ring_size)) {
		err = -EPROTO;
		goto out;
	}
	while (k->last_cleaned != tail) {
		const uint32_t pos = k->last_cleaned;
		const uint32_t rec = k->slot_len[pos / TCMU_ABI_ALIGN];
		const uint32_t len = tcmu_hdr_get_len(rec);
		struct tcmu_cmd_entry_hdr hdr;

		if (!rec || tcmu_abi_dist(pos, tail, k->ring_size) < len) {
			err = -EPROTO; /* cmd_tail inside an entry */
			goto out;
		}
		tcmu_abi_copy_in(&hdr, ring_at(k, pos), sizeof(hdr));
		if (hdr.len_op != rec) {
			err = -EPROTO; /* the engine rewrote len_op */
			goto out;
		}
		if (tcmu_hdr_get_op(rec) == TCMU_OP_PAD) {
			k->slot_len[pos / TCMU_ABI_ALIGN] = 0;
			k->last_cleaned = (pos + len) % k->ring_size;
			continue;
		}
		if (n == max) {
			*more = true;
			break;
		}

		struct tcmu_cmd_entry ent;
		tcmu_abi_copy_in(&ent, ring_at(k, pos), sizeof(ent));
		struct simk_cmd *c = ent.hdr.cmd_id < k->n_cmds ? &k->cmds[ent.hdr.cmd_id] : NULL;
		if (ent.hdr.cmd_id == 0 || !c || !c->inflight || (ent.hdr.uflags & TCMU_UFLAG_KEEP_BUF)) {
			err = -EPROTO; /* unknown id, second completion, KEEP_BUF */
			goto out;
		}
		uint8_t status = ent.rsp.scsi_status;
		bool rl_flag = ent.hdr.uflags & TCMU_UFLAG_READ_LEN;
		if (ent.hdr.uflags & TCMU_UFLAG_UNKNOWN_OP)
			status = 0x02; /* CHECK CONDITION, no data */
		size_t din = 0;
		if (c->in_len && !(ent.hdr.uflags & TCMU_UFLAG_UNKNOWN_OP)) {
			if (rl_flag && ent.rsp.read_len > c->in_len) {
				err = -EPROTO; /* read_len beyond the data-in buffer */
				goto out;
			}
			bool rl_valid = rl_flag && ent.rsp.read_len != 0;
			if (rl_valid)
				din = ent.rsp.read_len;
			else if (status != 0x02)
				din = c->in_len;
		}
		struct simk_result *r = &res[n];
		r->data_in = NULL;
		r->data_in_cap = 0;
		if (din) {
			r->data_in_cap = din;
			r->data_in = k->din_alloc ? k->din_alloc(k->din_arg, din, &r->data_in_cap)
						  : malloc(din);
			if (!r->data_in) {
				err = -ENOMEM; /* not consumed: walked again next call */
				*more = true;
				goto out;
			}
			gather(k, c, r->data_in, din);
		}
		r->data_in_len = din;
		r->tag = c->tag;
		r->status = status;
		if (status != 0) {
			memcpy(r->sense, ent.rsp.sense_buffer, sizeof(r->sense));
			r->sense_len = sizeof(r->sense);
		} else {
			memset(r->sense, 0, sizeof(r->sense));
			r->sense_len = 0;
		}
		n++;

		blocks_free(k, c);
		c->inflight = false;
		k->inflight--;
		k->slot_len[pos / TCMU_ABI_ALIGN] = 0;
		k->last_cleaned = (pos + len) % k->ring_size;
	}
out:
	if (err == -EPROTO)
		k->broken = true;
	if (err && n == 0)
		return err;
	return (int)n; /* an error after some results: reported by the next call */
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int simk_reap(struct simk *k, struct simk_result *res, unsigned max, int timeout_ms)
{
	if (!k || (!res && max))
		return -EINVAL;
	const int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
	for (;;) {
		if (k->broken)
			return -EPROTO;
		uint64_t cnt;
		if (read(k->doorbell_fd, &cnt, sizeof(cnt)) == (ssize_t)sizeof(cnt) && cnt)
			k->rung = true;
		if (k->rung && max) {
			bool more;
			int n = walk_completions(k, res, max, &more);
			if (n >= 0 && !more && !k->broken)
				k->rung = false;
			if (n != 0)
				return n;
		}
		if (timeout_ms == 0)
			return 0;
		int wait = -1;
		if (timeout_ms > 0) {
			int64_t left = deadline - now_ms();
			if (left <= 0)
				return 0;
			wait = (int)left;
		}
		struct pollfd p = {.fd = k->doorbell_fd, .events = POLLIN};
		int rc = poll(&p, 1, wait);
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
}
