/* sha256.c -- SHA-256 through CommonCrypto, in macOS's libSystem (platform/sha256.h) */
#include "platform/sha256.h"

#include <CommonCrypto/CommonDigest.h>
#include <stdlib.h>

#include "common/util.h"

void sha256_init(struct sha256 *ctx)
{
	CC_SHA256_CTX *c = xmalloc(sizeof(*c));
	CC_SHA256_Init(c);
	ctx->impl = c;
}

void sha256_update(struct sha256 *ctx, const void *data, size_t len)
{
	const unsigned char *p = data;
	while (len) { /* CC_LONG is 32 bits */
		CC_LONG n = len > 0x40000000u ? 0x40000000u : (CC_LONG)len;
		CC_SHA256_Update(ctx->impl, p, n);
		p += n;
		len -= n;
	}
}

void sha256_final(struct sha256 *ctx, uint8_t digest[SHA256_DIGEST_BYTES])
{
	CC_SHA256_Final(digest, ctx->impl);
	free(ctx->impl);
	ctx->impl = NULL;
}

const char *sha256_library(void)
{
	return "CommonCrypto";
}
