/* report_dir.c -- `stagebench report`: the report of a compare (report.html, table.md,
 * latents.md, the charts) written again from its output directory, or from a list of
 * traces, through the same code as compare's own (report.c) */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyze/text.h"
#include "../../common/path.h"
#include "../../common/util.h"
#include "compare.h"
#include "compare_int.h"

static const char *const trace_suffixes[] = { ".trace.jsonl.zst", ".trace.jsonl" };

/* The run id of a trace file name: "eager-1" of ".../eager-1.trace.jsonl.zst". */
static char *id_of(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	for (size_t i = 0; i < 2; i++) {
		size_t k = strlen(trace_suffixes[i]);
		if (n > k && !strcmp(base + n - k, trace_suffixes[i]))
			return xstrndup(base, n - k);
	}
	return xstrdup(base);
}

/* A run of the report: its trace at PATH (taken), its entry E (moved; NULL: none). */
static void add_run(struct session *s, char *path, struct run_entry *e)
{
	struct done_run *d;
	ALLOC_GROW(s->done, s->ndone + 1, s->total);
	d = &s->done[s->ndone++];
	memset(d, 0, sizeof(*d));
	d->id = id_of(path);
	d->trace_path = path;
	d->entryless = !e;
	const char *dash = strrchr(d->id, '-');
	d->mode = e && e->mode ? xstrdup(e->mode) : dash ? xstrndup(d->id, (size_t)(dash - d->id))
						       : xstrdup(d->id);
	d->rep = e && e->run > 0 ? e->run : dash ? atoi(dash + 1) : 1;
	const char *slash = strrchr(path, '/');
	if (slash)
		d->err_path = xasprintf("%.*s/%s.err", (int)(slash - path), path, d->id);
	else
		d->err_path = xasprintf("%s.err", d->id);
	struct run_entry none;
	memset(&none, 0, sizeof(none));
	if (e) {
		d->failed = e->stopped_by == STOPPED_NONE && ((e->has_exit && e->exit) || e->signal);
		s->failed += d->failed;
	}
	ALLOC_GROW(s->runs.items, s->runs.n + 1, s->runs.alloc);
	s->runs.items[s->runs.n++] = e ? *e : none;
	if (e)
		memset(e, 0, sizeof(*e));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* DIR's traces, in name order, when runs.json cannot say which they are. */
static void traces_of_dir(struct session *s, const char *dir)
{
	DIR *dp = opendir(dir);
	char **names = NULL;
	size_t n = 0, alloc = 0;
	for (struct dirent *de; dp && (de = readdir(dp));) {
		if (de->d_name[0] == '.' || (!str_ends_with(de->d_name, trace_suffixes[0]) &&
					     !str_ends_with(de->d_name, trace_suffixes[1])))
			continue;
		ALLOC_GROW(names, n + 1, alloc);
		names[n++] = xstrdup(de->d_name);
	}
	if (dp)
		closedir(dp);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		add_run(s, xasprintf("%s/%s", dir, names[i]), NULL);
		free(names[i]);
	}
	free(names);
}

/* The runs of runs.json in DIR, or DIR's traces when it is missing or malformed. */
static void runs_of_dir(struct session *s, const char *dir)
{
	char *rj = xasprintf("%s/runs.json", dir);
	struct run_list list = RUN_LIST_INIT;
	int r = runs_read(rj, &list);
	if (r) {
		strbuf_addf(&s->problems, "- %s %s: the runs are the traces found in the directory, "
			    "how each ended as its trace says.\n", rj,
			    r > 0 ? "is missing" : "could not be read (see the error printed)");
		runs_release(&list);
		traces_of_dir(s, dir);
		free(rj);
		return;
	}
	for (size_t i = 0; i < list.n; i++) {
		struct run_entry *e = &list.items[i];
		char *path = e->trace ? xasprintf("%s/%s", dir, e->trace)
				      : xasprintf("%s/%s-%d.trace.jsonl.zst", dir, e->mode, e->run);
		if (!path_exists(path)) {
			struct strbuf id = STRBUF_INIT;
			text_md(&id, e->trace ? e->trace : path);
			strbuf_addf(&s->missing, "| %s | missing: no trace | | | |\n", id.buf);
			strbuf_addf(&s->problems, "- %s: the trace of %s run %d is missing.\n", path,
				    e->mode ? e->mode : "?", e->run);
			strbuf_release(&id);
			free(path);
			continue;
		}
		add_run(s, path, e);
	}
	runs_release(&list);
	free(rj);
}

int report_execute(const struct report_opts *o)
{
	struct compare_opts co;
	struct session s;
	memset(&co, 0, sizeof(co));
	memset(&s, 0, sizeof(s));
	co.setup.out = o->out;
	s.o = &co;
	s.page_only = true;
	s.runs = (struct run_list)RUN_LIST_INIT;
	if (o->dir)
		runs_of_dir(&s, o->dir);
	for (size_t i = 0; i < o->ntraces; i++)
		add_run(&s, xstrdup(o->traces[i]), NULL);
	int rc = SB_EXIT_OK;
	size_t findings = 0;
	if (!s.ndone)
		strbuf_addf(&s.problems, "- %s holds no trace: there is nothing to report.\n",
			    o->dir ? o->dir : "the list");
	if (compare_report(&s, o->charts, &findings) < 0)
		rc = SB_EXIT_FAILURE;
	else if (findings || s.failed)
		rc = SB_EXIT_FINDING;
	for (size_t i = 0; i < s.ndone; i++) {
		struct done_run *d = &s.done[i];
		free(d->id);
		free(d->mode);
		free(d->trace_path);
		free(d->err_path);
		trace_release(&d->tr);
		analysis_release(&d->a);
	}
	free(s.done);
	runs_release(&s.runs);
	strbuf_release(&s.missing);
	strbuf_release(&s.problems);
	return rc;
}
