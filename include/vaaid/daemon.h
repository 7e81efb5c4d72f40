/*
 * vaaid daemon (src/daemon): configuration, pools, attached devices, the
 * control socket and the main loop. No SCSI or pool logic lives here; this
 * module wires the kernel attach (src/tcmu) to the pool and the handlers.
 *
 * Threading: one thread, one reactor. Poll callbacks (netlink, signals,
 * control socket, D-Bus) only set flags; the main loop handles them between
 * reactor iterations, where the synchronous control-path pool functions
 * (which run the reactor themselves) may be called.
 */
#ifndef VAAID_DAEMON_H
#define VAAID_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vaaid/io.h"
#include "vaaid/lun_policy.h" /* VD_XCOPY_* */
#include "vaaid/pool.h"
#include "vaaid/rbd_owner.h"
#include "vaaid/scsi.h"
#include "vaaid/tcmu_uio.h"

#define VD_MAX_POOLS 32
#define VD_MAX_DEVICES 256
#define VD_POOL_NAME_MAX 32
#define VD_PATH_MAX 1024
/* The longest setting line a configuration file may have (bytes before the newline):
 * Debian's libinih reads a line in pieces of INI_MAX_LINE (200) bytes; checked
 * against it in config.c. pools.conf's "path = PATH" lines are bound by it. */
#define VD_CONF_LINE_MAX 198
#define VD_SUBTYPE "vaai" /* the default handler name ([tcmu] handler) */
#define VD_HANDLER_MAX 32 /* a handler name's longest spelling */
#define VD_MAX_LEAVE 4    /* [tcmu] leave: at most this many handlers */

/* ---- configuration (src/daemon/config.c) */
struct vd_pool_conf {
	char name[VD_POOL_NAME_MAX + 1];
	char path[VD_PATH_MAX];
	uint64_t size;    /* bytes; used when the file is created */
	uint32_t extent;  /* 0 = default */
	uint8_t create;   /* VD_CREATE_*: when the store is missing at start */
	bool live_checkpoints; /* [pool] live_checkpoints = yes|no (default no):
				* vpool_set_live_checkpoints at every open (docs/snapshots.md step 3) */
};
/* [pool] create: whether vaaid creates a configured pool whose store is missing.
 * AUTO: a file yes (as always), an RBD image no (docs/ceph.md "Configuration":
 * a typo in a remote image's name, or a second gateway starting first, must not
 * make a new empty pool; `vaaictl pool create` makes it). */
enum { VD_CREATE_AUTO = 0, VD_CREATE_YES, VD_CREATE_NO };

/* [ceph] conf, client_id, keyring ("": librados' default) for pools on RBD. */
struct vd_ceph_conf {
	char conf[VD_PATH_MAX];
	char client_id[64];
	char keyring[VD_PATH_MAX];
	unsigned op_timeout; /* s, [ceph] op_timeout (default VBLK_RBD_OP_TIMEOUT_DEFAULT) */
};

/* [alua] (docs/ceph.md "ALUA"): this gateway's target port group (and relative target
 * port id) and the other gateways' groups. group 0: no [alua], no ALUA claimed. */
struct vd_alua_conf {
	uint16_t group;
	unsigned n_peers;
	uint16_t peers[SCSI_ALUA_MAX_PEERS];
};

/* [tcmu] (docs/ceph.md "Two gateway identities on one host"): the handler whose
 * user:NAME backstores this daemon serves, and the handlers another daemon on this
 * host serves (left alone: neither served nor refused, no netlink reply). */
struct vd_tcmu_conf {
	char handler[VD_HANDLER_MAX + 1];
	unsigned n_leave;
	char leave[VD_MAX_LEAVE][VD_HANDLER_MAX + 1];
};

/* What this daemon does with a backstore of handler (subtype) NAME. */
enum vd_handler_claim {
	VD_HANDLER_SERVE,  /* [tcmu] handler: ours */
	VD_HANDLER_LEAVE,  /* named in [tcmu] leave: another daemon's, no answer at all */
	VD_HANDLER_REFUSE, /* anything else: refused (the netlink reply says so) */
};
enum vd_handler_claim vd_handler_claim(const struct vd_tcmu_conf *t, const char *subtype);

struct vd_config {
	char state_dir[VD_PATH_MAX];
	char control_socket[VD_PATH_MAX];
	char sysfs_root[256], configfs_root[256], dev_root[256];
	int log_level;           /* enum vlog_level */
	unsigned soft_threshold; /* percent used */
	uint64_t default_pool_size;
	int xcopy_scope;         /* VD_XCOPY_* : which LUNs an EXTENDED COPY may name */
	int whole_granule_writes; /* VD_WHOLE_*: partial granules read and written whole */
	int group_flush;          /* VD_GROUP_*: DSYNC writes made durable by group flushes */
	unsigned n_pools;
	struct vd_pool_conf pools[VD_MAX_POOLS];
	char metrics_listen[64]; /* [metrics] listen = ADDRESS:PORT; "" = no endpoint */
	struct vd_ceph_conf ceph; /* [ceph]: how pools on RBD reach the cluster */
	struct vd_alua_conf alua; /* [alua] */
	struct vd_tcmu_conf tcmu; /* [tcmu] */
};

/* whole_granule_writes (docs/design.md rule 14): as detected for each pool's store
 * (ext4 under Linux < 6.4), always, or never. */
enum { VD_WHOLE_AUTO = 0, VD_WHOLE_ON, VD_WHOLE_OFF };
/* group_flush (docs/design.md rule 15): as detected for each store (a volatile
 * cache without FUA), always, or never (RWF_DSYNC per write). */
enum { VD_GROUP_AUTO = 0, VD_GROUP_ON, VD_GROUP_OFF };

/* Defaults that work with no config file at all. */
void vd_config_defaults(struct vd_config *c);
/*
 * Read an INI file over the defaults. On error returns -EINVAL and writes
 * "FILE:LINE: what is wrong" into err. The "default" pool is added (in the
 * state directory) when the file does not name it.
 */
int vd_config_load(struct vd_config *c, const char *path, char *err, size_t errlen);
/* vd_config_load of <state_dir>/pools.conf, the pools `vaaictl pool create` recorded:
 * the ones it adds get create = no unless their record says create = yes (an
 * explicit auto counts as the default; a recorded pool whose store is missing is
 * refused, never recreated empty). */
int vd_config_load_recorded(struct vd_config *c, const char *path, char *err, size_t errlen);
void vd_config_finish(struct vd_config *c);
/* Names of pools and volumes: [A-Za-z0-9_.-], not starting with '.' or '-'. */
bool vd_valid_name(const char *s, size_t max);

/* ---- pools (src/daemon/pools.c) */
struct vd_pool {
	char name[VD_POOL_NAME_MAX + 1];
	char path[VD_PATH_MAX];
	struct vblk *dev;
	struct vblk *jdev; /* the journal file (<path>.journal) of a pool in a regular file */
	struct vpool *pool; /* NULL while standby */
	/* An RBD pool whose image another gateway holds: not served here (no store
	 * open, pool NULL) until `vaaictl pool takeover NAME` (vd_pool_takeover). */
	bool standby;
	/* With [alua], a standby pool's read-only view (vd_pool_view_refresh): the image
	 * opened without its lock and the pool replayed in memory, for the identity of
	 * the volumes its standby LUNs export. Closed once the LUNs moved to pool. */
	struct vblk *view_dev;
	struct vpool *view;
	/* The pool's shared ALUA record (rbd_owner.h: the owner's group, the fenced
	 * groups), from the image's metadata: read when a LUN attaches, after a
	 * takeover, then by the pool watch (vd_devices_watch) every
	 * VD_POOL_WATCH_PERIOD_NS. Every path answers REPORT TARGET PORT GROUPS from it. */
	struct vblk_rbd_alua alua;
	int whole; /* VD_WHOLE_*, applied to dev when it is opened */
	int group; /* VD_GROUP_*, applied to dev and jdev when they are opened */
	bool live_ckpt; /* [pool] live_checkpoints: applied to pool when it is opened */
};

struct vd_pools {
	struct vd_ceph_conf ceph; /* from the config, for pools on RBD */
	int whole_granules; /* VD_WHOLE_* from the config, for every pool opened or created */
	int group_flush;    /* VD_GROUP_* from the config, likewise */
	unsigned alua_group; /* [alua] group: recorded in an RBD pool's owner record */
	unsigned alua_n_peers; /* [alua] peers: whose fenced marks stay (vblk_rbd_alua_mark_stale) */
	uint16_t alua_peers[SCSI_ALUA_MAX_PEERS];
	unsigned n;
	struct vd_pool p[VD_MAX_POOLS];
};

/* Open (creating a missing file as a sparse pool) every configured pool. */
int vd_pools_open(struct vd_pools *ps, const struct vd_config *c, struct vreactor *r, char *err,
		  size_t errlen);
/* Create a pool and add it (vaaictl pool create): a new sparse file; with force,
 * an existing block device or file that holds no vaaid pool, formatted in place. */
int vd_pool_create(struct vd_pools *ps, struct vreactor *r, const char *name, const char *path,
		   uint64_t size, uint32_t extent, bool force, char *err, size_t errlen);
struct vd_pool *vd_pool_find(struct vd_pools *ps, const char *name);
void vd_pools_close(struct vd_pools *ps);
/*
 * (Re)open a standby RBD pool's read-only view (docs/ceph.md "ALUA"); the previous
 * one, if any, is handed back in *old / *old_dev for the caller to close
 * (vd_pool_view_close_old) once nothing points into it. -EINVAL: not standby.
 */
int vd_pool_view_refresh(const struct vd_pools *ps, struct vd_pool *vp, struct vreactor *r,
			 struct vpool **old, struct vblk **old_dev);
void vd_pool_view_close_old(struct vpool *p, struct vblk *dev);
/* Read an RBD pool's shared ALUA record into *out (include/vaaid/rbd_owner.h)
 * through its store, or its view while standby; a standby pool without a view
 * gets the owner's group from the owner record (its own connection). Unchanged
 * when it cannot be read. */
void vd_pool_alua_read(const struct vd_pools *ps, const struct vd_pool *vp, struct vreactor *r,
		       struct vblk_rbd_alua *out);
/* Take a standby RBD pool over (docs/ceph.md): the image's lock is broken and its
 * holder fenced (blocklisted), then the pool is opened here (recovery) and its
 * shared ALUA record read (vp->alua: the group it fenced). -EINVAL: not
 * a standby pool (err says why). Only an explicit decision calls it. */
int vd_pool_takeover(struct vd_pools *ps, struct vreactor *r, const char *name, char *err,
		     size_t errlen);

/* ---- attached TCMU devices (src/daemon/devices.c) */
struct vd_device;
struct vd_devices;

struct vd_env {
	struct vreactor *r;
	struct vd_pools *pools;
	const struct vd_config *conf;
};

int vd_devices_new(const struct vd_env *env, struct vd_devices **out);
/* Netlink ADDED_DEVICE / startup scan: the UIO name and minor. 0 or -errno (logged). */
int vd_device_add(struct vd_devices *ds, const char *uio_name, unsigned minor, bool reset_ring);
int vd_device_remove(struct vd_devices *ds, const char *uio_name);
/* RECONFIG: any of cfg / size / writecache may be given. */
int vd_device_reconfig(struct vd_devices *ds, const char *uio_name, const char *cfg,
		       const uint64_t *size, const int *writecache);
/* Pick up every vaai UIO device that already exists (daemon restart). */
int vd_devices_scan(struct vd_devices *ds);
/* Watch the soft threshold of every pool not watched yet (at start, after pool create). */
void vd_devices_watch_pools(struct vd_devices *ds);
/* After a pool's capacity changed (pool grow): its threshold and its LUNs' mode page. */
void vd_devices_threshold_update(struct vd_devices *ds, struct vd_pool *vp);
/* The ALUA states of a pool's LUNs (with [alua]; src/scsi/alua.c scsi_alua_set_states):
 * this gateway's state, the other groups' from the pool's shared record (vp->alua).
 * Called around a takeover. */
void vd_devices_alua(struct vd_devices *ds, const struct vd_pool *vp, uint8_t local);
/* The pool watch's look (include/vaaid/pool_watch.h), from the main loop once per
 * VD_POOL_WATCH_PERIOD_NS: each active RBD pool's lock (lost: fenced, its LUNs
 * unavailable), each standby pool's owner group (changed: its LUNs' peer states
 * follow). The librbd calls run on voffload_run's worker. */
void vd_devices_watch(struct vd_devices *ds);
/* A standby pool was taken over (vd_pool_takeover succeeded): its standby LUNs move
 * from the read-only view to the pool (the same volume: NAA and block size) and go
 * active/optimized; one whose volume is gone stays unavailable. The view is closed
 * when nothing points into it. */
void vd_devices_pool_served(struct vd_devices *ds, struct vd_pool *vp);
/*
 * The TCMU netlink callbacks (src/daemon/nl_events.c; tcmu_nl_open's ops), their
 * argument a struct vd_nl_target: events for backstores of a [tcmu] leave handler
 * get no reply (TCMU_NL_NO_REPLY) while that handler's daemon runs (refused when it
 * does not: vd_handler_running), the others go to vd_device_add / _remove /
 * _reconfig, which serve the [tcmu] handler's and refuse any other.
 */
struct tcmu_nl_ops;
struct vd_nl_target {
	struct vd_devices *devs;
	const struct vd_tcmu_conf *tcmu;
	const char *configfs_root; /* where the left handlers' daemons are looked for */
};
extern const struct tcmu_nl_ops vd_nl_ops;
/*
 * Handler liveness (src/daemon/handler_alive.c): vd_handler_hold marks this process
 * as the one serving handler on configfs_root (an fd to keep open while netlink is
 * listened to; -EADDRINUSE: another running daemon serves it). vd_handler_running:
 * 1 when a process holds it, 0 when none does, -errno when it cannot tell.
 */
int vd_handler_hold(const char *configfs_root, const char *handler);
int vd_handler_running(const char *configfs_root, const char *handler);
/* Volume in use by an attached device? */
bool vd_devices_uses(const struct vd_devices *ds, const char *pool, const char *volume);
unsigned vd_devices_count(const struct vd_devices *ds);
/* The i-th device's names and ring state (vaaictl status); -ENOENT past the last. */
struct tcmu_dev_diag;
struct vd_device_info {
	const char *dev, *pool, *volume;
	unsigned minor;
	uint8_t naa[16]; /* the volume's NAA designator (VPD 83h) */
};
int vd_device_diag(const struct vd_devices *ds, unsigned i, struct vd_device_info *info,
		   struct tcmu_dev_diag *diag);
/* Device i's command counters (a copy; reactor thread): 0, or -ENOENT past the last. */
int vd_device_stats(const struct vd_devices *ds, unsigned i, struct vd_device_info *info,
		    struct vaai_lun_stats *st);
/* Stop taking commands on every device, wait for in-flight ones, free. */
void vd_devices_shutdown(struct vd_devices *ds);
void vd_devices_free(struct vd_devices *ds);

/* Split "<pool>/<volume>"; -EINVAL with a message in err when malformed. */
int vd_parse_cfgstring(const char *cfg, char *pool, size_t plen, char *vol, size_t vlen, char *err,
		       size_t errlen);

/* ---- systemd notification (src/daemon/notify.c): Type=notify, STATUS, watchdog */
struct vd_notify;
typedef void (*vd_status_fn)(void *arg, char *buf, size_t len); /* one STATUS line */
int vd_notify_new(struct vreactor *r, vd_status_fn status, void *arg, struct vd_notify **out);
void vd_notify_ready(struct vd_notify *n);   /* READY=1, then STATUS/WATCHDOG from a timer */
void vd_notify_stopping(struct vd_notify *n); /* STOPPING=1; from then on pings only */
void vd_notify_service(struct vd_notify *n);  /* main loop: re-arm a timer whose submission failed */
bool vd_notify_watchdog(const struct vd_notify *n);
void vd_notify_free(struct vd_notify *n);     /* after vreactor_destroy */

/* ---- the Prometheus endpoint (src/daemon/metrics*.c) */
#include <sys/socket.h>
/* "ADDRESS:PORT" or "[ADDRESS]:PORT", numeric (metrics_listen.c): 0 or -EINVAL. */
int vd_metrics_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len);

#endif
