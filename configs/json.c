/* json.c — the t2__val JSON writer (deterministic) and reader (strict).
 *
 * Both live here rather than in SQLite's JSON functions because the runner and the searchers read
 * hparams and state without a database handle, and the bytes written must not depend on a library
 * version: the same tree always gives the same text. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "value.h"
#include "t2exp/error.h"

#define JSON_MAX_DEPTH 512

/* ---------- writer ---------- */

typedef t2__json_out sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) {
            if (cap > SIZE_MAX / 2) {
                b->oom = 1;
                return;
            }
            cap *= 2;
        }
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

static void put_string(sbuf *b, const char *s, size_t len)
{
    put(b, "\"", 1);
    size_t run = 0; /* bytes that need no escaping are copied in runs */
    for (size_t k = 0; k < len; k++) {
        unsigned char c = (unsigned char)s[k];
        const char *esc = NULL;
        char u[8];
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c < 0x20) {
                snprintf(u, sizeof u, "\\u%04x", c);
                esc = u;
            }
        }
        if (!esc) continue;
        put(b, s + run, k - run);
        puts_(b, esc);
        run = k + 1;
    }
    put(b, s + run, len - run);
    put(b, "\"", 1);
}

/* Shortest of %.15g..%.17g that reads back to exactly d (json_double.c): 0.1 prints as 0.1, not
 * 0.10000000000000001, and every double still round-trips. A '.0' is added when the text would
 * otherwise read back as an integer. */
static void put_double(sbuf *b, double d)
{
    char s[40];
    t2__json_real_text(d, s, sizeof s);
    puts_(b, s);
}

static int write_val(sbuf *b, const t2__val *v, int depth)
{
    char num[32];
    if (depth > JSON_MAX_DEPTH) return t2_seterr(T2_EINVAL, "json: value nested deeper than %d", JSON_MAX_DEPTH);
    switch (v->kind) {
    case T2__VAL_NULL: puts_(b, "null"); break;
    case T2__VAL_BOOL: puts_(b, v->b ? "true" : "false"); break;
    case T2__VAL_INT: {
        /* By hand, not snprintf: the controller writes about ten integers a trial (its messages'
         * fields), each a trip through printf's format parser. */
        unsigned long long u = v->i < 0 ? 0ULL - (unsigned long long)v->i : (unsigned long long)v->i;
        char *e = num + sizeof num, *p = e;
        do *--p = (char)('0' + u % 10);
        while (u /= 10);
        if (v->i < 0) *--p = '-';
        put(b, p, (size_t)(e - p));
        break;
    }
    case T2__VAL_DOUBLE:
        if (!isfinite(v->d))
            return t2_seterr(T2_ENUMERIC, "json: cannot write %s (JSON has no NaN or infinity)",
                             isnan(v->d) ? "nan" : v->d > 0 ? "inf" : "-inf");
        put_double(b, v->d);
        break;
    case T2__VAL_STRING: put_string(b, v->s, v->len); break;
    case T2__VAL_LIST:
    case T2__VAL_MAP:
        put(b, v->kind == T2__VAL_LIST ? "[" : "{", 1);
        for (size_t k = 0; k < v->n; k++) {
            if (k) put(b, ",", 1);
            if (v->kind == T2__VAL_MAP) {
                put_string(b, v->keys[k], strlen(v->keys[k]));
                put(b, ":", 1);
            }
            int rc = write_val(b, v->items[k], depth + 1);
            if (rc) return rc;
        }
        put(b, v->kind == T2__VAL_LIST ? "]" : "}", 1);
        break;
    }
    return T2_OK;
}

int t2__val_to_json(const t2__val *v, char **out, size_t *len)
{
    if (!v || !out) return t2_seterr(T2_EINVAL, "json: NULL argument");
    sbuf b = {0};
    int rc = write_val(&b, v, 0);
    if (!rc && b.oom) rc = t2_seterr(T2_ENOMEM, "json: out of memory");
    if (!rc && !b.p) put(&b, "", 0);
    if (!rc && b.oom) rc = t2_seterr(T2_ENOMEM, "json: out of memory");
    if (rc) {
        free(b.p);
        return rc;
    }
    *out = b.p;
    if (len) *len = b.n;
    return T2_OK;
}

void t2__json_raw(t2__json_out *o, const char *s, size_t n) { put(o, s, n); }
void t2__json_string(t2__json_out *o, const char *s) { put_string(o, s, strlen(s)); }

void t2__json_int(t2__json_out *o, int64_t i)
{
    t2__val v = {.kind = T2__VAL_INT, .i = i};
    write_val(o, &v, 0);
}

int t2__json_value(t2__json_out *o, const t2__val *v) { return write_val(o, v, 0); }

/* ---------- reader ---------- */

typedef struct reader {
    const char *s;
    size_t n, pos;
    size_t err_at;
    int rc;
} reader;

static int fail(reader *r, size_t at, const char *what)
{
    r->err_at = at;
    r->rc = t2_seterr(T2_EFORMAT, "json: offset %zu: %s", at, what);
    return r->rc;
}

static void skip_ws(reader *r)
{
    while (r->pos < r->n) {
        char c = r->s[r->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        r->pos++;
    }
}

static int literal(reader *r, const char *word)
{
    size_t n = strlen(word);
    if (r->n - r->pos < n || memcmp(r->s + r->pos, word, n) != 0) return 0;
    r->pos += n;
    return 1;
}

static int hex4(reader *r, unsigned *out)
{
    if (r->n - r->pos < 4) return fail(r, r->pos, "truncated \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = r->s[r->pos + (size_t)k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return fail(r, r->pos + (size_t)k, "bad hex digit in \\u escape");
    }
    r->pos += 4;
    *out = v;
    return T2_OK;
}

static size_t utf8_encode(unsigned cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length of the valid UTF-8 sequence at p (at most avail bytes), 0 if invalid: no overlong forms,
 * no surrogates, nothing above U+10FFFF. */
static size_t utf8_valid(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    size_t n;
    unsigned cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
    else return 0;
    if (avail < n) return 0;
    for (size_t k = 1; k < n; k++) {
        if ((p[k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (p[k] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

size_t t2__utf8_invalid_at(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        size_t n = utf8_valid(p + i, len - i);
        if (!n) return i;
        i += n;
    }
    return (size_t)-1;
}

/* Parses a string at r->pos (which is at the opening quote) into a malloc'd buffer. */
static int read_string(reader *r, char **out, size_t *outlen)
{
    size_t start = ++r->pos;
    /* The decoded text is never longer than the source, so one allocation of the raw length fits. */
    size_t end = start;
    while (end < r->n && r->s[end] != '"') end += r->s[end] == '\\' ? 2 : 1;
    if (end >= r->n) return fail(r, start - 1, "unterminated string");
    char *buf = malloc(end - start + 1);
    if (!buf) return r->rc = t2_seterr(T2_ENOMEM, "json: out of memory");
    size_t o = 0;
    while (r->pos < end) {
        unsigned char c = (unsigned char)r->s[r->pos];
        if (c < 0x20) {
            fail(r, r->pos, "control character in string (must be escaped)");
            goto bad;
        }
        if (c < 0x80 && c != '\\') {
            /* A run of plain ASCII in one copy: byte by byte, reading strings was a tenth of the
             * controller's main thread (callgrind, a 4,000-trial search: its messages' keys). */
            size_t run = r->pos + 1;
            while (run < end && (unsigned char)r->s[run] >= 0x20 && (unsigned char)r->s[run] < 0x80 && r->s[run] != '\\')
                run++;
            memcpy(buf + o, r->s + r->pos, run - r->pos);
            o += run - r->pos;
            r->pos = run;
            continue;
        }
        if (c != '\\') {
            size_t n = utf8_valid((const unsigned char *)r->s + r->pos, end - r->pos);
            if (!n) {
                fail(r, r->pos, "invalid UTF-8 in string");
                goto bad;
            }
            memcpy(buf + o, r->s + r->pos, n);
            o += n;
            r->pos += n;
            continue;
        }
        size_t esc_at = r->pos++;
        char e = r->s[r->pos++];
        switch (e) {
        case '"': buf[o++] = '"'; break;
        case '\\': buf[o++] = '\\'; break;
        case '/': buf[o++] = '/'; break;
        case 'b': buf[o++] = '\b'; break;
        case 'f': buf[o++] = '\f'; break;
        case 'n': buf[o++] = '\n'; break;
        case 'r': buf[o++] = '\r'; break;
        case 't': buf[o++] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (hex4(r, &cp)) goto bad;
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                fail(r, esc_at, "lone low surrogate in \\u escape");
                goto bad;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (r->pos + 2 > end || r->s[r->pos] != '\\' || r->s[r->pos + 1] != 'u') {
                    fail(r, esc_at, "high surrogate not followed by a low surrogate");
                    goto bad;
                }
                r->pos += 2;
                if (hex4(r, &lo)) goto bad;
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    fail(r, esc_at, "high surrogate not followed by a low surrogate");
                    goto bad;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (cp == 0) {
                fail(r, esc_at, "\\u0000 is not allowed (strings are NUL-terminated)");
                goto bad;
            }
            /* A \u escape is 6 source bytes and encodes to at most 4 (or 12 -> 4), so o stays in bounds. */
            o += utf8_encode(cp, buf + o);
            break;
        }
        default: fail(r, esc_at, "unknown escape in string"); goto bad;
        }
    }
    r->pos = end + 1;
    buf[o] = '\0';
    *out = buf;
    *outlen = o;
    return T2_OK;
bad:
    free(buf);
    return r->rc;
}

static int read_number(reader *r, t2__val **out)
{
    size_t start = r->pos, p = r->pos;
    int is_int = 1;
    if (p < r->n && r->s[p] == '-') p++;
    if (p >= r->n || r->s[p] < '0' || r->s[p] > '9') return fail(r, start, "invalid number");
    if (r->s[p] == '0') {
        p++;
        if (p < r->n && r->s[p] >= '0' && r->s[p] <= '9') return fail(r, start, "leading zero in number");
    } else {
        while (p < r->n && r->s[p] >= '0' && r->s[p] <= '9') p++;
    }
    if (p < r->n && r->s[p] == '.') {
        is_int = 0;
        p++;
        if (p >= r->n || r->s[p] < '0' || r->s[p] > '9') return fail(r, p, "digit expected after '.'");
        while (p < r->n && r->s[p] >= '0' && r->s[p] <= '9') p++;
    }
    if (p < r->n && (r->s[p] == 'e' || r->s[p] == 'E')) {
        is_int = 0;
        p++;
        if (p < r->n && (r->s[p] == '+' || r->s[p] == '-')) p++;
        if (p >= r->n || r->s[p] < '0' || r->s[p] > '9') return fail(r, p, "digit expected in exponent");
        while (p < r->n && r->s[p] >= '0' && r->s[p] <= '9') p++;
    }
    char tmp[64];
    size_t len = p - start;
    if (len >= sizeof tmp) {
        /* Long digit strings are legal JSON; only parse them as doubles. */
        is_int = 0;
    }
    char *heap = NULL, *text = tmp;
    if (len >= sizeof tmp) {
        if (!(heap = malloc(len + 1))) return r->rc = t2_seterr(T2_ENOMEM, "json: out of memory");
        text = heap;
    }
    memcpy(text, r->s + start, len);
    text[len] = '\0';
    errno = 0;
    if (is_int) {
        long long v = strtoll(text, NULL, 10);
        if (errno == ERANGE) is_int = 0; /* too big for int64: keep it as a double */
        else *out = t2__val_int((int64_t)v);
    }
    if (!is_int) {
        errno = 0;
        double d;
        if (t2__decimal_fast(text, len, &d) != 0) d = strtod(text, NULL); /* text is NUL-terminated */
        if (errno == ERANGE && isinf(d)) {
            free(heap);
            return fail(r, start, "number out of range");
        }
        *out = t2__val_double(d);
    }
    free(heap);
    r->pos = p;
    if (!*out) return r->rc = t2_seterr(T2_ENOMEM, "json: out of memory");
    return T2_OK;
}

static int read_value(reader *r, t2__val **out, int depth);

static int read_container(reader *r, t2__val **out, int depth)
{
    int is_map = r->s[r->pos] == '{';
    char close = is_map ? '}' : ']';
    t2__val *c = is_map ? t2__val_map() : t2__val_list();
    if (!c) return r->rc = t2_seterr(T2_ENOMEM, "json: out of memory");
    r->pos++;
    skip_ws(r);
    if (r->pos < r->n && r->s[r->pos] == close) {
        r->pos++;
        *out = c;
        return T2_OK;
    }
    for (;;) {
        char *key = NULL;
        size_t keylen = 0;
        t2__val *item = NULL;
        skip_ws(r);
        if (is_map) {
            if (r->pos >= r->n || r->s[r->pos] != '"') {
                fail(r, r->pos, "object key (a string) expected");
                goto bad;
            }
            size_t key_at = r->pos;
            if (read_string(r, &key, &keylen)) goto bad;
            if (t2__val_map_get(c, key)) {
                free(key);
                fail(r, key_at, "duplicate object key");
                goto bad;
            }
            skip_ws(r);
            if (r->pos >= r->n || r->s[r->pos] != ':') {
                free(key);
                fail(r, r->pos, "':' expected after object key");
                goto bad;
            }
            r->pos++;
        }
        if (read_value(r, &item, depth + 1)) {
            free(key);
            goto bad;
        }
        int rc = is_map ? t2__val_map_adopt(c, key, item) : t2__val_list_append(c, item);
        if (rc) {
            r->rc = rc;
            goto bad;
        }
        skip_ws(r);
        if (r->pos < r->n && r->s[r->pos] == ',') {
            r->pos++;
            skip_ws(r);
            if (r->pos < r->n && r->s[r->pos] == close) {
                fail(r, r->pos, "trailing comma");
                goto bad;
            }
            continue;
        }
        if (r->pos < r->n && r->s[r->pos] == close) {
            r->pos++;
            *out = c;
            return T2_OK;
        }
        fail(r, r->pos, is_map ? "',' or '}' expected" : "',' or ']' expected");
        goto bad;
    }
bad:
    t2__val_free(c);
    return r->rc;
}

static int read_value(reader *r, t2__val **out, int depth)
{
    *out = NULL;
    if (depth > JSON_MAX_DEPTH) return fail(r, r->pos, "nested too deeply");
    skip_ws(r);
    if (r->pos >= r->n) return fail(r, r->pos, "unexpected end of input");
    char c = r->s[r->pos];
    if (c == '{' || c == '[') return read_container(r, out, depth);
    if (c == '"') {
        char *s;
        size_t len;
        if (read_string(r, &s, &len)) return r->rc;
        t2__val *v = calloc(1, sizeof *v);
        if (!v) {
            free(s);
            return r->rc = t2_seterr(T2_ENOMEM, "json: out of memory");
        }
        v->kind = T2__VAL_STRING;
        v->s = s;
        v->len = len;
        *out = v;
        return T2_OK;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return read_number(r, out);
    size_t at = r->pos;
    if (literal(r, "true")) *out = t2__val_bool(1);
    else if (literal(r, "false")) *out = t2__val_bool(0);
    else if (literal(r, "null")) *out = t2__val_null();
    else return fail(r, at, "unexpected character");
    if (!*out) return r->rc = t2_seterr(T2_ENOMEM, "json: out of memory");
    return T2_OK;
}

int t2__val_from_json(const char *text, size_t len, t2__val **out, size_t *err_offset)
{
    if (!text || !out) return t2_seterr(T2_EINVAL, "json: NULL argument");
    reader r = {.s = text, .n = len};
    t2__val *v = NULL;
    *out = NULL;
    if (read_value(&r, &v, 0)) goto bad;
    skip_ws(&r);
    if (r.pos != r.n) {
        t2__val_free(v);
        fail(&r, r.pos, "unexpected text after the value");
        goto bad;
    }
    *out = v;
    return T2_OK;
bad:
    if (err_offset) *err_offset = r.err_at;
    return r.rc;
}
