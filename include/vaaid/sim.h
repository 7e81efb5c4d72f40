/*
 * vaaid simulated kernel (src/sim/kernel.c): the kernel's side of the TCMU
 * protocol in userspace, for vaai-sim and the tests.
 *
 * How this works: a memfd holds the exact layout target_core_user.h defines:
 * struct tcmu_mailbox at 0 (version 2, flags OOOC|READ_LEN), the command ring
 * at cmdr_off (cmdr_size bytes) and then the data area, managed in 4 KiB
 * blocks like the kernel's. simk_submit() allocates data blocks (scattered,
 * so iovecs are not one contiguous run), copies data-out in, writes a CMD entry
 * at cmd_head (a PAD entry first when the entry would not fit before the end
 * of the ring), advances cmd_head and makes irq_fd readable (like the UIO
 * interrupt). The engine side maps the same memfd, serves the ring and writes
 * doorbell_fd (like a write to /dev/uioN). simk_reap() waits for the
 * doorbell, walks the entries from its last cleaned position to cmd_tail
 * exactly as tcmu_handle_completions() does, looks the command up by cmd_id,
 * copies its data-in and sense out and frees its ring space and data blocks.
 */
#ifndef VAAID_SIM_H
#define VAAID_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct simk;

struct simk_result {
	uint64_t tag;          /* the caller's tag from simk_submit */
	uint8_t status;
	uint8_t sense[96];
	size_t sense_len;      /* 0 when status is GOOD; else the whole buffer (96) */
	uint8_t *data_in;      /* malloc'd, data_in_len bytes (caller frees) */
	size_t data_in_len;    /* read_len when reported, else the data-in buffer size */
	size_t data_in_cap;    /* data_in's size (>= data_in_len: simk_set_din_alloc) */
};

/*
 * cmdr_size and data_size in bytes (defaults used by vaai-sim: 1 MiB, 64 MiB).
 * cmdr_size is the mailbox + command ring, like the kernel's
 * cmd_ring_size_mb: rounded up to 4 KiB, the mailbox's cmdr_size is that
 * minus 128 and the data area starts right after it (page aligned). data_size
 * is rounded up to 4 KiB blocks.
 */
int simk_create(size_t cmdr_size, size_t data_size, struct simk **out);
void simk_destroy(struct simk *k);
/*
 * Make k what simk_create made, on the same memfd and mappings (a caller that
 * keeps rings across uses: no fresh pages): commands in flight are forgotten,
 * every byte the ring's users wrote is zero again, the eventfds drained. The
 * engine side must be gone (its device destroyed) first.
 */
void simk_reset(struct simk *k);
/*
 * Where simk_reap's data-in buffers come from: fn(arg, len, &cap) returns a
 * malloc'd buffer of cap >= len bytes (cap preset to len) or NULL; default malloc.
 * The caller still frees it with free() (or recycles it: data_in_cap).
 */
void simk_set_din_alloc(struct simk *k, void *(*fn)(void *arg, size_t len, size_t *cap), void *arg);
int simk_map_fd(const struct simk *k);    /* the memfd to mmap (whole size) */
size_t simk_map_size(const struct simk *k);
int simk_irq_fd(const struct simk *k);    /* engine waits on it (readable = commands queued) */
int simk_doorbell_fd(const struct simk *k); /* engine writes it after completions */

/*
 * Queue one command. data_out/out_len: bytes sent to the target (NULL/0 for
 * none); in_len: size of the data-in buffer (with both, one buffer of the
 * larger size, data-out copied in first). cdb_len must be at least the
 * kernel's scsi_command_size(cdb), which is what gets queued. Returns 0,
 * -EAGAIN when the ring, the data area or the 65535 command ids have no room
 * now (reap first), -E2BIG when it can never fit, -EINVAL, -ENOMEM, or
 * -EPROTO once the engine has broken the ring.
 */
int simk_submit(struct simk *k, const uint8_t *cdb, size_t cdb_len, const void *data_out,
		size_t out_len, size_t in_len, uint64_t tag);
/* Commands submitted and not yet reaped. */
unsigned simk_inflight(const struct simk *k);
/*
 * Collect completed commands: waits up to timeout_ms (-1 forever) for the
 * doorbell when none is ready; fills up to max results. Like the kernel,
 * completions are only looked at after a doorbell write (a ring whose
 * cmd_tail moved without one stays unreaped). Returns the count, 0 on
 * timeout, -errno on a protocol violation by the engine (unknown cmd_id,
 * second completion, bad cmd_tail, changed entry length, read_len beyond the
 * data-in buffer): -EPROTO, which the caller reports; the ring then stays
 * broken (results delivered before the violation are returned first).
 */
int simk_reap(struct simk *k, struct simk_result *res, unsigned max, int timeout_ms);

#endif
