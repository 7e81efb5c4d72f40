/*
 * iovec helpers (src/util/iov.c): slicing a byte range out of an iovec array,
 * zeroing and copying, and alignment checks for O_DIRECT.
 */
#ifndef VAAID_IOV_H
#define VAAID_IOV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

/*
 * Fill out[] with the iovecs covering bytes [off, off+len) of iov[]; returns
 * the count, or -EINVAL if the range is outside iov or more than max are needed.
 */
int iov_slice(const struct iovec *iov, int iovcnt, size_t off, size_t len, struct iovec *out,
	      int max);
size_t iov_total(const struct iovec *iov, int iovcnt);
void iov_memset(const struct iovec *iov, int iovcnt, size_t off, int c, size_t len);
size_t iov_copy_to(const struct iovec *iov, int iovcnt, size_t off, const void *buf, size_t len);
size_t iov_copy_from(const struct iovec *iov, int iovcnt, size_t off, void *buf, size_t len);
/* Every base and length a multiple of align. */
bool iov_aligned(const struct iovec *iov, int iovcnt, size_t align);

#endif
