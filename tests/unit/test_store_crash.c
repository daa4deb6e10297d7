/* test_store_crash.c — a writer SIGKILLed in the middle of its work never corrupts the store and
 * never loses or half-keeps a commit. Each round forks a child that writes trials (each with ten
 * metrics, a state update and a searcher snapshot) in a loop, half through begin/commit and half
 * through the batch and flush, and reports every commit on a pipe; the parent kills it at a
 * random moment, reopens the store and checks integrity and atomicity. */
#include "test_store_util.h" /* first: it sets the feature macros */
#include <signal.h>
#include <sys/wait.h>

#define ROUNDS 20

static char dir[512], home[600];

static void child(int64_t exp, int wfd)
{
    t2__store *st = NULL;
    if (t2__store_open(home, 0, &st)) _exit(3);
    char snap[4096];
    memset(snap, 'x', sizeof snap);
    snap[0] = '"';
    snap[sizeof snap - 2] = '"';
    snap[sizeof snap - 1] = '\0'; /* a 4 KB JSON string: WAL traffic, checkpoints */
    int64_t done = 0, t;
    int64_t total = 0;
    if (t2__store_query_int(st, "SELECT count(*) FROM trials", &total)) _exit(3);
    for (;;) {
        int explicit_tx = done % 2 == 0;
        if (explicit_tx && t2__store_begin(st)) _exit(4);
        if (t2__store_create_trial(st, exp, -1, "{\"lr\":0.1}", done, 0, &t)) _exit(5);
        for (int m = 0; m < 10; m++)
            if (t2__store_add_metric(st, t, T2__METRIC_TRAINING, m, NAN, "loss", m)) _exit(6);
        t2__trial_update u = {.set = T2__TU_STATE, .state = T2__TRIAL_COMPLETED};
        if (t2__store_update_trial(st, t, &u)) _exit(7);
        if (t2__store_save_searcher_state(st, exp, total + done + 1, snap)) _exit(8);
        if (explicit_tx ? t2__store_commit(st) : t2__store_flush(st, 1)) _exit(9);
        done++;
        if (write(wfd, &done, sizeof done) != (ssize_t)sizeof done) _exit(10);
    }
}

static void round_(int64_t exp, int r, int64_t *expected)
{
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(1);
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child(exp, fds[1]);
    }
    close(fds[1]);
    int64_t reported = 0, v;
    /* Let it commit a varying number of times, then kill it at a varying moment. */
    int64_t target = 20 + 7 * r;
    while (reported < target && read(fds[0], &v, sizeof v) == (ssize_t)sizeof v) reported = v;
    struct timespec ts = {0, (long)(r % 5) * 300000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    while (read(fds[0], &v, sizeof v) == (ssize_t)sizeof v) reported = v;
    close(fds[0]);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
        fprintf(stderr, "round %d: child ended with status %d, not by SIGKILL\n", r, status);
        check_failures++;
    }

    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st)); /* recovers the WAL */
    if (!st) return;
    char buf[256];
    CHECK_TEXT(sql_text(st, "PRAGMA integrity_check", buf, sizeof buf), "ok");
    int64_t none;
    CHECK_RC(t2__store_query_int(st, "PRAGMA foreign_key_check", &none), T2_ENOTFOUND);
    long long trials = sql_int(st, "SELECT count(*) FROM trials");
    /* Every reported commit is there; at most one more committed before its report. */
    CHECK(trials >= *expected + reported && trials <= *expected + reported + 1);
    /* Atomic: no trial without all ten metrics and its final state. */
    CHECK(sql_int(st, "SELECT count(*) FROM trials t WHERE state != 'COMPLETED' OR"
                      " (SELECT count(*) FROM metrics m WHERE m.trial_id = t.id) != 10") == 0);
    CHECK(sql_int(st, "SELECT events FROM searcher_state") == trials);
    CHECK(sql_int(st, "SELECT num_trials FROM experiments") == trials);
    printf("round %d: %lld trials after the kill (%lld reported in this round)\n", r, trials,
           (long long)reported);
    *expected = trials;
    CHECK_OK(t2__store_close(st));
}

int main(void)
{
    scratch_home(dir, sizeof dir, home, sizeof home);
    t2__store *st = NULL;
    int64_t exp = 0, expected = 0;
    CHECK_OK(t2__store_open(home, 0, &st));
    t2__experiment_new e = {.name = "crash", .config_yaml = "", .searcher_name = "random",
                            .metric = "loss", .smaller_is_better = 1, .trial_object = "t.so"};
    CHECK_OK(t2__store_create_experiment(st, &e, &exp));
    CHECK_OK(t2__store_close(st));
    for (int r = 0; r < ROUNDS; r++) round_(exp, r, &expected);
    rm_rf(dir);
    return check_report("test_store_crash");
}
