/*
 * vaai-bench: benchmarks of the engine (docs/performance.md).
 *   engine.c    4 KiB QD32 random write / read / allocating write through the
 *               simulated kernel + real ring + engine, against fio on a file
 *               of the same size on the same file system
 *   recovery.c  memory per TiB mapped, per partial extent, open time after a
 *               clean close and after a kill -9 (helper subcommands run in
 *               fresh processes)
 *   flow.c      commands kept in flight in LUN rings, one command waited for, a
 *               LUN's limits (flow.h; used by vaai.c and mixed.c)
 *   vaai.c      WRITE SAME / UNMAP / COMPARE AND WRITE (scripts/bench/vaai)
 *   xcopy.c     EXTENDED COPY vs host copy (scripts/bench/xcopy)
 *   mixed.c     a mixed load on two LUNs whose counters must equal the generator's
 *               own counts (scripts/bench/counters-exact); mixed_check.c compares;
 *               mixed_sg.c runs it through /dev/sgN of a real kernel (--sg)
 *   kport_sg.c  the kernel port of /dev/sgN (kport.h; flow.c has simhost's)
 *   scrape.c    the metrics endpoint (vaaid's) scraped while every LUN is loaded
 *               (scripts/bench/scrape-host)
 *   ckpt.c      allocating-write p99 with/without a checkpoint running, paused vs
 *               live checkpoints (scripts/bench/ckpt)
 *   main.c      subcommand dispatch and the helpers below
 */
#ifndef VAAI_BENCH_H
#define VAAI_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vaaid/rng.h" /* vrng_next: the seeded generator */

double bench_now(void);                      /* CLOCK_MONOTONIC seconds */
int bench_parse_size(const char *s, uint64_t *out);
/* Run argv, capture its stdout (malloc'd, NUL-terminated) into *out; returns exit status or -errno. */
int bench_run_capture(char *const argv[], char **out);
/* Run fio (argv NULL-terminated, with --output-format=json), logging the command
 * line on stderr; *iops = jobs[0].<side>.iops, side "read" or "write", and, when
 * lat_us is not NULL, *lat_us = that side's mean latency (lat_ns.mean: submission
 * to completion) in microseconds. 0 or -errno. */
int bench_fio_iops(char *const argv[], const char *side, double *iops, double *lat_us);
/* A file of size bytes at path (replaced if it exists): written completely with a
 * fixed pattern, fsynced and dropped from the page cache (full), or sparse. 0 or -errno. */
int bench_make_file(const char *path, uint64_t size, bool full);
/* The path of this executable (for helper subcommands in fresh processes). */
const char *bench_self(void);

int bench_engine_main(int argc, char **argv);
int bench_recovery_main(int argc, char **argv);
int bench_xcopy_main(int argc, char **argv); /* xcopy.c: EXTENDED COPY vs host copy */
int bench_vaai_main(int argc, char **argv); /* vaai.c: WRITE SAME / UNMAP / COMPARE AND WRITE */
int bench_mixed_main(int argc, char **argv); /* mixed.c: counters exact under a mixed load */
int bench_scrape_main(int argc, char **argv); /* scrape.c: scrape latency under load */
int bench_ckpt_main(int argc, char **argv); /* ckpt.c: alloc-write p99, paused vs live checkpoints */
/* Helpers run in a fresh process by the recovery benchmark. */
int bench_recovery_helper(int argc, char **argv);

#endif
