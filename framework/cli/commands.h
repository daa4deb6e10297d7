/* commands.h — a command of the t2exp program that lives outside main.c (internal).
 *
 * Each such command describes itself: its name, a usage line, a one-line summary, and its
 * getopt_long option table. main.c's command table lists these objects beside its own commands,
 * prints their help and completion from them, and calls run() with argv[0] = the command's name
 * and the command's own arguments after it (the global --home is already taken out and passed as
 * home, NULL for the default). run() parses its arguments with getopt_long over the same options
 * and returns the process exit code: 0 ok, 1 the work ran and failed, 2 usage or configuration
 * error, 3 store or I/O trouble. */
#ifndef T2_CLI_COMMANDS_H
#define T2_CLI_COMMANDS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

typedef struct t2__command {
    const char *name;
    const char *synopsis;          /* e.g. "dashboard [--port N] [--bind ADDR]" */
    const char *summary;           /* one line */
    const struct option *options;  /* terminated by {0}; NULL: no options */
    const char *subcommands;       /* space-separated, for completion; NULL: none */
    int (*run)(const char *home, int argc, char **argv);
} t2__command;

extern const t2__command t2__command_dashboard; /* framework/dashboard/ */
extern const t2__command t2__command_init;      /* framework/init/ */
extern const t2__command t2__command_plot;      /* framework/plot/ */
extern const t2__command t2__command_model;     /* framework/cli/model.c */

/* `t2exp __complete WHAT [ARG]` (complete.c), what the bash completion (framework/cli/t2exp.bash) asks:
 * "commands", "options CMD", "subcommands CMD", "ids [PREFIX]" (experiment ids; with PREFIX "EXP."
 * that experiment's trials as EXP.N). One word per line; nothing for what it does not know; never an error.
 * outside: the commands above, NULL-terminated. */
int t2__cli_complete(const char *home, int argc, char **argv, const t2__command *const *outside);

/* The store of home (NULL: the default) for a listing, opened read-only; when the home has no store
 * yet, an empty one of the current schema in a temporary directory (scratch, PATH_MAX bytes, names
 * it), so that the listing prints what an empty store prints. Close with t2__cli_close_store,
 * which removes that directory. Other errors as t2__store_open's. */
struct t2__store;
int t2__cli_open_store_or_empty(const char *home, int readonly, struct t2__store **st, char *scratch, size_t cap);
int t2__cli_close_store(struct t2__store *st, char *scratch);
/* Where such a listing prints: stdout, or with a scratch store memory (NULL when out of memory),
 * written to stdout by t2__cli_listing_done, to be called after t2__cli_close_store. */
FILE *t2__cli_listing_out(const char *scratch, char **buf, size_t *len);
int t2__cli_listing_done(FILE *out, char **buf, size_t *len);

#endif
