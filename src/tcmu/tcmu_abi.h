/*
 * target_core_user ABI helpers shared by the two sides of the ring: the
 * engine's src/tcmu/ring.c and the simulated kernel src/sim/kernel.c.
 * Internal header (not under include/): layout constants derived from
 * linux/target_core_user.h, the kernel's CDB length rule, and accessors for
 * the two mailbox words that cross the user/kernel boundary (cmd_head written
 * by the kernel, cmd_tail by userspace) with acquire/release ordering.
 *
 * Kernel facts (drivers/target/target_core_user.c, v5.x-6.x):
 *  - CMDR_OFF is sizeof(struct tcmu_mailbox) (128 bytes: cmd_tail sits on its
 *    own 64-byte cache line); the command ring starts there and the data area
 *    starts at data_off = CMDR_OFF + cmdr_size (page aligned: the kernel makes
 *    cmdr_size = cmd_ring_size_mb * 1 MiB - CMDR_OFF).
 *  - tcmu_cmd_get_base_cmd_size(): a CMD entry is at least
 *    sizeof(struct tcmu_cmd_entry) bytes (room for the response), more if the
 *    iovec array needs it; tcmu_cmd_get_cmd_size() adds the CDB rounded up to
 *    TCMU_OP_ALIGN_SIZE (8).
 *  - The CDB length is scsi_command_size(): the variable-length opcode 7Fh
 *    gives 8 + the ADDITIONAL CDB LENGTH byte (cdb[7]); other opcodes come
 *    from the group code table {6, 10, 10, 12, 16, 12, 10, 10}.
 *  - UPDATE_HEAD() publishes cmd_head with smp_store_release(); the kernel
 *    reads cmd_tail with READ_ONCE() in tcmu_handle_completions().
 */
#ifndef VAAID_TCMU_ABI_H
#define VAAID_TCMU_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#ifndef __LINUX_UIO_H
#define __LINUX_UIO_H /* linux/uio.h's struct iovec clashes with sys/uio.h */
#endif
#include <linux/target_core_user.h>

#define TCMU_ABI_CMDR_OFF ((uint32_t)sizeof(struct tcmu_mailbox))
#define TCMU_ABI_ENTRY_MIN ((uint32_t)sizeof(struct tcmu_cmd_entry))
#define TCMU_ABI_IOV_OFF ((uint32_t)offsetof(struct tcmu_cmd_entry, req.iov))
#define TCMU_ABI_HDR_SIZE ((uint32_t)sizeof(struct tcmu_cmd_entry_hdr))
#define TCMU_ABI_ALIGN ((uint32_t)TCMU_OP_ALIGN_SIZE)
#define TCMU_ABI_MAX_CDB 260u /* SCSI_MAX_VARLEN_CDB_SIZE */
#define TCMU_ABI_DATA_BLK 4096u /* data_blk_size: data_pages_per_blk (default 1) * PAGE_SIZE */

/* The layout this code relies on (the req union member is not packed, so its
 * u64 cdb_off is 8-aligned and the iovec array starts at 8 + 40 = 48). */
_Static_assert(sizeof(struct tcmu_mailbox) == 128, "mailbox size");
_Static_assert(offsetof(struct tcmu_mailbox, cmd_head) == 12, "cmd_head offset");
_Static_assert(offsetof(struct tcmu_mailbox, cmd_tail) == 64, "cmd_tail offset");
_Static_assert(sizeof(struct tcmu_cmd_entry_hdr) == 8, "entry header size");
_Static_assert(sizeof(struct tcmu_cmd_entry) == 112, "entry size");
_Static_assert(offsetof(struct tcmu_cmd_entry, req.iov) == 48, "iovec array offset");
_Static_assert(offsetof(struct tcmu_cmd_entry, rsp.sense_buffer) == 16, "sense offset");

/* Byte layout of the on-ring iovec: two native 64-bit words (offset, length). */
struct tcmu_abi_iov {
	uint64_t base;
	uint64_t len;
};
_Static_assert(sizeof(struct tcmu_abi_iov) == sizeof(struct iovec), "iovec layout");

/* The kernel's scsi_command_size(); needs cdb[0] and, for 7Fh, cdb[7]. */
static inline size_t tcmu_abi_cdb_len(const uint8_t *cdb)
{
	static const uint8_t group_len[8] = {6, 10, 10, 12, 16, 12, 10, 10};
	if (cdb[0] == 0x7F)
		return (size_t)cdb[7] + 8;
	return group_len[(cdb[0] >> 5) & 7];
}

/* Entry size for iov_cnt iovecs and a CDB of cdb_len bytes (queue_cmd_ring()). */
static inline uint64_t tcmu_abi_entry_size(uint64_t iov_cnt, size_t cdb_len)
{
	uint64_t base = TCMU_ABI_IOV_OFF + iov_cnt * sizeof(struct tcmu_abi_iov);
	if (base < TCMU_ABI_ENTRY_MIN)
		base = TCMU_ABI_ENTRY_MIN;
	return base + (((uint64_t)cdb_len + TCMU_ABI_ALIGN - 1) & ~(uint64_t)(TCMU_ABI_ALIGN - 1));
}

/* The mailbox words, at fixed offsets of an 8-byte aligned map. */
static inline uint32_t *tcmu_abi_word(void *map, size_t off)
{
	return (uint32_t *)((uint8_t *)map + off);
}
static inline uint32_t tcmu_abi_load_head(void *map)
{
	return __atomic_load_n(tcmu_abi_word(map, offsetof(struct tcmu_mailbox, cmd_head)),
			       __ATOMIC_ACQUIRE);
}
static inline void tcmu_abi_store_head(void *map, uint32_t v)
{
	__atomic_store_n(tcmu_abi_word(map, offsetof(struct tcmu_mailbox, cmd_head)), v,
			 __ATOMIC_RELEASE);
}
static inline uint32_t tcmu_abi_load_tail(void *map)
{
	return __atomic_load_n(tcmu_abi_word(map, offsetof(struct tcmu_mailbox, cmd_tail)),
			       __ATOMIC_ACQUIRE);
}
static inline void tcmu_abi_store_tail(void *map, uint32_t v)
{
	__atomic_store_n(tcmu_abi_word(map, offsetof(struct tcmu_mailbox, cmd_tail)), v,
			 __ATOMIC_RELEASE);
}

/*
 * Snapshot n bytes of shared memory that the other side may change at any
 * time: the compiler barrier after the copy stops the compiler from reading
 * the shared bytes again instead of the copy (no double fetch).
 */
static inline void tcmu_abi_copy_in(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Bytes from ring offset `from` forward to `to` in a ring of `size` bytes. */
static inline uint32_t tcmu_abi_dist(uint32_t from, uint32_t to, uint32_t size)
{
	return to >= from ? to - from : size - from + to;
}

#endif
