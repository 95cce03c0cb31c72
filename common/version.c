/* version.c -- the version and commit the Makefile passes (version.h) */
#include "version.h"

#ifndef SB_VERSION
#define SB_VERSION "0.1.0"
#endif
#ifndef SB_COMMIT
#define SB_COMMIT "unknown"
#endif

const char sb_version[] = SB_VERSION;
const char sb_commit[] = SB_COMMIT;
