/* ytree.h — a YAML document as a tree that remembers where every node came from (internal to
 * configs/).
 *
 * Validation errors must say file:line:column, so the config loader works on this tree rather than
 * on t2__val: scalars keep their source text and whether they were quoted (YAML's type resolution
 * depends on it: `10` is an int, `"10"` a string), maps keep the position of every key. */
#ifndef T2_CONFIGS_YTREE_H
#define T2_CONFIGS_YTREE_H

#include <stddef.h>
#include "keyidx.h"
#include "value.h"

/* Where a node starts. src is owned by whoever parsed the text (it outlives the tree). line and col
 * are 1-based; line 0 means "no position" (a node from a --config override). */
typedef struct t2__ymark {
    const char *src;
    int line, col;
} t2__ymark;

typedef enum t2__ykind { T2__Y_SCALAR, T2__Y_SEQ, T2__Y_MAP } t2__ykind;

typedef struct t2__ynode {
    t2__ykind kind;
    t2__ymark mark;
    /* SCALAR */
    char *text;
    size_t len;
    int plain;   /* unquoted and untagged: subject to type resolution (null/bool/int/float) */
    /* SEQ / MAP */
    size_t n, cap;
    struct t2__ynode **items;
    char **keys;          /* MAP only */
    t2__ymark *key_marks; /* MAP only */
    t2__keyidx idx;       /* MAP only: key -> position (duplicate checks and lookups in O(1)) */
    int open;             /* set while the parser is still inside this node (detects recursive aliases) */
    int anchored;         /* an anchor named this node (aliases may copy it later) */
} t2__ynode;

/* What a document may expand to: T2__Y_MAX_NODES nodes, and T2__Y_MAX_BYTES(len) expanded bytes
 * for a text of len bytes, where a node counts T2__Y_NODE_BYTES plus its scalar's length, once
 * for every time it appears after aliases are expanded. The byte budget is what stops a small
 * file that aliases a long string many times (a 1 MiB string aliased 4,000 times would take
 * 4 GiB); the node count alone does not. A document without aliases always fits both: its nodes
 * are at most 1,000,000 * 64 bytes (< 64 MiB) plus its own text. */
#define T2__Y_MAX_NODES 1000000
#define T2__Y_NODE_BYTES 64
#define T2__Y_MAX_BYTES(len) (((size_t)64 << 20) + 4 * (size_t)(len))

/* Parses one YAML document (block or flow style; anchors and aliases are expanded by copying, merge
 * keys `<<` merged).
 * An empty document gives a plain empty scalar (null). Errors are T2_EFORMAT with
 * "SRC:LINE:COL: YAML syntax error: PROBLEM", or for what this loader refuses: a second document,
 * a non-scalar map key, a duplicate key, a recursive alias, more than 100 levels of nesting or a
 * document past the limits above (placed at the alias that would pass them). T2_ENOMEM. */
int t2__yparse(const char *text, size_t len, const char *src, t2__ynode **out);

/* t2__yparse, but a duplicate key is not the end: its error is set (t2_errmsg) and dup(ctx) called,
 * which keeps it and returns T2_OK to go on (the first value stays, the second is dropped) or an
 * error to stop with. The config loader lists it with the file's other errors; a duplicate leaves
 * a well-formed tree, unlike a syntax error. */
int t2__yparse_collect(const char *text, size_t len, const char *src, t2__ynode **out, int (*dup)(void *ctx),
                       void *ctx);

void t2__yfree(t2__ynode *n);
t2__ynode *t2__ycopy(const t2__ynode *n);

/* The value of key in a MAP node (and its index through *idx, may be NULL), or NULL. */
t2__ynode *t2__ymap_get(const t2__ynode *map, const char *key, size_t *idx);

/* Sets map[key] = v, taking ownership of v: an existing key is replaced in place (its key mark
 * becomes kmark), a new one appended. T2_ENOMEM (v is freed). */
int t2__ymap_set(t2__ynode *map, const char *key, t2__ymark kmark, t2__ynode *v);

/* A new empty MAP node at mark m, or NULL. */
t2__ynode *t2__ymap_new(t2__ymark m);

/* YAML 1.2 core-schema resolution of a plain scalar: null (~, null, Null, NULL, empty), bool
 * (true/True/TRUE/false/False/FALSE), int (decimal, 0x hex, 0o octal, fitting int64), float
 * (1.5, 1e-3, .inf, -.Inf, .nan), else string. Quoted scalars are strings. */
int t2__yscalar_to_val(const t2__ynode *n, t2__val **out);

/* The whole subtree as a t2__val (maps keep key order). T2_ENOMEM. */
int t2__ynode_to_val(const t2__ynode *n, t2__val **out);

/* Writes "SRC:LINE:COL" (or just "SRC" for a mark without position) into buf. */
void t2__ymark_format(const t2__ymark *m, char *buf, size_t size);

#endif
