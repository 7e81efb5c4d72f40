/*
 * Is the vaaid serving a TCMU handler running on this host? (docs/ceph.md "Two
 * gateway identities on one host".)
 *
 * How this works: a daemon holds, while it listens for netlink events, an abstract
 * unix socket whose name is made of its [tcmu] handler and its configfs root
 * ("vaaid/tcmu-handler/NAME/HASH", HASH an FNV-1a of the root, so that test
 * daemons on fake roots never meet the host's). The kernel removes the name when
 * the process dies, however it dies: no file to clean up, no stale lock. Another
 * daemon that leaves that handler ([tcmu] leave) asks whether it runs by
 * connect()ing a datagram socket to that name (nothing is sent): success means
 * yes (keep silent, the other daemon answers); ECONNREFUSED means nobody holds it
 * (answer in its place, so that the configfs writer never waits for ever). The
 * asker never binds the name, so it can never make the holder's own bind fail.
 * Two daemons serving one handler on one root would both answer every event: the
 * second one's bind fails (EADDRINUSE) and it does not start. The root is the one
 * configured, resolved (realpath in vd_config_finish), so that two spellings of
 * one directory give one name.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vaaid/daemon.h"

/* The handler's abstract socket address; its length in *len. */
static int handler_addr(const char *configfs_root, const char *handler, struct sockaddr_un *sa,
			socklen_t *len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *p = configfs_root; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* sun_path[0] = 0: the abstract namespace */
	int n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "vaaid/tcmu-handler/%s/%016llx",
			 handler, (unsigned long long)h);
	if (n < 0 || (size_t)n >= sizeof(sa->sun_path) - 1)
		return -ENAMETOOLONG;
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	return 0;
}

/* bind (hold) or connect (ask) a datagram socket to the handler's name: the
 * socket, or -errno (the call's own error in *call_err when it was the call that
 * failed). */
static int name_socket(const char *configfs_root, const char *handler, bool hold, int *call_err)
{
	struct sockaddr_un sa;
	socklen_t len;
	*call_err = 0;
	int rc = handler_addr(configfs_root, handler, &sa, &len);
	if (rc < 0)
		return rc;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if ((hold ? bind : connect)(fd, (struct sockaddr *)&sa, len) < 0) {
		*call_err = errno;
		close(fd);
		return -*call_err;
	}
	return fd;
}

int vd_handler_hold(const char *configfs_root, const char *handler)
{
	int e;
	return name_socket(configfs_root, handler, true, &e);
}

int vd_handler_running(const char *configfs_root, const char *handler)
{
	int e;
	int fd = name_socket(configfs_root, handler, false, &e);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return e == ECONNREFUSED ? 0 : fd;
}
