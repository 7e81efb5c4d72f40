/*
 * Large I/O buffers kept for reuse (src/io/buf_cache.c), lent to a device
 * (struct vblk's bufs) by whoever made it: the engine's per-pool buffers of
 * known sizes (the journal's 256 KiB commit buffers, its replay buffer,
 * format's zeroing buffer, WRITE SAME's pattern) are taken from there and given
 * back, so that a fuzz target that opens a pool per input does not get fresh
 * pages for them each time (under ASan every allocation above 128 KiB is a new
 * mapping: every page a fault). The daemon lends none: NULL means plain
 * vblk_alloc_buf() and free().
 *
 * A buffer from vbuf_get is zeroed and aligned as vblk_alloc_buf's, whether kept
 * or new; a kept one is poisoned for ASan while kept (a use after vbuf_put is
 * still caught). Not thread-safe: one device user at a time (the engine thread,
 * or the control thread while the engine is stopped), which the engine is.
 */
#ifndef VAAID_BUF_CACHE_H
#define VAAID_BUF_CACHE_H

#include <stddef.h>

struct vbuf_cache;

/* Room for keep buffers. */
int vbuf_cache_new(unsigned keep, struct vbuf_cache **out);
/* Frees the kept buffers (no device may use c any more, nor hold a pending
 * write taken from it: crashsim's pending copies go back to their own cache). */
void vbuf_cache_free(struct vbuf_cache *c);
/* As vblk_alloc_buf(len), from c when it keeps one of this size (c may be NULL). */
void *vbuf_get(struct vbuf_cache *c, size_t len);
/* Give back what vbuf_get(c, len) returned (NULL: nothing): kept, or freed. */
void vbuf_put(struct vbuf_cache *c, void *p, size_t len);
/*
 * Scratch memory of any size, NOT zeroed (the caller writes all len bytes before
 * reading them: crashsim's copy of a pending write): as malloc(len), from c when
 * it keeps a buffer of len's size class (powers of two, 4 KiB to 16 MiB), so a
 * size used once is reused for any length of its class. Bytes past len stay
 * poisoned for ASan. Give it back with vbuf_give(c, p, len), the same c and a
 * len of the same size class as taken (under ASan a second give aborts). A
 * device that takes from c gives back to c even after its `bufs` changed: c
 * must outlive every device that ever had it.
 */
void *vbuf_take(struct vbuf_cache *c, size_t len);
/* Kept for vbuf_take, or freed (NULL c, too large, the class or the cache full). */
void vbuf_give(struct vbuf_cache *c, void *p, size_t len);
/* Bytes kept for vbuf_take (their size classes' sizes): tests. */
size_t vbuf_taken_kept(const struct vbuf_cache *c);

#endif
