/*
 * SCSI parameter data built by the programs that drive the engine through
 * simhost (the crash suite, benchmarks): EXTENDED COPY(LID1) parameter lists
 * as ESXi sends them, and the LU's NAA designator read back from the Device
 * Identification VPD page. Plain functions on buffers; no simhost state.
 *
 * How a copy is named: every LU the copy touches is one identification CSCD
 * descriptor (E4h, SPC-4 6.4.5.5) carrying its 16-byte NAA designator as VPD
 * 83h reports it and its logical block length; each segment descriptor (02h,
 * block -> block, SPC-4 6.4.6.5) names a source and a destination by their
 * index in that CSCD list.
 */
#ifndef VAAID_SCSI_BUILD_H
#define VAAID_SCSI_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SB_XCOPY_HDR 16u
#define SB_XCOPY_CSCD_LEN 32u
#define SB_XCOPY_SEG_LEN 28u

struct sb_cscd {
	uint8_t naa[16];     /* NAA designator (VPD 83h) */
	uint32_t block_size; /* DISK BLOCK LENGTH: must be the LU's */
};

struct sb_segment {
	uint16_t src, dst; /* CSCD descriptor indexes */
	bool dc;           /* NUMBER OF BLOCKS counts destination blocks (else source blocks) */
	uint16_t nblocks;
	uint64_t src_lba, dst_lba;
};

/* LIST ID USAGE (SPC-4 6.4.3, Table 105): 11b = no list identifier held, what ESXi sends. */
#define SB_LIST_ID_NONE 3u

/*
 * An EXTENDED COPY(LID1) parameter list (SPC-4 6.4.3): header (LIST
 * IDENTIFIER list_id, LIST ID USAGE usage, no inline data), the CSCD
 * descriptors, the segment descriptors. Returns its length, or 0 when it
 * does not fit in cap.
 */
size_t sb_xcopy_list(uint8_t *buf, size_t cap, uint8_t list_id, uint8_t usage,
		     const struct sb_cscd *cscd, unsigned ncscd, const struct sb_segment *seg,
		     unsigned nseg);
/* READ(16) 88h / WRITE(16) 8Ah / WRITE SAME(16) 93h style CDB (SBC-4 5.16 / 5.42 /
 * 5.49): OPERATION CODE op, LBA bytes 2-9, NUMBER OF BLOCKS bytes 10-13, the rest 0. */
void sb_rw16_cdb(uint8_t cdb[16], uint8_t op, uint64_t lba, uint32_t nblocks);
/* The EXTENDED COPY(LID1) CDB (83h, service action 00h) for a list of list_len bytes. */
void sb_xcopy_cdb(uint8_t cdb[16], uint32_t list_len);
/* INQUIRY of VPD page `page` (EVPD=1) with ALLOCATION LENGTH alloc. */
void sb_inquiry_vpd_cdb(uint8_t cdb[6], uint8_t page, uint16_t alloc);
/*
 * The LU's NAA designator in a Device Identification VPD page (83h, SPC-4
 * 7.8.6): the designator with ASSOCIATION 00b (LU), TYPE 3 (NAA), 16 bytes.
 * 0, or -1 when the page holds none.
 */
int sb_vpd83_naa(const uint8_t *page, size_t len, uint8_t naa[16]);

#endif
