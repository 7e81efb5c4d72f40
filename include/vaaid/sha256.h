/* SHA-256 (FIPS 180-4), for vaai-sim's in_sha256 and test oracles (src/util/sha256.c). */
#ifndef VAAID_SHA256_H
#define VAAID_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t fill;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[32]);
/* Hex of the digest of data: out must hold 65 bytes. */
void sha256_hex(const void *data, size_t len, char out[65]);

#endif
