/*
 * A LUN's command counters as JSON (include/vaaid/lun_stats.h): the one
 * snapshot format every view of them prints (vaai-sim's `lunstats`, and the
 * daemon's views to come). Names follow the counters; docs/observability.md
 * maps them to esxtop's fields.
 */
#include <json-c/json.h>

#include "vaaid/handlers.h"

static const char *const kind_name[VSTAT_KINDS] = {
	[VSTAT_READ] = "read",
	[VSTAT_WRITE] = "write",
	[VSTAT_VERIFY] = "verify",
	[VSTAT_SYNC] = "sync",
	[VSTAT_XCOPY] = "xcopy",
	[VSTAT_CAW] = "caw",
	[VSTAT_WRITE_SAME] = "write_same",
	[VSTAT_UNMAP] = "unmap",
	[VSTAT_GET_LBA_STATUS] = "get_lba_status",
	[VSTAT_OTHER] = "other",
};

static const char *const ua_name[VSTAT_UAS] = {
	[VSTAT_UA_CAPACITY_CHANGED] = "capacity_changed",
	[VSTAT_UA_MODE_CHANGED] = "mode_changed",
	[VSTAT_UA_INQUIRY_CHANGED] = "inquiry_changed",
	[VSTAT_UA_THRESHOLD] = "threshold",
	[VSTAT_UA_OTHER] = "other",
};

const char *vstat_kind_name(enum vstat_kind k) { return k < VSTAT_KINDS ? kind_name[k] : "?"; }
const char *vstat_ua_name(enum vstat_ua u) { return u < VSTAT_UAS ? ua_name[u] : "?"; }

static void put(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static json_object *lat_json(const struct vstat_lat *l)
{
	json_object *o = json_object_new_object();
	put(o, "count", l->count);
	put(o, "sum_ns", l->sum_ns);
	json_object *b = json_object_new_array();
	for (unsigned i = 0; i < VSTAT_BUCKETS; i++)
		json_object_array_add(b, json_object_new_uint64(l->bucket[i]));
	json_object_object_add(o, "buckets", b); /* bucket i: below 2^(i+10) ns; last: the rest */
	return o;
}

json_object *vaai_lun_stats_json(const struct vaai_lun_stats *st)
{
	json_object *o = json_object_new_object();
	json_object *cmds = json_object_new_object();
	for (unsigned k = 0; k < VSTAT_KINDS; k++) {
		const struct vstat_cmd *c = &st->cmd[k];
		json_object *e = json_object_new_object();
		put(e, "ok", c->ok);
		put(e, "failed", c->failed);
		put(e, "bytes", c->bytes);
		json_object_object_add(e, "latency_ok", lat_json(&c->lat_ok));
		json_object_object_add(e, "latency_failed", lat_json(&c->lat_failed));
		json_object_object_add(cmds, kind_name[k], e);
	}
	json_object_object_add(o, "commands", cmds);
	json_object *x = json_object_new_object();
	put(x, "src_bytes", st->xcopy_src_bytes);
	put(x, "dst_bytes", st->xcopy_dst_bytes);
	put(x, "shared_bytes", st->xcopy_shared_bytes);
	put(x, "copied_bytes", st->xcopy_copied_bytes);
	json_object_object_add(o, "xcopy", x);
	json_object *caw = json_object_new_object();
	put(caw, "miscompares", st->caw_miscompares);
	json_object_object_add(o, "caw", caw);
	json_object *ws = json_object_new_object();
	put(ws, "zero", st->ws_zero);
	put(ws, "pattern", st->ws_pattern);
	put(ws, "unmap_bit", st->ws_unmap_bit);
	put(ws, "zero_bytes", st->ws_zero_bytes);
	put(ws, "pattern_bytes", st->ws_pattern_bytes);
	put(ws, "deallocated_bytes", st->ws_deallocated_bytes);
	json_object_object_add(o, "write_same", ws);
	json_object *um = json_object_new_object();
	put(um, "descriptors", st->unmap_descriptors);
	put(um, "bytes", st->unmap_bytes);
	put(um, "deallocated_bytes", st->unmap_deallocated_bytes);
	json_object_object_add(o, "unmap", um);
	put(o, "out_of_space", st->out_of_space);
	json_object *ua = json_object_new_object();
	for (unsigned u = 0; u < VSTAT_UAS; u++)
		put(ua, ua_name[u], st->ua_posted[u]);
	json_object_object_add(o, "unit_attentions", ua);
	put(o, "inflight", st->inflight);
	put(o, "inflight_max", st->inflight_max);
	return o;
}
