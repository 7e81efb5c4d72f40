/*
 * An LD_PRELOAD shim for tests (tests/tools/vaaictl_closed_early.sh): connect()
 * as libc's, then a pause of CONNECT_DELAY_MS milliseconds when it succeeded,
 * so that a stand-in daemon can close the connection before the client sends
 * its request: the order that is otherwise a race becomes certain.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	int (*real)(int, const struct sockaddr *, socklen_t);
	*(void **)&real = dlsym(RTLD_NEXT, "connect");
	if (!real)
		return -1;
	int rc = real(fd, addr, len);
	const char *ms = getenv("CONNECT_DELAY_MS");
	if (rc == 0 && ms) {
		long v = strtol(ms, NULL, 10);
		struct timespec ts = {.tv_sec = v / 1000, .tv_nsec = (v % 1000) * 1000000};
		while (nanosleep(&ts, &ts) < 0)
			;
	}
	return rc;
}
