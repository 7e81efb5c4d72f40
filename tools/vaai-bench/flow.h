/*
 * vaai-bench: the kernel side of the engine benchmarks (vaai.c, mixed.c).
 *
 * A flow keeps up to qd commands queued on one LUN of a kernel port (kport.h:
 * simhost's ring, or /dev/sgN),
 * asks its producer (next) for each new command and hands every completion to
 * its consumer (done). flows_run() drives several flows at once, on the same
 * or different LUNs, until each has nothing more to send (or its deadline has
 * passed) and nothing in flight. Also: one command waited for (cmd_sync), and
 * what a LUN advertises, read through its ring as an initiator learns it.
 */
#ifndef VAAI_BENCH_FLOW_H
#define VAAI_BENCH_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kport.h"
#include "simhost.h"

#define BENCH_MAX_BLOCK 4096u /* the largest logical block the benchmarks handle */

struct vcmd {
	uint8_t cdb[16];
	uint8_t cdb_len;
	const void *out; /* must stay valid until next() is called again */
	size_t out_len, in_len;
	uint64_t user;   /* the producer's note, handed back to done() */
	/* flows_run's */
	uint64_t tag;
	double t0;
	bool busy;
};

struct flow {
	int lun;
	unsigned qd;
	double deadline; /* no new command after this time (0: none) */
	/* 1: *c filled; 0: nothing to send now (the flow ends once nothing is in flight); <0 error */
	int (*next)(void *ctx, struct vcmd *c);
	/* one completion, lat = seconds from submission to reap; <0 stops every flow */
	int (*done)(void *ctx, const struct vcmd *c, const struct simk_result *r, double lat);
	void *ctx;
	/* results */
	uint64_t completed;
	double t_first, t_last; /* first submission, last completion */
	/* flows_run's */
	struct vcmd *slot, pend;
	bool have_pend, producing, started;
	unsigned inflight;
};

/* Run n flows at once (see above); 0 or the first error (-errno, or a done()'s < 0). */
int kflows_run(const struct kport *k, struct flow *f, unsigned n);
int flows_run(struct simhost *h, struct flow *f, unsigned n); /* through simhost */
static inline int flow_run(struct simhost *h, struct flow *f) { return flows_run(h, f, 1); }

/* status 0x.. sense key asc/ascq of an answer, on stderr, after "vaai-bench: what: ". */
void print_sense(const char *what, const struct simk_result *r);

/* One command, waited for: 0 (GOOD, data-in copied to in), the SCSI status (> 0), or -errno. */
int kcmd_sync(const struct kport *k, int lun, const uint8_t *cdb, size_t cdb_len, const void *out,
	      size_t out_len, void *in, size_t in_len);
int cmd_sync(struct simhost *h, int lun, const uint8_t *cdb, size_t cdb_len, void *in,
	     size_t in_len); /* through simhost, no data-out */

/* What the LUN advertises (through the ring, as an initiator learns it). */
struct lun_limits {
	uint32_t block;           /* READ CAPACITY (16) LOGICAL BLOCK LENGTH IN BYTES */
	uint64_t nblocks;         /* RETURNED LOGICAL BLOCK ADDRESS + 1 */
	uint64_t max_ws;          /* VPD B0 MAXIMUM WRITE SAME LENGTH (0: no limit reported) */
	uint32_t max_unmap_lba;   /* VPD B0 MAXIMUM UNMAP LBA COUNT */
	uint32_t max_unmap_desc;  /* VPD B0 MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT */
	uint8_t max_caw;          /* VPD B0 MAXIMUM COMPARE AND WRITE LENGTH */
};
/* INQUIRY VPD B0h and READ CAPACITY (16): two commands, each waited for. */
int klun_limits(const struct kport *k, int lun, struct lun_limits *l);
int lun_limits(struct simhost *h, int lun, struct lun_limits *l); /* through simhost */

#endif
