/* git.c -- a checkout's commit and whether it has uncommitted changes, by running git */
#include <stddef.h>

#include "../common/util.h"
#include "git.h"
#include "spawn.h"

char *git_head(const char *dir, bool abbrev, int *dirty)
{
	const char *head[] = { "git", "-C", dir, "rev-parse", "HEAD", NULL, NULL };
	const char *const status[] = { "git", "-C", dir, "status", "--porcelain", NULL };
	struct strbuf out = STRBUF_INIT;
	*dirty = -1;
	if (abbrev) {
		head[4] = "--short";
		head[5] = "HEAD";
	}
	if (spawn_capture(head, &out)) {
		strbuf_release(&out);
		return NULL;
	}
	while (out.len && (out.buf[out.len - 1] == '\n' || out.buf[out.len - 1] == '\r'))
		out.buf[--out.len] = '\0';
	if (!out.len) {
		strbuf_release(&out);
		return NULL;
	}
	struct strbuf st = STRBUF_INIT;
	if (!spawn_capture(status, &st))
		*dirty = st.len > 0;
	strbuf_release(&st);
	return strbuf_detach(&out);
}
