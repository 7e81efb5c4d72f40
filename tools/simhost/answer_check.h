/*
 * The property every answer of vaaid's must have, whatever the command (the
 * seeded CDB fuzz loop tests/unit/test_simhost_cdb_fuzz.c and the libFuzzer
 * target tests/fuzz/fuzz_cdb.c check it after each command): status GOOD,
 * CHECK CONDITION or TASK SET FULL; CHECK CONDITION with fixed-format sense
 * (response code 70h, ADDITIONAL SENSE LENGTH >= 0Ah) and a sense key a healthy
 * pool may give (never NO SENSE, MEDIUM ERROR or HARDWARE ERROR: the store never
 * fails there); GOOD returns at most the data-in buffer (in_len; 0: none given).
 */
#ifndef VAAID_SIMHOST_ANSWER_CHECK_H
#define VAAID_SIMHOST_ANSWER_CHECK_H

#include <stddef.h>

#include "vaaid/sim.h"

/* 0 when the answer is one a correct target gives, else -1 and why says what is wrong. */
int answer_check(const struct simk_result *k, size_t in_len, char *why, size_t n);

#endif
