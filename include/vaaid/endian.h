/*
 * Little-endian fields of the on-disk formats (superblock, journal, records,
 * checkpoints): put a value at p, get it back, whatever the host's byte order
 * and p's alignment. One copy for src/meta, src/pool and the tools.
 */
#ifndef VAAID_ENDIAN_H
#define VAAID_ENDIAN_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void vput_le16(uint8_t *p, uint16_t v) { v = htole16(v); memcpy(p, &v, 2); }
static inline void vput_le32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static inline void vput_le64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static inline uint16_t vget_le16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return le16toh(v); }
static inline uint32_t vget_le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static inline uint64_t vget_le64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }

#endif
