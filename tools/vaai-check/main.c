/*
 * vaai-check POOL: verify a pool offline. Reads both superblocks, the
 * checkpoint (crc, refcounts against references), replays the journal in
 * memory (every record checked against the state it applies to) and checks
 * every invariant (vpool_verify, which also recounts the space accounting counters
 * from scratch and reports each that differs, src/pool/acct.c). A pool formatted with a journal file of its
 * own is checked with POOL.journal (docs/design.md rule 12). Writes nothing. Exit 0 when consistent,
 * 1 with one line per problem otherwise, 2 on usage errors.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vaaid/io.h"
#include "vaaid/pool.h"

int main(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: vaai-check POOL   (a pool file or block device)\n");
		return 2;
	}
	const char *path = argv[1];
	struct vreactor *r;
	int rc = vreactor_create(64, &r);
	if (rc < 0) {
		fprintf(stderr, "vaai-check: io_uring: %s\n", strerror(-rc));
		return 1;
	}
	struct vblk *dev;
	rc = vblk_uring_open_flags(r, path, 0, VBLK_OPEN_SHARED, &dev);
	if (rc < 0) {
		fprintf(stderr, "vaai-check: %s: cannot open: %s\n", path, strerror(-rc));
		vreactor_destroy(r);
		return 1;
	}
	struct vblk *jdev = NULL;
	char jpath[4096];
	if (vpool_store_has_journal_file(dev) == 1 &&
	    vpool_journal_path(path, jpath, sizeof(jpath)) == 0) {
		rc = vblk_uring_open_flags(r, jpath, 0, VBLK_OPEN_SHARED, &jdev);
		if (rc < 0)
			fprintf(stderr, "vaai-check: %s: cannot open the pool's journal file: %s\n",
				jpath, strerror(-rc)); /* the open below names the problem too */
	}
	struct vpool *p;
	struct vpool_open_report rep = {0};
	rc = vpool_open_stores(dev, jdev, VPOOL_OPEN_READONLY, &p, &rep);
	if (rc < 0) {
		/* rep.error names the problem when the pool layer knows it */
		fprintf(stderr, "vaai-check: %s: %s%s\n", path,
			rc == -EUCLEAN ? "metadata is inconsistent: " : "",
			rep.error[0] ? rep.error : strerror(-rc));
		vblk_close(jdev);
		vblk_close(dev);
		vreactor_destroy(r);
		return 1;
	}
	int bad = vpool_verify(p, stderr);
	struct vpool_stats st;
	vpool_get_stats(p, &st);
	printf("%s: %u volume(s), %llu of %llu bytes used, journal replayed %llu commit(s) / %llu record(s)",
	       path, vpool_volume_count(p), (unsigned long long)st.used,
	       (unsigned long long)st.capacity, (unsigned long long)rep.commits,
	       (unsigned long long)rep.records);
	if (rep.data_bytes) /* an open for writing writes them home (docs/design.md rule 11) */
		printf(" holding %llu byte(s) of small writes", (unsigned long long)rep.data_bytes);
	printf(": %s\n", bad ? "INCONSISTENT" : "consistent");
	vpool_abandon(p);
	vblk_close(jdev);
	vblk_close(dev);
	vreactor_destroy(r);
	return bad ? 1 : 0;
}
