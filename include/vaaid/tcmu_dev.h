/*
 * vaaid TCMU device (src/tcmu/device.c): one LUN's ring served by the reactor.
 *
 * How this works: the device waits (vreactor_poll_fd) on event_fd, which the
 * kernel makes readable when it has queued commands (the UIO fd; in vaai-sim
 * an eventfd written by the simulated kernel). It then drains the ring with
 * tcmu_ring_next(), turns each entry into a struct scsi_cmd and hands it to
 * scsi_dispatch(). Completions come back through scsi_cmd.done in any order;
 * the device writes them with tcmu_ring_complete() and, once per reactor
 * iteration at most, notifies the kernel by writing 4 bytes to notify_fd
 * (the same UIO fd in the daemon; the simulated kernel's doorbell in vaai-sim).
 */
#ifndef VAAID_TCMU_DEV_H
#define VAAID_TCMU_DEV_H

#include <stddef.h>
#include "vaaid/io.h"
#include "vaaid/scsi.h"

struct tcmu_dev;

int tcmu_dev_create(struct vreactor *r, void *map, size_t map_size, int event_fd, int notify_fd,
		    struct scsi_lun *lun, struct tcmu_dev **out);
/* Commands taken from the ring and not yet completed. */
unsigned tcmu_dev_inflight(const struct tcmu_dev *d);
/* Stop taking new commands (in-flight ones still complete). */
void tcmu_dev_stop(struct tcmu_dev *d);
/* Free; the caller ensures tcmu_dev_inflight() == 0 or that the engine is abandoned. */
void tcmu_dev_destroy(struct tcmu_dev *d);

#endif
