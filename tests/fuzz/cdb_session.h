/*
 * The SCSI fuzz targets' session (fuzz_cdb and the parameter-list targets
 * fuzz_xcopy_list, fuzz_mode_select, fuzz_caw_data, fuzz_write_same_block):
 * a fresh pool per input, served through the real ring and dispatch (simhost
 * on crashsim devices in memory only: no file), with
 * LUN 0 (1 MiB, 512-byte blocks) and LUN 1 (16 MiB, 4096-byte blocks, more
 * than the pool's 7 MiB of data extents: thin over-commitment, so that an input
 * can fill the pool and meet the out-of-space answer, SBC-4 4.7.3.6, 27h/07h)
 * co-visible and taking the commands, and LUN 2 (the guard, another visibility
 * group) written with a pattern first and never given a fuzzed command. The
 * pool has a soft threshold at CS_THRESHOLD_PCT of its capacity (the unit
 * attention 38h/07h when crossed).
 * cs_cmd runs one command and checks its answer as the seeded loop does
 * (answer_check) and, on LUN 0, against the data model (cdb_model.h: a GOOD
 * READ must return what it allows); cs_close checks the pool's invariants
 * (simhost_verify), the guard, LUN 0 against the model, and closes. A
 * violation aborts with a FINDING line.
 */
#ifndef VAAID_FUZZ_CDB_SESSION_H
#define VAAID_FUZZ_CDB_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "cdb_model.h"
#include "simhost.h"

#define CS_POOL_BYTES (8u << 20)
#define CS_VOL_BYTES (1u << 20)
#define CS_VOL1_BYTES (16u << 20)
#define CS_THRESHOLD_PCT 40
#define CS_GUARD_BYTES (64u << 10)
#define CS_READBACK (64u << 10) /* cs_close reads LUNs 0 and 2 back in pieces this large */
/* In an EXTENDED COPY parameter list, an identification CSCD descriptor whose
 * designator is CS_NAA_LUN(n) 16 times names LUN n: cs_cmd puts that LUN's NAA
 * (random per pool) there, so that inputs reproduce. */
#define CS_NAA_LUN(n) (0xA0 + (n))

#define CS_BATCH_MAX 16 /* commands in flight at once, as the seeded loop */

struct cs_pending { /* a command queued and not yet answered */
	int lun;
	uint8_t cdb[16];
	size_t cdb_len, out_len, in_len;
	uint8_t *out; /* NAAs put in: cs_cmd's own buffer, or a copy (cs_queue) in
		       * the scratch's slot[] of its place in the batch */
	uint64_t tag;
};

/*
 * What a target keeps across inputs (its static, given to every cs_open; made by
 * the first): the pool's crashsim images (zeros again whenever a pool closes:
 * vblk_crashsim_create_on), the model (reset by cs_open to cm_init's state), the
 * guard pattern (constant) and the read-back buffer (written before it is
 * read). So an input starts from the same state whatever ran before it, without
 * fresh memory per input (under ASan every large allocation was fresh pages);
 * the slots of cs_queue's data-out copies (written before they are read).
 */
struct cs_scratch {
	bool ready;
	struct vblk_cs_images *images;
	struct simhost_rings *rings; /* the LUNs' rings (simhost_use_rings; reset when kept) */
	struct vbuf_cache *bufs;     /* the engine's large buffers (lent to the pool's store) */
	uint8_t *guard, *back; /* back: CS_READBACK bytes */
	struct cdb_model m;
	uint8_t *slot[CS_BATCH_MAX]; /* cs_queue's copies of data-out (rewritten per command) */
	size_t slot_cap[CS_BATCH_MAX];
};

struct cdb_session {
	struct cs_scratch *x;
	struct simhost *h;
	struct cs_pending batch[CS_BATCH_MAX];
	unsigned n_batch;
	uint8_t naa[3][16];
	uint8_t *guard, *back; /* the scratch's */
	struct cdb_model *m;   /* the scratch's */
	bool verbose; /* VAAID_FUZZ_VERBOSE: every answer on stderr */
	int last_status; /* of the last answer checked */
	uint8_t *last_in; /* its data-in (a copy; NULL when none) */
	size_t last_in_len;
};

void cs_open(struct cdb_session *s, struct cs_scratch *x);
/* Run one command (out: may be changed: NAA placeholders); the result's status
 * is returned (its data-in kept in last_in until the next answer), or -1 when the simulated kernel does not queue
 * it (a CDB longer than cdb_len says, a transfer past its data area), as LIO
 * would not. */
int cs_cmd(struct cdb_session *s, int lun, const uint8_t *cdb, size_t cdb_len, uint8_t *out,
	   size_t out_len, size_t in_len);
/*
 * Concurrency: cs_queue submits a command (out copied) and returns without
 * waiting (-1: not queued, as cs_cmd); cs_flush waits for every queued command
 * and checks the answers, in submission order, against the model where no two
 * of them raced over the same blocks of LUN 0 (cm_footprint); raced blocks that
 * may have changed become unknown. At most CS_BATCH_MAX are in flight (a full
 * batch or ring is flushed first). cs_cmd = cs_queue + cs_flush; cs_close
 * flushes first.
 */
int cs_queue(struct cdb_session *s, int lun, const uint8_t *cdb, size_t cdb_len,
	     const uint8_t *out, size_t out_len, size_t in_len);
void cs_flush(struct cdb_session *s);
void cs_close(struct cdb_session *s);
_Noreturn void cs_fail(const char *what, const uint8_t *cdb, size_t cdb_len);

#endif
