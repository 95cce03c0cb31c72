/* fake.c -- the scripted meter backend for tests: one sample per script line */
#include "meter_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/parse.h"
#include "common/util.h"

struct fake_meter {
	char *path;
	struct fake_line *lines;
	size_t *lineno;        /* script line of each entry */
	size_t n, alloc, lineno_alloc;
	size_t cur;            /* the line the last meter_sample returned */
	bool sampled;          /* a line was taken (cur is valid) */
	bool by_sample;        /* meter_sample was called at least once */
	pid_t root;
	bool tracked;
	/* peak window since the last reset */
	bool win_has_peak;
	uint64_t win_peak, win_footprint;
};

int fake_parse_line(const char *line, struct fake_line *out, bool *empty,
		    const char **why, const char **bad_key)
{
	char word[256];
	const char *p = line;
	bool any_sample = false;

	memset(out, 0, sizeof(*out));
	*empty = true;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p || *p == '#')
			break;
		const char *start = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			p++;
		size_t n = (size_t)(p - start);
		*bad_key = start;
		if (n >= sizeof(word)) {
			*why = "word too long";
			return -1;
		}
		memcpy(word, start, n);
		word[n] = '\0';
		if (!strcmp(word, "gone")) {
			out->extra |= FK_GONE;
			any_sample = true;
			continue;
		}
		char *eq = strchr(word, '=');
		if (!eq) {
			*why = "expected KEY=VALUE or 'gone'";
			return -1;
		}
		*eq = '\0';
		const char *key = word, *val = eq + 1;
		/* the sample fields by their trace keys (trace.h's schema) */
		const struct sample_field_info *fi = trace_sample_field(key, strlen(key));
		unsigned field = fi ? fi->bit : 0;
		if (field && (out->s.fields & field)) {
			*why = "key given twice";
			return -1;
		}
		if (field == SF_LEVEL) {
			if (parse_percent(val, &out->s.level)) {
				*why = "level is not a percentage (0..100)";
				return -1;
			}
		} else if (field == SF_PROCS) {
			if (parse_int(val, &out->s.procs) || out->s.procs < 0) {
				*why = "procs is not a count";
				return -1;
			}
		} else if (fi && fi->kind == SAMPLE_COUNT) {
			int *slot = (int *)((char *)&out->s + fi->offset);
			if (parse_int(val, slot) || *slot < 0) {
				*why = "not a count";
				return -1;
			}
		} else if (fi && fi->kind == SAMPLE_BYTES) {
			if (parse_size(val, (uint64_t *)((char *)&out->s + fi->offset))) {
				*why = "not a size (e.g. 300M)";
				return -1;
			}
		} else if (!strcmp(key, "peak")) {
			if (parse_size(val, &out->peak)) {
				*why = "peak is not a size";
				return -1;
			}
			out->extra |= FK_PEAK;
		} else if (!strcmp(key, "total")) {
			if (parse_size(val, &out->total) || !out->total) {
				*why = "total is not a size above 0";
				return -1;
			}
			out->extra |= FK_TOTAL;
		} else if (!strcmp(key, "peak_metric")) {
			if (!strcmp(val, "rss"))
				out->peak_metric = "rss";
			else if (!strcmp(val, "footprint"))
				out->peak_metric = "footprint";
			else if (!strcmp(val, "none"))
				out->peak_metric = NULL;
			else {
				*why = "peak_metric must be rss, footprint or none";
				return -1;
			}
			out->extra |= FK_PEAK_METRIC;
			continue; /* a setting, not a sample value */
		} else {
			*why = "unknown key";
			return -1;
		}
		out->s.fields |= field;
		any_sample = true;
	}
	*empty = !any_sample;
	return 0;
}

static struct fake_line *current(struct fake_meter *fm)
{
	return &fm->lines[fm->cur];
}

static void window_add(struct fake_meter *fm)
{
	const struct fake_line *l = current(fm);
	if (l->extra & FK_PEAK) {
		if (!fm->win_has_peak || l->peak > fm->win_peak)
			fm->win_peak = l->peak;
		fm->win_has_peak = true;
	}
	if ((l->s.fields & SF_FOOTPRINT) && l->s.footprint > fm->win_footprint)
		fm->win_footprint = l->s.footprint;
}

static void advance(struct fake_meter *fm)
{
	if (fm->sampled && fm->cur + 1 < fm->n)
		fm->cur++;
	fm->sampled = true;
	window_add(fm);
}

static void fake_track(struct meter *m, pid_t root)
{
	struct fake_meter *fm = m->priv;
	fm->root = root;
	fm->tracked = true;
}

static const pid_t *fake_pids(struct meter *m, size_t *n)
{
	struct fake_meter *fm = m->priv;
	*n = fm->tracked ? 1 : 0;
	return &fm->root;
}

static int fake_sample(struct meter *m, struct trace_sample *s)
{
	struct fake_meter *fm = m->priv;
	double t = s->t;
	fm->by_sample = true;
	advance(fm);
	*s = current(fm)->s;
	s->t = t;
	return (current(fm)->extra & FK_GONE) ? -1 : 0;
}

static int fake_system(struct meter *m, struct meter_system *sys)
{
	struct fake_meter *fm = m->priv;
	const struct fake_line *l;
	/* A meter nobody samples (the guard's admission loop) moves through
	 * the script on each call instead. */
	if (!fm->by_sample)
		advance(fm);
	l = current(fm);
	if (!(l->s.fields & SF_LEVEL))
		return error("%s:%zu: no level= for the system figures", fm->path,
			     fm->lineno[fm->cur]);
	sys->total_bytes = (l->extra & FK_TOTAL) ? l->total : (uint64_t)16 << 30;
	sys->avail_pct = l->s.level;
	sys->avail_bytes = (uint64_t)((double)sys->total_bytes * l->s.level / 100.0);
	sys->has_swap = (l->s.fields & (SF_SWAP_USED | SF_SWAP_TOTAL)) != 0;
	sys->swap_used = l->s.swap_used;
	sys->swap_total = l->s.swap_total;
	return 0;
}

static int fake_peak_reset(struct meter *m)
{
	struct fake_meter *fm = m->priv;
	fm->win_has_peak = false;
	fm->win_peak = fm->win_footprint = 0;
	window_add(fm); /* the high-water mark restarts at the current figures */
	return 0;
}

static int fake_peak_read(struct meter *m, uint64_t *bytes)
{
	struct fake_meter *fm = m->priv;
	*bytes = fm->win_has_peak ? fm->win_peak : fm->win_footprint;
	return 0;
}

static int fake_gpu(struct meter *m, uint64_t *bytes)
{
	struct fake_meter *fm = m->priv;
	if (!m->info.gpu)
		return -1;
	/* The most recent line at or before the current one that has gpu=. */
	for (size_t i = fm->cur + 1; i > 0; i--) {
		if (fm->lines[i - 1].s.fields & SF_GPU) {
			*bytes = fm->lines[i - 1].s.gpu;
			return 0;
		}
	}
	*bytes = 0;
	return 0;
}

static void fake_free(struct meter *m)
{
	struct fake_meter *fm = m->priv;
	if (!fm)
		return;
	free(fm->path);
	free(fm->lines);
	free(fm->lineno);
	free(fm);
	m->priv = NULL;
}

static const struct meter_backend fake_backend = {
	.track = fake_track,
	.pids = fake_pids,
	.sample = fake_sample,
	.system = fake_system,
	.peak_reset = fake_peak_reset,
	.peak_read = fake_peak_read,
	.gpu = fake_gpu,
	.free = fake_free,
};

int meter_fake_init(struct meter *m, const char *path)
{
	struct fake_meter *fm = xcalloc(1, sizeof(*fm));
	char *data = NULL;
	size_t len, lineno = 0;
	bool any_peak = false;
	const char *peak_metric = "rss";
	int rc = 0;

	m->priv = fm;
	m->be = &fake_backend;
	fm->path = xstrdup(path);
	if (!*path)
		return error("fake meter: no script file (use fake:FILE)");
	if (read_file(path, &data, &len))
		return -1;
	for (char *line = data; line && *line;) {
		char *nl = strchr(line, '\n');
		struct fake_line fl;
		bool empty;
		const char *why, *bad_key;
		if (nl)
			*nl = '\0';
		lineno++;
		if (fake_parse_line(line, &fl, &empty, &why, &bad_key)) {
			rc = error("%s:%zu: %s: '%.*s'", path, lineno, why,
				   (int)strcspn(bad_key, " \t\r"), bad_key);
			break;
		}
		if (fl.extra & FK_PEAK_METRIC)
			peak_metric = fl.peak_metric;
		if (!empty) {
			ALLOC_GROW(fm->lines, fm->n + 1, fm->alloc);
			ALLOC_GROW(fm->lineno, fm->n + 1, fm->lineno_alloc);
			fm->lines[fm->n] = fl;
			fm->lineno[fm->n] = lineno;
			fm->n++;
			m->info.fields |= fl.s.fields;
			any_peak |= (fl.extra & FK_PEAK) != 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(data);
	if (rc)
		return rc;
	if (!fm->n)
		return error("%s: fake meter script has no sample lines", path);

	m->info.backend = "fake";
	m->info.footprint = "scripted figures (fake meter)";
	m->info.peak_metric = any_peak ? peak_metric : NULL;
	m->info.gpu = (m->info.fields & SF_GPU) != 0;
	return 0;
}
