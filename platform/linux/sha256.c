/* sha256.c -- SHA-256 through OpenSSL's libcrypto (platform/sha256.h) */
#include "platform/sha256.h"

#include <dlfcn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdbool.h>

#include "common/util.h"

/*
 * libcrypto is opened on the first digest, not linked: loading and relocating
 * it costs about a millisecond of CPU at every start of the binary, and most
 * commands (record above all, started once per run) never hash anything.
 * The prototypes come from <openssl/evp.h>; the functions from dlsym().
 */
static struct {
	EVP_MD_CTX *(*ctx_new)(void);
	void (*ctx_free)(EVP_MD_CTX *);
	const EVP_MD *(*sha256)(void);
	int (*init)(EVP_MD_CTX *, const EVP_MD *, ENGINE *);
	int (*update)(EVP_MD_CTX *, const void *, size_t);
	int (*final)(EVP_MD_CTX *, unsigned char *, unsigned int *);
	const char *(*version)(int);
	bool loaded;
} crypto;

static void *crypto_sym(void *lib, const char *name)
{
	void *f = dlsym(lib, name);
	if (!f)
		die(3, "libcrypto has no %s: %s", name, dlerror());
	return f;
}

static void crypto_load(void)
{
	if (crypto.loaded)
		return;
	void *lib = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		lib = dlopen("libcrypto.so", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		die(3, "cannot load libcrypto for SHA-256 (Debian package libssl3): %s", dlerror());
	*(void **)&crypto.ctx_new = crypto_sym(lib, "EVP_MD_CTX_new");
	*(void **)&crypto.ctx_free = crypto_sym(lib, "EVP_MD_CTX_free");
	*(void **)&crypto.sha256 = crypto_sym(lib, "EVP_sha256");
	*(void **)&crypto.init = crypto_sym(lib, "EVP_DigestInit_ex");
	*(void **)&crypto.update = crypto_sym(lib, "EVP_DigestUpdate");
	*(void **)&crypto.final = crypto_sym(lib, "EVP_DigestFinal_ex");
	*(void **)&crypto.version = crypto_sym(lib, "OpenSSL_version");
	crypto.loaded = true;
}

void sha256_init(struct sha256 *ctx)
{
	crypto_load();
	EVP_MD_CTX *c = crypto.ctx_new();
	if (!c || crypto.init(c, crypto.sha256(), NULL) != 1)
		die(3, "cannot start a SHA-256 digest (libcrypto)");
	ctx->impl = c;
}

void sha256_update(struct sha256 *ctx, const void *data, size_t len)
{
	if (crypto.update(ctx->impl, data, len) != 1)
		die(3, "SHA-256 digest failed (libcrypto)");
}

void sha256_final(struct sha256 *ctx, uint8_t digest[SHA256_DIGEST_BYTES])
{
	unsigned int n = 0;
	if (crypto.final(ctx->impl, digest, &n) != 1 || n != SHA256_DIGEST_BYTES)
		die(3, "SHA-256 digest failed (libcrypto)");
	crypto.ctx_free(ctx->impl);
	ctx->impl = NULL;
}

const char *sha256_library(void)
{
	crypto_load();
	return crypto.version(OPENSSL_VERSION);
}
