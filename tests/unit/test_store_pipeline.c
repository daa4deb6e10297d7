/* test_store_pipeline.c — schema 4 (pipeline_runs, stage_runs): the migration from schema 3,
 * the writes, "last successful run of this stage of this flow" across runs, and the recovery of
 * runs a killed `pipeline run` left RUNNING. */
#include "test_store_util.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <stdint.h>
#include "store/store_pipeline.h"

static char dir[512], home[600];

/* A store at schema 3 as shipped (the v4 tables taken away again) with an experiment in it is
 * upgraded on open; its data stays. */
static void test_migrate_v3(void)
{
    char h[700];
    snprintf(h, sizeof h, "%s/v3", dir);
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(h, 0, &st));
    CHECK_OK(t2__store_exec_sql(st, "DROP TABLE stage_runs; DROP TABLE pipeline_runs;"
                                    " DROP TABLE experiment_blas; DROP TRIGGER trials_blas; ALTER TABLE trials DROP COLUMN blas_id;"
                                    " DROP TABLE blas_lines; ALTER TABLE trials DROP COLUMN blas; ALTER TABLE trials DROP COLUMN hosts;"
                                    " ALTER TABLE trials DROP COLUMN parent_trial_id; ALTER TABLE trials DROP COLUMN parent_checkpoint;"
                                    " ALTER TABLE experiments DROP COLUMN parts;"
                                    " DROP TABLE trial_log_segments;"
                                    " DROP TABLE report_timings; DROP TABLE model_versions; DROP TABLE models; PRAGMA user_version = 3;"));
    CHECK_OK(t2__store_exec_sql(st, "INSERT INTO experiments (name, config_yaml, searcher_name, metric,"
                                    " smaller_is_better, trial_object, seed, created_at) VALUES ('old',"
                                    " 'name: old\n', 'single', 'loss', 1, '/t.so', 1, 0)"));
    CHECK_OK(t2__store_close(st));
    CHECK_OK(t2__store_open(h, 1, &st)); /* read-only open upgrades through a short writer */
    CHECK(sql_int(st, "PRAGMA user_version") == T2__STORE_SCHEMA_VERSION);
    /* ...and on to schema 5: the trials' BLAS line. */
    CHECK(sql_int(st, "SELECT count(*) FROM pragma_table_info('trials') WHERE name = 'blas'") == 1);
    CHECK(sql_int(st, "SELECT count(*) FROM sqlite_master WHERE name IN ('pipeline_runs','stage_runs')") == 2);
    CHECK(sql_int(st, "SELECT count(*) FROM experiments WHERE name = 'old'") == 1);
    CHECK_OK(t2__store_close(st));
    CHECK_OK(t2__store_open(h, 0, &st));
    int64_t run = 0;
    CHECK_OK(t2__store_pipeline_run_create(st, "flow", "/f.yaml", "abc", &run));
    CHECK(run == 1);
    CHECK_OK(t2__store_close(st));
}

static void test_runs(void)
{
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    int64_t r1 = 0, r2 = 0, r3 = 0, s = 0, other = 0;
    t2__stage_run_hashes h1 = {.input_hash = "H1", .def_hash = "D", .refs_hash = "", .inputs_json = "{\"a\":\"x\"}"};
    t2__stage_run_hashes h2 = {.input_hash = "H2", .def_hash = "D", .refs_hash = "", .inputs_json = "{\"a\":\"y\"}"};
    /* run 1: prep succeeds, search is interrupted after its experiment started */
    CHECK_OK(t2__store_pipeline_run_create(st, "flow", "/f.yaml", "fh", &r1));
    CHECK_OK(t2__store_stage_run_add(st, r1, "prep", "RUNNING", &h1, "/l/prep.log", NULL, NULL, &s));
    CHECK_OK(t2__store_stage_run_end(st, s, "SUCCEEDED", 0, NULL, NULL));
    CHECK_OK(t2__store_stage_run_add(st, r1, "search", "RUNNING", &h1, "/l/search.log", NULL, NULL, &s));
    CHECK_OK(t2__store_stage_run_set_experiment(st, s, 7));
    /* another flow's stage of the same name never counts */
    CHECK_OK(t2__store_pipeline_run_create(st, "other", "/o.yaml", "oh", &other));
    CHECK_OK(t2__store_stage_run_add(st, other, "prep", "SUCCEEDED", &h2, NULL, NULL, NULL, NULL));
    /* a second add of the same stage in one run is refused */
    CHECK_RC(t2__store_stage_run_add(st, r1, "prep", "SKIPPED", &h1, NULL, NULL, NULL, NULL), T2_EINVAL);
    /* the result must be JSON */
    CHECK_RC(t2__store_stage_run_add(st, other, "x", "SUCCEEDED", NULL, NULL, "{not json", NULL, NULL), T2_EINVAL);
    CHECK_RC(t2__store_stage_run_end(st, 999, "FAILED", 1, NULL, "x"), T2_ENOTFOUND);

    t2__stage_run_row row;
    CHECK_OK(t2__store_last_stage_run(st, "flow", "prep", 1, &row));
    CHECK(row.run_id == r1 && !strcmp(row.input_hash, "H1") && row.has_exit_code && row.exit_code == 0);
    CHECK(!strcmp(row.inputs_json, "{\"a\":\"x\"}") && !strcmp(row.log_path, "/l/prep.log"));
    t2__stage_run_row_free(&row);
    CHECK_RC(t2__store_last_stage_run(st, "flow", "search", 1, &row), T2_ENOTFOUND);

    /* the run process died: the next run of the flow marks what it left RUNNING as INTERRUPTED */
    int64_t n = 0;
    CHECK_OK(t2__store_pipeline_interrupt_stale(st, "flow", &n));
    CHECK(n == 1);
    CHECK(sql_int(st, "SELECT count(*) FROM pipeline_runs WHERE state = 'RUNNING'") == 1); /* "other" */
    CHECK_OK(t2__store_last_stage_run(st, "flow", "search", 2, &row));
    CHECK(!strcmp(row.state, "INTERRUPTED") && row.experiment_id == 7 && row.ended_at > 0);
    t2__stage_run_row_free(&row);

    /* run 2: prep is up to date (SKIPPED counts as successful and is the latest now), search is
     * canceled — the latest stage run that ran is still run 1's interrupted one */
    CHECK_OK(t2__store_pipeline_run_create(st, "flow", "/f.yaml", "fh", &r2));
    CHECK_OK(t2__store_stage_run_add(st, r2, "prep", "SKIPPED", &h1, NULL, "{\"k\":1}", NULL, NULL));
    CHECK_OK(t2__store_stage_run_add(st, r2, "search", "CANCELED", NULL, NULL, NULL, "stopped", NULL));
    CHECK_OK(t2__store_pipeline_run_end(st, r2, "INTERRUPTED", "stopped by a signal"));
    CHECK_OK(t2__store_last_stage_run(st, "flow", "prep", 1, &row));
    CHECK(row.run_id == r2 && !strcmp(row.state, "SKIPPED") && !strcmp(row.result_json, "{\"k\":1}"));
    CHECK(!row.has_exit_code);
    t2__stage_run_row_free(&row);
    CHECK_OK(t2__store_last_stage_run(st, "flow", "search", 0, &row));
    CHECK(!strcmp(row.state, "CANCELED"));
    t2__stage_run_row_free(&row);
    CHECK_OK(t2__store_last_stage_run(st, "flow", "search", 2, &row));
    CHECK(row.run_id == r1);
    t2__stage_run_row_free(&row);

    /* run 3: prep fails; its last successful run stays run 2's */
    CHECK_OK(t2__store_pipeline_run_create(st, "flow", "/f.yaml", "fh", &r3));
    CHECK_OK(t2__store_stage_run_add(st, r3, "prep", "RUNNING", &h2, NULL, NULL, NULL, &s));
    CHECK_OK(t2__store_stage_run_end(st, s, "FAILED", 3, NULL, "exited with status 3"));
    CHECK_OK(t2__store_stage_run_add(st, r3, "train", "BLOCKED", &h2, NULL, NULL, NULL, &s));
    CHECK_OK(t2__store_pipeline_run_end(st, r3, "FAILED", "stage failed: prep"));
    CHECK_OK(t2__store_last_stage_run(st, "flow", "prep", 1, &row));
    CHECK(row.run_id == r2);
    t2__stage_run_row_free(&row);
    CHECK_OK(t2__store_last_stage_run(st, "flow", "prep", 0, &row));
    CHECK(row.run_id == r3 && row.exit_code == 3 && !strcmp(row.error, "exited with status 3"));
    t2__stage_run_row_free(&row);
    CHECK_RC(t2__store_pipeline_run_end(st, r3, "DONE", NULL), T2_EINVAL); /* not a state */
    CHECK_OK(t2__store_close(st));

    /* a reader sees everything committed (every write commits at once) */
    CHECK_OK(t2__store_open(home, 1, &st));
    CHECK(sql_int(st, "SELECT count(*) FROM stage_runs") == 7);
    char path[800];
    snprintf(path, sizeof path, "%s/out.json", dir);
    FILE *f = fopen(path, "w+");
    CHECK(f != NULL);
    if (f) {
        CHECK_OK(t2__store_print_pipeline_run(st, r3, T2__FMT_JSON, f));
        CHECK_OK(t2__store_print_pipeline_runs(st, T2__FMT_CSV, f));
        rewind(f);
        char buf[4096] = "";
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        buf[got] = '\0';
        CHECK(r3 == 4 && strstr(buf, "\"run\":{\"id\":4,\"name\":\"flow\",\"state\":\"FAILED\"") != NULL);
        CHECK(strstr(buf, "\"exit_code\":3") != NULL);
        /* Run 4's failed stage and the one it blocked: not successful, both (the column said failed). */
        CHECK(strstr(buf, "id,name,state,ran,up_to_date,not_successful,started,duration,flow,failed\n") != NULL);
        CHECK(strstr(buf, "\n4,flow,FAILED,0,0,2,") != NULL);
        const char *row4 = strstr(buf, "\n4,flow,FAILED,0,0,2,"), *eol = row4 ? strchr(row4 + 1, '\n') : NULL;
        CHECK(eol && eol - row4 > 2 && !strncmp(eol - 2, ",2", 2)); /* failed, the old name: the same count */
        fclose(f);
    }
    CHECK_RC(t2__store_print_pipeline_run(st, 42, T2__FMT_TABLE, stdout), T2_ENOTFOUND);
    CHECK_OK(t2__store_close(st));
}

/* A real column as milliseconds (sql_int reads integers). */
static long long ms(t2__store *st, const char *table, int64_t id)
{
    char q[200];
    snprintf(q, sizeof q, "SELECT CAST(round(ended_at * 1000) AS INTEGER) FROM %s WHERE id = %lld", table, (long long)id);
    return sql_int(st, q);
}

/* A killed run ends at its last sign of life, not when the next run noticed it (probe_J: 16 s
 * recorded for a run killed at 8.6 s): a stage it left RUNNING at its log's last write, never
 * before the stage's start nor after now; without a log, at its start; the run at its stages'
 * latest start or end. */
static void test_stale_times(void)
{
    char h[700], log[800];
    snprintf(h, sizeof h, "%s/stale", dir);
    snprintf(log, sizeof log, "%s/train.log", dir);
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(h, 0, &st));
    if (!st) return;
    double now = 1000;
    t2__store_set_clock(st, fixed_clock, &now);
    int64_t run = 0, a = 0, b = 0, c = 0, n = 0;
    CHECK_OK(t2__store_pipeline_run_create(st, "flow", "/f.yaml", "fh", &run));
    CHECK_OK(t2__store_stage_run_add(st, run, "prep", "RUNNING", NULL, NULL, NULL, NULL, &a));
    now = 1010;
    CHECK_OK(t2__store_stage_run_end(st, a, "SUCCEEDED", 0, NULL, NULL));
    CHECK_OK(t2__store_stage_run_add(st, run, "train", "RUNNING", NULL, log, NULL, NULL, &b));
    now = 1012;
    CHECK_OK(t2__store_stage_run_add(st, run, "gone", "RUNNING", NULL, "/nonexistent/log", NULL, NULL, &c));
    FILE *f = fopen(log, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    struct timespec t[2] = {{1030, 0}, {1030, 0}};
    CHECK(utimensat(AT_FDCWD, log, t, 0) == 0);
    now = 5000; /* the next run, long after */
    CHECK_OK(t2__store_pipeline_interrupt_stale(st, "flow", &n));
    CHECK(n == 1);
    CHECK(ms(st, "stage_runs", b) == 1030000);
    CHECK(ms(st, "stage_runs", c) == 1012000);
    CHECK(ms(st, "stage_runs", a) == 1010000);
    CHECK(ms(st, "pipeline_runs", run) == 1030000);
    /* A log written after now (a clock step) is taken as now. */
    CHECK_OK(t2__store_pipeline_run_create(st, "flow", "/f.yaml", "fh", &run));
    CHECK_OK(t2__store_stage_run_add(st, run, "train", "RUNNING", NULL, log, NULL, NULL, &b));
    struct timespec later[2] = {{9000, 0}, {9000, 0}};
    CHECK(utimensat(AT_FDCWD, log, later, 0) == 0);
    now = 6000;
    CHECK_OK(t2__store_pipeline_interrupt_stale(st, "flow", &n));
    CHECK(n == 1 && ms(st, "pipeline_runs", run) == 6000000);
    CHECK_OK(t2__store_close(st));
}

int main(void)
{
    scratch_home(dir, sizeof dir, home, sizeof home);
    test_migrate_v3();
    test_runs();
    test_stale_times();
    rm_rf(dir);
    return check_report("test_store_pipeline");
}
