/* lifecycle.c — detached controllers, pause/kill by signal, following a run's or a trial's output
 * (`follow EXP`, `logs EXP.N --follow`: Determined's `det trial logs -f`) (see lifecycle.h). */
#define _GNU_SOURCE /* pidfd syscalls */
#include "lifecycle.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "framework/controller/controller.h"
#include "internal.h"
#include "t2exp/error.h"

static void nap(long ms) { nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL); }

/* What the detached child tells the parent: the experiment's id, and whether its log opened. */
typedef struct {
    int64_t id;
    int log_errno;
} started_msg;

int t2__detach_fork(t2__detach *d, const char *home, int64_t *exp_id, int *child_exit)
{
    int p[2];
    *exp_id = 0;
    *child_exit = 0;
    d->fd = -1;
    int n = snprintf(d->home, sizeof d->home, "%s", home);
    if (n < 0 || (size_t)n >= sizeof d->home) return t2_seterr(T2_EINVAL, "detach: home path too long: %s", home);
    if (pipe2(p, O_CLOEXEC) != 0) return t2_seterr(T2_EIO, "detach: pipe: %s", strerror(errno));
    fflush(NULL); /* nothing buffered may be written twice */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return t2_seterr(T2_EIO, "detach: fork: %s", strerror(e));
    }
    if (pid == 0) {
        close(p[0]);
        d->fd = p[1];
        /* Its own session: no terminal signals (Ctrl-C in the shell, a hangup) reach it. Its
         * stdout and stderr stay the terminal's until the experiment exists, so what goes wrong
         * before that is seen. */
        setsid();
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            close(null);
        }
        return 0;
    }
    close(p[1]);
    started_msg m;
    size_t got = 0;
    while (got < sizeof m) {
        ssize_t r = read(p[0], (char *)&m + got, sizeof m - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(p[0]);
    if (got == sizeof m) {
        *exp_id = m.id;
        if (m.log_errno)
            fprintf(stderr, "warning: experiment %lld: cannot open its controller.log (%s); its output is lost\n",
                    (long long)m.id, strerror(m.log_errno));
        return 1;
    }
    /* The child ended (or closed the pipe) before the experiment started: its status says why. */
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return t2_seterr(T2_EIO, "detach: waitpid: %s", strerror(errno));
    *child_exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (*child_exit == 0) *child_exit = 1;
    return 2;
}

void t2__detach_started(void *arg, int64_t exp_id)
{
    t2__detach *d = arg;
    started_msg m = {.id = exp_id, .log_errno = 0};
    char dir[PATH_MAX];
    int fd = -1;
    if (t2__store_experiment_dir(d->home, exp_id, "controller.log", dir, sizeof dir) == T2_OK)
        fd = open(dir, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    else
        errno = ENAMETOOLONG;
    if (fd < 0) {
        m.log_errno = errno ? errno : EIO;
        fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    }
    fflush(stdout);
    fflush(stderr);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    /* Line by line: `t2exp follow` shows each progress line as it is written. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (d->fd >= 0) {
        ssize_t w;
        do w = write(d->fd, &m, sizeof m);
        while (w < 0 && errno == EINTR);
        /* A short write or EPIPE: the parent is gone, and nobody is left to tell. */
        close(d->fd);
        d->fd = -1;
    }
}

/* A pidfd pins the process: once it is open, a token that still matches proves the signal goes
 * to the controller, not to whoever inherited its pid. Kernels without pidfds (before 5.3) fall
 * back to kill() (sigqueue() with a value) right after the token check. value: NULL for a plain
 * signal, else what a queued signal carries (SI_QUEUE; `kill EXP.N`'s trial id). */
static int send_checked(t2__store *st, int64_t id, int sig, const int64_t *value)
{
    long pid = 0;
    int rc = t2__store_controller(st, id, &pid);
    if (rc < 0) return rc;
    if (rc == 0) return t2_seterr(T2_ESTATE, "experiment %lld is not running (no live controller)", (long long)id);
    union sigval sv = {.sival_ptr = value ? (void *)(intptr_t)*value : NULL};
#ifdef SYS_pidfd_open
    int pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (pfd >= 0) {
        long again = 0;
        siginfo_t si;
        memset(&si, 0, sizeof si);
        si.si_signo = sig;
        si.si_code = SI_QUEUE;
        si.si_pid = getpid();
        si.si_uid = getuid();
        si.si_value = sv;
        rc = t2__store_controller(st, id, &again);
        if (rc == 1 && again == pid && syscall(SYS_pidfd_send_signal, pfd, sig, value ? &si : NULL, 0) != 0)
            rc = errno == ESRCH ? 0 : t2_seterr(T2_EIO, "signal controller %ld: %s", pid, strerror(errno));
        close(pfd);
        if (rc < 0) return rc;
        if (rc == 0 || again != pid)
            return t2_seterr(T2_ESTATE, "experiment %lld is not running (its controller just ended)", (long long)id);
        return T2_OK;
    }
    if (errno == ESRCH) return t2_seterr(T2_ESTATE, "experiment %lld is not running (its controller just ended)", (long long)id);
#endif
    if ((value ? sigqueue((pid_t)pid, sig, sv) : kill((pid_t)pid, sig)) != 0)
        return errno == ESRCH ? t2_seterr(T2_ESTATE, "experiment %lld is not running (its controller just ended)", (long long)id)
                              : t2_seterr(T2_EIO, "signal controller %ld: %s", pid, strerror(errno));
    return T2_OK;
}

int t2__signal_controller(t2__store *st, int64_t exp_id, int sig, double wait_s)
{
    int rc = send_checked(st, exp_id, sig, NULL);
    if (rc) return rc;
    double t0 = t2__now();
    long pid = 0;
    while ((rc = t2__store_controller(st, exp_id, &pid)) == 1) {
        if (t2__now() - t0 > wait_s)
            return t2_seterr(T2_ESTATE, "experiment %lld: its controller (pid %ld) still runs after %.0f s",
                             (long long)exp_id, pid, wait_s);
        nap(100);
    }
    return rc < 0 ? rc : T2_OK;
}

static int trial_ended(int state)
{
    return state == T2__TRIAL_COMPLETED || state == T2__TRIAL_ERRORED || state == T2__TRIAL_CANCELED;
}

/* No controller runs the trial's experiment: the row is marked CANCELED by the user here, and the
 * experiment's next run tells its searcher (trial_kill.c). A resume reads the marks once it has
 * recorded itself as the controller (experiment_resume.c), so a resume that records itself after
 * the second look for a controller below sees the mark, and one recorded before it gets the signal. */
static int kill_offline(t2__store *st, int64_t exp_id, int64_t ordinal, int64_t trial_id, int *state)
{
    t2__experiment_row e;
    int rc = t2__store_get_experiment(st, exp_id, &e);
    if (rc) return rc;
    int done = e.state == T2__EXP_COMPLETED;
    t2__experiment_row_free(&e);
    if (done) return t2_seterr(T2_ESTATE, "experiment %lld is COMPLETED; its trials run no more", (long long)exp_id);
    char why[96];
    t2__trial_killed_reason(exp_id, ordinal, why, sizeof why);
    t2__trial_update u = {.set = T2__TU_STATE | T2__TU_ERROR, .state = T2__TRIAL_CANCELED, .error = why};
    if ((rc = t2__store_update_trial(st, trial_id, &u)) || (rc = t2__store_flush(st, 1))) return rc;
    *state = T2__TRIAL_CANCELED;
    /* send_checked looks for a live controller again: none (T2_ESTATE) is the usual answer. */
    if (send_checked(st, exp_id, T2__SIG_KILL_TRIAL, &trial_id)) t2_clearerr(); /* the mark is what counts */
    return T2_OK;
}

/* Whether a controller runs the experiment (1, 0; negative: store trouble), then the trial's state
 * into *state: in that order, so a state read after the controller was seen gone is its last. */
static int trial_now(t2__store *st, int64_t exp_id, int64_t trial_id, int *state)
{
    long pid;
    t2__trial_row row;
    int live = t2__store_controller(st, exp_id, &pid);
    if (live < 0) return live;
    int rc = t2__store_get_trial(st, trial_id, &row);
    if (rc) return rc;
    *state = row.state;
    t2__trial_row_free(&row);
    return live;
}

int t2__kill_trial(t2__store *st, int64_t trial_id, double wait_s, int *state, int *offline)
{
    t2__trial_row row;
    int rc = t2__store_get_trial(st, trial_id, &row);
    if (rc) return rc;
    int64_t exp_id = row.experiment_id, ordinal = row.ordinal;
    *state = row.state;
    /* A CANCELED trial that `t2exp kill EXP` ended runs again on resume: it may still be killed. */
    int ended = trial_ended(*state) && (*state != T2__TRIAL_CANCELED || t2__trial_killed_by_user(*state, row.error));
    t2__trial_row_free(&row);
    if (ended)
        return t2_seterr(T2_ESTATE, "trial %lld.%lld (id %lld) has already ended: %s", (long long)exp_id,
                         (long long)ordinal, (long long)trial_id, t2__trial_state_name(*state));
    *offline = 0;
    rc = send_checked(st, exp_id, T2__SIG_KILL_TRIAL, &trial_id);
    if (rc == T2_ESTATE) {
        t2_clearerr();
        *offline = 1;
        return kill_offline(st, exp_id, ordinal, trial_id, state);
    }
    if (rc) return rc;
    /* Until the row says it ended (the controller's next commit), or nobody runs it any more. */
    double t0 = t2__now();
    for (;;) {
        int live = trial_now(st, exp_id, trial_id, state);
        if (live < 0) return live;
        if (trial_ended(*state) || !live) return T2_OK;
        if (t2__now() - t0 > wait_s)
            return t2_seterr(T2_ESTATE, "trial %lld.%lld is still %s after %.0f s", (long long)exp_id, (long long)ordinal,
                             t2__trial_state_name(*state), wait_s);
        nap(50);
    }
}

/* Copies what the log gained since *off to out. A log not there (yet) is nothing new. */
static int drain(const char *path, long *off, FILE *out)
{
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT ? T2_OK : t2_seterr(T2_EIO, "follow: %s: %s", path, strerror(errno));
    int rc = T2_OK;
    if (fseek(f, *off, SEEK_SET) != 0) rc = t2_seterr(T2_EIO, "follow: %s: seek: %s", path, strerror(errno));
    char buf[8192];
    size_t n;
    while (!rc && (n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (fwrite(buf, 1, n, out) != n) rc = t2_seterr(T2_EIO, "follow: write: %s", strerror(errno));
        *off += (long)n;
    }
    if (!rc && ferror(f)) rc = t2_seterr(T2_EIO, "follow: %s: read error", path);
    fclose(f);
    if (!rc && fflush(out) != 0) rc = t2_seterr(T2_EIO, "follow: write: %s", strerror(errno));
    return rc;
}

int t2__follow(t2__store *st, int64_t exp_id, FILE *out, int *state)
{
    char path[PATH_MAX];
    long off = 0, pid;
    int rc = t2__store_experiment_dir(t2__store_home_of(st), exp_id, "controller.log", path, sizeof path);
    if (rc) return rc;
    for (;;) {
        /* Liveness first, then the log: whatever the controller wrote before it ended is shown. */
        int live = t2__store_controller(st, exp_id, &pid);
        if (live < 0) return live;
        if ((rc = drain(path, &off, out))) return rc;
        if (!live) break;
        nap(200);
    }
    t2__experiment_row row;
    if ((rc = t2__store_get_experiment(st, exp_id, &row))) return rc;
    *state = row.state;
    t2__experiment_row_free(&row);
    return T2_OK;
}

/* ---- logs EXP.N --follow ---- */

/* Prints the trial's stream past *at (trial_log.c). A segment's bytes never change once written
 * and a new run only adds a segment after the others, so an offset into the stream stays valid as
 * it grows: each round reopens the segments (a restart adds one; a worker's next trial closes the
 * open one) and goes on from where the last round stopped. */
static int drain_trial(t2__store *st, int64_t trial_id, int64_t *at, FILE *out)
{
    t2__trial_log l;
    int rc = t2__trial_log_open(st, trial_id, &l);
    if (rc) return rc;
    rc = t2__trial_log_copy(&l, at, out, NULL);
    t2__trial_log_free(&l);
    if (!rc && fflush(out) != 0) rc = t2_seterr(T2_EIO, "logs: write error");
    return rc;
}

int t2__follow_resolve(t2__store *st, const char *ref, int64_t *trial_id)
{
    char *end;
    long long exp = strtoll(ref, &end, 10);
    for (;;) {
        int rc = t2__store_resolve_trial(st, ref, trial_id);
        if (rc != T2_ENOTFOUND || *end != '.' || end == ref) return rc;
        /* EXP.N of a live run: its row may be in the controller's next commit (a search that makes
         * its trials as it goes, a `create --detach` a moment ago). */
        long pid;
        if (t2__store_controller(st, exp, &pid) != 1) return rc;
        nap(200);
    }
}

int t2__follow_trial(t2__store *st, int64_t trial_id, FILE *out, int *state)
{
    int64_t at = 0, exp_id;
    t2__trial_row row;
    int rc = t2__store_get_trial(st, trial_id, &row);
    if (rc) return rc;
    exp_id = row.experiment_id;
    t2__trial_row_free(&row);
    for (;;) {
        /* Liveness, then the state, then the output: a state read after the controller was seen
         * gone is its last (read before, a trial completed meanwhile ended the follow as RUNNING),
         * and whatever was written before the end is shown. */
        int live = trial_now(st, exp_id, trial_id, state);
        if (live < 0) return live;
        if ((rc = drain_trial(st, trial_id, &at, out))) return rc;
        /* No more output to come: the trial ended for good, or nobody runs its experiment (a pause,
         * a crash: a resume is a new run, to be followed anew). A QUEUED trial of a live controller
         * is waiting for a slot or a restart, and is followed on. */
        if (!live || trial_ended(*state)) return T2_OK;
        nap(200);
    }
}
