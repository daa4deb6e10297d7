/* run.c — `t2exp pipeline run`: the executor around the pure plan (plan.h).
 *
 * One process owns the run: it holds the flow's lock (HOME/pipelines/NAME.lock), checks stages as
 * the plan asks, forks each stage that must run as a child of its own (so stages run in parallel
 * and a crashing stage cannot take the pipeline down) and is the only writer of the pipeline's
 * store records. Children die with it (PR_SET_PDEATHSIG): a SIGKILLed run leaves no live
 * controller behind, so the next run can resume the experiment it was running. */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cache.h"
#include "common/internal.h"
#include "configs/config.h"
#include "controller/trial_proc.h"
#include "hash.h"
#include "plan.h"
#include "run.h"
#include "stage_experiment.h"
#include "store/store_pipeline.h"
#include "t2exp/error.h"

#define PIPE_MAX (16 << 20) /* what a stage's child may report back (its result JSON) */
#define STOP_GRACE_S 60.0   /* after SIGTERM, how long stages get to stop (experiments pause) */

typedef struct stage_rt {
    pid_t pid;     /* 0: not running */
    int fd;        /* read end of the child's report pipe, -1: closed */
    int64_t row;   /* its stage_runs row */
    double t0;
    t2__stage_check chk;
    int checked;
    t2__val *result; /* what ${stage.*} resolves to */
    char *buf;
    size_t n;
    int64_t exp_id;
    char log[4400];
} stage_rt;

typedef struct runner {
    const t2__flow *f;
    t2__store *st;
    t2__plan *plan;
    stage_rt *rt;
    int64_t run_id;
    char home[4096], dir[4200];
    FILE *out;
    int lock_fd;
    size_t skipped;
} runner;

static volatile sig_atomic_t g_stop, g_suspend;
static int g_wake[2] = {-1, -1};

static void on_signal(int sig)
{
    int e = errno;
    if (sig == SIGTSTP) g_suspend = 1;
    else if (sig != SIGCHLD) g_stop = g_stop ? 2 : 1;
    if (g_wake[1] >= 0) {
        ssize_t w = write(g_wake[1], "x", 1);
        (void)w; /* a full pipe already wakes the loop */
    }
    errno = e;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const t2__val *lookup(void *ud, size_t i) { return ((runner *)ud)->rt[i].result; }

static void say(runner *r, const char *stage, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void say(runner *r, const char *stage, const char *fmt, ...)
{
    char msg[1500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    t2__store_printable(msg, strlen(msg));
    fprintf(r->out, "  %-16s %s\n", stage, msg);
    fflush(r->out);
}

/* ---- the child ----------------------------------------------------------------------------- */

static void child_started(void *arg, int64_t exp_id)
{
    char line[64];
    int n = snprintf(line, sizeof line, "E %lld\n", (long long)exp_id);
    ssize_t w = write(*(int *)arg, line, (size_t)n);
    (void)w; /* the parent reads the id from the store's stage row too late otherwise; best effort */
}

/* {"experiment_id": N, "completed": 0|1, "best": {"trial_id", "metric", "checkpoint", "hparams"}} */
static char *result_json(const t2__exp_stage_result *res)
{
    t2__val *v = t2__val_map(), *best = t2__val_map();
    int rc = v && best ? 0 : T2_ENOMEM;
    if (!rc) rc = t2__val_map_set(v, "experiment_id", t2__val_int(res->experiment_id));
    if (!rc) rc = t2__val_map_set(v, "completed", t2__val_bool(res->completed != 0));
    if (!rc && res->best_trial_id > 0) {
        rc = t2__val_map_set(best, "trial_id", t2__val_int(res->best_trial_id));
        if (!rc && isfinite(res->best_metric)) rc = t2__val_map_set(best, "metric", t2__val_double(res->best_metric));
        if (!rc && res->best_checkpoint[0])
            rc = t2__val_map_set(best, "checkpoint", t2__val_stringn(res->best_checkpoint,
                                                                      strnlen(res->best_checkpoint, 64)));
        t2__val *hp = NULL;
        if (!rc && res->best_hparams_json &&
            t2__val_from_json(res->best_hparams_json, strlen(res->best_hparams_json), &hp, NULL) == 0)
            rc = t2__val_map_set(best, "hparams", hp);
    }
    if (!rc) {
        rc = t2__val_map_set(v, "best", best);
        best = NULL;
    }
    char *json = NULL;
    if (!rc) rc = t2__val_to_json(v, &json, NULL);
    t2__val_free(v);
    t2__val_free(best);
    return rc ? NULL : json;
}

/* The stage's supervisor, in the stage's process group: PR_SET_PDEATHSIG only reaches a direct
 * child, so a command's own children (sh -c's, mpirun's) or an experiment's trial processes would
 * outlive a SIGKILLed pipeline. This process stays between the pipeline and the stage's work:
 * when the pipeline dies it gets SIGUSR1 and kills the whole group; SIGTERM (the pipeline
 * stopping) it passes on to the work; otherwise it waits for the work and ends the way it did. */
static volatile pid_t g_work;

static void kill_group(int sig)
{
    (void)sig;
    kill(0, SIGKILL);
}

static void pass_term(int sig)
{
    (void)sig;
    if (g_work > 0) kill(g_work, SIGTERM);
}

/* Returns in the process that does the stage's work; the supervisor never returns. */
static void supervise(const char *stage)
{
    struct sigaction sa = {.sa_handler = kill_group};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    if (prctl(PR_SET_PDEATHSIG, SIGUSR1) != 0) _exit(125);
    pid_t work = fork();
    if (work < 0) {
        fprintf(stderr, "t2exp pipeline: stage %s: cannot fork: %s\n", stage, strerror(errno));
        _exit(125);
    }
    if (work == 0) {
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigemptyset(&dfl.sa_mask);
        sigaction(SIGUSR1, &dfl, NULL);
        prctl(PR_SET_PDEATHSIG, 0);
        return;
    }
    g_work = work;
    struct sigaction term = {.sa_handler = pass_term};
    sigemptyset(&term.sa_mask);
    sigaction(SIGTERM, &term, NULL);
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, NULL);
    int status;
    while (waitpid(work, &status, 0) < 0)
        if (errno != EINTR) _exit(125);
    if (WIFSIGNALED(status)) { /* end by the same signal, so the pipeline reports it */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigemptyset(&dfl.sa_mask);
        sigaction(WTERMSIG(status), &dfl, NULL);
        raise(WTERMSIG(status));
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 125);
}

static void child_main(runner *r, size_t i, int logfd, int wfd, pid_t parent, int64_t prev)
{
    const t2__flow_stage *s = &r->f->stages[i];
    /* Its own process group: the terminal's Ctrl-C reaches the pipeline only, which stops the
     * stages itself, and a command stage's whole tree can be signalled at once. */
    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(125);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGINT, &dfl, NULL);
    sigaction(SIGTERM, &dfl, NULL);
    sigaction(SIGCHLD, &dfl, NULL);
    sigaction(SIGPIPE, &dfl, NULL);
    sigaction(SIGTSTP, &dfl, NULL); /* the pipeline's handler wakes the pipeline, not this */
    close(r->lock_fd);
    close(g_wake[0]);
    close(g_wake[1]);
    if (dup2(logfd, STDOUT_FILENO) < 0 || dup2(logfd, STDERR_FILENO) < 0) _exit(125);
    close(logfd);
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) {
        dup2(nul, STDIN_FILENO);
        close(nul);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (chdir(r->f->dir) != 0) {
        fprintf(stderr, "t2exp pipeline: stage %s: cannot enter %s: %s\n", s->name, r->f->dir, strerror(errno));
        _exit(126);
    }
    supervise(s->name);
    char **argv = r->rt[i].chk.argv;
    if (s->kind == T2__STAGE_COMMAND) {
        /* A shell command's reference values go in the environment, and its text names them
         * (flow_shell.c); the log says which variable holds which reference. */
        const t2__shell_cmd *sh = &r->rt[i].chk.sh;
        if (sh->text) {
            printf("t2exp pipeline: stage %s: /bin/sh -c %s\n", s->name, sh->text);
            for (size_t k = 0; k < sh->n; k++) {
                printf("t2exp pipeline: stage %s: T2EXP_REF_%zu = %s\n", s->name, k + 1, sh->ref[k]);
                if (putenv(sh->env[k]) != 0) { /* the string stays ours: this process only execs */
                    fprintf(stderr, "t2exp pipeline: stage %s: cannot set T2EXP_REF_%zu: %s\n", s->name, k + 1,
                            strerror(errno));
                    _exit(125);
                }
            }
            fflush(stdout);
        }
        /* mpirun -x passes each variable on to ranks on other hosts too. */
        size_t cap = 16 + s->argc + 2 * sh->n;
        const char **v = malloc(cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "t2exp pipeline: stage %s: out of memory\n", s->name);
            _exit(125);
        }
        char np[32];
        size_t n = 0;
        if (s->slots > 0) {
            /* As the controller launches distributed trials (trial_mpi.c): the pool counted the
             * slots, so on one machine mpirun may place more ranks than it thinks are cores. */
            snprintf(np, sizeof np, "%lld", (long long)s->slots);
            v[n++] = "mpirun";
            v[n++] = "-np";
            v[n++] = np;
            if (s->hostfile) {
                v[n++] = "--hostfile";
                v[n++] = s->hostfile;
            } else {
                v[n++] = "--oversubscribe";
            }
            if (geteuid() == 0) v[n++] = "--allow-run-as-root";
            for (size_t k = 0; k < sh->n; k++) {
                const char *eq = strchr(sh->env[k], '=');
                char *name = eq ? strndup(sh->env[k], (size_t)(eq - sh->env[k])) : NULL;
                if (!name) {
                    fprintf(stderr, "t2exp pipeline: stage %s: out of memory\n", s->name);
                    _exit(125);
                }
                v[n++] = "-x";
                v[n++] = name; /* the name only: the value stays out of mpirun's argv */
            }
        }
        if (s->shell) {
            v[n++] = "/bin/sh";
            v[n++] = "-c";
        }
        if (sh->text) v[n++] = sh->text;
        else
            for (size_t k = 0; k < s->argc; k++) v[n++] = argv[k];
        v[n] = NULL;
        execvp(v[0], (char *const *)v);
        fprintf(stderr, "t2exp pipeline: stage %s: cannot run %s: %s\n", s->name, v[0], strerror(errno));
        _exit(127);
    }
    t2__exp_stage_spec spec = {
        .config_path = s->config, .trial_path = s->trial, .hyperparameters = r->rt[i].chk.hparams,
        .home = r->home, .previous_experiment_id = prev, .log = stdout,
        .on_started = child_started, .on_started_arg = &wfd,
    };
    t2__exp_stage_result res;
    memset(&res, 0, sizeof res);
    int rc = t2__exp_stage_run(&spec, &res);
    if (rc < 0) {
        fprintf(stderr, "t2exp pipeline: stage %s: %s\n", s->name, t2_errmsg());
    } else {
        char *json = result_json(&res);
        if (!json) {
            fprintf(stderr, "t2exp pipeline: stage %s: cannot write its result (out of memory)\n", s->name);
            rc = -1;
        } else {
            size_t len = strlen(json) + 3;
            char *line = malloc(len);
            if (line) {
                snprintf(line, len, "R %s\n", json);
                for (size_t off = 0; off < len - 1;) {
                    ssize_t w = write(wfd, line + off, len - 1 - off);
                    if (w < 0 && errno == EINTR) continue;
                    if (w <= 0) break;
                    off += (size_t)w;
                }
            }
            free(line);
            free(json);
        }
    }
    t2__exp_stage_result_free(&res);
    fflush(stdout);
    fflush(stderr);
    _exit(rc == 0 ? 0 : rc == 1 ? 1 : 2); /* no atexit handlers: they belong to the pipeline */
}

/* ---- the parent --------------------------------------------------------------------------- */

/* Lines the child sent: "E <experiment id>" once the experiment exists, "R <json>" at the end. */
static void read_reports(runner *r, size_t i, int final)
{
    stage_rt *rt = &r->rt[i];
    char chunk[65536];
    while (rt->fd >= 0) {
        ssize_t got = read(rt->fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno == EAGAIN && !final) return;
        if (got <= 0) {
            close(rt->fd);
            rt->fd = -1;
            break;
        }
        if (rt->n + (size_t)got > PIPE_MAX) continue; /* a runaway child: keep what fits */
        char *g = realloc(rt->buf, rt->n + (size_t)got + 1);
        if (!g) continue;
        rt->buf = g;
        memcpy(rt->buf + rt->n, chunk, (size_t)got);
        rt->n += (size_t)got;
        rt->buf[rt->n] = '\0';
        /* The id as soon as it comes: a run killed now can still resume that experiment. */
        char *e = strstr(rt->buf, "E ");
        if (!rt->exp_id && e == rt->buf && strchr(e, '\n')) {
            rt->exp_id = strtoll(e + 2, NULL, 10);
            if (rt->exp_id > 0) {
                if (t2__store_stage_run_set_experiment(r->st, rt->row, rt->exp_id))
                    fprintf(stderr, "t2exp pipeline: %s\n", t2_errmsg());
                say(r, r->f->stages[i].name, "experiment %lld", (long long)rt->exp_id);
            }
        }
    }
}

/* The "R" line's JSON, or NULL. */
static const char *reported_result(stage_rt *rt)
{
    if (!rt->buf) return NULL;
    char *p = rt->buf;
    while (p && *p) {
        if (p[0] == 'R' && p[1] == ' ') {
            char *nl = strchr(p, '\n');
            if (nl) *nl = '\0';
            return p + 2;
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return NULL;
}

static void hashes_of(const stage_rt *rt, t2__stage_run_hashes *h)
{
    h->input_hash = rt->checked ? rt->chk.h.total : NULL;
    h->def_hash = rt->checked ? rt->chk.h.def : NULL;
    h->refs_hash = rt->checked ? rt->chk.h.refs : NULL;
    h->inputs_json = rt->checked ? rt->chk.inputs_json : NULL;
}

static int do_check(runner *r, size_t i)
{
    const t2__flow_stage *s = &r->f->stages[i];
    stage_rt *rt = &r->rt[i];
    t2__stage_run_row last;
    int rc = t2__store_last_stage_run(r->st, r->f->name, s->name, 1, &last);
    if (rc && rc != T2_ENOTFOUND) return rc;
    int have = rc == 0;
    rc = t2__stage_check_run(r->f, i, lookup, r, have ? &last : NULL, &rt->chk);
    if (rc == T2_ESTOPPED && g_stop) {
        /* Ctrl-C or SIGTERM while its inputs were hashed: not a failure of the stage. It stays
         * being checked, which the loop's t2__plan_stop turns into CANCELED. */
        if (have) t2__stage_run_row_free(&last);
        return 0;
    }
    if (rc) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", t2_errmsg());
        /* The record keeps "stage NAME: ..."; the progress line has the name in its first column. */
        size_t pl = strlen(s->name) + 8;
        say(r, s->name, "failed: %s", !strncmp(msg, "stage ", 6) && strlen(msg) > pl ? msg + pl : msg);
        rc = t2__store_stage_run_add(r->st, r->run_id, s->name, "FAILED", NULL, NULL, NULL, msg, NULL);
        if (have) t2__stage_run_row_free(&last);
        t2__plan_check_failed(r->plan, i);
        return rc;
    }
    rt->checked = 1;
    if ((rc = t2__plan_checked(r->plan, i, rt->chk.up_to_date))) goto done;
    if (t2__plan_state(r->plan, i) == T2__PS_SKIPPED) {
        /* Its results are the ones of the run it is up to date with. */
        if (last.result_json && t2__val_from_json(last.result_json, strlen(last.result_json), &rt->result, NULL))
            rt->result = NULL;
        t2__stage_run_hashes h;
        hashes_of(rt, &h);
        int64_t row = 0;
        rc = t2__store_stage_run_add(r->st, r->run_id, s->name, "SKIPPED", &h, last.log_path, last.result_json, NULL,
                                     &row);
        if (!rc && last.experiment_id) rc = t2__store_stage_run_set_experiment(r->st, row, last.experiment_id);
        r->skipped++;
        say(r, s->name, "up to date");
    } else if (rt->chk.up_to_date) {
        say(r, s->name, "reruns (forced, or a stage it depends on ran)");
    } else {
        say(r, s->name, "stale: %s", rt->chk.why);
    }
done:
    if (have) t2__stage_run_row_free(&last);
    return rc;
}

/* The experiment an earlier, interrupted run of this stage started, when it was started for the
 * same hashes (a changed definition or input starts afresh). */
static int64_t resumable(runner *r, size_t i)
{
    t2__stage_run_row last;
    if (t2__store_last_stage_run(r->st, r->f->name, r->f->stages[i].name, 2, &last)) return 0;
    int64_t id = 0;
    if (!strcmp(last.state, "INTERRUPTED") && last.experiment_id > 0 && last.input_hash &&
        !strcmp(last.input_hash, r->rt[i].chk.h.total))
        id = last.experiment_id;
    t2__stage_run_row_free(&last);
    return id;
}

static int do_start(runner *r, size_t i)
{
    const t2__flow_stage *s = &r->f->stages[i];
    stage_rt *rt = &r->rt[i];
    snprintf(rt->log, sizeof rt->log, "%s/%s.log", r->dir, s->name);
    int64_t prev = s->kind == T2__STAGE_EXPERIMENT ? resumable(r, i) : 0;
    t2__stage_run_hashes h;
    hashes_of(rt, &h);
    int rc = t2__store_stage_run_add(r->st, r->run_id, s->name, "RUNNING", &h, rt->log, NULL, NULL, &rt->row);
    if (rc) return rc;
    /* 0600: a stage's output is the user's alone. */
    int logfd = open(rt->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600), p[2] = {-1, -1};
    const char *err = NULL;
    char msg[1100];
    if (logfd < 0) err = "cannot open its log";
    else if (pipe2(p, O_CLOEXEC) != 0) err = "cannot make a pipe";
    pid_t pid = -1;
    if (!err) {
        fflush(NULL); /* the child must not write the parent's buffers a second time */
        pid = fork();
        if (pid < 0) err = "cannot fork";
    }
    if (pid == 0) {
        close(p[0]);
        child_main(r, i, logfd, p[1], getppid(), prev);
    }
    if (err) {
        snprintf(msg, sizeof msg, "%s: %s", err, strerror(errno));
        if (logfd >= 0) close(logfd);
        if (p[0] >= 0) close(p[0]), close(p[1]);
        say(r, s->name, "failed: %s", msg);
        t2__plan_finished(r->plan, i, 0);
        return t2__store_stage_run_end(r->st, rt->row, "FAILED", INT32_MIN, NULL, msg);
    }
    close(logfd);
    close(p[1]);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    rt->pid = pid;
    rt->fd = p[0];
    rt->t0 = now_s();
    if (prev) say(r, s->name, "started, resuming experiment %lld (log %s)", (long long)prev, rt->log);
    else say(r, s->name, "started (log %s)", rt->log);
    return 0;
}

static int do_block(runner *r, size_t i, size_t cause)
{
    char msg[300];
    snprintf(msg, sizeof msg, "not run: stage %s, which it depends on, failed", r->f->stages[cause].name);
    say(r, r->f->stages[i].name, "blocked (%s failed)", r->f->stages[cause].name);
    return t2__store_stage_run_add(r->st, r->run_id, r->f->stages[i].name, "BLOCKED", NULL, NULL, NULL, msg, NULL);
}

static int do_finish(runner *r, size_t i, int status)
{
    const t2__flow_stage *s = &r->f->stages[i];
    stage_rt *rt = &r->rt[i];
    read_reports(r, i, 1);
    rt->pid = 0;
    double took = now_s() - rt->t0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : INT32_MIN;
    const char *res = s->kind == T2__STAGE_EXPERIMENT ? reported_result(rt) : NULL;
    char err[8192] = "", how[128];
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (s->kind == T2__STAGE_EXPERIMENT && code == 1)
            snprintf(err, sizeof err, "experiment %lld did not complete (see %s)", (long long)rt->exp_id, rt->log);
        else snprintf(err, sizeof err, "%s (see %s)", t2__wait_status_str(status, how, sizeof how), rt->log);
    } else if (s->kind == T2__STAGE_EXPERIMENT && !res) {
        snprintf(err, sizeof err, "reported no result (see %s)", rt->log);
    } else if (t2__stage_outputs_ok(r->f, i)) {
        snprintf(err, sizeof err, "%s", t2_errmsg());
    }
    if (res && !err[0] && t2__val_from_json(res, strlen(res), &rt->result, NULL)) {
        rt->result = NULL;
        snprintf(err, sizeof err, "reported a result that is not JSON (see %s)", rt->log);
    }
    int ok = !err[0];
    const char *state = ok ? "SUCCEEDED" : g_stop ? "INTERRUPTED" : "FAILED";
    if (ok) say(r, s->name, "succeeded in %.2f s", took);
    else say(r, s->name, "%s after %.2f s: %s", g_stop ? "interrupted" : "failed", took, err);
    t2__plan_finished(r->plan, i, ok);
    return t2__store_stage_run_end(r->st, rt->row, state, code, res, ok ? NULL : err);
}

/* SIGTERM to every running stage: a command stage's whole process group, an experiment stage's
 * controller only, through its supervisor (it pauses: its trials checkpoint, and the next run
 * resumes it). SIGKILL: every stage's whole group. */
static void stop_children(runner *r, int sig)
{
    for (size_t i = 0; i < r->f->n; i++) {
        pid_t pid = r->rt[i].pid;
        if (pid <= 0) continue;
        if (sig == SIGKILL || r->f->stages[i].kind == T2__STAGE_COMMAND) kill(-pid, sig);
        else kill(pid, sig);
    }
}

/* Ctrl-Z: every stage runs in a process group of its own, which the terminal's SIGTSTP does not
 * reach, so the pipeline passes it on as a shell does for a job: each running stage's group gets
 * SIGTSTP (an experiment stage's controller stops its trials and itself, a command stops), the
 * pipeline stops itself, and once continued (fg, bg) each group gets SIGCONT. */
static void suspend(runner *r)
{
    g_suspend = 0;
    for (size_t i = 0; i < r->f->n; i++)
        if (r->rt[i].pid > 0) kill(-r->rt[i].pid, SIGTSTP);
    t2__stop_self();
    for (size_t i = 0; i < r->f->n; i++)
        if (r->rt[i].pid > 0) kill(-r->rt[i].pid, SIGCONT);
}

static int reap(runner *r)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0) return 0;
        for (size_t i = 0; i < r->f->n; i++)
            if (r->rt[i].pid == pid) {
                int rc = do_finish(r, i, status);
                if (rc) return rc;
            }
    }
}

static int running(const runner *r)
{
    for (size_t i = 0; i < r->f->n; i++)
        if (r->rt[i].pid > 0) return 1;
    return 0;
}

static int loop(runner *r)
{
    t2__plan_op *ops = calloc(r->f->n, sizeof *ops);
    struct pollfd *pf = calloc(r->f->n + 1, sizeof *pf);
    size_t *who = calloc(r->f->n + 1, sizeof *who);
    int rc = ops && pf && who ? 0 : t2_seterr(T2_ENOMEM, "pipeline: out of memory");
    int stopping = 0;
    double stop_at = 0;
    while (!rc) {
        if (g_suspend) suspend(r);
        if (g_stop && !stopping) {
            stopping = 1;
            stop_at = now_s();
            fprintf(r->out, "pipeline %s: stopping (the running stages get SIGTERM)\n", r->f->name);
            t2__plan_stop(r->plan);
            stop_children(r, SIGTERM);
        }
        if (stopping && (g_stop > 1 || now_s() - stop_at > STOP_GRACE_S)) stop_children(r, SIGKILL);
        size_t nops = 0;
        t2__plan_next(r->plan, ops, &nops);
        for (size_t k = 0; !rc && k < nops; k++) {
            /* A stop that came during an earlier check: checking (hashing) more is wasted time; the
             * stage, left being checked, is CANCELED by the t2__plan_stop of the next iteration. */
            if (ops[k].kind == T2__OP_CHECK && g_stop) continue;
            if (ops[k].kind == T2__OP_CHECK) rc = do_check(r, ops[k].stage);
            else if (ops[k].kind == T2__OP_START) rc = do_start(r, ops[k].stage);
            else rc = do_block(r, ops[k].stage, ops[k].cause);
        }
        if (rc) break;
        if (nops) continue; /* a check may have made more stages due */
        if (t2__plan_finished_all(r->plan) && !running(r)) break;
        size_t np = 0;
        pf[np].fd = g_wake[0];
        pf[np++].events = POLLIN;
        for (size_t i = 0; i < r->f->n; i++)
            if (r->rt[i].fd >= 0) {
                who[np] = i;
                pf[np].fd = r->rt[i].fd;
                pf[np++].events = POLLIN;
            }
        int got = poll(pf, (nfds_t)np, 500);
        if (got < 0 && errno != EINTR) rc = t2_seterr(T2_EIO, "pipeline: poll: %s", strerror(errno));
        if (got > 0 && (pf[0].revents & POLLIN)) {
            char drain[64];
            while (read(g_wake[0], drain, sizeof drain) > 0) {
            }
        }
        for (size_t k = 1; got > 0 && k < np; k++)
            if (pf[k].revents) read_reports(r, who[k], 0);
        if (!rc) rc = reap(r);
    }
    if (rc) { /* store trouble: stop what runs, it could not be recorded anyway */
        stop_children(r, SIGKILL);
        while (running(r)) {
            int status;
            pid_t pid = waitpid(-1, &status, 0);
            if (pid < 0 && errno != EINTR) break;
            for (size_t i = 0; i < r->f->n; i++)
                if (r->rt[i].pid == pid) r->rt[i].pid = 0;
        }
    }
    free(ops);
    free(pf);
    free(who);
    return rc;
}

/* What a stage takes from the pool: resources.slots for a command stage; for an experiment,
 * max_concurrent_trials x slots_per_trial from its config (capped by the pool), 1 when the config
 * cannot be read yet (an earlier stage may write it). */
static int64_t stage_slots(const t2__flow_stage *s, int64_t pool)
{
    if (s->kind == T2__STAGE_COMMAND) return s->slots > 0 ? s->slots : 1;
    t2__config *cfg = NULL;
    if (t2__config_load(s->config, NULL, 0, &cfg)) return 1;
    int64_t mct = cfg->searcher.max_concurrent_trials, per = cfg->resources.slots_per_trial;
    t2__config_free(cfg);
    if (per < 1) per = 1;
    if (mct <= 0 || mct > pool) mct = pool;
    return mct * per > pool ? pool : mct * per;
}

static int lock_flow(runner *r)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/pipelines", r->home);
    int rc = t2__mkdirs(path);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/pipelines/%s.lock", r->home, r->f->name);
    r->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (r->lock_fd < 0) return t2_seterr(T2_EIO, "pipeline %s: cannot open %s: %s", r->f->name, path, strerror(errno));
    if (flock(r->lock_fd, LOCK_EX | LOCK_NB) != 0)
        return t2_seterr(T2_ESTATE, "pipeline %s is already running (another `t2exp pipeline run` holds %s)",
                         r->f->name, path);
    return 0;
}

static int setup_signals(struct sigaction old[5])
{
    if (pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0)
        return t2_seterr(T2_EIO, "pipeline: cannot make a pipe: %s", strerror(errno));
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
    sigaction(SIGCHLD, &sa, &old[2]);
    sigaction(SIGTSTP, &sa, &old[4]);
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old[3]);
    t2__hash_stop_on(&g_stop); /* a stop must not wait for a large input's hash */
    return 0;
}

static void restore_signals(struct sigaction old[5])
{
    t2__hash_stop_on(NULL);
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
    sigaction(SIGCHLD, &old[2], NULL);
    sigaction(SIGPIPE, &old[3], NULL);
    sigaction(SIGTSTP, &old[4], NULL);
    close(g_wake[0]);
    close(g_wake[1]);
    g_wake[0] = g_wake[1] = -1;
}

static int finish_run(runner *r, double t0, int *outcome)
{
    size_t bad = t2__plan_unsuccessful(r->plan), nfail = 0;
    /* "ran" counts the stages that ran and succeeded, as `t2exp pipelines` counts them
     * (docs/pipelines.md): ran, up to date and unsuccessful are three disjoint parts of the
     * stages, so a failed stage is counted once, as unsuccessful. */
    size_t ran = 0;
    for (size_t i = 0; i < r->f->n; i++) ran += t2__plan_state(r->plan, i) == T2__PS_DONE;
    char err[1000] = "";
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < r->f->n && !rc; i++) {
        t2__pstate ps = t2__plan_state(r->plan, i);
        if (ps == T2__PS_CANCELED)
            rc = t2__store_stage_run_add(r->st, r->run_id, r->f->stages[i].name, "CANCELED", NULL, NULL, NULL,
                                         "not run: the pipeline run was stopped", NULL);
        if (ps == T2__PS_FAILED && n < sizeof err - 1) {
            n += (size_t)snprintf(err + n, sizeof err - n, "%s%s", nfail ? ", " : "stage failed: ",
                                  r->f->stages[i].name);
            nfail++;
        }
    }
    const char *state = g_stop ? "INTERRUPTED" : bad ? "FAILED" : "SUCCEEDED";
    if (!rc) rc = t2__store_pipeline_run_end(r->st, r->run_id, state, g_stop ? "stopped by a signal" : bad ? err : NULL);
    fprintf(r->out, "pipeline %s: run %lld %s in %.2f s (%zu ran, %zu up to date, %zu not successful)\n", r->f->name,
            (long long)r->run_id, state, now_s() - t0, ran, r->skipped, bad);
    *outcome = g_stop ? T2__PIPELINE_INTERRUPTED : bad ? T2__PIPELINE_FAILED : T2__PIPELINE_OK;
    return rc;
}

int t2__pipeline_run(const t2__pipeline_opts *o, int64_t *run_id)
{
    if (!o || !o->flow_path || !run_id) return t2_seterr(T2_EINVAL, "pipeline run: NULL argument");
    *run_id = 0;
    double t0 = now_s();
    t2__flow *f = NULL;
    int rc = t2__flow_load(o->flow_path, &f);
    if (rc) return rc;
    runner r = {.f = f, .out = o->out ? o->out : stdout, .lock_fd = -1};
    unsigned char *seed = calloc(f->n, 1), *forced = calloc(f->n, 1);
    int64_t *slots = calloc(f->n, sizeof *slots);
    r.rt = calloc(f->n, sizeof *r.rt);
    struct sigaction old[5];
    int signals = 0, outcome = T2__PIPELINE_FAILED;
    if (!seed || !forced || !slots || !r.rt) {
        rc = t2_seterr(T2_ENOMEM, "pipeline: out of memory");
        goto done;
    }
    for (size_t i = 0; i < f->n; i++) r.rt[i].fd = -1;
    for (size_t k = 0; k < o->nforce; k++) {
        long i = t2__flow_find(f, o->force[k]);
        if (i < 0) {
            rc = t2_seterr(T2_EINVAL, "--force %s: %s has no stage '%s'", o->force[k], o->flow_path, o->force[k]);
            goto done;
        }
        seed[i] = 1;
    }
    t2__flow_descendants(f, seed, forced);
    int64_t pool = o->jobs > 0 ? o->jobs : t2__usable_cores();
    if (pool < 1) pool = 1;
    for (size_t i = 0; i < f->n; i++) slots[i] = stage_slots(&f->stages[i], pool);
    char flow_hash[65];
    if ((rc = t2__store_home(o->home, r.home, sizeof r.home)) || (rc = t2__hash_path(o->flow_path, flow_hash)) ||
        (rc = lock_flow(&r)) || (rc = t2__store_open(r.home, 0, &r.st)))
        goto done;
    int64_t stale = 0;
    if ((rc = t2__store_pipeline_interrupt_stale(r.st, f->name, &stale))) goto done;
    char abs_flow[4096];
    if (!realpath(o->flow_path, abs_flow)) snprintf(abs_flow, sizeof abs_flow, "%s", o->flow_path);
    if ((rc = t2__store_pipeline_run_create(r.st, f->name, abs_flow, flow_hash, &r.run_id))) goto done;
    *run_id = r.run_id;
    snprintf(r.dir, sizeof r.dir, "%s/pipelines/%lld", r.home, (long long)r.run_id);
    if ((rc = t2__mkdirs(r.dir)) || (rc = t2__plan_new(f, slots, forced, pool, &r.plan))) goto done;
    fprintf(r.out, "pipeline %s: run %lld, %zu stage%s, %lld slot%s%s\n", f->name, (long long)r.run_id, f->n,
            f->n == 1 ? "" : "s", (long long)pool, pool == 1 ? "" : "s",
            stale ? " (an earlier run of it was interrupted)" : "");
    g_stop = 0;
    if ((rc = setup_signals(old))) goto done;
    signals = 1;
    rc = loop(&r);
    if (!rc) rc = finish_run(&r, t0, &outcome);
done:
    if (signals) restore_signals(old);
    if (rc && r.st && r.run_id) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", t2_errmsg());
        t2__store_pipeline_run_end(r.st, r.run_id, "FAILED", msg);
        t2_seterr(rc, "%s", msg);
    }
    for (size_t i = 0; r.rt && i < f->n; i++) {
        t2__stage_check_free(&r.rt[i].chk, f->stages[i].argc);
        t2__val_free(r.rt[i].result);
        free(r.rt[i].buf);
        if (r.rt[i].fd >= 0) close(r.rt[i].fd);
    }
    if (r.st) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", t2_errmsg());
        int crc = t2__store_close(r.st);
        if (!rc && crc) rc = crc;
        else t2_seterr(rc, "%s", msg);
    }
    if (r.lock_fd >= 0) close(r.lock_fd);
    t2__plan_free(r.plan);
    free(r.rt);
    free(seed);
    free(forced);
    free(slots);
    t2__flow_free(f);
    return rc ? rc : outcome;
}
