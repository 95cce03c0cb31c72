/* reader.c -- the readers' names, words and caveats, and the reader a mark names */
#include "reader.h"

#include <string.h>

static const struct sb_reader_info readers[SB_READER_COUNT] = {
	[SB_READER_UNKNOWN] = { "unknown", "unknown",
		"The trace names no reader this version knows (traces older than the reader "
		"mark name none)." },
	[SB_READER_CGROUP_V1] = { "cgroup-v1", "cgroup v1", NULL },
	[SB_READER_CGROUP_V2] = { "cgroup-v2", "cgroup v2", NULL },
	[SB_READER_PER_PROCESS] = { "per-process", "per-process",
		"The per-process reader adds up each process's pages: it can miscount shared "
		"memory that forked workers write between its readings and miss the pages of "
		"short-lived workers, so its figures may be off by tens of percent for such "
		"pipelines; a memory cgroup of the run's own reads each page once "
		"(docs/platforms.md)." },
	[SB_READER_MACOS] = { "macos", "macOS", NULL },
	[SB_READER_FAKE] = { "fake", "fake (scripted figures)", NULL },
};

/* The cgroup reader's mark before it carried a token. */
static const char legacy_cgroup[] = "footprint read from the run's own memory cgroup (v";

const struct sb_reader_info *reader_info(enum sb_reader r)
{
	return &readers[(unsigned)r < SB_READER_COUNT ? r : SB_READER_UNKNOWN];
}

enum sb_reader reader_of_mark(const char *note)
{
	static const size_t np = sizeof(READER_MARK_PREFIX) - 1, nl = sizeof(legacy_cgroup) - 1;
	if (!note || strncmp(note, READER_MARK_PREFIX, np))
		return SB_READER_UNKNOWN;
	const char *p = note + np;
	if (!strncmp(p, legacy_cgroup, nl))
		return p[nl] == '1' ? SB_READER_CGROUP_V1 : p[nl] == '2' ? SB_READER_CGROUP_V2
									 : SB_READER_UNKNOWN;
	size_t n = strcspn(p, ":");
	if (p[n] != ':')
		return SB_READER_UNKNOWN;
	for (int r = SB_READER_UNKNOWN + 1; r < SB_READER_COUNT; r++)
		if (strlen(readers[r].name) == n && !strncmp(p, readers[r].name, n))
			return (enum sb_reader)r;
	return SB_READER_UNKNOWN;
}

enum sb_reader reader_of_run(enum sb_reader marked, const char *backend)
{
	if (marked != SB_READER_UNKNOWN || !backend)
		return marked;
	if (!strcmp(backend, "macos"))
		return SB_READER_MACOS;
	if (!strcmp(backend, "fake"))
		return SB_READER_FAKE;
	return SB_READER_UNKNOWN;
}

const char *reader_caveat(enum sb_reader r)
{
	return reader_info(r)->caveat;
}
