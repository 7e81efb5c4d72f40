/*
 * Seed corpora of the fuzz targets (tests/fuzz): each target defines
 * fuzz_make_seeds(dir), which writes its seeds (made from real inputs) as
 * files into dir; the regression driver runs it for `--make-seeds DIR`
 * (scripts/fuzz --make-seeds). fuzz_write_seed is the one way they are written.
 */
#ifndef VAAID_FUZZ_SEEDS_H
#define VAAID_FUZZ_SEEDS_H

#include <stddef.h>
#include <stdint.h>

int fuzz_make_seeds(const char *dir);
/* Write dir/name (0 or -errno, named on stderr). */
int fuzz_write_seed(const char *dir, const char *name, const void *data, size_t len);

#endif
