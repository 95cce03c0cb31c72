/* fuzz.h -- what the libFuzzer harnesses share (see fuzz/README.md) */
#ifndef SB_FUZZ_H
#define SB_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A scratch directory of this process, created once, removed at exit. */
static char fuzz_dir_[64];

static void fuzz_dir_remove(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fuzz_dir_);
	if (system(cmd))
		return;
}

static inline const char *fuzz_dir(void)
{
	if (!fuzz_dir_[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(fuzz_dir_, sizeof(fuzz_dir_), "%s/sbfuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(fuzz_dir_))
			abort();
		atexit(fuzz_dir_remove);
	}
	return fuzz_dir_;
}

/* Write data to DIR/name (the readers under test take paths); returns the path. */
static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), name);
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	if (fclose(f))
		abort();
	return path;
}

#endif
