/* test_store_resolve.c — the one addressing scheme (store_resolve.c): trials as EXP.N or a trial
 * id; checkpoints as a path, a uuid, EXP or EXP.N (best by the searcher metric in the
 * experiment's direction, latest when none has a metric); and `metrics EXP` as one table. */
#include "test_store_util.h"
#include <sys/stat.h>

static char dir[512], home[600];
static double now = 1700000000.0;
static int64_t emin, emax, enone, tmin[2], tmax[2], tnone;

static void add_ckpt(t2__store *st, const char *uuid, int64_t trial, int64_t batches, double metric)
{
    char path[64];
    snprintf(path, sizeof path, "/h/%s.tar", uuid);
    t2__checkpoint_new c = {.uuid = uuid, .trial_id = trial, .batches = batches, .epoch = NAN,
                            .metric = metric, .size_bytes = 1, .path = path};
    CHECK_OK(t2__store_add_checkpoint(st, &c));
    now += 1; /* created_at orders "latest" */
}

static void fixture(t2__store *st)
{
    t2__experiment_new e = {.name = "min", .config_yaml = "x", .searcher_name = "single", .metric = "loss",
                            .smaller_is_better = 1, .trial_object = "/t.so", .seed = 1};
    CHECK_OK(t2__store_create_experiment(st, &e, &emin));
    e.name = "max";
    e.smaller_is_better = 0;
    CHECK_OK(t2__store_create_experiment(st, &e, &emax));
    e.name = "none";
    CHECK_OK(t2__store_create_experiment(st, &e, &enone));
    for (int i = 0; i < 2; i++) {
        CHECK_OK(t2__store_create_trial(st, emin, i, "{}", 1, 0, &tmin[i]));
        CHECK_OK(t2__store_create_trial(st, emax, i, "{}", 1, 0, &tmax[i]));
    }
    CHECK_OK(t2__store_create_trial(st, enone, 0, "{}", 1, 0, &tnone));
    /* min: the best is 0.1 in trial 1, written before a worse later one; trial 0's best is 0.3. */
    add_ckpt(st, "min-a", tmin[0], 10, 0.5);
    add_ckpt(st, "min-b", tmin[1], 10, 0.1);
    add_ckpt(st, "min-c", tmin[0], 20, 0.3);
    add_ckpt(st, "min-d", tmin[1], 20, 0.2);
    add_ckpt(st, "min-nometric", tmin[1], 30, NAN);
    /* max: larger wins; a deleted better one does not count. */
    add_ckpt(st, "max-a", tmax[0], 10, 0.7);
    add_ckpt(st, "max-b", tmax[1], 10, 0.9);
    add_ckpt(st, "max-gone", tmax[1], 20, 0.99);
    CHECK_OK(t2__store_mark_checkpoint_deleted(st, "max-gone"));
    /* none: no metric anywhere, so the latest. */
    add_ckpt(st, "none-a", tnone, 20, NAN);
    add_ckpt(st, "none-b", tnone, 10, NAN);
    CHECK_OK(t2__store_add_metric(st, tmin[0], T2__METRIC_TRAINING, 10, NAN, "loss", 0.5));
    CHECK_OK(t2__store_add_metric(st, tmin[1], T2__METRIC_VALIDATION, 10, NAN, "loss", 0.25));
    CHECK_OK(t2__store_add_metric(st, tmax[0], T2__METRIC_TRAINING, 10, NAN, "loss", 9));
}

static void expect_ckpt(t2__store *st, const char *ref, const char *want_uuid)
{
    t2__checkpoint_row r;
    int rc = t2__store_resolve_checkpoint(st, ref, &r);
    CHECK_OK(rc);
    if (!rc) {
        CHECK(r.uuid && !strcmp(r.uuid, want_uuid));
        if (r.uuid && strcmp(r.uuid, want_uuid)) fprintf(stderr, "%s: got %s, wanted %s\n", ref, r.uuid, want_uuid);
    }
    t2__checkpoint_row_free(&r);
}

static int print_exp_metrics(t2__store *st, void *ud, FILE *out)
{
    return t2__store_print_experiment_metrics(st, *(int64_t *)ud, NULL, T2__FMT_CSV, out);
}

int main(void)
{
    scratch_home(dir, sizeof dir, home, sizeof home);
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    if (!st) return check_report("test_store_resolve");
    t2__store_set_clock(st, fixed_clock, &now);
    fixture(st);
    CHECK_OK(t2__store_flush(st, 1));

    char ref[64];
    /* Trials: EXP.N and plain ids; junk and unknown ones are errors. */
    int64_t id = 0;
    snprintf(ref, sizeof ref, "%lld.1", (long long)emax);
    CHECK_OK(t2__store_resolve_trial(st, ref, &id));
    CHECK(id == tmax[1]);
    snprintf(ref, sizeof ref, "%lld", (long long)tnone);
    CHECK_OK(t2__store_resolve_trial(st, ref, &id));
    CHECK(id == tnone);
    CHECK_RC(t2__store_resolve_trial(st, "1.x", &id), T2_EINVAL);
    CHECK_RC(t2__store_resolve_trial(st, "-1", &id), T2_EINVAL);
    CHECK_RC(t2__store_resolve_trial(st, "1.", &id), T2_EINVAL);
    CHECK_RC(t2__store_resolve_trial(st, "1.7", &id), T2_ENOTFOUND);
    CHECK_RC(t2__store_resolve_trial(st, "999", &id), T2_ENOTFOUND);

    /* Checkpoints: EXP is the experiment's best, EXP.N the trial's, in each direction. */
    snprintf(ref, sizeof ref, "%lld", (long long)emin);
    expect_ckpt(st, ref, "min-b");
    snprintf(ref, sizeof ref, "%lld.0", (long long)emin);
    expect_ckpt(st, ref, "min-c");
    snprintf(ref, sizeof ref, "%lld", (long long)emax);
    expect_ckpt(st, ref, "max-b");
    snprintf(ref, sizeof ref, "%lld", (long long)enone);
    expect_ckpt(st, ref, "none-b");
    expect_ckpt(st, "min-d", "min-d");
    t2__checkpoint_row r;
    CHECK_RC(t2__store_resolve_checkpoint(st, "max-gone", &r), T2_ENOTFOUND);
    CHECK(strstr(t2_errmsg(), "max-gone") != NULL);
    CHECK_RC(t2__store_resolve_checkpoint(st, "999", &r), T2_ENOTFOUND);
    CHECK_RC(t2__store_resolve_checkpoint(st, "1.9", &r), T2_ENOTFOUND);
    /* A trial without checkpoints. */
    int64_t bare;
    CHECK_OK(t2__store_create_trial(st, enone, 1, "{}", 1, 0, &bare));
    snprintf(ref, sizeof ref, "%lld.1", (long long)enone);
    CHECK_RC(t2__store_resolve_checkpoint(st, ref, &r), T2_ENOTFOUND);
    /* A file wins over everything, and needs no store. */
    char file[700];
    snprintf(file, sizeof file, "%s/1", dir);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    CHECK_OK(t2__store_resolve_checkpoint(NULL, file, &r));
    CHECK(r.path && !strcmp(r.path, file) && !r.uuid);
    t2__checkpoint_row_free(&r);
    CHECK_RC(t2__store_resolve_checkpoint(NULL, "min-b", &r), T2_ENOTFOUND);
    /* A path the store also reads: a directory named like an experiment (a results folder "1")
     * does not hide it; a regular file named like a trial is ambiguous, and ./NAME is the file. */
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(dir) == 0);
    snprintf(ref, sizeof ref, "%lld", (long long)emax);
    CHECK(mkdir(ref, 0700) == 0);
    expect_ckpt(st, ref, "max-b");
    snprintf(ref, sizeof ref, "%lld.0", (long long)emin);
    f = fopen(ref, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    CHECK_RC(t2__store_resolve_checkpoint(st, ref, &r), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "both a file here and the store's checkpoint min-c") != NULL);
    char dotted[80];
    snprintf(dotted, sizeof dotted, "./%s", ref);
    CHECK_OK(t2__store_resolve_checkpoint(st, dotted, &r));
    CHECK(r.path && !strcmp(r.path, dotted) && !r.uuid);
    t2__checkpoint_row_free(&r);
    CHECK(chdir(cwd) == 0);

    /* `metrics EXP`: every trial's rows, trial by trial, labelled EXP.N. */
    int rc;
    char *csv = capture(st, print_exp_metrics, &emin, &rc);
    CHECK_OK(rc);
    /* (the time column is the store clock's, not checked here) */
    char want[3][160];
    snprintf(want[0], sizeof want[0], "trial,trial_id,kind,batches,epoch,name,value,time\n");
    snprintf(want[1], sizeof want[1], "\n%lld.0,%lld,training,10,,loss,0.5,", (long long)emin, (long long)tmin[0]);
    snprintf(want[2], sizeof want[2], "\n%lld.1,%lld,validation,10,,loss,0.25,", (long long)emin, (long long)tmin[1]);
    CHECK(!strncmp(csv, want[0], strlen(want[0])));
    CHECK(strstr(csv, want[1]) && strstr(csv, want[2]) && strstr(csv, want[1]) < strstr(csv, want[2]));
    CHECK(!strstr(csv, ",9,")); /* another experiment's metric */
    if (!strstr(csv, want[1]) || !strstr(csv, want[2])) fprintf(stderr, "got:\n%s", csv);
    free(csv);
    int64_t missing = 999;
    csv = capture(st, print_exp_metrics, &missing, &rc);
    CHECK_RC(rc, T2_ENOTFOUND);
    free(csv);

    CHECK_OK(t2__store_close(st));
    rm_rf(dir);
    return check_report("test_store_resolve");
}
