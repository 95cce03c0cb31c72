/* sha256.c -- SHA-256 through libcrypto (Linux) or CommonCrypto (macOS); see sha256.h */
#include "sha256.h"

#include "util.h"

#ifdef __APPLE__

void sha256_init(struct sha256 *ctx)
{
	CC_SHA256_Init(&ctx->cc);
}

void sha256_update(struct sha256 *ctx, const void *data, size_t len)
{
	const unsigned char *p = data;
	while (len) { /* CC_LONG is 32 bits */
		CC_LONG n = len > 0x40000000u ? 0x40000000u : (CC_LONG)len;
		CC_SHA256_Update(&ctx->cc, p, n);
		p += n;
		len -= n;
	}
}

void sha256_final(struct sha256 *ctx, uint8_t digest[SHA256_DIGEST_BYTES])
{
	CC_SHA256_Final(digest, &ctx->cc);
}

const char *sha256_library(void)
{
	return "CommonCrypto";
}

#else

#include <openssl/crypto.h>
#include <openssl/evp.h>

void sha256_init(struct sha256 *ctx)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	if (!c || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1)
		die(3, "cannot start a SHA-256 digest (libcrypto)");
	ctx->evp = c;
}

void sha256_update(struct sha256 *ctx, const void *data, size_t len)
{
	if (EVP_DigestUpdate(ctx->evp, data, len) != 1)
		die(3, "SHA-256 digest failed (libcrypto)");
}

void sha256_final(struct sha256 *ctx, uint8_t digest[SHA256_DIGEST_BYTES])
{
	unsigned int n = 0;
	if (EVP_DigestFinal_ex(ctx->evp, digest, &n) != 1 || n != SHA256_DIGEST_BYTES)
		die(3, "SHA-256 digest failed (libcrypto)");
	EVP_MD_CTX_free(ctx->evp);
	ctx->evp = NULL;
}

const char *sha256_library(void)
{
	return OpenSSL_version(OPENSSL_VERSION);
}

#endif

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
