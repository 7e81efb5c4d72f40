/*
 * Synchronous block helpers for the control path, and aligned buffers.
 *
 * How this works: each helper submits one operation with an on-stack vio_op
 * whose callback records the result, then runs the device's reactor until the
 * callback has run. A transfer shorter than asked is -EIO. A reactor with
 * nothing left that could complete gives -EIO instead of hanging (a crashed
 * crashsim device completes everything with -EIO).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vaaid/io.h"

struct sync_wait {
	bool done;
	int res;
};

static void sync_cb(void *arg, int res)
{
	struct sync_wait *w = arg;
	w->res = res;
	w->done = true;
}

/* Wait for the op submitted with result rc; returns its result or -errno. */
static int sync_finish(struct vblk *b, struct sync_wait *w, int rc)
{
	if (rc < 0)
		return rc;
	while (!w->done) {
		rc = vreactor_run_once(b->reactor, -1);
		if (rc == -EDEADLK)
			return -EIO; /* the device will never answer */
		if (rc < 0)
			return rc;
	}
	return w->res;
}

static int transfer_result(int res, size_t len)
{
	if (res < 0)
		return res;
	return (size_t)res == len ? 0 : -EIO;
}

int vblk_pread_sync(struct vblk *b, void *buf, size_t len, uint64_t off)
{
	struct sync_wait w = {0};
	struct vio_op op;
	vio_op_init(&op, sync_cb, &w);
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	int rc = sync_finish(b, &w, vblk_readv(b, &iov, 1, off, &op));
	return transfer_result(rc, len);
}

int vblk_pwrite_sync(struct vblk *b, const void *buf, size_t len, uint64_t off, unsigned flags)
{
	struct sync_wait w = {0};
	struct vio_op op;
	vio_op_init(&op, sync_cb, &w);
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	int rc = sync_finish(b, &w, vblk_writev(b, &iov, 1, off, flags, &op));
	return transfer_result(rc, len);
}

int vblk_flush_sync(struct vblk *b)
{
	struct sync_wait w = {0};
	struct vio_op op;
	vio_op_init(&op, sync_cb, &w);
	int rc = sync_finish(b, &w, vblk_flush(b, &op));
	return rc < 0 ? rc : 0;
}

int vblk_allocate_sync(struct vblk *b, uint64_t off, uint64_t len)
{
	struct sync_wait w = {0};
	struct vio_op op;
	vio_op_init(&op, sync_cb, &w);
	int rc = sync_finish(b, &w, vblk_allocate(b, off, len, &op));
	return rc < 0 ? rc : 0;
}

void *vblk_alloc_buf(size_t len)
{
	size_t n = len ? (len + VBLK_ALIGN - 1) / VBLK_ALIGN * VBLK_ALIGN : VBLK_ALIGN;
	if (n < len)
		return NULL; /* overflow */
	void *p = NULL;
	if (posix_memalign(&p, VBLK_ALIGN, n) != 0)
		return NULL;
	memset(p, 0, n);
	return p;
}
