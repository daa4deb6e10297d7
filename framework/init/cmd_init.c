/* cmd_init.c — `t2exp init` (being built this session; see framework/cli/commands.h). */
#include <stdio.h>
#include "framework/cli/commands.h"

static int run(const char *home, int argc, char **argv)
{
    (void)home, (void)argc, (void)argv;
    fprintf(stderr, "t2exp init: not built yet\n");
    return 2;
}

const t2__command t2__command_init = {.name = "init", .synopsis = "init", .summary = "(not built yet)", .options = NULL, .run = run};
