/*
 * simhost_rings: simulated TCMU rings (a simk and the engine side's mapping of
 * its memfd) that a caller keeps across simhosts, so that a fuzz target's host
 * per input brings its LUNs up on rings already mapped and faulted in, rather
 * than on a new 65 MiB memfd and two new mappings per LUN (every page of them a
 * page fault again). A ring comes back reset (simk_reset: as simk_create made
 * it), so a LUN cannot tell a kept ring from a new one.
 */
#ifndef VAAID_SIMHOST_RINGS_H
#define VAAID_SIMHOST_RINGS_H

#include <stddef.h>

struct simk;
struct simhost_rings;

/* Room for max rings (LUNs of one host at a time). */
int simhost_rings_new(unsigned max, struct simhost_rings **out);
/* Destroys the rings kept (no host may use them any more). */
void simhost_rings_free(struct simhost_rings *rs);
/* A kept ring (LIFO) and its engine-side mapping; -ENOENT when none is kept. */
int simhost_rings_get(struct simhost_rings *rs, struct simk **k, void **map, size_t *map_size);
/* Keep a ring whose engine side is gone: reset now. -ENOSPC when full (the caller
 * destroys it then). */
int simhost_rings_put(struct simhost_rings *rs, struct simk *k, void *map, size_t map_size);

#endif
