/* latents_md.c -- a latent set as markdown: one table per latent, then the first differences */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latents.h"
#include "text.h"

static void add_number(struct strbuf *sb, double v)
{
	if (isnan(v))
		strbuf_addstr(sb, "nan");
	else if (isinf(v))
		strbuf_addstr(sb, "inf");
	else
		strbuf_addf(sb, "%.3g", v);
}

static void cell_text(const struct latent_set *s, const struct latent *l,
		      const struct latent_pair *p, struct strbuf *sb)
{
	const struct latent_copy *ca = l->copies[p->a], *cb = l->copies[p->b];
	switch (p->diff.result) {
	case LR_DIFFERS:
		add_number(sb, p->diff.max_abs_diff);
		strbuf_addstr(sb, p->noise == NOISE_WITHIN ? " (within noise)"
				  : p->noise == NOISE_BEYOND ? " (beyond noise)" : " (no spread)");
		break;
	case LR_SHAPE_DIFFERS:
		strbuf_addstr(sb, "shape differs: ");
		latent_shape_text(sb, ca->npy_ndim, ca->npy_shape);
		strbuf_addstr(sb, " vs ");
		latent_shape_text(sb, cb->npy_ndim, cb->npy_shape);
		break;
	case LR_DTYPE_DIFFERS:
		strbuf_addf(sb, "dtype differs: %s vs %s", npy_dtype_name(ca->npy_dtype),
			    npy_dtype_name(cb->npy_dtype));
		break;
	case LR_MISSING:
		strbuf_addf(sb, "missing in %s", s->runs[ca ? p->b : p->a].id);
		break;
	case LR_CORRUPT:
		if (ca->state == COPY_CORRUPT && cb->state == COPY_CORRUPT)
			strbuf_addstr(sb, "corrupt copies");
		else
			strbuf_addf(sb, "corrupt copy in %s",
				    s->runs[ca->state == COPY_CORRUPT ? p->a : p->b].id);
		break;
	default:
		strbuf_addstr(sb, latent_result_name(p->diff.result));
	}
}

static const struct latent_copy *first_copy(const struct latent_set *s, const struct latent *l)
{
	for (size_t r = 0; r < s->nruns; r++)
		if (l->copies[r])
			return l->copies[r];
	return NULL;
}

static void pad(struct strbuf *sb, const char *text, size_t width)
{
	strbuf_addstr(sb, text);
	for (size_t n = strlen(text); n < width; n++)
		strbuf_addch(sb, ' ');
}

static void md_table(const struct latent_set *s, const struct latent *l, struct strbuf *out)
{
	size_t n = s->nruns;
	/* cells[row][col], row 0..n-2 (run row), col 1..n-1 (run col) */
	char **cells = xcalloc(n * n, sizeof(*cells));
	size_t *width = xcalloc(n, sizeof(*width));
	width[0] = 0;
	for (size_t r = 0; r + 1 < n; r++)
		if (strlen(s->runs[r].id) > width[0])
			width[0] = strlen(s->runs[r].id);
	for (size_t c = 1; c < n; c++)
		width[c] = strlen(s->runs[c].id);
	for (size_t k = 0; k < l->npairs; k++) {
		const struct latent_pair *p = &l->pairs[k];
		struct strbuf sb = STRBUF_INIT;
		cell_text(s, l, p, &sb);
		cells[p->a * n + p->b] = strbuf_detach(&sb);
		if (strlen(cells[p->a * n + p->b]) > width[p->b])
			width[p->b] = strlen(cells[p->a * n + p->b]);
	}
	for (size_t c = 0; c < n; c++)
		if (width[c] < 3)
			width[c] = 3;
	strbuf_addstr(out, "| ");
	pad(out, "", width[0]);
	for (size_t c = 1; c < n; c++) {
		strbuf_addstr(out, " | ");
		pad(out, s->runs[c].id, width[c]);
	}
	strbuf_addstr(out, " |\n|");
	for (size_t c = 0; c < n; c++) {
		for (size_t i = 0; i < width[c] + 2; i++)
			strbuf_addch(out, '-');
		strbuf_addch(out, '|');
	}
	strbuf_addch(out, '\n');
	for (size_t r = 0; r + 1 < n; r++) {
		strbuf_addstr(out, "| ");
		pad(out, s->runs[r].id, width[0]);
		for (size_t c = 1; c < n; c++) {
			strbuf_addstr(out, " | ");
			pad(out, c > r ? cells[r * n + c] : "", width[c]);
		}
		strbuf_addstr(out, " |\n");
	}
	for (size_t i = 0; i < n * n; i++)
		free(cells[i]);
	free(cells);
	free(width);
}

struct tally {
	size_t pairs, identical, within, beyond, unknown, shape, dtype, missing, corrupt, unmeasured;
};

static void latents_md_tally(const struct latent_set *s, struct tally *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < s->nlatents; i++) {
		for (size_t k = 0; k < s->latents[i].npairs; k++) {
			const struct latent_pair *p = &s->latents[i].pairs[k];
			if (p->diff.result == LR_BOTH_ABSENT)
				continue;
			t->pairs++;
			switch (p->diff.result) {
			case LR_IDENTICAL: t->identical++; break;
			case LR_DIFFERS:
				if (p->noise == NOISE_WITHIN)
					t->within++;
				else if (p->noise == NOISE_BEYOND)
					t->beyond++;
				else
					t->unknown++;
				break;
			case LR_SHAPE_DIFFERS: t->shape++; break;
			case LR_DTYPE_DIFFERS: t->dtype++; break;
			case LR_MISSING: t->missing++; break;
			case LR_CORRUPT: t->corrupt++; break;
			case LR_UNMEASURED: t->unmeasured++; break;
			case LR_BOTH_ABSENT: break;
			}
		}
	}
}

/* Every run has this latent, and every pair of copies is identical. */
static bool all_identical(const struct latent_set *s, const struct latent *l)
{
	if (s->nruns < 2 || !l->npairs)
		return false;
	for (size_t r = 0; r < s->nruns; r++)
		if (!l->copies[r])
			return false;
	for (size_t k = 0; k < l->npairs; k++)
		if (l->pairs[k].diff.result != LR_IDENTICAL)
			return false;
	const struct latent_copy *c = first_copy(s, l);
	return c && c->state != COPY_NO_FILE && c->actual_sha256[0];
}

/* The first difference of run r is a latent made before run r built any model:
 * no model explains it, the random draws do. */
static void md_rng_hint(const struct latent_set *s, const struct latent *l, size_t r,
			struct strbuf *out)
{
	const struct latent_copy *c = l->copies[r];
	if (!c || !c->before_models)
		return;
	strbuf_addf(out, "  It differs before %s built any model: the pipeline draws random "
		    "numbers after building its models, and the random init that %s runs "
		    "first moves those draws while staged loading skips it. Keep %s's draws "
		    "with RNG replay (STAGEBENCH_RNG_REPLAY=1 in the variant's env, or "
		    "replay_rng=True in the adapter's probe.defer), or seed the pipeline after "
		    "it builds its models.\n", s->runs[r].id, s->baseline, s->baseline);
}

/* For each run, the first latent (in stage order) where it differs from the
 * baseline's first run beyond the noise: where a divergence starts. */
static void md_first_differences(const struct latent_set *s, struct strbuf *out)
{
	size_t base = s->nruns;
	for (size_t r = 0; r < s->nruns; r++)
		if (s->runs[r].mode && !strcmp(s->runs[r].mode, s->baseline)) {
			base = r;
			break;
		}
	if (base == s->nruns)
		return;
	bool any = false;
	for (size_t r = 0; r < s->nruns; r++) {
		if (r == base)
			continue;
		size_t a = r < base ? r : base, b = r < base ? base : r;
		for (size_t i = 0; i < s->nlatents; i++) {
			const struct latent *l = &s->latents[i];
			const struct latent_pair *p = NULL;
			for (size_t k = 0; k < l->npairs; k++)
				if (l->pairs[k].a == a && l->pairs[k].b == b)
					p = &l->pairs[k];
			if (!p || !latent_pair_is_finding(p))
				continue;
			if (!any)
				strbuf_addf(out, "\nWhere runs first differ from %s:\n\n", s->runs[base].id);
			any = true;
			char *label = latent_label(l);
			strbuf_addf(out, "- %s: %s", s->runs[r].id, label);
			if (l->stage)
				strbuf_addf(out, " (stage %s)", l->stage);
			strbuf_addf(out, ", %s\n", latent_result_name(p->diff.result));
			if (p->diff.result == LR_DIFFERS)
				md_rng_hint(s, l, r, out);
			free(label);
			break;
		}
	}
}

/* A latent that is not identical everywhere: its heading, what it is, the
 * baseline's spread, the pairwise table and any corrupt copy. */
static void md_latent_section(const struct latent_set *s, const struct latent *l,
			      struct strbuf *out)
{
	char *label = latent_label(l);
	strbuf_addstr(out, "\n## "); /* a heading line: no raw line break from a name */
	text_md(out, label);
	free(label);
	if (l->stage) {
		strbuf_addstr(out, " (stage ");
		text_md(out, l->stage);
		strbuf_addch(out, ')');
	}
	strbuf_addstr(out, "\n\n");
	const struct latent_copy *c = first_copy(s, l);
	if (c && c->state != COPY_NO_FILE && c->actual_sha256[0]) {
		strbuf_addf(out, "%s ", npy_dtype_name(c->npy_dtype));
		latent_shape_text(out, c->npy_ndim, c->npy_shape);
		strbuf_addstr(out, "; ");
	}
	if (l->spread_pairs) {
		strbuf_addf(out, "spread between %s runs: ", s->baseline);
		if (l->spread == 0)
			strbuf_addstr(out, "0 (identical)");
		else
			add_number(out, l->spread);
	} else if (l->baseline_copies < 2) {
		strbuf_addf(out, "no spread known: %s %s run%s this latent",
			    l->baseline_copies ? "only one" : "no", s->baseline,
			    l->baseline_copies ? " has" : "s have");
	} else {
		strbuf_addf(out, "no spread known: the %s copies cannot be compared",
			    s->baseline);
	}
	strbuf_addstr(out, "\n\n");
	md_table(s, l, out);
	for (size_t r = 0; r < s->nruns; r++) {
		const struct latent_copy *cc = l->copies[r];
		if (cc && cc->state == COPY_CORRUPT)
			strbuf_addf(out, "\ncorrupt: %s `%s`: %s\n", s->runs[r].id, cc->file,
				    cc->problem);
	}
}

static size_t failed_runs(const struct latent_set *s)
{
	size_t n = 0;
	for (size_t r = 0; r < s->nruns; r++)
		n += s->runs[r].failed;
	return n;
}

static bool entered(const struct latent_run *r, const char *stage)
{
	for (size_t k = 0; k < r->nstages; k++)
		if (stage && !strcmp(r->stages[k], stage))
			return true;
	return false;
}

/* The result line's second half when runs failed: which, where, and the
 * latents they therefore lack ("; but 2 of 4 runs failed (staged-1: exit 1 in
 * classify, ...): missing from them: mask (segment, never reached), ...").
 * Latents that no run recorded cannot be named: said so when every run failed. */
static void md_failed(const struct latent_set *s, bool but, struct strbuf *out)
{
	size_t nf = failed_runs(s);
	if (!nf)
		return;
	strbuf_addf(out, "; %s%zu of %zu run%s failed (", but ? "but " : "", nf, s->nruns, s->nruns == 1 ? "" : "s");
	bool first = true;
	for (size_t r = 0; r < s->nruns; r++) {
		const struct latent_run *run = &s->runs[r];
		if (!run->failed)
			continue;
		strbuf_addf(out, "%s%s: %s", first ? "" : "; ", run->id, run->note);
		if (run->ended_in)
			strbuf_addf(out, " in %s", run->ended_in);
		first = false;
	}
	strbuf_addstr(out, ")");
	struct strbuf miss = STRBUF_INIT;
	for (size_t i = 0; i < s->nlatents; i++) {
		const struct latent *l = &s->latents[i];
		size_t lacking = 0, unreached = 0;
		for (size_t r = 0; r < s->nruns; r++)
			if (s->runs[r].failed && !l->copies[r]) {
				lacking++;
				unreached += !entered(&s->runs[r], l->stage);
			}
		if (!lacking)
			continue;
		char *label = latent_label(l);
		strbuf_addf(&miss, "%s%s (%zu run%s", miss.len ? ", " : "", label, lacking,
			    lacking == 1 ? "" : "s");
		if (unreached)
			strbuf_addf(&miss, ", %s never reached", l->stage ? l->stage : "its stage");
		strbuf_addch(&miss, ')');
		free(label);
	}
	if (miss.len)
		strbuf_addf(out, ": missing from them: %s", miss.buf);
	if (nf == s->nruns)
		strbuf_addstr(out, "; every run failed, so latents of the stages after are "
				   "unknown, not identical");
	strbuf_release(&miss);
}

/* The closing count of pairs by result and the findings. */
static void md_summary(const struct latent_set *s, struct strbuf *out)
{
	struct tally t;
	latents_md_tally(s, &t);
	size_t findings = latent_findings(s);
	strbuf_addf(out, "\n%zu pair%s in %zu latent%s: %zu identical, %zu within noise",
		    t.pairs, t.pairs == 1 ? "" : "s", s->nlatents, s->nlatents == 1 ? "" : "s",
		    t.identical, t.within);
	if (t.beyond)
		strbuf_addf(out, ", %zu beyond noise", t.beyond);
	if (t.unknown)
		strbuf_addf(out, ", %zu differ%s with no spread known", t.unknown, t.unknown == 1 ? "s" : "");
	if (t.shape)
		strbuf_addf(out, ", %zu shape differs", t.shape);
	if (t.dtype)
		strbuf_addf(out, ", %zu dtype differs", t.dtype);
	if (t.missing)
		strbuf_addf(out, ", %zu missing", t.missing);
	if (t.corrupt)
		strbuf_addf(out, ", %zu corrupt", t.corrupt);
	if (t.unmeasured)
		strbuf_addf(out, ", %zu differ without a copy", t.unmeasured);
	if (findings)
		strbuf_addf(out, ".\nResult: %zu finding%s", findings, findings == 1 ? "" : "s");
	else if (!failed_runs(s))
		strbuf_addstr(out, ".\nResult: every pair identical or within noise");
	else
		strbuf_addstr(out, ".\nResult: every pair recorded identical or within noise");
	md_failed(s, true, out);
	strbuf_addstr(out, ".\n");
}

void latents_render_md(const struct latent_set *s, struct strbuf *out)
{
	strbuf_addf(out, "# Latents: %zu runs, baseline %s\n", s->nruns, s->baseline);
	bool noted = false;
	for (size_t r = 0; r < s->nruns; r++)
		if (s->runs[r].note) {
			strbuf_addf(out, "%s- %s: %s\n", noted ? "" : "\n", s->runs[r].id, s->runs[r].note);
			noted = true;
		}
	if (!s->nlatents) {
		strbuf_addstr(out, "\nNo latent events in these runs.\n");
		if (failed_runs(s)) {
			strbuf_addstr(out, "Result: nothing to compare");
			md_failed(s, false, out);
			strbuf_addstr(out, ".\n");
		}
		return;
	}
	/* Latents identical in every pair (every run has a sound copy) read best
	 * as one row each; the others get their pairwise table. */
	bool any_same = false;
	for (size_t i = 0; i < s->nlatents; i++) {
		const struct latent *l = &s->latents[i];
		if (!all_identical(s, l))
			continue;
		if (!any_same)
			strbuf_addf(out, "\n## Identical in every run (all %zu pairs bit for bit)\n\n"
				    "| latent | stage | dtype | shape |\n|---|---|---|---|\n",
				    l->npairs);
		any_same = true;
		char *label = latent_label(l);
		const struct latent_copy *c = first_copy(s, l);
		strbuf_addstr(out, "| ");
		text_md(out, label);
		strbuf_addstr(out, " | ");
		text_md(out, l->stage);
		strbuf_addf(out, " | %s | ", npy_dtype_name(c->npy_dtype));
		latent_shape_text(out, c->npy_ndim, c->npy_shape);
		strbuf_addstr(out, " |\n");
		free(label);
	}
	for (size_t i = 0; i < s->nlatents; i++)
		if (!all_identical(s, &s->latents[i]))
			md_latent_section(s, &s->latents[i], out);
	md_first_differences(s, out);
	md_summary(s, out);
}
