/* test_lr_schedule.c — LR schedules against torch.optim.lr_scheduler sequences
 * (tests/fixtures/torch_optim.py), state save/restore, and bad input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "fixture.h"
#include "t2exp.h"

#define RTOL 1e-4
#define ATOL 1e-9

static const char *const SCHEDULES[] = {
    "constant", "step", "multistep", "exponential", "cosine", "cosine_zero", "warmup_constant",
    "warmup_cosine", "warmup_step", "warmup_multistep", "warmup_exponential", "onecycle",
    "onecycle_linear", "warmup_onecycle", "plateau_min", "plateau_max_abs", "warmup_plateau",
};

static const fixture_array *get(const fixture *f, const char *name, const char *suffix)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s_%s", name, suffix);
    return fixture_get(f, buf);
}

/* hp layout written by torch_optim.py: kind base_lr warmup_steps warmup_start_factor gamma
 * step_size t_max eta_min max_lr total_steps pct_start anneal div_factor final_div_factor mode
 * factor patience threshold threshold_mode cooldown min_lr n_milestones milestones... */
static t2_lr_params params_from_hp(const fixture_array *a)
{
    const float *h = a->data;
    t2_lr_params p = t2_lr_default((t2_lr_kind)(int)h[0], h[1]);
    p.warmup_steps = (int64_t)h[2];
    p.warmup_start_factor = h[3];
    p.gamma = h[4];
    p.step_size = (int64_t)h[5];
    p.t_max = (int64_t)h[6];
    p.eta_min = h[7];
    p.max_lr = h[8];
    p.total_steps = (int64_t)h[9];
    p.pct_start = h[10];
    p.anneal = (t2_lr_anneal)(int)h[11];
    p.div_factor = h[12];
    p.final_div_factor = h[13];
    p.mode = (t2_lr_plateau_mode)(int)h[14];
    p.factor = h[15];
    p.patience = (int64_t)h[16];
    p.threshold = h[17];
    p.threshold_mode = (t2_lr_threshold_mode)(int)h[18];
    p.cooldown = (int64_t)h[19];
    p.min_lr = h[20];
    p.n_milestones = (int)h[21];
    for (int i = 0; i < p.n_milestones && i < T2_LR_MAX_MILESTONES; i++) p.milestones[i] = (int64_t)h[22 + i];
    return p;
}

static int advance(t2_lr_schedule *s, const fixture_array *metrics, int k)
{
    return metrics ? t2_lr_schedule_step_metric(s, metrics->data[k]) : t2_lr_schedule_step(s);
}

static int near(double got, double want) { return fabs(got - want) <= ATOL + RTOL * fabs(want); }

static void test_sequences(const fixture *f)
{
    for (size_t c = 0; c < sizeof SCHEDULES / sizeof *SCHEDULES; c++) {
        const char *name = SCHEDULES[c];
        const fixture_array *hp = get(f, name, "hp"), *want = get(f, name, "lrs");
        if (!hp || !want) {
            check_failures++;
            continue;
        }
        const fixture_array *metrics = strstr(name, "plateau") ? get(f, name, "metrics") : NULL;
        t2_lr_params p = params_from_hp(hp);
        t2_lr_schedule *s = NULL;
        CHECK_OK(t2_lr_schedule_create(&s, &p));
        if (!s) continue;
        int bad = 0;
        for (size_t k = 0; k < want->n; k++) {
            if (k > 0) CHECK_OK(advance(s, metrics, (int)k - 1));
            double lr = t2_lr_schedule_lr(s);
            if (!near(lr, want->data[k])) {
                if (bad++ < 5)
                    fprintf(stderr, "%s: lr after %zu steps = %.9g, torch %.9g\n", name, k, lr, want->data[k]);
            }
        }
        if (bad) check_failures++;
        t2_lr_schedule_free(s);
    }
}

/* Save the state part-way, restore it into a fresh schedule: both continue identically and
 * still match torch. */
static void test_restore(const fixture *f)
{
    for (size_t c = 0; c < sizeof SCHEDULES / sizeof *SCHEDULES; c++) {
        const char *name = SCHEDULES[c];
        const fixture_array *hp = get(f, name, "hp"), *want = get(f, name, "lrs");
        if (!hp || !want) continue;
        const fixture_array *metrics = strstr(name, "plateau") ? get(f, name, "metrics") : NULL;
        t2_lr_params p = params_from_hp(hp);
        t2_lr_schedule *a = NULL, *b = NULL;
        CHECK_OK(t2_lr_schedule_create(&a, &p));
        CHECK_OK(t2_lr_schedule_create(&b, &p));
        if (!a || !b) goto next;
        int steps = (int)want->n - 1, cut = steps / 2 + 1;
        for (int k = 0; k < cut; k++) CHECK_OK(advance(a, metrics, k));
        t2_lr_state st;
        CHECK_OK(t2_lr_schedule_get_state(a, &st));
        CHECK(st.step == cut && st.kind == (int32_t)p.kind);
        CHECK_OK(t2_lr_schedule_set_state(b, &st));
        CHECK(t2_lr_schedule_lr(b) == t2_lr_schedule_lr(a));
        for (int k = cut; k < steps; k++) {
            CHECK_OK(advance(a, metrics, k));
            CHECK_OK(advance(b, metrics, k));
            if (t2_lr_schedule_lr(a) != t2_lr_schedule_lr(b) || !near(t2_lr_schedule_lr(b), want->data[k + 1])) {
                fprintf(stderr, "%s: restored at %d, step %d: %.9g vs %.9g (torch %.9g)\n", name, cut, k + 1,
                        t2_lr_schedule_lr(b), t2_lr_schedule_lr(a), want->data[k + 1]);
                check_failures++;
                break;
            }
        }
    next:
        t2_lr_schedule_free(a);
        t2_lr_schedule_free(b);
    }
}

#define CHECK_ERR(expr, code, word)                                                            \
    do {                                                                                       \
        CHECK_RC(expr, code);                                                                  \
        if (!strstr(t2_errmsg(), word)) {                                                      \
            fprintf(stderr, "%s:%d: message \"%s\" does not name \"%s\"\n", __FILE__, __LINE__, \
                    t2_errmsg(), word);                                                        \
            check_failures++;                                                                  \
        }                                                                                      \
    } while (0)

static void test_defaults_and_modes(void)
{
    t2_lr_params p = t2_lr_default(T2_LR_PLATEAU, 0.1);
    CHECK(p.step_mode == T2_LR_STEP_EPOCH && p.factor == 0.1 && p.patience == 10 && p.threshold == 1e-4 &&
          p.threshold_mode == T2_LR_THRESHOLD_REL && p.cooldown == 0 && p.min_lr == 0 && p.plateau_eps == 1e-8 &&
          p.mode == T2_LR_PLATEAU_MIN);
    p = t2_lr_default(T2_LR_ONECYCLE, 0.5);
    CHECK(p.step_mode == T2_LR_STEP_BATCH && p.max_lr == 0.5 && p.pct_start == 0.3 && p.div_factor == 25 &&
          p.final_div_factor == 1e4 && p.anneal == T2_LR_ANNEAL_COS);
    p = t2_lr_default(T2_LR_STEP, 0.1);
    CHECK(p.gamma == 0.1 && p.warmup_steps == 0 && fabs(p.warmup_start_factor - 1.0 / 3) < 1e-15);
    CHECK(strcmp(t2_lr_kind_name(T2_LR_COSINE), "cosine") == 0 && strcmp(t2_lr_kind_name(0), "?") == 0);

    /* The step mode is stored, not interpreted. */
    p = t2_lr_default(T2_LR_CONSTANT, 0.1);
    p.step_mode = T2_LR_STEP_MANUAL;
    t2_lr_schedule *s = NULL;
    CHECK_OK(t2_lr_schedule_create(&s, &p));
    CHECK(t2_lr_schedule_step_mode(s) == T2_LR_STEP_MANUAL && t2_lr_schedule_lr(s) == 0.1);
    CHECK_ERR(t2_lr_schedule_step_metric(s, 1.0), T2_EINVAL, "constant");
    t2_lr_state st;
    CHECK_OK(t2_lr_schedule_get_state(s, &st));
    st.kind = T2_LR_COSINE;
    CHECK_ERR(t2_lr_schedule_set_state(s, &st), T2_EINVAL, "kind");
    st.kind = T2_LR_CONSTANT;
    st.step = -3;
    CHECK_ERR(t2_lr_schedule_set_state(s, &st), T2_EINVAL, "step=-3");
    t2_lr_schedule_free(s);

    /* Plateau needs a metric; a restored state with a bad lr is refused and changes nothing. */
    p = t2_lr_default(T2_LR_PLATEAU, 0.1);
    CHECK_OK(t2_lr_schedule_create(&s, &p));
    CHECK_ERR(t2_lr_schedule_step(s), T2_EINVAL, "metric");
    CHECK_OK(t2_lr_schedule_step_metric(s, NAN));   /* NaN is a bad epoch, not an error */
    CHECK_OK(t2_lr_schedule_get_state(s, &st));
    CHECK(st.num_bad_epochs == 1 && isinf(st.best));
    st.lr = -1;
    CHECK_ERR(t2_lr_schedule_set_state(s, &st), T2_EINVAL, "lr=-1");
    st.lr = NAN;
    CHECK_RC(t2_lr_schedule_set_state(s, &st), T2_EINVAL);
    CHECK(t2_lr_schedule_lr(s) == 0.1);
    t2_lr_schedule_free(s);

    /* One-cycle: stepping to total_steps is fine, past it is an error that changes nothing. */
    p = t2_lr_default(T2_LR_ONECYCLE, 0.5);
    p.total_steps = 10;
    p.warmup_steps = 2;
    CHECK_OK(t2_lr_schedule_create(&s, &p));
    for (int k = 0; k < 12; k++) CHECK_OK(t2_lr_schedule_step(s));
    double last = t2_lr_schedule_lr(s);
    CHECK_ERR(t2_lr_schedule_step(s), T2_ESTATE, "total_steps=10");
    CHECK(t2_lr_schedule_lr(s) == last);
    CHECK_OK(t2_lr_schedule_get_state(s, &st));
    CHECK(st.step == 12);
    st.step = 13;
    CHECK_ERR(t2_lr_schedule_set_state(s, &st), T2_EINVAL, "step=13");
    t2_lr_schedule_free(s);

    /* Warmup from 0 (allowed here; torch's LinearLR needs a factor > 0). */
    p = t2_lr_default(T2_LR_CONSTANT, 1.0);
    p.warmup_steps = 4;
    p.warmup_start_factor = 0;
    CHECK_OK(t2_lr_schedule_create(&s, &p));
    static const double ramp[] = {0, 0.25, 0.5, 0.75, 1, 1};
    for (int k = 0; k < 6; k++) {
        CHECK_NEAR(t2_lr_schedule_lr(s), ramp[k], 1e-15);
        CHECK_OK(t2_lr_schedule_step(s));
    }
    t2_lr_schedule_free(s);

    t2_lr_schedule_free(NULL);
    CHECK(t2_lr_schedule_lr(NULL) == 0 && t2_lr_schedule_step_mode(NULL) == T2_LR_STEP_MANUAL);
}

static void expect_bad(const t2_lr_params *p, const char *word)
{
    t2_lr_schedule *s = (t2_lr_schedule *)&s;
    int rc = t2_lr_schedule_create(&s, p);
    if (rc != T2_EINVAL || s != NULL || !strstr(t2_errmsg(), word)) {
        fprintf(stderr, "expected T2_EINVAL naming \"%s\", got %d (%s)\n", word, rc, t2_errmsg());
        check_failures++;
        if (rc == T2_OK) t2_lr_schedule_free(s);
    }
}

static void test_bad_params(void)
{
    t2_lr_params p;
    p = t2_lr_default(T2_LR_STEP, 0.1);
    expect_bad(&p, "step_size=0");
    p.step_size = 5;
    p.gamma = 0;
    expect_bad(&p, "gamma=0");
    p = t2_lr_default(T2_LR_EXPONENTIAL, 0.1);
    expect_bad(&p, "gamma=0");   /* torch has no default gamma: it must be set */
    p.gamma = -0.5;
    expect_bad(&p, "gamma=-0.5");
    p = t2_lr_default(T2_LR_MULTISTEP, 0.1);
    expect_bad(&p, "n_milestones=0");
    p.n_milestones = T2_LR_MAX_MILESTONES + 1;
    expect_bad(&p, "n_milestones=17");
    p.n_milestones = 2;
    p.milestones[0] = 3;
    p.milestones[1] = -1;
    expect_bad(&p, "milestones[1]=-1");
    p = t2_lr_default(T2_LR_COSINE, 0.1);
    expect_bad(&p, "t_max=0");
    p.t_max = 10;
    p.eta_min = -1;
    expect_bad(&p, "eta_min=-1");
    p = t2_lr_default(T2_LR_CONSTANT, -0.1);
    expect_bad(&p, "base_lr=-0.1");
    p = t2_lr_default(T2_LR_CONSTANT, 0.1);
    p.warmup_steps = -1;
    expect_bad(&p, "warmup_steps=-1");
    p.warmup_steps = 3;
    p.warmup_start_factor = 1.5;
    expect_bad(&p, "warmup_start_factor=1.5");
    p = t2_lr_default(T2_LR_CONSTANT, 0.1);
    p.step_mode = (t2_lr_step_mode)7;
    expect_bad(&p, "step_mode=7");
    p = t2_lr_default((t2_lr_kind)99, 0.1);
    expect_bad(&p, "kind=99");
    p = t2_lr_default(T2_LR_ONECYCLE, 0.1);
    expect_bad(&p, "total_steps=0");
    p.total_steps = 10;
    p.pct_start = 0.05;   /* phase 1 would be shorter than one step */
    expect_bad(&p, "pct_start=0.05");
    p.pct_start = 1.0;
    expect_bad(&p, "pct_start=1");
    p.pct_start = 0.3;
    p.max_lr = 0;
    expect_bad(&p, "max_lr=0");
    p.max_lr = 0.1;
    p.div_factor = 0;
    expect_bad(&p, "div_factor=0");
    p = t2_lr_default(T2_LR_PLATEAU, 0.1);
    p.factor = 1.0;
    expect_bad(&p, "factor=1");
    p.factor = 0.5;
    p.patience = -1;
    expect_bad(&p, "patience=-1");
    p.patience = 1;
    p.cooldown = -2;
    expect_bad(&p, "cooldown=-2");
    p.cooldown = 0;
    p.min_lr = -1;
    expect_bad(&p, "min_lr=-1");
    p.min_lr = 0;
    p.threshold = -0.1;
    expect_bad(&p, "threshold=-0.1");
    p.threshold = 0;
    p.mode = (t2_lr_plateau_mode)5;
    expect_bad(&p, "mode=5");

    t2_lr_schedule *s = NULL;
    CHECK_ERR(t2_lr_schedule_create(&s, NULL), T2_EINVAL, "NULL");
    p = t2_lr_default(T2_LR_CONSTANT, 0.1);
    CHECK_ERR(t2_lr_schedule_create(NULL, &p), T2_EINVAL, "NULL");
    CHECK_ERR(t2_lr_schedule_step(NULL), T2_EINVAL, "NULL");
    CHECK_ERR(t2_lr_schedule_step_metric(NULL, 1), T2_EINVAL, "NULL");
    t2_lr_state st;
    CHECK_ERR(t2_lr_schedule_get_state(NULL, &st), T2_EINVAL, "NULL");
    CHECK_ERR(t2_lr_schedule_set_state(NULL, &st), T2_EINVAL, "NULL");
}

int main(void)
{
    fixture *f = fixture_load("lr_schedules.txt");
    CHECK(f != NULL);
    if (f) {
        test_sequences(f);
        test_restore(f);
    }
    test_defaults_and_modes();
    test_bad_params();
    fixture_free(f);
    return check_report("test_lr_schedule");
}
