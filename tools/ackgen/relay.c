/*
 * ackgen relay SOCKET FILE: the host's end of a generator's log port in the
 * guest power-cut test (tests/host/power_cut.sh; docs/durability.md).
 *
 * How it works. It listens on the unix socket SOCKET (bound under a temporary
 * name and renamed when listening, so a client never finds it half ready),
 * accepts one connection (qemu's chardev of a virtio-serial port, whose guest
 * side an `ackgen gen --log /dev/vportNpM` writes its records to), and for
 * every complete record (a line) it receives: appends it to FILE with
 * write(2), then sends one receipt byte back. The generator waits for that
 * byte before it goes on, so a record it has written is in FILE (the host's
 * page cache, which a SIGKILL of qemu does not touch) before the generator
 * submits the command (S) or counts an answer as logged (A). At end of file
 * (qemu gone) an incomplete last line is dropped: its writer never got a
 * receipt. Exits 0 at end of file, 1 on an error; prints the count of records.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ackgen.h"

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int listen_at(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char tmp[sizeof(a.sun_path)];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", tmp);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(tmp);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0 || rename(tmp, path) < 0) {
		int e = -errno;
		close(fd);
		unlink(tmp);
		return e;
	}
	return fd;
}

int relay_main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: ackgen relay SOCKET FILE\n");
		return 2;
	}
	int out = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	int lfd = listen_at(argv[0]);
	if (out < 0 || lfd < 0) {
		fprintf(stderr, "ackgen relay: %s: %s\n", out < 0 ? argv[1] : argv[0],
			strerror(out < 0 ? errno : -lfd));
		return 1;
	}
	int c;
	do
		c = accept(lfd, NULL, NULL);
	while (c < 0 && errno == EINTR);
	close(lfd);
	unlink(argv[0]);
	if (c < 0) {
		perror("ackgen relay: accept");
		return 1;
	}
	enum { BUF = 1 << 16 };
	char *buf = malloc(BUF), *acks = malloc(BUF);
	if (!buf || !acks) {
		fprintf(stderr, "ackgen relay: out of memory\n");
		return 1;
	}
	size_t have = 0;
	unsigned long records = 0;
	memset(acks, '\n', BUF);
	for (;;) {
		ssize_t r = read(c, buf + have, BUF - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		size_t done = 0, lines = 0;
		for (size_t i = 0; i < have; i++)
			if (buf[i] == '\n') {
				done = i + 1;
				lines++;
			}
		if (!done && have == BUF) {
			fprintf(stderr, "ackgen relay: a record longer than %d bytes\n", BUF);
			return 1;
		}
		if (done && (write_all(out, buf, done) < 0 || write_all(c, acks, lines) < 0)) {
			perror("ackgen relay");
			return 1;
		}
		records += lines;
		memmove(buf, buf + done, have - done);
		have -= done;
	}
	fprintf(stderr, "ackgen relay: %s: %lu records%s\n", argv[1], records,
		have ? " (an incomplete last one dropped)" : "");
	free(buf);
	free(acks);
	return 0;
}
