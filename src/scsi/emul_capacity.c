/* READ CAPACITY (10) (SBC-4 5.22) and READ CAPACITY (16) (SBC-4 5.23). */
#include "emul_internal.h"
#include "vaaid/scsi_emul.h"

void scsi_emul_read_capacity10(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	const struct scsi_lun_info *in = &cmd->lun->info;
	/* SBC-3 5.16.1 (obsolete in SBC-4 but still checked by LIO and libiscsi):
	 * PMI=0 with a non-zero LOGICAL BLOCK ADDRESS -> INVALID FIELD IN CDB. */
	if (!(cdb[8] & 0x01) && scsi_get_be32(cdb + 2)) {
		scsi_complete_invalid_cdb(cmd, 2, -1);
		return;
	}
	uint8_t b[8];
	uint64_t last = in->nblocks ? in->nblocks - 1 : 0;
	/* SBC-4 5.22.2: a last LBA above FFFFFFFEh is reported as FFFFFFFFh
	 * (the application client then uses READ CAPACITY (16)). */
	scsi_put_be32(b, last > 0xFFFFFFFEull ? 0xFFFFFFFFu : (uint32_t)last);
	scsi_put_be32(b + 4, in->block_size);
	/* No ALLOCATION LENGTH: always 8 bytes (truncated only by the buffer). */
	emul_return_data(cmd, b, sizeof(b), sizeof(b));
}

void scsi_emul_read_capacity16(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	const struct scsi_lun_info *in = &cmd->lun->info;
	/* Same PMI rule as READ CAPACITY (10) (SBC-3 5.17.1). */
	if (!(cdb[14] & 0x01) && scsi_get_be64(cdb + 2)) {
		scsi_complete_invalid_cdb(cmd, 2, -1);
		return;
	}
	uint8_t b[32] = {0};
	/* SBC-4 5.23.2 Table 53: RETURNED LOGICAL BLOCK ADDRESS, LOGICAL BLOCK LENGTH. */
	scsi_put_be64(b, in->nblocks ? in->nblocks - 1 : 0);
	scsi_put_be32(b + 8, in->block_size);
	/* byte 12: P_TYPE/PROT_EN 0 (no protection information) */
	b[13] = in->lbppbe & 0x0F; /* LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT */
	/* LBPME / LBPRZ (SBC-4 4.7.2); LOWEST ALIGNED LOGICAL BLOCK ADDRESS 0. */
	b[14] = (uint8_t)((in->lbpme ? 0x80 : 0) | (in->lbprz ? 0x40 : 0));
	emul_return_data(cmd, b, sizeof(b), scsi_get_be32(cdb + 10));
}
