/* loop.h -- a small timer and file-descriptor dispatcher for the record engine
 *
 * After valkey's ae.c, cut down to what one recorded run needs: a handful of
 * file descriptors watched with poll(), a handful of timers on
 * CLOCK_MONOTONIC, and "check" handlers run at the top of every turn (ae's
 * beforesleep, run before the timers rather than after).
 *
 * One turn of loop_run():
 *   1. now = mono_ns(); every check handler, in the order added;
 *   2. every timer whose deadline is <= now, in the order added (a handler
 *      may move any timer, its own included: a timer moved to a later
 *      deadline before its turn in the same pass does not fire);
 *   3. poll() until the earliest deadline (at most 60 s);
 *   4. the handler of every ready descriptor, in the order added.
 * loop_stop() ends loop_run() after the handler that called it: nothing else
 * runs in that turn. Check and timer handlers receive the turn's now (step 1).
 *
 * Everything is fixed-size (LOOP_MAX_FDS, LOOP_MAX_TIMERS, LOOP_MAX_CHECKS):
 * adding more is a BUG(). No allocation, no signals: the record engine turns
 * signals into bytes on a self-pipe and watches that like any other fd.
 */
#ifndef SB_LOOP_H
#define SB_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#define LOOP_MAX_FDS 4
#define LOOP_MAX_TIMERS 8
#define LOOP_MAX_CHECKS 2
#define LOOP_NEVER INT64_MAX /* a timer's deadline when it is off */

struct loop;
typedef void loop_fd_fn(struct loop *l, int fd, short revents, void *arg);
typedef void loop_time_fn(struct loop *l, int64_t now, void *arg);

struct loop_fd {
	int fd;           /* -1: slot unused */
	short events;     /* POLLIN, POLLPRI, ... */
	loop_fd_fn *fn;
	void *arg;
};

struct loop_timer {
	int64_t when;     /* mono_ns deadline, LOOP_NEVER when off */
	loop_time_fn *fn;
	void *arg;
};

struct loop_check {
	loop_time_fn *fn;
	void *arg;
};

struct loop {
	struct loop_fd fds[LOOP_MAX_FDS];
	size_t nfds;
	struct loop_timer timers[LOOP_MAX_TIMERS];
	size_t ntimers;
	struct loop_check checks[LOOP_MAX_CHECKS];
	size_t nchecks;
	bool stop;
};

void loop_init(struct loop *l);

/* Watch fd for events; fn runs when poll() reports any revents for it
 * (POLLHUP and POLLERR included). Returns the slot number. */
int loop_add_fd(struct loop *l, int fd, short events, loop_fd_fn *fn, void *arg);
/* Stop watching fd (its slot stays, unused); no-op when not watched. */
void loop_del_fd(struct loop *l, int fd);

/* A timer first due at when (LOOP_NEVER: off); returns its id. It fires once
 * per deadline: its handler (or any other) sets the next with
 * loop_timer_set(), else it is off. */
int loop_add_timer(struct loop *l, int64_t when, loop_time_fn *fn, void *arg);
void loop_timer_set(struct loop *l, int id, int64_t when);
int64_t loop_timer_when(const struct loop *l, int id);

/* fn runs at the top of every turn. */
void loop_add_check(struct loop *l, loop_time_fn *fn, void *arg);

void loop_stop(struct loop *l);
/* Turn until loop_stop(). */
void loop_run(struct loop *l);

#endif
