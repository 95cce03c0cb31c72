/* loadplan.c -- the plan as it ran (loadplan.h): each variant's models, the stage each was
 * loaded and released in, from the runs' load and release events and the probe's marks */
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "loadplan.h"
#include "strindex.h"
#include "table.h"

static const char NOTE_NOT_STAGED[] = "not staged: ";

/* One model's spans in the run being read. */
struct spans {
	struct loadplan_span *v;
	size_t n, alloc;
};

struct builder {
	struct loadplan *p;
	struct strindex ix;   /* model name -> index into p->models */
	size_t alloc;
};

static const char *plan_model_key(const void *ctx, size_t i)
{
	return ((const struct loadplan *)ctx)->models[i].name;
}

/* The index of model NAME (LEN bytes), added when new. */
static size_t plan_model_at(struct builder *b, const char *name, size_t len)
{
	char *copy = xstrndup(name, len);
	size_t i = strindex_find(&b->ix, plan_model_key, b->p, copy);
	if (i != STRINDEX_NONE) {
		free(copy);
		return i;
	}
	ALLOC_GROW(b->p->models, b->p->nmodels + 1, b->alloc);
	i = b->p->nmodels++;
	b->p->models[i] = (struct loadplan_model){ .name = copy };
	strindex_add(&b->ix, plan_model_key, b->p, i);
	return i;
}

/* A size from SOURCE: the first of the better source replaces the others' (loads, then
 * releases, then marks), one of the same widens the range. */
static void plan_model_size(struct loadplan_model *m, uint64_t bytes, enum loadplan_size source)
{
	if (!bytes || (m->size_from && source > m->size_from))
		return;
	if (!m->size_from || source < m->size_from) {
		m->size_from = source;
		m->min_bytes = m->max_bytes = bytes;
		return;
	}
	if (bytes < m->min_bytes)
		m->min_bytes = bytes;
	if (bytes > m->max_bytes)
		m->max_bytes = bytes;
}

/* A "not staged: NAME (X MB): WHY" mark: NAME's span, X (has_mb), WHY. */
static bool plan_parse_note(const char *note, const char **name, size_t *len, double *mb, bool *has_mb,
		       const char **why)
{
	if (!str_starts_with(note, NOTE_NOT_STAGED))
		return false;
	const char *s = note + sizeof(NOTE_NOT_STAGED) - 1, *colon = strstr(s, ": ");
	const char *paren = strstr(s, " (");
	*name = s;
	*has_mb = false;
	if (paren && (!colon || paren < colon)) {
		char *end;
		*len = (size_t)(paren - s);
		*mb = strtod(paren + 2, &end);
		*has_mb = end != paren + 2 && str_starts_with(end, " MB)") && *mb >= 0 && *mb < 1e12;
		const char *after = strstr(paren, "): ");
		*why = after ? after + 3 : NULL;
	} else {
		*len = colon ? (size_t)(colon - s) : strlen(s);
		*why = colon ? colon + 2 : NULL;
	}
	return *len > 0;
}

static const char *plan_run_last_stage(const struct analysis *a)
{
	return a->nstages ? a->stages[a->ran_to].name : NULL;
}

/* Every model the mode's main runs name, in order: loads and releases, then marks; their
 * sizes; whether the mode loads in one stage. */
static void plan_collect_models(struct builder *b, const struct table *t, size_t m)
{
	struct loadplan_mode *pm = &b->p->modes[m];
	const struct table_mode *tm = &t->modes[m];
	const char *stage = NULL;
	bool one = true;
	for (size_t k = 0; k < tm->nruns; k++) {
		const struct analysis *a = &t->runs[tm->runs[k]].a;
		for (size_t i = 0, j = 0; i < a->nloads || j < a->nreleased;) {
			bool load = j == a->nreleased || (i < a->nloads && a->loads[i].seq < a->released[j].seq);
			const char *name = load ? a->loads[i].name : a->released[j].name;
			size_t x = name ? plan_model_at(b, name, strlen(name)) : STRINDEX_NONE;
			if (load && name) {
				const char *in = a->loads[i].stage_in_force;
				one = one && in && (!stage || !strcmp(stage, in));
				stage = in;
				plan_model_size(&b->p->models[x], a->loads[i].nbytes, LOADPLAN_SIZE_LOADS);
			} else if (name) {
				plan_model_size(&b->p->models[x], a->released[j].nbytes, LOADPLAN_SIZE_RELEASES);
			}
			i += load;
			j += !load;
		}
		for (size_t n = 0; n < a->nstaging_notes; n++) {
			const char *name, *why;
			size_t len;
			double mb;
			bool has_mb;
			if (!plan_parse_note(a->staging_notes[n], &name, &len, &mb, &has_mb, &why))
				continue;
			size_t x = plan_model_at(b, name, len);
			if (has_mb)
				plan_model_size(&b->p->models[x], (uint64_t)(mb * 1048576.0 + 0.5), LOADPLAN_SIZE_MARK);
		}
	}
	pm->one_stage = one ? stage : NULL;
}

static bool plan_same_stage(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

static bool plan_same_spans(const struct loadplan_span *x, size_t nx, const struct loadplan_span *y,
		       size_t ny)
{
	if (nx != ny)
		return false;
	for (size_t i = 0; i < nx; i++)
		if (!plan_same_stage(x[i].loaded, y[i].loaded) || !plan_same_stage(x[i].released, y[i].released) ||
		    x[i].reload != y[i].reload || x[i].nbuilds != y[i].nbuilds)
			return false;
	return true;
}

/* Run ID's spans into the cell: one more run of an equal group, or a group of its own. */
static void plan_add_group(struct loadplan_cell *c, const struct spans *s, const char *id)
{
	struct loadplan_group *g = NULL;
	for (size_t i = 0; i < c->ngroups && !g; i++)
		if (plan_same_spans(c->groups[i].spans, c->groups[i].nspans, s->v, s->n))
			g = &c->groups[i];
	if (!g) {
		c->groups = xrealloc(c->groups, (c->ngroups + 1) * sizeof(*c->groups));
		g = &c->groups[c->ngroups++];
		*g = (struct loadplan_group){ .nspans = s->n };
		if (s->n) {
			g->spans = xcalloc(s->n, sizeof(*g->spans));
			memcpy(g->spans, s->v, s->n * sizeof(*g->spans));
		}
	}
	g->runs = xrealloc(g->runs, (g->nruns + 1) * sizeof(*g->runs));
	g->runs[g->nruns++] = id;
}

/* One run's events as spans per model (sp: nmodels, emptied first). */
static void plan_run_spans(struct builder *b, const struct analysis *a, struct spans *sp)
{
	for (size_t x = 0; x < b->p->nmodels; x++)
		sp[x].n = 0;
	for (size_t i = 0, j = 0; i < a->nloads || j < a->nreleased;) {
		bool load = j == a->nreleased || (i < a->nloads && a->loads[i].seq < a->released[j].seq);
		const char *name = load ? a->loads[i].name : a->released[j].name;
		size_t x = name ? strindex_find(&b->ix, plan_model_key, b->p, name) : STRINDEX_NONE;
		struct spans *s = x != STRINDEX_NONE ? &sp[x] : NULL;
		struct loadplan_span *open = s && s->n && !s->v[s->n - 1].released ? &s->v[s->n - 1] : NULL;
		if (s && load && open) {
			open->nbuilds++;
		} else if (s && (load || !open)) {
			ALLOC_GROW(s->v, s->n + 1, s->alloc);
			s->v[s->n++] = (struct loadplan_span){
				.loaded = load ? a->loads[i].stage_in_force : NULL,
				.released = load ? NULL : a->released[j].stage_in_force ? a->released[j].stage_in_force : "?",
				.reload = load && a->loads[i].reload, .nbuilds = load };
		} else if (s) {
			open->released = a->released[j].stage_in_force ? a->released[j].stage_in_force : "?";
		}
		i += load;
		j += !load;
	}
}

/* The cells of mode m: its runs' spans grouped, what held to the end, the marks' reasons. */
static void plan_mode_cells(struct builder *b, const struct table *t, size_t m)
{
	struct loadplan *p = b->p;
	const struct table_mode *tm = &t->modes[m];
	struct spans *sp = xcalloc(p->nmodels + 1, sizeof(*sp));
	bool *elsewhere = xcalloc(p->nmodels + 1, sizeof(*elsewhere));
	for (size_t k = 0; k < tm->nruns; k++) {
		const struct analysis *a = &t->runs[tm->runs[k]].a;
		if (p->modes[m].reported) {
			plan_run_spans(b, a, sp);
			for (size_t x = 0; x < p->nmodels; x++) {
				struct loadplan_cell *c = &p->cells[x * p->nmodes + m];
				plan_add_group(c, &sp[x], p->ids[tm->runs[k]]);
				for (size_t i = 0; i < sp[x].n; i++) {
					if (sp[x].v[i].released)
						continue;
					c->held = true;
					elsewhere[x] |= !plan_same_stage(sp[x].v[i].loaded, plan_run_last_stage(a));
				}
			}
		}
		for (size_t n = 0; n < a->nstaging_notes; n++) {
			const char *name, *why;
			size_t len;
			double mb;
			bool has_mb;
			if (!plan_parse_note(a->staging_notes[n], &name, &len, &mb, &has_mb, &why))
				continue;
			char *copy = xstrndup(name, len);
			size_t x = strindex_find(&b->ix, plan_model_key, p, copy);
			free(copy);
			if (x != STRINDEX_NONE && !p->cells[x * p->nmodes + m].why)
				p->cells[x * p->nmodes + m].why = why ? why : "";
		}
	}
	for (size_t x = 0; x < p->nmodels; x++) {
		struct loadplan_cell *c = &p->cells[x * p->nmodes + m];
		bool events = false;
		for (size_t g = 0; g < c->ngroups; g++)
			events |= c->groups[g].nspans > 0;
		c->note_only = c->why && !events;
		c->held_in_last = c->held && !elsewhere[x];
		p->modes[m].nmodels += events || c->why;
		free(sp[x].v);
	}
	free(sp);
	free(elsewhere);
}

/* "staged-2" of ".../staged-2.trace.jsonl.zst" (a name without those suffixes as it is). */
static char *plan_run_id(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path ? path : "run";
	size_t n = strlen(base);
	static const char *const suffixes[] = { ".zst", ".jsonl", ".trace" };
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t k = strlen(suffixes[i]);
		if (n > k && !memcmp(base + n - k, suffixes[i], k))
			n -= k;
	}
	return xstrndup(base, n);
}

void loadplan_build(struct loadplan *p, const struct table *t)
{
	struct builder b = { .p = p, .ix = STRINDEX_INIT };
	*p = (struct loadplan)LOADPLAN_INIT;
	p->nmodes = t->nmodes;
	p->modes = xcalloc(t->nmodes + 1, sizeof(*p->modes));
	p->nids = t->nruns;
	p->ids = xcalloc(t->nruns + 1, sizeof(*p->ids));
	for (size_t r = 0; r < t->nruns; r++)
		p->ids[r] = plan_run_id(t->runs[r].a.path);
	for (size_t m = 0; m < t->nmodes; m++) {
		struct loadplan_mode *pm = &p->modes[m];
		pm->name = t->modes[m].name;
		pm->nruns = t->modes[m].nruns;
		for (size_t k = 0; k < pm->nruns; k++) {
			const struct analysis *a = &t->runs[t->modes[m].runs[k]].a;
			pm->reported |= a->nloads || a->nreleased;
			pm->released_any |= a->nreleased > 0;
		}
	}
	/* rows in the order of the variants that release first (their plan goes stage by
	 * stage), then the others' */
	for (int pass = 0; pass < 2; pass++)
		for (size_t m = 0; m < t->nmodes; m++)
			if (p->modes[m].released_any == !pass)
				plan_collect_models(&b, t, m);
	p->cells = xcalloc(p->nmodels * p->nmodes + 1, sizeof(*p->cells));
	for (size_t m = 0; m < t->nmodes; m++)
		plan_mode_cells(&b, t, m);
	strindex_release(&b.ix);
}

const struct loadplan_cell *loadplan_cell(const struct loadplan *p, size_t model, size_t mode)
{
	return &p->cells[model * p->nmodes + mode];
}

void loadplan_release(struct loadplan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nmodels * p->nmodes; i++) {
		for (size_t g = 0; g < p->cells[i].ngroups; g++) {
			free(p->cells[i].groups[g].spans);
			free(p->cells[i].groups[g].runs);
		}
		free(p->cells[i].groups);
	}
	for (size_t i = 0; i < p->nmodels; i++)
		free(p->models[i].name);
	for (size_t r = 0; r < p->nids; r++)
		free(p->ids[r]);
	free(p->cells);
	free(p->models);
	free(p->modes);
	free(p->ids);
	*p = (struct loadplan)LOADPLAN_INIT;
}
