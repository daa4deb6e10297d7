/* value.c — construction, lookup, copy and comparison of t2__val trees. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdlib.h>
#include <string.h>
#include "value.h"
#include "t2exp/error.h"

static t2__val *val_new(t2__val_kind kind)
{
    t2__val *v = calloc(1, sizeof *v);
    if (v) v->kind = kind;
    return v;
}

t2__val *t2__val_null(void) { return val_new(T2__VAL_NULL); }
t2__val *t2__val_list(void) { return val_new(T2__VAL_LIST); }
t2__val *t2__val_map(void) { return val_new(T2__VAL_MAP); }

t2__val *t2__val_bool(int b)
{
    t2__val *v = val_new(T2__VAL_BOOL);
    if (v) v->b = b != 0;
    return v;
}

t2__val *t2__val_int(int64_t i)
{
    t2__val *v = val_new(T2__VAL_INT);
    if (v) v->i = i;
    return v;
}

t2__val *t2__val_double(double d)
{
    t2__val *v = val_new(T2__VAL_DOUBLE);
    if (v) v->d = d;
    return v;
}

t2__val *t2__val_stringn(const char *s, size_t len)
{
    t2__val *v = val_new(T2__VAL_STRING);
    if (!v) return NULL;
    v->s = malloc(len + 1);
    if (!v->s) {
        free(v);
        return NULL;
    }
    if (len) memcpy(v->s, s, len);
    v->s[len] = '\0';
    v->len = len;
    return v;
}

t2__val *t2__val_string(const char *s)
{
    if (!s) s = "";
    return t2__val_stringn(s, strlen(s));
}

void t2__val_free(t2__val *v)
{
    if (!v) return;
    for (size_t k = 0; k < v->n; k++) {
        t2__val_free(v->items[k]);
        if (v->keys) free(v->keys[k]);
    }
    free(v->items);
    free(v->keys);
    t2__keyidx_free(&v->idx);
    free(v->s);
    free(v);
}

/* Makes room for one more child; keys are allocated only for maps. */
static int grow(t2__val *c)
{
    if (c->n < c->cap) return T2_OK;
    size_t cap = c->cap ? c->cap * 2 : 4;
    if (cap > SIZE_MAX / sizeof(void *)) return T2_ENOMEM;
    t2__val **items = realloc(c->items, cap * sizeof *items);
    if (!items) return T2_ENOMEM;
    c->items = items;
    if (c->kind == T2__VAL_MAP) {
        char **keys = realloc(c->keys, cap * sizeof *keys);
        if (!keys) return T2_ENOMEM;
        c->keys = keys;
    }
    c->cap = cap;
    return T2_OK;
}

int t2__val_list_append(t2__val *list, t2__val *item)
{
    if (!item) return t2_seterr(T2_ENOMEM, "value: out of memory");
    if (!list || list->kind != T2__VAL_LIST) {
        t2__val_free(item);
        return t2_seterr(T2_EINVAL, "value: append to something that is not a list");
    }
    if (grow(list)) {
        t2__val_free(item);
        return t2_seterr(T2_ENOMEM, "value: out of memory");
    }
    list->items[list->n++] = item;
    return T2_OK;
}

static ptrdiff_t map_index(const t2__val *map, const char *key)
{
    return t2__keyidx_find(&map->idx, map->keys, map->n, key);
}

int t2__val_map_set(t2__val *map, const char *key, t2__val *v)
{
    if (!v) return t2_seterr(T2_ENOMEM, "value: out of memory");
    if (!map || map->kind != T2__VAL_MAP || !key) {
        t2__val_free(v);
        return t2_seterr(T2_EINVAL, "value: map_set on something that is not a map");
    }
    ptrdiff_t at = map_index(map, key);
    if (at >= 0) {
        t2__val_free(map->items[at]);
        map->items[at] = v;
        return T2_OK;
    }
    char *k = strdup(key);
    if (!k) {
        t2__val_free(v);
        return t2_seterr(T2_ENOMEM, "value: out of memory");
    }
    return t2__val_map_adopt(map, k, v);
}

int t2__val_map_adopt(t2__val *map, char *key, t2__val *v)
{
    if (!v || grow(map)) {
        free(key);
        t2__val_free(v);
        return t2_seterr(T2_ENOMEM, "value: out of memory");
    }
    map->keys[map->n] = key;
    map->items[map->n++] = v;
    t2__keyidx_added(&map->idx, map->keys, map->n);
    return T2_OK;
}

t2__val *t2__val_map_get(const t2__val *map, const char *key)
{
    if (!map || map->kind != T2__VAL_MAP || !key) return NULL;
    ptrdiff_t at = map_index(map, key);
    return at >= 0 ? map->items[at] : NULL;
}

/* One segment of a dotted path: [s, s+n). Returns the start of the next segment or NULL at the end. */
static const char *segment(const char *s, size_t *n)
{
    const char *dot = strchr(s, '.');
    *n = dot ? (size_t)(dot - s) : strlen(s);
    return dot ? dot + 1 : NULL;
}

static t2__val *child(const t2__val *v, const char *seg, size_t n)
{
    char key[256];
    if (n >= sizeof key) return NULL;
    memcpy(key, seg, n);
    key[n] = '\0';
    if (v->kind == T2__VAL_MAP) return t2__val_map_get(v, key);
    if (v->kind == T2__VAL_LIST && n > 0 && n < 19) {
        size_t idx = 0;
        for (size_t k = 0; k < n; k++) {
            if (key[k] < '0' || key[k] > '9') return NULL;
            idx = idx * 10 + (size_t)(key[k] - '0');
        }
        return idx < v->n ? v->items[idx] : NULL;
    }
    return NULL;
}

t2__val *t2__val_lookup(const t2__val *root, const char *path)
{
    if (!root || !path) return NULL;
    if (!*path) return (t2__val *)root;
    const t2__val *v = root;
    const char *s = path;
    while (s && v) {
        size_t n;
        const char *next = segment(s, &n);
        v = child(v, s, n);
        s = next;
    }
    return (t2__val *)v;
}

int t2__val_set_path(t2__val *root, const char *path, t2__val *v)
{
    if (!v) return t2_seterr(T2_ENOMEM, "value: out of memory");
    if (!root || root->kind != T2__VAL_MAP || !path || !*path) {
        t2__val_free(v);
        return t2_seterr(T2_EINVAL, "value: set_path needs a map and a non-empty path");
    }
    t2__val *at = root;
    const char *s = path;
    for (;;) {
        size_t n;
        const char *next = segment(s, &n);
        char key[256];
        if (n == 0 || n >= sizeof key) {
            t2__val_free(v);
            return t2_seterr(T2_EINVAL, "value: bad path '%s'", path);
        }
        memcpy(key, s, n);
        key[n] = '\0';
        if (!next) return t2__val_map_set(at, key, v);
        t2__val *c = t2__val_map_get(at, key);
        if (!c) {
            int rc = t2__val_map_set(at, key, t2__val_map());
            if (rc) {
                t2__val_free(v);
                return rc;
            }
            c = t2__val_map_get(at, key);
        } else if (c->kind != T2__VAL_MAP) {
            t2__val_free(v);
            return t2_seterr(T2_EINVAL, "value: '%.*s' in path '%s' is not a map", (int)(next - path - 1),
                             path, path);
        }
        at = c;
        s = next;
    }
}

t2__val *t2__val_copy(const t2__val *v)
{
    if (!v) return NULL;
    t2__val *c;
    switch (v->kind) {
    case T2__VAL_NULL: return t2__val_null();
    case T2__VAL_BOOL: return t2__val_bool(v->b);
    case T2__VAL_INT: return t2__val_int(v->i);
    case T2__VAL_DOUBLE: return t2__val_double(v->d);
    case T2__VAL_STRING: return t2__val_stringn(v->s, v->len);
    case T2__VAL_LIST:
        if (!(c = t2__val_list())) return NULL;
        for (size_t k = 0; k < v->n; k++)
            if (t2__val_list_append(c, t2__val_copy(v->items[k]))) goto fail;
        return c;
    case T2__VAL_MAP:
        if (!(c = t2__val_map())) return NULL;
        for (size_t k = 0; k < v->n; k++)
            if (t2__val_map_set(c, v->keys[k], t2__val_copy(v->items[k]))) goto fail;
        return c;
    }
    return NULL;
fail:
    t2__val_free(c);
    return NULL;
}

int t2__val_equal(const t2__val *a, const t2__val *b)
{
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return 0;
    switch (a->kind) {
    case T2__VAL_NULL: return 1;
    case T2__VAL_BOOL: return a->b == b->b;
    case T2__VAL_INT: return a->i == b->i;
    case T2__VAL_DOUBLE: return a->d == b->d;
    case T2__VAL_STRING: return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
    case T2__VAL_LIST:
        if (a->n != b->n) return 0;
        for (size_t k = 0; k < a->n; k++)
            if (!t2__val_equal(a->items[k], b->items[k])) return 0;
        return 1;
    case T2__VAL_MAP:
        if (a->n != b->n) return 0;
        /* Keys are unique, so equal sizes plus every key of a matching in b means equal key sets. */
        for (size_t k = 0; k < a->n; k++)
            if (!t2__val_equal(a->items[k], t2__val_map_get(b, a->keys[k]))) return 0;
        return 1;
    }
    return 0;
}

int t2__val_as_double(const t2__val *v, double *out)
{
    if (v && v->kind == T2__VAL_INT) {
        *out = (double)v->i;
        return T2_OK;
    }
    if (v && v->kind == T2__VAL_DOUBLE) {
        *out = v->d;
        return T2_OK;
    }
    return T2_EINVAL;
}

const char *t2__val_kind_article(t2__val_kind k)
{
    switch (k) {
    case T2__VAL_NULL: return "null";
    case T2__VAL_BOOL: return "a bool";
    case T2__VAL_INT: return "an int";
    case T2__VAL_DOUBLE: return "a double";
    case T2__VAL_STRING: return "a string";
    case T2__VAL_LIST: return "a list";
    case T2__VAL_MAP: return "a map";
    }
    return "a value of no known kind";
}

const char *t2__val_kind_name(t2__val_kind k)
{
    switch (k) {
    case T2__VAL_NULL: return "null";
    case T2__VAL_BOOL: return "bool";
    case T2__VAL_INT: return "int";
    case T2__VAL_DOUBLE: return "double";
    case T2__VAL_STRING: return "string";
    case T2__VAL_LIST: return "list";
    case T2__VAL_MAP: return "map";
    }
    return "?";
}

/* map's leaves into out, each key after prefix and a dot (no prefix at the root). */
static int flatten_into(const t2__val *map, const char *prefix, t2__val *out)
{
    for (size_t k = 0; k < map->n; k++) {
        size_t plen = prefix ? strlen(prefix) + 1 : 0, klen = strlen(map->keys[k]);
        char *path = malloc(plen + klen + 1);
        if (!path) return t2_seterr(T2_ENOMEM, "value: out of memory");
        if (prefix) memcpy(path, prefix, plen - 1), path[plen - 1] = '.';
        memcpy(path + plen, map->keys[k], klen + 1);
        const t2__val *v = map->items[k];
        /* A key with dots of its own ({"a.b": 1, "a": {"b": 2}}) can name a path twice. */
        int rc = v->kind == T2__VAL_MAP && v->n ? flatten_into(v, path, out)
                 : t2__val_map_get(out, path)   ? t2_seterr(T2_EINVAL, "value: flatten: two leaves are named %s", path)
                                                : t2__val_map_set(out, path, t2__val_copy(v));
        free(path);
        if (rc) return rc;
    }
    return T2_OK;
}

int t2__val_flatten(const t2__val *v, t2__val **out)
{
    *out = NULL;
    if (!v || v->kind != T2__VAL_MAP) return t2_seterr(T2_EINVAL, "value: flatten of something that is not a map");
    t2__val *m = t2__val_map();
    int rc = m ? flatten_into(v, NULL, m) : t2_seterr(T2_ENOMEM, "value: out of memory");
    if (rc) {
        t2__val_free(m);
        return rc;
    }
    *out = m;
    return T2_OK;
}
