/* test_store_logs.c — a trial's output as one stream: worker-log segments (each ends where the
 * next one of the same file starts, or at its end), a trial's own log file before them, offsets
 * across pieces (the dashboard's paging), a replaced file, a missing one and a symbolic link. */
#include "internal.h"
#include "test_store_util.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[512], home[600];

static void write_file(const char *path, const char *text, const char *mode)
{
    FILE *f = fopen(path, mode);
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* The whole stream of trial id, read in chunks of `chunk` bytes, into buf. */
static int read_all(t2__store *st, int64_t id, size_t chunk, char *buf, size_t cap)
{
    t2__trial_log l;
    int rc = t2__trial_log_open(st, id, &l);
    if (rc) return rc;
    size_t at = 0, got = 0, calls = 0;
    int64_t size = -1, seen = -1; /* every other read also asks for the stream's size */
    while (at + chunk < cap &&
           !(rc = t2__trial_log_read(&l, (int64_t)at, buf + at, chunk, &got, calls++ % 2 ? &size : NULL)) &&
           got > 0) {
        at += got;
        if (size >= 0) CHECK(seen < 0 || size == seen); /* the files stay as they are while read */
        seen = size;
    }
    if (!rc && got == 0 && seen >= 0) CHECK(seen == (int64_t)at);
    buf[at] = '\0';
    t2__trial_log_free(&l);
    return rc;
}

static void test_segments(void)
{
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    t2__experiment_new e = {.name = "logs", .config_yaml = "name: logs\n", .searcher_name = "random",
                            .metric = "loss", .smaller_is_better = 1, .trial_object = "/x/t.so", .seed = 1};
    int64_t exp = 0, t1 = 0, t2 = 0, t3 = 0;
    CHECK_OK(t2__store_create_experiment(st, &e, &exp));
    CHECK_OK(t2__store_create_trial(st, exp, 0, "{}", 1, 0, &t1));
    CHECK_OK(t2__store_create_trial(st, exp, 1, "{}", 2, 0, &t2));
    CHECK_OK(t2__store_create_trial(st, exp, 2, "{}", 3, 0, &t3));
    char w0[700], w1[700], own[700];
    snprintf(w0, sizeof w0, "%s/worker-0.log", dir);
    snprintf(w1, sizeof w1, "%s/worker-1.log", dir);
    snprintf(own, sizeof own, "%s/trial-3.log", dir);
    /* worker 0 ran trial 1, then trial 2 (which crashed), then trial 1 again (a restart); trial 2
     * ran again on worker 1, which is still writing. */
    write_file(w0, "t1 run1\nt2 run1\nt1 run2\n", "w");
    write_file(w1, "t2 run2\n", "w");
    CHECK_OK(t2__store_add_log_segment(st, t1, w0, 0));
    CHECK_OK(t2__store_add_log_segment(st, t2, w0, 8));
    CHECK_OK(t2__store_add_log_segment(st, t1, w0, 16));
    CHECK_OK(t2__store_add_log_segment(st, t2, w1, 0));
    CHECK_RC(t2__store_add_log_segment(st, t1, w0, -1), T2_EINVAL);
    CHECK_RC(t2__store_add_log_segment(st, t1, "", 0), T2_EINVAL);
    CHECK_OK(t2__store_flush(st, 1));

    t2__log_segment *seg = NULL;
    size_t n = 0;
    CHECK_OK(t2__store_log_segments(st, t1, &seg, &n));
    CHECK(n == 2 && seg[0].start == 0 && seg[0].end == 8 && seg[1].start == 16 && seg[1].end == -1);
    t2__log_segments_free(seg, n);
    CHECK_OK(t2__store_log_segments(st, t2, &seg, &n));
    CHECK(n == 2 && seg[0].start == 8 && seg[0].end == 16 && seg[1].end == -1);
    t2__log_segments_free(seg, n);

    char buf[256];
    for (size_t chunk = 1; chunk <= 64; chunk *= 4) { /* every paging gives the same stream */
        CHECK_OK(read_all(st, t1, chunk, buf, sizeof buf));
        CHECK_TEXT(buf, "t1 run1\nt1 run2\n");
        CHECK_OK(read_all(st, t2, chunk, buf, sizeof buf));
        CHECK_TEXT(buf, "t2 run1\nt2 run2\n");
    }
    /* A running trial's last segment grows with its file. */
    write_file(w1, "t2 more\n", "a");
    CHECK_OK(read_all(st, t2, 5, buf, sizeof buf));
    CHECK_TEXT(buf, "t2 run1\nt2 run2\nt2 more\n");

    /* A trial that ran in its own process first: its file, then its worker runs. */
    t2__trial_update u = {.set = T2__TU_LOG_PATH, .log_path = own};
    CHECK_OK(t2__store_update_trial(st, t3, &u));
    CHECK_OK(t2__store_flush(st, 1));
    t2__trial_log l;
    CHECK_OK(t2__trial_log_open(st, t3, &l));
    CHECK(l.n == 0); /* no file at log_path yet, no segments: nothing to show */
    t2__trial_log_free(&l);
    write_file(own, "own\n", "w");
    write_file(w1, "t3 run2\n", "a");
    CHECK_OK(t2__store_add_log_segment(st, t3, w1, 16));
    CHECK_OK(t2__store_flush(st, 1));
    CHECK_OK(read_all(st, t3, 3, buf, sizeof buf));
    CHECK_TEXT(buf, "own\nt3 run2\n");
    CHECK_OK(read_all(st, t2, 64, buf, sizeof buf)); /* trial 3's start ended trial 2's run */
    CHECK_TEXT(buf, "t2 run1\nt2 run2\nt2 more\n");

    /* A worker log replaced by a shorter file: a segment past its end is empty, never garbage. */
    write_file(w0, "new\n", "w");
    CHECK_OK(read_all(st, t1, 64, buf, sizeof buf));
    CHECK_TEXT(buf, "new\n");
    /* Missing, and a symbolic link where a log was: an error naming the file, nothing read. */
    CHECK(unlink(w0) == 0);
    CHECK_RC(read_all(st, t1, 64, buf, sizeof buf), T2_EIO);
    CHECK(strstr(t2_errmsg(), "worker-0.log") != NULL);
    CHECK(symlink("/etc/passwd", w0) == 0);
    CHECK_RC(read_all(st, t1, 64, buf, sizeof buf), T2_EIO);
    CHECK(strstr(buf, "root") == NULL);
    CHECK_RC(t2__trial_log_open(st, 999, &l), T2_ENOTFOUND);
    CHECK_OK(t2__store_close(st));
}

/* Appends (trial, start) to LOG's run record, as a worker does before a run. */
static void record_run(const char *log, int64_t trial, int64_t start)
{
    char runs[800];
    snprintf(runs, sizeof runs, "%s%s", log, T2__LOG_RUNS_SUFFIX);
    int fd = open(runs, O_WRONLY | O_CREAT | O_APPEND, 0600);
    CHECK(fd >= 0);
    CHECK(t2__log_runs_append(fd, trial, start) == 0);
    close(fd);
}

/* A worker log replaced between two controllers (its user deleted it; the resumed experiment's
 * worker made it anew): the run record starts afresh, so a lost run's start in the new file still
 * ends the segment before it. Kept as it was, the old file's starts (0, 100, 200, then 0, 3) made
 * the binary search find 100, and trial 1's segment ran over trial 2's output. */
static void test_replaced_runs(void)
{
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    t2__experiment_new e = {.name = "runs", .config_yaml = "name: runs\n", .searcher_name = "random",
                            .metric = "loss", .smaller_is_better = 1, .trial_object = "/x/t.so", .seed = 1};
    int64_t exp = 0, t1 = 0, t2 = 0;
    CHECK_OK(t2__store_create_experiment(st, &e, &exp));
    CHECK_OK(t2__store_create_trial(st, exp, 0, "{}", 1, 0, &t1));
    CHECK_OK(t2__store_create_trial(st, exp, 1, "{}", 2, 0, &t2));
    char w[700];
    snprintf(w, sizeof w, "%s/worker-9.log", dir);
    write_file(w, "", "w");
    for (int i = 0; i < 3; i++) record_run(w, t1, 100 * i); /* the old file's runs */
    CHECK(unlink(w) == 0);
    int fd = open(w, O_WRONLY | O_CREAT | O_APPEND, 0600); /* the new worker's log, as workers.c opens it */
    CHECK(fd >= 0);
    CHECK(t2__log_runs_begin(w, fd) == 0);
    close(fd);
    write_file(w, "aa\nbb\n", "a");
    record_run(w, t1, 0);
    record_run(w, t2, 3);
    /* The store kept trial 1's segment; trial 2's went with a killed controller's batch. */
    CHECK_OK(t2__store_add_log_segment(st, t1, w, 0));
    CHECK_OK(t2__store_flush(st, 1));
    char buf[256];
    CHECK_OK(read_all(st, t1, 64, buf, sizeof buf));
    CHECK_TEXT(buf, "aa\n");
    /* A log as long as its record's last start or longer is the same file: the record stays. */
    fd = open(w, O_WRONLY | O_APPEND);
    CHECK(fd >= 0);
    CHECK(t2__log_runs_begin(w, fd) == 0);
    close(fd);
    CHECK_OK(read_all(st, t1, 64, buf, sizeof buf));
    CHECK_TEXT(buf, "aa\n");
    /* No record yet: nothing to do, nothing made. */
    char other[700], runs[800];
    snprintf(other, sizeof other, "%s/worker-8.log", dir);
    write_file(other, "", "w");
    fd = open(other, O_WRONLY | O_APPEND);
    CHECK(fd >= 0 && t2__log_runs_begin(other, fd) == 0);
    close(fd);
    snprintf(runs, sizeof runs, "%s%s", other, T2__LOG_RUNS_SUFFIX);
    CHECK(access(runs, F_OK) != 0);
    CHECK_OK(t2__store_close(st));
}

/* The lost runs of a worker log whose record holds 10,000 runs (more than one read block of
 * 4,096): the store kept segments of all but four, among them the runs either side of a block's
 * end; each lost run is listed once, ending where the next recorded run starts. */
static void test_lost_runs(void)
{
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    t2__experiment_new e = {.name = "lost", .config_yaml = "name: lost\n", .searcher_name = "random",
                            .metric = "loss", .smaller_is_better = 1, .trial_object = "/x/t.so", .seed = 1};
    int64_t exp = 0, t1 = 0;
    CHECK_OK(t2__store_create_experiment(st, &e, &exp));
    CHECK_OK(t2__store_create_trial(st, exp, 0, "{}", 1, 0, &t1));
    char edir[700], w[800];
    CHECK_OK(t2__store_experiment_dir(home, exp, NULL, edir, sizeof edir));
    CHECK_OK(t2__mkdirs(edir));
    snprintf(w, sizeof w, "%s/worker-3.log", edir);
    enum { RUNS = 10000 };
    static const int lost[] = {0, 4095, 4096, RUNS - 1};
    FILE *f = fopen(w, "w");
    CHECK(f != NULL);
    for (int i = 0; f && i < RUNS; i++) fprintf(f, "run %05d\n", i); /* 10 bytes a run */
    if (f) fclose(f);
    for (int i = 0; i < RUNS; i++) {
        record_run(w, 100000 + i, 10 * i);
        int gone = 0;
        for (size_t k = 0; k < sizeof lost / sizeof *lost; k++) gone |= lost[k] == i;
        if (!gone) CHECK_OK(t2__store_add_log_segment(st, t1, w, 10 * i));
    }
    CHECK_OK(t2__store_flush(st, 1));
    t2__lost_run *v = NULL;
    size_t n = 0;
    CHECK_OK(t2__store_lost_runs(st, exp, &v, &n));
    CHECK(n == sizeof lost / sizeof *lost);
    for (size_t k = 0; k < n && k < sizeof lost / sizeof *lost; k++) {
        CHECK(v[k].trial_id == 100000 + lost[k]);
        CHECK(v[k].seg.start == 10 * lost[k] && v[k].seg.end == 10 * lost[k] + 10);
    }
    t2__lost_runs_free(v, n);
    CHECK_RC(t2__store_lost_runs(st, 999, &v, &n), T2_ENOTFOUND);
    CHECK_OK(t2__store_close(st));
}

int main(void)
{
    scratch_home(dir, sizeof dir, home, sizeof home);
    test_segments();
    test_replaced_runs();
    test_lost_runs();
    rm_rf(dir);
    return check_report("test_store_logs");
}
