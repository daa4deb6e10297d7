/* cmd_plot.c — `t2exp plot EXP --out DIR [--format svg|png] [--top N]`: an experiment's learning
 * curves, best value so far and hparam scatter as SVG or PNG files, for papers and CI artefacts.
 * The store is opened read-only (readers never block a running experiment: WAL); every figure is
 * drawn in memory before any file is written, and each file appears whole (a temporary file
 * renamed over it) or not at all. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "framework/cli/commands.h"
#include "framework/cli/args.h"
#include "internal.h"
#include "outfile.h"
#include "plot.h"

/* More lines than this are a tangle, and the legend would outgrow the figure. */
#define MAX_TOP 50

static const struct option OPTIONS[] = {
    {"out", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'f'},
    {"top", required_argument, NULL, 't'},
    {"help", no_argument, NULL, 'h'},
    {0, 0, 0, 0},
};

#define SYNOPSIS "plot EXP --out DIR [--format svg|png] [--top N]"

static int usage(const char *why)
{
    fprintf(stderr, "t2exp plot: %s\nusage: t2exp " SYNOPSIS "\n", why);
    return 2;
}

static void help(void)
{
    printf("usage: t2exp " SYNOPSIS "\n"
           "writes DIR/learning_curves, DIR/best_so_far, DIR/hparams, DIR/importance and DIR/parallel (.svg or\n"
           ".png) for experiment EXP:\n"
           "  learning_curves  training and searcher metric vs batches for the top N trials (default 5),\n"
           "                   ranked as `t2exp describe` ranks them\n"
           "  best_so_far      the best searcher-metric value against minutes since the experiment started\n"
           "  hparams          each numeric hyperparameter that varies against the trial's best metric\n"
           "  importance       each searched hyperparameter's share of the variance (t2exp importance)\n"
           "  parallel         parallel coordinates: an axis per varied hyperparameter and the metric, a line a trial\n");
}

static int positive(const char *s, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < 1 || v > max) return -1;
    *out = v;
    return 0;
}

/* DIR, made if missing: a fresh directory is 0777 less the umask, like mkdir(1)'s. */
static int make_dir(const char *dir)
{
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) return T2_OK;
        return t2_seterr(T2_EIO, "--out %s is not a directory", dir);
    }
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) return T2_OK;
    if (errno == ENOENT) return t2__mkdirs(dir);
    return t2_seterr(T2_EIO, "cannot make --out %s: %s", dir, strerror(errno));
}

static int write_file(const char *dir, const char *name, const char *ext, const char *buf, size_t len)
{
    size_t n = strlen(dir) + strlen(name) + strlen(ext) + 3;
    char *path = malloc(n);
    if (!path) return t2_seterr(T2_ENOMEM, "plot: out of memory");
    snprintf(path, n, "%s/%s.%s", dir, name, ext);
    t2__outfile o;
    int rc = t2__outfile_open(&o, path, 0666, NULL, 0);
    if (!rc) rc = t2__outfile_write(&o, buf, len);
    rc = rc ? (t2__outfile_abort(&o), rc) : t2__outfile_commit(&o);
    if (!rc) printf("wrote %s (%zu bytes)\n", path, len);
    free(path);
    return rc;
}

static int plot(const char *home, int64_t id, const char *dir, int png, long top)
{
    char where[4096];
    t2__store *st = NULL;
    t2__plot_data d;
    char *bufs[T2__PLOT_FILES] = {0};
    size_t lens[T2__PLOT_FILES];
    int rc = t2__store_home(home, where, sizeof where);
    if (!rc) rc = t2__store_open(where, 1, &st);
    if (rc) {
        fprintf(stderr, "t2exp plot: %s\n", t2_errmsg());
        return 3; /* no store, or one that cannot be read: store trouble, as plot.md and cli.md say */
    }
    rc = t2__plot_load(st, id, top, &d);
    t2__store_close(st);
    if (rc) {
        fprintf(stderr, "t2exp plot: %s\n", t2_errmsg());
        return rc == T2_ENOTFOUND ? 2 : rc == T2_ESTATE ? 1 : 3;
    }
    rc = t2__plot_render_all(&d, png, bufs, lens);
    size_t ntop = d.ntop;
    t2__plot_data_free(&d);
    if (!rc) rc = make_dir(dir);
    for (int i = 0; !rc && i < T2__PLOT_FILES; i++) rc = write_file(dir, t2__plot_names[i], png ? "png" : "svg", bufs[i], lens[i]);
    for (int i = 0; i < T2__PLOT_FILES; i++) free(bufs[i]);
    if (rc) {
        fprintf(stderr, "t2exp plot: %s\n", t2_errmsg());
        return 3;
    }
    printf("experiment %lld: %zu trial%s in the learning curves\n", (long long)id, ntop, ntop == 1 ? "" : "s");
    return 0;
}

static int run(const char *home, int argc, char **argv)
{
    const char *dir = NULL, *format = "svg";
    long top = 5, id;
    opterr = 0;
    optind = 0;
    int ch;
    /* A leading ':' in the option string tells a missing value (':') from an unknown option ('?'). */
    while ((ch = getopt_long(argc, argv, ":h", OPTIONS, NULL)) != -1) {
        char why[200];
        if (ch == 'h') {
            help();
            return 0;
        } else if (ch == 'o') {
            dir = optarg;
        } else if (ch == 'f') {
            format = optarg;
        } else if (ch == 't') {
            if (positive(optarg, MAX_TOP, &top)) {
                snprintf(why, sizeof why, "--top needs a number of trials from 1 to %d, not '%.40s'", MAX_TOP, optarg);
                return usage(why);
            }
        } else {
            static const char *const names[] = {"out", "format", "top", "help", NULL};
            snprintf(why, sizeof why, "%s %.60s%s; plot takes --out DIR --format svg|png --top N",
                     ch == ':' ? "a value is missing after" : "unknown option", argv[optind - 1],
                     ch == ':' ? "" : t2__cli_did_you_mean(argv[optind - 1], names));
            return usage(why);
        }
    }
    if (strcmp(format, "svg") != 0 && strcmp(format, "png") != 0) {
        char why[120];
        snprintf(why, sizeof why, "--format must be svg or png, not '%.40s'", format);
        return usage(why);
    }
    if (optind >= argc) return usage("which experiment? (EXP, an experiment id)");
    if (optind + 1 < argc) return usage("takes one experiment");
    if (positive(argv[optind], 0x7fffffffL, &id)) {
        char why[120];
        snprintf(why, sizeof why, "not an experiment id: '%.40s'", argv[optind]);
        return usage(why);
    }
    if (!dir || !*dir) return usage("--out DIR is required (where the files go)");
    return plot(home, id, dir, !strcmp(format, "png"), top);
}

const t2__command t2__command_plot = {
    .name = "plot",
    .synopsis = SYNOPSIS,
    .summary = "learning curves, best so far, hparams, importance and parallel coordinates as SVG or PNG files",
    .options = OPTIONS,
    .run = run,
};
