/* fuzz_runs_d.c -- a `compare --task` entry (OUT/runs.d/V-N.json) as `compare --merge` reads
 * it: the entry read; its `why` quoted as merge quotes it on stderr (text_term) must hold
 * no control byte (a line break there would start a line of its own: a workflow command in a CI
 * log); written and read back, its fields, `why` included, are the same */
#include "fuzz.h"

#include <sys/stat.h>

#include "analyze/text.h"
#include "common/util.h"
#include "traces/runs.h"

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void quoted_on_one_line(const char *why)
{
	struct strbuf sb = STRBUF_INIT;
	text_term(&sb, why);
	for (size_t i = 0; i < sb.len; i++)
		if ((unsigned char)sb.buf[i] < 0x20 || sb.buf[i] == 0x7f)
			abort();
	strbuf_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[160], path[200], again[200];
	snprintf(dir, sizeof(dir), "%s/runs.d", fuzz_dir());
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/p-1.json", dir);
	snprintf(again, sizeof(again), "%s/again.json", dir);
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		abort();
	struct run_list a = RUN_LIST_INIT, b = RUN_LIST_INIT;
	if (runs_read(path, &a) == 0) {
		for (size_t i = 0; i < a.n; i++)
			if (a.items[i].why)
				quoted_on_one_line(a.items[i].why);
		if (runs_write(again, &a) || runs_read(again, &b) || b.n != a.n)
			abort();
		for (size_t i = 0; i < a.n; i++) {
			const struct run_entry *x = &a.items[i], *y = &b.items[i];
			if (x->run != y->run || x->stopped_by != y->stopped_by || x->signal != y->signal ||
			    !same(x->why, y->why) || !same(x->trace, y->trace))
				abort();
		}
	}
	runs_release(&a);
	runs_release(&b);
	return 0;
}
