/* sha256.c -- SHA-256 as hex, over the OS library's digest (sha256.h) */
#include "sha256.h"

void sha256_to_hex(const uint8_t digest[SHA256_DIGEST_BYTES], char hex[SHA256_HEX_BYTES])
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < SHA256_DIGEST_BYTES; i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 15];
	}
	hex[64] = '\0';
}

void sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_BYTES])
{
	struct sha256 ctx;
	uint8_t d[SHA256_DIGEST_BYTES];
	sha256_init(&ctx);
	sha256_update(&ctx, data, len);
	sha256_final(&ctx, d);
	sha256_to_hex(d, hex);
}
