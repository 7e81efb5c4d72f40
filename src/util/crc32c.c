/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by iSCSI and
 * ext4. The SSE4.2 crc32 instruction is used when the CPU has it; otherwise a
 * byte-wise table. The table is computed at compile time-free start-up into a
 * const-after-init static (read-only once built; built under pthread_once).
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "vaaid/util.h"

static uint32_t crc_table[256];
static pthread_once_t crc_table_once = PTHREAD_ONCE_INIT;

static void crc_table_build(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32c_sw(uint32_t crc, const uint8_t *p, size_t len)
{
	pthread_once(&crc_table_once, crc_table_build);
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p,
							     size_t len)
{
	uint64_t c = crc;
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (len--)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return c32;
}
#endif

uint32_t vcrc32c(uint32_t crc, const void *buf, size_t len)
{
	crc = ~crc;
#if defined(__x86_64__)
	if (__builtin_cpu_supports("sse4.2"))
		return ~crc32c_hw(crc, buf, len);
#endif
	return ~crc32c_sw(crc, buf, len);
}
