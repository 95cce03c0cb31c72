/* opt.c -- the option tables: getopt_long's arrays, --help's option list, the
 * completion spec, and the one usage-error format of every command (opt.h) */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../common/parse.h"
#include "opt.h"

#define GUARD_ROW(NAME, ID, ARG, HELP) { .name = NAME, .id = ID, .arg = ARG, .help = HELP, .act = OA_GUARD }

static const struct opt_spec guard_rows[] = {
	GUARD_ROW("wait-free", GUARD_OPT_WAIT_FREE, "PCT",
		  "start only when this much memory is available (40)"),
	GUARD_ROW("swap-budget", GUARD_OPT_SWAP_BUDGET, "SIZE",
		  "stop when system swap grows by more than this (8G)"),
	GUARD_ROW("swap-limit", GUARD_OPT_SWAP_LIMIT, "SIZE",
		  "start only when swap used + budget fits in this"),
	GUARD_ROW("kill-free", GUARD_OPT_KILL_FREE, "PCT",
		  "stop when available stays under this for two polls (10)"),
	GUARD_ROW("busy", GUARD_OPT_BUSY, "REGEX",
		  "wait while a process whose command line matches runs"),
	GUARD_ROW("quiet-for", GUARD_OPT_QUIET_FOR, "DUR",
		  "... until none was seen for this long (1m)"),
	GUARD_ROW("start-timeout", GUARD_OPT_START_TIMEOUT, "DUR",
		  "give up (exit 4) after waiting this long (30m)"),
	GUARD_ROW("poll", GUARD_OPT_POLL, "DUR", "check this often while running (250ms)"),
	GUARD_ROW("max-footprint", GUARD_OPT_MAX_FOOTPRINT, "SIZE",
		  "stop when the command's tree uses more than this\n"
		  "(its footprint: mapped model files, which the\n"
		  "kernel can drop, are not counted)"),
	GUARD_ROW("max-device", GUARD_OPT_MAX_DEVICE, "SIZE|PCT%",
		  "stop when the probe's device memory (MPS driver,\n"
		  "CUDA reserved) passes this, or this share of the device"),
	GUARD_ROW("grace", GUARD_OPT_GRACE, "DUR",
		  "time between SIGTERM and SIGKILL when stopping (5s)"),
	OPT_END,
};

const struct opt_group opt_guard_group = { guard_rows, 24 };

static int is_end(const struct opt_spec *s)
{
	return !s->name && !s->arg && !s->group;
}

/* The options of cmd (rows with a long name), groups expanded, into out[max].
 * Returns how many there are (more than max when they do not fit). */
static size_t options_of(const struct opt_cmd *cmd, const struct opt_spec **out, size_t max)
{
	size_t n = 0;
	for (const struct opt_spec *s = cmd->opts; !is_end(s); s++) {
		if (s->name && n++ < max)
			out[n - 1] = s;
		for (const struct opt_spec *g = s->group ? s->group->opts : NULL; g && !is_end(g); g++)
			if (g->name && n++ < max)
				out[n - 1] = g;
	}
	return n;
}

static const struct opt_spec *find_id(const struct opt_cmd *cmd, int id)
{
	const struct opt_spec *o[OPT_MAX];
	size_t n = options_of(cmd, o, OPT_MAX);
	for (size_t i = 0; i < n && i < OPT_MAX; i++)
		if (o[i]->id == id)
			return o[i];
	return NULL;
}

static const struct opt_spec *find_long(const struct opt_cmd *cmd, const char *name, size_t len)
{
	const struct opt_spec *o[OPT_MAX];
	size_t n = options_of(cmd, o, OPT_MAX);
	for (size_t i = 0; i < n && i < OPT_MAX; i++)
		if (strlen(o[i]->name) == len && !strncmp(o[i]->name, name, len))
			return o[i];
	return NULL;
}

const char *opt_check(const struct opt_cmd *cmd, char *buf, size_t size)
{
	const struct opt_spec *o[OPT_MAX];
	size_t n = options_of(cmd, o, OPT_MAX);
	if (n > OPT_MAX) {
		snprintf(buf, size, "%s: %zu options, more than %d", cmd->name, n, (int)OPT_MAX);
		return buf;
	}
	for (size_t i = 0; i < n; i++) {
		const struct opt_spec *a = o[i];
		bool bound = a->act == OA_STRING || a->act == OA_TRUE;
		if ((a->id <= 0 && !(bound && !a->id && !a->short_name)) || a->id == '?' || a->id == ':' ||
		    a->id >= OPT_ID_BOUND || (a->short_name && a->id != a->short_name))
			snprintf(buf, size, "%s: --%s: id %d is not one getopt returns for it",
				 cmd->name, a->name, a->id);
		else if (!a->help || (a->value == OV_WORDS && (!a->words || !*a->words)))
			snprintf(buf, size, "%s: --%s: no help text, or no words", cmd->name, a->name);
		else
			buf[0] = '\0';
		for (size_t j = 0; j < i && !buf[0]; j++)
			if (!strcmp(a->name, o[j]->name) || (a->id && a->id == o[j]->id) ||
			    (a->short_name && a->short_name == o[j]->short_name))
				snprintf(buf, size, "%s: --%s and --%s share a name, letter or id",
					 cmd->name, o[j]->name, a->name);
		if (buf[0])
			return buf;
	}
	return NULL;
}

void opt_begin(struct opt_parser *p, const struct opt_cmd *cmd, int argc, char **argv,
	       struct guard_opts *guard)
{
	opt_begin_to(p, cmd, argc, argv, guard, NULL);
}

void opt_begin_to(struct opt_parser *p, const struct opt_cmd *cmd, int argc, char **argv,
		  struct guard_opts *guard, void *bound)
{
	char why[256];
	if (opt_check(cmd, why, sizeof(why)))
		BUG("option table %s", why);
	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->guard = guard;
	p->bound = bound;
	p->argc = argc;
	p->argv = argv;
	const struct opt_spec *o[OPT_MAX];
	size_t n = options_of(cmd, o, OPT_MAX), k = 0;
	if (!(cmd->flags & OPT_PERMUTE))
		p->shorts[k++] = '+';
	for (size_t i = 0; i < n; i++) {
		if (o[i]->act == OA_GUARD && !guard)
			BUG("%s: --%s without a guard_opts to parse it into", cmd->name, o[i]->name);
		if ((o[i]->act == OA_STRING || o[i]->act == OA_TRUE) && !bound)
			BUG("%s: --%s without the struct its field is in", cmd->name, o[i]->name);
		p->rows[i] = o[i];
		/* a row without an id (bound, long only): getopt returns OPT_ID_BOUND + i */
		p->longopts[i] = (struct option){ o[i]->name, o[i]->arg ? required_argument : no_argument,
						  NULL, o[i]->id ? o[i]->id : OPT_ID_BOUND + (int)i };
		if (o[i]->short_name) {
			p->shorts[k++] = (char)o[i]->short_name;
			if (o[i]->arg)
				p->shorts[k++] = ':';
		}
	}
	optind = 0; /* a fresh scan */
	opterr = 0;
}

/* A refused option: unknown, missing its value, or one of the near command's. */
static int refused(const struct opt_parser *p, int c)
{
	const char *arg = optind > 0 && optind <= p->argc ? p->argv[optind - 1] : NULL;
	if (c != ':' && !optopt && p->cmd->near && arg && !strncmp(arg, "--", 2)) {
		size_t len = strcspn(arg + 2, "=");
		if (find_long(p->cmd->near, arg + 2, len))
			return opt_usage_error(p->cmd->name, "option '--%.*s' is one of 'stagebench %s'",
					       (int)len, arg + 2, p->cmd->near->name);
	}
	return opt_refused(p->cmd->name, c, p->shorts, optopt, arg);
}

int opt_next(struct opt_parser *p)
{
	for (;;) {
		int c = getopt_long(p->argc, p->argv, p->shorts, p->longopts, NULL);
		p->arg = optarg;
		if (c == -1)
			return -1;
		const struct opt_spec *s = c == '?' || c == ':' ? NULL
			: c >= OPT_ID_BOUND && c < OPT_ID_BOUND + OPT_MAX ? p->rows[c - OPT_ID_BOUND]
			: find_id(p->cmd, c);
		if (!s) {
			p->rc = refused(p, c);
			return OPT_EXIT;
		}
		switch (s->act) {
		case OA_RETURN:
			return c;
		case OA_QUIET:
			sb_verbosity = 0;
			break;
		case OA_VERBOSE:
			sb_verbosity = 2;
			break;
		case OA_STRING:
			*(const char **)(void *)((char *)p->bound + s->offset) = optarg;
			break;
		case OA_TRUE:
			*(bool *)(void *)((char *)p->bound + s->offset) = true;
			break;
		case OA_HELP:
			opt_help(p->cmd, stdout);
			p->rc = SB_EXIT_OK;
			return OPT_EXIT;
		case OA_GUARD: {
			struct strbuf why = STRBUF_INIT;
			int r = guard_parse_option(p->guard, c, optarg, &why);
			if (r < 0)
				p->rc = opt_usage_error(p->cmd->name, "%s", strbuf_str(&why));
			strbuf_release(&why);
			if (r < 0)
				return OPT_EXIT;
			break;
		}
		}
	}
}

int opt_interval(const char *cmd, const char *arg, int64_t *ns)
{
	if (parse_duration(arg, ns) || *ns < 1000000LL)
		return opt_usage_error(cmd, "option '--interval': invalid duration '%s' "
				       "(1ms or more)", arg);
	return 0;
}

/* The rows of an option list: name at two spaces, help at column. */
static void print_rows(FILE *f, const struct opt_spec *s, int column, int indent_long)
{
	for (; !is_end(s); s++) {
		if (s->group) {
			fputs(s->help, f);
			print_rows(f, s->group->opts, s->group->column, 0);
			continue;
		}
		char tag[160];
		if (!s->name)
			snprintf(tag, sizeof(tag), "  %s", s->arg);
		else if (s->short_name)
			snprintf(tag, sizeof(tag), "  -%c, --%s%s%s", s->short_name, s->name,
				 s->arg ? " " : "", s->arg ? s->arg : "");
		else
			snprintf(tag, sizeof(tag), "%s--%s%s%s", indent_long ? "      " : "  ", s->name,
				 s->arg ? " " : "", s->arg ? s->arg : "");
		int pad = column - (int)strlen(tag);
		fprintf(f, "%s%*s", tag, pad < 2 ? 2 : pad, "");
		for (const char *h = s->help; *h;) {
			size_t len = strcspn(h, "\n");
			fprintf(f, "%.*s\n", (int)len, h);
			h += len;
			if (*h && *++h)
				fprintf(f, "%*s", column, "");
		}
	}
}

void opt_help(const struct opt_cmd *cmd, FILE *f)
{
	fputs(cmd->usage, f);
	print_rows(f, cmd->opts, cmd->column, !!(cmd->flags & OPT_INDENT_LONG));
	if (cmd->after)
		fputs(cmd->after, f);
}

static const char *const value_names[] = {
	[OV_TEXT] = "text", [OV_FILE] = "file", [OV_DIR] = "dir", [OV_PIPELINE] = "pipeline",
	[OV_TRACE] = "trace", [OV_VARIANT] = "variant", [OV_COMMAND] = "command",
	[OV_WORDS] = "words", [OV_NONE] = "none",
};

void opt_complete_spec(const struct opt_cmd *cmd, FILE *f)
{
	const struct opt_spec *o[OPT_MAX];
	size_t n = options_of(cmd, o, OPT_MAX);
	for (size_t i = 0; i < n && i < OPT_MAX; i++) {
		char s[3] = { '-', (char)o[i]->short_name, '\0' };
		fprintf(f, "opt %s %s --%s %s%s%s\n", cmd->name, o[i]->short_name ? s : "-", o[i]->name,
			o[i]->arg ? value_names[o[i]->value] : "flag",
			o[i]->arg && o[i]->value == OV_WORDS ? " " : "",
			o[i]->arg && o[i]->value == OV_WORDS ? o[i]->words : "");
	}
	fprintf(f, "arg %s %s\n", cmd->name, value_names[cmd->operands]);
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
