/* pipeline.h -- pipeline files: how `compare` runs a pipeline's variants
 *
 * A pipeline file is JSON (the demo's: demo/pipeline.json):
 *   {
 *     "name": "demo",
 *     "command": ["{python}", "{pipeline_dir}/pipeline.py", "--seed", "{seed}", "--out", "{out}"],
 *     "defaults": { "size": "default" },          placeholders with default values
 *     "adapter": "adapter",                        module the probe's sitecustomize installs
 *                                                  (the demo's is demo/adapter.py)
 *     "pythonpath": ["{pipeline_dir}"],            prepended to PYTHONPATH
 *     "env": { "OMP_NUM_THREADS": "2" },           every variant
 *     "prepare": ["{python}", "build.py"],         run once before the timed runs
 *                                                  (e.g. write checkpoints), not recorded
 *     "files": ["{cache}"],                        what the pipeline reads (files, or
 *                                                  directories: every file in them), for
 *                                                  compare --cache-state warm|cold
 *     "variants": {                                in the file's order
 *       "eager":  { "env": {} },
 *       "staged": { "env": { "STAGEBENCH_STAGED": "1" }, "args": ["--extra"] }
 *     }
 *   }
 * Placeholders "{key}" in command, args, env values and pythonpath are
 * expanded by the runner: python, pipeline_dir, seed, out, run, mode, cache,
 * plus every key of "defaults"; in "prepare" and "files" too (prepare's out
 * is OUT/prepare, its mode "prepare", its run 0). An unknown key, at the top
 * level or in a variant, is an error; one starting with "_" or "//" is a comment.
 * The reference for users: pipelines/README.md.
 */
#ifndef SB_PIPELINE_H
#define SB_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/kv.h"

struct pipeline_variant {
	char *name;
	struct kv_list env;
	char **args; /* NULL-terminated extra arguments appended to the command */
};

struct pipeline {
	char *path; /* the file read */
	char *dir;  /* its directory ({pipeline_dir}) */
	char *name;
	char **command; /* NULL-terminated template */
	struct kv_list defaults;
	char *adapter; /* NULL when none */
	char **pythonpath; /* NULL-terminated */
	char **prepare;    /* NULL-terminated; empty: none */
	char **files;      /* NULL-terminated; empty: none */
	struct kv_list env;
	struct pipeline_variant *variants;
	size_t nvariants;
};

/* Read and validate a pipeline file. Returns 0, or -1 after error() naming the
 * file and what is wrong ("demo/pipeline.json: 'command' must be a non-empty
 * array of strings"). */
int pipeline_read(const char *path, struct pipeline *p);
const struct pipeline_variant *pipeline_variant(const struct pipeline *p, const char *name);

/* A command line as the pipeline (compare/learn -- COMMAND [ARG...]): named by its script's
 * stem (the first argument ending in .py, else the program's name), {pipeline_dir} the
 * current directory, the placeholders {seed}, {out}, {run}, {mode}, {cache} and {python}
 * passed through where the arguments name them (other braces are literal), `prepare` a
 * shell command run once first (NULL: none), `files` the paths it reads (NULL-terminated,
 * may be NULL), no adapter (a plan is learned), the variants eager and staged
 * (STAGEBENCH_STAGED=1, STAGEBENCH_RNG_REPLAY=1). */
void pipeline_from_command(char *const *argv, const char *prepare, char *const *files,
			   struct pipeline *p);
void pipeline_release(struct pipeline *p);

/* True when the variant's run is staged: STAGEBENCH_STAGED set, and not to "" or "0",
 * by the variant's "env" (else by the pipeline's). */
bool pipeline_variant_staged(const struct pipeline *p, const struct pipeline_variant *v);

/* Expand "{key}" placeholders from `vars`; an unknown key is an error
 * (returns NULL after error() naming the key); "{{" and "}}" are literal braces. */
char *expand_placeholders(const char *tmpl, const struct kv_list *vars);

#endif
