/* scripted_trial.c — a trial whose metric, weights and failures are known in advance, for the
 * checkpoint-policy and restart tests: a one-layer model on four in-memory samples whose every
 * parameter equals the number of batches trained (so a checkpoint's params.bin says which batch
 * it holds), and whose validation metric "score" is -|batches - peak| (larger is better: it rises
 * to hparam `peak`, then falls). Failures, from the hparams:
 *   fail_marker  a path: build_model fails (T2_ENOTFOUND) while that file exists, removing it
 *                first, so the first attempt fails and a restart succeeds
 *   fail_build   1: build_model always fails (T2_EINVAL)
 *   invalid      1: build_model says the hyperparameters are invalid (T2_EHPARAM)
 *   wait_for     a path: until that file exists, train_batch writes its process id to
 *                <wait_for>.pid and waits (a test kills the process meanwhile)
 *   orphan_until a path: at batch 3, train_batch forks a process (no exec: it holds every
 *                descriptor, the runner's channel too) that waits for that file, and then
 *                aborts: a trial that dies while a helper it forgot still holds its channel
 *                ("": neither does anything)
 *   close_until  a path: at batch 3, train_batch closes every descriptor above stderr (its
 *                runner's channel too) and then waits for that file before it goes on
 *   close_go     1: the same at batch 3, and then it trains on (its runner's next report fails)
 *   slow_ms      train_batch sleeps that many milliseconds (a trial that takes its time)
 *   ignore_term  1: build_model sets SIGTERM to SIG_IGN (a library that installs its own)
 *   kill_marker, kill_at  a path and a batch count: save_state at that batch count SIGKILLs its
 *                own process while that file exists, removing it first (a trial that dies while
 *                it checkpoints, once)
 *   helper_pids  a path: build_model starts a helper that outlives its starter (a shell's
 *                background `sleep`, as a data server or a `system("... &")` would) and appends its
 *                pid to that file
 *   own_state    1: the trial keeps state of its own (0.5 a batch trained) that its score adds,
 *                and leaves it out of its checkpoints, as a trial that forgets to save some of its
 *                model would; 2: the same, saved and loaded with save_state/load_state
 * prepare_data, from the data section: `prepare` segv (it crashes), exit (it calls exit(0)), helper
 * (it forks a process, no exec, that sleeps 60 s: a data server it leaves running) or ignore_term
 * (it ignores SIGTERM, as a library that installs its own handler may);
 * `fail_while` a path: it returns T2_EIO "scripted: no data here" while that file exists;
 * `sleep_while` a path: it waits while that file exists (at most 60 s; a test stops it meanwhile);
 * `prepared` a path it appends a line to each time it returns T2_OK.
 * (T2_ENOTFOUND and T2_EINVAL: the codes a missing or mistyped hyperparameter gives, which the
 * runner once refused to restart.)
 * build_model also counts its calls in a global and prints "scripted: build N in this process" to
 * the trial's log: the state a trial leaves in a worker (resources.isolation, trial_isolation.sh),
 * and then "scripted: pid P", which says which run a piece of a log is, and "scripted: store
 * descriptors N", how many of its descriptors are open on the store's files (the controller's).
 * Built by the tests with the public header only: cc -shared -fPIC -I framework/include. */
#define _XOPEN_SOURCE 700 /* getitimer */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <t2exp.h>
#include "tiny_trial.h"

typedef struct {
    t2_net *net;
    double peak;
    int64_t own_state; /* 0: none; 1: kept, not saved; 2: kept and saved */
    double own;        /* the state of its own: 0.5 a batch trained in this process (or restored) */
} scripted;

static int builds; /* build_model calls in this process: a global, as a user's trial might keep */

/* How many of this process's descriptors are open on a file of the store (t2exp.db, -wal, -shm,
 * -journal, -turns): it should have none of the controller's. */
static int store_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char link[300], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len <= 0) continue;
        target[len] = '\0';
        n += strstr(target, "/t2exp.db") != NULL;
    }
    if (d) closedir(d);
    return n;
}

static int build_model(t2_ctx *ctx, void **state)
{
    printf("scripted: build %d in this process\n", ++builds);
    printf("scripted: pid %ld\n", (long)getpid()); /* which run a piece of the log is */
    printf("scripted: store descriptors %d\n", store_fds()); /* what it inherited of the store */
    fflush(stdout);
    scripted *s = calloc(1, sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "scripted: out of memory");
    *state = s;
    const char *marker = NULL;
    int64_t flag = 0;
    if (t2_hp_str(ctx, "fail_marker", &marker) == T2_OK && access(marker, F_OK) == 0) {
        if (unlink(marker) != 0) return t2_seterr(T2_EIO, "scripted: cannot remove %s", marker);
        return t2_seterr(T2_ENOTFOUND, "scripted: failing once as asked (%s)", marker);
    }
    if (t2_hp_int(ctx, "fail_build", &flag) == T2_OK && flag)
        return t2_seterr(T2_EINVAL, "scripted: failing every time as asked");
    if (t2_hp_int(ctx, "ignore_term", &flag) == T2_OK && flag) signal(SIGTERM, SIG_IGN);
    /* The process state it found (what an earlier trial in its worker left: process_state.c), and
     * with taint, the first trial its process runs leaves it changed for the next (SIGTERM
     * blocked, an alarm, CPU-time timers, SIGPROF ignored, umask 077, 64 open files). */
    {
        sigset_t cur;
        struct itimerval it, vt, prof;
        struct rlimit rl;
        struct sigaction prof_sa;
        sigprocmask(SIG_BLOCK, NULL, &cur);
        getitimer(ITIMER_REAL, &it);
        getitimer(ITIMER_VIRTUAL, &vt);
        getitimer(ITIMER_PROF, &prof);
        sigaction(SIGPROF, NULL, &prof_sa);
        mode_t um = umask(022);
        umask(um);
        getrlimit(RLIMIT_NOFILE, &rl);
        printf("scripted: state term_blocked %d alarm %ld vtimer %ld proftimer %ld prof_ignored %d umask %03o nofile %lld\n",
               sigismember(&cur, SIGTERM), (long)it.it_value.tv_sec, (long)vt.it_value.tv_sec,
               (long)prof.it_value.tv_sec, prof_sa.sa_handler == SIG_IGN, (unsigned)um, (long long)rl.rlim_cur);
        fflush(stdout);
        if (t2_hp_int(ctx, "taint", &flag) == T2_OK && flag && builds == 1) {
            sigset_t term;
            sigemptyset(&term);
            sigaddset(&term, SIGTERM);
            sigprocmask(SIG_BLOCK, &term, NULL);
            alarm(30);
            struct itimerval cpu30 = {{0, 0}, {30, 0}};
            setitimer(ITIMER_VIRTUAL, &cpu30, NULL);
            setitimer(ITIMER_PROF, &cpu30, NULL);
            signal(SIGPROF, SIG_IGN);
            umask(077);
            struct rlimit low = {64, rl.rlim_max};
            setrlimit(RLIMIT_NOFILE, &low);
        }
    }
    const char *helpers = NULL;
    if (t2_hp_str(ctx, "helper_pids", &helpers) == T2_OK) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "sleep 300 </dev/null >/dev/null 2>&1 & echo $! >> '%s'", helpers);
        if (system(cmd) != 0) return t2_seterr(T2_EIO, "scripted: cannot start a helper (%s)", cmd);
    }
    if (t2_hp_int(ctx, "invalid", &flag) == T2_OK && flag)
        return t2_seterr(T2_EHPARAM, "scripted: these hyperparameters are invalid as asked");
    if (t2_hp_double(ctx, "peak", &s->peak) != T2_OK) s->peak = 0.0;
    if (t2_hp_int(ctx, "own_state", &s->own_state) != T2_OK) s->own_state = 0;
    return tiny_net(ctx, &s->net);
}

/* wait_for: says where it is (its pid), then waits for the file. */
static int wait_for(t2_ctx *ctx)
{
    const char *path = NULL;
    if (t2_hp_str(ctx, "wait_for", &path) != T2_OK || access(path, F_OK) == 0) return T2_OK;
    char pidfile[4096];
    snprintf(pidfile, sizeof pidfile, "%s.pid", path);
    FILE *f = fopen(pidfile, "w");
    if (!f) return t2_seterr(T2_EIO, "scripted: cannot write %s", pidfile);
    fprintf(f, "%ld\n", (long)getpid());
    if (fclose(f) != 0) return t2_seterr(T2_EIO, "scripted: cannot write %s", pidfile);
    struct timespec tick = {0, 10 * 1000 * 1000};
    while (access(path, F_OK) != 0) nanosleep(&tick, NULL);
    return T2_OK;
}

/* Waits for the file at path (at most a minute). */
static void wait_file(const char *path)
{
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 6000 && access(path, F_OK) != 0; i++) nanosleep(&tick, NULL);
}

/* orphan_until, close_until and close_go, at batch 3. */
static void misbehave(t2_ctx *ctx)
{
    const char *path = NULL;
    if (t2_ctx_batches_trained(ctx) != 3) return;
    if (t2_hp_str(ctx, "orphan_until", &path) == T2_OK && *path) {
        fflush(NULL);
        if (fork() == 0) {
            wait_file(path);
            _exit(0);
        }
        abort();
    }
    if (t2_hp_str(ctx, "close_until", &path) == T2_OK && *path) {
        for (int fd = 3; fd < 4096; fd++) close(fd);
        wait_file(path);
    }
    int64_t go = 0;
    if (t2_hp_int(ctx, "close_go", &go) == T2_OK && go == 1)
        for (int fd = 3; fd < 4096; fd++) close(fd);
}

static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)b;
    scripted *s = state;
    int rc = wait_for(ctx);
    if (rc) return rc;
    int64_t slow = 0;
    if (t2_hp_int(ctx, "slow_ms", &slow) == T2_OK && slow > 0)
        nanosleep(&(struct timespec){slow / 1000, (long)(slow % 1000) * 1000000L}, NULL);
    misbehave(ctx);
    size_t n = 0;
    float *p = t2_net_params(s->net, &n);
    for (size_t i = 0; i < n; i++) p[i] = (float)(t2_ctx_batches_trained(ctx) + 1);
    if (s->own_state) s->own += 0.5;
    return t2_metric(m, "loss", 1.0);
}

static int evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)b;
    const scripted *s = state;
    return t2_metric(m, "score", -fabs((double)t2_ctx_batches_trained(ctx) - s->peak) + s->own);
}

static int save_state(t2_ctx *ctx, void *state, void **buf, size_t *len)
{
    const scripted *s = state;
    const char *marker = NULL;
    int64_t at = -1;
    if (t2_hp_str(ctx, "kill_marker", &marker) == T2_OK && t2_hp_int(ctx, "kill_at", &at) == T2_OK &&
        t2_ctx_batches_trained(ctx) == at && access(marker, F_OK) == 0 && unlink(marker) == 0)
        raise(SIGKILL);
    *buf = NULL;
    *len = 0;
    if (s->own_state != 2) return T2_OK; /* nothing of its own saved */
    if (!(*buf = malloc(sizeof s->own))) return T2_ENOMEM;
    memcpy(*buf, &s->own, sizeof s->own);
    *len = sizeof s->own;
    return T2_OK;
}

static int load_state(t2_ctx *ctx, void *state, const void *buf, size_t len)
{
    (void)ctx;
    scripted *s = state;
    if (len == sizeof s->own) memcpy(&s->own, buf, len);
    return T2_OK;
}

static void destroy(void *state)
{
    scripted *s = state;
    if (!s) return;
    t2_net_free(s->net);
    free(s);
}

static int prepare_data(t2_ctx *ctx)
{
    const char *mode = "", *path = NULL;
    if (t2_data_str(ctx, "prepare", &mode) != T2_OK) mode = "";
    if (!strcmp(mode, "segv")) raise(SIGSEGV);
    if (!strcmp(mode, "exit")) exit(0);
    if (!strcmp(mode, "ignore_term")) signal(SIGTERM, SIG_IGN);
    if (!strcmp(mode, "helper") && fork() == 0) {
        nanosleep(&(struct timespec){.tv_sec = 60}, NULL);
        _exit(0);
    }
    if (t2_data_str(ctx, "fail_while", &path) == T2_OK && access(path, F_OK) == 0)
        return t2_seterr(T2_EIO, "scripted: no data here");
    if (t2_data_str(ctx, "sleep_while", &path) == T2_OK)
        for (int i = 0; i < 1200 && access(path, F_OK) == 0; i++)
            nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
    if (t2_data_str(ctx, "prepared", &path) == T2_OK) {
        FILE *f = fopen(path, "a");
        if (!f) return t2_seterr(T2_EIO, "scripted: cannot open %s", path);
        fprintf(f, "prepared\n");
        fclose(f);
    }
    return T2_OK;
}

T2_TRIAL(.name = "scripted", .prepare_data = prepare_data, .build_model = build_model, .build_training_loader = build_training_loader,
         .build_validation_loader = build_validation_loader, .train_batch = train_batch,
         .evaluate_batch = evaluate_batch, .save_state = save_state, .load_state = load_state, .destroy = destroy);
