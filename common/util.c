/* util.c -- errors, allocation, strings and clocks shared by every module */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int sb_verbosity = 1;
void (*sb_report_hook)(void);

static void vreport(const char *prefix, const char *fmt, va_list ap) SB_GNUC_PRINTF(2, 0);
static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char msg[4096];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (sb_report_hook)
		sb_report_hook();
	fprintf(stderr, "stagebench: %s%s\n", prefix, msg);
}

int error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;
	if (sb_verbosity < 1)
		return;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void note(const char *fmt, ...)
{
	va_list ap;
	if (sb_verbosity < 1)
		return;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(code == SB_EXIT_USAGE ? "" : "error: ", fmt, ap);
	va_end(ap);
	exit(code);
}

void bug_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "stagebench: BUG: %s:%d: %s\n", file, line, msg);
	abort();
}

static void *check_alloc(void *p, size_t n)
{
	if (!p && n) {
		fprintf(stderr, "stagebench: error: out of memory (%zu bytes)\n", n);
		exit(SB_EXIT_FAILURE);
	}
	return p;
}

void *xmalloc(size_t n) { return check_alloc(malloc(n ? n : 1), n ? n : 1); }
void *xcalloc(size_t nmemb, size_t size)
{
	return check_alloc(calloc(nmemb ? nmemb : 1, size ? size : 1), 1);
}
void *xrealloc(void *p, size_t n) { return check_alloc(realloc(p, n ? n : 1), n ? n : 1); }
char *xstrdup(const char *s) { return s ? check_alloc(strdup(s), 1) : NULL; }
char *xstrndup(const char *s, size_t n) { return check_alloc(strndup(s, n), 1); }

char *xasprintf(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_detach(&sb);
}

void strbuf_init(struct strbuf *sb) { sb->buf = NULL; sb->len = sb->alloc = 0; }
void strbuf_release(struct strbuf *sb) { free(sb->buf); strbuf_init(sb); }
void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return;
	size_t n = sb->alloc ? sb->alloc : 64;
	while (n < need)
		n *= 2;
	sb->buf = xrealloc(sb->buf, n);
	sb->alloc = n;
}

void strbuf_add(struct strbuf *sb, const void *data, size_t n)
{
	strbuf_grow(sb, n);
	if (n)
		memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s) { strbuf_add(sb, s, strlen(s)); }
void strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;
	strbuf_add(sb, &ch, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		BUG("bad format '%s'", fmt);
	strbuf_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *strbuf_detach(struct strbuf *sb)
{
	char *s = sb->buf ? sb->buf : xstrdup("");
	strbuf_init(sb);
	return s;
}

const char *strbuf_str(const struct strbuf *sb) { return sb->buf ? sb->buf : ""; }

int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}


int64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sleep_ns(int64_t ns)
{
	if (ns <= 0)
		return;
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The open-files limit. The Linux meter keeps a few /proc files open for each
 * process of the tree: hundreds of processes need more than the usual soft limit
 * (1024), so it raises its own soft limit to the hard one (at most 2^20, the
 * kernel's nr_open default). The commands it starts get the soft limit back
 * (spawn.c), as programs that still use select() expect. */
static struct rlimit fd_limit_orig;
static bool fd_limit_raised;

void fd_limit_raise(void)
{
	struct rlimit rl;
	if (fd_limit_raised || getrlimit(RLIMIT_NOFILE, &rl))
		return;
	rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (1u << 20)
			      ? (rlim_t)(1u << 20) : rl.rlim_max;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		struct rlimit up = { want, rl.rlim_max };
		if (!setrlimit(RLIMIT_NOFILE, &up)) {
			fd_limit_orig = rl;
			fd_limit_raised = true;
		}
	}
}

/* Async-signal-safe (a forked child calls it before its exec). */
void fd_limit_restore(void)
{
	if (fd_limit_raised)
		setrlimit(RLIMIT_NOFILE, &fd_limit_orig);
}

void utc_iso8601(int64_t rns, char out[32])
{
	time_t secs = (time_t)(rns / 1000000000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
}

int open_regular_file(const char *path, bool quiet)
{
	/* O_NONBLOCK: opening a FIFO does not wait for a writer; it is refused below */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return quiet ? -1 : error("cannot open '%s': %s", path, strerror(errno));
	struct stat st;
	const char *why = NULL;
	if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (S_ISDIR(st.st_mode))
		why = strerror(EISDIR);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	if (why) {
		close(fd);
		return quiet ? -1 : error("cannot read '%s': %s", path, why);
	}
	return fd;
}

int read_file(const char *path, char **data, size_t *len)
{
	return read_file_tail(path, 0, data, len);
}

int read_file_tail(const char *path, size_t max, char **data, size_t *len)
{
	int fd = open_regular_file(path, false);
	if (fd < 0)
		return -1;
	struct stat st;
	if (max && !fstat(fd, &st) && st.st_size > 0 && (size_t)st.st_size > max)
		lseek(fd, st.st_size - (off_t)max, SEEK_SET);
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			strbuf_release(&sb);
			return error("cannot read '%s': %s", path, strerror(e));
		}
		if (n == 0)
			break;
		strbuf_add(&sb, buf, (size_t)n);
	}
	close(fd);
	*len = sb.len;
	*data = strbuf_detach(&sb);
	return 0;
}

int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_file(const char *path, const void *data, size_t len)
{
	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	unlink(tmp); /* a stale one, or a link: O_EXCL never opens what is there */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		error("cannot create '%s': %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	if (write_all(fd, data, len)) {
		error("cannot write '%s': %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		error("cannot write '%s': %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

int open_output(const char *path, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | flags, 0644);
	if (fd >= 0)
		return fd;
	struct stat st;
	if (errno == ELOOP && !lstat(path, &st) && S_ISLNK(st.st_mode))
		return error("cannot create '%s': it is a symbolic link (not written through)", path);
	return error("cannot create '%s': %s", path, strerror(errno));
}

int unlink_symlink(const char *path)
{
	struct stat st;
	if (lstat(path, &st) || !S_ISLNK(st.st_mode))
		return 0;
	if (unlink(path) && errno != ENOENT)
		return error("cannot remove the symbolic link '%s': %s", path, strerror(errno));
	return 0;
}

int mkdir_p(const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			error("cannot create directory '%s': %s", p, strerror(errno));
			free(p);
			return -1;
		}
		*s = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST) {
		error("cannot create directory '%s': %s", p, strerror(errno));
		free(p);
		return -1;
	}
	free(p);
	return 0;
}

char *path_search(const char *cmd, int *err)
{
	if (!*cmd) {
		*err = ENOENT;
		return NULL;
	}
	if (strchr(cmd, '/'))
		return xstrdup(cmd);
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	*err = ENOENT;
	for (const char *p = path;; p++) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		char *cand = n ? xasprintf("%.*s/%s", (int)n, p, cmd) : xasprintf("./%s", cmd);
		struct stat st;
		if (!stat(cand, &st) && S_ISREG(st.st_mode)) {
			if (!access(cand, X_OK))
				return cand;
			*err = EACCES;
		}
		free(cand);
		if (!colon)
			break;
		p = colon;
	}
	return NULL;
}

bool str_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !memcmp(s + a - b, suffix, b);
}

bool str_starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

bool stderr_is_tty(void)
{
	const char *nc = getenv("NO_COLOR");
	return isatty(2) && !(nc && *nc);
}

int finish_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		return error("cannot write to standard output: %s", strerror(errno ? errno : EIO));
	return 0;
}
