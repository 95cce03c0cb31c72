/* test_loop.c -- the record engine's timer and fd dispatcher (runner/loop.h) */
#include <criterion/criterion.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "../../common/util.h"
#include "../../runner/loop.h"

struct log {
	char seq[64];
	size_t n;
	int t_a, t_b;
	int fires;
	int pipe[2];
};

static void put(struct log *g, char c)
{
	if (g->n + 1 < sizeof(g->seq))
		g->seq[g->n++] = c;
}

static void on_check(struct loop *l, int64_t now, void *arg)
{
	put(arg, 'c');
}

/* a: fires three times, 1 ms apart, then stops the loop */
static void on_a(struct loop *l, int64_t now, void *arg)
{
	struct log *g = arg;
	put(g, 'a');
	if (++g->fires == 3)
		loop_stop(l);
	else
		loop_timer_set(l, g->t_a, now + 1000000);
}

/* b: moves a away before a's turn in the same pass, so a does not fire */
static void on_b(struct loop *l, int64_t now, void *arg)
{
	struct log *g = arg;
	put(g, 'b');
	loop_timer_set(l, g->t_a, now + 1000000);
}

Test(loop, timers_fire_in_order_once_per_deadline_and_stop_ends_the_turn)
{
	struct loop l;
	struct log g;
	memset(&g, 0, sizeof(g));
	loop_init(&l);
	loop_add_check(&l, on_check, &g);
	int64_t now = mono_ns();
	g.t_a = loop_add_timer(&l, now, on_a, &g);
	g.t_b = loop_add_timer(&l, LOOP_NEVER, on_b, &g);
	loop_run(&l);
	/* each turn: the check, then a; b never (off); a re-armed each time */
	cr_assert_str_eq(g.seq, "cacaca");
	cr_assert_eq(loop_timer_when(&l, g.t_b), LOOP_NEVER);
}

Test(loop, a_timer_moved_later_in_the_same_pass_does_not_fire)
{
	struct loop l;
	struct log g;
	memset(&g, 0, sizeof(g));
	loop_init(&l);
	int64_t now = mono_ns();
	/* b is added first so it runs first and moves a (due now) later */
	g.t_b = loop_add_timer(&l, now, on_b, &g);
	g.t_a = loop_add_timer(&l, now, on_a, &g);
	loop_run(&l);
	cr_assert_str_eq(g.seq, "baaa", "got %s", g.seq);
}

static void on_fd(struct loop *l, int fd, short revents, void *arg)
{
	struct log *g = arg;
	char c;
	cr_assert(revents & POLLIN);
	cr_assert_eq(read(fd, &c, 1), 1);
	put(g, c);
	loop_del_fd(l, fd);
	loop_stop(l);
}

static void on_write(struct loop *l, int64_t now, void *arg)
{
	struct log *g = arg;
	put(g, 'w');
	cr_assert_eq(write(g->pipe[1], "x", 1), 1);
}

Test(loop, a_ready_descriptor_runs_its_handler)
{
	struct loop l;
	struct log g;
	memset(&g, 0, sizeof(g));
	cr_assert_eq(pipe(g.pipe), 0);
	loop_init(&l);
	loop_add_fd(&l, g.pipe[0], POLLIN, on_fd, &g);
	loop_add_timer(&l, mono_ns() + 2000000, on_write, &g);
	loop_run(&l);
	cr_assert_str_eq(g.seq, "wx");
	cr_assert_eq(l.fds[0].fd, -1);
	close(g.pipe[0]);
	close(g.pipe[1]);
}
