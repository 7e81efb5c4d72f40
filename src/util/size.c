/* Parsing of human sizes ("4K", "1M", "2G", "1T"; 1024-based). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "vaaid/util.h"

int vparse_size(const char *s, uint64_t *out)
{
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno)
		return -ERANGE;
	unsigned shift = 0;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -EINVAL;
	}
	if (*end == 'i' || *end == 'B') {
		if (*end == 'i') end++;
		if (*end == 'B') end++;
	}
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}
