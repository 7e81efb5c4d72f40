/*
 * vaaid TCMU ring (src/tcmu/ring.c): the userspace side of
 * target_core_user's command ring protocol (mailbox version 2) over a mapped
 * region, whether that region is the kernel's UIO map or a memfd (vaai-sim).
 *
 * How this works: the mailbox at offset 0 gives the command ring's offset and
 * size; the kernel appends entries at cmd_head (PAD entries fill the end of
 * the ring before a wrap, TMR entries are notifications). tcmu_ring_next()
 * walks a private read pointer from the last entry it took up to cmd_head,
 * skipping PAD and TMR entries, validates each CMD entry (length, iovec
 * count, CDB offset, every iovec inside the data area) and copies out its id,
 * CDB and iovecs (translated to pointers into the map), because the entry's
 * slot may be overwritten by another command's completion before this one
 * completes. Completion may be out of order (TCMU_MAILBOX_FLAG_CAP_OOOC):
 * tcmu_ring_complete() skips PAD/TMR entries at cmd_tail, writes the response
 * (status, sense, read_len) and the completed command's id into the entry at
 * cmd_tail and advances cmd_tail by that entry's length, as the kernel's
 * tcmu_handle_completions() expects. The caller then notifies the kernel (a
 * write to the UIO fd).
 */
#ifndef VAAID_RING_H
#define VAAID_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define TCMU_RING_MAX_CDB 260
#define TCMU_RING_MAX_IOV 4096

struct tcmu_ring {
	uint8_t *map;       /* start of the mapped region (the mailbox) */
	size_t map_size;
	uint32_t cmdr_off, cmdr_size;
	uint32_t next;      /* offset in the command ring of the next entry to take */
	uint16_t mb_flags;  /* the kernel's capability flags */
};

struct tcmu_ring_cmd {
	uint16_t cmd_id;
	uint8_t cdb[TCMU_RING_MAX_CDB];
	size_t cdb_len;
	struct iovec *iov;  /* malloc'd copy (pointers into the map); free with tcmu_ring_cmd_release */
	int iovcnt;
	size_t data_len;    /* sum of iov lengths */
};

/*
 * Validate the mailbox (version 2 with TCMU_MAILBOX_FLAG_CAP_OOOC, ring inside
 * map_size) and start reading at cmd_tail. -EINVAL, -EPROTONOSUPPORT, -EPROTO.
 */
int tcmu_ring_attach(struct tcmu_ring *r, void *map, size_t map_size);

/*
 * Take the next command: 1 with *out filled, 0 when none is pending, -EBADMSG
 * for a malformed entry (the entry is still consumed and *out->cmd_id set so
 * the caller can complete it with an error; out->cdb_len is 0 then).
 * -EPROTO: the ring cannot be walked (bad cmd_head, an entry length of 0 or
 * running past cmd_head / the end of the ring, a command entry too short for a
 * response); nothing is consumed and every call fails the same way until the
 * kernel resets the ring (then tcmu_ring_resync()). -ENOMEM: nothing consumed.
 */
int tcmu_ring_next(struct tcmu_ring *r, struct tcmu_ring_cmd *out);
void tcmu_ring_cmd_release(struct tcmu_ring_cmd *c);

/*
 * Post a completion (any taken command, in any order). read_len < 0: no read
 * length reported (TCMU_UFLAG_READ_LEN not set). sense_len is capped at
 * TCMU_SENSE_BUFFERSIZE; the rest of the sense buffer is zeroed. Returns 0 or
 * -errno: -ENOSPC if no command entry is pending at cmd_tail (more completions
 * than commands), -EPROTO if the ring at cmd_tail cannot be walked.
 */
int tcmu_ring_complete(struct tcmu_ring *r, uint16_t cmd_id, uint8_t scsi_status,
		       const uint8_t *sense, size_t sense_len, long read_len);

/* Reset the read pointer to cmd_tail (after a ring reset by the kernel). */
void tcmu_ring_resync(struct tcmu_ring *r);

#endif
