/* fuzz_history.c -- `stagebench history` input: two commits' run directories, each with one
 * trace cut from the input (its first byte says where), built into the history model and
 * rendered as md, csv and json. Checks: the json parses; no two series have the same
 * (mode, stage) pair, and two traces whose names differ give two series (the key is the pair) */
#include "fuzz.h"

#include <jansson.h>
#include <sys/stat.h>

#include "analyze/history.h"
#include "common/util.h"

static void put(const char *sub, const uint8_t *data, size_t size)
{
	char path[200];
	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), sub);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/staged-1.trace.jsonl", fuzz_dir(), sub);
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		abort();
}

static void check_model(const struct history *h)
{
	for (size_t i = 0; i < h->nseries; i++)
		for (size_t j = i + 1; j < h->nseries; j++)
			if (!strcmp(h->series[i].mode, h->series[j].mode) &&
			    !strcmp(h->series[i].stage, h->series[j].stage))
				abort();
	struct strbuf sb = STRBUF_INIT;
	history_render_md(h, &sb);
	strbuf_reset(&sb);
	history_render_csv(h, &sb);
	strbuf_reset(&sb);
	history_render_json(h, &sb);
	json_error_t err;
	json_t *j = json_loadb(sb.buf, sb.len, 0, &err);
	if (!j)
		abort();
	json_decref(j);
	strbuf_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	size_t cut = size > 1 ? 1 + (size_t)data[0] * (size - 1) / 256 : 1;
	put("c1", data + 1, cut - 1);
	put("c2", data + cut, size - cut);
	char c1[200], c2[200];
	snprintf(c1, sizeof(c1), "%s/c1", fuzz_dir());
	snprintf(c2, sizeof(c2), "%s/c2", fuzz_dir());
	const char *dirs[2] = { c1, c2 };
	struct history h = HISTORY_INIT;
	if (history_build(&h, dirs, 2, data[0] & 1 ? HISTORY_ORDER_GIVEN : HISTORY_ORDER_RECORDED) == 0)
		check_model(&h);
	history_release(&h);
	return 0;
}
