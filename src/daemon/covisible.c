/*
 * Co-visibility of two LIO backstores: the rule that lets EXTENDED COPY name
 * another LUN (docs/xcopy.md, policy xcopy_scope=covisible), and the facts it
 * is decided on, read from configfs.
 *
 * How this works: TCMU does not tell us which initiator sent a command, so we
 * cannot ask "may this initiator read that LUN?". Instead: LUN B may be used
 * by a copy received on LUN A only if everything that exports A also exports
 * B. The facts are views (include/vaaid/covisible.h): each TPG is one, seeing
 * every backstore it exports, and each ACL of a TPG is one, seeing the
 * backstores of the TPG LUNs mapped to it. The rule: every view that sees A
 * sees B, and some view sees A (a backstore exported nowhere is co-visible
 * with nothing). With generate_node_acls=1 every initiator sees every TPG
 * LUN, which the TPG's own view covers.
 *
 * Reading them, walking target/<fabric>/<wwn>/tpgt_N:
 *   - a TPG exports a backstore when one of its lun/lun_M directories holds a
 *     symlink to core/<hba>/<dev>;
 *   - an ACL acls/<initiator>/lun_K maps TPG LUN lun_M through a symlink.
 * Backstores are named by the final two components of the symlink's target
 * ("user_<hba>/<dev>"), which is how LIO names them.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vaaid/covisible.h"

/* out = a + "/" + b; false when it does not fit (such a path is skipped). */
static bool join(char *out, size_t len, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la + 1 + lb + 1 > len)
		return false;
	memcpy(out, a, la);
	out[la] = '/';
	memcpy(out + la + 1, b, lb + 1);
	return true;
}

/* ---- the views: (view, backstore) pairs; lun is the TPG LUN number (lun_M) for a
 * TPG's own entries, NO_LUN for an ACL's */

#define NO_LUN UINT_MAX

struct seen {
	unsigned view, lun;
	char *so;
};

struct vd_views {
	struct seen *e;
	size_t n, cap;
	unsigned next_view; /* vd_views_read: the next view number */
};

struct vd_views *vd_views_new(void) { return calloc(1, sizeof(struct vd_views)); }

void vd_views_free(struct vd_views *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++)
		free(v->e[i].so);
	free(v->e);
	free(v);
}

static int add(struct vd_views *v, unsigned view, unsigned lun, const char *so)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 16;
		struct seen *e = realloc(v->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		v->e = e;
		v->cap = cap;
	}
	char *copy = strdup(so);
	if (!copy)
		return -ENOMEM;
	v->e[v->n++] = (struct seen){.view = view, .lun = lun, .so = copy};
	return 0;
}

int vd_views_add(struct vd_views *v, unsigned view, const char *so)
{
	return add(v, view, NO_LUN, so);
}

static bool sees(const struct vd_views *v, unsigned view, const char *so)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->e[i].view == view && !strcmp(v->e[i].so, so))
			return true;
	return false;
}

int vd_views_covisible(const struct vd_views *v, const char *so_a, const char *so_b)
{
	bool exported = false;
	for (size_t i = 0; i < v->n; i++) {
		if (strcmp(v->e[i].so, so_a))
			continue;
		exported = true;
		if (!sees(v, v->e[i].view, so_b))
			return 0;
	}
	return exported;
}

/* ---- reading them from configfs */

/* The backstore a symlink at path points to: the target's last two components
 * ("user_<hba>/<dev>", as core/<hba>/<dev> ends). false when path is no symlink. */
static bool link_backstore(const char *path, char *so, size_t len)
{
	char t[PATH_MAX];
	ssize_t n = readlink(path, t, sizeof(t) - 1);
	if (n <= 0)
		return false;
	t[n] = 0;
	char *last = strrchr(t, '/'), *start = t;
	if (last) {
		*last = 0;
		char *prev = strrchr(t, '/');
		*last = '/';
		start = prev ? prev + 1 : t;
	}
	snprintf(so, len, "%s", start);
	return true;
}

/* The TPG LUN number M of a symlink to .../lun/lun_M (an ACL's mapped LUN). */
static bool link_tpg_lun(const char *path, unsigned *m)
{
	char t[PATH_MAX];
	ssize_t n = readlink(path, t, sizeof(t) - 1);
	if (n <= 0)
		return false;
	t[n] = 0;
	const char *last = strrchr(t, '/');
	return last && sscanf(last + 1, "lun_%u", m) == 1;
}

/*
 * For every entry of every dir/lun_N directory (N a number): fn(arg, N, its
 * path). Stops at fn's first error and returns it.
 */
static int each_lun_entry(const char *dir, int (*fn)(void *arg, unsigned n, const char *path),
			  void *arg)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e, *l;
	unsigned n;
	int rc = 0;
	char ld[PATH_MAX], p[PATH_MAX];
	while (!rc && (e = readdir(d))) {
		if (sscanf(e->d_name, "lun_%u", &n) != 1 || !join(ld, sizeof(ld), dir, e->d_name))
			continue;
		DIR *lun = opendir(ld);
		if (!lun)
			continue;
		while (!rc && (l = readdir(lun))) {
			if (l->d_name[0] != '.' && join(p, sizeof(p), ld, l->d_name))
				rc = fn(arg, n, p);
		}
		closedir(lun);
	}
	closedir(d);
	return rc;
}

struct walk {
	struct vd_views *v;
	unsigned view, tpg_view;
};

/* In a TPG's lun/lun_M: a symlink to the backstore the TPG exports as LUN M. */
static int tpg_lun_entry(void *arg, unsigned m, const char *path)
{
	struct walk *w = arg;
	char so[PATH_MAX];
	return link_backstore(path, so, sizeof(so)) ? add(w->v, w->view, m, so) : 0;
}

/* In an ACL's lun_K: a symlink to the TPG LUN lun_M mapped to the initiator as K. */
static int acl_lun_entry(void *arg, unsigned k, const char *path)
{
	struct walk *w = arg;
	struct vd_views *v = w->v;
	unsigned m;
	(void)k;
	if (!link_tpg_lun(path, &m))
		return 0;
	int rc = 0;
	for (size_t i = 0; !rc && i < v->n; i++) {
		if (v->e[i].view != w->tpg_view || v->e[i].lun != m)
			continue;
		char *so = strdup(v->e[i].so); /* add() may move the array */
		rc = so ? add(v, w->view, NO_LUN, so) : -ENOMEM;
		free(so);
	}
	return rc;
}

/* A TPG is a view of the backstores it exports; each of its ACLs is a view of
 * the backstores behind the TPG LUNs mapped to that initiator. */
static int read_tpg(struct vd_views *v, const char *tpg)
{
	struct walk w = {.v = v, .view = v->next_view++};
	char dir[PATH_MAX], ad[PATH_MAX];
	int rc = join(dir, sizeof(dir), tpg, "lun") ? each_lun_entry(dir, tpg_lun_entry, &w) : 0;
	if (rc < 0 || !join(dir, sizeof(dir), tpg, "acls"))
		return rc;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	w.tpg_view = w.view;
	while (!rc && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !join(ad, sizeof(ad), dir, e->d_name))
			continue;
		w.view = v->next_view++;
		rc = each_lun_entry(ad, acl_lun_entry, &w);
	}
	closedir(d);
	return rc;
}

/* Every target/<fabric>/<wwn>/tpgt_N under root (fabric "core" is the backstores). */
static int read_fabrics(struct vd_views *v, const char *root)
{
	DIR *fabrics = opendir(root);
	if (!fabrics)
		return -errno;
	int rc = 0;
	struct dirent *f, *w, *t;
	char fd[PATH_MAX], wd[PATH_MAX], td[PATH_MAX];
	while (!rc && (f = readdir(fabrics))) {
		if (f->d_name[0] == '.' || !strcmp(f->d_name, "core") ||
		    !join(fd, sizeof(fd), root, f->d_name))
			continue;
		DIR *wwns = opendir(fd);
		if (!wwns)
			continue;
		while (!rc && (w = readdir(wwns))) {
			if (w->d_name[0] == '.' || !join(wd, sizeof(wd), fd, w->d_name))
				continue;
			DIR *tpgs = opendir(wd);
			if (!tpgs)
				continue;
			while (!rc && (t = readdir(tpgs))) {
				if (strncmp(t->d_name, "tpgt_", 5) || !join(td, sizeof(td), wd, t->d_name))
					continue;
				rc = read_tpg(v, td);
			}
			closedir(tpgs);
		}
		closedir(wwns);
	}
	closedir(fabrics);
	return rc;
}

int vd_views_read(const char *configfs_root, struct vd_views **out)
{
	char root[PATH_MAX];
	if (!join(root, sizeof(root), configfs_root, "target"))
		return -ENAMETOOLONG;
	struct vd_views *v = vd_views_new();
	if (!v)
		return -ENOMEM;
	int rc = read_fabrics(v, root);
	if (rc < 0) {
		vd_views_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

int vd_covisible(const char *configfs_root, const char *so_a, const char *so_b)
{
	struct vd_views *v;
	int rc = vd_views_read(configfs_root, &v);
	if (rc < 0)
		return rc;
	rc = vd_views_covisible(v, so_a, so_b);
	vd_views_free(v);
	return rc;
}
