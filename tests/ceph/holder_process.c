/* A lock holder in a process of its own (holder_process.h). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "holder_process.h"

pid_t ceph_holder_start(const char *exe, const char *arg, const char *what)
{
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl(exe, exe, "--hold", arg, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	char line[8] = "";
	ssize_t n = read(fd[0], line, sizeof(line) - 1);
	close(fd[0]);
	if (n < 4 || strncmp(line, "held", 4)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("the holder process did not take %s", what);
	}
	return pid;
}
