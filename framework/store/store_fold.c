/* store_fold.c — a trial's row writes in one writer batch become one statement.
 *
 * Why: a one-batch trial of a search made six statements on its row (the insert, the log path,
 * RUNNING, the BLAS line, the validation, COMPLETED): 34 of the writer thread's 55 us a trial, and
 * that thread is the serial part of a search. The writer takes its records in batches. The
 * writes to one trial's row between two commit records of a batch are folded here, in C, into
 * the first of them: an insert with the row's final values when the batch created the row, else
 * one update that assigns each column the batch changed. Nothing reads a trial's row between
 * those records (a read on the controller's thread waits until the writer is idle, and no record
 * reads the row) and no commit falls between them, so no connection can tell. (Should a record
 * between them fail, the row shows the writes after it, which the unfolded run would have
 * dropped; the failures a writer meets, a full disk or an I/O error, roll the batch back anyway.)
 *
 * Events in, statements out: t2__store_fold only rewrites the batch's records and fills rows; the
 * one thing it asks the store is an experiment's smaller_is_better (for the best-of-validations
 * rule), through the callback. The rules below must stay those of store_write.c's update_sql_for
 * and SQL_SET_TRIAL_*: test_store_async compares every row written either way. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "store_internal.h"
#include "t2exp/error.h"

/* Every column assigned: a row the batch created. */
#define ALL_SET                                                                                            \
    (T2__TU_STATE | T2__TU_RESTARTS | T2__TU_BATCHES | T2__TU_TARGET | T2__TU_BEST | T2__TU_LATEST |       \
     T2__TU_ERROR | T2__TU_LOG_PATH | T2__TU_STARTED | T2__TU_ENDED | T2__FOLD_BLAS | T2__FOLD_HOSTS |    \
     T2__FOLD_PARENT)

static int is_final(int state)
{
    return state == T2__TRIAL_COMPLETED || state == T2__TRIAL_ERRORED || state == T2__TRIAL_CANCELED;
}

static double better(double a, double b, int smaller) { return smaller ? fmin(a, b) : fmax(a, b); }

/* Whether applying u to row needs the experiment's direction: two validations meet. */
static int needs_direction(const t2__fold_row *row, const t2__trial_update *u)
{
    if (!(u->set & T2__TU_VALIDATION) || isnan(u->validation)) return 0;
    return (row->set & T2__TU_BEST) ? !isnan(row->best) : (row->set & T2__FOLD_BEST_OF_OLD) != 0;
}

/* update_sql_for(u->set) on row, in C: each SET expression of that statement reads the old values. */
static void apply_update(t2__fold_row *row, const t2__trial_update *u, double now, int smaller)
{
    unsigned m = u->set;
    if (m & T2__TU_STATE) {
        row->set |= T2__TU_STATE;
        row->state = u->state;
        if (!(m & T2__TU_STARTED) && u->state == T2__TRIAL_RUNNING) {
            /* started_at = coalesce(started_at, now) on whatever started_at is so far. */
            if (row->set & T2__TU_STARTED) {
                if (isnan(row->started_at)) row->started_at = now;
            } else if (!(row->set & T2__FOLD_STARTED_COALESCE)) {
                row->set |= T2__FOLD_STARTED_COALESCE;
                row->started_at = now;
            }
        }
        if (!(m & T2__TU_ENDED)) {
            row->set |= T2__TU_ENDED;
            row->ended_at = is_final(u->state) ? now : NAN;
        }
    }
    if (m & T2__TU_RESTARTS) row->restarts = u->restarts;
    if (m & T2__TU_BATCHES) row->batches = u->batches_trained;
    if (m & T2__TU_TARGET) row->target = u->target_length_batches > 0 ? u->target_length_batches : 0;
    row->set |= m & (T2__TU_RESTARTS | T2__TU_BATCHES | T2__TU_TARGET | T2__TU_ERROR | T2__TU_LOG_PATH);
    unsigned best_set = 0;
    double best = NAN;
    if (m & T2__TU_VALIDATION) {
        double v = u->validation;
        if (!isnan(v)) {
            if (row->set & T2__TU_BEST) {
                row->best = isnan(row->best) ? v : better(row->best, v, smaller);
            } else if (row->set & T2__FOLD_BEST_OF_OLD) {
                row->best = better(row->best, v, smaller);
            } else {
                row->set |= T2__FOLD_BEST_OF_OLD;
                row->best = v;
            }
        } else if (m & T2__TU_BEST) {
            best_set = 1, best = u->best_validation;
        }
        row->set |= T2__TU_LATEST;
        row->latest = v;
    } else {
        if (m & T2__TU_BEST) best_set = 1, best = u->best_validation;
        if (m & T2__TU_LATEST) row->set |= T2__TU_LATEST, row->latest = u->latest_validation;
    }
    if (best_set) {
        row->set = (row->set & ~(unsigned)T2__FOLD_BEST_OF_OLD) | T2__TU_BEST;
        row->best = best;
    }
    if (m & T2__TU_ERROR) row->error = u->error;
    if (m & T2__TU_LOG_PATH) row->log_path = u->log_path;
    if (m & T2__TU_STARTED) {
        row->set = (row->set & ~(unsigned)T2__FOLD_STARTED_COALESCE) | T2__TU_STARTED;
        row->started_at = u->started_at;
    }
    if (m & T2__TU_ENDED) {
        row->set |= T2__TU_ENDED;
        row->ended_at = u->ended_at;
    }
}

/* The row as the CREATE record inserts it. */
static t2__fold_row row_of_create(const t2__store_rec *r)
{
    return (t2__fold_row){.id = r->id,
                          .created = 1,
                          .set = ALL_SET,
                          .experiment_id = r->i[0],
                          .ordinal = r->i[1],
                          .seed = r->i[2],
                          .target = r->i[3] > 0 ? r->i[3] : 0,
                          .hparams = r->s1,
                          .state = T2__TRIAL_QUEUED,
                          .best = NAN,
                          .latest = NAN,
                          .created_at = r->now,
                          .started_at = NAN,
                          .ended_at = NAN};
}

/* A row the batch did not create: nothing assigned yet. */
static t2__fold_row row_of_update(const t2__store_rec *r)
{
    return (t2__fold_row){.id = r->id, .best = NAN, .latest = NAN, .started_at = NAN, .ended_at = NAN};
}

static size_t hash(int64_t id, size_t mask) { return (size_t)((uint64_t)id * 0x9E3779B97F4A7C15u >> 17) & mask; }

/* The slot of trial id in this segment (gen): its row, plus one, or 0 with *free the slot to take. */
static size_t lookup(t2__fold_rows *t, int64_t id, size_t *free_slot)
{
    size_t mask = t->scap - 1;
    for (size_t h = hash(id, mask);; h = (h + 1) & mask) {
        if (t->slots[h].gen != t->gen) {
            *free_slot = h;
            return 0;
        }
        if (t->slots[h].id == id) return t->slots[h].row;
    }
}

/* Room for n more rows and a table at most half full with them. */
static int reserve(t2__fold_rows *t, size_t n)
{
    if (t->n + n > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->n + n) cap *= 2;
        t2__fold_row *g = realloc(t->v, cap * sizeof *g);
        if (!g) return -1;
        t->v = g;
        t->cap = cap;
    }
    if (2 * (t->n + n) > t->scap) {
        size_t cap = t->scap ? t->scap : 512;
        while (cap < 2 * (t->n + n)) cap *= 2;
        free(t->slots);
        if (!(t->slots = calloc(cap, sizeof *t->slots))) {
            t->scap = 0;
            return -1;
        }
        t->scap = cap;
        t->gen = 1;
    }
    return 0;
}

static void new_segment(t2__fold_rows *t)
{
    if (!++t->gen) { /* wrapped: gen 0 marks a free slot */
        memset(t->slots, 0, t->scap * sizeof *t->slots);
        t->gen = 1;
    }
}

int t2__store_fold(t2__store_rec *v, size_t n, t2__fold_rows *t, t2__store_smaller_fn smaller, void *ud)
{
    t->n = 0;
    if (reserve(t, n)) return t2_seterr(T2_ENOMEM, "store: out of memory folding trials' writes");
    new_segment(t);
    for (size_t i = 0; i < n; i++) {
        t2__store_rec *r = &v[i];
        int kind = r->kind;
        r->row = 0;
        if (kind == T2__REC_COMMIT) new_segment(t);
        if (kind != T2__REC_CREATE_TRIAL && kind != T2__REC_UPDATE_TRIAL && kind != T2__REC_TRIAL_BLAS &&
            kind != T2__REC_TRIAL_HOSTS && kind != T2__REC_TRIAL_PARENT)
            continue;
        size_t slot = 0, at = lookup(t, r->id, &slot);
        t2__fold_row *row;
        if (!at) {
            /* The row's first write in this segment: the statement its later ones join. */
            t->v[t->n] = kind == T2__REC_CREATE_TRIAL ? row_of_create(r) : row_of_update(r);
            t->slots[slot].id = r->id;
            t->slots[slot].gen = t->gen;
            t->slots[slot].row = r->row = ++t->n;
            row = &t->v[t->n - 1];
            if (kind == T2__REC_CREATE_TRIAL) continue;
        } else if (kind == T2__REC_CREATE_TRIAL) {
            /* A second insert of the id: its own row, and the insert fails on its own. */
            t->v[t->n] = row_of_create(r);
            r->row = ++t->n;
            continue;
        } else {
            row = &t->v[at - 1];
            if (row->closed) continue; /* its writes run as they are */
        }
        int s = 0;
        if (kind == T2__REC_UPDATE_TRIAL && needs_direction(row, &r->u) &&
            (!row->created || smaller(ud, row->experiment_id, &s))) {
            /* Two validations meet and the experiment's direction is not to hand (a row made by an
             * earlier batch names no experiment here): this write and the row's later ones run as
             * their own statements, after the row's. The first write of a row never gets here. */
            row->closed = 1;
            continue;
        }
        r->kind = r->row ? T2__REC_ROW : T2__REC_FOLDED;
        switch (kind) {
        case T2__REC_UPDATE_TRIAL: apply_update(row, &r->u, r->now, s); break;
        case T2__REC_TRIAL_BLAS: row->set |= T2__FOLD_BLAS, row->blas = r->s1; break;
        case T2__REC_TRIAL_HOSTS: row->set |= T2__FOLD_HOSTS, row->hosts = r->s1; break;
        case T2__REC_TRIAL_PARENT:
            row->set |= T2__FOLD_PARENT;
            row->parent_id = r->i[0];
            row->parent_checkpoint = r->s1;
            break;
        }
    }
    return T2_OK;
}

void t2__fold_rows_free(t2__fold_rows *t)
{
    free(t->v);
    free(t->slots);
    memset(t, 0, sizeof *t);
}
