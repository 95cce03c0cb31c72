/* gp.h -- what the chart scripts share: geometry, colours, gnuplot strings, axes (private to plots/)
 *
 * Every chart is placed from the fixed numbers below so that label collisions
 * are worked out here rather than left to gnuplot, and the same model gives
 * the same script bytes.
 */
#ifndef SB_PLOTS_GP_H
#define SB_PLOTS_GP_H

#include "../common/util.h"
#include "plot.h"

#define FIG_W 900
#define FONT "DejaVu Sans,10"
#define TITLE_FONT "DejaVu Sans,13"
#define SMALL_FONT "DejaVu Sans,9"
#define CHAR_PX 6.6       /* average advance of the 9 pt label font, generous */
#define LEFT_PX 70.0      /* left edge of every plot area */
#define RIGHT_PX 880.0    /* right edge */

#define COLOR_FOOTPRINT "#1f4e9c"
#define COLOR_GPU "#2ca02c"
#define COLOR_DEVICE "#9467bd"
#define COLOR_MAPPED "#ff7f0e"
#define COLOR_SWAP "#d62728"
#define COLOR_RAM "#555555"
#define COLOR_STOP "#b00000"
#define COLOR_BAND "#eceff4"
#define COLOR_NOTE "#444444"

/* The colour of the m-th mode (bars, lines), cycling. */
const char *gp_mode_color(size_t m);

/* Any text as a gnuplot double-quoted string, exactly: \, " and newlines
 * escaped, backquotes and other control characters as octal escapes (gnuplot
 * runs `...` as a shell command anywhere on a line, and cannot parse a
 * single-quoted string that starts with a quote). */
void gp_quote(struct strbuf *sb, const char *s);

/* A number as gnuplot reads it: "%.PRECf", or "%.PRECe" from 1e12 on (a time
 * of 1e300 s is not written as 300 digits); NaN when not finite. Use the
 * member at once: gp_num(t, 3).s */
struct gp_num {
	char s[48];
};
struct gp_num gp_num(double v, int prec);
/* An axis bound: like gp_num(v, 3), in "%.3e" below 0.1 so that a range of a
 * few KiB in GB does not print as [0.000:0.000]. */
struct gp_num gp_bound(double v);

/* Axis maximum: a multiple of a nice tick step (about five ticks) >= x. */
double gp_axis_max(double x);

/* --title and --note: the title centred at the top of a figure h px high
 * (FIG_TITLE_PX of it), the note in small print at the bottom left
 * (FIG_NOTE_PX). Nothing for NULL. */
#define FIG_TITLE_PX 30
#define FIG_NOTE_PX 20
void gp_fig_title(struct strbuf *sb, const char *title, int h);
void gp_fig_note(struct strbuf *sb, const char *note, int h);

/* The machine's RAM at `gb`: a dashed line across the plot area, its label
 * "RAM 48.0 GB" on the line at the left, the line starting after it. */
void gp_ram_line(struct strbuf *sb, double gb);

/* A legend laid out here rather than by gnuplot, so that it wraps: items of
 * a GP_LEGEND_SAMPLE_PX sample, GP_LEGEND_GAP_PX, then the text, in rows no
 * wider than the figure, each row centred. x_px[i] is item i's left edge,
 * row[i] its row. Returns the number of rows. */
#define GP_LEGEND_SAMPLE_PX 18.0
#define GP_LEGEND_GAP_PX 5.0
int gp_legend_rows(const char *const *texts, size_t n, double *x_px, int *row);

/* OUT_DIR/NAME.EXT for a chart, the directory created; NULL after error()
 * (no gnuplot on PATH, an unwritable directory). */
char *gp_out_path(const struct plot_opts *o, const char *name);
/* A fresh empty file next to `path` (DIR/.NAME.EXT.XXXXXX, made with O_EXCL)
 * for gnuplot to draw into; caller frees. NULL after error(). */
char *gp_tmp_path(const char *path);
/* Run the script (its output set to `tmp`) through gnuplot; check the chart is
 * whole (a full disk leaves it cut short) and give it its name by rename(), so
 * that a symlink at `path` is replaced, never written through; print the path
 * (unless quiet). Returns 0, or -1 after error(), `tmp` removed. */
int gp_draw(const struct plot_opts *o, const char *path, const char *tmp,
	    const struct strbuf *script);

/* "# generated ...", reset, the terminal, the quoted output path, encoding. */
void gp_header(struct strbuf *sb, enum plot_format fmt, int w, int h, const char *out_path);

#endif
