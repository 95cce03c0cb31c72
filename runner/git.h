/* git.h -- the commit a directory's git checkout is at (record's trace, compare --by-commit)
 *
 * git_head(dir, abbrev, &dirty) runs `git -C dir rev-parse [--short] HEAD`
 * and, when that names a commit, `git -C dir status --porcelain` (both through
 * spawn_capture(): stderr discarded, nothing printed).
 *
 * Returns the commit, trailing newline removed (full hash, or git's short form
 * when abbrev), which the caller frees; NULL when git is missing, dir is not
 * in a checkout or has no commit yet. *dirty: 1 when status lists changes, 0
 * when it lists none, -1 when status failed or NULL is returned.
 */
#ifndef SB_GIT_H
#define SB_GIT_H

#include <stdbool.h>

char *git_head(const char *dir, bool abbrev, int *dirty);

#endif
