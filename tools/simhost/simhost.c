/*
 * simhost: engine thread + simulated kernels (see simhost.h for the model).
 */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "simhost.h"
#include "vaaid/lun.h"
#include "vaaid/lun_policy.h"
#include "vaaid/pool_watch.h"
#include "vaaid/tcmu_dev.h"
#include "vblk_killpoint.h"
#include "rings.h"
#include "din_cache.h"

#define SIM_CMDR_SIZE (1u << 20)
#define SIM_DATA_SIZE (64u << 20)
/* The names the simulated LIO gives: backstore core/user_sim/lun<N>, cfgstring sim/<volume>. */
#define SIM_HBA "sim"
#define SIM_POOL "sim"

struct hlun {
	bool used;
	char vol[VPOOL_NAME_MAX + 1];
	struct simk *k;
	void *map;
	size_t map_size;
	struct scsi_lun lun;
	struct tcmu_dev *dev;
	int group; /* visibility group (simhost_set_visibility): the view (a TPG) that exports it */
	char bs_dev[16];        /* "lun<N>" */
	struct vd_backstore bs; /* what configfs would say of this LUN's backstore */
};

struct dealloc_wait {
	bool done;
	int res;
	struct dealloc_wait *next; /* h->abandoned_waits */
};

struct held {
	struct simhost_result r;
	struct held *next;
};

struct simhost {
	char path[4096];
	enum simhost_io io;
	uint64_t seed;
	uint64_t backing_limit; /* crashsim: simulated full file system (0: none) */
	unsigned crash_faults;  /* crashsim: VBLK_CS_* of both stores (kept across reopen) */
	struct vblk_crashsim_fault_stats fault_acc; /* of the stores closed so far */
	struct vpool_open_report last_recovery; /* simhost_crash's pool open */
	struct simhost_kill_report last_kill;   /* io=rbd_kill: simhost_crash's kill and takeover */
	bool ack_killed; /* io=rbd_kill: simhost_rbd_kill_ack_killed (oracle test) */
	uint64_t kp_opens; /* io=rbd_kill: kill point wrappers made (each one's seed) */
	unsigned threshold_pct; /* soft threshold, percent of capacity (0: none) */
	int xcopy_scope;        /* VD_XCOPY_* (simhost_set_xcopy_scope), as the daemon's xcopy_scope */
	bool standby; /* simhost_open_standby: the store read-only, the pool replayed in memory */
	/* ALUA as the daemon's [alua] (simhost_alua): group 0 = off */
	uint16_t alua_group;
	unsigned alua_n_peers;
	uint16_t alua_peers[SCSI_ALUA_MAX_PEERS];
	int alua_shared;   /* simhost_alua_shared: 1 / 0, -1: as the store (RBD: shared) */
	/* simhost_pool_watch: the daemon's pool watch (vaaid/pool_watch.h) on the engine
	 * thread; watch_rec: the pool's shared ALUA record known so far */
	struct vd_pool_watch watch;
	bool watching;
	struct vblk_rbd_alua watch_rec;
	struct vd_views *views; /* the visibility groups as co-visibility facts (update_views) */
	bool bench_skip_reserve; /* io=uring: simhost_bench_skip_reserve (benchmarks only) */
	int group_flush;         /* io=uring: simhost_group_flush; -1 = vblk_uring's default */
	int whole_granules;      /* simhost_whole_granules: -1 as detected, else 0 / 1 */
	bool detected_serialize; /* what vblk_uring detected for the pool file */
	bool hyd_paused;         /* simhost_hydration: kept across reopen and crash */
	bool live_ckpt;          /* simhost_live_checkpoints: kept across reopen and crash */
	int crash_ckpt_phase;    /* simhost_crash: where the crashed pool's checkpoint was */
	uint64_t crash_live_records; /* ... and its records appended during live checkpoints */
	struct vreactor *r;
	struct vblk *dev;
	struct vblk *jdev; /* the pool's journal file (PATH.journal), or NULL */
	struct vpool *pool;
	struct hlun luns[SIMHOST_MAX_LUNS];
	struct vblk_cs_images *images; /* simhost_create_pool_on: the store's (not ours) */
	struct simhost_rings *rings;   /* simhost_use_rings: the caller's (not ours) */
	struct vbuf_cache *bufs;       /* simhost_create_pool_on: lent to the store (not ours) */
	struct din_cache din;          /* data-in buffers given back (simhost_result_release) */
	/* 1 + the highest LUN ever attached: the walks over luns[] stop there (the
	 * table is 1.4 MiB; walking all of it touched ~350 pages per walk, and a
	 * fuzz target makes a host per input) */
	int lun_end;
	pthread_t thr;
	bool thread_made;  /* the engine thread exists (engine_main) */
	bool running;      /* the caller's view: engine_start'ed, not engine_stop'ped */
	atomic_bool stop;  /* the running engine leaves its loop */
	pthread_mutex_t mu; /* run and quit, with cv */
	pthread_cond_t cv;
	bool run, quit;    /* the thread: run its loop / end */
	int wake_fd;
	struct vio_op wake_op;
	/* simhost_engine_hook: fd polled by the reactor, fn called on the engine thread */
	int hook_fd;
	void (*hook_fn)(void *arg);
	void *hook_arg;
	struct vio_op hook_op;
	bool hook_armed;          /* hook_op is pending in the current reactor */
	atomic_bool hook_ready;   /* hook_fd became readable: call hook_fn */
	uint64_t next_tag;
	struct held *held; /* results reaped during reopen, delivered by the next reap */
	struct dealloc_wait *abandoned_waits; /* simhost_deallocate: cut short by a crash */
};

/* ---- engine thread */

static void wake_cb(void *arg, int res)
{
	struct simhost *h = arg;
	uint64_t v;
	(void)res;
	if (read(h->wake_fd, &v, sizeof(v)) < 0) {
		/* nothing to drain */
	}
	vio_op_init(&h->wake_op, wake_cb, h);
	vreactor_poll_fd(h->r, h->wake_fd, &h->wake_op);
}

static void hook_cb(void *arg, int res)
{
	struct simhost *h = arg;
	(void)res;
	h->hook_armed = false;
	atomic_store(&h->hook_ready, true);
}

/* The hook's fd polled by the current reactor (once; again after each call). */
static void hook_arm(struct simhost *h)
{
	if (h->hook_fn && !h->hook_armed && h->r) {
		vio_op_init(&h->hook_op, hook_cb, h);
		h->hook_armed = vreactor_poll_fd(h->r, h->hook_fd, &h->hook_op) == 0;
	}
}

/* A new reactor: the engine's own wake-up and the hook polled by it. 0 or -errno. */
static int arm_reactor(struct simhost *h)
{
	vio_op_init(&h->wake_op, wake_cb, h);
	int rc = vreactor_poll_fd(h->r, h->wake_fd, &h->wake_op);
	h->hook_armed = false; /* the old reactor's poll went with it */
	hook_arm(h);
	return rc;
}

/* Between two reactor turns on the engine thread, as vaaid's main loop serves its fds. */
static void hook_service(struct simhost *h)
{
	if (!atomic_exchange(&h->hook_ready, false))
		return;
	h->hook_fn(h->hook_arg);
	hook_arm(h);
}

/* As the daemon's pool_alua_update (src/daemon/devices.c): what a look found
 * (ev) and the record it read (rec) applied to every LUN when the record
 * differs from the one they show (vd_alua_record_update, the same rule). */
static void alua_update(struct simhost *h, unsigned ev, const struct vblk_rbd_alua *rec)
{
	ev |= vd_alua_record_update(&h->watch_rec, rec);
	for (int i = 0; ev != VD_WATCH_NONE && i < h->lun_end; i++)
		if (h->luns[i].used && h->luns[i].dev)
			vd_lun_watch_apply(&h->luns[i].lun, ev, &h->watch_rec);
}

/* The daemon's pool watch (src/daemon/devices.c vd_devices_watch), on the
 * engine thread between two reactor iterations: one look per period at the
 * store (its lock, or the standby view's owner record), applied to every LUN. */
static void host_watch(struct simhost *h)
{
	if (vd_pool_watch_due(&h->watch)) {
		struct vblk_rbd_alua rec = h->watch_rec;
		unsigned ev = vd_store_watch(h->dev, h->standby, &rec);
		alua_update(h, ev, &rec);
	}
	vd_pool_watch_arm(&h->watch, h->r);
}

/*
 * The engine thread lives as long as the host: "stopping" the engine parks it
 * (between two vreactor_run_once calls) instead of ending it. io_uring posts a
 * request's completion as task work of the thread that submitted it; when that
 * thread has exited, the kernel hands the work to a fallback worker a jiffy
 * (4-10 ms) later, so every engine restart used to cost a jiffy per LUN on its
 * next command. Parked, the thread wakes every millisecond, so that requests it
 * submitted still complete while another thread runs the reactor (a stopped
 * engine's pool being closed or grown by the caller's thread).
 */
static void *engine_main(void *arg)
{
	struct simhost *h = arg;
	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (!h->run && !h->quit) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&h->cv, &h->mu, &ts);
		}
		if (h->quit)
			break;
		pthread_mutex_unlock(&h->mu);
		while (!atomic_load(&h->stop)) {
			if (vreactor_run_once(h->r, -1) < 0)
				break;
			if (h->watching)
				host_watch(h);
			hook_service(h);
		}
		pthread_mutex_lock(&h->mu);
		h->run = false;
		pthread_cond_broadcast(&h->cv);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static int engine_start(struct simhost *h)
{
	if (h->running)
		return 0;
	if (h->pool && h->hyd_paused)
		vpool_hydration_pause(h->pool, true); /* a pool just opened, too */
	if (h->pool && vpool_set_live_checkpoints(h->pool, h->live_ckpt) < 0)
		return -ENOMEM;
	atomic_store(&h->stop, false);
	if (!h->thread_made) {
		if (pthread_create(&h->thr, NULL, engine_main, h))
			return -EAGAIN;
		h->thread_made = true;
	}
	pthread_mutex_lock(&h->mu);
	h->run = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	h->running = true;
	return 0;
}

/* engine_start after a step that gave rc: rc if it failed, else engine_start's result. */
static int engine_resume(struct simhost *h, int rc)
{
	int rc2 = engine_start(h);
	return rc < 0 ? rc : rc2;
}

static void engine_stop(struct simhost *h)
{
	if (!h->running)
		return;
	atomic_store(&h->stop, true);
	uint64_t one = 1;
	if (write(h->wake_fd, &one, sizeof(one)) < 0) {
		/* the eventfd cannot overflow here */
	}
	pthread_mutex_lock(&h->mu);
	while (h->run)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
	h->running = false;
}

/* The engine thread ends (stopped first). */
static void engine_end(struct simhost *h)
{
	engine_stop(h);
	if (!h->thread_made)
		return;
	pthread_mutex_lock(&h->mu);
	h->quit = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->thr, NULL);
	h->thread_made = false;
}

/* ---- setup / teardown of the reactor, device and pool */

static bool crashsim(const struct simhost *h)
{
	return h->io == SIMHOST_IO_CRASHSIM || h->io == SIMHOST_IO_CRASHSIM_MEM;
}

/* The engine can be stopped at an armed I/O: power loss (crashsim) or kill (rbd_kill). */
static bool killable(const struct simhost *h) { return crashsim(h) || h->io == SIMHOST_IO_RBD_KILL; }

static bool dead(const struct simhost *h)
{
	if (h->io == SIMHOST_IO_RBD_KILL)
		return vblk_killpoint_killed(h->dev);
	return crashsim(h) && vblk_crashsim_crashed(h->dev);
}

/* The store as opened (or taken over), with simhost's settings applied. */
static void store_opened(struct simhost *h, struct vblk **out)
{
	if (out == &h->dev)
		h->detected_serialize = (*out)->unaligned_writes_serialize;
	if (h->whole_granules >= 0)
		(*out)->unaligned_writes_serialize = h->whole_granules;
	(*out)->bufs = h->bufs;
}

/* Open (create_size > 0: create) one store of the pool. */
static int open_store(struct simhost *h, const char *path, uint64_t create_size, struct vblk **out)
{
	int rc;
	if (h->io == SIMHOST_IO_CRASHSIM_MEM && h->images && out == &h->dev) {
		rc = create_size == vblk_cs_images_size(h->images)
			     ? vblk_crashsim_create_on(h->r, h->images, h->seed, out)
			     : -EINVAL;
	} else if (h->io == SIMHOST_IO_CRASHSIM_MEM) {
		rc = create_size ? vblk_crashsim_create_mem(h->r, create_size, h->seed, out)
				 : -EOPNOTSUPP; /* nothing kept to open again */
	} else if (crashsim(h)) {
		rc = vblk_crashsim_open(h->r, path, create_size, h->seed, out);
	} else if (h->io == SIMHOST_IO_RBD_KILL) { /* an RBD image behind a kill point */
		struct vblk *in;
		rc = vblk_rbd_spec(path) ? vblk_open_store(h->r, path, create_size, NULL, &in)
					 : -EINVAL;
		if (rc == 0 && (rc = vblk_killpoint_wrap(h->r, in, h->seed + ++h->kp_opens, out)) < 0)
			vblk_close(in);
		if (rc == 0)
			vblk_killpoint_ack_killed(*out, h->ack_killed);
	} else if (vblk_rbd_spec(path)) { /* a Ceph RBD image (CEPH_CONF's cluster) */
		rc = h->standby ? vblk_rbd_open_readonly(h->r, path, NULL, out)
				: vblk_open_store(h->r, path, create_size, NULL, out);
	} else {
		rc = vblk_uring_open(h->r, path, create_size, out);
		if (rc == 0 && h->bench_skip_reserve)
			rc = vblk_uring_bench_skip_reserve(*out, true);
		if (rc == 0 && h->group_flush >= 0)
			rc = vblk_uring_set_group_flush(*out, (unsigned)h->group_flush);
	}
	if (rc == 0)
		store_opened(h, out);
	return rc;
}

static void add_fault_stats(struct vblk_crashsim_fault_stats *acc, const struct vblk *b)
{
	struct vblk_crashsim_fault_stats one;
	if (!b)
		return;
	vblk_crashsim_fault_stats(b, &one);
	acc->trashed_sectors += one.trashed_sectors;
	acc->unmapped_dropped += one.unmapped_dropped;
	acc->lost_allocs += one.lost_allocs;
	acc->lost_grows += one.lost_grows;
	acc->injected += one.injected;
}

static void close_devs(struct simhost *h)
{
	add_fault_stats(&h->fault_acc, h->dev);
	add_fault_stats(&h->fault_acc, h->jdev);
	vblk_close(h->jdev);
	h->jdev = NULL;
	vblk_close(h->dev);
	h->dev = NULL;
}

/*
 * The reactor, the store and, when the pool has one (create: jsize > 0; open:
 * PATH.journal exists), its journal file, paired with the store for crashes.
 */
static int open_dev(struct simhost *h, uint64_t create_size, uint64_t jsize, char *err,
		    size_t errlen)
{
	int rc = vreactor_create(256, &h->r);
	if (rc < 0) {
		snprintf(err, errlen, "io_uring setup failed: %s", strerror(-rc));
		return rc;
	}
	rc = arm_reactor(h);
	if (rc < 0)
		return rc;
	rc = open_store(h, h->path, create_size, &h->dev);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", h->path,
			 rc == -EEXIST ? "already exists" : strerror(-rc));
		return rc;
	}
	if (crashsim(h)) {
		vblk_crashsim_set_alloc_limit(h->dev, h->backing_limit);
		vblk_crashsim_set_faults(h->dev, h->crash_faults);
	}
	char jpath[sizeof(h->path) + 16];
	rc = vpool_journal_path(h->path, jpath, sizeof(jpath));
	if (rc < 0) {
		snprintf(err, errlen, "%s: path too long for its journal file", h->path);
		return rc;
	}
	if (create_size ? jsize == 0 : access(jpath, F_OK) != 0)
		return 0; /* the journal is in the store */
	rc = open_store(h, jpath, create_size ? jsize : 0, &h->jdev);
	if (rc == 0 && crashsim(h)) {
		vblk_crashsim_set_faults(h->jdev, h->crash_faults);
		rc = vblk_crashsim_link(h->dev, h->jdev);
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", jpath,
			 rc == -EEXIST ? "already exists" : strerror(-rc));
		if (create_size && rc == -EEXIST) {
			vblk_close(h->dev); /* the store just created goes again */
			h->dev = NULL;
			vblk_remove_store(h->r, h->path, NULL);
		}
	}
	return rc;
}

static struct simhost *host_new(const char *path, enum simhost_io io, uint64_t seed)
{
	struct simhost *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	snprintf(h->path, sizeof(h->path), "%s", path);
	h->io = io;
	h->seed = seed;
	h->whole_granules = -1;
	h->group_flush = -1;
	h->alua_shared = -1;
	h->xcopy_scope = VD_XCOPY_COVISIBLE; /* the daemon's default */
	h->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_condattr_t ca;
	bool sync_ok = pthread_condattr_init(&ca) == 0;
	if (sync_ok) {
		sync_ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
			  pthread_cond_init(&h->cv, &ca) == 0;
		pthread_condattr_destroy(&ca);
	}
	if (sync_ok && pthread_mutex_init(&h->mu, NULL) != 0) {
		pthread_cond_destroy(&h->cv);
		sync_ok = false;
	}
	if (h->wake_fd < 0 || !sync_ok) {
		if (h->wake_fd >= 0)
			close(h->wake_fd);
		free(h);
		return NULL;
	}
	return h;
}

/* reactor_gone: nothing of the engine can touch the ring any more, so it may go
 * back to the caller's kept rings (simhost_use_rings). */
static void lun_teardown(struct simhost *h, struct hlun *l, bool reactor_gone)
{
	if (l->dev && reactor_gone)
		tcmu_dev_abandon(l->dev);
	else if (l->dev)
		tcmu_dev_destroy(l->dev);
	l->dev = NULL;
	if (l->k && l->map && reactor_gone && simhost_rings_put(h->rings, l->k, l->map, l->map_size) == 0)
		l->k = NULL, l->map = NULL;
	if (l->map)
		munmap(l->map, l->map_size);
	l->map = NULL;
	if (l->k)
		simk_destroy(l->k);
	l->k = NULL;
}

static void host_free(struct simhost *h)
{
	engine_end(h);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	for (int i = 0; i < h->lun_end; i++)
		lun_teardown(h, &h->luns[i], false);
	while (h->held) {
		struct held *n = h->held->next;
		simhost_result_free(&h->held->r);
		free(h->held);
		h->held = n;
	}
	while (h->abandoned_waits) { /* no engine and no reactor any more: no late callback */
		struct dealloc_wait *n = h->abandoned_waits->next;
		free(h->abandoned_waits);
		h->abandoned_waits = n;
	}
	if (h->wake_fd >= 0)
		close(h->wake_fd);
	vd_views_free(h->views);
	din_cache_drop(&h->din);
	free(h);
}

/* Tear down everything below the LUN table without writing (reactor first: no late callbacks). */
static void abandon_engine(struct simhost *h)
{
	vreactor_destroy(h->r);
	h->r = NULL;
	h->watch.armed = h->watch.due = false; /* its timer died with the ring */
	for (int i = 0; i < h->lun_end; i++)
		lun_teardown(h, &h->luns[i], true);
	if (h->pool)
		vpool_abandon(h->pool);
	h->pool = NULL;
}

int simhost_create_pool(const char *path, uint64_t size, const struct vpool_params *prm,
			enum simhost_io io, uint64_t seed, struct simhost **out, char *err,
			size_t errlen)
{
	return simhost_create_pool_ex(path, size, prm, true, io, seed, out, err, errlen);
}

void simhost_remove_pool(const char *path)
{
	char j[4096 + 16];
	vblk_remove_store(NULL, path, NULL); /* no reactor here: blocks */
	if (vpool_journal_path(path, j, sizeof(j)) == 0)
		unlink(j);
}

/* Tear down a host whose setup failed part way. */
static void setup_failed(struct simhost *h)
{
	if (h->r) {
		close_devs(h);
		abandon_engine(h);
	}
	host_free(h);
}

static int create_pool(struct simhost *h, const char *path, uint64_t size,
		       const struct vpool_params *prm, bool journal_file, struct simhost **out,
		       char *err, size_t errlen)
{
	struct vpool_params p = *prm;
	p.size = size;
	int rc = open_dev(h, size, journal_file ? vpool_journal_store_size(&p, size) : 0, err,
			  errlen);
	if (rc == 0) {
		p.journal_dev = h->jdev;
		rc = vpool_format(h->dev, &p);
		if (rc < 0)
			snprintf(err, errlen, "cannot format %s: %s", path, strerror(-rc));
	}
	if (rc == 0) {
		rc = vpool_open_stores(h->dev, h->jdev, 0, &h->pool, NULL);
		if (rc < 0)
			snprintf(err, errlen, "cannot open the new pool %s: %s", path, strerror(-rc));
	}
	if (rc == 0)
		rc = engine_start(h);
	if (rc < 0) {
		setup_failed(h);
		return rc;
	}
	*out = h;
	return 0;
}

/* Open h's existing pool (open flags; verb names it in err) and start its engine;
 * on failure h is freed. */
static int open_existing(struct simhost *h, unsigned flags, const char *verb, struct simhost **out,
			 char *err, size_t errlen)
{
	int rc = open_dev(h, 0, 0, err, errlen);
	if (rc == 0) {
		struct vpool_open_report rep = {0};
		rc = vpool_open_stores(h->dev, h->jdev, flags, &h->pool, &rep);
		if (rc < 0)
			snprintf(err, errlen, "cannot %s pool %s: %s%s%s", verb, h->path,
				 strerror(-rc), rep.error[0] ? ": " : "", rep.error);
	}
	if (rc == 0)
		rc = engine_start(h);
	if (rc < 0) {
		setup_failed(h);
		return rc;
	}
	*out = h;
	return 0;
}

int simhost_create_pool_ex(const char *path, uint64_t size, const struct vpool_params *prm,
			   bool journal_file, enum simhost_io io, uint64_t seed,
			   struct simhost **out, char *err, size_t errlen)
{
	struct simhost *h = host_new(path, io, seed);
	if (!h)
		return -ENOMEM;
	return create_pool(h, path, size, prm, journal_file, out, err, errlen);
}

int simhost_create_pool_on(const char *name, const struct vpool_params *prm,
			   struct vblk_cs_images *images, struct vbuf_cache *bufs, uint64_t seed,
			   struct simhost **out, char *err, size_t errlen)
{
	if (!images)
		return -EINVAL;
	struct simhost *h = host_new(name, SIMHOST_IO_CRASHSIM_MEM, seed);
	if (!h)
		return -ENOMEM;
	h->images = images;
	h->bufs = bufs;
	return create_pool(h, name, vblk_cs_images_size(images), prm, false, out, err, errlen);
}

int simhost_open_pool(const char *path, enum simhost_io io, uint64_t seed, struct simhost **out,
		      char *err, size_t errlen)
{
	struct simhost *h = host_new(path, io, seed);
	if (!h)
		return -ENOMEM;
	return open_existing(h, 0, "open", out, err, errlen);
}

int simhost_open_standby(const char *path, struct simhost **out, char *err, size_t errlen)
{
	if (!vblk_rbd_spec(path)) {
		snprintf(err, errlen, "%s: a standby view needs an RBD image", path);
		return -EINVAL;
	}
	struct simhost *h = host_new(path, SIMHOST_IO_URING, 0);
	if (!h)
		return -ENOMEM;
	h->standby = true;
	/* as the daemon's vd_pool_view_refresh */
	return open_existing(h, VPOOL_OPEN_READONLY, "view", out, err, errlen);
}

/* ---- LUNs */

/*
 * The co-visibility facts the daemon would read from configfs, from the
 * visibility groups: group g is one TPG (view g) exporting the backstore of
 * every attached LUN in g. Rebuilt with the engine stopped whenever a LUN
 * comes, goes or changes group.
 */
static int update_views(struct simhost *h)
{
	struct vd_views *v = vd_views_new();
	if (!v)
		return -ENOMEM;
	char so[64];
	for (int i = 0; i < h->lun_end; i++) {
		const struct hlun *l = &h->luns[i];
		if (!l->used || !l->dev)
			continue;
		vd_backstore_so(&l->bs, so, sizeof(so));
		int rc = vd_views_add(v, (unsigned)l->group, so);
		if (rc < 0) {
			vd_views_free(v);
			return rc;
		}
	}
	vd_views_free(h->views);
	h->views = v;
	return 0;
}

/*
 * The EXTENDED COPY peer hook (struct scsi_lun.xcopy_peer): the attached LUN
 * with that NAA, if the daemon's rule (vd_xcopy_peer) allows it with the
 * scope set and the visibility groups as co-visibility facts. Runs on the
 * engine thread; the LUN table and views only change with the engine stopped.
 */
static struct scsi_lun *sim_xcopy_peer(struct scsi_lun *self, const uint8_t naa[16], int *why)
{
	struct simhost *h = self->peer_arg;
	struct hlun *me = NULL, *peer = NULL;
	for (int i = 0; i < h->lun_end; i++) {
		struct hlun *l = &h->luns[i];
		if (!l->used || !l->dev)
			continue;
		if (&l->lun == self)
			me = l;
		if (!peer && !memcmp(l->lun.info.naa, naa, 16))
			peer = l;
	}
	*why = SCSI_PEER_UNKNOWN;
	if (!me)
		return NULL;
	const struct vd_xcopy_policy pol = {.scope = h->xcopy_scope, .views = h->views};
	return vd_xcopy_peer(&pol, self, &me->bs, peer ? &peer->lun : NULL, peer ? &peer->bs : NULL,
			     why);
}

/*
 * What LIO's configfs would say of LUN n's backstore: core/user_sim/lun<n>
 * with cfgstring sim/<volume>, the volume's block size and size, no write
 * cache, hw_max_sectors for SIMHOST_MAX_XFER.
 */
static void sim_backstore(struct hlun *l, int n, struct vvol *v)
{
	struct vvol_info vi;
	vvol_get_info(v, &vi);
	snprintf(l->bs_dev, sizeof(l->bs_dev), "lun%d", n);
	l->bs = (struct vd_backstore){
		.hba = SIM_HBA, .dev = l->bs_dev, .pool = SIM_POOL, .volume = l->vol, .label = l->vol,
		.attrs = {.hw_block_size = vi.block_size,
			  .hw_max_sectors = SIMHOST_MAX_XFER / vi.block_size,
			  .dev_size = vi.size,
			  .write_cache = 0}};
}

/* Bring LUN n up as the daemon does a backstore (vd_backstore_volume, _lun_init). */
static int lun_bringup(struct simhost *h, int n)
{
	struct hlun *l = &h->luns[n];
	struct vvol *v = vpool_volume_find(h->pool, l->vol);
	if (!v)
		return -ENOENT; /* no volume, no backstore */
	sim_backstore(l, n, v);
	int rc = vd_backstore_volume(h->pool, &l->bs, &v);
	if (rc < 0)
		return rc;
	if (simhost_rings_get(h->rings, &l->k, &l->map, &l->map_size) < 0) {
		rc = simk_create(SIM_CMDR_SIZE, SIM_DATA_SIZE, &l->k);
		if (rc < 0)
			return rc;
		l->map_size = simk_map_size(l->k);
		l->map = mmap(NULL, l->map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			      simk_map_fd(l->k), 0);
		if (l->map == MAP_FAILED) {
			l->map = NULL;
			return -errno;
		}
	}
	simk_set_din_alloc(l->k, din_cache_alloc, &h->din);
	vd_backstore_lun_init(&l->lun, v, &l->bs, vd_ring_data_area(l->map, l->map_size),
			      h->threshold_pct);
	l->lun.xcopy_peer = sim_xcopy_peer;
	l->lun.peer_arg = h;
	/* as the daemon's vd_device_add with [alua]: the LUN takes the other groups'
	 * states from the pool's shared ALUA record (through the store or the view) */
	struct vblk_rbd_alua rec = h->watch_rec;
	if (h->alua_group && vblk_rbd_alua_get(h->dev, &rec) == 0)
		alua_update(h, VD_WATCH_NONE, &rec); /* the LUNs already here follow it */
	vd_backstore_alua(&l->lun, h->alua_group, h->alua_peers, h->alua_n_peers,
			  h->alua_shared >= 0 ? h->alua_shared == 1 : vblk_rbd_spec(h->path),
			  h->standby ? SCSI_ALUA_STANDBY : SCSI_ALUA_ACTIVE_OPTIMIZED, &h->watch_rec);
	rc = tcmu_dev_create(h->r, l->map, l->map_size, simk_irq_fd(l->k), simk_doorbell_fd(l->k),
			     &l->lun, &l->dev);
	return rc < 0 ? rc : update_views(h);
}

int simhost_volume_create(struct simhost *h, const char *name, uint64_t size, uint32_t block)
{
	engine_stop(h);
	int rc = vpool_volume_create(h->pool, name, size, block, NULL);
	return engine_resume(h, rc);
}

/* Soft threshold crossed (pool reactor = engine thread): THIN PROVISIONING SOFT
 * THRESHOLD REACHED (UA 38h/07h, SBC-4 4.7.3.7.2) on every LUN of the pool. */
static void threshold_crossed(void *arg, bool above)
{
	struct simhost *h = arg;
	if (!above)
		return; /* re-armed: the next crossing is reported again */
	for (int i = 0; i < h->lun_end; i++)
		if (h->luns[i].used && h->luns[i].dev)
			scsi_lun_post_soft_threshold_ua(&h->luns[i].lun);
}

/* (Re)install the soft threshold on the pool and the LUNs (engine stopped, LUNs up). */
static void apply_threshold(struct simhost *h)
{
	uint64_t bytes = vaaid_soft_threshold_bytes(h->pool, h->threshold_pct);
	for (int i = 0; i < h->lun_end; i++)
		if (h->luns[i].used && h->luns[i].dev)
			vaaid_lun_update_soft_threshold(&h->luns[i].lun, bytes);
	vpool_set_soft_threshold(h->pool, bytes, threshold_crossed, h);
}

int simhost_whole_granules(struct simhost *h, int on)
{
	if (on < -1 || on > 1)
		return -EINVAL;
	engine_stop(h);
	h->whole_granules = on;
	h->dev->unaligned_writes_serialize = on >= 0 ? on : h->detected_serialize;
	return engine_start(h);
}

int simhost_live_checkpoints(struct simhost *h, bool on)
{
	engine_stop(h);
	h->live_ckpt = on;
	return engine_start(h);
}

int simhost_checkpoint(struct simhost *h, bool *live)
{
	engine_stop(h);
	int rc = vpool_checkpoint(h->pool);
	struct vpool_diag d;
	vpool_get_diag(h->pool, &d);
	*live = d.ckpt_last.live;
	return engine_resume(h, rc);
}

int simhost_bench_skip_reserve(struct simhost *h, bool skip)
{
	if (h->io != SIMHOST_IO_URING)
		return -EOPNOTSUPP;
	engine_stop(h);
	h->bench_skip_reserve = skip;
	int rc = vblk_uring_bench_skip_reserve(h->dev, skip);
	return engine_resume(h, rc);
}

int simhost_group_flush(struct simhost *h, unsigned max_inflight)
{
	if (h->io != SIMHOST_IO_URING)
		return -EOPNOTSUPP;
	if (max_inflight > VBLK_GROUP_FLUSH_MAX)
		return -EINVAL;
	engine_stop(h);
	int rc = vblk_uring_set_group_flush(h->dev, max_inflight);
	if (rc == 0 && h->jdev)
		rc = vblk_uring_set_group_flush(h->jdev, max_inflight);
	if (rc == 0)
		h->group_flush = (int)max_inflight;
	return engine_resume(h, rc);
}

int simhost_set_threshold(struct simhost *h, unsigned pct)
{
	if (pct > 100)
		return -EINVAL;
	engine_stop(h);
	h->threshold_pct = pct;
	apply_threshold(h);
	return engine_start(h);
}

int simhost_pool_grow(struct simhost *h, uint64_t size)
{
	engine_stop(h);
	int rc = vpool_grow(h->pool, size);
	if (rc == 0 && h->threshold_pct)
		apply_threshold(h); /* the same percentage of the new capacity */
	return engine_resume(h, rc);
}

int simhost_attach(struct simhost *h, const char *volume, int lun)
{
	if (lun < 0 || lun >= SIMHOST_MAX_LUNS)
		return -ERANGE;
	if (h->luns[lun].used)
		return -EBUSY;
	engine_stop(h);
	struct hlun *l = &h->luns[lun];
	snprintf(l->vol, sizeof(l->vol), "%s", volume);
	l->used = true;
	if (lun >= h->lun_end)
		h->lun_end = lun + 1;
	int rc = lun_bringup(h, lun);
	if (rc < 0) {
		lun_teardown(h, l, false);
		l->used = false;
	}
	return engine_resume(h, rc);
}

int simhost_detach(struct simhost *h, int lun)
{
	if (lun < 0 || lun >= SIMHOST_MAX_LUNS || !h->luns[lun].used)
		return -ENODEV;
	struct hlun *l = &h->luns[lun];
	if (l->k && simk_inflight(l->k))
		return -EBUSY;
	engine_stop(h);
	tcmu_dev_stop(l->dev);
	/* Let the poll's cancellation complete here: a device destroyed with it pending
	 * leaves a small struct for the reactor to free, which a simulated power loss
	 * (reactor destroyed without running) would leak. */
	for (int i = 0; i < 1000 && !tcmu_dev_quiesced(l->dev); i++)
		if (vreactor_run_once(h->r, 10) < 0)
			break;
	lun_teardown(h, l, false);
	l->used = false;
	l->vol[0] = 0;
	int rc = update_views(h);
	return engine_resume(h, rc);
}

int simhost_volume_delete(struct simhost *h, const char *name)
{
	for (int i = 0; i < h->lun_end; i++)
		if (h->luns[i].used && !strcmp(h->luns[i].vol, name))
			return -EBUSY;
	engine_stop(h);
	int rc = vpool_volume_delete(h->pool, name);
	return engine_resume(h, rc);
}

int simhost_set_visibility(struct simhost *h, int lun, int group)
{
	if (lun < 0 || lun >= SIMHOST_MAX_LUNS)
		return -ERANGE;
	engine_stop(h);
	h->luns[lun].group = group;
	int rc = update_views(h);
	return engine_resume(h, rc);
}

int simhost_set_xcopy_scope(struct simhost *h, int scope)
{
	if (scope != VD_XCOPY_COVISIBLE && scope != VD_XCOPY_POOL && scope != VD_XCOPY_LUN)
		return -EINVAL;
	engine_stop(h);
	h->xcopy_scope = scope;
	return engine_start(h);
}

int simhost_alua(struct simhost *h, uint16_t group, const uint16_t *peers, unsigned n_peers)
{
	if (n_peers > SCSI_ALUA_MAX_PEERS || (n_peers && !group))
		return -EINVAL;
	h->alua_group = group;
	h->alua_n_peers = n_peers;
	if (n_peers)
		memcpy(h->alua_peers, peers, n_peers * sizeof(peers[0]));
	return 0;
}

int simhost_takeover(struct simhost *h, int *lost)
{
	*lost = 0;
	if (!h->standby)
		return -EINVAL;
	engine_stop(h);
	struct vblk *dev;
	struct vpool *pool;
	struct vpool_open_report rep = {0};
	struct vblk_rbd_conf conf = {.alua_group = h->alua_group}; /* the record names it */
	int rc = vblk_rbd_takeover(h->r, h->path, &conf, &dev);
	if (rc == 0 && (rc = vpool_open_stores(dev, NULL, 0, &pool, &rep)) < 0)
		vblk_close_live(dev);
	if (rc < 0)
		return engine_resume(h, rc);
	/* as the daemon's pool_takeover: the record the takeover wrote (the group it
	 * fenced), then vd_devices_pool_served: each LUN moves to the pool's volume or
	 * is lost (no volume); then nothing points into the view: closed */
	if (h->alua_group)
		vblk_rbd_alua_get(dev, &h->watch_rec);
	for (int i = 0; i < h->lun_end; i++)
		if (h->luns[i].used && h->luns[i].dev &&
		    vd_lun_pool_served(&h->luns[i].lun, pool, h->luns[i].vol, &h->watch_rec) < 0)
			++*lost;
	vpool_close(h->pool);
	vblk_close_live(h->dev);
	h->pool = pool;
	h->dev = dev;
	h->standby = false;
	return engine_start(h);
}

int simhost_alua_shared(struct simhost *h, bool shared)
{
	h->alua_shared = shared;
	return 0;
}

int simhost_pool_watch(struct simhost *h)
{
	engine_stop(h);
	h->watching = true;
	vd_pool_watch_arm(&h->watch, h->r);
	return engine_start(h);
}

int simhost_alua_states(struct simhost *h, uint8_t local, uint16_t owner)
{
	engine_stop(h);
	for (int i = 0; i < h->lun_end; i++)
		if (h->luns[i].used && h->luns[i].dev && h->luns[i].lun.alua.enabled)
			scsi_alua_set_states(&h->luns[i].lun, local, owner);
	return engine_start(h);
}

int simhost_alua_record(struct simhost *h, uint8_t local, uint16_t owner, const uint16_t *fenced,
			unsigned n_fenced)
{
	engine_stop(h);
	for (int i = 0; i < h->lun_end; i++)
		if (h->luns[i].used && h->luns[i].dev && h->luns[i].lun.alua.enabled)
			scsi_alua_set_record(&h->luns[i].lun, local, owner, fenced, n_fenced);
	return engine_start(h);
}

int simhost_lun_naa(struct simhost *h, int lun, uint8_t naa[16])
{
	if (lun < 0 || lun >= SIMHOST_MAX_LUNS || !h->luns[lun].used)
		return -ENODEV;
	memcpy(naa, h->luns[lun].lun.info.naa, 16);
	return 0;
}

int simhost_lun_diag(struct simhost *h, int lun, struct tcmu_dev_diag *out)
{
	if (lun < 0 || lun >= SIMHOST_MAX_LUNS || !h->luns[lun].used || !h->luns[lun].dev)
		return -ENODEV;
	engine_stop(h); /* the device's state is the engine thread's */
	tcmu_dev_get_diag(h->luns[lun].dev, out);
	return engine_start(h);
}

int simhost_engine_hook(struct simhost *h, int fd, void (*fn)(void *arg), void *arg)
{
	if (!fn)
		return -EINVAL;
	if (h->hook_fn)
		return -EBUSY;
	engine_stop(h);
	h->hook_fd = fd;
	h->hook_fn = fn;
	h->hook_arg = arg;
	hook_arm(h);
	return engine_start(h);
}

int simhost_engine_lun(const struct simhost *h, int lun, struct vaai_lun_stats *st,
		       uint8_t naa[16], const char **volume)
{
	if (lun < 0 || lun >= SIMHOST_MAX_LUNS || !h->luns[lun].used || !h->luns[lun].dev)
		return -ENODEV;
	*st = h->luns[lun].lun.stats;
	memcpy(naa, h->luns[lun].lun.info.naa, 16);
	*volume = h->luns[lun].vol;
	return 0;
}

void simhost_engine_pool(const struct simhost *h, struct vpool_stats *st, uint64_t *soft_threshold)
{
	vpool_get_stats(h->pool, st);
	*soft_threshold = vaaid_soft_threshold_bytes(h->pool, h->threshold_pct); /* 0: none */
}

/* ---- commands */

int simhost_submit(struct simhost *h, int lun, const uint8_t *cdb, size_t cdb_len,
		   const void *out, size_t out_len, size_t in_len, uint64_t *tag)
{
	if (lun < 0 || lun >= SIMHOST_MAX_LUNS || !h->luns[lun].used || !h->luns[lun].k)
		return -ENODEV;
	uint64_t t = ++h->next_tag;
	int rc = simk_submit(h->luns[lun].k, cdb, cdb_len, out, out_len, in_len,
			     t << 8 | (uint64_t)lun);
	if (rc == 0 && tag)
		*tag = t;
	else if (rc < 0)
		h->next_tag--;
	return rc;
}

unsigned simhost_inflight(const struct simhost *h)
{
	unsigned n = 0;
	for (int i = 0; i < h->lun_end; i++)
		if (h->luns[i].k)
			n += simk_inflight(h->luns[i].k);
	return n;
}

void simhost_result_free(struct simhost_result *r)
{
	free(r->r.data_in);
	r->r.data_in = NULL;
}

void simhost_result_release(struct simhost *h, struct simhost_result *r)
{
	din_cache_put(&h->din, r->r.data_in, r->r.data_in_cap);
	r->r.data_in = NULL;
}

void simhost_use_rings(struct simhost *h, struct simhost_rings *rings)
{
	h->rings = rings;
}

int simhost_use_bufs(struct simhost *h, struct vbuf_cache *bufs)
{
	engine_stop(h); /* the devices' bufs are the engine thread's while it runs */
	h->bufs = bufs;
	if (h->dev)
		h->dev->bufs = bufs;
	if (h->jdev)
		h->jdev->bufs = bufs;
	return engine_start(h);
}

static int reap_ready(struct simhost *h, struct simhost_result *res, unsigned max)
{
	unsigned got = 0;
	while (h->held && got < max) {
		struct held *x = h->held;
		h->held = x->next;
		res[got++] = x->r;
		free(x);
	}
	for (int i = 0; i < h->lun_end && got < max; i++) {
		struct hlun *l = &h->luns[i];
		if (!l->k || !simk_inflight(l->k))
			continue;
		struct simk_result tmp[64];
		unsigned want = max - got < 64 ? max - got : 64;
		int n = simk_reap(l->k, tmp, want, 0);
		if (n < 0)
			return n;
		for (int k = 0; k < n; k++) {
			res[got].lun = i;
			res[got].tag = tmp[k].tag >> 8;
			res[got].r = tmp[k];
			got++;
		}
	}
	return (int)got;
}

/*
 * A doorbell can wake the poll for completions an earlier reap already took, so
 * one wake-up may bring nothing: poll again until something completes or the
 * timeout has passed (0 = one look; < 0 = no limit).
 */
int simhost_reap(struct simhost *h, struct simhost_result *res, unsigned max, int timeout_ms)
{
	uint64_t end = timeout_ms > 0 ? vclock_ns() + (uint64_t)timeout_ms * 1000000u : 0;
	for (;;) {
		int n = reap_ready(h, res, max);
		if (n != 0)
			return n;
		struct pollfd fds[SIMHOST_MAX_LUNS];
		int nf = 0;
		for (int i = 0; i < h->lun_end; i++)
			if (h->luns[i].k && simk_inflight(h->luns[i].k))
				fds[nf++] = (struct pollfd){.fd = simk_doorbell_fd(h->luns[i].k),
							    .events = POLLIN};
		if (!nf)
			return 0;
		int wait_ms = timeout_ms;
		if (timeout_ms > 0) {
			uint64_t now = vclock_ns();
			if (now >= end)
				return 0;
			wait_ms = (int)((end - now + 999999u) / 1000000u);
		}
		if (poll(fds, (nfds_t)nf, wait_ms) < 0 && errno != EINTR)
			return -errno;
		if (timeout_ms == 0)
			return reap_ready(h, res, max);
	}
}

/* Reap everything in flight into the held list (for reopen). */
static int hold_all(struct simhost *h)
{
	struct held **tail = &h->held;
	while (*tail)
		tail = &(*tail)->next;
	while (simhost_inflight(h)) {
		struct simhost_result r[32];
		struct held *saved = h->held; /* reap only new completions */
		h->held = NULL;
		int n = simhost_reap(h, r, 32, 60000);
		h->held = saved;
		if (n < 0)
			return n;
		if (n == 0)
			return -ETIMEDOUT;
		for (int k = 0; k < n; k++) {
			struct held *x = calloc(1, sizeof(*x));
			if (!x)
				return -ENOMEM;
			x->r = r[k];
			*tail = x;
			tail = &x->next;
		}
	}
	return 0;
}

static int bring_all_luns(struct simhost *h)
{
	for (int i = 0; i < h->lun_end; i++) {
		if (!h->luns[i].used)
			continue;
		int rc = lun_bringup(h, i);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int simhost_reopen(struct simhost *h)
{
	if (h->io == SIMHOST_IO_CRASHSIM_MEM)
		return -EOPNOTSUPP; /* closing the devices would drop the pool */
	int rc = hold_all(h);
	if (rc < 0)
		return rc;
	engine_stop(h);
	for (int i = 0; i < h->lun_end; i++)
		if (h->luns[i].dev)
			tcmu_dev_stop(h->luns[i].dev);
	rc = vpool_close(h->pool);
	h->pool = NULL;
	/* New reactor: nothing of the old devices can complete late. */
	close_devs(h);
	abandon_engine(h);
	char err[256];
	int rc2 = open_dev(h, 0, 0, err, sizeof(err));
	if (rc2 == 0)
		rc2 = vpool_open_stores(h->dev, h->jdev, 0, &h->pool, NULL);
	if (rc2 == 0)
		rc2 = bring_all_luns(h);
	if (rc2 == 0 && h->threshold_pct)
		apply_threshold(h);
	if (rc2 == 0)
		rc2 = engine_start(h);
	return rc < 0 ? rc : rc2;
}

/* After a recovery (rc its result): the LUNs attached again, the soft
 * threshold set again, the engine started. */
static int resume_after_recovery(struct simhost *h, int rc)
{
	if (rc == 0)
		rc = bring_all_luns(h);
	if (rc == 0 && h->threshold_pct)
		apply_threshold(h);
	if (rc == 0)
		rc = engine_start(h);
	return rc;
}

/*
 * io=rbd_kill: the engine was killed at its armed I/O (or is now): it is never
 * run again, and nothing of it is closed cleanly (reactor destroyed, pool and
 * LUNs abandoned, results not yet reaped dropped). A new client takes the image
 * over (vblk_rbd_takeover: the old client's lock broken, the old client
 * blocklisted, so what it still had in flight lands now or never), the old
 * client is torn down only then, and the pool is recovered from the image.
 */
static int kill_and_take_over(struct simhost *h)
{
	engine_stop(h);
	uint64_t t0 = vclock_ns();
	vblk_killpoint_kill_now(h->dev);
	memset(&h->last_kill, 0, sizeof(h->last_kill));
	vblk_killpoint_kill_stats(h->dev, &h->last_kill.in_flight, &h->last_kill.dropped);
	while (h->held) {
		struct held *n = h->held->next;
		simhost_result_free(&h->held->r);
		free(h->held);
		h->held = n;
	}
	struct vblk *old = h->dev;
	h->dev = NULL;
	abandon_engine(h);
	int rc = vreactor_create(256, &h->r);
	if (rc < 0) {
		vblk_close(old);
		return rc;
	}
	arm_reactor(h);
	struct vblk *in = NULL;
	rc = vblk_rbd_takeover(h->r, h->path, NULL, &in);
	uint64_t t1 = vclock_ns();
	vblk_close(old); /* the dead client's teardown, after its fence */
	uint64_t t2 = vclock_ns();
	if (rc == 0 && (rc = vblk_killpoint_wrap(h->r, in, h->seed + ++h->kp_opens, &h->dev)) < 0)
		vblk_close(in);
	if (rc < 0)
		return rc;
	vblk_killpoint_ack_killed(h->dev, h->ack_killed);
	store_opened(h, &h->dev);
	memset(&h->last_recovery, 0, sizeof(h->last_recovery));
	rc = vpool_open_stores(h->dev, h->jdev, 0, &h->pool, &h->last_recovery);
	/* as the daemon after an open or takeover (src/daemon/pools.c): free extents the
	 * image still holds are discarded (their discards run once the engine does) */
	if (rc == 0)
		rc = vpool_sweep_store(h->pool, &h->last_kill.swept);
	h->last_kill.takeover_ns = t1 - t0;
	h->last_kill.old_close_ns = t2 - t1;
	h->last_kill.recovery_ns = vclock_ns() - t2;
	return resume_after_recovery(h, rc);
}

void simhost_last_kill(const struct simhost *h, struct simhost_kill_report *rep)
{
	*rep = h->last_kill;
}

int simhost_rbd_kill_ack_killed(struct simhost *h, bool on)
{
	if (h->io != SIMHOST_IO_RBD_KILL)
		return -EOPNOTSUPP;
	engine_stop(h);
	h->ack_killed = on;
	vblk_killpoint_ack_killed(h->dev, on);
	return engine_start(h);
}

int simhost_crash(struct simhost *h)
{
	if (h->io == SIMHOST_IO_RBD_KILL)
		return kill_and_take_over(h);
	if (!crashsim(h))
		return -EOPNOTSUPP;
	engine_stop(h);
	if (!vblk_crashsim_crashed(h->dev))
		vblk_crashsim_crash_now(h->dev);
	struct vpool_diag dg;
	vpool_get_diag(h->pool, &dg);
	h->crash_ckpt_phase = dg.ckpt_phase != VPOOL_CKPT_IDLE ? dg.ckpt_phase : dg.ckpt_fail_phase;
	h->crash_live_records = dg.ckpt_live_records;
	/* Results of commands in flight are lost with the power. */
	while (h->held) {
		struct held *n = h->held->next;
		simhost_result_free(&h->held->r);
		free(h->held);
		h->held = n;
	}
	abandon_engine(h);
	int rc = vreactor_create(256, &h->r);
	if (rc < 0)
		return rc;
	arm_reactor(h);
	vblk_crashsim_power_on(h->dev, h->r);
	memset(&h->last_recovery, 0, sizeof(h->last_recovery));
	rc = vpool_open_stores(h->dev, h->jdev, 0, &h->pool, &h->last_recovery);
	return resume_after_recovery(h, rc);
}

void simhost_last_crash_ckpt(const struct simhost *h, int *phase, uint64_t *live_records)
{
	*phase = h->crash_ckpt_phase;
	*live_records = h->crash_live_records;
}

void simhost_last_recovery(const struct simhost *h, struct vpool_open_report *rep)
{
	*rep = h->last_recovery;
}

int simhost_arm_crash(struct simhost *h, uint64_t n)
{
	if (!killable(h))
		return -EOPNOTSUPP;
	engine_stop(h);
	if (h->io == SIMHOST_IO_RBD_KILL)
		vblk_killpoint_arm(h->dev, n);
	else
		vblk_crashsim_arm(h->dev, n);
	return engine_start(h);
}

bool simhost_crashed(const struct simhost *h) { return dead(h); }

uint64_t simhost_io_ops(const struct simhost *h)
{
	if (h->io == SIMHOST_IO_RBD_KILL)
		return vblk_killpoint_io_count(h->dev);
	return crashsim(h) ? vblk_crashsim_io_count(h->dev) : 0;
}

struct vblk_stats simhost_blk_stats(struct simhost *h)
{
	engine_stop(h); /* the counters are the engine thread's */
	struct vblk_stats st = h->dev->stats;
	if (h->jdev) { /* the journal file's writes are all metadata */
		const struct vblk_stats *j = &h->jdev->stats;
		st.read_ops += j->read_ops;
		st.write_ops += j->write_ops;
		st.flush_ops += j->flush_ops;
		st.dsync_flushes += j->dsync_flushes;
		st.grouped_writes += j->grouped_writes;
		st.dsync_flush_ns += j->dsync_flush_ns;
		st.read_ns += j->read_ns;
		st.write_ns += j->write_ns;
		st.bytes_read += j->bytes_read;
		st.bytes_written += j->bytes_written;
		st.meta_bytes_written += j->meta_bytes_written;
		st.unaligned_writes += j->unaligned_writes;
	}
	engine_start(h);
	return st;
}

int simhost_pool_stats(struct simhost *h, struct vpool_stats *st)
{
	engine_stop(h);
	vpool_get_stats(h->pool, st);
	return engine_start(h);
}

char *simhost_stats_json(struct simhost *h)
{
	engine_stop(h);
	json_object *o = vpool_stats_json(h->pool), *pj;
	if (json_object_object_get_ex(o, "pool", &pj))
		json_object_object_add(pj, "counters", vpool_counters_json(h->pool));
	char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	engine_start(h);
	return s;
}

char *simhost_lun_stats_json(struct simhost *h, int lun)
{
	if (lun < 0 || lun >= SIMHOST_MAX_LUNS || !h->luns[lun].used || !h->luns[lun].dev)
		return NULL;
	engine_stop(h); /* the counters are the engine thread's */
	struct vaai_lun_stats st = h->luns[lun].lun.stats;
	engine_start(h);
	json_object *o = vaai_lun_stats_json(&st);
	char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

static void dealloc_done(void *arg, int res)
{
	struct dealloc_wait *w = arg;
	w->res = res;
	w->done = true;
}

int simhost_deallocate(struct simhost *h, const char *volume, uint64_t off, uint64_t len)
{
	engine_stop(h);
	struct vvol *v = vpool_volume_find(h->pool, volume);
	/* On the heap: when the power goes off before the deallocation completes, this call
	 * returns while the request may still be in the pool -- its callback can then run
	 * later, on the engine thread (a crashed device fails what is in flight). The wait
	 * then belongs to the host until host_free (never to a returned stack frame). */
	struct dealloc_wait *w = calloc(1, sizeof(*w));
	int rc = !w ? -ENOMEM : v ? vvol_deallocate(v, off, len, dealloc_done, w) : -ENOENT;
	bool pending = rc == 0;
	while (rc == 0 && !w->done) {
		if (dead(h)) {
			rc = -EIO; /* the power is off: the request dies with the pool */
			break;
		}
		int n = vreactor_run_once(h->r, 10);
		if (n < 0)
			rc = n;
	}
	if (rc == 0)
		rc = w->res;
	if (pending && !w->done) {
		w->next = h->abandoned_waits;
		h->abandoned_waits = w;
	} else {
		free(w);
	}
	return engine_resume(h, rc);
}

int simhost_backing_limit(struct simhost *h, uint64_t limit)
{
	if (!crashsim(h))
		return -EOPNOTSUPP;
	engine_stop(h);
	h->backing_limit = limit;
	vblk_crashsim_set_alloc_limit(h->dev, limit);
	return engine_start(h);
}

int simhost_crash_faults(struct simhost *h, unsigned faults)
{
	if (h->io == SIMHOST_IO_RBD_KILL && faults == 0)
		return 0; /* a kill only: tear */
	if (!crashsim(h))
		return -EOPNOTSUPP;
	engine_stop(h);
	h->crash_faults = faults;
	vblk_crashsim_set_faults(h->dev, faults);
	if (h->jdev)
		vblk_crashsim_set_faults(h->jdev, faults);
	return engine_start(h);
}

void simhost_crash_fault_stats(struct simhost *h, struct vblk_crashsim_fault_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!crashsim(h))
		return;
	engine_stop(h); /* the counters are the engine thread's */
	*st = h->fault_acc;
	add_fault_stats(st, h->dev);
	add_fault_stats(st, h->jdev);
	engine_start(h);
}

int simhost_hydration(struct simhost *h, enum simhost_hyd op, uint64_t *pending,
		      uint64_t *hydrated)
{
	engine_stop(h);
	int rc = 0;
	if (op == SIMHOST_HYD_PAUSE || op == SIMHOST_HYD_RESUME) {
		h->hyd_paused = op == SIMHOST_HYD_PAUSE;
		vpool_hydration_pause(h->pool, h->hyd_paused);
	} else if (op == SIMHOST_HYD_WAIT) {
		h->hyd_paused = false;
		rc = vpool_hydration_wait(h->pool);
	}
	uint64_t pend, done;
	vpool_hydration_stats(h->pool, &pend, &done);
	if (pending)
		*pending = pend;
	if (hydrated)
		*hydrated = done;
	return engine_resume(h, rc);
}

int simhost_verify(struct simhost *h, FILE *f)
{
	engine_stop(h);
	int rc = vpool_verify(h->pool, f);
	engine_start(h);
	return rc;
}

int simhost_verify_powered(struct simhost *h, FILE *f)
{
	engine_stop(h);
	int rc = simhost_crashed(h) ? -ENODEV : vpool_verify(h->pool, f);
	engine_start(h);
	return rc;
}

int simhost_close(struct simhost *h)
{
	int rc = hold_all(h);
	engine_stop(h);
	for (int i = 0; i < h->lun_end; i++)
		if (h->luns[i].dev)
			tcmu_dev_stop(h->luns[i].dev);
	/* no pool after a recovery that failed (simhost_crash, simhost_reopen) */
	int rc2 = h->pool ? vpool_close(h->pool) : 0;
	h->pool = NULL;
	close_devs(h);
	abandon_engine(h);
	host_free(h);
	return rc < 0 ? rc : rc2;
}
