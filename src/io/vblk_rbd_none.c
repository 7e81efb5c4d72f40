/* vblk_rbd in a build without librbd (CMake VAAID_RBD=OFF, or librbd-dev missing):
 * an "rbd:" store is refused with -EPROTONOSUPPORT and a message. */
#include <errno.h>
#include <stdio.h>

#include "vaaid/io.h"

int vblk_rbd_open(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
		  uint64_t create_size, struct vblk **out)
{
	(void)r, (void)conf, (void)create_size, (void)out;
	fprintf(stderr, "vblk_rbd: %s: this vaaid was built without Ceph RBD (librbd)\n", spec);
	return -EPROTONOSUPPORT;
}

int vblk_rbd_remove(const char *spec, const struct vblk_rbd_conf *conf)
{
	(void)spec, (void)conf;
	return -EPROTONOSUPPORT;
}

int vblk_rbd_remove_live(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf)
{
	(void)r;
	return vblk_rbd_remove(spec, conf);
}

int vblk_rbd_takeover(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
		      struct vblk **out)
{
	return vblk_rbd_open(r, spec, conf, 0, out);
}

int vblk_rbd_open_readonly(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
			   struct vblk **out)
{
	return vblk_rbd_open(r, spec, conf, 0, out);
}

int vblk_rbd_owner_peek(struct vreactor *r, const char *spec, const struct vblk_rbd_conf *conf,
			struct vblk_rbd_owner *out)
{
	(void)r, (void)spec, (void)conf, (void)out;
	return -EPROTONOSUPPORT;
}

int vblk_rbd_check_lock(struct vblk *b)
{
	(void)b;
	return -EOPNOTSUPP;
}

int vblk_rbd_alua_get(struct vblk *b, struct vblk_rbd_alua *out)
{
	(void)b, (void)out;
	return -EOPNOTSUPP;
}
