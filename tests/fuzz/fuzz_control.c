/*
 * fuzz_control: control socket request lines (issue 24), answered by the
 * daemon's own request code (vd_control_answer, src/daemon/control_request.c)
 * without the socket.
 *
 * Each input starts from its own daemon state (so a finding reproduces from
 * its input alone): a reactor, two pools on in-memory crashsim devices built as
 * src/daemon/pools.c builds struct vd_pools ("default" holding vol1 and vol2,
 * "second" holding vol3), no attached device. Input: one or more request lines
 * separated by '\n' (at most 16; a line ends at a NUL as in the daemon's
 * buffer; a line longer than the daemon reads, 2047 bytes, is skipped: the
 * daemon answers "request too long" without parsing it).
 *
 * Checked, after every line: the answer is a JSON object with "ok": true, or
 * "ok": false and a non-empty "error" string, that prints as one line and
 * reads back; the volumes change only by an ok "volume delete P/V", which
 * removed exactly P/V (a refused one left every volume in place); after an ok
 * "pool create", pools.conf read back as the daemon reads it at start names
 * the pool with its path and size. After the
 * input: every pool passes vpool_verify; no leak (LeakSanitizer).
 *
 * Confinement: "pool create" makes real files. The target owns a private
 * directory (mkdtemp, one per process, removed at exit; also the state_dir
 * that pools.conf is appended to; it holds two files for pool create --force,
 * spare_files()) and re-roots every absolute pool path
 * under it before the line reaches the daemon; a path with a ".." component
 * and a relative path (it would name the working directory) are not sent,
 * nor a pool larger than 1 GiB (a sparse file, but kept small). After each
 * line every pool's path must lie in that directory (a tripwire). The words are
 * found by the daemon's own tokenizer, so the harness and the daemon agree on
 * which word is the path; nothing else in the protocol names a file. Pools
 * created are closed and the directory emptied after each input.
 *
 * Seeds: every request kind well-formed (pool create --force on spare.img
 * too), then typical typos. FUZZ_CONTROL_VERBOSE=1 prints each line's answer.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "seeds.h"
#include "vaaid/control_request.h"
#include "vaaid/buf_cache.h"
#include "vaaid/io.h"
#include "vaaid/util.h"

#define MAX_LINES 16
#define LINE_MAX_BYTES 2047 /* what the daemon reads of a request line */
#define MEM_POOL_SIZE (8ull << 20)
#define CREATE_MAX (1ull << 30)
#define MAX_VOLS 64

/* ---- the private directory: one per process, emptied after each input */
static char scratch[256];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0 || strcmp(path, scratch))
		remove(path);
	return 0;
}

static void scratch_empty(void) { nftw(scratch, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static void scratch_remove(void)
{
	scratch_empty();
	rmdir(scratch);
}

/*
 * Files that pool create --force finds in the private directory (as the admin's
 * prepared file, and a store holding a pool): spare.img, 16 MiB of zeros, and
 * holds-pool.img, 16 MiB starting with a superblock's magic. Made again after
 * every input that made files (a pool create formats spare.img).
 */
static void spare_files(void)
{
	static const uint8_t magic[8] = {'A', 'A', 'I', 'D', '_', 'P', 'L', '1'};
	static const char *const names[] = {"spare.img", "holds-pool.img"};
	for (int i = 0; i < 2; i++) {
		char path[sizeof(scratch) + 32];
		snprintf(path, sizeof(path), "%s/%s", scratch, names[i]);
		FILE *f = fopen(path, "w");
		bool ok = f && (i == 0 || fwrite(magic, 1, sizeof(magic), f) == sizeof(magic)) &&
			  ftruncate(fileno(f), 16 << 20) == 0;
		if (!f || fclose(f) != 0 || !ok) {
			perror("fuzz_control: the spare files");
			abort();
		}
	}
}

static void scratch_init(void)
{
	if (scratch[0])
		return;
	const char *tmp = getenv("TMPDIR");
	snprintf(scratch, sizeof(scratch), "%s/fuzz_control.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(scratch)) {
		perror("fuzz_control: mkdtemp");
		scratch[0] = 0;
		abort();
	}
	atexit(scratch_remove);
	spare_files();
}

static _Noreturn void finding(const char *what, const char *line)
{
	fprintf(stderr, "fuzz_control: FINDING: %s (request '%s')\n", what, line ? line : "");
	if (scratch[0])
		scratch_remove(); /* (abort runs no atexit) */
	abort();
}

/* ---- the daemon state of one input */
struct daemon {
	struct vd_config conf;
	struct vreactor *r;
	struct vd_pools pools;
	struct vd_devices *devs;
	struct vd_control_env env;
};

static void mem_pool(struct daemon *d, const char *name, const char *const *vols, unsigned nv)
{
	struct vd_pool *vp = &d->pools.p[d->pools.n];
	snprintf(vp->name, sizeof(vp->name), "%s", name);
	snprintf(vp->path, sizeof(vp->path), "/memory/%s", name); /* a name only: no file */
	struct vpool_params prm = {.size = MEM_POOL_SIZE, .extent_size = 64u << 10,
				   .journal_size = 528u << 10};
	static struct vbuf_cache *bufs; /* the journals' buffers, kept across inputs */
	if ((!bufs && vbuf_cache_new(8, &bufs) < 0) ||
	    vblk_crashsim_create_mem(d->r, MEM_POOL_SIZE, 1, &vp->dev) < 0)
		finding("cannot build the in-memory pool", name);
	vp->dev->bufs = bufs;
	if (vpool_format(vp->dev, &prm) < 0 || vpool_open(vp->dev, &vp->pool) < 0)
		finding("cannot build the in-memory pool", name);
	for (unsigned i = 0; i < nv; i++)
		if (vpool_volume_create(vp->pool, vols[i], 4ull << 20, 512, NULL) < 0)
			finding("cannot create a volume", vols[i]);
	d->pools.n++;
}

static void daemon_up(struct daemon *d)
{
	memset(d, 0, sizeof(*d));
	vd_config_defaults(&d->conf);
	d->conf.n_pools = 0;
	snprintf(d->conf.state_dir, sizeof(d->conf.state_dir), "%s", scratch);
	if (vreactor_create(64, &d->r) < 0)
		finding("cannot create a reactor", NULL);
	static const char *const v1[] = {"vol1", "vol2"}, *const v2[] = {"vol3"};
	mem_pool(d, "default", v1, 2);
	mem_pool(d, "second", v2, 1);
	struct vd_env env = {.r = d->r, .pools = &d->pools, .conf = &d->conf};
	if (vd_devices_new(&env, &d->devs) < 0)
		finding("cannot create the device list", NULL);
	d->env = (struct vd_control_env){.conf = &d->conf, .r = d->r, .pools = &d->pools,
					 .devs = d->devs};
}

static void daemon_down(struct daemon *d)
{
	for (unsigned i = 0; i < d->pools.n; i++)
		if (d->pools.p[i].pool && vpool_verify(d->pools.p[i].pool, stderr) != 0)
			finding("a pool fails vpool_verify after the input", d->pools.p[i].name);
	vd_devices_free(d->devs);
	vd_pools_close(&d->pools);
	vreactor_destroy(d->r);
}

/* ---- the volumes of every pool, as "pool/volume" */
struct volset {
	unsigned n;
	char name[MAX_VOLS][VD_POOL_NAME_MAX + VPOOL_NAME_MAX + 2];
};

static void volumes(const struct daemon *d, struct volset *s)
{
	s->n = 0;
	for (unsigned i = 0; i < d->pools.n; i++) {
		const struct vd_pool *vp = &d->pools.p[i];
		for (unsigned k = 0; vp->pool && k < vpool_volume_count(vp->pool); k++) {
			if (s->n == MAX_VOLS)
				finding("more volumes than the target built", NULL);
			struct vvol_info info;
			vvol_get_info(vpool_volume_at(vp->pool, k), &info);
			snprintf(s->name[s->n++], sizeof(s->name[0]), "%s/%s", vp->name, info.name);
		}
	}
}

static bool has(const struct volset *s, const char *name)
{
	for (unsigned i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return true;
	return false;
}

/* after == before without `gone` (NULL: after == before) */
static bool same_but(const struct volset *before, const struct volset *after, const char *gone)
{
	if (after->n != before->n - (gone ? 1 : 0))
		return false;
	for (unsigned i = 0; i < after->n; i++)
		if (!has(before, after->name[i]) || (gone && !strcmp(after->name[i], gone)))
			return false;
	return !gone || has(before, gone);
}

/* ---- the answer */
static bool check_answer(json_object *o, const char *line)
{
	json_object *ok, *err;
	if (!o || !json_object_is_type(o, json_type_object))
		finding("an answer that is not a JSON object", line);
	if (!json_object_object_get_ex(o, "ok", &ok) || !json_object_is_type(ok, json_type_boolean))
		finding("an answer without a boolean \"ok\"", line);
	bool good = json_object_get_boolean(ok);
	if (!good && (!json_object_object_get_ex(o, "error", &err) ||
		      !json_object_is_type(err, json_type_string) || !json_object_get_string_len(err)))
		finding("a refusal without an \"error\" string", line);
	const char *js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (strchr(js, '\n'))
		finding("an answer that is not one line", line);
	json_object *back = json_tokener_parse(js);
	if (!back)
		finding("an answer that does not read back as JSON", line);
	json_object_put(back);
	return good;
}

/*
 * The line as the daemon will get it: "pool create" with its path re-rooted in
 * the private directory (the words joined by single spaces: the same words
 * for the daemon's tokenizer). NULL: not to be sent.
 */
static char *confine(const char *line)
{
	char *copy = strdup(line), *tok[VD_CTL_MAX_WORDS];
	if (!copy)
		return NULL;
	int nt = vd_control_tokenize(copy, tok, VD_CTL_MAX_WORDS);
	if (!(nt >= 4 && nt <= VD_CTL_MAX_WORDS && !strcmp(tok[0], "pool") &&
	      !strcmp(tok[1], "create"))) {
		free(copy);
		return strdup(line);
	}
	char *out = NULL;
	const char *path = tok[3];
	uint64_t size;
	bool dotdot = !strcmp(path, "..") || !strncmp(path, "../", 3) || strstr(path, "/../") ||
		      (strlen(path) >= 3 && !strcmp(path + strlen(path) - 3, "/.."));
	bool big = nt >= 5 && vparse_size(tok[4], &size) == 0 && size > CREATE_MAX;
	if (path[0] == '/' && !dotdot && !big) {
		size_t cap = strlen(line) + strlen(scratch) + 16;
		out = malloc(cap);
		if (out) {
			size_t n = 0;
			for (int i = 0; i < nt; i++)
				n += (size_t)snprintf(out + n, cap - n, "%s%s%s", i ? " " : "",
						      i == 3 ? scratch : "", tok[i]);
		}
	}
	free(copy);
	return out;
}

/* After an ok pool create: <state_dir>/pools.conf, read back as the daemon reads
 * it at start (vd_config_load), names the pool with its path and size. */
static void check_remembered(const char *name, const char *path, const char *size,
			     const char *line)
{
	struct vd_config *c = malloc(sizeof(*c));
	char file[sizeof(scratch) + 16], err[1200];
	uint64_t bytes = 0;
	if (!c)
		return;
	vd_config_defaults(c);
	c->n_pools = 0;
	snprintf(file, sizeof(file), "%s/pools.conf", scratch);
	if (vd_config_load(c, file, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_control: %s\n", err);
		finding("pools.conf does not read back after a pool create", line);
	}
	vparse_size(size, &bytes);
	bool found = false;
	for (unsigned i = 0; i < c->n_pools; i++)
		found |= !strcmp(c->pools[i].name, name) && !strcmp(c->pools[i].path, path) &&
			 c->pools[i].size == bytes;
	free(c);
	if (!found)
		finding("pools.conf read back does not name the pool created, its path and size",
			line);
}

static void request(struct daemon *d, const char *line, bool *made_files)
{
	char *send = confine(line);
	if (!send)
		return;
	char *copy = strdup(send), *tok[VD_CTL_MAX_WORDS];
	if (!copy) {
		free(send);
		return;
	}
	int nt = vd_control_tokenize(copy, tok, VD_CTL_MAX_WORDS);
	bool is_delete = nt == 3 && !strcmp(tok[0], "volume") && !strcmp(tok[1], "delete");
	if (nt >= 2 && !strcmp(tok[0], "pool") && !strcmp(tok[1], "create"))
		*made_files = true;
	struct volset before, after;
	volumes(d, &before);
	json_object *o = vd_control_answer(&d->env, send);
	bool good = check_answer(o, line);
	if (getenv("FUZZ_CONTROL_VERBOSE")) /* reproducing: what each line was answered */
		fprintf(stderr, "fuzz_control: '%s' -> %s\n", line,
			json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	volumes(d, &after);
	/* the confinement's tripwire: every pool lives in memory or in the private directory */
	size_t sl = strlen(scratch);
	for (unsigned i = 0; i < d->pools.n; i++) {
		const char *pp = d->pools.p[i].path;
		if (strncmp(pp, "/memory/", 8) && (strncmp(pp, scratch, sl) || pp[sl] != '/'))
			finding("a pool outside the target's private directory", line);
	}
	if (good && nt >= 5 && !strcmp(tok[0], "pool") && !strcmp(tok[1], "create"))
		check_remembered(tok[2], tok[3], tok[4], line);
	if (is_delete && good && !same_but(&before, &after, tok[2]))
		finding("a volume delete answered ok did not remove exactly that volume", line);
	if ((!is_delete || !good) && !same_but(&before, &after, NULL))
		finding(is_delete ? "a refused volume delete changed the volumes"
				  : "a request other than volume delete changed the volumes",
			line);
	free(copy);
	free(send);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 16384)
		return 0;
	scratch_init();
	vlog_set_level(VLOG_ERR);
	struct daemon d;
	daemon_up(&d);
	bool made_files = false;
	size_t pos = 0;
	for (unsigned n = 0; n < MAX_LINES && pos < size; n++) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - (data + pos)) : size - pos;
		if (len <= LINE_MAX_BYTES) {
			char line[LINE_MAX_BYTES + 1];
			memcpy(line, data + pos, len);
			line[len] = 0; /* (a NUL inside ends it, as in the daemon's buffer) */
			request(&d, line, &made_files);
		}
		pos += len + 1;
	}
	daemon_down(&d);
	if (made_files) {
		scratch_empty();
		spare_files();
	}
	return 0;
}

/* ---- seeds: every request kind well-formed, then typical typos */
int fuzz_make_seeds(const char *dir)
{
	static const char *const seeds[][2] = {
		{"status", "status\n"},
		{"stats", "stats\nstats default\nstats default/vol1\nstats second\n"},
		{"typo-stats", "stats nosuch\nstats default/nosuch\nstats default/\nstats a b\n"},
		{"pool-list", "pool list\n"},
		{"volume-list", "volume list\n"},
		{"pool-create", "pool create p2 /pools/p2.pool 64M\n"},
		{"pool-create-extent-force", "pool create p3 /pools/p3.pool 64M 128K force\n"},
		{"pool-create-then-list", "pool create p2 /pools/p2.pool 64M\npool list\nstatus\n"},
		{"pool-grow", "pool grow default 16M\n"},
		{"pool-grow-second", "pool grow second 32M\nstatus\n"},
		{"volume-delete", "volume delete default/vol1\n"},
		{"volume-delete-all", "volume delete default/vol2\nvolume delete second/vol3\n"
				      "volume delete default/vol1\nvolume list\n"},
		{"typo-status", "stauts\n"},
		/* a path too long for pools.conf's line (finding 7's open part) */
		{"path-too-long-for-pools-conf",
		 "pool create p9 /pools/" "0123456789012345678901234567890123456789"
		 "0123456789012345678901234567890123456789" "0123456789012345678901234567890123456789"
		 "0123456789012345678901234567890123456789" "01234567890123456789 16M\nstatus\n"},
		{"typo-pool-verb", "pool crate p2 /pools/p2 64M\n"},
		{"typo-no-volume", "volume delete default\n"},
		{"typo-unknown-volume", "volume delete default/nosuch\n"},
		{"typo-unknown-pool", "volume delete nosuch/vol1\n"},
		{"typo-delete-twice", "volume delete default/vol1\nvolume delete default/vol1\n"},
		{"typo-grow-small", "pool grow default 1K\n"},
		{"typo-grow-huge", "pool grow default 1P\n"},
		{"typo-relative-path", "pool create p2 pools/p2 64M\n"},
		{"typo-pool-exists", "pool create default /pools/x 64M\n"},
		{"typo-bad-size", "pool create p2 /pools/p2 10Q\n"},
		{"typo-bad-extent", "pool create p2 /pools/p2 64M 3K\n"},
		{"typo-create-twice", "pool create p2 /pools/p2 64M\npool create p2 /pools/p2 64M\n"},
		{"typo-create-same-path", "pool create p2 /pools/p2 64M\npool create p3 /pools/p2 64M force\n"},
		{"pool-create-force-spare", "pool create p2 /spare.img 16M force\nstatus\n"},
		{"pool-create-force-spare-extent", "pool create p2 /spare.img 8M 256K force\n"
						   "pool grow p2 16M\n"},
		{"typo-force-spare-too-small", "pool create p2 /spare.img 32M force\n"},
		{"typo-spare-without-force", "pool create p2 /spare.img 16M\n"},
		{"typo-force-holds-pool", "pool create p2 /holds-pool.img 16M force\n"},
		{"typo-force-pool-journal", "pool create p2 /spare.img 8M force\n"
					    "pool create p3 /spare.img.journal 1M force\n"},
		{"typo-force-directory", "pool create p2 / 1M force\n"},
		{"typo-status-args", "status all\n"},
		{"typo-list-args", "pool list all\n"},
		{"empty", "\n"},
		{"blanks", " \t \r\n"},
		{"pool-alone", "pool\n"},
		{"crlf", "status\r\nvolume list\r\n"},
	};
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		if (fuzz_write_seed(dir, seeds[i][0], seeds[i][1], strlen(seeds[i][1])) < 0)
			return -1;
	return 0;
}
