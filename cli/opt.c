/* opt.c -- the one usage-error format of every command (opt.h) */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "opt.h"

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
