/*
 * vaaictl's arguments (tools/vaaictl/args.c): the options and the command's
 * words checked and turned into the one request line sent to vaaid, without
 * a socket (tests/fuzz/fuzz_vaaictl.c calls it).
 */
#ifndef VAAICTL_ARGS_H
#define VAAICTL_ARGS_H

#include <stdbool.h>
#include <stdio.h>

/* The daemon reads a request line of at most this many bytes (without its "\n"). */
#define VAAICTL_LINE_MAX 2047 /* = VD_CTL_LINE_MAX (checked in args.c) */

struct vaaictl_req {
	const char *sock;   /* --socket PATH, default /run/vaaid/control */
	bool json;          /* --json: print the answer as is */
	bool help;          /* --help: the usage was printed, nothing to send */
	bool pools, volumes; /* which tables the answer is printed as */
	bool top;           /* vaaictl top: a live view of `stats` (tools/vaaictl/top.c) */
	unsigned interval_ms; /* top --interval, default 2000 */
	int nwords;         /* the command's words (argv after the options) */
	char **words;
	char line[VAAICTL_LINE_MAX + 1]; /* the request, without "\n" */
};

/* Check argv and build the request: 0 (out->line set, or out->help), or 2 (the
 * usage exit status) with what is wrong printed to err. */
int vaaictl_parse(int argc, char **argv, FILE *err, struct vaaictl_req *out);
/* The usage text on err; returns 2. */
int vaaictl_usage(FILE *err);

#endif
