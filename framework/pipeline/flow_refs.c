/* flow_refs.c — ${stage.field} references: finding them in a text and replacing them by the
 * results of the stage they name. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flow_internal.h"
#include "t2exp/error.h"

#define REF_MAX 256 /* longest "${...}" looked at: a name is at most 128 bytes */

static const char *const FIELDS[] = {"experiment_id", "best.hparams", "best.metric", "best.checkpoint"};

const char *t2__ref_field_name(t2__ref_field f)
{
    return (unsigned)f < sizeof FIELDS / sizeof *FIELDS ? FIELDS[f] : "?";
}

static int name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
}

int t2__ref_next(const char *s, size_t *pos, t2__ref *r)
{
    for (size_t i = *pos; s[i]; i++) {
        if (s[i] != '$') continue;
        if (s[i + 1] == '$' && s[i + 2] == '{') { /* $${ : a literal ${ */
            i += 2;
            continue;
        }
        if (s[i + 1] != '{') continue;
        const char *close = strchr(s + i + 2, '}');
        if (!close)
            return t2_seterr(T2_EINVAL, "'%.40s': ${ without a closing } (write $${ for a literal ${)", s + i);
        size_t len = (size_t)(close - (s + i + 2));
        const char *in = s + i + 2;
        if (len > REF_MAX) return t2_seterr(T2_EINVAL, "'%.40s...': a reference longer than %d bytes", s + i, REF_MAX);
        size_t nl = 0;
        while (nl < len && name_char(in[nl])) nl++;
        if (nl == 0 || nl > T2__FLOW_MAX_NAME || nl == len || in[nl] != '.')
            return t2_seterr(T2_EINVAL, "${%.*s}: not a reference; the form is ${STAGE.FIELD} with FIELD one of "
                             "experiment_id, best.hparams, best.metric, best.checkpoint", (int)len, in);
        const char *field = in + nl + 1;
        size_t fl = len - nl - 1;
        int k = -1;
        for (int j = 0; j < (int)(sizeof FIELDS / sizeof *FIELDS); j++)
            if (strlen(FIELDS[j]) == fl && !memcmp(FIELDS[j], field, fl)) k = j;
        if (k < 0)
            return t2_seterr(T2_EINVAL, "${%.*s}: unknown field '%.*s' (a stage exposes experiment_id, best.hparams, "
                             "best.metric, best.checkpoint)", (int)len, in, (int)fl, field);
        memcpy(r->stage, in, nl);
        r->stage[nl] = '\0';
        r->field = (t2__ref_field)k;
        r->start = i;
        r->end = (size_t)(close - s) + 1;
        *pos = r->end;
        return 1;
    }
    return 0;
}

int t2__ref_value(const t2__flow *f, const t2__ref *r, t2__ref_lookup look, void *ud, t2__val **out)
{
    *out = NULL;
    long si = t2__flow_find(f, r->stage);
    const t2__val *res = si >= 0 ? look(ud, (size_t)si) : NULL;
    if (!res)
        return t2_seterr(T2_ENOTFOUND, "${%s.%s}: stage '%s' has no recorded result", r->stage,
                         t2__ref_field_name(r->field), r->stage);
    const t2__val *v = NULL;
    switch (r->field) {
    case T2__REF_EXPERIMENT_ID: v = t2__val_map_get(res, "experiment_id"); break;
    case T2__REF_BEST_HPARAMS: v = t2__val_lookup(res, "best.hparams"); break;
    case T2__REF_BEST_METRIC: v = t2__val_lookup(res, "best.metric"); break;
    case T2__REF_BEST_CHECKPOINT: v = t2__val_lookup(res, "best.checkpoint"); break;
    }
    int ok = v && (r->field == T2__REF_EXPERIMENT_ID     ? v->kind == T2__VAL_INT
                   : r->field == T2__REF_BEST_HPARAMS   ? v->kind == T2__VAL_MAP
                   : r->field == T2__REF_BEST_METRIC    ? v->kind == T2__VAL_DOUBLE || v->kind == T2__VAL_INT
                                                        : v->kind == T2__VAL_STRING && v->len > 0);
    if (!ok)
        return t2_seterr(T2_ENOTFOUND, "${%s.%s}: stage '%s' has no %s (%s)", r->stage, t2__ref_field_name(r->field),
                         r->stage, t2__ref_field_name(r->field),
                         r->field == T2__REF_BEST_CHECKPOINT ? "no trial saved a checkpoint"
                                                             : "no trial reported a validation");
    if (!(*out = t2__val_copy(v))) return t2_seterr(T2_ENOMEM, "flow: out of memory");
    return 0;
}

/* The text form of a value in an argv: strings as they are, numbers in full precision, maps as
 * JSON. */
int t2__ref_val_text(const t2__val *v, char **out)
{
    char num[64];
    switch (v->kind) {
    case T2__VAL_STRING: *out = strdup(v->s); break;
    case T2__VAL_INT: snprintf(num, sizeof num, "%lld", (long long)v->i); *out = strdup(num); break;
    case T2__VAL_DOUBLE: snprintf(num, sizeof num, "%.17g", v->d); *out = strdup(num); break;
    default: return t2__val_to_json(v, out, NULL);
    }
    return *out ? 0 : T2_ENOMEM;
}

int t2__ref_subst(const t2__flow *f, const char *s, t2__ref_lookup look, void *ud, char **out)
{
    *out = NULL;
    size_t cap = strlen(s) + 1, n = 0, pos = 0, last = 0;
    char *buf = malloc(cap);
    if (!buf) return t2_seterr(T2_ENOMEM, "flow: out of memory");
    int rc = 0;
    /* Appends s[from..to) with "$${" turned into "${". */
#define LIT(from, to)                                                                   \
    for (size_t k_ = (from); k_ < (to); k_++) {                                         \
        if (s[k_] == '$' && s[k_ + 1] == '$' && s[k_ + 2] == '{') continue;             \
        buf[n++] = s[k_];                                                               \
    }
    for (;;) {
        t2__ref r;
        int got = t2__ref_next(s, &pos, &r);
        if (got < 0) {
            rc = got;
            break;
        }
        if (got == 0) {
            LIT(last, strlen(s));
            break;
        }
        LIT(last, r.start);
        t2__val *v = NULL;
        char *text = NULL;
        if ((rc = t2__ref_value(f, &r, look, ud, &v))) break;
        rc = t2__ref_val_text(v, &text);
        t2__val_free(v);
        if (rc) {
            rc = t2_seterr(rc, "flow: cannot write ${%s.%s} as text", r.stage, t2__ref_field_name(r.field));
            break;
        }
        size_t tl = strlen(text);
        if (n + tl + (strlen(s) - r.end) + 1 > cap) {
            cap = n + tl + (strlen(s) - r.end) + 1;
            char *g = realloc(buf, cap);
            if (!g) {
                free(text);
                rc = t2_seterr(T2_ENOMEM, "flow: out of memory");
                break;
            }
            buf = g;
        }
        memcpy(buf + n, text, tl);
        n += tl;
        free(text);
        last = r.end;
    }
#undef LIT
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* A copy of v with references resolved: a string that is exactly one reference becomes its value,
 * other strings are substituted as text. */
static int resolve_val(const t2__flow *f, const t2__val *v, t2__ref_lookup look, void *ud, t2__val **out)
{
    *out = NULL;
    if (v->kind == T2__VAL_STRING) {
        size_t pos = 0;
        t2__ref r;
        int got = t2__ref_next(v->s, &pos, &r);
        if (got < 0) return got;
        if (got == 1 && r.start == 0 && r.end == v->len) return t2__ref_value(f, &r, look, ud, out);
        char *s = NULL;
        int rc = t2__ref_subst(f, v->s, look, ud, &s);
        if (rc) return rc;
        *out = t2__val_string(s);
        free(s);
        return *out ? 0 : t2_seterr(T2_ENOMEM, "flow: out of memory");
    }
    if (v->kind != T2__VAL_LIST && v->kind != T2__VAL_MAP) {
        *out = t2__val_copy(v);
        return *out ? 0 : t2_seterr(T2_ENOMEM, "flow: out of memory");
    }
    t2__val *c = v->kind == T2__VAL_LIST ? t2__val_list() : t2__val_map();
    if (!c) return t2_seterr(T2_ENOMEM, "flow: out of memory");
    for (size_t k = 0; k < v->n; k++) {
        t2__val *x = NULL;
        int rc = resolve_val(f, v->items[k], look, ud, &x);
        if (!rc) rc = v->kind == T2__VAL_LIST ? t2__val_list_append(c, x) : t2__val_map_set(c, v->keys[k], x);
        if (rc) {
            t2__val_free(c);
            return rc == T2_ENOMEM ? t2_seterr(T2_ENOMEM, "flow: out of memory") : rc;
        }
    }
    *out = c;
    return 0;
}

int t2__flow_resolve(const t2__flow *f, size_t stage, t2__ref_lookup look, void *ud, char ***argv,
                     t2__val **hparams)
{
    const t2__flow_stage *s = &f->stages[stage];
    *argv = NULL;
    *hparams = NULL;
    char **v = s->argc ? calloc(s->argc, sizeof *v) : NULL;
    if (s->argc && !v) return t2_seterr(T2_ENOMEM, "flow: out of memory");
    int rc = 0;
    for (size_t i = 0; !rc && i < s->argc; i++) rc = t2__ref_subst(f, s->argv[i], look, ud, &v[i]);
    if (!rc && s->hparams) {
        rc = resolve_val(f, s->hparams, look, ud, hparams);
        if (!rc && (*hparams)->kind != T2__VAL_MAP) {
            rc = t2_seterr(T2_EINVAL, "stage %s: experiment.hyperparameters resolved to a %s, not a map", s->name,
                           t2__val_kind_name((*hparams)->kind));
        }
    }
    if (rc) {
        t2__strv_free(v, s->argc);
        t2__val_free(*hparams);
        *hparams = NULL;
        return rc;
    }
    *argv = v;
    return 0;
}
