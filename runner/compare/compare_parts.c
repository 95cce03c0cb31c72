/* compare_parts.c -- a compare spread over machines: plan, task K alone, merge
 * (docs/slurm.md); the campaign's files in campaign.c */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../analyze/text.h"
#include "../../common/path.h"
#include "../../common/util.h"
#include "../../traces/runs.h"
#include "../../traces/trace.h"
#include "campaign.h"
#include "compare.h"
#include "compare_int.h"
#include "../record/record.h"

/* The id "V-N" of run k of the schedule. Caller frees. */
static char *run_id(const struct compare_opts *o, size_t k)
{
	size_t vi;
	int rep;
	compare_schedule(o->nvariants, k, &vi, &rep);
	return xasprintf("%s-%d", o->variants[vi]->name, rep);
}

int print_plan(const struct compare_opts *o, size_t total)
{
	for (size_t k = 0; k < total; k++) {
		size_t vi;
		int rep;
		compare_schedule(o->nvariants, k, &vi, &rep);
		printf("%zu\t%s-%d\t%s\t%d\n", k, o->variants[vi]->name, rep,
		       o->variants[vi]->name, rep);
	}
	return SB_EXIT_OK;
}

static void ids_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* The run ids of the plan, in order (ids_free frees). */
static char **plan_ids(const struct compare_opts *o, size_t total)
{
	char **ids = xcalloc(total + 1, sizeof(*ids));
	for (size_t k = 0; k < total; k++)
		ids[k] = run_id(o, k);
	return ids;
}

/* Start (COMPARE_ALL, --plan with --out) or join (--task, --merge) the
 * campaign of OUT. Returns 0 or the exit status. */
int parts_campaign(struct session *s)
{
	const struct compare_opts *o = s->o;
	if (o->part == COMPARE_PLAN && !o->setup.out)
		return 0;
	char **ids = plan_ids(o, s->total);
	int rc = o->part == COMPARE_ALL || o->part == COMPARE_PLAN
			 ? campaign_start(o->setup.out, ids, s->total, &s->campaign)
			 : campaign_load(o->setup.out, ids, s->total, &s->campaign);
	ids_free(ids);
	return rc;
}

/* Task K ended before its run started (a signal in prepare or a warm-up):
 * its runs.d entry says so, for the merge. */
static void note_unstarted(struct session *s)
{
	const struct compare_opts *o = s->o;
	size_t vi;
	int rep, sig = s->interrupted - 128;
	compare_schedule(o->nvariants, o->task, &vi, &rep);
	struct run_list one = RUN_LIST_INIT;
	struct run_entry e = {
		.mode = o->variants[vi]->name, .run = rep, .has_exit = true,
		.exit = s->interrupted, .stopped_by = STOPPED_SIGNAL, .signal = sig,
		.campaign = s->campaign,
	};
	e.trace = xasprintf("%s-%d.trace.jsonl.zst", e.mode, rep);
	e.why = xasprintf("stopped by signal %d (%s) before its run started (in prepare or a "
			  "warm-up): its engine cancelled or preempted the task, or its time limit "
			  "ran out", sig, strsignal(sig));
	one.items = &e;
	one.n = 1;
	if (runs_write(s->runs_path, &one) < 0)
		s->rc = SB_EXIT_FAILURE;
	free(e.trace);
	free(e.why);
}

/* Task K's prepare, warm-ups and run, its signals ours from the start. */
static int task_steps(struct session *s)
{
	struct record_signals sigs;
	memset(&sigs, 0, sizeof(sigs));
	if (record_signals_install(&sigs) < 0)
		return -1;
	s->ro.signals = &sigs;
	int rc = 0;
	if (!take_signal(s, &sigs) && run_prepare(s) < 0)
		rc = -1;
	if (!rc && !take_signal(s, &sigs) && run_warmups(s) < 0)
		rc = -1;
	if (!rc && !take_signal(s, &sigs) && run_k(s, s->o->task) < 0)
		rc = -1;
	take_signal(s, &sigs);
	if (s->interrupted && !s->ndone)
		note_unstarted(s);
	int late = record_signals_restore(&sigs);
	if (late && !s->interrupted)
		s->interrupted = 128 + late;
	s->ro.signals = NULL;
	return rc;
}

/* Run task K alone; its runs.json entry goes to OUT/runs.d/V-N.json. */
int run_task(struct session *s)
{
	const struct compare_opts *o = s->o;
	if (o->task >= s->total) {
		error("task %zu: the plan has %zu runs (0 to %zu)", o->task, s->total,
		      s->total - 1);
		return SB_EXIT_USAGE;
	}
	int rc = parts_campaign(s);
	if (rc)
		return rc;
	char *dir = xasprintf("%s/runs.d", o->setup.out);
	char *id = run_id(o, o->task);
	int mk = mkdir_p(dir);
	free(s->runs_path);
	s->runs_path = xasprintf("%s/%s.json", dir, id);
	free(dir);
	if (mk || campaign_mark_running(o->setup.out, id, s->campaign) < 0) {
		free(id);
		return SB_EXIT_FAILURE;
	}
	rc = task_steps(s);
	campaign_unmark_running(o->setup.out, id);
	free(id);
	if (s->interrupted)
		return s->interrupted;
	if (rc < 0)
		return SB_EXIT_FAILURE;
	if (s->rc != SB_EXIT_OK)
		return s->rc;
	return s->failed ? SB_EXIT_FINDING : SB_EXIT_OK;
}

/* A warning that quotes a runs.d entry's `why` (file contents): control
 * characters shown as "\n", "\xNN", so that no line break in it starts a line
 * of its own (a workflow command, in a CI log). */
static void warn_why(const char *id, const char *why)
{
	struct strbuf sb = STRBUF_INIT;
	text_term(&sb, why);
	warning("%s: %s", id, sb.buf);
	strbuf_release(&sb);
}

/* What gather_one found of run k. */
struct found_run {
	char *id, *trace, *trace_path, *entry_path;
	const char *mode;
	int rep;
	struct run_list one;  /* its runs.d entry, when usable (one.n == 1) */
};

/* Run k's runs.d entry when there is one we can use; else names it. */
static void read_entry(struct session *s, struct found_run *f)
{
	int r = runs_read(f->entry_path, &f->one);
	struct strbuf why = STRBUF_INIT;
	if (r == 1)
		return;
	if (r < 0)
		strbuf_addstr(&why, "malformed (see above)");
	else if (f->one.n != 1)
		strbuf_addf(&why, "it holds %zu entries, not one", f->one.n);
	else
		campaign_entry_ok(&f->one.items[0], f->mode, f->rep, f->trace, s->campaign, &why);
	if (why.len) {
		warning("%s: not used: %s", f->entry_path, why.buf);
		s->lost++;
		runs_release(&f->one);
	}
	strbuf_release(&why);
}

/* Run k has a trace but no usable entry: still recording, lost, or a trace
 * left by another campaign (then missing). Returns the entry, or NULL. */
static struct run_entry *entryless(struct session *s, struct found_run *f, struct run_entry *e)
{
	struct strbuf why = STRBUF_INIT;
	char *other = NULL;
	memset(e, 0, sizeof(*e));
	if (campaign_still_recording(s->o->setup.out, f->id, s->campaign, f->trace_path, &why)) {
		e->stopped_by = STOPPED_RUNNING;
	} else if ((other = campaign_of_trace(f->trace_path)) && strcmp(other, s->campaign)) {
		warning("%s: missing: its trace '%s' is of campaign %s, not of this one (%s)",
			f->id, f->trace, other, s->campaign);
		strbuf_addf(&s->missing, "| %s | missing: its trace is of another campaign | | | |\n",
			    f->id);
		s->lost++;
		free(other);
		strbuf_release(&why);
		return NULL;
	} else {
		e->stopped_by = STOPPED_LOST;
		strbuf_addstr(&why, "its task left no result (killed by the engine: time limit, "
			      "node failure or preemption)");
	}
	free(other);
	e->mode = xstrdup(f->mode);
	e->run = f->rep;
	e->trace = xstrdup(f->trace);
	e->campaign = xstrdup(s->campaign);
	e->why = strbuf_detach(&why);
	warn_why(f->id, e->why);
	s->lost++;
	return e;
}

/* Take run k's entry E (moved) with its trace into the report and runs.json. */
static void take_run(struct session *s, struct found_run *f, const struct run_entry *e)
{
	bool failed = false;
	if (e->stopped_by != STOPPED_GUARD && e->stopped_by != STOPPED_LOST &&
	    e->stopped_by != STOPPED_RUNNING && ((e->has_exit && e->exit) || e->signal)) {
		warn_why(f->id, e->why ? e->why : "its command failed");
		s->failed++;
		failed = !e->stopped_by;
	}
	ALLOC_GROW(s->planned.items, s->planned.n + 1, s->planned.alloc);
	runs_entry_copy(&s->planned.items[s->planned.n++], e);
	ALLOC_GROW(s->runs.items, s->runs.n + 1, s->runs.alloc);
	s->runs.items[s->runs.n++] = *e;
	struct done_run *d = &s->done[s->ndone++];
	d->id = xstrdup(f->id);
	d->rep = f->rep;
	d->failed = failed;
	d->err_path = xasprintf("%s/%s.err", s->o->setup.out, f->id);
	d->mode = xstrdup(f->mode);
	d->trace_path = f->trace_path;
	f->trace_path = NULL;
}

/* Run k's entry from runs.d; a "lost" or "running" one when only its trace
 * is there; an entry that is unusable is named and left out. */
static void gather_one(struct session *s, size_t k)
{
	const struct compare_opts *o = s->o;
	struct found_run f = { .one = RUN_LIST_INIT };
	size_t vi;
	compare_schedule(o->nvariants, k, &vi, &f.rep);
	f.mode = o->variants[vi]->name;
	f.id = run_id(o, k);
	f.entry_path = xasprintf("%s/runs.d/%s.json", o->setup.out, f.id);
	f.trace = xasprintf("%s.trace.jsonl.zst", f.id);
	f.trace_path = xasprintf("%s/%s", o->setup.out, f.trace);
	read_entry(s, &f);
	struct run_entry lost;
	const struct run_entry *e = f.one.n == 1 ? &f.one.items[0] : NULL;
	if (path_exists(f.trace_path)) {
		if (!e)
			e = entryless(s, &f, &lost);
		if (e)
			take_run(s, &f, e);
		if (e == f.one.items)
			f.one.n = 0; /* moved */
	} else if (e && e->stopped_by == STOPPED_SIGNAL) {
		/* stopped before its run started: no trace, its entry says why */
		warn_why(f.id, e->why ? e->why : "stopped by a signal before it started");
		strbuf_addf(&s->missing, "| %s | stopped by signal %d before its run started | | | |\n",
			    f.id, e->signal);
		ALLOC_GROW(s->planned.items, s->planned.n + 1, s->planned.alloc);
		runs_entry_copy(&s->planned.items[s->planned.n++], e);
		s->lost++;
	} else {
		warning("%s: missing: no trace '%s' (its task never ran, or wrote elsewhere)", f.id,
			f.trace);
		strbuf_addf(&s->missing, "| %s | missing: no trace (its task never ran) | | | |\n",
			    f.id);
		s->lost++;
	}
	runs_release(&f.one);
	free(f.id);
	free(f.entry_path);
	free(f.trace);
	free(f.trace_path);
}

/* Every file of OUT/runs.d that is no entry of the plan, named. */
static void name_strays(struct session *s)
{
	char *dir = xasprintf("%s/runs.d", s->o->setup.out);
	DIR *d = opendir(dir);
	for (struct dirent *de; d && (de = readdir(d));) {
		if (de->d_name[0] == '.' || !str_ends_with(de->d_name, ".json"))
			continue;
		bool planned = false;
		for (size_t k = 0; k < s->total && !planned; k++) {
			char *id = run_id(s->o, k), *name = xasprintf("%s.json", id);
			planned = !strcmp(name, de->d_name);
			free(name);
			free(id);
		}
		if (!planned) {
			warning("%s/%s: not used: no run of this campaign's plan has that name", dir,
				de->d_name);
			s->lost++;
		}
	}
	if (d)
		closedir(d);
	free(dir);
}

/* Gather every planned run's result into runs.json. Returns 0 or -1. */
int parts_gather(struct session *s)
{
	for (size_t k = 0; k < s->total; k++)
		gather_one(s, k);
	name_strays(s);
	if (runs_write(s->runs_path, &s->planned) < 0)
		return -1;
	if (!s->ndone)
		return error("no run of '%s' left a trace", s->o->setup.out);
	return 0;
}
