/* version.h -- what this stagebench is: its version and the commit it was built from
 *
 * The Makefile compiles common/version.c alone with SB_VERSION ("0.1.0") and
 * SB_COMMIT (the source tree's `git rev-parse --short=12 HEAD`, "-dirty"
 * added when it had uncommitted changes; "unknown" outside a git checkout;
 * `make SB_COMMIT=...` to set it), so a new commit rebuilds one object.
 * `stagebench --version` prints both; every trace's start record carries
 * them as "stagebench": {"version": ..., "commit": ...}.
 */
#ifndef SB_VERSION_H
#define SB_VERSION_H

extern const char sb_version[]; /* "0.1.0" */
extern const char sb_commit[];  /* "0be9e69a7294", "0be9e69a7294-dirty" or "unknown" */

#endif
