/* fuzz_write_seed (seeds.h): one seed file of a target's corpus. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "seeds.h"

int fuzz_write_seed(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	int rc = f ? 0 : -errno;
	if (f && fwrite(data, 1, len, f) != len)
		rc = -EIO;
	if (f && fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		fprintf(stderr, "fuzz: cannot write the seed %s: %s\n", path, strerror(-rc));
	return rc;
}
