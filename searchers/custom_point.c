/* custom_point.c — t2exp/searcher.h's points and space for a custom searcher: a point is a full
 * hparams map (a draw of the space) that the setters change one leaf at a time, each value checked
 * against its hyperparameter as searcher.points_to_evaluate's are, so every point a custom
 * searcher hands to t2_search_create is one the space allows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "custom.h"
#include "internal.h"
#include "t2exp/error.h"
#include "t2exp/rng.h"

struct t2_point {
    const t2__hparam *root;
    t2__val *v;
};

static int leaves_add(const t2__hparam *h, const t2__hparam ***v, size_t *n, size_t *cap)
{
    if (h->kind == T2__HP_NESTED) {
        for (size_t k = 0; k < h->nchildren; k++) {
            int rc = leaves_add(&h->children[k], v, n, cap);
            if (rc) return rc;
        }
        return T2_OK;
    }
    const t2__hparam **g = t2__grow_array(*v, cap, *n, sizeof *g, 16);
    if (!g) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    *v = g;
    (*v)[(*n)++] = h;
    return T2_OK;
}

int t2__custom_leaves(const t2__hparam *root, const t2__hparam ***out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    int rc = leaves_add(root, out, n, &cap);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int t2__custom_point_new(const t2__hparam *root, t2__val *v, t2_point **out)
{
    t2_point *p = malloc(sizeof *p);
    if (!p) {
        t2__val_free(v);
        return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    }
    *p = (t2_point){root, v};
    *out = p;
    return T2_OK;
}

t2__val *t2__custom_point_take(t2_point *p, const t2__hparam *root)
{
    if (!p || p->root != root) return NULL;
    t2__val *v = p->v;
    free(p);
    return v;
}

void t2_point_free(t2_point *p)
{
    if (!p) return;
    t2__val_free(p->v);
    free(p);
}

int t2_search_sample(const t2_search *s, uint64_t seed, t2_point **out)
{
    if (!s || !out) return t2_seterr(T2_EINVAL, "t2_search_sample: NULL argument");
    *out = NULL;
    t2_rng rng;
    t2_rng_seed(&rng, t2_hash64(seed ^ UINT64_C(0x637573746f6d2121)));
    const t2__hparam *root = t2__custom_space(s);
    t2__val *v = NULL;
    int rc = t2__hparam_sample(root, &rng, &v);
    return rc ? rc : t2__custom_point_new(root, v, out);
}

/* The leaf `name` of p's space, or an error naming it. */
static int leaf_of(const t2_point *p, const char *name, const char *fn, const t2__hparam **out)
{
    if (!p || !name) return t2_seterr(T2_EINVAL, "%s: NULL argument", fn);
    const t2__hparam *h = t2__hparam_find(p->root, name);
    if (!h || h->kind == T2__HP_NESTED || !*name)
        return t2_seterr(T2_ENOTFOUND, "%s: no hyperparameter '%s'%s", fn, name,
                         h && *name ? " (it is a group of hyperparameters: name one of its leaves)" : "");
    *out = h;
    return T2_OK;
}

int t2_point_double(const t2_point *p, const char *name, double *value)
{
    const t2__hparam *h = NULL;
    int rc = leaf_of(p, name, "t2_point_double", &h);
    if (rc) return rc;
    const t2__val *v = t2__val_lookup(p->v, name);
    if (!v || t2__val_as_double(v, value) != T2_OK)
        return t2_seterr(T2_EINVAL, "t2_point_double: hyperparameter '%s' is not a number here", name);
    return T2_OK;
}

int t2_point_string(const t2_point *p, const char *name, const char **value)
{
    const t2__hparam *h = NULL;
    int rc = leaf_of(p, name, "t2_point_string", &h);
    if (rc) return rc;
    const t2__val *v = t2__val_lookup(p->v, name);
    if (!v || v->kind != T2__VAL_STRING)
        return t2_seterr(T2_EINVAL, "t2_point_string: hyperparameter '%s' is not a string here", name);
    *value = v->s;
    return T2_OK;
}

int t2_point_choice(const t2_point *p, const char *name, size_t *index)
{
    const t2__hparam *h = NULL;
    int rc = leaf_of(p, name, "t2_point_choice", &h);
    if (rc) return rc;
    double d;
    if (h->kind != T2__HP_CATEGORICAL || !t2__hparam_coordinate(h, t2__val_lookup(p->v, name), &d))
        return t2_seterr(T2_EINVAL, "t2_point_choice: hyperparameter '%s' is not categorical", name);
    *index = (size_t)d;
    return T2_OK;
}

/* Sets leaf name to v (taken) once it is one the leaf allows (as points_to_evaluate's values);
 * what it allows otherwise. */
static int set_checked(t2_point *p, const t2__hparam *h, const char *name, const char *fn, t2__val *v)
{
    if (!v) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    char want[200];
    int ok = t2__hparam_allows(h, &v, want, sizeof want);
    if (ok <= 0) {
        char *got = NULL;
        size_t len;
        int jrc = ok < 0 ? ok : t2__val_to_json(v, &got, &len);
        t2__val_free(v);
        int rc = ok < 0 ? ok : t2_seterr(T2_EINVAL, "%s: hyperparameter '%s' takes %s, not %s", fn, name, want,
                                         jrc ? "that" : got);
        free(got);
        return rc;
    }
    return t2__val_set_path(p->v, name, v);
}

int t2_point_set_double(t2_point *p, const char *name, double value)
{
    const t2__hparam *h = NULL;
    int rc = leaf_of(p, name, "t2_point_set_double", &h);
    if (rc) return rc;
    if (!isfinite(value))
        return t2_seterr(T2_EINVAL, "t2_point_set_double: hyperparameter '%s' takes a finite number, not %g", name, value);
    /* An int leaf takes whole numbers only; elsewhere a whole number is still the double asked for,
     * unless the leaf's own values are ints (a const, a categorical's vals). */
    int whole = value == floor(value) && fabs(value) < 9e15;
    int as_int = whole && (h->kind == T2__HP_INT || (h->kind == T2__HP_CONST && h->val->kind == T2__VAL_INT));
    t2__val *v = as_int ? t2__val_int((int64_t)value) : t2__val_double(value);
    if (h->kind == T2__HP_CATEGORICAL && whole && v) { /* vals may hold 2 or 2.0: the one that matches */
        double d;
        if (!t2__hparam_coordinate(h, v, &d)) {
            t2__val_free(v);
            v = t2__val_int((int64_t)value);
        }
    }
    return set_checked(p, h, name, "t2_point_set_double", v);
}

int t2_point_set_string(t2_point *p, const char *name, const char *value)
{
    const t2__hparam *h = NULL;
    int rc = leaf_of(p, name, "t2_point_set_string", &h);
    if (rc) return rc;
    if (!value) return t2_seterr(T2_EINVAL, "t2_point_set_string: NULL value");
    return set_checked(p, h, name, "t2_point_set_string", t2__val_string(value));
}

int t2_point_set_choice(t2_point *p, const char *name, size_t index)
{
    const t2__hparam *h = NULL;
    int rc = leaf_of(p, name, "t2_point_set_choice", &h);
    if (rc) return rc;
    if (h->kind != T2__HP_CATEGORICAL || index >= h->vals->n)
        return t2_seterr(T2_EINVAL, "t2_point_set_choice: hyperparameter '%s' %s", name,
                         h->kind != T2__HP_CATEGORICAL ? "is not categorical" : "has fewer vals than that");
    t2__val *v = t2__val_copy(h->vals->items[index]);
    return v ? t2__val_set_path(p->v, name, v) : t2_seterr(T2_ENOMEM, "searcher: out of memory");
}
