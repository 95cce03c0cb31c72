/* history.h -- one pipeline's stages over commits: the model behind `stagebench history`
 *
 * Input: run directories as `compare --by-commit` leaves them, one per commit,
 * given in any order. Each directory is one column (a "commit"): its commit
 * and dirty flag from the runs' start records (`commit`, `dirty`), its time
 * from the earliest run's `utc`. Columns are ordered by that time (the
 * directory's recording; a trace holds no commit date), or as given
 * (HISTORY_ORDER_GIVEN).
 *
 * Per mode and stage (in order of first appearance) and per metric, each
 * commit gets a point over the runs of that mode that completed the stage:
 *   HM_PEAK   peak footprint (window rule), bytes
 *   HM_KPEAK  kernel peak (rss), bytes, where `peak` events exist
 *   HM_TIME   stage time, seconds
 *   HM_DEVICE device peak (the probe's MPS driver or CUDA reserved memory),
 *             bytes, where the runs read a device; the renderers leave it out
 *             when no run did (history_metric_shown)
 *   HM_MAPPED peak of mapped data files (model weights mapped, not copied;
 *             not in the footprint), bytes, where the runs read it; left
 *             out as HM_DEVICE is
 *   HM_TOTAL  the resident total, peak footprint + peak mapped (table.h),
 *             bytes, where the runs read mapped files; left out as HM_DEVICE is
 * the lowest, highest and median value, and whether `check` of that commit
 * against the previous one (check.h, the same rule and defaults) flagged a
 * regression of that metric in that stage (the kernel peak: rss or
 * footprint), and how many runs of the mode did not complete the stage
 * there ("failed": a crash, the guard, a signal). Every regression check
 * reports between neighbours, of whatever kind (outcome, latents, swap, load
 * time, memory, time), is listed in h->regressions with check's own line.
 * The first commit has nothing to be held against.
 *
 * Call order: struct history h = HISTORY_INIT; history_build(&h, dirs, n,
 * order); render (render.h: md, csv, json); history_release(&h).
 * The chart (plots/history.c) is drawn from this model by history_plot_data().
 */
#ifndef SB_HISTORY_H
#define SB_HISTORY_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/util.h"

#define HISTORY_SHORT_ID 7 /* characters of a hex commit id shown, as git --short */

enum history_metric { HM_PEAK = 0, HM_KPEAK, HM_TIME, HM_DEVICE, HM_MAPPED, HM_TOTAL, HM_NMETRICS };
enum history_order { HISTORY_ORDER_RECORDED = 0, HISTORY_ORDER_GIVEN };

struct history_commit {
	char *dir;         /* as given */
	char *commit;      /* the runs' start.commit; "?" when none says */
	char *short_id;    /* its first HISTORY_SHORT_ID characters (a hex id), else the commit as is */
	char *subject;     /* the commit's subject line, where the command found a git
			    * checkout that knows it (cli/history.c); else NULL */
	bool dirty;        /* some run's start.dirty */
	char *utc;         /* the earliest run's start time; NULL when none */
	size_t nruns;
};

struct history_point {
	size_t n;          /* runs with a value; 0: no point */
	double min, max, median;
	bool regression;   /* check against the previous commit flagged it */
	size_t failed;     /* runs of the mode that did not complete the stage
			    * (stopped in it, or never reached it) */
	size_t runs;       /* runs of the mode at this commit */
};

/* One regression `check` of a commit against the one before reports: every
 * kind (outcome, latents, swap, load time, memory, time). */
struct history_regression {
	size_t commit;     /* the later commit; the earlier is commit - 1 */
	char *mode, *stage;
	char *what;        /* "outcome", "peak footprint", "latent mask", ... */
	int metric;        /* the enum history_metric it is; -1 for outcome, latents,
			    * swap and load time (no chart of their own) */
	char *line;        /* check_finding_line() */
};

struct history_series {
	char *mode, *stage;
	struct history_point *points; /* [ncommits * HM_NMETRICS]: points[c * HM_NMETRICS + m] */
};

struct history {
	struct history_commit *commits;
	size_t ncommits;
	struct history_series *series;
	size_t nseries, series_alloc;
	struct history_regression *regressions;
	size_t nregressions, regressions_alloc;
};
#define HISTORY_INIT { NULL, 0, NULL, 0, 0, NULL, 0, 0 }

/* Returns 0, or -1 after error() when a directory cannot be read or holds no traces. */
int history_build(struct history *h, const char *const *dirs, size_t n, enum history_order order);
/* A series had a regression of any kind at commit c (history_regression). */
bool history_regressed(const struct history *h, size_t series, size_t commit);
/* "abc1234567 (subject)" or "abc1234567": the commit as labels show it; "*" after a dirty one. */
void history_commit_label(const struct history_commit *k, bool subject, struct strbuf *out);
const struct history_point *history_point(const struct history *h, size_t series, size_t commit,
					  enum history_metric m);
const char *history_metric_name(enum history_metric m); /* "peak footprint", ... */
bool history_metric_is_time(enum history_metric m);
/* False for HM_DEVICE (HM_MAPPED) when no run of any commit read device memory
 * (mapped files). */
bool history_metric_shown(const struct history *h, enum history_metric m);
void history_release(struct history *h);

void history_render_md(const struct history *h, struct strbuf *out);
void history_render_csv(const struct history *h, struct strbuf *out);
void history_render_json(const struct history *h, struct strbuf *out);

#endif
