/*
 * The seeded generator of the tests, the crash simulator (src/io/vblk_crashsim.c)
 * and the benchmarks: SplitMix64 (Steele, Lea and Flood, 2014). The state is one
 * 64-bit word and any value is a good seed; a seed names one sequence, so a seed
 * a run prints (crash_suite --seed, VAAID_FUZZ_SEED, vaai-sim's seed=N) replays it.
 * Not for anything that must be unpredictable.
 */
#ifndef VAAID_RNG_H
#define VAAID_RNG_H

#include <stdint.h>

static inline uint64_t vrng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* 64-bit FNV-1a of a string, continuing from h (start: VRNG_FNV_BASIS): the seeds
 * derived from a commit hash (crash_suite --commit, the seeded CDB fuzz loop). */
#define VRNG_FNV_BASIS 0xcbf29ce484222325ull
static inline uint64_t vrng_fnv64(const char *str, uint64_t h)
{
	for (; *str; str++)
		h = (h ^ (uint8_t)*str) * 0x100000001b3ull;
	return h;
}

#endif
