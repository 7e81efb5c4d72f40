/*
 * The control socket's requests (include/vaaid/control_request.h): one request
 * line in, one JSON answer out, no socket (src/daemon/control.c is the
 * socket and connection half; tests/fuzz/fuzz_control.c calls this directly).
 *
 * How this works: the line is split into words (vd_control_tokenize, strtok_r:
 * no hidden state); the first two words pick the request; each request checks
 * its own words and acts on the pools (synchronously: pool create and pool grow
 * drive the reactor themselves, so this runs on the main loop, never from a
 * reactor callback). Every answer is an object with "ok": true, or "ok": false
 * and an "error" string naming what is wrong. Pools created here are appended
 * to <state_dir>/pools.conf so that the daemon opens them again after a restart.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "vaaid/control_request.h"
#include "vaaid/tcmu_dev.h"
#include "vaaid/util.h"

/* {"ok": false, "error": <printf of fmt>}. The message is sized to fit (no
 * fixed buffer: a long pool path or a long error from below is never cut). */
json_object *vd_control_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(n >= 0 ? msg : "out of memory"));
	if (n >= 0)
		free(msg);
	return o;
}

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_bool(json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

/* Every served device with its ring state: what a stalled LUN is waiting for
 * (ring.next != ring.cmd_head: queued and not taken; inflight > 0: taken and
 * not answered; notify_queued without doorbells growing: answers not rung). */
static json_object *devices_obj(const struct vd_control_env *c)
{
	json_object *arr = json_object_new_array();
	struct vd_device_info info;
	struct tcmu_dev_diag g;
	for (unsigned i = 0; vd_device_diag(c->devs, i, &info, &g) == 0; i++) {
		json_object *d = json_object_new_object(), *r = json_object_new_object();
		json_object_object_add(d, "dev", json_object_new_string(info.dev));
		json_object_object_add(d, "pool", json_object_new_string(info.pool));
		json_object_object_add(d, "volume", json_object_new_string(info.volume));
		add_u64(d, "uio", info.minor);
		add_u64(r, "cmd_head", g.cmd_head);
		add_u64(r, "cmd_tail", g.cmd_tail);
		add_u64(r, "next", g.next);
		add_u64(r, "inflight", g.inflight);
		add_bool(r, "poll_armed", g.poll_armed);
		add_bool(r, "kick_queued", g.kick_queued);
		add_bool(r, "notify_queued", g.notify_queued);
		add_bool(r, "broken", g.broken);
		add_bool(r, "stopped", g.stopped);
		add_u64(r, "wakeups", g.wakeups);
		add_u64(r, "drains", g.drains);
		add_u64(r, "taken", g.taken);
		add_u64(r, "completed", g.completed);
		add_u64(r, "doorbells", g.doorbells);
		json_object_object_add(d, "ring", r);
		json_object_array_add(arr, d);
	}
	return arr;
}

/* What the pool waits for (a stall: journal paused with room waiters, a checkpoint
 * that does not end, data requests that never complete). */
static json_object *pool_diag_obj(const struct vpool *p)
{
	struct vpool_diag g;
	vpool_get_diag(p, &g);
	json_object *o = json_object_new_object();
	add_u64(o, "inflight", g.inflight);
	add_bool(o, "checkpoint_running", g.ckpt_running);
	add_bool(o, "failed", g.failed);
	add_u64(o, "redo_inflight", g.redo_inflight);
	add_u64(o, "redo_pending", g.redo_pending);
	add_bool(o, "redo_checkpoint_waiting", g.redo_ckpt_waiting);
	if (g.have_journal) {
		json_object *j = json_object_new_object();
		add_u64(j, "used", g.journal.used);
		add_u64(j, "size", g.journal.size);
		add_bool(j, "commit_inflight", g.journal.inflight);
		add_bool(j, "paused", g.journal.paused);
		add_bool(j, "failed", g.journal.failed);
		add_bool(j, "checkpoint_requested", g.journal.ckpt_requested);
		add_bool(j, "quiesce_waiting", g.journal.quiesce_waiting);
		add_u64(j, "room_waiters", g.journal.room_waiters);
		add_u64(j, "open_records", g.journal.open_records);
		json_object_object_add(o, "journal", j);
	}
	return o;
}

static json_object *status_obj(const struct vd_control_env *c)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object *arr = json_object_new_array();
	for (unsigned i = 0; i < c->pools->n; i++) {
		struct vd_pool *vp = &c->pools->p[i];
		if (vp->standby) { /* not served here: its name, path and state */
			json_object *pj = json_object_new_object(), *pool = json_object_new_object();
			json_object_object_add(pool, "name", json_object_new_string(vp->name));
			json_object_object_add(pool, "path", json_object_new_string(vp->path));
			json_object_object_add(pool, "state", json_object_new_string("standby"));
			json_object_object_add(pj, "pool", pool);
			json_object_object_add(pj, "volumes", json_object_new_array());
			json_object_array_add(arr, pj);
			continue;
		}
		json_object *pj = vpool_stats_json(vp->pool);
		json_object *pool;
		if (json_object_object_get_ex(pj, "pool", &pool)) {
			/* active, or fenced: another gateway took it over (docs/ceph.md) */
			json_object_object_add(pool, "state", json_object_new_string(
				vpool_fenced(vp->pool) ? "fenced" : "active"));
			json_object_object_add(pool, "name", json_object_new_string(vp->name));
			json_object_object_add(pool, "path", json_object_new_string(vp->path));
			/* A pool in a regular file keeps its journal in a file of its own
			 * (docs/design.md rule 12): the admin must keep the two together. */
			char jpath[VD_PATH_MAX + 16];
			if (vp->jdev && vpool_journal_path(vp->path, jpath, sizeof(jpath)) == 0)
				json_object_object_add(pool, "journal_file", json_object_new_string(jpath));
			/* docs/design.md rule 14: partial granules written whole (read first) */
			json_object_object_add(pool, "whole_granule_writes",
					       json_object_new_boolean(vp->dev->unaligned_writes_serialize));
			/* docs/design.md rule 15: DSYNC writes made durable by group flushes */
			json_object_object_add(pool, "group_flush",
					       json_object_new_boolean(vblk_uring_group_flush(vp->dev) > 0));
		}
		json_object *vols;
		if (json_object_object_get_ex(pj, "volumes", &vols))
			for (size_t k = 0; k < json_object_array_length(vols); k++) {
				json_object *v = json_object_array_get_idx(vols, k), *name;
				json_object_object_get_ex(v, "name", &name);
				json_object_object_add(v, "attached",
					json_object_new_boolean(vd_devices_uses(c->devs, vp->name,
						json_object_get_string(name))));
			}
		json_object_object_add(pj, "diag", pool_diag_obj(vp->pool));
		json_object_array_add(arr, pj);
	}
	json_object_object_add(o, "pools", arr);
	json_object_object_add(o, "devices", json_object_new_uint64(vd_devices_count(c->devs)));
	json_object_object_add(o, "device_list", devices_obj(c));
	return o;
}

static int remember_pool(const struct vd_control_env *c, const char *name, const char *path, uint64_t size,
			 uint32_t extent)
{
	char file[VD_PATH_MAX + 32];
	snprintf(file, sizeof(file), "%s/pools.conf", c->conf->state_dir);
	FILE *f = fopen(file, "a");
	if (!f)
		return -errno;
	fprintf(f, "[pool %s]\npath = %s\nsize = %llu\n", name, path, (unsigned long long)size);
	if (extent)
		fprintf(f, "extent = %u\n", extent);
	int rc = fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -errno;
	fclose(f);
	return rc;
}

/* pool create NAME PATH SIZE [EXTENT] [force] */
static json_object *pool_create(const struct vd_control_env *c, char **tok, int nt)
{
	bool force = nt >= 6 && !strcmp(tok[nt - 1], "force");
	if (force)
		nt--;
	if (nt < 5 || nt > 6)
		return vd_control_error("usage: pool create NAME PATH SIZE [EXTENT] [force]");
	uint64_t size, extent = 0;
	if (vparse_size(tok[4], &size) < 0 || size == 0)
		return vd_control_error("bad size '%s' (e.g. 100G)", tok[4]);
	if (nt == 6 && (vparse_size(tok[5], &extent) < 0 || !vis_pow2(extent) ||
			extent < VPOOL_MIN_EXTENT || extent > VPOOL_MAX_EXTENT))
		return vd_control_error("bad extent size '%s' (a power of two from 64K to 16M)", tok[5]);
	char err[1200];
	int rc = vd_pool_create(c->pools, c->r, tok[2], tok[3], size, (uint32_t)extent, force, err,
				sizeof(err));
	if (rc < 0)
		return vd_control_error("%s", err);
	vd_devices_watch_pools(c->devs);
	rc = remember_pool(c, tok[2], tok[3], size, (uint32_t)extent);
	if (rc < 0)
		return vd_control_error("pool created but not recorded in the state directory: %s",
			       strerror(-rc));
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

/* pool grow NAME SIZE: grow the backing file (or take a grown block device) online;
 * writes refused with 27h/07h for want of space succeed again at once. */
static json_object *pool_grow(const struct vd_control_env *c, char **tok, int nt)
{
	if (nt != 4)
		return vd_control_error("usage: pool grow NAME SIZE");
	uint64_t size;
	if (vparse_size(tok[3], &size) < 0 || size == 0)
		return vd_control_error("bad size '%s' (e.g. 200G)", tok[3]);
	struct vd_pool *vp = vd_pool_find(c->pools, tok[2]);
	if (!vp)
		return vd_control_error("unknown pool '%s'", tok[2]);
	if (vp->standby)
		return vd_control_error("pool '%s' is standby here (another gateway serves it)", tok[2]);
	int rc = vpool_grow(vp->pool, size);
	if (rc == -EINVAL)
		return vd_control_error("pool grow: %s is not larger than the pool by at least one extent "
			       "(pools never shrink)", tok[3]);
	if (rc == -EFBIG)
		return vd_control_error("pool grow: %s is beyond what the pool's checkpoint area holds (sized "
			       "at creation for 4 x its size, less what its shared references take)", tok[3]);
	if (rc == -ENOSPC)
		return vd_control_error("pool grow: the block device is smaller than %s (grow it first)", tok[3]);
	if (rc < 0)
		return vd_control_error("pool grow failed: %s", strerror(-rc));
	vd_devices_threshold_update(c->devs, vp);
	vlog_info(vp->name, "pool %s grown to %s bytes", vp->name, tok[3]);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

/* pool takeover NAME: serve a standby RBD pool here, fencing the gateway that held it
 * (what a cluster manager calls; never done on its own). */
static json_object *pool_takeover(const struct vd_control_env *c, char **tok, int nt)
{
	if (nt != 3)
		return vd_control_error("usage: pool takeover NAME");
	char err[1200];
	struct vd_pool *vp = vd_pool_find(c->pools, tok[2]);
	/* ALUA (SPC-4 5.16.2): transitioning while the lock is taken and the pool
	 * recovered, then active/optimized, or standby again if it failed */
	if (vp && vp->standby)
		vd_devices_alua(c->devs, vp, SCSI_ALUA_TRANSITIONING);
	int rc = vd_pool_takeover(c->pools, c->r, tok[2], err, sizeof(err));
	if (vp && rc < 0 && vp->standby) /* the pool watch corrects the owner if it changed */
		vd_devices_alua(c->devs, vp, SCSI_ALUA_STANDBY);
	if (rc < 0)
		return vd_control_error("%s", err);
	vd_devices_pool_served(c->devs, vp); /* its standby LUNs served, active/optimized */
	vd_devices_watch_pools(c->devs);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

static json_object *volume_delete(const struct vd_control_env *c, char **tok, int nt)
{
	if (nt != 3)
		return vd_control_error("usage: volume delete POOL/VOLUME");
	char pool[VD_POOL_NAME_MAX + 1], vol[VPOOL_NAME_MAX + 1], err[600];
	if (vd_parse_cfgstring(tok[2], pool, sizeof(pool), vol, sizeof(vol), err, sizeof(err)) < 0)
		return vd_control_error("%s", err);
	struct vd_pool *vp = vd_pool_find(c->pools, pool);
	if (!vp)
		return vd_control_error("unknown pool '%s'", pool);
	if (vp->standby)
		return vd_control_error("pool '%s' is standby here (another gateway serves it)", pool);
	if (!vpool_volume_find(vp->pool, vol))
		return vd_control_error("no volume '%s' in that pool", vol);
	if (vd_devices_uses(c->devs, pool, vol))
		return vd_control_error("volume %s is in use by a LUN: delete the backstore first", tok[2]);
	int rc = vpool_volume_delete(vp->pool, vol);
	if (rc < 0) {
		char msg[300];
		snprintf(msg, sizeof(msg), "deleting %s: %s", tok[2], strerror(-rc));
		return vd_control_error("%s", msg);
	}
	vlog_info(vp->name, "volume %s deleted", tok[2]);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

int vd_control_tokenize(char *line, char **tok, int max)
{
	int nt = 0;
	char *save = NULL;
	for (char *s = strtok_r(line, VD_CTL_SEPARATORS, &save); s;
	     s = strtok_r(NULL, VD_CTL_SEPARATORS, &save)) {
		if (nt < max)
			tok[nt] = s;
		nt++;
	}
	return nt;
}

json_object *vd_control_answer(const struct vd_control_env *c, char *line)
{
	char *tok[VD_CTL_MAX_WORDS];
	int nt = vd_control_tokenize(line, tok, VD_CTL_MAX_WORDS);
	if (nt == 0)
		return vd_control_error("empty request");
	if (nt > VD_CTL_MAX_WORDS)
		return vd_control_error("too many words in the request (at most %d)", VD_CTL_MAX_WORDS);
	if (nt == 1 && !strcmp(tok[0], "status"))
		return status_obj(c);
	if (nt == 2 && (!strcmp(tok[0], "pool") || !strcmp(tok[0], "volume")) &&
	    !strcmp(tok[1], "list"))
		return status_obj(c);
	if (nt >= 2 && !strcmp(tok[0], "pool") && !strcmp(tok[1], "create"))
		return pool_create(c, tok, nt);
	if (nt >= 2 && !strcmp(tok[0], "pool") && !strcmp(tok[1], "grow"))
		return pool_grow(c, tok, nt);
	if (nt >= 2 && !strcmp(tok[0], "pool") && !strcmp(tok[1], "takeover"))
		return pool_takeover(c, tok, nt);
	if (nt >= 2 && !strcmp(tok[0], "volume") && !strcmp(tok[1], "delete"))
		return volume_delete(c, tok, nt);
	if (!strcmp(tok[0], "stats"))
		return vd_control_stats(c, tok, nt);
	return vd_control_error("unknown request '%s'", tok[0]);
}

