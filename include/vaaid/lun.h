/*
 * Building a LUN's SCSI identity and limits from a pool volume
 * (handlers/lun.c), the same for the daemon and vaai-sim.
 */
#ifndef VAAID_LUN_H
#define VAAID_LUN_H

#include "vaaid/pool.h"
#include "vaaid/scsi.h"

#define VAAID_VENDOR "VAAID"
#define VAAID_PRODUCT "VAAID THIN LUN" /* the same on every LUN: ESXi uses XCOPY only between equal product ids */
#define VAAID_REVISION "0001"

/*
 * Logical block provisioning limits reported in VPD B0 (SBC-4 6.6.4), in
 * bytes so that they are the same for 512- and 4096-byte volumes:
 * MAXIMUM UNMAP LBA COUNT (per UNMAP command, all descriptors together) and
 * MAXIMUM WRITE SAME LENGTH are 512 MiB and 1 GiB worth of blocks; MAXIMUM UNMAP BLOCK
 * DESCRIPTOR COUNT is the most a 16-bit PARAMETER LIST LENGTH can carry
 * ((65535 - 8) / 16 = 4095).
 */
#define VAAID_MAX_UNMAP_BYTES (1ull << 29) /* 1 Mi blocks at 512 B: libiscsi BlockLimits wants <= 1 Mi */
#define VAAID_MAX_UNMAP_DESCRIPTORS 4095u
#define VAAID_MAX_WRITE_SAME_BYTES (1ull << 30)

/* max_xfer_bytes: the transport's limit (data area, hw_max_sectors). */
void vaaid_lun_init(struct scsi_lun *lun, struct vvol *v, uint64_t max_xfer_bytes);

/*
 * The soft threshold of a pool: `pct` percent of its capacity (1..100; 0 none),
 * rounded up to whole extents, in used bytes (what vpool_set_soft_threshold
 * takes). A threshold set (VPD B2 THRESHOLD EXPONENT) is one extent, so the
 * LUNs report it exactly (vaaid_lun_set_soft_threshold: mode page 1Ch/02h),
 * except on LUNs of more than 2^32 extents, whose sets are larger (rounded up).
 */
uint64_t vaaid_soft_threshold_bytes(const struct vpool *p, unsigned pct);
/*
 * Sets the soft threshold mode page 1Ch/02h reports, at bring-up. Returns true
 * when what the page reports changed (the descriptor's ENABLED bit or THRESHOLD
 * COUNT).
 */
bool vaaid_lun_set_soft_threshold(struct scsi_lun *lun, uint64_t used_limit_bytes);
/* The same on a LUN that is up: a change is announced with MODE PARAMETERS
 * CHANGED (SBC-4 6.5.7). */
void vaaid_lun_update_soft_threshold(struct scsi_lun *lun, uint64_t used_limit_bytes);
/*
 * The LUN's volume was grown to nblocks: updates the capacity and the VPD B2
 * THRESHOLD EXPONENT (kept within SBC-4 6.6.5's capacity rule) and posts the
 * unit attentions that announce it: CAPACITY DATA HAS CHANGED, and INQUIRY DATA
 * HAS CHANGED / MODE PARAMETERS CHANGED when the threshold set size changed.
 */
void vaaid_lun_resize(struct scsi_lun *lun, uint64_t nblocks);

#endif
