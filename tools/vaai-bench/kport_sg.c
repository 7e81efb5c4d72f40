/*
 * vaai-bench: commands through Linux's SCSI generic driver (kport.h).
 *
 * How this file works: each LUN is one /dev/sgN opened ceil(qd / 16) times
 * (O_RDWR | O_NONBLOCK): the sg driver queues at most SG_MAX_QUEUE (16)
 * commands per open file. submit() write()s a struct sg_io_hdr (the v3
 * asynchronous interface) on a descriptor of that LUN with room, pack_id = the
 * command's tag and usr_ptr = its slot (sense buffer, data-in buffer); -EAGAIN
 * when every descriptor of the LUN is full. reap() poll()s every descriptor
 * and read()s the completed ones (pack_id -1: any), turning each header into a
 * simhost_result: the SCSI status, the sense bytes written, the data-in
 * actually transferred (dxfer_len - resid, malloc'd). A command the target
 * answered (a status other than GOOD, or sense) is an answer whatever the
 * midlayer's host byte says (6.1 sets DID_TARGET_FAILURE for ILLEGAL REQUEST,
 * COPY ABORTED, MISCOMPARE: still the target's answer); GOOD with a host or
 * driver error (a timeout, an abort, a lost device) is not an answer: reap()
 * fails with -EIO, naming it. The sg driver never retries (its commands carry
 * no retries) and never adds commands of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <scsi/sg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kport.h"

#define SG_PER_FD 16u /* SG_MAX_QUEUE of drivers/scsi/sg.c */

struct sg_slot {
	bool busy;
	int lun;
	uint8_t opcode;
	uint64_t tag;
	uint8_t sense[96];
	uint8_t *in;
	size_t in_len;
};

struct sg_fd {
	int fd, lun;
	unsigned inflight;
	struct sg_slot slot[SG_PER_FD];
};

struct kport_sg {
	struct sg_fd *fd;
	unsigned nfd, per_lun, nlun, timeout_ms;
	uint64_t next_tag;
	unsigned inflight;
	struct pollfd *pfd;
};

int kport_sg_open(const char *const *devs, unsigned n, unsigned qd, unsigned timeout_s,
		  struct kport_sg **out)
{
	struct kport_sg *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->per_lun = (qd + SG_PER_FD - 1) / SG_PER_FD;
	s->nlun = n;
	s->timeout_ms = timeout_s * 1000;
	s->next_tag = 1;
	s->fd = calloc((size_t)n * s->per_lun, sizeof(*s->fd));
	s->pfd = calloc((size_t)n * s->per_lun, sizeof(*s->pfd));
	if (!s->fd || !s->pfd) {
		kport_sg_close(s);
		return -ENOMEM;
	}
	for (unsigned l = 0; l < n; l++)
		for (unsigned i = 0; i < s->per_lun; i++) {
			struct sg_fd *f = &s->fd[s->nfd];
			f->lun = (int)l;
			f->fd = open(devs[l], O_RDWR | O_NONBLOCK | O_CLOEXEC);
			int ver = 0;
			if (f->fd < 0 || ioctl(f->fd, SG_GET_VERSION_NUM, &ver) < 0 || ver < 30000) {
				int e = f->fd < 0 ? errno : ENOTTY; /* no SG_GET_VERSION_NUM: not sg */
				fprintf(stderr, "vaai-bench: %s: %s\n", devs[l],
					f->fd < 0 ? strerror(e) : "not an sg v3 device");
				if (f->fd >= 0)
					close(f->fd);
				kport_sg_close(s);
				return -e;
			}
			s->nfd++;
		}
	*out = s;
	return 0;
}

static int sg_submit(void *ctx, int lun, const uint8_t *cdb, size_t cdb_len, const void *out,
		     size_t out_len, size_t in_len, uint64_t *tag)
{
	struct kport_sg *s = ctx;
	if (lun < 0 || (unsigned)lun >= s->nlun || !cdb_len || cdb_len > 16 || (out_len && in_len))
		return -EINVAL;
	struct sg_fd *f = NULL;
	for (unsigned i = 0; i < s->per_lun && !f; i++) {
		struct sg_fd *g = &s->fd[(unsigned)lun * s->per_lun + i];
		if (g->inflight < SG_PER_FD)
			f = g;
	}
	if (!f)
		return -EAGAIN;
	unsigned k = 0;
	while (f->slot[k].busy)
		k++;
	struct sg_slot *sl = &f->slot[k];
	sl->in = NULL;
	sl->in_len = in_len;
	memset(sl->sense, 0, sizeof(sl->sense)); /* no earlier command's bytes reported */
	if (in_len && !(sl->in = calloc(1, in_len)))
		return -ENOMEM;
	sl->lun = lun;
	sl->opcode = cdb[0];
	sl->tag = s->next_tag++;
	struct sg_io_hdr h = {
		.interface_id = 'S',
		.dxfer_direction = out_len ? SG_DXFER_TO_DEV : in_len ? SG_DXFER_FROM_DEV : SG_DXFER_NONE,
		.cmd_len = (unsigned char)cdb_len,
		.mx_sb_len = sizeof(sl->sense),
		.dxfer_len = (unsigned)(out_len ? out_len : in_len),
		.dxferp = out_len ? (void *)out : sl->in,
		.cmdp = (unsigned char *)cdb,
		.sbp = sl->sense,
		.timeout = s->timeout_ms,
		.pack_id = (int)(sl->tag & 0x7fffffff),
		.usr_ptr = sl,
	};
	/* the driver copies the CDB and the data-out in write() (indirect I/O) */
	ssize_t w = write(f->fd, &h, sizeof(h));
	if (w != (ssize_t)sizeof(h)) {
		int e = w < 0 ? errno : EIO;
		free(sl->in);
		sl->in = NULL;
		return e == EAGAIN || e == EDOM ? -EAGAIN : -e; /* EDOM: the fd's queue is full */
	}
	sl->busy = true;
	f->inflight++;
	s->inflight++;
	if (tag)
		*tag = sl->tag;
	return 0;
}

/* One completed command of f (read() would block: 0), into *res: 1, or -errno. */
static int sg_read_one(struct kport_sg *s, struct sg_fd *f, struct simhost_result *res)
{
	struct sg_io_hdr h = {.interface_id = 'S', .pack_id = -1};
	ssize_t r = read(f->fd, &h, sizeof(h));
	if (r < 0)
		return errno == EAGAIN ? 0 : -errno;
	if (r != (ssize_t)sizeof(h) || !h.usr_ptr)
		return -EPROTO;
	struct sg_slot *sl = h.usr_ptr;
	if (!sl->busy)
		return -EPROTO;
	sl->busy = false;
	f->inflight--;
	s->inflight--;
	memset(res, 0, sizeof(*res));
	res->lun = sl->lun;
	res->tag = sl->tag;
	res->r.tag = sl->tag;
	res->r.status = h.status;
	if (h.sb_len_wr) {
		size_t n = h.sb_len_wr < sizeof(sl->sense) ? h.sb_len_wr : sizeof(sl->sense);
		memcpy(res->r.sense, sl->sense, n);
		res->r.sense_len = n;
	}
	size_t resid = h.resid > 0 ? (size_t)h.resid : 0;
	res->r.data_in = sl->in;
	res->r.data_in_len = sl->in_len > resid ? sl->in_len - resid : 0;
	sl->in = NULL;
	bool answered = h.status != 0 || h.sb_len_wr > 0;
	if (!answered && (h.host_status || (h.driver_status & ~0x08 /* DRIVER_SENSE */))) {
		fprintf(stderr, "vaai-bench: sg LUN %d command %02xh: no answer (host_status 0x%x "
			"driver_status 0x%x)\n", sl->lun, sl->opcode, h.host_status, h.driver_status);
		simhost_result_free(res);
		return -EIO;
	}
	return 1;
}

static int sg_reap(void *ctx, struct simhost_result *res, unsigned max, int timeout_ms)
{
	struct kport_sg *s = ctx;
	if (!s->inflight)
		return 0;
	for (unsigned i = 0; i < s->nfd; i++)
		s->pfd[i] = (struct pollfd){.fd = s->fd[i].fd, .events = POLLIN};
	int p = poll(s->pfd, s->nfd, timeout_ms);
	if (p < 0)
		return errno == EINTR ? 0 : -errno;
	unsigned got = 0;
	for (unsigned i = 0; i < s->nfd && got < max; i++) {
		if (!(s->pfd[i].revents & (POLLIN | POLLERR | POLLHUP)))
			continue;
		while (got < max && s->fd[i].inflight) {
			int r = sg_read_one(s, &s->fd[i], &res[got]);
			if (r < 0) {
				for (unsigned k = 0; k < got; k++)
					simhost_result_free(&res[k]);
				return r;
			}
			if (!r)
				break;
			got++;
		}
	}
	return (int)got;
}

struct kport kport_sg(struct kport_sg *s)
{
	return (struct kport){.submit = sg_submit, .reap = sg_reap, .ctx = s};
}

unsigned kport_sg_inflight(const struct kport_sg *s) { return s->inflight; }

void kport_sg_close(struct kport_sg *s)
{
	if (!s)
		return;
	struct simhost_result r[16];
	for (int t = 0; s->inflight && t < 60; t++) {
		int n = sg_reap(s, r, 16, 1000);
		if (n < 0)
			break;
		for (int k = 0; k < n; k++)
			simhost_result_free(&r[k]);
	}
	for (unsigned i = 0; i < s->nfd; i++) {
		close(s->fd[i].fd);
		for (unsigned k = 0; k < SG_PER_FD; k++)
			free(s->fd[i].slot[k].in);
	}
	free(s->fd);
	free(s->pfd);
	free(s);
}
