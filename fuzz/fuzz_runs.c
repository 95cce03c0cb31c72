/* fuzz_runs.c -- runs.json (stageload's and stagebench's): read, write back,
 * read again: the second read must succeed and give the same entries */
#include "fuzz.h"

#include "traces/runs.h"

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("runs.json", data, size);
	struct run_list a = RUN_LIST_INIT, b = RUN_LIST_INIT;
	if (runs_read(path, &a) == 0) {
		char again[160];
		snprintf(again, sizeof(again), "%s/again.json", fuzz_dir());
		if (runs_write(again, &a) || runs_read(again, &b) || b.n != a.n)
			abort();
		for (size_t i = 0; i < a.n; i++) {
			const struct run_entry *x = &a.items[i], *y = &b.items[i];
			if (x->run != y->run || x->has_exit != y->has_exit ||
			    (x->has_exit && x->exit != y->exit) || x->stopped_by != y->stopped_by ||
			    x->signal != y->signal || !same(x->trace, y->trace) ||
			    !same(x->mode ? x->mode : "", y->mode))
				abort();
			runs_find(&a, x->trace ? x->trace : "eager-1.trace.jsonl");
		}
	}
	runs_release(&a);
	runs_release(&b);
	return 0;
}
