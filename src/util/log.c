/*
 * Logging to stderr with the device name and function. The threshold is
 * process configuration (set once at start-up or from VAAID_LOG_LEVEL), the
 * only process-wide setting in vaaid; it is an atomic so threads may read it.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vaaid/util.h"

static atomic_int log_level = -1;

void vlog_set_level(enum vlog_level lvl) { atomic_store(&log_level, (int)lvl); }

enum vlog_level vlog_get_level(void)
{
	int l = atomic_load(&log_level);
	if (l >= 0)
		return (enum vlog_level)l;
	const char *e = getenv("VAAID_LOG_LEVEL");
	l = VLOG_WARN;
	if (e) {
		if (!strcmp(e, "err")) l = VLOG_ERR;
		else if (!strcmp(e, "info")) l = VLOG_INFO;
		else if (!strcmp(e, "debug")) l = VLOG_DEBUG;
	}
	atomic_store(&log_level, l);
	return (enum vlog_level)l;
}

void vlog_vwrite(enum vlog_level lvl, const char *dev, const char *func, const char *suffix,
		 const char *fmt, va_list ap)
{
	static const char *const names[] = {"err", "warn", "info", "debug"};
	if (lvl > vlog_get_level())
		return;
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "vaaid[%s] %s %s: %s%s\n", names[lvl], dev ? dev : "-", func, msg, suffix);
}

void vlog_write(enum vlog_level lvl, const char *dev, const char *func, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog_vwrite(lvl, dev, func, "", fmt, ap);
	va_end(ap);
}
