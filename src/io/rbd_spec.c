/*
 * The name of an RBD store: "rbd:POOL/IMAGE" (vaaictl pool create, vaaid.conf,
 * the pool's path). Parsed here for both builds (with or without librbd).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vaaid/io.h"
#include "vaaid/rbd_spec.h"

bool vblk_rbd_spec(const char *path) { return path && !strncmp(path, "rbd:", 4); }

static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && !strncmp(s, "..", 2)))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == '/' || s[i] == '@' || s[i] == 0x7f)
			return false;
	return true;
}

int vblk_rbd_parse(const char *spec, struct vblk_rbd_name *out)
{
	if (!vblk_rbd_spec(spec))
		return -EINVAL;
	const char *p = spec + 4, *slash = strchr(p, '/');
	if (!slash)
		return -EINVAL;
	size_t pl = (size_t)(slash - p), il = strlen(slash + 1);
	if (!name_ok(p, pl) || !name_ok(slash + 1, il) || pl >= sizeof(out->pool) ||
	    il >= sizeof(out->image))
		return -EINVAL;
	memcpy(out->pool, p, pl);
	out->pool[pl] = 0;
	memcpy(out->image, slash + 1, il + 1);
	return 0;
}
