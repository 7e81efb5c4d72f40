/*
 * vaai-bench mixed --sg: the mixed load (mixed.c) through a real kernel's SCSI
 * generic driver, with the counters read from the daemon's snapshot through a
 * command (docs/observability.md "Counters exact under load", "through LIO";
 * tests/vm/t_counters_load.sh).
 *
 * How this file works: --sg /dev/sgA=VOLA,/dev/sgB=VOLB names the two LUNs
 * (co-visible: EXTENDED COPY runs between them) and the volume each one serves;
 * --stats-cmd is run through /bin/sh and must print `vaaictl --json stats`'s
 * answer ({"luns":[{"volume", "stats":{...}}...]}): a LUN's counters are the
 * "stats" of the one entry whose "volume" is its volume (the same
 * vaai_lun_stats_json the simulated run reads). Each LUN's NAA designator (for
 * the copies' CSCD descriptors) comes from its INQUIRY VPD page 83h. Before the
 * first snapshot the LUNs must be quiet: the counters are read every second
 * until two readings in a row are equal (a kernel still scanning a new disk
 * would move them), at most 30 s. Whatever the kernel sends on its own during
 * the load shows up as a mismatch; nothing is excluded here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "flow.h"
#include "mixed.h"
#include "vaaid/scsi.h"

#define SG_TIMEOUT_S 120 /* each command's: TCG guests are slow (LIO's cmd_time_out is 120 s too) */
#define SETTLE_S 30

struct sgctx {
	const char *stats_cmd;
	char *vol[MIXED_LUNS];
};

/* The stats of the entry of `volume` in the command's answer, or NULL (said why). */
static json_object *sg_snapshot(void *ctx, int lun)
{
	struct sgctx *x = ctx;
	char *const argv[] = {"/bin/sh", "-c", (char *)x->stats_cmd, NULL};
	char *out = NULL;
	int rc = bench_run_capture(argv, &out);
	json_object *o = rc == 0 && out ? json_tokener_parse(out) : NULL, *luns, *found = NULL;
	unsigned n = 0;
	if (o && json_object_object_get_ex(o, "luns", &luns) && json_object_is_type(luns, json_type_array))
		for (size_t i = 0; i < json_object_array_length(luns); i++) {
			json_object *l = json_object_array_get_idx(luns, i), *v, *st;
			const char *vol = json_object_object_get_ex(l, "volume", &v)
						  ? json_object_get_string(v) : NULL;
			if (vol && !strcmp(vol, x->vol[lun]) &&
			    json_object_object_get_ex(l, "stats", &st)) {
				found = st;
				n++;
			}
		}
	json_object *r = n == 1 ? json_object_get(found) : NULL;
	if (!r)
		fprintf(stderr, "vaai-bench mixed: --stats-cmd (exit %d) gave %u LUNs of volume %s\n", rc,
			n, x->vol[lun]);
	json_object_put(o);
	free(out);
	return r;
}

/* Both LUNs' counters unchanged over one second, read at most SETTLE_S times. */
static int sg_settle(void *ctx)
{
	char *prev[MIXED_LUNS] = {0};
	int rc = -EBUSY;
	for (int t = 0; t <= SETTLE_S && rc == -EBUSY; t++) {
		bool same = true;
		for (int i = 0; i < MIXED_LUNS; i++) {
			json_object *o = sg_snapshot(ctx, i);
			if (!o) {
				rc = -EPROTO;
				break;
			}
			char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
			json_object_put(o);
			if (!s) {
				rc = -ENOMEM;
				break;
			}
			same = same && prev[i] && !strcmp(prev[i], s);
			free(prev[i]);
			prev[i] = s;
		}
		if (rc == -EBUSY && same) {
			fprintf(stderr, "# the LUNs' counters stood still for 1 s (%d s waited)\n", t);
			rc = 0;
		} else if (rc == -EBUSY) {
			sleep(1);
		}
	}
	if (rc == -EBUSY)
		fprintf(stderr, "vaai-bench mixed: the LUNs' counters still moved after %d s: something "
			"else sends them commands\n", SETTLE_S);
	for (int i = 0; i < MIXED_LUNS; i++)
		free(prev[i]);
	return rc;
}

/* The LUN's NAA designator (association: the logical unit) from VPD page 83h. */
static int vpd_naa(const struct kport *k, int lun, uint8_t naa[16])
{
	/* INQUIRY EVPD=1 PAGE CODE 83h (SPC-4 6.6.1), ALLOCATION LENGTH 255 */
	const uint8_t cdb[6] = {0x12, 0x01, 0x83, 0x00, 0xFF, 0};
	uint8_t b[255] = {0};
	int rc = kcmd_sync(k, lun, cdb, sizeof(cdb), NULL, 0, b, sizeof(b));
	if (rc)
		return rc < 0 ? rc : -EIO;
	size_t end = 4 + (size_t)scsi_get_be16(b + 2);
	if (end > sizeof(b))
		end = sizeof(b);
	/* SPC-4 7.8.6.1: designation descriptors; NAA (3), association 0, 16 bytes */
	for (size_t o = 4; o + 4 <= end; o += 4 + (size_t)b[o + 3])
		if ((b[o + 1] & 0x0F) == 3 && (b[o + 1] & 0x30) == 0 && b[o + 3] == 16 &&
		    o + 20 <= end) {
			memcpy(naa, b + o + 4, 16);
			return 0;
		}
	fprintf(stderr, "vaai-bench mixed: LUN %d has no 16-byte NAA designator in VPD 83h\n", lun);
	return -EPROTO;
}

int mixed_sg(const struct mixed_opts *c)
{
	struct sgctx x = {.stats_cmd = c->stats_cmd};
	const char *dev[MIXED_LUNS] = {0};
	char *list = strdup(c->sg), *save = NULL;
	if (!list) {
		fprintf(stderr, "vaai-bench mixed: out of memory\n");
		return 1;
	}
	int n = 0;
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		if (n == MIXED_LUNS || !eq || eq == t || !eq[1]) {
			n = -1;
			break;
		}
		*eq = 0;
		dev[n] = t;
		x.vol[n++] = eq + 1;
	}
	if (n != MIXED_LUNS) {
		fprintf(stderr, "vaai-bench mixed: --sg wants /dev/sgA=VOLUME,/dev/sgB=VOLUME\n");
		free(list);
		return 2;
	}
	struct kport_sg *sg;
	int rc = kport_sg_open(dev, MIXED_LUNS, c->qd, SG_TIMEOUT_S, &sg);
	if (rc < 0) {
		free(list);
		return 1;
	}
	struct mixed_port p = {.k = kport_sg(sg), .settle = sg_settle, .snapshot = sg_snapshot,
			       .ctx = &x, .what = "sg"};
	fprintf(stderr, "# LUN 0: %s (volume %s), LUN 1: %s (volume %s); counters: %s\n", dev[0],
		x.vol[0], dev[1], x.vol[1], c->stats_cmd);
	for (int i = 0; i < MIXED_LUNS && rc >= 0; i++)
		rc = vpd_naa(&p.k, i, p.naa[i]);
	if (rc >= 0)
		rc = mixed_load(&p, c);
	if (rc < 0)
		fprintf(stderr, "vaai-bench mixed: %s\n", strerror(-rc));
	kport_sg_close(sg);
	free(list);
	return rc != 0;
}
