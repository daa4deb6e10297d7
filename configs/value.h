/* value.h — a small JSON-shaped value tree (internal).
 *
 * Hyperparameters, the `data:` section and searcher state are all trees of null/bool/int/double/
 * string/list/map. The store keeps them as JSON text and the runner reads hparams back from it, so
 * the tree comes with a deterministic JSON writer and a strict JSON reader.
 *
 * Ownership: every t2__val is heap-allocated and owns its children. Functions that insert a child
 * (t2__val_list_append, t2__val_map_set, t2__val_set_path) always take ownership of it, also when they
 * fail, so calls can be chained on constructors: `t2__val_map_set(m, "lr", t2__val_double(0.1))` —
 * a NULL child (failed constructor) makes them return T2_ENOMEM. Every free accepts NULL.
 *
 * Maps keep their keys in insertion order (the order of the YAML file), and the JSON writer uses that
 * order, so the same config always produces byte-identical JSON. Strings are NUL-terminated and never
 * contain a NUL byte (the JSON reader rejects \u0000). */
#ifndef T2_CONFIGS_VALUE_H
#define T2_CONFIGS_VALUE_H

#include <stddef.h>
#include <stdint.h>
#include "keyidx.h"

typedef enum t2__val_kind {
    T2__VAL_NULL,
    T2__VAL_BOOL,
    T2__VAL_INT,
    T2__VAL_DOUBLE,
    T2__VAL_STRING,
    T2__VAL_LIST,
    T2__VAL_MAP,
} t2__val_kind;

/* Read the field that matches `kind`; the others are zero. Build and change trees through the
 * functions below so that n/cap/keys stay consistent. */
typedef struct t2__val {
    t2__val_kind kind;
    int b;                 /* BOOL: 0 or 1 */
    int64_t i;             /* INT */
    double d;              /* DOUBLE */
    char *s;               /* STRING: NUL-terminated */
    size_t len;            /* STRING: strlen(s) */
    size_t n, cap;         /* LIST/MAP: number of items, allocated slots */
    struct t2__val **items; /* LIST/MAP: the values */
    char **keys;           /* MAP: keys[i] names items[i] */
    t2__keyidx idx;        /* MAP: key -> i, so that lookups and inserts are O(1) */
} t2__val;

/* Constructors: a new value, or NULL when out of memory. t2__val_string copies s (NULL -> ""). */
t2__val *t2__val_null(void);
t2__val *t2__val_bool(int b);
t2__val *t2__val_int(int64_t i);
t2__val *t2__val_double(double d);
t2__val *t2__val_string(const char *s);
t2__val *t2__val_stringn(const char *s, size_t len); /* NULs inside s are not checked */
t2__val *t2__val_list(void);
t2__val *t2__val_map(void);

void t2__val_free(t2__val *v);

/* Deep copy; NULL when out of memory (or v is NULL). */
t2__val *t2__val_copy(const t2__val *v);

/* Structural equality. Kinds must match (int 1 and double 1.0 differ), doubles compare with ==
 * (so NaN differs from itself), lists element by element, maps as key sets regardless of order. */
int t2__val_equal(const t2__val *a, const t2__val *b);

/* Appends item to a LIST (takes ownership). T2_EINVAL if list is not a list, T2_ENOMEM. */
int t2__val_list_append(t2__val *list, t2__val *item);

/* Sets map[key] = v (takes ownership of v). An existing key keeps its position and its old value is
 * freed; a new key goes last. T2_EINVAL if map is not a map or key is NULL, T2_ENOMEM. */
int t2__val_map_set(t2__val *map, const char *key, t2__val *v);
/* map_set of a key the caller knows is not in map (the JSON reader checked), taking the malloc'd
 * key as it is: no copy and no second lookup. Frees key and v on failure (T2_ENOMEM). */
int t2__val_map_adopt(t2__val *map, char *key, t2__val *v);

/* map[key], or NULL if map is not a map or has no such key. */
t2__val *t2__val_map_get(const t2__val *map, const char *key);

/* Follows a dotted path ("optimizer.lr"; a segment that is a decimal number indexes a list):
 * the value there, or NULL. An empty path returns root. */
t2__val *t2__val_lookup(const t2__val *root, const char *path);

/* Sets the value at a dotted path inside a map, creating intermediate maps (takes ownership of v).
 * T2_EINVAL when a segment on the way exists and is not a map, or the path is empty. */
int t2__val_set_path(t2__val *root, const char *path, t2__val *v);

/* A map's leaves as one flat map keyed by their dotted paths, in order ({"opt": {"lr": 1}, "n": 2}
 * gives {"opt.lr": 1, "n": 2}): what a figure or table with one column per hyperparameter shows of
 * nested hparams. Lists and empty maps are leaves. *out is NULL with T2_EINVAL when v is not a map
 * or two leaves get one name (a key with dots of its own: {"a.b": 1, "a": {"b": 2}}), T2_ENOMEM. */
int t2__val_flatten(const t2__val *v, t2__val **out);

/* Numeric value of an INT or DOUBLE. T2_EINVAL for any other kind. */
int t2__val_as_double(const t2__val *v, double *out);

/* "null", "bool", "int", "double", "string", "list", "map". */
const char *t2__val_kind_name(t2__val_kind k);
/* The kind with its article, for messages: "an int", "a map", "null". */
const char *t2__val_kind_article(t2__val_kind k);

/* Compact JSON with map keys in insertion order; doubles in the shortest form that reads back to
 * the same double (always with a '.' or exponent, so they read back as doubles), ints as ints.
 * *out is malloc'd and NUL-terminated; *len (may be NULL) gets strlen(*out).
 * T2_ENUMERIC for a NaN or infinite double (JSON cannot represent them), T2_ENOMEM. */
int t2__val_to_json(const t2__val *v, char **out, size_t *len);

/* JSON text written piece by piece, with t2__val_to_json's formatting, for a writer that knows its
 * document's shape (the channel's messages: no tree to build and free). The buffer is realloc'd
 * as it grows, so it may start as any realloc'able buffer with its length in n; `oom` sticks once
 * an append failed, and every append after it does nothing. */
typedef struct t2__json_out {
    char *p;
    size_t n, cap;
    int oom;
} t2__json_out;
void t2__json_raw(t2__json_out *o, const char *s, size_t n);
void t2__json_string(t2__json_out *o, const char *s);
void t2__json_int(t2__json_out *o, int64_t i);
/* A value, or a double as t2__val_double(d) writes (T2_ENUMERIC for NaN or infinity). */
int t2__json_value(t2__json_out *o, const t2__val *v);
/* d's shortest text that strtod reads back to d (of %.15g, %.16g, %.17g: json_double.c), into out
 * (cap >= 32 for the fast way); its length. */
size_t t2__json_double_text(double d, char *out, size_t cap);
/* The same with ".0" after an integral one (0.0, 12.0), so that a reader takes it for a double as
 * it was: how JSON and CSV write a real everywhere (cli.md "Reading the store"). cap >= 40. */
size_t t2__json_real_text(double d, char *out, size_t cap);
/* The double strtod reads from the len bytes at s (a number's text, whose next byte, if s goes on,
 * cannot continue it; json_number.c reads the common ones itself, exactly as strtod would, and
 * hands it the rest). */
double t2__decimal_double(const char *s, size_t len);
/* The same double into *out when json_number.c can read it without strtod: 0; else -1. */
int t2__decimal_fast(const char *s, size_t len, double *out);
/* x's 17 significant digits correctly rounded (printf's %.16e: d.dddddddddddddddde<exp10>) into
 * dig, its decimal exponent in *exp10; 0, or -1 where json_number.c cannot be sure (x not finite
 * and > 0, far from 1, or too near a tie): then ask strfromd. */
int t2__double_digits17(double x, char dig[17], int *exp10);
/* Whether json_number.c's long double ways are on (x87 long doubles that compute at their 64 bits:
 * not under valgrind, for one). */
int t2__long_double_exact(void);

/* Strict RFC 8259 JSON: one value, surrounding whitespace only, no comments, no trailing commas,
 * no duplicate keys, valid UTF-8, no \u0000, nesting depth <= 512. A number without fraction and
 * exponent that fits int64 becomes INT, any other number DOUBLE (overflow is an error).
 * On T2_EFORMAT the message names the byte offset, also stored in *err_offset (may be NULL). */
int t2__val_from_json(const char *text, size_t len, t2__val **out, size_t *err_offset);
/* The offset of the first byte of s that is not valid UTF-8 (what JSON strings must be), or
 * (size_t)-1 when all of s is. */
size_t t2__utf8_invalid_at(const char *s);

#endif
