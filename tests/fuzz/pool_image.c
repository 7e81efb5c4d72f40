/*
 * The on-disk fuzz targets' pool (see pool_image.h).
 *
 * How this works: fz_template builds a 4 MiB pool with 64 KiB extents on a
 * crashsim memory device (and a journal file for the second kind) with the
 * engine's own calls: format, a fixed uuid written into both superblocks (and
 * the journal file's header), two volumes written, shared, redirected,
 * deallocated and grown, a checkpoint, then one more of every kind of change
 * so that the journal holds records of every type; then a power loss, and the
 * durable image is read back, and must open undamaged (fz_image_check): a
 * template that cannot be built or is refused is a FINDING, not a silent pass
 * of every input. Per input, fz_image_check lays the damaged copy
 * onto fresh crashsim devices (only its non-zero 4 KiB blocks) and opens it.
 *
 * Process-wide state: the reactor, the two templates and /dev/null, made once
 * (libFuzzer calls a target many times in one process; nothing of one input
 * survives into the next: devices and pools are per input).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <string.h>

#include "pool_image.h"
#include "vaaid/buf_cache.h"
#include "vaaid/io.h"
#include "vaaid/pool.h"

#define FZ_POOL_SIZE (4ull << 20)
#define FZ_EXTENT (64u << 10)
#define FZ_JOURNAL (576u << 10)

static const uint8_t fz_uuid[16] = {0x76, 0x61, 0x61, 0x69, 0x64, 0x2d, 0x66, 0x75,
				    0x7a, 0x7a, 0x2d, 0x70, 0x6f, 0x6f, 0x6c, 0x31};

/*
 * A damaged checkpoint or record may name a volume of up to 2^40 extents, whose
 * map the engine then tries to allocate (up to terabytes; docs/fuzzing.md,
 * "Open"): outside the sanitizers calloc either fails (the open is refused with
 * -ENOMEM) or maps zero pages lazily. Under ASan a large calloc costs its shadow
 * (an eighth of its size, written) and one past ASan's maximum aborts; so in
 * the fuzz and ASan builds an allocation above 1 GiB fails as libc's would,
 * and the open is refused (scripts/fuzz lifts libFuzzer's -malloc_limit_mb for
 * the same reason). Nothing else in the targets allocates more than 8 MiB.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=1024";
}

static struct vreactor *fz_reactor(void)
{
	static struct vreactor *r;
	if (!r && vreactor_create(64, &r) < 0) {
		fprintf(stderr, "fuzz: cannot create a reactor (io_uring)\n");
		abort();
	}
	return r;
}

/* The engine's large buffers (the journal's), kept across inputs (a pool per
 * input allocated them fresh: under ASan, new pages each time). */
static struct vbuf_cache *fz_bufs(void)
{
	static struct vbuf_cache *c;
	if (!c && vbuf_cache_new(8, &c) < 0)
		abort();
	return c;
}

static FILE *fz_null(void)
{
	static FILE *f;
	if (!f)
		f = fopen("/dev/null", "w");
	return f ? f : stderr;
}

static void fz_fail(const char *target, const char *what, int rc, const char *detail)
{
	fprintf(stderr, "%s: FINDING: %s (rc %d %s; %s)\n", target, what, rc, strerror(-rc),
		detail && detail[0] ? detail : "no error text");
	abort();
}

/* ---- synchronous volume calls for the template */
struct fz_wait {
	bool done;
	int res;
};

static void fz_done(void *arg, int res)
{
	struct fz_wait *w = arg;
	w->res = res;
	w->done = true;
}

static int fz_run(struct vreactor *r, int rc, struct fz_wait *w)
{
	while (rc == 0 && !w->done)
		rc = vreactor_run_once(r, -1) < 0 ? -EIO : 0;
	return rc < 0 ? rc : w->res;
}

static int t_write(struct vreactor *r, struct vvol *v, uint64_t off, uint64_t len, uint8_t fill)
{
	uint8_t *b = vblk_alloc_buf(len);
	if (!b)
		return -ENOMEM;
	memset(b, fill, len);
	struct iovec iov = {.iov_base = b, .iov_len = len};
	struct fz_wait w = {0};
	int rc = fz_run(r, vvol_write(v, off, len, &iov, 1, fz_done, &w), &w);
	free(b);
	return rc;
}

static int t_dealloc(struct vreactor *r, struct vvol *v, uint64_t off, uint64_t len)
{
	struct fz_wait w = {0};
	return fz_run(r, vvol_deallocate(v, off, len, fz_done, &w), &w);
}

static int t_share(struct vreactor *r, struct vvol *s, uint64_t soff, struct vvol *d,
		   uint64_t doff, uint64_t len)
{
	struct fz_wait w = {0};
	return fz_run(r, vvol_share(s, soff, d, doff, len, fz_done, &w), &w);
}

/* The changes the template holds: before its checkpoint (part 0) and after
 * it, in the journal (part 1): VOL_CREATE, MAP (new, ROW), VALID (set, clear,
 * redo), DATA (small writes), SHARE, VOL_RESIZE, VOL_DELETE, HYDRATED. */
static int t_changes(struct vreactor *r, struct vpool *p, int part)
{
	struct vvol *a, *b, *c;
	int rc = 0;
	if (part == 0) {
		rc = vpool_volume_create(p, "a", 1u << 20, 512, &a);
		if (rc == 0)
			rc = vpool_volume_create(p, "b", 1u << 20, 4096, &b);
		if (rc == 0)
			rc = t_write(r, a, 0, 2 * FZ_EXTENT, 0xa1);
		if (rc == 0)
			rc = t_write(r, a, 3 * FZ_EXTENT + 8192, 4096, 0xa2);
		if (rc == 0)
			rc = t_write(r, a, 5 * FZ_EXTENT + 512, 1024, 0xa3);
		if (rc == 0)
			rc = t_share(r, a, 0, b, 0, 2 * FZ_EXTENT);
		if (rc == 0)
			rc = vvol_grow(a, 3u << 19);
		return rc;
	}
	a = vpool_volume_find(p, "a");
	b = vpool_volume_find(p, "b");
	if (!a || !b)
		return -ENOENT;
	rc = vpool_volume_create(p, "c", 256u << 10, 512, &c);
	if (rc == 0)
		rc = t_write(r, c, 0, FZ_EXTENT, 0xc1);
	if (rc == 0)
		rc = vpool_volume_delete(p, "c");
	if (rc == 0)
		rc = t_write(r, a, 6 * FZ_EXTENT, FZ_EXTENT, 0xa4);
	if (rc == 0)
		rc = t_write(r, a, 7 * FZ_EXTENT + 4096, 2048, 0xa5); /* a small write: DATA */
	if (rc == 0)
		rc = t_dealloc(r, a, 3 * FZ_EXTENT + 8192, 4096);      /* the last granule: unmapped */
	if (rc == 0)
		rc = t_dealloc(r, a, 6 * FZ_EXTENT, 4096);             /* VALID clear */
	if (rc == 0)
		rc = t_write(r, b, 0, 4096, 0xb1);                     /* into a shared extent: ROW */
	if (rc == 0)
		rc = vpool_hydration_wait(p);                          /* HYDRATED */
	if (rc == 0) {
		vpool_hydration_pause(p, true);
		rc = t_write(r, b, FZ_EXTENT, 4096, 0xb2);             /* left hydrating */
	}
	if (rc == 0)
		rc = t_share(r, a, 6 * FZ_EXTENT, b, 8 * FZ_EXTENT, FZ_EXTENT);
	if (rc == 0)
		rc = vvol_grow(b, 2u << 20);
	return rc;
}

static int fz_device(const uint8_t *bytes, uint64_t size, struct vblk **out);

static int read_all(struct vblk *dev, uint8_t **out, uint64_t *size)
{
	uint8_t *b = vblk_alloc_buf(dev->size);
	if (!b)
		return -ENOMEM;
	int rc = vblk_pread_sync(dev, b, dev->size, 0);
	if (rc < 0) {
		free(b);
		return rc;
	}
	*out = b;
	*size = dev->size;
	return 0;
}

static int fz_template_build(bool jfile, struct fz_image *t)
{
	struct vreactor *r;
	struct vblk *dev = NULL, *jdev = NULL;
	struct vpool *p = NULL;
	memset(t, 0, sizeof(*t));
	int rc = vreactor_create(64, &r); /* its own: dropped with the crash below */
	if (rc < 0)
		return rc;
	struct vpool_params prm = {.size = FZ_POOL_SIZE, .extent_size = FZ_EXTENT,
				   .journal_size = FZ_JOURNAL, .max_size = 2 * FZ_POOL_SIZE};
	rc = vblk_crashsim_create_mem(r, FZ_POOL_SIZE, 1, &dev);
	if (rc == 0 && jfile) {
		rc = vblk_crashsim_create_mem(r, vpool_journal_store_size(&prm, FZ_POOL_SIZE), 2,
					      &jdev);
		if (rc == 0)
			rc = vblk_crashsim_link(dev, jdev);
		prm.journal_dev = jdev;
	}
	if (rc == 0)
		rc = vpool_format(dev, &prm);
	struct vsb sb;
	if (rc == 0)
		rc = vsb_read(dev, &sb, NULL);
	if (rc == 0) {
		memcpy(sb.uuid, fz_uuid, sizeof(fz_uuid));
		rc = vsb_write(dev, &sb);
	}
	if (rc == 0)
		rc = vsb_write(dev, &sb);
	if (rc == 0 && jdev)
		rc = vjf_header_write(jdev, &sb);
	if (rc == 0)
		rc = vpool_open_stores(dev, jdev, 0, &p, NULL);
	if (rc == 0)
		rc = t_changes(r, p, 0);
	if (rc == 0)
		rc = vpool_checkpoint(p);
	if (rc == 0)
		rc = t_changes(r, p, 1);
	if (dev) { /* a power loss: the journal keeps what happened after the checkpoint */
		vblk_crashsim_crash_now(dev);
		if (p)
			vpool_abandon(p);
		vreactor_destroy(r);
		vblk_crashsim_power_on(dev, fz_reactor()); /* (and the journal file) */
	} else {
		vreactor_destroy(r);
	}
	if (rc == 0)
		rc = read_all(dev, &t->store, &t->store_size);
	if (rc == 0 && jdev)
		rc = read_all(jdev, &t->jstore, &t->jstore_size);
	if (rc == 0)
		rc = vsb_read(dev, &t->sb, &t->sb_which);
	vblk_close(jdev);
	vblk_close(dev);
	if (rc < 0) {
		fprintf(stderr, "fuzz: building the template pool failed: %s\n", strerror(-rc));
		fz_image_free(t);
	}
	return rc;
}

/* Replay's record counts by type (the template must hold every type). */
static int count_rec(void *arg, uint8_t type, uint8_t flags, const uint8_t *payload, uint16_t len)
{
	(void)flags, (void)payload, (void)len;
	((unsigned *)arg)[type]++;
	return 0;
}

const struct fz_image *fz_template(bool jfile)
{
	static struct fz_image t[2];
	static bool built[2];
	if (!built[jfile]) {
		/* The engine must write its own pool, and the pool must open undamaged:
		 * otherwise every input would pass (nothing to damage, or every open
		 * refused "naming the damage"). */
		int rc = fz_template_build(jfile, &t[jfile]);
		if (rc == -ENOMEM)
			return NULL;
		if (rc < 0)
			fz_fail("fuzz (template)", "the engine's own pool could not be built", rc, NULL);
		if (!fz_image_check(&t[jfile], "fuzz (template)"))
			fz_fail("fuzz (template)", "the undamaged template pool was refused",
				0, "VAAID_FUZZ_VERBOSE=1 prints the open's error");
		built[jfile] = true;
		/* Its journal, by record type (types 1..8: records.c). */
		struct vblk *dev = NULL;
		struct vj_replay_result res = {0};
		unsigned n[256] = {0};
		const struct fz_image *c = &t[jfile];
		const uint8_t *jb = c->jstore ? c->jstore : c->store;
		if (fz_device(jb, c->jstore ? c->jstore_size : c->store_size, &dev) == 0)
			vjournal_replay(dev, &c->sb, count_rec, n, &res);
		vblk_close(dev);
		t[jfile].j_end = res.end;
		t[jfile].j_next_seq = res.next_seq;
		t[jfile].j_commits = res.commits;
		if (fz_image_share(&t[jfile]) < 0) /* copies are then plain copies: slower */
			fprintf(stderr, "fuzz: template: no copy-on-write copies\n");
		if (getenv("VAAID_FUZZ_VERBOSE"))
			fprintf(stderr,
				"fuzz: template%s: journal %llu commits, %llu records; by type 1..8: "
				"%u %u %u %u %u %u %u %u\n",
				jfile ? " (journal file)" : "", (unsigned long long)res.commits,
				(unsigned long long)res.records, n[1], n[2], n[3], n[4], n[5], n[6],
				n[7], n[8]);
	}
	return &t[jfile];
}

static int memfd_of(const uint8_t *bytes, uint64_t size)
{
	int fd = memfd_create("vaaid-fuzz-image", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	uint64_t done = 0;
	while (done < size) {
		ssize_t n = pwrite(fd, bytes + done, (size_t)(size - done), (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int rc = n < 0 ? -errno : -EIO;
			close(fd);
			return rc;
		}
		done += (uint64_t)n;
	}
	return fd;
}

int fz_image_share(struct fz_image *img)
{
	if (img->shared)
		return 0;
	int fd = memfd_of(img->store, img->store_size);
	if (fd < 0)
		return fd;
	int jfd = -1;
	if (img->jstore) {
		jfd = memfd_of(img->jstore, img->jstore_size);
		if (jfd < 0) {
			close(fd);
			return jfd;
		}
	}
	img->store_fd = fd;
	img->jstore_fd = jfd;
	img->shared = true;
	return 0;
}

/* A copy-on-write mapping of fd's size bytes, or NULL. */
static uint8_t *cow_map(int fd, uint64_t size)
{
	void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

int fz_image_copy(const struct fz_image *from, struct fz_image *to)
{
	*to = *from;
	to->shared = false;
	to->mapped = from->shared;
	if (from->shared) {
		to->store = cow_map(from->store_fd, from->store_size);
		to->jstore = from->jstore ? cow_map(from->jstore_fd, from->jstore_size) : NULL;
	} else {
		to->store = malloc(from->store_size);
		to->jstore = from->jstore ? malloc(from->jstore_size) : NULL;
		if (to->store)
			memcpy(to->store, from->store, from->store_size);
		if (to->jstore)
			memcpy(to->jstore, from->jstore, from->jstore_size);
	}
	if (!to->store || (from->jstore && !to->jstore)) {
		fz_image_free(to);
		return -ENOMEM;
	}
	return 0;
}

void fz_image_free(struct fz_image *img)
{
	if (img->mapped) {
		if (img->store)
			munmap(img->store, (size_t)img->store_size);
		if (img->jstore)
			munmap(img->jstore, (size_t)img->jstore_size);
	} else {
		free(img->store);
		free(img->jstore);
	}
	img->store = img->jstore = NULL;
}

uint8_t *fz_image_ring(const struct fz_image *img, const struct vsb *sb)
{
	uint8_t *base = (sb->incompat & VSB_INCOMPAT_JOURNAL_FILE) ? img->jstore : img->store;
	uint64_t size = (sb->incompat & VSB_INCOMPAT_JOURNAL_FILE) ? img->jstore_size
								   : img->store_size;
	if (!base || sb->journal_off > size || sb->journal_size > size - sb->journal_off)
		return NULL;
	return base + sb->journal_off;
}

/* A crashsim device holding bytes (zero 4 KiB blocks are holes, as in a file). */
static int fz_device(const uint8_t *bytes, uint64_t size, struct vblk **out)
{
	int rc = vblk_crashsim_create_image(fz_reactor(), bytes, size, 1, out);
	if (rc == 0)
		(*out)->bufs = fz_bufs();
	return rc;
}

/* Open as vaai-check does: 0 (the pool verified, closed or abandoned) or the
 * open's -errno, its error text in err. */
static int open_verify(struct vblk *dev, struct vblk *jdev, unsigned flags, const char *target,
		       const char *stage, char *err, size_t errlen)
{
	struct vpool *p;
	struct vpool_open_report rep = {0};
	int rc = vpool_open_stores(dev, jdev, flags, &p, &rep);
	snprintf(err, errlen, "%s", rep.error);
	if (getenv("VAAID_FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz: %s: rc %d, replayed %llu commits / %llu records%s%s\n", stage, rc,
			(unsigned long long)rep.commits, (unsigned long long)rep.records,
			rep.error[0] ? ": " : "", rep.error);
	if (rc < 0) {
		/* Refused: it must say what is damaged (vaai-check prints rep.error). */
		if (rc != -ENOMEM && !rep.error[0])
			fz_fail(target, stage, rc, "open refused without naming the damage");
		return rc;
	}
	if (vpool_verify(p, fz_null()) != 0) {
		vpool_verify(p, stderr);
		fz_fail(target, stage, 0, "open accepted a pool that fails vaai-check's verification");
	}
	if (flags & VPOOL_OPEN_READONLY) {
		vpool_abandon(p);
		return 0;
	}
	rc = vpool_close(p); /* waits for the home writes, writes a checkpoint */
	if (rc < 0)
		fz_fail(target, stage, rc, "closing an accepted pool failed");
	return 0;
}

int fz_image_sb_read(const struct fz_image *img, struct vsb *sb, int *which)
{
	struct vblk *dev = NULL;
	int rc = fz_device(img->store, img->store_size, &dev);
	if (rc == 0)
		rc = vsb_read(dev, sb, which);
	vblk_close(dev);
	return rc;
}

bool fz_image_check(const struct fz_image *img, const char *target)
{
	struct vblk *dev = NULL, *jdev = NULL;
	int rc = fz_device(img->store, img->store_size, &dev);
	if (rc == 0 && img->jstore)
		rc = fz_device(img->jstore, img->jstore_size, &jdev);
	if (rc < 0) {
		vblk_close(dev);
		if (rc == -ENOMEM)
			return false;
		fz_fail(target, "laying the image onto a device", rc, NULL);
	}
	char err[256];
	rc = open_verify(dev, jdev, VPOOL_OPEN_READONLY, target, "read-only open (vaai-check)", err,
			 sizeof(err));
	if (rc == 0) {
		/* What vaai-check accepted, vaaid must open (replay written home, a
		 * checkpoint), close, and find again. */
		const char *st = "read-write open of what the read-only open accepted";
		rc = open_verify(dev, jdev, 0, target, st, err, sizeof(err));
		if (rc == -EROFS) /* read-only compatible features it does not know: named */
			goto out;
		if (rc < 0 && rc != -ENOMEM)
			fz_fail(target, st, rc, err);
		st = "read-only reopen of the pool vaaid closed";
		if (rc == 0)
			rc = open_verify(dev, jdev, VPOOL_OPEN_READONLY, target, st, err, sizeof(err));
		if (rc < 0 && rc != -ENOMEM)
			fz_fail(target, st, rc, err);
	}
out:
	vblk_close(jdev);
	vblk_close(dev);
	return rc == 0 || rc == -EROFS;
}

int fz_image_settle(const struct fz_image *from, struct fz_image *to)
{
	struct vblk *dev = NULL, *jdev = NULL;
	struct vpool *p;
	memset(to, 0, sizeof(*to));
	int rc = fz_device(from->store, from->store_size, &dev);
	if (rc == 0 && from->jstore)
		rc = fz_device(from->jstore, from->jstore_size, &jdev);
	if (rc == 0)
		rc = vpool_open_stores(dev, jdev, 0, &p, NULL);
	if (rc == 0)
		rc = vpool_close(p);
	if (rc == 0)
		rc = read_all(dev, &to->store, &to->store_size);
	if (rc == 0 && jdev)
		rc = read_all(jdev, &to->jstore, &to->jstore_size);
	if (rc == 0)
		rc = vsb_read(dev, &to->sb, &to->sb_which);
	if (rc == 0) {
		to->j_end = to->sb.journal_start;
		to->j_next_seq = to->sb.journal_seq;
	}
	vblk_close(jdev);
	vblk_close(dev);
	if (rc < 0)
		fz_image_free(to);
	return rc;
}
