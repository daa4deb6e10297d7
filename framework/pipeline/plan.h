/* plan.h — which stage of a pipeline runs next: a pure state machine, events in, operations out
 * (like the searchers). It never looks at a file or a process; the executor (run.c) does what the
 * operations say and reports back, and the unit tests drive it without either.
 *
 * A stage waits until every dependency has succeeded (ran, or was up to date). Then the plan asks
 * the executor to CHECK it (hash its definition, resolved references and inputs); the executor
 * answers with t2__plan_checked(up_to_date). A stage is skipped when it is up to date, it was not
 * forced, and no dependency of it ran in this run; otherwise it is READY and STARTs as soon as its
 * slots fit into the free part of the pool (ready stages in topological order; a stage that does
 * not fit lets a smaller one behind it go first). A failed stage BLOCKs everything that depends
 * on it, transitively; independent stages carry on. */
#ifndef T2_PIPELINE_PLAN_H
#define T2_PIPELINE_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "flow.h"

typedef enum {
    T2__PS_WAITING,  /* a dependency has not finished */
    T2__PS_CHECKING, /* CHECK was issued; waiting for t2__plan_checked */
    T2__PS_READY,    /* must run; waiting for slots */
    T2__PS_RUNNING,
    T2__PS_DONE,     /* ran and succeeded */
    T2__PS_SKIPPED,  /* up to date: not run */
    T2__PS_FAILED,
    T2__PS_BLOCKED,  /* a dependency failed (or was blocked or canceled) */
    T2__PS_CANCELED, /* the run was stopped before this stage started */
} t2__pstate;

typedef enum { T2__OP_CHECK, T2__OP_START, T2__OP_BLOCK } t2__op_kind;

typedef struct t2__plan_op {
    t2__op_kind kind;
    size_t stage;
    size_t cause; /* BLOCK: the failed stage it waited for */
} t2__plan_op;

typedef struct t2__plan t2__plan;

/* slots[i]: what stage i takes from the pool (clamped to 1..pool); forced[i] (may be NULL):
 * run stage i even when up to date. pool >= 1. The flow must stay alive as long as the plan. */
int t2__plan_new(const t2__flow *f, const int64_t *slots, const unsigned char *forced, int64_t pool,
                 t2__plan **out);
void t2__plan_free(t2__plan *p);

/* Operations due now, written to ops (room for f->n of them, which always suffices); *nops gets
 * their number. Issue them in order. */
void t2__plan_next(t2__plan *p, t2__plan_op *ops, size_t *nops);

/* Events. T2_ESTATE when the stage is not in the state the event follows (CHECKING, RUNNING). */
int t2__plan_checked(t2__plan *p, size_t stage, int up_to_date);
int t2__plan_finished(t2__plan *p, size_t stage, int ok);
/* The check itself failed (an input is missing, a reference has no value): the stage FAILED
 * without running, and blocks its dependents like any failure. */
int t2__plan_check_failed(t2__plan *p, size_t stage);
/* Stop: no more CHECK or START; stages not started become CANCELED. Running ones finish. */
void t2__plan_stop(t2__plan *p);

t2__pstate t2__plan_state(const t2__plan *p, size_t stage);
const char *t2__pstate_name(t2__pstate s); /* "waiting", ..., "canceled" */
int64_t t2__plan_free_slots(const t2__plan *p);
/* 1 when nothing is left to do or wait for (every stage final). */
int t2__plan_finished_all(const t2__plan *p);
/* Number of stages that FAILED, were BLOCKED or CANCELED. */
size_t t2__plan_unsuccessful(const t2__plan *p);

#endif
