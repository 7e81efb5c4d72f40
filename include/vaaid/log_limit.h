/*
 * Rate limiting of a log line that a remote party can trigger at will (an
 * initiator's bad EXTENDED COPY, a refused peer): src/util/log_limit.c.
 *
 * The state is the caller's (one struct per LUN and kind of line, zeroed to
 * start), never global; it is not locked: one thread uses it (the reactor).
 * The first occurrence is logged at its level; then at most one every
 * VLOG_LIMIT_INTERVAL_NS, with "(N more suppressed)" when lines were held
 * back since the last; the lines in between go out at debug level only.
 */
#ifndef VAAID_LOG_LIMIT_H
#define VAAID_LOG_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "vaaid/util.h"

#define VLOG_LIMIT_INTERVAL_NS (10ull * 1000000000ull)

struct vlog_limit {
	bool started;        /* a line has been logged at its level */
	uint64_t last_ns;    /* when (CLOCK_MONOTONIC) */
	uint64_t suppressed; /* occurrences since then logged at debug only */
};

/*
 * An occurrence at time now_ns (CLOCK_MONOTONIC, nanoseconds): true if it may be
 * logged at its level -- then *suppressed receives how many were held back since
 * the last such line, and the count starts again -- false if it goes to debug.
 */
bool vlog_limit_allow(struct vlog_limit *l, uint64_t now_ns, uint64_t *suppressed);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t vlog_now_ns(void);

/* vlog_write at lvl, limited by l (at now_ns); a held-back line is written at debug. */
void vlog_write_limited(struct vlog_limit *l, uint64_t now_ns, enum vlog_level lvl,
			const char *dev, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

#define vlog_warn_limited(l, dev, ...) \
	vlog_write_limited(l, vlog_now_ns(), VLOG_WARN, dev, __func__, __VA_ARGS__)

#endif
