/* test_controller_schedule.c — the controller's scheduling decisions without a process: the slot
 * pool's size and threads per trial, which trial starts next, what an idle trial is sent, what
 * becomes of a trial whose process ended, which hostfile slots a distributed trial gets, and the
 * trial table's running and special lists. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "controller/schedule.h"
#include "controller/slot_pool.h"
#include "controller/trial_table.h"
#include "t2exp.h"

static void plan(void)
{
    t2__sched_capacity cap;
    /* 16 cores, single-slot trials, unknown count: 16 at once, one thread each. */
    t2__sched_limits l = {.cores = 16, .slots_per_trial = 1};
    CHECK_OK(t2__sched_plan(&l, &cap));
    CHECK(cap.slots == 16 && cap.capacity == 16 && cap.threads == 1);
    /* Two trials in all share the pool out: 8 threads each. */
    l.expected_trials = 2;
    CHECK_OK(t2__sched_plan(&l, &cap));
    CHECK(cap.capacity == 16 && cap.threads == 8);
    /* max_concurrent_trials caps the concurrency, and the threads follow it. */
    l.expected_trials = 100;
    l.max_concurrent_trials = 3;
    CHECK_OK(t2__sched_plan(&l, &cap));
    CHECK(cap.capacity == 3 && cap.threads == 5);
    /* max_slots shrinks the pool; it never grows it. */
    l.max_concurrent_trials = 0;
    l.max_slots = 4;
    CHECK_OK(t2__sched_plan(&l, &cap));
    CHECK(cap.slots == 4 && cap.capacity == 4);
    l.max_slots = 64;
    CHECK_OK(t2__sched_plan(&l, &cap));
    CHECK(cap.slots == 16);
    /* Distributed trials on a hostfile: its slots are the pool. */
    t2__sched_limits d = {.cores = 2, .pool_slots = 12, .slots_per_trial = 4};
    CHECK_OK(t2__sched_plan(&d, &cap));
    CHECK(cap.slots == 12 && cap.capacity == 3 && cap.threads == 4);
    /* A trial bigger than the pool is a configuration error that says both numbers. */
    d.slots_per_trial = 13;
    CHECK_RC(t2__sched_plan(&d, &cap), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "slots_per_trial = 13") && strstr(t2_errmsg(), "12 slot"));
    /* Every host of the hostfile gone: no slot at all, an error, never the cores here. */
    t2__sched_limits gone = {.cores = 8, .pool_slots = -1, .slots_per_trial = 1};
    CHECK_RC(t2__sched_plan(&gone, &cap), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "every host of the pool has left it") && !strstr(t2_errmsg(), "--config"));
    /* No cores reported: one slot, never zero. */
    t2__sched_limits z = {.cores = 0, .slots_per_trial = 1};
    CHECK_OK(t2__sched_plan(&z, &cap));
    CHECK(cap.slots == 1 && cap.capacity == 1 && cap.threads == 1 && cap.parts == 1);
    /* The parts: the most threads a trial could ever get, capped by max_threads_per_trial. */
    t2__sched_limits p = {.cores = 16, .slots_per_trial = 1, .expected_trials = 100};
    CHECK_OK(t2__sched_plan(&p, &cap));
    CHECK(cap.parts == 16 && cap.threads == 1);
    p.max_threads_per_trial = 6;
    CHECK_OK(t2__sched_plan(&p, &cap));
    CHECK(cap.parts == 6);
    p.expected_trials = 1; /* one trial alone would get all 16: capped */
    CHECK_OK(t2__sched_plan(&p, &cap));
    CHECK(cap.threads == 6 && cap.parts == 6);
    t2__sched_limits d2 = {.cores = 2, .pool_slots = 12, .slots_per_trial = 4};
    CHECK_OK(t2__sched_plan(&d2, &cap));
    CHECK(cap.parts == 3);
}

/* Slots shared among the running trials: floor(slots / running), the first slots % running one
 * more, capped, at least 1. */
static void share(void)
{
    CHECK(t2__sched_share(2, 1, 0, 0) == 2);
    CHECK(t2__sched_share(2, 2, 0, 0) == 1 && t2__sched_share(2, 2, 1, 0) == 1);
    int sum = 0;
    for (int k = 0; k < 3; k++) sum += t2__sched_share(16, 3, k, 0);
    CHECK(sum == 16 && t2__sched_share(16, 3, 0, 0) == 6 && t2__sched_share(16, 3, 2, 0) == 5);
    CHECK(t2__sched_share(16, 1, 0, 4) == 4);   /* max_threads_per_trial */
    CHECK(t2__sched_share(2, 5, 4, 0) == 1);    /* more trials than slots: one thread each */
    CHECK(t2__sched_share(256, 1, 0, 0) == 64); /* t2_set_num_threads's limit */
    CHECK(t2__sched_share(4, 0, 0, 0) == 4);
}

static t2__ctl_trial *add(t2__trial_table *tt, int64_t rid, int64_t pending)
{
    t2__ctl_trial *t = NULL;
    CHECK_OK(t2__tt_add(tt, rid, NULL, (uint64_t)rid, &t));
    t->pending = pending;
    CHECK_OK(t2__tt_note_special(tt, t));
    return t;
}

static void next_and_table(void)
{
    t2__trial_table tt;
    memset(&tt, 0, sizeof tt);
    tt.full_length = 100;
    /* 40 trials queued up front with the full length (the table grows past its first 16). */
    for (int i = 0; i < 40; i++) add(&tt, i, 100);
    CHECK(tt.nt == 40 && tt.nspecial == 0);
    CHECK(t2__tt_find(&tt, 17) == &tt.t[17] && t2__tt_find(&tt, 99) == NULL);
    /* Request order. t2__sched_startable counts what sched_next would hand out, up to its limit. */
    CHECK(t2__sched_startable(&tt, 2) == 2 && t2__sched_startable(&tt, 100) == 40);
    t2__ctl_trial *n = t2__sched_next(&tt);
    CHECK(n && n->rid == 0);
    CHECK_OK(t2__tt_set_state(&tt, &tt.t[0], T2__CTL_RUNNING));
    CHECK_OK(t2__tt_set_state(&tt, &tt.t[1], T2__CTL_RUNNING));
    CHECK(tt.nrun == 2);
    CHECK(t2__sched_startable(&tt, 100) == 38);
    n = t2__sched_next(&tt);
    CHECK(n && n->rid == 2);
    /* Trial 0 fails and is queued again with a restart: it comes before trial 2 (lower id), from
     * the special list. */
    tt.t[0].restarts = 1;
    CHECK_OK(t2__tt_set_state(&tt, &tt.t[0], T2__CTL_QUEUED));
    CHECK(tt.nrun == 1 && tt.nspecial == 1 && tt.t[0].listed);
    n = t2__sched_next(&tt);
    CHECK(n && n->rid == 0);
    CHECK(t2__sched_startable(&tt, 100) == 39); /* the restarted one, then 2..39 */
    /* A paused trial with no work is not startable; it becomes so when the searcher gives it work. */
    CHECK_OK(t2__tt_set_state(&tt, &tt.t[0], T2__CTL_RUNNING));
    tt.t[1].pending = -1;
    CHECK_OK(t2__tt_set_state(&tt, &tt.t[1], T2__CTL_QUEUED));
    n = t2__sched_next(&tt);
    CHECK(n && n->rid == 2);
    CHECK(t2__sched_startable(&tt, 100) == 38); /* not the paused one without work */
    tt.t[1].pending = 300;
    CHECK(t2__sched_startable(&tt, 100) == 39);
    n = t2__sched_next(&tt);
    CHECK(n && n->rid == 1);
    /* Done and errored trials are counted, and never started again. */
    CHECK_OK(t2__tt_set_state(&tt, &tt.t[0], T2__CTL_DONE));
    CHECK_OK(t2__tt_set_state(&tt, &tt.t[1], T2__CTL_ERRORED));
    CHECK(tt.ndone == 2 && tt.nrun == 0);
    t2__tt_prune_special(&tt);
    CHECK(tt.nspecial == 0 && !tt.t[0].listed && !tt.t[1].listed);
    n = t2__sched_next(&tt);
    CHECK(n && n->rid == 2);
    /* A search whose first queued trial has no work yet (ASHA waiting on a rung) starts nothing
     * after it either: never-started trials go in request order. */
    for (size_t i = 2; i < tt.nt; i++) tt.t[i].pending = -1;
    tt.t[30].pending = 100;
    CHECK(t2__sched_next(&tt) == NULL);
    CHECK(t2__sched_startable(&tt, 100) == 0);
    t2__tt_free(&tt);
}

static void feed_and_exit(void)
{
    t2__ctl_trial t;
    memset(&t, 0, sizeof t);
    t.state = T2__CTL_QUEUED;
    t.pending = 100;
    t.sent = -1;
    CHECK(t2__sched_feed(&t) == T2__FEED_NOTHING); /* not running */
    t.state = T2__CTL_RUNNING;
    CHECK(t2__sched_feed(&t) == T2__FEED_TRAIN);  /* before ready: the first op goes out at once */
    t.sent = 100;
    t.pending = -1;
    CHECK(t2__sched_feed(&t) == T2__FEED_NOTHING); /* busy */
    t.sent = -1;
    CHECK(t2__sched_feed(&t) == T2__FEED_NOTHING); /* not ready, nothing pending: wait for ready */
    t.ready = 1;
    CHECK(t2__sched_feed(&t) == T2__FEED_EXIT_PAUSE);
    t.closing = 1;
    CHECK(t2__sched_feed(&t) == T2__FEED_EXIT_CLOSE);
    t.exit_sent = 1;
    CHECK(t2__sched_feed(&t) == T2__FEED_NOTHING);

    t2__exit_facts f = {.exited_ok = 1, .max_restarts = 2};
    memset(&t, 0, sizeof t);
    t.exit_sent = 1;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_COMPLETED);
    t.pausing = 1;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_PAUSED);
    t.closing = 1; /* closed while pausing: done */
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_COMPLETED);
    /* Exit 0 without being told to exit is a failure. */
    t.exit_sent = 0;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_RESTART);
    /* Ranks that hung after the trial left at a rung, ended by the controller: paused, not
     * restarted (an ASHA member lost to a slow MPI_Finalize); hung before it left, restarted. */
    f.exited_ok = 0;
    f.ended_after_leaving = 1;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_RESTART);
    t.exit_sent = 1;
    t.closing = 0;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_PAUSED);
    t.closing = 1;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_COMPLETED);
    f.exited_ok = 1;
    f.ended_after_leaving = 0;
    t.exit_sent = 0;
    /* So is a trial that reported an error, whatever its status. */
    t.exit_sent = 1;
    char err[] = "train_batch: boom";
    t.error = err;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_RESTART);
    t.restarts = 2;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_ERRORED);
    t.restarts = 0;
    t.invalid_hparams = 1;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_ERRORED);
    t.invalid_hparams = 0;
    t.fatal = 1;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_ERRORED);
    /* While the experiment stops, a failure is not a failure: the trial continues on resume. */
    f.interrupted = 1;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_STOPPED);
    t.error = NULL;
    f.exited_ok = 0;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_STOPPED);
    /* Killed by the user (t2exp kill EXP.N): CANCELED for good, even while the experiment stops
     * and with restarts left; but a trial that completed before the kill reached it stays done. */
    t.killed = 1;
    t.fatal = 0;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_KILLED);
    f.interrupted = 0;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_KILLED);
    f.exited_ok = 1;
    t.exit_sent = 1;
    t.pausing = 1; /* left at a rung, not closed: not complete, so the kill wins */
    t.closing = 0;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_KILLED);
    t.pausing = 0;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_COMPLETED);
    f.exited_ok = 0; /* closed with all its work done, then killed on its way out */
    t.closing = 1;
    t.sent = t.pending = -1;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_COMPLETED);

    /* Closed after its last op was done (checkpointed), then killed before it left: completed,
     * not restarted with no work (it would stay QUEUED in a finished experiment), whether or not
     * the exit was sent or the experiment stops. Busy or failed, it is restarted as before. */
    memset(&t, 0, sizeof t);
    f = (t2__exit_facts){.exited_ok = 0, .max_restarts = 2};
    t.closing = 1;
    t.sent = t.pending = -1;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_COMPLETED);
    t.exit_sent = 1;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_COMPLETED);
    f.interrupted = 1;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_COMPLETED);
    f.interrupted = 0;
    t.sent = 64;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_RESTART);
    t.sent = -1;
    t.error = err;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_RESTART);
    t.error = NULL;
    t.closing = 0; /* idle, not closed: the searcher has not decided; it waits QUEUED for work */
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_RESTART);

    /* A trial sent a last op leaves after its done, unasked (auto_exit): no exit is fed to it
     * (work that comes meanwhile waits), and leaving is not a failure: closed, it is complete; not
     * closed, it is paused. Leaving before its done (an op still in flight) fails as ever. */
    memset(&t, 0, sizeof t);
    t.state = T2__CTL_RUNNING;
    t.ready = t.auto_exit = t.closing = 1;
    t.sent = t.pending = -1;
    CHECK(t2__sched_feed(&t) == T2__FEED_NOTHING);
    t.pending = 50;
    CHECK(t2__sched_feed(&t) == T2__FEED_NOTHING);
    f = (t2__exit_facts){.exited_ok = 1, .max_restarts = 2};
    t.pending = -1;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_COMPLETED);
    t.closing = 0;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_PAUSED);
    t.sent = 100;
    CHECK(t2__sched_exit(&t, &f) == T2__EXIT_RESTART);
}

static void pool(void)
{
    t2__host hosts[3] = {{.name = "a", .slots = 4}, {.name = "b", .slots = 2}, {.name = "c", .slots = 4}};
    t2__slot_pool p = {.hosts = hosts, .nhosts = 3, .total = 10};
    int take[3], take2[3];
    CHECK_OK(t2__pool_pick(&p, 6, take));
    CHECK(take[0] == 4 && take[1] == 2 && take[2] == 0);
    CHECK(hosts[0].used == 0); /* picking does not hold */
    t2__pool_hold(&p, take, 1, +1);
    CHECK_OK(t2__pool_pick(&p, 3, take2));
    CHECK(take2[0] == 0 && take2[1] == 0 && take2[2] == 3);
    t2__pool_hold(&p, take2, 1, +1);
    CHECK_RC(t2__pool_pick(&p, 2, take2), T2_ESTATE); /* one free slot left */
    t2__pool_hold(&p, take, 1, -1);
    CHECK_OK(t2__pool_pick(&p, 5, take2));
    CHECK(take2[0] == 4 && take2[1] == 1 && take2[2] == 0);
    CHECK(hosts[2].used == 3);
    /* A dead host's slots leave the pool: picks go around it, and its slots no longer count. */
    t2__slot_pool q = p;
    t2__host hq[3];
    memcpy(hq, hosts, sizeof hq);
    q.hosts = hq;
    t2__pool_kill(&q, 0);
    t2__pool_kill(&q, 0); /* once only */
    CHECK(q.total == 6);
    int take3[3];
    CHECK_OK(t2__pool_pick(&q, 2, take3));
    CHECK(take3[0] == 0 && take3[1] == 2 && take3[2] == 0);
    CHECK_RC(t2__pool_pick(&q, 4, take3), T2_ESTATE);
    /* The trial's own hostfile lists only its hosts, with its slots. */
    char dir[] = "/tmp/t2sched.XXXXXX", path[64], buf[256] = "";
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/h", dir);
    CHECK_OK(t2__pool_write_hostfile(&p, take2, path));
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    CHECK_STR(buf, "a slots=4\nb slots=1\n");
    remove(path);
    remove(dir);
}

/* A trial one host can hold goes there whole, to the host with the most free slots (probe_N: a
 * 2-slot trial on `a slots=1, b slots=2` went over the network as a:1,b:1, and single-slot trials
 * piled onto the first host); its ranks' threads are at most their hosts' free slots (a trial got
 * the whole pool's share: 8 threads on a 4-slot host, and over 64 failed it). */
static void pool_placement(void)
{
    t2__host hosts[2] = {{.name = "a", .slots = 1}, {.name = "b", .slots = 2}};
    t2__slot_pool p = {.hosts = hosts, .nhosts = 2, .total = 3};
    int take[2];
    CHECK_OK(t2__pool_pick(&p, 2, take));
    CHECK(take[0] == 0 && take[1] == 2);
    CHECK(t2__pool_rank_threads(&p, take, 3) == 1); /* 2 free slots for 2 ranks */
    CHECK_OK(t2__pool_pick(&p, 1, take));
    CHECK(take[0] == 0 && take[1] == 1); /* the most free */
    CHECK(t2__pool_rank_threads(&p, take, 3) == 2);
    t2__pool_hold(&p, take, 1, +1);
    CHECK_OK(t2__pool_pick(&p, 1, take)); /* a tie: the first */
    CHECK(take[0] == 1 && take[1] == 0);
    CHECK(t2__pool_rank_threads(&p, take, 3) == 1);
    CHECK(t2__pool_rank_threads(&p, take, 0) == 1); /* never below 1 */
    t2__host big[2] = {{.name = "n1", .slots = 48}, {.name = "n2", .slots = 200}};
    t2__slot_pool q = {.hosts = big, .nhosts = 2, .total = 248};
    int tq[2];
    CHECK_OK(t2__pool_pick(&q, 1, tq));
    CHECK(tq[0] == 0 && tq[1] == 1);
    CHECK(t2__pool_rank_threads(&q, tq, 248) == T2__MAX_RANK_THREADS); /* t2_set_num_threads refused more */
    tq[0] = 1, tq[1] = 0;
    CHECK(t2__pool_rank_threads(&q, tq, 96) == 48);
    /* Threads handed out count, not only slots: on a:8, b:1 three trials of the pool's share (3)
     * took 9 threads on a's 8 slots while b sat idle (review). */
    t2__host ab[2] = {{.name = "a", .slots = 8}, {.name = "b", .slots = 1}};
    t2__slot_pool r = {.hosts = ab, .nhosts = 2, .total = 9};
    int tr[2], given = 0;
    for (int k = 0; k < 3; k++) {
        CHECK_OK(t2__pool_pick(&r, 1, tr));
        int n = t2__pool_rank_threads(&r, tr, 3);
        t2__pool_hold(&r, tr, n, +1);
        given += tr[0] ? n : 0;
    }
    CHECK(given <= 8 && ab[0].threads <= 8);
    CHECK(ab[0].used + ab[1].used == 3);
}

int main(void)
{
    plan();
    share();
    next_and_table();
    feed_and_exit();
    pool();
    pool_placement();
    return check_report("test_controller_schedule");
}
