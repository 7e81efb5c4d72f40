/*
 * LOG SENSE (SPC-4 6.8) with the log page format of SPC-4 7.3.
 *
 * How this file works: log_pages[] lists every (page, subpage) the device
 * server returns, in ascending order, with a builder for the page's
 * parameters. The Supported Log Pages page (00h/00h, SPC-4 7.3.18) and the
 * Supported Log Pages and Subpages page (00h/FFh, SPC-4 7.3.19) are generated
 * from the same table, so a new page (e.g. Logical Block Provisioning 0Ch)
 * is one table entry. The page header (page code, SPF, subpage, PAGE LENGTH)
 * is written here; builders write parameters from byte 4.
 * Log parameters are not savable and no thresholds are kept: SP=1 is refused;
 * the PC field selects between values that are all the same.
 * PARAMETER POINTER (SPC-4 6.8): pages made of log parameters (params=true)
 * are returned from the first parameter whose code is at least the pointer;
 * a pointer above the page's largest parameter code is refused. The
 * supported-pages lists have no log parameters, so any non-zero pointer is
 * above their largest code and refused.
 */
#include "emul_internal.h"
#include "vaaid/scsi_emul.h"

#define LOG_BUF 1024

struct log_page {
	uint8_t page, subpage;
	bool params;   /* the page is a list of log parameters (SPC-4 7.3.2.2) */
	bool ds;       /* header DS bit (SPC-4 7.3.2.1), as the page's definition fixes it */
	/* Writes the parameters at b+4 (zeroed, cap bytes after b); returns their length. */
	size_t (*build)(const struct scsi_lun *lun, uint8_t *b, size_t cap);
};

static size_t log_supported(const struct scsi_lun *lun, uint8_t *b, size_t cap);
static size_t log_supported_sub(const struct scsi_lun *lun, uint8_t *b, size_t cap);
static size_t log_lbp(const struct scsi_lun *lun, uint8_t *b, size_t cap);

static const struct log_page log_pages[] = {
	/* SPC-4 7.3.18 / 7.3.19: DS 0b, no log parameters */
	{0x00, 0x00, false, false, log_supported},
	{0x00, 0xFF, false, false, log_supported_sub},
	/* SBC-4 6.4.6 (Logical Block Provisioning log page table): DS 1b -- the page's
	 * parameters cannot be saved (LOG SELECT is not supported either) */
	{0x0C, 0x00, true, true, log_lbp},
};
#define N_LOG (sizeof(log_pages) / sizeof(log_pages[0]))

/* SPC-4 7.3.18: one byte per supported page code (subpage 00h entries). */
static size_t log_supported(const struct scsi_lun *lun, uint8_t *b, size_t cap)
{
	size_t n = 0;
	(void)lun;
	for (size_t i = 0; i < N_LOG && 4 + n < cap; i++)
		if (log_pages[i].subpage == 0)
			b[4 + n++] = log_pages[i].page;
	return n;
}

/* SPC-4 7.3.19: (page code, subpage code) pairs of every supported page. */
static size_t log_supported_sub(const struct scsi_lun *lun, uint8_t *b, size_t cap)
{
	size_t n = 0;
	(void)lun;
	for (size_t i = 0; i < N_LOG && 4 + n + 2 <= cap; i++) {
		b[4 + n++] = log_pages[i].page;
		b[4 + n++] = log_pages[i].subpage;
	}
	return n;
}

static size_t put_resource(uint8_t *b, uint16_t code, uint64_t count)
{
	/* SBC-4 6.4.6: PARAMETER LENGTH 08h; DU=0 TSD=1 ETC=0 TMC=0 FORMAT AND LINKING 11b
	 * (binary format list). RESOURCE COUNT saturates at FFFF FFFFh. SCOPE 10b: the
	 * resource is not dedicated to this logical unit (one pool serves many LUNs). */
	scsi_put_be16(b, code);
	b[2] = 0x23;
	b[3] = 8;
	scsi_put_be32(b + 4, count > UINT32_MAX ? UINT32_MAX : (uint32_t)count);
	b[8] = 0x02;
	return 12;
}

/* Logical Block Provisioning log page, SBC-4 6.4.6: available (0001h) and used (0002h)
 * LBA mapping resource counts of the pool, in threshold sets (VPD B2). */
static size_t log_lbp(const struct scsi_lun *lun, uint8_t *b, size_t cap)
{
	uint64_t avail = 0, used = 0;
	(void)cap;
	if (lun->lbp_resources)
		lun->lbp_resources(lun, &avail, &used);
	size_t n = put_resource(b + 4, 0x0001, avail);
	n += put_resource(b + 4 + n, 0x0002, used);
	return n;
}

void scsi_emul_log_sense(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	/* Byte 1 bit 1: PPC (obsolete in SPC-4): parameter pointer control is not supported. */
	if (cdb[1] & 0x02) {
		scsi_complete_invalid_cdb(cmd, 1, 1);
		return;
	}
	/* SPC-4 6.8: SP=1 and saving log parameters not implemented -> INVALID FIELD IN CDB. */
	if (cdb[1] & 0x01) {
		scsi_complete_invalid_cdb(cmd, 1, 0);
		return;
	}
	uint8_t page = cdb[2] & 0x3F, sub = cdb[3];
	size_t alloc = scsi_get_be16(cdb + 7);
	const struct log_page *lp = NULL;
	bool page_known = false;
	for (size_t i = 0; i < N_LOG; i++) {
		page_known |= log_pages[i].page == page;
		if (log_pages[i].page == page && log_pages[i].subpage == sub)
			lp = &log_pages[i];
	}
	if (!lp) {
		/* SPC-4 6.8: an unsupported page or subpage -> INVALID FIELD IN CDB. */
		scsi_complete_invalid_cdb(cmd, page_known ? 3 : 2, page_known ? 7 : 5);
		return;
	}
	uint8_t b[LOG_BUF] = {0};
	size_t n = lp->build(cmd->lun, b, sizeof(b));
	/* SPC-4 6.8: PARAMETER POINTER (bytes 5-6) -- the parameters from that code on;
	 * above the largest parameter code of the page -> INVALID FIELD IN CDB. */
	uint16_t ptr = scsi_get_be16(cdb + 5);
	if (ptr) {
		/* parameters are built in ascending code order: start at the first code >= ptr */
		size_t off = n;
		uint16_t largest = 0;
		for (size_t o = 0; lp->params && o + 4 <= n; o += 4 + (size_t)b[4 + o + 3]) {
			uint16_t code = scsi_get_be16(b + 4 + o);
			largest = code;
			if (code >= ptr && off == n)
				off = o;
		}
		if (!lp->params || ptr > largest) {
			scsi_complete_invalid_cdb(cmd, 5, -1);
			return;
		}
		memmove(b + 4, b + 4 + off, n - off);
		n -= off;
	}
	/* Log page header, SPC-4 7.3.2.1: DS as the page fixes it, SPF (set for a non-zero
	 * subpage), PAGE LENGTH of the parameters returned. */
	b[0] = (uint8_t)((lp->ds ? 0x80 : 0) | lp->page | (lp->subpage ? 0x40 : 0));
	b[1] = lp->subpage;
	scsi_put_be16(b + 2, (uint16_t)n);
	emul_return_data(cmd, b, 4 + n, alloc);
}
