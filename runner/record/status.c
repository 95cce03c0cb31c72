/* status.c -- the status line redrawn on the terminal while a command is recorded */

#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../../common/units.h"
#include "../../common/util.h"
#include "record_int.h"

/* The run whose status line is on the terminal (one at a time). */
static struct run *status_run;

void status_clear(struct run *r)
{
	if (r->status_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		r->status_shown = false;
	}
	if (status_run == r) {
		status_run = NULL;
		sb_report_hook = NULL;
	}
}

/* sb_report_hook: a message clears the status line first (the next refresh
 * draws it again below the message). */
static void status_clear_for_message(void)
{
	if (status_run)
		status_clear(status_run);
}

static int terminal_columns(void)
{
	struct winsize ws;
	if (!ioctl(2, TIOCGWINSZ, &ws) && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

/* A name from the command (a stage) as the terminal should see it: control
 * bytes (a newline, an escape sequence's ESC) become '?'. */
static void add_printable(struct strbuf *sb, const char *s)
{
	for (; *s; s++)
		strbuf_addch(sb, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

/* One line on stderr, redrawn in place a few times a second while the command
 * runs (only on a terminal, not under NO_COLOR or -q):
 *   [2/4] staged run 1  stage preprocess  footprint 1.2 GB  peak 1.4 GB
 *   swap +12 MB  available 63%  12.5 s
 * cut to the terminal's width so that it never wraps. */
void status_update(struct run *r, int64_t now)
{
	if (!r->o->status_line || sb_verbosity < 1 || !stderr_is_tty() || !r->have_sample)
		return;
	const struct trace_sample *s = &r->last_sample;
	const char *label = r->o->status_label ? r->o->status_label : r->o->mode;
	struct strbuf sb = STRBUF_INIT;
	char el[32];
	if (label) {
		add_printable(&sb, label);
		strbuf_addstr(&sb, "  ");
	}
	strbuf_addstr(&sb, "stage ");
	add_printable(&sb, r->win.stage ? r->win.stage : "-");
	if (s->fields & SF_FOOTPRINT) {
		strbuf_addstr(&sb, "  footprint ");
		units_add_size(&sb, (double)s->footprint, UNITS_COARSE, false);
		strbuf_addstr(&sb, "  peak ");
		units_add_size(&sb, (double)r->res->peak_footprint, UNITS_COARSE, false);
	}
	if ((s->fields & SF_SWAP_USED) && r->have_swap0) {
		strbuf_addstr(&sb, "  swap ");
		units_add_size(&sb, (double)s->swap_used - (double)r->swap0, UNITS_COARSE, true);
	}
	if (s->fields & SF_LEVEL)
		strbuf_addf(&sb, "  available %.0f%%", s->level);
	format_duration(now - r->spawn_ns, el);
	strbuf_addf(&sb, "  %s", el);
	int cols = terminal_columns() - 1;
	fprintf(stderr, "\r\033[K%.*s", cols, sb.buf);
	fflush(stderr);
	strbuf_release(&sb);
	r->status_shown = true;
	status_run = r;
	sb_report_hook = status_clear_for_message;
}
