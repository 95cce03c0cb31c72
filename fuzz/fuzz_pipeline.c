/* fuzz_pipeline.c -- pipeline files (compare's): read, validate, and expand
 * every template with placeholders the way a run does */
#include "fuzz.h"

#include "common/kv.h"
#include "runner/pipeline.h"

static void expand_all(char **v, const struct kv_list *vars)
{
	for (; v && *v; v++)
		free(expand_placeholders(*v, vars));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("pipeline.json", data, size);
	struct pipeline p;
	memset(&p, 0, sizeof(p));
	if (pipeline_read(path, &p) == 0) {
		struct kv_list vars = { 0 };
		static const char *const keys[] = { "python", "pipeline_dir", "seed", "out",
						     "run", "mode", "cache" };
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			kv_set(&vars, keys[i], "x");
		for (size_t i = 0; i < p.defaults.n; i++)
			kv_set(&vars, p.defaults.items[i].key, p.defaults.items[i].value);
		expand_all(p.command, &vars);
		expand_all(p.pythonpath, &vars);
		for (size_t i = 0; i < p.nvariants; i++) {
			expand_all(p.variants[i].args, &vars);
			for (size_t k = 0; k < p.variants[i].env.n; k++)
				free(expand_placeholders(p.variants[i].env.items[k].value, &vars));
			if (pipeline_variant(&p, p.variants[i].name) != &p.variants[i])
				abort();
		}
		kv_release(&vars);
	}
	pipeline_release(&p);
	return 0;
}
