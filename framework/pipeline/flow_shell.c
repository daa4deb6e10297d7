/* flow_shell.c — ${stage.field} references in a `shell: true` command line (flow.h).
 *
 * Pasting a value into the /bin/sh -c text would let the shell interpret it: an hparam string
 * "$(touch x)" runs a command, and JSON loses its quotes. Instead each value reaches the shell
 * through the environment (T2EXP_REF_1, T2EXP_REF_2, ...), and the text gets an expansion of
 * that variable, quoted for the place the reference stands in, so that the shell substitutes
 * exactly the value and never parses it:
 *
 *   unquoted                            "${T2EXP_REF_n}"      one word, no splitting or globbing
 *   inside "..."                        ${T2EXP_REF_n}        (a "..." already stops both)
 *   inside '...'                        '"${T2EXP_REF_n}"'    closes the '...', reopens it after
 *   in a here-document body (<<EOF)     ${T2EXP_REF_n}        bodies expand $, never split
 *
 * (The same "${...}" in every place would be wrong inside "...": its quotes would close and
 * reopen the string and leave the expansion unquoted, split into words and globbed.)
 *
 * Finding the place takes a small lexer of POSIX sh quoting. Where no expansion can be exact, or
 * where the lexer cannot be sure of the quoting, the reference is refused with a message, never
 * guessed: inside `...`, $((...)), a shell ${...} (written $${...} in a flow), a here-document with
 * a quoted delimiter, right after a backslash, and after a construct this lexer does not follow
 * ($'...', a here-string <<<, a `case` inside $(...), quotes inside a shell ${...}). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flow_internal.h"
#include "t2exp/error.h"

#define SH_MAX_DEPTH 64   /* nested "...", $(...), ${...}: more is refused, not guessed */
#define SH_MAX_HEREDOCS 16 /* pending here-documents on one line */
#define SH_MAX_DELIM 256

typedef enum { FR_TOP, FR_CMD, FR_DQ, FR_PARAM, FR_ARITH } frame_kind;

typedef struct frame {
    frame_kind kind;
    size_t depth; /* unmatched ( in FR_CMD/FR_ARITH, { in FR_PARAM */
} frame;

typedef struct heredoc {
    char delim[SH_MAX_DELIM];
    int quoted; /* <<'EOF', <<"EOF", <<\EOF: the body is not expanded */
    int strip;  /* <<-: leading tabs of body lines are removed */
} heredoc;

typedef struct lex {
    const char *s;
    size_t len;
    t2__ref *refs; /* in order of appearance */
    t2__sh_place *place;
    size_t nrefs, next; /* next: the first reference not placed yet */
    const char *poison; /* set: every later reference is refused, this says why */
    frame st[SH_MAX_DEPTH];
    size_t depth;
    heredoc hd[SH_MAX_HEREDOCS];
    size_t nhd;
} lex;

static int at_ref(const lex *L, size_t i) { return L->next < L->nrefs && L->refs[L->next].start == i; }

/* Places the reference at L->next, or refuses it (why, or the poison, says why). */
static int place(lex *L, t2__sh_place p, const char *why)
{
    const t2__ref *r = &L->refs[L->next];
    if (!why) why = L->poison;
    if (why)
        return t2_seterr(T2_EINVAL, "${%s.%s}: %s, where its value cannot be handed to the shell exactly; put the "
                         "reference elsewhere in the command (unquoted, or inside \"...\" or '...'), or use the argv "
                         "form of run: (a list, no shell)", r->stage, t2__ref_field_name(r->field), why);
    L->place[L->next++] = p;
    return 0;
}

/* Every reference that starts before end gets place p (or is refused with why). */
static int place_until(lex *L, size_t end, t2__sh_place p, const char *why)
{
    while (L->next < L->nrefs && L->refs[L->next].start < end) {
        int rc = place(L, p, why);
        if (rc) return rc;
    }
    return 0;
}

static void push(lex *L, frame_kind k)
{
    if (L->depth == SH_MAX_DEPTH) {
        L->poison = "it comes after quoting nested deeper than 64 levels";
        return;
    }
    L->st[L->depth++] = (frame){.kind = k};
}

static void pop(lex *L)
{
    if (L->depth > 1) L->depth--;
}

static int metachar(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == ';' || ch == '&' || ch == '|' || ch == '<' || ch == '>' ||
           ch == '(' || ch == ')';
}

/* `...` from i (the opening backtick): a reference inside is refused. Returns the index past it. */
static int backquote(lex *L, size_t i, size_t *out)
{
    size_t j = i + 1;
    while (j < L->len && L->s[j] != '`') j += L->s[j] == '\\' && j + 1 < L->len ? 2 : 1;
    int rc = place_until(L, j, T2__SH_UNQUOTED, "it is inside `...` (write $(...) instead)");
    *out = j < L->len ? j + 1 : L->len;
    return rc;
}

/* The here-document operator at i ("<<" or "<<-"): records its delimiter word, to read the body
 * from the next newline. Returns the index past the word. */
static int heredoc_op(lex *L, size_t i, size_t *out)
{
    const char *s = L->s;
    size_t j = i + 2;
    if (j < L->len && s[j] == '<') { /* bash's here-string; not POSIX, and not followed here */
        L->poison = "it comes after a <<< here-string";
        *out = j + 1;
        return 0;
    }
    heredoc h = {.strip = j < L->len && s[j] == '-'};
    j += (size_t)h.strip;
    while (j < L->len && (s[j] == ' ' || s[j] == '\t')) j++;
    size_t n = 0, start = j;
    while (j < L->len && !metachar(s[j])) {
        char q = s[j];
        if (q == '\'' || q == '"') {
            h.quoted = 1;
            size_t k = j + 1;
            while (k < L->len && s[k] != q) {
                if (n < SH_MAX_DELIM - 1) h.delim[n++] = s[k];
                k++;
            }
            j = k < L->len ? k + 1 : k;
        } else if (q == '\\') {
            h.quoted = 1;
            if (j + 1 < L->len && n < SH_MAX_DELIM - 1) h.delim[n++] = s[j + 1];
            j += 2;
        } else {
            if (n < SH_MAX_DELIM - 1) h.delim[n++] = q;
            j++;
        }
    }
    if (j > L->len) j = L->len;
    int rc = place_until(L, j, T2__SH_UNQUOTED, "it is in a here-document's delimiter");
    if (rc) return rc;
    if (j == start || n >= SH_MAX_DELIM - 1 || L->nhd == SH_MAX_HEREDOCS)
        L->poison = "it comes after a here-document this check does not follow";
    else L->hd[L->nhd++] = h;
    *out = j;
    return 0;
}

/* The bodies of the pending here-documents, from i (just past the newline that ends their
 * line). Returns the index past the last delimiter line. */
static int heredoc_bodies(lex *L, size_t i, size_t *out)
{
    const char *s = L->s;
    for (size_t k = 0; k < L->nhd; k++) {
        const heredoc *h = &L->hd[k];
        /* Inside a body the shell also runs $(...) and `...` and expands ${...}: a reference after
         * one could be in any of their quoting, so it is refused. */
        const char *risky = NULL;
        while (i < L->len) {
            size_t le = i;
            while (le < L->len && s[le] != '\n') le++;
            size_t ls = i;
            if (h->strip)
                while (ls < le && s[ls] == '\t') ls++;
            size_t dl = strlen(h->delim);
            if (le - ls == dl && !memcmp(s + ls, h->delim, dl)) {
                i = le < L->len ? le + 1 : le;
                break;
            }
            for (size_t p = i; p < le;) {
                if (at_ref(L, p)) {
                    const char *why = h->quoted ? "it is in a here-document whose delimiter is quoted "
                                                  "(<<'EOF'), which the shell does not expand"
                                      : risky     ? risky
                                      : p > i && s[p - 1] == '\\' ? "it follows a backslash"
                                                                  : NULL;
                    int rc = place(L, T2__SH_HEREDOC, why);
                    if (rc) return rc;
                    p = L->refs[L->next - 1].end;
                    continue;
                }
                if (s[p] == '`' || (s[p] == '$' && p + 1 < le && (s[p + 1] == '(' || s[p + 1] == '$')))
                    risky = "it is in a here-document after `...`, $(...) or a shell ${...}";
                p++;
            }
            i = le < L->len ? le + 1 : le;
        }
    }
    L->nhd = 0;
    *out = i;
    return 0;
}

/* "$..." at i in an unquoted or double-quoted place: pushes what it opens. Returns the index to
 * go on from. */
static size_t dollar(lex *L, size_t i, int quoted)
{
    const char *s = L->s;
    char a = i + 1 < L->len ? s[i + 1] : '\0', b = i + 2 < L->len ? s[i + 2] : '\0';
    if (a == '$' && b == '{') { /* $${ is the flow's escape of a literal ${: a shell ${...} */
        push(L, FR_PARAM);
        return i + 3;
    }
    if (a == '(' && b == '(') {
        push(L, FR_ARITH);
        return i + 3;
    }
    if (a == '(') {
        push(L, FR_CMD);
        return i + 2;
    }
    if (a == '\'' && !quoted) L->poison = "it comes after $'...' (which shells quote differently)";
    return i + 1; /* as t2__ref_next steps, so both see the same "$${" */
}

/* The word "case" at i, in command position (this lexer cannot tell its patterns' ")" from the
 * end of a $(...) around it). */
static int case_word(const lex *L, size_t i)
{
    return i + 4 <= L->len && !memcmp(L->s + i, "case", 4) && (i + 4 == L->len || metachar(L->s[i + 4]));
}

static int in_cmdsub(const lex *L)
{
    for (size_t k = 0; k < L->depth; k++)
        if (L->st[k].kind == FR_CMD) return 1;
    return 0;
}

static int run_lexer(lex *L)
{
    const char *s = L->s;
    size_t i = 0;
    int word_start = 1;
    L->st[0] = (frame){.kind = FR_TOP};
    L->depth = 1;
    int rc = 0;
    while (!rc && i < L->len) {
        frame *fr = &L->st[L->depth - 1];
        char ch = s[i];
        if (at_ref(L, i)) {
            t2__sh_place p = fr->kind == FR_DQ ? T2__SH_DQUOTE : T2__SH_UNQUOTED;
            const char *why = fr->kind == FR_PARAM ? "it is inside a shell ${...}"
                            : fr->kind == FR_ARITH ? "it is inside $((...))"
                                                   : NULL;
            rc = place(L, p, why);
            i = L->refs[L->next ? L->next - 1 : 0].end;
            word_start = 0;
            continue;
        }
        if (ch == '\\') {
            if (at_ref(L, i + 1)) rc = place(L, T2__SH_UNQUOTED, "it follows a backslash");
            i += 2;
            word_start = 0;
            continue;
        }
        switch (fr->kind) {
        case FR_TOP:
        case FR_CMD:
            if (ch == '#' && word_start) { /* a comment, to the end of the line */
                size_t e = i;
                while (e < L->len && s[e] != '\n') e++;
                rc = place_until(L, e, T2__SH_UNQUOTED, NULL); /* harmless there */
                i = e;
                continue;
            }
            if (ch == 'c' && word_start && in_cmdsub(L) && case_word(L, i))
                L->poison = "it comes after a `case` inside $(...), whose parentheses this check does not follow";
            word_start = metachar(ch);
            if (ch == '\'') {
                size_t e = i + 1;
                while (e < L->len && s[e] != '\'') e++;
                rc = place_until(L, e, T2__SH_SQUOTE, NULL);
                i = e < L->len ? e + 1 : e;
            } else if (ch == '"') {
                push(L, FR_DQ);
                i++;
            } else if (ch == '`') {
                rc = backquote(L, i, &i);
            } else if (ch == '$') {
                size_t d = L->depth;
                i = dollar(L, i, 0);
                word_start = L->depth > d && L->st[L->depth - 1].kind == FR_CMD; /* $( starts a command */
            } else if (ch == '<' && i + 1 < L->len && s[i + 1] == '<') {
                rc = heredoc_op(L, i, &i);
            } else if (ch == '\n' && L->nhd) {
                rc = heredoc_bodies(L, i + 1, &i);
                word_start = 1;
            } else if (ch == '(') {
                fr->depth++;
                i++;
            } else if (ch == ')') {
                if (fr->kind == FR_CMD && fr->depth == 0) pop(L);
                else if (fr->depth) fr->depth--;
                i++;
            } else {
                i++;
            }
            break;
        case FR_DQ:
            if (ch == '"') {
                pop(L);
                i++;
            } else if (ch == '`') {
                rc = backquote(L, i, &i);
            } else if (ch == '$') {
                size_t d = L->depth;
                i = dollar(L, i, 1);
                word_start = L->depth > d && L->st[L->depth - 1].kind == FR_CMD;
            } else {
                i++;
            }
            break;
        case FR_PARAM:
            if (ch == '}') {
                if (fr->depth) fr->depth--;
                else pop(L);
            } else if (ch == '{') {
                fr->depth++;
            } else if (ch == '\'' || ch == '"' || ch == '`' || (ch == '$' && i + 1 < L->len && s[i + 1] == '(')) {
                L->poison = "it comes after quotes or $(...) inside a shell ${...}";
            } else if (ch == '$' && i + 2 < L->len && s[i + 1] == '$' && s[i + 2] == '{') {
                i = dollar(L, i, 1);
                break;
            }
            i++;
            break;
        case FR_ARITH:
            if (ch == '(') {
                fr->depth++;
            } else if (ch == ')') {
                if (fr->depth) fr->depth--;
                else if (i + 1 < L->len && s[i + 1] == ')') {
                    pop(L);
                    i++;
                } else {
                    L->poison = "it comes after a $((...)) this check does not follow";
                }
            } else if (ch == '\'' || ch == '"' || ch == '`' || ch == '$') {
                if (!(ch == '$' && i + 1 < L->len && s[i + 1] != '(' && s[i + 1] != '$'))
                    L->poison = "it comes after quotes or $(...) inside $((...))";
            }
            i++;
            break;
        }
    }
    /* References past an unterminated construct (the shell will refuse the line anyway). */
    if (!rc) rc = place_until(L, (size_t)-1, T2__SH_UNQUOTED, "it comes after an unterminated construct");
    return rc;
}

/* The references of s in order (*refs, *n; none: NULL, 0), each with its place (*places). */
static int shell_places(const char *s, t2__ref **refs, t2__sh_place **places, size_t *n)
{
    *refs = NULL;
    *places = NULL;
    *n = 0;
    size_t pos = 0, cap = 0;
    lex L = {.s = s, .len = strlen(s)};
    int rc = 0;
    for (;;) {
        t2__ref r;
        int got = t2__ref_next(s, &pos, &r);
        if (got < 0) {
            rc = got;
            break;
        }
        if (got == 0) break;
        if (L.nrefs == cap) {
            cap = cap ? 2 * cap : 8;
            t2__ref *g = realloc(L.refs, cap * sizeof *g);
            if (!g) {
                rc = t2_seterr(T2_ENOMEM, "flow: out of memory");
                break;
            }
            L.refs = g;
        }
        L.refs[L.nrefs++] = r;
    }
    if (!rc && L.nrefs) {
        if (!(L.place = calloc(L.nrefs, sizeof *L.place))) rc = t2_seterr(T2_ENOMEM, "flow: out of memory");
        else rc = run_lexer(&L);
    }
    if (rc) {
        free(L.refs);
        free(L.place);
        return rc;
    }
    *refs = L.refs;
    *places = L.place;
    *n = L.nrefs;
    return 0;
}

int t2__shell_refs_check(const char *s)
{
    t2__ref *refs;
    t2__sh_place *places;
    size_t n;
    int rc = shell_places(s, &refs, &places, &n);
    free(refs);
    free(places);
    return rc;
}

void t2__shell_cmd_free(t2__shell_cmd *c)
{
    if (!c) return;
    free(c->text);
    t2__strv_free(c->env, c->n);
    t2__strv_free(c->ref, c->n);
    memset(c, 0, sizeof *c);
}

/* Appends n bytes to *buf (length *len, capacity *cap). */
static int append(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 64;
        while (*len + n + 1 > c) c *= 2;
        char *g = realloc(*buf, c);
        if (!g) return T2_ENOMEM;
        *buf = g;
        *cap = c;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

/* The literal text s[from..to): "$${" becomes "${". */
static int append_lit(char **buf, size_t *len, size_t *cap, const char *s, size_t from, size_t to)
{
    for (size_t k = from; k < to; k++) {
        if (s[k] == '$' && s[k + 1] == '$' && s[k + 2] == '{') continue;
        int rc = append(buf, len, cap, s + k, 1);
        if (rc) return rc;
    }
    return 0;
}

int t2__shell_subst(const t2__flow *f, const char *s, t2__ref_lookup look, void *ud, t2__shell_cmd *out)
{
    memset(out, 0, sizeof *out);
    t2__ref *refs;
    t2__sh_place *places;
    size_t n;
    int rc = shell_places(s, &refs, &places, &n);
    if (rc) return rc;
    size_t len = 0, cap = 0, last = 0;
    size_t *var = n ? calloc(n, sizeof *var) : NULL; /* variable number of each reference */
    if (n && !var) rc = T2_ENOMEM;
    if (!rc && n) {
        out->env = calloc(n, sizeof *out->env);
        out->ref = calloc(n, sizeof *out->ref);
        if (!out->env || !out->ref) rc = T2_ENOMEM;
    }
    for (size_t k = 0; !rc && k < n; k++) {
        /* The same reference twice is one variable. */
        size_t v = out->n;
        for (size_t j = 0; j < k; j++)
            if (refs[j].field == refs[k].field && !strcmp(refs[j].stage, refs[k].stage)) v = var[j];
        var[k] = v;
        if (v == out->n) {
            t2__val *val = NULL;
            char *text = NULL;
            if ((rc = t2__ref_value(f, &refs[k], look, ud, &val))) break;
            rc = t2__ref_val_text(val, &text);
            t2__val_free(val);
            if (rc) break;
            size_t el = strlen(text) + 32, rl = strlen(refs[k].stage) + 32;
            char *e = malloc(el), *r = malloc(rl);
            if (!e || !r) {
                free(e);
                free(r);
                free(text);
                rc = T2_ENOMEM;
                break;
            }
            snprintf(e, el, "T2EXP_REF_%zu=%s", v + 1, text);
            snprintf(r, rl, "${%s.%s}", refs[k].stage, t2__ref_field_name(refs[k].field));
            free(text);
            out->env[out->n] = e;
            out->ref[out->n++] = r;
        }
        char ins[96];
        switch (places[k]) {
        case T2__SH_UNQUOTED: snprintf(ins, sizeof ins, "\"${T2EXP_REF_%zu}\"", v + 1); break;
        case T2__SH_SQUOTE: snprintf(ins, sizeof ins, "'\"${T2EXP_REF_%zu}\"'", v + 1); break;
        case T2__SH_DQUOTE:
        case T2__SH_HEREDOC: snprintf(ins, sizeof ins, "${T2EXP_REF_%zu}", v + 1); break;
        }
        if ((rc = append_lit(&out->text, &len, &cap, s, last, refs[k].start)) ||
            (rc = append(&out->text, &len, &cap, ins, strlen(ins))))
            break;
        last = refs[k].end;
    }
    if (!rc) rc = append_lit(&out->text, &len, &cap, s, last, strlen(s));
    free(var);
    free(refs);
    free(places);
    if (rc) {
        t2__shell_cmd_free(out);
        return rc == T2_ENOMEM ? t2_seterr(T2_ENOMEM, "flow: out of memory") : rc;
    }
    return 0;
}
