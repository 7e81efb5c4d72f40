/*
 * INQUIRY (SPC-4 6.6) and the vital product data pages (SPC-4 7.8, SBC-4 6.6).
 *
 * How this file works: the standard data and every VPD page are built whole
 * into a local buffer from lun->info, then truncated to the ALLOCATION LENGTH
 * (emul_return_data). VPD pages are described by one table (page code,
 * "present" predicate, builder); the Supported VPD Pages page (00h) is
 * generated from the same table, so adding a page is one table entry.
 * The Third-party Copy page (8Fh) belongs to the copy manager: it is listed
 * and served only when info.tpc is set and a builder is installed in the
 * LUN (lun->vpd_tpc_page, preferred) or in scsi_vpd_tpc_page.
 */
#include "emul_internal.h"
#include "vaaid/scsi_emul.h"

#define INQ_STD_LEN 96
#define VPD_BUF 512

scsi_vpd_page_fn scsi_vpd_tpc_page;

/* Standard INQUIRY data, SPC-4 6.6.2 Table 142. */
static size_t build_standard(const struct scsi_lun *lun, uint8_t *b)
{
	const struct scsi_lun_info *in = &lun->info;
	memset(b, 0, INQ_STD_LEN);
	b[0] = 0x00;               /* PERIPHERAL QUALIFIER 000b, DEVICE TYPE 00h direct access */
	b[1] = 0x00;               /* RMB=0: not removable */
	b[2] = 0x06;               /* VERSION: SPC-4 */
	b[3] = 0x10 | 0x02;        /* HISUP=1 (hierarchical LUNs), RESPONSE DATA FORMAT 2 */
	b[4] = INQ_STD_LEN - 5;    /* ADDITIONAL LENGTH (n - 4) */
	b[5] = in->tpc ? 0x08 : 0; /* 3PC: third-party copy (EXTENDED COPY) supported */
	/* TPGS 01b: implicit asymmetric access only (SPC-4 6.6.2, 5.16; src/scsi/alua.c):
	 * no SET TARGET PORT GROUPS. 00b without ALUA. */
	if (lun->alua.enabled)
		b[5] |= 0x10;
	b[7] = 0x02;               /* CMDQUE=1: full task management model */
	emul_put_ascii(b + 8, in->vendor, 8);    /* T10 VENDOR IDENTIFICATION */
	emul_put_ascii(b + 16, in->product, 16); /* PRODUCT IDENTIFICATION */
	emul_put_ascii(b + 32, in->revision, 4); /* PRODUCT REVISION LEVEL */
	/* VERSION DESCRIPTORS (SPC-4 Table 144): SAM-5, SPC-4, SBC-3. */
	scsi_put_be16(b + 58, 0x00A0);
	scsi_put_be16(b + 60, 0x0460);
	scsi_put_be16(b + 62, 0x04C0);
	return INQ_STD_LEN;
}

/* Unit Serial Number, SPC-4 7.8.15. */
static size_t vpd_serial(const struct scsi_lun *lun, uint8_t *b, size_t cap)
{
	size_t n = strnlen(lun->info.serial, sizeof(lun->info.serial));
	(void)cap;
	memcpy(b + 4, lun->info.serial, n);
	return 4 + n;
}

/* Device Identification, SPC-4 7.8.6: NAA + T10 vendor ID designators, both for the LU
 * (the same on every gateway: stored with the volume in the pool), then with ALUA the
 * target port's relative port and port group designators (src/scsi/alua.c). */
static size_t vpd_devid(const struct scsi_lun *lun, uint8_t *b, size_t cap)
{
	const struct scsi_lun_info *in = &lun->info;
	uint8_t *d = b + 4;
	(void)cap;
	/* NAA designator (7.8.6.6; NAA 6h, IEEE Registered Extended: 7.8.6.6.5): CODE SET 1
	 * binary, PIV=0, ASSOCIATION 00b (LU), TYPE 3. */
	d[0] = 0x01;
	d[1] = 0x03;
	d[3] = 16;
	memcpy(d + 4, in->naa, 16);
	d += 20;
	/* T10 vendor ID based designator (7.8.6.4): CODE SET 2 ASCII, TYPE 1, vendor + serial. */
	size_t sn = strnlen(in->serial, sizeof(in->serial));
	d[0] = 0x02;
	d[1] = 0x01;
	d[3] = (uint8_t)(8 + sn);
	emul_put_ascii(d + 4, in->vendor, 8);
	memcpy(d + 12, in->serial, sn);
	d += 12 + sn;
	d += scsi_alua_vpd83(lun, d);
	return (size_t)(d - b);
}

/* Block Limits, SBC-4 6.6.4 (PAGE LENGTH 3Ch). */
static size_t vpd_block_limits(const struct scsi_lun *lun, uint8_t *b, size_t cap)
{
	const struct scsi_lun_info *in = &lun->info;
	(void)cap;
	b[4] = 0x01;                                    /* WSNZ: WRITE SAME with 0 blocks refused */
	b[5] = in->max_caw_len;                         /* MAXIMUM COMPARE AND WRITE LENGTH */
	scsi_put_be16(b + 6, in->opt_xfer_gran);        /* OPTIMAL TRANSFER LENGTH GRANULARITY */
	scsi_put_be32(b + 8, in->max_xfer_blocks);      /* MAXIMUM TRANSFER LENGTH */
	scsi_put_be32(b + 12, in->opt_xfer_blocks);     /* OPTIMAL TRANSFER LENGTH */
	scsi_put_be32(b + 20, in->max_unmap_lba_count); /* MAXIMUM UNMAP LBA COUNT */
	scsi_put_be32(b + 24, in->max_unmap_desc_count);/* MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT */
	scsi_put_be32(b + 28, in->opt_unmap_gran);      /* OPTIMAL UNMAP GRANULARITY */
	if (in->opt_unmap_gran)
		b[32] = 0x80; /* UGAVALID, UNMAP GRANULARITY ALIGNMENT 0 */
	scsi_put_be64(b + 36, in->max_write_same_len);  /* MAXIMUM WRITE SAME LENGTH */
	return 64;
}

/* Block Device Characteristics, SBC-4 6.6.2 (PAGE LENGTH 3Ch). */
static size_t vpd_bdc(const struct scsi_lun *lun, uint8_t *b, size_t cap)
{
	(void)lun;
	(void)cap;
	scsi_put_be16(b + 4, 0x0001); /* MEDIUM ROTATION RATE: non-rotating medium */
	b[7] = 0x00;                  /* NOMINAL FORM FACTOR: not reported */
	return 64;
}

/* Logical Block Provisioning, SBC-4 6.6.5: no provisioning group descriptor (DP=0). */
static size_t vpd_lbp(const struct scsi_lun *lun, uint8_t *b, size_t cap)
{
	const struct scsi_lun_info *in = &lun->info;
	(void)cap;
	b[4] = in->threshold_exponent;
	b[5] = (uint8_t)((in->lbpu ? 0x80 : 0) | (in->lbpws ? 0x40 : 0) | (in->lbpws10 ? 0x20 : 0) |
			 (in->lbprz ? 0x04 : 0) /* LBPRZ field 001b: unmapped blocks read zero */ |
			 (in->anc_sup ? 0x02 : 0));
	b[6] = in->provisioning_type & 0x07;
	return 8;
}

static size_t vpd_tpc(const struct scsi_lun *lun, uint8_t *b, size_t cap)
{
	return lun->vpd_tpc_page ? lun->vpd_tpc_page(lun, b, cap) : scsi_vpd_tpc_page(lun, b, cap);
}

static bool always(const struct scsi_lun *lun)
{
	(void)lun;
	return true;
}

static bool has_tpc(const struct scsi_lun *lun)
{
	return lun->info.tpc && (lun->vpd_tpc_page || scsi_vpd_tpc_page);
}

struct vpd_page {
	uint8_t code;
	bool (*present)(const struct scsi_lun *lun);
	/* Builds the page into b (zeroed, VPD_BUF bytes) past the 4-byte header;
	 * returns the total length (header included). NULL: the list page. */
	size_t (*build)(const struct scsi_lun *lun, uint8_t *b, size_t cap);
};

/* Ascending page code order (SPC-4 7.8.13: the list is in ascending order). */
static const struct vpd_page vpd_pages[] = {
	{0x00, always, NULL},
	{0x80, always, vpd_serial},
	{0x83, always, vpd_devid},
	{0x8F, has_tpc, vpd_tpc},
	{0xB0, always, vpd_block_limits},
	{0xB1, always, vpd_bdc},
	{0xB2, always, vpd_lbp},
};
#define N_VPD (sizeof(vpd_pages) / sizeof(vpd_pages[0]))

/* Supported VPD Pages, SPC-4 7.8.13. */
static size_t vpd_supported(const struct scsi_lun *lun, uint8_t *b)
{
	size_t n = 4;
	for (size_t i = 0; i < N_VPD; i++)
		if (vpd_pages[i].present(lun))
			b[n++] = vpd_pages[i].code;
	return n;
}

void scsi_emul_inquiry(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	struct scsi_lun *lun = cmd->lun;
	uint8_t buf[VPD_BUF];
	size_t alloc = scsi_get_be16(cdb + 3); /* ALLOCATION LENGTH, SPC-4 6.6.1 */
	bool evpd = cdb[1] & 0x01;
	uint8_t page = cdb[2];

	/* CMDDT (byte 1 bit 1) is obsolete since SPC-3; command support data is not provided. */
	if (cdb[1] & 0x02) {
		scsi_complete_invalid_cdb(cmd, 1, 1);
		return;
	}
	if (!evpd) {
		/* SPC-4 6.6.1: EVPD=0 with a non-zero PAGE CODE -> INVALID FIELD IN CDB. */
		if (page) {
			scsi_complete_invalid_cdb(cmd, 2, -1);
			return;
		}
		emul_return_data(cmd, buf, build_standard(lun, buf), alloc);
		return;
	}
	for (size_t i = 0; i < N_VPD; i++) {
		const struct vpd_page *vp = &vpd_pages[i];
		if (vp->code != page || !vp->present(lun))
			continue;
		memset(buf, 0, sizeof(buf));
		size_t len = vp->build ? vp->build(lun, buf, sizeof(buf)) : vpd_supported(lun, buf);
		/* VPD page header, SPC-4 7.8.1: qualifier/device type, page code, PAGE LENGTH. */
		buf[0] = 0x00;
		buf[1] = page;
		scsi_put_be16(buf + 2, (uint16_t)(len - 4));
		emul_return_data(cmd, buf, len, alloc);
		return;
	}
	/* SPC-4 6.6.1: a VPD page that is not supported -> INVALID FIELD IN CDB. */
	scsi_complete_invalid_cdb(cmd, 2, -1);
}
