/* yaml_load.c — libyaml events to a t2__ynode tree with line:column marks.
 *
 * The event API is used rather than yaml_parser_load because the document API gives every untagged
 * scalar the !!str tag, which loses the difference between `10` (an int) and `"10"` (a string). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "ytree.h"
#include "t2exp/error.h"

#define Y_MAX_DEPTH 100

void t2__ymark_format(const t2__ymark *m, char *buf, size_t size)
{
    if (m->line > 0) snprintf(buf, size, "%s:%d:%d", m->src ? m->src : "?", m->line, m->col);
    else snprintf(buf, size, "%s", m->src ? m->src : "?");
}

void t2__yfree(t2__ynode *n)
{
    if (!n) return;
    for (size_t k = 0; k < n->n; k++) {
        t2__yfree(n->items[k]);
        if (n->keys) free(n->keys[k]);
    }
    free(n->items);
    free(n->keys);
    free(n->key_marks);
    t2__keyidx_free(&n->idx);
    free(n->text);
    free(n);
}

static t2__ynode *ynew(t2__ykind kind, t2__ymark m)
{
    t2__ynode *n = calloc(1, sizeof *n);
    if (n) {
        n->kind = kind;
        n->mark = m;
    }
    return n;
}

t2__ynode *t2__ymap_new(t2__ymark m) { return ynew(T2__Y_MAP, m); }

static int ygrow(t2__ynode *c)
{
    if (c->n < c->cap) return T2_OK;
    size_t cap = c->cap ? c->cap * 2 : 4;
    t2__ynode **items = realloc(c->items, cap * sizeof *items);
    if (!items) return T2_ENOMEM;
    c->items = items;
    if (c->kind == T2__Y_MAP) {
        char **keys = realloc(c->keys, cap * sizeof *keys);
        if (!keys) return T2_ENOMEM;
        c->keys = keys;
        t2__ymark *km = realloc(c->key_marks, cap * sizeof *km);
        if (!km) return T2_ENOMEM;
        c->key_marks = km;
    }
    c->cap = cap;
    return T2_OK;
}

t2__ynode *t2__ymap_get(const t2__ynode *map, const char *key, size_t *idx)
{
    if (!map || map->kind != T2__Y_MAP) return NULL;
    ptrdiff_t k = t2__keyidx_find(&map->idx, map->keys, map->n, key);
    if (k < 0) return NULL;
    if (idx) *idx = (size_t)k;
    return map->items[k];
}

int t2__ymap_set(t2__ynode *map, const char *key, t2__ymark kmark, t2__ynode *v)
{
    size_t at;
    if (!v) return t2_seterr(T2_ENOMEM, "config: out of memory");
    if (t2__ymap_get(map, key, &at)) {
        t2__yfree(map->items[at]);
        map->items[at] = v;
        map->key_marks[at] = kmark;
        return T2_OK;
    }
    char *k = strdup(key);
    if (!k || ygrow(map)) {
        free(k);
        t2__yfree(v);
        return t2_seterr(T2_ENOMEM, "config: out of memory");
    }
    map->keys[map->n] = k;
    map->key_marks[map->n] = kmark;
    map->items[map->n++] = v;
    t2__keyidx_added(&map->idx, map->keys, map->n);
    return T2_OK;
}

/* Nodes and expanded bytes (T2__Y_NODE_BYTES per node plus scalar text) of a subtree. */
static void ysize(const t2__ynode *n, size_t *nodes, size_t *bytes)
{
    *nodes += 1;
    *bytes += T2__Y_NODE_BYTES + n->len;
    for (size_t k = 0; k < n->n; k++) ysize(n->items[k], nodes, bytes);
}

t2__ynode *t2__ycopy(const t2__ynode *n)
{
    if (!n) return NULL;
    t2__ynode *c = ynew(n->kind, n->mark);
    if (!c) return NULL;
    c->plain = n->plain;
    c->len = n->len;
    if (n->text) {
        if (!(c->text = malloc(n->len + 1))) goto fail;
        memcpy(c->text, n->text, n->len + 1);
    }
    for (size_t k = 0; k < n->n; k++) {
        if (ygrow(c)) goto fail;
        t2__ynode *item = t2__ycopy(n->items[k]);
        if (!item) goto fail;
        if (c->kind == T2__Y_MAP) {
            if (!(c->keys[c->n] = strdup(n->keys[k]))) {
                t2__yfree(item);
                goto fail;
            }
            c->key_marks[c->n] = n->key_marks[k];
        }
        c->items[c->n++] = item;
        if (c->kind == T2__Y_MAP) t2__keyidx_added(&c->idx, c->keys, c->n);
    }
    return c;
fail:
    t2__yfree(c);
    return NULL;
}

/* ---------- event-driven builder ---------- */

typedef struct frame {
    t2__ynode *node;
    t2__ynode *key; /* MAP: the key scalar waiting for its value */
    /* MAP: merged[i] when entry i came from a merge key (`<<: *base`), which a key of the map's
     * own may still override (NULL: none merged yet; cap entries). */
    unsigned char *merged;
    size_t capmerged;
    int skip; /* MAP: key is a duplicate already reported (builder.dup): its value is dropped */
} frame;


typedef struct builder {
    const char *src;
    frame stack[Y_MAX_DEPTH + 1];
    int depth;
    t2__ynode *root;
    /* Anchors: names[i] -> nodes[i] (pointing into the tree or into `keep`), indexed by name. */
    char **anames;
    t2__ynode **anodes;
    size_t nanchors, capanchors;
    t2__keyidx aidx;
    t2__ynode **keep; /* anchored key scalars: aliases may still copy them after the key is consumed */
    size_t nkeep, capkeep;
    size_t nodes, bytes, max_bytes;
    int (*dup)(void *ctx); /* t2__yparse_collect's: takes a duplicate key's message (t2_errmsg) */
    void *dup_ctx;
} builder;

static t2__ymark mark_of(const builder *b, yaml_mark_t m)
{
    t2__ymark r = {b->src, (int)m.line + 1, (int)m.column + 1};
    return r;
}

static int err_at(const t2__ymark *m, const char *fmt, const char *arg)
{
    char where[512], what[256];
    t2__ymark_format(m, where, sizeof where);
    snprintf(what, sizeof what, fmt, arg);
    return t2_seterr(T2_EFORMAT, "%s: %s", where, what);
}

static int add_anchor(builder *b, const char *name, t2__ynode *node)
{
    node->anchored = 1;
    ptrdiff_t at = t2__keyidx_find(&b->aidx, b->anames, b->nanchors, name);
    if (at >= 0) { /* YAML allows redefinition; later wins */
        b->anodes[at] = node;
        return T2_OK;
    }
    if (b->nanchors == b->capanchors) {
        size_t cap = b->capanchors ? b->capanchors * 2 : 8;
        char **names = realloc(b->anames, cap * sizeof *names);
        if (!names) return t2_seterr(T2_ENOMEM, "config: out of memory");
        b->anames = names;
        t2__ynode **nodes = realloc(b->anodes, cap * sizeof *nodes);
        if (!nodes) return t2_seterr(T2_ENOMEM, "config: out of memory");
        b->anodes = nodes;
        b->capanchors = cap;
    }
    if (!(b->anames[b->nanchors] = strdup(name))) return t2_seterr(T2_ENOMEM, "config: out of memory");
    b->anodes[b->nanchors++] = node;
    t2__keyidx_added(&b->aidx, b->anames, b->nanchors);
    return T2_OK;
}

static int keep_node(builder *b, t2__ynode *n)
{
    if (b->nkeep == b->capkeep) {
        size_t cap = b->capkeep ? b->capkeep * 2 : 4;
        t2__ynode **k = realloc(b->keep, cap * sizeof *k);
        if (!k) return T2_ENOMEM;
        b->keep = k;
        b->capkeep = cap;
    }
    b->keep[b->nkeep++] = n;
    return T2_OK;
}

/* A node its parent no longer holds: freed, or kept while anchored (aliases may still copy it; one
 * re-anchored since is kept too, which is harmless). */
static int release(builder *b, t2__ynode *n)
{
    if (!n->anchored) {
        t2__yfree(n);
        return T2_OK;
    }
    if (keep_node(b, n)) {
        t2__yfree(n);
        return t2_seterr(T2_ENOMEM, "config: out of memory");
    }
    return T2_OK;
}

/* A plain `<<` key: the merge key, which Determined's loader (ruamel.yaml) and PyYAML honour. */
static int is_merge_key(const t2__ynode *key) { return key->plain && strcmp(key->text, "<<") == 0; }

/* Adds to map f->node the entries of src (a map) whose keys it lacks: a key the map already has,
 * its own or from an earlier merge, wins, as in ruamel.yaml. Entries of an anchored src are copied
 * (aliases may still copy it); of another, moved. */
static int merge_map(frame *f, t2__ynode *src)
{
    t2__ynode *p = f->node;
    for (size_t k = 0; k < src->n; k++) {
        if (t2__ymap_get(p, src->keys[k], NULL)) continue;
        t2__ynode *v = src->anchored ? t2__ycopy(src->items[k]) : src->items[k];
        if (!src->anchored) src->items[k] = NULL; /* moved (t2__yfree skips NULL) */
        if (t2__ymap_set(p, src->keys[k], src->key_marks[k], v)) return T2_ENOMEM;
        if (p->n > f->capmerged) {
            size_t cap = p->cap;
            unsigned char *m = realloc(f->merged, cap);
            if (!m) return t2_seterr(T2_ENOMEM, "config: out of memory");
            memset(m + f->capmerged, 0, cap - f->capmerged);
            f->merged = m;
            f->capmerged = cap;
        }
        f->merged[p->n - 1] = 1;
    }
    return T2_OK;
}

/* The value of a merge key: a map, or a list of maps (the earlier ones win). Takes ownership of v. */
static int merge_value(builder *b, frame *f, t2__ynode *v)
{
    int rc = T2_OK;
    if (v->kind == T2__Y_MAP) {
        rc = merge_map(f, v);
    } else if (v->kind == T2__Y_SEQ) {
        for (size_t k = 0; k < v->n && !rc; k++)
            rc = v->items[k]->kind == T2__Y_MAP
                     ? merge_map(f, v->items[k])
                     : err_at(&v->items[k]->mark, "%s", "a merge key's list ('<<: [*a, *b]') holds maps only");
    } else {
        rc = err_at(&v->mark, "%s", "a merge key ('<<') takes a map or a list of maps (usually an alias: '<<: *base')");
    }
    /* Kept to the end, not freed, whether anchored or not: what it still holds (the entries the
     * map had already) may hold an anchor that a later alias copies. */
    int kept = keep_node(b, v);
    if (kept) {
        t2__yfree(v);
        kept = t2_seterr(T2_ENOMEM, "config: out of memory");
    }
    return rc ? rc : kept;
}

/* The dotted path of the map or list on top of the stack, then "." and key ("searcher.max_trials",
 * "labels.0"): where a duplicate key is, for a message in the config's FILE:L:C: PATH: form. */
static void stack_path(const builder *b, const char *key, char *out, size_t size)
{
    size_t at = 0;
    out[0] = '\0';
    for (int d = 0; d + 1 < b->depth && at < size; d++) {
        const frame *f = &b->stack[d];
        if (f->node->kind == T2__Y_MAP && f->key)
            at += (size_t)snprintf(out + at, size - at, "%s%s", at ? "." : "", f->key->text);
        else if (f->node->kind == T2__Y_SEQ)
            at += (size_t)snprintf(out + at, size - at, "%s%zu", at ? "." : "", f->node->n);
    }
    if (at < size) snprintf(out + at, size - at, "%s%s", at ? "." : "", key);
}

/* Hands a finished node to its parent (or makes it the root). Takes ownership of n. */
static int attach(builder *b, t2__ynode *n)
{
    if (b->depth == 0) {
        b->root = n;
        return T2_OK;
    }
    frame *f = &b->stack[b->depth - 1];
    t2__ynode *p = f->node;
    if (p->kind == T2__Y_SEQ) {
        if (ygrow(p)) {
            t2__yfree(n);
            return t2_seterr(T2_ENOMEM, "config: out of memory");
        }
        p->items[p->n++] = n;
        return T2_OK;
    }
    if (!f->key) {
        if (n->kind != T2__Y_SCALAR) {
            int rc = err_at(&n->mark, "%s", "a map key must be a plain value, not a list or a map");
            t2__yfree(n);
            return rc;
        }
        size_t at;
        if (t2__ymap_get(p, n->text, &at) && !(at < f->capmerged && f->merged[at])) {
            char path[512];
            stack_path(b, n->text, path, sizeof path);
            int rc = err_at(&n->mark, "%s: duplicate key", path);
            /* Collected, the parse goes on: the tree stays what it was (the first value kept), so
             * the rest of the file is read and checked as if the second entry were not there. */
            if (!b->dup || (rc = b->dup(b->dup_ctx))) {
                t2__yfree(n);
                return rc;
            }
            f->skip = 1;
        }
        f->key = n;
        return T2_OK;
    }
    t2__ynode *key = f->key;
    f->key = NULL;
    size_t at;
    int rc;
    if (f->skip) {
        /* Kept to the end rather than freed: an anchor inside it may still be aliased. */
        f->skip = 0;
        rc = keep_node(b, n);
        if (rc) {
            t2__yfree(n);
            rc = t2_seterr(T2_ENOMEM, "config: out of memory");
        }
    } else if (is_merge_key(key)) {
        rc = merge_value(b, f, n);
    } else {
        /* The map's own key over a merged one: in place, and no longer merged (a second is a duplicate).
         * The merged value is kept to the end rather than freed: an anchor inside it may still be
         * aliased (`<<: {a: &x 1}`, `a: 2`, `b: *x` read freed memory). */
        if (t2__ymap_get(p, key->text, &at) && at < f->capmerged && f->merged[at]) {
            f->merged[at] = 0;
            rc = keep_node(b, p->items[at]);
            if (rc) {
                t2__yfree(n);
                rc = t2_seterr(T2_ENOMEM, "config: out of memory");
            } else {
                p->items[at] = n;
                p->key_marks[at] = key->mark;
            }
        } else {
            rc = t2__ymap_set(p, key->text, key->mark, n);
        }
    }
    int kept = release(b, key);
    return rc ? rc : kept;
}

/* Counts nodes and expanded bytes against the limits before they are allocated, so that a
 * document past them is refused at the node (usually an alias) that would pass them. */
static int count_node(builder *b, size_t nodes, size_t bytes, const t2__ymark *m)
{
    char limit[32];
    b->nodes += nodes;
    b->bytes += bytes;
    if (b->nodes > T2__Y_MAX_NODES)
        return err_at(m, "more than %s nodes (after expanding aliases); refusing to load", "1000000");
    if (b->bytes > b->max_bytes) {
        snprintf(limit, sizeof limit, "%zu", b->max_bytes);
        return err_at(m, "the document expands to more than %s bytes (after expanding aliases: 64 MiB plus 4 times "
                         "the text, counting 64 bytes per node); refusing to load", limit);
    }
    return T2_OK;
}

static int is_core_tag(const char *tag, const char *name)
{
    static const char prefix[] = "tag:yaml.org,2002:";
    return tag && strncmp(tag, prefix, sizeof prefix - 1) == 0 && strcmp(tag + sizeof prefix - 1, name) == 0;
}

static int on_event(builder *b, yaml_event_t *ev)
{
    t2__ymark m = mark_of(b, ev->start_mark);
    t2__ynode *n;
    const char *anchor_name = NULL;
    int rc;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        if ((rc = count_node(b, 1, T2__Y_NODE_BYTES + ev->data.scalar.length, &m))) return rc;
        if (!(n = ynew(T2__Y_SCALAR, m))) return t2_seterr(T2_ENOMEM, "config: out of memory");
        size_t len = ev->data.scalar.length;
        if (!(n->text = malloc(len + 1))) {
            free(n);
            return t2_seterr(T2_ENOMEM, "config: out of memory");
        }
        memcpy(n->text, ev->data.scalar.value, len);
        n->text[len] = '\0';
        n->len = len;
        const char *tag = (const char *)ev->data.scalar.tag;
        /* `!!str 10` is the string "10"; `!!int 10` and friends resolve like an untagged scalar. */
        if (tag && !is_core_tag(tag, "str") && strcmp(tag, "!") != 0)
            n->plain = 1;
        else
            n->plain = !tag && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        if (memchr(n->text, '\0', len)) {
            rc = err_at(&m, "%s", "NUL character in a value");
            t2__yfree(n);
            return rc;
        }
        anchor_name = (const char *)ev->data.scalar.anchor;
        if (anchor_name && (rc = add_anchor(b, anchor_name, n))) {
            t2__yfree(n);
            return rc;
        }
        return attach(b, n);
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if ((rc = count_node(b, 1, T2__Y_NODE_BYTES, &m))) return rc;
        if (b->depth >= Y_MAX_DEPTH) return err_at(&m, "nested more than %s levels deep", "100");
        n = ynew(ev->type == YAML_SEQUENCE_START_EVENT ? T2__Y_SEQ : T2__Y_MAP, m);
        if (!n) return t2_seterr(T2_ENOMEM, "config: out of memory");
        n->open = 1;
        anchor_name = (const char *)(ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.anchor
                                                                            : ev->data.mapping_start.anchor);
        if (anchor_name && (rc = add_anchor(b, anchor_name, n))) {
            t2__yfree(n);
            return rc;
        }
        b->stack[b->depth] = (frame){.node = n};
        b->depth++;
        return T2_OK;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        b->depth--;
        n = b->stack[b->depth].node;
        free(b->stack[b->depth].merged);
        b->stack[b->depth].merged = NULL;
        b->stack[b->depth].capmerged = 0;
        n->open = 0;
        return attach(b, n);
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)ev->data.alias.anchor;
        ptrdiff_t at = t2__keyidx_find(&b->aidx, b->anames, b->nanchors, name);
        if (at < 0) return err_at(&m, "alias '*%s' refers to no anchor", name);
        t2__ynode *target = b->anodes[at];
        if (target->open) return err_at(&m, "alias '*%s' refers to a node that contains it", name);
        size_t nodes = 0, bytes = 0;
        ysize(target, &nodes, &bytes);
        if ((rc = count_node(b, nodes, bytes, &m))) return rc;
        t2__ynode *c = t2__ycopy(target);
        if (!c) return t2_seterr(T2_ENOMEM, "config: out of memory");
        c->mark = m;
        return attach(b, c);
    }
    default: return T2_OK;
    }
}

static int syntax_error(const yaml_parser_t *p, const char *src)
{
    if (p->error == YAML_MEMORY_ERROR) return t2_seterr(T2_ENOMEM, "config: out of memory");
    const char *problem = p->problem ? p->problem : "unknown error";
    if (p->error == YAML_READER_ERROR)
        return t2_seterr(T2_EFORMAT, "%s: YAML syntax error: %s at byte offset %zu", src, problem,
                         p->problem_offset);
    char ctx[256] = "";
    if (p->context)
        snprintf(ctx, sizeof ctx, " (%s at line %d, column %d)", p->context, (int)p->context_mark.line + 1,
                 (int)p->context_mark.column + 1);
    return t2_seterr(T2_EFORMAT, "%s:%d:%d: YAML syntax error: %s%s", src, (int)p->problem_mark.line + 1,
                     (int)p->problem_mark.column + 1, problem, ctx);
}

int t2__yparse(const char *text, size_t len, const char *src, t2__ynode **out)
{
    return t2__yparse_collect(text, len, src, out, NULL, NULL);
}

int t2__yparse_collect(const char *text, size_t len, const char *src, t2__ynode **out, int (*dup)(void *ctx),
                       void *ctx)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    builder b = {.src = src, .max_bytes = T2__Y_MAX_BYTES(len), .dup = dup, .dup_ctx = ctx};
    int rc = T2_OK, docs = 0, done = 0;
    *out = NULL;
    if (!yaml_parser_initialize(&parser)) return t2_seterr(T2_ENOMEM, "config: out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (!done) {
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = syntax_error(&parser, src);
            break;
        }
        if (ev.type == YAML_STREAM_END_EVENT) done = 1;
        else if (ev.type == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
            t2__ymark m = mark_of(&b, ev.start_mark);
            rc = err_at(&m, "%s", "more than one YAML document (a config is one document)");
        } else {
            rc = on_event(&b, &ev);
        }
        yaml_event_delete(&ev);
        if (rc) break;
    }
    yaml_parser_delete(&parser);
    /* Nodes still on the stack were never attached to a parent: free them bottom-up. */
    for (int d = b.depth - 1; d >= 0; d--) {
        t2__yfree(b.stack[d].key);
        t2__yfree(b.stack[d].node);
        free(b.stack[d].merged);
    }
    for (size_t k = 0; k < b.nanchors; k++) free(b.anames[k]);
    free(b.anames);
    free(b.anodes);
    t2__keyidx_free(&b.aidx);
    for (size_t k = 0; k < b.nkeep; k++) t2__yfree(b.keep[k]);
    free(b.keep);
    if (rc) {
        t2__yfree(b.root);
        return rc;
    }
    if (!b.root) { /* an empty stream: the same as an empty document, null */
        t2__ymark m = {src, 1, 1};
        if (!(b.root = ynew(T2__Y_SCALAR, m)) || !(b.root->text = calloc(1, 1))) {
            t2__yfree(b.root);
            return t2_seterr(T2_ENOMEM, "config: out of memory");
        }
        b.root->plain = 1;
    }
    *out = b.root;
    return T2_OK;
}

/* ---------- scalar resolution (YAML 1.2 core schema) ---------- */

static int one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strcmp(s, *words) == 0) return 1;
    return 0;
}

static int all_digits(const char *s, int base)
{
    if (!*s) return 0;
    for (; *s; s++) {
        int ok = base == 16 ? ((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F'))
                 : base == 8 ? (*s >= '0' && *s <= '7')
                             : (*s >= '0' && *s <= '9');
        if (!ok) return 0;
    }
    return 1;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int is_float_text(const char *s)
{
    if (*s == '-' || *s == '+') s++;
    int digits = 0;
    while (*s >= '0' && *s <= '9') s++, digits++;
    if (*s == '.') {
        s++;
        int frac = 0;
        while (*s >= '0' && *s <= '9') s++, frac++;
        if (!digits && !frac) return 0;
    } else if (!digits) {
        return 0;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+') s++;
        if (!(*s >= '0' && *s <= '9')) return 0;
        while (*s >= '0' && *s <= '9') s++;
    }
    return *s == '\0';
}

int t2__yscalar_to_val(const t2__ynode *n, t2__val **out)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
    static const char *const ninfs[] = {"-.inf", "-.Inf", "-.INF", NULL};
    static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
    const char *s = n->text;
    t2__val *v = NULL;
    if (!n->plain) v = t2__val_stringn(s, n->len);
    else if (one_of(s, nulls)) v = t2__val_null();
    else if (one_of(s, trues)) v = t2__val_bool(1);
    else if (one_of(s, falses)) v = t2__val_bool(0);
    else if (one_of(s, infs)) v = t2__val_double(INFINITY);
    else if (one_of(s, ninfs)) v = t2__val_double(-INFINITY);
    else if (one_of(s, nans)) v = t2__val_double(NAN);
    else {
        const char *d = s + (*s == '-' || *s == '+');
        int base = 0;
        if (all_digits(d, 10)) base = 10;
        else if (s[0] == '0' && s[1] == 'x' && all_digits(s + 2, 16)) base = 16;
        else if (s[0] == '0' && s[1] == 'o' && all_digits(s + 2, 8)) base = 8;
        if (base) {
            errno = 0;
            long long i = strtoll(base == 10 ? s : s + 2, NULL, base);
            if (errno == ERANGE) v = t2__val_double(strtod(s, NULL)); /* too big for int64 */
            else v = t2__val_int((int64_t)i);
        } else if (is_float_text(s)) {
            v = t2__val_double(strtod(s, NULL));
        } else {
            v = t2__val_stringn(s, n->len);
        }
    }
    if (!v) return t2_seterr(T2_ENOMEM, "config: out of memory");
    *out = v;
    return T2_OK;
}

int t2__ynode_to_val(const t2__ynode *n, t2__val **out)
{
    if (n->kind == T2__Y_SCALAR) return t2__yscalar_to_val(n, out);
    t2__val *c = n->kind == T2__Y_SEQ ? t2__val_list() : t2__val_map();
    if (!c) return t2_seterr(T2_ENOMEM, "config: out of memory");
    for (size_t k = 0; k < n->n; k++) {
        t2__val *item;
        int rc = t2__ynode_to_val(n->items[k], &item);
        if (!rc) rc = n->kind == T2__Y_SEQ ? t2__val_list_append(c, item) : t2__val_map_set(c, n->keys[k], item);
        if (rc) {
            t2__val_free(c);
            return rc;
        }
    }
    *out = c;
    return T2_OK;
}
