/*
 * vblk_killpoint: the engine "killed" at an armed I/O (see vblk_killpoint.h).
 *
 * How this works: every write, flush and discard submitted counts (reads and
 * allocations do not: they change nothing on the store). When the count
 * reaches the armed one (or vblk_killpoint_kill_now), the wrapper is killed:
 *   - that operation is never passed on (a process dies before sending it),
 *     and neither is any later one: nothing reaches the store any more;
 *   - no completion of the inner store reaches the engine any more: every
 *     operation of the engine not yet completed completes with -EIO instead,
 *     as on a disk that lost power (vblk_crashsim does the same), so that the
 *     engine's control paths return; what the engine learns after the kill is
 *     only failure, so whatever it acknowledges afterwards was durable before
 *     (docs/crash.md argues why this is at least as strict as SIGKILL).
 * Each operation is passed to the inner store one to three reactor iterations
 * after its submission (vreactor_defer; the number drawn from the seed, so
 * operations in flight together may be sent in another order than submitted,
 * which the durability contract allows: only a completion orders): those still
 * waiting when the kill comes are dropped unsent, as a killed process drops
 * what sat in its own queues -- so a later change may have been sent and an
 * earlier one not. Those
 * already passed may land or not: the inner store decides (on RBD the new
 * owner's takeover blocklists this client, so nothing of it lands later).
 * The inner store's completions run on the same reactor (the engine thread),
 * where the kill is also decided, so no lock is needed; the killed flag and
 * the count are atomics because the suite's thread reads them.
 * Reads and writes go to the inner store through a buffer of the request's
 * own (copied from the engine's at submission, to it at a read's completion):
 * librbd fills a read's buffer on its own threads when the read completes,
 * which after a kill may be long after the engine's memory was abandoned (a
 * killed process has no memory left to scribble on; this one has: seen as
 * heap corruption before the copy).
 * Closing with operations not completed (after a kill, the reactor destroyed:
 * vblk_close's contract) closes the inner store first -- librbd may write into
 * a read's buffer until its client is closed -- and then frees every request
 * still listed (all of them are: no callback runs any more).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "vaaid/rng.h"
#include "vblk_killpoint.h"

struct kdev {
	struct vblk b;
	struct vblk *in;
	atomic_bool killed;
	atomic_uint_fast64_t count; /* writes + flushes + discards submitted */
	uint64_t target;            /* kill when count reaches it (0: disarmed) */
	bool ack_killed;            /* vblk_killpoint_ack_killed */
	uint64_t lied_at;           /* its lie told at this count (0: not yet); kill LIE_LAG later */
	bool disarmed;              /* vblk_killpoint_arm(0): no kill, the lie's one included */
	uint64_t disarmed_at;       /* the count then (the lie's kill is moved on by what follows) */
	uint64_t passed;            /* changes passed to the inner store, not completed */
	uint64_t at_kill_in_flight, dropped;
	uint64_t rng;
	struct kreq *reqs; /* every request not yet finished (freed at close) */
};

/* vblk_killpoint_ack_killed: changes between the lie and the kill, so that the engine
 * acknowledges what the lie completed and the suite sees it before the kill. */
#define LIE_LAG 64u

enum kkind { K_READ, K_WRITE, K_FLUSH, K_DISCARD, K_ALLOC };

struct kreq {
	struct kdev *d;
	struct kreq *prev, *next; /* d->reqs */
	struct vio_op op; /* the deferral, then the inner store's operation */
	struct vio_op *user;
	enum kkind kind;
	unsigned flags;
	bool passed, lie;
	unsigned hold; /* reactor iterations still to wait before it is passed on */
	void *bounce;  /* reads and writes: the inner store's buffer (len bytes) */
	uint64_t off, len;
	int iovcnt;
	struct iovec iov[];
};

static struct kdev *to_k(struct vblk *b) { return (struct kdev *)b; }

static void unlist(struct kreq *q)
{
	if (q->prev)
		q->prev->next = q->next;
	else
		q->d->reqs = q->next;
	if (q->next)
		q->next->prev = q->prev;
}

static void kill_now(struct kdev *d)
{
	if (atomic_load(&d->killed))
		return;
	d->at_kill_in_flight = d->passed;
	atomic_store(&d->killed, true);
}

static void finish(struct kreq *q, int res)
{
	struct vio_op *user = q->user;
	if (q->kind == K_READ && res > 0) { /* into the engine's buffers */
		size_t at = 0;
		for (int i = 0; i < q->iovcnt && at < (size_t)res; i++) {
			size_t n = q->iov[i].iov_len < (size_t)res - at ? q->iov[i].iov_len
								 : (size_t)res - at;
			memcpy(q->iov[i].iov_base, (char *)q->bounce + at, n);
			at += n;
		}
	}
	free(q->bounce);
	if (q->passed)
		q->d->passed--;
	q->d->b.fenced = q->d->in->fenced;
	unlist(q);
	free(q);
	user->cb(user->arg, res);
}

static void inner_done(void *arg, int res)
{
	struct kreq *q = arg;
	finish(q, atomic_load(&q->d->killed) ? -EIO : res);
}

/* One reactor iteration after submission: pass it on, unless killed meanwhile. */
static void forward(void *arg, int res)
{
	struct kreq *q = arg;
	struct kdev *d = q->d;
	(void)res;
	if (q->hold && !atomic_load(&d->killed)) {
		q->hold--;
		vreactor_defer(d->b.reactor, &q->op, 0); /* the next iteration */
		return;
	}
	if (q->lie) {
		finish(q, q->kind == K_WRITE ? (int)q->len : 0);
		return;
	}
	if (atomic_load(&d->killed)) {
		if (q->kind != K_READ && q->kind != K_ALLOC)
			d->dropped++;
		finish(q, -EIO);
		return;
	}
	vio_op_init(&q->op, inner_done, q);
	struct iovec one = {.iov_base = q->bounce, .iov_len = q->len};
	int rc;
	switch (q->kind) {
	case K_READ: rc = vblk_readv(d->in, &one, 1, q->off, &q->op); break;
	case K_WRITE: rc = vblk_writev(d->in, &one, 1, q->off, q->flags, &q->op); break;
	case K_FLUSH: rc = vblk_flush(d->in, &q->op); break;
	case K_DISCARD: rc = vblk_discard(d->in, q->off, q->len, &q->op); break;
	default: rc = vblk_allocate(d->in, q->off, q->len, &q->op); break;
	}
	if (rc < 0) {
		finish(q, rc);
		return;
	}
	if (q->kind != K_READ && q->kind != K_ALLOC) {
		q->passed = true; /* counted: a change that may land or not */
		d->passed++;
	}
}

static int submit(struct kdev *d, enum kkind kind, const struct iovec *iov, int iovcnt,
		  uint64_t off, uint64_t len, unsigned flags, struct vio_op *user)
{
	if (!user || !user->cb || iovcnt < 0 || (iovcnt && !iov))
		return -EINVAL;
	struct kreq *q = calloc(1, sizeof(*q) + (size_t)iovcnt * sizeof(struct iovec));
	if (!q)
		return -ENOMEM;
	*q = (struct kreq){.d = d, .user = user, .kind = kind, .flags = flags, .off = off,
			   .len = len, .iovcnt = iovcnt, .hold = (unsigned)(vrng_next(&d->rng) % 3)};
	if (iovcnt)
		memcpy(q->iov, iov, (size_t)iovcnt * sizeof(*iov));
	if (kind == K_WRITE || kind == K_READ) {
		q->len = 0;
		for (int i = 0; i < iovcnt; i++)
			q->len += iov[i].iov_len;
		q->bounce = q->len ? vblk_alloc_buf(q->len) : NULL;
		if (!q->bounce) {
			int rc = q->len ? -ENOMEM : -EINVAL;
			free(q);
			return rc;
		}
		size_t at = 0;
		for (int i = 0; kind == K_WRITE && i < iovcnt; i++) {
			memcpy((char *)q->bounce + at, iov[i].iov_base, iov[i].iov_len);
			at += iov[i].iov_len;
		}
	}
	bool changes = kind == K_WRITE || kind == K_FLUSH || kind == K_DISCARD;
	if (changes && !atomic_load(&d->killed)) {
		uint64_t n = atomic_fetch_add(&d->count, 1) + 1;
		if (d->lied_at && !d->disarmed && n >= d->lied_at + LIE_LAG) {
			kill_now(d); /* the lie told and believed: now the process dies */
		} else if (d->target && n == d->target) {
			if (d->ack_killed) {
				q->lie = true; /* "done", never sent */
				d->lied_at = n;
				d->dropped++;
			} else {
				kill_now(d);
			}
		}
	}
	q->next = d->reqs;
	if (d->reqs)
		d->reqs->prev = q;
	d->reqs = q;
	vio_op_init(&q->op, forward, q);
	vreactor_defer(d->b.reactor, &q->op, 0);
	return 0;
}

static int k_readv(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
		   struct vio_op *op)
{
	return submit(to_k(b), K_READ, iov, iovcnt, off, 0, 0, op);
}

static int k_writev(struct vblk *b, const struct iovec *iov, int iovcnt, uint64_t off,
		    unsigned flags, struct vio_op *op)
{
	return submit(to_k(b), K_WRITE, iov, iovcnt, off, 0, flags, op);
}

static int k_flush(struct vblk *b, struct vio_op *op)
{
	return submit(to_k(b), K_FLUSH, NULL, 0, 0, 0, 0, op);
}

static int k_discard(struct vblk *b, uint64_t off, uint64_t len, struct vio_op *op)
{
	return submit(to_k(b), K_DISCARD, NULL, 0, off, len, 0, op);
}

static int k_allocate(struct vblk *b, uint64_t off, uint64_t len, struct vio_op *op)
{
	return submit(to_k(b), K_ALLOC, NULL, 0, off, len, 0, op);
}

static int k_grow(struct vblk *b, uint64_t new_size)
{
	struct kdev *d = to_k(b);
	if (atomic_load(&d->killed))
		return -EIO;
	int rc = d->in->ops->grow(d->in, new_size);
	if (rc == 0)
		b->size = d->in->size;
	return rc;
}

/* What the store holds (the sweep at takeover: vpool_sweep_store); synchronous. */
static int k_mapped(struct vblk *b, uint64_t off, uint64_t len,
		    int (*cb)(void *arg, uint64_t off, uint64_t len), void *arg)
{
	struct kdev *d = to_k(b);
	if (atomic_load(&d->killed))
		return -EIO;
	return vblk_mapped(d->in, off, len, cb, arg);
}

static void k_close(struct vblk *b)
{
	struct kdev *d = to_k(b);
	vblk_close(d->in);
	while (d->reqs) {
		struct kreq *q = d->reqs;
		d->reqs = q->next;
		free(q->bounce);
		free(q);
	}
	free(d);
}

static const struct vblk_ops kill_ops = {
	.readv = k_readv,
	.writev = k_writev,
	.flush = k_flush,
	.allocate = k_allocate,
	.grow = k_grow,
	.close = k_close,
	.discard = k_discard,
	.mapped = k_mapped,
};

int vblk_killpoint_wrap(struct vreactor *r, struct vblk *inner, uint64_t seed, struct vblk **out)
{
	struct kdev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->in = inner;
	d->rng = seed;
	d->b.ops = &kill_ops;
	d->b.reactor = r;
	d->b.size = inner->size;
	d->b.unaligned_writes_serialize = inner->unaligned_writes_serialize;
	atomic_init(&d->killed, false);
	atomic_init(&d->count, 0);
	*out = &d->b;
	return 0;
}

/*
 * Disarming also holds a lie's kill (ack_killed): the suite disarms around the
 * operations it must not see crash (a clean reopen), and a kill there came as an
 * error of that operation, not as a crash (seen in ceph/crash_suite_rbd_mutated:
 * "clean reopen: Input/output error"). The changes made while disarmed do not
 * count towards the lie's LIE_LAG. While a lie's kill is pending, arming sets no
 * new target: that kill is the armed crash.
 */
void vblk_killpoint_arm(struct vblk *b, uint64_t n)
{
	struct kdev *d = to_k(b);
	uint64_t now = atomic_load(&d->count);
	if (!n) {
		if (!d->disarmed)
			d->disarmed_at = now;
		d->disarmed = true;
		d->target = 0;
		return;
	}
	if (d->disarmed && d->lied_at)
		d->lied_at += now - d->disarmed_at;
	d->disarmed = false;
	d->target = d->lied_at ? 0 : now + n;
}

void vblk_killpoint_kill_now(struct vblk *b) { kill_now(to_k(b)); }

bool vblk_killpoint_killed(const struct vblk *b)
{
	return atomic_load(&((const struct kdev *)b)->killed);
}

uint64_t vblk_killpoint_io_count(const struct vblk *b)
{
	return atomic_load(&((const struct kdev *)b)->count);
}

void vblk_killpoint_kill_stats(const struct vblk *b, uint64_t *in_flight, uint64_t *dropped)
{
	const struct kdev *d = (const struct kdev *)b;
	*in_flight = d->at_kill_in_flight;
	*dropped = d->dropped;
}

void vblk_killpoint_ack_killed(struct vblk *b, bool on) { to_k(b)->ack_killed = on; }
