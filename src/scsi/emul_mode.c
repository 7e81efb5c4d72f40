/*
 * MODE SENSE (6)/(10) (SPC-4 6.11, 6.12) and MODE SELECT (6)/(10) (SPC-4 6.9,
 * 6.10) with the mode parameter list of SPC-4 7.5 and SBC-4 6.5.
 *
 * How this file works: one table lists the mode pages (page, subpage,
 * builder). MODE SENSE assembles header + optional block descriptor + the
 * selected pages into a local buffer and truncates it to the ALLOCATION
 * LENGTH; MODE DATA LENGTH always gives the full length. Nothing is
 * changeable and nothing can be saved: the changeable values (PC 01b) are
 * all-zero masks, the default values equal the current ones, and saved
 * values (PC 11b) are refused with SAVING PARAMETERS NOT SUPPORTED.
 * MODE SELECT parses the parameter list and accepts it only if every field it
 * carries equals the current value; otherwise INVALID FIELD IN PARAMETER
 * LIST points at the first differing byte/bit (the changeable mask is zero,
 * SPC-4 6.9: a field that is not changeable must be sent unchanged).
 *
 * Choices (documented for MODE SENSE consumers):
 *   Read-Write Error Recovery page: LBPERE=1 (threshold notification on), the
 *   rest 0.
 *   Caching page: WCE=0 (every write durable on completion, docs/design.md),
 *   RCD=0.
 *   Control page: TST 000b (one task set), QUEUE ALGORITHM MODIFIER 1h
 *   (unrestricted reordering: commands complete in any order), QERR 00b,
 *   D_SENSE=0 (fixed format only), UA_INTLCK_CTRL 00b, TAS=1: LIO, not vaaid,
 *   handles task aborts, and LIO's default (emulate_tas=1) answers commands
 *   aborted by another I_T nexus with TASK ABORTED status.
 */
#include <stdlib.h>

#include "emul_internal.h"
#include "vaaid/scsi_emul.h"

enum { PC_CURRENT = 0, PC_CHANGEABLE = 1, PC_DEFAULT = 2, PC_SAVED = 3 };

struct mode_page {
	uint8_t page, subpage;
	uint8_t len; /* whole page, header included */
	/* Fills the page body (after the 2- or 4-byte page header) with the current values. */
	void (*build)(const struct scsi_lun *lun, uint8_t *p);
};

/*
 * Read-Write Error Recovery mode page, SBC-4 6.5.8 (PAGE LENGTH 0Ah). No media
 * error handling is reported (AWRE, ARRE, TB, RC, EER, PER, DTE, DCR 0, retry
 * counts and RECOVERY TIME LIMIT 0: errors of the backing store are returned as
 * they happen). LBPERE=1 (byte 7 bit 7): logical block provisioning threshold
 * notification is enabled (SBC-4 4.7.3.7.1: the soft threshold unit attention is
 * established only while LBPERE is 1); not changeable.
 */
static void page_rw_recovery(const struct scsi_lun *lun, uint8_t *p)
{
	(void)lun;
	p[7] = 0x80; /* LBPERE 1 */
}

/* Caching mode page, SBC-4 6.5.5 (PAGE LENGTH 12h): WCE=0, RCD=0. */
static void page_caching(const struct scsi_lun *lun, uint8_t *p)
{
	(void)lun;
	p[2] = 0x00; /* IC ABPF CAP DISC SIZE WCE=0 MF RCD=0 */
}

/* Control mode page, SPC-4 7.5.8 (PAGE LENGTH 0Ah). */
static void page_control(const struct scsi_lun *lun, uint8_t *p)
{
	(void)lun;
	p[2] = 0x00; /* TST 000b, TMF_ONLY 0, DPICZ 0, D_SENSE 0, GLTSD 0, RLEC 0 */
	p[3] = 0x10; /* QUEUE ALGORITHM MODIFIER 1h, NUAR 0, QERR 00b */
	p[4] = 0x00; /* VS 0, RAC 0, UA_INTLCK_CTRL 00b, SWP 0 */
	p[5] = 0x40; /* ATO 0, TAS 1, ATMPE 0, RWWP 0, AUTOLOAD MODE 000b */
}

/*
 * Logical Block Provisioning mode page, SBC-4 6.5.7 (1Ch/02h, sub_page format,
 * PAGE LENGTH 0014h): SITUA=0 (the threshold unit attention goes to every I_T
 * nexus: TCMU does not tell vaaid which one caused it) and one threshold
 * descriptor: ENABLED when a soft threshold is configured, THRESHOLD TYPE 000b
 * (soft), THRESHOLD ARMING 001b (notify while the count increases), THRESHOLD
 * RESOURCE 02h (used LBA mapping resources), THRESHOLD COUNT in threshold sets.
 */
static void page_lbp(const struct scsi_lun *lun, uint8_t *p)
{
	uint32_t sets = scsi_lbp_threshold_count(&lun->info);
	p[4] = 0x00; /* SITUA 0 */
	uint8_t *d = p + SCSI_LBP_MODE_DESC_OFFSET;
	d[0] = (uint8_t)((lun->info.soft_threshold_blocks ? 0x80 : 0) | 0x01);
	d[1] = 0x02;
	scsi_put_be32(d + 4, sets);
}

/* Ascending page code order: MODE SENSE 3Fh returns them in this order (SPC-4 7.5.2). */
static const struct mode_page mode_pages[] = {
	{0x01, 0x00, 12, page_rw_recovery},
	{0x08, 0x00, 20, page_caching},
	{0x0A, 0x00, 12, page_control},
	{0x1C, 0x02, 24, page_lbp},
};
#define N_PAGES (sizeof(mode_pages) / sizeof(mode_pages[0]))

static size_t put_page(const struct mode_page *mp, const struct scsi_lun *lun, int pc, uint8_t *p)
{
	memset(p, 0, mp->len);
	/* SPC-4 7.5.7: page_0 format (SPF=0) for subpage 0, sub_page format (SPF=1, 2-byte
	 * PAGE LENGTH) otherwise. PS=0: not savable. */
	if (mp->subpage) {
		p[0] = (uint8_t)(mp->page | 0x40);
		p[1] = mp->subpage;
		scsi_put_be16(p + 2, (uint16_t)(mp->len - 4));
	} else {
		p[0] = mp->page;
		p[1] = (uint8_t)(mp->len - 2);
	}
	if (pc != PC_CHANGEABLE) /* changeable: all-zero mask, nothing can be changed */
		mp->build(lun, p);
	return mp->len;
}

/* Block descriptors, SBC-4 6.5.2: short (8 bytes) or long LBA (16 bytes). */
static size_t put_block_desc(const struct scsi_lun_info *in, bool longlba, uint8_t *b)
{
	if (longlba) {
		memset(b, 0, 16);
		scsi_put_be64(b, in->nblocks);
		scsi_put_be32(b + 12, in->block_size);
		return 16;
	}
	memset(b, 0, 8);
	/* SBC-4 6.5.2.2: more blocks than fit -> NUMBER OF LOGICAL BLOCKS FFFFFFFFh. */
	scsi_put_be32(b, in->nblocks > 0xFFFFFFFFull ? 0xFFFFFFFFu : (uint32_t)in->nblocks);
	b[5] = (uint8_t)(in->block_size >> 16); /* LOGICAL BLOCK LENGTH, 3 bytes */
	b[6] = (uint8_t)(in->block_size >> 8);
	b[7] = (uint8_t)in->block_size;
	return 8;
}

static void mode_sense(struct scsi_cmd *cmd, bool ten)
{
	const uint8_t *cdb = cmd->cdb;
	const struct scsi_lun *lun = cmd->lun;
	bool dbd = cdb[1] & 0x08;
	bool llbaa = ten && (cdb[1] & 0x10); /* LLBAA exists in MODE SENSE (10) only */
	int pc = cdb[2] >> 6;
	uint8_t page = cdb[2] & 0x3F, sub = cdb[3];
	size_t alloc = ten ? scsi_get_be16(cdb + 7) : cdb[4];

	/* SPC-4 6.11.x: saved values not implemented -> SAVING PARAMETERS NOT SUPPORTED. */
	if (pc == PC_SAVED) {
		scsi_complete_field(cmd, ASC_SAVING_PARAMS_NOT_SUPPORTED, true, 2, 7);
		return;
	}

	/* Which pages: SPC-4 6.11.1 Table 159 (page code / subpage code). */
	bool want[N_PAGES] = {false};
	bool any = false, page_known = false;
	for (size_t i = 0; i < N_PAGES; i++) {
		const struct mode_page *mp = &mode_pages[i];
		bool sel;
		if (page == 0x3F)
			/* 3Fh/00h: all pages (subpage 0 only); 3Fh/FFh: all pages and subpages. */
			sel = sub == 0xFF || (sub == 0x00 && mp->subpage == 0);
		else
			/* xxh/FFh: the page and all its subpages; xxh/yyh: that subpage. */
			sel = mp->page == page && (sub == 0xFF || mp->subpage == sub);
		page_known |= page == 0x3F || mp->page == page;
		want[i] = sel;
		any |= sel;
	}
	if (!any) {
		/* Unsupported page -> INVALID FIELD IN CDB at PAGE CODE; known page, unsupported
		 * subpage -> at SUBPAGE CODE. */
		scsi_complete_invalid_cdb(cmd, page_known ? 3 : 2, page_known ? 7 : 5);
		return;
	}

	uint8_t b[256];
	size_t hdr = ten ? 8 : 4;
	memset(b, 0, hdr);
	size_t n = hdr;
	if (!dbd)
		n += put_block_desc(&lun->info, llbaa, b + n);
	size_t bdl = n - hdr;
	for (size_t i = 0; i < N_PAGES; i++)
		if (want[i])
			n += put_page(&mode_pages[i], lun, pc, b + n);

	/* Mode parameter header, SPC-4 7.5.4; DEVICE-SPECIFIC PARAMETER per SBC-4 6.5.1:
	 * WP=0, DPOFUA=1 (DPO and FUA are accepted). MEDIUM TYPE 00h. */
	if (ten) {
		scsi_put_be16(b, (uint16_t)(n - 2)); /* MODE DATA LENGTH: full length, not truncated */
		b[3] = 0x10;
		b[4] = llbaa && !dbd ? 0x01 : 0x00; /* LONGLBA */
		scsi_put_be16(b + 6, (uint16_t)bdl);
	} else {
		b[0] = (uint8_t)(n - 1);
		b[2] = 0x10;
		b[3] = (uint8_t)bdl;
	}
	emul_return_data(cmd, b, n, alloc);
}

void scsi_emul_mode_sense6(struct scsi_cmd *cmd)
{
	mode_sense(cmd, false);
}

void scsi_emul_mode_sense10(struct scsi_cmd *cmd)
{
	mode_sense(cmd, true);
}

static int highest_bit(uint8_t x)
{
	int bit = 7;
	while (bit > 0 && !(x & (1u << bit)))
		bit--;
	return bit;
}

/* Compare len bytes of the list at off with want; 26h/00h at the first difference. */
static bool check_equal(struct scsi_cmd *cmd, const uint8_t *list, size_t off, const uint8_t *want,
			size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t d = list[off + i] ^ want[i];
		if (d) {
			scsi_complete_invalid_param(cmd, (uint16_t)(off + i), highest_bit(d));
			return false;
		}
	}
	return true;
}

static void param_list_length_error(struct scsi_cmd *cmd)
{
	/* SPC-4 6.9: a parameter list length that truncates the header, a block descriptor
	 * or a page -> PARAMETER LIST LENGTH ERROR. */
	scsi_complete_sense(cmd, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH_ERROR);
}

/* Parses and checks the list; completes the command on error and returns false. */
static bool check_param_list(struct scsi_cmd *cmd, const uint8_t *b, size_t avail, bool ten)
{
	const struct scsi_lun_info *in = &cmd->lun->info;
	size_t hdr = ten ? 8 : 4;
	if (avail < hdr) {
		param_list_length_error(cmd);
		return false;
	}
	/* Header (SPC-4 7.5.4): MODE DATA LENGTH is reserved in MODE SELECT; the
	 * DEVICE-SPECIFIC PARAMETER's WP and DPOFUA are ignored in MODE SELECT (SBC-4
	 * 6.5.1); MEDIUM TYPE must stay 00h. */
	size_t mt = ten ? 2 : 1;
	if (b[mt]) {
		scsi_complete_invalid_param(cmd, (uint16_t)mt, highest_bit(b[mt]));
		return false;
	}
	bool longlba = ten && (b[4] & 0x01);
	size_t bdl = ten ? scsi_get_be16(b + 6) : b[3];
	if (bdl != 0 && bdl != (longlba ? 16u : 8u)) {
		/* One block descriptor at most, of the size LONGLBA selects. */
		scsi_complete_invalid_param(cmd, ten ? 6 : 3, -1);
		return false;
	}
	if (avail < hdr + bdl) {
		param_list_length_error(cmd);
		return false;
	}
	if (bdl) {
		/* SBC-4 6.5.2: NUMBER OF LOGICAL BLOCKS 0 means "no change"; otherwise the
		 * capacity and the LOGICAL BLOCK LENGTH must equal the current ones. */
		uint8_t cur[16];
		put_block_desc(in, longlba, cur);
		size_t nb_len = longlba ? 8 : 4;
		bool zero_blocks = true;
		for (size_t i = 0; i < nb_len; i++)
			zero_blocks &= b[hdr + i] == 0;
		if (zero_blocks)
			memset(cur, 0, nb_len);
		size_t bl_off = longlba ? 12 : 5, bl_len = longlba ? 4 : 3;
		if (!check_equal(cmd, b, hdr, cur, nb_len) ||
		    !check_equal(cmd, b, hdr + bl_off, cur + bl_off, bl_len))
			return false;
	}
	/* Mode pages (SPC-4 7.5.7). */
	size_t off = hdr + bdl;
	while (off < avail) {
		bool spf = b[off] & 0x40;
		size_t ph = spf ? 4 : 2;
		if (avail < off + ph) {
			param_list_length_error(cmd);
			return false;
		}
		uint8_t code = b[off] & 0x3F, sub = spf ? b[off + 1] : 0;
		size_t plen = spf ? scsi_get_be16(b + off + 2) : b[off + 1];
		const struct mode_page *mp = NULL;
		for (size_t i = 0; i < N_PAGES; i++)
			if (mode_pages[i].page == code && mode_pages[i].subpage == sub &&
			    !spf == !mode_pages[i].subpage)
				mp = &mode_pages[i];
		if (!mp) {
			/* SPC-4 6.9: an unsupported page -> INVALID FIELD IN PARAMETER LIST. */
			scsi_complete_invalid_param(cmd, (uint16_t)off, spf && !sub ? 6 : 5);
			return false;
		}
		if (plen != (size_t)mp->len - ph) {
			scsi_complete_invalid_param(cmd, (uint16_t)(off + (spf ? 2 : 1)), -1);
			return false;
		}
		if (avail < off + ph + plen) {
			param_list_length_error(cmd);
			return false;
		}
		uint8_t cur[256];
		put_page(mp, cmd->lun, PC_CURRENT, cur);
		/* Byte 0 bit 7 is PS, reserved in MODE SELECT: compared from byte 2 on. */
		if (!check_equal(cmd, b, off + ph, cur + ph, plen))
			return false;
		off += ph + plen;
	}
	return true;
}

static void mode_select(struct scsi_cmd *cmd, bool ten)
{
	const uint8_t *cdb = cmd->cdb;
	/* SPC-4 6.9: SP=1 and saving not implemented -> INVALID FIELD IN CDB. */
	if (cdb[1] & 0x01) {
		scsi_complete_invalid_cdb(cmd, 1, 0);
		return;
	}
	size_t plen = ten ? scsi_get_be16(cdb + 7) : cdb[4];
	/* SPC-4 6.9: PARAMETER LIST LENGTH 0 -> no data transferred, not an error. */
	if (!plen) {
		scsi_complete_good(cmd);
		return;
	}
	/* PF=0: the pages would be vendor specific (SPC-4 6.9); only the standard
	 * page format is supported (as LIO). */
	if (!(cdb[1] & 0x10)) {
		scsi_complete_invalid_cdb(cmd, 1, 4);
		return;
	}
	size_t avail = plen < cmd->iov_len ? plen : cmd->iov_len;
	uint8_t *b = malloc(avail ? avail : 1);
	if (!b) {
		scsi_complete_sense(cmd, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	avail = scsi_copy_from_data_out(cmd, 0, b, avail);
	bool ok = check_param_list(cmd, b, avail, ten);
	free(b);
	if (ok)
		scsi_complete_good(cmd); /* nothing changed: no MODE PARAMETERS CHANGED UA */
}

void scsi_emul_mode_select6(struct scsi_cmd *cmd)
{
	mode_select(cmd, false);
}

void scsi_emul_mode_select10(struct scsi_cmd *cmd)
{
	mode_select(cmd, true);
}
