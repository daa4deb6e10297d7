/* test_store_logs.c — a trial's output as one stream: worker-log segments (each ends where the
 * next one of the same file starts, or at its end), a trial's own log file before them, offsets
 * across pieces (the dashboard's paging), a replaced file, a missing one and a symbolic link. */
#include "internal.h"
#include "test_store_util.h"
#include <sys/stat.h>

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

int main(void)
{
    scratch_home(dir, sizeof dir, home, sizeof home);
    test_segments();
    rm_rf(dir);
    return check_report("test_store_logs");
}
