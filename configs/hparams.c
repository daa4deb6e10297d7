/* hparams.c — walking the search space: lookup, building an assignment, grid points, random points.
 *
 * The grid follows Determined's master/pkg/searcher/grid.go formulas exactly (the same configs give
 * the same points), so results can be compared across the two tools. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hparams.h"
#include "t2exp/error.h"

static void hparam_clear(t2__hparam *h)
{
    for (size_t k = 0; k < h->nchildren; k++) hparam_clear(&h->children[k]);
    free(h->children);
    free(h->name);
    free(h->path);
    t2__val_free(h->val);
    t2__val_free(h->vals);
}

void t2__hparam_free(t2__hparam *root)
{
    if (!root) return;
    hparam_clear(root);
    free(root);
}

const char *t2__hp_kind_name(t2__hp_kind k)
{
    switch (k) {
    case T2__HP_CONST: return "const";
    case T2__HP_INT: return "int";
    case T2__HP_DOUBLE: return "double";
    case T2__HP_LOG: return "log";
    case T2__HP_CATEGORICAL: return "categorical";
    case T2__HP_NESTED: return "nested";
    }
    return "?";
}

int t2__hparam_searchable(const t2__hparam *h)
{
    return h && (h->kind == T2__HP_INT || h->kind == T2__HP_DOUBLE || h->kind == T2__HP_LOG ||
                 h->kind == T2__HP_CATEGORICAL);
}

int t2__hparam_coordinate(const t2__hparam *leaf, const t2__val *v, double *x)
{
    if (!leaf || !v) return 0;
    double num = v->kind == T2__VAL_INT ? (double)v->i : v->kind == T2__VAL_DOUBLE ? v->d : NAN;
    switch (leaf->kind) {
    case T2__HP_INT:
    case T2__HP_DOUBLE: *x = num; return isfinite(num);
    case T2__HP_LOG: *x = log(num) / log(leaf->base); return num > 0 && isfinite(*x);
    case T2__HP_CATEGORICAL:
        for (size_t j = 0; j < leaf->vals->n; j++)
            if (t2__val_equal(leaf->vals->items[j], v)) return *x = (double)j, 1;
        return 0;
    default: return 0;
    }
}

const t2__hparam *t2__hparam_find(const t2__hparam *root, const char *path)
{
    if (!root || !path) return NULL;
    const t2__hparam *h = root;
    while (*path) {
        const char *dot = strchr(path, '.');
        size_t len = dot ? (size_t)(dot - path) : strlen(path);
        const t2__hparam *next = NULL;
        for (size_t k = 0; h->kind == T2__HP_NESTED && k < h->nchildren; k++)
            if (strlen(h->children[k].name) == len && memcmp(h->children[k].name, path, len) == 0)
                next = &h->children[k];
        if (!next) return NULL;
        h = next;
        path = dot ? dot + 1 : path + len;
    }
    return h;
}

static void leaves(const t2__hparam *h, const t2__hparam **out, size_t max, size_t *n)
{
    if (h->kind != T2__HP_NESTED) {
        if (*n < max) out[*n] = h;
        (*n)++;
        return;
    }
    for (size_t k = 0; k < h->nchildren; k++) leaves(&h->children[k], out, max, n);
}

size_t t2__hparam_leaves(const t2__hparam *root, const t2__hparam **out, size_t max)
{
    size_t n = 0;
    if (root) leaves(root, out, max, &n);
    return n;
}

static int build(const t2__hparam *h, const t2__val *const *values, size_t *next, t2__val **out)
{
    if (h->kind != T2__HP_NESTED) {
        const t2__val *v = values ? values[*next] : NULL;
        (*next)++;
        if (!v && h->kind != T2__HP_CONST)
            return t2_seterr(T2_EINVAL, "hparams: no value given for the %s hyperparameter '%s'",
                             t2__hp_kind_name(h->kind), h->path);
        if (!(*out = t2__val_copy(v ? v : h->val))) return t2_seterr(T2_ENOMEM, "hparams: out of memory");
        return T2_OK;
    }
    t2__val *m = t2__val_map();
    if (!m) return t2_seterr(T2_ENOMEM, "hparams: out of memory");
    for (size_t k = 0; k < h->nchildren; k++) {
        t2__val *c = NULL;
        int rc = build(&h->children[k], values, next, &c);
        if (!rc) rc = t2__val_map_set(m, h->children[k].name, c);
        if (rc) {
            t2__val_free(m);
            return rc;
        }
    }
    *out = m;
    return T2_OK;
}

int t2__hparam_build(const t2__hparam *root, const t2__val *const *values, t2__val **out)
{
    size_t next = 0;
    if (!root || !out) return t2_seterr(T2_EINVAL, "hparams: NULL argument");
    *out = NULL;
    return build(root, values, &next, out);
}

/* ---------- grid ---------- */

static int axis_len(const t2__hparam *h, uint64_t *n)
{
    switch (h->kind) {
    case T2__HP_CONST: *n = 1; return T2_OK;
    case T2__HP_CATEGORICAL: *n = h->vals->n; return T2_OK;
    case T2__HP_INT:
    case T2__HP_DOUBLE:
    case T2__HP_LOG:
        if (h->count < 1)
            return t2_seterr(T2_EINVAL, "hparams: grid search needs a count for the %s hyperparameter '%s'",
                             t2__hp_kind_name(h->kind), h->path);
        *n = (uint64_t)h->count;
        if (h->kind == T2__HP_INT) {
            /* Clamp to the number of integers in [imin, imax]; the subtraction cannot overflow unsigned. */
            uint64_t range = (uint64_t)h->imax - (uint64_t)h->imin;
            if (*n - 1 > range) *n = range + 1;
        }
        return T2_OK;
    case T2__HP_NESTED: break;
    }
    return t2_seterr(T2_EINVAL, "hparams: '%s' is a group of hyperparameters, not one", h->path);
}

/* floor(i * range / d) and its remainder, exactly, for i <= d and range < 2^64: the quotient is at
 * most range, so it fits, but i * range may not; range = a * d + b splits it into i * a (at most
 * range) and i * b / d, which is computed bit by bit (i * b < d^2 may exceed 64 bits too). */
static void mul_div(uint64_t i, uint64_t range, uint64_t d, uint64_t *q, uint64_t *r)
{
    uint64_t a = range / d, b = range % d, hq = 0, hr = 0; /* i * b = hq * d + hr, hr < d */
    for (int bit = 63; bit >= 0; bit--) {
        hq <<= 1; /* (hq, hr) *= 2; hq stays below d, so it never loses a bit */
        if (hr >= d - hr) hr -= d - hr, hq++;
        else hr += hr;
        if ((i >> bit) & 1) { /* += b */
            if (hr >= d - b) hr -= d - b, hq++;
            else hr += b;
        }
    }
    *q = i * a + hq;
    *r = hr;
}

/* round(imin + i * (imax - imin) / (n - 1)) (count 1: round((imin + imax) / 2)), halves away from
 * zero as C's round(), in integers: the double formula wraps for ranges near 2^64 (-2^63 to 2^63-1
 * with count 3 gave -2^63, 0, -2^63) and loses the low bits of large ones. The result lies in
 * [imin, imax]. */
static int64_t int_point(int64_t imin, int64_t imax, uint64_t i, uint64_t n)
{
    uint64_t range = (uint64_t)imax - (uint64_t)imin, d = n > 1 ? n - 1 : 2, q, r;
    if (n > 1) mul_div(i, range, d, &q, &r);
    else q = range / 2, r = range % 2; /* the midpoint: offset range / 2 */
    int64_t a = (int64_t)((uint64_t)imin + q); /* imin + q <= imax: no overflow, as unsigned then back */
    /* The exact value is a + r / d; only a fraction of exactly one half depends on the sign. */
    int up = r > d - r || (r == d - r && r && a >= 0);
    return up ? a + 1 : a;
}

/* minval + i * (maxval - minval) / (n - 1), Determined's formula, where it stays finite; where the
 * width or its multiple overflows (minval -1.7e308, maxval 1.7e308) the same point as a weighted
 * mean of the ends, whose terms cannot overflow. Count 1: the midpoint, halved first when the sum
 * overflows. */
static double double_point(double lo, double hi, uint64_t i, uint64_t n)
{
    if (n == 1) return isfinite(lo + hi) ? (lo + hi) / 2.0 : lo / 2.0 + hi / 2.0;
    double step = (double)i * (hi - lo);
    if (isfinite(step)) return lo + step / (double)(n - 1);
    double t = (double)i / (double)(n - 1);
    return fmin(fmax(lo * (1.0 - t) + hi * t, lo), hi);
}

int t2__hparam_axis(const t2__hparam *h, t2__val **out)
{
    uint64_t n = 0;
    int rc;
    if (!h || !out) return t2_seterr(T2_EINVAL, "hparams: NULL argument");
    *out = NULL;
    if ((rc = axis_len(h, &n))) return rc;
    if (h->kind == T2__HP_CATEGORICAL) {
        if (!(*out = t2__val_copy(h->vals))) return t2_seterr(T2_ENOMEM, "hparams: out of memory");
        return T2_OK;
    }
    t2__val *list = t2__val_list();
    if (!list) return t2_seterr(T2_ENOMEM, "hparams: out of memory");
    for (uint64_t i = 0; i < n; i++) {
        t2__val *v;
        if (h->kind == T2__HP_CONST) {
            v = t2__val_copy(h->val);
        } else if (h->kind == T2__HP_INT) {
            v = t2__val_int(int_point(h->imin, h->imax, i, n));
        } else {
            double e = double_point(h->minval, h->maxval, i, n);
            v = t2__val_double(h->kind == T2__HP_LOG ? pow(h->base, e) : e);
        }
        if ((rc = t2__val_list_append(list, v))) {
            t2__val_free(list);
            return rc;
        }
    }
    *out = list;
    return T2_OK;
}

int t2__hparam_grid_size(const t2__hparam *root, uint64_t *n)
{
    if (!root || !n) return t2_seterr(T2_EINVAL, "hparams: NULL argument");
    size_t nl = t2__hparam_leaves(root, NULL, 0);
    const t2__hparam **lv = calloc(nl ? nl : 1, sizeof *lv);
    if (!lv) return t2_seterr(T2_ENOMEM, "hparams: out of memory");
    t2__hparam_leaves(root, lv, nl);
    uint64_t total = 1;
    for (size_t k = 0; k < nl; k++) {
        uint64_t len = 0;
        int rc = axis_len(lv[k], &len);
        if (rc) {
            free(lv);
            return rc;
        }
        total = len && total > UINT64_MAX / len ? UINT64_MAX : total * len;
    }
    free(lv);
    *n = total;
    return T2_OK;
}

int t2__hparam_grid(const t2__hparam *root, uint64_t max_points, t2__val **out)
{
    int rc;
    uint64_t total;
    size_t nl;
    const t2__hparam **lv = NULL;
    t2__val **axes = NULL, *list = NULL;
    const t2__val **point = NULL;
    size_t *at = NULL;
    if (!root || !out) return t2_seterr(T2_EINVAL, "hparams: NULL argument");
    *out = NULL;
    if ((rc = t2__hparam_grid_size(root, &total))) return rc;
    if (max_points && total > max_points)
        return t2_seterr(T2_EINVAL, "hparams: the grid has %llu points, more than the limit of %llu",
                         (unsigned long long)total, (unsigned long long)max_points);
    nl = t2__hparam_leaves(root, NULL, 0);
    lv = calloc(nl + 1, sizeof *lv);
    axes = calloc(nl + 1, sizeof *axes);
    point = calloc(nl + 1, sizeof *point);
    at = calloc(nl + 1, sizeof *at);
    list = t2__val_list();
    rc = T2_ENOMEM;
    if (!lv || !axes || !point || !at || !list) goto fail;
    t2__hparam_leaves(root, lv, nl);
    for (size_t k = 0; k < nl; k++)
        if ((rc = t2__hparam_axis(lv[k], &axes[k]))) goto fail;
    /* An odometer over the axes with the last leaf turning fastest: the first leaf varies slowest,
     * which is the order of Determined's recursive cartesianProduct. */
    for (uint64_t p = 0; p < total; p++) {
        for (size_t k = 0; k < nl; k++) point[k] = axes[k]->items[at[k]];
        t2__val *m = NULL;
        if ((rc = t2__hparam_build(root, point, &m)) || (rc = t2__val_list_append(list, m))) goto fail;
        for (size_t k = nl; k-- > 0;) {
            if (++at[k] < axes[k]->n) break;
            at[k] = 0;
        }
    }
    *out = list;
    list = NULL;
    rc = T2_OK;
fail:
    if (rc == T2_ENOMEM) t2_seterr(T2_ENOMEM, "hparams: out of memory");
    for (size_t k = 0; axes && k < nl; k++) t2__val_free(axes[k]);
    free(axes);
    free(lv);
    free(point);
    free(at);
    t2__val_free(list);
    return rc;
}

/* ---------- random ---------- */

double t2__hparam_lerp(double lo, double hi, double u)
{
    double w = hi - lo;
    if (isfinite(w)) return lo + u * w; /* the usual formula, bit for bit, wherever it is finite */
    return fmin(fmax(lo * (1.0 - u) + hi * u, lo), hi);
}

static t2__val *sample_leaf(const t2__hparam *h, t2_rng *rng)
{
    switch (h->kind) {
    case T2__HP_CONST: return t2__val_copy(h->val);
    case T2__HP_INT: {
        uint64_t range = (uint64_t)h->imax - (uint64_t)h->imin;
        uint64_t off = range == UINT64_MAX ? t2_rng_u64(rng) : t2_rng_below(rng, range + 1);
        return t2__val_int((int64_t)((uint64_t)h->imin + off));
    }
    case T2__HP_DOUBLE: return t2__val_double(t2__hparam_lerp(h->minval, h->maxval, t2_rng_uniform_double(rng)));
    case T2__HP_LOG: return t2__val_double(pow(h->base, t2__hparam_lerp(h->minval, h->maxval, t2_rng_uniform_double(rng))));
    case T2__HP_CATEGORICAL: return t2__val_copy(h->vals->items[t2_rng_below(rng, h->vals->n)]);
    case T2__HP_NESTED: break;
    }
    return NULL;
}

int t2__hparam_sample(const t2__hparam *root, t2_rng *rng, t2__val **out)
{
    int rc = T2_ENOMEM;
    if (!root || !rng || !out) return t2_seterr(T2_EINVAL, "hparams: NULL argument");
    *out = NULL;
    size_t nl = t2__hparam_leaves(root, NULL, 0);
    const t2__hparam **lv = calloc(nl + 1, sizeof *lv);
    t2__val **vals = calloc(nl + 1, sizeof *vals);
    if (!lv || !vals) goto done;
    t2__hparam_leaves(root, lv, nl);
    for (size_t k = 0; k < nl; k++)
        if (!(vals[k] = sample_leaf(lv[k], rng))) goto done;
    rc = t2__hparam_build(root, (const t2__val *const *)vals, out);
done:
    if (rc == T2_ENOMEM) t2_seterr(T2_ENOMEM, "hparams: out of memory");
    for (size_t k = 0; vals && k < nl; k++) t2__val_free(vals[k]);
    free(vals);
    free(lv);
    return rc;
}

/* Whether exponent e lies in [lo, hi] up to rounding: 1e-4 is 10^-4.000000000000001 in doubles. */
static int within(double e, double lo, double hi)
{
    double tol = 1e-9 * fmax(1.0, fmax(fabs(lo), fabs(hi)));
    return e >= lo - tol && e <= hi + tol;
}

int t2__hparam_allows(const t2__hparam *h, t2__val **v, char *want, size_t size)
{
    double d = 0;
    int ok = 0;
    switch (h->kind) {
    case T2__HP_CONST:
        ok = t2__val_equal(*v, h->val);
        snprintf(want, size, "the const value of hyperparameters.%s (a point sets only what is searched)", h->path);
        break;
    case T2__HP_INT:
        ok = (*v)->kind == T2__VAL_INT && (*v)->i >= h->imin && (*v)->i <= h->imax;
        snprintf(want, size, "an integer in [%lld, %lld]", (long long)h->imin, (long long)h->imax);
        break;
    case T2__HP_DOUBLE:
    case T2__HP_LOG: /* the range on the scale the search draws on: a log one's exponents */
        ok = t2__hparam_coordinate(h, *v, &d) &&
             (h->kind == T2__HP_LOG ? within(d, h->minval, h->maxval) : d >= h->minval && d <= h->maxval);
        if (h->kind == T2__HP_LOG)
            snprintf(want, size, "a number in [%.6g, %.6g] (%.6g^%.6g to %.6g^%.6g)", pow(h->base, h->minval),
                     pow(h->base, h->maxval), h->base, h->minval, h->base, h->maxval);
        else
            snprintf(want, size, "a number in [%.17g, %.17g]", h->minval, h->maxval);
        if (ok && (*v)->kind == T2__VAL_INT) { /* stored as the double the trial sees for these */
            t2__val *as_double = t2__val_double((double)(*v)->i);
            if (!as_double) return t2_seterr(T2_ENOMEM, "hparams: out of memory");
            t2__val_free(*v);
            *v = as_double;
        }
        break;
    case T2__HP_CATEGORICAL:
        ok = t2__hparam_coordinate(h, *v, &d);
        if (ok) { /* the val itself */
            t2__val *own = t2__val_copy(h->vals->items[(size_t)d]);
            if (!own) return t2_seterr(T2_ENOMEM, "hparams: out of memory");
            t2__val_free(*v);
            *v = own;
        } else {
            char *json = NULL;
            size_t len = 0;
            if (t2__val_to_json(h->vals, &json, &len)) return T2_ENOMEM;
            snprintf(want, size, "one of %.120s%s", json, len > 120 ? "..." : "");
            free(json);
        }
        break;
    case T2__HP_NESTED:
        snprintf(want, size, "a map of hyperparameter values");
        break;
    }
    return ok;
}
