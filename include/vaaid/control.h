/*
 * vaaid control socket (src/daemon/control.c): the admin interface vaaictl
 * talks to. A Unix stream socket, mode 0600 in a 0700 directory, and peers
 * other than root (SO_PEERCRED) are refused.
 *
 * Protocol: the client sends one request line, the daemon answers one JSON
 * object on one line and closes (a client that has not sent its line, or
 * taken its answer, within 10 s of connecting is disconnected; nothing waits
 * for it meanwhile). Requests:
 *   status | pool list | volume list
 *   pool create NAME PATH SIZE [EXTENT] [force]
 *   pool grow NAME SIZE
 *   volume delete POOL/VOLUME
 *   stats [POOL[/VOLUME]]       (command counters: src/daemon/control_stats.c)
 * Answer: {"ok":true,...} or {"ok":false,"error":"what is wrong"}.
 * A line is at most 2047 bytes, of at most 8 words separated by space, tab,
 * CR (include/vaaid/control_request.h: the requests without the socket).
 */
#ifndef VAAID_CONTROL_H
#define VAAID_CONTROL_H

#include "vaaid/daemon.h"

struct vd_control;

int vd_control_open(const struct vd_config *conf, struct vreactor *r, struct vd_pools *pools,
		    struct vd_devices *devs, struct vd_control **out);
int vd_control_fd(const struct vd_control *c);
/* Accept every pending connection and serve it as far as it goes without
 * waiting (main loop, not a callback). */
void vd_control_handle(struct vd_control *c);
/* Go on with the connections the reactor marked (main loop, after every
 * reactor turn): read, answer, send, close -- never waiting for a client. */
void vd_control_service(struct vd_control *c);
/* Connections marked since the last vd_control_service (e.g. while a control
 * operation or a pool-watch look ran the reactor nested): the daemon's loop
 * must not block before serving them. */
bool vd_control_pending(const struct vd_control *c);
/* Open connections (tests), and the deadline of each (default 10 s; tests). */
unsigned vd_control_connections(const struct vd_control *c);
void vd_control_set_deadline_ms(struct vd_control *c, unsigned ms);
void vd_control_close(struct vd_control *c);

#endif
