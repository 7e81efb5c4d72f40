/*
 * Co-visibility of two LIO backstores (src/daemon/covisible.c): the facts
 * ("views": who sees which backstores) and the rule over them. Backstores are
 * named as LIO's configfs names them: "user_<hba>/<dev>".
 *
 * A view is one TPG (every initiator it admits sees each of its LUNs) or one
 * ACL of a TPG (the LUNs mapped to that initiator). B is co-visible with A
 * when every view that sees A also sees B, and some view sees A.
 *
 * The daemon reads the views from configfs at the time of a copy
 * (vd_views_read, vd_covisible); simhost builds them from vaai-sim's
 * visibility groups (vd_views_add). Either way vd_views_covisible decides.
 */
#ifndef VAAID_COVISIBLE_H
#define VAAID_COVISIBLE_H

struct vd_views;

/* An empty set of views (NULL when out of memory). */
struct vd_views *vd_views_new(void);
void vd_views_free(struct vd_views *v);
/* View number `view` sees backstore so. 0 or -ENOMEM. */
int vd_views_add(struct vd_views *v, unsigned view, const char *so);
/* The views of LIO's configuration under configfs_root (target/<fabric>/<wwn>/tpgt_N). */
int vd_views_read(const char *configfs_root, struct vd_views **out);
/* 1 (B co-visible with A) or 0 (not, or A seen by no view). */
int vd_views_covisible(const struct vd_views *v, const char *so_a, const char *so_b);
/* vd_views_read then vd_views_covisible: 1, 0 or -errno. */
int vd_covisible(const char *configfs_root, const char *so_a, const char *so_b);

#endif
