/* test_probe.c -- the C probe header: event lines on STAGEBENCH_FD, escaping, no-op when off */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe/stagebench_probe.h"

static int pipe_fds[2];

static void open_probe(void)
{
	char num[16];
	cr_assert_eq(pipe(pipe_fds), 0);
	snprintf(num, sizeof(num), "%d", pipe_fds[1]);
	setenv("STAGEBENCH_FD", num, 1);
}

/* Read what was written so far; strips each ",\"mono\":N" for exact compares
 * and checks it was there. */
static void drain(char *out, size_t cap)
{
	close(pipe_fds[1]);
	ssize_t n = read(pipe_fds[0], out, cap - 1);
	cr_assert(n > 0);
	out[n] = '\0';
	char *m;
	while ((m = strstr(out, ",\"mono\":"))) {
		char *end = m + 8;
		cr_assert(end[0] >= '0' && end[0] <= '9');
		while ((*end >= '0' && *end <= '9') || *end == '.')
			end++;
		cr_assert_eq(*end, '}');
		memmove(m, end, strlen(end) + 1);
	}
}

Test(probe, events_are_one_json_line_each_with_the_current_stage)
{
	char buf[4096];
	int64_t shape[] = { 1, 4, 64, 64 };
	open_probe();
	cr_assert(sbp_enabled());
	cr_assert_eq(sbp_stage("decode"), 0);
	cr_assert_str_eq(sbp_current_stage(), "decode");
	cr_assert_eq(sbp_load("vae", 1048576, 1.25), 0);
	cr_assert_eq(sbp_reload("vae", 10, 0), 0);
	cr_assert_eq(sbp_release("text_encoder", NULL, 7), 0);
	cr_assert_eq(sbp_release("unet", "denoise", 8), 0);
	cr_assert_eq(sbp_mark("say \"hi\"\\\n\x01"), 0);
	cr_assert_eq(sbp_latent("latent_0", NULL, "ab12", "float32", shape, 4, "l.npy"), 0);
	drain(buf, sizeof(buf));
	cr_assert_str_eq(buf,
		"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"decode\"}\n"
		"{\"type\":\"event\",\"kind\":\"load\",\"name\":\"vae\",\"stage\":\"decode\",\"nbytes\":1048576,\"seconds\":1.250000}\n"
		"{\"type\":\"event\",\"kind\":\"reload\",\"name\":\"vae\",\"stage\":\"decode\",\"nbytes\":10,\"seconds\":0.000000}\n"
		"{\"type\":\"event\",\"kind\":\"release\",\"name\":\"text_encoder\",\"stage\":\"decode\",\"nbytes\":7}\n"
		"{\"type\":\"event\",\"kind\":\"release\",\"name\":\"unet\",\"stage\":\"denoise\",\"nbytes\":8}\n"
		"{\"type\":\"event\",\"kind\":\"mark\",\"note\":\"say \\\"hi\\\"\\\\\\n\\u0001\"}\n"
		"{\"type\":\"event\",\"kind\":\"latent\",\"name\":\"latent_0\",\"stage\":\"decode\",\"sha256\":\"ab12\",\"dtype\":\"float32\",\"shape\":[1,4,64,64],\"file\":\"l.npy\"}\n");
}

Test(probe, mono_is_clock_monotonic_seconds)
{
	char buf[512];
	open_probe();
	double before = sbp_mono();
	sbp_mark("x");
	double after = sbp_mono();
	close(pipe_fds[1]);
	ssize_t n = read(pipe_fds[0], buf, sizeof(buf) - 1);
	cr_assert(n > 0);
	buf[n] = '\0';
	char *m = strstr(buf, "\"mono\":");
	cr_assert(m);
	double mono = strtod(m + 7, NULL);
	cr_assert(mono >= before - 1e-6 && mono <= after + 1e-6, "%f not in [%f, %f]", mono,
		  before, after);
}

Test(probe, unset_or_invalid_fd_is_a_silent_no_op)
{
	unsetenv("STAGEBENCH_FD");
	cr_assert_not(sbp_enabled());
	cr_assert_eq(sbp_stage("a"), 0);
	cr_assert_str_eq(sbp_current_stage(), "a", "the stage is remembered even when off");
	cr_assert_eq(sbp_mark("b"), 0);
}

Test(probe, a_closed_descriptor_turns_the_probe_off)
{
	setenv("STAGEBENCH_FD", "987", 1); /* not open */
	cr_assert_not(sbp_enabled());
	cr_assert_eq(sbp_load("m", 1, 1), 0);
}

Test(probe, a_vanished_reader_gives_epipe_not_a_signal)
{
	open_probe();
	close(pipe_fds[0]);
	cr_assert_eq(sbp_mark("nobody listens"), -1);
	cr_assert_eq(errno, EPIPE);
	cr_assert_not(sbp_enabled(), "the probe turned itself off");
	cr_assert_eq(sbp_mark("again"), 0);
}

Test(probe, a_file_at_the_descriptor_is_not_written)
{
	/* a child that was not handed the pipe (close_fds) and opened a file of its own at
	 * that number: the probe must not write events into it */
	char path[] = "/tmp/sbp-probe-file-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	char num[16];
	snprintf(num, sizeof(num), "%d", fd);
	setenv("STAGEBENCH_FD", num, 1);
	cr_assert_not(sbp_enabled());
	cr_assert_eq(sbp_stage("decode"), 0);
	struct stat st;
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(st.st_size, 0, "%lld bytes written into the file", (long long)st.st_size);
	close(fd);
	unlink(path);
}
