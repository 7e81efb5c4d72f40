/*
 * Which store a pool's path names (one rule for the daemon, vaai-sim and the
 * tools): "rbd:POOL/IMAGE" is a Ceph RBD image (vblk_rbd), anything else a
 * file or block device (vblk_uring). An image's blocking librados/librbd calls
 * run on a worker thread while the caller runs the reactor (vblk_rbd.c,
 * voffload_run): the daemon's, vaai-sim's and the tools' opens all do.
 */
#include <errno.h>
#include <unistd.h>

#include "vaaid/io.h"

int vblk_open_store(struct vreactor *r, const char *path, uint64_t create_size,
		    const struct vblk_rbd_conf *rbd, struct vblk **out)
{
	if (vblk_rbd_spec(path))
		return vblk_rbd_open(r, path, rbd, create_size, out);
	return vblk_uring_open(r, path, create_size, out);
}

int vblk_remove_store(struct vreactor *r, const char *path, const struct vblk_rbd_conf *rbd)
{
	if (vblk_rbd_spec(path))
		return vblk_rbd_remove_live(r, path, rbd);
	return unlink(path) < 0 ? -errno : 0;
}
