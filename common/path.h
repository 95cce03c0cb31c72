/* path.h -- small path helpers: does it exist, is it a directory, made absolute */
#ifndef SB_PATH_H
#define SB_PATH_H

#include <stdbool.h>

/* True when stat() of PATH succeeds (links followed). */
bool path_exists(const char *path);

/* True when PATH is a directory (links followed). */
bool path_is_dir(const char *path);

/* P made absolute against the current directory (P itself when that cannot
 * be read); NULL for NULL. Caller frees. */
char *path_absolute(const char *p);

#endif
