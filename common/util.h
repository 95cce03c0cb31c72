/* util.h -- errors, allocation, strings and clocks shared by every module
 *
 * Error discipline (after git's usage.c):
 *   - library code reports with error() (prints "stagebench: error: ...", returns -1)
 *     or warning() and hands the failure up;
 *   - only command code (cmd_*) calls die();
 *   - BUG() marks a broken invariant and aborts.
 * Messages are lowercase, the problem first, the file (and line) quoted.
 */
#ifndef SB_UTIL_H
#define SB_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

/* Exit codes shared by every command. record and guard pass the command's own status. */
enum sb_exit {
	SB_EXIT_OK = 0,      /* nothing to report */
	SB_EXIT_FINDING = 1, /* a regression or difference was found */
	SB_EXIT_USAGE = 2,   /* bad command line */
	SB_EXIT_FAILURE = 3, /* runtime failure: unreadable input, I/O error, ... */
};

#define SB_GNUC_PRINTF(f, a) __attribute__((format(printf, f, a)))

int error(const char *fmt, ...) SB_GNUC_PRINTF(1, 2);   /* returns -1 */
void warning(const char *fmt, ...) SB_GNUC_PRINTF(1, 2);
void note(const char *fmt, ...) SB_GNUC_PRINTF(1, 2);    /* "stagebench: ..." unless quiet */
noreturn void die(int code, const char *fmt, ...) SB_GNUC_PRINTF(2, 3);
noreturn void bug_at(const char *file, int line, const char *fmt, ...) SB_GNUC_PRINTF(3, 4);
#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)

/* Verbosity: 0 quiet (-q), 1 normal, 2 verbose (-v). */
extern int sb_verbosity;

/* Called (when set) before error(), warning(), note() or die() write to
 * stderr: a live status line on the terminal clears itself there, so that a
 * message never lands in the middle of it. */
extern void (*sb_report_hook)(void);

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);             /* NULL in, NULL out */
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) SB_GNUC_PRINTF(1, 2);

/* Grow an array: ALLOC_GROW(items, count + 1, alloc) */
#define ALLOC_GROW(x, nr, alloc)                                              \
	do {                                                                   \
		if ((size_t)(nr) > (size_t)(alloc)) {                          \
			size_t _n = (alloc) ? (size_t)(alloc) * 2 : 16;        \
			if (_n < (size_t)(nr))                                 \
				_n = (size_t)(nr);                             \
			(x) = xrealloc((x), _n * sizeof(*(x)));                \
			(alloc) = _n;                                          \
		}                                                              \
	} while (0)

/* A growable NUL-terminated byte buffer; STRBUF_INIT or strbuf_init() before use. */
struct strbuf {
	char *buf; /* always NUL-terminated once anything was added */
	size_t len;
	size_t alloc;
};
#define STRBUF_INIT { NULL, 0, 0 }
void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t n);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) SB_GNUC_PRINTF(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap) SB_GNUC_PRINTF(2, 0);
char *strbuf_detach(struct strbuf *sb); /* caller frees; sb is reset */
const char *strbuf_str(const struct strbuf *sb); /* "" when empty */

/* Clocks. Instants and durations are nanoseconds in int64_t, named *_ns. */
int64_t mono_ns(void);     /* CLOCK_MONOTONIC */
int64_t real_ns(void);     /* CLOCK_REALTIME */
void sleep_ns(int64_t ns); /* restarts on EINTR */
void fd_limit_raise(void);   /* soft open-files limit up to the hard one */
void fd_limit_restore(void); /* back, in a child before its exec */
void utc_iso8601(int64_t real_ns, char out[32]); /* 2026-10-06T10:36:12+00:00 */

/* Whole-file helpers. read_file returns 0 and a NUL-terminated buffer, or
 * error(); anything but a regular file (a FIFO, a device) is refused at once
 * ("cannot read 'F': not a regular file") instead of read forever. */
int read_file(const char *path, char **data, size_t *len);
/* The same, of the file's last MAX bytes at most (MAX 0: all of it). */
int read_file_tail(const char *path, size_t max, char **data, size_t *len);
/* Open a regular file for reading (O_NONBLOCK, which does not matter for
 * one); -1 after error() (none when quiet) for anything else. */
int open_regular_file(const char *path, bool quiet);
int write_file(const char *path, const void *data, size_t len); /* atomic: tmp + rename */
/* Create (or truncate) an output file for writing, O_NOFOLLOW: a symlink at
 * PATH is never written through ("cannot create 'P': it is a symbolic link").
 * FLAGS adds to O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC. The fd, or -1 after error(). */
int open_output(const char *path, int flags);
/* Remove PATH when it is a symbolic link (a file of ours that a link took the
 * place of: it is replaced, not followed). 0, or -1 after error(). */
int unlink_symlink(const char *path);
/* All of DATA to FD, again after EINTR and short writes; -1 with errno set on failure. */
int write_all(int fd, const void *data, size_t len);
int mkdir_p(const char *path);
/* The program `name` runs as, looked up on PATH (unset or empty: the default
 * /usr/local/bin:/usr/bin:/bin; an empty entry is the current directory) as
 * execvp would, in the caller (execvp is not async-signal-safe): the first
 * regular, executable file, malloc'd. A name with a '/' comes back as it is.
 * NULL with *err ENOENT (none, or name "") or EACCES (found, not executable). */
char *path_search(const char *name, int *err);
bool str_ends_with(const char *s, const char *suffix);
bool str_starts_with(const char *s, const char *prefix);

/* True when stderr is a terminal and NO_COLOR is unset (live status lines, colours). */
bool stderr_is_tty(void);

/* Write-error check after a command (git's approach): flush stdout, 0 or error(). */
int finish_stdout(void);

#endif
