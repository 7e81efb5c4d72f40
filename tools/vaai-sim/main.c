/*
 * vaai-sim: drive the real engine (ring, dispatch, handlers, pool, io_uring)
 * through a simulated kernel, from a script. The script language and the
 * JSON output are a fixed interface (README.md, issue "The engine"); extend,
 * never change.
 *
 *   pool create PATH SIZE [extent=SIZE] [io=uring|crashsim] [journal=SIZE] [seed=N]
 *                                (PATH rbd:CEPHPOOL/IMAGE: an RBD image of CEPH_CONF's cluster)
 *               [journal-file=yes|no]   (yes, the default: the journal in PATH.journal)
 *               [live-checkpoints=yes|no] (extension: vpool_set_live_checkpoints, no by
 *                                default; kept across reopen and crash; as the daemon's
 *                                [pool] live_checkpoints)
 *   pool open PATH [io=uring|crashsim] [seed=N] [live-checkpoints=yes|no]
 *   volume create NAME SIZE [block=512|4096]
 *   attach NAME LUN
 *   cmd LUN CDB_HEX [out=HEX|out=@FILE|out=zero:N|out=fill:BYTE:N] [in=N]
 *   submit LUN CDB_HEX [same options]
 *   wait
 *   reopen
 *   crash
 *   stats
 *   verify                      (extension: vpool_verify; fails the script on problems)
 *   checkpoint                  (extension: vpool_checkpoint now, submitted commands going
 *                                on meanwhile; one output line {"checkpoint":"live"} or
 *                                {"checkpoint":"paused"}: whether appends resumed at its
 *                                freeze point, vpool_diag.ckpt_last)
 *   visibility LUN GROUP        (extension: LUN's visibility group, default 0; EXTENDED
 *                                COPY reaches only LUNs of the receiving LUN's group,
 *                                as co-visible LUNs; may precede attach; no output line)
 *   xcopy-scope covisible|pool|lun  (extension: the daemon's xcopy_scope, default
 *                                covisible: which LUNs an EXTENDED COPY may name; no
 *                                output line)
 *
 * Extension of out=HEX: {naa:LUN} inside the hex stands for the 16-byte NAA
 * designator (VPD 83h) of attached LUN LUN, for hand-built EXTENDED COPY lists.
 *   hydrate pause|resume|wait   (extension: background hydration of redirected extents
 *                                (redirect-on-write after EXTENDED COPY) paused -- kept
 *                                across reopen and crash -- resumed, or run until none is
 *                                left; no output line)
 *   lunstats LUN                (extension: the LUN's command counters, one JSON line:
 *                                vaai_lun_stats_json, include/vaaid/lun_stats.h)
 *   deallocate NAME OFFSET LEN  (extension: vvol_deallocate of [OFFSET, OFFSET+LEN) bytes,
 *                                K/M/G/T suffixes, multiples of 512 inside the volume;
 *                                returns once the change is durable; no output line)
 *
 * Output: one JSON object per line for each cmd, each command completed by
 * wait (in submission order) and each stats or lunstats. A CHECK CONDITION is a result;
 * a malformed line or a failing statement exits 1 with "vaai-sim: line N: ...".
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd_output.h"
#include "simhost.h"
#include "vaaid/io.h"
#include "vaaid/lun_policy.h"
#include "vaaid/util.h"

#define MAX_TOKENS 16
#define CMD_TIMEOUT_MS 120000

struct pending {
	uint64_t tag;
	struct simhost_result res;
	bool done;
};

struct sim {
	struct simhost *h;
	const char *script;
	unsigned line;
	struct pending *pend;
	size_t npend, cap;
};

static void die(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(struct sim *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "vaai-sim: %s: line %u: ", s->script, s->line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fflush(stdout);
	if (s->h)
		simhost_close(s->h);
	exit(1);
}

static uint64_t parse_size_or_die(struct sim *s, const char *what, const char *v)
{
	uint64_t x;
	if (vparse_size(v, &x) < 0)
		die(s, "bad %s '%s' (a number with optional K/M/G/T)", what, v);
	return x;
}

static uint64_t parse_u64_or_die(struct sim *s, const char *what, const char *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 0);
	if (!*v || *end || errno || *v == '-')
		die(s, "bad %s '%s' (a decimal or 0x-hex number)", what, v);
	return x;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

static uint8_t *parse_hex(const char *h, size_t *len)
{
	size_t n = strlen(h);
	if (n % 2)
		return NULL;
	uint8_t *b = malloc(n / 2 + 1);
	if (!b)
		return NULL;
	for (size_t i = 0; i < n / 2; i++) {
		int a = hexval(h[2 * i]), c = hexval(h[2 * i + 1]);
		if (a < 0 || c < 0) {
			free(b);
			return NULL;
		}
		b[i] = (uint8_t)(a << 4 | c);
	}
	*len = n / 2;
	return b;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	uint8_t *b = malloc(cap);
	while (b) {
		size_t r = fread(b + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		uint8_t *nb = realloc(b, cap * 2);
		if (!nb) {
			free(b);
			b = NULL;
			break;
		}
		b = nb;
		cap *= 2;
	}
	fclose(f);
	*len = n;
	return b;
}

static enum simhost_io parse_io(struct sim *s, const char *v)
{
	if (!strcmp(v, "uring"))
		return SIMHOST_IO_URING;
	if (!strcmp(v, "crashsim"))
		return SIMHOST_IO_CRASHSIM;
	die(s, "io must be uring or crashsim, not '%s'", v);
}

static int parse_lun(struct sim *s, const char *v)
{
	char *end;
	long l = strtol(v, &end, 10);
	if (*end || l < 0 || l >= SIMHOST_MAX_LUNS || end == v)
		die(s, "bad LUN '%s' (0..%d)", v, SIMHOST_MAX_LUNS - 1);
	return (int)l;
}

static void need_pool(struct sim *s)
{
	if (!s->h)
		die(s, "no pool: use 'pool create' or 'pool open' first");
}

/* ---- cmd / submit */

/* out=HEX with {naa:LUN} replaced by that LUN's NAA designator in hex (malloc'd). */
static char *expand_naa(struct sim *s, const char *v)
{
	size_t cap = strlen(v) + 1, n = 0;
	char *o = malloc(cap);
	while (o && *v) {
		if (!strncmp(v, "{naa:", 5)) {
			char *end;
			long lun = strtol(v + 5, &end, 10);
			uint8_t naa[16];
			if (end == v + 5 || *end != '}' || lun < 0 || lun >= SIMHOST_MAX_LUNS ||
			    simhost_lun_naa(s->h, (int)lun, naa) < 0)
				die(s, "bad {naa:LUN} in data-out (an attached LUN)");
			char *no = realloc(o, cap += 32);
			if (!no)
				break;
			o = no;
			for (int i = 0; i < 16; i++)
				n += (size_t)sprintf(o + n, "%02x", naa[i]);
			v = end + 1;
		} else {
			o[n++] = *v++;
		}
	}
	if (!o)
		die(s, "out of memory");
	o[n] = 0;
	return o;
}

/* One data-out segment: @FILE, zero:N, fill:BYTE:N or hex (with {naa:LUN}). */
static uint8_t *parse_out_segment(struct sim *s, const char *v, size_t *len)
{
	uint8_t *out;
	if (v[0] == '@') {
		out = read_file(v + 1, len);
		if (!out)
			die(s, "cannot read data-out file '%s': %s", v + 1, strerror(errno));
	} else if (!strncmp(v, "zero:", 5)) {
		*len = parse_size_or_die(s, "out=zero length", v + 5);
		out = calloc(1, *len ? *len : 1);
	} else if (!strncmp(v, "fill:", 5)) {
		char *end;
		unsigned long byte = strtoul(v + 5, &end, 0);
		if (end == v + 5 || *end != ':' || byte > 255)
			die(s, "bad out=fill:BYTE:N '%s'", v);
		*len = parse_size_or_die(s, "out=fill length", end + 1);
		out = malloc(*len ? *len : 1);
		if (out)
			memset(out, (int)byte, *len);
	} else {
		char *hx = expand_naa(s, v);
		out = parse_hex(hx, len);
		free(hx);
		if (!out)
			die(s, "bad data-out hex '%s'", v);
	}
	if (!out)
		die(s, "out of memory for data-out");
	return out;
}

static uint64_t do_submit(struct sim *s, char **tok, int nt)
{
	need_pool(s);
	if (nt < 3)
		die(s, "usage: %s LUN CDB_HEX [out=...] [in=N]", tok[0]);
	int lun = parse_lun(s, tok[1]);
	size_t cdb_len;
	uint8_t *cdb = parse_hex(tok[2], &cdb_len);
	if (!cdb || cdb_len < 6 || cdb_len > 260)
		die(s, "bad CDB '%s' (hex, 6 to 260 bytes)", tok[2]);
	uint8_t *out = NULL;
	size_t out_len = 0;
	uint64_t in_len = 0;
	for (int i = 3; i < nt; i++) {
		if (!strncmp(tok[i], "out=", 4)) {
			/* SEGMENT[,SEGMENT...]: the segments' bytes one after another */
			free(out);
			out = NULL;
			out_len = 0;
			char *list = strdup(tok[i] + 4), *save = NULL;
			if (!list)
				die(s, "out of memory for data-out");
			for (char *seg = strtok_r(list, ",", &save); seg; seg = strtok_r(NULL, ",", &save)) {
				size_t n;
				uint8_t *b = parse_out_segment(s, seg, &n);
				uint8_t *grown = realloc(out, out_len + n + 1);
				if (!grown)
					die(s, "out of memory for data-out");
				out = grown;
				memcpy(out + out_len, b, n);
				out_len += n;
				free(b);
			}
			free(list);
			if (!out)
				die(s, "empty data-out '%s'", tok[i]);
		} else if (!strncmp(tok[i], "in=", 3)) {
			in_len = parse_size_or_die(s, "in= length", tok[i] + 3);
		} else {
			die(s, "unknown option '%s' (out=... or in=N)", tok[i]);
		}
	}
	if (out_len && in_len)
		die(s, "a command has data-out or data-in, not both");
	uint64_t tag = 0;
	int rc;
	for (;;) {
		rc = simhost_submit(s->h, lun, cdb, cdb_len, out, out_len, (size_t)in_len, &tag);
		if (rc != -EAGAIN)
			break;
		/* Ring full: collect completions (kept for 'wait') and retry. */
		struct simhost_result r[16];
		int n = simhost_reap(s->h, r, 16, CMD_TIMEOUT_MS);
		if (n <= 0)
			die(s, "ring full and no command completes");
		for (int k = 0; k < n; k++)
			for (size_t j = 0; j < s->npend; j++)
				if (s->pend[j].tag == r[k].tag) {
					s->pend[j].res = r[k];
					s->pend[j].done = true;
				}
	}
	free(cdb);
	free(out);
	if (rc == -ENODEV)
		die(s, "LUN %d is not attached", lun);
	if (rc == -E2BIG)
		die(s, "command too large for the simulated ring (data area %u MiB)", 64);
	if (rc < 0)
		die(s, "submit failed: %s", strerror(-rc));
	if (s->npend == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->pend = realloc(s->pend, s->cap * sizeof(*s->pend));
		if (!s->pend)
			die(s, "out of memory");
	}
	s->pend[s->npend++] = (struct pending){.tag = tag};
	return tag;
}

static void wait_all(struct sim *s)
{
	need_pool(s);
	for (;;) {
		bool all = true;
		for (size_t j = 0; j < s->npend; j++)
			all &= s->pend[j].done;
		if (all)
			break;
		struct simhost_result r[64];
		int n = simhost_reap(s->h, r, 64, CMD_TIMEOUT_MS);
		if (n < 0)
			die(s, "the engine broke the ring protocol: %s", strerror(-n));
		if (n == 0)
			die(s, "commands did not complete within %d s", CMD_TIMEOUT_MS / 1000);
		for (int k = 0; k < n; k++)
			for (size_t j = 0; j < s->npend; j++)
				if (s->pend[j].tag == r[k].tag) {
					s->pend[j].res = r[k];
					s->pend[j].done = true;
				}
	}
	for (size_t j = 0; j < s->npend; j++) {
		print_cmd_result(stdout, &s->pend[j].res);
		simhost_result_free(&s->pend[j].res);
	}
	fflush(stdout);
	s->npend = 0;
}

/* ---- statements */

static void do_pool(struct sim *s, char **tok, int nt)
{
	if (nt >= 2 && !strcmp(tok[1], "grow")) {
		/* extension: grow the open pool's backing store online */
		need_pool(s);
		if (nt != 3)
			die(s, "usage: pool grow SIZE");
		int rc = simhost_pool_grow(s->h, parse_size_or_die(s, "pool size", tok[2]));
		if (rc == -EINVAL)
			die(s, "pool grow %s: not larger than the pool by at least one extent", tok[2]);
		if (rc == -EFBIG)
			die(s, "pool grow %s: beyond what the pool's checkpoint area holds (sized at "
			    "creation for 4 x its size, less what its shared references take)", tok[2]);
		if (rc < 0)
			die(s, "pool grow failed: %s", strerror(-rc));
		return;
	}
	if (nt < 3 || (strcmp(tok[1], "create") && strcmp(tok[1], "open")))
		die(s, "usage: pool create PATH SIZE [extent=SIZE] [io=uring|crashsim] [live-checkpoints=yes|no] | pool open PATH [io=...] [live-checkpoints=yes|no] | pool grow SIZE");
	bool create = !strcmp(tok[1], "create");
	struct stat st;
	if (create && stat(tok[2], &st) == 0)
		die(s, "%s: already exists (pool create never overwrites)", tok[2]);
	if (s->h)
		die(s, "a pool is already open (one pool per script)");
	enum simhost_io io = SIMHOST_IO_URING;
	uint64_t seed = 1;
	struct vpool_params prm = {0};
	/* as the daemon does: a pool in a regular file has a journal file, one on an RBD
	 * image (rbd:CEPHPOOL/IMAGE) keeps it inside */
	bool journal_file = !vblk_rbd_spec(tok[2]);
	bool live_ckpt = false;
	int first_opt = create ? 4 : 3;
	if (create && nt < 4)
		die(s, "usage: pool create PATH SIZE [extent=SIZE] [io=uring|crashsim] [live-checkpoints=yes|no]");
	for (int i = first_opt; i < nt; i++) {
		char *eq = strchr(tok[i], '=');
		if (!eq)
			die(s, "unknown option '%s'", tok[i]);
		*eq = 0;
		const char *k = tok[i], *v = eq + 1;
		if (!strcmp(k, "io"))
			io = parse_io(s, v);
		else if (!strcmp(k, "seed"))
			seed = parse_u64_or_die(s, "seed", v);
		else if (create && !strcmp(k, "extent"))
			prm.extent_size = (uint32_t)parse_size_or_die(s, "extent size", v);
		else if (create && !strcmp(k, "journal"))
			prm.journal_size = (uint32_t)parse_size_or_die(s, "journal size", v);
		else if (create && !strcmp(k, "max"))
			prm.max_size = parse_size_or_die(s, "maximum pool size", v);
		else if (create && !strcmp(k, "journal-file")) {
			if (strcmp(v, "yes") && strcmp(v, "no"))
				die(s, "journal-file=%s: expected yes or no", v);
			journal_file = !strcmp(v, "yes");
		} else if (!strcmp(k, "live-checkpoints")) {
			if (strcmp(v, "yes") && strcmp(v, "no"))
				die(s, "live-checkpoints=%s: expected yes or no", v);
			live_ckpt = !strcmp(v, "yes");
		}
		else
			die(s, "unknown option '%s'", k);
	}
	char err[512] = "";
	int rc;
	if (create) {
		uint64_t size = parse_size_or_die(s, "pool size", tok[3]);
		rc = simhost_create_pool_ex(tok[2], size, &prm, journal_file, io, seed, &s->h, err,
					    sizeof(err));
	} else {
		rc = simhost_open_pool(tok[2], io, seed, &s->h, err, sizeof(err));
	}
	if (rc < 0)
		die(s, "%s", err[0] ? err : strerror(-rc));
	if (live_ckpt && (rc = simhost_live_checkpoints(s->h, true)) < 0)
		die(s, "live-checkpoints=yes: %s", strerror(-rc));
}

static void do_volume(struct sim *s, char **tok, int nt)
{
	need_pool(s);
	if (nt < 4 || strcmp(tok[1], "create"))
		die(s, "usage: volume create NAME SIZE [block=512|4096]");
	uint32_t block = 512;
	for (int i = 4; i < nt; i++) {
		if (!strcmp(tok[i], "block=512"))
			block = 512;
		else if (!strcmp(tok[i], "block=4096"))
			block = 4096;
		else
			die(s, "unknown option '%s' (block=512 or block=4096)", tok[i]);
	}
	uint64_t size = parse_size_or_die(s, "volume size", tok[3]);
	int rc = simhost_volume_create(s->h, tok[2], size, block);
	if (rc == -EEXIST)
		die(s, "volume '%s' already exists", tok[2]);
	if (rc == -EINVAL)
		die(s, "bad volume '%s': names are 1-%d of [A-Za-z0-9._-], size > 0", tok[2],
		    VPOOL_NAME_MAX);
	if (rc < 0)
		die(s, "cannot create volume '%s': %s", tok[2], strerror(-rc));
}

static void run_line(struct sim *s, char *line)
{
	char *hash = strchr(line, '#');
	if (hash)
		*hash = 0;
	char *tok[MAX_TOKENS];
	int nt = 0;
	for (char *t = strtok(line, " \t\r\n"); t; t = strtok(NULL, " \t\r\n")) {
		if (nt == MAX_TOKENS)
			die(s, "too many words");
		tok[nt++] = t;
	}
	if (!nt)
		return;
	const char *v = tok[0];
	if (!strcmp(v, "pool")) {
		do_pool(s, tok, nt);
	} else if (!strcmp(v, "volume")) {
		do_volume(s, tok, nt);
	} else if (!strcmp(v, "attach")) {
		need_pool(s);
		if (nt != 3)
			die(s, "usage: attach NAME LUN");
		int rc = simhost_attach(s->h, tok[1], parse_lun(s, tok[2]));
		if (rc == -ENOENT)
			die(s, "no volume '%s'", tok[1]);
		if (rc == -EBUSY)
			die(s, "LUN %s is already attached", tok[2]);
		if (rc < 0)
			die(s, "attach failed: %s", strerror(-rc));
	} else if (!strcmp(v, "cmd")) {
		if (s->npend)
			die(s, "'cmd' while submitted commands are pending: 'wait' first");
		do_submit(s, tok, nt);
		wait_all(s);
	} else if (!strcmp(v, "submit")) {
		do_submit(s, tok, nt);
	} else if (!strcmp(v, "wait")) {
		if (nt != 1)
			die(s, "usage: wait");
		wait_all(s);
	} else if (!strcmp(v, "reopen")) {
		need_pool(s);
		/* Completions of submitted commands are kept by simhost for the next wait. */
		int rc = simhost_reopen(s->h);
		if (rc < 0)
			die(s, "reopen failed: %s", strerror(-rc));
	} else if (!strcmp(v, "crash")) {
		need_pool(s);
		int rc = simhost_crash(s->h);
		if (rc == -EOPNOTSUPP)
			die(s, "crash needs a pool opened with io=crashsim");
		if (rc < 0)
			die(s, "recovery after the crash failed: %s", strerror(-rc));
		s->npend = 0; /* commands in flight were lost with the power */
	} else if (!strcmp(v, "stats")) {
		need_pool(s);
		char *js = simhost_stats_json(s->h);
		if (!js)
			die(s, "out of memory");
		printf("%s\n", js);
		fflush(stdout);
		free(js);
	} else if (!strcmp(v, "lunstats")) {
		need_pool(s);
		if (nt != 2)
			die(s, "usage: lunstats LUN");
		char *end;
		long lun = strtol(tok[1], &end, 10);
		char *js = *end || end == tok[1] ? NULL : simhost_lun_stats_json(s->h, (int)lun);
		if (!js)
			die(s, "lunstats: no LUN '%s' attached", tok[1]);
		printf("%s\n", js);
		fflush(stdout);
		free(js);
	} else if (!strcmp(v, "deallocate")) {
		need_pool(s);
		if (nt != 4)
			die(s, "usage: deallocate NAME OFFSET LEN");
		uint64_t off = parse_size_or_die(s, "deallocate offset", tok[2]);
		uint64_t len = parse_size_or_die(s, "deallocate length", tok[3]);
		int rc = simhost_deallocate(s->h, tok[1], off, len);
		if (rc == -ENOENT)
			die(s, "no volume '%s'", tok[1]);
		if (rc == -EINVAL)
			die(s, "bad range %s+%s for '%s' (multiples of 512 inside the volume)", tok[2],
			    tok[3], tok[1]);
		if (rc < 0)
			die(s, "deallocate failed: %s", strerror(-rc));
	} else if (!strcmp(v, "visibility")) {
		need_pool(s);
		if (nt != 3)
			die(s, "usage: visibility LUN GROUP");
		int lun = parse_lun(s, tok[1]);
		uint64_t g = parse_u64_or_die(s, "visibility group", tok[2]);
		if (g > 1000000)
			die(s, "bad visibility group '%s' (0..1000000)", tok[2]);
		int rc = simhost_set_visibility(s->h, lun, (int)g);
		if (rc < 0)
			die(s, "visibility failed: %s", strerror(-rc));
	} else if (!strcmp(v, "xcopy-scope")) {
		need_pool(s);
		static const char *const scopes[] = {[VD_XCOPY_COVISIBLE] = "covisible",
						     [VD_XCOPY_POOL] = "pool",
						     [VD_XCOPY_LUN] = "lun"};
		int scope = -1;
		for (int i = 0; nt == 2 && i < (int)(sizeof(scopes) / sizeof(scopes[0])); i++)
			if (!strcmp(tok[1], scopes[i]))
				scope = i;
		if (scope < 0)
			die(s, "usage: xcopy-scope covisible|pool|lun");
		int rc = simhost_set_xcopy_scope(s->h, scope);
		if (rc < 0)
			die(s, "xcopy-scope failed: %s", strerror(-rc));
	} else if (!strcmp(v, "threshold")) {
		/* extension: the pool's soft threshold, percent of its capacity */
		need_pool(s);
		if (nt != 2)
			die(s, "usage: threshold PERCENT   (1..100; 0: none)");
		uint64_t pct = parse_u64_or_die(s, "threshold percent", tok[1]);
		if (pct > 100)
			die(s, "bad threshold '%s' (a percentage 0..100)", tok[1]);
		int rc = simhost_set_threshold(s->h, (unsigned)pct);
		if (rc < 0)
			die(s, "threshold failed: %s", strerror(-rc));
	} else if (!strcmp(v, "backing-limit")) {
		/* extension: a full file system under an io=crashsim pool */
		need_pool(s);
		if (nt != 2)
			die(s, "usage: backing-limit SIZE   (0: no limit)");
		int rc = simhost_backing_limit(s->h, parse_size_or_die(s, "backing-limit", tok[1]));
		if (rc == -EOPNOTSUPP)
			die(s, "backing-limit needs a pool opened with io=crashsim");
		if (rc < 0)
			die(s, "backing-limit failed: %s", strerror(-rc));
	} else if (!strcmp(v, "hydrate")) {
		need_pool(s);
		if (nt != 2)
			die(s, "usage: hydrate pause|resume|wait");
		enum simhost_hyd op;
		if (!strcmp(tok[1], "pause"))
			op = SIMHOST_HYD_PAUSE;
		else if (!strcmp(tok[1], "resume"))
			op = SIMHOST_HYD_RESUME;
		else if (!strcmp(tok[1], "wait"))
			op = SIMHOST_HYD_WAIT;
		else
			die(s, "hydrate: '%s' is not pause, resume or wait", tok[1]);
		int rc = simhost_hydration(s->h, op, NULL, NULL);
		if (rc < 0)
			die(s, "hydrate %s: %s", tok[1], strerror(-rc));
	} else if (!strcmp(v, "checkpoint")) {
		need_pool(s);
		if (nt != 1)
			die(s, "usage: checkpoint");
		bool live;
		int rc = simhost_checkpoint(s->h, &live);
		if (rc < 0)
			die(s, "checkpoint failed: %s", strerror(-rc));
		printf("{\"checkpoint\":\"%s\"}\n", live ? "live" : "paused");
		fflush(stdout);
	} else if (!strcmp(v, "verify")) {
		need_pool(s);
		int bad = simhost_verify(s->h, stderr);
		if (bad)
			die(s, "pool verification found %d problem(s)", bad);
	} else {
		die(s, "unknown statement '%s'", v);
	}
}

int main(int argc, char **argv)
{
	struct sim s = {0};
	FILE *in = stdin;
	s.script = "stdin";
	if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))) {
		fprintf(stderr, "usage: vaai-sim [SCRIPT]   (reads the script from stdin without one)\n");
		return 2;
	}
	if (argc == 2) {
		in = fopen(argv[1], "r");
		if (!in) {
			fprintf(stderr, "vaai-sim: cannot open %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		s.script = argv[1];
	}
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, in) >= 0) {
		s.line++;
		run_line(&s, line);
	}
	free(line);
	if (in != stdin)
		fclose(in);
	if (s.npend) {
		s.line++;
		die(&s, "end of script with submitted commands not waited for");
	}
	int rc = s.h ? simhost_close(s.h) : 0;
	free(s.pend);
	if (rc < 0) {
		fprintf(stderr, "vaai-sim: closing the pool failed: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}
