/*
 * The owner record of an RBD pool image (include/vaaid/rbd_owner.h).
 *
 * How this works: a process is named by its machine (/etc/machine-id, or the
 * host name where there is none), the boot it runs in (the kernel's boot id),
 * its pid and its start time in clock ticks since boot (field 22 of
 * /proc/PID/stat: a pid reused by a later process has a later start time).
 * The record is one line of "key=value" words; parsing accepts exactly what
 * formatting writes (each field once, in order, within its bounds), anything
 * else is -EINVAL and the caller treats the holder as unknown (a standby
 * waits for an explicit takeover: the safe side).
 */
#include <errno.h>
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

int vblk_rbd_owner_self(struct vblk_rbd_owner *me, unsigned group)
{
	memset(me, 0, sizeof(*me));
	int rc = read_line("/etc/machine-id", me->machine, sizeof(me->machine));
	if (rc < 0 || !word_ok(me->machine)) {
		if (gethostname(me->machine, sizeof(me->machine) - 1) < 0)
			return -errno;
		if (!word_ok(me->machine))
			return -EINVAL;
	}
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
	int n = snprintf(buf, cap, "machine=%s boot=%s pid=%d start=%llu group=%u", o->machine,
			 o->boot, o->pid, o->start, o->group);
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
	    take_number(&s, "group", 0xffffull, &group) < 0 || *s) {
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
	if (!holder->machine[0] || strcmp(holder->machine, me->machine))
		return false; /* another machine (or unknown): only an explicit takeover */
	if (strcmp(holder->boot, me->boot))
		return true; /* this machine rebooted since: that process is gone */
	if (holder->pid == me->pid && holder->start == me->start)
		return false; /* this very process (never breaks its own lock) */
	return !alive(holder->pid, holder->start);
}
