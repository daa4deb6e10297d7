/* test_searcher_util.h — helpers for the searcher tests: configs from strings, ops as short
 * strings ("C0 T0@4 X0 S"), and a pretend controller that runs a search to its end, records
 * every event with the ops it produced, and snapshots the searcher before each event so that
 * restore-and-replay can be checked against the original run. */
#ifndef T2_TEST_SEARCHER_UTIL_H
#define T2_TEST_SEARCHER_UTIL_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "../../searchers/searcher.h"

#define CHECK_CONTAINS(got, want)                                                                 \
    do {                                                                                          \
        const char *g_ = (got), *w_ = (want);                                                     \
        if (!g_ || !strstr(g_, w_)) {                                                             \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,        \
                    g_ ? g_ : "(null)", w_);                                                      \
            check_failures++;                                                                     \
        }                                                                                         \
    } while (0)

/* A config from `searcher: {SEARCHER}` and hyperparameter lines (indented two spaces). */
static inline t2__config *load_cfg(const char *searcher, const char *hp)
{
    char text[8192];
    snprintf(text, sizeof text, "searcher: {%s}\nhyperparameters:\n  global_batch_size: 8\n%s", searcher,
             hp ? hp : "");
    t2__config *cfg = NULL;
    if (t2__config_load_string(text, "search.yaml", NULL, 0, &cfg)) {
        fprintf(stderr, "load_cfg: %s\n", t2_errmsg());
        check_failures++;
    }
    return cfg;
}

/* A config from `searcher: {SEARCHER}` and hyperparameter lines must be refused (T2_EINVAL) with an
 * error containing want. */
static inline void check_bad(const char *searcher, const char *hp, const char *want)
{
    char text[4096];
    t2__config *cfg = NULL;
    snprintf(text, sizeof text, "searcher: {%s}\nhyperparameters:\n  global_batch_size: 8\n%s", searcher, hp);
    CHECK_RC(t2__config_load_string(text, "search.yaml", NULL, 0, &cfg), T2_EINVAL);
    CHECK(cfg == NULL);
    CHECK_CONTAINS(t2_errmsg(), want);
    t2__config_free(cfg);
}

/* Ops as "C0 T0@4 X0 S" (create, train to length, close, shutdown); full adds each CREATE's
 * seed and hparams JSON, for comparing runs exactly. Returns a static buffer. */
static inline const char *ops_text(const t2__ops *ops, size_t from, int full)
{
    static char buf[1 << 16];
    size_t at = 0;
    buf[0] = '\0';
    for (size_t k = from; k < ops->n && at + 512 < sizeof buf; k++) {
        const t2__search_op *op = &ops->v[k];
        const char *sep = at ? " " : "";
        switch (op->kind) {
        case T2__OP_CREATE:
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%sC%" PRId64, sep, op->request_id);
            if (full) {
                char *json = NULL;
                t2__val_to_json(op->hparams, &json, NULL);
                at += (size_t)snprintf(buf + at, sizeof buf - at, "{%016" PRIx64 " %.300s}", op->seed,
                                       json ? json : "?");
                free(json);
            }
            break;
        case T2__OP_TRAIN:
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%sT%" PRId64 "@%" PRId64, sep, op->request_id,
                                   op->length);
            break;
        case T2__OP_CLOSE: at += (size_t)snprintf(buf + at, sizeof buf - at, "%sX%" PRId64, sep, op->request_id); break;
        case T2__OP_SHUTDOWN: at += (size_t)snprintf(buf + at, sizeof buf - at, "%sS", sep); break;
        }
    }
    return buf;
}

/* ---------- the pretend controller ---------- */

enum { EV_START, EV_CREATED, EV_VALIDATION, EV_EXITED, EV_FAILED, EV_PRUNED };

typedef struct drive_event {
    int kind;
    int64_t rid, length;
    double metric;
    int invalid;
    char *ops;   /* the ops it produced, full text */
    char *state; /* snapshot JSON before the event */
} drive_event;

/* What happens when a TRAIN op reaches the pretend trial: 0 validate with metric(), 1 fail,
 * 2 fail with invalid hparams, 3 exit on its own, 4 the pruner stops it after a validation at half
 * the target (metric() there). */
typedef struct drive_script {
    double (*metric)(int64_t rid, int64_t length, void *ctx);
    int (*fate)(int64_t rid, int64_t length, void *ctx);
    void *ctx;
    int snapshots; /* record a snapshot before every event */
    void (*created)(int64_t rid, const t2__val *hparams, void *ctx); /* optional: each CREATE's hparams */
} drive_script;

typedef struct drive_run {
    drive_event *ev;
    size_t nev, cap;
    int64_t created, closes, shutdowns, trains;
    int64_t *last_length; /* per request id, the last TRAIN target */
    size_t nlast;
} drive_run;

static inline void drive_free(drive_run *r)
{
    for (size_t k = 0; k < r->nev; k++) {
        free(r->ev[k].ops);
        free(r->ev[k].state);
    }
    free(r->ev);
    free(r->last_length);
    memset(r, 0, sizeof *r);
}

static inline int drive_record(drive_run *r, const t2__searcher *s, drive_event e, int snap)
{
    if (r->nev == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->ev = realloc(r->ev, r->cap * sizeof *r->ev);
        if (!r->ev) return -1;
    }
    e.ops = NULL;
    e.state = NULL;
    if (snap) {
        t2__val *st = NULL;
        if (t2__searcher_snapshot(s, &st) || t2__val_to_json(st, &e.state, NULL)) {
            fprintf(stderr, "snapshot: %s\n", t2_errmsg());
            check_failures++;
        }
        t2__val_free(st);
    }
    r->ev[r->nev++] = e;
    return 0;
}

/* Applies one recorded event (without its ops/state) to s. */
static inline int drive_apply(t2__searcher *s, const drive_event *e, t2__ops *ops)
{
    switch (e->kind) {
    case EV_START: return t2__searcher_start(s, ops);
    case EV_CREATED: return t2__searcher_on_trial_created(s, e->rid, ops);
    case EV_VALIDATION: return t2__searcher_on_validation(s, e->rid, e->metric, e->length, ops);
    case EV_EXITED: return t2__searcher_on_trial_exited(s, e->rid, ops);
    case EV_PRUNED: return t2__searcher_on_trial_pruned(s, e->rid, e->metric, e->length, ops);
    default: return t2__searcher_on_trial_failed(s, e->rid, e->invalid, ops);
    }
}

/* Runs the search to SHUTDOWN, answering ops in the order issued. Returns 0, or -1 (with a
 * failed check) if it did not finish. */
static inline int drive(t2__searcher *s, const drive_script *sc, drive_run *r)
{
    t2__ops q = {0};
    size_t head = 0;
    int done = 0;
    memset(r, 0, sizeof *r);
    drive_event e = {.kind = EV_START};
    drive_record(r, s, e, sc->snapshots);
    CHECK_OK(t2__searcher_start(s, &q));
    r->ev[r->nev - 1].ops = strdup(ops_text(&q, 0, 1));
    while (!done && head < q.n && r->nev < 200000) {
        t2__search_op op = q.v[head++];
        size_t mark = q.n;
        e = (drive_event){.rid = op.request_id};
        switch (op.kind) {
        case T2__OP_CREATE:
            r->created++;
            if ((size_t)op.request_id >= r->nlast) {
                size_t n = (size_t)op.request_id * 2 + 16;
                r->last_length = realloc(r->last_length, n * sizeof *r->last_length);
                for (size_t k = r->nlast; k < n; k++) r->last_length[k] = 0;
                r->nlast = n;
            }
            e.kind = EV_CREATED;
            if (sc->created) sc->created(op.request_id, op.hparams, sc->ctx);
            break;
        case T2__OP_TRAIN: {
            r->trains++;
            int fate = sc->fate ? sc->fate(op.request_id, op.length, sc->ctx) : 0;
            if (fate == 0) {
                r->last_length[op.request_id] = op.length;
                e.kind = EV_VALIDATION;
                e.length = op.length;
                e.metric = sc->metric(op.request_id, op.length, sc->ctx);
            } else if (fate == 3) {
                e.kind = EV_EXITED;
            } else if (fate == 4) {
                r->last_length[op.request_id] = op.length / 2;
                e.kind = EV_PRUNED;
                e.length = op.length / 2;
                e.metric = sc->metric(op.request_id, e.length, sc->ctx);
            } else {
                e.kind = EV_FAILED;
                e.invalid = fate == 2;
            }
            break;
        }
        case T2__OP_CLOSE:
            r->closes++;
            e.kind = EV_EXITED;
            break;
        case T2__OP_SHUTDOWN:
            r->shutdowns++;
            done = 1;
            continue;
        }
        drive_record(r, s, e, sc->snapshots);
        int rc = drive_apply(s, &r->ev[r->nev - 1], &q);
        if (rc) {
            fprintf(stderr, "drive: event %zu failed: %s\n", r->nev - 1, t2_errmsg());
            check_failures++;
            break;
        }
        r->ev[r->nev - 1].ops = strdup(ops_text(&q, mark, 1));
    }
    /* Nothing may follow SHUTDOWN. */
    if (!done || head != q.n) {
        fprintf(stderr, "drive: done=%d, %zu ops left after SHUTDOWN\n", done, q.n - head);
        check_failures++;
    }
    t2__ops_free(&q);
    return done ? 0 : -1;
}

/* Restores a fresh searcher from the snapshot before event k (through JSON) and replays the
 * remaining events: every event must produce exactly the ops the original run produced. */
static inline void check_replay(const t2__config *cfg, uint64_t seed, const drive_run *r, size_t k)
{
    t2__searcher *s = NULL;
    t2__val *st = NULL;
    t2__ops ops = {0};
    CHECK_OK(t2__searcher_create(cfg, seed, &s));
    CHECK_OK(t2__val_from_json(r->ev[k].state, strlen(r->ev[k].state), &st, NULL));
    CHECK_OK(t2__searcher_restore(s, st));
    for (size_t j = k; s && j < r->nev; j++) {
        size_t mark = ops.n;
        CHECK_OK(drive_apply(s, &r->ev[j], &ops));
        const char *got = ops_text(&ops, mark, 1);
        if (strcmp(got, r->ev[j].ops) != 0) {
            fprintf(stderr, "replay from event %zu: event %zu gave\n  %s\nnot\n  %s\n", k, j, got, r->ev[j].ops);
            check_failures++;
            break;
        }
        /* The snapshot of the replayed searcher matches the original's too. */
        if (j + 1 < r->nev) {
            t2__val *s2 = NULL;
            char *json = NULL;
            CHECK_OK(t2__searcher_snapshot(s, &s2));
            CHECK_OK(t2__val_to_json(s2, &json, NULL));
            if (!json || strcmp(json, r->ev[j + 1].state) != 0) {
                fprintf(stderr, "replay from event %zu: state after event %zu differs\n", k, j);
                check_failures++;
                free(json);
                t2__val_free(s2);
                break;
            }
            free(json);
            t2__val_free(s2);
        }
        t2__ops_clear(&ops);
    }
    t2__ops_free(&ops);
    t2__val_free(st);
    t2__searcher_free(s);
}

/* ---------- the model-based searchers' test problem (tpe, adaptive_asha with sampler: tpe) ---------- */

/* f(x, y) = (x - 1.5)^2 + (y + 2)^2 where present, plus, for the mixed spaces, 0.5 unless act is
 * gelu (about what units and lr cost a typical draw) and units and lr pulled towards 32 and 1e-2,
 * so that every kind of hparam matters. */
static inline double objective(const t2__val *hp)
{
    double x = 0, y = 0, v = 0, f = 0;
    const t2__val *a;
    if (!t2__val_as_double(t2__val_map_get(hp, "x"), &x)) f += (x - 1.5) * (x - 1.5);
    if (!t2__val_as_double(t2__val_map_get(hp, "y"), &y)) f += (y + 2) * (y + 2);
    if (!t2__val_as_double(t2__val_map_get(hp, "units"), &v)) f += fabs(v - 32) / 32;
    if (!t2__val_as_double(t2__val_map_get(hp, "lr"), &v)) f += fabs(log10(v) + 2);
    if ((a = t2__val_map_get(hp, "act")) && a->kind == T2__VAL_STRING && strcmp(a->s, "gelu") != 0) f += 0.5;
    return f;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorts v). */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
