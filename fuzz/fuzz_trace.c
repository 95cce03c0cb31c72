/* fuzz_trace.c -- the trace reader on raw bytes (plain JSON lines, or zstd
 * when the bytes start with its magic), then the analysis of what it read and
 * its per-stage table as markdown, and the plan as it ran (loadplan.h) */
#include "fuzz.h"

#include "analyze/analysis.h"
#include "analyze/loadplan.h"
#include "analyze/table.h"
#include "common/util.h"
#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace tr;
	trace_read_mem("fuzz.trace.jsonl", data, size, &tr);
	struct analysis a = ANALYSIS_INIT;
	if (tr.has_start && analysis_run(&tr, NULL, &a) == 0) {
		struct table_run run = { .a = a };
		struct table t = TABLE_INIT;
		if (table_build(&t, &run, 1, NULL, 0) == 0) {
			struct strbuf md = STRBUF_INIT;
			table_render_md(&t, &md);
			loadplan_section_md(&t, &md, NULL);
			strbuf_release(&md);
		}
		table_release(&t);
	}
	analysis_release(&a);
	trace_release(&tr);
	return 0;
}
