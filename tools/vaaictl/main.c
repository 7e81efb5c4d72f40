/*
 * vaaictl: the admin CLI of vaaid, over its control socket (root only).
 *
 *   vaaictl [--socket PATH] [--json] status
 *   vaaictl pool create NAME PATH SIZE [--extent SIZE] [--force]
 *   vaaictl pool grow NAME SIZE
 *   vaaictl pool list | volume list
 *   vaaictl volume delete POOL/VOLUME
 *
 * How this works: the arguments are checked and turned into one request line
 * (args.c: a typo gets a message naming it, then the usage, without a
 * daemon), sent; the JSON answer is printed as is (--json) or as a table
 * (print.c).
 * Exit status: 0 ok, 1 the daemon refused (its message printed), 2 usage,
 * 3 no daemon.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "args.h"
#include "print.h"
#include "top.h"

/* All of buf, with send(MSG_NOSIGNAL): a daemon that closed the connection early
 * (stopping, or refusing) gives EPIPE and a message, not a SIGPIPE that kills
 * vaaictl silently. 0 or -errno. */
static int send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int request(const char *sock, const char *line, json_object **out, char *why, size_t wl,
		   unsigned timeout_ms)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	*out = NULL;
	if (strlen(sock) >= sizeof(sa.sun_path)) {
		snprintf(why, wl, "socket path too long");
		return 2;
	}
	memcpy(sa.sun_path, sock, strlen(sock) + 1); /* length checked above */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && timeout_ms) { /* connect, send and receive give up after it */
		struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(why, wl, "cannot reach vaaid at %s: %s (is vaaid running? are you root?)", sock,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return 3;
	}
	size_t len = strlen(line);
	int sent = send_all(fd, line, len);
	if (!sent)
		sent = send_all(fd, "\n", 1);
	if (sent == -EAGAIN || sent == -EWOULDBLOCK) { /* SO_SNDTIMEO */
		snprintf(why, wl, "vaaid did not take the request within %u ms", timeout_ms);
		close(fd);
		return 3;
	}
	/* A daemon that answered and closed before reading all of it (a refusal):
	 * its answer is still to be read; only without one is the write's error
	 * the message. */
	if (sent && sent != -EPIPE && sent != -ECONNRESET) {
		snprintf(why, wl, "write to %s: %s", sock, strerror(-sent));
		close(fd);
		return 3;
	}
	char *buf = NULL;
	size_t got = 0, cap = 0;
	for (;;) {
		if (got + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				close(fd);
				snprintf(why, wl, "out of memory");
				return 3;
			}
			buf = nb;
		}
		ssize_t n = read(fd, buf + got, cap - got - 1);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			snprintf(why, wl, "no answer from vaaid within %u ms", timeout_ms);
			free(buf);
			close(fd);
			return 3;
		}
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if ((!buf || !got) && sent) {
		snprintf(why, wl, "write to %s: %s", sock, strerror(-sent));
		free(buf);
		return 3;
	}
	if (!buf || !got) {
		snprintf(why, wl, "no answer from vaaid");
		free(buf);
		return 3;
	}
	buf[got] = 0;
	*out = json_tokener_parse(buf);
	free(buf);
	if (!*out) {
		snprintf(why, wl, "vaaid answered something that is not JSON");
		return 3;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct vaaictl_req q;
	int rc = vaaictl_parse(argc, argv, stderr, &q);
	if (rc || q.help)
		return rc;
	if (q.top)
		return vaaictl_top(&q, request);
	json_object *ans = NULL;
	char why[512];
	rc = request(q.sock, q.line, &ans, why, sizeof(why), 0);
	if (rc) {
		fprintf(stderr, "vaaictl: %s\n", why);
		return rc;
	}
	rc = vaaictl_print_answer(stdout, stderr, &q, ans);
	json_object_put(ans);
	return rc;
}
