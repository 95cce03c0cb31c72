/* opt.c -- the one usage-error format of every command (opt.h) */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "opt.h"

const char opt_guard_help[] =
	"guard options:\n"
	"  --wait-free PCT       start only when this much memory is available (40)\n"
	"  --swap-budget SIZE    stop when system swap grows by more than this (8G)\n"
	"  --swap-limit SIZE     start only when swap used + budget fits in this\n"
	"  --kill-free PCT       stop when available stays under this for two polls (10)\n"
	"  --busy REGEX          wait while a process whose command line matches runs\n"
	"  --quiet-for DUR       ... until none was seen for this long (1m)\n"
	"  --start-timeout DUR   give up (exit 4) after waiting this long (30m)\n"
	"  --poll DUR            check this often while running (250ms)\n"
	"  --max-footprint SIZE  stop when the command's tree uses more than this\n"
	"  --max-device SIZE|PCT%  stop when the probe's device memory (MPS driver,\n"
	"                        CUDA reserved) passes this, or this share of the device\n"
	"  --grace DUR           time between SIGTERM and SIGKILL when stopping (5s)\n";

int opt_guard(const char *cmd, struct guard_opts *g, int opt, const char *arg)
{
	struct strbuf why = STRBUF_INIT;
	int rc = guard_parse_option(g, opt, arg, &why);
	if (rc < 0)
		opt_usage_error(cmd, "%s", strbuf_str(&why));
	strbuf_release(&why);
	return rc;
}

int opt_usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error("%s (see 'stagebench %s --help')", msg, cmd);
	return SB_EXIT_USAGE;
}

int opt_refused(const char *cmd, int opt, const char *shortopts, int optopt_, const char *arg)
{
	if (!arg)
		arg = "?";
	if (!strncmp(arg, "--", 2)) {
		/* getopt_long: optopt is 0 for an unknown long option, else its value */
		if (opt != ':' && !optopt_)
			return opt_usage_error(cmd, "unknown option '%s'", arg);
		const char *eq = strchr(arg, '=');
		if (eq && opt != ':')
			return opt_usage_error(cmd, "option '%.*s' takes no value", (int)(eq - arg), arg);
		return opt_usage_error(cmd, "option '%s' needs a value", arg);
	}
	const char *p = optopt_ > 0 && optopt_ < 256 ? strchr(shortopts, optopt_) : NULL;
	if (opt == ':' || (p && p[1] == ':'))
		return opt_usage_error(cmd, "option '-%c' needs a value", optopt_);
	return opt_usage_error(cmd, "unknown option '-%c'", optopt_ > 0 ? optopt_ : '?');
}

int opt_bad_value(const char *cmd, const char *name, const char *arg, const char *what)
{
	return opt_usage_error(cmd, "option '--%s': invalid %s '%s'", name, what, arg);
}
