/*
 * The control socket's requests without the socket (src/daemon/control_request.c):
 * the protocol is in include/vaaid/control.h. src/daemon/control.c reads a
 * line from a connection and answers with vd_control_answer; the fuzz target
 * tests/fuzz/fuzz_control.c and vaaictl's (fuzz_vaaictl) call it directly.
 */
#ifndef VAAID_CONTROL_REQUEST_H
#define VAAID_CONTROL_REQUEST_H

#include "vaaid/daemon.h"

struct json_object;

/* What a request acts on: the daemon's configuration (state_dir: pools.conf),
 * reactor, pools and attached devices. */
struct vd_control_env {
	const struct vd_config *conf;
	struct vreactor *r;
	struct vd_pools *pools;
	struct vd_devices *devs;
};

/* The longest request line the daemon reads (bytes, without its "\n"). */
#define VD_CTL_LINE_MAX 2047
/* The most words a request line has that is looked at (more: refused). */
#define VD_CTL_MAX_WORDS 8
/* The characters that separate a request line's words. */
#define VD_CTL_SEPARATORS " \t\r\n"

/* Split line in place into its words (strtok_r over VD_CTL_SEPARATORS): the
 * first max go into tok; returns how many words the line has (> max: more
 * than tok holds). */
int vd_control_tokenize(char *line, char **tok, int max);
/* Answer one request line (modified in place): a new JSON object,
 * {"ok":true,...} or {"ok":false,"error":"..."}; the caller puts it. Main loop
 * only (pool create and pool grow run the reactor). */
struct json_object *vd_control_answer(const struct vd_control_env *c, char *line);
/* The `stats [POOL[/VOLUME]]` request (src/daemon/control_stats.c), its words
 * as vd_control_tokenize split them. */
struct json_object *vd_control_stats(const struct vd_control_env *c, char **tok, int nt);
/* {"ok":false,"error":<printf of fmt>}, the message sized to fit. */
__attribute__((format(printf, 1, 2)))
struct json_object *vd_control_error(const char *fmt, ...);

#endif
