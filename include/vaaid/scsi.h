/*
 * vaaid SCSI core (src/scsi): the command object, CDB field decoding, sense
 * building, unit attentions and the SPC/SBC emulation that needs no storage
 * (INQUIRY + VPD, MODE SENSE/SELECT, LOG SENSE, READ CAPACITY, REPORT
 * SUPPORTED OPERATION CODES, TEST UNIT READY, REQUEST SENSE, START STOP UNIT).
 *
 * Revision implemented: SPC-4 (T10/BSR INCITS 513 r37a) and SBC-3 r36 /
 * SBC-4 r15 for the block commands; comments cite clauses of these.
 *
 * A command's life: the transport (src/tcmu/device.c) fills a struct scsi_cmd
 * from a ring entry and calls scsi_dispatch(). The dispatch table (dispatch.h)
 * picks the handler by operation code (and service action). A handler either
 * finishes at once or later from an I/O callback; either way it ends with
 * exactly one call of scsi_cmd_complete(), which hands status, sense and the
 * data-in length back to the transport through cmd->done.
 */
#ifndef VAAID_SCSI_H
#define VAAID_SCSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "vaaid/log_limit.h"
#include "vaaid/lun_stats.h"

#define SCSI_SENSE_LEN 96 /* TCMU_SENSE_BUFFERSIZE */
#define SCSI_FIXED_SENSE_LEN 18

/* SAM-5 status codes */
enum {
	SAM_STAT_GOOD = 0x00,
	SAM_STAT_CHECK_CONDITION = 0x02,
	SAM_STAT_BUSY = 0x08,
	SAM_STAT_RESERVATION_CONFLICT = 0x18,
	SAM_STAT_TASK_SET_FULL = 0x28,
};

/* SPC-4 4.5.6 sense keys */
enum {
	SK_NO_SENSE = 0x0,
	SK_RECOVERED_ERROR = 0x1,
	SK_NOT_READY = 0x2,
	SK_MEDIUM_ERROR = 0x3,
	SK_HARDWARE_ERROR = 0x4,
	SK_ILLEGAL_REQUEST = 0x5,
	SK_UNIT_ATTENTION = 0x6,
	SK_DATA_PROTECT = 0x7,
	SK_BLANK_CHECK = 0x8,
	SK_COPY_ABORTED = 0xA,
	SK_ABORTED_COMMAND = 0xB,
	SK_MISCOMPARE = 0xE,
};

/* ASC/ASCQ pairs used by vaaid (SPC-4 Annex D), as (asc << 8) | ascq */
enum {
	ASC_NONE = 0x0000,
	ASC_PARAM_LIST_LENGTH_ERROR = 0x1A00,
	ASC_MISCOMPARE_DURING_VERIFY = 0x1D00,
	ASC_INVALID_OPCODE = 0x2000,
	ASC_LBA_OUT_OF_RANGE = 0x2100,
	ASC_INVALID_FIELD_IN_CDB = 0x2400,
	ASC_INVALID_FIELD_IN_PARAM_LIST = 0x2600,
	ASC_PARAMETER_NOT_SUPPORTED = 0x2601,
	ASC_PARAMETER_VALUE_INVALID = 0x2602,
	ASC_SAVING_PARAMS_NOT_SUPPORTED = 0x3900,
	ASC_INVALID_FIELD_IN_CMD_IU = 0x0E03,
	ASC_WRITE_ERROR = 0x0C00,
	ASC_UNRECOVERED_READ_ERROR = 0x1100,
	ASC_INTERNAL_TARGET_FAILURE = 0x4400,
	ASC_POWER_ON_RESET = 0x2900,
	ASC_CAPACITY_DATA_CHANGED = 0x2A09,
	ASC_MODE_PARAMETERS_CHANGED = 0x2A01,
	ASC_INQUIRY_DATA_CHANGED = 0x3F03,
	ASC_THIN_PROV_SOFT_THRESHOLD = 0x3807,
	ASC_SPACE_ALLOC_FAILED_WRITE_PROTECT = 0x2707,
	ASC_LOGICAL_UNIT_NOT_READY_OFFLINE = 0x0412,
	/* SPC-4 5.16.2.4 (ALUA standby): the initiator is to use another path */
	ASC_LU_NOT_ACCESSIBLE_PORT_STANDBY = 0x040B,
	/* SPC-4 5.16.2.4 (ALUA unavailable; transitioning between states) */
	ASC_LU_NOT_ACCESSIBLE_PORT_UNAVAILABLE = 0x040C,
	ASC_LU_NOT_ACCESSIBLE_TRANSITIONING = 0x040A,
	/* SPC-4 5.16.2: a target port group's asymmetric access state changed */
	ASC_ASYMMETRIC_ACCESS_STATE_CHANGED = 0x2A06,
	/* third-party copy (SPC-4 6.4) */
	ASC_COPY_TARGET_NOT_REACHABLE = 0x0D02,
	ASC_TOO_MANY_TARGET_DESCRIPTORS = 0x2606,
	ASC_UNSUPPORTED_TARGET_DESCRIPTOR_TYPE = 0x2607,
	ASC_TOO_MANY_SEGMENT_DESCRIPTORS = 0x2608,
	ASC_UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE = 0x2609,
	ASC_UNEXPECTED_INEXACT_SEGMENT = 0x260A,
};

/*
 * Identity and limits of a logical unit, as reported by INQUIRY, VPD pages,
 * READ CAPACITY and MODE SENSE. Filled by whoever attaches the LUN.
 */
struct scsi_lun_info {
	char vendor[9];    /* "VAAID" (space padded on the wire) */
	char product[17];  /* the same on every LUN */
	char revision[5];
	char serial[33];   /* VPD 80h, unique per volume */
	uint8_t naa[16];   /* VPD 83h NAA-6 IEEE Registered Extended designator */
	uint32_t block_size;  /* 512 or 4096 */
	uint64_t nblocks;     /* capacity in logical blocks */
	uint8_t lbppbe;       /* logical blocks per physical block exponent (3 for 512e) */
	uint32_t max_xfer_blocks;  /* VPD B0 MAXIMUM TRANSFER LENGTH */
	uint32_t opt_xfer_blocks;  /* VPD B0 OPTIMAL TRANSFER LENGTH */
	uint16_t opt_xfer_gran;    /* VPD B0 OPTIMAL TRANSFER LENGTH GRANULARITY */
	/* Logical block provisioning (SBC-4 4.7); later issues switch these on. */
	bool lbpme, lbprz, lbpu, lbpws, lbpws10, anc_sup;
	uint8_t provisioning_type;  /* VPD B2: 0 full, 1 resource, 2 thin */
	uint8_t threshold_exponent; /* VPD B2: a threshold set is 2^this logical blocks */
	uint64_t soft_threshold_blocks; /* used-resource soft threshold in logical blocks; 0 none */
	uint32_t max_unmap_lba_count, max_unmap_desc_count;
	uint32_t opt_unmap_gran;    /* blocks; reported with UGAVALID when non-zero */
	uint64_t max_write_same_len;
	uint8_t max_caw_len;        /* VPD B0 MAXIMUM COMPARE AND WRITE LENGTH */
	bool tpc;                   /* standard INQUIRY 3PC */
};

#define SCSI_UA_MAX 8

/* Offset of the (only) threshold descriptor in the Logical Block Provisioning mode
 * page 1Ch/02h: after the 4-byte sub_page header, SITUA and 11 reserved bytes
 * (SBC-4 6.5.7). The soft threshold unit attention reports it as INFORMATION. */
#define SCSI_LBP_MODE_DESC_OFFSET 16

/* The soft threshold as mode page 1Ch/02h reports it (THRESHOLD COUNT, SBC-4 6.5.7):
 * in threshold sets of 2^threshold_exponent blocks, rounded up, at most FFFF FFFFh. */
static inline uint32_t scsi_lbp_threshold_count(const struct scsi_lun_info *in)
{
	uint64_t set = 1ull << in->threshold_exponent;
	uint64_t n = in->soft_threshold_blocks / set + (in->soft_threshold_blocks % set != 0);
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* A pending unit attention condition: its ASC/ASCQ and, when info_valid, the
 * sense data INFORMATION field to report with VALID=1 (SPC-4 4.5.3). */
struct scsi_ua {
	uint16_t asc_ascq;
	bool info_valid;
	uint32_t info;
};

/*
 * Why a copy peer cannot be used (struct scsi_lun.xcopy_peer): no LUN with
 * that NAA, a LUN of another pool, or a LUN not exported to everyone who
 * sees the receiving LUN.
 */
enum { SCSI_PEER_UNKNOWN = 1, SCSI_PEER_OTHER_POOL, SCSI_PEER_NOT_COVISIBLE };

/* EXTENDED COPY list identifiers held for RECEIVE COPY RESULTS (handlers/xcopy.c). */
#define SCSI_COPY_HELD 8
struct scsi_copy_status {
	bool used;
	uint8_t list_id;
	uint8_t status;    /* COPY MANAGER STATUS (SPC-4 6.18.2): 0 in progress, 1 ok, 2 errors */
	uint16_t segments; /* segments processed */
	uint64_t bytes;    /* bytes transferred */
};

/*
 * Asymmetric logical unit access (SPC-4 5.16), answered by vaaid itself
 * (src/scsi/alua.c, docs/ceph.md "ALUA"): one target port group per gateway,
 * one target port per LUN per gateway, its RELATIVE TARGET PORT IDENTIFIER
 * equal to the group's id. ASYMMETRIC ACCESS STATE values (SPC-4 6.36).
 */
enum {
	SCSI_ALUA_ACTIVE_OPTIMIZED = 0x0,
	SCSI_ALUA_STANDBY = 0x2,
	SCSI_ALUA_UNAVAILABLE = 0x3,
	SCSI_ALUA_TRANSITIONING = 0xF,
};
#define SCSI_ALUA_MAX_PEERS 7
struct scsi_lun;
struct scsi_alua_group {
	uint16_t id;      /* TARGET PORT GROUP (1..65535) = its port's relative target port id */
	uint8_t state;    /* SCSI_ALUA_* */
	uint8_t status;   /* RTPG STATUS CODE: 00h, or 02h after an implicit change */
};
struct scsi_alua {
	/* false: no ALUA (standard INQUIRY TPGS 00b, no RTPG, no port designators); the
	 * local state is still kept so that a fenced LUN is refused the same way. */
	bool enabled;
	struct scsi_alua_group local;
	unsigned n_peers;
	struct scsi_alua_group peers[SCSI_ALUA_MAX_PEERS];
	/* The groups the pool's shared record marks fenced (docs/ceph.md "ALUA"):
	 * unavailable on every path, this one's included, until they come back. */
	unsigned n_fenced;
	uint16_t fenced_groups[SCSI_ALUA_MAX_PEERS + 1];
	/* Has the store fenced this gateway (another took the pool over)? Polled by
	 * dispatch (scsi_alua_refresh); NULL = never. */
	bool (*fenced)(const struct scsi_lun *lun);
};

/* Per-LUN state owned by the SCSI core. */
struct scsi_lun {
	struct scsi_lun_info info;
	struct vvol *vol;        /* the pool volume behind this LUN (handlers use it) */
	/* The pool's LBA mapping resources in threshold sets (LOG SENSE 0Ch, SBC-4 6.4.6);
	 * NULL when the LUN has none to report. */
	void (*lbp_resources)(const struct scsi_lun *lun, uint64_t *avail_sets,
			      uint64_t *used_sets);
	void *priv;              /* the transport's */
	const char *name;        /* for log lines */
	/* Pending unit attention conditions, oldest first (SAM-5 5.14). */
	struct scsi_ua ua[SCSI_UA_MAX];
	unsigned n_ua;
	/* MODE SELECT-able state (SPC-4 7.5): nothing is changeable today. */
	/*
	 * Third-party copy. xcopy_peer (set by the transport, may be NULL) finds
	 * the LUN with designator naa that a copy received by self may use, or
	 * returns NULL and sets *why (SCSI_PEER_*). NULL hook: only self is
	 * reachable. vpd_tpc_page: VPD 8Fh builder (see scsi_emul.h), NULL = none.
	 */
	struct scsi_lun *(*xcopy_peer)(struct scsi_lun *self, const uint8_t naa[16], int *why);
	void *peer_arg;
	size_t (*vpd_tpc_page)(const struct scsi_lun *lun, uint8_t *buf, size_t cap);
	struct scsi_copy_status copies[SCSI_COPY_HELD]; /* held list ids (handlers/xcopy.c) */
	unsigned copies_next;
	/* Warnings any initiator can trigger, rate-limited per LUN (src/util/log_limit.c):
	 * a copy range past the end (handlers/xcopy.c), a peer refused as not co-visible
	 * (src/daemon/lun_policy.c). Zeroed with the LUN. */
	struct vlog_limit xcopy_range_log, xcopy_peer_log;
	/* Command counters (include/vaaid/lun_stats.h), zeroed with the LUN. */
	struct vaai_lun_stats stats;
	/* ALUA (src/scsi/alua.c); zeroed = disabled, local state active/optimized. */
	struct scsi_alua alua;
};

struct scsi_cmd;
typedef void (*scsi_done_fn)(struct scsi_cmd *cmd);

struct scsi_cmd {
	const uint8_t *cdb;
	size_t cdb_len;
	/* The data buffer: data-out for commands that transfer to the target,
	 * data-in otherwise. iov_len = sum of the iovec lengths. */
	struct iovec *iov;
	int iovcnt;
	size_t iov_len;
	/* Results */
	uint8_t status;
	uint8_t sense[SCSI_SENSE_LEN];
	size_t sense_len;
	size_t data_in_len; /* bytes of data-in produced (TCMU read_len) */
	/* Plumbing */
	struct scsi_lun *lun;
	scsi_done_fn done;
	void *transport_priv;
	void *handler_priv; /* free for the handler */
	/* The counters' (handlers/lun_stats.c): set by scsi_dispatch */
	uint64_t t_start_ns;
	scsi_done_fn acct_done; /* the transport's done, called after counting */
	struct scsi_cmd_acct acct;
};

/* ---- completion */
/* Calls cmd->done exactly once: cmd->done is cleared before the call, and a
 * second completion (done == NULL) fails an assertion. */
void scsi_cmd_complete(struct scsi_cmd *cmd);
void scsi_complete_good(struct scsi_cmd *cmd);
/* CHECK CONDITION with fixed-format sense (SPC-4 4.5.3). */
void scsi_complete_sense(struct scsi_cmd *cmd, uint8_t key, uint16_t asc_ascq);

/* ---- sense building (fixed format, SPC-4 4.5.3) */
void scsi_set_sense(struct scsi_cmd *cmd, uint8_t key, uint16_t asc_ascq);
/* With VALID=1 and the INFORMATION field (4 bytes; SPC-4 4.5.3). */
void scsi_set_sense_info(struct scsi_cmd *cmd, uint8_t key, uint16_t asc_ascq, uint32_t info);
/* COMMAND-SPECIFIC INFORMATION field (bytes 8..11). */
void scsi_set_sense_csi(struct scsi_cmd *cmd, uint32_t csi);
/*
 * ILLEGAL REQUEST with the sense-key specific field pointer (SPC-4 4.5.2.4.2):
 * in_cdb true -> C/D=1 (byte of the CDB), false -> byte of the parameter list;
 * bit < 0 -> BPV=0.
 */
void scsi_set_sense_field(struct scsi_cmd *cmd, uint16_t asc_ascq, bool in_cdb, uint16_t byte,
			  int bit);
void scsi_complete_invalid_cdb(struct scsi_cmd *cmd, uint16_t byte, int bit);
void scsi_complete_invalid_param(struct scsi_cmd *cmd, uint16_t byte, int bit);
/* CHECK CONDITION, ILLEGAL REQUEST, asc_ascq with a field pointer (as scsi_set_sense_field). */
void scsi_complete_field(struct scsi_cmd *cmd, uint16_t asc_ascq, bool in_cdb, uint16_t byte,
			 int bit);

/* ---- CDB decoding (SBC-4 4.2.2, 5.x): 6/10/12/16-byte forms */
static inline uint16_t scsi_get_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t scsi_get_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}
static inline uint32_t scsi_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t scsi_get_be64(const uint8_t *p)
{
	return (uint64_t)scsi_get_be32(p) << 32 | scsi_get_be32(p + 4);
}
static inline void scsi_put_be16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; }
static inline void scsi_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24; p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void scsi_put_be64(uint8_t *p, uint64_t v)
{
	scsi_put_be32(p, (uint32_t)(v >> 32));
	scsi_put_be32(p + 4, (uint32_t)v);
}

/* CDB length from the group code of the operation code (SPC-4 4.2.5.1); 0 if unknown
 * (reserved and vendor specific groups, and 7Fh whose length is in byte 7). */
size_t scsi_cdb_length(uint8_t opcode);
/* The same, plus 7Fh variable length CDBs: 8 + ADDITIONAL CDB LENGTH (byte 7). */
size_t scsi_cdb_length_full(const uint8_t *cdb);

/*
 * LBA and TRANSFER LENGTH of READ/WRITE/VERIFY/WRITE AND VERIFY/WRITE SAME
 * style CDBs in their 6/10/12/16-byte forms (SBC-4 5.x). For READ(6)/WRITE(6)
 * a TRANSFER LENGTH of 0 means 256 blocks (SBC-4 5.20, 5.43).
 * Returns 0, or -EINVAL for an opcode without these fields.
 */
int scsi_cdb_lba_len(const uint8_t *cdb, uint64_t *lba, uint32_t *nblocks);
/* Byte offsets of the LBA and TRANSFER LENGTH fields, for field pointers. */
int scsi_cdb_len_field_offset(uint8_t opcode);
int scsi_cdb_lba_field_offset(uint8_t opcode);

/* LBA range check (SBC-4 4.5): lba + n <= nblocks without overflow. */
static inline bool scsi_lba_range_ok(const struct scsi_lun *lun, uint64_t lba, uint64_t n)
{
	return lba <= lun->info.nblocks && n <= lun->info.nblocks - lba;
}

/* ---- data buffer helpers */
/* Copy len bytes into the data-in buffer (truncated to iov_len); sets data_in_len. */
size_t scsi_copy_to_data_in(struct scsi_cmd *cmd, const void *buf, size_t len);
/* A command that transfers no data-in (ALLOCATION or TRANSFER LENGTH 0): zeroes
 * whatever data-in buffer the fabric gave anyway (see scsi_copy_to_data_in). */
void scsi_clear_data_in(struct scsi_cmd *cmd);
/* Copy up to len bytes of the data-out buffer starting at off into buf; returns bytes copied. */
size_t scsi_copy_from_data_out(const struct scsi_cmd *cmd, size_t off, void *buf, size_t len);

/* ---- unit attentions (SAM-5 5.14, SPC-4 5.9) */
void scsi_lun_post_ua(struct scsi_lun *lun, uint16_t asc_ascq);
/* The same, reported with VALID=1 and this INFORMATION field. */
void scsi_lun_post_ua_info(struct scsi_lun *lun, uint16_t asc_ascq, uint32_t info);
/*
 * THIN PROVISIONING SOFT THRESHOLD REACHED (06h/38h/07h) with the INFORMATION
 * field SBC-4 4.7.3.7.6 asks for: the offset of the threshold descriptor that
 * was crossed in the Logical Block Provisioning mode page (SCSI_LBP_MODE_DESC_OFFSET).
 */
void scsi_lun_post_soft_threshold_ua(struct scsi_lun *lun);
/*
 * Called by dispatch before a handler runs: if a UA is pending and the
 * command is not INQUIRY, REPORT LUNS or REQUEST SENSE, completes the command
 * with CHECK CONDITION / UNIT ATTENTION, clears that UA and returns true.
 */
bool scsi_lun_report_ua(struct scsi_lun *lun, struct scsi_cmd *cmd);
/* Take the oldest pending UA (REQUEST SENSE reports it as its sense data). */
bool scsi_lun_pop_ua(struct scsi_lun *lun, struct scsi_ua *ua);
/* Fixed-format sense data of a unit attention (sense key UNIT ATTENTION) into cmd->sense. */
void scsi_set_ua_sense(struct scsi_cmd *cmd, const struct scsi_ua *ua);

/* ---- asymmetric logical unit access (src/scsi/alua.c, SPC-4 5.16) */
/*
 * Switches ALUA on for a LUN being brought up (no unit attention): this gateway's
 * group (= its relative target port id), the other gateways' groups, the local
 * state, the owner's group and the fenced groups (see scsi_alua_set_record).
 */
void scsi_alua_configure(struct scsi_lun *lun, uint16_t group, const uint16_t *peers,
			 unsigned n_peers, uint8_t local, uint16_t owner, const uint16_t *fenced,
			 unsigned n_fenced);
/*
 * The pool's shared ALUA record (docs/ceph.md "ALUA": every path answers REPORT
 * TARGET PORT GROUPS from it): the local state (what this gateway knows of
 * itself), the owner's group (0: not known; a record still naming this gateway
 * while it is not active counts as not known) and the groups marked fenced. A
 * peer is active/optimized if it is the owner (this gateway not active; with one
 * peer and no owner known, that peer), else unavailable if marked fenced, else
 * standby. Each change posts ASYMMETRIC ACCESS STATE CHANGED.
 */
void scsi_alua_set_record(struct scsi_lun *lun, uint8_t local, uint16_t owner,
			  const uint16_t *fenced, unsigned n_fenced);
/*
 * What the daemon calls when the pool's ownership changes here: the local state,
 * and the group of the gateway that owns the pool (0: not known); the fenced
 * groups stay those of the last record (scsi_alua_set_record, the same rule).
 */
void scsi_alua_set_states(struct scsi_lun *lun, uint8_t local, uint16_t owner);
/* Sets this gateway's group state; a change posts ASYMMETRIC ACCESS STATE CHANGED
 * (SPC-4 5.16.2, implicit transitions) when ALUA is enabled. */
void scsi_alua_set_local(struct scsi_lun *lun, uint8_t state);
/* Sets peer group id's state (ignored when id is not a configured peer); a change
 * posts the same unit attention: RTPG's answer changed (SPC-4 5.16.2). */
void scsi_alua_set_peer(struct scsi_lun *lun, uint16_t id, uint8_t state);
/* Polls lun->alua.fenced: a fenced gateway's group becomes unavailable (with ALUA)
 * or standby (without: the sense vaaid gave before ALUA). Called by dispatch. */
void scsi_alua_refresh(struct scsi_lun *lun);
/* The state's rule (SPC-4 5.16.2.4: standby, unavailable, transitioning): may
 * this command run in the LUN's current local state? If not, completes it with NOT READY and the state's
 * ASC/ASCQ and returns true. Called by dispatch only. */
bool scsi_alua_refuse(struct scsi_lun *lun, struct scsi_cmd *cmd);
/* A command that met the fence in the pool (the store failed it after dispatch):
 * refresh, then complete it with the sense of the (now not active) local state. */
void scsi_alua_complete_not_active(struct scsi_cmd *cmd);
/* VPD 83h target port designators (relative target port, target port group, SPC-4
 * 7.8.6.7 and 7.8.6.8) at d; returns their length (0 without ALUA). */
size_t scsi_alua_vpd83(const struct scsi_lun *lun, uint8_t *d);

#endif
