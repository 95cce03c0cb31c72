/* sha256.h -- a small SHA-256 (FIPS 180-2), for latent fingerprints
 *
 * Incremental use:
 *   struct sha256 ctx;
 *   sha256_init(&ctx);
 *   sha256_update(&ctx, data, len);   any number of times, any lengths
 *   sha256_final(&ctx, digest);       32 bytes; ctx must be re-initialised to reuse
 * One shot: sha256_hex(data, len, hex) writes 64 lowercase hex digits + NUL.
 * No allocation, no failure modes; the context is a plain caller-owned struct.
 */
#ifndef SB_SHA256_H
#define SB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_BYTES 32
#define SHA256_HEX_BYTES 65 /* 64 hex digits + NUL */

struct sha256 {
	uint32_t h[8];
	uint64_t total_bytes;
	uint8_t block[64];
	size_t block_len;
};

void sha256_init(struct sha256 *ctx);
void sha256_update(struct sha256 *ctx, const void *data, size_t len);
void sha256_final(struct sha256 *ctx, uint8_t digest[SHA256_DIGEST_BYTES]);

/* Digest as 64 lowercase hex digits. */
void sha256_to_hex(const uint8_t digest[SHA256_DIGEST_BYTES], char hex[SHA256_HEX_BYTES]);
void sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_BYTES]);

#endif
