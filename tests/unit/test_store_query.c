/* test_store_query.c — the CLI listings: exact table/JSON/CSV output for a small fixture, bad
 * ids, and the 100,000-trial store (query plans use the indexes; timings printed). */
#include "test_store_util.h"

static char dir[512], home[600];
static double now = 1700000000.0; /* 2023-11-14T22:13:20Z */
static int64_t e1, e2, tr[4];

static void fixture_store(void)
{
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    if (!st) return;
    t2__store_set_clock(st, fixed_clock, &now);
    t2__experiment_new e = {
        .name = "fmnist, \"cnn\"", .labels_json = "[\"x\"]",
        .config_yaml = "name: fmnist\nsearcher:\n  name: adaptive_asha\n",
        .searcher_name = "adaptive_asha", .metric = "validation_loss", .smaller_is_better = 1,
        .trial_object = "/t/cnn.so", .seed = 7,
    };
    CHECK_OK(t2__store_create_experiment(st, &e, &e1));
    e.name = "second";
    e.labels_json = NULL;
    e.smaller_is_better = 0;
    e.searcher_name = "single";
    e.metric = "accuracy";
    CHECK_OK(t2__store_create_experiment(st, &e, &e2));
    CHECK_OK(t2__store_create_trial(st, e1, -1, "{\"lr\":0.1,\"layers\":[32,64]}", 101, 0, &tr[1]));
    CHECK_OK(t2__store_create_trial(st, e1, -1, "{\"lr\":0.01}", 102, 0, &tr[2]));
    /* A seed with the top bit set: shown unsigned (18000000000000000000), not negative. */
    CHECK_OK(t2__store_create_trial(st, e1, -1, "{\"lr\":1}", (int64_t)UINT64_C(18000000000000000000), 0, &tr[3]));
    now += 5;
    t2__trial_update u = {.set = T2__TU_STATE, .state = T2__TRIAL_RUNNING};
    CHECK_OK(t2__store_update_trial(st, tr[1], &u));
    CHECK_OK(t2__store_update_trial(st, tr[2], &u));
    u = (t2__trial_update){.set = T2__TU_VALIDATION | T2__TU_BATCHES, .validation = 0.5,
                           .batches_trained = 100};
    CHECK_OK(t2__store_update_trial(st, tr[1], &u));
    u.validation = 0.25;
    u.batches_trained = 200;
    CHECK_OK(t2__store_update_trial(st, tr[1], &u));
    u.validation = 0.45;
    u.batches_trained = 100;
    CHECK_OK(t2__store_update_trial(st, tr[2], &u));
    now += 10;
    u = (t2__trial_update){.set = T2__TU_STATE | T2__TU_ERROR | T2__TU_RESTARTS,
                           .state = T2__TRIAL_ERRORED, .restarts = 2,
                           .error = "line1\nline2, \"quoted\""};
    CHECK_OK(t2__store_update_trial(st, tr[2], &u));
    CHECK_OK(t2__store_add_metric(st, tr[1], T2__METRIC_TRAINING, 100, 0.5, "loss", 0.75));
    CHECK_OK(t2__store_add_metric(st, tr[1], T2__METRIC_TRAINING, 100, 0.5, "accuracy", 0.5));
    CHECK_OK(t2__store_add_metric(st, tr[1], T2__METRIC_VALIDATION, 100, 0.5, "loss", 0.5));
    CHECK_OK(t2__store_add_metric(st, tr[1], T2__METRIC_TRAINING, 200, 1, "loss", 0.125));
    t2__checkpoint_new c = {.uuid = "c0", .trial_id = tr[1], .batches = 100, .epoch = 0.5,
                            .metric = 0.5, .size_bytes = 1024, .path = "/h/c0.tar"};
    CHECK_OK(t2__store_add_checkpoint(st, &c));
    c = (t2__checkpoint_new){.uuid = "c1", .trial_id = tr[1], .batches = 200, .epoch = 1,
                             .metric = 0.25, .size_bytes = 2048, .path = "/h/c1.tar"};
    CHECK_OK(t2__store_add_checkpoint(st, &c));
    CHECK_OK(t2__store_mark_checkpoint_deleted(st, "c0"));
    CHECK_OK(t2__store_set_experiment_progress(st, e1, 0.5));
    CHECK_OK(t2__store_set_experiment_best(st, e1, tr[1], 0.25));
    now += 3600 + 62;
    CHECK_OK(t2__store_set_experiment_state(st, e2, T2__EXP_COMPLETED));
    CHECK_OK(t2__store_close(st));
}

/* ---- captured listings ----------------------------------------------------------------- */

typedef struct {
    int what; /* 0 list, 1 describe, 2 trials, 3 metrics, 4 checkpoints */
    t2__store_format fmt;
    int64_t id, id2;
    const char *kind;
    long limit;
} listing;

static int print_listing(t2__store *st, void *ud, FILE *out)
{
    const listing *l = ud;
    t2__store_set_clock(st, fixed_clock, &now);
    switch (l->what) {
    case 0: return t2__store_print_experiments(st, l->fmt, out);
    case 1: return t2__store_print_experiment(st, l->id, l->limit, l->fmt, out);
    case 2: return t2__store_print_trials(st, l->id, l->fmt, out);
    case 3: return t2__store_print_metrics(st, l->id, l->kind, l->fmt, out);
    default: return t2__store_print_checkpoints(st, l->id, l->id2, (int)l->limit, l->fmt, out);
    }
}

static char *show(t2__store *st, listing l, int *rc)
{
    return capture(st, print_listing, &l, rc);
}

#define EXPECT(st, l, want)                      \
    do {                                         \
        int erc_;                                \
        char *got_ = show((st), (l), &erc_);     \
        CHECK_OK(erc_);                          \
        CHECK_TEXT(got_, (want));                 \
        free(got_);                              \
    } while (0)

/* Expected output for the fixture; regenerate with T2EXP_STORE_DUMP=1 and read it through. */
static const char WANT0[] =
    /* Experiment 1 is ACTIVE with no controller recorded: the table says so (probe_J). */
    "id  name           state                   searcher       trials  progress  best_metric  started               duration\n"
    "--  -------------  ----------------------  -------------  ------  --------  -----------  --------------------  --------\n"
    " 1  fmnist, \"cnn\"  ACTIVE (no controller)  adaptive_asha       3     50.0%         0.25  2023-11-14T22:13:20Z       15s\n"
    " 2  second         COMPLETED               single              0      0.0%               2023-11-14T22:13:20Z  1h01m17s\n"
    ;
static const char WANT1[] =
    "[{\"id\":1,\"name\":\"fmnist, \\\"cnn\\\"\",\"state\":\"ACTIVE\",\"searcher\":\"adaptive_asha\","
    "\"trials\":3,\"progress\":0.5,\"best_metric\":0.25,\"started\":\"2023-11-14T22:13:20Z\","
    "\"duration\":15.0,\"controller_running\":0},{\"id\":2,\"name\":\"second\",\"state\":\"COMPLETED\","
    "\"searcher\":\"single\",\"trials\":0,\"progress\":0.0,\"best_metric\":null,"
    "\"started\":\"2023-11-14T22:13:20Z\",\"duration\":3677.0,\"controller_running\":0}]\n"
    ;
static const char WANT2[] =
    "id,name,state,searcher,trials,progress,best_metric,started,duration,controller_running\n"
    "1,\"fmnist, \"\"cnn\"\"\",ACTIVE,adaptive_asha,3,0.5,0.25,2023-11-14T22:13:20Z,15.0,0\n"
    "2,second,COMPLETED,single,0,0.0,,2023-11-14T22:13:20Z,3677.0,0\n"
    ;
static const char WANT3[] =
    "id                 1\n"
    "name               fmnist, \"cnn\"\n"
    "labels             [\"x\"]\n"
    "state              ACTIVE\n"
    "searcher           adaptive_asha\n"
    "metric             validation_loss\n"
    "smaller_is_better  1\n"
    "progress           50.0%\n"
    "trials             3\n"
    /* The store id, then the trial as the CLI names it (EXP.N). */
    "best_trial         1 (1.1)\n"
    "best_metric        0.25\n"
    "trial_object       /t/cnn.so\n"
    "seed               7\n"
    "created            2023-11-14T22:13:20Z\n"
    "started            2023-11-14T22:13:20Z\n"
    "duration           15s\n"
    "overrides          []\n"
    /* ACTIVE, and no controller recorded: said so (probe_J). */
    "no controller runs it: it was killed or crashed before it recorded an end; `t2exp resume 1` continues it\n"
    "config:\n"
    "    name: fmnist\n"
    "    searcher:\n"
    "      name: adaptive_asha\n"
    "\n"
    "trials ranked by validation_loss (smaller is better), all 3:\n"
    "trial  id  state                    hparams                      best_validation  latest_validation  batches  restarts  checkpoints  parent\n"
    "-----  --  -----------------------  ---------------------------  ---------------  -----------------  -------  --------  -----------  ------\n"
    "    1   1  RUNNING (no controller)  {\"lr\":0.1,\"layers\":[32,64]}             0.25               0.25      200         0            1\n"
    "    2   2  ERRORED                  {\"lr\":0.01}                             0.45               0.45      100         2            0\n"
    "    3   3  QUEUED                   {\"lr\":1}                                                               0         0            0\n"
    ;
static const char WANT4[] =
    "{\"experiment\":{\"id\":1,\"name\":\"fmnist, \\\"cnn\\\"\",\"description\":null,"
    "\"labels\":[\"x\"],\"state\":\"ACTIVE\",\"searcher\":\"adaptive_asha\","
    "\"metric\":\"validation_loss\",\"smaller_is_better\":1,\"progress\":0.5,"
    "\"trials\":3,\"best_trial\":1,\"best_metric\":0.25,\"trial_object\":\"/t/cnn.so\","
    "\"seed\":7,\"parts\":null,\"created\":\"2023-11-14T22:13:20Z\",\"started\":\"2023-11-14T22:13:20Z\","
    "\"ended\":null,\"duration\":15.0,\"error\":null,\"overrides\":[],\"checkpoint_dir\":null,\"blas\":null,\"controller_running\":0,\"config\":\"name: fmnist\\nsearcher:\\n  name: adaptive_asha\\n\"},"
    "\"trials\":[{\"trial\":1,\"id\":1,\"state\":\"RUNNING\",\"hparams\":{\"lr\":0.1,"
    "\"layers\":[32,64]},\"best_validation\":0.25,\"latest_validation\":0.25,"
    "\"batches\":200,\"restarts\":0,\"checkpoints\":1,\"parent\":null},{\"trial\":2,\"id\":2,"
    "\"state\":\"ERRORED\",\"hparams\":{\"lr\":0.01},\"best_validation\":0.45,"
    "\"latest_validation\":0.45,\"batches\":100,\"restarts\":2,\"checkpoints\":0,\"parent\":null}]}\n"
    ;
static const char WANT5[] =
    "trial,id,state,hparams,best_validation,latest_validation,batches,restarts,checkpoints,parent\n"
    ;
static const char WANT6[] =
    "trial,id,state,hparams,seed,restarts,batches,target_batches,best_validation,latest_validation,started,duration,hosts,error,parent\n"
    "1,1,RUNNING,\"{\"\"lr\"\":0.1,\"\"layers\"\":[32,64]}\",101,0,200,,0.25,0.25,2023-11-14T22:13:25Z,10.0,,,\n"
    "2,2,ERRORED,\"{\"\"lr\"\":0.01}\",102,2,100,,0.45,0.45,2023-11-14T22:13:25Z,10.0,,\"line1\n"
    "line2, \"\"quoted\"\"\",\n"
    "3,3,QUEUED,\"{\"\"lr\"\":1}\",18000000000000000000,0,0,,,,,,,,\n"
    ;
static const char WANT7[] =
    "trial  id  state                    hparams                      seed                  restarts  batches  target_batches  best_validation  latest_validation  started               duration  hosts  error                  parent\n"
    "-----  --  -----------------------  ---------------------------  --------------------  --------  -------  --------------  ---------------  -----------------  --------------------  --------  -----  ---------------------  ------\n"
    "    1   1  RUNNING (no controller)  {\"lr\":0.1,\"layers\":[32,64]}  101                          0      200                             0.25               0.25  2023-11-14T22:13:25Z       10s\n"
    "    2   2  ERRORED                  {\"lr\":0.01}                  102                          2      100                             0.45               0.45  2023-11-14T22:13:25Z       10s         line1 line2, \"quoted\"\n"
    "    3   3  QUEUED                   {\"lr\":1}                     18000000000000000000         0        0\n"
    ;
static const char WANT8[] =
    "kind,batches,epoch,name,value,time\n"
    "training,100,0.5,accuracy,0.5,2023-11-14T22:13:35.000Z\n"
    "training,100,0.5,loss,0.75,2023-11-14T22:13:35.000Z\n"
    "training,200,1.0,loss,0.125,2023-11-14T22:13:35.000Z\n"
    "validation,100,0.5,loss,0.5,2023-11-14T22:13:35.000Z\n"
    ;
static const char WANT9[] =
    "[{\"kind\":\"validation\",\"batches\":100,\"epoch\":0.5,\"name\":\"loss\","
    "\"value\":0.5,\"time\":\"2023-11-14T22:13:35.000Z\"}]\n"
    ;
static const char WANT10[] =
    "[{\"uuid\":\"c1\",\"trial_id\":1,\"trial\":1,\"batches\":200,\"epoch\":1.0,"
    "\"metric\":0.25,\"size_bytes\":2048,\"state\":\"ACTIVE\",\"created\":\"2023-11-14T22:13:35Z\","
    "\"path\":\"/h/c1.tar\"}]\n"
    ;
static const char WANT11[] =
    "uuid,trial_id,trial,batches,epoch,metric,size_bytes,state,created,path\n"
    "c0,1,1,100,0.5,0.5,1024,DELETED,2023-11-14T22:13:35Z,/h/c0.tar\n"
    "c1,1,1,200,1.0,0.25,2048,ACTIVE,2023-11-14T22:13:35Z,/h/c1.tar\n"
    ;

static const listing LISTINGS[] = {
    {0, T2__FMT_TABLE, 0, 0, NULL, 0}, {0, T2__FMT_JSON, 0, 0, NULL, 0},
    {0, T2__FMT_CSV, 0, 0, NULL, 0},   {1, T2__FMT_TABLE, 1, 0, NULL, 0},
    {1, T2__FMT_JSON, 1, 0, NULL, 2},  {1, T2__FMT_CSV, 2, 0, NULL, 0},
    {2, T2__FMT_CSV, 1, 0, NULL, 0},   {2, T2__FMT_TABLE, 1, 0, NULL, 0},
    {3, T2__FMT_CSV, 1, 0, NULL, 0},   {3, T2__FMT_JSON, 1, 0, "validation", 0},
    {4, T2__FMT_JSON, 1, 0, NULL, 0},  {4, T2__FMT_CSV, 0, 1, NULL, 1},
};
static const char *const WANTS[] = {WANT0, WANT1, WANT2, WANT3, WANT4,  WANT5,
                                    WANT6, WANT7, WANT8, WANT9, WANT10, WANT11};

static void test_outputs(void)
{
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 1, &st));
    if (!st) return;
    /* ids are fixed by the fixture on a fresh store */
    CHECK(e1 == 1 && e2 == 2 && tr[1] == 1);
    int dump = getenv("T2EXP_STORE_DUMP") != NULL;
    for (size_t i = 0; i < sizeof LISTINGS / sizeof LISTINGS[0]; i++) {
        int rc;
        char *got = show(st, LISTINGS[i], &rc);
        if (dump) printf("==== %zu (rc %d)\n%s", i, rc, got);
        CHECK_OK(rc);
        if (strcmp(got, WANTS[i]) != 0) fprintf(stderr, "listing %zu differs:\n", i);
        CHECK_TEXT(got, WANTS[i]);
        free(got);
    }
    t2__store_close(st);
}

static int bad_format(t2__store *st, void *ud, FILE *out)
{
    (void)ud;
    return t2__store_print_query(st, "SELECT 1", NULL, 0, NULL, (t2__store_format)7, out);
}

static int bad_sql(t2__store *st, void *ud, FILE *out)
{
    (void)ud;
    return t2__store_print_query(st, "SELECT nope FROM nowhere", NULL, 0, NULL, T2__FMT_TABLE, out);
}

static void test_errors(void)
{
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 1, &st));
    if (!st) return;
    int rc;
    char *s;
    s = show(st, (listing){1, T2__FMT_TABLE, 99, 0, NULL, 0}, &rc);
    CHECK(rc == T2_ENOTFOUND && *s == '\0');
    CHECK_MSG("no experiment 99");
    free(s);
    s = show(st, (listing){2, T2__FMT_JSON, 99, 0, NULL, 0}, &rc);
    CHECK(rc == T2_ENOTFOUND);
    free(s);
    s = show(st, (listing){3, T2__FMT_CSV, 99, 0, NULL, 0}, &rc);
    CHECK(rc == T2_ENOTFOUND);
    CHECK_MSG("no trial 99");
    free(s);
    s = show(st, (listing){3, T2__FMT_CSV, 1, 0, "test", 0}, &rc);
    CHECK(rc == T2_EINVAL);
    CHECK_MSG("neither training nor validation");
    free(s);
    s = show(st, (listing){4, T2__FMT_CSV, 0, 99, NULL, 0}, &rc);
    CHECK(rc == T2_ENOTFOUND);
    free(s);
    s = capture(st, bad_format, NULL, &rc);
    CHECK(rc == T2_EINVAL);
    free(s);
    s = capture(st, bad_sql, NULL, &rc);
    CHECK(rc != 0);
    CHECK_MSG("no such table: nowhere");
    free(s);
    CHECK_OK(t2__store_close(st));
}

static int wide_table(t2__store *st, void *ud, FILE *out)
{
    (void)ud;
    return t2__store_print_query(st,
                                 "SELECT '\xe6\x8d\x9f\xe5\xa4\xb1 \xce\xbb \xf0\x9f\x9a\x80' AS name, 1.5 AS value"
                                 " UNION ALL SELECT 'ab', 2"
                                 " UNION ALL SELECT 'x' || char(0x202E) || 'rev' || char(0x2066), 3"
                                 " UNION ALL SELECT 'e' || char(0x301) || char(0x61C), 4",
                                 NULL, 0, NULL, T2__FMT_TABLE, out);
}

/* Columns are padded by what a terminal shows (probe_J: by code points, a row with CJK or an emoji
 * ran 3 columns long): the CJK glyphs and the emoji take 2, the combining accent none; the bidi
 * controls that reversed the rest of a row are U+FFFD (1 column), U+061C two spaces. */
static void test_wide(void)
{
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 1, &st));
    if (!st) return;
    int rc;
    char *got = capture(st, wide_table, NULL, &rc);
    CHECK_OK(rc);
    CHECK_TEXT(got, "name       value\n"
                    "---------  -----\n"
                    "\xe6\x8d\x9f\xe5\xa4\xb1 \xce\xbb \xf0\x9f\x9a\x80    1.5\n"
                    "ab             2\n"
                    "x\xef\xbf\xbdrev\xef\xbf\xbd         3\n"
                    "e\xcc\x81              4\n");
    free(got);
    CHECK_OK(t2__store_close(st));
}

/* With a live controller recorded (this process), the JSON says it runs and the table says ACTIVE
 * alone; killed, the same experiment read 0 and "ACTIVE (no controller)" (test_outputs). */
static void test_controller_running(void)
{
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    if (!st) return;
    CHECK_OK(t2__store_set_controller(st, e1, 1));
    int rc;
    char *s = show(st, (listing){0, T2__FMT_JSON, 0, 0, NULL, 0}, &rc);
    CHECK_OK(rc);
    CHECK(strstr(s, "\"duration\":3677.0,\"controller_running\":1},{\"id\":2") != NULL);
    free(s);
    s = show(st, (listing){1, T2__FMT_JSON, e1, 0, NULL, 0}, &rc);
    CHECK_OK(rc);
    CHECK(strstr(s, "\"state\":\"ACTIVE\"") && strstr(s, "\"controller_running\":1"));
    free(s);
    s = show(st, (listing){0, T2__FMT_TABLE, 0, 0, NULL, 0}, &rc);
    CHECK_OK(rc);
    CHECK(strstr(s, " ACTIVE ") && !strstr(s, "no controller"));
    free(s);
    s = show(st, (listing){2, T2__FMT_TABLE, e1, 0, NULL, 0}, &rc); /* its trials: RUNNING as it runs */
    CHECK_OK(rc);
    CHECK(strstr(s, " RUNNING ") && !strstr(s, "no controller"));
    free(s);
    CHECK_OK(t2__store_set_controller(st, e1, 0));
    CHECK_OK(t2__store_close(st));
}

/* An ERRORED experiment keeps its unfinished trials for resume: the table says its QUEUED trial
 * waits for that, not for a slot, and describe says how many wait; JSON and CSV keep QUEUED. */
static void test_errored_queued(void)
{
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    if (!st) return;
    int rc;
    char *s = show(st, (listing){1, T2__FMT_TABLE, e1, 0, NULL, 0}, &rc); /* ACTIVE: nothing said */
    CHECK_OK(rc);
    CHECK(!strstr(s, "did not end") && !strstr(s, "experiment ERRORED"));
    free(s);
    CHECK_OK(t2__store_set_experiment_state(st, e1, T2__EXP_ERRORED));
    s = show(st, (listing){2, T2__FMT_TABLE, e1, 0, NULL, 0}, &rc);
    CHECK_OK(rc);
    CHECK(strstr(s, "    3   3  QUEUED (experiment ERRORED)  {\"lr\":1}") != NULL);
    CHECK(strstr(s, " ERRORED                      {\"lr\":0.01}") != NULL); /* ended: as stored */
    free(s);
    s = show(st, (listing){2, T2__FMT_JSON, e1, 0, NULL, 0}, &rc);
    CHECK_OK(rc);
    CHECK(strstr(s, "\"state\":\"QUEUED\"") && !strstr(s, "experiment ERRORED"));
    free(s);
    s = show(st, (listing){2, T2__FMT_CSV, e1, 0, NULL, 0}, &rc);
    CHECK_OK(rc);
    CHECK(strstr(s, ",QUEUED,") && !strstr(s, "experiment ERRORED"));
    free(s);
    /* describe: trial 1 (RUNNING) and 3 (QUEUED) did not end; its ranking says so too. */
    s = show(st, (listing){1, T2__FMT_TABLE, e1, 0, NULL, 0}, &rc);
    CHECK_OK(rc);
    CHECK(strstr(s, "\n2 trial(s) did not end and never will: it ended before its searcher's state was first saved, "
                    "so it cannot be resumed; create it again once the error is fixed\nconfig:\n") != NULL);
    CHECK(strstr(s, "QUEUED (experiment ERRORED)") != NULL);
    free(s);
    /* With the searcher's state saved, resume runs them. */
    CHECK_OK(t2__store_save_searcher_state(st, e1, 1, "{}"));
    s = show(st, (listing){1, T2__FMT_TABLE, e1, 0, NULL, 0}, &rc);
    CHECK_OK(rc);
    CHECK(strstr(s, "\n2 trial(s) did not end: they run only when `t2exp resume 1` continues it\nconfig:\n") != NULL);
    free(s);
    s = show(st, (listing){1, T2__FMT_JSON, e1, 0, NULL, 0}, &rc);
    CHECK_OK(rc);
    CHECK(!strstr(s, "did not end") && !strstr(s, "experiment ERRORED"));
    free(s);
    CHECK_OK(t2__store_set_experiment_state(st, e1, T2__EXP_ACTIVE));
    CHECK_OK(t2__store_close(st));
}

/* An empty store: a header (and rule) for tables and CSV, [] for JSON. */
static void test_empty(void)
{
    char h[700];
    snprintf(h, sizeof h, "%s/empty", dir);
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(h, 0, &st));
    if (!st) return;
    EXPECT(st, ((listing){0, T2__FMT_JSON, 0, 0, NULL, 0}), "[]\n");
    EXPECT(st, ((listing){0, T2__FMT_CSV, 0, 0, NULL, 0}),
           "id,name,state,searcher,trials,progress,best_metric,started,duration,controller_running\n");
    EXPECT(st, ((listing){0, T2__FMT_TABLE, 0, 0, NULL, 0}),
           "id  name  state  searcher  trials  progress  best_metric  started  duration\n"
           "--  ----  -----  --------  ------  --------  -----------  -------  --------\n");
    CHECK_OK(t2__store_close(st));
}

int main(void)
{
    scratch_home(dir, sizeof dir, home, sizeof home);
    fixture_store();
    test_outputs();
    test_controller_running();
    test_errors();
    test_wide();
    test_empty();
    test_errored_queued();
    rm_rf(dir);
    return check_report("test_store_query");
}
