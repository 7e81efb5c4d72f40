/*
 * Who holds a pool's RBD image (src/io/rbd_owner.c): the lock holder records
 * itself in the image's metadata (key VBLK_RBD_OWNER_KEY) right after taking
 * the exclusive lock, so that
 *   - a gateway restarted after its own crash recognizes the lock it finds as
 *     its dead predecessor's (same machine, and that process is gone) and
 *     takes it back at once, instead of coming up standby until the dead
 *     client's watch times out (~30 s) or forever (a standby waits for an
 *     explicit takeover);
 *   - a gateway taking the pool over knows which target port group it fences
 *     (its mark in the shared ALUA record, below).
 * Parsed and compared here, without librbd, so unit tests cover the rules.
 */
#ifndef VAAID_RBD_OWNER_H
#define VAAID_RBD_OWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VBLK_RBD_OWNER_KEY "vaaid.owner"
#define VBLK_RBD_OWNER_MAX 384 /* the formatted record, NUL included */

struct vblk_rbd_owner {
	char machine[65];         /* /etc/machine-id ("-" when there is none: never taken back) */
	char boot[65];            /* /proc/sys/kernel/random/boot_id */
	int pid;                  /* the holder's process */
	unsigned long long start; /* its start time (/proc/PID/stat field 22): pid reuse */
	unsigned group;           /* its ALUA target port group, 0 = none */
	char addr[128];           /* its Ceph client address (rados_getaddrs: IP:PORT/NONCE),
				     as the lock's owner list names the holder */
};

/* This process as an owner record (group and Ceph client address as given;
 * addr NULL: "-"). 0 or -errno. */
int vblk_rbd_owner_self(struct vblk_rbd_owner *me, unsigned group, const char *addr);
/* "machine=M boot=B pid=P start=S group=G addr=A"; -ENAMETOOLONG if cap is too small. */
int vblk_rbd_owner_format(const struct vblk_rbd_owner *o, char *buf, size_t cap);
/* The record format_owner wrote; -EINVAL for anything else (damaged, foreign). */
int vblk_rbd_owner_parse(const char *s, struct vblk_rbd_owner *o);
/* Is process pid, started at start, alive on this machine (this boot)? */
bool vblk_rbd_owner_process_alive(int pid, unsigned long long start);
/*
 * Is holder a dead earlier incarnation on this machine? True only when the
 * machine matches (and is known) and either the machine rebooted since
 * (another boot id) or that process (pid + start time) is gone. alive: the
 * liveness check (vblk_rbd_owner_process_alive; tests pass their own).
 */
bool vblk_rbd_owner_is_dead_local(const struct vblk_rbd_owner *holder,
				  const struct vblk_rbd_owner *me,
				  bool (*alive)(int pid, unsigned long long start));
/*
 * Is the IP of a Ceph client address ("IP:PORT/NONCE", "v2:...", "[IPv6]:...")
 * one of this host's addresses? is_local(family, addr bytes) decides (NULL:
 * the host's interfaces, getifaddrs). False for anything unparsable.
 */
bool vblk_rbd_addr_is_local(const char *addr, bool (*is_local)(int family, const void *ip));
/*
 * Does addr name one Ceph client instance, "IP:PORT/NONCE" (optionally "v1:"/
 * "v2:", "[IPv6]"), with a nonce other than 0? A blocklist entry of such an
 * address refuses only that instance (a client's nonce is random per
 * instance); one with nonce 0 and port 0 would refuse every client of the IP.
 */
bool vblk_rbd_addr_instance(const char *addr);
/*
 * The previous holder's fence (docs/ceph.md "One writer, fenced"): an open that
 * has just taken the image's lock blocklists the client its owner record names
 * before recovery runs and before it serves, so that no write of that holder
 * (one still queued in an OSD after a timeout, then a clean release) lands
 * later. rec: the record (NULL: none); self: this client's address; broken: the
 * client the lock break just blocklisted (NULL: none). 1: blocklist rec->addr;
 * 0: nothing to fence (no record, this client, the broken one); -EINVAL: the
 * record names no single client (vblk_rbd_addr_instance), so nobody can be
 * fenced: the open must fail rather than serve unfenced.
 */
int vblk_rbd_owner_fence_needed(const struct vblk_rbd_owner *rec, const char *self,
				const char *broken);

/*
 * The pool's shared ALUA record (docs/ceph.md "ALUA": REPORT TARGET PORT GROUPS
 * answers the same on every path): image metadata keys under
 * VBLK_RBD_ALUA_PREFIX, read by every gateway in one call (rbd_metadata_list)
 *   vaaid.alua.owner       = G   the lock holder's group, written by it at open
 *   vaaid.alua.fenced.<F>  = G   group F was fenced by group G's takeover; written
 *                                by G; removed by F itself when it opens the
 *                                image again (standby, without the lock: a raw
 *                                omap removal on the header object, never
 *                                rbd_metadata_remove, which would have librbd
 *                                take the lock from a silent holder) or by any
 *                                later holder of group F.
 * One key per fenced group, so that no two writers rewrite the same value.
 */
#define VBLK_RBD_ALUA_PREFIX "vaaid.alua."
#define VBLK_RBD_ALUA_OWNER_KEY VBLK_RBD_ALUA_PREFIX "owner"
#define VBLK_RBD_ALUA_FENCED_KEY VBLK_RBD_ALUA_PREFIX "fenced." /* + the group id */
#define VBLK_RBD_ALUA_MAX_FENCED 8 /* a gateway and its 7 peers */
struct vblk_rbd_alua {
	uint16_t owner;                            /* 0: not known */
	unsigned n_fenced;
	uint16_t fenced[VBLK_RBD_ALUA_MAX_FENCED]; /* ascending, no repeats */
};
/* The record from rbd_metadata_list's answer (keys and values, each a run of
 * NUL-terminated strings, klen/vlen bytes): the keys under the prefix; a value
 * or key that is not a group id (1..65535, decimal as written) is ignored, as
 * are keys after the prefix and fenced groups beyond the first 8. */
void vblk_rbd_alua_parse(const char *keys, size_t klen, const char *vals, size_t vlen,
			 struct vblk_rbd_alua *out);
bool vblk_rbd_alua_equal(const struct vblk_rbd_alua *a, const struct vblk_rbd_alua *b);
/* Is group g marked fenced in r? */
bool vblk_rbd_alua_fenced(const struct vblk_rbd_alua *r, uint16_t g);
/*
 * Stale fenced marks: the lock holder of group own, whose [alua] peers are
 * peers[0..n_peers), removes at open (after writing its record) every mark
 * key "vaaid.alua.fenced.<F>" for which this is true: F is neither own nor
 * one of its peers -- a group no gateway of this deployment answers for (a
 * gateway renumbered or gone), whose mark only crowds the bounded list
 * (VBLK_RBD_ALUA_MAX_FENCED: the marks past the first 8 by key order are not
 * read, so a peer's real mark could be hidden). A peer's mark stays until that
 * peer opens the image again (it may still be fenced: removing its mark
 * would have the other paths report it standby while it answers
 * unavailable). No peers (n_peers 0: the deployment is not known): false,
 * every mark stays. Keys that are not a fenced mark: false. The group this open
 * fenced itself (fenced_now, its lock just broken; 0: none) is never stale,
 * peer or not: the deployment's lists may differ while a gateway is added.
 */
bool vblk_rbd_alua_mark_stale(const char *key, unsigned own, unsigned fenced_now,
			      const uint16_t *peers, unsigned n_peers);
/* A fenced store's look client (vblk_rbd_alua_get) backs off after a failed
 * connect (a gateway cut off from the cluster: each try blocks the watch for
 * the look client's mount timeout): after the failures-th failure in a row,
 * this many looks are skipped before the next try -- 2^failures, at most
 * VBLK_RBD_LOOK_BACKOFF_MAX (watch periods of 5 s: 2 min); 0 for none. */
#define VBLK_RBD_LOOK_BACKOFF_MAX 24u
#define VBLK_RBD_LOOK_MOUNT_TIMEOUT 5u /* s: the look client's client_mount_timeout (at most) */
unsigned vblk_rbd_look_backoff(unsigned failures);

#endif
