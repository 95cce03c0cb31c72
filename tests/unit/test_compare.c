/* test_compare.c -- compare's plan: argv and environment of a run, --set, defaults, schedule, lookups */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/util.h"
#include "../../platform/platform.h"
#include "../../runner/compare/compare.h"
#include "../../runner/pipeline.h"
#include "testutil.h"

static char tmpdir[64];

static void make_tmp(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/sb-compare-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void drop_tmp(void)
{
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	int rc = system(cmd);
	(void)rc;
	free(cmd);
}

static const char pipeline_json[] =
	"{\n"
	"  \"name\": \"demo\",\n"
	"  \"command\": [\"{python}\", \"{pipeline_dir}/pipeline.py\", \"--seed\", \"{seed}\",\n"
	"              \"--size\", \"{size}\", \"--out\", \"{out}\", \"--cache\", \"{cache}\"],\n"
	"  \"defaults\": {\"size\": \"default\", \"steps\": \"4\"},\n"
	"  \"adapter\": \"{pipeline_dir}/adapter.py\",\n"
	"  \"pythonpath\": [\"{pipeline_dir}\", \"{pipeline_dir}/lib\"],\n"
	"  \"env\": {\"OMP_NUM_THREADS\": \"2\", \"RUN_TAG\": \"{mode}-{run}\", \"LEVEL\": \"all\"},\n"
	"  \"variants\": {\n"
	"    \"eager\": {\"env\": {}},\n"
	"    \"staged\": {\"env\": {\"STAGEBENCH_STAGED\": \"1\", \"LEVEL\": \"staged\"},\n"
	"               \"args\": [\"--steps\", \"{steps}\"]},\n"
	"    \"broken\": {\"env\": {\"X\": \"{nosuch}\"}}\n"
	"  }\n"
	"}\n";

static void read_pipeline(struct pipeline *p)
{
	char *path = xasprintf("%s/pipeline.json", tmpdir);
	cr_assert_eq(write_file(path, pipeline_json, strlen(pipeline_json)), 0);
	cr_assert_eq(pipeline_read(path, p), 0);
	free(path);
}

/* Read `json` as TMP/pipeline.json; returns pipeline_read's result, *msg what it wrote to stderr. */
static int read_text(const char *json, char **msg)
{
	char *path = xasprintf("%s/pipeline.json", tmpdir);
	cr_assert_eq(write_file(path, json, strlen(json)), 0);
	struct pipeline p;
	struct stderr_capture c;
	stderr_capture_begin(&c);
	int rc = pipeline_read(path, &p);
	*msg = stderr_capture_end(&c);
	if (rc == 0)
		pipeline_release(&p);
	free(path);
	return rc;
}

Test(compare, read_refuses_an_unknown_top_level_key_and_suggests_the_near_one, .init = make_tmp,
     .fini = drop_tmp)
{
	char *msg;
	cr_assert_eq(read_text("{\"command\": [\"true\"], \"adaptor\": \"a.py\",\n"
			       " \"variants\": {\"v\": {}}}\n", &msg), -1);
	char *want = xasprintf(
		"stagebench: error: %s/pipeline.json: unknown key 'adaptor' at the top level; "
		"did you mean 'adapter'? (known keys: name, command, variants, defaults, env, adapter, "
		"pythonpath, prepare, files; a key starting with '_' or '//' is a comment)\n", tmpdir);
	cr_expect_str_eq(msg, want);
	free(want);
	free(msg);
}

Test(compare, read_refuses_an_unknown_variant_key_naming_the_variant, .init = make_tmp,
     .fini = drop_tmp)
{
	char *msg;
	cr_assert_eq(read_text("{\"command\": [\"true\"], \"variants\": {\"eager\": {},\n"
			       " \"staged\": {\"env\": {}, \"arg\": [\"--x\"]}}}\n", &msg), -1);
	cr_expect_not_null(strstr(msg, "pipeline.json: unknown key 'arg' in variants.staged; "
				       "did you mean 'args'? (known keys: env, args;"), "%s", msg);
	free(msg);
}

Test(compare, read_gives_no_hint_when_no_known_key_is_near, .init = make_tmp, .fini = drop_tmp)
{
	char *msg;
	cr_assert_eq(read_text("{\"command\": [\"true\"], \"bogus\": 1, \"variants\": {\"v\": {}}}",
			       &msg), -1);
	cr_expect_not_null(strstr(msg, "unknown key 'bogus' at the top level (known keys: name,"),
			   "%s", msg);
	cr_expect_null(strstr(msg, "did you mean"), "%s", msg);
	free(msg);
	/* 'arv' is 2 edits from both 'env' and 'args': no one key to suggest */
	cr_assert_eq(read_text("{\"command\": [\"true\"], \"variants\": {\"v\": {\"arv\": 1}}}",
			       &msg), -1);
	cr_expect_not_null(strstr(msg, "unknown key 'arv' in variants.v (known keys: env, args;"),
			   "%s", msg);
	cr_expect_null(strstr(msg, "did you mean"), "%s", msg);
	free(msg);
}

Test(compare, read_takes_keys_starting_with_underscore_or_slashes_as_comments,
     .init = make_tmp, .fini = drop_tmp)
{
	char *msg;
	cr_expect_eq(read_text("{\"_comment\": \"x\", \"// why\": [1], \"command\": [\"true\"],\n"
			       " \"variants\": {\"v\": {\"_note\": {}, \"//\": 2, \"args\": []}}}",
			       &msg), 0, "%s", msg);
	cr_expect_str_eq(msg, "");
	free(msg);
	cr_expect_eq(read_text("{\"comment\": \"x\", \"command\": [\"true\"], \"variants\": {\"v\": {}}}",
			       &msg), -1, "only a leading '_' or '//' makes a comment");
	free(msg);
}

static const char *env_get(char **env, const char *key)
{
	size_t n = strlen(key);
	const char *found = NULL;
	for (char **e = env; e && *e; e++)
		if (!strncmp(*e, key, n) && (*e)[n] == '=') {
			cr_assert_null(found, "%s set twice in the environment", key);
			found = *e + n + 1;
		}
	return found;
}

Test(compare, plan_expands_the_command_and_variant_args, .init = make_tmp, .fini = drop_tmp)
{
	struct pipeline p;
	read_pipeline(&p);
	struct kv_list sets = { 0 };
	cr_assert_eq(compare_set_option(&p, "size=tiny", &sets, NULL), 0);
	struct compare_setup s = { &p, "/o", "/sb/probe", "/usr/bin/python3", "/c", "11", &sets, NULL, NULL };
	struct compare_run r = COMPARE_RUN_INIT;
	cr_assert_eq(compare_plan_run(&s, pipeline_variant(&p, "staged"), 2, &r), 0);

	char *script = xasprintf("%s/pipeline.py", p.dir);
	const char *want[] = { "/usr/bin/python3", script, "--seed", "11", "--size", "tiny", "--out",
			       "/o/staged-2", "--cache", "/c", "--steps", "4", NULL };
	for (size_t i = 0; want[i]; i++)
		cr_expect_str_eq(r.argv[i], want[i], "argv[%zu]", i);
	size_t n = 0;
	while (r.argv[n])
		n++;
	cr_expect_eq(n, 12);
	cr_expect_str_eq(r.id, "staged-2");
	cr_expect_str_eq(r.out_dir, "/o/staged-2");
	cr_expect_str_eq(r.trace_path, "/o/staged-2.trace.jsonl.zst");
	cr_expect_str_eq(r.latents_dir, "/o/staged-2.latents");
	cr_expect_str_eq(r.log_path, "/o/staged-2.log");
	cr_expect_str_eq(r.err_path, "/o/staged-2.err");
	free(script);
	compare_run_release(&r);
	compare_run_release(&r); /* released twice: still fine */
	kv_release(&sets);
	pipeline_release(&p);
}

Test(compare, plan_environment_has_probe_first_and_variant_env_last, .init = make_tmp,
     .fini = drop_tmp)
{
	struct pipeline p;
	read_pipeline(&p);
	struct compare_setup s = { &p, "/o", "/sb/probe", "py", "/c", "7", NULL, "/mine:/theirs", NULL };
	struct compare_run r = COMPARE_RUN_INIT;
	cr_assert_eq(compare_plan_run(&s, pipeline_variant(&p, "staged"), 1, &r), 0);

	char *pp = xasprintf("/sb/probe/site:/sb/probe:%s:%s/lib:/mine:/theirs", p.dir, p.dir);
	cr_expect_str_eq(env_get(r.env, "PYTHONPATH"), pp);
	char *adapter = xasprintf("%s/adapter.py", p.dir);
	cr_expect_str_eq(env_get(r.env, "STAGEBENCH_ADAPTER"), adapter);
	cr_expect_str_eq(env_get(r.env, "OMP_NUM_THREADS"), "2");
	cr_expect_str_eq(env_get(r.env, "RUN_TAG"), "staged-1", "placeholders in env values");
	cr_expect_str_eq(env_get(r.env, "STAGEBENCH_STAGED"), "1");
	cr_expect_str_eq(env_get(r.env, "LEVEL"), "staged", "the variant's env replaces the pipeline's");
	free(pp);
	free(adapter);
	compare_run_release(&r);

	/* eager: no variant env, no PYTHONPATH of ours to append */
	s.old_pythonpath = "";
	cr_assert_eq(compare_plan_run(&s, pipeline_variant(&p, "eager"), 3, &r), 0);
	pp = xasprintf("/sb/probe/site:/sb/probe:%s:%s/lib", p.dir, p.dir);
	cr_expect_str_eq(env_get(r.env, "PYTHONPATH"), pp);
	cr_expect_null(env_get(r.env, "STAGEBENCH_STAGED"));
	cr_expect_str_eq(env_get(r.env, "LEVEL"), "all");
	cr_expect_str_eq(env_get(r.env, "RUN_TAG"), "eager-3");
	free(pp);
	compare_run_release(&r);
	pipeline_release(&p);
}

Test(compare, a_learned_plan_replaces_the_adapter_and_staged_variants_are_known,
     .init = make_tmp, .fini = drop_tmp)
{
	struct pipeline p;
	read_pipeline(&p);
	struct compare_setup s = { &p, "/o", "/sb/probe", "py", "/c", "7", NULL, NULL, NULL };
	s.adapter = "/o/plan.py";
	struct compare_run r = COMPARE_RUN_INIT;
	cr_assert_eq(compare_plan_run(&s, pipeline_variant(&p, "eager"), 1, &r), 0);
	cr_expect_str_eq(env_get(r.env, "STAGEBENCH_ADAPTER"), "/o/plan.py");
	compare_run_release(&r);
	cr_expect(pipeline_variant_staged(&p, pipeline_variant(&p, "staged")));
	cr_expect_not(pipeline_variant_staged(&p, pipeline_variant(&p, "eager")));
	/* the pipeline's env counts too; "0" and "" are off */
	kv_set(&p.env, "STAGEBENCH_STAGED", "1");
	cr_expect(pipeline_variant_staged(&p, pipeline_variant(&p, "eager")));
	kv_set(&p.env, "STAGEBENCH_STAGED", "0");
	cr_expect_not(pipeline_variant_staged(&p, pipeline_variant(&p, "eager")));
	pipeline_release(&p);
}

Test(compare, plan_with_an_unknown_placeholder_fails_naming_the_file, .init = make_tmp,
     .fini = drop_tmp)
{
	struct pipeline p;
	read_pipeline(&p);
	struct compare_setup s = { &p, "/o", "/sb/probe", "py", "/c", "7", NULL, NULL, NULL };
	struct compare_run r = COMPARE_RUN_INIT;
	cr_expect_eq(compare_plan_run(&s, pipeline_variant(&p, "broken"), 1, &r), -1);
	cr_expect_null(r.argv, "a failed plan leaves nothing behind");
	cr_expect_null(r.env);
	compare_run_release(&r);
	pipeline_release(&p);
}

Test(compare, vars_hold_builtins_defaults_and_overrides, .init = make_tmp, .fini = drop_tmp)
{
	struct pipeline p;
	read_pipeline(&p);
	struct kv_list sets = { 0 }, vars = { 0 };
	cr_assert_eq(compare_set_option(&p, "steps=9", &sets, NULL), 0);
	cr_assert_eq(compare_set_option(&p, "steps=10", &sets, NULL), 0); /* the last one wins */
	struct compare_setup s = { &p, "/o", "/sb/probe", "py", "/c", "7", &sets, NULL, NULL };
	compare_vars(&s, "eager", 1, &vars);
	cr_expect_str_eq(kv_get(&vars, "python"), "py");
	cr_expect_str_eq(kv_get(&vars, "pipeline_dir"), p.dir);
	cr_expect_str_eq(kv_get(&vars, "seed"), "7");
	cr_expect_str_eq(kv_get(&vars, "cache"), "/c");
	cr_expect_str_eq(kv_get(&vars, "size"), "default");
	cr_expect_str_eq(kv_get(&vars, "steps"), "10");
	cr_expect_str_eq(kv_get(&vars, "out"), "/o/eager-1");
	cr_expect_str_eq(kv_get(&vars, "run"), "1");
	cr_expect_str_eq(kv_get(&vars, "mode"), "eager");
	kv_release(&vars);
	kv_release(&sets);
	pipeline_release(&p);
}

Test(compare, set_option_rejects_keys_without_a_default, .init = make_tmp, .fini = drop_tmp)
{
	struct pipeline p;
	read_pipeline(&p);
	struct kv_list sets = { 0 };
	cr_expect_eq(compare_set_option(&p, "colour=red", &sets, NULL), -1);
	cr_expect_eq(compare_set_option(&p, "size", &sets, NULL), -1, "no '='");
	cr_expect_eq(compare_set_option(&p, "=tiny", &sets, NULL), -1, "empty key");
	cr_expect_eq(sets.n, 0);
	cr_expect_eq(compare_set_option(&p, "size=", &sets, NULL), 0, "an empty value is a value");
	cr_expect_str_eq(kv_get(&sets, "size"), "");
	kv_release(&sets);
	pipeline_release(&p);
}

Test(compare, default_out_dir_by_date_pipeline_and_commit)
{
	char *d = compare_default_out("2026-11-29", "demo", NULL, false);
	cr_expect_str_eq(d, "runs/2026-11-29-demo");
	free(d);
	d = compare_default_out("2026-11-29", "demo", "1a2b3c4", false);
	cr_expect_str_eq(d, "runs/2026-11-29-demo-1a2b3c4");
	free(d);
	d = compare_default_out("2026-11-29", "demo", "1a2b3c4", true);
	cr_expect_str_eq(d, "runs/2026-11-29-demo-1a2b3c4-dirty");
	free(d);
	d = compare_default_out("2026-11-29", "org/model", NULL, true);
	cr_expect_str_eq(d, "runs/2026-11-29-org_model", "no commit: no -dirty either");
	free(d);
}

Test(compare, default_cache_follows_xdg_then_home)
{
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	char *c = compare_default_cache("demo");
	cr_expect_str_eq(c, "/xdg/stagebench/demo");
	free(c);
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	c = compare_default_cache("demo");
	cr_expect_str_eq(c, "/home/u/.cache/stagebench/demo");
	free(c);
}

Test(compare, python_from_the_environment_first)
{
	setenv("STAGEBENCH_PYTHON", "/opt/py/bin/python", 1);
	cr_expect_str_eq(compare_python(), "/opt/py/bin/python");
	unsetenv("STAGEBENCH_PYTHON");
	const char *want = access("/usr/bin/python3", X_OK) ? "python3" : "/usr/bin/python3";
	cr_expect_str_eq(compare_python(), want);
}

Test(compare, schedule_alternates_variants)
{
	size_t v;
	int rep;
	const size_t wantv[] = { 0, 1, 0, 1 };
	const int wantr[] = { 1, 1, 2, 2 };
	for (size_t k = 0; k < 4; k++) {
		compare_schedule(2, k, &v, &rep);
		cr_expect_eq(v, wantv[k], "run %zu: variant", k);
		cr_expect_eq(rep, wantr[k], "run %zu: rep", k);
	}
	compare_schedule(3, 5, &v, &rep);
	cr_expect_eq(v, 2);
	cr_expect_eq(rep, 2);
}

static void mkfile(const char *rel)
{
	char *p = xasprintf("%s/%s", tmpdir, rel);
	char *slash = strrchr(p, '/');
	*slash = '\0';
	cr_assert_eq(mkdir_p(p), 0);
	*slash = '/';
	cr_assert_eq(write_file(p, "{}", 2), 0);
	free(p);
}

Test(compare, find_share_tries_home_then_beside_the_binary, .init = make_tmp, .fini = drop_tmp)
{
	char *exe = xasprintf("%s/repo/build/stagebench", tmpdir);
	char *real_tmp = realpath(tmpdir, NULL);
	cr_assert_not_null(real_tmp);

	cr_expect_null(compare_find_share(NULL, exe, "demo/pipeline.json"), "nothing there yet");

	mkfile("prefix/bin/stagebench");
	mkfile("prefix/share/stagebench/demo/pipeline.json");
	char *inst = xasprintf("%s/prefix/bin/stagebench", tmpdir);
	char *f = compare_find_share(NULL, inst, "demo/pipeline.json");
	char *want = xasprintf("%s/prefix/share/stagebench/demo/pipeline.json", real_tmp);
	cr_expect_str_eq(f, want, "make install layout");
	free(f);
	free(want);

	mkfile("repo/build/stagebench");
	mkfile("repo/demo/pipeline.json");
	f = compare_find_share(NULL, exe, "demo/pipeline.json");
	want = xasprintf("%s/repo/demo/pipeline.json", real_tmp);
	cr_expect_str_eq(f, want, "the source tree: EXE_DIR/../demo");
	free(f);
	free(want);

	mkfile("home/demo/pipeline.json");
	char *home = xasprintf("%s/home", tmpdir);
	f = compare_find_share(home, exe, "demo/pipeline.json");
	want = xasprintf("%s/home/demo/pipeline.json", real_tmp);
	cr_expect_str_eq(f, want, "$STAGEBENCH_HOME first");
	free(f);
	free(want);
	f = compare_find_share("", exe, "demo/pipeline.json");
	want = xasprintf("%s/repo/demo/pipeline.json", real_tmp);
	cr_expect_str_eq(f, want, "an empty STAGEBENCH_HOME is ignored");
	free(f);
	free(want);

	free(home);
	free(inst);
	free(exe);
	free(real_tmp);
}

Test(compare, self_exe_is_this_test_binary)
{
	char *exe = pl_self_exe();
	cr_assert_not_null(exe);
	cr_expect(str_ends_with(exe, "/test_compare"), "got %s", exe);
	free(exe);
}

/* Variant names become file names in the output directory. */
Test(compare, variant_names_are_restricted_to_a_safe_set)
{
	const char *good[] = { "eager", "staged-no-rng", "v1.2_b", "A", "x.", NULL };
	const char *bad[] = { "", ".", "..", ".hidden", "../../ESCAPED", "a/b", "a b", "a\nb",
			      "tab\t", "é", "a|b", "$x", NULL };
	for (const char **g = good; *g; g++)
		cr_expect(compare_variant_name_ok(*g), "'%s' is a fine name", *g);
	for (const char **b = bad; *b; b++)
		cr_expect_not(compare_variant_name_ok(*b), "'%s' must be refused", *b);
	char long_name[COMPARE_VARIANT_NAME_MAX + 2];
	memset(long_name, 'v', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	cr_expect_not(compare_variant_name_ok(long_name));
	long_name[COMPARE_VARIANT_NAME_MAX] = '\0';
	cr_expect(compare_variant_name_ok(long_name));
	cr_expect_not(compare_variant_name_ok(NULL));
}

/* compare_plan_run refuses a bad name before it makes any path of it. */
Test(compare, plan_run_refuses_a_variant_name_outside_the_safe_set, .init = make_tmp,
     .fini = drop_tmp)
{
	struct pipeline p;
	read_pipeline(&p);
	struct compare_setup s = { .p = &p, .out = "/o", .probe_dir = "/probe", .python = "py",
				   .cache = "/c", .seed = "7" };
	struct pipeline_variant v = p.variants[0];
	v.name = (char *)"../../ESCAPED";
	struct compare_run r = COMPARE_RUN_INIT;
	cr_expect_eq(compare_plan_run(&s, &v, 1, &r), -1);
	cr_expect_null(r.out_dir, "no path was made of it");
	compare_run_release(&r);
	pipeline_release(&p);
}

/* compare_error_line on TEXT: the line it picks, or NULL for none. */
static void expect_error_line(const char *text, const char *want)
{
	struct strbuf sb = STRBUF_INIT;
	bool got = compare_error_line(text, strlen(text), &sb);
	if (!want)
		cr_expect_not(got, "picked '%s'", sb.buf ? sb.buf : "");
	else
		cr_expect(got && !strcmp(sb.buf, want), "picked '%s', not '%s'",
			  sb.buf ? sb.buf : "(none)", want);
	strbuf_release(&sb);
}

Test(compare, error_line_is_the_exception_of_the_last_traceback)
{
	expect_error_line("Traceback (most recent call last):\n"
			  "  File \"run.py\", line 3, in <module>\n"
			  "    shape(x)\n"
			  "    ^^^^^^^^\n"
			  "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
			  "stagebench_probe: the adapter's hooks never fired (mode staged): ...\n",
			  "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB");
	/* chained: the last traceback's exception; a multi-line message: its first line */
	expect_error_line("Traceback (most recent call last):\n  File \"a\"\nKeyError: 'x'\n\n"
			  "During handling of the above exception, another exception occurred:\n\n"
			  "Traceback (most recent call last):\n  File \"b\"\n"
			  "ValueError: bad value\n  more detail\r\n",
			  "ValueError: bad value");
}

Test(compare, error_line_without_a_traceback)
{
	/* the probe's reason, not its closing "the run is a failure" line */
	expect_error_line("loading\nstagebench_probe: staged loading never engaged (mode staged): "
			  "no stage was ever entered\nstagebench_probe: the run is a failure (exit 3): "
			  "it would be measured as the wrong variant\n",
			  "stagebench_probe: staged loading never engaged (mode staged): no stage was "
			  "ever entered");
	expect_error_line("first\nSegmentation fault\n  \n", "Segmentation fault");
	expect_error_line("no newline at the end", "no newline at the end");
	expect_error_line("", NULL);
	expect_error_line("\n \n\t\n", NULL);
}

Test(compare, error_line_is_cut_at_the_limit_outside_a_character)
{
	struct strbuf in = STRBUF_INIT, out = STRBUF_INIT;
	strbuf_addstr(&in, "E");
	for (int i = 0; i < COMPARE_ERROR_LINE_MAX; i++)
		strbuf_addstr(&in, "\xc3\xa9"); /* é */
	cr_assert(compare_error_line(in.buf, in.len, &out));
	cr_expect_leq(out.len, COMPARE_ERROR_LINE_MAX);
	cr_expect_eq(out.len % 2, 1, "cut inside a character: %zu bytes", out.len);
	strbuf_release(&in);
	strbuf_release(&out);
}
