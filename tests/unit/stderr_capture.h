/*
 * Capture what the code under test writes to stderr (vlog writes there) in a
 * temporary file, for tests that check log lines. Include after cmocka.h.
 * Assertions between stderr_capture_begin and stderr_capture_end would print
 * into the capture: make them after the end.
 */
#ifndef VAAID_STDERR_CAPTURE_H
#define VAAID_STDERR_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct stderr_capture {
	FILE *f;
	int saved;
};

static inline void stderr_capture_begin(struct stderr_capture *c)
{
	c->f = tmpfile();
	assert_non_null(c->f);
	fflush(stderr);
	c->saved = dup(STDERR_FILENO);
	assert_true(c->saved >= 0);
	assert_true(dup2(fileno(c->f), STDERR_FILENO) >= 0);
}

/* stderr restored; what was written meanwhile (the caller frees it), also echoed to
 * stderr so that it stays visible in the test's output. */
static inline char *stderr_capture_end(struct stderr_capture *c)
{
	fflush(stderr);
	dup2(c->saved, STDERR_FILENO);
	close(c->saved);
	long n = ftell(c->f);
	assert_true(n >= 0);
	char *text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	rewind(c->f);
	assert_int_equal(fread(text, 1, (size_t)n, c->f), (size_t)n);
	fclose(c->f);
	fputs(text, stderr);
	return text;
}

#endif
