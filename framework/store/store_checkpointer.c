/* store_checkpointer.c — the write-ahead log's checkpoints on a thread of their own.
 *
 * Why: SQLite checkpoints on the commit that finds the log past 1000 pages, copying them into
 * the database file on the committing thread. In a search of short trials that is the writer
 * thread (store_async.c), the serial part of the search: about 2 of its 3.5 ms a commit, 2.6 us a
 * trial on the EPYC VM. While the writer thread runs, the store's connection only notes that the
 * log passed the mark (a WAL hook: no I/O), and this thread checkpoints through a connection of
 * its own. A PASSIVE checkpoint copies what no reader still needs and never blocks the writer, and
 * SQLite lets one run while another connection writes; a log that a long reader holds on to just
 * grows, as it would have with the automatic checkpoint. A checkpoint that fails is left to the
 * next mark (or to the store's TRUNCATE on closing): nothing is lost by skipping one. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include "common/fork_gate.h"
#include "store_internal.h"
#include "t2exp/error.h"

/* SQLite's own automatic checkpoint mark, in pages. */
#define MARK_PAGES 1000

struct t2__store_ckpt {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sqlite3 *db; /* this thread's connection */
    int due, stop;
    int caught_up; /* the last checkpoint copied the whole log */
};

/* The store connection's WAL hook: runs in its commit, on whichever thread committed. */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
    struct t2__store_ckpt *c = arg;
    if (pages < MARK_PAGES) return SQLITE_OK;
    pthread_mutex_lock(&c->mu);
    int tail = c->caught_up;
    c->caught_up = 0;
    if (!tail && !c->due) {
        c->due = 1;
        pthread_cond_signal(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
    /* SQLite starts the log over only at a transaction that begins with all of it copied, and the
     * writer begins its next batch right after this commit: so it copies the few pages committed
     * since the thread's checkpoint itself, here (as the automatic checkpoint would have copied
     * them all), and the log starts over at its next batch instead of growing without end. */
    if (tail) sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return SQLITE_OK;
}

static void *ckpt_main(void *arg)
{
    struct t2__store_ckpt *c = arg;
    prctl(PR_SET_NAME, "t2exp-ckpt");
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->due && !c->stop) pthread_cond_wait(&c->cv, &c->mu);
        if (c->stop) break;
        c->due = 0;
        pthread_mutex_unlock(&c->mu);
        int log = -1, done = -1;
        t2__fork_gate_enter();
        int rc = sqlite3_wal_checkpoint_v2(c->db, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &done);
        t2__fork_gate_leave();
        pthread_mutex_lock(&c->mu);
        c->caught_up = rc == SQLITE_OK && log > 0 && done == log;
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Reads the mode from the file, which also makes the connection see the log: a connection that
 * has read nothing yet takes the database for one without a log and checkpoints nothing. A store
 * on a filesystem without shared memory stays in its old journal mode (store.c), with nothing to
 * checkpoint. */
static int in_wal_mode(sqlite3 *db)
{
    sqlite3_stmt *s = NULL;
    int wal = sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW &&
              sqlite3_stricmp((const char *)sqlite3_column_text(s, 0), "wal") == 0;
    sqlite3_finalize(s);
    return wal;
}

int t2__store_ckpt_start(t2__store *st)
{
    if (st->ckpt) return T2_OK;
    struct t2__store_ckpt *c = calloc(1, sizeof *c);
    if (!c) return t2_seterr(T2_ENOMEM, "store: out of memory");
    if (pthread_mutex_init(&c->mu, NULL)) goto no_mutex;
    if (pthread_cond_init(&c->cv, NULL)) goto no_cond;
    if (sqlite3_open_v2(st->path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
        !in_wal_mode(c->db))
        goto no_db;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* signals stay the controller's */
    int err = pthread_create(&c->thread, NULL, ckpt_main, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) goto no_db;
    st->ckpt = c;
    sqlite3_wal_hook(st->db, wal_hook, c); /* replaces the automatic checkpoint */
    return T2_OK;
no_db:
    sqlite3_close(c->db);
    pthread_cond_destroy(&c->cv);
no_cond:
    pthread_mutex_destroy(&c->mu);
no_mutex:
    free(c);
    return t2_seterr(T2_ENOMEM, "store %s: cannot start the checkpoint thread", st->path);
}

void t2__store_ckpt_stop(t2__store *st)
{
    struct t2__store_ckpt *c = st->ckpt;
    if (!c) return;
    sqlite3_wal_autocheckpoint(st->db, MARK_PAGES); /* the automatic checkpoint again */
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    sqlite3_close(c->db);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
    st->ckpt = NULL;
}
