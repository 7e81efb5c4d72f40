/* Helpers shared by the emulation handlers (src/scsi/emul_*.c); not a public header. */
#ifndef VAAID_SCSI_EMUL_INTERNAL_H
#define VAAID_SCSI_EMUL_INTERNAL_H

#include <string.h>

#include "vaaid/scsi.h"

/*
 * Return the first min(len, alloc_len) bytes of a fully built response and
 * complete with GOOD. SPC-4 4.2.5.6: the ALLOCATION LENGTH truncates the
 * parameter data; a truncated response is not an error, and an allocation
 * length of zero transfers nothing.
 */
static inline void emul_return_data(struct scsi_cmd *cmd, const uint8_t *buf, size_t len,
				    size_t alloc_len)
{
	scsi_copy_to_data_in(cmd, buf, len < alloc_len ? len : alloc_len);
	scsi_complete_good(cmd);
}

/* Copy a NUL-terminated string into a fixed field, padded with spaces (SPC-4 4.4.1). */
static inline void emul_put_ascii(uint8_t *dst, const char *src, size_t width)
{
	size_t n = strnlen(src, width);
	memcpy(dst, src, n);
	memset(dst + n, ' ', width - n);
}

#endif
