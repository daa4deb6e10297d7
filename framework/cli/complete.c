/* complete.c — `t2exp __complete`: the words the bash completion offers, from the same tables the
 * parser uses (args.c, each outside command's getopt_long table), so that completion can never
 * offer an option the command refuses. The store is opened read-only, and only for ids. */
#define _POSIX_C_SOURCE 200809L /* PATH_MAX */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "framework/cli/args.h"
#include "framework/cli/commands.h"
#include "framework/store/store.h"

/* The commands main.c dispatches by hand, outside args.c's table, with their words: sub-commands
 * and options as pipeline.c parses them. */
static const struct {
    const char *name;
    const char *words;
} BY_HAND[] = {
    {"pipeline", "run status --force --jobs --json --help"},
    {"pipelines", "describe --json --csv --help"},
};

static void commands(const t2__command *const *outside)
{
    const t2__cli_command *c;
    for (size_t i = 0; (c = t2__cli_command_at(i)); i++) puts(c->name);
    for (size_t i = 0; i < sizeof BY_HAND / sizeof BY_HAND[0]; i++) puts(BY_HAND[i].name);
    for (size_t i = 0; outside[i]; i++) puts(outside[i]->name);
}

static void options(const char *cmd, const t2__command *const *outside)
{
    const t2__cli_command *c = t2__cli_find(cmd);
    if (c) {
        const char *o;
        for (size_t i = 0; (o = t2__cli_option_at(c, i)); i++) printf("--%s\n", o);
        puts("--help");
        return;
    }
    for (size_t i = 0; i < sizeof BY_HAND / sizeof BY_HAND[0]; i++)
        if (!strcmp(cmd, BY_HAND[i].name)) {
            const char *w = BY_HAND[i].words;
            while (*w) {
                size_t n = strcspn(w, " ");
                if (w[0] == '-') printf("%.*s\n", (int)n, w);
                w += n + (w[n] == ' ');
            }
            return;
        }
    for (size_t i = 0; outside[i]; i++)
        if (!strcmp(cmd, outside[i]->name))
            for (const struct option *o = outside[i]->options; o && o->name; o++) printf("--%s\n", o->name);
}

/* The words of w (space-separated) that are not options, one a line. */
static void words(const char *w)
{
    while (*w) {
        size_t n = strcspn(w, " ");
        if (w[0] != '-') printf("%.*s\n", (int)n, w);
        w += n + (w[n] == ' ');
    }
}

static void subcommands(const char *cmd, const t2__command *const *outside)
{
    for (size_t i = 0; i < sizeof BY_HAND / sizeof BY_HAND[0]; i++)
        if (!strcmp(cmd, BY_HAND[i].name)) words(BY_HAND[i].words);
    for (size_t i = 0; outside[i]; i++)
        if (!strcmp(cmd, outside[i]->name) && outside[i]->subcommands) words(outside[i]->subcommands);
}

/* Experiment ids, or with prefix "EXP." that experiment's trials as EXP.N (N from 0, as the
 * addressing in docs/cli.md counts them). */
static void ids(const char *home, const char *prefix)
{
    char dir[PATH_MAX];
    t2__store *st = NULL;
    if (t2__store_home(home, dir, sizeof dir) || t2__store_open(dir, 1, &st)) return; /* no store: no ids */
    char *end;
    errno = 0;
    long long exp = prefix ? strtoll(prefix, &end, 10) : 0;
    if (prefix && !errno && end != prefix && *end == '.' && exp > 0) {
        t2__trial_row *rows = NULL;
        size_t n = 0;
        if (t2__store_list_trials(st, exp, &rows, &n) == 0) {
            for (size_t k = 0; k < n; k++) printf("%lld.%zu\n", exp, k);
            t2__trial_rows_free(rows, n);
        }
    } else {
        int64_t *v = NULL;
        size_t n = 0;
        if (t2__store_experiment_ids(st, &v, &n) == 0)
            for (size_t k = 0; k < n; k++) printf("%lld\n", (long long)v[k]);
        free(v);
    }
    t2__store_close(st);
}

int t2__cli_complete(const char *home, int argc, char **argv, const t2__command *const *outside)
{
    const char *what = argc > 0 ? argv[0] : "";
    const char *arg = argc > 1 ? argv[1] : NULL;
    if (!strcmp(what, "commands")) commands(outside);
    else if (!strcmp(what, "options") && arg) options(arg, outside);
    else if (!strcmp(what, "subcommands") && arg) subcommands(arg, outside);
    else if (!strcmp(what, "ids")) ids(home, arg);
    return fflush(stdout) == 0 ? 0 : 3;
}
