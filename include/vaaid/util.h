/*
 * vaaid utilities (src/util): CRC-32C, logging, small helpers.
 */
#ifndef VAAID_UTIL_H
#define VAAID_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* CRC-32C (Castagnoli), hardware accelerated where the CPU has SSE4.2. Chains:
 * vcrc32c(vcrc32c(0, a, n), b, m) is the CRC of a followed by b; vcrc32c(0, "123456789", 9)
 * is 0xE3069283. */
uint32_t vcrc32c(uint32_t crc, const void *buf, size_t len);
/* The two implementations vcrc32c chooses between, same semantics, for tests: the table
 * path (always available) and the SSE4.2 path, which may be called only when
 * vcrc32c_hw_available() is 1 (it aborts otherwise). */
uint32_t vcrc32c_sw(uint32_t crc, const void *buf, size_t len);
uint32_t vcrc32c_hw(uint32_t crc, const void *buf, size_t len);
int vcrc32c_hw_available(void);

/* Logging to stderr: "vaaid[LEVEL] dev func: message". */
enum vlog_level { VLOG_ERR = 0, VLOG_WARN, VLOG_INFO, VLOG_DEBUG };
/* The threshold is read from VAAID_LOG_LEVEL (err|warn|info|debug) once, or set at start-up. */
void vlog_set_level(enum vlog_level lvl);
enum vlog_level vlog_get_level(void);
void vlog_write(enum vlog_level lvl, const char *dev, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* vlog_write with a va_list, suffix appended to the message (log_limit.c: its count). */
void vlog_vwrite(enum vlog_level lvl, const char *dev, const char *func, const char *suffix,
		 const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

#define vlog_err(dev, ...) vlog_write(VLOG_ERR, dev, __func__, __VA_ARGS__)
#define vlog_warn(dev, ...) vlog_write(VLOG_WARN, dev, __func__, __VA_ARGS__)
#define vlog_info(dev, ...) vlog_write(VLOG_INFO, dev, __func__, __VA_ARGS__)
#define vlog_debug(dev, ...) \
	do { if (vlog_get_level() >= VLOG_DEBUG) vlog_write(VLOG_DEBUG, dev, __func__, __VA_ARGS__); } while (0)

/* Read a small text file (sysfs, configfs) into buf (at most len - 1 bytes, NUL-terminated,
 * trailing newlines and spaces removed). Returns its length or -errno. */
int vread_small_file(const char *path, char *buf, size_t len);

/* Parse "123", "4K", "1M", "2G", "1T" (1024-based). Returns 0 or -EINVAL / -ERANGE. */
int vparse_size(const char *s, uint64_t *out);

static inline int vis_pow2(uint64_t x) { return x && !(x & (x - 1)); }
static inline uint64_t vdiv_round_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static inline uint64_t vround_up(uint64_t a, uint64_t b) { return vdiv_round_up(a, b) * b; }

#endif
