/* memory.c -- the memory-over-time chart: one panel per run (or per mode), stage bands, RAM, stops */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/units.h"
#include "gp.h"

#define MAX_POINTS 1600   /* per series; more are reduced to per-bucket min and max */
#define LABEL_ROWS 3      /* stage-name rows above a memory memory_panel (staggered) */
#define PANELS_PER_RUN_MAX 4 /* more runs than this: one panel per mode */

/* Vertical layout of a figure, in pixels from the top. */
#define LEGEND_PX 28      /* the legend row */
#define PANEL_TITLE_PX 22 /* each panel's title */
#define ROW_PX 14         /* one row of stage names */
#define TICKS_PX 32       /* x tick labels under a panel */
#define XLABEL_PX 22      /* the x axis label under the last panel */
#define PLOT_ONE_PX 340   /* plot area of a lone panel */
#define PLOT_MANY_PX 190  /* plot area of each of several panels */
#define LABEL_GAP_PX 6    /* least room between two stage names in a row */

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
	double ymin, ymax;      /* data */
	double ram_max;         /* the largest RAM on the scale; 0 for none */
	double yrange_max;
	bool any_gpu, any_swap, any_stop;
	const char *dev_label;  /* the first run with a device series: its label; NULL none */
	size_t overlaid;        /* most runs in one panel */
	int rows_used;          /* label rows of the busiest panel */
	double top_px;          /* title and legend above the first panel */
	double strip_px;        /* stage-name rows above each plot area */
	double plot_px, slot_px;
	int height;
	int *rows;              /* scratch: label row (-1: unlabelled) and x of each band */
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

/* Does [lo, hi] (px) clear every label already in the row? */
static bool row_free(const double *lo, const double *hi, const int *row, size_t n, int k,
		     double l, double h)
{
	for (size_t i = 0; i < n; i++)
		if (row[i] == k && l < hi[i] + LABEL_GAP_PX && h > lo[i] - LABEL_GAP_PX)
			return false;
	return true;
}

/* Stage names in rows above the panel, never overlapping: the last stage
 * (where the run ended) first, then the longest stages; each takes the first
 * row where it fits, and a name that fits nowhere is left out (row -1).
 * Returns the rows used. */
static int place_labels(const struct plot_run *r, double xmax, int *row, double *x_px)
{
	size_t n = r->nbands;
	double *lo = xcalloc(n + 1, sizeof(*lo)), *hi = xcalloc(n + 1, sizeof(*hi));
	size_t *order = xcalloc(n + 1, sizeof(*order));
	double scale = (RIGHT_PX - LEFT_PX) / xmax;
	for (size_t i = 0; i < n; i++) {
		const struct plot_band *b = &r->bands[i];
		double w = (double)strlen(b->name) * CHAR_PX + 6;
		double c = LEFT_PX + (b->t0 + b->t1) / 2 * scale;
		if (c - w / 2 < LEFT_PX)
			c = LEFT_PX + w / 2;
		if (c + w / 2 > RIGHT_PX)
			c = RIGHT_PX - w / 2;
		x_px[i] = c;
		lo[i] = c - w / 2;
		hi[i] = c + w / 2;
		row[i] = -1;
		order[i] = i;
	}
	/* (bands drawn together without a name have none to place) */
	/* the last band first, then the others by duration, longest first (stable) */
	if (n > 1) {
		order[0] = n - 1;
		for (size_t i = 0; i + 1 < n; i++) {
			size_t j = i + 1;
			double d = r->bands[i].t1 - r->bands[i].t0;
			while (j > 1 && r->bands[order[j - 1]].t1 - r->bands[order[j - 1]].t0 < d) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = i;
		}
	}
	int used = 0;
	for (size_t q = 0; q < n; q++) {
		size_t i = order[q];
		for (int k = 0; k < LABEL_ROWS && r->bands[i].name[0]; k++)
			if (row_free(lo, hi, row, n, k, lo[i], hi[i])) {
				row[i] = k;
				if (k + 1 > used)
					used = k + 1;
				break;
			}
	}
	free(lo);
	free(hi);
	free(order);
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
		L->ymax = series_max(&r->dev, L->ymax);
		if (r->dev.n && !L->dev_label)
			L->dev_label = r->dev_label;
		L->ymax = series_max(&r->swap, L->ymax);
		L->ymin = series_min(&r->swap, L->ymin);
		L->any_gpu |= r->gpu.n > 0;
		L->any_swap |= r->swap.n > 0;
		L->any_stop |= r->outcome != PLOT_COMPLETED;
	}
	/* RAM joins the scale unless it would flatten the data (a small run on
	 * a big machine): then it is named in a corner instead of drawn */
	for (size_t i = 0; i < n; i++) {
		double ram = plot_gb(runs[i].ram_bytes);
		if (runs[i].ram_bytes && ram <= 4 * L->ymax && ram > L->ram_max)
			L->ram_max = ram;
	}
	L->xmax = tmax > 0 ? tmax : 1;
}

/* Heights, and a y range that holds the data and the RAM line with a small margin. */
static void size_up(const struct plot_run *runs, const struct plot_opts *o, struct layout *L)
{
	L->rows_used = 1;
	for (size_t p = 0; p < L->np; p++) {
		int u = place_panel_labels(runs, p, L);
		if (u > L->rows_used)
			L->rows_used = u;
	}
	L->top_px = LEGEND_PX + (o->title ? FIG_TITLE_PX : 0);
	L->strip_px = L->rows_used * ROW_PX + 4;
	L->plot_px = L->np == 1 ? PLOT_ONE_PX : PLOT_MANY_PX;
	L->slot_px = PANEL_TITLE_PX + L->strip_px + L->plot_px + TICKS_PX;
	double bottom_px = XLABEL_PX + (o->note ? FIG_NOTE_PX : 0);
	L->height = (int)ceil(L->top_px + L->slot_px * (double)L->np + bottom_px);
	if (L->ymin < 0)
		L->ymin = -gp_axis_max(-L->ymin * 1.05);
	double top = L->ymax > L->ram_max ? L->ymax : L->ram_max;
	double span = top - L->ymin;
	if (!(span > 0))
		span = 1;
	double need = L->ymax + span * 0.04;
	if (L->ram_max + span * 0.02 > need) /* its label sits on the line */
		need = L->ram_max + span * 0.02;
	L->yrange_max = gp_axis_max(need > 0 ? need : 1);
}

static void memory_data_blocks(struct strbuf *sb, const struct plot_run *runs, size_t n)
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
		if (runs[i].dev.n) {
			snprintf(name, sizeof(name), "dev%zu", i);
			add_series_block(sb, name, &runs[i].dev);
		}
		if (runs[i].swap.n) {
			snprintf(name, sizeof(name), "swap%zu", i);
			add_series_block(sb, name, &runs[i].swap);
		}
	}
}

/* "eager, run 1: stopped by the guard in decode; peak 43.6 GB", or for runs
 * overlaid "staged, 2 runs (stage bands of run 1): all completed; peak 19.0 / 19.0 GB". */
static void panel_title(struct strbuf *sb, const struct plot_run *runs, const struct panel *p,
			const struct layout *L, double y)
{
	const struct plot_run *r = &runs[p->first];
	struct strbuf t = STRBUF_INIT;
	if (p->nruns == 1) {
		strbuf_addf(&t, "%s, run %d: %s; peak ", r->mode, r->run, r->ending);
		units_add_gb_label(&t, r->peak_gb, true);
	} else {
		strbuf_addf(&t, "%s, %zu runs (stage bands of run %d): ", r->mode, p->nruns, r->run);
		bool same = true;
		for (size_t k = 1; k < p->nruns; k++)
			same &= !strcmp(runs[p->runs[k]].ending, runs[p->runs[0]].ending);
		if (same)
			strbuf_addf(&t, "all %s", runs[p->runs[0]].ending);
		for (size_t k = 0; !same && k < p->nruns; k++)
			strbuf_addf(&t, "%srun %d %s", k ? ", " : "", runs[p->runs[k]].run,
				    runs[p->runs[k]].ending);
		strbuf_addstr(&t, "; peak");
		bool small = false; /* under 1 GB: each figure with its unit */
		for (size_t k = 0; k < p->nruns; k++)
			small |= runs[p->runs[k]].peak_gb < 1;
		for (size_t k = 0; k < p->nruns; k++) {
			strbuf_addstr(&t, k ? " / " : " ");
			units_add_gb_label(&t, runs[p->runs[k]].peak_gb, small);
		}
		if (!small)
			strbuf_addstr(&t, " GB");
	}
	/* a RAM line would flatten the data: named here instead of drawn */
	if (r->ram_bytes && plot_gb(r->ram_bytes) > 4 * L->ymax) {
		strbuf_addstr(&t, "; RAM ");
		units_add_size(&t, (double)r->ram_bytes, UNITS_COARSE, false);
		strbuf_addstr(&t, " (off the scale)");
	}
	strbuf_addstr(sb, "set label ");
	gp_quote(sb, strbuf_str(&t));
	strbuf_addf(sb, " at screen %.4f, screen %.4f center front\n",
		    (LEFT_PX + RIGHT_PX) / 2 / FIG_W, y);
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
	if (L->dev_label)
		items[(*n)++] = (struct legend_item){ !strcmp(L->dev_label, "MPS driver") ?
						      "MPS driver memory (sampled)" :
						      !strcmp(L->dev_label, "CUDA reserved") ?
						      "CUDA reserved memory" : "device memory",
						      "lc rgb '" COLOR_DEVICE "' lw 1.6" };
	if (L->any_swap)
		items[(*n)++] = (struct legend_item){ "system swap growth since start",
						       "lc rgb '" COLOR_SWAP "' lw 1.4" };
	if (L->any_stop)
		items[(*n)++] = (struct legend_item){ "where the run ended early", NULL };
	/* overlaid panels: the dash of the first runs of a mode, in their order */
	for (size_t k = 0; L->overlaid > 1 && k < L->overlaid && k < 3; k++)
		items[(*n)++] = (struct legend_item){ run_text[k], run_style[k] };
}

/* The legend, one row under the title at the top of the figure, laid out here. */
static void memory_legend(struct strbuf *sb, const struct layout *L)
{
	struct legend_item items[8];
	size_t n;
	legend_items(L, items, &n);
	const double sample_px = 26, gap_px = 6, sep_px = 22, char_px = 7.0;
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += sample_px + gap_px + (double)strlen(items[i].text) * char_px + (i ? sep_px : 0);
	double x = (FIG_W - total) / 2, y = 1 - (L->top_px - 14.0) / L->height;
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

static void memory_axes(struct strbuf *sb, const struct layout *L)
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

/* Stage bands, alternately shaded, names in rows above the plot area (row 0
 * nearest it); `graph_top` is the plot area's top in screen units. */
static void panel_bands(struct strbuf *sb, const struct plot_run *r, const struct layout *L,
			double graph_top)
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
		if (L->rows[b] < 0)
			continue;
		double x = (L->xs[b] - LEFT_PX) / (RIGHT_PX - LEFT_PX) * L->xmax;
		double y = graph_top + (ROW_PX * (L->rows[b] + 0.5) + 2) / L->height;
		strbuf_addstr(sb, "set label ");
		gp_quote(sb, bd->name);
		strbuf_addf(sb, " at first %s, screen %.4f center font '%s' tc rgb '%s' front\n",
			    gp_num(x, 3).s, y, SMALL_FONT, COLOR_NOTE);
	}
}

/* The machine's RAM: a dashed line (the panel title names it when it is off the scale). */
static void panel_ram(struct strbuf *sb, const struct plot_run *r, const struct layout *L)
{
	if (!r->ram_bytes)
		return;
	double ram = plot_gb(r->ram_bytes);
	if (ram <= 4 * L->ymax)
		gp_ram_line(sb, ram);
}

/* Where runs did not complete: a line and a point at the last sample, and
 * what stopped it beside the point. */
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
		/* left of the point unless it is near the left edge, a line higher
		 * near the x axis, on a white box; runs overlaid in one panel one
		 * line apart */
		bool left = t > L->xmax * 0.3;
		strbuf_addf(sb, " at %s, %.4f %s offset %s,%.2f font '%s' tc rgb '%s' boxed bs 1 front\n",
			    gp_num(t, 3).s, y, left ? "right" : "left", left ? "-1.2" : "1.2",
			    (y < L->yrange_max * 0.15 ? 1.5 : 0) - 1.3 * (double)k, SMALL_FONT, COLOR_STOP);
	}
}

/* The plot command: only series with points (gnuplot warns about empty ones). */
static void panel_plot(struct strbuf *sb, const struct plot_run *runs, const struct panel *pn)
{
	static const char *const names[4] = { "fp", "gpu", "dev", "swap" };
	static const char *const styles[4] = { "lw 2", "lw 1.6", "lw 1.6", "lw 1.4" };
	static const char *const colors[4] = { COLOR_FOOTPRINT, COLOR_GPU, COLOR_DEVICE, COLOR_SWAP };
	strbuf_addstr(sb, "plot ");
	bool first = true;
	for (size_t k = 0; k < pn->nruns; k++) {
		size_t i = pn->runs[k];
		int dt = (int)(k % 5) + 1;
		const struct plot_series *ser[4] = { &runs[i].footprint, &runs[i].gpu, &runs[i].dev,
						     &runs[i].swap };
		for (int j = 0; j < 4; j++) {
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

static void memory_panel(struct strbuf *sb, const struct plot_run *runs, const struct plot_opts *o,
		  size_t p, struct layout *L)
{
	const struct panel *pn = &L->panels[p];
	double slot_top = L->top_px + (double)p * L->slot_px;
	double tm = slot_top + PANEL_TITLE_PX + L->strip_px, bm = tm + L->plot_px;
	strbuf_addf(sb, "\n# panel %zu\nunset object\nunset label\nunset arrow\n"
			"set tmargin at screen %.4f\nset bmargin at screen %.4f\n",
		    p + 1, 1 - tm / L->height, 1 - bm / L->height);
	if (p + 1 == L->np)
		strbuf_addstr(sb, "set xlabel 'time since the run started (s)' offset 0,0.4\n");
	else
		strbuf_addstr(sb, "unset xlabel\n");
	panel_title(sb, runs, pn, L, 1 - (slot_top + PANEL_TITLE_PX / 2.0 + 2) / L->height);
	place_panel_labels(runs, p, L);
	panel_bands(sb, &runs[pn->first], L, 1 - tm / L->height);
	panel_ram(sb, &runs[pn->first], L);
	panel_stops(sb, runs, pn, L);
	if (p == 0) {
		memory_legend(sb, L);
		gp_fig_title(sb, o->title, L->height);
		gp_fig_note(sb, o->note, L->height);
	}
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
	size_up(runs, o, &L);

	gp_header(sb, o->format, FIG_W, L.height, out_path);
	memory_data_blocks(sb, runs, n);
	memory_axes(sb, &L);
	for (size_t p = 0; p < L.np; p++)
		memory_panel(sb, runs, o, p, &L);
	strbuf_addstr(sb, "unset multiplot\nset output\n");

	free(L.rows);
	free(L.xs);
	for (size_t p = 0; p < L.np; p++)
		free(L.panels[p].runs);
	free(L.panels);
}
