/* memory.c -- the memory-over-time chart: one panel per run (or per mode), stage bands, RAM, stops */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/units.h"
#include "gp.h"

#define MAX_POINTS 1600   /* per series; more are reduced to per-bucket min and max */
#define LABEL_ROWS 4      /* stage-name rows at the top of a memory panel */
#define PANELS_PER_RUN_MAX 4 /* more runs than this: one panel per mode */

struct panel {
	size_t first;   /* the run whose bands are drawn */
	size_t *runs;   /* runs drawn in this panel */
	size_t nruns;
};

/* Everything placed before the first line of script is written. */
struct layout {
	struct panel *panels;
	size_t np;
	double xmax;            /* the longest run fills the width */
	double ymin, ymax;      /* data (and RAM when on the scale) */
	double data_max;        /* data alone */
	double yrange_max;
	bool any_gpu, any_swap, any_stop;
	size_t overlaid;        /* most runs in one panel */
	int rows_used;          /* label rows of the busiest panel */
	int top_px, bottom_px, slot_px, height;
	double title_px, plot_px;
	int *rows;              /* scratch: label row and x of each band */
	double *xs;
};

/* Append "t gb" lines, reducing a long series to each bucket's min and max
 * (in time order) so that peaks survive and files stay README-sized. */
static void add_series_block(struct strbuf *sb, const char *name, const struct plot_series *s)
{
	strbuf_addf(sb, "$%s << EOD\n", name);
	if (s->n <= MAX_POINTS) {
		for (size_t i = 0; i < s->n; i++)
			strbuf_addf(sb, "%s %.4f\n", gp_num(s->t[i], 3).s, s->gb[i]);
	} else {
		size_t buckets = MAX_POINTS / 2;
		for (size_t b = 0; b < buckets; b++) {
			size_t lo = s->n * b / buckets, hi = s->n * (b + 1) / buckets;
			if (lo >= hi)
				continue;
			size_t imin = lo, imax = lo;
			for (size_t i = lo; i < hi; i++) {
				if (s->gb[i] < s->gb[imin])
					imin = i;
				if (s->gb[i] > s->gb[imax])
					imax = i;
			}
			size_t first = imin < imax ? imin : imax, second = imin < imax ? imax : imin;
			strbuf_addf(sb, "%s %.4f\n", gp_num(s->t[first], 3).s, s->gb[first]);
			if (second != first)
				strbuf_addf(sb, "%s %.4f\n", gp_num(s->t[second], 3).s, s->gb[second]);
		}
	}
	strbuf_addstr(sb, "EOD\n");
}

static double series_max(const struct plot_series *s, double m)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->gb[i] > m)
			m = s->gb[i];
	return m;
}

static double series_min(const struct plot_series *s, double m)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->gb[i] < m)
			m = s->gb[i];
	return m;
}

/* Greedy rows for stage labels: each label goes to the first row where it
 * does not overlap the labels already there. Returns the rows used. */
static int place_labels(const struct plot_run *r, double xmax, int *row, double *x_px)
{
	double right_edge[LABEL_ROWS];
	int used = 0;
	for (int k = 0; k < LABEL_ROWS; k++)
		right_edge[k] = -1e9;
	double scale = (RIGHT_PX - LEFT_PX) / xmax;
	for (size_t i = 0; i < r->nbands; i++) {
		const struct plot_band *b = &r->bands[i];
		double w = (double)strlen(b->name) * CHAR_PX + 6;
		double c = LEFT_PX + (b->t0 + b->t1) / 2 * scale;
		if (c - w / 2 < LEFT_PX)
			c = LEFT_PX + w / 2;
		if (c + w / 2 > RIGHT_PX)
			c = RIGHT_PX - w / 2;
		int k = 0;
		while (k < LABEL_ROWS - 1 && c - w / 2 < right_edge[k])
			k++;
		if (c - w / 2 < right_edge[k]) {
			/* every row is taken here: the row whose last label ends first */
			for (int j = 0; j < LABEL_ROWS; j++)
				if (right_edge[j] < right_edge[k])
					k = j;
		}
		right_edge[k] = c + w / 2;
		row[i] = k;
		x_px[i] = c;
		if (k + 1 > used)
			used = k + 1;
	}
	return used;
}

/* Label rows and x positions of panel p's bands into L->rows, L->xs. */
static int place_panel_labels(const struct plot_run *runs, size_t p, struct layout *L)
{
	const struct plot_run *r = &runs[L->panels[p].first];
	L->rows = xrealloc(L->rows, (r->nbands + 1) * sizeof(*L->rows));
	L->xs = xrealloc(L->xs, (r->nbands + 1) * sizeof(*L->xs));
	return place_labels(r, L->xmax, L->rows, L->xs);
}

/* Panels: one per run, or one per mode (runs overlaid) when there are many. */
static void build_panels(const struct plot_run *runs, size_t n, struct layout *L)
{
	L->panels = xcalloc(n ? n : 1, sizeof(*L->panels));
	bool per_run = n <= PANELS_PER_RUN_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t p = L->np;
		if (!per_run)
			for (p = 0; p < L->np; p++)
				if (!strcmp(runs[L->panels[p].first].mode, runs[i].mode))
					break;
		if (p == L->np) {
			L->panels[L->np].first = i;
			L->panels[L->np].runs = xcalloc(n, sizeof(size_t));
			L->np++;
		}
		L->panels[p].runs[L->panels[p].nruns++] = i;
		/* bands come from the run that entered the most stages */
		if (runs[i].nbands > runs[L->panels[p].first].nbands)
			L->panels[p].first = i;
	}
	L->overlaid = 1;
	for (size_t p = 0; p < L->np; p++)
		if (L->panels[p].nruns > L->overlaid)
			L->overlaid = L->panels[p].nruns;
}

/* Shared axes: the longest run, the largest value (and RAM) of them all. */
static void measure(const struct plot_run *runs, size_t n, struct layout *L)
{
	double tmax = 0;
	for (size_t i = 0; i < n; i++) {
		const struct plot_run *r = &runs[i];
		if (r->t_last > tmax)
			tmax = r->t_last;
		for (size_t b = 0; b < r->nbands; b++)
			if (r->bands[b].t1 > tmax)
				tmax = r->bands[b].t1;
		L->ymax = series_max(&r->footprint, L->ymax);
		L->ymax = series_max(&r->gpu, L->ymax);
		L->ymax = series_max(&r->swap, L->ymax);
		L->ymin = series_min(&r->swap, L->ymin);
		L->any_gpu |= r->gpu.n > 0;
		L->any_swap |= r->swap.n > 0;
		L->any_stop |= r->outcome != PLOT_COMPLETED;
	}
	/* RAM joins the scale unless it would flatten the data (a small run on
	 * a big machine): then it is named in a corner instead of drawn */
	L->data_max = L->ymax;
	for (size_t i = 0; i < n; i++) {
		double ram = plot_gb(runs[i].ram_bytes);
		if (runs[i].ram_bytes && ram <= 4 * L->data_max && ram > L->ymax)
			L->ymax = ram;
	}
	L->xmax = tmax > 0 ? tmax : 1;
}

/* Heights: label rows per panel decide the head room above the data. */
static void size_up(const struct plot_run *runs, struct layout *L)
{
	L->rows_used = 1;
	for (size_t p = 0; p < L->np; p++) {
		int u = place_panel_labels(runs, p, L);
		if (u > L->rows_used)
			L->rows_used = u;
	}
	L->top_px = 30;
	L->bottom_px = 40;
	L->slot_px = L->np == 1 ? 500 - L->top_px - L->bottom_px : 290;
	L->height = L->top_px + L->bottom_px + L->slot_px * (int)L->np;
	L->title_px = 30;
	double ticks_px = 28;
	L->plot_px = L->slot_px - L->title_px - ticks_px;
	double head_px = L->rows_used * 15.0 + 8;
	if (L->ymin < 0)
		L->ymin = -gp_axis_max(-L->ymin * 1.05);
	double span = L->ymax - L->ymin;
	if (!(span > 0))
		span = 1;
	L->yrange_max = gp_axis_max(L->ymin + span / (1 - head_px / L->plot_px) * 1.02);
}

static void data_blocks(struct strbuf *sb, const struct plot_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char name[32];
		if (runs[i].footprint.n) {
			snprintf(name, sizeof(name), "fp%zu", i);
			add_series_block(sb, name, &runs[i].footprint);
		}
		if (runs[i].gpu.n) {
			snprintf(name, sizeof(name), "gpu%zu", i);
			add_series_block(sb, name, &runs[i].gpu);
		}
		if (runs[i].swap.n) {
			snprintf(name, sizeof(name), "swap%zu", i);
			add_series_block(sb, name, &runs[i].swap);
		}
	}
}

static void panel_title(struct strbuf *sb, const struct plot_run *runs, const struct panel *p)
{
	const struct plot_run *r = &runs[p->first];
	struct strbuf t = STRBUF_INIT;
	if (p->nruns == 1) {
		strbuf_addf(&t, "%s, run %d: peak ", r->mode, r->run);
		units_add_gb_label(&t, r->peak_gb, true);
		if (r->outcome != PLOT_COMPLETED) {
			strbuf_addf(&t, ", %s", r->outcome_text ? r->outcome_text : "did not complete");
			if (r->ended_in)
				strbuf_addf(&t, " in %s", r->ended_in);
		}
	} else {
		strbuf_addf(&t, "%s, %zu runs (stage bands of run %d); peak", r->mode, p->nruns, r->run);
		bool small = false; /* under 1 GB: each figure with its unit */
		for (size_t k = 0; k < p->nruns; k++)
			small |= runs[p->runs[k]].peak_gb < 1;
		for (size_t k = 0; k < p->nruns; k++) {
			strbuf_addstr(&t, k ? " / " : " ");
			units_add_gb_label(&t, runs[p->runs[k]].peak_gb, small);
		}
		if (!small)
			strbuf_addstr(&t, " GB");
		size_t stopped = 0;
		for (size_t k = 0; k < p->nruns; k++)
			stopped += runs[p->runs[k]].outcome != PLOT_COMPLETED;
		if (stopped)
			strbuf_addf(&t, "; %zu did not complete", stopped);
	}
	strbuf_addstr(sb, "set title ");
	gp_quote(sb, strbuf_str(&t));
	strbuf_addstr(sb, " offset 0,-0.6\n");
	strbuf_release(&t);
}

struct legend_item {
	const char *text;
	const char *style; /* arrow style, or NULL for the stop point */
};

static void legend_items(const struct layout *L, struct legend_item *items, size_t *n)
{
	static const char *const run_text[] = { "1st run", "2nd run", "3rd run" };
	static const char *const run_style[] = { "lc rgb '#333333' lw 1.4 dt 1",
						 "lc rgb '#333333' lw 1.4 dt 2",
						 "lc rgb '#333333' lw 1.4 dt 3" };
	*n = 0;
	items[(*n)++] = (struct legend_item){ "footprint", "lc rgb '" COLOR_FOOTPRINT "' lw 2" };
	if (L->any_gpu)
		items[(*n)++] = (struct legend_item){ "GPU memory", "lc rgb '" COLOR_GPU "' lw 1.6" };
	if (L->any_swap)
		items[(*n)++] = (struct legend_item){ "system swap growth since start",
						       "lc rgb '" COLOR_SWAP "' lw 1.4" };
	if (L->any_stop)
		items[(*n)++] = (struct legend_item){ "where the run ended early", NULL };
	/* overlaid panels: the dash of the first runs of a mode, in their order */
	for (size_t k = 0; L->overlaid > 1 && k < L->overlaid && k < 3; k++)
		items[(*n)++] = (struct legend_item){ run_text[k], run_style[k] };
}

/* The legend, one row at the top of the figure, laid out here. */
static void legend(struct strbuf *sb, const struct layout *L)
{
	struct legend_item items[8];
	size_t n;
	legend_items(L, items, &n);
	const double sample_px = 26, gap_px = 6, sep_px = 22, char_px = 7.0;
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += sample_px + gap_px + (double)strlen(items[i].text) * char_px + (i ? sep_px : 0);
	double x = (FIG_W - total) / 2, y = 1 - 14.0 / L->height;
	for (size_t i = 0; i < n; i++) {
		if (i)
			x += sep_px;
		if (items[i].style)
			strbuf_addf(sb, "set arrow from screen %.4f, screen %.4f to screen %.4f, "
					"screen %.4f nohead %s front\n", x / FIG_W, y,
				    (x + sample_px) / FIG_W, y, items[i].style);
		else
			strbuf_addf(sb, "set object circle at screen %.4f, screen %.4f size char 0.4 "
					"front fc rgb '%s' fs solid 1.0 noborder\n",
				    (x + sample_px / 2) / FIG_W, y, COLOR_STOP);
		x += sample_px + gap_px;
		strbuf_addstr(sb, "set label ");
		gp_quote(sb, items[i].text);
		strbuf_addf(sb, " at screen %.4f, screen %.4f left front\n", x / FIG_W, y);
		x += (double)strlen(items[i].text) * char_px;
	}
	strbuf_addstr(sb, "unset key\n");
}

static void axes(struct strbuf *sb, const struct layout *L)
{
	strbuf_addf(sb, "set multiplot\n"
			"set style data lines\n"
			"set xrange [0:%s]\nset yrange [%s:%s]\n"
			"set ylabel 'GB (2^30 bytes)' offset 1,0\n"
			"set ytics nomirror\nset xtics nomirror\nset tics out scale 0.5\n"
			"set border 3 lc rgb '#888888'\n"
			"set grid ytics lc rgb '#dddddd' lt 1\n"
			"set style textbox opaque noborder margins 2,1\n"
			"set lmargin at screen %.4f\nset rmargin at screen %.4f\n",
		    gp_num(L->xmax, 3).s, gp_bound(L->ymin).s, gp_bound(L->yrange_max).s,
		    LEFT_PX / FIG_W, RIGHT_PX / FIG_W);
}

/* Stage bands, alternately shaded, names on rows at the top. */
static void panel_bands(struct strbuf *sb, const struct plot_run *r, const struct layout *L)
{
	for (size_t b = 0; b < r->nbands; b++) {
		const struct plot_band *bd = &r->bands[b];
		if (b % 2 == 0)
			strbuf_addf(sb, "set object rect from %s, graph 0 to %s, graph 1 "
					"behind fc rgb '%s' fs solid 1.0 noborder\n",
				    gp_num(bd->t0, 3).s, gp_num(bd->t1, 3).s, COLOR_BAND);
		if (b > 0)
			strbuf_addf(sb, "set arrow from %s, graph 0 to %s, graph 1 nohead "
					"lc rgb '#c8ccd4' lw 1 back\n", gp_num(bd->t0, 3).s,
				    gp_num(bd->t0, 3).s);
		double xfirst = (L->xs[b] - LEFT_PX) / (RIGHT_PX - LEFT_PX) * L->xmax;
		strbuf_addstr(sb, "set label ");
		gp_quote(sb, bd->name);
		strbuf_addf(sb, " at %s, graph 1 center offset 0,%.2f font '%s' tc rgb '%s' front\n",
			    gp_num(xfirst, 3).s, -(0.9 + 1.25 * L->rows[b]), SMALL_FONT, COLOR_NOTE);
	}
}

/* The machine's RAM: a dashed line, or named in a corner when off the scale. */
static void panel_ram(struct strbuf *sb, const struct plot_run *r, const struct layout *L)
{
	if (!r->ram_bytes)
		return;
	double ram = plot_gb(r->ram_bytes);
	char ram_txt[UNITS_BUF];
	if (ram > 4 * L->data_max) {
		strbuf_addf(sb, "set label 'RAM %s (off the scale)' at graph 0.995, "
				"graph 0.04 right font '%s' tc rgb '%s' boxed bs 1 front\n",
			    units_size((double)r->ram_bytes, UNITS_COARSE, false, ram_txt), SMALL_FONT,
			    COLOR_RAM);
		return;
	}
	strbuf_addf(sb, "set arrow from graph 0, first %.4f to graph 1, first %.4f nohead "
			"lc rgb '%s' dt 2 lw 1.2 front\n", ram, ram, COLOR_RAM);
	strbuf_addf(sb, "set label 'RAM %s' at graph 0.005, first %.4f left "
			"offset 0,0.6 font '%s' tc rgb '%s' boxed bs 1 front\n",
		    units_size((double)r->ram_bytes, UNITS_COARSE, false, ram_txt), ram, SMALL_FONT,
		    COLOR_RAM);
}

/* Where runs did not complete: a line and a point at the last sample. */
static void panel_stops(struct strbuf *sb, const struct plot_run *runs, const struct panel *pn,
			const struct layout *L)
{
	for (size_t k = 0; k < pn->nruns; k++) {
		const struct plot_run *q = &runs[pn->runs[k]];
		if (q->outcome == PLOT_COMPLETED || !q->footprint.n)
			continue;
		double t = q->t_last, y = q->footprint.gb[q->footprint.n - 1];
		strbuf_addf(sb, "set arrow from %s, graph 0 to %s, graph 1 nohead "
				"lc rgb '%s' lw 1.5 dt 3 front\n", gp_num(t, 3).s, gp_num(t, 3).s, COLOR_STOP);
		strbuf_addf(sb, "set object circle at %s, %.4f size char 0.4 front "
				"fc rgb '%s' fs solid 1.0 noborder\n", gp_num(t, 3).s, y, COLOR_STOP);
		strbuf_addstr(sb, "set label ");
		gp_quote(sb, q->outcome_text ? q->outcome_text : "did not complete");
		/* beside the line (left of it unless it is near the left edge),
		 * under the stage names, on a white box */
		bool left = t > L->xmax * 0.3;
		strbuf_addf(sb, " at %s, graph 1 %s offset %s,%.2f font '%s' tc rgb '%s' "
				"boxed bs 1 front\n", gp_num(t, 3).s, left ? "right" : "left",
			    left ? "-0.8" : "0.8", -(0.9 + 1.25 * L->rows_used + 1.3 * (double)k + 0.3),
			    SMALL_FONT, COLOR_STOP);
	}
}

/* The plot command: only series with points (gnuplot warns about empty ones). */
static void panel_plot(struct strbuf *sb, const struct plot_run *runs, const struct panel *pn)
{
	static const char *const names[3] = { "fp", "gpu", "swap" };
	static const char *const styles[3] = { "lw 2", "lw 1.6", "lw 1.4" };
	static const char *const colors[3] = { COLOR_FOOTPRINT, COLOR_GPU, COLOR_SWAP };
	strbuf_addstr(sb, "plot ");
	bool first = true;
	for (size_t k = 0; k < pn->nruns; k++) {
		size_t i = pn->runs[k];
		int dt = (int)(k % 5) + 1;
		const struct plot_series *ser[3] = { &runs[i].footprint, &runs[i].gpu, &runs[i].swap };
		for (int j = 0; j < 3; j++) {
			if (!ser[j]->n)
				continue;
			strbuf_addf(sb, "%s$%s%zu lc rgb '%s' %s dt %d notitle",
				    first ? "" : ", \\\n     ", names[j], i, colors[j], styles[j], dt);
			first = false;
		}
	}
	if (first)
		strbuf_addstr(sb, "NaN notitle");
	strbuf_addch(sb, '\n');
}

static void panel(struct strbuf *sb, const struct plot_run *runs, size_t p, struct layout *L)
{
	const struct panel *pn = &L->panels[p];
	double slot_top = L->top_px + (double)p * L->slot_px;
	double tm = slot_top + L->title_px, bm = slot_top + L->title_px + L->plot_px;
	strbuf_addf(sb, "\n# panel %zu\nunset object\nunset label\nunset arrow\n"
			"set tmargin at screen %.4f\nset bmargin at screen %.4f\n",
		    p + 1, 1 - tm / L->height, 1 - bm / L->height);
	if (p + 1 == L->np)
		strbuf_addstr(sb, "set xlabel 'time since the run started (s)' offset 0,0.4\n");
	else
		strbuf_addstr(sb, "unset xlabel\n");
	panel_title(sb, runs, pn);
	place_panel_labels(runs, p, L);
	panel_bands(sb, &runs[pn->first], L);
	panel_ram(sb, &runs[pn->first], L);
	panel_stops(sb, runs, pn, L);
	if (p == 0)
		legend(sb, L);
	panel_plot(sb, runs, pn);
}

void plot_memory_script(struct strbuf *sb, const struct plot_model *m, const struct plot_opts *o,
			const char *out_path)
{
	const struct plot_run *runs = m->runs;
	size_t n = m->nruns;
	struct layout L = { 0 };
	build_panels(runs, n, &L);
	measure(runs, n, &L);
	size_up(runs, &L);

	gp_header(sb, o->format, FIG_W, L.height, out_path);
	data_blocks(sb, runs, n);
	axes(sb, &L);
	for (size_t p = 0; p < L.np; p++)
		panel(sb, runs, p, &L);
	strbuf_addstr(sb, "unset multiplot\nset output\n");

	free(L.rows);
	free(L.xs);
	for (size_t p = 0; p < L.np; p++)
		free(L.panels[p].runs);
	free(L.panels);
}
