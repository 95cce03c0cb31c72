/* fuzz_trace.c -- the trace reader on raw bytes (plain JSON lines, or zstd
 * when the bytes start with its magic), then the analysis of what it read */
#include "fuzz.h"

#include "analyze/analysis.h"
#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace tr;
	trace_read_mem("fuzz.trace.jsonl", data, size, &tr);
	struct analysis a = ANALYSIS_INIT;
	if (tr.has_start)
		analysis_run(&tr, NULL, &a);
	analysis_release(&a);
	trace_release(&tr);
	return 0;
}
