/*
 * Rate-limited log lines (include/vaaid/log_limit.h).
 *
 * How this works: vlog_limit_allow lets an occurrence through when it is the
 * first or when VLOG_LIMIT_INTERVAL_NS have passed since the last one let
 * through, counting the others; vlog_write_limited formats the line once and
 * writes it at its level, with the count of the lines held back since the
 * last ("N more suppressed"), or at debug level when it is held back (so
 * nothing is lost to an admin who asks for debug).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "vaaid/log_limit.h"

bool vlog_limit_allow(struct vlog_limit *l, uint64_t now_ns, uint64_t *suppressed)
{
	if (l->started && now_ns - l->last_ns < VLOG_LIMIT_INTERVAL_NS) {
		l->suppressed++;
		return false;
	}
	*suppressed = l->suppressed;
	l->suppressed = 0;
	l->started = true;
	l->last_ns = now_ns;
	return true;
}

uint64_t vlog_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void vlog_write_limited(struct vlog_limit *l, uint64_t now_ns, enum vlog_level lvl,
			const char *dev, const char *func, const char *fmt, ...)
{
	uint64_t held = 0;
	bool allow = vlog_limit_allow(l, now_ns, &held);
	char suffix[64] = "";
	if (allow && held)
		snprintf(suffix, sizeof(suffix), " (%" PRIu64 " more suppressed since the last)", held);
	va_list ap;
	va_start(ap, fmt);
	vlog_vwrite(allow ? lvl : VLOG_DEBUG, dev, func, suffix, fmt, ap);
	va_end(ap);
}
