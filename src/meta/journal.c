/*
 * The journal: group commit of metadata records into a ring (format in
 * include/vaaid/meta.h).
 *
 * How this works: there are two commit buffers. Records are appended to the
 * open one. When no commit is in flight and the open buffer holds records,
 * it is closed and written (one O_DIRECT write with DSYNC); records appended
 * meanwhile go to the other buffer, which is written as soon as the first
 * write completes: every record queued during a commit is carried by the
 * next single write, with no timer. When a write completes, the owner is told
 * the new durable sequence number (free-after-durable), then the buffer's
 * waiters run.
 *
 * Space: the ring holds the commits since the last checkpoint ("used").
 * Appends are admitted only while the open commit, plus the worst wrap waste,
 * still fits, so an admitted record can always be committed; at half full the
 * owner is asked for a checkpoint. A checkpoint quiesces the journal (appends
 * paused, everything appended made durable), writes its state, then resets the
 * ring's start to the current position and resumes. A live checkpoint
 * (vjournal_release_to) resumes appends right after its freeze point and later
 * frees only the ring bytes before that point.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vaaid/endian.h"
#include "vaaid/meta.h"
#include "vaaid/util.h"
#include "vaaid/buf_cache.h"

struct vj_buf {
	uint8_t *data; /* VJ_MAX_COMMIT bytes, aligned */
	uint32_t used; /* bytes used, header included */
	uint32_t nrec;
	struct vj_waiter *waiters, **wtail;
};

struct vjournal {
	struct vblk *dev;
	struct vbuf_cache *bufs; /* dev's lent buffers (vaaid/buf_cache.h), kept for destroy */
	uint64_t off, size;
	uint8_t uuid[16];
	struct vj_buf buf[2];
	int open;          /* index of the open buffer; the other may be in flight */
	bool inflight;
	bool failed;
	bool paused;
	uint64_t open_seq; /* sequence number of the open buffer's commit */
	uint64_t wpos;     /* ring offset of the next commit */
	uint64_t used;     /* ring bytes since the last checkpoint (in-flight commit included) */
	uint64_t inflight_pos, inflight_len;
	bool ckpt_requested;
	struct vj_waiter *room_waiters, **room_tail;
	struct vj_waiter *quiesce_waiter;
	struct vio_op op;
	const struct vjournal_owner_ops *ops;
	void *owner;
	uint64_t commits, records;
	uint64_t room_waits, room_full_waits; /* vjournal_wait_room calls (diag) */
	uint64_t bytes; /* of the commits written (padded to VJ_BLOCK) */
};

/* Header layout: magic 0, uuid 8, seq 24, payload length 32, records 36, crc 40. */
enum { H_MAGIC = 0, H_UUID = 8, H_SEQ = 24, H_LEN = 32, H_NREC = 36, H_CRC = 40 };

void vj_commit_seal(uint8_t *h, const uint8_t uuid[16], uint64_t seq, uint32_t payload_len,
		    uint32_t nrec)
{
	memset(h, 0, VJ_HDR_SIZE);
	vput_le64(h + H_MAGIC, VJ_MAGIC);
	memcpy(h + H_UUID, uuid, 16);
	vput_le64(h + H_SEQ, seq);
	vput_le32(h + H_LEN, payload_len);
	vput_le32(h + H_NREC, nrec);
	vput_le32(h + H_CRC, vcrc32c(0, h, VJ_HDR_SIZE + payload_len));
}

int vj_commit_peek(const uint8_t *h, uint64_t *seq, uint32_t *payload_len, uint32_t *nrec)
{
	if (vget_le64(h + H_MAGIC) != VJ_MAGIC)
		return -ENODATA;
	*seq = vget_le64(h + H_SEQ);
	*payload_len = vget_le32(h + H_LEN);
	*nrec = vget_le32(h + H_NREC);
	return 0;
}

static void buf_reset(struct vj_buf *b)
{
	b->used = VJ_HDR_SIZE;
	b->nrec = 0;
	b->waiters = NULL;
	b->wtail = &b->waiters;
}

int vjournal_create(struct vblk *dev, const struct vsb *sb, uint64_t start, uint64_t seq,
		    uint64_t used, const struct vjournal_owner_ops *ops, void *owner,
		    struct vjournal **out)
{
	struct vjournal *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->bufs = dev->bufs;
	for (int i = 0; i < 2; i++) {
		j->buf[i].data = vbuf_get(j->bufs, VJ_MAX_COMMIT);
		if (!j->buf[i].data) {
			vjournal_destroy(j);
			return -ENOMEM;
		}
		buf_reset(&j->buf[i]);
	}
	j->dev = dev;
	j->off = sb->journal_off;
	j->size = sb->journal_size;
	memcpy(j->uuid, sb->uuid, 16);
	j->wpos = start;
	j->open_seq = seq;
	j->used = used;
	j->room_tail = &j->room_waiters;
	j->ops = ops;
	j->owner = owner;
	*out = j;
	return 0;
}

void vjournal_destroy(struct vjournal *j)
{
	if (!j)
		return;
	vbuf_put(j->bufs, j->buf[0].data, VJ_MAX_COMMIT);
	vbuf_put(j->bufs, j->buf[1].data, VJ_MAX_COMMIT);
	free(j);
}

/* Ring bytes a commit of buffer length n needs at the current position (wrap waste included). */
static uint64_t commit_cost(const struct vjournal *j, uint64_t wpos, uint32_t n)
{
	uint64_t len = vround_up(n, VJ_BLOCK);
	return (wpos + len > j->size) ? (j->size - wpos) + len : len;
}

bool vjournal_can_append(const struct vjournal *j, uint16_t len)
{
	if (j->failed || j->paused)
		return false;
	const struct vj_buf *b = &j->buf[j->open];
	uint32_t need = b->used + (uint32_t)sizeof(struct vj_rec_hdr) + len;
	if (need > VJ_MAX_COMMIT)
		return false;
	/* Worst case: the in-flight commit is already in `used`; the open one may wrap. */
	uint64_t after_inflight = j->inflight ? (j->inflight_pos + j->inflight_len) % j->size : j->wpos;
	return j->used + commit_cost(j, after_inflight, need) + VJ_BLOCK <= j->size;
}

static void start_commit(struct vjournal *j);

static void maybe_request_checkpoint(struct vjournal *j)
{
	if (!j->ckpt_requested && !j->paused && j->used > j->size / 2) {
		j->ckpt_requested = true;
		j->ops->need_checkpoint(j->owner);
	}
}

void *vjournal_append(struct vjournal *j, uint8_t type, uint16_t len)
{
	if (len > VJ_REC_MAX_PAYLOAD || !vjournal_can_append(j, len))
		return NULL;
	struct vj_buf *b = &j->buf[j->open];
	uint8_t *p = b->data + b->used;
	p[0] = type;
	p[1] = 0;
	p[2] = (uint8_t)(len & 0xff);
	p[3] = (uint8_t)(len >> 8);
	b->used += (uint32_t)sizeof(struct vj_rec_hdr) + len;
	b->nrec++;
	j->records++;
	return p + sizeof(struct vj_rec_hdr);
}

uint64_t vjournal_open_seq(const struct vjournal *j) { return j->open_seq; }

void vjournal_wait_commit(struct vjournal *j, struct vj_waiter *w)
{
	struct vj_buf *b = &j->buf[j->open];
	w->next = NULL;
	if (j->failed) {
		w->fn(w->arg, -EIO);
		return;
	}
	*b->wtail = w;
	b->wtail = &w->next;
	if (!j->inflight)
		start_commit(j);
}

void vjournal_wait_room(struct vjournal *j, struct vj_waiter *w)
{
	w->next = NULL;
	j->room_waits++;
	j->room_full_waits += !j->paused;
	*j->room_tail = w;
	j->room_tail = &w->next;
	/* Room comes back when a commit completes or a checkpoint resets the ring. */
	if (!j->inflight && j->buf[j->open].nrec)
		start_commit(j);
	maybe_request_checkpoint(j);
	if (!j->ckpt_requested && !j->paused && !j->inflight) {
		/* Nothing will wake this waiter: the ring needs a checkpoint now. */
		j->ckpt_requested = true;
		j->ops->need_checkpoint(j->owner);
	}
}

static void wake_room_waiters(struct vjournal *j)
{
	if (j->paused && !j->failed)
		return;
	struct vj_waiter *w = j->room_waiters;
	j->room_waiters = NULL;
	j->room_tail = &j->room_waiters;
	while (w) {
		struct vj_waiter *n = w->next;
		w->fn(w->arg, j->failed ? -EIO : 0);
		w = n;
	}
}

static void run_waiters(struct vj_waiter *w, int res)
{
	while (w) {
		struct vj_waiter *n = w->next;
		w->fn(w->arg, res);
		w = n;
	}
}

static void commit_done(void *arg, int res)
{
	struct vjournal *j = arg;
	struct vj_buf *b = &j->buf[!j->open];
	j->inflight = false;
	struct vj_waiter *w = b->waiters;
	uint64_t seq = j->open_seq - 1;
	buf_reset(b);
	if (res < 0 || j->failed) {
		j->failed = true;
		run_waiters(w, -EIO);
		/* Fail everything queued behind it too. */
		struct vj_buf *o = &j->buf[j->open];
		struct vj_waiter *ow = o->waiters;
		buf_reset(o);
		run_waiters(ow, -EIO);
		wake_room_waiters(j);
		if (j->quiesce_waiter) {
			struct vj_waiter *q = j->quiesce_waiter;
			j->quiesce_waiter = NULL;
			q->fn(q->arg, -EIO);
		}
		return;
	}
	j->wpos = (j->inflight_pos + j->inflight_len) % j->size;
	j->commits++;
	j->bytes += j->inflight_len;
	j->ops->durable(j->owner, seq);
	run_waiters(w, 0);
	if (j->buf[j->open].nrec)
		start_commit(j);
	else if (j->paused && j->quiesce_waiter) {
		struct vj_waiter *q = j->quiesce_waiter;
		j->quiesce_waiter = NULL;
		q->fn(q->arg, 0);
		return;
	}
	wake_room_waiters(j);
	maybe_request_checkpoint(j);
}

static void start_commit(struct vjournal *j)
{
	struct vj_buf *b = &j->buf[j->open];
	if (j->inflight || j->failed)
		return;
	if (!b->nrec) {
		/* Nothing to write: waiters of an empty commit are already durable. */
		struct vj_waiter *w = b->waiters;
		buf_reset(b);
		run_waiters(w, 0);
		return;
	}
	uint32_t len = (uint32_t)vround_up(b->used, VJ_BLOCK);
	memset(b->data + b->used, 0, len - b->used);
	vj_commit_seal(b->data, j->uuid, j->open_seq, b->used - VJ_HDR_SIZE, b->nrec);
	uint64_t pos = j->wpos;
	if (pos + len > j->size) {
		j->used += j->size - pos;
		pos = 0;
	}
	j->used += len;
	j->inflight = true;
	j->inflight_pos = pos;
	j->inflight_len = len;
	j->open_seq++;
	j->open = !j->open;
	vio_op_init(&j->op, commit_done, j);
	struct iovec iov = {.iov_base = b->data, .iov_len = len};
	int rc = vblk_writev(j->dev, &iov, 1, j->off + pos, VBLK_DSYNC | VBLK_META, &j->op);
	if (rc < 0)
		vreactor_defer(j->dev->reactor, &j->op, rc);
}

void vjournal_quiesce(struct vjournal *j, struct vj_waiter *w)
{
	j->paused = true;
	w->next = NULL;
	if (j->failed) {
		w->fn(w->arg, -EIO);
		return;
	}
	if (!j->inflight && !j->buf[j->open].nrec) {
		w->fn(w->arg, 0);
		return;
	}
	j->quiesce_waiter = w;
	if (!j->inflight)
		start_commit(j);
}

void vjournal_position(const struct vjournal *j, uint64_t *start, uint64_t *seq)
{
	*start = j->wpos;
	*seq = j->open_seq;
}

void vjournal_reset_start(struct vjournal *j)
{
	j->used = 0;
	j->ckpt_requested = false;
}

void vjournal_release_to(struct vjournal *j, uint64_t mark)
{
	/* Commits since the freeze are all after it in the ring: used >= mark. No wake
	 * here: the vjournal_resume that follows wakes the room waiters, and a waiter
	 * that asks for the next checkpoint then pauses the journal after that resume,
	 * not before it (session 25's review: woken here, such a waiter's checkpoint
	 * was unpaused by the resume and its quiesce never completed). */
	j->used = j->used >= mark ? j->used - mark : 0;
	j->ckpt_requested = false;
}

void vjournal_resume(struct vjournal *j)
{
	j->paused = false;
	wake_room_waiters(j);
}

bool vjournal_idle(const struct vjournal *j) { return !j->inflight && !j->buf[j->open].nrec; }
bool vjournal_failed(const struct vjournal *j) { return j->failed; }
uint64_t vjournal_used(const struct vjournal *j) { return j->used; }

void vjournal_get_diag(const struct vjournal *j, struct vj_diag *out)
{
	*out = (struct vj_diag){.used = j->used, .size = j->size, .inflight = j->inflight,
				.paused = j->paused, .failed = j->failed,
				.ckpt_requested = j->ckpt_requested,
				.quiesce_waiting = j->quiesce_waiter != NULL,
				.open_records = j->buf[j->open].nrec, .room_waits = j->room_waits,
				.room_full_waits = j->room_full_waits};
	for (const struct vj_waiter *w = j->room_waiters; w; w = w->next)
		out->room_waiters++;
}
uint64_t vjournal_commits(const struct vjournal *j) { return j->commits; }
uint64_t vjournal_records(const struct vjournal *j) { return j->records; }
uint64_t vjournal_bytes(const struct vjournal *j) { return j->bytes; }

/* ---- replay */

/* Read and validate the commit at ring offset pos; returns its block length or <= 0. */
static int read_commit(struct vblk *dev, const struct vsb *sb, uint64_t pos, uint64_t seq,
		       uint8_t *buf, uint32_t *payload_len, uint32_t *nrec)
{
	if (pos + VJ_BLOCK > sb->journal_size)
		return 0;
	int rc = vblk_pread_sync(dev, buf, VJ_BLOCK, sb->journal_off + pos);
	if (rc < 0)
		return rc;
	if (vget_le64(buf + H_MAGIC) != VJ_MAGIC || memcmp(buf + H_UUID, sb->uuid, 16) ||
	    vget_le64(buf + H_SEQ) != seq)
		return 0;
	uint32_t plen = vget_le32(buf + H_LEN);
	if (plen > VJ_MAX_COMMIT - VJ_HDR_SIZE)
		return 0;
	uint32_t len = (uint32_t)vround_up(VJ_HDR_SIZE + plen, VJ_BLOCK);
	if (pos + len > sb->journal_size)
		return 0;
	if (len > VJ_BLOCK) {
		rc = vblk_pread_sync(dev, buf + VJ_BLOCK, len - VJ_BLOCK,
				     sb->journal_off + pos + VJ_BLOCK);
		if (rc < 0)
			return rc;
	}
	uint32_t crc = vget_le32(buf + H_CRC);
	vput_le32(buf + H_CRC, 0);
	if (vcrc32c(0, buf, VJ_HDR_SIZE + plen) != crc)
		return 0;
	*payload_len = plen;
	*nrec = vget_le32(buf + H_NREC);
	return (int)len;
}

int vjournal_replay(struct vblk *dev, const struct vsb *sb, vj_replay_fn rec, void *arg,
		    struct vj_replay_result *res)
{
	uint8_t *buf = vbuf_get(dev->bufs, VJ_MAX_COMMIT);
	if (!buf)
		return -ENOMEM;
	memset(res, 0, sizeof(*res));
	uint64_t pos = sb->journal_start, seq = sb->journal_seq;
	int rc = 0;
	for (;;) {
		uint32_t plen = 0, nrec = 0;
		uint64_t waste = 0;
		int len = read_commit(dev, sb, pos, seq, buf, &plen, &nrec);
		if (len == 0 && pos != 0) {
			len = read_commit(dev, sb, 0, seq, buf, &plen, &nrec);
			if (len > 0) {
				waste = sb->journal_size - pos;
				pos = 0;
			}
		}
		if (len < 0) {
			rc = len;
			break;
		}
		if (len == 0)
			break;
		/* Walk the records; a malformed record inside a valid commit is corruption. */
		uint32_t off = VJ_HDR_SIZE, end = VJ_HDR_SIZE + plen, n = 0;
		while (off < end) {
			if (end - off < sizeof(struct vj_rec_hdr)) {
				rc = -EUCLEAN;
				break;
			}
			uint16_t rlen = (uint16_t)(buf[off + 2] | buf[off + 3] << 8);
			if (rlen > end - off - sizeof(struct vj_rec_hdr)) {
				rc = -EUCLEAN;
				break;
			}
			rc = rec(arg, buf[off], buf[off + 1], buf + off + sizeof(struct vj_rec_hdr), rlen);
			if (rc < 0)
				break;
			off += (uint32_t)sizeof(struct vj_rec_hdr) + rlen;
			n++;
		}
		if (rc < 0)
			break;
		if (n != nrec) {
			rc = -EUCLEAN;
			break;
		}
		res->used += waste + (uint64_t)len;
		res->commits++;
		res->records += n;
		pos = (pos + (uint64_t)len) % sb->journal_size;
		seq++;
		if (res->used >= sb->journal_size) {
			rc = -EUCLEAN;
			break;
		}
	}
	vbuf_put(dev->bufs, buf, VJ_MAX_COMMIT);
	res->end = pos;
	res->next_seq = seq;
	return rc;
}
