/*
 * Daemon configuration: built-in defaults + an INI file read with inih.
 *
 * How this works: vd_config_defaults() gives a configuration that works with
 * no file (state directory /var/lib/vaaid, pool "default" as a sparse file
 * there). vd_config_load() reads
 *
 *   [daemon]
 *   state_dir = /var/lib/vaaid
 *   control_socket = /run/vaaid/control
 *   log_level = info            ; err | warn | info | debug
 *   soft_threshold = 80         ; percent of pool capacity used
 *   default_pool_size = 32G
 *   xcopy_scope = covisible     ; covisible | pool | lun (docs/xcopy.md)
 *   whole_granule_writes = auto ; auto | on | off (docs/design.md rule 14)
 *   group_flush = auto          ; auto | on | off (docs/design.md rule 15)
 *   [pool NAME]
 *   path = /srv/vaaid/NAME.pool ; file or block device, or rbd:CEPHPOOL/IMAGE
 *   size = 2T                   ; when the file is created
 *   extent = 1M                 ; power of two, 64K..16M
 *   create = auto               ; a missing store: created (yes), refused (no); auto:
 *                               ; a file yes, an rbd: image no; pools.conf's pools
 *                               ; (vd_config_load_recorded): no unless yes
 *   [ceph]                      ; pools on RBD (docs/ceph.md)
 *   conf = /etc/ceph/ceph.conf  ; default: librados' (CEPH_CONF, /etc/ceph/ceph.conf)
 *   client_id = vaaid           ; cephx user client.vaaid (default: admin)
 *   keyring = /etc/ceph/ceph.client.vaaid.keyring
 *   op_timeout = 30             ; s (1..3600): a mon/OSD request or connect that the
 *                               ; cluster does not answer fails then (docs/ceph.md)
 *   [alua]                      ; gateways of shared RBD pools (docs/ceph.md "ALUA")
 *   group = 1                   ; this gateway's target port group id, 1..65535
 *   peers = 2,3                 ; the other gateways' group ids (at most 7)
 *   [tcmu]                      ; two gateway identities on one host (docs/ceph.md)
 *   handler = vaai              ; the user:NAME backstores served here ([A-Za-z0-9_])
 *   leave = vaaib               ; another daemon's handlers here: no answer (at most 4)
 *
 * Every unknown section or key, and every bad value, is an error naming the
 * file and line. vd_config_finish() adds pool "default" when absent.
 *
 * The file is read whole and checked before inih sees it: inih reads a line in
 * pieces of at most INI_MAX_LINE - 1 bytes (200 in Debian's libinih) and counts
 * each piece as a line, so a longer setting was cut (a path shortened, the rest
 * refused as "syntax error" at a line number past the file's end) and a long
 * comment refused. Comment lines are emptied (kept as empty lines, so the line
 * numbers stay), a longer setting line is refused naming its line, and so is a
 * NUL byte (inih would stop reading the line there), and a file above 1 MiB.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "vaaid/daemon.h"
#include "vaaid/io.h"
#include "vaaid/rbd_spec.h"
#include "vaaid/util.h"

void vd_config_defaults(struct vd_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/vaaid");
	snprintf(c->control_socket, sizeof(c->control_socket), "/run/vaaid/control");
	snprintf(c->sysfs_root, sizeof(c->sysfs_root), "/sys");
	snprintf(c->configfs_root, sizeof(c->configfs_root), "/sys/kernel/config");
	snprintf(c->dev_root, sizeof(c->dev_root), "/dev");
	c->log_level = VLOG_INFO;
	c->soft_threshold = 80;
	c->default_pool_size = 32ull << 30;
	c->ceph.op_timeout = VBLK_RBD_OP_TIMEOUT_DEFAULT;
	snprintf(c->tcmu.handler, sizeof(c->tcmu.handler), "%s", VD_SUBTYPE);
}

enum vd_handler_claim vd_handler_claim(const struct vd_tcmu_conf *t, const char *subtype)
{
	if (!strcmp(subtype, t->handler))
		return VD_HANDLER_SERVE;
	for (unsigned i = 0; i < t->n_leave; i++)
		if (!strcmp(subtype, t->leave[i]))
			return VD_HANDLER_LEAVE;
	return VD_HANDLER_REFUSE;
}

bool vd_valid_name(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n == 0 || n > max || s[0] == '.' || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == '_' || ch == '.' || ch == '-'))
			return false;
	}
	return true;
}

struct load_ctx {
	struct vd_config *c;
	char *err;
	size_t errlen;
	const char *file;
	int line;
	char msg[256];
};

static int fail(struct load_ctx *x, const char *fmt, const char *a, const char *b)
{
	snprintf(x->msg, sizeof(x->msg), fmt, a, b);
	return 0; /* inih: stop with this line as the error line */
}

/* The index of v among the n words (a key's allowed values, in enum order), or -1. */
static int word_index(const char *v, const char *const *words, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v, words[i]))
			return i;
	return -1;
}

static const char *const log_levels[] = {"err", "warn", "info", "debug"};           /* VLOG_* */
static const char *const xcopy_scopes[] = {"covisible", "pool", "lun"};             /* VD_XCOPY_* */
static const char *const whole_modes[] = {"auto", "on", "off"};                     /* VD_WHOLE_* */
static const char *const group_modes[] = {"auto", "on", "off"};                     /* VD_GROUP_* */
static const char *const create_modes[] = {"auto", "yes", "no"};                    /* VD_CREATE_* */
static const char *const no_yes[] = {"no", "yes"};
#define WORDS(a) (a), (int)(sizeof(a) / sizeof((a)[0]))

static struct vd_pool_conf *pool_conf(struct vd_config *c, const char *name)
{
	for (unsigned i = 0; i < c->n_pools; i++)
		if (!strcmp(c->pools[i].name, name))
			return &c->pools[i];
	if (c->n_pools >= VD_MAX_POOLS)
		return NULL;
	struct vd_pool_conf *p = &c->pools[c->n_pools++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	return p;
}

static int set_path(char *dst, size_t len, const char *v)
{
	if (v[0] != '/' || strlen(v) >= len)
		return -EINVAL;
	snprintf(dst, len, "%s", v);
	return 0;
}

/* A target port group id: decimal 1..65535 (SPC-4 6.36: 0 is not used here). */
static int parse_group(const char *s, const char **end, uint16_t *id)
{
	char *e;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	unsigned long v = strtoul(s, &e, 10);
	if (v < 1 || v > 65535)
		return -EINVAL;
	*id = (uint16_t)v;
	*end = e;
	return 0;
}

/* "ITEM,ITEM,...": spaces and tabs around the commas allowed, at least one item and
 * at most max; item(arg, s, n, i) takes the i-th, s[0..n) (0, or -EINVAL: not an
 * item, or a repeat of an earlier one). The one list syntax of [alua] peers and
 * [tcmu] leave. */
static int parse_list(const char *s, unsigned max,
		      int (*item)(void *arg, const char *s, size_t n, unsigned i), void *arg)
{
	for (unsigned i = 0;; i++) {
		while (*s == ' ' || *s == '\t')
			s++;
		size_t n = strcspn(s, ", \t");
		if (n == 0 || i >= max || item(arg, s, n, i) < 0)
			return -EINVAL;
		s += n;
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return 0;
		if (*s++ != ',')
			return -EINVAL;
	}
}

/* [alua] peers: a group id (parse_group), not repeated. */
static int peer_item(void *arg, const char *s, size_t n, unsigned i)
{
	struct vd_alua_conf *a = arg;
	char w[8];
	const char *end;
	uint16_t id;
	if (n >= sizeof(w))
		return -EINVAL;
	memcpy(w, s, n);
	w[n] = 0;
	if (parse_group(w, &end, &id) < 0 || *end)
		return -EINVAL;
	for (unsigned k = 0; k < i; k++)
		if (a->peers[k] == id)
			return -EINVAL;
	a->peers[i] = id;
	a->n_peers = i + 1;
	return 0;
}

/* A handler name: letters, digits and '_' (a D-Bus object path element,
 * /org/kernel/TCMUService1/NAME, src/dbus/service.c), at most VD_HANDLER_MAX, and
 * not HandlerManager1: /org/kernel/TCMUService1/HandlerManager1 is the D-Bus
 * handler manager's path (tcmu-runner's; targetcli looks there). NULL, or why not. */
static const char *handler_refused(const char *s)
{
	static const char *const not_name = "is not a handler name (letters, digits, _; at most 32)";
	size_t n = strlen(s);
	if (n == 0 || n > VD_HANDLER_MAX)
		return not_name;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return not_name;
	if (!strcmp(s, "HandlerManager1"))
		return "is the D-Bus handler manager's name, not a handler's";
	return NULL;
}

/* [tcmu] leave: a handler name (handler_refused), not repeated. */
static int leave_item(void *arg, const char *s, size_t n, unsigned i)
{
	struct vd_tcmu_conf *t = arg;
	if (n > VD_HANDLER_MAX)
		return -EINVAL;
	char *name = t->leave[i];
	memcpy(name, s, n);
	name[n] = 0;
	if (handler_refused(name))
		return -EINVAL;
	for (unsigned k = 0; k < i; k++)
		if (!strcmp(t->leave[k], name))
			return -EINVAL;
	t->n_leave = i + 1;
	return 0;
}

static int on_kv(void *user, const char *section, const char *key, const char *value)
{
	struct load_ctx *x = user;
	struct vd_config *c = x->c;
	uint64_t n;
	if (!strcmp(section, "daemon")) {
		if (!strcmp(key, "state_dir")) {
			if (set_path(c->state_dir, sizeof(c->state_dir), value) < 0)
				return fail(x, "state_dir '%s' must be an absolute path%s", value, "");
		} else if (!strcmp(key, "control_socket")) {
			if (set_path(c->control_socket, sizeof(c->control_socket), value) < 0)
				return fail(x, "control_socket '%s' must be an absolute path%s", value, "");
		} else if (!strcmp(key, "log_level")) {
			int l = word_index(value, WORDS(log_levels));
			if (l < 0)
				return fail(x, "log_level '%s' is not one of err, warn, info, debug%s", value, "");
			c->log_level = l;
		} else if (!strcmp(key, "soft_threshold")) {
			char *end;
			unsigned long t = strtoul(value, &end, 10);
			if (!*value || *end || t < 1 || t > 100)
				return fail(x, "soft_threshold '%s' must be a percentage 1..100%s", value, "");
			c->soft_threshold = (unsigned)t;
		} else if (!strcmp(key, "xcopy_scope")) {
			int v = word_index(value, WORDS(xcopy_scopes));
			if (v < 0)
				return fail(x, "xcopy_scope '%s' is not one of covisible, pool, lun%s", value, "");
			c->xcopy_scope = v;
		} else if (!strcmp(key, "whole_granule_writes")) {
			int v = word_index(value, WORDS(whole_modes));
			if (v < 0)
				return fail(x, "whole_granule_writes '%s' is not one of auto, on, off%s", value, "");
			c->whole_granule_writes = v;
		} else if (!strcmp(key, "group_flush")) {
			int v = word_index(value, WORDS(group_modes));
			if (v < 0)
				return fail(x, "group_flush '%s' is not one of auto, on, off%s", value, "");
			c->group_flush = v;
		} else if (!strcmp(key, "default_pool_size")) {
			if (vparse_size(value, &n) < 0 || n == 0)
				return fail(x, "default_pool_size '%s' is not a size (e.g. 32G)%s", value, "");
			c->default_pool_size = n;
		} else {
			return fail(x, "unknown key '%s' in [daemon]%s", key, "");
		}
		return 1;
	}
	if (!strncmp(section, "pool ", 5)) {
		const char *name = section + 5;
		if (!vd_valid_name(name, VD_POOL_NAME_MAX))
			return fail(x, "bad pool name '%s' (letters, digits, _ . -; at most 32)%s", name, "");
		struct vd_pool_conf *p = pool_conf(c, name);
		if (!p)
			return fail(x, "too many pools (at most 32)%s%s", "", "");
		if (!strcmp(key, "path")) {
			struct vblk_rbd_name rn;
			if (vblk_rbd_spec(value) ? vblk_rbd_parse(value, &rn) < 0 ||
							   strlen(value) >= sizeof(p->path)
						 : set_path(p->path, sizeof(p->path), value) < 0)
				return fail(x, "pool path '%s' must be an absolute path or "
					       "rbd:CEPHPOOL/IMAGE%s", value, "");
			snprintf(p->path, sizeof(p->path), "%s", value);
		} else if (!strcmp(key, "size")) {
			if (vparse_size(value, &n) < 0 || n == 0)
				return fail(x, "pool size '%s' is not a size (e.g. 2T)%s", value, "");
			p->size = n;
		} else if (!strcmp(key, "extent")) {
			if (vparse_size(value, &n) < 0 || !vis_pow2(n) || n < VPOOL_MIN_EXTENT ||
			    n > VPOOL_MAX_EXTENT)
				return fail(x, "extent '%s' must be a power of two from 64K to 16M%s", value, "");
			p->extent = (uint32_t)n;
		} else if (!strcmp(key, "create")) {
			int v = word_index(value, WORDS(create_modes));
			if (v < 0)
				return fail(x, "create '%s' is not one of auto, yes, no%s", value, "");
			p->create = (uint8_t)v;
		} else if (!strcmp(key, "live_checkpoints")) {
			int v = word_index(value, WORDS(no_yes));
			if (v < 0)
				return fail(x, "live_checkpoints '%s' is not one of yes, no%s", value, "");
			p->live_checkpoints = v == 1;
		} else {
			return fail(x, "unknown key '%s' in a [pool] section%s", key, "");
		}
		return 1;
	}
	if (!strcmp(section, "ceph")) {
		if (!strcmp(key, "conf") || !strcmp(key, "keyring")) {
			char *dst = !strcmp(key, "conf") ? c->ceph.conf : c->ceph.keyring;
			if (set_path(dst, sizeof(c->ceph.conf), value) < 0)
				return fail(x, "[ceph] %s '%s' must be an absolute path", key, value);
		} else if (!strcmp(key, "client_id")) {
			if (!vd_valid_name(value, sizeof(c->ceph.client_id) - 1))
				return fail(x, "[ceph] client_id '%s' is not a name (letters, digits, _ . -)%s",
					    value, "");
			snprintf(c->ceph.client_id, sizeof(c->ceph.client_id), "%s", value);
		} else if (!strcmp(key, "op_timeout")) {
			char *end;
			unsigned long t = strtoul(value, &end, 10);
			if (!*value || *end || t < 1 || t > VBLK_RBD_OP_TIMEOUT_MAX)
				return fail(x, "[ceph] op_timeout '%s' must be seconds, 1..3600%s", value,
					    ""); /* VBLK_RBD_OP_TIMEOUT_MAX */
			c->ceph.op_timeout = (unsigned)t;
		} else {
			return fail(x, "unknown key '%s' in [ceph]%s", key, "");
		}
		return 1;
	}
	if (!strcmp(section, "metrics")) {
		if (strcmp(key, "listen"))
			return fail(x, "unknown key '%s' in [metrics]%s", key, "");
		struct sockaddr_storage ss;
		socklen_t sl;
		if (strlen(value) >= sizeof(c->metrics_listen) ||
		    vd_metrics_parse_listen(value, &ss, &sl) < 0 ||
		    ((struct sockaddr_in *)&ss)->sin_port == 0) /* (same place in sockaddr_in6) */
			return fail(x, "[metrics] listen '%s' is not ADDRESS:PORT (e.g. 127.0.0.1:9612 "
				       "or [::1]:9612)%s", value, "");
		snprintf(c->metrics_listen, sizeof(c->metrics_listen), "%s", value);
		return 1;
	}
	if (!strcmp(section, "alua")) {
		const char *end;
		if (!strcmp(key, "group")) {
			if (parse_group(value, &end, &c->alua.group) < 0 || *end)
				return fail(x, "[alua] group '%s' is not a target port group id 1..65535%s",
					    value, "");
		} else if (!strcmp(key, "peers")) {
			c->alua.n_peers = 0;
			if (parse_list(value, SCSI_ALUA_MAX_PEERS, peer_item, &c->alua) < 0)
				return fail(x, "[alua] peers '%s' is not a list of distinct group ids "
					    "1..65535 (at most 7, e.g. 2,3)%s", value, "");
		} else {
			return fail(x, "unknown key '%s' in [alua]%s", key, "");
		}
		return 1;
	}
	if (!strcmp(section, "tcmu")) {
		if (!strcmp(key, "handler")) {
			const char *why = handler_refused(value);
			if (why)
				return fail(x, "[tcmu] handler '%s' %s", value, why);
			snprintf(c->tcmu.handler, sizeof(c->tcmu.handler), "%s", value);
		} else if (!strcmp(key, "leave")) {
			c->tcmu.n_leave = 0;
			if (parse_list(value, VD_MAX_LEAVE, leave_item, &c->tcmu) < 0)
				return fail(x, "[tcmu] leave '%s' is not a list of distinct handler names "
					    "(at most 4, e.g. vaaib)%s", value, "");
		} else {
			return fail(x, "unknown key '%s' in [tcmu]%s", key, "");
		}
		return 1;
	}
	return fail(x, "unknown section [%s] (expected [daemon], [pool NAME], [ceph], [metrics], "
		    "[alua] or [tcmu])%s", section, "");
}

#define CONF_MAX_BYTES (1u << 20)
#define CONF_LINE_MAX VD_CONF_LINE_MAX /* bytes before the newline */
_Static_assert(VD_CONF_LINE_MAX == INI_MAX_LINE - 2, "the line limit is inih's");

/* The file, whole and NUL-terminated, in *out (the caller frees it): 0 or -errno. */
static int read_conf(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	size_t cap = 4096, n = 0;
	char *b = malloc(cap + 1);
	int rc = b ? 0 : -ENOMEM;
	while (rc == 0) {
		n += fread(b + n, 1, cap - n, f);
		if (ferror(f))
			rc = -EIO;
		else if (n < cap)
			break;
		else if (cap >= CONF_MAX_BYTES)
			rc = -EFBIG;
		else {
			char *nb = realloc(b, 2 * cap + 1);
			if (nb) {
				b = nb;
				cap *= 2;
			} else {
				rc = -ENOMEM;
			}
		}
	}
	fclose(f);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", path, rc == -EFBIG ? "larger than 1 MiB" : strerror(-rc));
		free(b);
		return rc;
	}
	b[n] = 0;
	*out = b;
	*len = n;
	return 0;
}

/* Drop comment lines' text (their newline stays: the line numbers too); refuse a
 * setting line longer than inih reads whole, or a NUL. b is rewritten in place. */
static int check_lines(char *b, size_t n, const char *path, char *err, size_t errlen)
{
	int line = 1;
	size_t w = 0;
	for (size_t start = 0; start < n; line++) {
		size_t end = start;
		while (end < n && b[end] != '\n' && b[end])
			end++;
		if (end < n && !b[end]) {
			snprintf(err, errlen, "%s:%d: a NUL byte", path, line);
			return -EINVAL;
		}
		size_t i = start;
		while (i < end && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r'))
			i++;
		bool comment = i < end && (b[i] == ';' || b[i] == '#'); /* any length */
		if (!comment && end - start > CONF_LINE_MAX) {
			snprintf(err, errlen, "%s:%d: line longer than %d bytes", path, line,
				 CONF_LINE_MAX);
			return -EINVAL;
		}
		if (!comment) {
			memmove(b + w, b + start, end - start);
			w += end - start;
		}
		if (end < n)
			b[w++] = '\n';
		start = end + 1;
	}
	b[w] = 0;
	return 0;
}

int vd_config_load(struct vd_config *c, const char *path, char *err, size_t errlen)
{
	struct load_ctx x = {.c = c, .err = err, .errlen = errlen, .file = path};
	char *buf = NULL;
	size_t n = 0;
	int rc = read_conf(path, &buf, &n, err, errlen);
	if (rc < 0)
		return rc;
	rc = check_lines(buf, n, path, err, errlen);
	int line = rc < 0 ? 0 : ini_parse_string(buf, on_kv, &x);
	free(buf);
	if (rc < 0)
		return rc;
	if (line != 0) {
		snprintf(err, errlen, "%s:%d: %s", path, line,
			 x.msg[0] ? x.msg : "syntax error (expected 'key = value' or '[section]')");
		return -EINVAL;
	}
	if (c->alua.n_peers && !c->alua.group) {
		snprintf(err, errlen, "%s: [alua] peers without group (this gateway's group id)", path);
		return -EINVAL;
	}
	for (unsigned i = 0; i < c->alua.n_peers; i++)
		if (c->alua.peers[i] == c->alua.group) {
			snprintf(err, errlen, "%s: [alua] peers name this gateway's own group %u", path,
				 c->alua.group);
			return -EINVAL;
		}
	for (unsigned i = 0; i < c->tcmu.n_leave; i++)
		if (!strcmp(c->tcmu.leave[i], c->tcmu.handler)) {
			snprintf(err, errlen, "%s: [tcmu] leave names this daemon's own handler %s", path,
				 c->tcmu.handler);
			return -EINVAL;
		}
	for (unsigned i = 0; i < c->n_pools; i++) {
		if (!c->pools[i].path[0] && strcmp(c->pools[i].name, "default")) {
			snprintf(err, errlen, "%s: pool '%s' has no path", path, c->pools[i].name);
			return -EINVAL;
		}
		/* Two pools on one store would overwrite each other (other spellings of one
		 * path are caught when the second is opened: the store's lock, vblk_uring). */
		for (unsigned j = 0; j < i; j++)
			if (c->pools[i].path[0] && !strcmp(c->pools[i].path, c->pools[j].path)) {
				snprintf(err, errlen, "%s: pools '%s' and '%s' have the same path %s", path,
					 c->pools[j].name, c->pools[i].name, c->pools[i].path);
				return -EINVAL;
			}
	}
	return 0;
}

int vd_config_load_recorded(struct vd_config *c, const char *path, char *err, size_t errlen)
{
	unsigned first = c->n_pools;
	int rc = vd_config_load(c, path, err, errlen);
	if (rc < 0)
		return rc;
	/* A recorded pool was made by `pool create`: its store missing at start means a
	 * file system not mounted or a disk gone, never "make a new empty pool". */
	for (unsigned i = first; i < c->n_pools; i++)
		if (c->pools[i].create == VD_CREATE_AUTO)
			c->pools[i].create = VD_CREATE_NO;
	return 0;
}

void vd_config_finish(struct vd_config *c)
{
	/* one spelling of the configfs root (a trailing '/', a symlink): the handler
	 * liveness name is made of it (src/daemon/handler_alive.c) */
	char real[PATH_MAX];
	if (realpath(c->configfs_root, real) && strlen(real) < sizeof(c->configfs_root))
		memcpy(c->configfs_root, real, strlen(real) + 1);
	struct vd_pool_conf *d = NULL;
	for (unsigned i = 0; i < c->n_pools; i++)
		if (!strcmp(c->pools[i].name, "default"))
			d = &c->pools[i];
	if (!d && c->n_pools < VD_MAX_POOLS) {
		d = &c->pools[c->n_pools++];
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "default");
	}
	if (d && !d->path[0])
		snprintf(d->path, sizeof(d->path), "%.*s/default.pool", (int)(sizeof(d->path) - 16),
			 c->state_dir);
	for (unsigned i = 0; i < c->n_pools; i++)
		if (!c->pools[i].size)
			c->pools[i].size = c->default_pool_size;
}
