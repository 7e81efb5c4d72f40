/*
 * A lock holder in a process of its own for the ceph/ tests: the test program
 * runs itself as `EXE --hold ARG` (exec'd, so that its librados client is its
 * own, not a copy of the parent's), and that mode prints "held" once it holds
 * the lock.
 */
#ifndef VAAID_TEST_CEPH_HOLDER_PROCESS_H
#define VAAID_TEST_CEPH_HOLDER_PROCESS_H

#include <sys/types.h>

/* Its pid once it said "held"; otherwise the test fails ("the holder process did
 * not take WHAT"), the process killed and reaped. */
pid_t ceph_holder_start(const char *exe, const char *arg, const char *what);

#endif
