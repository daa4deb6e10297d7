/* plot_data.c — what `t2exp plot` draws, read from the store through its own functions: the
 * experiment and trial rows, and metric rows as the store's JSON printer writes them (the same
 * path as the CLI's --json and the dashboard), so the plot never sees a different store than they do. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "configs/value.h"
#include "internal.h"
#include "plot.h"

int t2__plot_xy_add(t2__plot_xy *p, double x, double y)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        double *nx = realloc(p->x, cap * sizeof *nx);
        if (!nx) return t2_seterr(T2_ENOMEM, "plot: out of memory");
        p->x = nx;
        double *ny = realloc(p->y, cap * sizeof *ny);
        if (!ny) return t2_seterr(T2_ENOMEM, "plot: out of memory");
        p->y = ny;
        p->cap = cap;
    }
    p->x[p->n] = x;
    p->y[p->n++] = y;
    return T2_OK;
}

void t2__plot_xy_free(t2__plot_xy *p)
{
    free(p->x);
    free(p->y);
    memset(p, 0, sizeof *p);
}

/* One SELECT's rows as a JSON list of maps, from the store's printer. */
static int query(t2__store *st, const char *sql, const t2__store_param *p, size_t np, t2__val **rows)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return t2_seterr(T2_ENOMEM, "plot: out of memory");
    int rc = t2__store_print_query(st, sql, p, np, NULL, T2__FMT_JSON, f);
    if (fclose(f) != 0 && !rc) rc = t2_seterr(T2_ENOMEM, "plot: out of memory");
    if (!rc) rc = t2__val_from_json(buf, len, rows, NULL);
    free(buf);
    if (!rc && (*rows)->kind != T2__VAL_LIST) {
        t2__val_free(*rows);
        *rows = NULL;
        rc = t2_seterr(T2_EFORMAT, "plot: the store's answer is not a list");
    }
    return rc;
}

/* row[key] as a number; NAN when absent or null (a NaN metric is stored as NULL). */
static double num(const t2__val *row, const char *key)
{
    double d;
    return t2__val_as_double(t2__val_map_get(row, key), &d) ? NAN : d;
}

/* The ranking of `t2exp describe` (store_query.c's RANKED): trials with a validation by their
 * best one in the metric's direction, ties by id the same way, then the others by id. C11's qsort
 * has no context argument, hence the file-level direction (plot runs once per process). */
static int smaller_first;
static int rank_cmp(const void *pa, const void *pb)
{
    const t2__trial_row *a = *(t2__trial_row *const *)pa, *b = *(t2__trial_row *const *)pb;
    int na = isnan(a->best_validation), nb = isnan(b->best_validation);
    if (na != nb) return na - nb;
    int dir = na || smaller_first ? 1 : -1;
    if (!na && a->best_validation != b->best_validation) return a->best_validation < b->best_validation ? -dir : dir;
    return a->id < b->id ? -dir : a->id > b->id ? dir : 0;
}

/* The numeric hparams (a nested group's leaves by their dotted names) whose values differ between
 * trials, first seen first. */
static int pick_hparams(t2__plot_data *d, t2__val *const *hp, size_t n)
{
    for (size_t i = 0; i < n && d->nhp < T2__PLOT_MAX_HPARAMS; i++) {
        if (!hp[i] || hp[i]->kind != T2__VAL_MAP) continue;
        for (size_t k = 0; k < hp[i]->n && d->nhp < T2__PLOT_MAX_HPARAMS; k++) {
            const char *key = hp[i]->keys[k];
            double v0, v;
            int seen = 0, varies = 0;
            for (size_t h = 0; h < d->nhp; h++) seen |= !strcmp(d->hp_name[h], key);
            if (seen || t2__val_as_double(hp[i]->items[k], &v0)) continue;
            for (size_t j = 0; j < n && !varies; j++)
                varies = !t2__val_as_double(t2__val_map_get(hp[j], key), &v) && v != v0;
            if (!varies) continue;
            if (!(d->hp_name[d->nhp++] = strdup(key))) return t2_seterr(T2_ENOMEM, "plot: out of memory");
        }
    }
    return T2_OK;
}

/* The hparams the legend names: the first T2__PLOT_LEGEND_HPARAMS (a nested group's leaves by their
 * dotted names) whose values differ between the trials that have them, of any type, first seen
 * first. The numeric rule of pick_hparams left out a categorical that varied (`cat` of strings): the
 * legend said trial 0 (x=1.02) for trials that differed in it. */
static int pick_legend(t2__plot_data *d, t2__val *const *hp, size_t n)
{
    for (size_t i = 0; i < n && d->nlegend < T2__PLOT_LEGEND_HPARAMS; i++) {
        if (!hp[i] || hp[i]->kind != T2__VAL_MAP) continue;
        for (size_t k = 0; k < hp[i]->n && d->nlegend < T2__PLOT_LEGEND_HPARAMS; k++) {
            const char *key = hp[i]->keys[k];
            int seen = 0, varies = 0;
            for (size_t h = 0; h < d->nlegend; h++) seen |= !strcmp(d->legend_hp[h], key);
            for (size_t j = 0; j < n && !seen && !varies; j++) {
                const t2__val *v = t2__val_map_get(hp[j], key);
                varies = v && !t2__val_equal(v, hp[i]->items[k]);
            }
            if (seen || !varies) continue;
            if (!(d->legend_hp[d->nlegend++] = strdup(key))) return t2_seterr(T2_ENOMEM, "plot: out of memory");
        }
    }
    return T2_OK;
}

/* A value's text for an axis end or a category: a number as %g, a string as it is, else its JSON. */
static void value_text(const t2__val *v, char *buf, size_t cap)
{
    char *json = NULL;
    size_t len = 0;
    double d;
    if (!v) snprintf(buf, cap, "-");
    else if (!t2__val_as_double(v, &d)) snprintf(buf, cap, "%.6g", d);
    else if (v->kind == T2__VAL_STRING) snprintf(buf, cap, "%s", v->s);
    else if (!t2__val_to_json(v, &json, &len)) snprintf(buf, cap, "%s", json);
    else snprintf(buf, cap, "?");
    free(json);
}

/* "trial 1.3 (x=0, y=-2.5, opt=adam)": the trial as the CLI names it (EXP.N, as create's lines
 * and every EXP.N argument do; "trial 3" read as a store id named another trial) and its values of
 * the legend's hparams (pick_legend), those it has. */
static int label(const t2__plot_data *d, const t2__trial_row *t, const t2__val *hp, char **out)
{
    char buf[200], val[48];
    int len = snprintf(buf, sizeof buf, "trial %lld.%lld", (long long)d->experiment_id, (long long)t->ordinal);
    size_t shown = 0;
    for (size_t h = 0; h < d->nlegend && (size_t)len < sizeof buf - 2; h++) {
        const t2__val *v = t2__val_map_get(hp, d->legend_hp[h]);
        if (!v) continue;
        value_text(v, val, sizeof val);
        len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%.40s=%s", shown++ ? ", " : " (", d->legend_hp[h], val);
    }
    if (shown && (size_t)len < sizeof buf - 2) snprintf(buf + len, sizeof buf - (size_t)len, ")");
    if (!(*out = strdup(buf))) return t2_seterr(T2_ENOMEM, "plot: out of memory");
    return T2_OK;
}

/* Axis a over the lines' values vals[0..n): numbers by their range; anything else (a categorical's
 * strings) in order of first appearance, evenly spaced. As the dashboard's parcoords.js. */
static int place(t2__plot_paxis *a, t2__val *const *vals, size_t n)
{
    int numeric = 1;
    double lo = INFINITY, hi = -INFINITY, d;
    for (size_t i = 0; i < n; i++) {
        if (!vals[i]) continue;
        if (t2__val_as_double(vals[i], &d) || !isfinite(d)) numeric = 0;
        else lo = fmin(lo, d), hi = fmax(hi, d);
    }
    if (numeric) {
        /* Positive values over more than two decades (a log hyperparameter's) on a log axis, as
         * the hparams figure does: on a linear one all but the largest crowd at its foot. */
        int lg = lo > 0 && hi > 100 * lo;
        double l0 = lg ? log10(lo) : lo, l1 = lg ? log10(hi) : hi;
        for (size_t i = 0; i < n; i++) {
            if (!vals[i]) {
                a->pos[i] = NAN;
                continue;
            }
            t2__val_as_double(vals[i], &d);
            a->pos[i] = l1 > l0 ? ((lg ? log10(d) : d) - l0) / (l1 - l0) : 0.5;
        }
        snprintf(a->lo, sizeof a->lo, "%.6g", lo);
        snprintf(a->hi, sizeof a->hi, "%.6g%s", hi, lg ? " (log)" : "");
        return T2_OK;
    }
    size_t ncat = 0;
    size_t *cat = calloc(n ? n : 1, sizeof *cat); /* the index of each line's category */
    const t2__val **first = calloc(n ? n : 1, sizeof *first);
    if (!cat || !first) {
        free(cat);
        free(first);
        return t2_seterr(T2_ENOMEM, "plot: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        if (!vals[i]) continue;
        size_t c = 0;
        while (c < ncat && !t2__val_equal(first[c], vals[i])) c++;
        if (c == ncat) first[ncat++] = vals[i];
        cat[i] = c;
    }
    for (size_t i = 0; i < n; i++) a->pos[i] = !vals[i] ? NAN : ncat > 1 ? (double)cat[i] / (double)(ncat - 1) : 0.5;
    if (ncat) {
        value_text(first[0], a->lo, sizeof a->lo);
        value_text(first[ncat - 1], a->hi, sizeof a->hi);
    }
    free(cat);
    free(first);
    return T2_OK;
}

/* The parallel coordinates: an axis per hparam (a nested group's leaves by their dotted names)
 * whose value differs between the ranked trials with a validation (order[0..nv)), in order of first
 * appearance among them (a categorical of maps gives its trials different leaves), then the
 * metric's. */
static int parallel(t2__plot_data *d, t2__trial_row *const *order, t2__val *const *hp_of, size_t nv)
{
    size_t n = nv < T2__PLOT_MAX_PLINES ? nv : T2__PLOT_MAX_PLINES;
    /* The axis names: every key of the lines' hparams, once (a map of them keeps the order). */
    t2__val *names = t2__val_map();
    int rc = names ? T2_OK : t2_seterr(T2_ENOMEM, "plot: out of memory");
    for (size_t i = 0; !rc && i < n; i++)
        for (size_t k = 0; !rc && hp_of[i] && hp_of[i]->kind == T2__VAL_MAP && k < hp_of[i]->n; k++)
            if (!t2__val_map_get(names, hp_of[i]->keys[k])) rc = t2__val_map_set(names, hp_of[i]->keys[k], t2__val_null());
    size_t cap = (names ? names->n : 0) + 1;
    t2__val **vals = rc ? NULL : calloc(n ? n : 1, sizeof *vals);
    if (!rc && (!vals || !(d->par = calloc(cap, sizeof *d->par)))) rc = t2_seterr(T2_ENOMEM, "plot: out of memory");
    if (!rc) d->nlines = n;
    for (size_t k = 0; !rc && k < names->n && d->npar < T2__PLOT_MAX_PAXES; k++) {
        int varies = 0;
        for (size_t i = 0; i < n; i++) {
            vals[i] = t2__val_map_get(hp_of[i], names->keys[k]);
            varies |= !vals[i] || !vals[0] || !t2__val_equal(vals[i], vals[0]);
        }
        if (!varies && n > 1) continue; /* a fixed one (the batch size) is a flat axis that says nothing */
        t2__plot_paxis *a = &d->par[d->npar];
        if (!(a->name = strdup(names->keys[k])) || !(a->pos = calloc(n ? n : 1, sizeof *a->pos))) {
            free(a->name);
            a->name = NULL;
            rc = t2_seterr(T2_ENOMEM, "plot: out of memory");
            break;
        }
        d->npar++;
        rc = place(a, vals, n);
    }
    t2__val_free(names);
    if (rc) {
        free(vals);
        return rc;
    }
    t2__plot_paxis *m = &d->par[d->npar];
    if (!rc && (!(m->name = strdup(d->metric ? d->metric : "metric")) || !(m->pos = calloc(n ? n : 1, sizeof *m->pos)))) {
        free(m->name);
        m->name = NULL;
        rc = t2_seterr(T2_ENOMEM, "plot: out of memory");
    }
    if (!rc) {
        d->npar++;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < n; i++) lo = fmin(lo, order[i]->best_validation), hi = fmax(hi, order[i]->best_validation);
        for (size_t i = 0; i < n; i++) m->pos[i] = hi > lo ? (order[i]->best_validation - lo) / (hi - lo) : 0.5;
        snprintf(m->lo, sizeof m->lo, "%.6g", lo);
        snprintf(m->hi, sizeof m->hi, "%.6g", hi);
    }
    free(vals);
    return rc;
}

static const char SQL_TRAIN_NAME[] =
    "SELECT name FROM metrics WHERE trial_id = :t AND kind = 'training' GROUP BY name"
    " ORDER BY name = 'loss' DESC, name = :metric DESC, name LIMIT 1";
static const char SQL_CURVES[] =
    "SELECT kind, batches, value FROM metrics WHERE trial_id = :t AND ((kind = 'training' AND name = :train)"
    " OR (kind = 'validation' AND name = :metric)) ORDER BY kind, batches";
/* Minutes from the experiment's first start (kept across resumes), so a search's curve shows what
 * its wall time bought; a store without that start counts from the first validation. */
static const char SQL_VALIDATIONS[] =
    "SELECT m.value, (m.time - coalesce(e.started_at, (SELECT min(m2.time) FROM metrics m2 JOIN trials t2"
    " ON t2.id = m2.trial_id WHERE t2.experiment_id = :exp))) / 60.0 AS minutes"
    " FROM metrics m JOIN trials t ON t.id = m.trial_id JOIN experiments e ON e.id = t.experiment_id"
    " WHERE t.experiment_id = :exp AND m.kind = 'validation' AND m.name = :metric AND m.value IS NOT NULL"
    " ORDER BY m.time, m.trial_id, m.batches";

static int curves(t2__store *st, t2__plot_data *d, t2__plot_trial *t)
{
    t2__store_param p[] = {{.name = ":t", .type = T2__P_INT, .i = t->id},
                           {.name = ":metric", .type = T2__P_TEXT, .s = d->metric},
                           {.name = ":train", .type = T2__P_TEXT, .s = d->train_metric ? d->train_metric : ""}};
    t2__val *rows = NULL;
    int rc = query(st, SQL_CURVES, p, 3, &rows);
    for (size_t i = 0; !rc && i < rows->n; i++) {
        const t2__val *k = t2__val_map_get(rows->items[i], "kind");
        double y = num(rows->items[i], "value");
        if (isnan(y)) continue; /* a NaN report: a gap in the line, not a point */
        int train = k && k->kind == T2__VAL_STRING && !strcmp(k->s, "training");
        rc = t2__plot_xy_add(train ? &t->train : &t->valid, num(rows->items[i], "batches"), y);
    }
    t2__val_free(rows);
    return rc;
}

static int best_so_far(t2__store *st, t2__plot_data *d)
{
    t2__store_param p[] = {{.name = ":exp", .type = T2__P_INT, .i = d->experiment_id},
                           {.name = ":metric", .type = T2__P_TEXT, .s = d->metric}};
    t2__val *rows = NULL;
    int rc = query(st, SQL_VALIDATIONS, p, 2, &rows);
    double best = NAN;
    for (size_t i = 0; !rc && i < rows->n; i++) {
        double v = num(rows->items[i], "value");
        if (isnan(best) || (d->smaller_is_better ? v < best : v > best)) best = v;
        double minutes = num(rows->items[i], "minutes");
        if (!(minutes >= 0)) minutes = 0; /* a clock set back: keep the point, at the start */
        rc = t2__plot_xy_add(&d->all, minutes, v);
        if (!rc) rc = t2__plot_xy_add(&d->best, minutes, best);
    }
    t2__val_free(rows);
    return rc;
}

static int train_name(t2__store *st, t2__plot_data *d)
{
    t2__store_param p[] = {{.name = ":t", .type = T2__P_INT, .i = d->top[0].id},
                           {.name = ":metric", .type = T2__P_TEXT, .s = d->metric}};
    t2__val *rows = NULL;
    int rc = query(st, SQL_TRAIN_NAME, p, 2, &rows);
    const t2__val *name = !rc && rows->n ? t2__val_map_get(rows->items[0], "name") : NULL;
    if (name && name->kind == T2__VAL_STRING && !(d->train_metric = strdup(name->s)))
        rc = t2_seterr(T2_ENOMEM, "plot: out of memory");
    t2__val_free(rows);
    return rc;
}

int t2__plot_load(t2__store *st, int64_t id, long top, t2__plot_data *d)
{
    memset(d, 0, sizeof *d);
    d->experiment_id = id;
    t2__experiment_row e;
    memset(&e, 0, sizeof e);
    t2__trial_row *rows = NULL, **order = NULL;
    t2__val **hp = NULL;
    size_t n = 0;
    int rc = t2__store_get_experiment(st, id, &e);
    if (!rc) {
        d->smaller_is_better = e.smaller_is_better;
        d->metric = e.metric, e.metric = NULL;
        d->name = e.name, e.name = NULL;
        rc = t2__store_list_trials(st, id, &rows, &n);
    }
    if (!rc && n && (!(order = calloc(n, sizeof *order)) || !(hp = calloc(n, sizeof *hp))))
        rc = t2_seterr(T2_ENOMEM, "plot: out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        order[i] = &rows[i];
        /* An unreadable hparams text only costs that trial its hparam points. Nested groups are
         * plotted by their leaves' dotted names ("opt.lr"), as t2exp importance names them, unless
         * two leaves would get one name: then as they are. */
        t2__val *nested = NULL;
        if (rows[i].hparams_json &&
            t2__val_from_json(rows[i].hparams_json, strlen(rows[i].hparams_json), &nested, NULL) == T2_OK &&
            t2__val_flatten(nested, &hp[i]) != T2_OK)
            hp[i] = nested, nested = NULL;
        t2_clearerr();
        t2__val_free(nested);
    }
    if (!rc) {
        smaller_first = d->smaller_is_better;
        if (n) qsort(order, n, sizeof *order, rank_cmp);
        rc = pick_hparams(d, hp, n);
        if (!rc) rc = pick_legend(d, hp, n);
    }
    for (size_t i = 0; !rc && i < n; i++) {
        double v;
        if (isnan(rows[i].best_validation)) continue;
        for (size_t h = 0; !rc && h < d->nhp; h++)
            if (!t2__val_as_double(t2__val_map_get(hp[i], d->hp_name[h]), &v))
                rc = t2__plot_xy_add(&d->hp[h], v, rows[i].best_validation);
    }
    /* The ranked trials with a validation come first in order (rank_cmp). */
    size_t nv = 0;
    while (nv < n && !isnan(order[nv]->best_validation)) nv++;
    t2__val **ranked_hp = !rc && nv ? calloc(nv, sizeof *ranked_hp) : NULL;
    if (!rc && nv && !ranked_hp) rc = t2_seterr(T2_ENOMEM, "plot: out of memory");
    for (size_t i = 0; !rc && i < nv; i++) ranked_hp[i] = hp[order[i] - rows];
    if (!rc) rc = parallel(d, order, ranked_hp, nv);
    free(ranked_hp);
    d->ntop = (size_t)top < n ? (size_t)top : n;
    if (!rc && d->ntop && !(d->top = calloc(d->ntop, sizeof *d->top))) rc = t2_seterr(T2_ENOMEM, "plot: out of memory");
    for (size_t i = 0; !rc && i < d->ntop; i++) d->top[i].id = order[i]->id, d->top[i].ordinal = order[i]->ordinal;
    if (!rc && d->ntop) rc = train_name(st, d);
    for (size_t i = 0; !rc && i < d->ntop; i++) {
        rc = label(d, order[i], hp[order[i] - rows], &d->top[i].label);
        if (!rc) rc = curves(st, d, &d->top[i]);
    }
    if (!rc) rc = best_so_far(st, d);
    /* No importance (too few trials, nothing searched) is a figure that says why, not a failure. */
    if (!rc && (rc = t2__experiment_importance(st, id, &d->imp)) == T2_ESTATE) {
        snprintf(d->imp_why, sizeof d->imp_why, "%s", t2_errmsg());
        t2_clearerr();
        rc = T2_OK;
    }
    size_t points = d->all.n;
    for (size_t i = 0; i < d->ntop; i++) points += d->top[i].train.n + d->top[i].valid.n;
    if (!rc && points == 0)
        rc = t2_seterr(T2_ESTATE, "experiment %lld has no metrics yet: nothing to plot", (long long)id);
    for (size_t i = 0; i < n && hp; i++) t2__val_free(hp[i]);
    free(hp);
    free(order);
    t2__trial_rows_free(rows, n);
    t2__experiment_row_free(&e);
    if (rc) t2__plot_data_free(d);
    return rc;
}

void t2__plot_data_free(t2__plot_data *d)
{
    for (size_t i = 0; d->top && i < d->ntop; i++) {
        free(d->top[i].label);
        t2__plot_xy_free(&d->top[i].train);
        t2__plot_xy_free(&d->top[i].valid);
    }
    free(d->top);
    for (size_t h = 0; h < d->nhp; h++) {
        free(d->hp_name[h]);
        t2__plot_xy_free(&d->hp[h]);
    }
    for (size_t h = 0; h < d->nlegend; h++) free(d->legend_hp[h]);
    t2__plot_xy_free(&d->best);
    t2__plot_xy_free(&d->all);
    free(d->name);
    free(d->metric);
    free(d->train_metric);
    for (size_t a = 0; d->par && a < d->npar; a++) {
        free(d->par[a].name);
        free(d->par[a].pos);
    }
    free(d->par);
    t2__importance_result_free(&d->imp);
    memset(d, 0, sizeof *d);
}
