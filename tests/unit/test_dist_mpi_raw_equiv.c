/* test_dist_mpi_raw_equiv.c — raw parameter buffers train data-parallel as on one rank, run by
 * ctest under `mpirun -np 2`.
 *
 * The plain-array MLP of trials/raw_mlp_model.h (four separate buffers wrapped with
 * t2_wrap_params; AdamW over the two weight matrices and SGD with momentum over the two biases,
 * bound with t2_wrap_optimizer_for; gradient clipping by a global norm of 1) trains STEPS steps
 * of MSE regression twice: (a) on S ranks with per-rank batch 64/S, each rank starting from its
 * own random weights so that only t2_wrap_params' broadcast makes them agree, t2_step_optimizer
 * averaging the gradients; (b) on rank 0 alone with batch 64. The replicas must be bit-identical
 * and within 1e-6 of the single-rank parameters, and training must have moved the parameters far
 * more than that. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dist/comm.h"
#include "runner/ctx.h"
#include "trials/raw_mlp_model.h"

enum { STEPS = 30, GLOBAL_BATCH = 64, IN = 6, HIDDEN = 16, N = GLOBAL_BATCH * STEPS };

static int rank_;

#define TRY(expr)                                                                                \
    do {                                                                                         \
        int rc_ = (expr);                                                                        \
        if (rc_) {                                                                               \
            fprintf(stderr, "rank %d: %s: %s: %s\n", rank_, #expr, t2_strerror(rc_), t2_errmsg()); \
            return rc_;                                                                          \
        }                                                                                        \
    } while (0)

/* y = sin(x0) + x1*x2 - 0.5*x3 on hashed inputs in [-1, 1]. */
static void make_data(float *x, float *y)
{
    for (int r = 0; r < N; r++) {
        for (int i = 0; i < IN; i++) {
            uint32_t h = (uint32_t)r * 2654435761u ^ (uint32_t)i * 40503u;
            h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
            x[r * IN + i] = (float)(h & 65535) / 32767.5f - 1.0f;
        }
        const float *v = x + r * IN;
        y[r] = sinf(v[0]) + v[1] * v[2] - 0.5f * v[3];
    }
}

typedef struct trainer {
    t2_ctx ctx;
    rmlp m;
    t2_optim *ow, *ob;
} trainer;

static void trainer_free(trainer *t)
{
    t2_optim_free(t->ow);
    t2_optim_free(t->ob);
    rmlp_free(&t->m);
}

static int trainer_new(trainer *t, const t2__comm *c, int batch, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    t2__ctx_init(&t->ctx, NULL, NULL, GLOBAL_BATCH, batch, 1, seed, 1);
    t->ctx.comm = *c;
    t->ctx.clip = T2__CLIP_NORM;
    t->ctx.clip_max = 1.0;
    t2_rng rng;
    t2_rng_seed(&rng, seed);
    TRY(rmlp_init(&t->m, IN, HIDDEN, 1, batch, &rng));
    TRY(rmlp_wrap(&t->ctx, &t->m));
    t2_adam_params ap = t2_adamw_default();
    ap.lr = 0.01;
    t2_sgd_params sp = t2_sgd_default();
    sp.lr = 0.05;
    sp.momentum = 0.9;
    TRY(t2_adamw_create(&t->ow, &ap, t->m.n[RMLP_W1] + t->m.n[RMLP_W2]));
    TRY(t2_sgd_create(&t->ob, &sp, t->m.n[RMLP_B1] + t->m.n[RMLP_B2]));
    TRY(t2_wrap_optimizer_for(&t->ctx, t->ow, (const char *[]){"fc1.weight", "fc2.weight"}, 2));
    TRY(t2_wrap_optimizer_for(&t->ctx, t->ob, (const char *[]){"fc1.bias", "fc2.bias"}, 2));
    return t2__ctx_bind(&t->ctx);
}

/* STEPS steps: step k's global batch is rows [64k, 64k + 64), this rank's the r-th slice. */
static int train(trainer *t, const float *x, const float *y, int batch, int rank)
{
    for (int s = 0; s < STEPS; s++) {
        int row = s * GLOBAL_BATCH + rank * batch;
        const float *xb = x + (size_t)row * IN;
        float loss;
        TRY(rmlp_forward(&t->m, xb, batch));
        t2_tensor pred = t2_tensor_view(t->m.y, 2, (int[]){batch, 1});
        t2_tensor target = t2_tensor_view((float *)y + row, 2, (int[]){batch, 1});
        t2_tensor d = t2_tensor_view(t->m.dy, 2, (int[]){batch, 1});
        TRY(t2_loss_mse(&pred, &target, &loss, &d));
        rmlp_backward(&t->m, xb, batch);
        TRY(t2_step_optimizer(&t->ctx));
    }
    return T2_OK;
}

static int run(t2__comm *c)
{
    float *x = malloc((size_t)N * IN * sizeof *x), *y = malloc((size_t)N * sizeof *y);
    float *init[RMLP_NBUF] = {0};
    trainer dist, one;
    memset(&one, 0, sizeof one);
    memset(&dist, 0, sizeof dist);
    int per = GLOBAL_BATCH / c->size, rc = T2_ENOMEM;
    if (!x || !y) goto out;
    make_data(x, y);
    /* Each rank its own seed: only the broadcast in t2_wrap_params makes the replicas agree. */
    if ((rc = trainer_new(&dist, c, per, 1000 + (uint64_t)c->rank))) goto out;
    for (int k = 0; k < RMLP_NBUF; k++) {
        if (!(init[k] = malloc(dist.m.n[k] * sizeof(float)))) goto out;
        memcpy(init[k], dist.m.p[k], dist.m.n[k] * sizeof(float));
    }
    if ((rc = train(&dist, x, y, per, c->rank))) goto out;
    for (int k = 0; k < RMLP_NBUF; k++)
        CHECK_OK(t2__comm_agree(c, dist.m.p[k], dist.m.n[k] * sizeof(float), rmlp_names[k]));
    if (c->rank == 0) {
        t2__comm solo;
        t2__comm_init_single(&solo);
        if ((rc = trainer_new(&one, &solo, GLOBAL_BATCH, 1000)) || (rc = train(&one, x, y, GLOBAL_BATCH, 0))) goto out;
        double diff = 0, change = 0;
        for (int k = 0; k < RMLP_NBUF; k++)
            for (size_t i = 0; i < dist.m.n[k]; i++) {
                diff = fmax(diff, fabs((double)dist.m.p[k][i] - one.m.p[k][i]));
                change = fmax(change, fabs((double)one.m.p[k][i] - init[k][i]));
            }
        printf("%d steps, %d ranks x batch %d vs 1 rank x batch %d: max_abs_param_diff=%.3g (largest change in "
               "training %.3g)\n", STEPS, c->size, per, GLOBAL_BATCH, diff, change);
        CHECK(diff < 1e-6);
        CHECK(change > 1000 * diff && change > 0.05);
        CHECK(t2_optim_step_count(dist.ow) == STEPS && t2_optim_step_count(dist.ob) == STEPS);
    }
    rc = T2_OK;
out:
    for (int k = 0; k < RMLP_NBUF; k++) free(init[k]);
    trainer_free(&dist);
    trainer_free(&one);
    free(x);
    free(y);
    return rc;
}

int main(int argc, char **argv)
{
    t2__comm c;
    int rc = t2__comm_init_auto(&c, &argc, &argv);
    if (rc) {
        fprintf(stderr, "test_dist_mpi_raw_equiv: init: %s\n", t2_errmsg());
        return 1;
    }
    rank_ = c.rank;
    if (!c.mpi || c.size < 2 || GLOBAL_BATCH % c.size) {
        fprintf(stderr, "test_dist_mpi_raw_equiv: run me with mpirun -np 2 or 4 (got %d)\n", c.size);
        t2__comm_finalize(&c);
        return 1;
    }
    if ((rc = run(&c))) {
        fprintf(stderr, "rank %d: %s\n", c.rank, t2_errmsg());
        return 1;
    }
    double failures = check_failures;
    CHECK_OK(t2__comm_allreduce_sum_double(&c, &failures, 1));
    CHECK_OK(t2__comm_finalize(&c));
    if (failures > 0 && !check_failures) check_failures = 1;
    return rank_ == 0 ? check_report("test_dist_mpi_raw_equiv") : check_failures != 0;
}
