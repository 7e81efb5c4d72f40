/*
 * Small text files (sysfs, configfs attributes): read whole into a buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "vaaid/util.h"

int vread_small_file(const char *path, char *buf, size_t len)
{
	if (!path || !buf || len == 0)
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return (int)n;
}
