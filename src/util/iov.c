/* iovec slicing and copying helpers. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "vaaid/iov.h"

size_t iov_total(const struct iovec *iov, int iovcnt)
{
	size_t t = 0;
	for (int i = 0; i < iovcnt; i++)
		t += iov[i].iov_len;
	return t;
}

int iov_slice(const struct iovec *iov, int iovcnt, size_t off, size_t len, struct iovec *out,
	      int max)
{
	int n = 0;
	for (int i = 0; i < iovcnt && len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		size_t take = iov[i].iov_len - off;
		if (take > len)
			take = len;
		if (n == max)
			return -EINVAL;
		out[n].iov_base = (char *)iov[i].iov_base + off;
		out[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return len ? -EINVAL : n;
}

void iov_memset(const struct iovec *iov, int iovcnt, size_t off, int c, size_t len)
{
	for (int i = 0; i < iovcnt && len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		size_t take = iov[i].iov_len - off;
		if (take > len)
			take = len;
		memset((char *)iov[i].iov_base + off, c, take);
		len -= take;
		off = 0;
	}
}

size_t iov_copy_to(const struct iovec *iov, int iovcnt, size_t off, const void *buf, size_t len)
{
	size_t done = 0;
	for (int i = 0; i < iovcnt && done < len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		size_t take = iov[i].iov_len - off;
		if (take > len - done)
			take = len - done;
		memcpy((char *)iov[i].iov_base + off, (const char *)buf + done, take);
		done += take;
		off = 0;
	}
	return done;
}

size_t iov_copy_from(const struct iovec *iov, int iovcnt, size_t off, void *buf, size_t len)
{
	size_t done = 0;
	for (int i = 0; i < iovcnt && done < len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		size_t take = iov[i].iov_len - off;
		if (take > len - done)
			take = len - done;
		memcpy((char *)buf + done, (const char *)iov[i].iov_base + off, take);
		done += take;
		off = 0;
	}
	return done;
}

bool iov_aligned(const struct iovec *iov, int iovcnt, size_t align)
{
	for (int i = 0; i < iovcnt; i++)
		if (((uintptr_t)iov[i].iov_base | iov[i].iov_len) & (align - 1))
			return false;
	return true;
}
