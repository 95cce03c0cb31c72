/* test_window.c -- the stage-window rule of traces/window.h, step by step */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "traces/trace.h"
#include "traces/window.h"

static enum window_step step(struct window_state *w, enum event_kind kind, double t,
			     const char *stage)
{
	struct trace_event ev = TRACE_EVENT_INIT;
	ev.kind = kind;
	ev.t = t;
	ev.stage = (char *)stage;
	return window_step(w, &ev);
}

Test(window, setup_before_the_first_stage_event)
{
	struct window_state w = WINDOW_STATE_INIT;
	cr_assert(w.setup);
	cr_assert(isinf(w.start_t) && w.start_t < 0);
	cr_assert_null(w.stage);
	/* a release before any stage event belongs to no stage */
	cr_assert_eq(step(&w, EV_RELEASE, 1, "setup"), WINDOW_NONE);
	cr_assert_eq(step(&w, EV_LOAD, 2, "setup"), WINDOW_NONE);
	cr_assert_eq(step(&w, EV_STAGE, 3, "a"), WINDOW_OPEN);
	cr_assert(!w.setup);
	cr_assert_str_eq(w.stage, "a");
	cr_assert_eq(w.stage_t, 3);
	cr_assert_eq(w.start_t, 3);
	window_state_release(&w);
}

Test(window, releases_of_the_stage_in_force_move_its_start)
{
	struct window_state w = WINDOW_STATE_INIT;
	cr_assert_eq(step(&w, EV_STAGE, 10, "a"), WINDOW_OPEN);
	cr_assert_eq(step(&w, EV_STAGE, 20, "b"), WINDOW_OPEN);
	cr_assert_eq(step(&w, EV_RELEASE, 21, "b"), WINDOW_MOVE);
	cr_assert_eq(w.start_t, 21);
	/* another stage's release, an unnamed one, a load: nothing moves */
	cr_assert_eq(step(&w, EV_RELEASE, 22, "a"), WINDOW_NONE);
	cr_assert_eq(step(&w, EV_RELEASE, 22.5, NULL), WINDOW_NONE);
	cr_assert_eq(step(&w, EV_LOAD, 22.7, "b"), WINDOW_NONE);
	cr_assert_eq(step(&w, EV_RELEASE, 23, "b"), WINDOW_MOVE);
	cr_assert_eq(w.start_t, 23);
	cr_assert_eq(w.nreleases, 2);
	/* a release stamped before its stage's event (a late arrival) is not one of its releases */
	cr_assert_eq(step(&w, EV_RELEASE, 19, "b"), WINDOW_NONE);
	cr_assert_eq(w.start_t, 23);
	/* out of order but after the stage event: the start stays at the last release */
	cr_assert_eq(step(&w, EV_RELEASE, 22, "b"), WINDOW_MOVE);
	cr_assert_eq(w.start_t, 23);
	/* the next stage event starts over */
	cr_assert_eq(step(&w, EV_STAGE, 30, "c"), WINDOW_OPEN);
	cr_assert_eq(w.start_t, 30);
	cr_assert_eq(w.nreleases, 0);
	cr_assert_eq(step(&w, EV_RELEASE, 31, "b"), WINDOW_NONE);
	window_state_release(&w);
}

Test(window, a_first_stage_named_setup_continues_setup)
{
	struct window_state w = WINDOW_STATE_INIT;
	cr_assert_eq(step(&w, EV_STAGE, 5, "setup"), WINDOW_SETUP);
	cr_assert(w.setup);
	cr_assert_eq(w.stage_t, 0);
	cr_assert(isinf(w.start_t) && w.start_t < 0);
	/* its releases count, but setup's window starts with the trace */
	cr_assert_eq(step(&w, EV_RELEASE, 6, "setup"), WINDOW_RELEASE);
	cr_assert(isinf(w.start_t) && w.start_t < 0);
	cr_assert_eq(w.nreleases, 1);
	cr_assert_eq(step(&w, EV_STAGE, 7, "a"), WINDOW_OPEN);
	/* a later "setup" stage is an ordinary stage */
	cr_assert_eq(step(&w, EV_STAGE, 8, "setup"), WINDOW_OPEN);
	cr_assert_eq(step(&w, EV_RELEASE, 9, "setup"), WINDOW_MOVE);
	cr_assert_eq(w.start_t, 9);
	window_state_release(&w);
}

Test(window, a_setup_stage_after_another_is_not_merged)
{
	struct window_state w = WINDOW_STATE_INIT;
	cr_assert_eq(step(&w, EV_STAGE, 1, "a"), WINDOW_OPEN);
	cr_assert_eq(step(&w, EV_STAGE, 2, "setup"), WINDOW_OPEN);
	cr_assert(!w.setup);
	window_state_release(&w);
}

Test(window, an_unnamed_stage_has_no_releases)
{
	struct window_state w = WINDOW_STATE_INIT;
	cr_assert_eq(step(&w, EV_STAGE, 1, NULL), WINDOW_OPEN);
	cr_assert_null(w.stage);
	cr_assert_eq(step(&w, EV_RELEASE, 2, NULL), WINDOW_NONE);
	cr_assert_eq(step(&w, EV_RELEASE, 2, "(unnamed)"), WINDOW_NONE);
	window_state_release(&w);
}

Test(window, boundaries)
{
	cr_assert(window_holds(1, 2, false, 1), "a sample at the start is in");
	cr_assert(!window_holds(1, 2, false, 2), "a sample at the end is out");
	cr_assert(window_holds(1, 2, true, 2), "the last window holds the last sample");
	cr_assert(!window_holds(1, 2, true, 0.999), "before the start is out");
	cr_assert(window_holds(-INFINITY, 2, false, -1e300));
}
