/*
 * vaaid metadata layer (src/meta): superblock, journal, on-disk layout.
 *
 * On-disk layout of a pool (all offsets in bytes, little endian; see
 * docs/design.md):
 *   0        superblock copy 0 (4 KiB)
 *   4096     superblock copy 1 (4 KiB)
 *   8192     checkpoint area 0 (ckpt_size bytes)
 *            checkpoint area 1
 *            journal ring (journal_size bytes)
 *   data_off data extents (aligned to the extent size), n_extents of them
 * Superblock writes alternate between the two copies (generation % 2); the
 * valid copy with the highest generation wins. A checkpoint is written to
 * the area the current superblock does not point to, made durable, then a
 * superblock naming it (and the journal position where replay starts) is
 * written with DSYNC.
 *
 * Journal: a ring of commits. A commit is a whole number of 4 KiB blocks:
 * a 64-byte header {magic, pool uuid, seq, payload length, record count,
 * crc32c} followed by records. Commits carry consecutive sequence numbers; a
 * commit that does not fit before the end of the ring is written at offset 0
 * instead. Replay starts at the superblock's (offset, seq), accepts a header
 * only if magic, uuid, seq and crc match, tries offset 0 when the header at
 * the expected place does not match, and stops at the first commit that does
 * not match at either place.
 */
#ifndef VAAID_META_H
#define VAAID_META_H

#include <stdbool.h>
#include <stdint.h>
#include "vaaid/io.h"

#define VSB_MAGIC 0x314C505F44494141ull /* "AAID_PL1" little endian: 'A','A','I','D','_','P','L','1' */
#define VSB_VERSION 1u
#define VSB_SIZE 4096u
/* Feature flags; an unknown incompat flag refuses the open. */
/* The journal ring is not in the store but in a journal file of its own (a
 * "journal store"): journal_off/journal_size address that store, which starts
 * with a VJF header block (below). Used for pools in regular files: a DSYNC
 * journal write into the data file would also commit the file system's
 * pending block conversions of that file (docs/design.md, rule 12). */
#define VSB_INCOMPAT_JOURNAL_FILE 0x1u
#define VSB_INCOMPAT_KNOWN VSB_INCOMPAT_JOURNAL_FILE
#define VSB_RO_COMPAT_KNOWN 0u

struct vsb {
	uint32_t version;
	uint32_t compat, incompat, ro_compat;
	uint8_t uuid[16];
	uint64_t generation;
	uint64_t dev_size;
	uint32_t extent_size;
	uint32_t granule;
	uint64_t ckpt_off[2];
	uint64_t ckpt_size;
	uint64_t journal_off, journal_size;
	uint64_t data_off, n_extents;
	/* state */
	uint32_t ckpt_active;      /* 0 or 1; meaningful when ckpt_len > 0 */
	uint64_t ckpt_seq;         /* checkpoint number */
	uint64_t ckpt_len;         /* bytes of the checkpoint blob */
	uint32_t ckpt_crc;
	uint64_t journal_start;    /* offset in the journal ring where replay begins */
	uint64_t journal_seq;      /* sequence number of the first commit to replay */
};

/* Encode to / decode from a 4 KiB block (decode checks magic, version, crc, sanity). */
void vsb_encode(const struct vsb *sb, uint8_t *block);
int vsb_decode(const uint8_t *block, struct vsb *sb);
/* Recompute the crc of a 4 KiB header block (a superblock copy or the journal
 * store header) in place, whatever its other fields hold: the one rule
 * vsb_encode and the journal store header use, exported for the fuzz targets
 * (tests/fuzz), which damage fields and must get past the checksum. */
void vsb_seal(uint8_t *block);
/* Read both copies, return the newest valid one (-EUCLEAN if none). which: copy index. */
int vsb_read(struct vblk *dev, struct vsb *sb, int *which);
/* Bump generation and write the copy (generation % 2) with DSYNC (synchronous). */
int vsb_write(struct vblk *dev, struct vsb *sb);
/* The same, asynchronous: buf is a VSB_SIZE aligned buffer owned by the caller until op runs. */
int vsb_submit(struct vblk *dev, struct vsb *sb, uint8_t *buf, struct vio_op *op);

/*
 * Journal store header (VSB_INCOMPAT_JOURNAL_FILE): the first 4 KiB block of
 * the journal store, {magic "AAIDJFIL", version, pool uuid, journal_off,
 * journal_size, crc32c of the block with the crc field zero}. Written once at
 * format; an open checks it against the superblock so that a journal of
 * another pool (or none) is refused instead of replaying nothing.
 */
#define VJF_MAGIC 0x4C49464A44494141ull /* "AAIDJFIL" */
#define VJF_HDR_SIZE 4096u
/* Write the header for sb (synchronous, DSYNC). */
int vjf_header_write(struct vblk *jdev, const struct vsb *sb);
/* 0 if jdev holds the journal store of the pool sb describes, large enough;
 * -ENODATA no header, -EBADMSG damaged, -EXDEV another pool's, -EUCLEAN geometry. */
int vjf_header_check(struct vblk *jdev, const struct vsb *sb);

/* ---- journal */
#define VJ_MAGIC 0x4C4E524A44494141ull /* "AAIDJRNL" */
#define VJ_HDR_SIZE 64u
#define VJ_BLOCK 4096u
#define VJ_MAX_COMMIT (256u * 1024)

/* A record: 4-byte header {type, flags, length of payload} + payload. */
struct vj_rec_hdr {
	uint8_t type;
	uint8_t flags;
	uint16_t len;
};
/* Metadata records are small; a pool DATA record (a small write's bytes) is up to 32 KiB + 16. */
#define VJ_REC_MAX_PAYLOAD (40u * 1024)

struct vjournal;
typedef void (*vj_done_fn)(void *arg, int res);

/* Waiter: storage owned by the caller until fn runs. */
struct vj_waiter {
	vj_done_fn fn;
	void *arg;
	struct vj_waiter *next;
};

/*
 * Callbacks from the journal to its owner (the pool):
 *  durable(owner, seq): every commit up to seq is durable (free-after-durable).
 *  need_checkpoint(owner): the journal is past its high-water mark.
 */
struct vjournal_owner_ops {
	void (*durable)(void *owner, uint64_t seq);
	void (*need_checkpoint)(void *owner);
};

/*
 * start/seq: where the next commit goes and its sequence number; used: bytes
 * of the ring holding live commits since the last checkpoint (from replay).
 */
int vjournal_create(struct vblk *dev, const struct vsb *sb, uint64_t start, uint64_t seq,
		    uint64_t used, const struct vjournal_owner_ops *ops, void *owner,
		    struct vjournal **out);
void vjournal_destroy(struct vjournal *j);

/*
 * Reserve room for a record in the open commit and return a pointer to its
 * payload (len bytes), or NULL when the open commit is full (the caller then
 * waits with vjournal_wait_room). Appending is not allowed while appends are
 * paused (vjournal_paused()).
 */
void *vjournal_append(struct vjournal *j, uint8_t type, uint16_t len);
/* The sequence number of the commit the next append goes into. */
uint64_t vjournal_open_seq(const struct vjournal *j);
/* Run w->fn when the open commit (with everything appended so far) is durable. */
void vjournal_wait_commit(struct vjournal *j, struct vj_waiter *w);
/* Run w->fn when appends are possible again (room in the open commit, not paused). */
void vjournal_wait_room(struct vjournal *j, struct vj_waiter *w);
bool vjournal_can_append(const struct vjournal *j, uint16_t len);

/*
 * Checkpoint coordination: vjournal_quiesce pauses appends, commits what is
 * open, and runs w->fn when nothing is in flight (every appended record is
 * durable). vjournal_reset_start then declares that a checkpoint covers
 * everything up to now: the ring space is free again. vjournal_resume lets
 * appends continue (waking vjournal_wait_room waiters).
 */
void vjournal_quiesce(struct vjournal *j, struct vj_waiter *w);
void vjournal_position(const struct vjournal *j, uint64_t *start, uint64_t *seq);
void vjournal_reset_start(struct vjournal *j);
/*
 * The live checkpoint (docs/snapshots.md section 8, step 3): it notes the
 * position and vjournal_used() while quiesced (the freeze point), resumes
 * appends at once, and once its superblock (naming that position as the
 * replay start) is durable, frees the ring bytes before it: `mark` is what
 * vjournal_used() returned at the freeze. Wakes nobody: the caller's
 * vjournal_resume, right after, wakes the vjournal_wait_room waiters.
 */
void vjournal_release_to(struct vjournal *j, uint64_t mark);
void vjournal_resume(struct vjournal *j);
bool vjournal_idle(const struct vjournal *j);
/* Bytes of the ring in use since the last checkpoint, and the ring size. */
uint64_t vjournal_used(const struct vjournal *j);
/* State for diagnosing a stall (vaaictl status): who waits for what. */
struct vj_diag {
	uint64_t used, size;
	bool inflight, paused, failed, ckpt_requested, quiesce_waiting;
	unsigned room_waiters, open_records;
	uint64_t room_waits;      /* appends that waited for the journal since open */
	uint64_t room_full_waits; /* of them, for ring room (not paused) */
};
void vjournal_get_diag(const struct vjournal *j, struct vj_diag *out);
uint64_t vjournal_commits(const struct vjournal *j);
uint64_t vjournal_records(const struct vjournal *j);
uint64_t vjournal_bytes(const struct vjournal *j); /* of the commits written */

/*
 * Replay (synchronous, control path): read commits from (start, seq), call
 * rec(arg, type, flags, payload, len) for each record; stops at the first
 * commit that does not match. *end and *next_seq give where to continue
 * writing. rec returns 0 or -errno (an error stops replay and is returned).
 */
/*
 * The commit header rule, shared by the journal's writer and the fuzz targets
 * (tests/fuzz): vj_commit_seal writes the header of the commit at c (its
 * VJ_HDR_SIZE header followed by payload_len bytes of records) and its crc
 * over both. vj_commit_peek reads a header back: 0 when the magic matches
 * (nothing else is checked), -ENODATA otherwise.
 */
void vj_commit_seal(uint8_t *c, const uint8_t uuid[16], uint64_t seq, uint32_t payload_len,
		    uint32_t nrec);
int vj_commit_peek(const uint8_t *c, uint64_t *seq, uint32_t *payload_len, uint32_t *nrec);
typedef int (*vj_replay_fn)(void *arg, uint8_t type, uint8_t flags, const uint8_t *payload,
			    uint16_t len);
struct vj_replay_result {
	uint64_t end;       /* ring offset where the next commit goes */
	uint64_t next_seq;  /* its sequence number */
	uint64_t used;      /* ring bytes holding the replayed commits (with wrap waste) */
	uint64_t commits, records;
};
int vjournal_replay(struct vblk *dev, const struct vsb *sb, vj_replay_fn rec, void *arg,
		    struct vj_replay_result *res);
/* A journal failed (write error): every later append fails. */
bool vjournal_failed(const struct vjournal *j);

#endif
