/* fuzz_campaign.c -- the campaign's files as a task and a merge read them: the input's first
 * byte says which, the rest is its text. 0: OUT/plan.json, loaded by a task (runs and
 * arguments checked) and by a merge; 1: OUT/runs.d/p-1.running, the marker a merge judges. A
 * plan is taken only when its runs and arguments are exactly ours. */
#include "fuzz.h"

#include <sys/stat.h>

#include "common/util.h"
#include "runner/compare/campaign.h"

static char *const runs[] = { "p-1", "q-1" };
static char *const args[] = { "pipeline=parts", "seed=7", NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	char out[200], path[260];
	snprintf(out, sizeof(out), "%s/out", fuzz_dir());
	mkdir(out, 0755);
	snprintf(path, sizeof(path), "%s/runs.d", out);
	mkdir(path, 0755);
	if (data[0] & 1) {
		snprintf(path, sizeof(path), "%s/runs.d/p-1.running", out);
		if (write_file(path, (const char *)data + 1, size - 1))
			abort();
		char trace[260];
		snprintf(trace, sizeof(trace), "%s/p-1.trace.jsonl.zst", out);
		struct strbuf why = STRBUF_INIT;
		campaign_still_recording(out, "p-1", "c1", trace, &why);
		strbuf_release(&why);
		unlink(path);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/plan.json", out);
	if (write_file(path, (const char *)data + 1, size - 1))
		abort();
	char *id = NULL, *id2 = NULL;
	int task = campaign_load(out, runs, 2, args, &id);
	int merge = campaign_load(out, runs, 2, NULL, &id2);
	if ((task == 0) != (id != NULL) || (merge == 0) != (id2 != NULL))
		abort(); /* an id exactly when taken */
	if (task == 0 && merge != 0)
		abort(); /* what a task takes a merge takes */
	if (task == 0) {
		/* taken: its text must name our runs and our arguments (or none) */
		const char *t = (const char *)data + 1;
		if (!memmem(t, size - 1, "p-1", 3) || !memmem(t, size - 1, "q-1", 3))
			abort();
	}
	free(id);
	free(id2);
	unlink(path);
	return 0;
}
