/* test_pipeline_plan.c — the pure scheduler: checks before starts, skipping up-to-date stages,
 * the slot pool, parallel independent stages, failure blocking only dependents, --force, a
 * dependency that ran making its dependents run, and stopping. No process is started. */
#include <string.h>
#include "check.h"
#include "pipeline/flow.h"
#include "pipeline/plan.h"

/*   a -> b -> d
 *   c (independent, 2 slots)
 *   e after d                                           */
static const char FLOW[] = "name: p\n"
                           "stages:\n"
                           "  a: {run: [x]}\n"
                           "  b: {run: [x], after: [a]}\n"
                           "  c: {run: [x], resources: {slots: 2}}\n"
                           "  d: {run: [x], after: [b]}\n"
                           "  e: {run: [x], after: [d]}\n";
enum { A, B, C, D, E };

static t2__flow *flow(void)
{
    t2__flow *f = NULL;
    CHECK_OK(t2__flow_load_string(FLOW, strlen(FLOW), "p.yaml", "/", &f));
    return f;
}

/* ops as a string like "check a, check c" for easy comparison */
static void ops_text(const t2__flow *f, const t2__plan_op *ops, size_t n, char *buf, size_t len)
{
    static const char *const kind[] = {"check", "start", "block"};
    buf[0] = '\0';
    for (size_t k = 0; k < n; k++) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, "%s%s %s", k ? ", " : "", kind[ops[k].kind], f->stages[ops[k].stage].name);
    }
}

#define NEXT(want)                                      \
    do {                                                \
        size_t n_;                                      \
        char got_[256];                                 \
        t2__plan_next(p, ops, &n_);                     \
        ops_text(f, ops, n_, got_, sizeof got_);        \
        CHECK_STR(got_, want);                          \
    } while (0)

static void test_fresh_run(void)
{
    t2__flow *f = flow();
    if (!f) return;
    int64_t slots[] = {1, 1, 2, 1, 1};
    t2__plan *p = NULL;
    t2__plan_op ops[5];
    CHECK_OK(t2__plan_new(f, slots, NULL, 3, &p));
    NEXT("check a, check c");
    CHECK_OK(t2__plan_checked(p, A, 0));
    CHECK_OK(t2__plan_checked(p, C, 0));
    NEXT("start a, start c"); /* 1 + 2 slots: the pool of 3 is full */
    CHECK(t2__plan_free_slots(p) == 0);
    NEXT("");
    CHECK_RC(t2__plan_finished(p, B, 1), T2_ESTATE); /* b never started */
    CHECK_OK(t2__plan_finished(p, A, 1));
    NEXT("check b");
    CHECK_OK(t2__plan_checked(p, B, 1)); /* up to date, but a ran in this run: b runs */
    NEXT("start b");
    CHECK_OK(t2__plan_finished(p, C, 1));
    CHECK_OK(t2__plan_finished(p, B, 1));
    NEXT("check d");
    CHECK_OK(t2__plan_checked(p, D, 0));
    NEXT("start d");
    CHECK_OK(t2__plan_finished(p, D, 1));
    NEXT("check e");
    CHECK(!t2__plan_finished_all(p));
    CHECK_OK(t2__plan_checked(p, E, 0));
    NEXT("start e");
    CHECK_OK(t2__plan_finished(p, E, 1));
    NEXT("");
    CHECK(t2__plan_finished_all(p) && t2__plan_unsuccessful(p) == 0);
    t2__plan_free(p);
    t2__flow_free(f);
}

static void test_all_up_to_date(void)
{
    t2__flow *f = flow();
    if (!f) return;
    int64_t slots[] = {1, 1, 2, 1, 1};
    t2__plan *p = NULL;
    t2__plan_op ops[5];
    CHECK_OK(t2__plan_new(f, slots, NULL, 1, &p));
    NEXT("check a, check c");
    CHECK_OK(t2__plan_checked(p, A, 1));
    CHECK_OK(t2__plan_checked(p, C, 1));
    NEXT("check b");
    CHECK_OK(t2__plan_checked(p, B, 1));
    NEXT("check d");
    CHECK_OK(t2__plan_checked(p, D, 1));
    NEXT("check e");
    CHECK_OK(t2__plan_checked(p, E, 1));
    NEXT("");
    CHECK(t2__plan_finished_all(p) && t2__plan_state(p, E) == T2__PS_SKIPPED);
    CHECK_RC(t2__plan_checked(p, E, 1), T2_ESTATE);
    t2__plan_free(p);
    t2__flow_free(f);
}

/* b fails: d and e are blocked (naming b), c still runs to its end. */
static void test_failure_isolated(void)
{
    t2__flow *f = flow();
    if (!f) return;
    int64_t slots[] = {1, 1, 8, 1, 1}; /* c wants more than the pool: it takes the whole pool */
    t2__plan *p = NULL;
    t2__plan_op ops[5];
    CHECK_OK(t2__plan_new(f, slots, NULL, 2, &p));
    NEXT("check a, check c");
    CHECK_OK(t2__plan_checked(p, A, 0));
    CHECK_OK(t2__plan_checked(p, C, 0));
    NEXT("start a"); /* c needs the whole pool of 2; a took one */
    CHECK_OK(t2__plan_finished(p, A, 1));
    NEXT("check b, start c");
    CHECK_OK(t2__plan_checked(p, B, 0));
    NEXT(""); /* c holds both slots */
    CHECK_OK(t2__plan_finished(p, C, 1));
    NEXT("start b");
    CHECK_OK(t2__plan_finished(p, B, 0));
    size_t n;
    t2__plan_next(p, ops, &n);
    CHECK(n == 2 && ops[0].kind == T2__OP_BLOCK && ops[0].stage == D && ops[0].cause == B);
    CHECK(ops[1].kind == T2__OP_BLOCK && ops[1].stage == E && ops[1].cause == B); /* the root cause */
    CHECK(t2__plan_finished_all(p) && t2__plan_unsuccessful(p) == 3);
    CHECK(t2__plan_state(p, C) == T2__PS_DONE && t2__plan_state(p, B) == T2__PS_FAILED);
    t2__plan_free(p);
    t2__flow_free(f);
}

/* --force b: b and everything after it run although up to date; a, c are skipped. A failed
 * check (a missing input) fails the stage without a start. */
static void test_force_and_check_failure(void)
{
    t2__flow *f = flow();
    if (!f) return;
    int64_t slots[] = {1, 1, 1, 1, 1};
    unsigned char seed[5] = {0, 1, 0, 0, 0}, forced[5];
    t2__flow_descendants(f, seed, forced);
    t2__plan *p = NULL;
    t2__plan_op ops[5];
    CHECK_OK(t2__plan_new(f, slots, forced, 4, &p));
    NEXT("check a, check c");
    CHECK_OK(t2__plan_checked(p, A, 1));
    CHECK_OK(t2__plan_check_failed(p, C));
    NEXT("check b");
    CHECK_OK(t2__plan_checked(p, B, 1));
    NEXT("start b");
    CHECK_OK(t2__plan_finished(p, B, 1));
    NEXT("check d");
    CHECK_OK(t2__plan_checked(p, D, 1));
    NEXT("start d");
    CHECK(t2__plan_state(p, A) == T2__PS_SKIPPED && t2__plan_state(p, C) == T2__PS_FAILED);
    t2__plan_free(p);
    t2__flow_free(f);
}

/* Stop while a and c run: nothing more is checked or started; the rest is canceled. */
static void test_stop(void)
{
    t2__flow *f = flow();
    if (!f) return;
    int64_t slots[] = {1, 1, 1, 1, 1};
    t2__plan *p = NULL;
    t2__plan_op ops[5];
    CHECK_OK(t2__plan_new(f, slots, NULL, 4, &p));
    NEXT("check a, check c");
    CHECK_OK(t2__plan_checked(p, A, 0));
    CHECK_OK(t2__plan_checked(p, C, 0));
    NEXT("start a, start c");
    t2__plan_stop(p);
    CHECK(!t2__plan_finished_all(p));
    CHECK_OK(t2__plan_finished(p, A, 1));
    CHECK_OK(t2__plan_finished(p, C, 0));
    NEXT("");
    CHECK(t2__plan_finished_all(p));
    CHECK(t2__plan_state(p, B) == T2__PS_CANCELED && t2__plan_state(p, E) == T2__PS_CANCELED);
    CHECK(t2__plan_unsuccessful(p) == 4);
    t2__plan_free(p);
    CHECK_RC(t2__plan_new(f, slots, NULL, 0, &p), T2_EINVAL);
    CHECK(p == NULL);
    t2__flow_free(f);
}

int main(void)
{
    test_fresh_run();
    test_all_up_to_date();
    test_failure_isolated();
    test_force_and_check_failure();
    test_stop();
    return check_report("test_pipeline_plan");
}
