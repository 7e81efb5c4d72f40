/*
 * ALUA (src/scsi/alua.c, SPC-4 5.16) through the real ring and engine
 * (simhost): without [alua] nothing is claimed (TPGS 00b, no REPORT TARGET
 * PORT GROUPS, no port designators); with it, standard INQUIRY TPGS 01b, the
 * VPD 83h relative target port and target port group designators, REPORT
 * TARGET PORT GROUPS' bytes in both header formats and truncated, REPORT
 * SUPPORTED OPERATION CODES listing it; each state's rule for a data command
 * and for the commands it allows (standby 02h/04h/0Bh, transitioning
 * 02h/04h/0Ah, unavailable 02h/04h/0Ch), and ASYMMETRIC ACCESS STATE CHANGED
 * (06h/2Ah/06h) on every LUN after a change.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "simhost_test_env.h"
#include "vaaid/scsi.h"

static const uint8_t INQ[6] = {0x12, 0, 0, 0, 96, 0};
static const uint8_t VPD83[6] = {0x12, 1, 0x83, 0, 255, 0};
static const uint8_t TUR[6] = {0};
static const uint8_t READ10[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0};
static const uint8_t MSENSE6[6] = {0x1A, 0, 0x3F, 0, 255, 0};
static const uint8_t RSENSE[6] = {0x03, 0, 0, 0, 18, 0};
/* REPORT TARGET PORT GROUPS, PARAMETER DATA FORMAT fmt, ALLOCATION LENGTH alloc */
static void rtpg_cdb(uint8_t cdb[12], uint8_t fmt, uint32_t alloc)
{
	memset(cdb, 0, 12);
	cdb[0] = 0xA3;
	cdb[1] = (uint8_t)(fmt << 5 | 0x0A);
	scsi_put_be32(cdb + 6, alloc);
}

static struct simhost_result cmd_on(struct simhost *h, int lun, const uint8_t *cdb, size_t len,
				    size_t in_len)
{
	uint64_t tag;
	struct simhost_result r;
	assert_int_equal(simhost_submit(h, lun, cdb, len, NULL, 0, in_len, &tag), 0);
	assert_int_equal(simhost_reap(h, &r, 1, 60000), 1);
	return r;
}

static void expect_sense(struct simhost_result r, uint8_t key, uint16_t asc_ascq)
{
	assert_int_equal(r.r.status, 2);
	assert_int_equal(r.r.sense[2] & 0x0F, key);
	assert_int_equal(r.r.sense[12], asc_ascq >> 8);
	assert_int_equal(r.r.sense[13], asc_ascq & 0xFF);
	simhost_result_free(&r);
}

static void expect_good(struct simhost_result r)
{
	assert_int_equal(r.r.status, 0);
	simhost_result_free(&r);
}

static struct simhost *setup(const char *name, char *path, size_t plen, int nluns)
{
	struct vpool_params prm = {0};
	struct simhost *h = test_pool_create(name, 64ull << 20, &prm, path, plen);
	for (int i = 0; i < nluns; i++) {
		char v[8];
		snprintf(v, sizeof(v), "v%d", i);
		assert_int_equal(simhost_volume_create(h, v, 8ull << 20, 512), 0);
	}
	return h;
}

static void attach_all(struct simhost *h, int nluns)
{
	for (int i = 0; i < nluns; i++) {
		char v[8];
		snprintf(v, sizeof(v), "v%d", i);
		assert_int_equal(simhost_attach(h, v, i), 0);
	}
}

/* Without [alua]: today's answers exactly. */
static void no_alua_claims_nothing(void **state)
{
	(void)state;
	char path[256];
	struct simhost *h = setup("alua0", path, sizeof(path), 1);
	attach_all(h, 1);
	struct simhost_result r = cmd_on(h, 0, INQ, 6, 96);
	assert_int_equal(r.r.status, 0);
	assert_int_equal(r.r.data_in[5] & 0x30, 0x00); /* TPGS 00b */
	simhost_result_free(&r);
	uint8_t cdb[12];
	rtpg_cdb(cdb, 0, 256);
	r = cmd_on(h, 0, cdb, 12, 256);
	expect_sense(r, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	/* VPD 83h: the NAA and T10 vendor ID designators only */
	r = cmd_on(h, 0, VPD83, 6, 255);
	assert_int_equal(r.r.status, 0);
	size_t n = scsi_get_be16(r.r.data_in + 2) + 4, off = 4, count = 0;
	for (; off < n; off += 4 + r.r.data_in[off + 3], count++)
		assert_int_equal((r.r.data_in[off + 1] >> 4) & 3, 0); /* ASSOCIATION: the LU */
	assert_int_equal(count, 2);
	simhost_result_free(&r);
	/* REPORT SUPPORTED OPERATION CODES, one command A3h/0Ah: SUPPORT 001b */
	uint8_t rsoc[12] = {0xA3, 0x0C, 0x02, 0xA3, 0x00, 0x0A, 0, 0, 1, 0, 0, 0};
	r = cmd_on(h, 0, rsoc, 12, 256);
	assert_int_equal(r.r.status, 0);
	assert_int_equal(r.r.data_in[1] & 0x07, 0x01);
	simhost_result_free(&r);
	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
}

static const uint8_t GROUP_DESC_SUP = 0x8D; /* T_SUP U_SUP S_SUP AO_SUP */

/* A group descriptor at d: state, supported states, id, status, one port of the same id. */
static void expect_group(const uint8_t *d, uint8_t st, uint16_t id, uint8_t status)
{
	assert_int_equal(d[0], st);
	assert_int_equal(d[1], GROUP_DESC_SUP);
	assert_int_equal(scsi_get_be16(d + 2), id);
	assert_int_equal(d[4], 0);
	assert_int_equal(d[5], status);
	assert_int_equal(d[7], 1); /* TARGET PORT COUNT */
	assert_int_equal(scsi_get_be16(d + 8), 0);
	assert_int_equal(scsi_get_be16(d + 10), id); /* RELATIVE TARGET PORT IDENTIFIER */
}

static void identity_and_rtpg(void **state)
{
	(void)state;
	char path[256];
	struct simhost *h = setup("alua1", path, sizeof(path), 1);
	const uint16_t peers[] = {3, 1};
	assert_int_equal(simhost_alua(h, 2, peers, 2), 0);
	/* a file pool standing in for a shared (RBD) one: the peers are reported */
	assert_int_equal(simhost_alua_shared(h, true), 0);
	attach_all(h, 1);

	struct simhost_result r = cmd_on(h, 0, INQ, 6, 96);
	assert_int_equal(r.r.status, 0);
	assert_int_equal(r.r.data_in[5] & 0x30, 0x10); /* TPGS 01b: implicit only */
	simhost_result_free(&r);

	/* VPD 83h: NAA, T10 vendor ID, then relative target port 2, target port group 2 */
	r = cmd_on(h, 0, VPD83, 6, 255);
	assert_int_equal(r.r.status, 0);
	size_t n = scsi_get_be16(r.r.data_in + 2) + 4;
	const uint8_t *d = r.r.data_in + 4;
	d += 4 + d[3]; /* NAA */
	d += 4 + d[3]; /* T10 vendor ID */
	const uint8_t rtp[8] = {0x01, 0x14, 0x00, 0x04, 0x00, 0x00, 0x00, 0x02};
	const uint8_t tpg[8] = {0x01, 0x15, 0x00, 0x04, 0x00, 0x00, 0x00, 0x02};
	assert_memory_equal(d, rtp, 8);
	assert_memory_equal(d + 8, tpg, 8);
	assert_int_equal((size_t)(d + 16 - r.r.data_in), n);
	simhost_result_free(&r);

	/* RTPG, length only header: 3 groups in id order, local (2) active/optimized */
	uint8_t cdb[12];
	rtpg_cdb(cdb, 0, 256);
	r = cmd_on(h, 0, cdb, 12, 256);
	assert_int_equal(r.r.status, 0);
	assert_int_equal(scsi_get_be32(r.r.data_in), 36);
	expect_group(r.r.data_in + 4, SCSI_ALUA_STANDBY, 1, 0);
	expect_group(r.r.data_in + 16, SCSI_ALUA_ACTIVE_OPTIMIZED, 2, 0);
	expect_group(r.r.data_in + 28, SCSI_ALUA_STANDBY, 3, 0);
	simhost_result_free(&r);

	/* extended header: FORMAT TYPE 001b, IMPLICIT TRANSITION TIME */
	rtpg_cdb(cdb, 1, 256);
	r = cmd_on(h, 0, cdb, 12, 256);
	assert_int_equal(r.r.status, 0);
	assert_int_equal(scsi_get_be32(r.r.data_in), 40);
	assert_int_equal(r.r.data_in[4], 0x10);
	assert_true(r.r.data_in[5] > 0);
	expect_group(r.r.data_in + 8, SCSI_ALUA_STANDBY, 1, 0);
	expect_group(r.r.data_in + 32, SCSI_ALUA_STANDBY, 3, 0);
	simhost_result_free(&r);

	/* ALLOCATION LENGTH 10 truncates (SPC-4 4.2.5.6), RETURN DATA LENGTH intact */
	rtpg_cdb(cdb, 0, 10);
	r = cmd_on(h, 0, cdb, 12, 256);
	assert_int_equal(r.r.status, 0);
	assert_int_equal(r.r.data_in_len, 10);
	assert_int_equal(scsi_get_be32(r.r.data_in), 36);
	simhost_result_free(&r);

	/* a reserved PARAMETER DATA FORMAT: INVALID FIELD IN CDB at byte 1 */
	rtpg_cdb(cdb, 2, 256);
	r = cmd_on(h, 0, cdb, 12, 256);
	assert_int_equal(r.r.sense[15], 0xC8 | 7); /* SKSV, C/D, BPV, bit 7 */
	assert_int_equal(scsi_get_be16(r.r.sense + 16), 1);
	expect_sense(r, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);

	/* REPORT SUPPORTED OPERATION CODES: one command A3h/0Ah, its CDB usage */
	uint8_t rsoc[12] = {0xA3, 0x0C, 0x02, 0xA3, 0x00, 0x0A, 0, 0, 1, 0, 0, 0};
	r = cmd_on(h, 0, rsoc, 12, 256);
	assert_int_equal(r.r.status, 0);
	assert_int_equal(r.r.data_in[1] & 0x07, 0x03);
	assert_int_equal(scsi_get_be16(r.r.data_in + 2), 12);
	assert_int_equal(r.r.data_in[4], 0xA3);
	assert_int_equal(r.r.data_in[5], 0xEA);
	simhost_result_free(&r);
	/* and in the list of all commands */
	uint8_t all[12] = {0xA3, 0x0C, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0};
	r = cmd_on(h, 0, all, 12, 4096);
	assert_int_equal(r.r.status, 0);
	bool listed = false;
	size_t len = scsi_get_be32(r.r.data_in) + 4;
	for (size_t o = 4; o + 8 <= len; o += 8)
		listed |= r.r.data_in[o] == 0xA3 && scsi_get_be16(r.r.data_in + o + 2) == 0x0A &&
			  (r.r.data_in[o + 5] & 1);
	assert_true(listed);
	simhost_result_free(&r);
	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
}

/* The state change is reported once per LUN (each is an I_T nexus of its own),
 * INQUIRY and REQUEST SENSE aside: the next other command gets it. */
static void expect_state_changed_ua(struct simhost *h, int nluns)
{
	for (int i = 0; i < nluns; i++) {
		expect_good(cmd_on(h, i, INQ, 6, 96)); /* does not clear it (SAM-5 5.14) */
		expect_sense(cmd_on(h, i, TUR, 6, 0), SK_UNIT_ATTENTION,
			     ASC_ASYMMETRIC_ACCESS_STATE_CHANGED);
	}
}

static void rtpg_states(struct simhost *h, uint8_t s1, uint8_t s2, uint8_t s3)
{
	uint8_t cdb[12];
	rtpg_cdb(cdb, 0, 256);
	struct simhost_result r = cmd_on(h, 0, cdb, 12, 256);
	assert_int_equal(r.r.status, 0);
	assert_int_equal(r.r.data_in[4], s1);
	assert_int_equal(r.r.data_in[16], s2);
	assert_int_equal(r.r.data_in[28], s3);
	assert_int_equal(r.r.data_in[16 + 5], 0x02); /* STATUS CODE: altered implicitly */
	simhost_result_free(&r);
}

static void states_and_senses(void **state)
{
	(void)state;
	char path[256];
	struct simhost *h = setup("alua2", path, sizeof(path), 2);
	const uint16_t peers[] = {1, 3};
	assert_int_equal(simhost_alua(h, 2, peers, 2), 0);
	/* a file pool standing in for a shared (RBD) one: the peers are reported */
	assert_int_equal(simhost_alua_shared(h, true), 0);
	attach_all(h, 2);
	uint8_t rtpg[12];
	rtpg_cdb(rtpg, 0, 256);
	expect_good(cmd_on(h, 0, READ10, 10, 4096));

	/* standby, group 1 owns the pool */
	assert_int_equal(simhost_alua_states(h, SCSI_ALUA_STANDBY, 1), 0);
	expect_state_changed_ua(h, 2);
	rtpg_states(h, SCSI_ALUA_ACTIVE_OPTIMIZED, SCSI_ALUA_STANDBY, SCSI_ALUA_STANDBY);
	expect_sense(cmd_on(h, 0, READ10, 10, 4096), SK_NOT_READY, ASC_LU_NOT_ACCESSIBLE_PORT_STANDBY);
	expect_sense(cmd_on(h, 1, TUR, 6, 0), SK_NOT_READY, ASC_LU_NOT_ACCESSIBLE_PORT_STANDBY);
	expect_good(cmd_on(h, 0, MSENSE6, 6, 255)); /* allowed in standby */
	expect_good(cmd_on(h, 0, RSENSE, 6, 18));
	expect_good(cmd_on(h, 0, VPD83, 6, 255));

	/* transitioning (a takeover under way here) */
	assert_int_equal(simhost_alua_states(h, SCSI_ALUA_TRANSITIONING, 0), 0);
	expect_state_changed_ua(h, 2);
	expect_sense(cmd_on(h, 0, READ10, 10, 4096), SK_NOT_READY, ASC_LU_NOT_ACCESSIBLE_TRANSITIONING);
	expect_sense(cmd_on(h, 0, MSENSE6, 6, 255), SK_NOT_READY, ASC_LU_NOT_ACCESSIBLE_TRANSITIONING);
	expect_good(cmd_on(h, 0, rtpg, 12, 256));
	expect_good(cmd_on(h, 0, INQ, 6, 96));

	/* unavailable */
	assert_int_equal(simhost_alua_states(h, SCSI_ALUA_UNAVAILABLE, 3), 0);
	expect_state_changed_ua(h, 2);
	rtpg_states(h, SCSI_ALUA_STANDBY, SCSI_ALUA_UNAVAILABLE, SCSI_ALUA_ACTIVE_OPTIMIZED);
	expect_sense(cmd_on(h, 0, READ10, 10, 4096), SK_NOT_READY,
		     ASC_LU_NOT_ACCESSIBLE_PORT_UNAVAILABLE);
	expect_sense(cmd_on(h, 0, MSENSE6, 6, 255), SK_NOT_READY,
		     ASC_LU_NOT_ACCESSIBLE_PORT_UNAVAILABLE);
	expect_good(cmd_on(h, 0, RSENSE, 6, 18));

	/* active again: served, peers standby */
	assert_int_equal(simhost_alua_states(h, SCSI_ALUA_ACTIVE_OPTIMIZED, 0), 0);
	expect_state_changed_ua(h, 2);
	rtpg_states(h, SCSI_ALUA_STANDBY, SCSI_ALUA_ACTIVE_OPTIMIZED, SCSI_ALUA_STANDBY);
	expect_good(cmd_on(h, 0, READ10, 10, 4096));
	expect_good(cmd_on(h, 1, TUR, 6, 0));
	/* no change, no unit attention */
	assert_int_equal(simhost_alua_states(h, SCSI_ALUA_ACTIVE_OPTIMIZED, 0), 0);
	expect_good(cmd_on(h, 0, TUR, 6, 0));

	/* standby, the record half written by a takeover (group 1 marked fenced, the
	 * owner key still naming it): a fenced group is never the owner -- unavailable,
	 * as the gateway that fenced it shows it; the new owner not known yet: standby */
	const uint16_t fenced1[] = {1};
	assert_int_equal(simhost_alua_record(h, SCSI_ALUA_STANDBY, 1, fenced1, 1), 0);
	expect_state_changed_ua(h, 2);
	rtpg_states(h, SCSI_ALUA_UNAVAILABLE, SCSI_ALUA_STANDBY, SCSI_ALUA_STANDBY);
	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
}

/* Two gateways with one peer each: with the owner not known yet, the single peer
 * is the owner; both answer RTPG alike. */
static void single_peer_is_owner(void **state)
{
	(void)state;
	char path[256];
	struct simhost *h = setup("alua3", path, sizeof(path), 1);
	const uint16_t peers[] = {7};
	assert_int_equal(simhost_alua(h, 9, peers, 1), 0);
	/* a file pool standing in for a shared (RBD) one: the peers are reported */
	assert_int_equal(simhost_alua_shared(h, true), 0);
	attach_all(h, 1);
	assert_int_equal(simhost_alua_states(h, SCSI_ALUA_STANDBY, 0), 0);
	expect_state_changed_ua(h, 1);
	uint8_t cdb[12];
	rtpg_cdb(cdb, 0, 256);
	struct simhost_result r = cmd_on(h, 0, cdb, 12, 256);
	assert_int_equal(r.r.status, 0);
	assert_int_equal(scsi_get_be16(r.r.data_in + 6), 7);
	assert_int_equal(r.r.data_in[4], SCSI_ALUA_ACTIVE_OPTIMIZED);
	assert_int_equal(scsi_get_be16(r.r.data_in + 18), 9);
	assert_int_equal(r.r.data_in[16], SCSI_ALUA_STANDBY);
	simhost_result_free(&r);
	/* fenced, the shared record still naming this gateway as the owner (the
	 * takeover has not written it yet): not known, so the single peer is the owner */
	assert_int_equal(simhost_alua_record(h, SCSI_ALUA_UNAVAILABLE, 9, NULL, 0), 0);
	expect_state_changed_ua(h, 1);
	r = cmd_on(h, 0, cdb, 12, 256);
	assert_int_equal(r.r.status, 0);
	assert_int_equal(r.r.data_in[4], SCSI_ALUA_ACTIVE_OPTIMIZED);
	assert_int_equal(r.r.data_in[16], SCSI_ALUA_UNAVAILABLE);
	simhost_result_free(&r);
	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
}

/* The states of groups 1, 2, 3 in RTPG through h's LUN 0 (unit attentions taken). */
static void states_of(struct simhost *h, uint8_t st[3])
{
	uint8_t cdb[12];
	rtpg_cdb(cdb, 0, 256);
	struct simhost_result r = cmd_on(h, 0, cdb, 12, 256);
	while (r.r.status == 2 && (r.r.sense[2] & 0x0F) == SK_UNIT_ATTENTION) {
		simhost_result_free(&r);
		r = cmd_on(h, 0, cdb, 12, 256);
	}
	assert_int_equal(r.r.status, 0);
	assert_int_equal(scsi_get_be32(r.r.data_in), 36);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(scsi_get_be16(r.r.data_in + 4 + 12 * i + 2), i + 1);
		st[i] = r.r.data_in[4 + 12 * i] & 0x0F;
	}
	simhost_result_free(&r);
}

/* The shared record's rule (docs/ceph.md "The shared ALUA record"), without a
 * cluster: after group 2 took the pool from group 1 (the record: owner 2, group 1
 * fenced), the new owner, the fenced gateway and a standby third answer the same
 * states -- 1 unavailable, 2 active/optimized, 3 standby -- each from its own
 * knowledge of itself plus the record; the fenced one also while the record still
 * names it as the owner (the takeover has not written it yet) shows no other
 * group active/optimized, and once group 1 is back (its mark removed) every path
 * shows it standby. */
static void shared_record_same_on_every_path(void **state)
{
	(void)state;
	char pa[256], pb[256], pc[256];
	struct simhost *g[3] = {setup("alua5a", pa, sizeof(pa), 1), setup("alua5b", pb, sizeof(pb), 1),
				setup("alua5c", pc, sizeof(pc), 1)};
	for (uint16_t i = 0; i < 3; i++) {
		uint16_t peers[2], n = 0;
		for (uint16_t p = 1; p <= 3; p++)
			if (p != i + 1)
				peers[n++] = p;
		assert_int_equal(simhost_alua(g[i], i + 1, peers, 2), 0);
		assert_int_equal(simhost_alua_shared(g[i], true), 0);
		attach_all(g[i], 1);
	}
	const uint16_t one = 1;
	uint8_t st[3][3];
	/* the fenced gateway before the record is written: owner unknown (still itself) */
	assert_int_equal(simhost_alua_record(g[0], SCSI_ALUA_UNAVAILABLE, 1, NULL, 0), 0);
	states_of(g[0], st[0]);
	assert_int_equal(st[0][0], SCSI_ALUA_UNAVAILABLE);
	assert_int_equal(st[0][1], SCSI_ALUA_STANDBY);
	assert_int_equal(st[0][2], SCSI_ALUA_STANDBY);
	/* the record written: owner 2, group 1 fenced */
	assert_int_equal(simhost_alua_record(g[0], SCSI_ALUA_UNAVAILABLE, 2, &one, 1), 0);
	assert_int_equal(simhost_alua_record(g[1], SCSI_ALUA_ACTIVE_OPTIMIZED, 2, &one, 1), 0);
	assert_int_equal(simhost_alua_record(g[2], SCSI_ALUA_STANDBY, 2, &one, 1), 0);
	for (int i = 0; i < 3; i++)
		states_of(g[i], st[i]);
	const uint8_t want[3] = {SCSI_ALUA_UNAVAILABLE, SCSI_ALUA_ACTIVE_OPTIMIZED,
				 SCSI_ALUA_STANDBY};
	for (int i = 0; i < 3; i++)
		assert_memory_equal(st[i], want, 3);
	/* group 1 back as standby: its mark removed from the record */
	assert_int_equal(simhost_alua_record(g[1], SCSI_ALUA_ACTIVE_OPTIMIZED, 2, NULL, 0), 0);
	assert_int_equal(simhost_alua_record(g[2], SCSI_ALUA_STANDBY, 2, NULL, 0), 0);
	states_of(g[1], st[1]);
	states_of(g[2], st[2]);
	const uint8_t back[3] = {SCSI_ALUA_STANDBY, SCSI_ALUA_ACTIVE_OPTIMIZED, SCSI_ALUA_STANDBY};
	assert_memory_equal(st[1], back, 3);
	assert_memory_equal(st[2], back, 3);
	assert_int_equal(simhost_close(g[0]), 0);
	assert_int_equal(simhost_close(g[1]), 0);
	assert_int_equal(simhost_close(g[2]), 0);
	simhost_remove_pool(pa);
	simhost_remove_pool(pb);
	simhost_remove_pool(pc);
}

/* A file pool's LUN (no other gateway can reach its pool) with [alua] and peers
 * configured: REPORT TARGET PORT GROUPS names this gateway's group only,
 * active/optimized (SPC-4 6.36: the groups of the logical unit; no peer group
 * leads to it), and the LUN serves. */
static void file_pool_reports_only_its_group(void **state)
{
	(void)state;
	char path[256];
	struct simhost *h = setup("alua4", path, sizeof(path), 1);
	const uint16_t peers[] = {1, 3};
	assert_int_equal(simhost_alua(h, 2, peers, 2), 0);
	attach_all(h, 1);
	uint8_t cdb[12];
	rtpg_cdb(cdb, 0, 256);
	struct simhost_result r = cmd_on(h, 0, cdb, 12, 256);
	assert_int_equal(r.r.status, 0);
	assert_int_equal(scsi_get_be32(r.r.data_in), 12); /* one descriptor */
	assert_int_equal(r.r.data_in_len, 16);
	expect_group(r.r.data_in + 4, SCSI_ALUA_ACTIVE_OPTIMIZED, 2, 0);
	simhost_result_free(&r);
	r = cmd_on(h, 0, INQ, 6, 96);
	assert_int_equal(r.r.data_in[5] & 0x30, 0x10); /* still TPGS 01b: the gateway has [alua] */
	simhost_result_free(&r);
	expect_good(cmd_on(h, 0, READ10, 10, 4096));
	assert_int_equal(simhost_close(h), 0);
	simhost_remove_pool(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_alua_claims_nothing),
		cmocka_unit_test(identity_and_rtpg),
		cmocka_unit_test(states_and_senses),
		cmocka_unit_test(shared_record_same_on_every_path),
		cmocka_unit_test(single_peer_is_owner),
		cmocka_unit_test(file_pool_reports_only_its_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
