/* hash_rate.c -- benchmark: SHA-256 throughput of latent fingerprints (platform/sha256.h)
 *
 * Build (from the repository root, after `make`; bench.py does it):
 *   cc -D_GNU_SOURCE -I. -O2 -o build/hash_rate bench/hash_rate.c \
 *      build/platform/sha256.o build/platform/linux/sha256.o build/common/util.o -ldl
 *   (on macOS: build/platform/darwin/sha256.o)
 * Run:  build/hash_rate [MIB]        (default 1024)
 * Prints: MiB hashed, best wall seconds of 3, GiB/s, and the library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "platform/sha256.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
	size_t len = mib << 20;
	unsigned char *buf = malloc(len);
	if (!buf || !len)
		return 1;
	for (size_t i = 0; i < len; i++) /* not zeros: a latent's bytes */
		buf[i] = (unsigned char)(i * 2654435761u >> 13);
	char hex[SHA256_HEX_BYTES];
	double best = 0;
	for (int r = 0; r < 3; r++) {
		double t = now();
		sha256_hex(buf, len, hex);
		t = now() - t;
		if (!r || t < best)
			best = t;
	}
	printf("%zu MiB %.3f s %.2f GiB/s %s\n", mib, best, (double)len / best / (1 << 30),
	       sha256_library());
	free(buf);
	return 0;
}
