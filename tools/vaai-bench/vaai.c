/*
 * vaai-bench vaai: the VAAI primitives through the whole engine (issue 5
 * item 8; scripts/bench/vaai; docs/performance.md "VAAI primitives (engine)").
 *
 * How this works: as in engine.c, one pool file (vblk_uring: O_DIRECT,
 * io_uring, journal records written with DSYNC) is served by simhost's engine
 * thread (reactor, TCMU ring, dispatch, handlers, pool), and this thread
 * plays the kernel: flow_run() keeps up to --qd commands queued in a LUN's
 * ring (simhost_submit) and hands every completion to the phase's `done`
 * before asking its `next` for another command. A command completes only when
 * its data and its journal records are durable (docs/design.md, commit
 * rules), so every time below covers that. The limits are the LUN's own, read
 * through the ring: INQUIRY VPD B0 Block Limits (SBC-4 6.6.4) and READ
 * CAPACITY (16) (SBC-4 5.23); nothing is hard-coded.
 *
 *   caw:     volume "caw" (--caw-size, --caw-block) written completely first
 *            (1 MiB writes; every block holds its LBA, a version and a
 *            pattern). COMPARE AND WRITE (SBC-4 5.3) of one block, verify
 *            instance = the block as the bench knows it, write instance = the
 *            next version, on uniformly random LBAs of which none is twice in
 *            flight, --qd in flight. Against fio 4 KiB randwrite, io_uring,
 *            O_DIRECT + O_DSYNC, iodepth --qd, on a file of the same size
 *            written completely first, in the same directory. Order engine,
 *            fio, fio, engine, each half of --runtime after a sync and a 2 s
 *            pause (engine.c's reasons). A MISCOMPARE is a failure (the bench
 *            knows every block); afterwards successes == sum of versions and a
 *            sample of blocks reads back exactly. p99 latency = submission to
 *            reaped completion of these CAWs.
 *   contend: 8 incrementers on one block of volume "contend": READ, then
 *            COMPARE AND WRITE(n -> n + 1) until a MISCOMPARE (VALID=1,
 *            INFORMATION inside the counter: SBC-4 5.3), then READ again; for
 *            --runtime. ops/s = successful CAWs per second; the final counter
 *            must equal them.
 *   ws:      volume "ws" (--ws-size) mapped first: one 4 KiB WRITE(16) into
 *            every extent (in a granule that varies with the extent). Checked:
 *            the volume maps its whole size, a sample reads back the data.
 *            Timed: WRITE SAME (16) (SBC-4 5.49) with a zero data-out block and
 *            UNMAP=0 (ESXi's Block Zero), NUMBER OF LOGICAL BLOCKS = MAXIMUM
 *            WRITE SAME LENGTH, --qd in flight, over the whole volume.
 *            Checked: every command GOOD, the volume maps nothing, the pool's
 *            used bytes dropped by exactly what was mapped, the sample reads
 *            zeros.
 *   unmap:   the same with volume "unmap" (--unmap-size) and UNMAP (SBC-4
 *            5.31): each command carries descriptors of --unmap-desc bytes
 *            (default: as large as allowed) up to MAXIMUM UNMAP BLOCK
 *            DESCRIPTOR COUNT and, all together, MAXIMUM UNMAP LBA COUNT.
 * Mapping 356 GiB with the pool's per-extent fallocate would need 356 GiB of
 * disk, so the mapping writes run with simhost_bench_skip_reserve (4 KiB of
 * disk per extent) unless --reserve; the timed commands never reserve space
 * either way (they only free it). Everything is in one pool sized for the
 * largest phase (the ws volume's extents are free again before unmap maps).
 *
 * stdout, one line per phase that passed its checks:
 *   caw_distinct_qd32 caw_ops=N fio_dsync_write_iops=N ratio=R   (caw_ops: CAWs/s; qdN with --qd N)
 *   caw_p99_us=N
 *   caw_contended_8way_ops_s=N
 *   write_same_zero_100g_s=S   [mapped_gib=G when --ws-size is not 100G]
 *   unmap_256g_s=S             [mapped_gib=G when --unmap-size is not 256G]
 * progress on stderr ("# ..."); for each CAW run also where its time went (the pool
 * file's mean read, write and group-fsync times, writes per fsync) and, at the end,
 * the CAWs' and fio's mean latencies. Exit 1 when any check failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bench.h"
#include "flow.h"
#include "scsi_build.h"
#include "simhost.h"
#include "vaaid/endian.h"
#include "vaaid/scsi.h"

#define GIB (1ull << 30)
#define MIB (1ull << 20)
#define GRAN 4096u
#define N_WAYS 8u
#define MAX_BLOCK BENCH_MAX_BLOCK
#define UNMAP_LIST_MAX 65535u /* the 16-bit PARAMETER LIST LENGTH of UNMAP (SBC-4 5.31.1) */

struct vcfg {
	const char *dir;
	uint64_t ws_size, unmap_size, caw_size;
	uint64_t unmap_desc; /* bytes per UNMAP descriptor; 0: as large as the limits allow */
	uint32_t caw_block;
	int group_flush; /* --group-flush N: simhost_group_flush; -1 = the default */
	double runtime;
	unsigned qd;
	const char *fio;
	const char *only; /* comma-separated phases */
	bool reserve;     /* map with the backing file's reservation (fallocate) */
	bool keep;
};

/* ---------------------------------------------------------------- helpers */

static bool all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* The pool's used bytes, its extent size and a volume's mapped bytes (vpool_stats_json). */
static int pool_space(struct simhost *h, const char *vol, uint64_t *used, uint64_t *mapped,
		      uint64_t *ext)
{
	char *js = simhost_stats_json(h);
	json_object *o = js ? json_tokener_parse(js) : NULL, *p, *v, *e, *vols;
	free(js);
	int rc = -EPROTO;
	if (o && json_object_object_get_ex(o, "pool", &p) && json_object_object_get_ex(p, "used", &v) &&
	    json_object_object_get_ex(p, "extent", &e)) {
		*used = json_object_get_uint64(v);
		*ext = json_object_get_uint64(e);
		if (json_object_object_get_ex(o, "volumes", &vols)) {
			for (size_t i = 0; i < json_object_array_length(vols); i++) {
				json_object *e = json_object_array_get_idx(vols, i), *n, *m;
				if (json_object_object_get_ex(e, "name", &n) &&
				    !strcmp(json_object_get_string(n), vol) &&
				    json_object_object_get_ex(e, "mapped", &m)) {
					*mapped = json_object_get_uint64(m);
					rc = 0;
				}
			}
		}
	}
	json_object_put(o);
	return rc;
}

/* ---------------------------------------------------------------- fio (as engine.c runs it) */

/* fio 4 KiB randwrite with O_DIRECT + O_DSYNC (each write durable on completion, as a CAW). */
static int run_fio(const struct vcfg *c, const char *file, double runtime, double *iops,
		   double *lat_us)
{
	char a_file[4200], a_size[64], a_rt[64], a_qd[64];
	snprintf(a_file, sizeof(a_file), "--filename=%s", file);
	snprintf(a_size, sizeof(a_size), "--size=%llu", (unsigned long long)c->caw_size);
	/* fio counts whole seconds and takes 0 as "no limit" */
	snprintf(a_rt, sizeof(a_rt), "--runtime=%.0f", runtime < 1 ? 1 : runtime);
	snprintf(a_qd, sizeof(a_qd), "--iodepth=%u", c->qd);
	char *argv[] = {(char *)c->fio, "--name=bench", a_file, a_size, "--ioengine=io_uring",
			"--direct=1", "--bs=4k", a_qd, "--time_based", a_rt, "--fallocate=none",
			"--output-format=json", "--rw=randwrite", "--sync=dsync", "--norandommap", NULL};
	return bench_fio_iops(argv, "write", iops, lat_us);
}

/* ---------------------------------------------------------------- map, sample, zero, unmap */

struct map_ctx {
	uint64_t ext, n_ext, next;
	uint32_t block;
	const uint8_t *data; /* GRAN bytes, not zero */
	uint64_t errors;
};

/* The granule of an extent the mapping write goes to (varies, so no single granule is special). */
static uint64_t mapped_gran(uint64_t ext, uint64_t vext) { return (vext * 61) % (ext / GRAN); }

static int map_next(void *ctx, struct vcmd *c)
{
	struct map_ctx *m = ctx;
	if (m->next == m->n_ext)
		return 0;
	uint64_t off = m->next * m->ext + mapped_gran(m->ext, m->next) * GRAN;
	sb_rw16_cdb(c->cdb, 0x8a, off / m->block, GRAN / m->block);
	c->cdb_len = 16;
	c->out = m->data;
	c->out_len = GRAN;
	m->next++;
	return 1;
}

static int count_errors(uint64_t *errors, const char *what, const struct simk_result *r)
{
	if (r->status && !(*errors)++)
		print_sense(what, r);
	return 0;
}

static int map_done(void *ctx, const struct vcmd *c, const struct simk_result *r, double lat)
{
	(void)c;
	(void)lat;
	return count_errors(&((struct map_ctx *)ctx)->errors, "mapping write", r);
}

/*
 * Sample reads of a mapped (or zeroed) volume: the mapped granule of up to
 * 1024 extents spread over it, and 16 of those extents whole. Before the
 * zeroing each must hold the mapping write's data in exactly its granule and
 * zeros elsewhere; after it, zeros.
 */
struct sample_ctx {
	uint64_t ext, n_ext, n_sample, n_whole, next;
	uint32_t block;
	const uint8_t *data;
	bool mapped; /* expect the mapping writes' data */
	uint64_t errors, bad;
};

static int sample_next(void *ctx, struct vcmd *c)
{
	struct sample_ctx *s = ctx;
	if (s->next == s->n_sample + s->n_whole)
		return 0;
	bool whole = s->next >= s->n_sample;
	uint64_t i = whole ? (s->next - s->n_sample) * s->n_sample / s->n_whole : s->next;
	uint64_t vext = s->n_sample > 1 ? i * (s->n_ext - 1) / (s->n_sample - 1) : 0;
	uint64_t off = vext * s->ext + (whole ? 0 : mapped_gran(s->ext, vext) * GRAN);
	uint32_t len = whole ? (uint32_t)s->ext : GRAN;
	sb_rw16_cdb(c->cdb, 0x88, off / s->block, len / s->block);
	c->cdb_len = 16;
	c->in_len = len;
	c->user = off;
	s->next++;
	return 1;
}

static int sample_done(void *ctx, const struct vcmd *c, const struct simk_result *r, double lat)
{
	struct sample_ctx *s = ctx;
	(void)lat;
	if (r->status || r->data_in_len != c->in_len) {
		if (!s->errors++)
			print_sense("sample read", r);
		return 0;
	}
	for (size_t o = 0; o < c->in_len; o += GRAN) {
		uint64_t off = c->user + o, vext = off / s->ext;
		bool data = s->mapped && (off % s->ext) / GRAN == mapped_gran(s->ext, vext);
		bool ok = data ? !memcmp(r->data_in + o, s->data, GRAN) : all_zero(r->data_in + o, GRAN);
		if (!ok && !s->bad++)
			fprintf(stderr, "vaai-bench vaai: sample read at byte %llu: expected %s\n",
				(unsigned long long)off, data ? "the mapping write's data" : "zeros");
	}
	return 0;
}

struct ws_ctx {
	uint64_t lba, end;
	uint64_t per_cmd; /* blocks */
	const uint8_t *zero_block;
	uint32_t block;
	uint64_t errors;
};

static int ws_next(void *ctx, struct vcmd *c)
{
	struct ws_ctx *w = ctx;
	if (w->lba >= w->end)
		return 0;
	uint64_t n = w->end - w->lba < w->per_cmd ? w->end - w->lba : w->per_cmd;
	/* WRITE SAME (16), SBC-4 5.49: byte 1 WRPROTECT/ANCHOR/UNMAP/NDOB all 0, LBA 2-9,
	 * NUMBER OF LOGICAL BLOCKS 10-13; the data-out is one logical block. */
	sb_rw16_cdb(c->cdb, 0x93, w->lba, (uint32_t)n);
	c->cdb_len = 16;
	c->out = w->zero_block;
	c->out_len = w->block;
	w->lba += n;
	return 1;
}

static int ws_done(void *ctx, const struct vcmd *c, const struct simk_result *r, double lat)
{
	(void)c;
	(void)lat;
	return count_errors(&((struct ws_ctx *)ctx)->errors, "WRITE SAME", r);
}

struct unmap_ctx {
	uint64_t lba, end;
	uint64_t desc_blocks; /* per descriptor */
	uint64_t cmd_blocks;  /* per command, all descriptors together */
	unsigned max_desc;
	uint8_t list[UNMAP_LIST_MAX];
	uint64_t errors, cmds, descs;
};

static int unmap_next(void *ctx, struct vcmd *c)
{
	struct unmap_ctx *u = ctx;
	if (u->lba >= u->end)
		return 0;
	/* SBC-4 5.31.2: 8-byte header, then 16-byte descriptors (LBA, NUMBER OF LOGICAL BLOCKS). */
	unsigned n = 0;
	uint64_t budget = u->cmd_blocks;
	uint8_t *d = u->list + 8;
	while (n < u->max_desc && budget && u->lba < u->end) {
		uint64_t k = u->end - u->lba;
		if (k > u->desc_blocks)
			k = u->desc_blocks;
		if (k > budget)
			k = budget;
		memset(d, 0, 16);
		scsi_put_be64(d, u->lba);
		scsi_put_be32(d + 8, (uint32_t)k);
		d += 16;
		u->lba += k;
		budget -= k;
		n++;
	}
	size_t len = 8 + 16 * (size_t)n;
	memset(u->list, 0, 8);
	scsi_put_be16(u->list, (uint16_t)(len - 2)); /* UNMAP DATA LENGTH */
	scsi_put_be16(u->list + 2, (uint16_t)(16 * n)); /* UNMAP BLOCK DESCRIPTOR DATA LENGTH */
	/* UNMAP (SBC-4 5.31.1): ANCHOR 0, PARAMETER LIST LENGTH bytes 7-8. */
	memset(c->cdb, 0, 10);
	c->cdb[0] = 0x42;
	scsi_put_be16(c->cdb + 7, (uint16_t)len);
	c->cdb_len = 10;
	c->out = u->list;
	c->out_len = len;
	u->cmds++;
	u->descs += n;
	return 1;
}

static int unmap_done(void *ctx, const struct vcmd *c, const struct simk_result *r, double lat)
{
	(void)c;
	(void)lat;
	return count_errors(&((struct unmap_ctx *)ctx)->errors, "UNMAP", r);
}

enum zero_kind { Z_WRITE_SAME, Z_UNMAP };

/* The timed part of a ws/unmap phase: returns 0 and *secs, or -errno (bad results counted in *errors). */
static int zero_timed(struct simhost *h, int lun, const struct vcfg *c, const struct lun_limits *l,
		      enum zero_kind kind, uint64_t *errors, double *secs)
{
	struct flow f = {.lun = lun, .qd = c->qd};
	uint8_t zero_block[MAX_BLOCK] = {0};
	struct ws_ctx w = {.end = l->nblocks, .zero_block = zero_block, .block = l->block};
	struct unmap_ctx *u = NULL;
	if (kind == Z_WRITE_SAME) {
		/* SBC-4 6.6.4: MAXIMUM WRITE SAME LENGTH 0 = no limit reported; the CDB field is 32 bits. */
		w.per_cmd = l->max_ws && l->max_ws < UINT32_MAX ? l->max_ws : UINT32_MAX;
		f.next = ws_next;
		f.done = ws_done;
		f.ctx = &w;
		fprintf(stderr, "# WRITE SAME (16) of %llu blocks (MAXIMUM WRITE SAME LENGTH %llu): %llu commands, %u in flight\n",
			(unsigned long long)w.per_cmd, (unsigned long long)l->max_ws,
			(unsigned long long)((l->nblocks + w.per_cmd - 1) / w.per_cmd), c->qd);
	} else {
		/* SBC-4 6.6.4: MAXIMUM UNMAP LBA COUNT 0 = UNMAP not supported, FFFFFFFFh = no limit;
		 * likewise the descriptor count, bounded here by the 16-bit parameter list length. */
		if (!l->max_unmap_lba || !l->max_unmap_desc) {
			fprintf(stderr, "vaai-bench vaai: the LUN does not advertise UNMAP\n");
			return -EOPNOTSUPP;
		}
		u = calloc(1, sizeof(*u));
		if (!u)
			return -ENOMEM;
		u->end = l->nblocks;
		u->cmd_blocks = l->max_unmap_lba;
		u->max_desc = l->max_unmap_desc < (UNMAP_LIST_MAX - 8) / 16 ? l->max_unmap_desc
									     : (UNMAP_LIST_MAX - 8) / 16;
		u->desc_blocks = c->unmap_desc ? c->unmap_desc / l->block : u->cmd_blocks;
		if (u->desc_blocks > UINT32_MAX)
			u->desc_blocks = UINT32_MAX;
		f.next = unmap_next;
		f.done = unmap_done;
		f.ctx = u;
		fprintf(stderr, "# UNMAP: descriptors of %llu blocks, at most %u per command and %llu blocks "
			"per command (VPD B0: MAXIMUM UNMAP LBA COUNT %u, BLOCK DESCRIPTOR COUNT %u), %u in flight\n",
			(unsigned long long)u->desc_blocks, u->max_desc, (unsigned long long)u->cmd_blocks,
			l->max_unmap_lba, l->max_unmap_desc, c->qd);
	}
	int rc = flow_run(h, &f);
	*secs = f.t_last - f.t_first;
	*errors = kind == Z_WRITE_SAME ? w.errors : u->errors;
	if (u)
		fprintf(stderr, "# UNMAP: %llu commands, %llu descriptors\n", (unsigned long long)u->cmds,
			(unsigned long long)u->descs);
	else
		fprintf(stderr, "# WRITE SAME: %llu commands\n", (unsigned long long)f.completed);
	free(u);
	return rc;
}

static int run_samples(struct simhost *h, int lun, const struct lun_limits *l, uint64_t ext,
		       const uint8_t *data, bool mapped, uint64_t *bad)
{
	uint64_t n_ext = l->nblocks * l->block / ext;
	struct sample_ctx s = {.ext = ext, .n_ext = n_ext, .n_sample = n_ext < 1024 ? n_ext : 1024,
			       .n_whole = n_ext < 16 ? n_ext : 16, .block = l->block, .data = data,
			       .mapped = mapped};
	struct flow f = {.lun = lun, .qd = 16, .next = sample_next, .done = sample_done, .ctx = &s};
	int rc = flow_run(h, &f);
	*bad = s.bad + s.errors;
	return rc;
}

/*
 * One ws or unmap phase on a fresh volume of `size` bytes: map, check, time
 * the zeroing, check. Returns 0 (line printed), 1 (a check failed), -errno.
 */
static int zero_phase(struct simhost *h, const struct vcfg *c, enum zero_kind kind, int lun)
{
	const char *vol = kind == Z_WRITE_SAME ? "ws" : "unmap";
	uint64_t size = kind == Z_WRITE_SAME ? c->ws_size : c->unmap_size;
	uint64_t nominal = kind == Z_WRITE_SAME ? 100 * GIB : 256 * GIB;
	int rc;
	if ((rc = simhost_volume_create(h, vol, size, 512)) < 0 || (rc = simhost_attach(h, vol, lun)) < 0) {
		fprintf(stderr, "vaai-bench vaai: volume %s: %s\n", vol, strerror(-rc));
		return rc;
	}
	struct lun_limits l;
	if ((rc = lun_limits(h, lun, &l)) < 0)
		return rc;
	uint64_t used0, mapped0, used1, mapped1, used2, mapped2, bad, ext;
	if ((rc = pool_space(h, vol, &used0, &mapped0, &ext)) < 0)
		return rc;
	if (!ext || size % ext || l.nblocks * l.block != size) {
		fprintf(stderr, "vaai-bench vaai: the volume size must be a multiple of the extent\n");
		return -EINVAL;
	}

	/* Map: one 4 KiB write into every extent. */
	int failed = 0;
	uint8_t *data = malloc(GRAN);
	if (!data)
		return -ENOMEM;
	for (unsigned i = 0; i < GRAN; i++)
		data[i] = (uint8_t)(i * 7 + 0x5b) | 1;
	struct map_ctx m = {.ext = ext, .n_ext = size / ext, .block = l.block, .data = data};
	if (!c->reserve && (rc = simhost_bench_skip_reserve(h, true)) < 0)
		goto out;
	fprintf(stderr, "# %s: mapping %llu extents (one 4 KiB write each%s)\n", vol,
		(unsigned long long)m.n_ext, c->reserve ? "" : ", backing space not reserved");
	double t = bench_now();
	struct flow f = {.lun = lun, .qd = 32, .next = map_next, .done = map_done, .ctx = &m};
	rc = flow_run(h, &f);
	if (!c->reserve) {
		int rc2 = simhost_bench_skip_reserve(h, false);
		rc = rc < 0 ? rc : rc2;
	}
	if (rc < 0)
		goto out;
	fprintf(stderr, "# %s: mapped in %.1f s (%.0f writes/s)\n", vol, bench_now() - t,
		(double)m.n_ext / (bench_now() - t));
	if ((rc = pool_space(h, vol, &used1, &mapped1, &ext)) < 0 ||
	    (rc = run_samples(h, lun, &l, ext, data, true, &bad)) < 0)
		goto out;
	if (m.errors || mapped1 != size || used1 - used0 != size || bad) {
		fprintf(stderr, "vaai-bench vaai: %s: CHECK FAILED after mapping: %llu write errors, "
			"mapped %llu of %llu bytes, pool used +%lld, %llu bad sample reads\n", vol,
			(unsigned long long)m.errors, (unsigned long long)mapped1,
			(unsigned long long)size, (long long)(used1 - used0), (unsigned long long)bad);
		failed = 1;
		goto out;
	}

	/* Timed: zero the whole volume. */
	sync();
	sleep(2);
	uint64_t errors;
	double secs;
	fprintf(stderr, "# %s: zeroing %llu MiB\n", vol, (unsigned long long)(size / MIB));
	struct vblk_stats d0 = simhost_blk_stats(h);
	if ((rc = zero_timed(h, lun, c, &l, kind, &errors, &secs)) < 0)
		goto out;
	struct vblk_stats d1 = simhost_blk_stats(h);
	fprintf(stderr, "# %s: %.3f s; the pool file meanwhile: %llu writes (%.1f MiB: journal, checkpoints), %llu reads\n",
		vol, secs, (unsigned long long)(d1.write_ops - d0.write_ops),
		(double)(d1.bytes_written - d0.bytes_written) / MIB,
		(unsigned long long)(d1.read_ops - d0.read_ops));
	if ((rc = pool_space(h, vol, &used2, &mapped2, &ext)) < 0 ||
	    (rc = run_samples(h, lun, &l, ext, data, false, &bad)) < 0)
		goto out;
	/* Deallocated blocks read as zeros (LBPRZ=1, SBC-4 4.7.3.5); their extents are free. */
	if (errors || mapped2 != 0 || used1 - used2 != mapped1 || bad) {
		fprintf(stderr, "vaai-bench vaai: %s: CHECK FAILED after zeroing: %llu command errors, "
			"still mapped %llu bytes, pool used dropped by %lld of %llu bytes, %llu bad sample reads\n",
			vol, (unsigned long long)errors, (unsigned long long)mapped2,
			(long long)(used1 - used2), (unsigned long long)mapped1, (unsigned long long)bad);
		failed = 1;
		goto out;
	}
	fprintf(stderr, "# %s: checked: all commands GOOD, nothing mapped, pool used -%llu MiB, samples read zeros\n",
		vol, (unsigned long long)((used1 - used2) >> 20));
	printf("%s=%.3f", kind == Z_WRITE_SAME ? "write_same_zero_100g_s" : "unmap_256g_s", secs);
	if (size != nominal)
		printf(" mapped_gib=%.3g", (double)size / (double)GIB);
	printf("\n");
	fflush(stdout);
	rc = 0;
out:
	free(data);
	return rc < 0 ? rc : failed;
}

/* ---------------------------------------------------------------- COMPARE AND WRITE */

/* The content of a block at a version: LBA and version (little endian), then a pattern. */
static void caw_content(uint8_t *b, uint32_t bs, uint64_t lba, uint64_t ver)
{
	vput_le64(b, lba);
	vput_le64(b + 8, ver);
	for (uint32_t i = 16; i < bs; i++)
		b[i] = (uint8_t)(lba * 131 + i * 7 + 1);
}

struct caw_ctx {
	uint32_t bs;
	uint64_t nblk;
	uint32_t *ver;  /* per block: successful CAWs */
	uint8_t *busy;  /* per block: a CAW in flight */
	uint64_t rs;
	uint64_t ok, errors;
	uint32_t *lat_us;
	size_t nlat, cap;
	double lat_sum; /* seconds, over the successful CAWs of the timed runs */
	uint8_t out[2 * MAX_BLOCK];
	/* the fill */
	uint64_t fill_next;
	uint8_t *fill_buf;
};

static int fill_next(void *ctx, struct vcmd *c)
{
	struct caw_ctx *w = ctx;
	uint64_t per = MIB / w->bs;
	if (w->fill_next >= w->nblk)
		return 0;
	uint64_t n = w->nblk - w->fill_next < per ? w->nblk - w->fill_next : per;
	for (uint64_t i = 0; i < n; i++)
		caw_content(w->fill_buf + i * w->bs, w->bs, w->fill_next + i, 0);
	sb_rw16_cdb(c->cdb, 0x8a, w->fill_next, (uint32_t)n);
	c->cdb_len = 16;
	c->out = w->fill_buf;
	c->out_len = n * w->bs;
	w->fill_next += n;
	return 1;
}

static int fill_done(void *ctx, const struct vcmd *c, const struct simk_result *r, double lat)
{
	(void)c;
	(void)lat;
	return count_errors(&((struct caw_ctx *)ctx)->errors, "filling write", r);
}

static int caw_next(void *ctx, struct vcmd *c)
{
	struct caw_ctx *w = ctx;
	uint64_t lba;
	do
		lba = vrng_next(&w->rs) % w->nblk;
	while (w->busy[lba]);
	w->busy[lba] = 1;
	/* COMPARE AND WRITE (SBC-4 5.3): LBA bytes 2-9, NUMBER OF LOGICAL BLOCKS byte 13; the
	 * Data-Out Buffer is the verify instance, then the write instance. */
	memset(c->cdb, 0, 16);
	c->cdb[0] = 0x89;
	scsi_put_be64(c->cdb + 2, lba);
	c->cdb[13] = 1;
	c->cdb_len = 16;
	caw_content(w->out, w->bs, lba, w->ver[lba]);
	caw_content(w->out + w->bs, w->bs, lba, w->ver[lba] + 1);
	c->out = w->out;
	c->out_len = 2 * (size_t)w->bs;
	c->user = lba;
	return 1;
}

static int caw_done(void *ctx, const struct vcmd *c, const struct simk_result *r, double lat)
{
	struct caw_ctx *w = ctx;
	w->busy[c->user] = 0;
	if (r->status) {
		if (!w->errors++)
			print_sense("COMPARE AND WRITE (a MISCOMPARE here means lost or wrong data)", r);
		return 0;
	}
	w->ver[c->user]++;
	w->ok++;
	if (w->nlat == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 1u << 16;
		uint32_t *n = realloc(w->lat_us, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		w->lat_us = n;
		w->cap = cap;
	}
	w->lat_sum += lat;
	double us = lat * 1e6;
	w->lat_us[w->nlat++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
	return 0;
}

/* Read back a sample (the first 1024 blocks CAW changed from a random start, 1024 random
 * ones) and compare with what the bench knows. */
struct verify_ctx {
	struct caw_ctx *w;
	uint64_t *lbas;
	size_t n, next;
	uint64_t bad;
};

static int verify_next(void *ctx, struct vcmd *c)
{
	struct verify_ctx *v = ctx;
	if (v->next == v->n)
		return 0;
	sb_rw16_cdb(c->cdb, 0x88, v->lbas[v->next], 1);
	c->cdb_len = 16;
	c->in_len = v->w->bs;
	c->user = v->lbas[v->next++];
	return 1;
}

static int verify_done(void *ctx, const struct vcmd *c, const struct simk_result *r, double lat)
{
	struct verify_ctx *v = ctx;
	(void)lat;
	uint8_t want[MAX_BLOCK];
	caw_content(want, v->w->bs, c->user, v->w->ver[c->user]);
	if (r->status || r->data_in_len != v->w->bs || memcmp(r->data_in, want, v->w->bs)) {
		if (!v->bad++)
			fprintf(stderr, "vaai-bench vaai: block %llu does not hold version %u\n",
				(unsigned long long)c->user, v->w->ver[c->user]);
	}
	return 0;
}

static int caw_verify(struct simhost *h, int lun, struct caw_ctx *w, uint64_t *bad)
{
	struct verify_ctx v = {.w = w};
	v.lbas = malloc(2048 * sizeof(*v.lbas));
	if (!v.lbas)
		return -ENOMEM;
	uint64_t start = vrng_next(&w->rs) % w->nblk;
	for (uint64_t i = 0; i < w->nblk && v.n < 1024; i++)
		if (w->ver[(start + i) % w->nblk])
			v.lbas[v.n++] = (start + i) % w->nblk;
	while (v.n < 2048)
		v.lbas[v.n++] = vrng_next(&w->rs) % w->nblk;
	struct flow f = {.lun = lun, .qd = 32, .next = verify_next, .done = verify_done, .ctx = &v};
	int rc = flow_run(h, &f);
	free(v.lbas);
	*bad = v.bad;
	return rc;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The distinct-LBA CAW phase against fio; prints caw_distinct_qdN and caw_p99_us. */
static int caw_phase(struct simhost *h, const struct vcfg *c, int lun, const char *ffile)
{
	int rc;
	if ((rc = simhost_volume_create(h, "caw", c->caw_size, c->caw_block)) < 0 ||
	    (rc = simhost_attach(h, "caw", lun)) < 0) {
		fprintf(stderr, "vaai-bench vaai: volume caw: %s\n", strerror(-rc));
		return rc;
	}
	struct lun_limits l;
	if ((rc = lun_limits(h, lun, &l)) < 0)
		return rc;
	if (l.max_caw < 1) {
		fprintf(stderr, "vaai-bench vaai: MAXIMUM COMPARE AND WRITE LENGTH is 0\n");
		return -EOPNOTSUPP;
	}
	struct caw_ctx *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	int failed = 0;
	w->bs = l.block;
	w->nblk = l.nblocks;
	w->rs = 0x2545F4914F6CDD1Dull;
	w->ver = calloc(w->nblk, sizeof(*w->ver));
	w->busy = calloc(w->nblk, 1);
	w->fill_buf = malloc(MIB);
	if (!w->ver || !w->busy || !w->fill_buf) {
		rc = -ENOMEM;
		goto out;
	}
	fprintf(stderr, "# caw: filling volume 'caw' (%llu MiB, %u-byte blocks) and %s\n",
		(unsigned long long)(c->caw_size >> 20), w->bs, ffile);
	struct flow f = {.lun = lun, .qd = 8, .next = fill_next, .done = fill_done, .ctx = w};
	if ((rc = flow_run(h, &f)) < 0)
		goto out;
	if (w->errors) {
		failed = 1;
		goto out;
	}
	if ((rc = bench_make_file(ffile, c->caw_size, true)) < 0) {
		fprintf(stderr, "vaai-bench vaai: %s: %s\n", ffile, strerror(-rc));
		goto out;
	}
	/* engine, fio, fio, engine; each half of --runtime (see engine.c). */
	double half = c->runtime / 2, eng_secs = 0, fio_iops[2] = {0, 0}, fio_lat[2] = {0, 0};
	uint64_t eng_done = 0;
	for (int step = 0; step < 4; step++) {
		sync();
		sleep(2);
		if (step == 1 || step == 2) {
			if ((rc = run_fio(c, ffile, half, &fio_iops[step - 1], &fio_lat[step - 1])) < 0)
				goto out;
			fprintf(stderr, "# fio: %.0f IOPS, mean latency %.0f us\n", fio_iops[step - 1],
				fio_lat[step - 1]);
			continue;
		}
		fprintf(stderr, "# engine: COMPARE AND WRITE of 1 block on distinct LBAs, %u in flight, %.0f s\n",
			c->qd, half);
		struct vblk_stats st0 = simhost_blk_stats(h);
		struct flow g = {.lun = lun, .qd = c->qd, .deadline = bench_now() + half,
				 .next = caw_next, .done = caw_done, .ctx = w};
		if ((rc = flow_run(h, &g)) < 0)
			goto out;
		double s = g.t_last - g.t_first;
		struct vblk_stats st1 = simhost_blk_stats(h);
		uint64_t nfs = st1.dsync_flushes - st0.dsync_flushes;
		fprintf(stderr, "# engine: %llu CAWs in %.2f s (%.0f/s); %llu writes, %llu group fsyncs",
			(unsigned long long)g.completed, s, s > 0 ? (double)g.completed / s : 0,
			(unsigned long long)(st1.write_ops - st0.write_ops), (unsigned long long)nfs);
		if (nfs)
			fprintf(stderr, " (%.1f writes each, mean %.0f us)",
				(double)(st1.grouped_writes - st0.grouped_writes) / (double)nfs,
				(double)(st1.dsync_flush_ns - st0.dsync_flush_ns) / 1e3 / (double)nfs);
		uint64_t nr = st1.read_ops - st0.read_ops, nw = st1.write_ops - st0.write_ops;
		fprintf(stderr, "; pool file reads mean %.0f us, writes mean %.0f us (until written)\n",
			nr ? (double)(st1.read_ns - st0.read_ns) / 1e3 / (double)nr : 0,
			nw ? (double)(st1.write_ns - st0.write_ns) / 1e3 / (double)nw : 0);
		eng_done += g.completed;
		eng_secs += s;
	}
	uint64_t sum = 0, bad = 0;
	for (uint64_t i = 0; i < w->nblk; i++)
		sum += w->ver[i];
	if ((rc = caw_verify(h, lun, w, &bad)) < 0)
		goto out;
	if (w->errors || sum != w->ok || bad || !w->ok) {
		fprintf(stderr, "vaai-bench vaai: caw: CHECK FAILED: %llu failed CAWs, %llu successes vs %llu "
			"versions, %llu blocks read back wrong\n", (unsigned long long)w->errors,
			(unsigned long long)w->ok, (unsigned long long)sum, (unsigned long long)bad);
		failed = 1;
		goto out;
	}
	fprintf(stderr, "# caw: checked: every CAW GOOD, %llu blocks changed, 2048 read back exactly\n",
		(unsigned long long)sum);
	/* Both sides keep --qd in flight, so by Little's law the ratio is about the
	 * inverse ratio of these means (docs/performance.md, "Session 14"). */
	fprintf(stderr, "# caw: mean latency: CAW %.0f us, fio DSYNC write %.0f us\n",
		w->ok ? w->lat_sum * 1e6 / (double)w->ok : 0, (fio_lat[0] + fio_lat[1]) / 2);
	double ops = eng_secs > 0 ? (double)eng_done / eng_secs : 0, fio = (fio_iops[0] + fio_iops[1]) / 2;
	qsort(w->lat_us, w->nlat, sizeof(*w->lat_us), cmp_u32);
	size_t k = (w->nlat * 99 + 99) / 100; /* the 99th percentile: ceil(0.99 n)-th smallest */
	printf("caw_distinct_qd%u caw_ops=%.0f fio_dsync_write_iops=%.0f ratio=%.2f\n", c->qd, ops, fio,
	       fio > 0 ? ops / fio : 0);
	printf("caw_p99_us=%u\n", w->lat_us[k ? k - 1 : 0]);
	fflush(stdout);
	rc = 0;
out:
	free(w->ver);
	free(w->busy);
	free(w->fill_buf);
	free(w->lat_us);
	free(w);
	return rc < 0 ? rc : failed;
}

/* 8 incrementers on one block: READ -> CAW(n -> n+1), again after success, READ after a MISCOMPARE. */
struct contend_ctx {
	uint32_t bs;
	uint64_t lba;
	uint64_t seen[N_WAYS];
	bool need_read[N_WAYS];
	unsigned ready[N_WAYS], nready;
	uint64_t ok, miscompares, reads, errors;
	uint8_t out[2 * MAX_BLOCK];
};

static void counter_block(uint8_t *b, uint32_t bs, uint64_t v)
{
	vput_le64(b, v);
	for (uint32_t i = 8; i < bs; i++)
		b[i] = (uint8_t)(i * 3 + 0x11);
}

static int contend_next(void *ctx, struct vcmd *c)
{
	struct contend_ctx *x = ctx;
	if (!x->nready)
		return 0;
	unsigned i = x->ready[--x->nready];
	c->user = i;
	c->cdb_len = 16;
	if (x->need_read[i]) {
		sb_rw16_cdb(c->cdb, 0x88, x->lba, 1);
		c->in_len = x->bs;
		c->user |= 1u << 8;
		return 1;
	}
	memset(c->cdb, 0, 16);
	c->cdb[0] = 0x89; /* COMPARE AND WRITE, SBC-4 5.3 */
	scsi_put_be64(c->cdb + 2, x->lba);
	c->cdb[13] = 1;
	counter_block(x->out, x->bs, x->seen[i]);
	counter_block(x->out + x->bs, x->bs, x->seen[i] + 1);
	c->out = x->out;
	c->out_len = 2 * (size_t)x->bs;
	return 1;
}

static int contend_done(void *ctx, const struct vcmd *c, const struct simk_result *r, double lat)
{
	struct contend_ctx *x = ctx;
	(void)lat;
	unsigned i = (unsigned)(c->user & 0xff);
	uint8_t want[MAX_BLOCK];
	if (c->user >> 8) { /* a READ */
		x->reads++;
		counter_block(want, x->bs, r->data_in_len >= 8 ? vget_le64(r->data_in) : 0);
		if (r->status || r->data_in_len != x->bs || memcmp(r->data_in, want, x->bs)) {
			if (!x->errors++)
				print_sense("contended READ (or its data is not a counter block)", r);
			return 0; /* this incrementer stops */
		}
		x->seen[i] = vget_le64(r->data_in);
		x->need_read[i] = false;
	} else if (!r->status) {
		x->ok++;
		x->seen[i]++;
	} else if (r->status == 2 && (r->sense[2] & 0xf) == 0x0E && r->sense[12] == 0x1D &&
		   r->sense[13] == 0 && (r->sense[0] & 0x80) && scsi_get_be32(r->sense + 3) < 8) {
		/* MISCOMPARE DURING VERIFY OPERATION, VALID=1, INFORMATION = offset of the
		 * first differing byte (SBC-4 5.3): inside the 8-byte counter. */
		x->miscompares++;
		x->need_read[i] = true;
	} else {
		if (!x->errors++)
			print_sense("contended COMPARE AND WRITE", r);
		return 0;
	}
	x->ready[x->nready++] = i;
	return 0;
}

static int contend_phase(struct simhost *h, const struct vcfg *c, int lun)
{
	int rc;
	if ((rc = simhost_volume_create(h, "contend", MIB, c->caw_block)) < 0 ||
	    (rc = simhost_attach(h, "contend", lun)) < 0) {
		fprintf(stderr, "vaai-bench vaai: volume contend: %s\n", strerror(-rc));
		return rc;
	}
	struct lun_limits l;
	if ((rc = lun_limits(h, lun, &l)) < 0)
		return rc;
	struct contend_ctx *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->bs = l.block;
	x->lba = 0;
	/* The block is written first (counter 0), so the CAWs overwrite allocated space. */
	counter_block(x->out, x->bs, 0);
	uint8_t wcdb[16];
	sb_rw16_cdb(wcdb, 0x8a, x->lba, 1);
	int failed = 0;
	if ((rc = simhost_submit(h, lun, wcdb, 16, x->out, x->bs, 0, NULL)) < 0)
		goto out;
	struct simhost_result r;
	int n = 0;
	for (int tries = 0; n == 0 && tries < 60; tries++)
		n = simhost_reap(h, &r, 1, 1000);
	if (n <= 0) {
		rc = n < 0 ? n : -ETIMEDOUT;
		goto out;
	}
	failed = r.r.status != 0;
	if (failed)
		print_sense("writing the contended block", &r.r);
	simhost_result_free(&r);
	if (failed)
		goto out;
	for (unsigned i = 0; i < N_WAYS; i++) {
		x->need_read[i] = true;
		x->ready[x->nready++] = i;
	}
	sync();
	sleep(2);
	fprintf(stderr, "# contend: %u incrementers on one block, %.0f s\n", N_WAYS, c->runtime);
	struct flow f = {.lun = lun, .qd = N_WAYS, .deadline = bench_now() + c->runtime,
			 .next = contend_next, .done = contend_done, .ctx = x};
	if ((rc = flow_run(h, &f)) < 0)
		goto out;
	double secs = f.t_last - f.t_first;
	/* The final counter must be exactly the number of successful CAWs. */
	const uint8_t rcdb[16] = {0x88, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0};
	uint8_t b[MAX_BLOCK];
	if ((rc = cmd_sync(h, lun, rcdb, 16, b, x->bs)) != 0) {
		failed = rc > 0;
		goto out;
	}
	uint64_t final = vget_le64(b);
	fprintf(stderr, "# contend: %llu successful CAWs, %llu miscompares, %llu reads in %.2f s; counter %llu\n",
		(unsigned long long)x->ok, (unsigned long long)x->miscompares,
		(unsigned long long)x->reads, secs, (unsigned long long)final);
	if (x->errors || final != x->ok || !x->ok) {
		fprintf(stderr, "vaai-bench vaai: contend: CHECK FAILED: %llu errors, counter %llu != %llu successes\n",
			(unsigned long long)x->errors, (unsigned long long)final, (unsigned long long)x->ok);
		failed = 1;
		goto out;
	}
	printf("caw_contended_%uway_ops_s=%.0f\n", N_WAYS, secs > 0 ? (double)x->ok / secs : 0);
	fflush(stdout);
	rc = 0;
out:
	free(x);
	return rc < 0 ? rc : failed;
}

/* ---------------------------------------------------------------- options, main */

static bool wants(const struct vcfg *c, const char *phase)
{
	if (!c->only)
		return true;
	size_t n = strlen(phase);
	for (const char *p = c->only; *p;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == n && !strncmp(p, phase, n))
			return true;
		p += k + (e ? 1 : 0);
	}
	return false;
}

static int size_arg(const char *opt, const char *v, uint64_t min, uint64_t *out)
{
	if (bench_parse_size(v, out) < 0 || *out < min || *out % MIB) {
		fprintf(stderr, "vaai-bench vaai: %s must be a multiple of 1M, >= %lluM\n", opt,
			(unsigned long long)(min >> 20));
		return -EINVAL;
	}
	return 0;
}

static int parse_args(struct vcfg *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--keep")) {
			c->keep = true;
			continue;
		}
		if (!strcmp(a, "--reserve")) {
			c->reserve = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "vaai-bench vaai: %s needs a value\n", a);
			return -EINVAL;
		}
		i++;
		int rc = 0;
		if (!strcmp(a, "--dir")) {
			c->dir = v;
		} else if (!strcmp(a, "--ws-size")) {
			rc = size_arg(a, v, MIB, &c->ws_size);
		} else if (!strcmp(a, "--unmap-size")) {
			rc = size_arg(a, v, MIB, &c->unmap_size);
		} else if (!strcmp(a, "--caw-size")) {
			rc = size_arg(a, v, 16 * MIB, &c->caw_size);
		} else if (!strcmp(a, "--unmap-desc")) {
			if (bench_parse_size(v, &c->unmap_desc) < 0 || !c->unmap_desc || c->unmap_desc % GRAN) {
				fprintf(stderr, "vaai-bench vaai: --unmap-desc must be a multiple of 4K\n");
				rc = -EINVAL;
			}
		} else if (!strcmp(a, "--caw-block")) {
			c->caw_block = (uint32_t)atoi(v);
			if (c->caw_block != 512 && c->caw_block != 4096) {
				fprintf(stderr, "vaai-bench vaai: --caw-block must be 512 or 4096\n");
				rc = -EINVAL;
			}
		} else if (!strcmp(a, "--runtime")) {
			c->runtime = atof(v);
			if (c->runtime < 1) {
				fprintf(stderr, "vaai-bench vaai: --runtime must be >= 1 s\n");
				rc = -EINVAL;
			}
		} else if (!strcmp(a, "--qd")) {
			c->qd = (unsigned)atoi(v);
			if (c->qd < 1 || c->qd > 256) {
				fprintf(stderr, "vaai-bench vaai: --qd must be 1..256\n");
				rc = -EINVAL;
			}
		} else if (!strcmp(a, "--group-flush")) {
			c->group_flush = atoi(v);
			if (c->group_flush < 0 || c->group_flush > (int)VBLK_GROUP_FLUSH_MAX) {
				fprintf(stderr, "vaai-bench vaai: --group-flush must be 0..%u\n", VBLK_GROUP_FLUSH_MAX);
				rc = -EINVAL;
			}
		} else if (!strcmp(a, "--only")) {
			c->only = v;
		} else if (!strcmp(a, "--fio")) {
			c->fio = v;
		} else {
			fprintf(stderr, "vaai-bench vaai: unknown option %s\n", a);
			rc = -EINVAL;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

int bench_vaai_main(int argc, char **argv)
{
	struct vcfg c = {.dir = "build/bench-tmp", .ws_size = 100 * GIB, .unmap_size = 256 * GIB,
			 .caw_size = GIB, .caw_block = 512, .runtime = 20, .qd = 32,
			 .fio = "/usr/bin/fio", .group_flush = -1};
	if (parse_args(&c, argc, argv) < 0)
		return 2;
	bool ws = wants(&c, "ws"), unmap = wants(&c, "unmap"), caw = wants(&c, "caw"),
	     contend = wants(&c, "contend");
	if (caw && access(c.fio, X_OK) < 0) {
		fprintf(stderr, "vaai-bench vaai: fio not found at %s (--fio PATH)\n", c.fio);
		return 2;
	}
	mkdir(c.dir, 0755);
	char pool[4096], ffile[4096];
	snprintf(pool, sizeof(pool), "%s/vaai.pool", c.dir);
	snprintf(ffile, sizeof(ffile), "%s/fio.file", c.dir);
	simhost_remove_pool(pool);
	unlink(ffile);
	/*
	 * One pool for every phase: the ws volume's extents are free again before the unmap
	 * volume maps its own, so the data area needs the larger of the two, the caw volume
	 * and room for the small ones; 1 GiB covers those and the metadata (checkpoint areas
	 * for this size only: max_size = size, the pool never grows here).
	 */
	uint64_t zmax = (ws ? c.ws_size : 0) > (unmap ? c.unmap_size : 0) ? (ws ? c.ws_size : 0)
									: (unmap ? c.unmap_size : 0);
	uint64_t psize = zmax + (caw ? c.caw_size : 0) + GIB;
	/* Disk: the zeroed volumes' mapping writes (4 KiB an extent, or the whole extent with
	 * --reserve), the caw volume and the fio file, the metadata. */
	uint64_t zsum = (ws ? c.ws_size : 0) + (unmap ? c.unmap_size : 0);
	uint64_t need = (c.reserve ? zsum : zsum / MIB * GRAN) + (caw ? 2 * c.caw_size : 0) + GIB;
	struct statvfs vfs;
	if (statvfs(c.dir, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < need) {
		fprintf(stderr, "vaai-bench vaai: %s has %llu MiB free, this run needs about %llu MiB\n", c.dir,
			(unsigned long long)((uint64_t)vfs.f_bavail * vfs.f_frsize >> 20),
			(unsigned long long)(need >> 20));
		return 1;
	}
	struct vpool_params prm = {.max_size = psize};
	struct simhost *h;
	char err[512] = "";
	int rc = simhost_create_pool(pool, psize, &prm, SIMHOST_IO_URING, 1, &h, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "vaai-bench vaai: %s\n", err);
		return 1;
	}
	fprintf(stderr, "# pool %s: %llu GiB (sparse)\n", pool, (unsigned long long)(psize / GIB));
	if (c.group_flush >= 0 && (rc = simhost_group_flush(h, (unsigned)c.group_flush)) < 0) {
		fprintf(stderr, "vaai-bench vaai: --group-flush: %s\n", strerror(-rc));
		simhost_close(h);
		return 1;
	}
	int status = 0, lun = 0;
	if (caw && (rc = caw_phase(h, &c, lun++, ffile)) != 0)
		status = 1;
	if (rc >= 0 && contend && (rc = contend_phase(h, &c, lun++)) != 0)
		status = 1;
	if (rc >= 0 && ws && (rc = zero_phase(h, &c, Z_WRITE_SAME, lun++)) != 0)
		status = 1;
	if (rc >= 0 && unmap && (rc = zero_phase(h, &c, Z_UNMAP, lun++)) != 0)
		status = 1;
	if (rc < 0)
		fprintf(stderr, "vaai-bench vaai: %s\n", strerror(-rc));
	rc = simhost_close(h);
	if (rc < 0) {
		fprintf(stderr, "vaai-bench vaai: closing the pool: %s\n", strerror(-rc));
		status = 1;
	}
	if (!c.keep) {
		simhost_remove_pool(pool);
		unlink(ffile);
		rmdir(c.dir); /* only if empty */
	}
	if (status)
		fprintf(stderr, "vaai-bench vaai: FAILED (see above)\n");
	return status;
}
