/*
 * vaaid TCMU device (src/tcmu/device.c): one LUN's ring served by the reactor.
 *
 * How this works: the device waits (vreactor_poll_fd) on event_fd, which the
 * kernel makes readable when it has queued commands (the UIO fd; in vaai-sim
 * an eventfd written by the simulated kernel). It then drains the ring with
 * tcmu_ring_next(), turns each entry into a struct scsi_cmd and hands it to
 * scsi_dispatch(). Completions come back through scsi_cmd.done in any order;
 * the device writes them with tcmu_ring_complete() and, once per reactor
 * iteration at most, notifies the kernel by writing to notify_fd (the same
 * UIO fd in the daemon; the simulated kernel's doorbell in vaai-sim).
 *
 * Fd kinds are detected with fstat(): a character device is a UIO fd (the
 * event counter is read as 4 bytes, the doorbell is a 4-byte write of 1);
 * anything else is taken for an eventfd (8-byte read, 8-byte write of 1).
 */
#ifndef VAAID_TCMU_DEV_H
#define VAAID_TCMU_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include "vaaid/io.h"
#include "vaaid/scsi.h"

struct tcmu_dev;

/*
 * map/map_size: the mapped ring (mailbox at offset 0). Returns 0, -EINVAL,
 * -ENOMEM or tcmu_ring_attach()'s error. Commands already queued are taken on
 * the next reactor iteration. The fds stay the caller's.
 */
int tcmu_dev_create(struct vreactor *r, void *map, size_t map_size, int event_fd, int notify_fd,
		    struct scsi_lun *lun, struct tcmu_dev **out);
/* Commands taken from the ring and not yet completed. */
unsigned tcmu_dev_inflight(const struct tcmu_dev *d);
/*
 * A snapshot of the device's ring and wake-up state, for diagnosing a stall
 * (vaaictl status): cmd_head/cmd_tail as the map holds them now, next = our
 * read pointer (next != cmd_head: commands queued and not taken yet), and
 * counters since create. Reads the map; never changes anything.
 */
struct tcmu_dev_diag {
	uint32_t cmd_head, cmd_tail, next;
	unsigned inflight;
	bool poll_armed, kick_queued, notify_queued, broken, stopped;
	uint64_t wakeups, drains, taken, completed, doorbells;
};
void tcmu_dev_get_diag(const struct tcmu_dev *d, struct tcmu_dev_diag *out);
/* Stop taking new commands (in-flight ones still complete); cancels the poll. */
void tcmu_dev_stop(struct tcmu_dev *d);
/*
 * After tcmu_dev_stop: nothing of the device is queued on the reactor any more
 * (its poll's cancellation has completed, no kick or doorbell deferred), so
 * tcmu_dev_destroy() frees everything at once and nothing stays behind for a
 * reactor that might be destroyed before it runs again.
 */
bool tcmu_dev_quiesced(const struct tcmu_dev *d);
/*
 * Free; the caller ensures tcmu_dev_inflight() == 0 or that the engine is
 * abandoned. A pending doorbell is written now. If a poll/deferred callback
 * of the device is still queued, a small struct stays behind until the
 * reactor runs it (or leaks if the reactor is destroyed without running).
 */
void tcmu_dev_destroy(struct tcmu_dev *d);
/*
 * Crash simulation only: the reactor has already been destroyed (so no
 * callback of this device can ever run); free the device and its ops
 * without touching the reactor, the ring or the doorbell.
 */
void tcmu_dev_abandon(struct tcmu_dev *d);

#endif
