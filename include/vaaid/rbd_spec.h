/* "rbd:POOL/IMAGE" (src/io/rbd_spec.c): the pool and image names of an RBD store. */
#ifndef VAAID_RBD_SPEC_H
#define VAAID_RBD_SPEC_H

struct vblk_rbd_name {
	char pool[128];
	char image[96];
};
/* 0, or -EINVAL: not "rbd:POOL/IMAGE" with names free of control characters,
 * spaces, '/' and '@' (a snapshot), "." and "..", and short enough. */
int vblk_rbd_parse(const char *spec, struct vblk_rbd_name *out);

#endif
