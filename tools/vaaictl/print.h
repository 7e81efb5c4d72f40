/*
 * vaaictl's printing of the daemon's answer (tools/vaaictl/print.c): as is
 * (--json), the daemon's error, a one-line confirmation, or the pool and
 * volume tables. Any JSON is printed without fault (missing keys, wrong types:
 * tests/fuzz/fuzz_vaaictl_answer.c).
 */
#ifndef VAAICTL_PRINT_H
#define VAAICTL_PRINT_H

#include <stdio.h>

#include <json-c/json.h>

#include "args.h"

/* Print ans for the request q to out (errors to err); the exit status: 0 the
 * answer says "ok": true, 1 otherwise. */
int vaaictl_print_answer(FILE *out, FILE *err, const struct vaaictl_req *q, json_object *ans);

#endif
