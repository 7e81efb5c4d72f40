/*
 * UIO + configfs discovery for TCMU devices (see include/vaaid/tcmu_uio.h).
 *
 * How this works: target_core_user registers one UIO device per backstore,
 * named "tcm-user/<hba>/<dev>/<subtype>/<cfgstring>", with one memory map
 * (map0: mailbox + command ring + data area). Its size is read from
 * /sys/class/uio/uioN/maps/map0/size (hex), /dev/uioN is opened and mapped
 * shared at offset 0. The backstore itself lives in configfs under
 * target/core/user_<hba>/<dev>; its attrib/ files are small decimal values.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vaaid/tcmu_uio.h"
#include "vaaid/util.h"

static int read_u64(const char *path, int base, uint64_t *out)
{
	char buf[64];
	int rc = vread_small_file(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, base);
	if (end == buf || *end || errno)
		return -EINVAL;
	*out = v;
	return 0;
}

int tcmu_uio_read_name(const char *sysfs_root, unsigned minor, char *buf, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/class/uio/uio%u/name", sysfs_root, minor);
	int rc = vread_small_file(path, buf, len);
	return rc < 0 ? rc : 0;
}

int tcmu_uio_open(const char *sysfs_root, const char *dev_root, unsigned minor, struct tcmu_uio *out)
{
	char path[512];
	uint64_t size;
	memset(out, 0, sizeof(*out));
	out->fd = -1;
	snprintf(path, sizeof(path), "%s/class/uio/uio%u/maps/map0/size", sysfs_root, minor);
	int rc = read_u64(path, 16, &size);
	if (rc < 0)
		return rc;
	if (size == 0 || size > (1ull << 40))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/uio%u", dev_root, minor);
	out->fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (out->fd < 0)
		return -errno;
	out->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, out->fd, 0);
	if (out->map == MAP_FAILED) {
		rc = -errno;
		close(out->fd);
		out->fd = -1;
		out->map = NULL;
		return rc;
	}
	out->map_size = size;
	out->minor = minor;
	return 0;
}

void tcmu_uio_close(struct tcmu_uio *u)
{
	if (u->map)
		munmap(u->map, u->map_size);
	if (u->fd >= 0)
		close(u->fd);
	u->map = NULL;
	u->fd = -1;
}

int tcmu_lio_read_attrs(const char *configfs_root, const char *hba, const char *dev,
			struct tcmu_lio_attrs *out)
{
	char path[512], buf[1024];
	uint64_t v;
	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/target/core/user_%s/%s/attrib/hw_block_size", configfs_root,
		 hba, dev);
	int rc = read_u64(path, 10, &v);
	if (rc < 0)
		return rc;
	out->hw_block_size = (uint32_t)v;
	snprintf(path, sizeof(path), "%s/target/core/user_%s/%s/attrib/hw_max_sectors",
		 configfs_root, hba, dev);
	rc = read_u64(path, 10, &v);
	if (rc < 0)
		return rc;
	out->hw_max_sectors = (uint32_t)v;
	snprintf(path, sizeof(path), "%s/target/core/user_%s/%s/attrib/emulate_write_cache",
		 configfs_root, hba, dev);
	out->write_cache = read_u64(path, 10, &v) == 0 ? (int)v : -1;
	snprintf(path, sizeof(path), "%s/target/core/user_%s/%s/info", configfs_root, hba, dev);
	if (vread_small_file(path, buf, sizeof(buf)) >= 0) {
		/* "...SectorSize: 0 ...\n Config: vaai/p/v Size: 1048576 ...": the Size after Config */
		const char *cfg = strstr(buf, "Config:");
		const char *s = cfg ? strstr(cfg, " Size: ") : NULL;
		if (s)
			out->dev_size = strtoull(s + 7, NULL, 10);
	}
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, s, strlen(s));
	int err = errno;
	close(fd);
	return n < 0 ? -err : 0;
}

int tcmu_lio_reset_ring(const char *configfs_root, const char *hba, const char *dev)
{
	char base[400], path[512];
	snprintf(base, sizeof(base), "%s/target/core/user_%s/%s/action", configfs_root, hba, dev);
	snprintf(path, sizeof(path), "%s/block_dev", base);
	int rc = write_str(path, "1");
	if (rc < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/reset_ring", base);
	rc = write_str(path, "1");
	snprintf(path, sizeof(path), "%s/block_dev", base);
	int rc2 = write_str(path, "0");
	return rc < 0 ? rc : rc2;
}
