/* msg_fast.c — the messages a runner sends every trial (ready, metrics, done, finished) decoded
 * straight from their text, without a tree.
 *
 * Why: the controller's main thread is the serial part of a search, and decoding each frame into
 * a t2__val tree (a node, a key and an index per field, all freed again) and then into the
 * message was about half of its instructions a trial (callgrind, a 4,000-trial random search).
 *
 * The rule that keeps it safe: this path takes a subset of what t2__val_from_json and
 * t2__msg_decode take, and for that subset gives the very message they give. It reads one flat
 * object, as the runner's encoder writes it: no whitespace, no escapes, printable ASCII in strings
 * and keys, each key one of its kind's, at most once, of the type that kind's decode requires, and
 * every check of the decode passed. Anything else (another kind, a key it does not know, a value it
 * would have to think about) is declined, and the caller decodes the frame the general way, which
 * says what is wrong with it. test_msg_fast and fuzz_protocol compare the two on each text this
 * path takes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "protocol.h"

#define MAX_FIELDS 16

/* One "key":value of the object; a value's text is [v, v + vlen). */
typedef struct field {
    const char *k, *v;
    size_t klen, vlen;
    char type; /* 'i' integer, 'd' double, 's' string, 'b' boolean, 'n' null, 'o' object */
    int64_t i;
    double d;
    int b;
} field;

/* The keys of the four kinds, each a bit of a scan's `have`: a message's fields are found by key
 * once, as they are read, rather than by comparing names at every lookup (a metrics message's
 * checks compared about 250 names). */
enum {
    K_TYPE, K_BATCHES_PER_EPOCH, K_PARAMS, K_BLAS, K_VERSION, K_KIND, K_BATCHES, K_EPOCH, K_VALUES,
    K_BATCHES_PER_S, K_SAMPLES_PER_S, K_DATA_S, K_COMPUTE_S, K_COMM_S, K_ASK, K_STATUS, K_LOG_END, NKEYS
};
static const struct {
    const char *name;
    size_t len;
} KEYS[NKEYS] = {
#define KEY(s) {s, sizeof s - 1}
    KEY("type"),   KEY("batches_per_epoch"), KEY("params"),     KEY("blas"),    KEY("version"),   KEY("kind"),
    KEY("batches"), KEY("epoch"),            KEY("values"),     KEY("batches_per_s"), KEY("samples_per_s"),
    KEY("data_s"), KEY("compute_s"),         KEY("comm_s"),     KEY("ask"),      KEY("status"),   KEY("log_end"),
#undef KEY
};
#define BIT(k) (1u << (k))

typedef struct scan {
    field f[MAX_FIELDS];
    int n;
    const field *by[NKEYS]; /* a message's fields by key (object with known keys only) */
    unsigned have;          /* BIT(k) of each key present */
} scan;

/* The key's K_*, or -1: no kind has it. */
static int key_id(const char *k, size_t n)
{
    for (int i = 0; i < NKEYS; i++)
        if (KEYS[i].len == n && memcmp(KEYS[i].name, k, n) == 0) return i;
    return -1;
}

/* A string's body from p (past its quote) to its closing quote: printable ASCII, no escape. */
static const char *plain_string(const char *p, const char *end)
{
    while (p < end && *p != '"') {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c > 0x7e || c == '\\') return NULL;
        p++;
    }
    return p < end ? p : NULL;
}

/* A JSON number at p, as the tree's reader types it (json.c read_number): an integer when it has
 * neither fraction nor exponent (here: up to 18 digits, so that it fits), else a double (here:
 * finite). NULL: not one this path takes. */
static const char *number(const char *p, const char *end, field *f)
{
    const char *s = p;
    int is_int = 1, digits = 0;
    if (p < end && *p == '-') p++;
    if (p >= end || *p < '0' || *p > '9') return NULL;
    if (*p == '0') {
        p++, digits = 1;
        if (p < end && *p >= '0' && *p <= '9') return NULL;
    } else {
        while (p < end && *p >= '0' && *p <= '9') p++, digits++;
    }
    if (p < end && *p == '.') {
        is_int = 0;
        if (++p >= end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_int = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    size_t len = (size_t)(p - s);
    if (is_int) {
        if (digits > 18) return NULL;
        int64_t v = 0;
        for (const char *q = s + (*s == '-'); q < p; q++) v = v * 10 + (*q - '0');
        f->type = 'i';
        f->i = *s == '-' ? -v : v;
        return p;
    }
    if (len >= 64) return NULL;
    double d = t2__decimal_double(s, len);
    if (!isfinite(d)) return NULL;
    f->type = 'd';
    f->d = d;
    return p;
}

static const char *word(const char *p, const char *end, const char *w)
{
    size_t n = strlen(w);
    return (size_t)(end - p) >= n && memcmp(p, w, n) == 0 ? p + n : NULL;
}

/* A value at p; objects only as a span, checked by their reader. */
static const char *value(const char *p, const char *end, field *f)
{
    f->v = p;
    if (p >= end) return NULL;
    switch (*p) {
    case '"': {
        const char *q = plain_string(p + 1, end);
        if (!q) return NULL;
        f->type = 's';
        f->v = p + 1;
        f->vlen = (size_t)(q - p - 1);
        return q + 1;
    }
    case 't':
    case 'f':
        f->type = 'b';
        f->b = *p == 't';
        return word(p, end, f->b ? "true" : "false");
    case 'n':
        f->type = 'n';
        return word(p, end, "null");
    case '{': { /* a flat object (its fields are read again by its reader) */
        const char *q = p + 1;
        while (q < end && *q != '}') {
            if (*q == '"') {
                if (!(q = plain_string(q + 1, end))) return NULL;
            } else if (*q == '{' || *q == '[') {
                return NULL;
            }
            q++;
        }
        if (q >= end) return NULL;
        f->type = 'o';
        f->vlen = (size_t)(q + 1 - p);
        return q + 1;
    }
    default: {
        const char *q = number(p, end, f);
        if (q) f->vlen = (size_t)(q - p);
        return q;
    }
    }
}

/* The object [p, end) into s->f; 0: not one this path takes. keyed: a message, whose keys must be
 * among KEYS (s->by and s->have then say where each is); else any keys (a metrics message's values). */
static int object(scan *s, const char *p, const char *end, int keyed)
{
    s->n = 0;
    s->have = 0;
    if (p >= end || *p++ != '{') return 0;
    if (p < end && *p == '}') return p + 1 == end;
    for (;;) {
        if (s->n == MAX_FIELDS || p >= end || *p != '"') return 0;
        field *f = &s->f[s->n];
        memset(f, 0, sizeof *f);
        const char *q = plain_string(p + 1, end);
        if (!q) return 0;
        f->k = p + 1;
        f->klen = (size_t)(q - p - 1);
        if (keyed) { /* a key no kind has: the general decode says what is wrong */
            int id = key_id(f->k, f->klen);
            if (id < 0 || (s->have & BIT(id))) return 0; /* the tree's reader refuses a duplicate key */
            s->have |= BIT(id);
            s->by[id] = f;
        } else {
            for (int j = 0; j < s->n; j++)
                if (s->f[j].klen == f->klen && memcmp(s->f[j].k, f->k, f->klen) == 0) return 0;
        }
        p = q + 1;
        if (p >= end || *p++ != ':') return 0;
        if (!(p = value(p, end, f))) return 0;
        s->n++;
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        return p < end && *p == '}' && p + 1 == end;
    }
}

/* Whether the n bytes at p are the text s. */
static int same(const char *p, size_t n, const char *s) { return strlen(s) == n && memcmp(p, s, n) == 0; }

/* Whether f is the string s. */
static int is_text(const field *f, const char *s) { return f->type == 's' && same(f->v, f->vlen, s); }

/* The field of key k, or NULL. */
static const field *get(const scan *s, int k) { return s->have & BIT(k) ? s->by[k] : NULL; }

/* Whether every key of s is one of the kind's (a mask of BIT(K_*)). */
static int only(const scan *s, unsigned keys) { return (s->have & ~keys) == 0; }

/* count(): a required integer >= 0. */
static int count(const scan *s, int k, int64_t *out)
{
    const field *f = get(s, k);
    if (!f || f->type != 'i' || f->i < 0) return 0;
    *out = f->i;
    return 1;
}

/* number() of a required number; optional: absent or null is NAN. */
static int num(const scan *s, int k, int required, double *out)
{
    const field *f = get(s, k);
    if (!f || f->type == 'n') {
        *out = NAN;
        return !required;
    }
    if (f->type != 'i' && f->type != 'd') return 0;
    *out = f->type == 'i' ? (double)f->i : f->d;
    return 1;
}

static int ready(const scan *s, t2__msg *m)
{
    int64_t version;
    if (!only(s, BIT(K_TYPE) | BIT(K_BATCHES_PER_EPOCH) | BIT(K_PARAMS) | BIT(K_BLAS) | BIT(K_VERSION)) ||
        !count(s, K_BATCHES_PER_EPOCH, &m->u.ready.batches_per_epoch) || !count(s, K_PARAMS, &m->u.ready.params) ||
        !count(s, K_VERSION, &version) || version != T2__PROTOCOL_VERSION)
        return 0;
    m->u.ready.version = T2__PROTOCOL_VERSION;
    const field *b = get(s, K_BLAS);
    if (b && b->type != 'n') {
        if (b->type != 's' || !(m->doc = t2__val_stringn(b->v, b->vlen))) return 0;
        m->u.ready.blas = m->doc->s;
    }
    return 1;
}

/* The values object: names to numbers, into a map the message owns (its doc). */
static int values(const field *f, t2__msg *m)
{
    scan v;
    if (f->type != 'o' || !object(&v, f->v, f->v + f->vlen, 0) || !(m->doc = t2__val_map())) return 0;
    for (int j = 0; j < v.n; j++) {
        const field *x = &v.f[j];
        if (x->type != 'i' && x->type != 'd') return 0;
        char *key = malloc(x->klen + 1);
        if (!key) return 0;
        memcpy(key, x->k, x->klen);
        key[x->klen] = '\0';
        if (t2__val_map_adopt(m->doc, key, x->type == 'i' ? t2__val_int(x->i) : t2__val_double(x->d))) return 0;
    }
    m->u.metrics.values = m->doc;
    return 1;
}

static int metrics(const scan *s, t2__msg *m)
{
    const field *k = get(s, K_KIND), *vals = get(s, K_VALUES), *ask = get(s, K_ASK);
    const unsigned timing = BIT(K_BATCHES_PER_S) | BIT(K_SAMPLES_PER_S) | BIT(K_DATA_S) | BIT(K_COMPUTE_S) | BIT(K_COMM_S);
    if (!only(s, BIT(K_TYPE) | BIT(K_KIND) | BIT(K_BATCHES) | BIT(K_EPOCH) | BIT(K_VALUES) | timing | BIT(K_ASK)) ||
        !k || !vals)
        return 0;
    if (is_text(k, "validation")) m->u.metrics.validation = 1;
    else if (!is_text(k, "training")) return 0;
    if (!count(s, K_BATCHES, &m->u.metrics.batches) || !num(s, K_EPOCH, 0, &m->u.metrics.epoch)) return 0;
    if (ask && ask->type != 'n' && ask->type != 'b') return 0;
    m->u.metrics.ask = ask && ask->type == 'b' && ask->b;
    /* Timing: read only beside a training window's metrics, and then all five. */
    unsigned has = s->have & timing;
    if (has && (m->u.metrics.validation || has != timing)) return 0;
    if (has) {
        t2__msg_timing *t = &m->u.metrics.timing;
        m->u.metrics.has_timing = 1;
        if (!num(s, K_BATCHES_PER_S, 1, &t->batches_per_s) || !num(s, K_SAMPLES_PER_S, 1, &t->samples_per_s) ||
            !num(s, K_DATA_S, 1, &t->data_s) || !num(s, K_COMPUTE_S, 1, &t->compute_s) ||
            !num(s, K_COMM_S, 1, &t->comm_s))
            return 0;
    }
    return values(vals, m);
}

static int done(const scan *s, t2__msg *m)
{
    return only(s, BIT(K_TYPE) | BIT(K_BATCHES)) && count(s, K_BATCHES, &m->u.done.batches);
}

static int finished(const scan *s, t2__msg *m)
{
    if (!only(s, BIT(K_TYPE) | BIT(K_STATUS) | BIT(K_LOG_END)) || !count(s, K_STATUS, &m->u.finished.status) ||
        m->u.finished.status > 255)
        return 0;
    const field *e = get(s, K_LOG_END);
    m->u.finished.log_end = -1;
    if (e && e->type != 'n') {
        if (e->type != 'i' || e->i < 0) return 0;
        m->u.finished.log_end = e->i;
    }
    return 1;
}

/* Whether text names, where the encoder puts the type, a kind this path does not read: the
 * controller's messages to a runner (an assign's hparams) are then not scanned for nothing. */
static int other_kind(const char *text, size_t len)
{
    static const char head[] = "{\"type\":\"";
    static const char *const kinds[] = {"ready\"", "metrics\"", "done\"", "finished\""};
    size_t h = sizeof head - 1;
    if (len < h || memcmp(text, head, h) != 0) return 0; /* another order: the scan decides */
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t n = strlen(kinds[k]);
        if (len - h >= n && memcmp(text + h, kinds[k], n) == 0) return 0;
    }
    return 1;
}

int t2__msg_decode_fast(const char *text, size_t len, t2__msg *out)
{
    memset(out, 0, sizeof *out);
    if (other_kind(text, len)) return 0;
    scan s;
    if (!object(&s, text, text + len, 1)) return 0;
    const field *type = get(&s, K_TYPE);
    if (!type) return 0;
    int ok = 0;
    if (is_text(type, "ready")) out->kind = T2__MSG_READY, ok = ready(&s, out);
    else if (is_text(type, "metrics")) out->kind = T2__MSG_METRICS, ok = metrics(&s, out);
    else if (is_text(type, "done")) out->kind = T2__MSG_DONE, ok = done(&s, out);
    else if (is_text(type, "finished")) out->kind = T2__MSG_FINISHED, ok = finished(&s, out);
    if (!ok) t2__msg_free(out);
    return ok;
}
