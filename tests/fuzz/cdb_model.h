/*
 * The data model of fuzz_cdb's fuzzed LUN (issue 24): what each block of a
 * 512-byte-block volume must read after the commands that were answered, so
 * that a GOOD write that stored wrong bytes (or a refused one that stored any)
 * is caught.
 *
 * How this works: each block is KNOWN (it must read the model's bytes),
 * ZERO_OR_KNOWN (an UNMAP covered it: UNMAP is advisory, SBC-4 4.7.3.4, so it
 * reads the model's bytes or zeros) or UNKNOWN (a command whose effect the
 * model does not follow ran: EXTENDED COPY into the LUN, an error after part
 * of a write, an opcode it does not know). The model is an oracle written from
 * SBC-4, not from vaaid's decoder: it decodes LBA and NUMBER OF LOGICAL BLOCKS
 * of the write commands itself. A command refused with ILLEGAL REQUEST (or
 * TASK SET FULL, or a MISCOMPARE of COMPARE AND WRITE) changed nothing.
 */
#ifndef VAAID_FUZZ_CDB_MODEL_H
#define VAAID_FUZZ_CDB_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vaaid/sim.h"

#define CM_BS 512u

enum cm_state { CM_KNOWN, CM_ZERO_OR_KNOWN, CM_UNKNOWN };

struct cdb_model {
	uint64_t nblk;
	uint8_t *data;  /* nblk blocks */
	uint8_t *state; /* enum cm_state per block */
};

int cm_init(struct cdb_model *m, uint64_t nblk); /* all zeros, KNOWN */
void cm_reset(struct cdb_model *m); /* back to cm_init's state */
void cm_free(struct cdb_model *m);
/* A command to the modelled LUN was answered k: follow its effect. */
void cm_apply(struct cdb_model *m, const uint8_t *cdb, const uint8_t *out, size_t out_len,
	      const struct simk_result *k);
/*
 * A GOOD EXTENDED COPY(LID1) (SPC-4 6.4), received on any LUN, whose list is
 * list (len bytes, the NAAs in it), the modelled LUN's NAA naa0 and the other
 * LUNs' in others (n_others): block to block segments (02h) are followed in
 * order: a segment from the modelled LUN to itself copies the model's blocks
 * (the destination unknown where it overlaps its source), one from another LUN
 * into it makes the destination unknown, one between other LUNs changes
 * nothing. Anything else (another segment type, a CSCD that is not an
 * identification descriptor naming one of the LUNs, a list the model cannot
 * walk) makes the whole LUN unknown, as cm_apply does.
 */
void cm_xcopy(struct cdb_model *m, const uint8_t *cdb, const uint8_t *list, size_t len,
	      const uint8_t naa0[16], const uint8_t (*others)[16], unsigned n_others);
/*
 * A COMPARE AND WRITE to the modelled LUN answered k, against the model before
 * it (SBC-4 5.3): NULL, or why the answer is wrong: GOOD although a block
 * differs from the verify data, MISCOMPARE although every block is known and
 * equal to it, or a MISCOMPARE whose INFORMATION is not the offset of the first
 * differing byte. Blocks the model does not know decide nothing.
 */
const char *cm_caw_check(const struct cdb_model *m, const uint8_t *cdb, const uint8_t *out,
			 size_t out_len, const struct simk_result *k);
/*
 * Data read from the LUN at block lba (n blocks) against the model: -1 (and
 * the first differing block in *bad) when a block differs from what the model
 * allows, else 0. For the final read-back and for each GOOD READ.
 */
int cm_check(const struct cdb_model *m, uint64_t lba, uint64_t n, const uint8_t *got,
	     uint64_t *bad);
/* LBA and NUMBER OF LOGICAL BLOCKS of a READ / WRITE / WRITE AND VERIFY CDB
 * (6, 10, 12, 16; WRITE(6) / READ(6) length 0 = 256): false for other opcodes. */
bool cm_rw_range(const uint8_t *cdb, uint64_t *lba, uint64_t *n);
/*
 * Commands in flight together complete in any order: the blocks a command
 * given to LUN lun may read or change in the modelled LUN (LUN 0), and whether
 * it may change them. False: it touches none of them. Conservative: UNMAP,
 * EXTENDED COPY and opcodes the model does not follow cover the whole LUN.
 */
bool cm_footprint(const struct cdb_model *m, int lun, const uint8_t *cdb, bool *modifies,
		  uint64_t *lba, uint64_t *n);
void cm_set_unknown(struct cdb_model *m, uint64_t lba, uint64_t n);

#endif
