/* importance.c — `t2exp importance EXP`: which hyperparameters the experiment's results depend on
 * (Optuna's get_param_importances; Determined's web UI has the same view), by fANOVA over a random
 * forest (framework/analysis/importance.h).
 *
 * The trials are the experiment's COMPLETED ones with a validation of the searcher metric; each is
 * a point of the search space (the config as the experiment ran it: stored file and overrides) and
 * its best validation, as `describe` ranks trials. A hyperparameter is a feature in the scale the
 * search drew it in: an int over [min - 1/2, max + 1/2], a double over its range, a log one by its
 * exponent, a categorical by its choice's index. const hyperparameters are no question. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/importance.h"
#include "configs/config.h"
#include "controller/controller.h"
#include "framework/cli/importance.h"
#include "internal.h"
#include "t2exp/rng.h"

/* The most trials a forest is fit to: a bigger experiment gives a uniform sample of this many
 * (a reservoir, seeded), which keeps the answer to about 2 s (64 trees of 10,000 points: 1.7 s on
 * a 2-core EPYC VM) and its memory bounded. */
#define MAX_POINTS 10000

/* Leaf h's feature domain; 0 when it has none (not searchable, or a single value). */
static int domain(const t2__hparam *h, double *lo, double *hi)
{
    switch (h->kind) {
    case T2__HP_INT: *lo = (double)h->imin - 0.5, *hi = (double)h->imax + 0.5; return h->imax > h->imin;
    case T2__HP_DOUBLE:
    case T2__HP_LOG: *lo = h->minval, *hi = h->maxval; return h->maxval > h->minval;
    case T2__HP_CATEGORICAL: *lo = -0.5, *hi = (double)h->vals->n - 0.5; return h->vals->n > 1;
    default: return 0;
    }
}

/* A trial's value of leaf h as its feature; 0 when it has none that fits (an older config's). */
static int feature(const t2__hparam *h, const t2__val *hp, double *x)
{
    return t2__hparam_coordinate(h, t2__val_lookup(hp, h->path), x);
}

typedef struct ranked {
    const char *name;
    double importance;
    size_t order;
} ranked;

static int by_importance(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->importance != y->importance) return x->importance < y->importance ? 1 : -1;
    return (x->order > y->order) - (x->order < y->order);
}

void t2__importance_result_free(t2__importance_result *r)
{
    for (size_t k = 0; r->names && k < r->d; k++) free(r->names[k]);
    free(r->names);
    free(r->values);
    free(r->metric);
    memset(r, 0, sizeof *r);
}

/* The result, highest first, from the searched leaves' importances (copies of their paths). */
static int fill(t2__importance_result *out, const t2__hparam *const *leaves, const double *imp, size_t d,
                const char *metric)
{
    ranked *r = calloc(d + 1, sizeof *r);
    out->names = calloc(d + 1, sizeof *out->names);
    out->values = calloc(d + 1, sizeof *out->values);
    out->metric = strdup(metric);
    int rc = r && out->names && out->values && out->metric ? T2_OK : t2_seterr(T2_ENOMEM, "importance: out of memory");
    for (size_t k = 0; !rc && k < d; k++) r[k] = (ranked){leaves[k]->path, imp[k], k};
    if (!rc) qsort(r, d, sizeof *r, by_importance);
    for (size_t k = 0; !rc && k < d; k++) {
        out->values[k] = r[k].importance;
        if (!(out->names[k] = strdup(r[k].name))) rc = t2_seterr(T2_ENOMEM, "importance: out of memory");
        out->d = k + 1; /* what t2__importance_result_free frees */
    }
    free(r);
    return rc;
}

int t2__experiment_importance(t2__store *st, int64_t exp_id, t2__importance_result *out)
{
    memset(out, 0, sizeof *out);
    t2__config *cfg = NULL;
    t2__trial_row *rows = NULL;
    size_t nrows = 0, nleaves = 0, d = 0, used = 0, eligible = 0;
    const t2__hparam **leaves = NULL;
    double *lo = NULL, *hi = NULL, *x = NULL, *y = NULL, *imp = NULL;
    int rc = t2__experiment_stored_config(st, exp_id, NULL, 0, &cfg, NULL);
    if (!rc) rc = t2__store_list_trials(st, exp_id, &rows, &nrows);
    if (!rc) {
        nleaves = t2__hparam_leaves(cfg->hparams, NULL, 0);
        leaves = calloc(nleaves + 1, sizeof *leaves);
        lo = calloc(nleaves + 1, sizeof *lo);
        hi = calloc(nleaves + 1, sizeof *hi);
        size_t cap = nrows < MAX_POINTS ? nrows + 1 : MAX_POINTS + 1; /* + 1: the row being read */
        x = calloc(cap * (nleaves + 1), sizeof *x);
        y = calloc(cap, sizeof *y);
        imp = calloc(nleaves + 1, sizeof *imp);
        if (!leaves || !lo || !hi || !x || !y || !imp) rc = t2_seterr(T2_ENOMEM, "importance: out of memory");
    }
    t2_rng rng;
    t2_rng_seed(&rng, cfg ? t2_hash64(cfg->experiment_seed) : 0);
    if (!rc) {
        t2__hparam_leaves(cfg->hparams, leaves, nleaves);
        for (size_t k = 0; k < nleaves; k++) /* the searched leaves only, compacted */
            if (domain(leaves[k], &lo[d], &hi[d])) leaves[d++] = leaves[k];
    }
    for (size_t i = 0; !rc && i < nrows; i++) {
        if (rows[i].state != T2__TRIAL_COMPLETED || !isfinite(rows[i].best_validation)) continue;
        t2__val *hp = NULL;
        size_t off, k = 0;
        if (t2__val_from_json(rows[i].hparams_json, strlen(rows[i].hparams_json), &hp, &off) != T2_OK) {
            t2_clearerr();
            continue;
        }
        while (k < d && feature(leaves[k], hp, &x[used * d + k])) k++;
        t2__val_free(hp);
        if (k < d) continue; /* a point outside the space as the config has it now */
        y[used] = rows[i].best_validation;
        if (++eligible <= MAX_POINTS) {
            used++;
            continue;
        }
        /* Reservoir: the eligible-th point takes a random slot with probability MAX_POINTS / eligible. */
        uint64_t slot = t2_rng_below(&rng, eligible);
        if (slot < MAX_POINTS) {
            memcpy(&x[slot * d], &x[used * d], d * sizeof *x);
            y[slot] = y[used];
        }
    }
    if (!rc && d == 0)
        rc = t2_seterr(T2_ESTATE, "experiment %lld searched no hyperparameter (all are const)", (long long)exp_id);
    else if (!rc && used < 2)
        rc = t2_seterr(T2_ESTATE, "experiment %lld has %zu completed trial(s) with a validation of %s; importance needs 2",
                       (long long)exp_id, used, cfg->searcher.metric);
    if (!rc) {
        t2__imp_data data = {.x = x, .y = y, .n = used, .d = d, .lo = lo, .hi = hi};
        t2__imp_opts o = {.ntrees = 64, .max_depth = 64, .seed = cfg->experiment_seed};
        rc = t2__importance(&data, &o, imp);
    }
    if (!rc) rc = fill(out, leaves, imp, d, cfg->searcher.metric);
    if (!rc) {
        out->used = used;
        out->eligible = eligible;
        out->others = nrows - eligible;
    } else {
        t2__importance_result_free(out);
    }
    free(imp);
    free(y);
    free(x);
    free(hi);
    free(lo);
    free(leaves);
    t2__trial_rows_free(rows, nrows);
    t2__config_free(cfg);
    return rc;
}

static void raw(t2__json_out *j, const char *s) { t2__json_raw(j, s, strlen(s)); }

/* A name for the terminal: control characters (an escape sequence in a config key) as spaces,
 * padded to width columns (a wide glyph takes two). */
static size_t shown(const char *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", s);
    t2__store_printable(buf, strlen(buf));
    return t2__text_width(buf);
}

static void table_name(FILE *out, const char *s, size_t width)
{
    char buf[512];
    size_t w = shown(s, buf, sizeof buf);
    fprintf(out, "%s%*s", buf, w < width ? (int)(width - w) : 0, "");
}

static int print(const t2__importance_result *r, int64_t exp_id, t2__store_format fmt, FILE *out)
{
    if (fmt == T2__FMT_CSV) {
        /* The same text as --json and the store's other listings (cli.md: a real's shortest
         * text that reads back to it, ".0" after an integral one), not a rounding of it. */
        char num[64];
        fprintf(out, "hyperparameter,importance\n");
        for (size_t k = 0; k < r->d; k++) {
            t2__store_csv_field(out, r->names[k]);
            t2__json_real_text(r->values[k], num, sizeof num);
            fprintf(out, ",%s\n", num);
        }
    } else if (fmt == T2__FMT_JSON) {
        t2__json_out j = {0};
        char num[64];
        raw(&j, "{\"experiment\":");
        t2__json_int(&j, exp_id);
        raw(&j, ",\"metric\":");
        t2__json_string(&j, r->metric);
        raw(&j, ",\"trials\":");
        t2__json_int(&j, (int64_t)r->used);
        raw(&j, ",\"importance\":[");
        for (size_t k = 0; k < r->d; k++) {
            raw(&j, k ? ",{\"hyperparameter\":" : "{\"hyperparameter\":");
            t2__json_string(&j, r->names[k]);
            raw(&j, ",\"importance\":");
            t2__json_raw(&j, num, t2__json_real_text(r->values[k], num, sizeof num));
            raw(&j, "}");
        }
        raw(&j, "]}\n");
        if (j.oom) {
            free(j.p);
            return t2_seterr(T2_ENOMEM, "importance: out of memory");
        }
        fwrite(j.p, 1, j.n, out);
        free(j.p);
    } else {
        size_t w = strlen("hyperparameter");
        char buf[512];
        for (size_t k = 0; k < r->d; k++) {
            size_t n = shown(r->names[k], buf, sizeof buf);
            if (n > w) w = n;
        }
        fprintf(out, "%-*s  importance\n", (int)w, "hyperparameter");
        for (size_t k = 0; k < r->d; k++) {
            table_name(out, r->names[k], w);
            fprintf(out, "  %.4f\n", r->values[k]);
        }
        char metric[512]; /* the config's text: no escape sequence to the terminal */
        snprintf(metric, sizeof metric, "%s", r->metric);
        t2__store_printable(metric, strlen(metric));
        if (r->used < r->eligible)
            fprintf(out, "(fANOVA: a random forest of 64 trees fit to %zu of %zu completed trials, drawn at random, "
                         "and their best %s)\n", r->used, r->eligible, metric);
        else
            fprintf(out, "(fANOVA: a random forest of 64 trees fit to %zu completed trials' best %s%s)\n", r->used,
                    metric, r->others ? "; the other trials left out" : "");
    }
    return ferror(out) ? t2_seterr(T2_EIO, "importance: write error") : T2_OK;
}

int t2__print_importance(t2__store *st, int64_t exp_id, t2__store_format fmt, FILE *out)
{
    t2__importance_result r;
    int rc = t2__experiment_importance(st, exp_id, &r);
    if (!rc) rc = print(&r, exp_id, fmt, out);
    t2__importance_result_free(&r);
    return rc;
}
