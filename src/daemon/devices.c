/*
 * The daemon's TCMU devices: one per LIO user:vaai backstore (user:NAME with
 * vaaid.conf [tcmu] handler = NAME).
 *
 * How this works: a device is known by its UIO name
 * "tcm-user/<hba>/<dev>/<handler>/<pool>/<volume>". Adding one (netlink
 * ADDED_DEVICE, or the startup scan of /sys/class/uio for a restarted
 * daemon) checks the cfgstring, reads LIO's attributes from configfs
 * (hw_block_size must be the volume's, hw_max_sectors bounds the maximum
 * transfer), finds the volume or creates it thin with the size LIO gives,
 * maps the UIO region and starts a tcmu_dev on the shared reactor. Removing
 * one stops taking commands, lets the in-flight ones complete, then frees.
 * A volume is never deleted here: deleting a backstore keeps its data.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vaaid/daemon.h"
#include "vaaid/lun.h"
#include "vaaid/lun_policy.h"
#include "vaaid/pool_watch.h"
#include "vaaid/tcmu_dev.h"
#include "vaaid/tcmu_nl.h"
#include "vaaid/util.h"

struct vd_device {
	char uio_name[TCMU_NL_NAME_MAX];
	char label[200]; /* "<dev> (<pool>/<volume>)" for log lines */
	char pool[VD_POOL_NAME_MAX + 1], volume[VPOOL_NAME_MAX + 1];
	char hba[16], dev[TCMU_NL_NAME_MAX];
	struct vd_backstore bs; /* the names above and LIO's attributes */
	struct tcmu_uio uio;
	struct scsi_lun lun;
	struct tcmu_dev *tdev;
	struct vvol *vol;
	uint64_t max_xfer;
	/* Its volume was not in the pool when a standby pool was taken over (deleted or
	 * replaced meanwhile): the LUN stays unavailable, vol is NULL (vd_lun_pool_served). */
	bool lost;
};

/* One per pool whose soft threshold is watched (the pool's callback argument). */
struct vd_thr {
	struct vd_devices *ds;
	struct vd_pool *vp;
	bool on;
};

struct vd_devices {
	struct vd_env env;
	unsigned n;
	struct vd_device *d[VD_MAX_DEVICES];
	struct vd_thr thr[VD_MAX_POOLS];
};

int vd_devices_new(const struct vd_env *env, struct vd_devices **out)
{
	struct vd_devices *ds = calloc(1, sizeof(*ds));
	if (!ds)
		return -ENOMEM;
	ds->env = *env;
	*out = ds;
	return 0;
}

unsigned vd_devices_count(const struct vd_devices *ds) { return ds->n; }

/* Device i (NULL past the last) with its names in *info. */
static const struct vd_device *device_at(const struct vd_devices *ds, unsigned i,
					 struct vd_device_info *info)
{
	if (i >= ds->n)
		return NULL;
	const struct vd_device *d = ds->d[i];
	*info = (struct vd_device_info){.dev = d->dev, .pool = d->pool, .volume = d->volume,
					.minor = d->uio.minor};
	memcpy(info->naa, d->lun.info.naa, sizeof(info->naa)); /* the volume's (a lost one's too) */
	return d;
}

int vd_device_diag(const struct vd_devices *ds, unsigned i, struct vd_device_info *info,
		   struct tcmu_dev_diag *diag)
{
	const struct vd_device *d = device_at(ds, i, info);
	if (!d)
		return -ENOENT;
	tcmu_dev_get_diag(d->tdev, diag);
	return 0;
}

int vd_device_stats(const struct vd_devices *ds, unsigned i, struct vd_device_info *info,
		    struct vaai_lun_stats *st)
{
	const struct vd_device *d = device_at(ds, i, info);
	if (!d)
		return -ENOENT;
	*st = d->lun.stats;
	return 0;
}

int vd_parse_cfgstring(const char *cfg, char *pool, size_t plen, char *vol, size_t vlen, char *err,
		       size_t errlen)
{
	const char *slash = strchr(cfg, '/');
	if (!slash) {
		snprintf(err, errlen, "cfgstring '%s' must be <pool>/<volume>", cfg);
		return -EINVAL;
	}
	size_t pn = (size_t)(slash - cfg);
	if (pn == 0 || pn >= plen) {
		snprintf(err, errlen, "cfgstring '%s': bad pool name", cfg);
		return -EINVAL;
	}
	memcpy(pool, cfg, pn);
	pool[pn] = 0;
	if (strlen(slash + 1) >= vlen) {
		snprintf(err, errlen, "cfgstring '%s': volume name longer than %zu bytes", cfg, vlen - 1);
		return -EINVAL;
	}
	snprintf(vol, vlen, "%s", slash + 1);
	if (!vd_valid_name(pool, VD_POOL_NAME_MAX)) {
		snprintf(err, errlen, "cfgstring '%s': illegal pool name '%s' (letters, digits, _ . -)",
			 cfg, pool);
		return -EINVAL;
	}
	if (!vd_valid_name(vol, VPOOL_NAME_MAX)) {
		snprintf(err, errlen,
			 "cfgstring '%s': illegal volume name '%s' (letters, digits, _ . -; at most %d)",
			 cfg, vol, VPOOL_NAME_MAX);
		return -EINVAL;
	}
	return 0;
}

static struct vd_device *find(struct vd_devices *ds, const char *uio_name)
{
	for (unsigned i = 0; i < ds->n; i++)
		if (!strcmp(ds->d[i]->uio_name, uio_name))
			return ds->d[i];
	return NULL;
}

bool vd_devices_uses(const struct vd_devices *ds, const char *pool, const char *volume)
{
	for (unsigned i = 0; i < ds->n; i++)
		if (!strcmp(ds->d[i]->pool, pool) && !strcmp(ds->d[i]->volume, volume))
			return true;
	return false;
}

static void free_device(struct vd_device *d)
{
	tcmu_dev_destroy(d->tdev);
	tcmu_uio_close(&d->uio);
	free(d);
}

/* Wait (running the reactor) until the device has nothing in flight. */
static void drain(struct vd_devices *ds, struct vd_device *d)
{
	tcmu_dev_stop(d->tdev);
	while (tcmu_dev_inflight(d->tdev) > 0)
		if (vreactor_run_once(ds->env.r, 100) < 0)
			break;
}

/*
 * EXTENDED COPY peer hook (struct scsi_lun.xcopy_peer): the served LUN with
 * that NAA, if vd_xcopy_peer's policy (xcopy_scope; co-visibility read from
 * configfs at the time of the copy) allows it.
 */
static struct scsi_lun *dev_xcopy_peer(struct scsi_lun *self, const uint8_t naa[16], int *why)
{
	struct vd_devices *ds = self->peer_arg;
	struct vd_device *me = NULL, *peer = NULL;
	for (unsigned i = 0; i < ds->n; i++) {
		if (&ds->d[i]->lun == self)
			me = ds->d[i];
		if (!memcmp(ds->d[i]->lun.info.naa, naa, 16))
			peer = ds->d[i];
	}
	*why = SCSI_PEER_UNKNOWN;
	if (!me)
		return NULL;
	const struct vd_xcopy_policy pol = {.scope = ds->env.conf->xcopy_scope,
					    .configfs_root = ds->env.conf->configfs_root};
	return vd_xcopy_peer(&pol, self, &me->bs, peer ? &peer->lun : NULL, peer ? &peer->bs : NULL,
			     why);
}

/*
 * LIO's default hw_max_sectors for a TCMU backstore is 128: 64 KiB commands at
 * 512-byte blocks. Initiators (ESXi included) then cut every larger I/O into
 * commands that small; vaaid cannot raise it (the attribute is fixed once the
 * device is enabled), so the admin is told how, once per attach.
 */
#define VD_GOOD_MAX_XFER (1u << 20)
#define VD_ADVISED_MAX_XFER (4u << 20)

static void warn_small_transfers(const struct vd_device *d, const struct tcmu_lio_attrs *la,
				 uint64_t area)
{
	if (d->max_xfer >= VD_GOOD_MAX_XFER)
		return;
	if ((uint64_t)la->hw_max_sectors * la->hw_block_size > area)
		vlog_warn(d->label, "commands of at most %" PRIu64 " KiB (the TCMU data area is %" PRIu64
			  " KiB): initiators split larger I/O; give the backstore a larger data area "
			  "(targetcli ... create ... control=max_data_area_mb=64)",
			  d->max_xfer >> 10, area >> 10);
	else
		vlog_warn(d->label, "commands of at most %" PRIu64 " KiB (hw_max_sectors %u x %u "
			  "bytes): initiators split larger I/O; for %u MiB commands create the "
			  "backstore with hw_max_sectors=%u (targetcli ... create ... hw_max_sectors=%u)",
			  d->max_xfer >> 10, la->hw_max_sectors, la->hw_block_size,
			  VD_ADVISED_MAX_XFER >> 20, VD_ADVISED_MAX_XFER / la->hw_block_size,
			  VD_ADVISED_MAX_XFER / la->hw_block_size);
}

/* Is d's volume in p, the same one (NAA, block size)? *v: it. */
static bool same_volume(const struct vd_device *d, struct vpool *p, struct vvol **v)
{
	return vd_lun_same_volume(&d->lun, p, d->volume, v);
}

/* Serve d from v (vd_lun_bind_volume). */
static void bind_volume(struct vd_device *d, struct vvol *v)
{
	vd_lun_bind_volume(&d->lun, v);
	d->vol = v;
}

/*
 * A standby pool's view must show volume: reopen it when it does not (a volume
 * created by the owner since), moving the pool's standby LUNs to the new view, all
 * or none (a LUN whose volume the new view lacks keeps the old view: refused).
 */
static int standby_view(struct vd_devices *ds, struct vd_pool *vp, const char *volume)
{
	if (vp->view && vpool_volume_find(vp->view, volume))
		return 0;
	struct vpool *old;
	struct vblk *old_dev;
	int rc = vd_pool_view_refresh(ds->env.pools, vp, ds->env.r, &old, &old_dev);
	if (rc < 0)
		return rc;
	struct vvol *v;
	for (unsigned i = 0; i < ds->n; i++)
		if (!strcmp(ds->d[i]->pool, vp->name) && !same_volume(ds->d[i], vp->view, &v)) {
			vlog_err(ds->d[i]->label, "pool %s: volume %s changed in the owner's pool: "
				 "the view is not refreshed", vp->name, ds->d[i]->volume);
			struct vpool *mine = vp->view;
			struct vblk *mine_dev = vp->view_dev;
			vp->view = old;
			vp->view_dev = old_dev;
			vd_pool_view_close_old(mine, mine_dev);
			return -ESTALE;
		}
	for (unsigned i = 0; i < ds->n; i++)
		if (!strcmp(ds->d[i]->pool, vp->name) && same_volume(ds->d[i], vp->view, &v))
			bind_volume(ds->d[i], v);
	vd_pool_view_close_old(old, old_dev);
	return 0;
}

static void pool_alua_update(struct vd_devices *ds, struct vd_pool *vp, unsigned ev,
			     const struct vblk_rbd_alua *rec);

int vd_device_add(struct vd_devices *ds, const char *uio_name, unsigned minor, bool reset_ring)
{
	struct tcmu_uio_name un;
	char err[512];
	if (tcmu_parse_uio_name(uio_name, &un) < 0) {
		vlog_err(NULL, "'%s' is not a TCMU device name: refused", uio_name);
		return -EINVAL;
	}
	const char *handler = ds->env.conf->tcmu.handler;
	if (vd_handler_claim(&ds->env.conf->tcmu, un.subtype) != VD_HANDLER_SERVE) {
		/* vaaid replaces tcmu-runner on a host: nobody else serves other handlers
		 * (but another vaaid's, [tcmu] leave, which src/daemon/nl_events.c leaves). */
		vlog_warn(un.dev, "backstore %s is user:%s, not user:%s: refused", un.dev, un.subtype,
			  handler);
		return -ENOENT;
	}
	if (find(ds, uio_name)) {
		vlog_info(un.dev, "%s is already served", un.dev);
		return 0;
	}
	if (ds->n >= VD_MAX_DEVICES) {
		vlog_err(un.dev, "%s: too many devices (at most %d)", un.dev, VD_MAX_DEVICES);
		return -ENOSPC;
	}
	struct vd_device *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->uio.fd = -1;
	snprintf(d->uio_name, sizeof(d->uio_name), "%s", uio_name);
	snprintf(d->hba, sizeof(d->hba), "%s", un.hba);
	snprintf(d->dev, sizeof(d->dev), "%s", un.dev);
	int rc = vd_parse_cfgstring(un.cfg, d->pool, sizeof(d->pool), d->volume, sizeof(d->volume),
				    err, sizeof(err));
	if (rc < 0) {
		vlog_err(un.dev, "%s: %s", un.dev, err);
		goto fail;
	}
	snprintf(d->label, sizeof(d->label), "%.60s (%s/%.64s)", un.dev, d->pool, d->volume);
	struct vd_pool *vp = vd_pool_find(ds->env.pools, d->pool);
	if (!vp) {
		vlog_err(d->label, "%s: unknown pool '%s' (vaaictl pool list shows the pools)", un.dev,
			 d->pool);
		rc = -ENOENT;
		goto fail;
	}
	const struct vd_alua_conf *al = &ds->env.conf->alua;
	struct vpool *pool = vp->pool;
	if (vp->standby && !al->group) {
		vlog_err(d->label, "%s: pool '%s' is standby here (another gateway serves it; "
			 "`vaaictl pool takeover %s` takes it over; with [alua] its LUNs are exported "
			 "as standby)", un.dev, d->pool, d->pool);
		rc = -EBUSY;
		goto fail;
	}
	if (vp->standby) {
		/* ALUA standby (docs/ceph.md "ALUA"): the volume's identity from a read-only
		 * view of the pool; nothing else is served until a takeover */
		rc = standby_view(ds, vp, d->volume);
		if (rc < 0) {
			vlog_err(d->label, "%s: pool '%s' is standby here and its volumes cannot be "
				 "read: %s", un.dev, d->pool, strerror(-rc));
			goto fail;
		}
		pool = vp->view;
	}
	if (vd_devices_uses(ds, d->pool, d->volume)) {
		vlog_err(d->label, "%s: volume %s/%s is already served by another backstore: refused",
			 un.dev, d->pool, d->volume);
		rc = -EBUSY;
		goto fail;
	}
	d->bs = (struct vd_backstore){.hba = d->hba, .dev = d->dev, .pool = d->pool,
				      .volume = d->volume, .label = d->label};
	rc = tcmu_lio_read_attrs(ds->env.conf->configfs_root, un.hba, un.dev, &d->bs.attrs);
	if (rc < 0) {
		vlog_err(d->label, "cannot read LIO attributes of %s: %s", un.dev, strerror(-rc));
		goto fail;
	}
	rc = vd_backstore_volume(pool, &d->bs, &d->vol);
	if (rc < 0)
		goto fail;
	if (reset_ring) {
		rc = tcmu_lio_reset_ring(ds->env.conf->configfs_root, un.hba, un.dev);
		if (rc < 0)
			vlog_warn(d->label, "%s: ring reset not available (%s): taking the ring as it is",
				  un.dev, strerror(-rc));
	}
	rc = tcmu_uio_open(ds->env.conf->sysfs_root, ds->env.conf->dev_root, minor, &d->uio);
	if (rc < 0) {
		vlog_err(d->label, "cannot map /dev/uio%u: %s", minor, strerror(-rc));
		goto fail;
	}
	uint64_t area = vd_ring_data_area(d->uio.map, d->uio.map_size);
	d->max_xfer = vd_backstore_lun_init(&d->lun, d->vol, &d->bs, area,
					    ds->env.conf->soft_threshold);
	d->lun.xcopy_peer = dev_xcopy_peer;
	d->lun.peer_arg = ds;
	if (al->group) { /* the pool's shared ALUA record, from the image's metadata: the
			  * pool's LUNs already here follow it too */
		struct vblk_rbd_alua rec = vp->alua;
		vd_pool_alua_read(ds->env.pools, vp, ds->env.r, &rec);
		pool_alua_update(ds, vp, VD_WATCH_NONE, &rec);
	}
	/* [alua]: this gateway's group, active where the pool is served, standby where
	 * another gateway holds it; the peers only for a pool they can serve too (RBD) */
	vd_backstore_alua(&d->lun, al->group, al->peers, al->n_peers, vblk_rbd_spec(vp->path),
			  vp->standby ? SCSI_ALUA_STANDBY : SCSI_ALUA_ACTIVE_OPTIMIZED, &vp->alua);
	rc = tcmu_dev_create(ds->env.r, d->uio.map, d->uio.map_size, d->uio.fd, d->uio.fd, &d->lun,
			     &d->tdev);
	if (rc < 0) {
		vlog_err(d->label, "cannot attach the ring of %s: %s", un.dev, strerror(-rc));
		goto fail;
	}
	ds->d[ds->n++] = d;
	vlog_info(d->label, "serving %s as %s/%s (uio%u, max transfer %" PRIu64 " bytes)", un.dev,
		  d->pool, d->volume, minor, d->max_xfer);
	warn_small_transfers(d, &d->bs.attrs, area);
	return 0;
fail:
	free_device(d);
	return rc;
}

void vd_devices_alua(struct vd_devices *ds, const struct vd_pool *vp, uint8_t local)
{
	for (unsigned i = 0; i < ds->n; i++)
		if (!strcmp(ds->d[i]->pool, vp->name) && ds->d[i]->lun.alua.enabled &&
		    !ds->d[i]->lost)
			scsi_alua_set_states(&ds->d[i]->lun, local, vp->alua.owner);
}

/* Does the pool have a LUN here (one that is not lost)? */
static bool pool_has_luns(const struct vd_devices *ds, const struct vd_pool *vp)
{
	for (unsigned i = 0; i < ds->n; i++)
		if (!strcmp(ds->d[i]->pool, vp->name) && !ds->d[i]->lost)
			return true;
	return false;
}

/* One look of the pool watch at one pool. */
static void watch_pool(struct vd_devices *ds, struct vd_pool *vp)
{
	/* a standby pool without LUNs has nothing to tell (and no view open) */
	if (!vblk_rbd_spec(vp->path) || (vp->standby && !pool_has_luns(ds, vp)))
		return;
	/* without LUNs only the lock matters (a fenced pool then makes no client of
	 * its own to read the record) */
	struct vblk_rbd_alua rec = vp->alua;
	unsigned ev = vd_store_watch(vp->standby ? vp->view_dev : vp->dev, vp->standby,
				     pool_has_luns(ds, vp) ? &rec : NULL);
	pool_alua_update(ds, vp, ev, &rec);
}

/* What a look at the pool found (ev) and the shared ALUA record it read (rec):
 * applied to every LUN of the pool here when the record differs from the one
 * they show (vp->alua; vd_alua_record_update) or the store was fenced. One
 * rule for the watch and a LUN add. */
static void pool_alua_update(struct vd_devices *ds, struct vd_pool *vp, unsigned ev,
			     const struct vblk_rbd_alua *rec)
{
	uint16_t was = vp->alua.owner;
	ev |= vd_alua_record_update(&vp->alua, rec);
	if (ev == VD_WATCH_NONE)
		return;
	if (ev & VD_WATCH_FENCED) /* the store logged FENCED; `vaaictl status` shows "fenced" */
		vlog_err(vp->name, "pool %s: fenced while idle (another gateway holds its "
			 "image's lock): its LUNs here are unavailable", vp->name);
	if (ev & VD_WATCH_OWNER) {
		char f[VBLK_RBD_ALUA_MAX_FENCED * 6 + 1] = "none"; /* ",65535" each */
		for (size_t i = 0, n = 0; i < rec->n_fenced && n < sizeof(f); i++) {
			int w = snprintf(f + n, sizeof(f) - n, "%s%u", i ? "," : "", rec->fenced[i]);
			n = w < 0 ? sizeof(f) : n + (size_t)w; /* cut, never past the buffer */
		}
		vlog_warn(vp->name, "pool %s: ALUA record: held by the gateway of group %u (was "
			  "%u), fenced groups %s: its LUNs here report that", vp->name, rec->owner,
			  was, f);
	}
	for (unsigned k = 0; k < ds->n; k++)
		if (!strcmp(ds->d[k]->pool, vp->name) && !ds->d[k]->lost)
			vd_lun_watch_apply(&ds->d[k]->lun, ev, &vp->alua);
}

void vd_devices_watch(struct vd_devices *ds)
{
	struct vd_pools *ps = ds->env.pools;
	for (unsigned i = 0; i < ps->n; i++)
		watch_pool(ds, &ps->p[i]);
}

void vd_devices_pool_served(struct vd_devices *ds, struct vd_pool *vp)
{
	for (unsigned i = 0; i < ds->n; i++) {
		struct vd_device *d = ds->d[i];
		if (strcmp(d->pool, vp->name) || d->lost)
			continue;
		int rc = vd_lun_pool_served(&d->lun, vp->pool, d->volume, &vp->alua);
		d->vol = d->lun.vol; /* the pool's volume, or none: lost */
		if (rc == 0)
			continue;
		/* deleted or replaced by the owner after this LUN was attached standby */
		vlog_err(d->label, "pool %s taken over, but volume %s is no longer the one this LUN "
			 "exported: unavailable (delete the backstore)", vp->name, d->volume);
		d->lost = true;
	}
	/* nothing points into the view any more (a lost LUN points at no volume) */
	vd_pool_view_close_old(vp->view, vp->view_dev);
	vp->view = NULL;
	vp->view_dev = NULL;
}

int vd_device_remove(struct vd_devices *ds, const char *uio_name)
{
	for (unsigned i = 0; i < ds->n; i++) {
		struct vd_device *d = ds->d[i];
		if (strcmp(d->uio_name, uio_name))
			continue;
		drain(ds, d);
		vlog_info(d->label, "%s removed (volume %s/%s kept)", d->dev, d->pool, d->volume);
		free_device(d);
		ds->d[i] = ds->d[--ds->n];
		return 0;
	}
	vlog_info(NULL, "remove of %s: not served here", uio_name);
	return 0;
}

int vd_device_reconfig(struct vd_devices *ds, const char *uio_name, const char *cfg,
		       const uint64_t *size, const int *writecache)
{
	struct vd_device *d = find(ds, uio_name);
	if (!d) {
		vlog_err(NULL, "reconfig of %s: not served here", uio_name);
		return -ENODEV;
	}
	if (cfg) {
		struct tcmu_uio_name un;
		char cur[TCMU_NL_NAME_MAX];
		tcmu_parse_uio_name(d->uio_name, &un); /* parsed fine when the device was added */
		snprintf(cur, sizeof(cur), "%s/%s", un.subtype, un.cfg);
		if (strcmp(cfg, cur)) {
			vlog_err(d->label, "reconfig of %s: changing the cfgstring from '%s' to '%s' is "
				 "refused (delete and create the backstore instead)", d->dev, cur, cfg);
			return -EINVAL;
		}
	}
	if (writecache && *writecache) {
		vlog_err(d->label, "reconfig of %s: write cache is refused (WCE=0: writes complete "
			 "only when durable)", d->dev);
		return -EINVAL;
	}
	if (size && !d->vol) {
		vlog_err(d->label, "reconfig of %s: its volume is gone (the LUN is unavailable; "
			 "delete the backstore)", d->dev);
		return -ENODEV;
	}
	if (size) {
		struct vvol_info vi;
		vvol_get_info(d->vol, &vi);
		if (*size < vi.size) {
			vlog_err(d->label, "reconfig of %s: shrinking %s/%s from %" PRIu64 " to %" PRIu64
				 " bytes is refused", d->dev, d->pool, d->volume, vi.size, *size);
			return -EINVAL;
		}
		if (*size > vi.size) {
			int rc = vvol_grow(d->vol, *size);
			if (rc < 0) {
				vlog_err(d->label, "cannot grow %s/%s: %s", d->pool, d->volume,
					 strerror(-rc));
				return rc;
			}
			vvol_get_info(d->vol, &vi);
			/* capacity, THRESHOLD EXPONENT and their unit attentions */
			vaaid_lun_resize(&d->lun, vi.size / vi.block_size);
			vlog_info(d->label, "%s grown to %" PRIu64 " bytes", d->dev, vi.size);
		}
	}
	return 0;
}

/*
 * Soft threshold crossed upwards (SBC-4 4.7.3.7.2): every LUN of that pool reports
 * UNIT ATTENTION / THIN PROVISIONING SOFT THRESHOLD REACHED on its next command.
 * TCMU does not tell vaaid the I_T nexus of a command, so the unit attention goes
 * to whichever initiator sends the LUN's next command, once per LUN (SITUA=0 is
 * reported; docs/daemon.md). Runs on the reactor thread (the pool's callback).
 */
static void pool_threshold_crossed(void *arg, bool above)
{
	struct vd_thr *t = arg;
	struct vd_devices *ds = t->ds;
	if (!above) {
		vlog_info(t->vp->name, "pool %s is below its soft threshold again (re-armed)",
			  t->vp->name);
		return;
	}
	vlog_warn(t->vp->name, "pool %s reached its soft threshold (%u %% used): telling its LUNs",
		  t->vp->name, ds->env.conf->soft_threshold);
	for (unsigned i = 0; i < ds->n; i++)
		if (ds->d[i]->vol && vvol_pool(ds->d[i]->vol) == t->vp->pool)
			scsi_lun_post_soft_threshold_ua(&ds->d[i]->lun);
}

void vd_devices_watch_pools(struct vd_devices *ds)
{
	struct vd_pools *ps = ds->env.pools;
	for (unsigned i = 0; i < ps->n && i < VD_MAX_POOLS; i++) {
		struct vd_thr *t = &ds->thr[i];
		if (t->on || !ps->p[i].pool)
			continue;
		*t = (struct vd_thr){.ds = ds, .vp = &ps->p[i], .on = true};
		vpool_set_soft_threshold(ps->p[i].pool,
					 vaaid_soft_threshold_bytes(ps->p[i].pool, ds->env.conf->soft_threshold),
					 pool_threshold_crossed, t);
	}
}

void vd_devices_threshold_update(struct vd_devices *ds, struct vd_pool *vp)
{
	struct vd_pools *ps = ds->env.pools;
	uint64_t bytes = vaaid_soft_threshold_bytes(vp->pool, ds->env.conf->soft_threshold);
	for (unsigned i = 0; i < ps->n && i < VD_MAX_POOLS; i++)
		if (&ps->p[i] == vp && ds->thr[i].on) /* same watcher: only a real crossing reports */
			vpool_set_soft_threshold(vp->pool, bytes, pool_threshold_crossed, &ds->thr[i]);
	for (unsigned i = 0; i < ds->n; i++)
		if (ds->d[i]->vol && vvol_pool(ds->d[i]->vol) == vp->pool)
			vaaid_lun_update_soft_threshold(&ds->d[i]->lun, bytes);
}

int vd_devices_scan(struct vd_devices *ds)
{
	char path[512], name[TCMU_NL_NAME_MAX];
	snprintf(path, sizeof(path), "%s/class/uio", ds->env.conf->sysfs_root);
	DIR *dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	struct dirent *e;
	int found = 0;
	while ((e = readdir(dir))) {
		unsigned minor;
		char tail;
		if (sscanf(e->d_name, "uio%u%c", &minor, &tail) != 1)
			continue;
		if (tcmu_uio_read_name(ds->env.conf->sysfs_root, minor, name, sizeof(name)) < 0)
			continue;
		struct tcmu_uio_name un;
		if (tcmu_parse_uio_name(name, &un) < 0 ||
		    vd_handler_claim(&ds->env.conf->tcmu, un.subtype) != VD_HANDLER_SERVE)
			continue;
		if (vd_device_add(ds, name, minor, true) == 0)
			found++;
	}
	closedir(dir);
	return found;
}

void vd_devices_shutdown(struct vd_devices *ds)
{
	for (unsigned i = 0; i < ds->n; i++)
		tcmu_dev_stop(ds->d[i]->tdev);
	for (unsigned i = 0; i < ds->n; i++)
		drain(ds, ds->d[i]);
}

void vd_devices_free(struct vd_devices *ds)
{
	if (!ds)
		return;
	for (unsigned i = 0; i < ds->n; i++)
		free_device(ds->d[i]);
	free(ds);
}
