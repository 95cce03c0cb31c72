/* loop.c -- timer and fd dispatcher (see loop.h) */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "../common/util.h"
#include "loop.h"

#define NS_PER_MS 1000000LL
#define MAX_WAIT_MS 60000

void loop_init(struct loop *l)
{
	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < LOOP_MAX_FDS; i++)
		l->fds[i].fd = -1;
}

int loop_add_fd(struct loop *l, int fd, short events, loop_fd_fn *fn, void *arg)
{
	size_t i;
	for (i = 0; i < l->nfds; i++)
		if (l->fds[i].fd < 0)
			break;
	if (i == l->nfds) {
		if (l->nfds == LOOP_MAX_FDS)
			BUG("loop: more than %d descriptors", LOOP_MAX_FDS);
		l->nfds++;
	}
	l->fds[i] = (struct loop_fd){ fd, events, fn, arg };
	return (int)i;
}

void loop_del_fd(struct loop *l, int fd)
{
	for (size_t i = 0; i < l->nfds; i++)
		if (l->fds[i].fd == fd && fd >= 0)
			l->fds[i].fd = -1;
}

int loop_add_timer(struct loop *l, int64_t when, loop_time_fn *fn, void *arg)
{
	if (l->ntimers == LOOP_MAX_TIMERS)
		BUG("loop: more than %d timers", LOOP_MAX_TIMERS);
	l->timers[l->ntimers] = (struct loop_timer){ when, fn, arg };
	return (int)l->ntimers++;
}

void loop_timer_set(struct loop *l, int id, int64_t when)
{
	if (id < 0 || (size_t)id >= l->ntimers)
		BUG("loop: no timer %d", id);
	l->timers[id].when = when;
}

int64_t loop_timer_when(const struct loop *l, int id)
{
	if (id < 0 || (size_t)id >= l->ntimers)
		BUG("loop: no timer %d", id);
	return l->timers[id].when;
}

void loop_add_check(struct loop *l, loop_time_fn *fn, void *arg)
{
	if (l->nchecks == LOOP_MAX_CHECKS)
		BUG("loop: more than %d checks", LOOP_MAX_CHECKS);
	l->checks[l->nchecks++] = (struct loop_check){ fn, arg };
}

void loop_stop(struct loop *l)
{
	l->stop = true;
}

/* Steps 1 and 2 of a turn. */
static void run_due(struct loop *l, int64_t now)
{
	for (size_t i = 0; i < l->nchecks && !l->stop; i++)
		l->checks[i].fn(l, now, l->checks[i].arg);
	for (size_t i = 0; i < l->ntimers && !l->stop; i++) {
		struct loop_timer *t = &l->timers[i];
		if (t->when > now)
			continue;
		t->when = LOOP_NEVER; /* off unless the handler sets the next */
		t->fn(l, now, t->arg);
	}
}

static int wait_ms(const struct loop *l)
{
	int64_t deadline = LOOP_NEVER;
	for (size_t i = 0; i < l->ntimers; i++)
		if (l->timers[i].when < deadline)
			deadline = l->timers[i].when;
	if (deadline == LOOP_NEVER)
		return MAX_WAIT_MS;
	int64_t wait = deadline - mono_ns();
	if (wait <= 0)
		return 0;
	wait = (wait + NS_PER_MS - 1) / NS_PER_MS;
	return wait > MAX_WAIT_MS ? MAX_WAIT_MS : (int)wait;
}

void loop_run(struct loop *l)
{
	struct pollfd pfd[LOOP_MAX_FDS];
	size_t slot[LOOP_MAX_FDS];
	l->stop = false;
	while (!l->stop) {
		run_due(l, mono_ns());
		if (l->stop)
			break;
		nfds_t n = 0;
		for (size_t i = 0; i < l->nfds; i++) {
			if (l->fds[i].fd < 0)
				continue;
			pfd[n] = (struct pollfd){ l->fds[i].fd, l->fds[i].events, 0 };
			slot[n++] = i;
		}
		int ready = poll(pfd, n, wait_ms(l));
		if (ready < 0 && errno != EINTR)
			BUG("loop: poll: %s", strerror(errno));
		if (ready <= 0)
			continue;
		for (nfds_t k = 0; k < n && !l->stop; k++) {
			struct loop_fd *f = &l->fds[slot[k]];
			/* a handler may have stopped watching it meanwhile */
			if (!pfd[k].revents || f->fd != pfd[k].fd)
				continue;
			f->fn(l, f->fd, pfd[k].revents, f->arg);
		}
	}
}
