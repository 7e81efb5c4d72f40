/*
 * Co-visibility of two LIO backstores from configfs (src/daemon/covisible.c):
 * every TPG (and every ACL of it) that exports backstore A also exports B.
 * so_a / so_b name backstores as LIO's configfs does: "user_<hba>/<dev>".
 * Returns 1 (co-visible), 0 (not, or A exported nowhere), -errno.
 */
#ifndef VAAID_COVISIBLE_H
#define VAAID_COVISIBLE_H

int vd_covisible(const char *configfs_root, const char *so_a, const char *so_b);

#endif
