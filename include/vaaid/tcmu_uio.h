/*
 * vaaid UIO + configfs discovery (src/tcmu/uio.c): find a TCMU device's UIO
 * node, map its ring, and read the LIO attributes the daemon honours.
 *
 * sysfs_root / configfs_root are parameters (normally "/sys" and
 * "/sys/kernel/config") so tests can run against a fake tree.
 */
#ifndef VAAID_TCMU_UIO_H
#define VAAID_TCMU_UIO_H

#include <stddef.h>
#include <stdint.h>

struct tcmu_uio {
	int fd;       /* /dev/uioN, O_RDWR; also the event/doorbell fd */
	void *map;
	size_t map_size;
	unsigned minor;
};

/* Read /sys/class/uio/uio<minor>/name into buf. */
int tcmu_uio_read_name(const char *sysfs_root, unsigned minor, char *buf, size_t len);
/* Open /dev/uio<minor> (dev_root normally "/dev") and map map0 (size from sysfs). */
int tcmu_uio_open(const char *sysfs_root, const char *dev_root, unsigned minor, struct tcmu_uio *out);
void tcmu_uio_close(struct tcmu_uio *u);

/* LIO's view of the device: core/user_<hba>/<dev>/... */
struct tcmu_lio_attrs {
	uint32_t hw_block_size;
	uint32_t hw_max_sectors;
	uint64_t dev_size;       /* from info "Size: " when configured, else 0 */
	int write_cache;         /* attrib/emulate_write_cache, -1 when unreadable */
};
int tcmu_lio_read_attrs(const char *configfs_root, const char *hba, const char *dev,
			struct tcmu_lio_attrs *out);
/* Ask LIO to reset the ring (action/reset_ring), for a daemon that restarted. */
int tcmu_lio_reset_ring(const char *configfs_root, const char *hba, const char *dev);

#endif
