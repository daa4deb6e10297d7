/* model.c — `t2exp model`: the model registry (Determined's `det model`), store_models.c's rows.
 *
 *   t2exp model register NAME CHECKPOINT [--description TEXT]   version N+1 of NAME (made at its first)
 *   t2exp model list [--json|--csv]                              the models
 *   t2exp model describe NAME [--json|--csv]                     its versions and their checkpoints
 *   t2exp model delete NAME [--yes]                              the model (its checkpoints stay)
 *
 * A version is then a CHECKPOINT wherever one is taken: model:NAME (the latest) or model:NAME:V. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/commands.h"
#include "framework/cli/args.h"
#include "store/store.h"
#include "t2exp/error.h"

#define SYNOPSIS                                                                                       \
    "model register NAME CHECKPOINT [--description TEXT] | list | describe NAME | delete NAME [--yes]" \
    " [--json|--csv]"

static const struct option OPTIONS[] = {
    {"json", no_argument, NULL, 'j'},
    {"csv", no_argument, NULL, 'c'},
    {"description", required_argument, NULL, 'd'},
    {"yes", no_argument, NULL, 'y'},
    {"help", no_argument, NULL, 'h'},
    {0},
};

static int usage(const char *why)
{
    fprintf(stderr, "t2exp model: %s\nusage: t2exp " SYNOPSIS "\n(see t2exp model --help)\n", why);
    return 2;
}

static void help(void)
{
    printf("usage: t2exp " SYNOPSIS "\n\n"
           "the model registry (Determined's det model): a model is a name with numbered versions, each a\n"
           "checkpoint of the store, which is then kept (garbage collection passes it by; its experiment\n"
           "cannot be deleted while it is registered) and can be named as model:NAME (the latest version)\n"
           "or model:NAME:V wherever a CHECKPOINT is taken (evaluate, export, create --from-checkpoint):\n"
           "  register  makes version N+1 of NAME (the model at its first) from CHECKPOINT: a uuid, EXP\n"
           "            or EXP.N (that one's best checkpoint), or model:OTHER[:V]; --description sets the\n"
           "            model's description\n"
           "  list      the models: name, versions, latest version, description, created\n"
           "  describe  a model's versions: the checkpoint, its trial, batches and metric, its path\n"
           "  delete    the model and its versions, not their checkpoints (asks first; --yes is required\n"
           "            when stdin is no terminal)\n"
           "names: letters, digits, '_', '-' and '.'\n");
}

/* Exit code for a failed store call. */
static int failed(int rc)
{
    fprintf(stderr, "t2exp model: %s\n", t2_errmsg());
    return rc == T2_EINVAL || rc == T2_ENOTFOUND || rc == T2_ESTATE ? 2 : 3;
}

static int confirm(const char *name, int yes)
{
    if (yes) return 1;
    if (!isatty(STDIN_FILENO)) {
        fprintf(stderr, "t2exp model delete: stdin is not a terminal; pass --yes to delete model '%s'\n", name);
        return 0;
    }
    fprintf(stderr, "delete model '%s' and its versions (their checkpoints stay)? [y/N] ", name);
    char line[16];
    return fgets(line, sizeof line, stdin) && (line[0] == 'y' || line[0] == 'Y');
}

static int act(t2__store *st, const char *sub, char **pos, int npos, const char *description, int yes,
               t2__store_format fmt, FILE *out)
{
    int rc;
    if (!strcmp(sub, "list")) {
        if (npos) return usage("list takes no arguments");
        return (rc = t2__store_print_models(st, fmt, out)) ? failed(rc) : 0;
    }
    if (npos < 1) return usage("which model? (its NAME)");
    const char *name = pos[0];
    if (!strcmp(sub, "describe")) {
        if (npos > 1) return usage("describe takes one model");
        return (rc = t2__store_print_model(st, name, fmt, stdout)) ? failed(rc) : 0;
    }
    if (!strcmp(sub, "delete")) {
        if (npos > 1) return usage("delete takes one model");
        if (!confirm(name, yes)) return 2;
        if ((rc = t2__store_model_delete(st, name))) return failed(rc);
        printf("deleted model '%s'\n", name);
        return 0;
    }
    if (npos != 2) return usage("register takes NAME CHECKPOINT");
    t2__checkpoint_row ck;
    if ((rc = t2__model_name_check(name)) || (rc = t2__store_resolve_checkpoint(st, pos[1], &ck))) return failed(rc);
    if (!ck.uuid) { /* a file outside the store: nothing to keep it by */
        t2__checkpoint_row_free(&ck);
        fprintf(stderr, "t2exp model: %s is a file the store does not know; register a checkpoint of an experiment "
                        "(its uuid, EXP or EXP.N)\n", pos[1]);
        return 2;
    }
    int64_t version = 0;
    rc = t2__store_model_register(st, name, ck.uuid, description, &version);
    if (!rc) printf("model:%s:%lld is checkpoint %s\n", name, (long long)version, ck.uuid);
    t2__checkpoint_row_free(&ck);
    return rc ? failed(rc) : 0;
}

static int run(const char *home, int argc, char **argv)
{
    const char *description = NULL;
    int yes = 0, ch;
    t2__store_format fmt = T2__FMT_TABLE;
    opterr = 0;
    optind = 0;
    while ((ch = getopt_long(argc, argv, ":h", OPTIONS, NULL)) != -1) {
        char why[200];
        if (ch == 'h') {
            help();
            return 0;
        } else if (ch == 'j' || ch == 'c') {
            t2__store_format f = ch == 'j' ? T2__FMT_JSON : T2__FMT_CSV;
            if (fmt != T2__FMT_TABLE && fmt != f) return usage("--json and --csv: give one of them");
            fmt = f;
        } else if (ch == 'd') {
            description = optarg;
        } else if (ch == 'y') {
            yes = 1;
        } else {
            /* '?' with optopt set by a long --NAME=VALUE: a known option given a value it does not
             * take (--json=1); an unknown short option sets optopt too, hence the "--" and '='. */
            const char *word = argv[optind - 1], *flag = NULL;
            int given = !strncmp(word, "--", 2) && strchr(word, '=');
            for (const struct option *o = OPTIONS; ch == '?' && given && optopt && o->name; o++)
                if (o->val == optopt && o->has_arg == no_argument) flag = o->name;
            if (flag) snprintf(why, sizeof why, "%.60s: --%s takes no value", word, flag);
            else
                snprintf(why, sizeof why, "%s %.60s%s; model takes --json, --csv, --description TEXT, --yes",
                         ch == ':' ? "a value is missing after" : "unknown option", word,
                         ch == ':' ? "" : t2__cli_did_you_mean(word, (const char *const[]){"json", "csv", "description", "yes", "help", NULL}));
            return usage(why);
        }
    }
    if (optind >= argc) return usage("which subcommand? (register, list, describe or delete)");
    const char *sub = argv[optind];
    static const char *const subs[] = {"register", "list", "describe", "delete", NULL};
    int known = 0;
    for (int k = 0; subs[k]; k++) known |= !strcmp(sub, subs[k]);
    if (!known) {
        char why[160];
        snprintf(why, sizeof why, "unknown subcommand '%.40s' (register, list, describe or delete)", sub);
        return usage(why);
    }
    if (description && strcmp(sub, "register") != 0) return usage("--description goes with register");
    int writes = !strcmp(sub, "register") || !strcmp(sub, "delete");
    char scratch[PATH_MAX] = "", where[PATH_MAX];
    t2__store *st = NULL;
    /* list on a home without a store lists nothing; the others say there is no store. */
    int rc = !strcmp(sub, "list") ? t2__cli_open_store_or_empty(home, 1, &st, scratch, sizeof scratch)
                                  : t2__store_home(home, where, sizeof where);
    if (!rc && !st) rc = writes ? t2__store_open_existing(where, &st) : t2__store_open(where, 1, &st);
    if (rc) return failed(rc == T2_ENOTFOUND ? T2_EIO : rc); /* no store: exit 3, as every command says it */
    char *buf;
    size_t len;
    FILE *out = t2__cli_listing_out(scratch, &buf, &len);
    int ex = out ? act(st, sub, argv + optind + 1, argc - optind - 1, description, yes, fmt, out) : failed(T2_ENOMEM);
    t2__cli_close_store(st, scratch);
    if (out && (rc = t2__cli_listing_done(out, &buf, &len)) && !ex) ex = failed(rc);
    return ex;
}

const t2__command t2__command_model = {
    .name = "model",
    .synopsis = SYNOPSIS,
    .summary = "the model registry: named, numbered versions of checkpoints (model:NAME[:V] as a CHECKPOINT)",
    .options = OPTIONS,
    .subcommands = "register list describe delete",
    .run = run,
};
