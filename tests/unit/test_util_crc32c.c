/*
 * Known answers for CRC-32C (src/util/crc32c.c), which the on-disk format
 * (superblock, journal records, checkpoints) relies on.
 *
 * How this file works: a plain bitwise reference (shift-and-xor with the
 * reflected polynomial 0x82F63B78, no table, no instruction) is the oracle next
 * to the published values. Each path is forced: the table path (vcrc32c_sw), the
 * SSE4.2 path (vcrc32c_hw; its tests are reported SKIPPED, with the reason
 * printed, on a CPU without SSE4.2) and the dispatcher vcrc32c. Checked:
 *  - the catalogue check value of "123456789": 0xE3069283;
 *  - the RFC 3720 appendix B.4 examples (the same in RFC 7143 A.4);
 *  - every table entry (all 256 single bytes);
 *  - every length 0..64 at every start offset 0..15 of an aligned buffer (so
 *    every odd offset and every misalignment of the 8-byte steps), with a zero
 *    and a non-zero seed, hw == table == bitwise reference;
 *  - chaining: the CRC over a buffer in two calls equals one call, at every split.
 */
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vaaid/util.h"

typedef uint32_t (*crc_fn)(uint32_t crc, const void *buf, size_t len);

/* The bitwise reference, with vcrc32c's chaining convention (invert in, invert out). */
static uint32_t ref_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1)));
	}
	return ~crc;
}

/*
 * RFC 3720 B.4 prints each CRC as the four bytes in the order they go on the wire,
 * which is least significant byte first: "CRC: aa 36 91 8a" is the value
 * 0x8A9136AA. wire_le32 does that conversion, and the table below keeps the RFC's
 * bytes as printed so the conversion itself is checked against the values the
 * issue states.
 */
static uint32_t wire_le32(const uint8_t w[4])
{
	return (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 | (uint32_t)w[3] << 24;
}

/* "An iSCSI - SCSI Read (10) Command PDU", RFC 3720 B.4 (48 bytes). */
static const uint8_t iscsi_read_pdu[48] = {
	0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
	0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

struct vector {
	const char *name;
	uint8_t data[48];
	size_t len;
	uint8_t wire[4]; /* as printed in the RFC */
	uint32_t value;  /* the same, as a number */
};

static void vectors_fill(struct vector v[6])
{
	memset(v, 0, 6 * sizeof(*v));
	v[0] = (struct vector){"check value \"123456789\"", {0}, 9, {0x83, 0x92, 0x06, 0xe3}, 0xE3069283u};
	memcpy(v[0].data, "123456789", 9);
	v[1] = (struct vector){"B.4 32 bytes of zeroes", {0}, 32, {0xaa, 0x36, 0x91, 0x8a}, 0x8A9136AAu};
	v[2] = (struct vector){"B.4 32 bytes of ones", {0}, 32, {0x43, 0xab, 0xa8, 0x62}, 0x62A8AB43u};
	memset(v[2].data, 0xff, 32);
	v[3] = (struct vector){"B.4 32 incrementing bytes 00..1f", {0}, 32, {0x4e, 0x79, 0xdd, 0x46},
			       0x46DD794Eu};
	v[4] = (struct vector){"B.4 32 decrementing bytes 1f..00", {0}, 32, {0x5c, 0xdb, 0x3f, 0x11},
			       0x113FDB5Cu};
	for (int i = 0; i < 32; i++) {
		v[3].data[i] = (uint8_t)i;
		v[4].data[i] = (uint8_t)(31 - i);
	}
	v[5] = (struct vector){"B.4 iSCSI SCSI Read (10) command PDU", {0}, 48, {0x56, 0x3a, 0x96, 0xd9},
			       0xD9963A56u};
	memcpy(v[5].data, iscsi_read_pdu, 48);
}

static void check_known_answers(crc_fn f, const char *path)
{
	struct vector v[6];
	vectors_fill(v);
	for (int i = 0; i < 6; i++) {
		uint32_t got = f(0, v[i].data, v[i].len);
		if (got != v[i].value || wire_le32(v[i].wire) != v[i].value)
			fail_msg("%s path, %s: got 0x%08X, want 0x%08X (wire order %02x %02x %02x %02x)", path,
				 v[i].name, got, v[i].value, v[i].wire[0], v[i].wire[1], v[i].wire[2],
				 v[i].wire[3]);
	}
}

/* A fixed pseudo-random buffer (xorshift32), so every byte value shows up. */
static void fill_pattern(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

/* Every length 0..64 at start offsets 0..15 of a 64-byte-aligned buffer, seeds 0 and
 * one non-zero, and a 4 KiB run at odd offsets (many 8-byte steps): f == reference. */
static void check_lengths_offsets(crc_fn f, const char *path)
{
	alignas(64) uint8_t buf[4096 + 64];
	fill_pattern(buf, sizeof(buf), 0x9E3779B9u);
	static const uint32_t seeds[] = {0, 0xDEADBEEFu};
	for (size_t s = 0; s < 2; s++)
		for (size_t off = 0; off < 16; off++)
			for (size_t len = 0; len <= 64; len++) {
				uint32_t want = ref_crc32c(seeds[s], buf + off, len);
				uint32_t got = f(seeds[s], buf + off, len);
				if (got != want)
					fail_msg("%s path: offset %zu length %zu seed 0x%08X: 0x%08X, reference 0x%08X",
						 path, off, len, seeds[s], got, want);
			}
	for (size_t off = 1; off < 8; off += 2)
		if (f(0, buf + off, 4096) != ref_crc32c(0, buf + off, 4096))
			fail_msg("%s path: 4096 bytes at offset %zu differ from the reference", path, off);
}

/* Two calls (the first result as the second's seed) equal one, at every split of 64 bytes
 * at an odd offset. */
static void check_chaining(crc_fn f, const char *path)
{
	alignas(64) uint8_t buf[80];
	fill_pattern(buf, sizeof(buf), 12345);
	const uint8_t *p = buf + 3;
	uint32_t whole = f(0, p, 64);
	for (size_t cut = 0; cut <= 64; cut++) {
		uint32_t two = f(f(0, p, cut), p + cut, 64 - cut);
		if (two != whole)
			fail_msg("%s path: split at %zu gives 0x%08X, one call 0x%08X", path, cut, two, whole);
	}
	/* "123456789" in two pieces: the check value */
	assert_int_equal(f(f(0, "1234", 4), "56789", 5), 0xE3069283u);
}

/* Every table entry: a single byte b from seed 0 indexes entry (0xFF ^ b). */
static void check_single_bytes(crc_fn f, const char *path)
{
	for (unsigned b = 0; b < 256; b++) {
		uint8_t c = (uint8_t)b;
		if (f(0, &c, 1) != ref_crc32c(0, &c, 1))
			fail_msg("%s path: byte 0x%02X: 0x%08X, reference 0x%08X", path, b, f(0, &c, 1),
				 ref_crc32c(0, &c, 1));
	}
}

static int hw_or_skip(void)
{
	if (vcrc32c_hw_available())
		return 1;
	print_message("SKIP: this CPU has no SSE4.2: the hardware CRC-32C path is not tested here\n");
	return 0;
}

/* The oracle itself against the published values, so it is not trusted blindly. */
static void test_reference_known_answers(void **state)
{
	(void)state;
	check_known_answers(ref_crc32c, "bitwise reference");
}

static void test_table_path(void **state)
{
	(void)state;
	check_known_answers(vcrc32c_sw, "table");
	check_single_bytes(vcrc32c_sw, "table");
	check_lengths_offsets(vcrc32c_sw, "table");
	check_chaining(vcrc32c_sw, "table");
}

static void test_hw_path(void **state)
{
	(void)state;
	if (!hw_or_skip()) {
		skip();
		return;
	}
	check_known_answers(vcrc32c_hw, "SSE4.2");
	check_single_bytes(vcrc32c_hw, "SSE4.2");
	check_lengths_offsets(vcrc32c_hw, "SSE4.2");
	check_chaining(vcrc32c_hw, "SSE4.2");
}

/* What the pool calls, whichever path it picked. */
static void test_dispatch(void **state)
{
	(void)state;
	print_message("vcrc32c uses the %s path on this CPU\n", vcrc32c_hw_available() ? "SSE4.2" : "table");
	check_known_answers(vcrc32c, "vcrc32c");
	check_lengths_offsets(vcrc32c, "vcrc32c");
	check_chaining(vcrc32c, "vcrc32c");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_known_answers),
		cmocka_unit_test(test_table_path),
		cmocka_unit_test(test_hw_path),
		cmocka_unit_test(test_dispatch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
