/* latents.c -- latent copies compared across runs: identical, within noise, or not (the model;
 * latents_md.c and latents_json.c render it) */
#include "latents.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include "../traces/runs.h"
#include "rundir.h"

/* ---- adding runs --------------------------------------------------------- */

static char *dir_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

static void copy_release(struct latent_copy *c)
{
	free(c->name);
	free(c->stage);
	free(c->sha256);
	free(c->dtype);
	free(c->file);
	free(c->path);
	free(c->trace_path);
	free(c->problem);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

void latent_set_add_trace(struct latent_set *s, const char *id, const char *mode,
			  const char *dir_label, const struct trace *tr)
{
	ALLOC_GROW(s->runs, s->nruns + 1, s->runs_alloc);
	struct latent_run *r = &s->runs[s->nruns++];
	memset(r, 0, sizeof(*r));
	r->id = xstrdup(id);
	r->mode = xstrdup(mode);
	r->trace_path = xstrdup(tr->path);
	r->dir_label = xstrdup(dir_label);
	if (tr->has_end && tr->end.stopped_by == STOPPED_GUARD)
		r->note = xstrdup("stopped by the guard");
	else if (tr->has_end && tr->end.stopped_by == STOPPED_SIGNAL)
		r->note = xasprintf("ended by signal %d", tr->end.signal);
	else if (!tr->has_end)
		r->note = xstrdup("no end record");
	else if (tr->end.has_exit && tr->end.exit_code != 0)
		r->note = xasprintf("exit %d", tr->end.exit_code);
	r->failed = r->note != NULL;
	for (size_t i = 0; i < tr->nevents; i++)
		if (tr->events[i].kind == EV_STAGE && tr->events[i].stage) {
			r->stages = xrealloc(r->stages, (r->nstages + 1) * sizeof(*r->stages));
			r->stages[r->nstages++] = xstrdup(tr->events[i].stage);
		}
	if (r->failed && r->nstages)
		r->ended_in = xstrdup(r->stages[r->nstages - 1]);

	char *dir = dir_of(tr->path);
	double first_load = INFINITY;
	for (size_t i = 0; i < tr->nevents; i++)
		if ((tr->events[i].kind == EV_LOAD || tr->events[i].kind == EV_RELOAD) &&
		    tr->events[i].t < first_load)
			first_load = tr->events[i].t;
	for (size_t i = 0; i < tr->nevents; i++) {
		const struct trace_event *ev = &tr->events[i];
		if (ev->kind != EV_LATENT || !ev->name)
			continue;
		ALLOC_GROW(r->events, r->nevents + 1, r->events_alloc);
		struct latent_copy *c = &r->events[r->nevents];
		memset(c, 0, sizeof(*c));
		c->name = xstrdup(ev->name);
		c->stage = xstrdup(ev->stage);
		c->occurrence = 1;
		for (size_t k = 0; k < r->nevents; k++)
			if (!strcmp(r->events[k].name, c->name) && same_str(r->events[k].stage, c->stage))
				c->occurrence++;
		r->nevents++;
		c->sha256 = xstrdup(ev->sha256);
		c->dtype = xstrdup(ev->dtype);
		c->ndim = ev->ndim;
		if (ev->ndim > 0)
			memcpy(c->shape, ev->shape, sizeof(c->shape[0]) * (size_t)ev->ndim);
		c->file = xstrdup(ev->file);
		if (ev->file)
			c->path = xasprintf("%s/%s", dir, ev->file);
		c->trace_path = xstrdup(tr->path);
		c->line = ev->line;
		c->before_models = isfinite(first_load) && ev->t < first_load;
	}
	free(dir);
}

static int add_one(struct latent_set *s, const char *path, const char *label)
{
	struct trace tr = TRACE_INIT;
	if (trace_read(path, &tr)) {
		trace_release(&tr);
		return -1;
	}
	char *base = xstrdup(strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	char *stem = rundir_trace_stem(base);
	char *mode = tr.start.mode ? xstrdup(tr.start.mode) : NULL;
	if (!mode && stem)
		mode = rundir_mode_of_stem(stem);
	if (!mode)
		mode = xstrdup(stem ? stem : base);
	char *id = stem;
	if (!id) {
		/* not MODE-N.trace.jsonl: MODE-N with N its ordinal among this mode's runs */
		int n = 1;
		for (size_t i = 0; i < s->nruns; i++)
			if (!strcmp(s->runs[i].mode, mode) && same_str(s->runs[i].dir_label, label))
				n++;
		id = xasprintf("%s-%d", mode, n);
	}
	latent_set_add_trace(s, id, mode, label, &tr);
	free(id);
	free(mode);
	free(base);
	trace_release(&tr);
	return 0;
}

int latent_set_add_path(struct latent_set *s, const char *path)
{
	struct stat st;
	if (stat(path, &st))
		return error("cannot read '%s': %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		char *dir = dir_of(path);
		int rc = add_one(s, path, dir);
		free(dir);
		return rc ? -1 : 1;
	}

	struct rundir rd = RUNDIR_INIT;
	if (rundir_open(path, &rd) < 0) {
		rundir_release(&rd);
		return -1;
	}
	int rc = 0;
	size_t first = s->nruns;
	for (size_t i = 0; i < rd.n && !rc; i++) {
		const struct run_entry *e = rd.traces[i].entry;
		if (add_one(s, rd.traces[i].path, path))
			rc = -1;
		else if (e) {
			/* runs.json knows how the run ended better than the trace */
			struct latent_run *r = &s->runs[s->nruns - 1];
			if (e->stopped_by == STOPPED_GUARD ||
			    (e->has_exit && e->exit == 3 && e->stopped_by == STOPPED_NONE)) {
				free(r->note);
				r->note = xstrdup("stopped by the guard");
				r->failed = true;
			}
		}
	}
	rundir_release(&rd);
	if (rc)
		return -1;
	if (s->nruns == first)
		warning("no traces (*.trace.jsonl.zst, *.trace.jsonl) in '%s'", path);
	return (int)(s->nruns - first);
}

/* ---- comparing ------------------------------------------------------------ */

void latent_diff_arrays(const struct npy_array *a, const struct npy_array *b,
			struct latent_diff *out)
{
	memset(out, 0, sizeof(*out));
	bool same_shape = a->ndim == b->ndim;
	for (int i = 0; same_shape && i < a->ndim; i++)
		same_shape = a->shape[i] == b->shape[i];
	if (!same_shape) {
		out->result = LR_SHAPE_DIFFERS;
		return;
	}
	if (a->dtype != b->dtype) {
		out->result = LR_DTYPE_DIFFERS;
		return;
	}
	if (a->data_bytes == b->data_bytes && !memcmp(a->data, b->data, a->data_bytes)) {
		out->result = LR_IDENTICAL;
		return;
	}
	out->result = LR_DIFFERS;
	bool nan = false;
	double max = 0;
	size_t sz = a->itemsize;
	for (uint64_t i = 0; i < a->count; i++) {
		if (!memcmp(a->data + i * sz, b->data + i * sz, sz))
			continue;
		out->ndiffer++;
		double x = npy_get(a, i), y = npy_get(b, i);
		if (isnan(x) || isnan(y)) {
			nan = true;
			continue;
		}
		double d = fabs(x - y);
		if (isnan(d)) /* cannot happen for differing bits of non-NaN values, but be safe */
			nan = true;
		else if (d > max)
			max = d;
	}
	out->max_abs_diff = nan ? NAN : max;
}

bool latent_pair_is_finding(const struct latent_pair *p)
{
	switch (p->diff.result) {
	case LR_IDENTICAL:
	case LR_BOTH_ABSENT:
		return false;
	case LR_DIFFERS:
		return p->noise != NOISE_WITHIN;
	default:
		return true;
	}
}

size_t latent_findings(const struct latent_set *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nlatents; i++)
		for (size_t k = 0; k < s->latents[i].npairs; k++)
			n += latent_pair_is_finding(&s->latents[i].pairs[k]);
	return n;
}

const char *latent_result_name(enum latent_result r)
{
	switch (r) {
	case LR_IDENTICAL: return "identical";
	case LR_DIFFERS: return "differs";
	case LR_SHAPE_DIFFERS: return "shape differs";
	case LR_DTYPE_DIFFERS: return "dtype differs";
	case LR_MISSING: return "missing";
	case LR_BOTH_ABSENT: return "absent in both";
	case LR_CORRUPT: return "corrupt";
	case LR_UNMEASURED: return "differs (no copy)";
	}
	return "?";
}

const char *latent_noise_name(enum latent_noise n)
{
	switch (n) {
	case NOISE_WITHIN: return "within";
	case NOISE_BEYOND: return "beyond";
	case NOISE_UNKNOWN: return "unknown";
	case NOISE_NA: break;
	}
	return NULL;
}

char *latent_label(const struct latent *l)
{
	if (l->occurrence > 1)
		return xasprintf("%s#%d", l->name, l->occurrence);
	return xstrdup(l->name);
}

/* Stable: runs grouped by mode, modes in order of first appearance. */
static void order_runs(struct latent_set *s)
{
	struct latent_run *sorted = xcalloc(s->nruns ? s->nruns : 1, sizeof(*sorted));
	bool *taken = xcalloc(s->nruns ? s->nruns : 1, sizeof(*taken));
	size_t n = 0;
	for (size_t i = 0; i < s->nruns; i++) {
		if (taken[i])
			continue;
		for (size_t j = i; j < s->nruns; j++) {
			if (!taken[j] && !strcmp(s->runs[j].mode, s->runs[i].mode)) {
				sorted[n++] = s->runs[j];
				taken[j] = true;
			}
		}
	}
	if (s->nruns)
		memcpy(s->runs, sorted, sizeof(*sorted) * s->nruns);
	free(sorted);
	free(taken);
}

static void disambiguate_ids(struct latent_set *s)
{
	bool clash = false;
	for (size_t i = 0; i < s->nruns && !clash; i++)
		for (size_t j = i + 1; j < s->nruns && !clash; j++)
			clash = !strcmp(s->runs[i].id, s->runs[j].id);
	if (!clash)
		return;
	/* Prefix every run with its directory's last component, or with the
	 * directory as given when two directories share a last component. */
	bool full = false;
	for (size_t i = 0; i < s->nruns; i++)
		for (size_t j = i + 1; j < s->nruns; j++) {
			const char *a = s->runs[i].dir_label ? s->runs[i].dir_label : "";
			const char *b = s->runs[j].dir_label ? s->runs[j].dir_label : "";
			char *ca = xstrdup(a), *cb = xstrdup(b);
			if (strcmp(a, b) && !strcmp(basename(ca), basename(cb)))
				full = true;
			free(ca);
			free(cb);
		}
	for (size_t i = 0; i < s->nruns; i++) {
		struct latent_run *r = &s->runs[i];
		char *label = xstrdup(r->dir_label ? r->dir_label : ".");
		size_t len = strlen(label);
		while (len > 1 && label[len - 1] == '/')
			label[--len] = '\0';
		char *id = xasprintf("%s/%s", full ? label : basename(label), r->id);
		free(label);
		free(r->id);
		r->id = id;
	}
}

static bool same_key(const struct latent *l, const struct latent_copy *c)
{
	return !strcmp(l->name, c->name) && same_str(l->stage, c->stage) &&
	       l->occurrence == c->occurrence;
}

static void build_latents(struct latent_set *s)
{
	for (size_t r = 0; r < s->nruns; r++) {
		size_t prev = SIZE_MAX; /* index of the latent this run listed before */
		for (size_t e = 0; e < s->runs[r].nevents; e++) {
			struct latent_copy *c = &s->runs[r].events[e];
			size_t at = SIZE_MAX;
			for (size_t i = 0; i < s->nlatents; i++)
				if (same_key(&s->latents[i], c))
					at = i;
			if (at == SIZE_MAX) {
				/* right after the latent this run listed before it */
				at = r == 0 ? s->nlatents : prev == SIZE_MAX ? 0 : prev + 1;
				ALLOC_GROW(s->latents, s->nlatents + 1, s->latents_alloc);
				memmove(&s->latents[at + 1], &s->latents[at],
					sizeof(*s->latents) * (s->nlatents - at));
				s->nlatents++;
				struct latent *l = &s->latents[at];
				memset(l, 0, sizeof(*l));
				l->name = xstrdup(c->name);
				l->stage = xstrdup(c->stage);
				l->occurrence = c->occurrence;
				l->copies = xcalloc(s->nruns, sizeof(*l->copies));
			}
			if (!s->latents[at].copies[r]) /* a duplicate key cannot happen: occurrence */
				s->latents[at].copies[r] = c;
			prev = at;
		}
	}
}

void latent_shape_text(struct strbuf *sb, int ndim, const int64_t *shape)
{
	strbuf_addch(sb, '[');
	for (int i = 0; i < ndim; i++)
		strbuf_addf(sb, "%s%lld", i ? ", " : "", (long long)shape[i]);
	strbuf_addch(sb, ']');
}

/* "file" may name only a regular file inside the run directory (the trace's
 * own directory): a relative path without "..", whose real path stays inside
 * that directory. Opened without following a final symlink and without
 * blocking (a FIFO is refused, not waited on). Returns the fd, or -1 after
 * error() naming the trace line. */
static int open_inside(const struct latent_copy *c)
{
	const char *f = c->file, *why = NULL;
	if (!*f || f[0] == '/')
		why = *f ? "is an absolute path" : "is empty";
	for (const char *p = f; !why && *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && !strncmp(p, "..", 2))
			why = "has a '..' component";
		p += n;
		p += strspn(p, "/");
	}
	if (why)
		return error("%s:%zu: latent '%s': file '%s' %s: only files inside the run "
			     "directory are read", c->trace_path, c->line, c->name, f, why);
	char *dir = dir_of(c->trace_path);
	char *rdir = realpath(dir, NULL), *rfile = realpath(c->path, NULL);
	int fd = -1;
	if (!rdir || !rfile) {
		error("%s:%zu: latent '%s': cannot read '%s': %s", c->trace_path, c->line, c->name,
		      c->path, strerror(errno));
	} else if (strncmp(rfile, rdir, strlen(rdir)) ||
		   (rfile[strlen(rdir)] != '/' && strcmp(rdir, "/"))) {
		error("%s:%zu: latent '%s': file '%s' leads outside the run directory (to '%s'): "
		      "not read", c->trace_path, c->line, c->name, f, rfile);
	} else if ((fd = open(c->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0) {
		error("%s:%zu: latent '%s': cannot read '%s': %s", c->trace_path, c->line, c->name,
		      c->path, strerror(errno));
	} else {
		struct stat st;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			error("%s:%zu: latent '%s': '%s' is not a regular file: not read",
			      c->trace_path, c->line, c->name, c->path);
			close(fd);
			fd = -1;
		}
	}
	free(dir);
	free(rdir);
	free(rfile);
	return fd;
}

/* Read one copy and check it against its event. -1 only for unreadable input. */
static int load_copy(struct latent_copy *c, struct npy_array *arr)
{
	if (!c->path) {
		c->state = COPY_NO_FILE;
		return 0;
	}
	int fd = open_inside(c);
	if (fd < 0)
		return -1;
	int rc = npy_read_fd(c->path, fd, arr);
	close(fd);
	if (rc)
		return error("%s:%zu: cannot use the copy of latent '%s' (above)", c->trace_path,
			     c->line, c->name);
	sha256_hex(arr->data, arr->data_bytes, c->actual_sha256);
	enum npy_dtype want = npy_dtype_from_name(c->dtype);
	struct strbuf why = STRBUF_INIT;
	if (c->sha256 && strcasecmp(c->sha256, c->actual_sha256)) {
		strbuf_addf(&why, "sha256 of its array data is %.12s..., the event says %.12s...",
			    c->actual_sha256, c->sha256);
	} else if (arr->dtype == NPY_RAW16) {
		if (want == NPY_BF16)
			npy_as_bfloat16(arr);
		else
			strbuf_addf(&why, "2-byte raw data ('%s') but the event's dtype is '%s', "
				    "not bfloat16", arr->descr, c->dtype ? c->dtype : "(none)");
	} else if (c->dtype && want != arr->dtype) {
		strbuf_addf(&why, "the file holds %s, the event says %s",
			    npy_dtype_name(arr->dtype), c->dtype);
	}
	if (!why.len && c->ndim >= 0) {
		bool same = c->ndim == arr->ndim;
		for (int i = 0; same && i < c->ndim; i++)
			same = c->shape[i] == arr->shape[i];
		if (!same) {
			strbuf_addstr(&why, "the file's shape is ");
			latent_shape_text(&why, arr->ndim, arr->shape);
			strbuf_addstr(&why, ", the event says ");
			latent_shape_text(&why, c->ndim, c->shape);
		}
	}
	c->npy_dtype = arr->dtype;
	c->npy_ndim = arr->ndim;
	memcpy(c->npy_shape, arr->shape, sizeof(c->npy_shape));
	if (why.len) {
		c->state = COPY_CORRUPT;
		c->problem = strbuf_detach(&why);
	} else {
		c->state = COPY_OK;
	}
	strbuf_release(&why);
	return 0;
}

static void compare_pair(const struct latent *l, const struct npy_array *arrs, size_t a,
			 size_t b, struct latent_pair *p)
{
	memset(p, 0, sizeof(*p));
	p->a = a;
	p->b = b;
	const struct latent_copy *ca = l->copies[a], *cb = l->copies[b];
	if (!ca && !cb)
		p->diff.result = LR_BOTH_ABSENT;
	else if (!ca || !cb)
		p->diff.result = LR_MISSING;
	else if (ca->state == COPY_CORRUPT || cb->state == COPY_CORRUPT)
		p->diff.result = LR_CORRUPT;
	else if (ca->state == COPY_NO_FILE || cb->state == COPY_NO_FILE)
		p->diff.result = ca->sha256 && cb->sha256 && !strcasecmp(ca->sha256, cb->sha256)
					 ? LR_IDENTICAL : LR_UNMEASURED;
	else
		latent_diff_arrays(&arrs[a], &arrs[b], &p->diff);
}

int latent_compare(struct latent_set *s, const char *baseline_mode)
{
	if (s->compared)
		BUG("latent_compare called twice on one set");
	s->compared = true;
	if (!s->nruns)
		return error("no runs to compare");
	order_runs(s);
	disambiguate_ids(s);
	if (baseline_mode) {
		bool found = false;
		for (size_t i = 0; i < s->nruns && !found; i++)
			found = !strcmp(s->runs[i].mode, baseline_mode);
		if (!found)
			return error("no runs of baseline mode '%s'", baseline_mode);
	}
	s->baseline = xstrdup(baseline_mode ? baseline_mode : s->runs[0].mode);
	build_latents(s);

	struct npy_array *arrs = xcalloc(s->nruns, sizeof(*arrs));
	int rc = 0;
	for (size_t li = 0; li < s->nlatents && !rc; li++) {
		struct latent *l = &s->latents[li];
		for (size_t r = 0; r < s->nruns && !rc; r++)
			if (l->copies[r] && load_copy(l->copies[r], &arrs[r]))
				rc = -1;
		if (rc)
			break;
		l->npairs = s->nruns * (s->nruns - 1) / 2;
		l->pairs = xcalloc(l->npairs ? l->npairs : 1, sizeof(*l->pairs));
		size_t k = 0;
		for (size_t a = 0; a < s->nruns; a++)
			for (size_t b = a + 1; b < s->nruns; b++)
				compare_pair(l, arrs, a, b, &l->pairs[k++]);

		/* the baseline's own spread */
		for (size_t r = 0; r < s->nruns; r++)
			if (l->copies[r] && !strcmp(s->runs[r].mode, s->baseline))
				l->baseline_copies++;
		for (k = 0; k < l->npairs; k++) {
			const struct latent_pair *p = &l->pairs[k];
			if (strcmp(s->runs[p->a].mode, s->baseline) ||
			    strcmp(s->runs[p->b].mode, s->baseline))
				continue;
			if (p->diff.result != LR_IDENTICAL && p->diff.result != LR_DIFFERS)
				continue;
			double d = p->diff.result == LR_IDENTICAL ? 0 : p->diff.max_abs_diff;
			if (!l->spread_pairs)
				l->spread = d;
			else if (!isnan(l->spread) && (isnan(d) || d > l->spread))
				l->spread = d; /* NaN, once seen, stays */
			l->spread_pairs++;
		}
		for (k = 0; k < l->npairs; k++) {
			struct latent_pair *p = &l->pairs[k];
			if (p->diff.result != LR_DIFFERS)
				continue;
			if (!l->spread_pairs)
				p->noise = NOISE_UNKNOWN;
			else
				p->noise = p->diff.max_abs_diff <= l->spread ? NOISE_WITHIN : NOISE_BEYOND;
		}
		for (size_t r = 0; r < s->nruns; r++)
			npy_release(&arrs[r]);
	}
	for (size_t r = 0; r < s->nruns; r++)
		npy_release(&arrs[r]);
	free(arrs);
	return rc;
}

void latent_set_release(struct latent_set *s)
{
	if (!s)
		return;
	for (size_t r = 0; r < s->nruns; r++) {
		struct latent_run *run = &s->runs[r];
		for (size_t e = 0; e < run->nevents; e++)
			copy_release(&run->events[e]);
		free(run->events);
		free(run->id);
		free(run->mode);
		free(run->trace_path);
		free(run->dir_label);
		free(run->note);
		free(run->ended_in);
		for (size_t k = 0; k < run->nstages; k++)
			free(run->stages[k]);
		free(run->stages);
	}
	free(s->runs);
	for (size_t i = 0; i < s->nlatents; i++) {
		free(s->latents[i].name);
		free(s->latents[i].stage);
		free(s->latents[i].copies);
		free(s->latents[i].pairs);
	}
	free(s->latents);
	free(s->baseline);
	memset(s, 0, sizeof(*s));
}
