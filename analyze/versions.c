/* versions.c -- library versions that differ between the groups of a comparison */
#include "versions.h"

#include <stdlib.h>
#include <string.h>

#include "../common/jsonw.h"
#include "text.h"
#include "strindex.h"

static const char *run_version(const struct analysis *a, const char *name)
{
	for (size_t i = 0; i < a->nversions; i++)
		if (!strcmp(a->versions[i].name, name))
			return a->versions[i].value;
	return NULL;
}

/* Every (group, value) of NAME, once each; returns the number of distinct values. */
static size_t versions_gather(struct version_diff *vd, const struct versions_group *groups,
		     size_t ngroups)
{
	size_t ndistinct = 0;
	for (size_t g = 0; g < ngroups; g++)
		for (size_t r = 0; r < groups[g].nruns; r++) {
			const char *v = run_version(groups[g].runs[r], vd->name);
			bool seen = false, seen_here = false;
			if (!v)
				continue;
			for (size_t k = 0; k < vd->nvalues; k++) {
				seen |= !strcmp(vd->values[k].value, v);
				seen_here |= vd->values[k].group == g && !strcmp(vd->values[k].value, v);
			}
			ndistinct += !seen;
			if (seen_here)
				continue;
			vd->values = xrealloc(vd->values, (vd->nvalues + 1) * sizeof(*vd->values));
			vd->values[vd->nvalues].group = g;
			vd->values[vd->nvalues++].value = v;
		}
	return ndistinct;
}

void versions_compare(struct versions_diff *d, const struct versions_group *groups,
		      size_t ngroups)
{
	const char **names = NULL;
	size_t nnames = 0;
	struct strindex ix = STRINDEX_INIT;
	d->ngroups = ngroups;
	d->labels = xcalloc(ngroups + 1, sizeof(*d->labels));
	for (size_t g = 0; g < ngroups; g++) {
		d->labels[g] = groups[g].label;
		for (size_t r = 0; r < groups[g].nruns; r++) {
			const struct analysis *a = groups[g].runs[r];
			for (size_t i = 0; i < a->nversions; i++) {
				const char *name = a->versions[i].name;
				if (strindex_find(&ix, strindex_names_key, names, name) != STRINDEX_NONE)
					continue;
				names = xrealloc(names, (nnames + 1) * sizeof(*names));
				names[nnames] = name;
				strindex_add(&ix, strindex_names_key, names, nnames++);
			}
		}
	}
	for (size_t i = 0; i < nnames; i++) {
		struct version_diff vd = { names[i], NULL, 0 };
		if (versions_gather(&vd, groups, ngroups) < 2) {
			free(vd.values);
			continue;
		}
		d->diffs = xrealloc(d->diffs, (d->ndiffs + 1) * sizeof(*d->diffs));
		d->diffs[d->ndiffs++] = vd;
	}
	strindex_release(&ix);
	free(names);
}

static void add_text(struct strbuf *out, const char *s, bool md)
{
	if (md)
		text_md(out, s);
	else
		text_term(out, s);
}

void versions_diff_text(const struct versions_diff *d, struct strbuf *out, bool md)
{
	for (size_t i = 0; i < d->ndiffs; i++) {
		const struct version_diff *vd = &d->diffs[i];
		if (i)
			strbuf_addstr(out, "; ");
		add_text(out, vd->name, md);
		for (size_t k = 0; k < vd->nvalues; k++) {
			const struct version_value *v = &vd->values[k];
			bool first = !k || vd->values[k - 1].group != v->group;
			bool last = k + 1 == vd->nvalues || vd->values[k + 1].group != v->group;
			strbuf_addstr(out, first ? (k ? " / " : " ") : " and ");
			add_text(out, v->value, md);
			if (last) {
				strbuf_addstr(out, " (");
				add_text(out, d->labels[v->group], md);
				strbuf_addch(out, ')');
			}
		}
	}
}

void versions_diff_json(const struct versions_diff *d, struct jsonw *w)
{
	if (!d->ndiffs)
		return;
	jw_key(w, "versions_differ");
	jw_array_begin(w);
	for (size_t i = 0; i < d->ndiffs; i++) {
		const struct version_diff *vd = &d->diffs[i];
		jw_object_begin(w);
		jw_key(w, "name");
		jw_string(w, vd->name);
		jw_key(w, "values");
		jw_object_begin(w);
		for (size_t k = 0; k < vd->nvalues; k++) {
			const struct version_value *v = &vd->values[k];
			if (!k || vd->values[k - 1].group != v->group) {
				jw_key(w, d->labels[v->group]);
				jw_array_begin(w);
			}
			jw_string(w, v->value);
			if (k + 1 == vd->nvalues || vd->values[k + 1].group != v->group)
				jw_array_end(w);
		}
		jw_object_end(w);
		jw_object_end(w);
	}
	jw_array_end(w);
}

void versions_run_json(const struct analysis *a, struct jsonw *w)
{
	if (!a->nversions)
		return;
	jw_key(w, "versions");
	jw_object_begin(w);
	for (size_t i = 0; i < a->nversions; i++) {
		jw_key(w, a->versions[i].name);
		jw_string(w, a->versions[i].value);
	}
	jw_object_end(w);
}

void versions_diff_release(struct versions_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->ndiffs; i++)
		free(d->diffs[i].values);
	free(d->diffs);
	free(d->labels);
	memset(d, 0, sizeof(*d));
}
