/* campaign.c -- the campaign of a compare spread over machines (campaign.h) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../../common/jsonw.h"
#include "../../common/util.h"
#include "../../traces/runs.h"
#include "../../traces/trace.h"
#include "campaign.h"

/* A trace written to in the last this many seconds is still being recorded
 * (a recorder writes a frame at least every second). */
#define CAMPAIGN_FRESH_S 5

static char *new_id(void)
{
	unsigned char b[8];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, b, sizeof(b)) : -1;
	if (fd >= 0)
		close(fd);
	if (got != (ssize_t)sizeof(b)) { /* no /dev/urandom: time and pid will do */
		uint64_t x = (uint64_t)real_ns() ^ ((uint64_t)getpid() << 32);
		memcpy(b, &x, sizeof(b));
	}
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(b); i++)
		strbuf_addf(&sb, "%02x", b[i]);
	return strbuf_detach(&sb);
}

static char *host_name(void)
{
	struct utsname u;
	return xstrdup(uname(&u) == 0 ? u.nodename : "?");
}

/* What in OUT shows an earlier comparison: "" when nothing. */
static const char *used_by(const char *out)
{
	static const char *const results[] = { "runs.json", "runs.d", "table.md" };
	for (size_t i = 0; i < sizeof(results) / sizeof(results[0]); i++) {
		char *p = xasprintf("%s/%s", out, results[i]);
		bool there = access(p, F_OK) == 0;
		free(p);
		if (there)
			return results[i];
	}
	DIR *d = opendir(out);
	const char *what = "";
	for (struct dirent *de; d && (de = readdir(d)) && !*what;)
		if (str_ends_with(de->d_name, ".trace.jsonl.zst"))
			what = "traces";
	if (d)
		closedir(d);
	return what;
}

/* OUT/plan.json's campaign id and runs; 0, or -1 after error(). */
static int read_plan(const char *path, char **id, json_t **runs)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr);
	if (!root)
		return error("%s:%d: malformed JSON: %s", path, jerr.line, jerr.text);
	json_t *c = json_object_get(root, "campaign"), *r = json_object_get(root, "runs");
	if (!json_is_string(c) || !json_is_array(r)) {
		json_decref(root);
		return error("%s: expected an object with \"campaign\" (a string) and \"runs\" "
			     "(an array of run ids)", path);
	}
	*id = xstrdup(json_string_value(c));
	*runs = json_incref(r);
	json_decref(root);
	return 0;
}

int campaign_start(const char *out, char *const *runs, size_t n, char **id)
{
	char *path = xasprintf("%s/plan.json", out);
	char *old = NULL;
	json_t *oldruns = NULL;
	int rc = 0;
	*id = NULL;
	if (access(path, F_OK) == 0) {
		if (read_plan(path, &old, &oldruns) == 0)
			rc = error("'%s' already holds campaign %s (plan.json): give each comparison "
				   "a --out of its own", out, old);
		else
			rc = error("'%s' already holds a plan.json: give each comparison a --out of "
				   "its own", out);
		rc = SB_EXIT_USAGE;
	} else if (*used_by(out)) {
		rc = error("'%s' already holds the results of an earlier comparison (%s): give "
			   "each comparison a --out of its own", out, used_by(out));
		rc = SB_EXIT_USAGE;
	}
	free(old);
	json_decref(oldruns);
	if (rc) {
		free(path);
		return rc;
	}
	*id = new_id();
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"campaign\": ");
	json_escape(&sb, *id);
	strbuf_addstr(&sb, ", \"runs\": [");
	for (size_t i = 0; i < n; i++) {
		strbuf_addstr(&sb, i ? ", " : "");
		json_escape(&sb, runs[i]);
	}
	strbuf_addstr(&sb, "]}\n");
	/* O_EXCL: of two plans started at once into one --out, one is refused */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	bool raced = fd < 0 && errno == EEXIST;
	if (fd < 0)
		rc = error("cannot create '%s': %s", path, strerror(errno));
	else if (write_all(fd, sb.buf, sb.len) < 0 || close(fd) < 0)
		rc = error("cannot write '%s': %s", path, strerror(errno));
	strbuf_release(&sb);
	free(path);
	if (rc) {
		free(*id);
		*id = NULL;
		return raced ? SB_EXIT_USAGE : SB_EXIT_FAILURE;
	}
	return 0;
}

int campaign_load(const char *out, char *const *runs, size_t n, char **id)
{
	char *path = xasprintf("%s/plan.json", out);
	json_t *planned = NULL;
	*id = NULL;
	if (access(path, F_OK) != 0) {
		error("'%s' holds no plan.json: start the campaign with the same arguments and "
		      "--plan first", out);
		free(path);
		return SB_EXIT_USAGE;
	}
	if (read_plan(path, id, &planned) < 0) {
		free(path);
		return SB_EXIT_FAILURE;
	}
	bool same = json_array_size(planned) == n;
	for (size_t i = 0; same && i < n; i++) {
		json_t *r = json_array_get(planned, i);
		same = json_is_string(r) && !strcmp(json_string_value(r), runs[i]);
	}
	int rc = 0;
	if (!same) {
		error("%s: campaign %s plans %zu runs (%s ...), these arguments %zu (%s ...): not "
		      "the same comparison", path, *id, json_array_size(planned),
		      json_is_string(json_array_get(planned, 0)) ?
		      json_string_value(json_array_get(planned, 0)) : "?", n, n ? runs[0] : "?");
		free(*id);
		*id = NULL;
		rc = SB_EXIT_USAGE;
	}
	json_decref(planned);
	free(path);
	return rc;
}

static char *marker_path(const char *out, const char *run)
{
	return xasprintf("%s/runs.d/%s.running", out, run);
}

int campaign_mark_running(const char *out, const char *run, const char *id)
{
	char *path = marker_path(out, run), *host = host_name();
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"campaign\": ");
	json_escape(&sb, id);
	strbuf_addstr(&sb, ", \"host\": ");
	json_escape(&sb, host);
	strbuf_addf(&sb, ", \"pid\": %ld}\n", (long)getpid());
	int rc = write_file(path, sb.buf, sb.len);
	strbuf_release(&sb);
	free(host);
	free(path);
	return rc;
}

void campaign_unmark_running(const char *out, const char *run)
{
	char *path = marker_path(out, run);
	unlink(path);
	free(path);
}

/* The seconds since PATH was last written, by the clock of the filesystem
 * that holds it (a file of our own written there now): no clock skew between
 * hosts. -1 when unknown. */
static double age_on_fs(const char *out, const char *path)
{
	struct stat st, now;
	char *probe = xasprintf("%s/runs.d/.clock-%ld", out, (long)getpid());
	int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	bool ok = fd >= 0 && write(fd, "", 1) == 1 && fstat(fd, &now) == 0 &&
		  stat(path, &st) == 0;
	if (fd >= 0) {
		close(fd);
		unlink(probe);
	}
	free(probe);
	if (!ok)
		return -1;
	/* whole seconds: st_mtim is st_mtimespec on macOS, and the 5 s rule needs no more */
	return difftime(now.st_mtime, st.st_mtime);
}

bool campaign_still_recording(const char *out, const char *run, const char *id,
			      const char *trace_path, struct strbuf *why)
{
	char *path = marker_path(out, run), *host = host_name();
	json_t *m = json_load_file(path, 0, NULL);
	bool alive = false;
	free(path);
	json_t *c = json_object_get(m, "campaign"), *h = json_object_get(m, "host"),
	       *p = json_object_get(m, "pid");
	if (json_is_string(c) && !strcmp(json_string_value(c), id) && json_is_string(h) &&
	    json_is_integer(p)) {
		const char *on = json_string_value(h);
		long pid = (long)json_integer_value(p);
		if (!strcmp(on, host)) {
			alive = pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
			if (alive)
				strbuf_addf(why, "still recording: its task (pid %ld on %s) had not "
					    "ended when merged", pid, on);
		} else {
			double age = age_on_fs(out, trace_path);
			alive = age >= 0 && age < CAMPAIGN_FRESH_S;
			if (alive)
				strbuf_addf(why, "still recording: its task (pid %ld on %s) wrote its "
					    "trace %.1f s before the merge", pid, on, age);
		}
	}
	json_decref(m);
	free(host);
	return alive;
}

bool campaign_entry_ok(const struct run_entry *e, const char *mode, int rep, const char *trace,
		       const char *id, struct strbuf *why)
{
	if (strcmp(e->mode, mode) || e->run != rep)
		strbuf_addf(why, "it is for mode '%s' run %d, its name for mode '%s' run %d",
			    e->mode, e->run, mode, rep);
	else if (e->trace && strcmp(e->trace, trace))
		strbuf_addf(why, "its trace is '%s', not '%s'", e->trace, trace);
	else if (!e->campaign)
		strbuf_addf(why, "it names no campaign (this one is %s)", id);
	else if (strcmp(e->campaign, id))
		strbuf_addf(why, "it is of campaign %s, not of this one (%s): left by an earlier "
			    "comparison", e->campaign, id);
	else if (e->stopped_by == STOPPED_LOST || e->stopped_by == STOPPED_RUNNING)
		strbuf_addf(why, "it says \"stopped_by\": \"%s\", which only a merge writes",
			    stopped_by_name(e->stopped_by));
	else
		return true;
	return false;
}

char *campaign_of_trace(const char *trace_path)
{
	struct trace tr;
	memset(&tr, 0, sizeof(tr));
	char *id = NULL;
	if (trace_read_summary(trace_path, &tr) < 0 && !tr.has_start) {
		trace_release(&tr);
		return NULL;
	}
	for (size_t i = 0; i < tr.start.nlabels; i++)
		if (!strcmp(tr.start.labels[i].key, "campaign"))
			id = xstrdup(tr.start.labels[i].value);
	trace_release(&tr);
	return id;
}
