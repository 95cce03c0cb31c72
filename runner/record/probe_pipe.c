/* probe_pipe.c -- the probe pipe's lines (stage events, devmem) and the command's stderr relay */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/util.h"
#include "../../traces/trace.h"
#include "../../traces/window.h"
#include "record_int.h"

static void probe_line(struct run *r, const char *line, size_t len)
{
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (!len)
		return;
	struct trace_event ev;
	struct trace_sample dev;
	const char *msg = NULL;
	memset(&ev, 0, sizeof(ev));
	if (trace_parse_probe_line(line, len, (double)r->t0_ns / 1e9, &ev, &msg)) {
		if (!r->pin.warned)
			warning("ignoring a malformed line from the command's probe pipe: %s: '%.*s'",
				msg ? msg : "unreadable", (int)(len > 80 ? 80 : len), line);
		r->pin.warned = true;
		trace_event_release(&ev);
		return;
	}
	if (!trace_devmem_sample(&ev, &dev, &r->devmem_total)) {
		/* device memory on the interval: a sample of its own, the guard's reading */
		if (r->w && trace_writer_sample(r->w, &dev))
			trace_failed(r);
		r->devmem_known = true;
		r->devmem = dev.devmem;
		if (r->g->has_max_device && r->g->max_device_pct > 0 && !r->devmem_total &&
		    !r->devmem_pct_warned) {
			r->devmem_pct_warned = true;
			warning("--max-device %g%%: the probe reports no device size (torch.mps without "
				"recommended_max_memory); device memory is not checked", r->g->max_device_pct);
		}
		trace_event_release(&ev);
		return;
	}
	/* the window rule (traces/window.h): a stage event opens a window, a
	 * release of the stage in force moves its start */
	if (window_continues(&r->win, &ev)) {
		/* the first stage event is "setup": setup's window, open since
		 * the command started, goes on */
		window_step(&r->win, &ev);
		write_event(r, &ev);
	} else if (ev.kind == EV_STAGE) {
		stage_window_close(r, ev.t); /* the peak of the stage that ends here */
		window_step(&r->win, &ev);
		write_event(r, &ev);
		stage_window_open_at(r, ev.t, true);
		stage_window_sample(r, ev.t);
	} else {
		write_event(r, &ev);
		if (window_step(&r->win, &ev) == WINDOW_MOVE && r->sw.open) {
			stage_window_open_at(r, r->win.start_t, true);
			stage_window_sample(r, ev.t);
		}
	}
	trace_event_release(&ev);
}

/* Take n bytes read from the pipe: every complete line goes to probe_line();
 * a line longer than PROBE_LINE_MAX is skipped up to its newline, with a
 * warning. Each byte is looked at once, whatever the lines' lengths. */
static void probe_take(struct run *r, const char *p, size_t n)
{
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t len = nl ? (size_t)(nl - p) : n;
		if (r->pin.skipping) {
			/* dropped up to its end */
		} else if (r->pin.buf.len + len > PROBE_LINE_MAX) {
			if (!r->pin.skipped++) {
				char head[41];
				const char *h = r->pin.buf.len ? r->pin.buf.buf : p;
				size_t k;
				for (k = 0; k < 40 && h[k]; k++)
					head[k] = h[k] >= 0x20 && h[k] < 0x7f ? h[k] : '?';
				head[k] = '\0';
				warning("%s: skipping a line longer than %d bytes (the limit for a line "
					"on the probe pipe) from '%s': '%s...'", r->o->name,
					PROBE_LINE_MAX, r->argv[0], head);
			}
			r->pin.skipping = true;
			strbuf_reset(&r->pin.buf);
		} else if (nl && !r->pin.buf.len) {
			probe_line(r, p, len); /* a whole line in this read: no copy */
		} else {
			strbuf_add(&r->pin.buf, p, len);
			if (nl) {
				probe_line(r, r->pin.buf.buf, r->pin.buf.len);
				strbuf_reset(&r->pin.buf);
			}
		}
		if (!nl)
			return;
		r->pin.skipping = false;
		p = nl + 1;
		n -= len + 1;
	}
}

/* Read what the non-blocking *fd holds, at most max bytes (the loop's timers
 * run before the rest is read), handing each chunk to take(r, ...). At EOF
 * (every holder of the write end is gone) or an error *fd is closed and set to
 * -1, and true returned. */
static bool drain(struct run *r, int *fd, size_t max,
		  void (*take)(struct run *r, const char *p, size_t n))
{
	char buf[65536];
	size_t total = 0;
	while (total < max) {
		ssize_t n = read(*fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			close(*fd);
			*fd = -1;
			return true;
		}
		total += (size_t)n;
		take(r, buf, (size_t)n);
	}
	return false;
}

/* The probe's pipe: whole lines as they come; at EOF the last, unended one. */
void probe_read(struct run *r, size_t max)
{
	if (!drain(r, &r->pin.fd, max, probe_take))
		return;
	if (r->pin.buf.len && !r->pin.skipping)
		probe_line(r, r->pin.buf.buf, r->pin.buf.len);
	strbuf_reset(&r->pin.buf);
}

/* ---- the command's stderr, copied --------------------------------------------- */

/* What the command wrote to its stderr: to the copy as it comes (nothing held
 * back: it survives our end) and to our stderr. */
static void err_take(struct run *r, const char *p, size_t n)
{
	if (!r->err.copy_failed && write_all(r->o->stderr_copy_fd, p, n)) {
		r->err.copy_failed = true;
		warning("%s: cannot keep the command's stderr: %s", r->o->name, strerror(errno));
	}
	status_clear(r);
	write_all(STDERR_FILENO, p, n);
}

/* Relay the command's stderr, at most max bytes; at EOF the pipe is closed. */
void err_relay(struct run *r, size_t max)
{
	drain(r, &r->err.fd, max, err_take);
}

/* The pipe the command's stderr goes to (o->stderr_copy_fd set); 0 or -1. */
int err_pipe_open(struct run *r)
{
	if (r->o->stderr_copy_fd < 0)
		return 0;
	if (pipe(r->err.pipe))
		return error("cannot create a pipe: %s", strerror(errno));
	fcntl(r->err.pipe[0], F_SETFD, FD_CLOEXEC);
	fcntl(r->err.pipe[0], F_SETFL, O_NONBLOCK);
	fcntl(r->err.pipe[1], F_SETFD, FD_CLOEXEC);
	r->sp.stderr_fd = r->err.pipe[1];
	return 0;
}
