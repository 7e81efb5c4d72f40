/*
 * The owner record of an RBD pool image (include/vaaid/rbd_owner.h).
 *
 * How this works: a process is named by its machine (/etc/machine-id, or the
 * host name where there is none), the boot it runs in (the kernel's boot id),
 * its pid and its start time in clock ticks since boot (field 22 of
 * /proc/PID/stat: a pid reused by a later process has a later start time).
 * Its Ceph client address is recorded too: a restart takes back only a lock
 * whose current owner (the lock's owner list) is that very address, on an IP
 * of this host (vblk_rbd.c), so a stale record (a later holder that has not
 * written its own yet, or could not) never names a live holder, and a
 * machine-id shared by cloned VMs is not enough to match.
 * The record is one line of "key=value" words; parsing accepts exactly what
 * formatting writes (each field once, in order, within its bounds), anything
 * else is -EINVAL and the caller treats the holder as unknown (a standby
 * waits for an explicit takeover: the safe side).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vaaid/rbd_owner.h"

/* The first line of a small file, without its newline; -errno. */
static int read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char *s = fgets(buf, (int)cap, f);
	fclose(f);
	if (!s)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] ? 0 : -EIO;
}

/* A word of the record: printable, no spaces or '=' (a host name, a UUID, hex). */
static bool word_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f || *s == '=')
			return false;
	return true;
}

/* Start time of pid in clock ticks since boot; -errno (-ESRCH: no such process). */
static int process_start(int pid, unsigned long long *start)
{
	char path[32], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold spaces and ')': skip to the last ')' */
	char *p = strrchr(buf, ')');
	if (!p)
		return -EIO;
	p++;
	/* fields 3..21 (19 of them), then 22: starttime */
	for (int field = 3; field <= 21; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EIO;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p + 1, &end, 10);
	if (errno || end == p + 1)
		return -EIO;
	*start = v;
	return 0;
}

int vblk_rbd_owner_self(struct vblk_rbd_owner *me, unsigned group, const char *addr)
{
	memset(me, 0, sizeof(*me));
	int rc = read_line("/etc/machine-id", me->machine, sizeof(me->machine));
	if (rc < 0 || !word_ok(me->machine) || !strcmp(me->machine, "-"))
		snprintf(me->machine, sizeof(me->machine), "-"); /* unknown: never taken back */
	snprintf(me->addr, sizeof(me->addr), "%s", addr && word_ok(addr) ? addr : "-");
	rc = read_line("/proc/sys/kernel/random/boot_id", me->boot, sizeof(me->boot));
	if (rc < 0)
		return rc;
	if (!word_ok(me->boot))
		return -EINVAL;
	me->pid = (int)getpid();
	rc = process_start(me->pid, &me->start);
	if (rc < 0)
		return rc;
	me->group = group;
	return 0;
}

int vblk_rbd_owner_format(const struct vblk_rbd_owner *o, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "machine=%s boot=%s pid=%d start=%llu group=%u addr=%s",
			 o->machine, o->boot, o->pid, o->start, o->group, o->addr);
	return n < 0 ? -EINVAL : (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* "key=" then a word into dst (cap bytes, NUL included); advances *s past a space. */
static int take_word(const char **s, const char *key, char *dst, size_t cap)
{
	size_t kl = strlen(key);
	if (strncmp(*s, key, kl) || (*s)[kl] != '=')
		return -EINVAL;
	const char *v = *s + kl + 1;
	size_t n = strcspn(v, " ");
	if (n == 0 || n >= cap)
		return -EINVAL;
	memcpy(dst, v, n);
	dst[n] = '\0';
	if (!word_ok(dst))
		return -EINVAL;
	if (v[n] == ' ' && v[n + 1] == '\0')
		return -EINVAL; /* a trailing space: not as formatted */
	*s = v + n + (v[n] == ' ');
	return 0;
}

static int take_number(const char **s, const char *key, unsigned long long max,
		       unsigned long long *out)
{
	char w[24];
	int rc = take_word(s, key, w, sizeof(w));
	if (rc < 0)
		return rc;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(w, &end, 10);
	/* digits only, no leading zero: exactly what formatting writes */
	if (errno || *end || w[0] < '0' || w[0] > '9' || (w[0] == '0' && w[1]) || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int vblk_rbd_owner_parse(const char *s, struct vblk_rbd_owner *o)
{
	memset(o, 0, sizeof(*o));
	unsigned long long pid, start, group;
	if (!s || take_word(&s, "machine", o->machine, sizeof(o->machine)) < 0 ||
	    take_word(&s, "boot", o->boot, sizeof(o->boot)) < 0 ||
	    take_number(&s, "pid", 0x7fffffffull, &pid) < 0 || pid == 0 ||
	    take_number(&s, "start", ~0ull, &start) < 0 ||
	    take_number(&s, "group", 0xffffull, &group) < 0 ||
	    take_word(&s, "addr", o->addr, sizeof(o->addr)) < 0 || *s) {
		memset(o, 0, sizeof(*o));
		return -EINVAL;
	}
	o->pid = (int)pid;
	o->start = start;
	o->group = (unsigned)group;
	return 0;
}

bool vblk_rbd_owner_process_alive(int pid, unsigned long long start)
{
	unsigned long long now;
	int rc = process_start(pid, &now);
	if (rc == -ESRCH)
		return false;
	/* unreadable: assume alive (the safe side); a later start time: pid reused */
	return rc < 0 || now == start;
}

bool vblk_rbd_owner_is_dead_local(const struct vblk_rbd_owner *holder,
				  const struct vblk_rbd_owner *me,
				  bool (*alive)(int pid, unsigned long long start))
{
	if (!holder->machine[0] || !strcmp(holder->machine, "-") ||
	    strcmp(holder->machine, me->machine))
		return false; /* another machine (or unknown): only an explicit takeover */
	if (strcmp(holder->boot, me->boot))
		return true; /* this machine rebooted since: that process is gone */
	if (holder->pid == me->pid && holder->start == me->start)
		return false; /* this very process (never breaks its own lock) */
	return !alive(holder->pid, holder->start);
}

/* The host's interfaces hold ip (family AF_INET or AF_INET6)? */
static bool host_has_ip(int family, const void *ip)
{
	struct ifaddrs *ifs;
	if (getifaddrs(&ifs) < 0)
		return false;
	bool found = false;
	for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != family)
			continue;
		if (family == AF_INET)
			found = !memcmp(&((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, 4);
		else
			found = !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, ip, 16);
	}
	freeifaddrs(ifs);
	return found;
}

/* The IP of a Ceph client address ("IP:PORT/NONCE", "v2:...", "[IPv6]:...")
 * into ip (4 or 16 bytes) and *family; returns what follows the IP (":PORT/NONCE"
 * as written), or NULL when the IP does not parse. */
static const char *addr_ip(const char *addr, int *family, unsigned char ip[16])
{
	if (!addr)
		return NULL;
	if (!strncmp(addr, "v1:", 3) || !strncmp(addr, "v2:", 3))
		addr += 3;
	char host[64];
	const char *end;
	if (addr[0] == '[') { /* [IPv6]:PORT/NONCE */
		addr++;
		end = strchr(addr, ']');
		*family = AF_INET6;
	} else { /* IPv4:PORT/NONCE */
		end = strchr(addr, ':');
		*family = AF_INET;
	}
	if (!end || end == addr || (size_t)(end - addr) >= sizeof(host))
		return NULL;
	memcpy(host, addr, (size_t)(end - addr));
	host[end - addr] = '\0';
	if (inet_pton(*family, host, ip) != 1)
		return NULL;
	return end + (*family == AF_INET6); /* past the ']' */
}

bool vblk_rbd_addr_is_local(const char *addr, bool (*is_local)(int family, const void *ip))
{
	int family;
	unsigned char ip[16];
	if (!addr_ip(addr, &family, ip))
		return false;
	return (is_local ? is_local : host_has_ip)(family, ip);
}

/* Decimal digits only, no leading zero, at most max; the end in *end. */
static bool addr_number(const char *s, unsigned long long max, unsigned long long *v,
			const char **end)
{
	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
		return false;
	*v = 0;
	for (; *s >= '0' && *s <= '9'; s++)
		if ((*v = *v * 10 + (unsigned long long)(*s - '0')) > max)
			return false;
	*end = s;
	return true;
}

bool vblk_rbd_addr_instance(const char *addr)
{
	int family;
	unsigned char ip[16];
	const char *t = addr_ip(addr, &family, ip);
	unsigned long long port, nonce;
	if (!t || *t != ':' || !addr_number(t + 1, 65535, &port, &t) || *t != '/' ||
	    !addr_number(t + 1, 0xffffffffull, &nonce, &t) || *t)
		return false;
	return nonce != 0; /* nonce 0 (and port 0): Ceph blocklists the whole IP */
}

int vblk_rbd_owner_fence_needed(const struct vblk_rbd_owner *rec, const char *self,
				const char *broken)
{
	if (!rec)
		return 0; /* no record: no vaaid ever held the image */
	if (!vblk_rbd_addr_instance(rec->addr))
		return -EINVAL; /* "-", damaged, or a whole IP: not one client to fence */
	if ((self && !strcmp(rec->addr, self)) || (broken && !strcmp(rec->addr, broken)))
		return 0; /* this client, or the one the lock break just blocklisted */
	return 1;
}

/* ---- the shared ALUA record (rbd_owner.h) */

/* A group id as written: 1..65535, decimal, no leading zero. 0 if not one. */
static uint16_t group_id(const char *s)
{
	if (*s < '1' || *s > '9')
		return 0;
	unsigned long v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || (v = v * 10 + (unsigned long)(*s - '0')) > 0xffff)
			return 0;
	}
	return (uint16_t)v;
}

static void add_fenced(struct vblk_rbd_alua *r, uint16_t g)
{
	unsigned i = 0;
	while (i < r->n_fenced && r->fenced[i] < g)
		i++;
	if ((i < r->n_fenced && r->fenced[i] == g) || r->n_fenced == VBLK_RBD_ALUA_MAX_FENCED)
		return;
	memmove(r->fenced + i + 1, r->fenced + i, (r->n_fenced - i) * sizeof(r->fenced[0]));
	r->fenced[i] = g;
	r->n_fenced++;
}

void vblk_rbd_alua_parse(const char *keys, size_t klen, const char *vals, size_t vlen,
			 struct vblk_rbd_alua *out)
{
	memset(out, 0, sizeof(*out));
	const size_t pl = strlen(VBLK_RBD_ALUA_PREFIX), fl = strlen(VBLK_RBD_ALUA_FENCED_KEY);
	size_t k = 0, v = 0;
	while (k < klen && v < vlen) {
		const char *key = keys + k, *val = vals + v;
		size_t kn = strnlen(key, klen - k), vn = strnlen(val, vlen - v);
		if (kn == klen - k || vn == vlen - v || !kn)
			break; /* not NUL-terminated, or the list's end */
		if (strncmp(key, VBLK_RBD_ALUA_PREFIX, pl))
			break; /* sorted: past the prefix */
		if (!strcmp(key, VBLK_RBD_ALUA_OWNER_KEY))
			out->owner = group_id(val);
		else if (!strncmp(key, VBLK_RBD_ALUA_FENCED_KEY, fl) && group_id(key + fl))
			add_fenced(out, group_id(key + fl));
		k += kn + 1;
		v += vn + 1;
	}
}

bool vblk_rbd_alua_equal(const struct vblk_rbd_alua *a, const struct vblk_rbd_alua *b)
{
	return a->owner == b->owner && a->n_fenced == b->n_fenced &&
	       !memcmp(a->fenced, b->fenced, a->n_fenced * sizeof(a->fenced[0]));
}

bool vblk_rbd_alua_fenced(const struct vblk_rbd_alua *r, uint16_t g)
{
	for (unsigned i = 0; i < r->n_fenced; i++)
		if (r->fenced[i] == g)
			return true;
	return false;
}

bool vblk_rbd_alua_mark_stale(const char *key, unsigned own, unsigned fenced_now,
			      const uint16_t *peers, unsigned n_peers)
{
	const size_t fl = strlen(VBLK_RBD_ALUA_FENCED_KEY);
	if (!key || !peers || n_peers == 0 || strncmp(key, VBLK_RBD_ALUA_FENCED_KEY, fl))
		return false;
	uint16_t f = group_id(key + fl);
	if (f == 0)
		return false; /* not a mark this code wrote: left alone */
	if (f == own)
		return false; /* the holder's own mark: alua_unfence's, not this rule's */
	if (f == fenced_now)
		return false; /* written by this very open: its gateway is fenced */
	for (unsigned i = 0; i < n_peers; i++)
		if (peers[i] == f)
			return false;
	return true;
}

unsigned vblk_rbd_look_backoff(unsigned failures)
{
	if (failures == 0)
		return 0;
	if (failures >= 5) /* 2^5 = 32 > the cap (and no shift past the width) */
		return VBLK_RBD_LOOK_BACKOFF_MAX;
	unsigned n = 1u << failures;
	return n < VBLK_RBD_LOOK_BACKOFF_MAX ? n : VBLK_RBD_LOOK_BACKOFF_MAX;
}
