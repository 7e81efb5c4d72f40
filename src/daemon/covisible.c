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
 * ("user_<hba>/<dev>"), which is how LIO names them. A TPG's own entries are
 * sorted by LUN number once read, so each ACL link is looked up by binary
 * search. vd_covisible (the daemon asks it on the reactor thread, per copy
 * segment naming another LUN) reads only what can matter for A and B: a TPG
 * that does not export A is skipped with its ACLs (no view of it sees A), a
 * view that does not see A is dropped, an ACL is read only until it is seen
 * to map both, and the first view that sees A but not B ends the walk (not
 * co-visible) -- the same answer as the full read, for no more reading than
 * the rule needs.
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

/* vd_covisible's early end: a view sees A but not B. */
#define NOT_COVISIBLE 1
/* vd_covisible: the ACL being read sees A and B, the rest of it cannot matter. */
#define ACL_SEES_BOTH 2

struct walk {
	struct vd_views *v;
	unsigned view;
	size_t tpg0, tpg1; /* the TPG's own entries: v->e[tpg0, tpg1), sorted by lun */
	const char *a, *b; /* vd_covisible: the two backstores; NULL: read everything */
	bool acl_a, acl_b; /* vd_covisible: the ACL being read sees A, B */
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
	/* the first of the TPG's entries with lun >= m */
	size_t lo = w->tpg0, hi = w->tpg1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v->e[mid].lun < m)
			lo = mid + 1;
		else
			hi = mid;
	}
	int rc = 0;
	/* add() may move the array, not the strings: index, and so taken before the call */
	for (size_t i = lo; !rc && i < w->tpg1 && v->e[i].lun == m; i++) {
		rc = add(v, w->view, NO_LUN, v->e[i].so);
		if (w->a) {
			w->acl_a = w->acl_a || !strcmp(v->e[i].so, w->a);
			w->acl_b = w->acl_b || !strcmp(v->e[i].so, w->b);
		}
	}
	return !rc && w->a && w->acl_a && w->acl_b ? ACL_SEES_BOTH : rc;
}

static int by_lun(const void *x, const void *y)
{
	unsigned a = ((const struct seen *)x)->lun, b = ((const struct seen *)y)->lun;
	return (a > b) - (a < b);
}

static bool range_sees(const struct vd_views *v, size_t from, const char *so)
{
	for (size_t i = from; i < v->n; i++)
		if (!strcmp(v->e[i].so, so))
			return true;
	return false;
}

static void truncate_views(struct vd_views *v, size_t n)
{
	while (v->n > n)
		free(v->e[--v->n].so);
}

/*
 * The view just read (entries from `from` on), for vd_covisible: kept (0) when it
 * sees A and B, dropped (0) when it does not see A, NOT_COVISIBLE when it sees A
 * but not B. Full read (no filter): kept.
 */
static int judge_view(struct walk *w, size_t from)
{
	if (!w->a)
		return 0;
	if (!range_sees(w->v, from, w->a)) {
		truncate_views(w->v, from);
		return 0;
	}
	return range_sees(w->v, from, w->b) ? 0 : NOT_COVISIBLE;
}

/* A TPG is a view of the backstores it exports; each of its ACLs is a view of
 * the backstores behind the TPG LUNs mapped to that initiator. */
static int read_tpg(struct walk *w, const char *tpg)
{
	struct vd_views *v = w->v;
	char dir[PATH_MAX], ad[PATH_MAX];
	w->view = v->next_view++;
	w->tpg0 = v->n;
	int rc = join(dir, sizeof(dir), tpg, "lun") ? each_lun_entry(dir, tpg_lun_entry, w) : 0;
	if (rc)
		return rc;
	w->tpg1 = v->n;
	/* vd_covisible: no view of a TPG that does not export A sees A (an ACL sees
	 * only what its TPG exports) */
	if (w->a && !range_sees(v, w->tpg0, w->a)) {
		truncate_views(v, w->tpg0);
		return 0;
	}
	rc = judge_view(w, w->tpg0);
	if (rc || !join(dir, sizeof(dir), tpg, "acls"))
		return rc;
	qsort(v->e + w->tpg0, w->tpg1 - w->tpg0, sizeof(*v->e), by_lun);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !join(ad, sizeof(ad), dir, e->d_name))
			continue;
		w->view = v->next_view++;
		w->acl_a = w->acl_b = false;
		size_t from = v->n;
		rc = each_lun_entry(ad, acl_lun_entry, w);
		if (rc == ACL_SEES_BOTH)
			rc = 0; /* kept: it sees A and B */
		else if (!rc)
			rc = judge_view(w, from);
	}
	closedir(d);
	return rc;
}

/* Every target/<fabric>/<wwn>/tpgt_N under root (fabric "core" is the backstores):
 * 0, NOT_COVISIBLE (vd_covisible's early end) or -errno. */
static int read_fabrics(struct walk *wk, const char *root)
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
				rc = read_tpg(wk, td);
			}
			closedir(tpgs);
		}
		closedir(wwns);
	}
	closedir(fabrics);
	return rc;
}

/* The views under configfs_root, all of them (a, b NULL) or those vd_covisible needs:
 * 0 and *out, NOT_COVISIBLE (nothing in *out), or -errno. */
static int read_views(const char *configfs_root, const char *a, const char *b,
		      struct vd_views **out)
{
	char root[PATH_MAX];
	if (!join(root, sizeof(root), configfs_root, "target"))
		return -ENAMETOOLONG;
	struct walk w = {.v = vd_views_new(), .a = a, .b = b};
	if (!w.v)
		return -ENOMEM;
	int rc = read_fabrics(&w, root);
	if (rc) {
		vd_views_free(w.v);
		return rc;
	}
	*out = w.v;
	return 0;
}

int vd_views_read(const char *configfs_root, struct vd_views **out)
{
	return read_views(configfs_root, NULL, NULL, out);
}

int vd_covisible(const char *configfs_root, const char *so_a, const char *so_b)
{
	struct vd_views *v;
	int rc = read_views(configfs_root, so_a, so_b, &v);
	if (rc)
		return rc == NOT_COVISIBLE ? 0 : rc;
	/* the views kept all see A and B: co-visible if there is one (the rule, as
	 * over a full read) */
	rc = vd_views_covisible(v, so_a, so_b);
	vd_views_free(v);
	return rc;
}
