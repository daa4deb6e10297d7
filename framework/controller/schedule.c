/* schedule.c — the controller's scheduling decisions (see schedule.h). Pure: no I/O, no clock. */
#include "schedule.h"
#include "internal.h"

int t2__sched_plan(const t2__sched_limits *l, t2__sched_capacity *out)
{
    /* With a hostfile its slots are the pool, for every trial; without one, the cores here. */
    int pool = l->pool_slots < 0 ? 0 : l->pool_slots > 0 ? l->pool_slots : (l->cores > 0 ? l->cores : 1);
    int slots = l->max_slots > 0 && l->max_slots < pool ? (int)l->max_slots : pool;
    /* What to do about it, too: a real config asking 8 slots was refused with no way out named
     * (probe_K D8; a quarter of Determined's accepted examples ask more than 2). */
    if (slots < l->slots_per_trial && l->pool_slots < 0)
        return t2_seterr(T2_EINVAL, "resources.slots_per_trial = %lld, but every host of the pool has left it (each "
                                    "failed its probe): bring them back, or give another pool",
                         (long long)l->slots_per_trial);
    if (slots < l->slots_per_trial)
        return t2_seterr(T2_EINVAL,
                         "resources.slots_per_trial = %lld, but the slot pool has %d slot(s) (%s): give "
                         "--config resources.slots_per_trial=%d (or fewer), or a pool with more slots "
                         "(resources.hostfile, or run inside a Slurm allocation)",
                         (long long)l->slots_per_trial, slots,
                         l->max_slots > 0 && l->max_slots < pool ? "resources.max_slots"
                         : l->pool_slots > 0                      ? "the pool's hosts"
                                                                  : "this machine's cores",
                         slots);
    int capacity = slots / (int)l->slots_per_trial;
    if (l->max_concurrent_trials > 0 && l->max_concurrent_trials < capacity) capacity = (int)l->max_concurrent_trials;
    if (capacity < 1) capacity = 1;
    /* Fewer trials than the pool holds share it out: 2 trials on 16 cores get 8 threads each. */
    int concurrent = l->expected_trials > 0 && l->expected_trials < capacity ? (int)l->expected_trials : capacity;
    out->slots = slots;
    out->capacity = capacity;
    out->threads = slots / concurrent > 0 ? slots / concurrent : 1;
    /* max_threads_per_trial caps each rank (a single-slot trial is one rank). */
    if (l->max_threads_per_trial > 0 && out->threads > l->max_threads_per_trial * l->slots_per_trial)
        out->threads = (int)(l->max_threads_per_trial * l->slots_per_trial);
    int most = slots / (int)l->slots_per_trial;
    if (l->max_threads_per_trial > 0 && l->max_threads_per_trial < most) most = (int)l->max_threads_per_trial;
    if (most > 64) most = 64;
    out->parts = most > 0 ? most : 1;
    return T2_OK;
}

int t2__sched_share(int slots, int running, int k, int64_t max_threads)
{
    if (running < 1) running = 1;
    int n = slots / running + (k < slots % running ? 1 : 0);
    if (max_threads > 0 && n > max_threads) n = (int)max_threads;
    if (n > 64) n = 64;
    return n > 0 ? n : 1;
}

t2__ctl_trial *t2__sched_next(t2__trial_table *tt)
{
    t2__ctl_trial *best = NULL;
    for (size_t k = 0; k < tt->nspecial; k++) {
        t2__ctl_trial *t = &tt->t[tt->special[k]];
        if (t->state == T2__CTL_QUEUED && t->pending >= 0 && (!best || t->rid < best->rid)) best = t;
    }
    while (tt->sched_from < tt->nt && (tt->t[tt->sched_from].state != T2__CTL_QUEUED || tt->t[tt->sched_from].listed))
        tt->sched_from++;
    for (size_t i = tt->sched_from; i < tt->nt; i++) {
        t2__ctl_trial *t = &tt->t[i];
        if (best && t->rid > best->rid) break;
        if (t->state == T2__CTL_QUEUED && !t->listed && t->pending >= 0) return !best || t->rid < best->rid ? t : best;
        if (t->state == T2__CTL_QUEUED && !t->listed) break; /* the first never-started one has no work yet */
    }
    return best;
}

int t2__sched_startable(const t2__trial_table *tt, int limit)
{
    int n = 0;
    for (size_t k = 0; k < tt->nspecial && n < limit; k++) {
        const t2__ctl_trial *t = &tt->t[tt->special[k]];
        if (t->state == T2__CTL_QUEUED && t->pending >= 0) n++;
    }
    for (size_t i = tt->sched_from; i < tt->nt && n < limit; i++) {
        const t2__ctl_trial *t = &tt->t[i];
        if (t->state != T2__CTL_QUEUED || t->listed) continue;
        if (t->pending < 0) break; /* as t2__sched_next: the first never-started one has no work yet */
        n++;
    }
    return n;
}

t2__feed_action t2__sched_feed(const t2__ctl_trial *t)
{
    if (t->auto_exit) return T2__FEED_NOTHING; /* it leaves by itself; work that came meanwhile waits */
    if (t->state != T2__CTL_RUNNING || (!t->ready && t->pending < 0) || t->sent >= 0 || t->exit_sent)
        return T2__FEED_NOTHING;
    if (t->pending >= 0) return T2__FEED_TRAIN;
    return t->closing ? T2__FEED_EXIT_CLOSE : T2__FEED_EXIT_PAUSE;
}

t2__exit_verdict t2__sched_exit(const t2__ctl_trial *t, const t2__exit_facts *f)
{
    /* A trial that left after a last op's done (auto_exit) left as if asked: closed, it is
     * complete; not (yet) closed, or given more work meanwhile, it is paused like one at a rung. */
    int left = t->exit_sent || (t->auto_exit && t->sent < 0);
    /* Ranks that the controller ended because they hung after the trial left (end_if_stuck) lose
     * nothing either: its work was reported and checkpointed before it left. */
    int ok = (f->exited_ok || f->ended_after_leaving) && left && !t->error;
    /* A kill that came as the trial completed loses nothing: it stays completed. Anything else
     * (a pause at a rung, a restart, the experiment's own stop) gives way to the user's kill. */
    if (ok && !((t->pausing || !t->exit_sent) && !t->closing)) return T2__EXIT_COMPLETED;
    /* Closed by the searcher with all its work done (its last op ended with "done", which the
     * runner sends after the op's checkpoint) and no error: however the process then ended
     * (killed before it left as asked), nothing is lost. A restart would have no op to run and
     * leave it QUEUED for good in a finished experiment (seen by the chaos test). */
    if (t->closing && t->sent < 0 && t->pending < 0 && !t->error) return T2__EXIT_COMPLETED;
    if (t->killed) return T2__EXIT_KILLED;
    if (ok) return T2__EXIT_PAUSED;
    if (f->interrupted) return T2__EXIT_STOPPED; /* stopped by us: it continues on resume */
    if (t->restarts < f->max_restarts && !t->invalid_hparams && !t->fatal) return T2__EXIT_RESTART;
    return T2__EXIT_ERRORED;
}
