/* pipeline.c — `t2exp pipeline run FLOW`, `t2exp pipeline status FLOW`, `t2exp pipelines`,
 * `t2exp pipelines describe ID`. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/commands.h"
#include "framework/cli/args.h"
#include "cli/pipeline.h"
#include "pipeline/flow.h"
#include "pipeline/run.h"
#include "store/store_pipeline.h"
#include "t2exp/error.h"

#define EX_FAILED 1
#define EX_USAGE 2
#define EX_STORE 3
#define EX_STOPPED 130

const char t2__cli_pipeline_usage[] =
    "usage: t2exp [--home DIR] pipeline run FLOW [--force STAGE]... [--jobs N]\n"
    "       t2exp [--home DIR] pipeline status FLOW [--json]\n"
    "       t2exp [--home DIR] pipelines [--json|--csv]\n"
    "       t2exp [--home DIR] pipelines describe RUN [--json|--csv]\n"
    "\n"
    "  pipeline run     run every stage of the flow file that is not up to date (dependencies first,\n"
    "                   independent stages in parallel within --jobs slots, default: the cores);\n"
    "                   --force STAGE reruns STAGE and everything after it (repeatable)\n"
    "  pipeline status  each stage: up to date, stale (and why), never run or failed last time\n"
    "  pipelines        the recorded pipeline runs; describe RUN: its stages, times, exit codes, logs\n"
    "See docs/pipelines.md.\n";

/* Each command's options: their names (for the did-you-mean) and how its unknown-option message
 * lists them (cli.md). The last row serves the commands not named before it. */
static const struct {
    const char *cmd;
    const char *const names[3];
    const char *takes;
} OPTIONS[] = {
    {"pipeline run", {"force", "jobs", NULL}, "--force STAGE --jobs N"},
    {"pipelines", {"json", "csv", NULL}, "--json --csv"},
    {NULL, {"json", NULL}, "--json"},
};

static int usage(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "t2exp %s: ", cmd);
    fprintf(stderr, fmt, arg);
    /* An unknown option: the nearest of the command's own, and all of them (cli.md). */
    if (!strncmp(fmt, "unknown option", 14)) {
        size_t k = 0;
        while (OPTIONS[k].cmd && strcmp(OPTIONS[k].cmd, cmd) != 0) k++;
        fprintf(stderr, "%s; %s takes: %s", t2__cli_did_you_mean(arg, OPTIONS[k].names), cmd, OPTIONS[k].takes);
    }
    fprintf(stderr, "\n(see t2exp %s --help)\n", cmd);
    return EX_USAGE;
}

static int flow_error(const char *cmd, int rc)
{
    size_t n = 0, more = 0;
    const char *const *e = t2__flow_errors(&n, &more);
    if (n < 2) fprintf(stderr, "t2exp %s: %s\n", cmd, t2_errmsg());
    for (size_t i = 0; n >= 2 && i < n; i++) fprintf(stderr, "t2exp %s: %s\n", cmd, e[i]);
    if (n >= 2 && more) fprintf(stderr, "t2exp %s: %zu errors (the first %zu shown); nothing was run\n", cmd, n + more, n);
    else if (n >= 2) fprintf(stderr, "t2exp %s: %zu errors; nothing was run\n", cmd, n);
    return rc == T2_EINVAL || rc == T2_EFORMAT || rc == T2_ENOTFOUND ? EX_USAGE : rc == T2_ESTATE ? EX_FAILED : EX_STORE;
}

static int want_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
    return 0;
}

int t2__cli_pipeline(int argc, char **argv, const char *home)
{
    if (want_help(argc, argv)) {
        fputs(t2__cli_pipeline_usage, stdout);
        return 0;
    }
    if (argc < 1) return usage("pipeline", "expects run FLOW or status FLOW%s", "");
    const char *sub = argv[0], *flow = NULL;
    int is_run = !strcmp(sub, "run");
    if (!is_run && strcmp(sub, "status") != 0) return usage("pipeline", "unknown subcommand %s (run or status)", sub);
    const char *cmd = is_run ? "pipeline run" : "pipeline status";
    const char **force = calloc((size_t)argc + 1, sizeof *force);
    if (!force) {
        fprintf(stderr, "t2exp %s: out of memory\n", cmd);
        return EX_STORE;
    }
    size_t nforce = 0;
    long long jobs = 0;
    t2__store_format fmt = T2__FMT_TABLE;
    int ex = 0;
    for (int i = 1; i < argc && !ex; i++) {
        const char *s = argv[i];
        if (is_run && (!strcmp(s, "--force") || !strcmp(s, "--jobs"))) {
            if (i + 1 >= argc) {
                ex = usage(cmd, "%s needs a value", s);
                break;
            }
            const char *v = argv[++i];
            if (!strcmp(s, "--force")) force[nforce++] = v;
            else {
                char *end;
                errno = 0;
                jobs = strtoll(v, &end, 10);
                if (errno || *end || jobs < 1 || jobs > 4096) ex = usage(cmd, "--jobs: not a number of slots (1..4096): %s", v);
            }
        } else if (!is_run && !strcmp(s, "--json")) {
            fmt = T2__FMT_JSON;
        } else if (s[0] == '-' && s[1]) {
            ex = usage(cmd, "unknown option %s", s);
        } else if (!flow) {
            flow = s;
        } else {
            ex = usage(cmd, "unexpected argument %s", s);
        }
    }
    if (!ex && !flow) ex = usage(cmd, "expects %s", "FLOW (a flow file)");
    if (ex) {
        free(force);
        return ex;
    }
    if (!is_run) {
        int rc = t2__pipeline_status(flow, home, fmt, stdout);
        free(force);
        return rc ? flow_error(cmd, rc) : 0;
    }
    t2__pipeline_opts o = {.flow_path = flow, .home = home, .force = force, .nforce = nforce, .jobs = jobs,
                           .out = stdout};
    int64_t run_id = 0;
    int rc = t2__pipeline_run(&o, &run_id);
    free(force);
    if (rc < 0) return flow_error(cmd, rc);
    return rc == T2__PIPELINE_OK ? 0 : rc == T2__PIPELINE_INTERRUPTED ? EX_STOPPED : EX_FAILED;
}

int t2__cli_pipelines(int argc, char **argv, const char *home)
{
    if (want_help(argc, argv)) {
        fputs(t2__cli_pipeline_usage, stdout);
        return 0;
    }
    t2__store_format fmt = T2__FMT_TABLE;
    const char *pos[2] = {NULL, NULL};
    int npos = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) fmt = T2__FMT_JSON;
        else if (!strcmp(argv[i], "--csv")) fmt = T2__FMT_CSV;
        else if (argv[i][0] == '-' && argv[i][1])
            return usage("pipelines", "unknown option %s", argv[i]);
        else if (npos < 2) pos[npos++] = argv[i];
        else return usage("pipelines", "unexpected argument %s", argv[i]);
    }
    int64_t id = 0;
    if (npos > 0) {
        if (strcmp(pos[0], "describe") != 0) return usage("pipelines", "unknown subcommand %s (describe RUN)", pos[0]);
        char *end;
        errno = 0;
        /* Digits only, as every id (strtoll also takes " 1" and "+1"). */
        long long v = pos[1] && *pos[1] >= '0' && *pos[1] <= '9' ? strtoll(pos[1], &end, 10) : 0;
        if (!v || errno || *end || v <= 0) return usage("pipelines", "describe expects a pipeline run id%s", "");
        id = v;
    }
    char h[PATH_MAX], scratch[PATH_MAX] = "";
    t2__store *st = NULL;
    /* The listing of a home with no store is empty, as `list` and `model list` print it (a fresh
     * machine's `pipelines --json | jq` must get []); describe names a run, so no store is an error. */
    int rc = !id ? t2__cli_open_store_or_empty(home, 1, &st, scratch, sizeof scratch) : t2__store_home(home, h, sizeof h);
    if (!rc && !st) rc = t2__store_open(h, 1, &st);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = NULL;
    if (!rc && !(out = t2__cli_listing_out(scratch, &buf, &len))) rc = T2_ENOMEM;
    if (!rc) rc = id ? t2__store_print_pipeline_run(st, id, fmt, out) : t2__store_print_pipeline_runs(st, fmt, out);
    if (rc) fprintf(stderr, "t2exp pipelines: %s\n", t2_errmsg()); /* before the close, which may reset it */
    int notfound = rc == T2_ENOTFOUND && st; /* the store is there; the run is not */
    t2__cli_close_store(st, scratch);
    /* Once out is open, always: it frees the memory stream (and writes out what it holds). */
    int done = out ? t2__cli_listing_done(out, &buf, &len) : T2_OK;
    if (done && !rc) {
        fprintf(stderr, "t2exp pipelines: %s\n", t2_errmsg());
        rc = done;
    }
    return !rc ? 0 : notfound ? EX_USAGE : EX_STORE;
}
