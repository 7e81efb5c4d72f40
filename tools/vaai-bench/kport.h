/*
 * vaai-bench: the kernel side a flow talks to (flow.h), behind one small
 * interface, so one generator and one check run through either:
 *   - simhost's simulated kernel (kport_simhost: the real ring, dispatch,
 *     handlers and pool in this process), or
 *   - a real kernel's SCSI generic driver (kport_sg.c: /dev/sgN, the sg v3
 *     asynchronous interface; e.g. LIO + TCMU + vaaid in the guest).
 * A LUN is a small index (0, 1, ...); what it names is the port's business.
 * Completions are struct simhost_result (lun, tag, status, sense, data-in
 * malloc'd), freed with simhost_result_free whichever port made them.
 */
#ifndef VAAI_BENCH_KPORT_H
#define VAAI_BENCH_KPORT_H

#include <stddef.h>
#include <stdint.h>

#include "simhost.h"

struct kport {
	/* Queue a command; -EAGAIN when the LUN cannot take more now (reap first); *tag
	 * (when not NULL) identifies it in its completion. out must stay valid until the
	 * call returns. 0 or -errno. */
	int (*submit)(void *ctx, int lun, const uint8_t *cdb, size_t cdb_len, const void *out,
		      size_t out_len, size_t in_len, uint64_t *tag);
	/* Up to max completions of any LUN, waiting up to timeout_ms for the first:
	 * their number, 0 (none in time) or -errno. */
	int (*reap)(void *ctx, struct simhost_result *res, unsigned max, int timeout_ms);
	void *ctx;
};

/* simhost's simulated kernel (simhost_submit / simhost_reap). */
struct kport kport_simhost(struct simhost *h);

/* /dev/sgN devices, one per LUN (kport_sg.c). */
struct kport_sg;
/* Open devs[0..n) as LUNs 0..n-1, enough file descriptors on each for qd commands
 * in flight (the sg driver queues at most 16 per descriptor); timeout_s is each
 * command's (sg_io_hdr.timeout). 0 or -errno (a message on stderr). */
int kport_sg_open(const char *const *devs, unsigned n, unsigned qd, unsigned timeout_s,
		  struct kport_sg **out);
struct kport kport_sg(struct kport_sg *s);
/* Commands still in flight (submitted, not yet reaped). */
unsigned kport_sg_inflight(const struct kport_sg *s);
/* Waits up to 60 s for what is still in flight (reaped and dropped), then closes. */
void kport_sg_close(struct kport_sg *s);

#endif
