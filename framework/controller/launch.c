/* launch.c — a distributed trial's launch as events of the controller's loop.
 *
 * start_distributed (event_loop.c) forks mpirun and records a launch: the trial is LAUNCHING, with
 * its own key and a 60 s deadline. The listening socket is in the loop's poll set; every accepted
 * connection is a caller with its own handshake (channel_auth.h's t2__auth_server, driven by
 * non-blocking reads) and a 5 s deadline. A complete hello names its trial, which picks the
 * launch and so the key; a caller that proves it gets the welcome and the spec, and its connection
 * becomes the trial's channel. Nothing here waits on a caller: a stranger that connects and says
 * nothing (or garbage, or a huge length) costs the loop one accept and one read, never a stall of
 * the other trials' reports or of Ctrl-C. */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ctl.h"
#include "internal.h"
#include "trial_proc.h"

/* TCP keepalive on a rank 0's channel: a host cut off by the network (not dead: its processes run
 * on) sends no end of stream, and the trial waited for Open MPI's own keepalive to notice, 8.5 min
 * with its defaults (probe_L). Silent for 30 s, the kernel asks 6 times 10 s apart: the channel
 * then fails within about 90 s, and the trial with it (its hosts probed, as for any failure). A
 * live peer's kernel answers whatever its trial does. Best effort: where an option is missing, the
 * system's defaults stay. */
static void keep_alive(int s)
{
    int on = 1, idle = 30, intvl = 10, cnt = 6;
    setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
#ifdef TCP_KEEPIDLE
    setsockopt(s, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(s, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(s, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
#endif
#ifdef TCP_USER_TIMEOUT
    /* Keepalive waits while data is unacknowledged (a stop sent to a cut-off rank 0): then this
     * bounds it, where the retransmissions took about 15 min (review 2). */
    unsigned timeout_ms = 90000;
    setsockopt(s, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout_ms, sizeof timeout_ms);
#endif
#ifndef TCP_KEEPIDLE
    (void)idle, (void)intvl, (void)cnt;
#endif
}

/* How long rank 0 has to call back after mpirun is started, and how long any caller has to
 * complete its hello. */
#define LAUNCH_S 60.0
#define HANDSHAKE_S 5.0
/* At most this many handshakes at once: a further caller pushes out the oldest (closed), so a
 * flood of connections costs bounded memory and file descriptors. A flood can so push out a real
 * rank 0 before it says hello (its trial then fails its launch and restarts): the key protects
 * who may drive a trial, not the port's availability (docs/distributed.md). */
#define MAX_CALLERS 64

int t2__ctl_launch_begin(t2__ctl *c, t2__ctl_trial *t, pid_t pid, const unsigned char key[T2__AUTH_KEY_BYTES])
{
    if (c->nlaunch == c->caplaunch) {
        size_t cap = c->caplaunch ? 2 * c->caplaunch : 4;
        t2__launch *g = realloc(c->launch, cap * sizeof *g);
        if (!g) return t2_seterr(T2_ENOMEM, "controller: out of memory");
        c->launch = g;
        c->caplaunch = cap;
    }
    int rc = t2__tt_set_state(&c->tt, t, T2__CTL_LAUNCHING);
    if (rc) return rc;
    t2__launch *l = &c->launch[c->nlaunch++];
    l->trial = (size_t)(t - c->tt.t);
    l->deadline = t2__now() + LAUNCH_S;
    memcpy(l->key, key, sizeof l->key);
    t->pid = pid;
    t->fd = -1;
    t->ready = t->exit_sent = t->pausing = t->leave_stage = 0;
    t->left_at = 0;
    t->sent = -1;
    return T2_OK;
}

static void drop_launch(t2__ctl *c, size_t k)
{
    c->launch[k] = c->launch[--c->nlaunch];
    memset(&c->launch[c->nlaunch], 0, sizeof c->launch[c->nlaunch]); /* no stale key left behind */
}

/* The launch failed (why: the trial's error); mpirun is reaped. The trial is settled as one whose
 * processes never got going: restart, stop or error, as event_loop.c's settle decides. */
static int fail_launch(t2__ctl *c, size_t k, const char *why)
{
    t2__ctl_trial *t = &c->tt.t[c->launch[k].trial];
    drop_launch(c, k);
    t2__ctl_mpirun_gone(t);
    free(t->error);
    t->error = strdup(why);
    t->pid = 0;
    if (t->host_slots && !t->killed && !t2__ctl_interrupted && !c->stopping) {
        /* Its hosts are probed as events of the loop; the probes settle it (host_check.c). */
        int rc = t2__ctl_check_hosts(c, t, -1);
        if (rc || t->probing) return rc;
    }
    t2__ctl_release_slots(c, t);
    return t2__ctl_settle(c, t, -1);
}

static void reap(pid_t p) { t2__reap_group(p, NULL, 0); }

/* Rank 0 proved its key on fd: it gets its spec and fd becomes the trial's channel. */
static int complete(t2__ctl *c, size_t k, int fd)
{
    t2__ctl_trial *t = &c->tt.t[c->launch[k].trial];
    char object[PATH_MAX];
    if (!realpath(c->so.path, object)) snprintf(object, sizeof object, "%s", c->so.path);
    t2__msg spec = {.kind = T2__MSG_SPEC,
                    .u.spec = {.config_yaml = c->cfg->yaml_text, .overrides = c->ovr, .noverrides = (size_t)c->novr,
                               .trial_object = object, .hparams = t->hparams, .trial_id = t->id,
                               .experiment_id = c->exp_id, .seed = t->seed, .threads = t->threads,
                               /* The experiment's P (each rank splits its share of a batch into
                                * it), as for local trials: the threads a rank gets come from the
                                * pool at launch, which a resume on other slots or a host that left
                                * changes; P, and so the numbers, do not. */
                               .parts = c->parts,
                               .ckpt_dir = c->ckpt_dir, .restore_path = t->ckpt ? t->ckpt : c->warm,
                               .warm_start = !t->ckpt && c->warm}};
    /* Blocking from here on, like every trial's channel: the peer is our own rank 0 now, and the
     * spec (the whole config) may be more than a socket buffer holds. */
    int flags = fcntl(fd, F_GETFL);
    int rc = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0
                 ? t2_seterr(T2_EIO, "fcntl: %s", strerror(errno))
                 : t2__msg_send(fd, &spec);
    if (rc) {
        char why[800];
        t2__fmt_fit(why, sizeof why, "cannot send rank 0 its spec: %s", t2_errmsg());
        t2_clearerr();
        close(fd);
        t2__ctl_mpirun_note(t);
        kill(t->pid, SIGTERM);
        reap(t->pid);
        return fail_launch(c, k, why);
    }
    drop_launch(c, k);
    t->fd = fd;
    return t2__ctl_trial_started(c, t);
}

/* A flood of callers (a port scan, an attack) must not flood the output: the first few refusals of
 * each minute are reported one by one, the rest as a count once the minute is over. */
#define REFUSALS_SHOWN_PER_MINUTE 5

/* Reports the refusals not shown one by one, once their minute is over (or at the end: force). */
static void report_hidden_refusals(t2__ctl *c, double now, int force)
{
    if (!c->refusals_hidden || (!force && now - c->refusals_since < 60.0)) return;
    t2__progress_event(&c->prog, "refused %lld more callers on %s within a minute (not shown one by one)",
                       c->refusals_hidden, c->connect_addr);
    c->refusals_hidden = 0;
}

static void refuse(t2__ctl *c, size_t i, const char *why)
{
    t2__caller *r = &c->caller[i];
    double now = t2__now();
    report_hidden_refusals(c, now, 0);
    if (now - c->refusals_since >= 60.0) {
        c->refusals_since = now;
        c->refusals_shown = 0;
    }
    if (c->refusals_shown < REFUSALS_SHOWN_PER_MINUTE) {
        c->refusals_shown++;
        t2__progress_event(&c->prog, "refused a caller on %s: %s", c->connect_addr, why);
    } else {
        c->refusals_hidden++;
    }
    close(r->fd);
    r->fd = -1;
    free(r->auth);
    r->auth = NULL;
}

/* The caller's hello is complete and names trial_id: the launch for it checks the MAC. */
static int on_hello(t2__ctl *c, size_t i, int64_t trial_id)
{
    t2__caller *r = &c->caller[i];
    size_t k = 0;
    while (k < c->nlaunch && c->tt.t[c->launch[k].trial].id != trial_id) k++;
    if (k == c->nlaunch) {
        char why[96];
        t2__fmt_fit(why, sizeof why, "a hello for trial id %lld, which is not being launched", (long long)trial_id);
        refuse(c, i, why);
        return T2_OK;
    }
    if (t2__auth_server_finish(r->auth, r->fd, c->launch[k].key)) {
        char why[600];
        t2__fmt_fit(why, sizeof why, "%s", t2_errmsg());
        t2_clearerr();
        refuse(c, i, why);
        return T2_OK;
    }
    int fd = r->fd;
    r->fd = -1; /* the trial's now */
    free(r->auth);
    r->auth = NULL;
    return complete(c, k, fd);
}

size_t t2__ctl_launch_nfds(const t2__ctl *c) { return (c->listen_fd >= 0) + c->ncaller; }

int t2__ctl_launch_fill(const t2__ctl *c, struct pollfd *pf)
{
    int n = 0;
    for (size_t i = 0; i < c->ncaller; i++) pf[n++] = (struct pollfd){.fd = c->caller[i].fd, .events = POLLIN};
    if (c->listen_fd >= 0) pf[n++] = (struct pollfd){.fd = c->listen_fd, .events = POLLIN};
    return n;
}

static int take_caller(t2__ctl *c, int fd)
{
    if (c->ncaller == MAX_CALLERS) { /* the oldest goes (see MAX_CALLERS) */
        refuse(c, 0, "too many handshakes at once; the oldest is dropped");
        memmove(c->caller, c->caller + 1, (c->ncaller - 1) * sizeof *c->caller);
        c->ncaller--;
    }
    if (c->ncaller == c->capcaller) {
        size_t cap = c->capcaller ? 2 * c->capcaller : 8;
        t2__caller *g = realloc(c->caller, cap * sizeof *g);
        if (!g) {
            close(fd);
            return t2_seterr(T2_ENOMEM, "controller: out of memory");
        }
        c->caller = g;
        c->capcaller = cap;
    }
    t2__caller *r = &c->caller[c->ncaller];
    r->fd = fd;
    r->deadline = t2__now() + HANDSHAKE_S;
    if (!(r->auth = malloc(sizeof *r->auth))) {
        close(fd);
        return t2_seterr(T2_ENOMEM, "controller: out of memory");
    }
    c->ncaller++;
    if (t2__auth_server_start(r->auth, fd)) {
        char why[600];
        t2__fmt_fit(why, sizeof why, "%s", t2_errmsg());
        t2_clearerr();
        refuse(c, c->ncaller - 1, why);
    }
    return T2_OK;
}

int t2__ctl_launch_events(t2__ctl *c, const struct pollfd *pf, int n)
{
    int rc = T2_OK;
    double now = t2__now();
    /* Callers first: pf holds them in c->caller's order (nothing since the poll changed it). */
    for (size_t i = 0; !rc && i < c->ncaller && (int)i < n; i++) {
        t2__caller *r = &c->caller[i];
        if (r->fd < 0 || pf[i].fd != r->fd || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        int64_t trial_id = 0;
        int got = t2__auth_server_read(r->auth, r->fd, &trial_id);
        if (got == T2__AUTH_AGAIN) continue;
        if (got == T2_OK) {
            rc = on_hello(c, i, trial_id);
        } else {
            char why[600];
            t2__fmt_fit(why, sizeof why, "%s", t2_errmsg());
            t2_clearerr();
            refuse(c, i, why);
        }
    }
    for (size_t i = 0; i < c->ncaller; i++)
        if (c->caller[i].fd >= 0 && now > c->caller[i].deadline)
            refuse(c, i, "no complete hello within the handshake's 5 s");
    report_hidden_refusals(c, now, 0);
    size_t keep = 0;
    for (size_t i = 0; i < c->ncaller; i++)
        if (c->caller[i].fd >= 0) c->caller[keep++] = c->caller[i];
    c->ncaller = keep;
    if (rc) return rc;
    /* New callers: at most MAX_CALLERS a round, so a flood cannot keep the loop here. */
    if (c->listen_fd >= 0 && n > 0 && (pf[n - 1].revents & POLLIN))
        for (int k = 0; !rc && k < MAX_CALLERS; k++) {
            int s = accept4(c->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (s < 0 && errno == EINTR) continue;
            if (s < 0) break; /* EAGAIN: none left; anything else: the next round tries again */
            keep_alive(s);
            rc = take_caller(c, s);
        }
    /* Launches whose mpirun died, or whose rank 0 never called back (backwards: fail_launch moves
     * the last launch into the slot it frees). */
    for (size_t k = c->nlaunch; !rc && k-- > 0;) {
        t2__ctl_trial *t = &c->tt.t[c->launch[k].trial];
        int status;
        char why[PATH_MAX + 200], st[96];
        if (t2__reap_group(t->pid, &status, WNOHANG) == t->pid) {
            t2__fmt_fit(why, sizeof why, "mpirun %s before rank 0 called back (see %s)", t2__wait_status_str(status, st, sizeof st), t->log_path);
            rc = fail_launch(c, k, why);
        } else if (now > c->launch[k].deadline) {
            t2__ctl_mpirun_note(t);
            kill(t->pid, SIGTERM);
            reap(t->pid);
            t2__fmt_fit(why, sizeof why, "rank 0 did not call back within 60 s (see %s)", t->log_path);
            rc = fail_launch(c, k, why);
        }
    }
    return rc;
}

int t2__ctl_launch_stop(t2__ctl *c)
{
    int rc = T2_OK;
    for (size_t k = 0; k < c->nlaunch; k++) {
        t2__ctl_trial *t = &c->tt.t[c->launch[k].trial];
        t2__ctl_mpirun_note(t);
        kill(t->pid, SIGTERM);
    }
    while (c->nlaunch > 0) {
        size_t k = c->nlaunch - 1;
        t2__ctl_trial *t = &c->tt.t[c->launch[k].trial];
        char why[96];
        reap(t->pid);
        t2__fmt_fit(why, sizeof why, "stopped during its launch");
        int rc2 = fail_launch(c, k, why);
        if (!rc) rc = rc2;
    }
    return rc;
}

void t2__ctl_report_refusals(t2__ctl *c)
{
    report_hidden_refusals(c, t2__now(), 1);
}

void t2__ctl_launch_free(t2__ctl *c)
{
    for (size_t i = 0; i < c->ncaller; i++) {
        close(c->caller[i].fd);
        free(c->caller[i].auth);
    }
    free(c->caller);
    c->caller = NULL;
    c->ncaller = c->capcaller = 0;
    if (c->launch) memset(c->launch, 0, c->caplaunch * sizeof *c->launch);
    free(c->launch);
    c->launch = NULL;
    c->nlaunch = c->caplaunch = 0;
}
