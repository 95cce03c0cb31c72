/* sha256.h -- SHA-256 for latent fingerprints, through the platform's
 * maintained library: OpenSSL's libcrypto on Linux (SHA-NI or AVX2 where the
 * CPU has them; platform/linux/sha256.c), CommonCrypto on macOS
 * (platform/darwin/sha256.c); the hex helpers are sha256.c beside this file
 *
 * Incremental use:
 *   struct sha256 ctx;
 *   sha256_init(&ctx);
 *   sha256_update(&ctx, data, len);   any number of times, any lengths
 *   sha256_final(&ctx, digest);       32 bytes; frees what init took; init again to reuse
 * One shot: sha256_hex(data, len, hex) writes 64 lowercase hex digits + NUL.
 * A library failure (out of memory) ends the program (die()): a fingerprint
 * is never silently wrong.
 */
#ifndef SB_PLATFORM_SHA256_H
#define SB_PLATFORM_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_BYTES 32
#define SHA256_HEX_BYTES 65 /* 64 hex digits + NUL */

struct sha256 {
	void *impl; /* the library's context (libcrypto: EVP_MD_CTX; CommonCrypto: CC_SHA256_CTX) */
};

void sha256_init(struct sha256 *ctx);
void sha256_update(struct sha256 *ctx, const void *data, size_t len);
void sha256_final(struct sha256 *ctx, uint8_t digest[SHA256_DIGEST_BYTES]);

/* Digest as 64 lowercase hex digits. */
void sha256_to_hex(const uint8_t digest[SHA256_DIGEST_BYTES], char hex[SHA256_HEX_BYTES]);
void sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_BYTES]);

/* The library in words, for --version and benchmarks: "OpenSSL 3.0.x ...", "CommonCrypto". */
const char *sha256_library(void);

#endif
