/* path.c -- small path helpers (path.h) */
#include "path.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

bool path_exists(const char *path)
{
	struct stat st;
	return !stat(path, &st);
}

bool path_is_dir(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

char *path_absolute(const char *p)
{
	if (!p || p[0] == '/')
		return xstrdup(p);
	char *cwd = getcwd(NULL, 0);
	char *abs = cwd ? xasprintf("%s/%s", cwd, p) : xstrdup(p);
	free(cwd);
	return abs;
}
