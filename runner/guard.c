/* guard.c -- guard options, admission and stop decisions, busy scan, PSI */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/parse.h"
#include "../common/util.h"
#include "../platform/platform.h"
#include "../traces/trace.h"
#include "guard.h"
#include "spawn.h"

static int bad_value(struct strbuf *why, const char *opt, const char *arg, const char *what)
{
	if (why)
		strbuf_addf(why, "option '--%s': invalid %s '%s'", opt, what, arg);
	return -1;
}

/* --max-device: a size, or a percentage of the device ("80%"): neither 0. */
static int parse_max_device(struct guard_opts *g, const char *arg)
{
	double pct = 0;
	int is_pct = 0;
	uint64_t bytes = 0;
	if (parse_size_or_percent(arg, &bytes, &pct, &is_pct) || (is_pct ? !(pct > 0) : !bytes))
		return -1;
	g->max_device_pct = is_pct ? pct : 0;
	g->max_device = is_pct ? 0 : bytes;
	return 0;
}

int guard_parse_option(struct guard_opts *g, int opt, const char *arg, struct strbuf *why)
{
	int64_t ns;
	switch (opt) {
	case GUARD_OPT_WAIT_FREE:
		if (parse_percent(arg, &g->wait_free_pct))
			return bad_value(why, "wait-free", arg, "percentage");
		break;
	case GUARD_OPT_SWAP_BUDGET:
		if (parse_size(arg, &g->swap_budget))
			return bad_value(why, "swap-budget", arg, "size");
		break;
	case GUARD_OPT_SWAP_LIMIT:
		if (parse_size(arg, &g->swap_limit))
			return bad_value(why, "swap-limit", arg, "size");
		g->has_swap_limit = true;
		break;
	case GUARD_OPT_KILL_FREE:
		if (parse_percent(arg, &g->kill_free_pct))
			return bad_value(why, "kill-free", arg, "percentage");
		break;
	case GUARD_OPT_BUSY: {
		regex_t re;
		int rc = regcomp(&re, arg, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[128];
			regerror(rc, &re, msg, sizeof(msg));
			regfree(&re);
			if (why)
				strbuf_addf(why, "option '--busy': invalid regular expression '%s': %s",
					    arg, msg);
			return -1;
		}
		ALLOC_GROW(g->busy, g->nbusy + 1, g->busy_alloc);
		ALLOC_GROW(g->busy_re, g->nbusy + 1, g->busy_re_alloc);
		g->busy[g->nbusy] = xstrdup(arg);
		g->busy_re[g->nbusy] = re;
		g->nbusy++;
		break;
	}
	case GUARD_OPT_QUIET_FOR:
		if (parse_duration(arg, &g->quiet_for_ns))
			return bad_value(why, "quiet-for", arg, "duration");
		break;
	case GUARD_OPT_START_TIMEOUT:
		if (parse_duration(arg, &g->start_timeout_ns))
			return bad_value(why, "start-timeout", arg, "duration");
		break;
	case GUARD_OPT_POLL:
		if (parse_duration(arg, &ns) || ns < 1000000LL)
			return bad_value(why, "poll", arg, "duration (at least 1ms)");
		g->poll_ns = ns;
		break;
	case GUARD_OPT_MAX_FOOTPRINT:
		if (parse_size(arg, &g->max_footprint) || !g->max_footprint)
			return bad_value(why, "max-footprint", arg, "size");
		g->has_max_footprint = true;
		break;
	case GUARD_OPT_MAX_DEVICE:
		if (parse_max_device(g, arg))
			return bad_value(why, "max-device", arg, "size or percentage (above 0, at most 100%)");
		g->has_max_device = true;
		break;
	case GUARD_OPT_GRACE:
		if (parse_duration(arg, &g->grace_ns))
			return bad_value(why, "grace", arg, "duration");
		return 1; /* --grace alone does not make a run guarded */
	default:
		return 0;
	}
	g->given = true;
	return 1;
}

void guard_opts_release(struct guard_opts *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nbusy; i++) {
		free(g->busy[i]);
		regfree(&g->busy_re[i]);
	}
	free(g->busy);
	free(g->busy_re);
	g->busy = NULL;
	g->busy_re = NULL;
	g->nbusy = g->busy_alloc = g->busy_re_alloc = 0;
}

static void add_reason(struct strbuf *sb, const char *fmt, ...) SB_GNUC_PRINTF(2, 3);
static void add_reason(struct strbuf *sb, const char *fmt, ...)
{
	if (!sb)
		return;
	if (sb->len)
		strbuf_addstr(sb, "; ");
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

bool guard_admit(const struct guard_opts *g, const struct guard_readings *r, struct strbuf *why)
{
	bool ok = true;
	char a[32], b[32], c[32];
	if (r->avail_pct < g->wait_free_pct) {
		add_reason(why, "available %.0f%% (need %.0f%%)", r->avail_pct, g->wait_free_pct);
		ok = false;
	}
	if (g->has_swap_limit && r->has_swap && r->swap_used + g->swap_budget > g->swap_limit) {
		format_gb(r->swap_used, a);
		format_gb(g->swap_budget, b);
		format_gb(g->swap_limit, c);
		add_reason(why, "swap used %s + budget %s exceeds the limit %s", a, b, c);
		ok = false;
	}
	if (g->nbusy) {
		if (r->busy) {
			add_reason(why, "busy: '%s' is running", r->busy_what);
			ok = false;
		} else if (r->since_busy_ns >= 0 && r->since_busy_ns < g->quiet_for_ns) {
			char d[32], q[32];
			format_duration(r->since_busy_ns, d);
			format_duration(g->quiet_for_ns, q);
			add_reason(why, "a busy process was seen %s ago (quiet for %s needed)", d, q);
			ok = false;
		}
	}
	if (ok && why) {
		add_reason(why, "available %.0f%%", r->avail_pct);
		if (r->has_swap) {
			format_gb(r->swap_used, a);
			strbuf_addf(why, ", swap used %s", a);
		}
	}
	return ok;
}

void guard_state_start(struct guard_state *st, const struct guard_readings *r)
{
	st->has_swap_at_start = r->has_swap;
	st->swap_at_start = r->swap_used;
	st->low_polls = 0;
}

static uint64_t swap_growth(const struct guard_state *st, const struct guard_readings *r)
{
	if (!st->has_swap_at_start || !r->has_swap || r->swap_used <= st->swap_at_start)
		return 0;
	return r->swap_used - st->swap_at_start;
}

void guard_devmem_pick(const struct guard_opts *g, const struct devmem_table *tab,
		       struct guard_readings *r)
{
	const struct devmem_reading *best = NULL;
	double best_score = -1;
	bool pct = g->has_max_device && g->max_device_pct > 0;
	for (size_t i = 0; i < tab->n; i++) {
		const struct devmem_reading *d = &tab->r[i];
		/* a percentage: the share of the device's size; a reading of a
		 * device of unknown size only when no other can be judged */
		double score = !pct ? (double)d->bytes
			       : d->total ? 1.0 + (double)d->bytes / (double)d->total
					  : (double)d->bytes / 1e30;
		if (score > best_score) {
			best = d;
			best_score = score;
		}
	}
	r->has_devmem = best != NULL;
	if (!best)
		return;
	r->devmem = best->bytes;
	r->devmem_total = best->total;
	snprintf(r->devmem_device, sizeof(r->devmem_device), "%s", best->device);
}

/* --max-device against the probe's reading (guard_devmem_pick()); the percentage form only
 * where the probe reported the device's size. */
static bool over_max_device(const struct guard_opts *g, const struct guard_readings *r,
			    struct strbuf *reason)
{
	char a[32], b[32];
	if (!g->has_max_device || !r->has_devmem)
		return false;
	uint64_t cap = g->max_device;
	if (g->max_device_pct > 0) {
		if (!r->devmem_total)
			return false;
		cap = (uint64_t)((double)r->devmem_total * g->max_device_pct / 100.0);
	}
	if (r->devmem <= cap)
		return false;
	format_gb(r->devmem, a);
	format_gb(cap, b);
	char on[64] = "";
	if (r->devmem_device[0] && strcmp(r->devmem_device, "?"))
		snprintf(on, sizeof(on), " on '%s'", r->devmem_device);
	if (g->max_device_pct > 0) {
		char c[32];
		format_gb(r->devmem_total, c);
		add_reason(reason, "device memory %s over the cap %s (%g%% of %s)%s, available %.0f%%",
			   a, b, g->max_device_pct, c, on, r->avail_pct);
	} else
		add_reason(reason, "device memory %s over the cap %s%s, available %.0f%%", a, b, on,
			   r->avail_pct);
	return true;
}

bool guard_check(const struct guard_opts *g, struct guard_state *st,
		 const struct guard_readings *r, struct strbuf *reason)
{
	char a[32], b[32];
	uint64_t grew = swap_growth(st, r);
	if (r->avail_pct < g->kill_free_pct)
		st->low_polls++;
	else
		st->low_polls = 0;

	if (grew > g->swap_budget) {
		format_gb(grew, a);
		format_gb(g->swap_budget, b);
		add_reason(reason, "swap grew %s (budget %s), available %.0f%%", a, b, r->avail_pct);
		return true;
	}
	if (st->low_polls >= 2) {
		add_reason(reason, "available %.0f%% for %d polls (floor %.0f%%)", r->avail_pct,
			   st->low_polls, g->kill_free_pct);
		if (r->has_swap) {
			format_gb(grew, a);
			strbuf_addf(reason, ", swap grew %s", a);
		}
		return true;
	}
	if (g->has_max_footprint && r->has_footprint && r->footprint > g->max_footprint) {
		format_gb(r->footprint, a);
		format_gb(g->max_footprint, b);
		add_reason(reason, "footprint %s over the cap %s, available %.0f%%", a, b, r->avail_pct);
		return true;
	}
	return over_max_device(g, r, reason);
}

bool guard_check_soon(const struct guard_state *st)
{
	return st->low_polls == 1;
}

void guard_readings_fields(const struct guard_readings *r, const struct guard_state *st,
			  struct trace_fields *f)
{
	trace_fields_double(f, "available_pct", (double)(int64_t)(r->avail_pct * 10 + 0.5) / 10);
	if (r->has_swap) {
		trace_fields_u64(f, "swap_used", r->swap_used);
		if (st && st->has_swap_at_start)
			trace_fields_u64(f, "swap_growth", swap_growth(st, r));
	}
	if (r->has_footprint)
		trace_fields_u64(f, "footprint", r->footprint);
	if (r->has_devmem)
		trace_fields_u64(f, "devmem", r->devmem);
	if (r->busy)
		trace_fields_string(f, "busy", r->busy_what);
}

/* ---- busy processes ------------------------------------------------------ */

struct busy_ctx {
	const struct guard_opts *g;
	pid_t skip[64]; /* this process and its ancestors */
	size_t nskip;
	char *buf, *what;
	size_t size;
	int found;
};

/* pl_proc_each()'s callback: stops the walk at the first process, outside
 * ours, whose command line matches a --busy pattern. */
static int busy_match(const struct pl_proc *p, void *arg)
{
	struct busy_ctx *c = arg;
	for (size_t i = 0; i < c->nskip; i++)
		if (c->skip[i] == p->pid)
			return 0;
	if (pl_proc_cmdline(p->pid, c->buf, 65536))
		return 0;
	for (size_t i = 0; i < c->g->nbusy; i++) {
		if (!regexec(&c->g->busy_re[i], c->buf, 0, NULL, 0)) {
			snprintf(c->what, c->size, "%s", c->buf);
			c->found = 1;
			return 1; /* stops the walk */
		}
	}
	return 0;
}

int guard_busy_scan(const struct guard_opts *g, char *what, size_t size)
{
	if (!g->nbusy)
		return 0;
	struct busy_ctx c = { g, { 0 }, 0, xmalloc(65536), what, size, 0 };
	for (pid_t p = getpid(); p > 1 && c.nskip < 64; p = spawn_parent_of(p))
		c.skip[c.nskip++] = p;
	pl_proc_each(busy_match, &c);
	free(c.buf);
	return c.found;
}
