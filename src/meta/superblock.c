/*
 * Superblock encoding and the two-copy update rule (see include/vaaid/meta.h).
 *
 * The block is little endian with fixed offsets; the crc32c covers the whole
 * 4 KiB block with the crc field (bytes 4092..4095) taken as zero. Writes
 * alternate between copy 0 and copy 1 by generation, so a torn superblock
 * write leaves the previous generation intact in the other copy; that older
 * copy names a checkpoint area and journal position that are still intact
 * because nothing is reclaimed until the new superblock is durable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vaaid/endian.h"
#include "vaaid/meta.h"
#include "vaaid/util.h"

#define CRC_OFF (VSB_SIZE - 4)

_Static_assert(VJF_HDR_SIZE == VSB_SIZE, "both header blocks keep their crc in the last 4 bytes");

/* crc32c of a 4 KiB header block (superblock or journal store header) whose
 * last 4 bytes (its crc field) are taken as zero. */
static uint32_t block_crc(const uint8_t *b)
{
	static const uint8_t zero[4];
	return vcrc32c(vcrc32c(0, b, CRC_OFF), zero, sizeof(zero));
}

/* Field offsets (bytes). */
enum {
	O_MAGIC = 0, O_VERSION = 8, O_COMPAT = 12, O_INCOMPAT = 16, O_ROCOMPAT = 20,
	O_UUID = 24, O_GEN = 40, O_DEVSIZE = 48, O_EXTENT = 56, O_GRANULE = 60,
	O_CKPT0 = 64, O_CKPT1 = 72, O_CKPTSIZE = 80, O_JOFF = 88, O_JSIZE = 96,
	O_DATAOFF = 104, O_NEXT = 112, O_CKACT = 120, O_CKSEQ = 128, O_CKLEN = 136,
	O_CKCRC = 144, O_JSTART = 152, O_JSEQ = 160,
};

void vsb_encode(const struct vsb *sb, uint8_t *b)
{
	memset(b, 0, VSB_SIZE);
	vput_le64(b + O_MAGIC, VSB_MAGIC);
	vput_le32(b + O_VERSION, sb->version);
	vput_le32(b + O_COMPAT, sb->compat);
	vput_le32(b + O_INCOMPAT, sb->incompat);
	vput_le32(b + O_ROCOMPAT, sb->ro_compat);
	memcpy(b + O_UUID, sb->uuid, 16);
	vput_le64(b + O_GEN, sb->generation);
	vput_le64(b + O_DEVSIZE, sb->dev_size);
	vput_le32(b + O_EXTENT, sb->extent_size);
	vput_le32(b + O_GRANULE, sb->granule);
	vput_le64(b + O_CKPT0, sb->ckpt_off[0]);
	vput_le64(b + O_CKPT1, sb->ckpt_off[1]);
	vput_le64(b + O_CKPTSIZE, sb->ckpt_size);
	vput_le64(b + O_JOFF, sb->journal_off);
	vput_le64(b + O_JSIZE, sb->journal_size);
	vput_le64(b + O_DATAOFF, sb->data_off);
	vput_le64(b + O_NEXT, sb->n_extents);
	vput_le32(b + O_CKACT, sb->ckpt_active);
	vput_le64(b + O_CKSEQ, sb->ckpt_seq);
	vput_le64(b + O_CKLEN, sb->ckpt_len);
	vput_le32(b + O_CKCRC, sb->ckpt_crc);
	vput_le64(b + O_JSTART, sb->journal_start);
	vput_le64(b + O_JSEQ, sb->journal_seq);
	vsb_seal(b);
}

void vsb_seal(uint8_t *b) { vput_le32(b + CRC_OFF, block_crc(b)); }

/*
 * A generation this large was never written (2^63 superblock writes): damage.
 * Below it the writer's bump (generation + 1) cannot wrap to 0, which would make
 * the copy it writes look older than the one it replaces, so that the next open
 * took the other, older copy, whose checkpoint area the writer has reused
 * (fuzz_superblock found it: a copy resealed with generation 2^64 - 1 opened,
 * and the pool vaaid closed did not open again).
 */
#define VSB_GEN_LIMIT (1ull << 63)

/* Geometry sanity: every region inside the device, in order, not overlapping. */
static int vsb_check_geometry(const struct vsb *sb)
{
	if (sb->generation >= VSB_GEN_LIMIT)
		return -EUCLEAN;
	if (!vis_pow2(sb->extent_size) || sb->extent_size < 65536 || sb->extent_size > (16u << 20))
		return -EUCLEAN;
	if (sb->granule != 4096 || sb->ckpt_active > 1)
		return -EUCLEAN;
	if (sb->ckpt_off[0] != 2 * VSB_SIZE || sb->ckpt_off[1] != sb->ckpt_off[0] + sb->ckpt_size)
		return -EUCLEAN;
	if (sb->journal_size < 16 * VJ_BLOCK || sb->journal_size % VJ_BLOCK)
		return -EUCLEAN;
	if (sb->incompat & VSB_INCOMPAT_JOURNAL_FILE) {
		/* The ring is in the journal store, after its header block. */
		if (sb->journal_off != VJF_HDR_SIZE ||
		    sb->data_off < sb->ckpt_off[1] + sb->ckpt_size)
			return -EUCLEAN;
	} else if (sb->journal_off != sb->ckpt_off[1] + sb->ckpt_size ||
		   sb->data_off < sb->journal_off + sb->journal_size) {
		return -EUCLEAN;
	}
	if (sb->data_off % sb->extent_size)
		return -EUCLEAN;
	if (sb->n_extents > (sb->dev_size - sb->data_off) / sb->extent_size ||
	    sb->data_off > sb->dev_size)
		return -EUCLEAN;
	if (sb->ckpt_len > sb->ckpt_size || sb->journal_start >= sb->journal_size ||
	    sb->journal_start % VJ_BLOCK)
		return -EUCLEAN;
	return 0;
}

int vsb_decode(const uint8_t *b, struct vsb *sb)
{
	if (vget_le64(b + O_MAGIC) != VSB_MAGIC)
		return -ENODATA;
	if (block_crc(b) != vget_le32(b + CRC_OFF))
		return -EBADMSG;
	memset(sb, 0, sizeof(*sb));
	sb->version = vget_le32(b + O_VERSION);
	sb->compat = vget_le32(b + O_COMPAT);
	sb->incompat = vget_le32(b + O_INCOMPAT);
	sb->ro_compat = vget_le32(b + O_ROCOMPAT);
	memcpy(sb->uuid, b + O_UUID, 16);
	sb->generation = vget_le64(b + O_GEN);
	sb->dev_size = vget_le64(b + O_DEVSIZE);
	sb->extent_size = vget_le32(b + O_EXTENT);
	sb->granule = vget_le32(b + O_GRANULE);
	sb->ckpt_off[0] = vget_le64(b + O_CKPT0);
	sb->ckpt_off[1] = vget_le64(b + O_CKPT1);
	sb->ckpt_size = vget_le64(b + O_CKPTSIZE);
	sb->journal_off = vget_le64(b + O_JOFF);
	sb->journal_size = vget_le64(b + O_JSIZE);
	sb->data_off = vget_le64(b + O_DATAOFF);
	sb->n_extents = vget_le64(b + O_NEXT);
	sb->ckpt_active = vget_le32(b + O_CKACT);
	sb->ckpt_seq = vget_le64(b + O_CKSEQ);
	sb->ckpt_len = vget_le64(b + O_CKLEN);
	sb->ckpt_crc = vget_le32(b + O_CKCRC);
	sb->journal_start = vget_le64(b + O_JSTART);
	sb->journal_seq = vget_le64(b + O_JSEQ);
	if (sb->version != VSB_VERSION)
		return -EPROTONOSUPPORT;
	if (sb->incompat & ~VSB_INCOMPAT_KNOWN)
		return -EPROTONOSUPPORT;
	return vsb_check_geometry(sb);
}

int vsb_read(struct vblk *dev, struct vsb *sb, int *which)
{
	uint8_t *buf = vblk_alloc_buf(2 * VSB_SIZE);
	if (!buf)
		return -ENOMEM;
	int rc = vblk_pread_sync(dev, buf, 2 * VSB_SIZE, 0);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	struct vsb c[2];
	int r0 = vsb_decode(buf, &c[0]);
	int r1 = vsb_decode(buf + VSB_SIZE, &c[1]);
	free(buf);
	/* The writers put generation g in copy g % 2 (vsb_write, vsb_submit; format
	 * writes 1 then 2): a copy holding the other parity was not written there by
	 * vaaid. Taken, its next write would land on the other copy, the only other
	 * state the pool has. */
	if (r0 == 0 && c[0].generation % 2 != 0)
		r0 = -EUCLEAN;
	if (r1 == 0 && c[1].generation % 2 != 1)
		r1 = -EUCLEAN;
	int best = -1;
	if (r0 == 0)
		best = 0;
	if (r1 == 0 && (best < 0 || c[1].generation > c[0].generation))
		best = 1;
	if (best < 0) {
		/* A version or feature we do not know wins over "garbage". */
		if (r0 == -EPROTONOSUPPORT || r1 == -EPROTONOSUPPORT)
			return -EPROTONOSUPPORT;
		return (r0 == -ENODATA && r1 == -ENODATA) ? -ENODATA : -EUCLEAN;
	}
	*sb = c[best];
	if (which)
		*which = best;
	return 0;
}

int vsb_submit(struct vblk *dev, struct vsb *sb, uint8_t *buf, struct vio_op *op)
{
	sb->generation++;
	vsb_encode(sb, buf);
	struct iovec iov = {.iov_base = buf, .iov_len = VSB_SIZE};
	return vblk_writev(dev, &iov, 1, (sb->generation % 2) * VSB_SIZE, VBLK_DSYNC | VBLK_META, op);
}

int vsb_write(struct vblk *dev, struct vsb *sb)
{
	uint8_t *buf = vblk_alloc_buf(VSB_SIZE);
	if (!buf)
		return -ENOMEM;
	sb->generation++;
	vsb_encode(sb, buf);
	int rc = vblk_pwrite_sync(dev, buf, VSB_SIZE, (sb->generation % 2) * VSB_SIZE,
				  VBLK_DSYNC | VBLK_META);
	free(buf);
	return rc < 0 ? rc : 0;
}

/* ---- journal store header (VSB_INCOMPAT_JOURNAL_FILE) */
enum { JF_MAGIC = 0, JF_VERSION = 8, JF_UUID = 16, JF_JOFF = 32, JF_JSIZE = 40 };

static void vjf_encode(const struct vsb *sb, uint8_t *b)
{
	memset(b, 0, VJF_HDR_SIZE);
	vput_le64(b + JF_MAGIC, VJF_MAGIC);
	vput_le32(b + JF_VERSION, VSB_VERSION);
	memcpy(b + JF_UUID, sb->uuid, 16);
	vput_le64(b + JF_JOFF, sb->journal_off);
	vput_le64(b + JF_JSIZE, sb->journal_size);
	vsb_seal(b);
}

int vjf_header_write(struct vblk *jdev, const struct vsb *sb)
{
	uint8_t *buf = vblk_alloc_buf(VJF_HDR_SIZE);
	if (!buf)
		return -ENOMEM;
	vjf_encode(sb, buf);
	int rc = vblk_pwrite_sync(jdev, buf, VJF_HDR_SIZE, 0, VBLK_DSYNC | VBLK_META);
	free(buf);
	return rc < 0 ? rc : 0;
}

int vjf_header_check(struct vblk *jdev, const struct vsb *sb)
{
	if (jdev->size < VJF_HDR_SIZE)
		return -ENODATA;
	uint8_t *b = vblk_alloc_buf(VJF_HDR_SIZE);
	if (!b)
		return -ENOMEM;
	int rc = vblk_pread_sync(jdev, b, VJF_HDR_SIZE, 0);
	if (rc >= 0) {
		if (vget_le64(b + JF_MAGIC) != VJF_MAGIC)
			rc = -ENODATA;
		else if (block_crc(b) != vget_le32(b + CRC_OFF) || vget_le32(b + JF_VERSION) != VSB_VERSION)
			rc = -EBADMSG;
		else if (memcmp(b + JF_UUID, sb->uuid, 16))
			rc = -EXDEV;
		else if (vget_le64(b + JF_JOFF) != sb->journal_off ||
			 vget_le64(b + JF_JSIZE) != sb->journal_size ||
			 jdev->size < sb->journal_off + sb->journal_size)
			rc = -EUCLEAN;
		else
			rc = 0;
	}
	free(b);
	return rc;
}
