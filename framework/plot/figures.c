/* figures.c — the five figures of `t2exp plot`, built from the loaded data: learning curves of
 * the top trials, the best value so far, each numeric hparam against the searcher metric, the
 * hyperparameters' importance (fANOVA, `t2exp importance`), and the parallel coordinates of every
 * trial's hparams and result. */
#define _POSIX_C_SOURCE 200809L
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "plot.h"

const char *const t2__plot_names[T2__PLOT_FILES] = {"learning_curves", "best_so_far", "hparams", "importance",
                                                    "parallel"};

static int learning_curves(const t2__plot_data *d, int png, char **buf, size_t *len)
{
    t2__series *s = calloc(2 * d->ntop + 1, sizeof *s);
    const char **legend = calloc(d->ntop + 1, sizeof *legend);
    int rc = s && legend ? T2_OK : t2_seterr(T2_ENOMEM, "plot: out of memory");
    for (size_t i = 0; !rc && i < d->ntop; i++) {
        const t2__plot_trial *t = &d->top[i];
        s[i] = (t2__series){t->train.x, t->train.y, t->train.n, (int)i, T2__SERIES_LINE | T2__SERIES_POINTS};
        s[d->ntop + i] = (t2__series){t->valid.x, t->valid.y, t->valid.n, (int)i, T2__SERIES_LINE | T2__SERIES_POINTS};
        legend[i] = t->label;
    }
    char title[200];
    snprintf(title, sizeof title, "experiment %lld (%.60s): learning curves of the top %zu trial%s",
             (long long)d->experiment_id, d->name ? d->name : "", d->ntop, d->ntop == 1 ? "" : "s");
    /* Training first when there is a training metric; the validation panel always. */
    t2__panel p[2] = {
        {"training", "batches", d->train_metric, 0, s, d->ntop, NULL, 0, NULL, 0, 0},
        {"validation (the searcher metric)", "batches", d->metric, 0, s + d->ntop, d->ntop, NULL, 0, NULL, 0, 0},
    };
    int has_train = d->train_metric != NULL;
    t2__figure f = {title, has_train ? p : p + 1, has_train ? 2 : 1, legend, d->ntop, NULL};
    if (!rc) rc = t2__chart_render(&f, png, buf, len);
    free(s);
    free(legend);
    return rc;
}

static int best_so_far(const t2__plot_data *d, int png, char **buf, size_t *len)
{
    t2__series s[2] = {
        {d->all.x, d->all.y, d->all.n, -1, T2__SERIES_POINTS},
        {d->best.x, d->best.y, d->best.n, 0, T2__SERIES_STEP | T2__SERIES_POINTS},
    };
    char title[200], ylabel[120];
    snprintf(title, sizeof title, "experiment %lld (%.60s): best %.60s so far (%s is better)",
             (long long)d->experiment_id, d->name ? d->name : "", d->metric, d->smaller_is_better ? "smaller" : "larger");
    snprintf(ylabel, sizeof ylabel, "%.100s", d->metric);
    t2__panel p = {NULL, "minutes since the experiment started", ylabel, 0, s, 2, NULL, 0, NULL, 0, 0};
    static const char *const legend[] = {"best so far"};
    t2__figure f = {title, &p, 1, legend, 1, NULL};
    return t2__chart_render(&f, png, buf, len);
}

/* A log axis when every value is positive and they span more than two decades. */
static int wants_log(const t2__plot_xy *p)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (!(p->x[i] > 0)) return 0;
        lo = fmin(lo, p->x[i]), hi = fmax(hi, p->x[i]);
    }
    return p->n > 1 && hi > 100 * lo;
}

static int hparams(const t2__plot_data *d, int png, char **buf, size_t *len)
{
    t2__series s[T2__PLOT_MAX_HPARAMS];
    t2__panel p[T2__PLOT_MAX_HPARAMS];
    char title[200];
    snprintf(title, sizeof title, "experiment %lld (%.60s): %.60s by hyperparameter", (long long)d->experiment_id,
             d->name ? d->name : "", d->metric);
    for (size_t h = 0; h < d->nhp; h++) {
        s[h] = (t2__series){d->hp[h].x, d->hp[h].y, d->hp[h].n, 0, T2__SERIES_POINTS};
        p[h] = (t2__panel){NULL, d->hp_name[h], d->metric, wants_log(&d->hp[h]), &s[h], 1, NULL, 0, NULL, 0, 0};
    }
    if (d->nhp == 0) p[0] = (t2__panel){"no numeric hyperparameter varies", "hyperparameter", d->metric, 0, NULL, 0, NULL, 0, NULL, 0, 0};
    t2__figure f = {title, p, d->nhp ? d->nhp : 1, NULL, 0, "one point per trial with a validation (its best)"};
    return t2__chart_render(&f, png, buf, len);
}

/* `t2exp importance` as bars, the most important at the top; without an answer, a panel that
 * says why. */
static int importance(const t2__plot_data *d, int png, char **buf, size_t *len)
{
    size_t n = d->imp.d;
    double *x = calloc(n + 1, sizeof *x), *y = calloc(n + 1, sizeof *y);
    const char **cats = calloc(n + 1, sizeof *cats);
    int rc = x && y && cats ? T2_OK : t2_seterr(T2_ENOMEM, "plot: out of memory");
    for (size_t k = 0; !rc && k < n; k++) { /* category k from the bottom: the k-th least important */
        x[k] = d->imp.values[n - 1 - k];
        y[k] = (double)k;
        cats[k] = d->imp.names[n - 1 - k];
    }
    char title[300], xlabel[200];
    snprintf(title, sizeof title, "experiment %lld (%.60s): hyperparameter importance (fANOVA)", (long long)d->experiment_id,
             d->name ? d->name : "");
    snprintf(xlabel, sizeof xlabel, "share of the variance of %.60s over %zu trials", d->metric ? d->metric : "",
             d->imp.used);
    t2__series s = {x, y, n, 0, T2__SERIES_HBAR};
    t2__panel p = {NULL, xlabel, "hyperparameter", 0, &s, 1, cats, n, NULL, 0, 0};
    /* Without an answer, why in a few words (t2exp importance says it in full). */
    const char *why = strstr(d->imp_why, "searched no hyperparameter") ? "no hyperparameter is searched"
                                                                      : "fewer than 2 completed trials: none yet";
    if (n == 0) p = (t2__panel){why, "importance", "hyperparameter", 0, NULL, 0, NULL, 0, NULL, 0, 0};
    t2__figure f = {title, &p, 1, NULL, 0, "one bar per searched hyperparameter, the most important at the top"};
    if (!rc) rc = t2__chart_render(&f, png, buf, len);
    free(x);
    free(y);
    free(cats);
    return rc;
}

/* Every ranked trial as a line across an axis per varying hparam and one for the metric. */
static int parallel(const t2__plot_data *d, int png, char **buf, size_t *len)
{
    char title[300], names[600] = "", series[200], note[200];
    snprintf(title, sizeof title, "experiment %lld (%.60s): parallel coordinates of hyperparameters and %.60s",
             (long long)d->experiment_id, d->name ? d->name : "", d->metric ? d->metric : "");
    for (size_t a = 0; a < d->npar; a++) {
        size_t at = strlen(names);
        snprintf(names + at, sizeof names - at, "%s%.60s", a ? ", " : "", d->par[a].name);
    }
    snprintf(series, sizeof series, "one line per trial with a validation, %zu trials, coloured from the best (dark blue) "
             "to the worst (light yellow)", d->nlines);
    snprintf(note, sizeof note, "dark: the %s %.60s", d->smaller_is_better ? "smallest" : "largest",
             d->metric ? d->metric : "");
    t2__panel p = {d->nlines ? note : "no trial has a validation yet", names,
                   "each axis's own range (log where its values span over 100x), or its values in order of first appearance",
                   0, NULL, 0, NULL, 0, d->par, d->npar, d->nlines};
    t2__figure f = {title, &p, 1, NULL, 0, series};
    return t2__chart_render(&f, png, buf, len);
}

int t2__plot_render_all(const t2__plot_data *d, int png, char *bufs[T2__PLOT_FILES], size_t lens[T2__PLOT_FILES])
{
    int (*const fig[T2__PLOT_FILES])(const t2__plot_data *, int, char **, size_t *) = {learning_curves, best_so_far,
                                                                                     hparams, importance, parallel};
    int rc = T2_OK;
    for (int i = 0; i < T2__PLOT_FILES; i++) bufs[i] = NULL, lens[i] = 0;
    for (int i = 0; !rc && i < T2__PLOT_FILES; i++) rc = fig[i](d, png, &bufs[i], &lens[i]);
    if (rc)
        for (int i = 0; i < T2__PLOT_FILES; i++) free(bufs[i]), bufs[i] = NULL;
    /* Every cairo object is gone: drop cairo's and fontconfig's process-wide font caches, which
     * would otherwise stay until exit and read as leaks to LeakSanitizer. Nothing draws after this. */
    cairo_debug_reset_static_data();
    FcFini();
    return rc;
}
