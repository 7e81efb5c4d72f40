/*
 * The Prometheus endpoint (issue 25): `[metrics] listen = ADDRESS:PORT` in
 * vaaid.conf serves GET /metrics in Prometheus' text format with
 * libmicrohttpd (src/daemon/metrics.c); the text is made from a snapshot of
 * the counters (src/daemon/metrics_text.c).
 */
#ifndef VAAID_METRICS_H
#define VAAID_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "vaaid/daemon.h"
#include "vaaid/lun_stats.h"
#include "vaaid/pool.h"

struct vd_metrics_lun {
	const char *pool, *volume;
	uint8_t naa[16];
	struct vaai_lun_stats stats;
};

struct vd_metrics_pool {
	const char *name;
	unsigned luns;
	uint64_t soft_threshold; /* used bytes at which LUNs get 38h/07h (0: none) */
	struct vpool_stats stats;
};

/* The exposition text (malloc'd; *len its length), or NULL (out of memory). */
char *vd_metrics_format(const struct vd_metrics_lun *luns, size_t nluns,
			const struct vd_metrics_pool *pools, size_t npools, size_t *len);

/*
 * A copy of the counters (include/vaaid/metrics.h's two tables), taken on the
 * reactor's thread and formatted elsewhere (src/daemon/metrics_snapshot.c): it
 * owns its arrays and its strings (pool and volume names, strdup'd), so it
 * outlives the LUNs and pools it was copied from.
 */
struct vd_metrics_snapshot {
	struct vd_metrics_lun *luns;
	size_t nluns;
	struct vd_metrics_pool *pools;
	size_t npools;
};
/* Room for nluns LUNs and npools pools (zeroed), or NULL. */
struct vd_metrics_snapshot *vd_metrics_snapshot_alloc(size_t nluns, size_t npools);
char *vd_metrics_snapshot_text(const void *snap, size_t *len); /* vd_metrics_format of it */
void vd_metrics_snapshot_free(void *snap); /* its names (NULL ones skipped), arrays and itself */

/*
 * The endpoint. libmicrohttpd serves the connections on a thread of its own
 * (limits: 16 connections, 10 s per connection), so a slow, malformed or
 * flooding client never touches the reactor. A GET /metrics asks the reactor
 * for a snapshot: the request is posted (vd_metrics_fd becomes readable) and
 * the main loop answers it with vd_metrics_service, which calls the source's
 * take on the reactor's thread; the HTTP side waits at most 5 s (then 503),
 * and makes the text from the snapshot on its own thread (render), then frees
 * it (drop). Other paths are 404, other methods 405.
 */
struct vd_metrics;
struct vd_metrics_source {
	void *(*take)(void *arg);                       /* reactor: a snapshot, or NULL */
	char *(*render)(const void *snap, size_t *len); /* HTTP thread: malloc'd text, or NULL */
	void (*drop)(void *snap);                       /* any thread: frees a snapshot */
	void *arg;
};
int vd_metrics_start_source(const char *listen, const struct vd_metrics_source *src,
			    struct vd_metrics **out, char *err, size_t errlen);
/* The same with the text made on the reactor's thread by snap (malloc'd text, or NULL). */
typedef char *(*vd_metrics_snap_fn)(void *arg, size_t *len);
int vd_metrics_start(const char *listen, vd_metrics_snap_fn snap, void *arg,
		     struct vd_metrics **out, char *err, size_t errlen);
int vd_metrics_fd(const struct vd_metrics *m);
void vd_metrics_service(struct vd_metrics *m); /* main loop, when vd_metrics_fd is readable */
uint16_t vd_metrics_port(const struct vd_metrics *m); /* the port bound (listen's, or chosen for 0) */
void vd_metrics_stop(struct vd_metrics *m);

#endif
