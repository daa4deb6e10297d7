/* custom.c — searcher.name: custom: a user's searcher library (t2exp/searcher.h) behind the
 * searcher interface. The library's callbacks get the events; the operations they issue through
 * the t2_search handle are checked (a known, unended, unclosed trial; a length that grows and stays
 * within max_length) and appended to the event's op list, so that searcher.c's rules (ops dropped
 * when an event fails, SHUTDOWN once every trial ended) hold for it as for the built-in ones.
 *
 * Snapshot: the library's own text (save/load) beside what this adapter checks ops against (each
 * request's last train length and whether it is closed). The library is dlopened once per
 * searcher and closed with it. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "custom.h"
#include "searcher_internal.h"
#include "user_so.h"
#include "t2exp/error.h"

struct t2_search {
    t2__searcher *s;
    t2__ops *ops;          /* the event's op list while a callback runs; NULL otherwise */
    const t2__hparam **leaves;
    size_t nleaves;
};

typedef struct custom {
    void *dl;
    const t2_searcher_def *def;
    void *state;
    int has_state;         /* init succeeded: destroy is owed */
    t2_search h;
    int64_t *trained;      /* per request: the last train length (0: none yet) */
    unsigned char *closed; /* per request: closed */
    size_t cap;
} custom;

#define CUSTOM(s) ((custom *)(s)->impl)

const t2__hparam *t2__custom_space(const t2_search *h)
{
    return h->s->cfg->hparams;
}

static const char *lib_name(const t2__searcher *s)
{
    const char *p = s->cfg->searcher.library, *slash = p ? strrchr(p, '/') : NULL;
    return slash ? slash + 1 : p ? p : "(none)";
}

/* A callback's failure, its message prefixed with the library and the callback. */
static int failed_in(const t2__searcher *s, const char *cb, int rc)
{
    if (rc >= 0) rc = T2_EINVAL; /* a positive return is no T2_E code: still a failure */
    const char *why = t2_errmsg();
    char msg[1200];
    snprintf(msg, sizeof msg, "%s", why && *why ? why : "no message (the callback did not call t2_seterr)");
    return t2_seterr(rc, "searcher library %s: %s failed: %s", lib_name(s), cb, msg);
}

/* A library call starts with no message (so failed_in can tell whether it set one), and one that
 * succeeds leaves the message as it was: the controller may hold an error's message while it saves
 * the searcher's snapshot at the run's end. */
typedef struct errsave {
    char msg[1400];
} errsave;

static void call_enter(errsave *e)
{
    snprintf(e->msg, sizeof e->msg, "%s", t2_errmsg());
    t2_clearerr();
}

static int call_leave(const t2__searcher *s, const errsave *e, const char *cb, int rc)
{
    if (rc) return failed_in(s, cb, rc);
    t2_seterr(T2_OK, "%s", e->msg);
    return T2_OK;
}

/* Room for request ids up to n - 1. */
static int reserve(custom *c, size_t n)
{
    if (n <= c->cap) return T2_OK;
    size_t cap = c->cap ? c->cap : 16;
    while (cap < n) cap *= 2;
    int64_t *t = realloc(c->trained, cap * sizeof *t);
    if (!t) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    c->trained = t;
    unsigned char *cl = realloc(c->closed, cap);
    if (!cl) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    c->closed = cl;
    memset(c->trained + c->cap, 0, (cap - c->cap) * sizeof *t);
    memset(c->closed + c->cap, 0, cap - c->cap);
    c->cap = cap;
    return T2_OK;
}

/* ---- operations ---- */

static int in_callback(const t2_search *h, const char *fn)
{
    if (!h) return t2_seterr(T2_EINVAL, "%s: NULL search", fn);
    if (!h->ops) return t2_seterr(T2_ESTATE, "%s: only inside one of the searcher's callbacks", fn);
    return T2_OK;
}

/* request_id names a trial that may still get work. */
static int open_trial(const t2_search *h, int64_t rid, const char *fn)
{
    const custom *c = CUSTOM(h->s);
    if (rid < 0 || rid >= h->s->next_request)
        return t2_seterr(T2_EINVAL, "%s: request %" PRId64 " was never created (%" PRId64 " so far)", fn, rid,
                         h->s->next_request);
    if (t2__searcher_has_ended(h->s, rid)) return t2_seterr(T2_EINVAL, "%s: trial %" PRId64 " has ended", fn, rid);
    if (c->closed[rid]) return t2_seterr(T2_EINVAL, "%s: trial %" PRId64 " is closed", fn, rid);
    return T2_OK;
}

int t2_search_create(t2_search *h, t2_point *p, int64_t *request_id)
{
    int rc = in_callback(h, "t2_search_create");
    t2__val *hp = NULL;
    if (!rc && p && !(hp = t2__custom_point_take(p, t2__custom_space(h))))
        rc = t2_seterr(T2_EINVAL, "t2_search_create: the point is not one of this search's");
    if (rc) {
        t2_point_free(p);
        return rc;
    }
    custom *c = CUSTOM(h->s);
    if ((rc = reserve(c, (size_t)h->s->next_request + 1))) {
        t2__val_free(hp);
        return rc;
    }
    return t2__searcher_new_request(h->s, hp, h->ops, request_id);
}

int t2_search_train(t2_search *h, int64_t request_id, int64_t length)
{
    int rc = in_callback(h, "t2_search_train");
    if (!rc) rc = open_trial(h, request_id, "t2_search_train");
    if (rc) return rc;
    custom *c = CUSTOM(h->s);
    int64_t max = h->s->cfg->searcher.max_length.n;
    if (length <= c->trained[request_id] || length > max)
        return t2_seterr(T2_EINVAL, "t2_search_train: trial %" PRId64 ": length %" PRId64 " is not in (%" PRId64
                         ", %" PRId64 "] (past its last train length, at most searcher.max_length)",
                         request_id, length, c->trained[request_id], max);
    if ((rc = t2__ops_train(h->ops, request_id, length))) return rc;
    c->trained[request_id] = length;
    return T2_OK;
}

int t2_search_close(t2_search *h, int64_t request_id)
{
    int rc = in_callback(h, "t2_search_close");
    if (!rc) rc = open_trial(h, request_id, "t2_search_close");
    if (!rc && (rc = t2__ops_close(h->ops, request_id)) == T2_OK) CUSTOM(h->s)->closed[request_id] = 1;
    return rc;
}

/* ---- settings and space ---- */

uint64_t t2_search_seed(const t2_search *h) { return h ? h->s->seed : 0; }
int t2_search_smaller_is_better(const t2_search *h) { return h ? h->s->cfg->searcher.smaller_is_better : 1; }
int64_t t2_search_max_length(const t2_search *h) { return h ? h->s->cfg->searcher.max_length.n : 0; }
int64_t t2_search_max_trials(const t2_search *h) { return h ? h->s->cfg->searcher.max_trials : 0; }

static const t2__val *option(const t2_search *h, const char *name, const char *fn)
{
    const t2__val *v = h && name ? t2__val_map_get(h->s->cfg->searcher.options, name) : NULL;
    if (!v) t2_seterr(T2_ENOTFOUND, "%s: searcher.options has no '%s'", fn, name ? name : "(null)");
    return v;
}

int t2_search_option(const t2_search *h, const char *name, double *value)
{
    const t2__val *v = option(h, name, "t2_search_option");
    if (!v) return T2_ENOTFOUND;
    if (t2__val_as_double(v, value) != T2_OK)
        return t2_seterr(T2_EINVAL, "t2_search_option: searcher.options.%s is not a number", name);
    return T2_OK;
}

int t2_search_option_text(const t2_search *h, const char *name, const char **text)
{
    const t2__val *v = option(h, name, "t2_search_option_text");
    if (!v) return T2_ENOTFOUND;
    if (v->kind != T2__VAL_STRING)
        return t2_seterr(T2_EINVAL, "t2_search_option_text: searcher.options.%s is not text (quote it)", name);
    *text = v->s;
    return T2_OK;
}

size_t t2_search_nparams(const t2_search *h) { return h ? h->nleaves : 0; }

int t2_search_param(const t2_search *h, size_t i, t2_param *out)
{
    if (!h || !out) return t2_seterr(T2_EINVAL, "t2_search_param: NULL argument");
    if (i >= h->nleaves) return t2_seterr(T2_EINVAL, "t2_search_param: %zu is past the %zu hyperparameters", i, h->nleaves);
    const t2__hparam *l = h->leaves[i];
    static const t2_param_kind kinds[] = {[T2__HP_CONST] = T2_PARAM_CONST, [T2__HP_INT] = T2_PARAM_INT,
                                          [T2__HP_DOUBLE] = T2_PARAM_DOUBLE, [T2__HP_LOG] = T2_PARAM_LOG,
                                          [T2__HP_CATEGORICAL] = T2_PARAM_CATEGORICAL};
    *out = (t2_param){.name = l->path, .kind = kinds[l->kind], .minval = l->minval, .maxval = l->maxval,
                      .base = l->base, .nchoices = l->kind == T2__HP_CATEGORICAL ? l->vals->n : 0};
    return T2_OK;
}

/* ---- the searcher interface ---- */

static void destroy(t2__searcher *s)
{
    custom *c = CUSTOM(s);
    if (!c) return;
    if (c->has_state && c->def->destroy) c->def->destroy(c->state);
    if (c->dl) dlclose(c->dl);
    free(c->h.leaves);
    free(c->trained);
    free(c->closed);
    free(c);
    s->impl = NULL;
}

static int init(t2__searcher *s)
{
    custom *c = calloc(1, sizeof *c);
    if (!c) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    s->impl = c;
    c->h.s = s;
    const char *path = s->cfg->searcher.library;
    const void *sym = NULL;
    int rc = t2__user_so_open(path, "searcher library", "t2_searcher",
                              "define the searcher with T2_SEARCHER(...) from <t2exp/searcher.h>", sizeof *c->def, &c->dl,
                              &sym, NULL, 0);
    if (rc) return rc;
    c->def = sym;
    if (c->def->abi_version != T2_SEARCHER_ABI_VERSION)
        return t2_seterr(T2_EUNSUPPORTED, "searcher library %s: built for searcher ABI version %d, this t2exp needs "
                         "version %d (rebuild it against this t2exp's headers)", path, c->def->abi_version,
                         T2_SEARCHER_ABI_VERSION);
    const t2__user_cb need[] = {
        {c->def->init != NULL, "init"}, {c->def->start != NULL, "start"},
        {c->def->on_validation != NULL, "on_validation"}, {c->def->on_trial_exited != NULL, "on_trial_exited"},
        {c->def->on_trial_failed != NULL, "on_trial_failed"}, {c->def->save != NULL, "save"},
        {c->def->load != NULL, "load"}, {c->def->destroy != NULL, "destroy"},
    };
    if ((rc = t2__user_so_missing("searcher library", path, "searcher", need, sizeof need / sizeof *need))) return rc;
    if ((rc = t2__custom_leaves(s->cfg->hparams, &c->h.leaves, &c->h.nleaves))) return rc;
    errsave e;
    call_enter(&e);
    rc = c->def->init(&c->h, &c->state);
    c->has_state = 1; /* destroy gets what init left, also after a failure */
    return call_leave(s, &e, "init", rc);
}

/* Runs one callback with ops open to it; its failure named. */
#define CALL(s, ops, cb, ...)                                                                      \
    do {                                                                                           \
        custom *c_ = CUSTOM(s);                                                                    \
        errsave e_;                                                                                \
        c_->h.ops = (ops);                                                                         \
        call_enter(&e_);                                                                           \
        int rc_ = c_->def->cb(&c_->h, c_->state, __VA_ARGS__);                                     \
        c_->h.ops = NULL;                                                                          \
        return call_leave((s), &e_, #cb, rc_);                                                     \
    } while (0)

static int start(t2__searcher *s, t2__ops *ops)
{
    custom *c = CUSTOM(s);
    errsave e;
    c->h.ops = ops;
    call_enter(&e);
    int rc = c->def->start(&c->h, c->state);
    c->h.ops = NULL;
    return call_leave(s, &e, "start", rc);
}

static int validation(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops)
{
    CALL(s, ops, on_validation, request_id, metric, length);
}

static int exited(t2__searcher *s, int64_t request_id, t2__ops *ops)
{
    CALL(s, ops, on_trial_exited, request_id);
}

static int failed(t2__searcher *s, int64_t request_id, int invalid_hparams, t2__ops *ops)
{
    CALL(s, ops, on_trial_failed, request_id, invalid_hparams);
}

static double progress(const t2__searcher *s)
{
    custom *c = CUSTOM(s);
    if (c->def->progress) {
        double p = c->def->progress(&c->h, c->state);
        return p >= 0 && p <= 1 ? p : p > 1 ? 1.0 : 0.0; /* NaN too: 0 */
    }
    return s->next_request ? (double)t2__idset_count(&s->ended) / (double)s->next_request : 0.0;
}

static int64_t total(const t2__searcher *s)
{
    return s->cfg->searcher.max_trials; /* 0: unknown */
}

/* Whether s[0..n) is UTF-8 (what a JSON string may hold; the store's reader refuses the rest). */
static int utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!len || i + len > n) return 0;
        uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return 0;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        /* Overlong forms, surrogates and past U+10FFFF are not UTF-8. */
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += len;
    }
    return 1;
}

/* The library's text as a value of the snapshot: a string when it is UTF-8 (readable in the
 * store), else its bytes in hex under "hex" (a library may save any bytes but NUL). */
static t2__val *text_val(const char *text)
{
    size_t n = strlen(text);
    if (utf8_valid((const unsigned char *)text, n)) return t2__val_string(text);
    char *hex = malloc(2 * n + 1);
    if (!hex) return NULL;
    for (size_t i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", (unsigned char)text[i]);
    t2__val *m = t2__val_map();
    if (m && t2__val_map_set(m, "hex", t2__val_string(hex))) {
        t2__val_free(m);
        m = NULL;
    }
    free(hex);
    return m;
}

/* text_val's value back as malloc'd text; NULL for anything else (or out of memory). */
static char *val_text(const t2__val *v)
{
    if (v && v->kind == T2__VAL_STRING) return strdup(v->s);
    const t2__val *h = v && v->kind == T2__VAL_MAP ? t2__val_map_get(v, "hex") : NULL;
    if (!h || h->kind != T2__VAL_STRING || strlen(h->s) % 2) return NULL;
    size_t n = strlen(h->s) / 2;
    char *t = malloc(n + 1);
    for (size_t i = 0; t && i < n; i++) {
        unsigned b;
        if (sscanf(h->s + 2 * i, "%2x", &b) != 1 || b == 0) {
            free(t);
            return NULL;
        }
        t[i] = (char)b;
    }
    if (t) t[n] = '\0';
    return t;
}

/* {"library": TEXT (or {"hex": ...}), "trained": [L per request], "closed": [ids]} */
static int snapshot(const t2__searcher *s, t2__val **out)
{
    custom *c = CUSTOM(s);
    char *text = NULL;
    errsave e;
    call_enter(&e);
    int rc = c->def->save(&c->h, c->state, &text);
    if (!rc && !text) rc = t2_seterr(T2_EINVAL, "it gave no text");
    if ((rc = call_leave(s, &e, "save", rc))) {
        free(text);
        return rc;
    }
    t2__val *m = t2__val_map(), *tr = t2__val_list(), *cl = t2__val_list();
    rc = m && tr && cl ? t2__val_map_set(m, "library", text_val(text)) : T2_ENOMEM;
    free(text);
    for (int64_t r = 0; !rc && r < s->next_request; r++) {
        rc = t2__val_list_append(tr, t2__val_int(c->trained[r]));
        if (!rc && c->closed[r]) rc = t2__val_list_append(cl, t2__val_int(r));
    }
    if (!rc) {
        rc = t2__val_map_set(m, "trained", tr);
        tr = NULL;
    }
    if (!rc) {
        rc = t2__val_map_set(m, "closed", cl);
        cl = NULL;
    }
    t2__val_free(tr);
    t2__val_free(cl);
    if (rc) {
        t2__val_free(m);
        return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    }
    *out = m;
    return T2_OK;
}

static int restore(t2__searcher *s, const t2__val *state)
{
    custom *c = CUSTOM(s);
    const t2__val *tr, *cl;
    int rc;
    if ((rc = t2__state_list(state, "trained", "state", &tr)) || (rc = t2__state_list(state, "closed", "state", &cl)))
        return rc;
    if ((int64_t)tr->n != s->next_request)
        return t2_seterr(T2_EFORMAT, "searcher state: state.trained must have one length per request");
    if ((rc = reserve(c, tr->n + 1))) return rc;
    int64_t max = s->cfg->searcher.max_length.n;
    for (size_t r = 0; r < tr->n; r++) {
        const t2__val *e = tr->items[r];
        if (e->kind != T2__VAL_INT || e->i < 0 || e->i > max)
            return t2_seterr(T2_EFORMAT, "searcher state: state.trained[%zu] must be a length in [0, %" PRId64 "]", r, max);
        c->trained[r] = e->i;
        c->closed[r] = 0;
    }
    for (size_t k = 0; k < cl->n; k++) {
        const t2__val *e = cl->items[k];
        if (e->kind != T2__VAL_INT || e->i < 0 || e->i >= s->next_request)
            return t2_seterr(T2_EFORMAT, "searcher state: state.closed must hold request ids");
        c->closed[e->i] = 1;
    }
    char *text = val_text(t2__val_map_get(state, "library"));
    if (!text) return t2_seterr(T2_EFORMAT, "searcher state: state.library must be the library's saved text");
    errsave e;
    call_enter(&e);
    rc = call_leave(s, &e, "load", c->def->load(&c->h, c->state, text));
    free(text);
    return rc;
}

const t2__searcher_vt t2__custom_vt = {
    .name = "custom", .init = init, .destroy = destroy, .start = start, .validation = validation,
    .exited = exited, .failed = failed, .progress = progress, .total = total, .snapshot = snapshot,
    .restore = restore, .rollback = 1,
};
