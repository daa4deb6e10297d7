/* config_hparams.c — `hyperparameters:` into a t2__hparam tree, and its checks against the
 * searcher and the resources. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_internal.h"
#include "t2exp/error.h"

#define KEY_IS(s) (strcmp(key, (s)) == 0)

static const char *const HP_TYPES[] = {"const", "int", "double", "log", "categorical", NULL};

/* Which keys each typed hyperparameter reads, besides `type`. */
static int key_applies(t2__hp_kind kind, const char *key)
{
    switch (kind) {
    case T2__HP_CONST: return KEY_IS("val");
    case T2__HP_INT:
    case T2__HP_DOUBLE: return KEY_IS("minval") || KEY_IS("maxval") || KEY_IS("count");
    case T2__HP_LOG: return KEY_IS("minval") || KEY_IS("maxval") || KEY_IS("count") || KEY_IS("base");
    case T2__HP_CATEGORICAL: return KEY_IS("vals");
    case T2__HP_NESTED: return 0;
    }
    return 0;
}

static int is_hp_key(const char *key)
{
    return KEY_IS("val") || KEY_IS("minval") || KEY_IS("maxval") || KEY_IS("count") || KEY_IS("base") ||
           KEY_IS("vals");
}

/* The keys of a typed hyperparameter, for "did you mean". */
static const char *const HP_KEYS[] = {"type", "val", "minval", "maxval", "count", "base", "vals", NULL};

static int required_null(const t2__ynode *v, const char *path, const char *what)
{
    return t2__cfg_err(&v->mark, path, "expected %s, got null", what);
}

/* Hyperparameters travel as JSON (the store, the trial channel, checkpoints), and JSON has no NaN
 * or infinity: every number in a constant or categorical value, at any depth, must be finite,
 * or the experiment would be recorded and then fail when its first trial is sent. */
static int check_finite(const t2__ynode *n, const char *path)
{
    char sub[T2__PATH_MAX], idx[24];
    if (n->kind == T2__Y_SCALAR) {
        t2__val *v = NULL;
        if (!n->plain) return T2_OK;
        int rc = t2__yscalar_to_val(n, &v);
        if (rc) return rc;
        int bad = v->kind == T2__VAL_DOUBLE && !isfinite(v->d);
        t2__val_free(v);
        if (bad)
            return t2__cfg_err(&n->mark, path,
                               "expected a finite number, got %.60s (hyperparameters are stored as JSON, which has no "
                               "NaN or infinity)",
                               n->text);
        return T2_OK;
    }
    for (size_t k = 0; k < n->n; k++) {
        if (n->kind == T2__Y_SEQ) snprintf(idx, sizeof idx, "%zu", k);
        t2__path_join(sub, sizeof sub, path, n->kind == T2__Y_SEQ ? idx : n->keys[k]);
        int rc = check_finite(n->items[k], sub);
        if (rc) return rc;
    }
    return T2_OK;
}

/* A map inside a list that reads as a typed hyperparameter: `type` names one and every other key is
 * one of theirs (`[10, {type: int, minval: 1, maxval: 2}]`). A list is a constant, so it would be
 * passed as it is, never searched: Determined refuses it, and so does this (probe_K). A map with
 * keys of its own (`{name: age, type: int}`, a column of a schema) stays a constant. */
static int check_typed_in_list(const t2__ynode *n, const char *path, int in_list)
{
    char sub[T2__PATH_MAX], idx[24];
    if (n->kind == T2__Y_SCALAR) return T2_OK;
    if (in_list && n->kind == T2__Y_MAP) {
        const t2__ynode *type = t2__ymap_get(n, "type", NULL);
        int typed = type && type->kind == T2__Y_SCALAR;
        for (int t = 0; typed && HP_TYPES[t]; t++)
            if (!strcmp(type->text, HP_TYPES[t])) typed = 2;
        for (size_t k = 0; typed == 2 && k < n->n; k++)
            if (strcmp(n->keys[k], "type") != 0 && !is_hp_key(n->keys[k])) typed = 0;
        if (typed == 2)
            return t2__cfg_err(&n->mark, path,
                               "a typed hyperparameter (type: %s) inside a list would be a constant, never searched "
                               "(Determined refuses it too): make it a hyperparameter of its own, or give the whole "
                               "list's choices as a categorical's vals",
                               type->text);
    }
    for (size_t k = 0; k < n->n; k++) {
        if (n->kind == T2__Y_SEQ) snprintf(idx, sizeof idx, "%zu", k);
        t2__path_join(sub, sizeof sub, path, n->kind == T2__Y_SEQ ? idx : n->keys[k]);
        int rc = check_typed_in_list(n->items[k], sub, in_list || n->kind == T2__Y_SEQ);
        if (rc) return rc;
    }
    return T2_OK;
}

/* minval <= maxval, placed at maxval, or at minval when an override set it (the override is what
 * the user just typed). */
static int check_order(const t2__ynode *minv, const t2__ynode *maxv, const char *full)
{
    char sub[T2__PATH_MAX];
    if (t2__cfg_blame(&maxv->mark, &minv->mark) == &minv->mark) {
        t2__path_join(sub, sizeof sub, full, "minval");
        return t2__cfg_err(&minv->mark, sub, "minval %s is greater than maxval %s", minv->text, maxv->text);
    }
    t2__path_join(sub, sizeof sub, full, "maxval");
    return t2__cfg_err(&maxv->mark, sub, "maxval %s is less than minval %s", maxv->text, minv->text);
}

/* A log hyperparameter's values are base^e for e in [minval, maxval], which the searchers compute
 * as doubles: an end whose power overflows (10^400) or underflows to 0 (10^-400) would be drawn as
 * inf or 0, which JSON cannot carry or a log scale cannot hold, and fail the trial at run time.
 * The powers are monotonic in e, so the two ends decide for every value between them. */
static int check_log_ends(const t2__hparam *h, const t2__ynode *n, const t2__ynode *minv, const t2__ynode *maxv,
                          const char *full)
{
    char sub[T2__PATH_MAX];
    const t2__ynode *bv = t2__ymap_get(n, "base", NULL);
    for (int end = 0; end < 2; end++) {
        const t2__ynode *at = end ? maxv : minv;
        double v = pow(h->base, end ? h->maxval : h->minval);
        if (isfinite(v) && v > 0) continue;
        /* A base an override set is as much the cause as the exponent. */
        const t2__ymark *m = bv && !t2__ynull(bv) ? t2__cfg_blame(&at->mark, &bv->mark) : &at->mark;
        t2__path_join(sub, sizeof sub, full, m == &at->mark ? (end ? "maxval" : "minval") : "base");
        return t2__cfg_err(m, sub,
                           "%s^%s %s a double (the values of a log hyperparameter are base^minval to "
                           "base^maxval; minval and maxval are exponents)",
                           bv && !t2__ynull(bv) ? bv->text : "10", at->text,
                           isfinite(v) ? "underflows to 0 in" : "is too large for");
    }
    return T2_OK;
}

/* What an int, double or log range needs once both ends are read. A double range of any finite
 * ends is drawn without overflow (t2__hparam_lerp), and an int range's points are exact. */
static int check_range(const t2__hparam *h, const t2__ynode *n, const t2__ynode *minv, const t2__ynode *maxv,
                       const char *full)
{
    if (h->minval > h->maxval || (h->kind == T2__HP_INT && h->imin > h->imax)) return check_order(minv, maxv, full);
    if (h->kind == T2__HP_LOG) return check_log_ends(h, n, minv, maxv, full);
    return T2_OK;
}

static int parse_typed(t2__config *cfg, const t2__ynode *n, const char *full, t2__hparam *h)
{
    char sub[T2__PATH_MAX];
    const t2__ynode *tv = t2__ymap_get(n, "type", NULL);
    int kind = 0, rc;
    t2__path_join(sub, sizeof sub, full, "type");
    if (t2__ynull(tv)) return required_null(tv, sub, "one of const, int, double, log or categorical");
    if ((rc = t2__get_enum(tv, sub, HP_TYPES, &kind))) return rc;
    h->kind = (t2__hp_kind)kind;
    h->base = 10;
    const t2__ynode *minv = NULL, *maxv = NULL;
    int have_val = 0;
    for (size_t k = 0; k < n->n; k++) {
        const char *key = n->keys[k];
        const t2__ynode *v = n->items[k];
        t2__path_join(sub, sizeof sub, full, key);
        if (KEY_IS("type")) continue;
        if (!key_applies(h->kind, key)) {
            rc = is_hp_key(key) ? t2__cfg_warn(cfg, &n->key_marks[k], "key '%s' does not apply to a %s hyperparameter (ignored)",
                                               sub, HP_TYPES[kind])
                                : t2__cfg_unknown(cfg, &n->key_marks[k], sub, HP_KEYS);
            if (rc) return rc;
            continue;
        }
        if (KEY_IS("val")) {
            t2__val_free(h->val);
            h->val = NULL;
            if ((rc = check_finite(v, sub)) || (rc = t2__ynode_to_val(v, &h->val))) return rc;
            have_val = 1;
        } else if (KEY_IS("minval") || KEY_IS("maxval")) {
            int is_min = KEY_IS("minval");
            if (t2__ynull(v)) return required_null(v, sub, h->kind == T2__HP_INT ? "an integer" : "a finite number");
            if (h->kind == T2__HP_INT) {
                int64_t i = 0;
                if ((rc = t2__get_int(v, sub, INT64_MIN, &i))) return rc;
                if (is_min) h->imin = i;
                else h->imax = i;
                if (is_min) h->minval = (double)i;
                else h->maxval = (double)i;
            } else {
                if ((rc = t2__get_number(v, sub, is_min ? &h->minval : &h->maxval))) return rc;
            }
            if (is_min) minv = v;
            else maxv = v;
        } else if (KEY_IS("count")) {
            if ((rc = t2__get_int(v, sub, 1, &h->count))) return rc;
        } else if (KEY_IS("base")) {
            if ((rc = t2__get_number(v, sub, &h->base))) return rc;
            if (!(h->base > 0) || h->base == 1)
                return t2__cfg_err(&v->mark, sub, "expected a positive number other than 1, got %s", v->text);
        } else { /* vals */
            if (t2__ynull(v)) return required_null(v, sub, "a non-empty list");
            if (v->kind != T2__Y_SEQ || v->n == 0) {
                char buf[128];
                return t2__cfg_err(&v->mark, sub, "expected a non-empty list, got %s",
                                   v->kind == T2__Y_SEQ ? "an empty list" : t2__ydesc(v, buf, sizeof buf));
            }
            t2__val_free(h->vals);
            h->vals = NULL;
            if ((rc = check_finite(v, sub)) || (rc = t2__ynode_to_val(v, &h->vals))) return rc;
        }
    }
    /* What the type needs is missing because of the type: at it when an override set it. */
    const t2__ymark *by_type = t2__cfg_blame(&n->mark, &tv->mark);
    switch (h->kind) {
    case T2__HP_CONST:
        if (!have_val) return t2__cfg_missing(by_type, full, "val");
        break;
    case T2__HP_CATEGORICAL:
        if (!h->vals) return t2__cfg_missing(by_type, full, "vals");
        break;
    default:
        if (!minv) return t2__cfg_missing(by_type, full, "minval");
        if (!maxv) return t2__cfg_missing(by_type, full, "maxval");
        return check_range(h, n, minv, maxv, full);
    }
    return T2_OK;
}

static int parse_node(t2__config *cfg, const t2__ynode *n, const char *name, const char *path, t2__hparam *h);

static int parse_nested(t2__config *cfg, const t2__ynode *n, const char *path, t2__hparam *h)
{
    char sub[T2__PATH_MAX], full[T2__PATH_MAX];
    h->kind = T2__HP_NESTED;
    if (n->n == 0) return T2_OK;
    if (!(h->children = calloc(n->n, sizeof *h->children))) return t2_seterr(T2_ENOMEM, "config: out of memory");
    for (size_t k = 0; k < n->n; k++) {
        int rc = T2_OK;
        t2__path_join(sub, sizeof sub, path, n->keys[k]);
        /* Inside a group a dotted name is data (DeepSpeed's overwrite_deepspeed_args has keys such
         * as `zero_optimization.stage`): the trial gets it as written. At the top it would read
         * as a path into a group, so there it is refused. */
        if ((!*path && strchr(n->keys[k], '.')) || !*n->keys[k]) {
            t2__path_join(full, sizeof full, "hyperparameters", sub);
            rc = t2__cfg_err(&n->key_marks[k], full,
                             "a top-level hyperparameter name must be non-empty and must not contain '.' (dots "
                             "separate nested names)");
        }
        h->nchildren = k + 1; /* counted before parsing so that a failure frees what was built */
        if (!rc) rc = parse_node(cfg, n->items[k], n->keys[k], sub, &h->children[k]);
        else if (!(h->children[k].name = strdup(n->keys[k])) || !(h->children[k].path = strdup(sub)))
            return t2_seterr(T2_ENOMEM, "config: out of memory");
        /* Every hyperparameter is checked, not only the ones before the first problem. */
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    return T2_OK;
}

/* A map without `type` is a group of nested hyperparameters, unless it is a typed hyperparameter
 * whose `type` is missing or misspelt (`tpye: log` would silently make lr a group): a key one typo
 * from `type` whose value names a type, both minval and maxval, or only a typed hyperparameter's
 * keys (`{vals: [a, b]}`). A group that merely has a member called `base` or `count` among others
 * (Determined's byol example: `learning_rate: {base: 0.2, base_batch_size: 256}`) stays a group. */
static int check_typeless(t2__config *cfg, const t2__ynode *n, const char *full)
{
    static const char *const type_key[] = {"type", NULL};
    char sub[T2__PATH_MAX];
    const char *range_key = NULL;
    int all_hp = n->n > 0, has_min = 0, has_max = 0;
    for (size_t k = 0; k < n->n; k++) {
        const char *key = n->keys[k];
        const t2__ynode *v = n->items[k];
        int names_type = 0;
        for (int t = 0; HP_TYPES[t] && v->kind == T2__Y_SCALAR; t++) names_type |= strcmp(v->text, HP_TYPES[t]) == 0;
        if (names_type && t2__cfg_closest(key, type_key)) {
            t2__path_join(sub, sizeof sub, full, key);
            return t2__cfg_err(&n->key_marks[k], sub,
                               "unknown key (did you mean 'type'?); without a type this map would be a group of "
                               "nested hyperparameters");
        }
        if (!range_key && is_hp_key(key) && !KEY_IS("val")) range_key = key;
        all_hp &= is_hp_key(key);
        has_min |= KEY_IS("minval");
        has_max |= KEY_IS("maxval");
    }
    (void)cfg;
    if (range_key && ((has_min && has_max) || all_hp))
        return t2__cfg_err(&n->mark, full,
                           "has '%s' but no 'type': add type: int, double, log or categorical (a map without "
                           "'type' is a group of nested hyperparameters)",
                           range_key);
    return T2_OK;
}

static int parse_node(t2__config *cfg, const t2__ynode *n, const char *name, const char *path, t2__hparam *h)
{
    char full[T2__PATH_MAX];
    if (!(h->name = strdup(name)) || !(h->path = strdup(path))) return t2_seterr(T2_ENOMEM, "config: out of memory");
    t2__path_join(full, sizeof full, "hyperparameters", path);
    if (n->kind == T2__Y_MAP && t2__ymap_get(n, "type", NULL)) return parse_typed(cfg, n, full, h);
    if (n->kind == T2__Y_MAP) {
        int rc = check_typeless(cfg, n, full);
        if (rc) {
            h->kind = T2__HP_NESTED;
            return rc;
        }
        return parse_nested(cfg, n, path, h);
    }
    h->kind = T2__HP_CONST;
    int rc = check_finite(n, full);
    if (!rc) rc = check_typed_in_list(n, full, 0);
    return rc ? rc : t2__ynode_to_val(n, &h->val);
}

int t2__cfg_hparams_parse(t2__config *cfg, const t2__ynode *n)
{
    int rc;
    t2__hparam_free(cfg->hparams);
    if (!(cfg->hparams = calloc(1, sizeof *cfg->hparams))) return t2_seterr(T2_ENOMEM, "config: out of memory");
    if (!n || t2__ynull(n)) { /* absent, or `hyperparameters:` with nothing: an empty space; the check reports the batch size */
        cfg->hparams->kind = T2__HP_NESTED;
        if (!(cfg->hparams->name = strdup("")) || !(cfg->hparams->path = strdup("")))
            return t2_seterr(T2_ENOMEM, "config: out of memory");
        return T2_OK;
    }
    if ((rc = t2__want_map(n, "hyperparameters"))) return rc;
    if (!(cfg->hparams->name = strdup("")) || !(cfg->hparams->path = strdup("")))
        return t2_seterr(T2_ENOMEM, "config: out of memory");
    return parse_nested(cfg, n, "", cfg->hparams);
}

/* The YAML node of a hyperparameter path, for placing errors found after parsing. */
static const t2__ynode *ynode_at(const t2__ynode *hp, const char *path)
{
    char seg[T2__PATH_MAX];
    const t2__ynode *n = hp;
    while (n && *path) {
        const char *dot = strchr(path, '.');
        size_t len = dot ? (size_t)(dot - path) : strlen(path);
        if (len >= sizeof seg) return NULL;
        memcpy(seg, path, len);
        seg[len] = '\0';
        n = t2__ymap_get(n, seg, NULL);
        path = dot ? dot + 1 : path + len;
    }
    return n;
}

static int check_grid(t2__config *cfg, const t2__ynode *hp, const t2__ymark *kmark, const t2__ynode *root)
{
    char full[T2__PATH_MAX];
    size_t nleaves = t2__hparam_leaves(cfg->hparams, NULL, 0);
    const t2__hparam **leaves = calloc(nleaves ? nleaves : 1, sizeof *leaves);
    if (!leaves) return t2_seterr(T2_ENOMEM, "config: out of memory");
    t2__hparam_leaves(cfg->hparams, leaves, nleaves);
    for (size_t k = 0; k < nleaves; k++) {
        const t2__hparam *h = leaves[k];
        if ((h->kind == T2__HP_INT || h->kind == T2__HP_DOUBLE || h->kind == T2__HP_LOG) && h->count == 0) {
            const t2__ynode *at = ynode_at(hp, h->path);
            t2__path_join(full, sizeof full, "hyperparameters", h->path);
            free(leaves);
            return t2__cfg_err(t2__cfg_blame_path(at ? &at->mark : kmark, root, "searcher.name"), full,
                               "the grid searcher needs a count for a%s %s hyperparameter (how many points to try)",
                               h->kind == T2__HP_INT ? "n" : "", t2__hp_kind_name(h->kind));
        }
    }
    free(leaves);
    uint64_t points = 0;
    int rc = t2__hparam_grid_size(cfg->hparams, &points);
    if (rc) return rc;
    /* The size comes from every hyperparameter: placed at the first an override set (a count, a
     * range, a new one), else at the searcher's name when an override chose grid, else the section. */
    const t2__ymark *m = hp ? t2__cfg_blame(&hp->mark, t2__cfg_where(hp)) : kmark;
    if (points > T2__GRID_MAX_POINTS) /* grid_size saturates: UINT64_MAX means the product overflowed */
        return t2__cfg_err(t2__cfg_blame_path(m, root, "searcher.name"), "hyperparameters",
                           "the grid has %s%llu points, more than the %d a grid search may have",
                           points == UINT64_MAX ? "more than " : "", (unsigned long long)points, T2__GRID_MAX_POINTS);
    return T2_OK;
}

/* tpe models a flat list of hyperparameters (one estimator each, or one joint kernel per trial);
 * a group of nested ones is refused at its key rather than silently flattened. */
/* tpe and pbt handle a flat space only (pbt: perturbing walks the top-level hparams). */
static int check_flat(const t2__config *cfg, const t2__ynode *hp, const t2__ymark *kmark, const char *who,
                      const t2__ynode *root)
{
    char full[T2__PATH_MAX];
    for (size_t k = 0; k < cfg->hparams->nchildren; k++) {
        const t2__hparam *h = &cfg->hparams->children[k];
        if (h->kind != T2__HP_NESTED) continue;
        const t2__ynode *at = ynode_at(hp, h->path);
        t2__path_join(full, sizeof full, "hyperparameters", h->path);
        /* Placed at the searcher's name (or its sampler) when an override chose it. */
        const t2__ymark *m = t2__cfg_blame_path(at ? &at->mark : kmark, root, "searcher.name");
        m = t2__cfg_blame_path(m, root, "searcher.sampler");
        return t2__cfg_err(m, full, "%s does not support nested hyperparameters yet", who);
    }
    return T2_OK;
}

/* What the trial API can hand out (T2__MAX_BATCH). */
#define BATCH_TOO_LARGE                                                                                          \
    "expected at most %lld records a step (the trial API gives the batch size as an int: "                      \
    "t2_ctx_global_batch_size), got %lld"

/* A batch size that does not divide by the slots is rounded as Determined rounds it (each slot
 * takes the floor; t2__config_batch_sizes), with a warning; fewer records than slots is an error. */
static int batch_value(t2__config *cfg, const t2__val *v, const t2__ynode *at, const char *path, int64_t slots,
                       const t2__ynode *root)
{
    char buf[128];
    if (v->kind != T2__VAL_INT || v->i < 1)
        return t2__cfg_err(&at->mark, path, "expected a positive integer, got %s", t2__ydesc(at, buf, sizeof buf));
    if (v->i > T2__MAX_BATCH)
        return t2__cfg_err(&at->mark, path, BATCH_TOO_LARGE, (long long)T2__MAX_BATCH, (long long)v->i);
    if (v->i < slots) /* at the slots when an override set them */
        return t2__cfg_err(t2__cfg_blame_path(&at->mark, root, "resources.slots_per_trial"), path,
                           "%lld is less than resources.slots_per_trial (%lld); every slot needs at "
                                            "least one record a step",
                           (long long)v->i, (long long)slots);
    if (v->i % slots)
        return t2__cfg_warn(cfg, &at->mark,
                            "%s: %lld is not divisible by resources.slots_per_trial (%lld): each slot trains on %lld "
                            "records a step, %lld in all (Determined rounds the same way)",
                            path, (long long)v->i, (long long)slots, (long long)(v->i / slots),
                            (long long)(v->i / slots * slots));
    return T2_OK;
}

static int check_batch(t2__config *cfg, const t2__ynode *hp, const t2__ymark *kmark, const t2__ynode *root)
{
    static const char path[] = "hyperparameters.global_batch_size";
    const t2__hparam *h = t2__hparam_find(cfg->hparams, "global_batch_size");
    const t2__ynode *at = ynode_at(hp, "global_batch_size");
    int64_t slots = cfg->resources.slots_per_trial;
    char sub[T2__PATH_MAX], idx[32];
    /* With the typo hint other required keys get: a misspelt global_batch_size is otherwise taken
     * for a constant hyperparameter of the trial's own, silently (probe_M). */
    if (!h || !at)
        return t2__cfg_missing_in(hp, kmark, "hyperparameters", "global_batch_size",
                                  ", in the file or as --config hyperparameters.global_batch_size=N (Determined's "
                                  "Core API leaves the batch size to the training script; t2exp builds the batches "
                                  "and needs it)");
    switch (h->kind) {
    case T2__HP_CONST: {
        const t2__ynode *vn = at->kind == T2__Y_MAP ? t2__ymap_get(at, "val", NULL) : at;
        if (at->kind == T2__Y_MAP) t2__path_join(sub, sizeof sub, path, "val");
        else snprintf(sub, sizeof sub, "%s", path);
        return batch_value(cfg, h->val, vn ? vn : at, sub, slots, root);
    }
    case T2__HP_INT:
        if (h->imin < 1) {
            const t2__ynode *mn = t2__ymap_get(at, "minval", NULL);
            t2__path_join(sub, sizeof sub, path, "minval");
            return t2__cfg_err(mn ? &mn->mark : &at->mark, sub, "expected a positive integer, got %lld",
                               (long long)h->imin);
        }
        if (h->imax > T2__MAX_BATCH) {
            const t2__ynode *mx = t2__ymap_get(at, "maxval", NULL);
            t2__path_join(sub, sizeof sub, path, "maxval");
            return t2__cfg_err(mx ? &mx->mark : &at->mark, sub, BATCH_TOO_LARGE, (long long)T2__MAX_BATCH,
                               (long long)h->imax);
        }
        if (h->imin < slots)
            return t2__cfg_err(t2__cfg_blame_path(&at->mark, root, "resources.slots_per_trial"), path, "the range starts at %lld, less than resources.slots_per_trial (%lld); "
                                                "every slot needs at least one record a step",
                               (long long)h->imin, (long long)slots);
        if (slots > 1 && (h->imin != h->imax || h->imin % slots))
            return t2__cfg_warn(cfg, &at->mark,
                                "%s: values not divisible by resources.slots_per_trial (%lld) are rounded down to a "
                                "multiple of it (each slot takes value / %lld records a step, as in Determined)",
                                path, (long long)slots, (long long)slots);
        return T2_OK;
    case T2__HP_CATEGORICAL: {
        const t2__ynode *vals = t2__ymap_get(at, "vals", NULL);
        for (size_t k = 0; k < h->vals->n; k++) {
            snprintf(idx, sizeof idx, "vals.%zu", k);
            t2__path_join(sub, sizeof sub, path, idx);
            int rc = batch_value(cfg, h->vals->items[k], vals && k < vals->n ? vals->items[k] : at, sub, slots, root);
            if (rc) return rc;
        }
        return T2_OK;
    }
    default:
        return t2__cfg_err(&at->mark, path,
                           "expected a positive integer (a constant, or an int or categorical hyperparameter), got "
                           "a %s",
                           h->kind == T2__HP_NESTED ? "map of nested hyperparameters" : h->kind == T2__HP_DOUBLE
                                                                                          ? "double hyperparameter"
                                                                                          : "log hyperparameter");
    }
}

int64_t t2__cfg_min_batch(const t2__config *cfg)
{
    const t2__hparam *h = cfg->hparams ? t2__hparam_find(cfg->hparams, "global_batch_size") : NULL;
    int64_t min = 0;
    if (!h) return 0;
    if (h->kind == T2__HP_CONST) return h->val && h->val->kind == T2__VAL_INT ? h->val->i : 0;
    if (h->kind == T2__HP_INT) return h->imin;
    if (h->kind != T2__HP_CATEGORICAL || !h->vals) return 0;
    for (size_t k = 0; k < h->vals->n; k++) {
        const t2__val *v = h->vals->items[k];
        if (v->kind != T2__VAL_INT) return 0;
        if (!k || v->i < min) min = v->i;
    }
    return min;
}

int t2__cfg_hparams_check(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark, const t2__ynode *root)
{
    int rc;
    if ((rc = t2__cfg_collect(cfg, check_batch(cfg, n, kmark, root)))) return rc;
    if (cfg->searcher.name == T2__SEARCH_GRID && (rc = check_grid(cfg, n, kmark, root))) return rc;
    if ((cfg->searcher.name == T2__SEARCH_TPE ||
         (cfg->searcher.name == T2__SEARCH_ADAPTIVE_ASHA && cfg->searcher.sampler == T2__SAMPLER_TPE)) &&
        (rc = check_flat(cfg, n, kmark, "tpe", root)))
        return rc;
    if (cfg->searcher.name == T2__SEARCH_PBT && (rc = check_flat(cfg, n, kmark, "pbt", root))) return rc;
    return T2_OK;
}
