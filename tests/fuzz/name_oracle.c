/* fz_name_safe (name_oracle.h): the fuzz targets' oracle for accepted names. */
#include <string.h>

#include "name_oracle.h"

bool fz_name_safe(const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);
	if (n == 0 || n > max || s[0] == '.' || s[0] == '-')
		return false; /* also "." and ".." */
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '/' || ch <= ' ' || ch == 0x7F)
			return false;
	}
	return true;
}
