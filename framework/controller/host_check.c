/* host_check.c — after a trial on the pool failed, which of its hosts still answer; a dead one
 * leaves the pool, and the trial's error says so.
 *
 * Why as loop events: each probe may take its whole 15 s on a host that hangs, and the probes ran
 * one after another inside the loop, so a trial over N hung hosts held every other trial's
 * reports, the launches and Ctrl-C for N x 15 s. Now a trial's probes run side by side while the
 * loop goes on; the trial waits LAUNCHING (no channel, its slots held, so no other trial is given
 * a host that may be dead) and is settled when its last probe is done. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
#include "internal.h"
#include "trial_proc.h"

#define PROBE_S 15.0

int t2__ctl_check_hosts(t2__ctl *c, t2__ctl_trial *t, int status)
{
    t->probing = t->probe_lost = 0;
    t->probe_status = status;
    t->pid = 0; /* reaped by the callers: its pid may be another process's already */
    for (int h = 0; h < c->pool.nhosts; h++) {
        if (!t->host_slots[h] || c->pool.hosts[h].dead) continue;
        t2__probe *p = t2__grow_array(c->probe, &c->capprobe, c->nprobe, sizeof *c->probe, 4);
        if (!p) return t2_seterr(T2_ENOMEM, "controller: out of memory");
        c->probe = p;
        p = &c->probe[c->nprobe];
        /* A probe that cannot start (fork fails) gives no verdict: the host stays, the trial goes on
         * to be settled (an error here left it in the run list, unsettled). */
        if (t2__host_probe_start(&p->p, c->pool.hosts[h].name, PROBE_S, c->cfg->environment.vars,
                                 c->cfg->environment.nvars)) {
            t2__progress_event(&c->prog, "warning: cannot probe host %s: %s", c->pool.hosts[h].name, t2_errmsg());
            t2_clearerr();
            continue;
        }
        p->trial = (size_t)(t - c->tt.t);
        p->host = h;
        c->nprobe++;
        t->probing++;
    }
    if (!t->probing) return T2_OK;
    return t2__tt_set_state(&c->tt, t, T2__CTL_LAUNCHING);
}

/* Host h of trial t did not answer (why): it leaves the pool, and t's error says so. */
static int host_lost(t2__ctl *c, t2__ctl_trial *t, int h, const char *why)
{
    if (!c->pool.hosts[h].dead) {
        t2__pool_kill(&c->pool, h);
        t->probe_lost = 1;
    }
    /* The invalid-hyperparameters mark stays first (reports.c's note_error): a resume reads it.
     * A trial that died without a word keeps how its processes ended beside the host's verdict
     * (a crash read as the host's death otherwise). */
    char ended[128] = "";
    if (!t->error && t->probe_status != -1) {
        char st[96];
        snprintf(ended, sizeof ended, "the trial process %s", t2__wait_status_str(t->probe_status, st, sizeof st));
    }
    const char *old = t->error ? t->error : ended;
    size_t mlen = sizeof T2__INVALID_HPARAMS - 1;
    int mark = t->error && t->invalid_hparams && !strncmp(t->error, T2__INVALID_HPARAMS, mlen);
    char msg[1700];
    t2__fmt_fit(msg, sizeof msg, "%shost %s is unreachable (%s): its %d slot(s) left the pool%s%.1200s",
                mark ? T2__INVALID_HPARAMS : "", c->pool.hosts[h].name, why, c->pool.hosts[h].slots,
                *old ? "; " : "", old + (mark ? mlen : 0));
    t2__progress_event(&c->prog, "trial " T2__TRIAL_FMT ": %s", T2__TRIAL_ARGS(c, t), msg);
    char *e = strdup(msg);
    if (!e) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    free(t->error);
    t->error = e;
    return T2_OK;
}

/* t's probes are done: the pool is sized again if a host left (an error if no trial fits any
 * more), and t is settled as its processes ended. */
static int conclude(t2__ctl *c, t2__ctl_trial *t)
{
    int rc = T2_OK;
    if (t->probe_lost && (rc = t2__ctl_plan(c))) {
        char why[600];
        t2__fmt_fit(why, sizeof why, "%s", t2_errmsg());
        rc = t2_seterr(rc, "%s: too few hosts left: %s", c->pool.origin[0] ? "the Slurm allocation" : "resources.hostfile",
                       why);
    }
    t->probe_lost = 0;
    t2__ctl_release_slots(c, t);
    int rc2 = t2__ctl_settle(c, t, t->probe_status);
    return rc ? rc : rc2;
}

/* Drops probe k (the last one takes its place) and concludes its trial if it was its last. */
static int probe_done(t2__ctl *c, size_t k)
{
    t2__ctl_trial *t = &c->tt.t[c->probe[k].trial];
    c->probe[k] = c->probe[--c->nprobe];
    return --t->probing == 0 ? conclude(c, t) : T2_OK;
}

int t2__ctl_probe_events(t2__ctl *c)
{
    int rc = T2_OK;
    double now = t2__now();
    /* Backwards: probe_done moves the last probe into the place it frees. */
    for (size_t k = c->nprobe; !rc && k-- > 0;) {
        t2__probe *p = &c->probe[k];
        t2__ctl_trial *t = &c->tt.t[p->trial];
        char why[320] = "";
        if (t->killed) {
            /* `t2exp kill` ends it now: whether its hosts answer no longer matters to it. */
            t2__host_probe_stop(&p->p);
            rc = probe_done(c, k);
            continue;
        }
        int alive = t2__host_probe_check(&p->p, now, why, sizeof why);
        if (alive == 2) continue;
        if (!alive && (rc = host_lost(c, t, p->host, why))) break;
        rc = probe_done(c, k);
    }
    return rc;
}

int t2__ctl_probes_stop(t2__ctl *c)
{
    int rc = T2_OK;
    for (size_t k = 0; k < c->nprobe; k++) t2__host_probe_stop(&c->probe[k].p);
    while (c->nprobe > 0) {
        int rc2 = probe_done(c, c->nprobe - 1);
        if (!rc) rc = rc2;
    }
    return rc;
}

void t2__ctl_probes_free(t2__ctl *c)
{
    for (size_t k = 0; k < c->nprobe; k++) t2__host_probe_stop(&c->probe[k].p);
    free(c->probe);
    c->probe = NULL;
    c->nprobe = c->capprobe = 0;
}
