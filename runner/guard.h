/* guard.h -- the memory guard: options, admission and stop decisions
 *
 * The guard starts a command only when the machine has room for it and stops
 * the command's whole tree when it runs the machine out of memory. It is the
 * record engine (runner/record.h) with these checks switched on; this header
 * holds what record, guard and compare share:
 *
 *   GUARD OPTIONS    --wait-free PCT (40)   --swap-budget SIZE (8G)
 *                    --swap-limit SIZE      --kill-free PCT (10)
 *                    --busy REGEX...        --quiet-for DUR (1m)
 *                    --start-timeout DUR (30m)  --poll DUR (250ms)
 *                    --max-footprint SIZE   --grace DUR (5s)
 *                    --max-device SIZE|PCT%
 *   exit codes       3 the guard stopped the command, 4 never room to start,
 *                    127 could not start, 128+N signal N, else the command's.
 *
 * Parsing: the commands' option tables name these options once (the guard
 * group of cli/opt.c, with the ids below), and the parser hands each of them
 * to guard_parse_option():
 *   struct guard_opts g = GUARD_OPTS_INIT;
 *   switch (guard_parse_option(&g, opt, optarg, &why)) { 1: taken, 0: not a
 *   guard option, -1: bad value (why says which, a usage error) }
 *   ...
 *   guard_opts_release(&g);
 *
 * Decisions are pure functions of readings (testable without a machine):
 *   guard_admit()  before the start: admit or wait, with the reason;
 *   guard_check()  while running: stop or go on, with the reason.
 */
#ifndef SB_GUARD_H
#define SB_GUARD_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/util.h"

#define GUARD_EXIT_STOPPED 3
#define GUARD_EXIT_NO_ROOM 4
#define GUARD_EXIT_CANNOT_RUN 127

enum guard_opt_id {
	GUARD_OPT_WAIT_FREE = 0x4701,
	GUARD_OPT_SWAP_BUDGET,
	GUARD_OPT_SWAP_LIMIT,
	GUARD_OPT_KILL_FREE,
	GUARD_OPT_BUSY,
	GUARD_OPT_QUIET_FOR,
	GUARD_OPT_START_TIMEOUT,
	GUARD_OPT_POLL,
	GUARD_OPT_MAX_FOOTPRINT,
	GUARD_OPT_GRACE,
	GUARD_OPT_MAX_DEVICE,
};

struct guard_opts {
	bool given;              /* any guard option except --grace was given */
	double wait_free_pct;    /* admission: available >= this */
	uint64_t swap_budget;    /* stop when swap grows by more than this */
	bool has_swap_limit;
	uint64_t swap_limit;     /* admission: swap used + budget <= this */
	double kill_free_pct;    /* stop when available < this for two polls */
	char **busy;             /* --busy patterns (as given) */
	regex_t *busy_re;        /* compiled, REG_EXTENDED | REG_NOSUB */
	size_t nbusy, busy_alloc, busy_re_alloc;
	int64_t quiet_for_ns;
	int64_t start_timeout_ns;
	int64_t poll_ns;
	bool has_max_footprint;
	uint64_t max_footprint;  /* stop when the tree's footprint exceeds this */
	int64_t grace_ns;        /* TERM .. KILL */
	bool has_max_device;
	uint64_t max_device;     /* stop when the probe's device memory exceeds this */
	double max_device_pct;   /* or this percent of the device's size (> 0: the
				  * percent form; needs the probe's total) */
};
/* The defaults of --help; fields not named are 0, false or NULL. */
#define GUARD_OPTS_INIT                                                        \
	{ .wait_free_pct = 40.0, .swap_budget = 8ULL << 30, .kill_free_pct = 10.0, \
	  .quiet_for_ns = 60LL * 1000000000LL, .start_timeout_ns = 1800LL * 1000000000LL, \
	  .poll_ns = 250LL * 1000000LL, .grace_ns = 5LL * 1000000000LL }

/* 1 when opt was a guard option (value stored), 0 when it is not one, -1
 * for a bad value: *why (NULL ok) gets "option '--poll': invalid duration
 * '0'"; nothing is printed. */
int guard_parse_option(struct guard_opts *g, int opt, const char *arg, struct strbuf *why);
void guard_opts_release(struct guard_opts *g); /* NULL ok */

/* What the guard reads each poll. */
struct guard_readings {
	double avail_pct;
	bool has_swap;
	uint64_t swap_used;
	bool has_footprint;
	uint64_t footprint;     /* the command's tree */
	bool has_devmem;        /* a device reading of the probe (MPS driver, CUDA reserved): */
	uint64_t devmem;        /* the one guard_devmem_pick() chose */
	uint64_t devmem_total;  /* the device's size as the probe last reported it; 0 unknown */
	char devmem_device[48]; /* its device ("cuda:0", "mps") */
	bool busy;              /* a --busy match is running now */
	int64_t since_busy_ns;  /* time since a busy match was last seen; <0 never */
	char busy_what[128];    /* the matching command line (cut) */
};

struct devmem_table;
/* The device reading --max-device judges, into r->has_devmem, devmem,
 * devmem_total, devmem_device: of every device and writer the one most over
 * its cap (a percentage: of the readings whose device's size is known, unless
 * none is); the largest without --max-device. */
void guard_devmem_pick(const struct guard_opts *g, const struct devmem_table *tab,
		       struct guard_readings *r);

/* Admission: returns true to start now, false to wait; *why (may be NULL)
 * gets the reason with the readings ("available 23% (need 40%)"). */
bool guard_admit(const struct guard_opts *g, const struct guard_readings *r, struct strbuf *why);

/* Stop checks keep a little state between polls. */
struct guard_state {
	uint64_t swap_at_start;
	bool has_swap_at_start;
	int low_polls;          /* consecutive polls under --kill-free */
};
#define GUARD_STATE_INIT { 0 }
void guard_state_start(struct guard_state *st, const struct guard_readings *r);

/* While running: true when the command must be stopped; *reason gets why
 * ("swap grew 8.2 GB (budget 8.0 GB), available 12%"). A low-memory reading
 * only counts after two consecutive polls; guard_check_soon() says the caller
 * should confirm sooner than a full poll. */
bool guard_check(const struct guard_opts *g, struct guard_state *st,
		 const struct guard_readings *r, struct strbuf *reason);
bool guard_check_soon(const struct guard_state *st);

/* Scan running processes for --busy matches (pl_proc_cmdline: args joined by
 * spaces), ignoring this process and its ancestors. Returns 1 and
 * fills what (the command line, cut to size) on a match, 0 for none. */
int guard_busy_scan(const struct guard_opts *g, char *what, size_t size);

/* The readings as the extra keys of a guard event ("available_pct":12.5,...),
 * added to f; swap_growth relative to st when known. f holds r->busy_what:
 * r lives until the event is written. */
struct trace_fields;
void guard_readings_fields(const struct guard_readings *r, const struct guard_state *st,
			  struct trace_fields *f);

#endif
