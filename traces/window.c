/* window.c -- the stage-window rule (see window.h) */
#include "window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "trace.h"

bool window_continues(const struct window_state *w, const struct trace_event *ev)
{
	return ev->kind == EV_STAGE && !w->entered && ev->stage && !strcmp(ev->stage, "setup");
}

const char *window_stage(const struct window_state *w)
{
	return w->stage ? w->stage : w->setup ? "setup" : NULL;
}

static enum window_step stage_event(struct window_state *w, const struct trace_event *ev)
{
	bool continues = window_continues(w, ev);
	w->entered = true;
	free(w->stage);
	w->stage = ev->stage ? xstrdup(ev->stage) : NULL;
	w->nreleases = 0;
	if (continues) {
		w->setup = true;
		w->stage_t = 0;
		w->start_t = -INFINITY;
		return WINDOW_SETUP;
	}
	w->setup = false;
	w->stage_t = ev->t;
	w->start_t = ev->t;
	return WINDOW_OPEN;
}

enum window_step window_step(struct window_state *w, const struct trace_event *ev)
{
	if (ev->kind == EV_STAGE)
		return stage_event(w, ev);
	if (ev->kind != EV_RELEASE || !w->stage || !ev->stage || strcmp(ev->stage, w->stage) ||
	    ev->t < w->stage_t)
		return WINDOW_NONE;
	w->nreleases++;
	if (w->setup)
		return WINDOW_RELEASE;
	if (ev->t > w->start_t) /* the last release, when they arrive out of order */
		w->start_t = ev->t;
	return WINDOW_MOVE;
}

void window_state_release(struct window_state *w)
{
	if (!w)
		return;
	free(w->stage);
	w->stage = NULL;
}
