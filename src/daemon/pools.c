/*
 * The daemon's pools: open every configured pool at start (a missing file is
 * created sparse and formatted, unless [pool] create = no, the default for the
 * pools pools.conf records: vd_config_load_recorded), create new ones on
 * request (a new sparse file; with force, also an existing block device or
 * file that holds no vaaid pool and is not in use), close at exit. A pool in a
 * regular file keeps its journal in a file of its own, <path>.journal
 * (docs/design.md rule 12: the file system's conversions of newly written data
 * are then not committed by every journal write); a pool on a block device
 * keeps it inside. A path "rbd:CEPHPOOL/IMAGE" is a Ceph RBD image (vblk_rbd,
 * reached with the [ceph] settings): created when missing only with [pool]
 * create = yes, its journal inside, removed again when its creation fails. Its
 * blocking librados/librbd calls (open, takeover, create, close, remove) run on
 * a worker thread while the reactor serves the other pools' LUNs
 * (src/io/vblk_rbd.c says why nothing re-enters meanwhile).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vaaid/daemon.h"
#include "vaaid/endian.h"
#include "vaaid/io.h"
#include "vaaid/meta.h"
#include "vaaid/rbd_owner.h"
#include "vaaid/rbd_spec.h"
#include "vaaid/util.h"

struct vd_pool *vd_pool_find(struct vd_pools *ps, const char *name)
{
	for (unsigned i = 0; i < ps->n; i++)
		if (!strcmp(ps->p[i].name, name))
			return &ps->p[i];
	return NULL;
}

static int mkdirs_for(const char *path)
{
	char buf[VD_PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

static struct vblk_rbd_conf rbd_conf(const struct vd_pools *ps)
{
	return (struct vblk_rbd_conf){
		.conf_path = ps->ceph.conf[0] ? ps->ceph.conf : NULL,
		.client_id = ps->ceph.client_id[0] ? ps->ceph.client_id : NULL,
		.keyring = ps->ceph.keyring[0] ? ps->ceph.keyring : NULL,
		.alua_group = ps->alua_group,
		.alua_peers = ps->alua_peers,
		.alua_n_peers = ps->alua_n_peers,
		.op_timeout = ps->ceph.op_timeout,
	};
}

/* (the reactor runs on: an RBD store's close waits on a worker, vblk_close_live) */
static void close_stores(struct vd_pool *vp)
{
	vblk_close_live(vp->jdev);
	vblk_close_live(vp->dev);
	vp->jdev = vp->dev = NULL;
}

/* The admin's group_flush over what vblk_uring detected (design rule 15). */
static void apply_group_flush(const struct vd_pool *vp, struct vblk *b)
{
	if (vp->group != VD_GROUP_AUTO)
		vblk_uring_set_group_flush(b, vp->group == VD_GROUP_ON ? VBLK_GROUP_FLUSH_DEFAULT : 0);
}

static int open_store_as(const struct vd_pools *ps, struct vd_pool *vp, struct vreactor *r,
			 bool takeover, char *err, size_t errlen)
{
	struct vpool_open_report rep;
	memset(&rep, 0, sizeof(rep));
	struct vblk_rbd_conf rbd = rbd_conf(ps);
	int rc = takeover ? vblk_rbd_takeover(r, vp->path, &rbd, &vp->dev)
			  : vblk_open_store(r, vp->path, 0, &rbd, &vp->dev);
	if (rc < 0) {
		snprintf(err, errlen, "pool '%s': cannot open %s: %s", vp->name, vp->path, strerror(-rc));
		return rc;
	}
	/* the admin's whole_granule_writes over what vblk_uring detected (design rule 14) */
	if (vp->whole != VD_WHOLE_AUTO)
		vp->dev->unaligned_writes_serialize = vp->whole == VD_WHOLE_ON;
	apply_group_flush(vp, vp->dev);
	char jpath[VD_PATH_MAX + 16];
	if (vpool_store_has_journal_file(vp->dev) == 1 &&
	    vpool_journal_path(vp->path, jpath, sizeof(jpath)) == 0) {
		/* A missing or unreadable journal file: the pool open names the problem. */
		rc = vblk_uring_open(r, jpath, 0, &vp->jdev);
		if (rc == 0)
			apply_group_flush(vp, vp->jdev);
		if (rc < 0)
			vlog_err(vp->name, "pool %s: cannot open its journal file %s: %s", vp->name,
				 jpath, strerror(-rc));
	}
	rc = vpool_open_stores(vp->dev, vp->jdev, 0, &vp->pool, &rep);
	if (rc < 0) {
		snprintf(err, errlen, "pool '%s' (%s) cannot be opened: %s%s%s", vp->name, vp->path,
			 strerror(-rc), rep.error[0] ? ": " : "", rep.error);
		close_stores(vp);
		return rc;
	}
	if (vp->live_ckpt) { /* [pool] live_checkpoints = yes (docs/snapshots.md step 3) */
		rc = vpool_set_live_checkpoints(vp->pool, true);
		if (rc < 0) {
			snprintf(err, errlen, "pool '%s': live checkpoints: %s", vp->name, strerror(-rc));
			vpool_close(vp->pool);
			vp->pool = NULL;
			close_stores(vp);
			return rc;
		}
		vlog_info(vp->name, "pool %s: live checkpoints (live_checkpoints = yes)", vp->name);
	}
	vlog_info(vp->name, "pool %s opened (%s): journal replayed %llu commit(s), %llu byte(s) of small writes written home",
		  vp->name, vp->path, (unsigned long long)rep.commits,
		  (unsigned long long)rep.data_bytes);
	/* free extents the store still holds (a crash between a free's commit and its
	 * discard): given back now */
	uint64_t swept;
	int src = vpool_sweep_store(vp->pool, &swept);
	if (src < 0)
		vlog_warn(vp->name, "pool %s: cannot tell which free extents %s still holds: %s",
			  vp->name, vp->path, strerror(-src));
	else if (swept)
		vlog_info(vp->name, "pool %s: %llu free extent(s) still held by %s are given back",
			  vp->name, (unsigned long long)swept, vp->path);
	if (vp->dev->unaligned_writes_serialize)
		vlog_info(vp->name, "pool %s: partial 4 KiB granules are read and written whole (%s; "
			  "docs/design.md rule 14)", vp->name,
			  vp->whole == VD_WHOLE_ON ? "whole_granule_writes = on"
						   : "its file system serializes unaligned direct writes: "
						     "ext4 before Linux 6.4");
	if (vblk_uring_group_flush(vp->dev) > 0)
		vlog_info(vp->name, "pool %s: durable writes share cache flushes (%s; docs/design.md rule 15)",
			  vp->name, vp->group == VD_GROUP_ON ? "group_flush = on"
							     : "its device has a volatile write cache without FUA");
	return 0;
}

static int open_one(const struct vd_pools *ps, struct vd_pool *vp, struct vreactor *r, char *err,
		    size_t errlen)
{
	return open_store_as(ps, vp, r, false, err, errlen);
}

/*
 * The journal file of a pool being created in the regular file vp->path: a new
 * file <path>.journal (never an existing one), its size for prm; prm->journal_dev
 * set to it.
 */
static int create_journal_file(struct vd_pool *vp, struct vreactor *r, struct vpool_params *prm,
			       char *jpath, size_t jlen, char *err, size_t errlen)
{
	int rc = vpool_journal_path(vp->path, jpath, jlen);
	if (rc == 0)
		rc = vblk_uring_open(r, jpath, vpool_journal_store_size(prm, vp->dev->size),
				     &vp->jdev);
	if (rc < 0) {
		snprintf(err, errlen, "pool '%s': cannot create its journal file %s: %s", vp->name,
			 jpath, rc == -EEXIST ? "it already exists" : strerror(-rc));
		return rc;
	}
	prm->journal_dev = vp->jdev;
	return 0;
}

static int create_one(const struct vd_pools *ps, struct vd_pool *vp, struct vreactor *r,
		      uint64_t size, uint32_t extent, char *err, size_t errlen)
{
	bool rbd_store = vblk_rbd_spec(vp->path);
	struct vblk_rbd_conf rbd = rbd_conf(ps);
	int rc = rbd_store ? 0 : mkdirs_for(vp->path);
	if (rc < 0) {
		snprintf(err, errlen, "pool '%s': cannot create the directory of %s: %s", vp->name,
			 vp->path, strerror(-rc));
		return rc;
	}
	rc = vblk_open_store(r, vp->path, size, &rbd, &vp->dev);
	if (rc < 0) {
		snprintf(err, errlen, "pool '%s': cannot create %s: %s", vp->name, vp->path,
			 rc == -EEXIST ? "it already exists" : strerror(-rc));
		return rc;
	}
	struct vpool_params prm = {.size = size, .extent_size = extent};
	char jpath[VD_PATH_MAX + 16] = "";
	/* a file: its journal in a file of its own (rule 12); an RBD image keeps it inside */
	if (!rbd_store)
		rc = create_journal_file(vp, r, &prm, jpath, sizeof(jpath), err, errlen);
	if (rc == 0) {
		rc = vpool_format(vp->dev, &prm);
		if (rc < 0)
			snprintf(err, errlen, "pool '%s': cannot format %s: %s", vp->name, vp->path,
				 strerror(-rc));
	}
	close_stores(vp);
	if (rc < 0) {
		vblk_remove_store(r, vp->path, &rbd);
		if (rc != -EEXIST && jpath[0]) /* (an existing journal file is not ours to remove) */
			unlink(jpath);
		return rc;
	}
	vlog_info(vp->name, "pool %s created: %s, %llu bytes", vp->name, vp->path,
		  (unsigned long long)size);
	return open_one(ps, vp, r, err, errlen);
}

int vd_pools_open(struct vd_pools *ps, const struct vd_config *c, struct vreactor *r, char *err,
		  size_t errlen)
{
	memset(ps, 0, sizeof(*ps));
	ps->ceph = c->ceph;
	ps->whole_granules = c->whole_granule_writes;
	ps->group_flush = c->group_flush;
	ps->alua_group = c->alua.group;
	ps->alua_n_peers = c->alua.n_peers;
	memcpy(ps->alua_peers, c->alua.peers, sizeof(ps->alua_peers));
	for (unsigned i = 0; i < c->n_pools; i++) {
		const struct vd_pool_conf *pc = &c->pools[i];
		struct vd_pool *vp = &ps->p[ps->n];
		vp->whole = ps->whole_granules;
		vp->group = ps->group_flush;
		vp->live_ckpt = pc->live_checkpoints;
		snprintf(vp->name, sizeof(vp->name), "%s", pc->name);
		snprintf(vp->path, sizeof(vp->path), "%s", pc->path);
		struct stat st;
		int rc;
		if (vblk_rbd_spec(pc->path)) { /* an image: opened; created when missing only
						* with create = yes (VD_CREATE_AUTO says why) */
			rc = open_one(ps, vp, r, err, errlen);
			if (rc == -ENOENT && pc->create == VD_CREATE_YES)
				rc = create_one(ps, vp, r, pc->size, pc->extent, err, errlen);
			else if (rc == -ENOENT)
				snprintf(err, errlen, "pool '%s': %s does not exist (no such image or "
					 "Ceph pool -- or no [ceph] conf or keyring file where "
					 "configured): a pool on RBD is made once with `vaaictl "
					 "pool create %s %s SIZE` on one gateway, or by this daemon with "
					 "create = yes in [pool %s]", vp->name, vp->path, vp->name,
					 vp->path, vp->name);
			if (rc == -EBUSY) { /* another gateway serves it: standby here */
				vlog_warn(vp->name, "pool %s: standby (another gateway holds %s; "
					  "`vaaictl pool takeover %s` takes it over)", vp->name, vp->path,
					  vp->name);
				vp->standby = true;
				rc = 0;
			}
		} else {
			if (stat(pc->path, &st) == 0)
				rc = open_one(ps, vp, r, err, errlen);
			else if (pc->create != VD_CREATE_NO)
				rc = create_one(ps, vp, r, pc->size, pc->extent, err, errlen);
			else {
				rc = -ENOENT;
				snprintf(err, errlen, "pool '%s': %s does not exist (create = no in "
					 "[pool %s], the default for pools `vaaictl pool create` "
					 "recorded in pools.conf: is its file system mounted?)",
					 vp->name, vp->path, vp->name);
			}
		}
		if (rc < 0)
			return rc;
		ps->n++;
	}
	return 0;
}

/* Does the store hold a vaaid superblock (either copy, valid or not)? */
static int holds_pool(struct vblk *dev, bool *yes)
{
	uint8_t *b = vblk_alloc_buf(2 * VSB_SIZE);
	if (!b)
		return -ENOMEM;
	int rc = dev->size >= 2 * VSB_SIZE ? vblk_pread_sync(dev, b, 2 * VSB_SIZE, 0) : 0;
	*yes = rc == 0 && (vget_le64(b) == VSB_MAGIC || vget_le64(b + VSB_SIZE) == VSB_MAGIC);
	free(b);
	return rc;
}

/*
 * pool create --force on an existing path: a block device or a file (e.g.
 * written in full beforehand, so that first writes are overwrites for the file
 * system), at least `size` bytes, not in use (a block device is opened
 * exclusively: mounted or held by someone else -> refused), holding no vaaid
 * pool (even a damaged one). Formatted in place; never unlinked on failure.
 */
static int format_existing(const struct vd_pools *ps, struct vd_pool *vp, struct vreactor *r,
			   const struct stat *st,
			   uint64_t size, uint32_t extent, char *err, size_t errlen)
{
	if (!S_ISREG(st->st_mode) && !S_ISBLK(st->st_mode)) {
		snprintf(err, errlen, "%s is neither a block device nor a regular file", vp->path);
		return -EINVAL;
	}
	if (S_ISBLK(st->st_mode)) {
		int fd = open(vp->path, O_RDONLY | O_EXCL | O_CLOEXEC);
		if (fd < 0) {
			int e = errno;
			snprintf(err, errlen, "%s cannot be opened exclusively (%s): in use?", vp->path,
				 strerror(e));
			return -e;
		}
		close(fd);
	}
	int rc = vblk_uring_open(r, vp->path, 0, &vp->dev);
	if (rc < 0) {
		snprintf(err, errlen, "pool '%s': cannot open %s: %s", vp->name, vp->path, strerror(-rc));
		return rc;
	}
	bool pool = false;
	if (vp->dev->size < size) {
		snprintf(err, errlen, "%s has %llu bytes, fewer than the pool size %llu", vp->path,
			 (unsigned long long)vp->dev->size, (unsigned long long)size);
		rc = -ENOSPC;
	} else if ((rc = holds_pool(vp->dev, &pool)) < 0) {
		snprintf(err, errlen, "%s cannot be read: %s", vp->path, strerror(-rc));
	} else if (pool) {
		snprintf(err, errlen, "%s holds a vaaid pool: pool create never overwrites a pool "
				      "(wipe its first 8 KiB to reuse it)", vp->path);
		rc = -EEXIST;
	} else {
		struct vpool_params prm = {.size = size, .extent_size = extent};
		char jpath[VD_PATH_MAX + 16];
		if (S_ISREG(st->st_mode)) /* a file: its journal in a file of its own too */
			rc = create_journal_file(vp, r, &prm, jpath, sizeof(jpath), err, errlen);
		if (rc == 0) {
			rc = vpool_format(vp->dev, &prm);
			if (rc < 0)
				snprintf(err, errlen, "pool '%s': cannot format %s: %s", vp->name,
					 vp->path, strerror(-rc));
			if (rc < 0 && vp->jdev)
				unlink(jpath); /* created above; the store itself is never removed */
		}
	}
	close_stores(vp);
	if (rc < 0)
		return rc;
	vlog_info(vp->name, "pool %s created on the existing %s %s, %llu bytes", vp->name,
		  S_ISBLK(st->st_mode) ? "block device" : "file", vp->path, (unsigned long long)size);
	return open_one(ps, vp, r, err, errlen);
}

int vd_pool_create(struct vd_pools *ps, struct vreactor *r, const char *name, const char *path,
		   uint64_t size, uint32_t extent, bool force, char *err, size_t errlen)
{
	struct stat st;
	if (!vd_valid_name(name, VD_POOL_NAME_MAX)) {
		snprintf(err, errlen, "bad pool name '%s' (letters, digits, _ . -; at most 32)", name);
		return -EINVAL;
	}
	if (vd_pool_find(ps, name)) {
		snprintf(err, errlen, "pool '%s' already exists", name);
		return -EEXIST;
	}
	bool rbd_store = vblk_rbd_spec(path);
	struct vblk_rbd_name rn;
	if (rbd_store ? vblk_rbd_parse(path, &rn) < 0 : path[0] != '/' || strlen(path) >= VD_PATH_MAX) {
		snprintf(err, errlen, "pool path '%s' must be an absolute path or rbd:CEPHPOOL/IMAGE",
			 path);
		return -EINVAL;
	}
	if (rbd_store && force) {
		snprintf(err, errlen, "--force formats an existing file or block device; an RBD "
				      "image is always created new");
		return -EINVAL;
	}
	for (unsigned i = 0; rbd_store && i < ps->n; i++)
		if (!strcmp(ps->p[i].path, path)) {
			snprintf(err, errlen, "%s is the store of pool '%s'", path, ps->p[i].name);
			return -EEXIST;
		}
	/* pools.conf records it as "path = PATH": its reader (inih) strips white space
	 * such as \v and \f, so the pool would be looked for elsewhere at the next
	 * start. (It also cuts a value at " ;": a path cannot hold a space here, as the
	 * control socket's words are split at spaces.) */
	for (const char *c = path; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			snprintf(err, errlen, "pool path may not contain control characters");
			return -EINVAL;
		}
	/* ... and a longer "path = PATH" line than the configuration reader takes would
	 * make the next start refuse pools.conf (docs/fuzzing.md, finding 7). */
	if (strlen("path = ") + strlen(path) > VD_CONF_LINE_MAX) {
		snprintf(err, errlen, "pool path longer than %zu bytes (pools.conf records it on "
			 "one line of at most %d)", (size_t)VD_CONF_LINE_MAX - strlen("path = "),
			 VD_CONF_LINE_MAX);
		return -ENAMETOOLONG;
	}
	bool exists = !rbd_store && stat(path, &st) == 0;
	if (exists && !force) {
		snprintf(err, errlen, "%s already exists (pool create never overwrites; --force "
				      "formats an existing block device or file that holds no pool)", path);
		return -EEXIST;
	}
	for (unsigned i = 0; exists && i < ps->n; i++) {
		struct stat o;
		if (stat(ps->p[i].path, &o) == 0 &&
		    (S_ISBLK(st.st_mode) ? S_ISBLK(o.st_mode) && o.st_rdev == st.st_rdev
					 : o.st_dev == st.st_dev && o.st_ino == st.st_ino)) {
			snprintf(err, errlen, "%s is the store of pool '%s'", path, ps->p[i].name);
			return -EEXIST;
		}
	}
	if (ps->n >= VD_MAX_POOLS) {
		snprintf(err, errlen, "too many pools (at most %d)", VD_MAX_POOLS);
		return -ENOSPC;
	}
	struct vd_pool *vp = &ps->p[ps->n];
	memset(vp, 0, sizeof(*vp));
	vp->whole = ps->whole_granules;
	vp->group = ps->group_flush;
	snprintf(vp->name, sizeof(vp->name), "%s", name);
	snprintf(vp->path, sizeof(vp->path), "%s", path);
	int rc = exists ? format_existing(ps, vp, r, &st, size, extent, err, errlen)
			: create_one(ps, vp, r, size, extent, err, errlen);
	if (rc == 0)
		ps->n++;
	return rc;
}

int vd_pool_takeover(struct vd_pools *ps, struct vreactor *r, const char *name, char *err,
		     size_t errlen)
{
	struct vd_pool *vp = vd_pool_find(ps, name);
	if (!vp) {
		snprintf(err, errlen, "unknown pool '%s'", name);
		return -ENOENT;
	}
	if (!vp->standby) {
		snprintf(err, errlen, "pool '%s' is %s", name,
			 vblk_rbd_spec(vp->path) ? "served by this gateway already"
						 : "not on RBD: only an RBD pool has another gateway");
		return -EINVAL;
	}
	int rc = open_store_as(ps, vp, r, true, err, errlen);
	if (rc < 0)
		return rc;
	vp->standby = false;
	vlog_warn(vp->name, "pool %s taken over (%s): served by this gateway", vp->name, vp->path);
	/* the shared ALUA record the takeover wrote (the group it fenced), before the
	 * LUNs serve (vd_devices_pool_served): they never show that group otherwise */
	vd_pool_alua_read(ps, vp, r, &vp->alua);
	return 0;
}

int vd_pool_view_refresh(const struct vd_pools *ps, struct vd_pool *vp, struct vreactor *r,
			 struct vpool **old, struct vblk **old_dev)
{
	*old = NULL;
	*old_dev = NULL;
	if (!vp->standby || !vblk_rbd_spec(vp->path))
		return -EINVAL;
	struct vblk_rbd_conf rbd = rbd_conf(ps);
	struct vblk *dev;
	int rc = vblk_rbd_open_readonly(r, vp->path, &rbd, &dev);
	if (rc < 0)
		return rc;
	/* replayed in memory only (what vaai-check does): nothing is written */
	struct vpool *p;
	struct vpool_open_report rep;
	memset(&rep, 0, sizeof(rep));
	rc = vpool_open_stores(dev, NULL, VPOOL_OPEN_READONLY, &p, &rep);
	if (rc < 0) {
		vlog_warn(vp->name, "pool %s: no read-only view of %s: %s%s%s", vp->name, vp->path,
			  strerror(-rc), rep.error[0] ? ": " : "", rep.error);
		vblk_close_live(dev);
		return rc;
	}
	*old = vp->view;
	*old_dev = vp->view_dev;
	vp->view = p;
	vp->view_dev = dev;
	return 0;
}

void vd_pool_alua_read(const struct vd_pools *ps, const struct vd_pool *vp, struct vreactor *r,
		       struct vblk_rbd_alua *out)
{
	if (!vblk_rbd_spec(vp->path))
		return;
	struct vblk *dev = vp->standby ? vp->view_dev : vp->dev;
	if (dev) { /* the open store or view: no connection of its own */
		vblk_rbd_alua_get(dev, out);
		return;
	}
	struct vblk_rbd_conf rbd = rbd_conf(ps);
	struct vblk_rbd_owner o;
	if (vblk_rbd_owner_peek(r, vp->path, &rbd, &o) == 0 && o.group <= UINT16_MAX)
		out->owner = (uint16_t)o.group;
}

void vd_pool_view_close_old(struct vpool *p, struct vblk *dev)
{
	if (p)
		vpool_close(p);
	/* librbd's close and the connection's shutdown on a worker: the reactor serves
	 * the other pools' LUNs meanwhile (vblk_close_live) */
	vblk_close_live(dev);
}

void vd_pools_close(struct vd_pools *ps)
{
	for (unsigned i = 0; i < ps->n; i++) {
		struct vd_pool *vp = &ps->p[i];
		vd_pool_view_close_old(vp->view, vp->view_dev);
		vp->view = NULL;
		vp->view_dev = NULL;
		if (vp->pool) {
			int rc = vpool_close(vp->pool);
			if (rc < 0)
				vlog_err(vp->name, "closing pool %s: %s", vp->name, strerror(-rc));
		}
		close_stores(vp);
		vp->pool = NULL;
	}
	ps->n = 0;
}
