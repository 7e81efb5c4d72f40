/*
 * CDB decoding: CDB length from the operation code's group (SPC-4 4.2.5.1)
 * and the LOGICAL BLOCK ADDRESS / TRANSFER LENGTH fields of the block
 * commands (SBC-4 5.x). One switch maps each operation code to its layout;
 * the layouts are the four CDB sizes plus COMPARE AND WRITE, whose NUMBER OF
 * LOGICAL BLOCKS is a single byte (SBC-4 5.3).
 */
#include <errno.h>

#include "vaaid/scsi.h"

size_t scsi_cdb_length(uint8_t opcode)
{
	switch (opcode >> 5) { /* GROUP CODE, SPC-4 4.2.5.1 Table 8 */
	case 0:
		return 6;
	case 1:
	case 2:
		return 10;
	case 4:
		return 16;
	case 5:
		return 12;
	default:
		/* 3: reserved, except 7Fh (variable length: needs byte 7, see
		 * scsi_cdb_length_full); 6, 7: vendor specific. */
		return 0;
	}
}

size_t scsi_cdb_length_full(const uint8_t *cdb)
{
	/* SPC-4 4.2.5.1: 7Fh variable length CDB, ADDITIONAL CDB LENGTH in byte 7. */
	if (cdb[0] == 0x7F)
		return 8 + (size_t)cdb[7];
	return scsi_cdb_length(cdb[0]);
}

enum cdb_layout { L_NONE, L_6, L_10, L_12, L_16, L_CAW };

static enum cdb_layout layout_of(uint8_t op)
{
	switch (op) {
	case 0x08: /* READ(6), SBC-4 5.15 */
	case 0x0A: /* WRITE(6), SBC-4 5.40 */
		return L_6;
	case 0x28: /* READ(10) */
	case 0x2A: /* WRITE(10) */
	case 0x2E: /* WRITE AND VERIFY(10) */
	case 0x2F: /* VERIFY(10) */
	case 0x34: /* PRE-FETCH(10) */
	case 0x35: /* SYNCHRONIZE CACHE(10): NUMBER OF LOGICAL BLOCKS in bytes 7-8 */
	case 0x41: /* WRITE SAME(10) */
		return L_10;
	case 0xA8: /* READ(12) */
	case 0xAA: /* WRITE(12) */
	case 0xAE: /* WRITE AND VERIFY(12) */
	case 0xAF: /* VERIFY(12) */
		return L_12;
	case 0x88: /* READ(16) */
	case 0x8A: /* WRITE(16) */
	case 0x8E: /* WRITE AND VERIFY(16) */
	case 0x8F: /* VERIFY(16) */
	case 0x90: /* PRE-FETCH(16) */
	case 0x91: /* SYNCHRONIZE CACHE(16) */
	case 0x93: /* WRITE SAME(16) */
		return L_16;
	case 0x89: /* COMPARE AND WRITE, SBC-4 5.3 */
		return L_CAW;
	default:
		return L_NONE;
	}
}

int scsi_cdb_lba_len(const uint8_t *cdb, uint64_t *lba, uint32_t *nblocks)
{
	switch (layout_of(cdb[0])) {
	case L_6:
		/* 21-bit LBA in byte 1 bits 4..0 and bytes 2-3; TRANSFER LENGTH 0 = 256 blocks. */
		*lba = scsi_get_be24(cdb + 1) & 0x1FFFFF;
		*nblocks = cdb[4] ? cdb[4] : 256;
		return 0;
	case L_10:
		*lba = scsi_get_be32(cdb + 2);
		*nblocks = scsi_get_be16(cdb + 7);
		return 0;
	case L_12:
		*lba = scsi_get_be32(cdb + 2);
		*nblocks = scsi_get_be32(cdb + 6);
		return 0;
	case L_16:
		*lba = scsi_get_be64(cdb + 2);
		*nblocks = scsi_get_be32(cdb + 10);
		return 0;
	case L_CAW:
		*lba = scsi_get_be64(cdb + 2);
		*nblocks = cdb[13];
		return 0;
	default:
		return -EINVAL;
	}
}

int scsi_cdb_len_field_offset(uint8_t opcode)
{
	switch (layout_of(opcode)) {
	case L_6:
		return 4;
	case L_10:
		return 7;
	case L_12:
		return 6;
	case L_16:
		return 10;
	case L_CAW:
		return 13;
	default:
		return -EINVAL;
	}
}

int scsi_cdb_lba_field_offset(uint8_t opcode)
{
	switch (layout_of(opcode)) {
	case L_6:
		return 1;
	case L_NONE:
		return -EINVAL;
	default:
		return 2;
	}
}
