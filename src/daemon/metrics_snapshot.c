/*
 * The copy of the counters a scrape is made from (include/vaaid/metrics.h,
 * struct vd_metrics_snapshot): the reactor fills one (src/daemon/main.c,
 * metrics_take: the LUNs' and pools' counters are copied there, which is
 * cheap), and the HTTP thread that asked formats it (vd_metrics_snapshot_text:
 * hundreds of lines per LUN) and frees it, so the reactor never formats text.
 * The snapshot owns everything it points to, names included.
 */
#include <stdlib.h>

#include "vaaid/metrics.h"

struct vd_metrics_snapshot *vd_metrics_snapshot_alloc(size_t nluns, size_t npools)
{
	struct vd_metrics_snapshot *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->luns = calloc(nluns ? nluns : 1, sizeof(*s->luns));
	s->pools = calloc(npools ? npools : 1, sizeof(*s->pools));
	s->nluns = nluns;
	s->npools = npools;
	if (!s->luns || !s->pools) {
		vd_metrics_snapshot_free(s);
		return NULL;
	}
	return s;
}

char *vd_metrics_snapshot_text(const void *snap, size_t *len)
{
	const struct vd_metrics_snapshot *s = snap;
	return vd_metrics_format(s->luns, s->nluns, s->pools, s->npools, len);
}

void vd_metrics_snapshot_free(void *snap)
{
	struct vd_metrics_snapshot *s = snap;
	if (!s)
		return;
	for (size_t i = 0; s->luns && i < s->nluns; i++) {
		free((char *)s->luns[i].pool);
		free((char *)s->luns[i].volume);
	}
	for (size_t i = 0; s->pools && i < s->npools; i++)
		free((char *)s->pools[i].name);
	free(s->luns);
	free(s->pools);
	free(s);
}
