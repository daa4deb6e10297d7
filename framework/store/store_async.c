/* store_async.c — the controller's per-trial writes on a writer thread.
 *
 * Why: in a search of short trials the controller's one thread is the ceiling however many cores
 * the machine has, and SQLite was about a third of that thread's time per trial
 * (docs/performance.md). While the writer thread runs (t2__store_async_start), each hot write (a
 * trial's row and its updates, metrics, log segments, the BLAS line, the experiment's progress and
 * best, the searcher snapshot) is queued as a record and runs later, in order, on the writer, which
 * owns the connection meanwhile. The controller goes on with its trials.
 *
 * What stays as it was, and the rule that keeps it:
 * - Order and atomicity: records run in the order they were queued, inside the open batch, as the
 *   calls did; the store still holds a prefix of the controller's writes after any crash.
 * - Commits are decided on the controller's thread (the batch's row count in put, its age in
 *   t2__store_async_flush): the precommit hook (the searcher snapshot) reads the controller's
 *   state, so it runs there, and its writes are queued ahead of the commit record. Snapshot and
 *   rows stay one transaction.
 * - Every other store call (a read, a checkpoint row, begin/commit, a forced flush) first waits
 *   until the queue is empty and the writer idle (t2__store_async_wait, at the statement and
 *   transaction entry points of store.c), then runs on the calling thread: the connection is never
 *   used by two threads at once, and the mutex orders each hand-over.
 * - Trial ids: create_trial answers the new id at once. The batch holds SQLite's write lock from
 *   its BEGIN IMMEDIATE to its commit, so no other process can take an id inside it: the
 *   controller reads the next free id once per batch and numbers the batch's trials itself; the
 *   inserts name their ids, and AUTOINCREMENT's counter follows them into the same commit.
 * - Times: a record carries the store clock read when it was queued.
 * - Errors: a record that fails drops the records after it (the calls after a failed one would
 *   not have been made), and the next store call on the controller's thread returns its error
 *   with the writer's message.
 *
 * Wake-ups are the dear part on the VMs the benchmark runs on: records gather in a stage only the
 * controller's thread touches and are handed over in bulk (below), and the writer takes the whole
 * queue at once. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include "common/fork_gate.h"
#include "store_internal.h"
#include "t2exp/error.h"

/* Records wait in the controller's own stage (no lock, no wake-up) until KICK_AT of them, a
 * commit, a wait, or a flush that finds the first STAGE_MS old hands them to the writer: a futex
 * wake-up and a contended mutex per record were a sixth of the controller's thread. */
#define KICK_AT 512
#define STAGE_MS 5.0
#define MAX_QUEUED 65536

_Thread_local t2__store *t2__store_writer_of;
_Thread_local const double *t2__store_rec_clock;

/* Records and the text of their strings, so that queueing a write allocates nothing once the
 * buffers have grown (each was malloc'ed by one thread and freed by the other before). */
typedef struct {
    t2__store_rec *v;
    size_t n, cap;
    char *text;
    size_t tlen, tcap;
} recbuf;

struct t2__store_async {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    /* Under mu. */
    recbuf q; /* handed over, not yet taken by the writer */
    int sleeping, busy, stop;
    int err_code;
    char err_msg[1024];
    atomic_int failed; /* written under mu, read without it */
    /* The controller's thread only. */
    recbuf stage;
    double staged_ms;  /* monotonic ms of the first staged record */
    long pending;      /* records queued since the last commit record */
    double opened_ms;  /* monotonic ms of the first of them */
    int ids_valid;     /* next_id belongs to the open batch */
    int64_t next_id;
    /* The writer's thread only. */
    int64_t smaller_exp; /* the experiment whose smaller_is_better `smaller` is (0: none) */
    int smaller;
};

static void recbuf_free(recbuf *b)
{
    free(b->v);
    free(b->text);
    memset(b, 0, sizeof *b);
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    void *g = realloc(*p, c * size);
    if (!g) return -1;
    *p = g;
    *cap = c;
    return 0;
}

/* Appends the text of s (SIZE_MAX for NULL) to b. */
static int put_text(recbuf *b, const char *s, size_t *off)
{
    *off = SIZE_MAX;
    if (!s) return 0;
    size_t n = strlen(s) + 1;
    if (grow((void **)&b->text, &b->tcap, b->tlen + n, 1)) return -1;
    memcpy(b->text + b->tlen, s, n);
    *off = b->tlen;
    b->tlen += n;
    return 0;
}

/* The writer's answer to store_fold.c: an experiment's smaller_is_better, the last one kept
 * (it never changes once the experiment exists). */
static int smaller_of(void *ud, int64_t experiment_id, int *out)
{
    t2__store *st = ud;
    struct t2__store_async *a = st->async;
    if (a->smaller_exp != experiment_id) {
        int64_t v = 0;
        char sql[96];
        snprintf(sql, sizeof sql, "SELECT smaller_is_better FROM experiments WHERE id = %lld", (long long)experiment_id);
        if (t2__store_query_int(st, sql, &v)) return -1;
        a->smaller_exp = experiment_id;
        a->smaller = v != 0;
    }
    *out = a->smaller;
    return 0;
}

static int run_rec(t2__store *st, t2__store_rec *r, const t2__fold_rows *rows)
{
    t2__store_rec_clock = &r->now;
    int rc;
    switch (r->kind) {
    case T2__REC_CREATE_TRIAL: {
        int64_t got = 0;
        rc = t2__store_insert_trial_row(st, &rows->v[r->row - 1], &got);
        if (!rc && got != r->id)
            rc = t2_seterr(T2_EIO, "store %s: trial got id %lld, not the %lld its batch gave it", t2__store_path(st),
                           (long long)got, (long long)r->id);
        break;
    }
    case T2__REC_ROW: rc = t2__store_update_trial_row(st, &rows->v[r->row - 1]); break;
    case T2__REC_FOLDED: rc = T2_OK; break;
    case T2__REC_UPDATE_TRIAL: rc = t2__store_update_trial(st, r->id, &r->u); break;
    case T2__REC_TRIAL_BLAS: rc = t2__store_set_trial_blas(st, r->id, r->s1); break;
    case T2__REC_TRIAL_HOSTS: rc = t2__store_set_trial_hosts(st, r->id, r->s1); break;
    case T2__REC_TRIAL_PARENT: rc = t2__store_set_trial_parent(st, r->id, r->i[0], r->s1); break;
    case T2__REC_PROGRESS: rc = t2__store_set_experiment_progress(st, r->id, r->d[0]); break;
    case T2__REC_BEST: rc = t2__store_set_experiment_best(st, r->id, r->i[0], r->d[0]); break;
    case T2__REC_SEARCHER: rc = t2__store_save_searcher_state(st, r->id, r->i[0], r->s1); break;
    case T2__REC_COMMIT: rc = t2__store_commit_batch(st); break;
    default: rc = t2_seterr(T2_EINVAL, "store: unknown queued write %d", r->kind);
    }
    t2__store_rec_clock = NULL;
    return rc;
}

/* The CREATE records from batch->v[i] to the batch's next commit record, inserted together at i
 * as statements of several rows (t2__store_insert_trial_rows), each then done. Running a trial's
 * insert earlier in its own transaction changes nothing a write after it sees: the other records
 * only refer to rows that exist (their own trial's, made before them either way), and the inserts
 * keep their order. One that needs SQLite to pick its id or ordinal (the rows before it decide
 * which) runs at its place, and the inserts after it are gathered there again. */
static int run_creates(t2__store *st, recbuf *batch, size_t i, const t2__fold_rows *rows)
{
    const t2__fold_row *v[T2__STORE_TRIAL_ROWS];
    size_t n = 0;
    int64_t exp = rows->v[batch->v[i].row - 1].experiment_id;
    int rc = T2_OK;
    for (size_t j = i; j < batch->n && batch->v[j].kind != T2__REC_COMMIT && !rc; j++) {
        t2__store_rec *r = &batch->v[j];
        if (r->kind != T2__REC_CREATE_TRIAL) continue;
        const t2__fold_row *row = &rows->v[r->row - 1];
        if (r->id <= 0 || row->id != r->id || row->ordinal < 0 || row->experiment_id != exp) break;
        t2__store_rec_clock = &r->now;
        v[n++] = row;
        r->kind = T2__REC_FOLDED;
        if (n == T2__STORE_TRIAL_ROWS) {
            rc = t2__store_insert_trial_rows(st, v, n);
            n = 0;
        }
    }
    if (!rc && n) rc = t2__store_insert_trial_rows(st, v, n);
    t2__store_rec_clock = NULL;
    return rc;
}

/* The row inserts run_gathered runs, one kind of record each. */
static const t2__rows_insert *const GATHERED[] = {&t2__metric_rows, &t2__timing_rows, &t2__segment_rows};

static int gathered(int kind)
{
    for (size_t k = 0; k < sizeof GATHERED / sizeof GATHERED[0]; k++)
        if (GATHERED[k]->rec == kind) return 1;
    return 0;
}

/* The metric, timing and log segment records of batch->v[from, to) (up to a commit record or the
 * batch's end), inserted last, table by table in their order, in statements of many rows: a
 * one-row statement cost its table about 10k instructions, most of them the statement's own (a
 * one-batch trial made four). Running them after the other records of the stretch changes nothing
 * a write sees: no record reads these tables, each row's trial exists by then (its insert ran at
 * or before its place), and each table gets its rows in the order they came, so the first of a
 * step's values still wins and log segments keep their order. The stretch commits as one, after
 * them. ptrs has room for the batch. */
static int run_gathered(t2__store *st, recbuf *batch, size_t from, size_t to, const t2__store_rec **ptrs)
{
    for (size_t k = 0; k < sizeof GATHERED / sizeof GATHERED[0]; k++) {
        size_t n = 0;
        for (size_t i = from; i < to; i++)
            if (batch->v[i].kind == GATHERED[k]->rec) ptrs[n++] = &batch->v[i];
        int rc = n ? t2__store_insert_recs(st, GATHERED[k], ptrs, n) : T2_OK;
        if (rc) return rc;
    }
    return T2_OK;
}

/* Runs a batch the writer took, its trials' row writes folded first and its row inserts gathered. */
static int run_batch(t2__store *st, recbuf *batch, t2__fold_rows *rows)
{
    for (size_t i = 0; i < batch->n; i++) {
        t2__store_rec *r = &batch->v[i];
        r->s1 = r->o1 == SIZE_MAX ? NULL : batch->text + r->o1;
        r->s2 = r->o2 == SIZE_MAX ? NULL : batch->text + r->o2;
        if (r->kind == T2__REC_UPDATE_TRIAL) {
            r->u.error = r->s1;
            r->u.log_path = r->s2;
        }
    }
    const t2__store_rec **ptrs = malloc((batch->n ? batch->n : 1) * sizeof *ptrs);
    if (!ptrs) return t2_seterr(T2_ENOMEM, "store %s: out of memory running a batch", t2__store_path(st));
    int rc = t2__store_fold(batch->v, batch->n, rows, smaller_of, st);
    size_t from = 0;
    for (size_t i = 0; i < batch->n && !rc; i++) {
        int kind = batch->v[i].kind;
        if (kind == T2__REC_CREATE_TRIAL && (rc = run_creates(st, batch, i, rows))) break;
        if (gathered(kind)) continue;
        if (kind == T2__REC_COMMIT) {
            rc = run_gathered(st, batch, from, i, ptrs);
            from = i + 1;
            if (rc) break;
        }
        rc = run_rec(st, &batch->v[i], rows);
    }
    if (!rc) rc = run_gathered(st, batch, from, batch->n, ptrs);
    free(ptrs);
    return rc;
}

static void *writer_main(void *arg)
{
    t2__store *st = arg;
    struct t2__store_async *a = st->async;
    t2__store_writer_of = st;
    prctl(PR_SET_NAME, "t2exp-store"); /* so top -H and perf tell it from the controller */
    recbuf batch = {0};
    t2__fold_rows rows = {0};
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->stop && !a->q.n) {
            a->sleeping = 1;
            pthread_cond_wait(&a->work, &a->mu);
            a->sleeping = 0;
        }
        if (!a->q.n) break; /* stopped, nothing left */
        /* Take the whole queue; the emptied buffers go back for the next hand-over. */
        recbuf v = a->q;
        a->q = batch;
        batch = v;
        a->busy = 1;
        int skip = atomic_load(&a->failed);
        pthread_mutex_unlock(&a->mu);
        int rc = 0;
        char msg[sizeof a->err_msg] = "";
        t2__fork_gate_enter(); /* (sanitized builds: a fork waits for the batch; fork_gate.h) */
        if (!skip && (rc = run_batch(st, &batch, &rows))) snprintf(msg, sizeof msg, "%s", t2_errmsg());
        t2__fork_gate_leave();
        batch.n = batch.tlen = 0;
        pthread_mutex_lock(&a->mu);
        if (rc && !atomic_load(&a->failed)) {
            a->err_code = rc;
            memcpy(a->err_msg, msg, sizeof msg);
            atomic_store(&a->failed, 1);
        }
        a->busy = 0;
        pthread_cond_broadcast(&a->idle);
    }
    pthread_mutex_unlock(&a->mu);
    recbuf_free(&batch);
    t2__fold_rows_free(&rows);
    return NULL;
}

/* Hands the stage to the writer and wakes it. The queue is empty unless the writer is still busy
 * with the last hand-over: then the stage is appended to it. */
static int publish(struct t2__store_async *a)
{
    recbuf *s = &a->stage;
    if (!s->n) return 0;
    int rc = 0;
    size_t n;
    pthread_mutex_lock(&a->mu);
    if (!a->q.n) {
        recbuf t = a->q;
        a->q = *s;
        *s = t;
        s->n = s->tlen = 0;
    } else if (grow((void **)&a->q.v, &a->q.cap, a->q.n + s->n, sizeof *s->v) ||
               grow((void **)&a->q.text, &a->q.tcap, a->q.tlen + s->tlen, 1)) {
        rc = -1;
    } else {
        for (size_t i = 0; i < s->n; i++) {
            t2__store_rec *r = &a->q.v[a->q.n++];
            *r = s->v[i];
            if (r->o1 != SIZE_MAX) r->o1 += a->q.tlen;
            if (r->o2 != SIZE_MAX) r->o2 += a->q.tlen;
        }
        if (s->tlen) memcpy(a->q.text + a->q.tlen, s->text, s->tlen); /* text is NULL until a string came */
        a->q.tlen += s->tlen;
        s->n = s->tlen = 0;
    }
    n = a->q.n;
    if (a->sleeping) pthread_cond_signal(&a->work);
    pthread_mutex_unlock(&a->mu);
    if (rc) return -1;
    return n >= MAX_QUEUED ? 1 : 0;
}

int t2__store_async_start(t2__store *st)
{
    if (!st || st->readonly) return t2_seterr(T2_EINVAL, "store: a writer thread needs a writable store");
    if (st->async) return T2_OK;
    if (st->explicit_tx) return t2_seterr(T2_ESTATE, "store %s: writer thread started inside begin", st->path);
    struct t2__store_async *a = calloc(1, sizeof *a);
    if (!a) return t2_seterr(T2_ENOMEM, "store: out of memory");
    if (pthread_mutex_init(&a->mu, NULL)) {
        free(a);
        return t2_seterr(T2_ENOMEM, "store: cannot make the writer's mutex");
    }
    atomic_init(&a->failed, 0);
    if (pthread_cond_init(&a->work, NULL)) goto no_cond;
    if (pthread_cond_init(&a->idle, NULL)) goto no_cond2;
    st->async = a;
    /* Without it SQLite checkpoints on the writer, only slower: a failure to start is no error. */
    if (t2__store_ckpt_start(st)) t2_clearerr();
    /* Signals stay the controller's (its poll wakes on them); the thread starts with all blocked. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int err = pthread_create(&a->thread, NULL, writer_main, st);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!err) return T2_OK;
    t2__store_ckpt_stop(st);
    st->async = NULL;
    pthread_cond_destroy(&a->idle);
no_cond2:
    pthread_cond_destroy(&a->work);
no_cond:
    pthread_mutex_destroy(&a->mu);
    free(a);
    return t2_seterr(T2_ENOMEM, "store %s: cannot start the writer thread", st->path);
}

int t2__store_async_wait(t2__store *st)
{
    struct t2__store_async *a = st->async;
    if (!a || t2__store_writer_of == st) return T2_OK;
    int oom = publish(a) < 0;
    pthread_mutex_lock(&a->mu);
    while (a->q.n || a->busy) pthread_cond_wait(&a->idle, &a->mu);
    int code = 0;
    char msg[sizeof a->err_msg];
    if (atomic_load(&a->failed)) {
        code = a->err_code;
        memcpy(msg, a->err_msg, sizeof msg);
        atomic_store(&a->failed, 0);
    }
    pthread_mutex_unlock(&a->mu);
    if (!code && oom) {
        /* The stage could not join a queue the writer was busy with; that queue is empty now, so
         * the stage is swapped in without allocating. */
        if (publish(a) >= 0) return t2__store_async_wait(st);
        code = T2_ENOMEM;
        snprintf(msg, sizeof msg, "store %s: out of memory handing writes to the writer thread", st->path);
    }
    if (!code) return T2_OK;
    /* What was staged after the failed write goes as the writer dropped what it had of them: the
     * calls after a failed one would not have been made. The batch may be gone with the error. */
    a->stage.n = a->stage.tlen = 0;
    a->ids_valid = 0;
    return t2_seterr(code, "%s", msg);
}

int t2__store_async_stop(t2__store *st)
{
    if (!st || !st->async) return T2_OK;
    int rc = t2__store_async_wait(st);
    struct t2__store_async *a = st->async;
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_signal(&a->work);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    t2__store_ckpt_stop(st);
    st->async = NULL;
    recbuf_free(&a->q); /* empty: stop ran the queue first (unless out of memory) */
    recbuf_free(&a->stage);
    pthread_cond_destroy(&a->idle);
    pthread_cond_destroy(&a->work);
    pthread_mutex_destroy(&a->mu);
    free(a);
    return rc;
}

/* Stages a copy of r: only the controller's thread touches the stage. */
static int enqueue(t2__store *st, const t2__store_rec *r, const char *s1, const char *s2)
{
    struct t2__store_async *a = st->async;
    if (atomic_load(&a->failed)) return t2__store_async_wait(st); /* says which write failed */
    recbuf *b = &a->stage;
    if (grow((void **)&b->v, &b->cap, b->n + 1, sizeof *b->v))
        return t2_seterr(T2_ENOMEM, "store %s: out of memory queueing a write", st->path);
    t2__store_rec *q = &b->v[b->n];
    *q = *r;
    q->now = st->clock(st->clock_ud);
    size_t tlen = b->tlen;
    if (put_text(b, s1, &q->o1) || put_text(b, s2, &q->o2)) {
        b->tlen = tlen;
        return t2_seterr(T2_ENOMEM, "store %s: out of memory queueing a write", st->path);
    }
    if (b->n++ == 0) a->staged_ms = t2__store_mono_ms();
    if (b->n < KICK_AT) return T2_OK;
    int full = publish(a);
    return full ? t2__store_async_wait(st) : T2_OK; /* a writer that cannot keep up holds this one back */
}

/* The batch commits in turn: the precommit hook's writes, then the commit record. */
static int queue_commit(t2__store *st)
{
    struct t2__store_async *a = st->async;
    int rc = t2__store_run_precommit(st);
    if (rc) return rc;
    a->pending = 0;
    a->ids_valid = 0;
    t2__store_rec c = {.kind = T2__REC_COMMIT};
    rc = enqueue(st, &c, NULL, NULL);
    if (rc) return rc;
    /* Out of memory (-1), the commit stays staged until the next hand-over takes it. */
    return publish(a) > 0 ? t2__store_async_wait(st) : T2_OK;
}

void t2__store_async_count(t2__store *st)
{
    if (!t2__store_queues(st)) return;
    struct t2__store_async *a = st->async;
    if (a->pending++ == 0) a->opened_ms = t2__store_mono_ms();
}

int t2__store_async_put(t2__store *st, const t2__store_rec *r, const char *s1, const char *s2)
{
    struct t2__store_async *a = st->async;
    int rc = enqueue(st, r, s1, s2);
    if (rc) return rc;
    t2__store_async_count(st);
    if (!st->explicit_tx && !st->group && a->pending >= st->flush_rows) return queue_commit(st);
    return T2_OK;
}

int t2__store_async_flush(t2__store *st)
{
    struct t2__store_async *a = st->async;
    if (atomic_load(&a->failed)) return t2__store_async_wait(st); /* says which write failed */
    if (a->stage.n && t2__store_mono_ms() - a->staged_ms >= STAGE_MS && publish(a) > 0)
        return t2__store_async_wait(st);
    if (!a->pending || st->explicit_tx || st->group) return T2_OK;
    return t2__store_commit_due(st, a->pending, a->opened_ms) ? queue_commit(st) : T2_OK;
}

static const char SQL_NEXT_TRIAL_ID[] =
    "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'trials'), 0),"
    " coalesce((SELECT max(id) FROM trials), 0)) + 1";

int t2__store_async_trial_id(t2__store *st, int64_t *id)
{
    struct t2__store_async *a = st->async;
    if (!a->ids_valid) {
        /* Once per batch: wait for the writer, open the batch here if the commit closed it, and
         * read the next free id inside it (the batch's write lock keeps it ours). */
        int rc;
        sqlite3_stmt *s;
        if ((rc = t2__store_async_wait(st)) || (rc = t2__store_write_begin(st)) ||
            (rc = t2__store_stmt(st, SQL_NEXT_TRIAL_ID, &s)))
            return rc;
        int step = sqlite3_step(s);
        if (step != SQLITE_ROW) {
            rc = t2__store_err(st, step, "read the next trial id");
            sqlite3_reset(s);
            return rc;
        }
        a->next_id = sqlite3_column_int64(s, 0);
        sqlite3_reset(s);
        a->ids_valid = 1;
    }
    *id = a->next_id++;
    return T2_OK;
}

void t2__store_async_tx_ended(t2__store *st)
{
    if (!t2__store_queues(st)) return;
    st->async->ids_valid = 0;
    st->async->pending = 0;
}
