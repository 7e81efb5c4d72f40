/*
 * Asymmetric logical unit access (SPC-4 5.16), answered by vaaid rather than
 * LIO (docs/ceph.md "ALUA": for a TCMU device LIO passes INQUIRY and MAINTENANCE
 * IN to userspace anyway, and the state follows the pool's ownership, the Ceph
 * exclusive lock, which only vaaid knows).
 *
 * How this file works: every LUN carries a struct scsi_alua (include/vaaid/scsi.h):
 * the local target port group (this gateway: one group, one target port per LUN,
 * RELATIVE TARGET PORT IDENTIFIER = the group id, because TCMU does not say
 * through which port a command came) and the peer groups (the other gateways).
 * The daemon sets the states (scsi_alua_set_local / _set_peer); the store's fence
 * is polled by dispatch (scsi_alua_refresh). Dispatch then applies the one rule
 * of which commands a state allows (scsi_alua_refuse); the fenced path of the
 * data handlers completes with the same sense (scsi_alua_complete_not_active).
 * REPORT TARGET PORT GROUPS and the VPD 83h port designators are built here.
 * Only implicit ALUA (TPGS 01b): SET TARGET PORT GROUPS is not implemented,
 * since a takeover is an explicit decision of the cluster manager (issue 26
 * item 2), never an initiator's.
 */
#include "emul_internal.h"
#include "vaaid/scsi_emul.h"

/* IMPLICIT TRANSITION TIME (RTPG extended header, SPC-4 6.36): a takeover
 * measured 1.2-2.6 s under load, from a killed gateway too (docs/ceph.md),
 * plus recovery; 30 s leaves room for a slow cluster (librados' own mount
 * timeout is 30 s). Initiators base their transitioning timeout on this. */
#define ALUA_IMPLICIT_TRANSITION_SECS 30
/* SUPPORTED states in a descriptor (SPC-4 6.36): T_SUP, U_SUP, S_SUP,
 * AO_SUP (no active/non-optimized, no LBA dependent, no offline). */
#define ALUA_SUPPORTED 0x8D
/* RTPG STATUS CODE 02h: altered by implicit asymmetric access behavior. */
#define ALUA_STATUS_IMPLICIT 0x02

static void changed(struct scsi_lun *lun, struct scsi_alua_group *g, uint8_t state)
{
	if (g->state == state)
		return;
	g->state = state;
	g->status = ALUA_STATUS_IMPLICIT;
	/* SPC-4 5.16.2 (implicit transitions): after an implicit asymmetric access
	 * state change the device server establishes ASYMMETRIC ACCESS STATE CHANGED for every I_T nexus (vaaid
	 * sees one per LUN through LIO: src/scsi/ua.c). Without ALUA nothing is said:
	 * such an initiator knows no port groups. */
	if (lun->alua.enabled)
		scsi_lun_post_ua(lun, ASC_ASYMMETRIC_ACCESS_STATE_CHANGED);
}

void scsi_alua_set_local(struct scsi_lun *lun, uint8_t state)
{
	changed(lun, &lun->alua.local, state);
}

void scsi_alua_set_peer(struct scsi_lun *lun, uint16_t id, uint8_t state)
{
	for (unsigned i = 0; i < lun->alua.n_peers; i++)
		if (lun->alua.peers[i].id == id)
			changed(lun, &lun->alua.peers[i], state);
}

static bool group_fenced(const struct scsi_alua *a, uint16_t id)
{
	for (unsigned i = 0; i < a->n_fenced; i++)
		if (a->fenced_groups[i] == id)
			return true;
	return false;
}

/* A peer's state from the shared record (scsi_alua_set_record): a group the record
 * marks fenced unavailable -- never the owner, even when the owner key still names
 * it (a takeover writes the mark first, then the owner: a record half written);
 * the owner's group active/optimized (owner 0: not known; with a single peer, that
 * peer; a record that still names this gateway while it is not active is not known
 * either: the takeover that fenced it has not written the record yet); the others
 * standby. */
static uint8_t peer_state(const struct scsi_alua *a, uint8_t local, uint16_t owner, uint16_t id)
{
	if (group_fenced(a, id))
		return SCSI_ALUA_UNAVAILABLE;
	if (local != SCSI_ALUA_ACTIVE_OPTIMIZED) {
		if (owner == a->local.id || group_fenced(a, owner))
			owner = 0;
		if (!owner && a->n_peers == 1)
			owner = a->peers[0].id;
		if (id == owner)
			return SCSI_ALUA_ACTIVE_OPTIMIZED;
	}
	return SCSI_ALUA_STANDBY;
}

static void set_fenced(struct scsi_alua *a, const uint16_t *fenced, unsigned n_fenced)
{
	a->n_fenced = 0;
	for (unsigned i = 0; fenced && i < n_fenced && a->n_fenced < SCSI_ALUA_MAX_PEERS + 1; i++)
		a->fenced_groups[a->n_fenced++] = fenced[i];
}

void scsi_alua_configure(struct scsi_lun *lun, uint16_t group, const uint16_t *peers,
			 unsigned n_peers, uint8_t local, uint16_t owner, const uint16_t *fenced,
			 unsigned n_fenced)
{
	struct scsi_alua *a = &lun->alua;
	a->enabled = true;
	a->local = (struct scsi_alua_group){.id = group, .state = local};
	a->n_peers = n_peers < SCSI_ALUA_MAX_PEERS ? n_peers : SCSI_ALUA_MAX_PEERS;
	set_fenced(a, fenced, n_fenced);
	for (unsigned i = 0; i < a->n_peers; i++)
		a->peers[i] = (struct scsi_alua_group){.id = peers[i]};
	for (unsigned i = 0; i < a->n_peers; i++)
		a->peers[i].state = peer_state(a, local, owner, a->peers[i].id);
}

void scsi_alua_set_states(struct scsi_lun *lun, uint8_t local, uint16_t owner)
{
	scsi_alua_set_local(lun, local);
	for (unsigned i = 0; i < lun->alua.n_peers; i++) {
		uint16_t id = lun->alua.peers[i].id;
		scsi_alua_set_peer(lun, id, peer_state(&lun->alua, local, owner, id));
	}
}

void scsi_alua_set_record(struct scsi_lun *lun, uint8_t local, uint16_t owner,
			  const uint16_t *fenced, unsigned n_fenced)
{
	set_fenced(&lun->alua, fenced, n_fenced);
	scsi_alua_set_states(lun, local, owner);
}

void scsi_alua_refresh(struct scsi_lun *lun)
{
	if (!lun->alua.fenced || !lun->alua.fenced(lun))
		return;
	/* Fenced: another gateway holds the pool; this one cannot serve it again
	 * without a takeover of its own: unavailable (SPC-4 5.16.2.4). Without ALUA,
	 * standby's sense, which vaaid answered for a fenced pool before ALUA. */
	if (!lun->alua.enabled) {
		scsi_alua_set_local(lun, SCSI_ALUA_STANDBY);
		return;
	}
	/* the peers follow (scsi_alua_set_states): with one peer, it is the new owner */
	if (lun->alua.local.state != SCSI_ALUA_UNAVAILABLE)
		scsi_alua_set_states(lun, SCSI_ALUA_UNAVAILABLE, 0);
}

/* The commands every state allows (SPC-4 5.16.2.4): INQUIRY, REPORT LUNS (LIO
 * answers it itself), REPORT TARGET PORT GROUPS, REQUEST SENSE. */
static bool allowed_always(const uint8_t *cdb)
{
	switch (cdb[0]) {
	case 0x12: /* INQUIRY */
	case 0xA0: /* REPORT LUNS */
	case 0x03: /* REQUEST SENSE */
		return true;
	case 0xA3: /* MAINTENANCE IN / REPORT TARGET PORT GROUPS */
		return (cdb[1] & 0x1F) == 0x0A;
	default:
		return false;
	}
}

/* Standby adds (SPC-4 5.16.2.4, standby state) LOG SENSE, MODE SENSE and MODE
 * SELECT of those vaaid implements; and READ CAPACITY(10)/(16), as LIO's own ALUA
 * does (target_core_alua.c core_alua_state_standby): a host scanning a standby
 * path otherwise sees a LUN of no capacity. */
static bool allowed_standby(const uint8_t *cdb)
{
	switch (cdb[0]) {
	case 0x4D: /* LOG SENSE */
	case 0x15: /* MODE SELECT(6) */
	case 0x55: /* MODE SELECT(10) */
	case 0x1A: /* MODE SENSE(6) */
	case 0x5A: /* MODE SENSE(10) */
	case 0x25: /* READ CAPACITY(10) */
		return true;
	case 0x9E: /* SERVICE ACTION IN(16) / READ CAPACITY(16) */
		return (cdb[1] & 0x1F) == 0x10;
	default:
		return false;
	}
}

/* NOT READY / LOGICAL UNIT NOT ACCESSIBLE, with the state's ASCQ (SPC-4 5.16.2.4). */
static uint16_t state_asc(uint8_t state)
{
	switch (state) {
	case SCSI_ALUA_UNAVAILABLE:
		return ASC_LU_NOT_ACCESSIBLE_PORT_UNAVAILABLE;
	case SCSI_ALUA_TRANSITIONING:
		return ASC_LU_NOT_ACCESSIBLE_TRANSITIONING;
	default:
		return ASC_LU_NOT_ACCESSIBLE_PORT_STANDBY;
	}
}

bool scsi_alua_refuse(struct scsi_lun *lun, struct scsi_cmd *cmd)
{
	uint8_t state = lun->alua.local.state;
	if (state == SCSI_ALUA_ACTIVE_OPTIMIZED || allowed_always(cmd->cdb))
		return false;
	if (state == SCSI_ALUA_STANDBY && allowed_standby(cmd->cdb))
		return false;
	scsi_complete_sense(cmd, SK_NOT_READY, state_asc(state));
	return true;
}

void scsi_alua_complete_not_active(struct scsi_cmd *cmd)
{
	scsi_alua_refresh(cmd->lun);
	scsi_complete_sense(cmd, SK_NOT_READY, state_asc(cmd->lun->alua.local.state));
}

size_t scsi_alua_vpd83(const struct scsi_lun *lun, uint8_t *d)
{
	if (!lun->alua.enabled)
		return 0;
	/* Relative target port designator (SPC-4 7.8.6.7): CODE SET 1 binary, PIV=0
	 * (vaaid does not know the fabric, so no PROTOCOL IDENTIFIER), ASSOCIATION 01b
	 * (the target port), TYPE 4h; the port's id = the group's id. */
	d[0] = 0x01;
	d[1] = 0x14;
	d[3] = 4;
	scsi_put_be16(d + 6, lun->alua.local.id);
	/* Target port group designator (SPC-4 7.8.6.8): ASSOCIATION 01b, TYPE 5h. */
	d[8] = 0x01;
	d[9] = 0x15;
	d[11] = 4;
	scsi_put_be16(d + 14, lun->alua.local.id);
	return 16;
}

/* One target port group descriptor (SPC-4 6.36) with its one target
 * port descriptor (SPC-4 6.36); 12 bytes. */
static size_t put_group(uint8_t *d, const struct scsi_alua_group *g)
{
	d[0] = g->state & 0x0F; /* PREF=0, ASYMMETRIC ACCESS STATE */
	d[1] = ALUA_SUPPORTED;
	scsi_put_be16(d + 2, g->id);
	d[5] = g->status;
	d[7] = 1; /* TARGET PORT COUNT */
	scsi_put_be16(d + 10, g->id); /* RELATIVE TARGET PORT IDENTIFIER */
	return 12;
}

/* REPORT TARGET PORT GROUPS (SPC-4 6.36): the same answer on every gateway,
 * groups in ascending id order, whatever the receiving port. */
void scsi_emul_report_tpgs(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	const struct scsi_alua *a = &cmd->lun->alua;
	uint8_t fmt = cdb[1] >> 5;          /* PARAMETER DATA FORMAT */
	size_t alloc = scsi_get_be32(cdb + 6); /* ALLOCATION LENGTH */
	/* 000b length only header, 001b extended header; others reserved (SPC-4 6.36). */
	if (fmt > 1) {
		scsi_complete_invalid_cdb(cmd, 1, 7);
		return;
	}
	const struct scsi_alua_group *g[1 + SCSI_ALUA_MAX_PEERS];
	unsigned n = 0;
	g[n++] = &a->local;
	for (unsigned i = 0; i < a->n_peers && i < SCSI_ALUA_MAX_PEERS; i++)
		g[n++] = &a->peers[i];
	for (unsigned i = 1; i < n; i++) /* insertion sort by id */
		for (unsigned j = i; j > 0 && g[j - 1]->id > g[j]->id; j--) {
			const struct scsi_alua_group *t = g[j];
			g[j] = g[j - 1];
			g[j - 1] = t;
		}
	uint8_t b[8 + 12 * (1 + SCSI_ALUA_MAX_PEERS)];
	memset(b, 0, sizeof(b));
	size_t len = fmt ? 8 : 4;
	if (fmt) {
		b[4] = 0x10; /* FORMAT TYPE 001b */
		b[5] = ALUA_IMPLICIT_TRANSITION_SECS;
	}
	for (unsigned i = 0; i < n; i++)
		len += put_group(b + len, g[i]);
	scsi_put_be32(b, (uint32_t)(len - 4)); /* RETURN DATA LENGTH (n - 3) */
	emul_return_data(cmd, b, len, alloc);
}
