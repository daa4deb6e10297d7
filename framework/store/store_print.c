/* store_print.c — any query as an aligned table, JSON built by SQLite, or RFC 4180 CSV. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "configs/value.h"
#include "internal.h"
#include "store_internal.h"
#include "t2exp/error.h"

/* ---- string builder -------------------------------------------------------------------- */

static int grow(t2__sbuf *b, size_t extra)
{
    if (b->oom) return -1;
    if (b->n + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra + 1) {
        if (cap > SIZE_MAX / 2) {
            b->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void t2__sbuf_put(t2__sbuf *b, const char *s, size_t n)
{
    if (grow(b, n)) return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void t2__sbuf_puts(t2__sbuf *b, const char *s) { t2__sbuf_put(b, s, strlen(s)); }

void t2__sbuf_printf(t2__sbuf *b, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        t2__sbuf_put(b, small, (size_t)n);
        return;
    }
    if (grow(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

void t2__sbuf_free(t2__sbuf *b)
{
    if (!b) return;
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- parameters and JSON wrapping ------------------------------------------------------ */

int t2__store_bind_params(t2__store *st, sqlite3_stmt *s, const t2__store_param *params,
                          size_t nparams)
{
    for (size_t i = 0; i < nparams; i++) {
        int idx = sqlite3_bind_parameter_index(s, params[i].name);
        if (idx == 0) continue;
        int rc = params[i].type == T2__P_INT    ? sqlite3_bind_int64(s, idx, params[i].i)
               : params[i].type == T2__P_REAL ? t2__store_bind_real(s, idx, params[i].d)
                                              : sqlite3_bind_text(s, idx, params[i].s, -1,
                                                                  SQLITE_TRANSIENT);
        if (rc != SQLITE_OK) return t2__store_err(st, rc, "bind");
    }
    int idx = sqlite3_bind_parameter_index(s, ":now");
    if (idx) {
        int rc = sqlite3_bind_double(s, idx, t2__store_now(st));
        if (rc != SQLITE_OK) return t2__store_err(st, rc, "bind :now");
    }
    return 0;
}

t2__col_kind t2__store_col_kind(const t2__store_colspec *cols, const char *name)
{
    for (; cols && cols->name && name; cols++)
        if (strcmp(cols->name, name) == 0) return cols->kind;
    return T2__COL_AUTO;
}

static void put_quoted(t2__sbuf *b, const char *s, char q)
{
    t2__sbuf_put(b, &q, 1);
    for (; *s; s++) {
        t2__sbuf_put(b, s, 1);
        if (*s == q) t2__sbuf_put(b, s, 1);
    }
    t2__sbuf_put(b, &q, 1);
}

/* t2_real(x): a real's shortest text that reads back to exactly it (t2__json_double_text), any
 * other value as it is. SQLite writes reals with 15 significant digits, in JSON and as text, so
 * an exported metric was not the stored double (586 of 10,000 were, probe_J). Registered on each
 * connection (store.c). Infinities stay SQLite's (JSON has no word for them; it writes 9e999). */
void t2__store_sql_real(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    double d = sqlite3_value_double(argv[0]);
    char text[40];
    if (sqlite3_value_type(argv[0]) != SQLITE_FLOAT || !isfinite(d)) {
        sqlite3_result_value(ctx, argv[0]);
        return;
    }
    size_t n = t2__json_real_text(d, text, sizeof text); /* ".0" after an integral one, as SQLite */
    sqlite3_result_text(ctx, text, (int)n, SQLITE_TRANSIENT);
}

/* The column names come from preparing the base query (no row is read). JSON-kind columns go
 * through json() so they nest as JSON values instead of strings holding JSON; reals through
 * t2_real so they read back to the stored doubles. */
int t2__store_json_sql(t2__store *st, const char *base, const t2__store_colspec *cols, int array,
                       char **out)
{
    *out = NULL;
    sqlite3_stmt *s = NULL;
    int rc = t2__store_prepare(st, base, &s);
    if (rc) return rc;
    t2__sbuf b = {0};
    t2__sbuf_puts(&b, array ? "SELECT json_group_array(json_object(" : "SELECT json_object(");
    int n = sqlite3_column_count(s);
    for (int i = 0; i < n; i++) {
        const char *name = sqlite3_column_name(s, i);
        if (!name) {
            rc = t2_seterr(T2_ENOMEM, "store: out of memory naming columns");
            goto fail;
        }
        if (i) t2__sbuf_puts(&b, ", ");
        put_quoted(&b, name, '\'');
        t2__sbuf_puts(&b, ", ");
        if (t2__store_col_kind(cols, name) == T2__COL_JSON) {
            t2__sbuf_puts(&b, "json(");
            put_quoted(&b, name, '"');
            t2__sbuf_puts(&b, ")");
        } else {
            t2__sbuf_puts(&b, "CASE WHEN typeof(");
            put_quoted(&b, name, '"');
            t2__sbuf_puts(&b, ") = 'real' THEN json(t2_real(");
            put_quoted(&b, name, '"');
            t2__sbuf_puts(&b, ")) ELSE ");
            put_quoted(&b, name, '"');
            t2__sbuf_puts(&b, " END");
        }
    }
    t2__sbuf_puts(&b, array ? ")) FROM (" : ") FROM (");
    t2__sbuf_puts(&b, base);
    t2__sbuf_puts(&b, ")");
    if (b.oom) {
        rc = t2_seterr(T2_ENOMEM, "store: out of memory building a JSON query");
        goto fail;
    }
    sqlite3_finalize(s);
    *out = b.p;
    return 0;
fail:
    sqlite3_finalize(s);
    t2__sbuf_free(&b);
    return rc;
}

/* ---- cells ----------------------------------------------------------------------------- */

static void put_duration(t2__sbuf *b, double sec)
{
    if (!(sec >= 0)) sec = 0; /* clock steps backwards: show 0 rather than nonsense */
    if (sec < 10) {
        t2__sbuf_printf(b, "%.1fs", sec);
        return;
    }
    long long s = (long long)(sec + 0.5);
    if (s < 60) t2__sbuf_printf(b, "%llds", s);
    else if (s < 3600) t2__sbuf_printf(b, "%lldm%02llds", s / 60, s % 60);
    else t2__sbuf_printf(b, "%lldh%02lldm%02llds", s / 3600, s / 60 % 60, s % 60);
}

static int is_bidi3(unsigned char b1, unsigned char b2)
{
    return (b1 == 0x80 && (b2 == 0x8E || b2 == 0x8F || (b2 >= 0xAA && b2 <= 0xAE))) ||
           (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9);
}

void t2__store_printable(char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) s[i] = ' ';
        /* C1 controls in UTF-8 (U+0080..U+009F: 0xC2 0x80..0x9F): U+009B is a CSI that some
         * terminals obey like ESC [. */
        else if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
                 (unsigned char)s[i + 1] <= 0x9F)
            s[i] = s[i + 1] = ' ';
        /* Bidirectional controls reorder what follows them on the line in a terminal that
         * follows Unicode's bidi rules: a U+202E in a name showed the rest of its row reversed
         * (probe_J). They become U+FFFD, which is as long in UTF-8: U+200E..U+200F, U+202A..U+202E,
         * U+2066..U+2069 (0xE2 0x80 0x8E..0x8F / 0xAA..0xAE, 0xE2 0x81 0xA6..0xA9); U+061C
         * (0xD8 0x9C) becomes two spaces. */
        else if (c == 0xE2 && i + 2 < n && is_bidi3((unsigned char)s[i + 1], (unsigned char)s[i + 2])) {
            s[i] = (char)0xEF, s[i + 1] = (char)0xBF, s[i + 2] = (char)0xBD;
            i += 2;
        } else if (c == 0xD8 && i + 1 < n && (unsigned char)s[i + 1] == 0x9C)
            s[i] = s[i + 1] = ' ';
    }
}

void t2__store_cell(t2__sbuf *b, sqlite3_stmt *s, int col, t2__col_kind kind)
{
    switch (sqlite3_column_type(s, col)) {
    case SQLITE_NULL: return;
    case SQLITE_INTEGER:
        if (kind == T2__COL_DURATION) put_duration(b, (double)sqlite3_column_int64(s, col));
        else if (kind == T2__COL_PERCENT)
            t2__sbuf_printf(b, "%.1f%%", 100.0 * (double)sqlite3_column_int64(s, col));
        else t2__sbuf_printf(b, "%lld", (long long)sqlite3_column_int64(s, col));
        return;
    case SQLITE_FLOAT: {
        double v = sqlite3_column_double(s, col);
        if (kind == T2__COL_DURATION) put_duration(b, v);
        else if (kind == T2__COL_PERCENT) t2__sbuf_printf(b, "%.1f%%", 100.0 * v);
        else t2__sbuf_printf(b, "%.6g", v);
        return;
    }
    case SQLITE_BLOB: t2__sbuf_printf(b, "<%d bytes>", sqlite3_column_bytes(s, col)); return;
    default: {
        /* One cell is one line: control characters (a multi-line error) become spaces. */
        const char *t = (const char *)sqlite3_column_text(s, col);
        if (!t) return;
        size_t start = b->n;
        t2__sbuf_puts(b, t);
        if (!b->oom) t2__store_printable(b->p + start, b->n - start);
        return;
    }
    }
}

int t2__store_check_output(t2__store *st, FILE *out)
{
    if (fflush(out) != 0 || ferror(out))
        return t2_seterr(T2_EIO, "store %s: writing the listing failed: %s", st->path,
                         strerror(errno));
    return 0;
}

static void pad(t2__sbuf *b, size_t n)
{
    static const char spaces[] = "                                ";
    for (; n > 32; n -= 32) t2__sbuf_put(b, spaces, 32);
    t2__sbuf_put(b, spaces, n);
}

/* ---- table ----------------------------------------------------------------------------- */

/* Every cell is kept (one buffer, offsets into it) because the widths depend on all rows. */
int t2__store_print_table_stmt(t2__store *st, sqlite3_stmt *s, const t2__store_colspec *cols,
                               FILE *out)
{
    int ncol = sqlite3_column_count(s);
    if (ncol <= 0) return 0;
    t2__sbuf cells = {0};
    size_t *off = NULL, noff = 0, cap = 0;
    size_t *w = calloc((size_t)ncol, sizeof *w);
    int *numeric = calloc((size_t)ncol, sizeof *numeric);
    t2__col_kind *kind = calloc((size_t)ncol, sizeof *kind);
    int rc = 0, src;
    if (!w || !numeric || !kind) {
        rc = t2_seterr(T2_ENOMEM, "store: out of memory printing a table");
        goto fail;
    }
    for (int c = 0; c < ncol; c++) {
        const char *name = sqlite3_column_name(s, c);
        w[c] = t2__text_width(name ? name : "");
        kind[c] = t2__store_col_kind(cols, name);
        numeric[c] = -1; /* unknown until a non-NULL cell is seen */
    }
    while ((src = sqlite3_step(s)) == SQLITE_ROW) {
        if (noff + (size_t)ncol > cap) {
            size_t nc = cap ? cap * 2 : (size_t)ncol * 64;
            size_t *no = realloc(off, nc * sizeof *no);
            if (!no) {
                rc = t2_seterr(T2_ENOMEM, "store: out of memory printing a table");
                goto fail;
            }
            off = no;
            cap = nc;
        }
        for (int c = 0; c < ncol; c++) {
            int type = sqlite3_column_type(s, c);
            if (type != SQLITE_NULL) {
                int num = type == SQLITE_INTEGER || type == SQLITE_FLOAT;
                numeric[c] = numeric[c] < 0 ? num : numeric[c] && num;
            }
            off[noff++] = cells.n;
            t2__store_cell(&cells, s, c, kind[c]);
            t2__sbuf_put(&cells, "", 1); /* keep the NUL as a separator */
            if (cells.oom) break;
            size_t cw = t2__text_width(cells.p + off[noff - 1]);
            if (cw > w[c]) w[c] = cw;
        }
        if (cells.oom) {
            rc = t2_seterr(T2_ENOMEM, "store: out of memory printing a table");
            goto fail;
        }
    }
    if (src != SQLITE_DONE) {
        rc = t2__store_err(st, src, "query");
        goto fail;
    }
    /* Header, rule, rows; numbers right-aligned. Each line is built first so trailing blanks
     * (empty last cells) can be cut. */
    t2__sbuf line = {0};
    for (size_t r = 0; r < noff + 2 * (size_t)ncol; r += (size_t)ncol) {
        line.n = 0;
        for (int c = 0; c < ncol; c++) {
            const char *v;
            if (r == 0) v = sqlite3_column_name(s, c) ? sqlite3_column_name(s, c) : "";
            else if (r == (size_t)ncol) v = NULL; /* the rule */
            else v = cells.p + off[r - 2 * (size_t)ncol + (size_t)c];
            if (c) t2__sbuf_puts(&line, "  ");
            if (!v) {
                for (size_t i = 0; i < w[c]; i++) t2__sbuf_puts(&line, "-");
                continue;
            }
            size_t vw = t2__text_width(v);
            if (numeric[c] == 1) pad(&line, w[c] - vw);
            t2__sbuf_puts(&line, v);
            if (numeric[c] != 1) pad(&line, w[c] - vw);
        }
        while (line.n && line.p[line.n - 1] == ' ') line.n--;
        if (line.oom) {
            t2__sbuf_free(&line);
            rc = t2_seterr(T2_ENOMEM, "store: out of memory printing a table");
            goto fail;
        }
        if (line.n) fwrite(line.p, 1, line.n, out);
        fputc('\n', out);
    }
    t2__sbuf_free(&line);
    rc = t2__store_check_output(st, out);
fail:
    t2__sbuf_free(&cells);
    free(off);
    free(w);
    free(numeric);
    free(kind);
    return rc;
}

/* ---- CSV ------------------------------------------------------------------------------- */

void t2__store_csv_field(FILE *out, const char *v)
{
    if (!v) return;
    if (!strpbrk(v, ",\"\r\n")) {
        fputs(v, out);
        return;
    }
    fputc('"', out);
    for (; *v; v++) {
        if (*v == '"') fputc('"', out);
        fputc(*v, out);
    }
    fputc('"', out);
}

int t2__store_print_csv_stmt(t2__store *st, sqlite3_stmt *s, FILE *out)
{
    int ncol = sqlite3_column_count(s), src;
    for (int c = 0; c < ncol; c++) {
        if (c) fputc(',', out);
        t2__store_csv_field(out, sqlite3_column_name(s, c));
    }
    fputc('\n', out);
    while ((src = sqlite3_step(s)) == SQLITE_ROW) {
        for (int c = 0; c < ncol; c++) {
            if (c) fputc(',', out);
            /* Reals as in --json: the shortest text that reads back to the stored double. */
            double d = sqlite3_column_double(s, c);
            char text[40];
            if (sqlite3_column_type(s, c) == SQLITE_FLOAT && isfinite(d)) {
                t2__json_real_text(d, text, sizeof text);
                t2__store_csv_field(out, text);
            } else {
                t2__store_csv_field(out, (const char *)sqlite3_column_text(s, c));
            }
        }
        fputc('\n', out);
    }
    if (src != SQLITE_DONE) return t2__store_err(st, src, "query");
    return t2__store_check_output(st, out);
}

/* ---- JSON ------------------------------------------------------------------------------ */

int t2__store_print_json_stmt(t2__store *st, sqlite3_stmt *s, FILE *out)
{
    int src = sqlite3_step(s);
    if (src != SQLITE_ROW) return t2__store_err(st, src, "query");
    const char *t = (const char *)sqlite3_column_text(s, 0);
    fputs(t ? t : "null", out);
    fputc('\n', out);
    return t2__store_check_output(st, out);
}

/* ---- the generic entry point ----------------------------------------------------------- */

int t2__store_print_query(t2__store *st, const char *sql, const t2__store_param *params,
                          size_t nparams, const t2__store_colspec *cols, t2__store_format fmt,
                          FILE *out)
{
    if (!st || !sql || !out || (nparams && !params))
        return t2_seterr(T2_EINVAL, "store: print_query: NULL argument");
    if (fmt != T2__FMT_TABLE && fmt != T2__FMT_JSON && fmt != T2__FMT_CSV)
        return t2_seterr(T2_EINVAL, "store: print_query: unknown format %d", (int)fmt);
    char *json_sql = NULL;
    sqlite3_stmt *s = NULL;
    int rc;
    if (fmt == T2__FMT_JSON && (rc = t2__store_json_sql(st, sql, cols, 1, &json_sql))) return rc;
    if ((rc = t2__store_prepare(st, json_sql ? json_sql : sql, &s))) goto done;
    if ((rc = t2__store_bind_params(st, s, params, nparams))) goto done;
    rc = fmt == T2__FMT_JSON  ? t2__store_print_json_stmt(st, s, out)
       : fmt == T2__FMT_CSV ? t2__store_print_csv_stmt(st, s, out)
                            : t2__store_print_table_stmt(st, s, cols, out);
done:
    sqlite3_finalize(s);
    free(json_sql);
    return rc;
}
