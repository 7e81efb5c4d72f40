/* SCSI parameter data for engine drivers (see scsi_build.h). */
#include <string.h>

#include "scsi_build.h"
#include "vaaid/scsi.h"

size_t sb_xcopy_list(uint8_t *buf, size_t cap, uint8_t list_id, uint8_t usage,
		     const struct sb_cscd *cscd, unsigned ncscd, const struct sb_segment *seg,
		     unsigned nseg)
{
	size_t cl = (size_t)ncscd * SB_XCOPY_CSCD_LEN, sl = (size_t)nseg * SB_XCOPY_SEG_LEN;
	size_t len = SB_XCOPY_HDR + cl + sl;
	if (len > cap || cl > 0xFFFF)
		return 0;
	memset(buf, 0, len);
	/* SPC-4 6.4.3: LIST IDENTIFIER, STR=0, LIST ID USAGE (bits 4-3), PRIORITY 0;
	 * CSCD DESCRIPTOR LIST LENGTH; SEGMENT DESCRIPTOR LIST LENGTH; INLINE DATA LENGTH 0. */
	buf[0] = usage == SB_LIST_ID_NONE ? 0 : list_id;
	buf[1] = (uint8_t)((usage & 3) << 3);
	scsi_put_be16(buf + 2, (uint16_t)cl);
	scsi_put_be32(buf + 8, (uint32_t)sl);
	uint8_t *d = buf + SB_XCOPY_HDR;
	for (unsigned i = 0; i < ncscd; i++, d += SB_XCOPY_CSCD_LEN) {
		/* SPC-4 6.4.5.5 identification descriptor: E4h, PERIPHERAL DEVICE TYPE 00h;
		 * designator (7.8.6.1) CODE SET 1 (binary), ASSOCIATION 00b, TYPE 3 (NAA),
		 * LENGTH 16; then the block device parameters (6.4.5.6.2): DISK BLOCK LENGTH
		 * in bytes 29-31. */
		d[0] = 0xE4;
		d[4] = 0x01;
		d[5] = 0x03;
		d[7] = 16;
		memcpy(d + 8, cscd[i].naa, 16);
		d[29] = (uint8_t)(cscd[i].block_size >> 16);
		d[30] = (uint8_t)(cscd[i].block_size >> 8);
		d[31] = (uint8_t)cscd[i].block_size;
	}
	for (unsigned i = 0; i < nseg; i++, d += SB_XCOPY_SEG_LEN) {
		/* SPC-4 6.4.6.5 block device to block device: 02h, DC (byte 1 bit 1),
		 * DESCRIPTOR LENGTH 0018h, SOURCE / DESTINATION CSCD DESCRIPTOR ID,
		 * NUMBER OF BLOCKS (bytes 10-11), SOURCE LBA, DESTINATION LBA. */
		d[0] = 0x02;
		d[1] = seg[i].dc ? 0x02 : 0;
		scsi_put_be16(d + 2, SB_XCOPY_SEG_LEN - 4);
		scsi_put_be16(d + 4, seg[i].src);
		scsi_put_be16(d + 6, seg[i].dst);
		scsi_put_be16(d + 10, seg[i].nblocks);
		scsi_put_be64(d + 12, seg[i].src_lba);
		scsi_put_be64(d + 20, seg[i].dst_lba);
	}
	return len;
}

void sb_xcopy_cdb(uint8_t cdb[16], uint32_t list_len)
{
	memset(cdb, 0, 16);
	cdb[0] = 0x83; /* EXTENDED COPY, service action 00h: LID1 (SPC-4 6.4.1) */
	scsi_put_be32(cdb + 10, list_len);
}

void sb_inquiry_vpd_cdb(uint8_t cdb[6], uint8_t page, uint16_t alloc)
{
	memset(cdb, 0, 6);
	cdb[0] = 0x12;
	cdb[1] = 0x01; /* EVPD */
	cdb[2] = page;
	scsi_put_be16(cdb + 3, alloc);
}

int sb_vpd83_naa(const uint8_t *page, size_t len, uint8_t naa[16])
{
	if (len < 4 || page[1] != 0x83)
		return -1;
	size_t end = 4 + ((size_t)page[2] << 8 | page[3]);
	if (end > len)
		end = len;
	for (size_t o = 4; o + 4 <= end; o += 4 + (size_t)page[o + 3]) {
		const uint8_t *d = page + o;
		if ((d[1] & 0x30) == 0 && (d[1] & 0x0F) == 3 && d[3] == 16 && o + 20 <= end) {
			memcpy(naa, d + 4, 16);
			return 0;
		}
	}
	return -1;
}

void sb_rw16_cdb(uint8_t cdb[16], uint8_t op, uint64_t lba, uint32_t nblocks)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	scsi_put_be64(cdb + 2, lba);
	scsi_put_be32(cdb + 10, nblocks);
}
