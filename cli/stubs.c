/* stubs.c -- placeholders while commands are being written; each is replaced by its module */
#include "../common/util.h"
#include "commands.h"
#define STUB(n) __attribute__((weak)) int cmd_##n(int argc, char **argv) \
	{ (void)argc; (void)argv; die(SB_EXIT_FAILURE, "'%s' is not built yet", #n); }
STUB(record) STUB(guard) STUB(compare) STUB(analyze) STUB(table) STUB(latents) STUB(check) STUB(plot)
