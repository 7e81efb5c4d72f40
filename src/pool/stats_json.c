/*
 * A pool's space accounting as JSON, one definition for every reporter
 * (vaai-sim `stats`, vaaictl status --json, the control socket):
 *   {"pool":{"size","capacity","extent","used","free","sharing_savings","hydrating"},
 *    "volumes":[{"name","size","block_size","mapped","unshared","exclusive","shared"}]}
 * size = backing store bytes, capacity = bytes available for data extents,
 * used + free = capacity, mapped = bytes of extents a volume references,
 * unshared = the part of mapped whose extents only this reference holds,
 * exclusive = bytes of extents all of whose references the volume holds (what
 * deleting it frees; XCOPY inside a volume keeps an extent exclusive, not
 * unshared), shared = mapped minus the bytes of its entries on those extents,
 * sharing_savings = bytes the pool would need more without extent sharing
 * (sum over extents of (map references - 1) x extent size), hydrating = bytes
 * of redirected extents that still read part of their data from the shared
 * extent they were redirected from (both are allocated until hydration ends).
 */
#include <json-c/json.h>

#include "vaaid/pool.h"

/* A backing store's I/O (struct vblk_stats). */
static json_object *io_json(const struct vblk_stats *io)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "read_ops", json_object_new_uint64(io->read_ops));
	json_object_object_add(o, "write_ops", json_object_new_uint64(io->write_ops));
	json_object_object_add(o, "flush_ops", json_object_new_uint64(io->flush_ops));
	json_object_object_add(o, "bytes_read", json_object_new_uint64(io->bytes_read));
	json_object_object_add(o, "bytes_written", json_object_new_uint64(io->bytes_written));
	json_object_object_add(o, "discard_ops", json_object_new_uint64(io->discard_ops));
	json_object_object_add(o, "bytes_discarded", json_object_new_uint64(io->bytes_discarded));
	json_object_object_add(o, "read_ns", json_object_new_uint64(io->read_ns));
	json_object_object_add(o, "write_ns", json_object_new_uint64(io->write_ns));
	json_object_object_add(o, "group_flushes", json_object_new_uint64(io->dsync_flushes));
	json_object_object_add(o, "grouped_writes", json_object_new_uint64(io->grouped_writes));
	return o;
}

json_object *vpool_counters_json(const struct vpool *p)
{
	struct vpool_stats st;
	vpool_get_stats(p, &st);
	json_object *cj = json_object_new_object();
	json_object_object_add(cj, "journal_commits", json_object_new_uint64(st.journal_commits));
	json_object_object_add(cj, "journal_records", json_object_new_uint64(st.journal_records));
	json_object_object_add(cj, "journal_bytes", json_object_new_uint64(st.journal_bytes));
	json_object_object_add(cj, "checkpoints", json_object_new_uint64(st.checkpoints));
	json_object_object_add(cj, "checkpoint_ns", json_object_new_uint64(st.checkpoint_ns));
	json_object_object_add(cj, "share_room_refused", json_object_new_uint64(st.share_room_refused));
	json_object_object_add(cj, "store_io", io_json(&st.store_io));
	if (st.journal_file)
		json_object_object_add(cj, "journal_io", io_json(&st.journal_io));
	return cj;
}

json_object *vpool_stats_json(const struct vpool *p)
{
	struct vpool_stats st;
	vpool_get_stats(p, &st);
	json_object *o = json_object_new_object();
	json_object *pj = json_object_new_object();
	json_object_object_add(pj, "size", json_object_new_uint64(st.size));
	json_object_object_add(pj, "capacity", json_object_new_uint64(st.capacity));
	json_object_object_add(pj, "extent", json_object_new_uint64(st.extent));
	json_object_object_add(pj, "used", json_object_new_uint64(st.used));
	json_object_object_add(pj, "free", json_object_new_uint64(st.free));
	json_object_object_add(pj, "sharing_savings", json_object_new_uint64(st.sharing_savings));
	json_object_object_add(pj, "hydrating", json_object_new_uint64(st.hydrating));
	json_object_object_add(o, "pool", pj);
	json_object *vols = json_object_new_array();
	for (unsigned i = 0; i < vpool_volume_count(p); i++) {
		struct vvol_info vi;
		vvol_get_info(vpool_volume_at(p, i), &vi);
		json_object *vj = json_object_new_object();
		json_object_object_add(vj, "name", json_object_new_string(vi.name));
		json_object_object_add(vj, "size", json_object_new_uint64(vi.size));
		json_object_object_add(vj, "block_size", json_object_new_uint64(vi.block_size));
		json_object_object_add(vj, "mapped", json_object_new_uint64(vi.mapped));
		json_object_object_add(vj, "unshared", json_object_new_uint64(vi.unshared));
		json_object_object_add(vj, "exclusive", json_object_new_uint64(vi.exclusive));
		json_object_object_add(vj, "shared", json_object_new_uint64(vi.shared));
		json_object_array_add(vols, vj);
	}
	json_object_object_add(o, "volumes", vols);
	return o;
}
