/*
 * vaaictl top (tools/vaaictl/top.c): the live view of the command counters.
 */
#ifndef VAAICTL_TOP_H
#define VAAICTL_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

#include "args.h"

/* One request to the daemon: 0 with *out (the caller puts it), else a non-zero
 * exit status with what went wrong in why; timeout_ms > 0: give up after that
 * long without an answer (a hung daemon), 0: wait. */
typedef int (*vaaictl_fetch_fn)(const char *sock, const char *line, json_object **out, char *why,
				size_t len, unsigned timeout_ms);
/* One screen from two `stats` answers dt seconds apart (prev NULL: no rates yet). */
void vaaictl_top_render(FILE *out, json_object *prev, json_object *cur, double dt,
			const char *clock, double interval);
/* Until q, SIGINT, SIGTERM or SIGHUP; 0. */
int vaaictl_top(const struct vaaictl_req *q, vaaictl_fetch_fn fetch);

#endif
