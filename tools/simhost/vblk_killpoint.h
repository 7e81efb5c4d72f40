/*
 * vblk_killpoint (tools/simhost/vblk_killpoint.c): a store wrapper that
 * "kills" the engine at an armed I/O, for the crash suite on a store that
 * cannot lose power (a Ceph RBD image: the cluster survives, the engine
 * process dies). Test harness only; docs/crash.md ("RBD: the engine killed").
 */
#ifndef VAAID_VBLK_KILLPOINT_H
#define VAAID_VBLK_KILLPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include "vaaid/io.h"

/* Wrap inner (owned from now on: closed with the wrapper); seed: how long each
 * operation waits before it is passed on (one to three reactor iterations). */
int vblk_killpoint_wrap(struct vreactor *r, struct vblk *inner, uint64_t seed, struct vblk **out);
/* Kill at the n-th write/flush/discard submitted from now on (n >= 1); 0 disarms
 * (a pending lie's kill included, see vblk_killpoint_ack_killed, until armed again).
 * Engine stopped (the count and the target are the engine thread's otherwise). */
void vblk_killpoint_arm(struct vblk *b, uint64_t n);
void vblk_killpoint_kill_now(struct vblk *b);
bool vblk_killpoint_killed(const struct vblk *b); /* any thread */
uint64_t vblk_killpoint_io_count(const struct vblk *b); /* writes+flushes+discards; any thread */
/* Operations passed to the inner store and not completed when the kill came
 * (they may land or not), and those dropped unsent by it (the kill's own included). */
void vblk_killpoint_kill_stats(const struct vblk *b, uint64_t *in_flight, uint64_t *dropped);
/* Test of the oracle only (crash_suite --mutate-ack-killed): the operation the kill
 * is armed at "completes" with success without being sent, as a process that
 * acknowledged a journal commit before Ceph had it would; the kill comes 64
 * changes later (so that what the lie completed is acknowledged and seen). */
void vblk_killpoint_ack_killed(struct vblk *b, bool on);

#endif
