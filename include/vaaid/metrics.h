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
 * The endpoint. libmicrohttpd serves the connections on a thread of its own
 * (limits: 16 connections, 10 s per connection), so a slow, malformed or
 * flooding client never touches the reactor. A GET /metrics asks the reactor
 * for the text: the request is posted (vd_metrics_fd becomes readable) and the
 * main loop answers it with vd_metrics_service, which calls snap on the
 * reactor's thread; the HTTP side waits at most 5 s (then 503). Other paths
 * are 404, other methods 405.
 */
struct vd_metrics;
typedef char *(*vd_metrics_snap_fn)(void *arg, size_t *len); /* malloc'd text, or NULL */
int vd_metrics_start(const char *listen, vd_metrics_snap_fn snap, void *arg,
		     struct vd_metrics **out, char *err, size_t errlen);
int vd_metrics_fd(const struct vd_metrics *m);
void vd_metrics_service(struct vd_metrics *m); /* main loop, when vd_metrics_fd is readable */
uint16_t vd_metrics_port(const struct vd_metrics *m); /* the port bound (listen's, or chosen for 0) */
void vd_metrics_stop(struct vd_metrics *m);

#endif
