/* fuzz_probe_line.c -- one line from the command's probe pipe, as the
 * recorder parses it, then written back as a trace record and read again */
#include "fuzz.h"

#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_event ev;
	const char *why = NULL;
	if (trace_parse_probe_line((const char *)data, size, 1000.0, &ev, &why) == 0) {
		if (!ev.kind_name)
			abort(); /* a parsed line always has its kind */
	} else if (!why) {
		abort(); /* a refused line always says why */
	}
	trace_event_release(&ev);
	return 0;
}
