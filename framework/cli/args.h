/* args.h — the command line's commands and their options, parsed with getopt_long (internal).
 *
 * Each command lists the options it takes; an option another command takes, or none does, is a
 * usage error that names the command's own options (and the nearest one, for a typo). Parsing is
 * a pure function: it prints nothing, never exits, and only fills a t2__cli_args, so it can be
 * tested and fuzzed (fuzz/fuzz_cli.c) without running anything. */
#ifndef T2_CLI_ARGS_H
#define T2_CLI_ARGS_H

#include <stddef.h>
#include "controller/controller.h"
#include "store/store.h"

/* Options, as bits of t2__cli_command.options. */
enum {
    T2__OPT_JSON = 1 << 0,
    T2__OPT_CSV = 1 << 1,
    T2__OPT_PLAIN = 1 << 2,
    T2__OPT_QUIET = 1 << 3,
    T2__OPT_ALL = 1 << 4,
    T2__OPT_YES = 1 << 5,
    T2__OPT_DETACH = 1 << 6,
    T2__OPT_LENIENT = 1 << 7,
    T2__OPT_HOME = 1 << 8,
    T2__OPT_CONFIG = 1 << 9,
    T2__OPT_KIND = 1 << 10,
    T2__OPT_TOP = 1 << 11,
    T2__OPT_FROM_CHECKPOINT = 1 << 12,
    T2__OPT_LOST = 1 << 13,
    T2__OPT_FOLLOW = 1 << 14,
    T2__OPT_TEST = 1 << 15,
};

typedef struct t2__cli_command {
    const char *name;
    int min_pos, max_pos;  /* positional arguments */
    unsigned options;      /* T2__OPT_* bits */
    const char *operands;  /* e.g. "CONFIG TRIAL.so", for messages */
} t2__cli_command;

typedef struct t2__cli_args {
    const char *home;
    t2__store_format fmt;
    const char *pos[4];
    int npos;
    const char **overrides; /* the caller's array, room for argc entries */
    int noverrides;
    const char *kind;
    const char *from_checkpoint;
    int all, yes, detach, lenient, help, lost, follow, test;
    long top;
    t2__progress_mode progress;
} t2__cli_args;

/* The command named name, or NULL. */
const t2__cli_command *t2__cli_find(const char *name);
/* The i-th command of the table (from 0), or NULL past the last: for help and completion. */
const t2__cli_command *t2__cli_command_at(size_t i);
/* The long name of the i-th option c takes (from 0, without "--"), or NULL past the last. */
const char *t2__cli_option_at(const t2__cli_command *c, size_t i);
/* The command's options as text ("--json --csv --home DIR"), into buf. */
void t2__cli_options_text(const t2__cli_command *c, char *buf, size_t len);

/* " (did you mean --NAME?)" for the name of names (NULL-terminated, without "--") nearest to the
 * option word (a typo of at most 2 edits), else "": what every command's unknown-option message adds
 * (cli.md), also for the commands that parse their own options (plot, model, dashboard, pipeline). */
const char *t2__cli_did_you_mean(const char *word, const char *const *names);

/* Parses argv[1..argc-1] (argv[0] is the command's name) into a, whose overrides array must have
 * room for argc entries. Returns 0 (a->help set for --help/-h), or 2 with the reason in err. */
int t2__cli_parse(const t2__cli_command *c, int argc, char **argv, t2__cli_args *a, char *err, size_t errlen);

#endif
