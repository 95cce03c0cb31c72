/* plot.c -- plot_runs(): memory charts of runs, drawn by gnuplot */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/parse.h"
#include "../traces/runs.h"
#include "../traces/trace.h"
#include "gp.h"
#include "plot.h"

const struct plot_chart plot_charts[] = {
	{ "memory", plot_memory_script },
	{ "stages", plot_stages_script },
};
const size_t plot_ncharts = sizeof(plot_charts) / sizeof(plot_charts[0]);

char *gp_out_path(const struct plot_opts *o, const char *name)
{
	const char *dir = o->out_dir && *o->out_dir ? o->out_dir : ".";
	if (!plot_have_gnuplot(o->gnuplot)) {
		error(PLOT_GNUPLOT_MISSING);
		return NULL;
	}
	if (mkdir_p(dir))
		return NULL;
	return xasprintf("%s/%s.%s", dir, name, o->format == PLOT_SVG ? "svg" : "png");
}

char *gp_tmp_path(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
	char *tmp = xasprintf("%.*s.%s.XXXXXX", (int)dlen, path, path + dlen);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		error("cannot create a file next to '%s': %s", path, strerror(errno));
		free(tmp);
		return NULL;
	}
	mode_t mask = umask(022);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0 || close(fd) < 0) {
		error("cannot set up '%s': %s", tmp, strerror(errno));
		unlink(tmp);
		free(tmp);
		return NULL;
	}
	return tmp;
}

/* Whether the chart gnuplot wrote to `tmp` is whole: a PNG ends with its IEND
 * chunk, an SVG with </svg>. gnuplot exits 0 when its writes fail (a full
 * disk): the file is then empty or cut short. 0, or -1 with the reason in *why. */
static int chart_whole(const char *tmp, enum plot_format fmt, struct strbuf *why)
{
	static const unsigned char iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82 };
	unsigned char tail[64];
	struct stat st;
	int fd = open(tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		strbuf_addf(why, "gnuplot's output is unreadable: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size_t n = st.st_size < (off_t)sizeof(tail) ? (size_t)st.st_size : sizeof(tail);
	ssize_t r = pread(fd, tail, n, st.st_size - (off_t)n);
	close(fd);
	if (r == (ssize_t)n) {
		if (fmt != PLOT_SVG && n >= sizeof(iend) && !memcmp(tail + n - sizeof(iend), iend, sizeof(iend)))
			return 0;
		while (fmt == PLOT_SVG && n && memchr(" \t\r\n", tail[n - 1], 4))
			n--;
		if (fmt == PLOT_SVG && n >= 6 && !memcmp(tail + n - 6, "</svg>", 6))
			return 0;
	}
	strbuf_addf(why, "gnuplot's output is cut short (%lld bytes, no %s end): is the disk full?",
		    (long long)st.st_size, fmt == PLOT_SVG ? "SVG" : "PNG");
	return -1;
}

/* gnuplot has run (rc its result): check the chart, put it in place, say
 * its path. Returns 0, or -1 after error(), the temporary file removed. */
static int gp_finish(const struct plot_opts *o, const char *path, const char *tmp, int rc)
{
	struct strbuf why = STRBUF_INIT;
	if (rc)
		error("cannot draw '%s'", path);
	else if (chart_whole(tmp, o->format, &why))
		rc = error("cannot draw '%s': %s", path, why.buf);
	else if (rename(tmp, path) < 0)
		rc = error("cannot write '%s': %s", path, strerror(errno));
	else if (!o->quiet_paths)
		printf("%s\n", path);
	if (rc)
		unlink(tmp);
	strbuf_release(&why);
	return rc;
}

int gp_draw(const struct plot_opts *o, const char *path, const char *tmp,
	    const struct strbuf *script)
{
	return gp_finish(o, path, tmp, plot_run_gnuplot(o->gnuplot, script->buf, script->len));
}

/* Every chart of the model, their gnuplots running at the same time; said
 * and put in place in the order of plot_charts[], the first failure the
 * last chart said (the ones after it are not kept). */
static int draw_all(const struct plot_opts *o, const struct plot_model *m)
{
	enum { N = sizeof(plot_charts) / sizeof(plot_charts[0]) };
	char *path[N] = { 0 }, *tmp[N] = { 0 };
	struct strbuf sb[N];
	const char *scripts[N];
	size_t lens[N];
	int rcs[N], rc = 0;
	size_t n = 0;
	for (; n < N; n++) {
		path[n] = gp_out_path(o, plot_charts[n].name);
		tmp[n] = path[n] ? gp_tmp_path(path[n]) : NULL;
		if (!tmp[n])
			break;
		strbuf_init(&sb[n]);
		plot_charts[n].script(&sb[n], m, o, tmp[n]);
		scripts[n] = sb[n].buf;
		lens[n] = sb[n].len;
	}
	if (n < N) {
		rc = -1;
		free(path[n]);
	} else {
		plot_run_gnuplots(o->gnuplot, scripts, lens, N, rcs);
	}
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = gp_finish(o, path[i], tmp[i], rcs[i]);
		else
			unlink(tmp[i]);
		strbuf_release(&sb[i]);
		free(tmp[i]);
		free(path[i]);
	}
	return rc;
}

int plot_runs(const struct plot_opts *opts, const struct trace *traces,
	      const struct run_entry *const *runs, size_t n)
{
	struct plot_model model = PLOT_MODEL_INIT;
	const char *dir = opts->out_dir && *opts->out_dir ? opts->out_dir : ".";
	if (!plot_have_gnuplot(opts->gnuplot))
		return error(PLOT_GNUPLOT_MISSING);
	if (mkdir_p(dir))
		return -1;
	if (plot_model_build(opts, traces, runs, n, &model))
		return -1;
	int rc = draw_all(opts, &model);
	plot_model_release(&model);
	return rc;
}
