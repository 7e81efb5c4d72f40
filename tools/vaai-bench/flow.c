/*
 * vaai-bench: flows of commands through a kernel port (kport.h: simhost's
 * simulated kernel or /dev/sgN), one command waited for, a LUN's limits
 * (flow.h).
 *
 * How this file works: kflows_run() loops: every flow that may still produce
 * fills its LUN's queue up to its qd (a command the port refuses, -EAGAIN, waits
 * in the flow's `pend` until completions made room), then one reap of the port
 * collects completions of any LUN; each goes to the flow that submitted it (its
 * LUN and tag) and to that flow's done(). The loop ends when nothing is in
 * flight in any flow.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "flow.h"
#include "vaaid/scsi.h"

void print_sense(const char *what, const struct simk_result *r)
{
	fprintf(stderr, "vaai-bench: %s: status 0x%02x sense key 0x%x asc/ascq %02x/%02x\n", what,
		r->status, r->sense[2] & 0xf, r->sense[12], r->sense[13]);
}

static int simhost_port_submit(void *ctx, int lun, const uint8_t *cdb, size_t cdb_len,
			       const void *out, size_t out_len, size_t in_len, uint64_t *tag)
{
	return simhost_submit(ctx, lun, cdb, cdb_len, out, out_len, in_len, tag);
}

static int simhost_port_reap(void *ctx, struct simhost_result *res, unsigned max, int timeout_ms)
{
	return simhost_reap(ctx, res, max, timeout_ms);
}

struct kport kport_simhost(struct simhost *h)
{
	return (struct kport){.submit = simhost_port_submit, .reap = simhost_port_reap, .ctx = h};
}

/* Fill f's queue up to its qd. 0, or -errno. */
static int flow_fill(const struct kport *k, struct flow *f)
{
	if (f->deadline > 0 && bench_now() >= f->deadline)
		f->producing = false;
	while (f->producing && f->inflight < f->qd) {
		if (!f->have_pend) {
			memset(&f->pend, 0, sizeof(f->pend));
			int n = f->next(f->ctx, &f->pend);
			if (n < 0)
				return n;
			if (n == 0)
				break;
			f->have_pend = true;
		}
		unsigned i = 0;
		while (f->slot[i].busy)
			i++;
		double t = bench_now();
		int s = k->submit(k->ctx, f->lun, f->pend.cdb, f->pend.cdb_len, f->pend.out,
				       f->pend.out_len, f->pend.in_len, &f->pend.tag);
		if (s == -EAGAIN)
			break; /* the ring or its data area is full: reap first */
		if (s < 0)
			return s;
		if (!f->started) {
			f->t_first = t;
			f->started = true;
		}
		f->pend.t0 = t;
		f->pend.busy = true;
		f->slot[i] = f->pend;
		f->have_pend = false;
		f->inflight++;
	}
	return 0;
}

/* Hand one completion to the flow that submitted it; 0, done()'s < 0, or -EPROTO. */
static int flow_complete(struct flow *f, unsigned n, const struct simhost_result *res, double t)
{
	for (unsigned j = 0; j < n; j++) {
		if (f[j].lun != res->lun)
			continue;
		for (unsigned i = 0; i < f[j].qd; i++) {
			struct vcmd *s = &f[j].slot[i];
			if (!s->busy || s->tag != res->tag)
				continue;
			s->busy = false;
			f[j].inflight--;
			f[j].completed++;
			f[j].t_last = t;
			return f[j].done(f[j].ctx, s, &res->r, t - s->t0);
		}
	}
	return -EPROTO; /* a completion no flow submitted */
}

int kflows_run(const struct kport *k, struct flow *f, unsigned n)
{
	int rc = 0;
	for (unsigned j = 0; j < n; j++) {
		f[j].slot = calloc(f[j].qd, sizeof(*f[j].slot));
		if (!f[j].slot)
			rc = -ENOMEM;
		f[j].have_pend = f[j].started = false;
		f[j].producing = true;
		f[j].inflight = 0;
		f[j].completed = 0;
		f[j].t_first = f[j].t_last = 0;
	}
	double progress = bench_now();
	while (!rc) {
		unsigned inflight = 0;
		for (unsigned j = 0; j < n && !rc; j++) {
			rc = flow_fill(k, &f[j]);
			inflight += f[j].inflight;
		}
		if (rc)
			break;
		if (!inflight) {
			for (unsigned j = 0; j < n; j++)
				if (f[j].have_pend && f[j].producing)
					rc = -E2BIG; /* refused with nothing in flight: it can never fit */
			break;
		}
		struct simhost_result res[64];
		/* 0: nothing within 1 s; give up after 60 s without any completion */
		int got = k->reap(k->ctx, res, 64, 1000);
		if (got < 0) {
			rc = got;
			break;
		}
		double t = bench_now();
		if (got == 0) {
			if (t - progress > 60) {
				fprintf(stderr, "vaai-bench: no completion within 60 s\n");
				rc = -ETIMEDOUT;
			}
			continue;
		}
		progress = t;
		for (int k = 0; k < got; k++) {
			int r = flow_complete(f, n, &res[k], t);
			if (!rc && r < 0)
				rc = r;
			simhost_result_free(&res[k]);
		}
	}
	/* on an error, closing the port (simhost_close, kport_sg_close) waits for what is
	 * still in flight */
	for (unsigned j = 0; j < n; j++) {
		free(f[j].slot);
		f[j].slot = NULL;
	}
	return rc;
}

int flows_run(struct simhost *h, struct flow *f, unsigned n)
{
	struct kport k = kport_simhost(h);
	return kflows_run(&k, f, n);
}

/* One command, waited for: 0 (GOOD, data-in copied to in), the SCSI status (> 0), or -errno. */
int kcmd_sync(const struct kport *k, int lun, const uint8_t *cdb, size_t cdb_len, const void *out,
	      size_t out_len, void *in, size_t in_len)
{
	int rc = k->submit(k->ctx, lun, cdb, cdb_len, out, out_len, in_len, NULL);
	if (rc < 0)
		return rc;
	struct simhost_result r;
	int n = 0;
	for (int tries = 0; n == 0 && tries < 120; tries++)
		n = k->reap(k->ctx, &r, 1, 1000);
	if (n <= 0)
		return n < 0 ? n : -ETIMEDOUT;
	rc = r.r.status;
	if (rc)
		print_sense("command failed", &r.r);
	else if (in)
		memcpy(in, r.r.data_in, in_len < r.r.data_in_len ? in_len : r.r.data_in_len);
	simhost_result_free(&r);
	return rc;
}

int cmd_sync(struct simhost *h, int lun, const uint8_t *cdb, size_t cdb_len, void *in,
	     size_t in_len)
{
	struct kport k = kport_simhost(h);
	return kcmd_sync(&k, lun, cdb, cdb_len, NULL, 0, in, in_len);
}

int lun_limits(struct simhost *h, int lun, struct lun_limits *l)
{
	struct kport k = kport_simhost(h);
	return klun_limits(&k, lun, l);
}

/* INQUIRY VPD B0h, READ CAPACITY (16). */
int klun_limits(const struct kport *k, int lun, struct lun_limits *l)
{
	/* INQUIRY with EVPD=1, PAGE CODE B0h, ALLOCATION LENGTH 64 (SPC-4 6.6.1). */
	const uint8_t inq[6] = {0x12, 0x01, 0xB0, 0x00, 64, 0};
	uint8_t b[64] = {0};
	int rc = kcmd_sync(k, lun, inq, sizeof(inq), NULL, 0, b, sizeof(b));
	if (rc)
		return rc < 0 ? rc : -EIO;
	/* SBC-4 6.6.4: PAGE LENGTH 3Ch. */
	if (b[1] != 0xB0 || scsi_get_be16(b + 2) < 0x3C) {
		fprintf(stderr, "vaai-bench: VPD B0 is malformed\n");
		return -EPROTO;
	}
	l->max_caw = b[5];
	l->max_unmap_lba = scsi_get_be32(b + 20);
	l->max_unmap_desc = scsi_get_be32(b + 24);
	l->max_ws = scsi_get_be64(b + 36);
	/* READ CAPACITY (16): SERVICE ACTION IN (16) 9Eh / 10h, ALLOCATION LENGTH 32 (SBC-4 5.23). */
	const uint8_t rc16[16] = {0x9E, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0};
	uint8_t c[32] = {0};
	rc = kcmd_sync(k, lun, rc16, sizeof(rc16), NULL, 0, c, sizeof(c));
	if (rc)
		return rc < 0 ? rc : -EIO;
	l->nblocks = scsi_get_be64(c) + 1;
	l->block = scsi_get_be32(c + 8);
	if (l->block < 512 || l->block > BENCH_MAX_BLOCK || l->block & (l->block - 1)) {
		fprintf(stderr, "vaai-bench: unexpected block size %u\n", l->block);
		return -EPROTO;
	}
	return 0;
}

