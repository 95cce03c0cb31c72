/* fuzz_summary.c -- differential: a trace read whole (trace_read) and read as
 * a summary (trace_read_summary, what analyze, table and check use) must give
 * the same analysis, byte for byte in its JSON form */
#include "fuzz.h"

#include "analyze/analysis.h"
#include "common/jsonw.h"
#include "common/util.h"
#include "traces/trace.h"

void analysis_write_json(struct jsonw *w, const struct analysis *a);

static char *analysed(const struct trace *tr)
{
	struct analysis a = ANALYSIS_INIT;
	struct strbuf sb = STRBUF_INIT;
	if (analysis_run(tr, NULL, &a) == 0) {
		struct jsonw w = JSONW_INIT(&sb);
		analysis_write_json(&w, &a);
	}
	analysis_release(&a);
	return strbuf_detach(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("run.trace.jsonl", data, size);
	struct trace full, sum;
	int rf = trace_read(path, &full);
	int rs = trace_read_summary(path, &sum);
	if (rf != rs)
		abort();
	if (rf == 0) {
		char *a = analysed(&full), *b = analysed(&sum);
		if (strcmp(a, b)) {
			fprintf(stderr, "full:\n%s\nsummary:\n%s\n", a, b);
			abort();
		}
		free(a);
		free(b);
	}
	trace_release(&full);
	trace_release(&sum);
	return 0;
}
