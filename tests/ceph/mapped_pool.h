/* A pool with many mapped extents on an RBD image, for takeover timing (tests/ceph/mapped_pool.c). */
#ifndef VAAID_TESTS_MAPPED_POOL_H
#define VAAID_TESTS_MAPPED_POOL_H

#include <stdint.h>

/*
 * Make the pool on spec (the image is created; it must not exist) holding a
 * volume "vol" of 64 MiB (512-byte blocks, for the takeover rounds) and about
 * `mapped` mapped 64 KiB extents in other volumes, none physically next to
 * its neighbour in its volume's map (one map run each: the checkpoint's worst
 * case; their data is not copied into Ceph: see mapped_pool.c). *mapped_out,
 * *phys_out: what was made. Prints progress on stderr.
 * 0 or -errno.
 */
int mapped_pool_build(const char *spec, uint64_t mapped, const char *tmpdir, uint64_t *mapped_out,
		      uint64_t *phys_out);

#endif
