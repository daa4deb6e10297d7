/* csv.c — CSV files as in-memory datasets, parsed by Debian's libcsv (quotes, "" escapes, CRLF).
 *
 * The file is fed to libcsv one line at a time, so the callbacks know the line they are on and
 * every error can say file:LINE:COLUMN. The first row (header or data) fixes the column count and
 * the role of each column (feature slot, target slot, label, ignored); later cells are converted
 * as they arrive and only the selected values are kept, as float32. */
#define _DEFAULT_SOURCE /* POSIX: getline, O_CLOEXEC */
#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "data_internal.h"
#include "internal.h"

#define MAX_COLUMNS 65536
#define MAX_VALUES ((size_t)1 << 28) /* selected values in memory: 1 GiB of floats */
#define MAX_CELL 256                 /* longer cells cannot be numbers we accept */
#define MAX_FIELD ((size_t)1 << 20)  /* libcsv's buffer for one field, text columns included */

/* libcsv grows one buffer per field without limit; a file that is one huge field (or a quote
 * never closed) would take all memory. This realloc refuses beyond MAX_FIELD and says so. */
static _Thread_local int field_too_long;
static void *capped_realloc(void *p, size_t n)
{
    if (n > MAX_FIELD) {
        field_too_long = 1;
        return NULL;
    }
    return realloc(p, n);
}

enum { ROLE_SKIP = -1, ROLE_LABEL = -2 };

typedef struct {
    const char *path;
    const t2_csv_params *p;
    int rc;
    long line;              /* 1-based line being fed to the parser */
    long row_line;          /* line of the current row's first field */
    int col;                /* fields seen in the current row */
    int nrow;               /* rows completed, header included */
    /* first row, kept as strings until the column roles are known */
    char **first;
    int nfirst, capfirst;
    long first_line;
    int ncols;              /* 0 until the first row ends */
    char **names;           /* header names (has_header), ncols of them */
    int *role;              /* per column: feature slot, nf + target slot, ROLE_LABEL or ROLE_SKIP */
    int nf, nt;
    /* values */
    float *row;             /* nf + nt staged values of the current row */
    int32_t row_label;
    float *feat, *targ;
    int32_t *labels;
    size_t n, cap;
} csv_state;

/* "path:LINE:COL (column 'name')" into buf. */
static const char *where(const csv_state *s, long line, int col, char *buf, size_t len)
{
    if (s->names && col < s->ncols)
        snprintf(buf, len, "%s:%ld:%d (column '%s')", s->path, line, col + 1, s->names[col]);
    else
        snprintf(buf, len, "%s:%ld:%d", s->path, line, col + 1);
    return buf;
}

/* The cell as a NUL-terminated string without surrounding white space; NULL if too long. */
static const char *cell_text(const char *f, size_t len, char *buf)
{
    while (len > 0 && isspace((unsigned char)*f)) f++, len--;
    while (len > 0 && isspace((unsigned char)f[len - 1])) len--;
    if (len >= MAX_CELL) return NULL;
    if (len) memcpy(buf, f, len);
    buf[len] = '\0';
    return buf;
}

/* Printable excerpt of a cell for messages (at most 40 characters, then "..."). */
static const char *excerpt(const char *f, size_t len, char *buf, size_t blen)
{
    size_t k = 0, max = blen - 4 < 40 ? blen - 4 : 40;
    for (size_t i = 0; f && i < len && k < max; i++) buf[k++] = isprint((unsigned char)f[i]) ? f[i] : '?';
    if (f && len > max) memcpy(buf + k, "...", 3), k += 3;
    buf[k] = '\0';
    return buf;
}

static void convert(csv_state *s, int col, const char *f, size_t len, long line)
{
    int role = s->role[col];
    if (role == ROLE_SKIP) return;
    char txt[MAX_CELL], loc[512], ex[64];
    const char *c = f ? cell_text(f, len, txt) : "";
    if (c && !*c) {
        s->rc = t2_seterr(T2_EFORMAT, "%s: empty cell", where(s, line, col, loc, sizeof loc));
        return;
    }
    if (role == ROLE_LABEL) {
        char *end = NULL;
        errno = 0;
        long long v = c && isdigit((unsigned char)c[0]) ? strtoll(c, &end, 10) : -1;
        if (!c || v < 0 || errno || *end || v >= INT32_MAX) {
            s->rc = t2_seterr(T2_EFORMAT, "%s: label '%s' is not a non-negative integer",
                              where(s, line, col, loc, sizeof loc), excerpt(f, len, ex, sizeof ex));
            return;
        }
        s->row_label = (int32_t)v;
        return;
    }
    char *end = NULL;
    /* Decimal only, as data.h says: strtof also reads hexadecimal ("0x10" as 16, "0x1p4"), which
     * a data file means as text (an id, a hash), not as a number. */
    const char *digits = c ? c + (*c == '+' || *c == '-') : NULL;
    int hex = digits && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
    float v = c && !hex ? strtof(c, &end) : 0.0f;
    if (!c || hex || end == c || *end) {
        s->rc = t2_seterr(T2_EFORMAT, "%s: '%s' is not a number", where(s, line, col, loc, sizeof loc),
                          excerpt(f, len, ex, sizeof ex));
        return;
    }
    if (!isfinite(v)) {
        s->rc = t2_seterr(T2_EFORMAT, "%s: '%s' is not a finite float32 number", where(s, line, col, loc, sizeof loc),
                          excerpt(f, len, ex, sizeof ex));
        return;
    }
    s->row[role] = v;
}

/* Column list "a, b, c" (or "0..N-1") for a missing-column message. */
static void list_columns(const csv_state *s, char *buf, size_t len)
{
    if (!s->names) {
        snprintf(buf, len, "indices 0..%d", s->ncols - 1);
        return;
    }
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->ncols && k + 8 < len; i++) {
        int w = snprintf(buf + k, len - k, "%s'%s'", i ? ", " : "", s->names[i]);
        if (w < 0 || (size_t)w >= len - k) {
            memcpy(buf + len - 5, " ...", 5); /* truncated list */
            return;
        }
        k += (size_t)w;
    }
}

/* The column a selector names: a header name, or a 0-based decimal index. */
static int find_column(csv_state *s, const char *sel, const char *what, int *col)
{
    char cols[1024];
    if (!sel) return t2_seterr(T2_EINVAL, "%s: %s column name is NULL", s->path, what);
    int found = -1;
    for (int i = 0; s->names && i < s->ncols; i++)
        if (strcmp(s->names[i], sel) == 0) {
            if (found >= 0)
                return t2_seterr(T2_EFORMAT, "%s: %s column '%s' is ambiguous: columns %d and %d of the header share the name",
                                 s->path, what, sel, found + 1, i + 1);
            found = i;
        }
    if (found < 0 && sel[0] && strspn(sel, "0123456789") == strlen(sel)) {
        errno = 0;
        long v = strtol(sel, NULL, 10);
        if (errno || v >= s->ncols) {
            list_columns(s, cols, sizeof cols);
            return t2_seterr(T2_ENOTFOUND, "%s: %s column index %s is out of range: the file has %d columns (%s)", s->path,
                             what, sel, s->ncols, cols);
        }
        found = (int)v;
    }
    if (found < 0) {
        list_columns(s, cols, sizeof cols);
        return t2_seterr(T2_ENOTFOUND, "%s: no %s column '%s'%s; the columns are: %s", s->path, what, sel,
                         s->names ? "" : " (no header: name columns by 0-based index)", cols);
    }
    *col = found;
    return T2_OK;
}

static int assign(csv_state *s, const char *sel, const char *what, int role)
{
    int col;
    int rc = find_column(s, sel, what, &col);
    if (rc) return rc;
    if (s->role[col] != ROLE_SKIP)
        return t2_seterr(T2_EINVAL, "%s: column %d%s%s%s is selected twice", s->path, col + 1, s->names ? " ('" : "",
                         s->names ? s->names[col] : "", s->names ? "')" : "");
    s->role[col] = role;
    return T2_OK;
}

/* After the first row: the column roles, then the first row itself if it is data. */
static int setup_columns(csv_state *s)
{
    const t2_csv_params *p = s->p;
    s->ncols = s->nfirst;
    if (s->ncols > MAX_COLUMNS)
        return t2_seterr(T2_EFORMAT, "%s:%ld: %d columns (at most %d)", s->path, s->first_line, s->ncols, MAX_COLUMNS);
    if (p->has_header) {
        s->names = s->first;
        s->first = NULL;
    }
    if (!(s->role = malloc((size_t)s->ncols * sizeof *s->role)))
        return t2_seterr(T2_ENOMEM, "%s: out of memory", s->path);
    for (int i = 0; i < s->ncols; i++) s->role[i] = ROLE_SKIP;
    int rc;
    if (p->label_column && (rc = assign(s, p->label_column, "label", ROLE_LABEL)) != 0) return rc;
    /* Targets take slots nf.. once nf is known; park them at a marker first. */
    for (int k = 0; k < p->ntargets; k++)
        if ((rc = assign(s, p->target_columns[k], "target", -1000 - k)) != 0) return rc;
    if (p->feature_columns) {
        for (int k = 0; k < p->nfeatures; k++)
            if ((rc = assign(s, p->feature_columns[k], "feature", k)) != 0) return rc;
        s->nf = p->nfeatures;
    } else {
        for (int i = 0; i < s->ncols; i++)
            if (s->role[i] == ROLE_SKIP) s->role[i] = s->nf++;
    }
    if (s->nf == 0) return t2_seterr(T2_EINVAL, "%s: no feature columns (every column is a target or the label)", s->path);
    s->nt = p->ntargets;
    for (int i = 0; i < s->ncols; i++)
        if (s->role[i] <= -1000) s->role[i] = s->nf + (-1000 - s->role[i]);
    if (!(s->row = malloc((size_t)(s->nf + s->nt) * sizeof *s->row)))
        return t2_seterr(T2_ENOMEM, "%s: out of memory", s->path);
    return T2_OK;
}

static int grow(csv_state *s)
{
    size_t per = (size_t)s->nf + (size_t)s->nt;
    if ((s->n + 1) * per > MAX_VALUES || s->n + 1 > (size_t)T2__MAX_SAMPLES)
        return t2_seterr(T2_EFORMAT, "%s:%ld: too large: more than %zu selected values (%d per row)", s->path,
                         s->row_line, MAX_VALUES, (int)per);
    size_t cap = s->cap ? s->cap * 2 : 1024;
    if (cap * per > MAX_VALUES) cap = MAX_VALUES / per;
    float *f = realloc(s->feat, cap * (size_t)s->nf * sizeof *f);
    if (f) s->feat = f;
    float *t = s->nt ? realloc(s->targ, cap * (size_t)s->nt * sizeof *t) : NULL;
    if (t) s->targ = t;
    int32_t *l = s->p->label_column ? realloc(s->labels, cap * sizeof *l) : NULL;
    if (l) s->labels = l;
    if (!f || (s->nt && !t) || (s->p->label_column && !l))
        return t2_seterr(T2_ENOMEM, "%s: out of memory for %zu rows", s->path, cap);
    s->cap = cap;
    return T2_OK;
}

static void on_field(void *f, size_t len, void *data)
{
    csv_state *s = data;
    if (s->rc) return;
    /* A quoted field may span lines: it started as many lines back as it holds newlines. */
    long line = s->line;
    for (size_t i = 0; f && i < len; i++) line -= ((const char *)f)[i] == '\n';
    int col = s->col++;
    if (col == 0) s->row_line = line;
    if (s->ncols == 0) {
        if (s->nfirst == MAX_COLUMNS + 1) return; /* refused at the row's end */
        if (s->nfirst == s->capfirst) {
            int cap = s->capfirst ? s->capfirst * 2 : 16;
            char **nf = realloc(s->first, (size_t)cap * sizeof *nf);
            if (!nf) {
                s->rc = t2_seterr(T2_ENOMEM, "%s: out of memory", s->path);
                return;
            }
            s->first = nf;
            s->capfirst = cap;
        }
        char *copy = malloc(len + 1);
        if (!copy) {
            s->rc = t2_seterr(T2_ENOMEM, "%s: out of memory", s->path);
            return;
        }
        if (len) memcpy(copy, f, len);
        copy[len] = '\0';
        s->first[s->nfirst++] = copy;
        s->first_line = s->row_line;
        return;
    }
    if (col < s->ncols) convert(s, col, f, len, line);
}

static void commit_row(csv_state *s)
{
    if (s->n == s->cap && (s->rc = grow(s)) != 0) return;
    memcpy(s->feat + s->n * (size_t)s->nf, s->row, (size_t)s->nf * sizeof(float));
    if (s->nt) memcpy(s->targ + s->n * (size_t)s->nt, s->row + s->nf, (size_t)s->nt * sizeof(float));
    if (s->labels) s->labels[s->n] = s->row_label;
    s->n++;
}

static void on_row(int term, void *data)
{
    (void)term;
    csv_state *s = data;
    if (s->rc) return;
    int fields = s->col;
    s->col = 0;
    s->nrow++;
    if (s->ncols == 0) {
        if ((s->rc = setup_columns(s)) != 0) return;
        if (!s->first) return; /* it was the header */
        for (int i = 0; i < s->ncols && !s->rc; i++) convert(s, i, s->first[i], strlen(s->first[i]), s->first_line);
        if (!s->rc) commit_row(s);
        return;
    }
    if (fields != s->ncols) {
        s->rc = t2_seterr(T2_EFORMAT, "%s:%ld: row has %d fields, the %s has %d", s->path, s->row_line, fields,
                          s->names ? "header" : "first row", s->ncols);
        return;
    }
    commit_row(s);
}

static void free_strs(char **v, int n)
{
    for (int i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

typedef struct {
    float *feat, *targ;
    int32_t *labels;
} csv_impl;

static void csv_destroy(t2_dataset *ds)
{
    csv_impl *c = ds->impl;
    if (!c) return;
    free(c->feat);
    free(c->targ);
    free(c->labels);
    free(c);
}

static const struct t2__dataset_ops csv_ops = {"csv", NULL, csv_destroy};

t2_csv_params t2_csv_params_default(void)
{
    t2_csv_params p;
    memset(&p, 0, sizeof p);
    p.delimiter = ',';
    p.has_header = 1;
    return p;
}

/* Feeds the file to libcsv line by line. */
static int parse_file(csv_state *s, FILE *fp)
{
    struct csv_parser parser;
    if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_EMPTY_IS_NULL) != 0)
        return t2_seterr(T2_ENOMEM, "%s: cannot initialise libcsv", s->path);
    csv_set_delim(&parser, (unsigned char)s->p->delimiter);
    csv_set_realloc_func(&parser, capped_realloc);
    csv_set_blk_size(&parser, (size_t)1 << 16); /* libcsv grows a field buffer linearly: 128 B steps are quadratic */
    field_too_long = 0;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = T2_OK;
    while ((len = getline(&buf, &cap, fp)) > 0) {
        s->line++;
        size_t skip = 0;
        /* A UTF-8 byte order mark (spreadsheet exports write one) is not part of the first name. */
        if (s->line == 1 && len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) skip = 3;
        size_t done = skip + csv_parse(&parser, buf + skip, (size_t)len - skip, on_field, on_row, s);
        if (s->rc) break;
        if (done != (size_t)len && field_too_long) {
            rc = t2_seterr(T2_EFORMAT, "%s:%ld: a field longer than %zu bytes (an unclosed quote?)", s->path, s->line,
                           MAX_FIELD);
            break;
        }
        if (done != (size_t)len) {
            rc = t2_seterr(T2_EFORMAT, "%s:%ld: malformed CSV near byte %zu of the line (%s): a quote inside an unquoted field, or text after a closing quote",
                           s->path, s->line, done + 1, csv_strerror(csv_error(&parser)));
            break;
        }
    }
    if (!rc && !s->rc && ferror(fp)) rc = t2_seterr(T2_EIO, "%s: read error after line %ld", s->path, s->line);
    if (!rc && !s->rc && csv_fini(&parser, on_field, on_row, s) != 0 && !s->rc)
        rc = t2_seterr(T2_EFORMAT, "%s:%ld: a quoted field is not closed before the end of the file", s->path,
                       s->row_line ? s->row_line : s->line);
    csv_free(&parser);
    free(buf);
    return rc ? rc : s->rc;
}

static int check_params(const char *path, const t2_csv_params *p)
{
    if (p->delimiter == '"' || p->delimiter == '\n' || p->delimiter == '\r' || p->delimiter == '\0')
        return t2_seterr(T2_EINVAL, "%s: delimiter %d cannot separate fields", path, p->delimiter);
    if (p->has_header != 0 && p->has_header != 1)
        return t2_seterr(T2_EINVAL, "%s: has_header %d (must be 0 or 1)", path, p->has_header);
    if (p->nfeatures < 0 || p->ntargets < 0 || p->nfeatures > MAX_COLUMNS || p->ntargets > MAX_COLUMNS ||
        (p->nfeatures > 0 && !p->feature_columns) || (p->ntargets > 0 && !p->target_columns) ||
        (p->feature_columns && p->nfeatures == 0))
        return t2_seterr(T2_EINVAL, "%s: %d feature / %d target columns do not match their lists", path, p->nfeatures,
                         p->ntargets);
    return T2_OK;
}

int t2_dataset_csv_open(t2_dataset **out, const char *path, const t2_csv_params *params)
{
    if (!out || !path) return t2_seterr(T2_EINVAL, "t2_dataset_csv_open: NULL argument");
    *out = NULL;
    t2_csv_params def = t2_csv_params_default();
    const t2_csv_params *p = params ? params : &def;
    int rc = check_params(path, p);
    if (rc) return rc;
    /* O_NONBLOCK: a FIFO named as the file must not hang the open; anything irregular is refused. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return t2_seterr(errno == ENOENT ? T2_ENOTFOUND : T2_EIO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return t2_seterr(T2_EIO, "%s: not a regular file", path);
    }
    FILE *fp = fdopen(fd, "r");
    if (!fp) {
        close(fd);
        return t2_seterr(T2_ENOMEM, "%s: %s", path, strerror(errno));
    }
    csv_state s = {.path = path, .p = p};
    rc = parse_file(&s, fp);
    fclose(fp);
    if (!rc && s.n == 0) rc = t2_seterr(T2_EFORMAT, "%s: no data rows", path);
    t2_dataset *ds = NULL;
    csv_impl *impl = NULL;
    if (!rc) {
        int shape[1] = {s.nf};
        rc = t2__dataset_new(&ds, &csv_ops, (int64_t)s.n, 1, shape);
    }
    if (!rc && !(impl = calloc(1, sizeof *impl))) rc = t2_seterr(T2_ENOMEM, "%s: out of memory", path);
    if (!rc) {
        *impl = (csv_impl){s.feat, s.targ, s.labels};
        s.feat = s.targ = NULL;
        s.labels = NULL;
        ds->impl = impl;
        ds->pix_type = T2__PIX_F32;
        ds->pixels = impl->feat;
        ds->targets = impl->targ;
        ds->target_width = s.nt;
        ds->labels32 = impl->labels;
        int32_t maxlab = -1;
        for (size_t i = 0; impl->labels && i < s.n; i++)
            if (impl->labels[i] > maxlab) maxlab = impl->labels[i];
        ds->num_classes = impl->labels ? maxlab + 1 : 0;
        *out = ds;
    } else {
        free(ds);
    }
    free_strs(s.first, s.nfirst);
    free_strs(s.names, s.ncols);
    free(s.role);
    free(s.row);
    free(s.feat);
    free(s.targ);
    free(s.labels);
    return rc;
}
