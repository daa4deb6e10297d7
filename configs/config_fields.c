/* config_fields.c — typed getters for config values, and the error/warning formatting. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_internal.h"
#include "t2exp/error.h"

int t2__cfg_err(const t2__ymark *m, const char *path, const char *fmt, ...)
{
    char where[512], what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    t2__ymark_format(m, where, sizeof where);
    if (path && *path) return t2_seterr(T2_EINVAL, "%s: %s: %s", where, path, what);
    return t2_seterr(T2_EINVAL, "%s: %s", where, what);
}

const t2__ymark *t2__cfg_blame(const t2__ymark *a, const t2__ymark *b)
{
    return a->line == 0 || b->line != 0 ? a : b;
}

const t2__ymark *t2__cfg_where(const t2__ynode *n)
{
    if (n->mark.line == 0) return &n->mark;
    for (size_t k = 0; n->kind != T2__Y_SCALAR && k < n->n; k++) {
        if (n->key_marks && n->key_marks[k].line == 0) return &n->key_marks[k];
        const t2__ymark *m = t2__cfg_where(n->items[k]);
        if (m->line == 0) return m;
    }
    return &n->mark;
}

const t2__ynode *t2__ypath(const t2__ynode *root, const char *path)
{
    char seg[T2__PATH_MAX];
    const t2__ynode *n = root;
    while (n && *path) {
        size_t len = strcspn(path, ".");
        if (len >= sizeof seg || n->kind != T2__Y_MAP) return NULL;
        memcpy(seg, path, len);
        seg[len] = '\0';
        n = t2__ymap_get(n, seg, NULL);
        path += len + (path[len] == '.');
    }
    return n;
}

const t2__ymark *t2__cfg_blame_path(const t2__ymark *a, const t2__ynode *root, const char *path)
{
    const t2__ynode *n = root ? t2__ypath(root, path) : NULL;
    return n ? t2__cfg_blame(a, t2__cfg_where(n)) : a;
}

int t2__cfg_warn(t2__config *cfg, const t2__ymark *m, const char *fmt, ...)
{
    char where[512], what[512], *line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    t2__ymark_format(m, where, sizeof where);
    size_t n = strlen(where) + strlen(what) + 3;
    char **w = realloc(cfg->warnings, (cfg->nwarnings + 1) * sizeof *w);
    if (!w) return t2_seterr(T2_ENOMEM, "config: out of memory");
    cfg->warnings = w;
    if (!(line = malloc(n))) return t2_seterr(T2_ENOMEM, "config: out of memory");
    snprintf(line, n, "%s: %s", where, what);
    cfg->warnings[cfg->nwarnings++] = line;
    return T2_OK;
}

int t2__cfg_collect(t2__config *cfg, int rc)
{
    if (rc != T2_EINVAL) return rc;
    if (cfg->nerrors >= T2__CONFIG_MAX_ERRORS) {
        cfg->nerrors_more++;
        return T2_OK;
    }
    char *line = strdup(t2_errmsg());
    char **e = line ? realloc(cfg->errors, (cfg->nerrors + 1) * sizeof *e) : NULL;
    if (!e) {
        free(line);
        return t2_seterr(T2_ENOMEM, "config: out of memory");
    }
    cfg->errors = e;
    cfg->errors[cfg->nerrors++] = line;
    return T2_OK;
}

int t2__cfg_unknown(t2__config *cfg, const t2__ymark *kmark, const char *path, const char *const *known)
{
    /* Past the errors shown, only counted: the suggestion looks through every section's keys, and a
     * file of 20,000 unknown keys took 3 s for messages nobody sees (0.5 s before suggestions). */
    /* A stored config's own keys (a position in its text, not an override's) under the rule it was
     * accepted by (t2__config_load_stored). */
    int lenient = cfg->lenient || (cfg->lenient_text && kmark && kmark->line > 0);
    for (int i = 0; !lenient && cfg->lenient_text && kmark && i < cfg->nstored_srcs; i++)
        lenient = kmark->src == cfg->stored_srcs[i];
    if (!lenient && cfg->nerrors >= T2__CONFIG_MAX_ERRORS) return t2__cfg_collect(cfg, T2_EINVAL);
    char near[T2__PATH_MAX + 32];
    const char *former = t2__cfg_former_key(path);
    if (former) {
        if (lenient) return t2__cfg_warn(cfg, kmark, "unknown key '%s' (ignored: %s)", path, former);
        return t2__cfg_collect(cfg, t2__cfg_err(kmark, path, "unknown key: %s", former));
    }
    if (t2__cfg_suggest(path, known, near, sizeof near)) {
        if (lenient) return t2__cfg_warn(cfg, kmark, "unknown key '%s' (ignored; did you mean %s?)", path, near);
        return t2__cfg_collect(cfg, t2__cfg_err(kmark, path, "unknown key (did you mean %s?)", near));
    }
    if (lenient) return t2__cfg_warn(cfg, kmark, "unknown key '%s' (ignored)", path);
    return t2__cfg_collect(cfg, t2__cfg_err(kmark, path, "unknown key"));
}

int t2__cfg_missing(const t2__ymark *kmark, const char *path, const char *key)
{
    char full[T2__PATH_MAX];
    t2__path_join(full, sizeof full, path, key);
    return t2__cfg_err(kmark, full, "missing required key");
}

int t2__cfg_missing_in(const t2__ynode *map, const t2__ymark *kmark, const char *path, const char *key,
                       const char *note)
{
    char full[T2__PATH_MAX];
    const char *const want[] = {key, NULL};
    t2__path_join(full, sizeof full, path, key);
    /* Present but null (`metric:`, `--config searcher.metric=`): the null is where to look, not
     * the section, whose position would point at a file line the user did not write. */
    const t2__ynode *v = map && map->kind == T2__Y_MAP ? t2__ymap_get(map, key, NULL) : NULL;
    if (v && t2__ynull(v))
        return t2__cfg_err(&v->mark, full, "missing required key (null counts as absent)%s", note ? note : "");
    for (size_t k = 0; map && map->kind == T2__Y_MAP && k < map->n; k++)
        if (strcmp(map->keys[k], key) != 0 && t2__cfg_closest(map->keys[k], want))
            return t2__cfg_err(kmark, full, "missing required key (is '%s' at line %d, column %d a typo of it?)%s",
                               map->keys[k], map->key_marks[k].line, map->key_marks[k].col, note ? note : "");
    return t2__cfg_err(kmark, full, "missing required key%s", note ? note : "");
}

int t2__cfg_ignored(t2__config *cfg, const t2__ymark *kmark, const char *path, const char *why)
{
    return t2__cfg_warn(cfg, kmark, "key '%s' is accepted but ignored: %s", path, why);
}

void t2__path_join(char *out, size_t size, const char *parent, const char *key)
{
    if (parent && *parent) snprintf(out, size, "%s.%s", parent, key);
    else snprintf(out, size, "%s", key);
}

int t2__ynull(const t2__ynode *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    if (!n || n->kind != T2__Y_SCALAR || !n->plain) return 0;
    for (size_t k = 0; k < sizeof nulls / sizeof *nulls; k++)
        if (strcmp(n->text, nulls[k]) == 0) return 1;
    return 0;
}

const char *t2__ydesc(const t2__ynode *n, char *buf, size_t size)
{
    if (n->kind == T2__Y_MAP) return "a map";
    if (n->kind == T2__Y_SEQ) return "a list";
    if (t2__ynull(n)) return "null";
    t2__val *v = NULL;
    int numeric = 0;
    if (n->plain && t2__yscalar_to_val(n, &v) == T2_OK)
        numeric = v->kind == T2__VAL_INT || v->kind == T2__VAL_DOUBLE || v->kind == T2__VAL_BOOL;
    t2__val_free(v);
    /* Long values are cut so the whole message still fits t2_errmsg's buffer. */
    if (numeric) snprintf(buf, size, "%.60s", n->text);
    else snprintf(buf, size, "%s\"%.60s%s\"", n->plain ? "" : "the string ", n->text, n->len > 60 ? "..." : "");
    return buf;
}

static int mismatch(const t2__ynode *n, const char *path, const char *expected)
{
    char buf[128];
    return t2__cfg_err(&n->mark, path, "expected %s, got %s", expected, t2__ydesc(n, buf, sizeof buf));
}

int t2__get_int(const t2__ynode *n, const char *path, int64_t min, int64_t *out)
{
    const char *what = min == 1 ? "a positive integer" : min == 0 ? "a non-negative integer" : "an integer";
    if (t2__ynull(n)) return T2_OK;
    t2__val *v = NULL;
    if (n->kind != T2__Y_SCALAR || !n->plain || t2__yscalar_to_val(n, &v) || v->kind != T2__VAL_INT ||
        v->i < min) {
        t2__val_free(v);
        return mismatch(n, path, what);
    }
    *out = v->i;
    t2__val_free(v);
    return T2_OK;
}

int t2__get_number(const t2__ynode *n, const char *path, double *out)
{
    if (t2__ynull(n)) return T2_OK;
    t2__val *v = NULL;
    double d;
    if (n->kind != T2__Y_SCALAR || !n->plain || t2__yscalar_to_val(n, &v) || t2__val_as_double(v, &d) ||
        !isfinite(d)) {
        t2__val_free(v);
        return mismatch(n, path, "a finite number");
    }
    t2__val_free(v);
    *out = d;
    return T2_OK;
}

int t2__get_bool(const t2__ynode *n, const char *path, int *out)
{
    if (t2__ynull(n)) return T2_OK;
    t2__val *v = NULL;
    if (n->kind != T2__Y_SCALAR || !n->plain || t2__yscalar_to_val(n, &v) || v->kind != T2__VAL_BOOL) {
        t2__val_free(v);
        return mismatch(n, path, "true or false");
    }
    *out = v->b;
    t2__val_free(v);
    return T2_OK;
}

int t2__get_string(const t2__ynode *n, const char *path, char **out)
{
    if (t2__ynull(n)) return T2_OK;
    if (n->kind != T2__Y_SCALAR) return mismatch(n, path, "a string");
    char *s = strdup(n->text);
    if (!s) return t2_seterr(T2_ENOMEM, "config: out of memory");
    free(*out);
    *out = s;
    return T2_OK;
}

const char *t2__cfg_value_hint(const t2__ynode *n, const char *const *names, char *buf, size_t size)
{
    const char *near = n && n->kind == T2__Y_SCALAR && !t2__ynull(n) ? t2__cfg_closest(n->text, names) : NULL;
    if (near) snprintf(buf, size, " (did you mean '%s'?)", near);
    else if (size) buf[0] = '\0';
    return buf;
}

int t2__get_enum(const t2__ynode *n, const char *path, const char *const *names, int *out)
{
    char expected[256] = "one of ";
    if (t2__ynull(n)) return T2_OK;
    if (n->kind == T2__Y_SCALAR)
        for (int k = 0; names[k]; k++)
            if (strcmp(n->text, names[k]) == 0) {
                *out = k;
                return T2_OK;
            }
    for (int k = 0; names[k]; k++) {
        strncat(expected, names[k], sizeof expected - strlen(expected) - 1);
        if (names[k + 1]) strncat(expected, names[k + 2] ? ", " : " or ", sizeof expected - strlen(expected) - 1);
    }
    char buf[128], hint[96];
    return t2__cfg_err(&n->mark, path, "expected %s, got %s%s", expected, t2__ydesc(n, buf, sizeof buf),
                       t2__cfg_value_hint(n, names, hint, sizeof hint));
}

int t2__want_map(const t2__ynode *n, const char *path)
{
    return n->kind == T2__Y_MAP ? T2_OK : mismatch(n, path, "a map");
}

int t2__get_length(const t2__ynode *n, const char *path, int allow_zero, t2__length *out)
{
    static const char *const units[] = {"batches", "records", "epochs"};
    char sub[T2__PATH_MAX];
    if (t2__ynull(n)) return T2_OK;
    static const char *const unit_names[] = {"batches", "records", "epochs", NULL};
    if (n->kind != T2__Y_MAP || n->n != 1) {
        /* A key that is no unit is the problem to name first (`{batches: 1, foo: 2}`). */
        for (size_t k = 0; n->kind == T2__Y_MAP && k < n->n; k++) {
            int unit = 0;
            for (int u = 0; u < 3; u++) unit |= !strcmp(n->keys[k], units[u]);
            if (!unit) {
                const char *near = t2__cfg_closest(n->keys[k], unit_names);
                return t2__cfg_err(&n->key_marks[k], path, "unknown length unit '%s' (expected batches, records or epochs%s%s%s)",
                                   n->keys[k], near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
            }
        }
        if (n->kind == T2__Y_MAP && n->n > 1)
            return t2__cfg_err(&n->mark, path, "expected exactly one of batches, records or epochs, got %zu keys",
                               n->n);
        return mismatch(n, path, "a length such as {batches: 1000} (one of batches, records or epochs)");
    }
    for (int u = 0; u < 3; u++) {
        if (strcmp(n->keys[0], units[u]) != 0) continue;
        t2__path_join(sub, sizeof sub, path, units[u]);
        int64_t v = -1;
        if (t2__ynull(n->items[0])) return mismatch(n->items[0], sub, allow_zero ? "a non-negative integer" : "a positive integer");
        int rc = t2__get_int(n->items[0], sub, allow_zero ? 0 : 1, &v);
        if (rc) return rc;
        int64_t max = u == T2__UNIT_EPOCHS ? T2__MAX_EPOCHS : T2__MAX_LENGTH;
        if (v > max)
            return t2__cfg_err(&n->items[0]->mark, sub, "expected at most %lld %s, got %lld", (long long)max, units[u],
                               (long long)v);
        out->unit = (t2__unit)u;
        out->n = v;
        return T2_OK;
    }
    const char *near = t2__cfg_closest(n->keys[0], unit_names);
    return t2__cfg_err(&n->key_marks[0], path, "unknown length unit '%s' (expected batches, records or epochs%s%s%s)",
                       n->keys[0], near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
}
