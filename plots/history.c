/* history.c -- the history chart: a metric per stage over commits, one panel per mode */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp.h"

#define H_LEGEND_MAX 40
#define H_PANEL_TITLE_PX 24
#define H_PLOT_ONE_PX 300     /* plot area of a lone panel */
#define H_PLOT_MANY_PX 210    /* each of several */
#define H_TICKS_PX 30         /* commit labels under a panel, not rotated */
#define COLOR_REGRESSION "#d62728"
#define COLOR_DIRTY "#e4e4e4"

/* Stage colours, apart from the mode colours: a stage keeps its colour in every panel. */
static const char *const stage_colors[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
					    "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79" };
#define NSTAGE_COLORS (sizeof(stage_colors) / sizeof(stage_colors[0]))

struct hlayout {
	const char **modes, **stages; /* distinct, in order of first appearance */
	size_t nmodes, nstages;
	const char *legend[H_LEGEND_MAX];
	int kind[H_LEGEND_MAX];       /* 0 stage line (colour = index), 1 regression, 2 dirty,
				       * 3 failed */
	size_t nlegend;
	double lx[H_LEGEND_MAX];
	int lrow[H_LEGEND_MAX];
	double top_px, plot_px, ticks_px, slot_px;
	int height;
	bool rotate_ticks, any_regression, any_dirty, any_failed, subjects;
	double ymax;
};

static size_t index_of(const char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return i;
	return n;
}

static bool is_dirty(const struct plot_history *h, size_t c)
{
	return h->dirty && h->dirty[c];
}

/* Modes, stages, the legend, what is marked and the largest value. */
static void collect(const struct plot_history *h, struct hlayout *L)
{
	L->modes = xcalloc(h->nseries + 1, sizeof(*L->modes));
	L->stages = xcalloc(h->nseries + 1, sizeof(*L->stages));
	for (size_t i = 0; i < h->nseries; i++) {
		const struct plot_history_series *s = &h->series[i];
		if (index_of(L->modes, L->nmodes, s->mode) == L->nmodes)
			L->modes[L->nmodes++] = s->mode;
		if (index_of(L->stages, L->nstages, s->stage) == L->nstages)
			L->stages[L->nstages++] = s->stage;
		for (size_t c = 0; c < h->ncommits; c++) {
			const struct plot_history_point *p = &s->points[c];
			L->any_failed |= p->failed;
			if (!p->has_value)
				continue;
			double top = p->hi > p->value ? p->hi : p->value;
			if (top > L->ymax)
				L->ymax = top;
			L->any_regression |= p->regression;
		}
	}
	for (size_t c = 0; c < h->ncommits; c++)
		L->any_dirty |= is_dirty(h, c);
	for (size_t k = 0; k < L->nstages && L->nlegend < H_LEGEND_MAX - 3; k++) {
		L->kind[L->nlegend] = 0;
		L->legend[L->nlegend++] = L->stages[k];
	}
	if (L->any_regression) {
		L->kind[L->nlegend] = 1;
		L->legend[L->nlegend++] = "regression against the previous commit (check)";
	}
	if (L->any_failed) {
		L->kind[L->nlegend] = 3;
		L->legend[L->nlegend++] = "failed: no run completed the stage at that commit";
	}
	if (L->any_dirty) {
		L->kind[L->nlegend] = 2;
		L->legend[L->nlegend++] = "* dirty checkout (local changes)";
	}
}

static void history_geometry(const struct plot_history *h, const struct plot_opts *o, struct hlayout *L)
{
	int rows = gp_legend_rows(L->legend, L->nlegend, L->lx, L->lrow);
	L->top_px = (o->title ? FIG_TITLE_PX : 0) + rows * 20.0 + 8;
	size_t longest = 0, longest_subject = 0;
	for (size_t c = 0; c < h->ncommits; c++) {
		if (strlen(h->commits[c]) + 2 > longest)
			longest = strlen(h->commits[c]) + 2;
		if (h->subjects && h->subjects[c] && strlen(h->subjects[c]) > longest_subject)
			longest_subject = strlen(h->subjects[c]);
	}
	double slot = (RIGHT_PX - LEFT_PX) / (double)(h->ncommits ? h->ncommits : 1);
	L->rotate_ticks = (double)longest * CHAR_PX + 6 > slot;
	/* the subject as a second tick line only where every one fits its slot, and
	 * the first and last stay inside the figure: never a label cut at an edge */
	L->subjects = longest_subject && !L->rotate_ticks &&
		      (double)longest_subject * CHAR_PX + 6 <= slot &&
		      (double)longest_subject * CHAR_PX / 2 <= LEFT_PX + slot / 2;
	L->ticks_px = H_TICKS_PX + (L->rotate_ticks ? (double)longest * CHAR_PX * 0.5 : 0) +
		      (L->subjects ? 14 : 0);
	L->plot_px = L->nmodes > 1 ? H_PLOT_MANY_PX : H_PLOT_ONE_PX;
	L->slot_px = H_PANEL_TITLE_PX + L->plot_px + L->ticks_px;
	double bottom_px = 22 + (o->note ? FIG_NOTE_PX : 0);
	L->height = (int)ceil(L->top_px + L->slot_px * (double)(L->nmodes ? L->nmodes : 1) + bottom_px);
}

/* $hN: commit index, value, lo, hi (NaN where the stage has no value), and
 * $rN: the regression points. */
static void history_data_blocks(struct strbuf *sb, const struct plot_history *h)
{
	for (size_t i = 0; i < h->nseries; i++) {
		const struct plot_history_series *s = &h->series[i];
		strbuf_addf(sb, "$h%zu << EOD\n", i);
		for (size_t c = 0; c < h->ncommits; c++) {
			const struct plot_history_point *p = &s->points[c];
			if (p->has_value)
				strbuf_addf(sb, "%zu %s %s %s\n", c, gp_num(p->value, 4).s,
					    gp_num(p->lo, 4).s, gp_num(p->hi, 4).s);
			else
				strbuf_addf(sb, "%zu NaN NaN NaN\n", c);
		}
		strbuf_addf(sb, "EOD\n$r%zu << EOD\n", i);
		for (size_t c = 0; c < h->ncommits; c++)
			if (s->points[c].has_value && s->points[c].regression)
				strbuf_addf(sb, "%zu %s\n", c, gp_num(s->points[c].value, 4).s);
		/* a stage that failed: a cross where its line would go on (its value
		 * there, else the last value before, else the axis) */
		strbuf_addf(sb, "EOD\n$f%zu << EOD\n", i);
		double last = 0;
		for (size_t c = 0; c < h->ncommits; c++) {
			const struct plot_history_point *p = &s->points[c];
			if (p->has_value)
				last = p->value;
			if (p->failed)
				strbuf_addf(sb, "%zu %s\n", c, gp_num(last, 4).s);
		}
		strbuf_addstr(sb, "EOD\n");
	}
}

static void history_legend(struct strbuf *sb, const struct hlayout *L, const struct plot_opts *o)
{
	double top = o->title ? FIG_TITLE_PX : 0;
	for (size_t i = 0; i < L->nlegend; i++) {
		double yc = top + 20.0 * (L->lrow[i] + 0.5) + 4, y = 1 - yc / L->height;
		double x0 = L->lx[i] / FIG_W, x1 = (L->lx[i] + GP_LEGEND_SAMPLE_PX) / FIG_W;
		if (L->kind[i] == 0)
			strbuf_addf(sb, "set arrow from screen %.4f, screen %.4f to screen %.4f, screen %.4f "
					"nohead lc rgb '%s' lw 2 front\n", x0, y, x1, y,
				    stage_colors[i % NSTAGE_COLORS]);
		else if (L->kind[i] == 1)
			strbuf_addf(sb, "set object circle at screen %.4f, screen %.4f size char 0.6 front "
					"fs empty border lc rgb '%s' lw 2\n", (x0 + x1) / 2, y,
				    COLOR_REGRESSION);
		else if (L->kind[i] == 3)
			strbuf_addf(sb, "set label 'x' at screen %.4f, screen %.4f center front "
					"tc rgb '%s' font ',14'\n", (x0 + x1) / 2, y, COLOR_REGRESSION);
		else
			strbuf_addf(sb, "set object rect from screen %.4f, screen %.4f to screen %.4f, "
					"screen %.4f front fc rgb '%s' fs solid 1.0 noborder\n", x0,
				    y - 5.0 / L->height, x1, y + 5.0 / L->height, COLOR_DIRTY);
		strbuf_addstr(sb, "set label ");
		gp_quote(sb, L->legend[i]);
		strbuf_addf(sb, " at screen %.4f, screen %.4f left front\n",
			    (L->lx[i] + GP_LEGEND_SAMPLE_PX + GP_LEGEND_GAP_PX) / FIG_W, y);
	}
	strbuf_addstr(sb, "unset key\n");
	gp_fig_title(sb, o->title, L->height);
	gp_fig_note(sb, o->note, L->height);
}

static void history_axes(struct strbuf *sb, const struct plot_history *h, const struct hlayout *L)
{
	strbuf_addf(sb, "set multiplot\nset xrange [-0.5:%.1f]\nset yrange [0:%s]\n",
		    (double)h->ncommits - 0.5, gp_bound(gp_axis_max(L->ymax > 0 ? L->ymax * 1.08 : 1)).s);
	struct strbuf y = STRBUF_INIT;
	strbuf_addf(&y, "%s (%s)", h->metric ? h->metric : "value", h->unit ? h->unit : "");
	strbuf_addstr(sb, "set ylabel ");
	gp_quote(sb, y.buf);
	strbuf_addstr(sb, " offset 1,0\n");
	strbuf_release(&y);
	strbuf_addf(sb, "set ytics nomirror\nset tics out scale 0.5\nset border 3 lc rgb '#888888'\n"
			"set grid ytics lc rgb '#dddddd' lt 1\n"
			"set lmargin at screen %.4f\nset rmargin at screen %.4f\n"
			"set xtics nomirror scale 0 (", LEFT_PX / FIG_W, RIGHT_PX / FIG_W);
	for (size_t c = 0; c < h->ncommits; c++) {
		struct strbuf t = STRBUF_INIT;
		strbuf_addf(&t, "%s%s", h->commits[c], is_dirty(h, c) ? " *" : "");
		if (L->subjects && h->subjects[c])
			strbuf_addf(&t, "\n%s", h->subjects[c]);
		strbuf_addstr(sb, c ? ", " : "");
		gp_quote(sb, t.buf);
		strbuf_addf(sb, " %zu", c);
		strbuf_release(&t);
	}
	strbuf_addf(sb, ")%s\n", L->rotate_ticks ? " rotate by 30 right" : "");
}

/* One mode's panel: dirty bands, the title, a line per stage with its spread,
 * regressions ringed. */
static void history_panel(struct strbuf *sb, const struct plot_history *h, const struct hlayout *L,
		  const struct plot_opts *o, size_t m)
{
	double top = L->top_px + (double)m * L->slot_px + H_PANEL_TITLE_PX;
	strbuf_addf(sb, "\n# panel %zu\nunset object\nunset label\nunset arrow\n"
			"set tmargin at screen %.4f\nset bmargin at screen %.4f\n", m + 1,
		    1 - top / L->height, 1 - (top + L->plot_px) / L->height);
	if (m == 0)
		history_legend(sb, L, o);
	strbuf_addstr(sb, m + 1 == L->nmodes ? "set xlabel 'commit, oldest first' offset 0,0.4\n" :
					      "unset xlabel\n");
	for (size_t c = 0; c < h->ncommits; c++)
		if (is_dirty(h, c))
			strbuf_addf(sb, "set object rect from %.2f, graph 0 to %.2f, graph 1 behind "
					"fc rgb '%s' fs solid 1.0 noborder\n", (double)c - 0.4,
				    (double)c + 0.4, COLOR_DIRTY);
	struct strbuf t = STRBUF_INIT;
	strbuf_addf(&t, "%s: %s per stage, by commit (bars: spread across runs)", L->modes[m],
		    h->metric ? h->metric : "value");
	strbuf_addstr(sb, "set label ");
	gp_quote(sb, t.buf);
	strbuf_addf(sb, " at screen %.4f, screen %.4f center front\n", (LEFT_PX + RIGHT_PX) / 2 / FIG_W,
		    1 - (top - H_PANEL_TITLE_PX / 2.0) / L->height);
	strbuf_release(&t);
	strbuf_addstr(sb, "plot ");
	bool first = true;
	for (size_t i = 0; i < h->nseries; i++) {
		const struct plot_history_series *s = &h->series[i];
		if (strcmp(s->mode, L->modes[m]))
			continue;
		const char *color = stage_colors[index_of(L->stages, L->nstages, s->stage) % NSTAGE_COLORS];
		/* the spread first: a point drawn over a bar's own point hides it */
		strbuf_addf(sb, "%s$h%zu using 1:2:3:4 with yerrorbars lc rgb '%s' lw 1 pt 7 ps 0.5 notitle, "
				"\\\n     $h%zu using 1:2 with linespoints lc rgb '%s' lw 2 pt 7 ps 0.7 notitle",
			    first ? "" : ", \\\n     ", i, color, i, color);
		bool reg = false;
		for (size_t c = 0; c < h->ncommits; c++)
			reg |= s->points[c].has_value && s->points[c].regression;
		if (reg)
			strbuf_addf(sb, ", \\\n     $r%zu using 1:2 with points pt 6 ps 2.2 lw 2 lc rgb '%s' "
					"notitle", i, COLOR_REGRESSION);
		bool failed = false;
		for (size_t c = 0; c < h->ncommits; c++)
			failed |= s->points[c].failed;
		if (failed)
			strbuf_addf(sb, ", \\\n     $f%zu using 1:2 with points pt 2 ps 2.4 lw 3 lc rgb '%s' "
					"notitle, \\\n     $f%zu using 1:2:(\"failed\") with labels offset 0,1.4 "
					"tc rgb '%s' notitle", i, COLOR_REGRESSION, i, COLOR_REGRESSION);
		first = false;
	}
	strbuf_addstr(sb, first ? "NaN notitle\n" : "\n");
}

void plot_history_script(struct strbuf *sb, const struct plot_history *h,
			 const struct plot_opts *o, const char *out_path)
{
	struct hlayout L = { 0 };
	collect(h, &L);
	history_geometry(h, o, &L);
	gp_header(sb, o->format, FIG_W, L.height, out_path);
	history_data_blocks(sb, h);
	history_axes(sb, h, &L);
	for (size_t m = 0; m < L.nmodes; m++)
		history_panel(sb, h, &L, o, m);
	if (!L.nmodes)
		strbuf_addstr(sb, "plot NaN notitle\n");
	strbuf_addstr(sb, "unset multiplot\nset output\n");
	free(L.modes);
	free(L.stages);
}

int plot_history(const struct plot_opts *o, const struct plot_history *h, const char *name)
{
	char *path = gp_out_path(o, name);
	char *tmp = path ? gp_tmp_path(path) : NULL;
	int rc = -1;
	if (tmp) {
		struct strbuf sb = STRBUF_INIT;
		plot_history_script(&sb, h, o, tmp);
		rc = gp_draw(o, path, tmp, &sb);
		strbuf_release(&sb);
	}
	free(tmp);
	free(path);
	return rc;
}
