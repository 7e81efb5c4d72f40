/*
 * The control socket's `stats [POOL[/VOLUME]]` request (issue 25): the
 * command counters of every served LUN (include/vaaid/lun_stats.h), and per
 * pool its space and counters (vpool_stats_json's "pool" object) with the sum
 * of its LUNs' counters. POOL: that pool and its LUNs only; POOL/VOLUME: the
 * LUN of that volume and its pool. The one snapshot of the counters is
 * vaai_lun_stats_json; the answer is
 *   {"ok":true,"luns":[{"dev","pool","volume","uio","stats":{...}}...],
 *    "pools":[{"name","pool":{...},"luns":N,"lun_sum":{...}}...]}
 * Runs on the main loop (the reactor's thread), where the counters change.
 */
#include <string.h>

#include <json-c/json.h>

#include "vaaid/control_request.h"

/* POOL or POOL/VOLUME split into its parts (volume NULL for a pool alone). */
static bool split_target(char *w, char **pool, char **volume)
{
	char *slash = strchr(w, '/');
	*pool = w;
	*volume = NULL;
	if (slash) {
		*slash = 0;
		*volume = slash + 1;
		if (!**volume || strchr(*volume, '/'))
			return false;
	}
	return **pool != 0;
}

struct json_object *vd_control_stats(const struct vd_control_env *c, char **tok, int nt)
{
	if (nt > 2)
		return vd_control_error("usage: stats [POOL[/VOLUME]]");
	char *want_pool = NULL, *want_vol = NULL;
	if (nt == 2 && !split_target(tok[1], &want_pool, &want_vol))
		return vd_control_error("bad stats target '%s' (POOL or POOL/VOLUME)", tok[1]);
	struct vd_pool *wp = want_pool ? vd_pool_find(c->pools, want_pool) : NULL;
	if (want_pool && !wp)
		return vd_control_error("unknown pool '%s'", want_pool);
	if (wp && wp->standby)
		return vd_control_error("pool '%s' is standby here (another gateway serves it)", want_pool);
	if (want_vol && !vpool_volume_find(wp->pool, want_vol))
		return vd_control_error("unknown volume '%s/%s'", want_pool, want_vol);

	json_object *luns = json_object_new_array();
	struct vaai_lun_stats sum[VD_MAX_POOLS];
	unsigned nluns[VD_MAX_POOLS] = {0};
	memset(sum, 0, sizeof(sum));
	struct vd_device_info info;
	struct vaai_lun_stats st;
	for (unsigned i = 0; c->devs && vd_device_stats(c->devs, i, &info, &st) == 0; i++) {
		if (want_pool && strcmp(info.pool, want_pool))
			continue;
		if (want_vol && strcmp(info.volume, want_vol))
			continue;
		for (unsigned k = 0; k < c->pools->n; k++)
			if (!strcmp(c->pools->p[k].name, info.pool)) {
				vaai_lun_stats_add(&sum[k], &st);
				nluns[k]++;
			}
		json_object *l = json_object_new_object();
		json_object_object_add(l, "dev", json_object_new_string(info.dev));
		json_object_object_add(l, "pool", json_object_new_string(info.pool));
		json_object_object_add(l, "volume", json_object_new_string(info.volume));
		json_object_object_add(l, "uio", json_object_new_uint64(info.minor));
		json_object_object_add(l, "stats", vaai_lun_stats_json(&st));
		json_object_array_add(luns, l);
	}
	json_object *pools = json_object_new_array();
	for (unsigned k = 0; k < c->pools->n; k++) {
		struct vd_pool *vp = &c->pools->p[k];
		if ((want_pool && vp != wp) || vp->standby) /* standby: nothing served here */
			continue;
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(vp->name));
		json_object *ps = vpool_stats_json(vp->pool), *pool;
		if (json_object_object_get_ex(ps, "pool", &pool)) {
			json_object_object_add(pool, "counters", vpool_counters_json(vp->pool));
			json_object_object_add(o, "pool", json_object_get(pool));
		}
		json_object_put(ps);
		json_object_object_add(o, "luns", json_object_new_uint64(nluns[k]));
		json_object_object_add(o, "lun_sum", vaai_lun_stats_json(&sum[k]));
		json_object_array_add(pools, o);
	}
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "luns", luns);
	json_object_object_add(o, "pools", pools);
	return o;
}
