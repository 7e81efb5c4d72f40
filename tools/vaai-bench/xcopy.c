/*
 * vaai-bench xcopy: EXTENDED COPY through the whole engine, against a host
 * copy (READ + WRITE) of the same ranges in the same run; the latency of one
 * 240 MiB command; the first write into a cloned extent (issue 4 item 6,
 * docs/performance.md "XCOPY (engine)").
 *
 * How this works: one pool file (io_uring, O_DIRECT, 1 MiB extents) holds
 * five volumes, each attached as a LUN of simhost (the real ring, dispatch,
 * handlers and pool on simhost's engine thread; this thread plays the
 * kernel): "src" (LUN 0: --size, at least 240 MiB, written completely first
 * with 1 MiB writes whose every 512-byte sector carries its own LBA), "xdst"
 * (LUN 1, destination of the EXTENDED COPY), "hdst" (LUN 2, destination of
 * the host copy), "lat" (LUN 3, 240 MiB) and "fresh" (LUN 4, never written
 * before the first-write test). Everything the copies need is
 * asked of the target the way an initiator does: the block size from READ
 * CAPACITY (16), the NAA designators from VPD 83h, the copy limits from
 * RECEIVE COPY RESULTS OPERATING PARAMETERS (cross-checked with VPD 8Fh), the
 * transfer size from VPD B0h.
 *
 *  1. xcopy_8g_16m_segments: per repetition, both destinations are
 *     deallocated (pool API, untimed), then [0, size) of src is copied to xdst
 *     with EXTENDED COPY(LID1) commands sent to xdst (LIST ID USAGE 11b, CSCDs
 *     E4h with the NAAs, 02h segments of 16 MiB, as many per command as the
 *     limits allow; up to --qd commands in flight), then to hdst by a host
 *     copy: READ(16) from src, WRITE(16) of what was read to hdst, chunks of
 *     min(1 MiB, MAXIMUM TRANSFER LENGTH), --qd chunks in flight. speedup =
 *     median host time / median xcopy time. bytes_moved = data bytes the I/O
 *     layer read + wrote during the xcopy: the vblk byte counters minus the
 *     writes flagged VBLK_META (journal, checkpoint, superblock). One more
 *     xcopy with one command at a time is reported on stderr. Then xdst and
 *     hdst are compared with src (and src with its pattern): in full up to
 *     1 GiB, else 1 MiB at a pseudo-random place of every 16 MiB segment plus
 *     the first and last MiB (--verify full|sample overrides).
 *  2. xcopy_240m_command_latency_us: one EXTENDED COPY of 8 segments of
 *     30 MiB from src to lat, alone in flight, submit to completion; lat is
 *     deallocated (untimed) before each of --lat-reps repetitions; median.
 *  3. first_write_into_clone: 4 KiB WRITE(16)s at queue depth 1 of three
 *     kinds: into a distinct, still shared extent of xdst (a random granule
 *     of it: redirect-on-write), overwriting a random 4 KiB block of hdst
 *     (private, allocated, fully written), and, as a reference printed on
 *     stderr, into a distinct unmapped extent of "fresh" (an allocating
 *     write); in blocks of 10 counted writes of one kind after one uncounted
 *     (the kinds' order rotating; see bench_first_write for why); ratio of
 *     the medians of the first two. The first few cloned extents are read
 *     back whole and checked.
 * The pool's journal is in a file of its own (pool.journal), as the daemon
 * makes it for a pool in a regular file; --journal store keeps it in the pool
 * file (the line's journal= says which).
 * --rbd CEPHPOOL (issue 26): the pool is the RBD image CEPHPOOL/vaai-bench-xcopy
 * of CEPH_CONF's cluster (journal inside; librbd's cache off: vblk_rbd), and
 * step 1 also prints
 *   rbd_xcopy_1g xcopy_s=S readwrite_s=S ratio=R size_mib=N bytes_moved=B
 * (the same medians as xcopy_8g_16m_segments: EXTENDED COPY, extents shared,
 * vs READ + WRITE of the same ranges through the engine; ratio = readwrite_s /
 * xcopy_s; the name says 1g whatever --size is: size_mib says the range).
 * Finally the pool's invariant checks run on the live pool (vpool_verify).
 * Any mismatch or failed check exits 1; --inject-mismatch (for the smoke
 * test) overwrites 4 KiB of xdst before the verification, which must fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "scsi_build.h"
#include "simhost.h"
#include "vaaid/scsi.h"

#define MIB (1u << 20)
#define SEG_BYTES (16u * MIB)    /* segments of the 8 GiB copy */
#define LAT_SEG_BYTES (30u * MIB) /* segments of the 240 MiB command */
#define LAT_NSEG 8u
#define LAT_BYTES ((uint64_t)LAT_NSEG * LAT_SEG_BYTES)
#define EXTENT MIB                /* the pool's extent size (set at creation) */
#define SMALL_IO 4096u
#define SEED 0x5EEDC0DEull
#define XC_HDR SB_XCOPY_HDR       /* SPC-4 6.4.3: parameter list header */
#define XC_CSCD SB_XCOPY_CSCD_LEN /* SPC-4 6.4.5.5: identification CSCD descriptor */
#define XC_SEG SB_XCOPY_SEG_LEN   /* SPC-4 6.4.6.5: block -> block segment descriptor */
#define TIMEOUT_S 120.0

enum { LUN_SRC, LUN_XDST, LUN_HDST, LUN_LAT, LUN_FRESH, NLUN };
static const char *const vol_name[NLUN] = {"src", "xdst", "hdst", "lat", "fresh"};

enum verify_mode { VERIFY_AUTO, VERIFY_FULL, VERIFY_SAMPLE };

struct xcfg {
	const char *dir;
	uint64_t size;     /* the copied range */
	unsigned reps;     /* 8 GiB xcopy + host copy repetitions */
	unsigned lat_reps; /* 240 MiB command repetitions */
	unsigned samples;  /* first-write pairs */
	unsigned qd;
	unsigned settle;   /* seconds of pause before each timed step */
	enum verify_mode verify;
	bool inject_mismatch;
	bool keep;
	bool thick; /* --backing thick: the pool file's data area written once before the run */
	bool journal_in_store; /* --journal store: the one-file layout (default: a journal file) */
	const char *rbd; /* --rbd CEPHPOOL: the pool on an RBD image (journal inside) */
};

/* What the target reported (RECEIVE COPY RESULTS OPERATING PARAMETERS, VPD 8Fh/B0h). */
struct limits {
	uint32_t max_cscd, max_seg, max_list, max_seg_bytes, max_inline;
	uint32_t max_xfer_blocks; /* VPD B0h; 0: not reported */
};

struct xb {
	const struct xcfg *c;
	struct simhost *h;
	uint32_t bs;           /* logical block size */
	uint8_t naa[NLUN][16]; /* VPD 83h NAA designators */
	struct limits lim;
	unsigned segs_per_cmd; /* 16 MiB segments per EXTENDED COPY */
	uint32_t chunk;        /* fill / host copy / verification transfer size */
	uint64_t fill;         /* bytes of src written */
};

/* ---------------------------------------------------------------- helpers */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of v[0..n) (sorts v). */
static double median(double *v, unsigned n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Content of the source from byte offset off (a multiple of 512): every
 * 512-byte sector starts with its LBA (in 512-byte units) and the seed, the
 * rest are words derived from both, so that a misplaced, stale or missing
 * sector never compares equal.
 */
static void pattern(uint8_t *buf, uint64_t off, size_t len, uint64_t seed)
{
	uint64_t w[64];
	for (size_t s = 0; s < len; s += 512) {
		uint64_t lba = (off + s) / 512, k = lba * 0x9E3779B97F4A7C15ull ^ seed;
		w[0] = lba;
		w[1] = seed;
		for (unsigned i = 2; i < 64; i++)
			w[i] = k + i * 0xD1B54A32D192ED03ull;
		memcpy(buf + s, w, sizeof(w));
	}
}

static void print_sense(const char *what, const struct simhost_result *r)
{
	const uint8_t *s = r->r.sense;
	fprintf(stderr, "vaai-bench xcopy: %s: status 0x%02x, sense key 0x%x asc/ascq %02x/%02x\n", what,
		r->r.status, s[2] & 0xf, s[12], s[13]);
}

/*
 * One command alone in flight: 0 when GOOD (up to in_len bytes of data-in
 * copied to in), -EIO on CHECK CONDITION (printed under what), -ETIMEDOUT,
 * -EPROTO for an unexpected completion. *us (if not NULL): submit to reap.
 */
static int cmd_sync(struct xb *x, int lun, const uint8_t *cdb, size_t cdb_len, const void *out,
		    size_t out_len, void *in, size_t in_len, double *us, const char *what)
{
	uint64_t tag;
	double t0 = bench_now();
	int rc = simhost_submit(x->h, lun, cdb, cdb_len, out, out_len, in_len, &tag);
	if (rc < 0)
		return rc;
	struct simhost_result r;
	for (;;) {
		int n = simhost_reap(x->h, &r, 1, 1000);
		if (n < 0)
			return n;
		if (n == 1)
			break;
		if (bench_now() - t0 > TIMEOUT_S) {
			fprintf(stderr, "vaai-bench xcopy: %s: no completion within %.0f s\n", what, TIMEOUT_S);
			return -ETIMEDOUT;
		}
	}
	if (us)
		*us = (bench_now() - t0) * 1e6;
	rc = 0;
	if (r.tag != tag || r.lun != lun) {
		fprintf(stderr, "vaai-bench xcopy: %s: unexpected completion\n", what);
		rc = -EPROTO;
	} else if (r.r.status != 0) {
		print_sense(what, &r);
		rc = -EIO;
	} else if (in && in_len) {
		size_t n = r.r.data_in_len < in_len ? r.r.data_in_len : in_len;
		memset(in, 0, in_len);
		if (r.r.data_in)
			memcpy(in, r.r.data_in, n);
	}
	simhost_result_free(&r);
	return rc;
}

static int read_sync(struct xb *x, int lun, uint64_t off, uint32_t len, uint8_t *buf)
{
	uint8_t cdb[16];
	sb_rw16_cdb(cdb, 0x88, off / x->bs, len / x->bs);
	return cmd_sync(x, lun, cdb, 16, NULL, 0, buf, len, NULL, "READ(16)");
}

/* INQUIRY (SPC-4 6.6) of VPD page `page` into buf (len bytes). */
static int inquiry_vpd(struct xb *x, int lun, uint8_t page, uint8_t *buf, uint16_t len)
{
	uint8_t cdb[6];
	sb_inquiry_vpd_cdb(cdb, page, len);
	char what[32];
	snprintf(what, sizeof(what), "INQUIRY VPD %02Xh", page);
	return cmd_sync(x, lun, cdb, 6, NULL, 0, buf, len, NULL, what);
}

/* ---------------------------------------------------------- what the target says */

/* The LU's NAA designator from VPD 83h (SPC-4 7.8.6): CODE SET 1 (binary),
 * ASSOCIATION 00b (the LU), DESIGNATOR TYPE 3 (NAA), 16 bytes (NAA 6). */
static int get_naa(struct xb *x, int lun, uint8_t naa[16])
{
	uint8_t b[512];
	int rc = inquiry_vpd(x, lun, 0x83, b, sizeof(b));
	if (rc < 0)
		return rc;
	if (sb_vpd83_naa(b, sizeof(b), naa) == 0)
		return 0;
	fprintf(stderr, "vaai-bench xcopy: LUN %d: no 16-byte NAA designator in VPD 83h\n", lun);
	return -ENODEV;
}

/* READ CAPACITY (16) (SBC-4 5.23): LOGICAL BLOCK LENGTH at bytes 8-11. */
static int get_block_size(struct xb *x, int lun, uint32_t *bs)
{
	uint8_t cdb[16] = {0x9e, 0x10}, b[32];
	scsi_put_be32(cdb + 10, sizeof(b));
	int rc = cmd_sync(x, lun, cdb, 16, NULL, 0, b, sizeof(b), NULL, "READ CAPACITY(16)");
	if (rc == 0)
		*bs = scsi_get_be32(b + 8);
	return rc;
}

/*
 * Copy limits from RECEIVE COPY RESULTS OPERATING PARAMETERS (SPC-4 6.18.4:
 * bytes 8-9 MAXIMUM CSCD DESCRIPTOR COUNT, 10-11 MAXIMUM SEGMENT DESCRIPTOR
 * COUNT, 12-15 MAXIMUM DESCRIPTOR LIST LENGTH, 16-19 MAXIMUM SEGMENT LENGTH,
 * 20-23 MAXIMUM INLINE DATA LENGTH), checked against VPD 8Fh (SPC-4 7.8.17:
 * Parameter Data descriptor 0004h, General Copy Operations descriptor 8001h),
 * and MAXIMUM TRANSFER LENGTH from VPD B0h (SBC-4 6.6.4, bytes 8-11).
 */
static int get_limits(struct xb *x, int lun, struct limits *l)
{
	uint8_t cdb[16] = {0x84, 0x03}, b[256];
	scsi_put_be32(cdb + 10, sizeof(b));
	int rc = cmd_sync(x, lun, cdb, 16, NULL, 0, b, sizeof(b), NULL,
			  "RECEIVE COPY RESULTS (OPERATING PARAMETERS)");
	if (rc < 0)
		return rc;
	memset(l, 0, sizeof(*l));
	l->max_cscd = scsi_get_be16(b + 8);
	l->max_seg = scsi_get_be16(b + 10);
	l->max_list = scsi_get_be32(b + 12);
	l->max_seg_bytes = scsi_get_be32(b + 16);
	l->max_inline = scsi_get_be32(b + 20);

	if ((rc = inquiry_vpd(x, lun, 0x8f, b, sizeof(b))) < 0)
		return rc;
	size_t end = 4 + scsi_get_be16(b + 2);
	if (end > sizeof(b))
		end = sizeof(b);
	bool p4 = false, p8001 = false;
	for (size_t d = 4; d + 4 <= end; d += 4 + scsi_get_be16(b + d + 2)) {
		uint32_t type = scsi_get_be16(b + d), dl = 4 + scsi_get_be16(b + d + 2);
		if (d + dl > end)
			break;
		if (type == 0x0004 && dl >= 20) {
			p4 = true;
			if (scsi_get_be16(b + d + 8) != l->max_cscd || scsi_get_be16(b + d + 10) != l->max_seg ||
			    scsi_get_be32(b + d + 12) != l->max_list) {
				fprintf(stderr, "vaai-bench xcopy: VPD 8Fh Parameter Data differs from "
						"RECEIVE COPY RESULTS OPERATING PARAMETERS\n");
				return -EPROTO;
			}
		} else if (type == 0x8001 && dl >= 16) {
			p8001 = true;
			if (scsi_get_be32(b + d + 12) != l->max_seg_bytes) {
				fprintf(stderr, "vaai-bench xcopy: VPD 8Fh MAXIMUM SEGMENT LENGTH %u, "
						"OPERATING PARAMETERS %u\n",
					scsi_get_be32(b + d + 12), l->max_seg_bytes);
				return -EPROTO;
			}
		}
	}
	if (!p4 || !p8001)
		fprintf(stderr, "# note: VPD 8Fh lacks the %s descriptor: not cross-checked\n",
			!p4 ? "Parameter Data (0004h)" : "General Copy Operations (8001h)");

	if ((rc = inquiry_vpd(x, lun, 0xb0, b, 64)) < 0)
		return rc;
	l->max_xfer_blocks = scsi_get_be32(b + 8);
	return 0;
}

/* ---------------------------------------------------------------- pipeline */

/* One command slot of a pipeline (a chain of commands, one at a time). */
struct slot {
	bool busy;   /* an operation uses the slot */
	bool queued; /* its command waits for room in the ring (-EAGAIN) */
	uint64_t tag;
	int lun;
	uint8_t cdb[16];
	const uint8_t *out;
	uint8_t *owned; /* freed once the ring has the data (simhost_submit copies it) */
	size_t out_len, in_len;
	uint64_t off; /* byte offset of the operation */
	uint32_t len;
	int phase;
	uint8_t *buf; /* pipe.buf_len bytes */
};

struct pipe {
	struct xb *x;
	unsigned qd;
	struct slot *s;
	size_t buf_len;
	/* Prepare the next operation's first command in s: 1 prepared, 0 nothing left, <0 error. */
	int (*start)(struct pipe *p, struct slot *s);
	/* s's command completed GOOD (its data-in may be taken from r): 1 s holds its next
	 * command, 0 the operation is done, <0 error. */
	int (*done)(struct pipe *p, struct slot *s, struct simhost_result *r);
	uint64_t next, end; /* cursor over [next, end) */
	uint8_t *const *lists; /* xcopy: the parameter lists */
	const size_t *list_len;
	const char *what;
};

static int slot_submit(struct pipe *p, struct slot *s)
{
	int rc = simhost_submit(p->x->h, s->lun, s->cdb, 16, s->out, s->out_len, s->in_len, &s->tag);
	if (rc == -EAGAIN) {
		s->queued = true;
		return 0;
	}
	s->queued = false;
	free(s->owned);
	s->owned = NULL;
	return rc;
}

static int pipe_init(struct pipe *p, struct xb *x, unsigned qd, size_t buf_len)
{
	memset(p, 0, sizeof(*p));
	p->x = x;
	p->qd = qd;
	p->buf_len = buf_len;
	p->s = calloc(qd, sizeof(*p->s));
	if (!p->s)
		return -ENOMEM;
	for (unsigned i = 0; i < qd && buf_len; i++)
		if (!(p->s[i].buf = malloc(buf_len)))
			return -ENOMEM;
	return 0;
}

static void pipe_free(struct pipe *p)
{
	for (unsigned i = 0; p->s && i < p->qd; i++) {
		free(p->s[i].buf);
		free(p->s[i].owned);
	}
	free(p->s);
	p->s = NULL;
}

/* Keep up to qd operations going until start() has nothing left and all are done. */
static int pipe_run(struct pipe *p)
{
	struct simhost_result res[64];
	bool exhausted = false;
	double last = bench_now();
	for (;;) {
		bool blocked = false;
		unsigned busy = 0;
		for (unsigned i = 0; i < p->qd; i++) {
			struct slot *s = &p->s[i];
			if (s->busy && s->queued) {
				int rc = slot_submit(p, s);
				if (rc < 0)
					return rc;
				blocked |= s->queued;
			}
		}
		for (unsigned i = 0; i < p->qd && !exhausted && !blocked; i++) {
			struct slot *s = &p->s[i];
			if (s->busy)
				continue;
			int rc = p->start(p, s);
			if (rc < 0)
				return rc;
			if (rc == 0) {
				exhausted = true;
				break;
			}
			s->busy = true;
			if ((rc = slot_submit(p, s)) < 0)
				return rc;
			blocked = s->queued;
		}
		for (unsigned i = 0; i < p->qd; i++)
			busy += p->s[i].busy;
		if (!busy)
			return 0;
		int n = simhost_reap(p->x->h, res, 64, 1000);
		if (n < 0)
			return n;
		if (n == 0) {
			if (bench_now() - last > TIMEOUT_S) {
				fprintf(stderr, "vaai-bench xcopy: %s: no completion within %.0f s\n", p->what,
					TIMEOUT_S);
				return -ETIMEDOUT;
			}
			continue;
		}
		last = bench_now();
		int rc = 0;
		for (int k = 0; k < n; k++) {
			struct slot *s = NULL;
			for (unsigned i = 0; i < p->qd && !s; i++)
				if (p->s[i].busy && !p->s[i].queued && p->s[i].tag == res[k].tag &&
				    p->s[i].lun == res[k].lun)
					s = &p->s[i];
			int r = 0;
			if (rc < 0) {
				/* an earlier failure: just release the rest */
			} else if (!s) {
				fprintf(stderr, "vaai-bench xcopy: %s: unexpected completion\n", p->what);
				rc = -EPROTO;
			} else if (res[k].r.status != 0) {
				print_sense(p->what, &res[k]);
				rc = -EIO;
			} else if ((r = p->done(p, s, &res[k])) < 0) {
				rc = r;
			} else if (r == 0) {
				s->busy = false;
			} else if ((r = slot_submit(p, s)) < 0) {
				rc = r;
			}
			simhost_result_free(&res[k]);
		}
		if (rc < 0)
			return rc;
	}
}

/* ---- fill: WRITE(16) of the pattern over [next, end) of src */

static int fill_start(struct pipe *p, struct slot *s)
{
	if (p->next >= p->end)
		return 0;
	struct xb *x = p->x;
	s->off = p->next;
	s->len = p->end - p->next < x->chunk ? (uint32_t)(p->end - p->next) : x->chunk;
	pattern(s->buf, s->off, s->len, SEED);
	s->lun = LUN_SRC;
	sb_rw16_cdb(s->cdb, 0x8a, s->off / x->bs, s->len / x->bs);
	s->out = s->buf;
	s->out_len = s->len;
	s->in_len = 0;
	p->next += s->len;
	return 1;
}

static int done_once(struct pipe *p, struct slot *s, struct simhost_result *r)
{
	(void)p;
	(void)s;
	(void)r;
	return 0;
}

/* ---- host copy: READ(16) from src, then WRITE(16) of that data to hdst */

static int hcopy_start(struct pipe *p, struct slot *s)
{
	if (p->next >= p->end)
		return 0;
	struct xb *x = p->x;
	s->off = p->next;
	s->len = p->end - p->next < x->chunk ? (uint32_t)(p->end - p->next) : x->chunk;
	s->phase = 0;
	s->lun = LUN_SRC;
	sb_rw16_cdb(s->cdb, 0x88, s->off / x->bs, s->len / x->bs);
	s->out = NULL;
	s->out_len = 0;
	s->in_len = s->len;
	p->next += s->len;
	return 1;
}

static int hcopy_done(struct pipe *p, struct slot *s, struct simhost_result *r)
{
	if (s->phase == 1)
		return 0;
	if (!r->r.data_in || r->r.data_in_len < s->len) {
		fprintf(stderr, "vaai-bench xcopy: host copy: short READ data\n");
		return -EIO;
	}
	s->owned = r->r.data_in; /* the write's data-out, without a copy */
	r->r.data_in = NULL;
	s->phase = 1;
	s->lun = LUN_HDST;
	sb_rw16_cdb(s->cdb, 0x8a, s->off / p->x->bs, s->len / p->x->bs);
	s->out = s->owned;
	s->out_len = s->len;
	s->in_len = 0;
	return 1;
}

/* ---- EXTENDED COPY commands p->lists[next..end) to xdst */

static int xcopy_start(struct pipe *p, struct slot *s)
{
	if (p->next >= p->end)
		return 0;
	s->lun = LUN_XDST;
	s->out = p->lists[p->next];
	s->out_len = p->list_len[p->next];
	s->in_len = 0;
	sb_xcopy_cdb(s->cdb, (uint32_t)s->out_len);
	p->next++;
	return 1;
}

/* ------------------------------------------------------------ EXTENDED COPY */

/*
 * The LID1 parameter list of one copy of nseg segments of seg_bytes each,
 * segment i from src_lun at soff + i * seg_bytes to dst_lun at doff + i *
 * seg_bytes. Returns its length, 0 when it cannot be built (no memory).
 */
static size_t build_list(const struct xb *x, uint8_t *b, int src_lun, int dst_lun, uint64_t soff,
			 uint64_t doff, uint64_t seg_bytes, unsigned nseg)
{
	/* LIST IDENTIFIER 0, LIST ID USAGE 11b (nothing held, as ESXi sends it); CSCD 0 the
	 * source, CSCD 1 the destination (E4h with their NAA and block length); 02h
	 * segments, NUMBER OF BLOCKS in source blocks (DC 0). */
	size_t cap = XC_HDR + 2 * XC_CSCD + (size_t)nseg * XC_SEG;
	struct sb_cscd cscd[2] = {{.block_size = x->bs}, {.block_size = x->bs}};
	memcpy(cscd[0].naa, x->naa[src_lun], 16);
	memcpy(cscd[1].naa, x->naa[dst_lun], 16);
	struct sb_segment *seg = calloc(nseg ? nseg : 1, sizeof(*seg));
	if (!seg)
		return 0;
	for (unsigned k = 0; k < nseg; k++)
		seg[k] = (struct sb_segment){.src = 0, .dst = 1, .nblocks = (uint16_t)(seg_bytes / x->bs),
					     .src_lba = (soff + k * seg_bytes) / x->bs,
					     .dst_lba = (doff + k * seg_bytes) / x->bs};
	size_t len = sb_xcopy_list(b, cap, 0, SB_LIST_ID_NONE, cscd, 2, seg, nseg);
	free(seg);
	return len;
}

struct xc_lists {
	unsigned n;
	uint8_t **list;
	size_t *len;
};

static void lists_free(struct xc_lists *l)
{
	for (unsigned i = 0; l->list && i < l->n; i++)
		free(l->list[i]);
	free(l->list);
	free(l->len);
	memset(l, 0, sizeof(*l));
}

/* The commands of a copy of [0, size) of src to the same offsets of xdst in 16 MiB segments. */
static int lists_build(const struct xb *x, uint64_t size, struct xc_lists *l)
{
	uint64_t nseg = size / SEG_BYTES;
	l->n = (unsigned)((nseg + x->segs_per_cmd - 1) / x->segs_per_cmd);
	l->list = calloc(l->n, sizeof(*l->list));
	l->len = calloc(l->n, sizeof(*l->len));
	if (!l->list || !l->len)
		return -ENOMEM;
	for (unsigned i = 0; i < l->n; i++) {
		uint64_t first = (uint64_t)i * x->segs_per_cmd;
		unsigned k = nseg - first < x->segs_per_cmd ? (unsigned)(nseg - first) : x->segs_per_cmd;
		if (!(l->list[i] = malloc(XC_HDR + 2 * XC_CSCD + (size_t)k * XC_SEG)))
			return -ENOMEM;
		l->len[i] = build_list(x, l->list[i], LUN_SRC, LUN_XDST, first * SEG_BYTES,
				       first * SEG_BYTES, SEG_BYTES, k);
		if (!l->len[i])
			return -ENOMEM;
	}
	return 0;
}

static uint64_t data_bytes(const struct vblk_stats *a, const struct vblk_stats *b)
{
	return (b->bytes_read - a->bytes_read) + (b->bytes_written - a->bytes_written) -
	       (b->meta_bytes_written - a->meta_bytes_written);
}

/* Run the commands of l, up to qd in flight: *secs, data bytes moved (*moved) and metadata
 * bytes written (*meta) by the I/O layer meanwhile. */
static int run_xcopy(struct xb *x, const struct xc_lists *l, unsigned qd, double *secs,
		     uint64_t *moved, uint64_t *meta)
{
	struct pipe p;
	if (qd > l->n)
		qd = l->n;
	int rc = pipe_init(&p, x, qd, 0);
	if (rc == 0) {
		p.start = xcopy_start;
		p.done = done_once;
		p.end = l->n;
		p.lists = l->list;
		p.list_len = l->len;
		p.what = "EXTENDED COPY";
		struct vblk_stats a = simhost_blk_stats(x->h);
		double t = bench_now();
		rc = pipe_run(&p);
		*secs = bench_now() - t;
		struct vblk_stats b = simhost_blk_stats(x->h);
		*moved = data_bytes(&a, &b);
		*meta = b.meta_bytes_written - a.meta_bytes_written;
	}
	pipe_free(&p);
	return rc;
}

static int run_pipe(struct xb *x, int (*start)(struct pipe *, struct slot *),
		    int (*done)(struct pipe *, struct slot *, struct simhost_result *), uint64_t end,
		    size_t buf_len, const char *what, double *secs)
{
	struct pipe p;
	int rc = pipe_init(&p, x, x->c->qd, buf_len);
	if (rc == 0) {
		p.start = start;
		p.done = done;
		p.end = end;
		p.what = what;
		double t = bench_now();
		rc = pipe_run(&p);
		*secs = bench_now() - t;
	}
	pipe_free(&p);
	return rc;
}

/* ------------------------------------------------------------- verification */

/*
 * Compare [doff, doff+len) of lun with [soff, soff+len) of src, and src there
 * with its pattern: everything, or (sample) 1 MiB at a pseudo-random place
 * of every 16 MiB plus the first and the last MiB. Returns 0, 1 (mismatch,
 * printed) or -errno.
 */
static int verify_copy(struct xb *x, int lun, uint64_t doff, uint64_t soff, uint64_t len,
		       bool sample, const char *what)
{
	uint32_t c = x->chunk;
	uint8_t *d = malloc(c), *s = malloc(c), *e = malloc(c);
	int rc = d && s && e ? 0 : -ENOMEM;
	uint64_t rs = SEED ^ doff ^ (uint64_t)lun, checked = 0;
	uint64_t n = sample ? len / SEG_BYTES + 2 : (len + c - 1) / c;
	for (uint64_t i = 0; i < n && rc == 0; i++) {
		uint64_t off;
		if (!sample)
			off = i * c;
		else if (i == 0)
			off = 0;
		else if (i == 1)
			off = len > c ? len - c : 0;
		else
			off = (i - 2) * SEG_BYTES + vrng_next(&rs) % (SEG_BYTES / c) * c;
		uint32_t k = len - off < c ? (uint32_t)(len - off) : c;
		if ((rc = read_sync(x, lun, doff + off, k, d)) < 0 ||
		    (rc = read_sync(x, LUN_SRC, soff + off, k, s)) < 0)
			break;
		pattern(e, soff + off, k, SEED);
		const uint8_t *bad = NULL, *want = NULL;
		if (memcmp(s, e, k)) {
			bad = s;
			want = e;
		} else if (memcmp(d, s, k)) {
			bad = d;
			want = s;
		}
		if (bad) {
			uint32_t at = 0;
			while (bad[at] == want[at])
				at++;
			fprintf(stderr, "vaai-bench xcopy: MISMATCH: %s: %s byte %llu (offset %llu of the range) "
					"differs from %s\n",
				what, bad == s ? "source" : vol_name[lun],
				(unsigned long long)((bad == s ? soff : doff) + off + at),
				(unsigned long long)(off + at), bad == s ? "its pattern" : "the source");
			rc = 1;
			break;
		}
		checked += k;
	}
	if (rc == 0)
		fprintf(stderr, "# verified %s: %llu MiB compared (%s) with the source: equal\n", what,
			(unsigned long long)(checked >> 20), sample ? "sampled" : "all of it");
	free(d);
	free(s);
	free(e);
	return rc;
}

/* ------------------------------------------------------------------- phases */

static int dealloc(struct xb *x, int lun, uint64_t len)
{
	int rc = simhost_deallocate(x->h, vol_name[lun], 0, len);
	if (rc < 0)
		fprintf(stderr, "vaai-bench xcopy: deallocating %s: %s\n", vol_name[lun], strerror(-rc));
	/* simhost_deallocate stops and restarts the engine thread: one command (TEST UNIT
	 * READY, untimed) so that the restart is not counted in the next timed command. */
	static const uint8_t tur[6] = {0};
	double us;
	if (rc == 0)
		rc = cmd_sync(x, lun, tur, 6, NULL, 0, NULL, 0, &us, "TEST UNIT READY");
	return rc;
}

/*
 * Before each timed step: on the (virtual) disk of docs/performance.md, DSYNC
 * writes stay slow for seconds after a large write burst (the fill, a host
 * copy), which would weigh on whichever step comes next. 3 s, as measured
 * there: an xcopy right after an 8 GiB host copy with a 1 s pause took 2-3x
 * its time after a longer one. --settle (default 3 s).
 */
static void settle(const struct xcfg *c)
{
	sync();
	sleep(c->settle);
}

static bool want_sample(const struct xcfg *c, uint64_t len)
{
	return c->verify == VERIFY_SAMPLE || (c->verify == VERIFY_AUTO && len > (1ull << 30));
}

/* 1. xcopy_8g_16m_segments */
static int bench_copy(struct xb *x)
{
	const struct xcfg *c = x->c;
	struct xc_lists l = {0};
	double *xs = calloc(c->reps, sizeof(double)), *hs = calloc(c->reps, sizeof(double));
	int rc = xs && hs ? lists_build(x, c->size, &l) : -ENOMEM;
	uint64_t moved_max = 0, meta = 0;
	for (unsigned r = 0; r < c->reps && rc == 0; r++) {
		uint64_t moved;
		if ((rc = dealloc(x, LUN_XDST, c->size)) < 0 || (rc = dealloc(x, LUN_HDST, c->size)) < 0)
			break;
		settle(c);
		if ((rc = run_xcopy(x, &l, c->qd, &xs[r], &moved, &meta)) < 0)
			break;
		if (moved > moved_max)
			moved_max = moved;
		settle(c);
		if ((rc = run_pipe(x, hcopy_start, hcopy_done, c->size, 0, "host copy", &hs[r])) < 0)
			break;
		fprintf(stderr,
			"# rep %u: xcopy %.3f s (%u commands, %u in flight; data bytes moved %llu, "
			"metadata written %llu), host copy %.2f s (%.0f MiB/s): %.0fx\n",
			r + 1, xs[r], l.n, l.n < c->qd ? l.n : c->qd, (unsigned long long)moved,
			(unsigned long long)meta, hs[r], (double)c->size / MIB / hs[r], hs[r] / xs[r]);
	}
	/* Once more with one command at a time (for the record; the final state of xdst). */
	double one = 0;
	uint64_t moved1 = 0;
	if (rc == 0 && (rc = dealloc(x, LUN_XDST, c->size)) == 0) {
		settle(c);
		rc = run_xcopy(x, &l, 1, &one, &moved1, &meta);
		if (rc == 0)
			fprintf(stderr, "# xcopy with one command at a time: %.3f s (data bytes moved %llu)\n",
				one, (unsigned long long)moved1);
		if (moved1 > moved_max)
			moved_max = moved1;
	}
	if (rc == 0 && c->inject_mismatch) {
		uint8_t cdb[16], junk[SMALL_IO];
		memset(junk, 0xA5, sizeof(junk));
		sb_rw16_cdb(cdb, 0x8a, SMALL_IO / x->bs, SMALL_IO / x->bs);
		fprintf(stderr, "# --inject-mismatch: overwriting 4 KiB of xdst at byte 4096\n");
		rc = cmd_sync(x, LUN_XDST, cdb, 16, junk, sizeof(junk), NULL, 0, NULL, "WRITE(16)");
	}
	bool sample = want_sample(c, c->size);
	if (rc == 0)
		rc = verify_copy(x, LUN_XDST, 0, 0, c->size, sample, "EXTENDED COPY destination");
	if (rc == 0)
		rc = verify_copy(x, LUN_HDST, 0, 0, c->size, sample, "host copy destination");
	if (rc == 0) {
		double mx = median(xs, c->reps), mh = median(hs, c->reps);
		printf("xcopy_8g_16m_segments speedup_vs_host_copy=%.0f bytes_moved=%llu xcopy_s=%.3f "
		       "host_copy_s=%.2f size_mib=%llu reps=%u\n",
		       mh / mx, (unsigned long long)moved_max, mx, mh,
		       (unsigned long long)(c->size >> 20), c->reps);
		if (c->rbd)
			printf("rbd_xcopy_1g xcopy_s=%.3f readwrite_s=%.2f ratio=%.0f size_mib=%llu "
			       "bytes_moved=%llu\n",
			       mx, mh, mh / mx, (unsigned long long)(c->size >> 20),
			       (unsigned long long)moved_max);
		fflush(stdout);
	}
	lists_free(&l);
	free(xs);
	free(hs);
	return rc;
}

/* 2. xcopy_240m_command_latency_us */
static int bench_latency(struct xb *x)
{
	const struct xcfg *c = x->c;
	uint8_t list[XC_HDR + 2 * XC_CSCD + LAT_NSEG * XC_SEG], cdb[16];
	size_t len = build_list(x, list, LUN_SRC, LUN_LAT, 0, 0, LAT_SEG_BYTES, LAT_NSEG);
	sb_xcopy_cdb(cdb, (uint32_t)len);
	double *us = calloc(c->lat_reps, sizeof(double));
	int rc = us && len ? 0 : -ENOMEM;
	for (unsigned r = 0; r < c->lat_reps && rc == 0; r++) {
		if ((rc = dealloc(x, LUN_LAT, LAT_BYTES)) < 0)
			break;
		rc = cmd_sync(x, LUN_LAT, cdb, 16, list, len, NULL, 0, &us[r], "EXTENDED COPY (240 MiB)");
	}
	if (rc == 0)
		rc = verify_copy(x, LUN_LAT, 0, 0, LAT_BYTES, want_sample(c, LAT_BYTES),
				 "240 MiB EXTENDED COPY destination");
	if (rc == 0) {
		double mn = us[0], mx = us[0];
		for (unsigned r = 1; r < c->lat_reps; r++) {
			mn = us[r] < mn ? us[r] : mn;
			mx = us[r] > mx ? us[r] : mx;
		}
		printf("xcopy_240m_command_latency_us=%.0f median_of=%u min_us=%.0f max_us=%.0f\n",
		       median(us, c->lat_reps), c->lat_reps, mn, mx);
		fflush(stdout);
	}
	free(us);
	return rc;
}

/*
 * --backing thick: write the pool file's whole data area once (zeros, through
 * the page cache, then fsync), before any volume exists, as a block device or
 * a preallocated ("thick") file would be. On a sparse file on ext4 the first
 * O_DSYNC write into never-written file space also commits the file system's
 * block allocation; thick, every write the pool does is an overwrite at the
 * file-system level and the first-write result shows the pool's own cost.
 */
static int make_thick(struct xb *x, const char *path)
{
	struct vpool_stats st;
	int rc = simhost_pool_stats(x->h, &st);
	if (rc < 0)
		return rc;
	fprintf(stderr, "# backing thick: writing the data area (%llu MiB) of %s\n",
		(unsigned long long)(st.capacity >> 20), path);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	const size_t chunk = 1u << 20;
	uint8_t *zero = calloc(1, chunk);
	rc = zero ? 0 : -ENOMEM;
	for (uint64_t off = 0; off < st.capacity && rc == 0; off += chunk) {
		size_t len = st.capacity - off < chunk ? (size_t)(st.capacity - off) : chunk;
		if (pwrite(fd, zero, len, (off_t)(st.data_off + off)) != (ssize_t)len)
			rc = -EIO;
	}
	free(zero);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (rc == 0)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* the pool does O_DIRECT */
	close(fd);
	return rc;
}

/*
 * 3. first_write_into_clone: xdst is still entirely shared with src (bench_copy).
 * Writes go in blocks of FW_BLOCK + 1 of one kind (clone, overwrite, allocating;
 * the kinds' order rotating from round to round); the first write of a block is
 * timed but not counted. So each counted write follows a write of its own kind
 * and pays what that one left to the next durable write: a write that is
 * durable through the journal leaves its home write in the device cache and, on
 * a sparse file, ext4's allocation of never-written file space uncommitted --
 * the next O_DSYNC write into the file commits it. Interleaving the kinds one
 * by one would bill that to the overwrites.
 */
#define FW_BLOCK 10

static int bench_first_write(struct xb *x)
{
	const struct xcfg *c = x->c;
	uint64_t n_ext = c->size / EXTENT, rs = SEED ^ 0xF1F1;
	/* clone and allocating writes each use a distinct extent, warm-ups included */
	uint64_t max_n = n_ext > FW_BLOCK + 1 ? n_ext - (n_ext + FW_BLOCK) / (FW_BLOCK + 1) : 0;
	unsigned n = c->samples < max_n ? c->samples : (unsigned)max_n;
	if (n < c->samples)
		fprintf(stderr, "# first write: %u samples (xdst has %llu extents)\n", n,
			(unsigned long long)n_ext);
	if (!n)
		return -EINVAL;
	uint32_t *order = malloc(n_ext * sizeof(*order));
	double *cw = calloc(n, sizeof(double)), *ow = calloc(n, sizeof(double)),
	       *aw = calloc(n, sizeof(double));
	uint8_t *ext = malloc(EXTENT), *want = malloc(EXTENT), data[SMALL_IO];
	int rc = order && cw && ow && aw && ext && want ? 0 : -ENOMEM;
	for (uint64_t i = 0; rc == 0 && i < n_ext; i++)
		order[i] = (uint32_t)i;
	for (uint64_t i = n_ext - 1; rc == 0 && i > 0; i--) {
		uint64_t j = vrng_next(&rs) % (i + 1);
		uint32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	if (rc == 0)
		settle(c);
	static const int lun[3] = {LUN_XDST, LUN_HDST, LUN_FRESH};
	static const char *const what[3] = {"WRITE(16) into a clone", "WRITE(16) overwrite",
					    "WRITE(16) allocating"};
	double *us[3] = {cw, ow, aw};
	unsigned used[3] = {0, 0, 0}; /* writes done per kind, warm-ups included */
	unsigned checked = 0;
	for (unsigned round = 0; round * FW_BLOCK < n && rc == 0; round++) {
		unsigned cnt = n - round * FW_BLOCK < FW_BLOCK ? n - round * FW_BLOCK : FW_BLOCK;
		for (unsigned k = 0; k < 3 && rc == 0; k++) {
			unsigned t = (round + k) % 3;
			for (unsigned b = 0; b <= cnt && rc == 0; b++) {
				unsigned u = used[t]++;
				uint64_t off;
				if (t == 0) /* a random granule of a distinct, still shared extent */
					off = (uint64_t)order[u] * EXTENT +
					      vrng_next(&rs) % (EXTENT / SMALL_IO) * SMALL_IO;
				else if (t == 1) /* a random 4 KiB block of hdst (private, written) */
					off = vrng_next(&rs) % (c->size / SMALL_IO) * SMALL_IO;
				else /* a distinct unmapped extent */
					off = (uint64_t)u * EXTENT + vrng_next(&rs) % (EXTENT / SMALL_IO) * SMALL_IO;
				pattern(data, off, SMALL_IO, SEED + 1 + u);
				uint8_t cdb[16];
				sb_rw16_cdb(cdb, 0x8a, off / x->bs, SMALL_IO / x->bs);
				double lat = 0;
				rc = cmd_sync(x, lun[t], cdb, 16, data, SMALL_IO, NULL, 0, &lat, what[t]);
				if (b > 0)
					us[t][round * FW_BLOCK + b - 1] = lat;
				/* The first few redirected extents, read back whole: the new 4 KiB, the
				 * source elsewhere. */
				if (rc == 0 && t == 0 && checked < 4) {
					checked++;
					uint64_t base = (uint64_t)order[u] * EXTENT;
					pattern(want, base, EXTENT, SEED);
					memcpy(want + (off - base), data, SMALL_IO);
					if ((rc = read_sync(x, LUN_XDST, base, EXTENT, ext)) == 0 &&
					    memcmp(ext, want, EXTENT)) {
						fprintf(stderr, "vaai-bench xcopy: MISMATCH: extent %u of xdst after "
								"a 4 KiB write into it (redirect-on-write)\n",
							order[u]);
						rc = 1;
					}
				}
			}
		}
	}
	if (rc == 0) {
		double mc = median(cw, n), mo = median(ow, n), ma = median(aw, n);
		fprintf(stderr, "# reference: 4 KiB write into an unmapped extent (new extent; MAP+VALID+"
				"DATA commit with the home write): median %.0f us, %.2fx the overwrite\n",
			ma, mo > 0 ? ma / mo : 0);
		printf("first_write_into_clone latency_ratio_vs_overwrite=%.2f clone_write_us=%.0f "
		       "overwrite_us=%.0f samples=%u backing=%s journal=%s\n",
		       mo > 0 ? mc / mo : 0, mc, mo, n, c->thick ? "thick" : "sparse",
		       c->journal_in_store ? "store" : "file");
		fflush(stdout);
	}
	free(order);
	free(cw);
	free(ow);
	free(aw);
	free(ext);
	free(want);
	return rc;
}

/* ------------------------------------------------------------------ setup */

static int discover(struct xb *x)
{
	int rc;
	for (int l = 0; l < NLUN; l++) {
		uint32_t bs = 0;
		if ((rc = get_block_size(x, l, &bs)) < 0 || (rc = get_naa(x, l, x->naa[l])) < 0)
			return rc;
		if (l == 0)
			x->bs = bs;
		else if (bs != x->bs)
			return -EPROTO;
	}
	/* The copy manager of the LUN that receives the commands (xdst, as ESXi sends them). */
	struct limits *m = &x->lim;
	if ((rc = get_limits(x, LUN_XDST, m)) < 0)
		return rc;
	/* Segments per command: MAXIMUM SEGMENT DESCRIPTOR COUNT, and what fits in MAXIMUM
	 * DESCRIPTOR LIST LENGTH after the header and the two CSCD descriptors (counting the
	 * header too, the stricter reading). */
	uint32_t fit = m->max_list > XC_HDR + 2 * XC_CSCD ? (m->max_list - XC_HDR - 2 * XC_CSCD) / XC_SEG : 0;
	x->segs_per_cmd = m->max_seg < fit ? m->max_seg : fit;
	fprintf(stderr,
		"# target: block %u B; copy limits: %u CSCDs, %u segments, descriptor list %u B, "
		"segment %u B, inline %u B; maximum transfer %u blocks\n",
		x->bs, m->max_cscd, m->max_seg, m->max_list, m->max_seg_bytes, m->max_inline,
		m->max_xfer_blocks);
	if (m->max_cscd < 2 || !x->segs_per_cmd || m->max_seg_bytes < LAT_SEG_BYTES ||
	    LAT_SEG_BYTES / x->bs > 0xffff || SEG_BYTES % x->bs) {
		fprintf(stderr, "vaai-bench xcopy: the target's copy limits do not allow 2 CSCDs and "
				"segments of 16 and 30 MiB\n");
		return -EOPNOTSUPP;
	}
	if (LAT_NSEG > x->segs_per_cmd) {
		fprintf(stderr, "vaai-bench xcopy: the target takes only %u segments per command\n",
			x->segs_per_cmd);
		return -EOPNOTSUPP;
	}
	x->chunk = MIB;
	if (m->max_xfer_blocks && (uint64_t)m->max_xfer_blocks * x->bs < x->chunk)
		x->chunk = m->max_xfer_blocks * x->bs;
	if (x->chunk > SIMHOST_MAX_XFER)
		x->chunk = SIMHOST_MAX_XFER;
	fprintf(stderr, "# %u segments of 16 MiB per EXTENDED COPY; host copy: %u KiB chunks, %u in flight\n",
		x->segs_per_cmd, x->chunk >> 10, x->c->qd);
	return 0;
}

static int parse_args(struct xcfg *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--keep")) {
			c->keep = true;
			continue;
		}
		if (!strcmp(a, "--inject-mismatch")) {
			c->inject_mismatch = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "vaai-bench xcopy: %s needs a value\n", a);
			return -EINVAL;
		}
		i++;
		int n = atoi(v);
		if (!strcmp(a, "--dir")) {
			c->dir = v;
		} else if (!strcmp(a, "--size")) {
			if (bench_parse_size(v, &c->size) < 0 || c->size < 64 * MIB || c->size % SEG_BYTES) {
				fprintf(stderr, "vaai-bench xcopy: --size must be a multiple of 16M, >= 64M\n");
				return -EINVAL;
			}
		} else if (!strcmp(a, "--rbd")) {
			if (!*v || strchr(v, '/') || strlen(v) > 100) {
				fprintf(stderr, "vaai-bench xcopy: --rbd takes a Ceph pool's name\n");
				return -EINVAL;
			}
			c->rbd = v;
			c->journal_in_store = true;
		} else if (!strcmp(a, "--backing")) {
			if (strcmp(v, "thick") && strcmp(v, "sparse")) {
				fprintf(stderr, "vaai-bench xcopy: --backing must be sparse or thick\n");
				return -EINVAL;
			}
			c->thick = !strcmp(v, "thick");
		} else if (!strcmp(a, "--journal")) {
			if (strcmp(v, "file") && strcmp(v, "store")) {
				fprintf(stderr, "vaai-bench xcopy: --journal must be file or store\n");
				return -EINVAL;
			}
			c->journal_in_store = !strcmp(v, "store");
		} else if (!strcmp(a, "--settle")) {
			if (n < 0 || n > 60 || (!n && strcmp(v, "0"))) {
				fprintf(stderr, "vaai-bench xcopy: --settle must be 0..60 s\n");
				return -EINVAL;
			}
			c->settle = (unsigned)n;
		} else if (!strcmp(a, "--reps") || !strcmp(a, "--lat-reps") || !strcmp(a, "--samples") ||
			   !strcmp(a, "--qd")) {
			if (n < 1 || n > (a[2] == 'q' ? 64 : 100000)) {
				fprintf(stderr, "vaai-bench xcopy: bad %s %s\n", a, v);
				return -EINVAL;
			}
			if (a[2] == 'r')
				c->reps = (unsigned)n;
			else if (a[2] == 'l')
				c->lat_reps = (unsigned)n;
			else if (a[2] == 's')
				c->samples = (unsigned)n;
			else
				c->qd = (unsigned)n;
		} else if (!strcmp(a, "--verify")) {
			if (!strcmp(v, "full"))
				c->verify = VERIFY_FULL;
			else if (!strcmp(v, "sample"))
				c->verify = VERIFY_SAMPLE;
			else {
				fprintf(stderr, "vaai-bench xcopy: --verify full|sample\n");
				return -EINVAL;
			}
		} else {
			fprintf(stderr, "vaai-bench xcopy: unknown option %s\n", a);
			return -EINVAL;
		}
	}
	if (c->rbd && (c->thick || !c->journal_in_store)) {
		fprintf(stderr, "vaai-bench xcopy: --rbd keeps the journal in the image, with no --backing\n");
		return -EINVAL;
	}
	return 0;
}

int bench_xcopy_main(int argc, char **argv)
{
	struct xcfg c = {.dir = "build/bench-tmp", .size = 8ull << 30, .reps = 3, .lat_reps = 15,
			 .samples = 1000, .qd = 32, .settle = 3, .verify = VERIFY_AUTO};
	if (parse_args(&c, argc, argv) < 0)
		return 2;
	if (c.size != 8ull << 30)
		fprintf(stderr, "# NOTE: the copied range is %llu MiB (--size), not the 8 GiB of the line's "
				"name; the line says size_mib=%llu\n",
			(unsigned long long)(c.size >> 20), (unsigned long long)(c.size >> 20));
	struct xb x = {.c = &c};
	x.fill = c.size > LAT_BYTES ? c.size : LAT_BYTES;
	char pool[4096];
	if (c.rbd) {
		snprintf(pool, sizeof(pool), "rbd:%s/vaai-bench-xcopy", c.rbd);
	} else {
		mkdir(c.dir, 0755);
		snprintf(pool, sizeof(pool), "%s/xcopy.pool", c.dir);
	}
	simhost_remove_pool(pool); /* an RBD image too (vblk_remove_store) */
	/* src + hdst + two extents per first-write sample (redirect, allocation) + metadata room. */
	/* first-write blocks: one uncounted write per FW_BLOCK counted ones */
	uint64_t fw = (uint64_t)c.samples + c.samples / FW_BLOCK + FW_BLOCK + 1;
	uint64_t redirects = fw < c.size / EXTENT ? fw : c.size / EXTENT;
	uint64_t psize = x.fill + c.size + 2 * redirects * EXTENT + (512ull << 20);
	struct vpool_params prm = {.extent_size = EXTENT};
	char err[512] = "";
	int rc = simhost_create_pool_ex(pool, psize, &prm, !c.journal_in_store, SIMHOST_IO_URING, 1,
					&x.h, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "vaai-bench xcopy: %s\n", err);
		return 1;
	}
	if (rc == 0 && c.thick)
		rc = make_thick(&x, pool);
	uint64_t vsize[NLUN] = {x.fill, c.size, c.size, LAT_BYTES, redirects * EXTENT};
	for (int l = 0; l < NLUN && rc == 0; l++)
		if ((rc = simhost_volume_create(x.h, vol_name[l], vsize[l], 512)) == 0)
			rc = simhost_attach(x.h, vol_name[l], l);
	if (rc < 0)
		fprintf(stderr, "vaai-bench xcopy: volume setup: %s\n", strerror(-rc));
	if (rc == 0)
		rc = discover(&x);
	if (rc == 0) {
		fprintf(stderr, "# writing src (%llu MiB)\n", (unsigned long long)(x.fill >> 20));
		double s = 0;
		rc = run_pipe(&x, fill_start, done_once, x.fill, x.chunk, "filling src", &s);
		if (rc == 0)
			fprintf(stderr, "# src written in %.1f s\n", s);
	}
	if (rc == 0)
		rc = bench_copy(&x);
	if (rc == 0)
		rc = bench_latency(&x);
	if (rc == 0)
		rc = bench_first_write(&x);
	if (rc == 0) {
		int problems = simhost_verify(x.h, stderr);
		if (problems) {
			fprintf(stderr, "vaai-bench xcopy: the pool's invariant checks found %d problem(s)\n",
				problems);
			rc = problems < 0 ? problems : 1;
		} else {
			fprintf(stderr, "# pool invariant checks (vpool_verify): consistent\n");
		}
	}
	char *js = simhost_stats_json(x.h);
	if (js)
		fprintf(stderr, "# pool stats: %s\n", js);
	free(js);
	if (rc < 0)
		fprintf(stderr, "vaai-bench xcopy: failed: %s\n", strerror(-rc));
	int rc2 = simhost_close(x.h);
	if (rc2 < 0) {
		fprintf(stderr, "vaai-bench xcopy: closing the pool: %s\n", strerror(-rc2));
		rc = rc ? rc : 1;
	}
	if (!c.keep) {
		simhost_remove_pool(pool);
		if (!c.rbd)
			rmdir(c.dir); /* only if empty */
	}
	return rc == 0 ? 0 : 1;
}
