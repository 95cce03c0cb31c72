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
	double lo, hi;    /* GB */
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
	bool rotate_xtics, rotate_notes;
	double yrange_max;
};

static void bar_value(struct bar_cell *c, uint64_t lo, uint64_t hi)
{
	double l = plot_gb(lo), h = plot_gb(hi);
	if (!c->valued || l < c->lo)
		c->lo = l;
	if (!c->valued || h > c->hi)
		c->hi = h;
}

static void cell_from_table(const struct table *t, size_t s, size_t m, struct bar_cell *c)
{
	const struct table_cell *tc = table_cell(t, s, m);
	c->runs = t->modes[m].nruns;
	c->reached = tc->nentered;
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
		units_add_gb_label(&t, c->hi, false);
	else
		strbuf_addstr(&t, "no sample");
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

static void build_cells(const struct table *t, struct bars *B)
{
	B->t = t;
	B->ns = t->nstages;
	B->nm = t->nmodes;
	B->cells = xcalloc((B->ns ? B->ns : 1) * (B->nm ? B->nm : 1), sizeof(*B->cells));
	B->notes = xcalloc((B->ns ? B->ns : 1) * (B->nm ? B->nm : 1), sizeof(*B->notes));
	for (size_t s = 0; s < B->ns; s++)
		for (size_t m = 0; m < B->nm; m++) {
			struct bar_cell *c = &B->cells[s * B->nm + m];
			cell_from_table(t, s, m, c);
			if (c->valued && c->hi > B->ymax)
				B->ymax = c->hi;
			B->notes[s * B->nm + m] = cell_note(c);
		}
}

/* Bars, x tick labels and the room they need; notes rotated when too wide. */
static void geometry(struct bars *B)
{
	B->width = FIG_W;
	B->height = 500;
	B->top_px = 66;
	B->bottom_px = 60;
	double group = 0.8;
	B->bar = group / (double)(B->nm ? B->nm : 1);
	double slot_px = (RIGHT_PX - LEFT_PX) / (double)(B->ns ? B->ns : 1);
	if (B->bar * slot_px > 110) /* few stages: bars no wider than 110 px */
		B->bar = 110 / slot_px;
	double bar_px = slot_px * B->bar;
	size_t longest_stage = 0;
	for (size_t s = 0; s < B->ns; s++)
		if (strlen(B->t->stages[s]) > longest_stage)
			longest_stage = strlen(B->t->stages[s]);
	B->rotate_xtics = (double)longest_stage * CHAR_PX + 8 > slot_px;
	if (B->rotate_xtics)
		B->bottom_px += (double)longest_stage * CHAR_PX * 0.5;
	B->plot_px = B->height - B->top_px - B->bottom_px;

	size_t longest_line = 0, longest_note = 0, most_lines = 1;
	for (size_t i = 0; i < B->ns * B->nm; i++) {
		const char *t = B->notes[i];
		size_t lines = 1, cur = 0;
		for (const char *q = t; *q; q++) {
			if (*q == '\n') {
				lines++;
				cur = 0;
			} else if (++cur > longest_line) {
				longest_line = cur;
			}
		}
		if (lines > most_lines)
			most_lines = lines;
		if (strlen(t) > longest_note)
			longest_note = strlen(t);
	}
	/* CHAR_PX is generous for digits: a line may overhang the bar a little */
	B->rotate_notes = (double)longest_line * CHAR_PX > bar_px * 1.2;
	double note_px = B->rotate_notes ? (double)longest_note * CHAR_PX + 12 :
					   (double)most_lines * 14 + 10;
	if (note_px > B->plot_px * 0.6)
		note_px = B->plot_px * 0.6;
	B->yrange_max = gp_axis_max((B->ymax > 0 ? B->ymax : 1) / (1 - note_px / B->plot_px));
}

static double bar_x(const struct bars *B, size_t s, size_t m)
{
	return (double)s + ((double)m - (double)(B->nm - 1) / 2) * B->bar;
}

/* One label above each bar: one line each, or one rotated line. */
static void note_labels(struct strbuf *sb, const struct bars *B)
{
	for (size_t s = 0; s < B->ns; s++) {
		for (size_t m = 0; m < B->nm; m++) {
			const struct bar_cell *c = &B->cells[s * B->nm + m];
			double x = bar_x(B, s, m), y = c->valued ? c->hi : 0;
			struct strbuf note = STRBUF_INIT;
			size_t lines = 1;
			for (const char *q = B->notes[s * B->nm + m]; *q; q++) {
				if (*q != '\n') {
					strbuf_addch(&note, *q);
					continue;
				}
				lines++;
				strbuf_addstr(&note, B->rotate_notes ? ", " : "\n");
			}
			strbuf_addstr(sb, "set label ");
			gp_quote(sb, strbuf_str(&note));
			strbuf_release(&note);
			const char *color = !c->reached ? "#777777" : c->ended ? COLOR_STOP : COLOR_NOTE;
			if (B->rotate_notes)
				strbuf_addf(sb, " at %.4f, %.4f rotate by 90 left offset 0,0.5", x, y);
			else /* gnuplot centres a label's first line on its anchor */
				strbuf_addf(sb, " at %.4f, %.4f center offset 0,%.2f", x, y,
					    (double)(lines - 1) * 1.05 + 0.8);
			strbuf_addf(sb, " font '%s' tc rgb '%s' front\n", SMALL_FONT, color);
		}
	}
}

static bool has_range(const struct bar_cell *c)
{
	return c->valued > 1 && c->hi - c->lo >= 0.05;
}

static void bar_blocks(struct strbuf *sb, const struct bars *B)
{
	for (size_t m = 0; m < B->nm; m++) {
		strbuf_addf(sb, "$bars%zu << EOD\n", m);
		for (size_t s = 0; s < B->ns; s++) {
			const struct bar_cell *c = &B->cells[s * B->nm + m];
			if (!c->valued)
				continue;
			double x = bar_x(B, s, m);
			/* whiskers only where there is a range: NaN skips them */
			if (has_range(c))
				strbuf_addf(sb, "%.4f %.4f %.4f %.4f %.4f\n", x, c->hi, B->bar * 0.9,
					    c->lo, c->hi);
			else
				strbuf_addf(sb, "%.4f %.4f %.4f NaN NaN\n", x, c->hi, B->bar * 0.9);
		}
		strbuf_addstr(sb, "EOD\n");
	}
}

static void axes(struct strbuf *sb, const struct bars *B)
{
	strbuf_addf(sb, "set label 'Peak footprint per stage (GB = 2^30 bytes): bar = the highest "
			"run, whiskers = range across runs' at screen 0.5, screen %.4f center\n",
		    1 - 16.0 / B->height);
	strbuf_addf(sb, "set tmargin at screen %.4f\nset bmargin at screen %.4f\n"
			"set lmargin at screen %.4f\nset rmargin at screen %.4f\n",
		    1 - B->top_px / B->height, B->bottom_px / B->height, LEFT_PX / B->width,
		    RIGHT_PX / B->width);
	strbuf_addf(sb, "set xrange [-0.5:%.1f]\nset yrange [0:%s]\n", (double)B->ns - 0.5,
		    gp_bound(B->yrange_max).s);
	strbuf_addstr(sb, "set ylabel 'peak footprint (GB)' offset 1,0\n"
			  "set ytics nomirror\nset tics out scale 0.5\n"
			  "set border 3 lc rgb '#888888'\n"
			  "set grid ytics lc rgb '#dddddd' lt 1\n"
			  "set style fill solid 0.85 noborder\n"
			  "set key horizontal maxrows 1 at screen 0.5, screen 0.94 center top samplen 1.5\n"
			  "set xtics nomirror scale 0 (");
	for (size_t s = 0; s < B->ns; s++) {
		strbuf_addstr(sb, s ? ", " : "");
		gp_quote(sb, B->t->stages[s]);
		strbuf_addf(sb, " %zu", s);
	}
	strbuf_addstr(sb, ")");
	if (B->rotate_xtics)
		strbuf_addstr(sb, " rotate by 30 right");
	strbuf_addstr(sb, "\n");
}

static void plot_command(struct strbuf *sb, const struct bars *B)
{
	strbuf_addstr(sb, "plot ");
	for (size_t m = 0; m < B->nm; m++) {
		size_t valued = 0, ranged = 0;
		for (size_t s = 0; s < B->ns; s++) {
			valued += B->cells[s * B->nm + m].valued > 0;
			ranged += has_range(&B->cells[s * B->nm + m]);
		}
		strbuf_addstr(sb, m ? ", \\\n     " : "");
		if (valued)
			strbuf_addf(sb, "$bars%zu using 1:2:3 with boxes", m);
		else
			strbuf_addstr(sb, "keyentry with boxes");
		strbuf_addf(sb, " lc rgb '%s' title ", gp_mode_color(m));
		gp_quote(sb, B->t->modes[m].name);
		if (ranged)
			strbuf_addf(sb, ", \\\n     $bars%zu using 1:4:(0):($5-$4) with vectors "
					"heads size screen 0.006,90 lc rgb '#222222' lw 1.2 notitle", m);
	}
	if (!B->nm)
		strbuf_addstr(sb, "NaN notitle");
	strbuf_addstr(sb, "\nset output\n");
}

void plot_stages_script(struct strbuf *sb, const struct plot_model *m, const struct plot_opts *o,
			const char *out_path)
{
	struct bars B = { 0 };
	struct strbuf labels = STRBUF_INIT;
	build_cells(&m->table, &B);
	geometry(&B);
	note_labels(&labels, &B);

	gp_header(sb, o->format, B.width, B.height, out_path);
	bar_blocks(sb, &B);
	axes(sb, &B);
	strbuf_addstr(sb, strbuf_str(&labels));
	plot_command(sb, &B);

	for (size_t i = 0; i < B.ns * B.nm; i++)
		free(B.notes[i]);
	free(B.notes);
	free(B.cells);
	strbuf_release(&labels);
}
