/* stagebench_probe.h -- header-only probe: C/C++ pipelines write stage events for stagebench
 *
 * The same events the Python probe writes, one JSON line each, to the file
 * descriptor named by the environment variable STAGEBENCH_FD (a pipe the
 * recorder opened). The time key is "mono": seconds on CLOCK_MONOTONIC, which
 * the recorder converts to its own t. Example line:
 *   {"type":"event","kind":"stage","stage":"decode","mono":8123.417123}
 *
 * Use: #include "stagebench_probe.h" anywhere (C99 or later, C++; POSIX
 * functions are needed, so with a strict -std=c99 define _POSIX_C_SOURCE to
 * 200809L or use -std=gnu99); no library to link. Outside stagebench (STAGEBENCH_FD unset, not a number, or not a
 * pipe open for writing) every call is a silent no-op, so the pipeline runs
 * the same with or without the recorder. A child process of the pipeline
 * (one a Python pipeline starts: the probe hands the pipe on) writes to the
 * same pipe: STAGEBENCH_FD and the descriptor stay set for children.
 *
 *   sbp_stage("decode");                         // enter a stage (remembered)
 *   sbp_load("vae", nbytes, seconds);            // a model was loaded (current stage)
 *   sbp_reload("vae", nbytes, seconds);          // loaded again after a release
 *   sbp_release("text_encoder", NULL, nbytes);   // NULL stage = the current one
 *   sbp_mark("pipeline loaded");                 // a free-form note
 *   sbp_latent("latent_0", NULL, sha256hex, "float32", shape, ndim, "latent_0.npy");
 *
 * Every event is one write(2) of the whole line, so lines up to PIPE_BUF
 * (4096 bytes on Linux, 512 on macOS) written by several processes or
 * threads to the same pipe never interleave. Longer lines (very long names)
 * are still written with one write(2), without that guarantee; lines over
 * SBP_LINE_MAX bytes are not written (the call returns -1, errno E2BIG).
 * SIGPIPE is blocked around the write (macOS: the descriptor gets
 * F_SETNOSIGPIPE instead): if the recorder is gone the call returns -1
 * (EPIPE) and the probe turns itself off instead of killing the pipeline. Strings are JSON-escaped; bytes >= 0x80 pass through (UTF-8).
 * Numbers are formatted without printf, so the C locale is not required.
 *
 * Return values: 0 when the event was written or the probe is off, -1 when a
 * write failed (errno set). State (the descriptor and the current stage) is
 * shared by every translation unit of a program (weak symbols); it is not
 * locked: enter stages from one thread.
 */
#ifndef STAGEBENCH_PROBE_H
#define STAGEBENCH_PROBE_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SBP_LINE_MAX 16384
#define SBP_STAGE_MAX 256

/* Shared state: one copy per program (weak definitions merge at link time).
 * sbp_state_fd_: 0 = not looked up yet, -1 = probe off, else fd + 1. */
__attribute__((weak)) int sbp_state_fd_;
__attribute__((weak)) char sbp_state_stage_[SBP_STAGE_MAX];

/* The descriptor to write to, or -1 when the probe is off. */
static inline int sbp_fd(void)
{
	if (sbp_state_fd_ == 0) {
		const char *s = getenv("STAGEBENCH_FD");
		long fd = -1;
		if (s && *s >= '0' && *s <= '9') {
			char *end;
			errno = 0;
			fd = strtol(s, &end, 10);
			if (errno || *end || fd > 1000000)
				fd = -1;
		}
		if (fd >= 0) {
			/* the recorder's pipe, open for writing: not whatever file a
			 * child that was not handed the pipe opened at that number */
			struct stat st;
			int fl = fcntl((int)fd, F_GETFL);
			if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || fstat((int)fd, &st) ||
			    !S_ISFIFO(st.st_mode))
				fd = -1;
		}
#ifdef F_SETNOSIGPIPE
		/* macOS: a SIGPIPE from a pipe is sent to the process there, not
		 * the writing thread, so blocking it around the write cannot keep
		 * it off another thread: the descriptor stops raising it. */
		if (fd >= 0)
			fcntl((int)fd, F_SETNOSIGPIPE, 1);
#endif
		sbp_state_fd_ = fd >= 0 ? (int)fd + 1 : -1;
	}
	return sbp_state_fd_ > 0 ? sbp_state_fd_ - 1 : -1;
}

/* True when events are being written. */
static inline int sbp_enabled(void) { return sbp_fd() >= 0; }

/* The stage entered last ("" before any). */
static inline const char *sbp_current_stage(void) { return sbp_state_stage_; }

/* CLOCK_MONOTONIC in seconds (the "mono" key). */
static inline double sbp_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- line building (internal) ------------------------------------------ */

struct sbp_line_ {
	char buf[SBP_LINE_MAX];
	size_t len;
	int overflow;
};

static inline void sbp_put_(struct sbp_line_ *l, const char *s, size_t n)
{
	if (l->overflow || n > sizeof(l->buf) - l->len) {
		l->overflow = 1;
		return;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static inline void sbp_puts_(struct sbp_line_ *l, const char *s)
{
	sbp_put_(l, s, strlen(s));
}

static inline void sbp_put_u64_(struct sbp_line_ *l, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sbp_put_(l, tmp + i, sizeof(tmp) - i);
}

static inline void sbp_put_i64_(struct sbp_line_ *l, int64_t v)
{
	if (v < 0) {
		sbp_put_(l, "-", 1);
		sbp_put_u64_(l, (uint64_t)0 - (uint64_t)v);
	} else {
		sbp_put_u64_(l, (uint64_t)v);
	}
}

/* sec + usec as "S.UUUUUU" (microseconds, no locale). */
static inline void sbp_put_fixed6_(struct sbp_line_ *l, uint64_t sec, uint64_t usec)
{
	char frac[8];
	sbp_put_u64_(l, sec);
	frac[0] = '.';
	for (int i = 6; i >= 1; i--) {
		frac[i] = (char)('0' + usec % 10);
		usec /= 10;
	}
	sbp_put_(l, frac, 7);
}

static inline void sbp_put_seconds_(struct sbp_line_ *l, double s)
{
	if (!(s >= 0) || s > 1e12) /* negative or NaN: clamp, keep the line valid */
		s = s > 1e12 ? 1e12 : 0;
	uint64_t us = (uint64_t)(s * 1e6 + 0.5);
	sbp_put_fixed6_(l, us / 1000000, us % 1000000);
}

static inline void sbp_put_str_(struct sbp_line_ *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	sbp_put_(l, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		char esc[6];
		if (*p == '"' || *p == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*p;
			sbp_put_(l, esc, 2);
		} else if (*p == '\n') {
			sbp_put_(l, "\\n", 2);
		} else if (*p == '\t') {
			sbp_put_(l, "\\t", 2);
		} else if (*p == '\r') {
			sbp_put_(l, "\\r", 2);
		} else if (*p < 0x20 || *p == 0x7f) {
			esc[0] = '\\';
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[*p >> 4];
			esc[5] = hex[*p & 15];
			sbp_put_(l, esc, 6);
		} else {
			sbp_put_(l, (const char *)p, 1);
		}
	}
	sbp_put_(l, "\"", 1);
}

/* ,"key":"value" */
static inline void sbp_kv_str_(struct sbp_line_ *l, const char *key, const char *val)
{
	sbp_put_(l, ",\"", 2);
	sbp_puts_(l, key);
	sbp_put_(l, "\":", 2);
	sbp_put_str_(l, val);
}

static inline void sbp_kv_u64_(struct sbp_line_ *l, const char *key, uint64_t val)
{
	sbp_put_(l, ",\"", 2);
	sbp_puts_(l, key);
	sbp_put_(l, "\":", 2);
	sbp_put_u64_(l, val);
}

static inline void sbp_begin_(struct sbp_line_ *l, const char *kind)
{
	l->len = 0;
	l->overflow = 0;
	sbp_puts_(l, "{\"type\":\"event\",\"kind\":");
	sbp_put_str_(l, kind);
}

/* Append "mono", close the object and write the line in one write(2). */
static inline int sbp_finish_(struct sbp_line_ *l)
{
	int fd = sbp_fd();
	struct timespec ts;
	sigset_t pipe_set, old_set;
	ssize_t n;
	int saved, pending_before = 0;

	if (fd < 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sbp_puts_(l, ",\"mono\":");
	sbp_put_fixed6_(l, (uint64_t)ts.tv_sec, (uint64_t)ts.tv_nsec / 1000);
	sbp_put_(l, "}\n", 2);
	if (l->overflow) {
		errno = E2BIG;
		return -1;
	}

#ifdef F_SETNOSIGPIPE
	(void)pipe_set;
	(void)old_set;
	(void)pending_before;
	do /* F_SETNOSIGPIPE (sbp_fd): EPIPE comes without a signal */
		n = write(fd, l->buf, l->len);
	while (n < 0 && errno == EINTR);
	saved = errno;
#else
	/* Block SIGPIPE for this write; swallow the one it raised, if any. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &old_set);
	{
		sigset_t pend;
		if (sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE))
			pending_before = 1;
	}
	do
		n = write(fd, l->buf, l->len);
	while (n < 0 && errno == EINTR);
	saved = errno;
	if (n < 0 && saved == EPIPE && !pending_before) {
		struct timespec zero = { 0, 0 };
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	sigprocmask(SIG_SETMASK, &old_set, NULL);
#endif

	if (n < 0) {
		if (saved == EPIPE || saved == EBADF)
			sbp_state_fd_ = -1; /* the recorder is gone: stop trying */
		errno = saved;
		return -1;
	}
	if ((size_t)n != l->len) {
		errno = EIO;
		return -1;
	}
	return 0;
}

/* ---- the events --------------------------------------------------------- */

/* Enter a stage: {"kind":"stage","stage":NAME}. Remembered as the current
 * stage (truncated to SBP_STAGE_MAX - 1 bytes) even when the probe is off. */
static inline int sbp_stage(const char *name)
{
	struct sbp_line_ l;
	size_t n = strlen(name ? name : "");
	if (n >= SBP_STAGE_MAX)
		n = SBP_STAGE_MAX - 1;
	memcpy(sbp_state_stage_, name ? name : "", n);
	sbp_state_stage_[n] = '\0';
	if (!sbp_enabled())
		return 0;
	sbp_begin_(&l, "stage");
	sbp_kv_str_(&l, "stage", name);
	return sbp_finish_(&l);
}

static inline int sbp_load_kind_(const char *kind, const char *name, uint64_t nbytes,
				 double seconds)
{
	struct sbp_line_ l;
	if (!sbp_enabled())
		return 0;
	sbp_begin_(&l, kind);
	sbp_kv_str_(&l, "name", name);
	if (sbp_state_stage_[0])
		sbp_kv_str_(&l, "stage", sbp_state_stage_);
	sbp_kv_u64_(&l, "nbytes", nbytes);
	sbp_puts_(&l, ",\"seconds\":");
	sbp_put_seconds_(&l, seconds);
	return sbp_finish_(&l);
}

/* A model NAME of NBYTES was loaded in SECONDS, in the current stage. */
static inline int sbp_load(const char *name, uint64_t nbytes, double seconds)
{
	return sbp_load_kind_("load", name, nbytes, seconds);
}

/* NAME was loaded again after an earlier release. */
static inline int sbp_reload(const char *name, uint64_t nbytes, double seconds)
{
	return sbp_load_kind_("reload", name, nbytes, seconds);
}

/* NAME (NBYTES) was released; STAGE NULL means the current stage. Call it when
 * the memory is actually freed: stage windows count from release completion. */
static inline int sbp_release(const char *name, const char *stage, uint64_t nbytes)
{
	struct sbp_line_ l;
	if (!sbp_enabled())
		return 0;
	if (!stage)
		stage = sbp_state_stage_;
	sbp_begin_(&l, "release");
	sbp_kv_str_(&l, "name", name);
	if (stage[0])
		sbp_kv_str_(&l, "stage", stage);
	sbp_kv_u64_(&l, "nbytes", nbytes);
	return sbp_finish_(&l);
}

/* A free-form note: {"kind":"mark","note":NOTE}. */
static inline int sbp_mark(const char *note)
{
	struct sbp_line_ l;
	if (!sbp_enabled())
		return 0;
	sbp_begin_(&l, "mark");
	sbp_kv_str_(&l, "note", note);
	return sbp_finish_(&l);
}

/* A sampler output's fingerprint: NAME, STAGE (NULL = current), the sha256 of
 * its bytes as 64 hex digits, its dtype ("float32"), its shape (NDIM values;
 * NDIM < 0 or SHAPE NULL leaves "shape" out) and the file holding a copy
 * (NULL leaves "file" out). */
static inline int sbp_latent(const char *name, const char *stage, const char *sha256hex,
			     const char *dtype, const int64_t *shape, int ndim,
			     const char *file)
{
	struct sbp_line_ l;
	if (!sbp_enabled())
		return 0;
	if (!stage)
		stage = sbp_state_stage_;
	sbp_begin_(&l, "latent");
	sbp_kv_str_(&l, "name", name);
	if (stage[0])
		sbp_kv_str_(&l, "stage", stage);
	if (sha256hex)
		sbp_kv_str_(&l, "sha256", sha256hex);
	if (dtype)
		sbp_kv_str_(&l, "dtype", dtype);
	if (shape && ndim >= 0) {
		sbp_puts_(&l, ",\"shape\":[");
		for (int i = 0; i < ndim; i++) {
			if (i)
				sbp_put_(&l, ",", 1);
			sbp_put_i64_(&l, shape[i]);
		}
		sbp_put_(&l, "]", 1);
	}
	if (file)
		sbp_kv_str_(&l, "file", file);
	return sbp_finish_(&l);
}

#ifdef __cplusplus
}
#endif

#endif /* STAGEBENCH_PROBE_H */
