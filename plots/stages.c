/* stages.c -- the per-stage peak chart: grouped bars per stage, one per mode, drawn from the table model */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyze/table.h"
#include "../common/units.h"
#include "gp.h"

/* A table cell as the chart needs it: every run behind the cell that had a
 * sample in the stage's windows, completed or not, gives a bar value. */
struct bar_cell {
	size_t runs;      /* main runs of the mode */
	size_t reached;   /* runs that entered the stage */
	size_t valued;    /* of those, with a sample in the window */
	size_t ended;     /* runs that ended in it without completing */
	bool stopped;     /* one of those was stopped by the guard */
	bool supplement;  /* the figures come from --supplement runs: hatched */
	double lo, hi;    /* GB */
	double mapped;    /* GB of mapped model files stacked on the footprint (the
			   * table shows them: mapped_shown), the largest of the runs */
	bool swapped;     /* system swap rose by TABLE_SWAP_FLOOR or more in the stage */
	uint64_t swap_rise; /* the largest rise among the runs behind the bar */
};

#define LEGEND_MAX 24     /* legend items */
#define LEGEND_ROW_PX 20
#define EXPLAIN_PX 24     /* the line that says what a bar is */

struct legend_item {
	char *text;
	size_t mode;      /* its colour */
	int kind;         /* 0 bar, 1 hatched bar (supplement), 2 swap outline, 3 light bar
			   * (mapped model files) */
};

struct bars {
	const struct table *t;
	size_t ns, nm;
	struct bar_cell *cells; /* ns * nm, cells[s * nm + m] */
	char **notes;           /* the text above each bar, lines split by \n */
	double ymax;
	int width, height;
	double top_px, bottom_px, plot_px;
	double bar;             /* bar width in x units (a stage is 1) */
	int xtics_angle;        /* 0, 30 or 90 degrees */
	size_t xtics_every;     /* every k-th stage named under the axis (the last always) */
	bool rotate_notes;
	bool one_line;          /* rotated notes joined into one line each */
	bool any_swap;          /* a bar is marked for swap */
	bool any_mapped;        /* a bar stacks mapped model files */
	double yrange_max;
	double ram_gb;          /* the RAM line; 0 for none */
	struct legend_item legend[LEGEND_MAX];
	size_t nlegend;
	double legend_px;       /* rows of the legend */
};

static void bar_value(struct bar_cell *c, uint64_t lo, uint64_t hi)
{
	double l = plot_gb(lo), h = plot_gb(hi);
	if (!c->valued || l < c->lo)
		c->lo = l;
	if (!c->valued || h > c->hi)
		c->hi = h;
}

/* The bar's height: the footprint, and the mapped model files on it. */
static double bar_top(const struct bar_cell *c)
{
	return c->hi + c->mapped;
}

static void cell_from_table(const struct table *t, size_t s, size_t m, struct bar_cell *c)
{
	const struct table_cell *tc = table_cell(t, s, m);
	if (t->mapped_shown && tc->has_mapped)
		c->mapped = plot_gb(tc->mapped_max);
	c->runs = t->modes[m].nruns;
	c->reached = tc->nentered;
	c->supplement = tc->from_supplement;
	c->swapped = tc->swap_rose;
	c->swap_rise = tc->swap_max;
	if (tc->ncompleted) {
		bar_value(c, tc->min_bytes, tc->max_bytes);
		c->valued += tc->ncompleted;
	}
	for (size_t k = 0; k < tc->nendings; k++) {
		const struct table_ending *e = &tc->endings[k];
		c->ended += e->nruns;
		c->stopped |= e->outcome == RUN_GUARD;
		if (e->nsampled) {
			bar_value(c, e->min_bytes, e->max_bytes);
			c->valued += e->nsampled;
		}
	}
}

/* Value, then what happened, one per line. */
static char *cell_note(const struct bar_cell *c)
{
	struct strbuf t = STRBUF_INIT;
	if (!c->reached) {
		strbuf_addstr(&t, "not\nreached");
		return strbuf_detach(&t);
	}
	if (c->valued)
		units_add_gb_label(&t, bar_top(c), false);
	else
		strbuf_addstr(&t, "no sample");
	if (c->swapped) {
		strbuf_addstr(&t, "\nswap ");
		units_add_size(&t, (double)c->swap_rise, UNITS_COARSE, true);
	}
	/* "stopped" when every run that got here ended here */
	const char *how = c->stopped ? "stopped" : "ended";
	if (c->ended && c->ended == c->reached)
		strbuf_addf(&t, "\n%s", how);
	else if (c->ended)
		strbuf_addf(&t, "\n%zu %s", c->ended, how);
	if (c->reached < c->runs)
		strbuf_addf(&t, "\n%zu/%zu runs", c->reached, c->runs);
	return strbuf_detach(&t);
}

static void build_cells(const struct plot_model *pm, struct bars *B)
{
	const struct table *t = &pm->table;
	B->t = t;
	B->ns = t->nstages;
	B->nm = t->nmodes;
	B->cells = xcalloc((B->ns ? B->ns : 1) * (B->nm ? B->nm : 1), sizeof(*B->cells));
	B->notes = xcalloc((B->ns ? B->ns : 1) * (B->nm ? B->nm : 1), sizeof(*B->notes));
	for (size_t s = 0; s < B->ns; s++)
		for (size_t m = 0; m < B->nm; m++) {
			struct bar_cell *c = &B->cells[s * B->nm + m];
			cell_from_table(t, s, m, c);
			B->any_swap |= c->swapped;
			B->any_mapped |= c->valued && c->mapped > 0;
			if (c->valued && bar_top(c) > B->ymax)
				B->ymax = bar_top(c);
			B->notes[s * B->nm + m] = cell_note(c);
		}
}

/* The last two components of a path: where a supplement came from, short. */
static const char *short_path(const char *path)
{
	const char *p = path + strlen(path), *cut = path;
	int slashes = 0;
	while (p > path)
		if (*--p == '/' && ++slashes == 2) {
			cut = p + 1;
			break;
		}
	return cut;
}

static void legend_add(struct bars *B, char *text, size_t mode, int kind)
{
	if (B->nlegend == LEGEND_MAX) {
		free(text);
		return;
	}
	B->legend[B->nlegend++] = (struct legend_item){ text, mode, kind };
}

/* One entry per mode, then one per supplement that fills a bar, naming its file. */
static void build_legend(const struct plot_model *pm, struct bars *B)
{
	for (size_t m = 0; m < B->nm; m++)
		legend_add(B, xstrdup(B->t->modes[m].name), m, 0);
	if (B->any_mapped)
		legend_add(B, xstrdup("mapped model files, above the footprint (light)"), 0, 3);
	if (B->any_swap) {
		char floor[UNITS_BUF];
		legend_add(B, xasprintf("system swap rose in the stage (by %s or more)",
					units_size((double)TABLE_SWAP_FLOOR, UNITS_COARSE, false, floor)),
			   0, 2);
	}
	for (size_t i = 0; i < pm->nanalyses; i++) {
		const struct analysis *a = &pm->analyses[i].a;
		if (!pm->analyses[i].supplement)
			continue;
		size_t m, s;
		for (m = 0; m < B->nm; m++)
			if (!strcmp(B->t->modes[m].name, a->mode))
				break;
		for (s = 0; m < B->nm && s < B->ns; s++)
			if (B->cells[s * B->nm + m].supplement && analysis_stage(a, B->t->stages[s]))
				break;
		if (m == B->nm || s == B->ns)
			continue; /* it filled no bar */
		char how[96];
		legend_add(B, xasprintf("%s, supplement: %s (%s)", a->mode,
					a->path ? short_path(a->path) : "(trace)",
					analysis_outcome_str(a, how, sizeof(how))), m, 1);
	}
}

/* The legend laid out in rows (gp_legend_rows); returns their number. */
static int legend_rows(const struct bars *B, double *x_px, int *row)
{
	const char *texts[LEGEND_MAX];
	for (size_t i = 0; i < B->nlegend; i++)
		texts[i] = B->legend[i].text;
	return gp_legend_rows(texts, B->nlegend, x_px, row);
}

/* Longest line and number of lines of a note. */
static void note_extent(const char *t, size_t *longest, size_t *lines)
{
	size_t cur = 0;
	*longest = 0;
	*lines = 1;
	for (; *t; t++) {
		if (*t == '\n') {
			(*lines)++;
			cur = 0;
		} else if (++cur > *longest) {
			*longest = cur;
		}
	}
}

/* The label text of cell i: its lines, or for rotated notes too many lines
 * to stand side by side over the bar, one line ("not reached" stays a phrase). */
static char *note_text(const struct bars *B, size_t i, bool one_line)
{
	const char *t = B->notes[i];
	if (!one_line)
		return xstrdup(t);
	struct strbuf sb = STRBUF_INIT;
	for (; *t; t++)
		if (*t != '\n')
			strbuf_addch(&sb, *t);
		else
			strbuf_addstr(&sb, B->cells[i].reached ? ", " : " ");
	return strbuf_detach(&sb);
}

/* The room (px) above a bar its note takes. */
static double note_room(const struct bars *B, size_t i, bool one_line)
{
	char *t = note_text(B, i, one_line);
	size_t longest, lines;
	note_extent(t, &longest, &lines);
	double px = B->rotate_notes ? (double)longest * CHAR_PX + 12 : (double)lines * 14 + 10;
	free(t);
	return px > B->plot_px * 0.6 ? B->plot_px * 0.6 : px;
}

/* Notes rotated when a line is wider than its bar; rotated lines side by side
 * when they fit the bar. Then the y range: every bar with its note, and the
 * RAM line, with a small margin. */
static void fit_notes(struct bars *B, double bar_px)
{
	size_t longest_line = 0, most_lines = 1;
	for (size_t i = 0; i < B->ns * B->nm; i++) {
		size_t longest, lines;
		note_extent(B->notes[i], &longest, &lines);
		if (longest > longest_line)
			longest_line = longest;
		if (lines > most_lines)
			most_lines = lines;
	}
	/* CHAR_PX is generous for digits: a line may overhang the bar a little */
	B->rotate_notes = (double)longest_line * CHAR_PX > bar_px * 1.2;
	B->one_line = B->rotate_notes && (double)most_lines * 13 > bar_px * 1.3;
	double need = B->ram_gb * 1.03;
	for (size_t i = 0; i < B->ns * B->nm; i++) {
		double hi = B->cells[i].valued ? bar_top(&B->cells[i]) : 0;
		double y = hi / (1 - note_room(B, i, B->one_line) / B->plot_px);
		if (y > need)
			need = y;
	}
	B->yrange_max = gp_axis_max(need > 0 ? need : 1);
}

/* A stage name under the axis: at most XTIC_CHARS characters, cut with "…". */
#define XTIC_CHARS 28
static char *xtic_text(const char *name)
{
	size_t chars = 0, i = 0;
	for (; name[i]; i++)
		if (((unsigned char)name[i] & 0xc0) != 0x80 && ++chars > XTIC_CHARS - 1)
			break;
	if (!name[i])
		return xstrdup(name);
	return xasprintf("%.*s\u2026", (int)i, name);
}

/* Stage names under the axis that never collide: level when they fit their
 * slot, at 30 degrees when a slot holds a slanted line, upright (and only every
 * k-th name, the last always) when not even that. Returns the extra height. */
static double xtics_layout(struct bars *B, double slot_px)
{
	size_t longest = 0;
	for (size_t s = 0; s < B->ns; s++) {
		char *t = xtic_text(B->t->stages[s]);
		if (strlen(t) > longest)
			longest = strlen(t);
		free(t);
	}
	const double line_px = 13; /* a 9 pt line, across its slant */
	B->xtics_every = 1;
	if ((double)longest * CHAR_PX + 8 <= slot_px) {
		B->xtics_angle = 0;
		return 0;
	}
	if (slot_px >= line_px * 2) { /* sin 30 = 1/2 */
		B->xtics_angle = 30;
		return (double)longest * CHAR_PX * 0.5 + 6;
	}
	B->xtics_angle = 90;
	B->xtics_every = (size_t)ceil(line_px / slot_px);
	return (double)longest * CHAR_PX - 30;
}

/* Bars, x tick labels, legend rows and the room they need. */
static void stages_geometry(struct bars *B, const struct plot_opts *o, double *lx, int *lrow)
{
	B->width = FIG_W;
	int nrows = legend_rows(B, lx, lrow);
	B->legend_px = nrows * LEGEND_ROW_PX;
	B->top_px = (o->title ? FIG_TITLE_PX : 0) + EXPLAIN_PX + B->legend_px + 12;
	B->bottom_px = 60 + (o->note ? FIG_NOTE_PX : 0);
	double group = 0.8;
	B->bar = group / (double)(B->nm ? B->nm : 1);
	double slot_px = (RIGHT_PX - LEFT_PX) / (double)(B->ns ? B->ns : 1);
	if (B->bar * slot_px > 110) /* few stages: bars no wider than 110 px */
		B->bar = 110 / slot_px;
	double xtics_px = xtics_layout(B, slot_px);
	B->bottom_px += xtics_px;
	B->plot_px = 384 - xtics_px;
	B->height = (int)ceil(B->top_px + B->plot_px + B->bottom_px);
	fit_notes(B, slot_px * B->bar);
}

static double bar_x(const struct bars *B, size_t s, size_t m)
{
	return (double)s + ((double)m - (double)(B->nm - 1) / 2) * B->bar;
}

/* One label above each bar: its lines, rotated when wider than the bar. */
static void note_labels(struct strbuf *sb, const struct bars *B)
{
	for (size_t s = 0; s < B->ns; s++) {
		for (size_t m = 0; m < B->nm; m++) {
			size_t i = s * B->nm + m;
			const struct bar_cell *c = &B->cells[i];
			double x = bar_x(B, s, m), y = c->valued ? bar_top(c) : 0;
			char *text = note_text(B, i, B->one_line);
			size_t longest, lines;
			note_extent(text, &longest, &lines);
			strbuf_addstr(sb, "set label ");
			gp_quote(sb, text);
			free(text);
			const char *color = !c->reached ? "#777777" : c->ended ? COLOR_STOP :
					    c->swapped ? COLOR_SWAP : COLOR_NOTE;
			if (B->rotate_notes) /* lines side by side, centred on the bar */
				strbuf_addf(sb, " at %.4f, %.4f rotate by 90 left offset %.2f,0.5", x, y,
					    -(double)(lines - 1) * 0.55);
			else /* gnuplot centres a label's first line on its anchor */
				strbuf_addf(sb, " at %.4f, %.4f center offset 0,%.2f", x, y,
					    (double)(lines - 1) * 1.05 + 0.8);
			strbuf_addf(sb, " font '%s' tc rgb '%s' front\n", SMALL_FONT, color);
		}
	}
}

/* Whiskers shorter than this (GB) would hide under their own heads: not drawn,
 * and the explanation says so when a cell has one. */
#define MIN_WHISKER_GB 0.05

static bool has_range(const struct bar_cell *c)
{
	return c->valued > 1 && c->hi - c->lo >= MIN_WHISKER_GB;
}

/* Some cell of several runs has a range too small to draw. */
static bool hidden_ranges(const struct bars *B)
{
	for (size_t i = 0; i < B->ns * B->nm; i++) {
		const struct bar_cell *c = &B->cells[i];
		if (c->valued > 1 && c->hi > c->lo && !has_range(c))
			return true;
	}
	return false;
}

/* Whether a bar of mode m stacks mapped model files. */
static bool mode_maps(const struct bars *B, size_t m)
{
	for (size_t s = 0; s < B->ns; s++)
		if (B->cells[s * B->nm + m].valued && B->cells[s * B->nm + m].mapped > 0)
			return true;
	return false;
}

/* $mapM: the mapped model files' part of mode M's bars (x, its top, width), drawn
 * under the footprint's box of the same bar; none for a mode with no such bar. */
static void mapped_blocks(struct strbuf *sb, const struct bars *B)
{
	for (size_t m = 0; m < B->nm; m++) {
		if (!mode_maps(B, m))
			continue;
		strbuf_addf(sb, "$map%zu << EOD\n", m);
		for (size_t s = 0; s < B->ns; s++) {
			const struct bar_cell *c = &B->cells[s * B->nm + m];
			if (c->valued && c->mapped > 0)
				strbuf_addf(sb, "%.4f %.4f %.4f\n", bar_x(B, s, m), bar_top(c),
					    B->bar * 0.9);
		}
		strbuf_addstr(sb, "EOD\n");
	}
}

/* $barsM (main runs) and $supM (supplements, hatched): x, top, width, whisker low and high. */
static void bar_blocks(struct strbuf *sb, const struct bars *B)
{
	mapped_blocks(sb, B);
	for (size_t m = 0; m < B->nm; m++)
		for (int sup = 0; sup < 2; sup++) {
			strbuf_addf(sb, "$%s%zu << EOD\n", sup ? "sup" : "bars", m);
			for (size_t s = 0; s < B->ns; s++) {
				const struct bar_cell *c = &B->cells[s * B->nm + m];
				if (!c->valued || c->supplement != (sup == 1))
					continue;
				double x = bar_x(B, s, m);
				/* whiskers only where there is a range: NaN skips them */
				if (has_range(c))
					strbuf_addf(sb, "%.4f %.4f %.4f %.4f %.4f\n", x, c->hi,
						    B->bar * 0.9, c->lo, c->hi);
				else
					strbuf_addf(sb, "%.4f %.4f %.4f NaN NaN\n", x, c->hi, B->bar * 0.9);
			}
			strbuf_addstr(sb, "EOD\n");
		}
	if (!B->any_swap)
		return;
	strbuf_addstr(sb, "$swap << EOD\n");
	for (size_t s = 0; s < B->ns; s++)
		for (size_t m = 0; m < B->nm; m++) {
			const struct bar_cell *c = &B->cells[s * B->nm + m];
			if (c->swapped)
				strbuf_addf(sb, "%.4f %.4f %.4f\n", bar_x(B, s, m), c->valued ? bar_top(c) : 0,
					    B->bar * 0.9);
		}
	strbuf_addstr(sb, "EOD\n");
}

/* The legend, drawn here (not gnuplot's key) so that it wraps into rows. */
static void stages_legend(struct strbuf *sb, const struct bars *B, const double *x_px, const int *row,
		   double top_px)
{
	const double sample_px = GP_LEGEND_SAMPLE_PX, gap_px = GP_LEGEND_GAP_PX;
	for (size_t i = 0; i < B->nlegend; i++) {
		const struct legend_item *it = &B->legend[i];
		double yc = top_px + LEGEND_ROW_PX * (row[i] + 0.5);
		double y0 = 1 - (yc + 5) / B->height, y1 = 1 - (yc - 5) / B->height;
		const char *color = gp_mode_color(it->mode);
		strbuf_addf(sb, "set object rect from screen %.4f, screen %.4f to screen %.4f, screen %.4f "
				"fc rgb '%s' ", x_px[i] / FIG_W, y0, (x_px[i] + sample_px) / FIG_W, y1,
			    color);
		if (it->kind == 1)
			strbuf_addf(sb, "fs transparent pattern 4 border lc rgb '%s' front\n", color);
		else if (it->kind == 2)
			strbuf_addstr(sb, "fs empty border lc rgb '" COLOR_SWAP "' lw 2 front\n");
		else if (it->kind == 3)
			strbuf_addstr(sb, "fs transparent solid 0.3 noborder front\n");
		else
			strbuf_addstr(sb, "fs solid 0.85 noborder front\n");
		strbuf_addstr(sb, "set label ");
		gp_quote(sb, it->text);
		strbuf_addf(sb, " at screen %.4f, screen %.4f left front\n",
			    (x_px[i] + sample_px + gap_px) / FIG_W, 1 - yc / B->height);
	}
	strbuf_addstr(sb, "unset key\n");
}

/* The machine's RAM as a dashed line, its label on the line at the left. */
static void ram_line(struct strbuf *sb, const struct bars *B)
{
	if (!(B->ram_gb > 0))
		return;
	gp_ram_line(sb, B->ram_gb);
}

static void stages_axes(struct strbuf *sb, const struct bars *B, const struct plot_opts *o)
{
	double explain_px = (o->title ? FIG_TITLE_PX : 0) + EXPLAIN_PX / 2.0;
	if (B->any_mapped)
		strbuf_addf(sb, "set label 'Peak footprint + mapped model files per stage (GB = 2^30 "
				"bytes): the highest run, whiskers = footprint range%s' at screen 0.5, "
				"screen %.4f center\n",
			    hidden_ranges(B) ? " (under 50 MB: not drawn)" : "", 1 - explain_px / B->height);
	else
		strbuf_addf(sb, "set label 'Peak footprint per stage (GB = 2^30 bytes): bar = the highest "
				"run, whiskers = range across runs%s' at screen 0.5, screen %.4f center\n",
			    hidden_ranges(B) ? " (under 50 MB: not drawn)" : "", 1 - explain_px / B->height);
	strbuf_addf(sb, "set tmargin at screen %.4f\nset bmargin at screen %.4f\n"
			"set lmargin at screen %.4f\nset rmargin at screen %.4f\n",
		    1 - B->top_px / B->height, B->bottom_px / B->height, LEFT_PX / B->width,
		    RIGHT_PX / B->width);
	strbuf_addf(sb, "set xrange [-0.5:%.1f]\nset yrange [0:%s]\n", (double)B->ns - 0.5,
		    gp_bound(B->yrange_max).s);
	strbuf_addf(sb, "set ylabel '%s' offset 1,0\n",
		    B->any_mapped ? "footprint + model files (GB)" : "peak footprint (GB)");
	strbuf_addstr(sb, "set ytics nomirror\nset tics out scale 0.5\n"
			  "set border 3 lc rgb '#888888'\n"
			  "set grid ytics lc rgb '#dddddd' lt 1\n"
			  "set style fill solid 0.85 noborder\n"
			  "set style textbox opaque noborder margins 2,1\n"
			  "set xtics nomirror scale 0 (");
	bool first = true;
	for (size_t s = 0; s < B->ns; s++) {
		size_t k = B->xtics_every;
		/* every k-th name, and the last, with no name within k before it */
		if (s + 1 != B->ns && (s % k || B->ns - 1 - s < k))
			continue;
		char *t = xtic_text(B->t->stages[s]);
		strbuf_addstr(sb, first ? "" : ", ");
		gp_quote(sb, t);
		strbuf_addf(sb, " %zu", s);
		free(t);
		first = false;
	}
	strbuf_addstr(sb, ")");
	if (B->xtics_angle)
		strbuf_addf(sb, " rotate by %d right", B->xtics_angle);
	strbuf_addstr(sb, "\n");
	ram_line(sb, B);
	gp_fig_title(sb, o->title, B->height);
	gp_fig_note(sb, o->note, B->height);
}

static void plot_command(struct strbuf *sb, const struct bars *B)
{
	strbuf_addstr(sb, "plot ");
	bool first = true;
	for (size_t m = 0; m < B->nm; m++) {
		if (!mode_maps(B, m))
			continue;
		strbuf_addf(sb, "%s$map%zu using 1:2:3 with boxes lc rgb '%s' fs transparent solid 0.3 "
				"noborder notitle", first ? "" : ", \\\n     ", m, gp_mode_color(m));
		first = false;
	}
	for (size_t m = 0; m < B->nm; m++)
		for (int sup = 0; sup < 2; sup++) {
			size_t valued = 0, ranged = 0;
			for (size_t s = 0; s < B->ns; s++) {
				const struct bar_cell *c = &B->cells[s * B->nm + m];
				if (c->supplement != (sup == 1))
					continue;
				valued += c->valued > 0;
				ranged += has_range(c);
			}
			if (!valued)
				continue;
			const char *name = sup ? "sup" : "bars", *color = gp_mode_color(m);
			strbuf_addf(sb, "%s$%s%zu using 1:2:3 with boxes lc rgb '%s'", first ? "" : ", \\\n     ",
				    name, m, color);
			if (sup)
				strbuf_addf(sb, " fs transparent pattern 4 border lc rgb '%s'", color);
			strbuf_addstr(sb, " notitle");
			if (ranged)
				strbuf_addf(sb, ", \\\n     $%s%zu using 1:4:(0):($5-$4) with vectors "
						"heads size screen 0.006,90 lc rgb '#222222' lw 1.2 notitle",
					    name, m);
			first = false;
		}
	if (B->any_swap) {
		strbuf_addf(sb, "%s$swap using 1:2:3 with boxes lc rgb '%s' lw 2 fs empty border "
				"lc rgb '%s' notitle", first ? "" : ", \\\n     ", COLOR_SWAP, COLOR_SWAP);
		first = false;
	}
	if (first)
		strbuf_addstr(sb, "NaN notitle");
	strbuf_addstr(sb, "\nset output\n");
}

/* The RAM line: the largest RAM among the runs, when the bars would not be
 * flattened by it (as in the memory chart). */
static double ram_of(const struct plot_model *m, double ymax)
{
	double ram = 0;
	for (size_t i = 0; i < m->nruns; i++)
		if (plot_gb(m->runs[i].ram_bytes) > ram)
			ram = plot_gb(m->runs[i].ram_bytes);
	return ram > 0 && ram <= 4 * ymax ? ram : 0;
}

void plot_stages_script(struct strbuf *sb, const struct plot_model *m, const struct plot_opts *o,
			const char *out_path)
{
	struct bars B = { 0 };
	struct strbuf labels = STRBUF_INIT;
	double lx[LEGEND_MAX];
	int lrow[LEGEND_MAX];
	build_cells(m, &B);
	build_legend(m, &B);
	B.ram_gb = ram_of(m, B.ymax);
	stages_geometry(&B, o, lx, lrow);
	note_labels(&labels, &B);

	gp_header(sb, o->format, B.width, B.height, out_path);
	bar_blocks(sb, &B);
	stages_axes(sb, &B, o);
	stages_legend(sb, &B, lx, lrow, (o->title ? FIG_TITLE_PX : 0) + EXPLAIN_PX);
	strbuf_addstr(sb, strbuf_str(&labels));
	plot_command(sb, &B);

	for (size_t i = 0; i < B.ns * B.nm; i++)
		free(B.notes[i]);
	for (size_t i = 0; i < B.nlegend; i++)
		free(B.legend[i].text);
	free(B.notes);
	free(B.cells);
	strbuf_release(&labels);
}
