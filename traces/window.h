/* window.h -- the stage-window rule, in one place (traces/FORMAT.md, "Stage windows")
 *
 * A stage's memory is judged over its window. The rule is part of what a
 * trace means, so the recorder (which opens exact kernel-peak windows while
 * the command runs) and the analyzer (which reads a finished trace) both step
 * this one state machine through the events, in the order they see them:
 *
 *   - Each stage event opens a window at its t; the previous window ends
 *     there. Before the first stage event the window is "setup", from the
 *     trace's start.
 *   - When the first stage event is itself named "setup" (stageload's and the
 *     demo's traces), it does not open a new window: setup's window goes on,
 *     still starting at the trace's start.
 *   - A release event of the stage in force (same `stage` name), at or after
 *     that stage's event, moves the window's start to the release's t: the
 *     window starts once the releases that entering the stage triggered are
 *     done. Setup's window, which starts with the trace, is never moved.
 *   - Samples: a window holds a sample at its start (t >= start) and not one
 *     at its end (t < end); the run's last window also holds its last sample.
 *
 * Usage:
 *   struct window_state w = WINDOW_STATE_INIT;
 *   for each event: switch (window_step(&w, ev)) { ... }
 *   window_state_release(&w);
 */
#ifndef SB_WINDOW_H
#define SB_WINDOW_H

#include <stdbool.h>
#include <stddef.h>

struct trace_event;

struct window_state {
	char *stage;     /* the stage in force (a copy); NULL before the first stage
			  * event and for a stage event without a name */
	bool entered;    /* a stage event was seen */
	bool setup;      /* the window in force is setup's (starts with the trace) */
	double stage_t;  /* its stage event's t; 0 for setup */
	double start_t;  /* the window's start: -INFINITY for setup, else stage_t
			  * or the t of the last release that moved it */
	size_t nreleases;/* releases that entering the stage triggered (WINDOW_RELEASE, WINDOW_MOVE) */
};
#define WINDOW_STATE_INIT { .setup = true, .start_t = -__builtin_inf() }

enum window_step {
	WINDOW_NONE = 0,  /* the event changes no window */
	WINDOW_OPEN,      /* a stage event: a window opens at ev->t, the previous one ends there */
	WINDOW_SETUP,     /* the first stage event, named "setup": setup's window goes on */
	WINDOW_MOVE,      /* a release of the stage in force: its window now starts at ev->t */
	WINDOW_RELEASE,   /* a release of the stage in force that moves nothing (setup's window) */
};

/* Apply one event to the rule; returns what it did to the window in force. */
enum window_step window_step(struct window_state *w, const struct trace_event *ev);
void window_state_release(struct window_state *w);
/* True when ev, applied next, would be the first stage event named "setup"
 * (WINDOW_SETUP): the window in force goes on instead of a new one opening. */
bool window_continues(const struct window_state *w, const struct trace_event *ev);
/* The name of the stage whose window is in force: "setup" before the first
 * stage event, NULL for a stage event without a name. */
const char *window_stage(const struct window_state *w);

/* Whether a window [start, end) holds a sample at t (see the rule above). */
static inline bool window_holds(double start, double end, bool last, double t)
{
	return t >= start && (last || t < end);
}

#endif
