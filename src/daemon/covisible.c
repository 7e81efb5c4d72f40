/*
 * Co-visibility of two LIO backstores, read from configfs: the rule that lets
 * EXTENDED COPY name another LUN (docs/xcopy.md, policy xcopy_scope=covisible).
 *
 * How this works: TCMU does not tell us which initiator sent a command, so we
 * cannot ask "may this initiator read that LUN?". Instead: LUN B may be used
 * by a copy received on LUN A only if everything that exports A also exports
 * B. Walking target/<fabric>/<wwn>/tpgt_N:
 *   - a TPG exports a backstore when one of its lun/lun_M directories holds a
 *     symlink to core/<hba>/<dev>;
 *   - an ACL acls/<initiator>/lun_K maps TPG LUN lun_M through a symlink.
 * For every TPG that exports A, the TPG must export B, and every ACL of that
 * TPG that maps A's LUN must also map one of B's LUNs. (With
 * generate_node_acls=1 every initiator sees every TPG LUN, which the first
 * condition covers.) A backstore exported nowhere is not co-visible with
 * anything. Symlink targets are compared by their final two path components
 * ("user_<hba>/<dev>"), which is how LIO names them.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
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

/* Does the symlink at path point to core/<so>? (so = "user_<hba>/<dev>") */
static bool link_is(const char *path, const char *so)
{
	char t[PATH_MAX];
	ssize_t n = readlink(path, t, sizeof(t) - 1);
	if (n <= 0)
		return false;
	t[n] = 0;
	size_t l = strlen(so), tl = (size_t)n;
	return tl >= l && !strcmp(t + tl - l, so) && (tl == l || t[tl - l - 1] == '/');
}

/* First symlink inside dir pointing to so: 1 / 0. */
static int dir_links_to(const char *dir, const char *so)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	int found = 0;
	char p[PATH_MAX];
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (!join(p, sizeof(p), dir, e->d_name))
			continue;
		found = link_is(p, so);
	}
	closedir(d);
	return found;
}

/* Names of the TPG LUNs (lun_M) exporting so, as a bitmap over M < 1024. */
struct lunset {
	unsigned char bits[128];
	bool any;
};

static void tpg_luns(const char *tpg, const char *so, struct lunset *out)
{
	memset(out, 0, sizeof(*out));
	char dir[PATH_MAX];
	if (!join(dir, sizeof(dir), tpg, "lun"))
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	unsigned m;
	char p[PATH_MAX];
	while ((e = readdir(d))) {
		if (sscanf(e->d_name, "lun_%u", &m) != 1 || m >= 1024)
			continue;
		if (!join(p, sizeof(p), dir, e->d_name))
			continue;
		if (dir_links_to(p, so)) {
			out->bits[m / 8] |= (unsigned char)(1u << (m % 8));
			out->any = true;
		}
	}
	closedir(d);
}

static bool in_set(const struct lunset *s, unsigned m)
{
	return m < 1024 && (s->bits[m / 8] >> (m % 8)) & 1;
}

/* Does ACL lun_K directory map a TPG LUN in set s? */
static bool acl_lun_maps(const char *acl_lun_dir, const struct lunset *s)
{
	DIR *d = opendir(acl_lun_dir);
	if (!d)
		return false;
	struct dirent *e;
	bool hit = false;
	char p[PATH_MAX], t[PATH_MAX];
	while (!hit && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (!join(p, sizeof(p), acl_lun_dir, e->d_name))
			continue;
		ssize_t n = readlink(p, t, sizeof(t) - 1);
		if (n <= 0)
			continue;
		t[n] = 0;
		const char *last = strrchr(t, '/');
		unsigned m;
		if (last && sscanf(last + 1, "lun_%u", &m) == 1)
			hit = in_set(s, m);
	}
	closedir(d);
	return hit;
}

/* Every ACL of the TPG mapping one of A's LUNs also maps one of B's. */
static bool acls_ok(const char *tpg, const struct lunset *a, const struct lunset *b)
{
	char dir[PATH_MAX];
	if (!join(dir, sizeof(dir), tpg, "acls"))
		return true;
	DIR *d = opendir(dir);
	if (!d)
		return true;
	struct dirent *e;
	bool ok = true;
	char ad[PATH_MAX], ld[PATH_MAX];
	while (ok && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (!join(ad, sizeof(ad), dir, e->d_name))
			continue;
		DIR *ld_dir = opendir(ad);
		if (!ld_dir)
			continue;
		bool maps_a = false, maps_b = false;
		struct dirent *le;
		while ((le = readdir(ld_dir))) {
			if (strncmp(le->d_name, "lun_", 4))
				continue;
			if (!join(ld, sizeof(ld), ad, le->d_name))
				continue;
			maps_a = maps_a || acl_lun_maps(ld, a);
			maps_b = maps_b || acl_lun_maps(ld, b);
		}
		closedir(ld_dir);
		if (maps_a && !maps_b)
			ok = false;
	}
	closedir(d);
	return ok;
}

int vd_covisible(const char *configfs_root, const char *so_a, const char *so_b)
{
	char root[PATH_MAX];
	if (!join(root, sizeof(root), configfs_root, "target"))
		return -ENAMETOOLONG;
	DIR *fabrics = opendir(root);
	if (!fabrics)
		return -errno;
	bool exported = false, ok = true;
	struct dirent *f;
	char fd[PATH_MAX], wd[PATH_MAX], td[PATH_MAX];
	while (ok && (f = readdir(fabrics))) {
		if (f->d_name[0] == '.' || !strcmp(f->d_name, "core"))
			continue;
		if (!join(fd, sizeof(fd), root, f->d_name))
			continue;
		DIR *wwns = opendir(fd);
		if (!wwns)
			continue;
		struct dirent *w;
		while (ok && (w = readdir(wwns))) {
			if (w->d_name[0] == '.')
				continue;
			if (!join(wd, sizeof(wd), fd, w->d_name))
				continue;
			DIR *tpgs = opendir(wd);
			if (!tpgs)
				continue;
			struct dirent *t;
			while (ok && (t = readdir(tpgs))) {
				if (strncmp(t->d_name, "tpgt_", 5))
					continue;
				if (!join(td, sizeof(td), wd, t->d_name))
					continue;
				struct lunset a, b;
				tpg_luns(td, so_a, &a);
				if (!a.any)
					continue;
				exported = true;
				tpg_luns(td, so_b, &b);
				ok = b.any && acls_ok(td, &a, &b);
			}
			closedir(tpgs);
		}
		closedir(wwns);
	}
	closedir(fabrics);
	return exported && ok;
}
