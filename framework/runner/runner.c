/* runner.c — the training loop: build the trial, then for every train op run batches to the
 * target, report training metrics every scheduling_unit batches, validate every
 * min_validation_period and at the op's end, and report. Any failure becomes one "error" message
 * naming the callback and the reason; the controller decides what happens to the trial. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "channel.h"
#include "ctx.h"
#include "metrics.h"
#include "runner.h"
#include "t2exp/nn.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int64_t t2__length_to_batches(t2__unit unit, int64_t n, int64_t global_batch, int64_t batches_per_epoch)
{
    switch (unit) {
    case T2__UNIT_RECORDS: return global_batch > 0 ? (n + global_batch - 1) / global_batch : n;
    case T2__UNIT_EPOCHS: return n * batches_per_epoch;
    default: return n;
    }
}

typedef struct {
    const t2__runner_args *a;
    t2_ctx ctx;
    void *state;
    t2_loader *train, *valid;
    t2_metrics tm, vm;
    int64_t batches_per_epoch, vperiod, report_every;
    int64_t last_validated; /* batches_trained at the last validation (-1: none) */
    double t_data, t_compute, t_comm0, t_window;
    int64_t window_batches, window_samples;
} run;

/* Sends {"type":"error",...}; returns 1, the runner's exit status for a failed trial. */
static int fail(run *r, const char *where, int rc)
{
    char msg[1200];
    snprintf(msg, sizeof msg, "%s", t2_errmsg()[0] ? t2_errmsg() : t2_strerror(rc));
    fprintf(stderr, "t2exp runner: trial %lld failed in %s: %s\n", (long long)r->a->trial_id, where, msg);
    fflush(stderr);
    t2__val *m = t2__val_map();
    t2__val_map_set(m, "type", t2__val_string("error"));
    t2__val_map_set(m, "where", t2__val_string(where));
    t2__val_map_set(m, "message", t2__val_string(msg));
    t2__val_map_set(m, "batches", t2__val_int(r->ctx.batches_trained));
    if (rc == T2_EHPARAM) t2__val_map_set(m, "invalid_hparams", t2__val_bool(1));
    if (m) t2__channel_send(r->a->fd, m);
    t2__val_free(m);
    return 1;
}

static t2__val *values_of(const t2_metrics *m)
{
    t2__val *v = t2__val_map();
    for (int i = 0; v && i < m->n; i++)
        if (m->acc[i].count) t2__val_map_set(v, m->acc[i].name, t2__val_double(t2__metrics_value(m, i)));
    return v;
}

static int send_metrics(run *r, const char *kind, const t2_metrics *m, t2__val *extra)
{
    t2__val *msg = extra ? extra : t2__val_map();
    t2__val_map_set(msg, "type", t2__val_string("metrics"));
    t2__val_map_set(msg, "kind", t2__val_string(kind));
    t2__val_map_set(msg, "batches", t2__val_int(r->ctx.batches_trained));
    t2__val_map_set(msg, "epoch", t2__val_double(r->batches_per_epoch > 0
                                                     ? (double)r->ctx.batches_trained / (double)r->batches_per_epoch
                                                     : 0.0));
    int rc = t2__val_map_set(msg, "values", values_of(m));
    if (!rc) rc = t2__channel_send(r->a->fd, msg);
    t2__val_free(msg);
    return rc;
}

/* The training-metrics report for the window just ended, with throughput and the time split. */
static int report_training(run *r)
{
    double elapsed = now() - r->t_window, comm = r->ctx.comm.seconds - r->t_comm0;
    t2__val *x = t2__val_map();
    t2__val_map_set(x, "batches_per_s", t2__val_double(elapsed > 0 ? r->window_batches / elapsed : 0.0));
    t2__val_map_set(x, "samples_per_s", t2__val_double(elapsed > 0 ? r->window_samples / elapsed : 0.0));
    t2__val_map_set(x, "data_s", t2__val_double(r->t_data));
    t2__val_map_set(x, "compute_s", t2__val_double(r->t_compute - comm));
    t2__val_map_set(x, "comm_s", t2__val_double(comm));
    int rc = send_metrics(r, "training", &r->tm, x);
    printf("batches %lld: %d training metrics, %.1f batches/s, data %.2fs compute %.2fs comm %.2fs\n",
           (long long)r->ctx.batches_trained, r->tm.n, elapsed > 0 ? r->window_batches / elapsed : 0.0, r->t_data,
           r->t_compute - comm, comm);
    fflush(stdout);
    t2__metrics_reset(&r->tm);
    r->t_data = r->t_compute = 0.0;
    r->t_comm0 = r->ctx.comm.seconds;
    r->window_batches = r->window_samples = 0;
    r->t_window = now();
    return rc;
}

static int validate_pass(run *r);

/* Validation time does not count against the training window's throughput. */
static int validate(run *r)
{
    double t0 = now();
    int rc = validate_pass(r);
    r->t_window += now() - t0;
    return rc;
}

static int validate_pass(run *r)
{
    const t2_trial_def *d = r->a->def;
    const t2_batch *b;
    int rc;
    t2__metrics_reset(&r->vm);
    for (;;) {
        if ((rc = t2_loader_next(r->valid, &b))) return fail(r, "validation loader", rc);
        if (!b) break;
        r->vm.batch_weight = b->n;
        if ((rc = d->evaluate_batch(&r->ctx, r->state, b, &r->vm))) return fail(r, "evaluate_batch", rc);
        if (r->vm.error[0]) return t2_seterr(T2_ENUMERIC, "%s", r->vm.error), fail(r, "evaluate_batch", T2_ENUMERIC);
    }
    const char *metric = r->a->cfg->searcher.metric;
    int found = 0;
    char names[512] = "";
    for (int i = 0; i < r->vm.n; i++) {
        found |= strcmp(r->vm.acc[i].name, metric) == 0;
        size_t off = strlen(names);
        snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "", r->vm.acc[i].name);
    }
    if (!found) {
        t2_seterr(T2_ENOTFOUND, "validation did not report the searcher metric '%s' (reported: %s)", metric,
                  names[0] ? names : "nothing");
        return fail(r, "evaluate_batch", T2_ENOTFOUND);
    }
    /* Validation metrics are reduced across ranks (sum and weight) before reporting; one rank here. */
    if ((rc = send_metrics(r, "validation", &r->vm, NULL))) return fail(r, "report", rc);
    r->last_validated = r->ctx.batches_trained;
    if (r->ctx.sched && t2_lr_schedule_step_mode(r->ctx.sched) != T2_LR_STEP_MANUAL) {
        for (int i = 0; i < r->vm.n; i++)
            if (strcmp(r->vm.acc[i].name, metric) == 0) {
                rc = t2_lr_schedule_step_metric(r->ctx.sched, t2__metrics_value(&r->vm, i));
                if (rc && rc != T2_EINVAL) return fail(r, "lr schedule", rc); /* EINVAL: not a plateau schedule */
            }
    }
    return 0;
}

/* Trains up to `target` batches in total, validating on the period and at the end. */
static int train_to(run *r, int64_t target)
{
    const t2_trial_def *d = r->a->def;
    int rc;
    if (r->a->cfg->perform_initial_validation && r->ctx.batches_trained == 0 && r->last_validated < 0 &&
        (rc = validate(r)))
        return rc;
    r->t_window = now();
    while (r->ctx.batches_trained < target) {
        const t2_batch *b;
        double t0 = now();
        if ((rc = t2_loader_next(r->train, &b))) return fail(r, "training loader", rc);
        if (!b) return t2_seterr(T2_ESTATE, "the training loader ended; it must repeat (repeat = 1)"),
                       fail(r, "training loader", T2_ESTATE);
        double t1 = now();
        if (b->epoch != r->ctx.epoch) {
            if (r->ctx.sched && t2_lr_schedule_step_mode(r->ctx.sched) == T2_LR_STEP_EPOCH &&
                (rc = t2_lr_schedule_step(r->ctx.sched)) && rc != T2_ESTATE)
                return fail(r, "lr schedule", rc);
            r->ctx.epoch = b->epoch;
        }
        r->tm.batch_weight = b->n;
        if ((rc = d->train_batch(&r->ctx, r->state, b, &r->tm))) return fail(r, "train_batch", rc);
        if (r->tm.error[0]) return t2_seterr(T2_ENUMERIC, "%s", r->tm.error), fail(r, "train_batch", T2_ENUMERIC);
        r->t_data += t1 - t0;
        r->t_compute += now() - t1;
        r->ctx.batches_trained++;
        r->window_batches++;
        r->window_samples += (int64_t)b->n * r->ctx.comm.size;
        if (r->ctx.batches_trained % r->report_every == 0 || r->ctx.batches_trained == target)
            if ((rc = report_training(r))) return fail(r, "report", rc);
        if (r->vperiod > 0 && r->ctx.batches_trained % r->vperiod == 0 && r->ctx.batches_trained < target &&
            (rc = validate(r)))
            return rc;
    }
    if (r->last_validated != r->ctx.batches_trained && (rc = validate(r))) return rc;
    t2__val *m = t2__val_map();
    t2__val_map_set(m, "type", t2__val_string("done"));
    t2__val_map_set(m, "batches", t2__val_int(r->ctx.batches_trained));
    rc = m ? t2__channel_send(r->a->fd, m) : T2_ENOMEM;
    t2__val_free(m);
    return rc ? fail(r, "report", rc) : 0;
}

static int serve(run *r)
{
    const t2__config *cfg = r->a->cfg;
    int rc;
    int64_t gb = r->ctx.global_batch;
    r->batches_per_epoch = cfg->records_per_epoch > 0 ? (cfg->records_per_epoch + gb - 1) / gb
                                                      : t2_loader_batches_per_epoch(r->train);
    if (r->batches_per_epoch <= 0) return t2_seterr(T2_ESTATE, "the training loader has no batches"), fail(r, "build_training_loader", T2_ESTATE);
    r->vperiod = cfg->min_validation_period.n > 0
                     ? t2__length_to_batches(cfg->min_validation_period.unit, cfg->min_validation_period.n, gb,
                                             r->batches_per_epoch)
                     : 0;
    r->report_every = cfg->scheduling_unit > 0 ? cfg->scheduling_unit : 100;
    size_t np = 0;
    if (r->ctx.net) t2_net_params(r->ctx.net, &np);
    t2__val *hello = t2__val_map();
    t2__val_map_set(hello, "type", t2__val_string("ready"));
    t2__val_map_set(hello, "batches_per_epoch", t2__val_int(r->batches_per_epoch));
    t2__val_map_set(hello, "params", t2__val_int((int64_t)np));
    rc = hello ? t2__channel_send(r->a->fd, hello) : T2_ENOMEM;
    t2__val_free(hello);
    if (rc) return fail(r, "report", rc);
    for (;;) {
        t2__val *op = NULL;
        if ((rc = t2__channel_recv(r->a->fd, &op))) return fail(r, "channel", rc);
        if (!op || strcmp(t2__msg_type(op), "exit") == 0) {
            t2__val_free(op);
            return 0;
        }
        const t2__val *len = t2__val_map_get(op, "length");
        int64_t target = len && len->kind == T2__VAL_INT
                             ? t2__length_to_batches(cfg->searcher.max_length.unit, len->i, gb, r->batches_per_epoch)
                             : -1;
        int is_train = strcmp(t2__msg_type(op), "train") == 0;
        t2__val_free(op);
        if (!is_train || target < 0)
            return t2_seterr(T2_EFORMAT, "unexpected message from the controller"), fail(r, "channel", T2_EFORMAT);
        if ((rc = train_to(r, target))) return rc;
    }
}

int t2__runner_run(const t2__runner_args *a)
{
    run r;
    memset(&r, 0, sizeof r);
    r.a = a;
    r.last_validated = -1;
    t2__metrics_init(&r.tm);
    t2__metrics_init(&r.vm);
    int64_t gb = 0, per = 0;
    int rc = t2__config_batch_sizes(a->cfg, a->hparams, &gb, &per);
    t2__ctx_init(&r.ctx, a->cfg, a->hparams, gb, per, a->trial_id, a->seed, a->threads);
    r.ctx.epoch = 0;
    int status = 0;
    if (rc) {
        status = fail(&r, "hyperparameters", rc);
        goto done;
    }
    if ((rc = t2_set_num_threads(a->threads > 0 ? a->threads : 1))) {
        status = fail(&r, "threads", rc);
        goto done;
    }
    if ((rc = a->def->build_model(&r.ctx, &r.state))) {
        status = fail(&r, "build_model", rc);
        goto done;
    }
    if ((rc = a->def->build_training_loader(&r.ctx, r.state, &r.train)) || !r.train) {
        if (!rc) t2_seterr(rc = T2_ESTATE, "build_training_loader returned no loader");
        status = fail(&r, "build_training_loader", rc);
        goto done;
    }
    if ((rc = a->def->build_validation_loader(&r.ctx, r.state, &r.valid)) || !r.valid) {
        if (!rc) t2_seterr(rc = T2_ESTATE, "build_validation_loader returned no loader");
        status = fail(&r, "build_validation_loader", rc);
        goto done;
    }
    status = serve(&r);
done:
    t2_loader_free(r.train);
    t2_loader_free(r.valid);
    if (r.state && a->def->destroy) a->def->destroy(r.state);
    t2__metrics_free(&r.tm);
    t2__metrics_free(&r.vm);
    return status;
}
