/* cmd_dashboard.c — `t2exp dashboard` (being built this session; see framework/cli/commands.h). */
#include <stdio.h>
#include "framework/cli/commands.h"

static int run(const char *home, int argc, char **argv)
{
    (void)home, (void)argc, (void)argv;
    fprintf(stderr, "t2exp dashboard: not built yet\n");
    return 2;
}

const t2__command t2__command_dashboard = {.name = "dashboard", .synopsis = "dashboard", .summary = "(not built yet)", .options = NULL, .run = run};
