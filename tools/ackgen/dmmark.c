/*
 * dm-log-writes marks without dmsetup: the DM_TARGET_MSG ioctl on
 * /dev/mapper/control with the message "mark NAME" (what `dmsetup message DEV
 * 0 mark NAME` sends; linux/dm-ioctl.h). dm-log-writes queues the mark behind
 * every entry already queued for its log (log_writes_message -> log_mark), so
 * the log's order says which writes were on stable media before it: ackgen
 * sends one after each acknowledgement (tests/vm/t_log_writes.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dmmark.h"

int dmmark_open(void)
{
	int fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int dmmark_send(int ctl, const char *dev, const char *name)
{
	union {
		struct dm_ioctl io;
		uint8_t b[sizeof(struct dm_ioctl) + sizeof(struct dm_target_msg) + 512];
	} u;
	size_t len = strlen(name);
	if (len >= 480 || strchr(name, ' ') || strlen(dev) >= DM_NAME_LEN)
		return -EINVAL;
	memset(&u, 0, sizeof(u));
	u.io.version[0] = DM_VERSION_MAJOR;
	u.io.version[1] = 0;
	u.io.version[2] = 0;
	u.io.data_size = sizeof(u);
	u.io.data_start = sizeof(struct dm_ioctl);
	memcpy(u.io.name, dev, strlen(dev));
	struct dm_target_msg *m = (struct dm_target_msg *)(u.b + sizeof(struct dm_ioctl));
	m->sector = 0;
	memcpy(m->message, "mark ", 5);
	memcpy(m->message + 5, name, len + 1);
	return ioctl(ctl, DM_TARGET_MSG, &u) < 0 ? -errno : 0;
}
