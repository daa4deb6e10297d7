/* test_dist_mpi_equiv.c — data-parallel training is the same training (issue 7's equivalence),
 * run by ctest under `mpirun -np 2`.
 *
 * The seeds' CNN with dropout off trains STEPS SGD(momentum) steps twice from the same initial
 * weights: (a) on S ranks, each with per-slot batch 64/S from a loader sharded by rank, averaging
 * gradients with the communicator; (b) on rank 0 alone with batch 64 and a single-rank
 * communicator, while the others wait. The parameters must agree within float tolerance and the
 * validation metrics (evaluated sharded, reduced by sample count, over a set whose last batch
 * splits unevenly) must match the single-rank ones. Uses Fashion-MNIST when installed, else a
 * deterministic synthetic set of the same shape. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dist/comm.h"
#include "trials/fashion_mnist_cnn_model.h"

enum { STEPS = 20, GLOBAL_BATCH = 64, VALID_N = 1999, VALID_BATCH = 500 };

#define TRY(expr)                                                                                \
    do {                                                                                         \
        int rc_ = (expr);                                                                        \
        if (rc_) {                                                                               \
            fprintf(stderr, "rank %d: %s: %s: %s\n", rank_, #expr, t2_strerror(rc_), t2_errmsg()); \
            return rc_;                                                                          \
        }                                                                                        \
    } while (0)

static int rank_;

/* A stand-in for Fashion-MNIST: class k is a bright bar at row 2k+3 on hashed noise. */
static int synthetic(t2_dataset **out, int n, uint32_t salt)
{
    t2_tensor x;
    int32_t *y = malloc((size_t)n * sizeof *y);
    int rc = y ? t2_tensor_alloc(&x, 4, (int[]){n, 1, 28, 28}) : T2_ENOMEM;
    if (rc) {
        free(y);
        return rc;
    }
    for (int i = 0; i < n; i++) {
        y[i] = (int32_t)((i * 7 + (int)salt) % 10);
        for (int p = 0; p < 784; p++) {
            uint32_t h = ((uint32_t)i * 2654435761u) ^ ((uint32_t)p * 40503u) ^ salt;
            h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
            x.data[(size_t)i * 784 + p] = (float)(h & 255) / 1020.0f + (p / 28 == 2 * y[i] + 3 ? 0.7f : 0.0f);
        }
    }
    rc = t2_dataset_from_tensor(out, &x, y, 1);
    t2_tensor_free(&x);
    free(y);
    return rc;
}

/* The first n samples of ds as a dataset of their own. */
static int head(t2_dataset **out, t2_dataset *ds, int n)
{
    t2_tensor x;
    int32_t *y = NULL;
    int rc = t2_dataset_to_tensor(ds, &x, &y);
    if (rc) return rc;
    x.shape[0] = n;
    rc = t2_dataset_from_tensor(out, &x, y, 1);
    t2_tensor_free(&x);
    free(y);
    return rc;
}

typedef struct { t2_net *net; t2_optim *opt; t2_tensor d; t2_rng rng; } model;

static void model_free(model *m)
{
    t2_tensor_free(&m->d);
    t2_optim_free(m->opt);
    t2_net_free(m->net);
}

/* Same seed on every rank, then rank 0's weights everywhere (what t2_wrap_model does). */
static int model_new(model *m, t2__comm *c, int batch)
{
    size_t np;
    t2_sgd_params sp = t2_sgd_default();
    /* lr 0.01: at the seeds' 0.05 (effective 0.5 with momentum) the first steps are violent
     * enough to amplify float rounding (3.7e-9 after one step) to 1.9e-4 after 20, which says
     * nothing about the communicator; docs/distributed.md has the figures. */
    sp.lr = 0.01;
    sp.momentum = 0.9;
    TRY(fashion_mnist_cnn(&m->net, 0.0f, 0.0f, 128));
    t2_rng_seed(&m->rng, 7);
    TRY(t2_net_init(m->net, &m->rng));
    float *p = t2_net_params(m->net, &np);
    TRY(t2__comm_broadcast(c, p, np * sizeof *p));
    TRY(t2_sgd_create(&m->opt, &sp, np));
    TRY(t2_tensor_alloc(&m->d, 2, (int[]){batch, 10}));
    return T2_OK;
}

/* STEPS steps on this rank's shard; *loss gets the global mean loss of the last step. */
static int train(model *m, t2__comm *c, t2_dataset *ds, int batch, double *loss)
{
    t2_loader_params lp = t2_loader_params_default();
    lp.batch_size = batch;
    lp.shuffle = 1;
    lp.seed = 11;
    lp.rank = c->rank;
    lp.world_size = c->size;
    t2_loader *ld = NULL;
    TRY(t2_loader_create(&ld, ds, &lp));
    int rc = T2_OK;
    size_t np;
    float *p = t2_net_params(m->net, &np), *g = t2_net_grads(m->net, NULL);
    for (int s = 0; s < STEPS && !rc; s++) {
        const t2_batch *b;
        const t2_tensor *y;
        float l = 0.0f;
        t2_tensor d = m->d;
        d.shape[0] = batch;
        if ((rc = t2_loader_next(ld, &b)) || (rc = t2_net_forward(m->net, &b->x, T2_TRAIN, &m->rng, &y)) ||
            (rc = t2_loss_nll(y, b->labels, &l, &d)))
            break;
        t2_net_zero_grad(m->net);
        if ((rc = t2_net_backward(m->net, &d, NULL)) || (rc = t2__comm_allreduce_mean(c, g, np)) ||
            (rc = t2_optim_step(m->opt, p, g, np)))
            break;
        *loss = l;
        rc = t2__comm_allreduce_sum_double(c, loss, 1);
        *loss /= c->size;
    }
    t2_loader_free(ld);
    if (rc) fprintf(stderr, "rank %d: training: %s\n", rank_, t2_errmsg());
    return rc;
}

/* Validation over this rank's shard, reduced like the runner will: loss and accuracy as
 * (sum over samples, sample count) pairs. */
static int validate(model *m, t2__comm *c, t2_dataset *ds, double *loss, double *acc)
{
    t2_loader_params lp = t2_loader_params_default();
    lp.batch_size = VALID_BATCH / c->size;
    lp.repeat = 0;
    lp.rank = c->rank;
    lp.world_size = c->size;
    t2_loader *ld = NULL;
    TRY(t2_loader_create(&ld, ds, &lp));
    double sum[2] = {0, 0}, weight[2] = {0, 0};
    const t2_batch *b;
    int rc;
    while ((rc = t2_loader_next(ld, &b)) == T2_OK && b) {
        const t2_tensor *y;
        float l;
        int64_t correct;
        if ((rc = t2_net_forward(m->net, &b->x, T2_EVAL, NULL, &y)) || (rc = t2_loss_nll(y, b->labels, &l, NULL)) ||
            (rc = t2_topk_correct(y, b->labels, 1, &correct)))
            break;
        sum[0] += (double)l * b->n;
        sum[1] += (double)correct;
        weight[0] += b->n;
        weight[1] += b->n;
    }
    t2_loader_free(ld);
    if (rc) return rc;
    TRY(t2__comm_allreduce_weighted(c, sum, weight, 2));
    CHECK(weight[0] == VALID_N);
    *loss = sum[0] / weight[0];
    *acc = sum[1] / weight[1];
    return T2_OK;
}

static int run(t2__comm *c)
{
    t2_dataset *train_ds = NULL, *test_ds = NULL, *valid_ds = NULL;
    const char *source = "fashion-mnist";
    if (t2_dataset_fashion_mnist(&train_ds, "train", NULL) || t2_dataset_fashion_mnist(&test_ds, "test", NULL)) {
        t2_dataset_free(train_ds);
        source = "synthetic (Fashion-MNIST not installed)";
        TRY(synthetic(&train_ds, 4096, 1));
        TRY(synthetic(&test_ds, VALID_N, 2));
    }
    TRY(head(&valid_ds, test_ds, VALID_N));
    t2_dataset_free(test_ds);

    model dist = {0}, one = {0};
    double dloss = 0, dvloss = 0, dacc = 0, sloss = 0, svloss = 0, sacc = 0;
    int per = GLOBAL_BATCH / c->size, rc;
    size_t np;
    float *init = NULL, *pd;
    if ((rc = model_new(&dist, c, per))) goto out;
    if (c->rank == 0) {
        t2_net_params(dist.net, &np);
        init = malloc(np * sizeof *init);
        if (!init) { rc = T2_ENOMEM; goto out; }
        memcpy(init, t2_net_params(dist.net, NULL), np * sizeof *init);
    }
    if ((rc = train(&dist, c, train_ds, per, &dloss)) || (rc = validate(&dist, c, valid_ds, &dvloss, &dacc))) goto out;
    pd = t2_net_params(dist.net, &np);
    /* The replicas must be bit-identical: each rank applied the same averaged gradient. */
    CHECK_OK(t2__comm_agree(c, pd, np * sizeof *pd, "the trained parameters"));

    if (c->rank == 0) {
        t2__comm solo;
        t2__comm_init_single(&solo);
        if ((rc = model_new(&one, &solo, GLOBAL_BATCH)) || (rc = train(&one, &solo, train_ds, GLOBAL_BATCH, &sloss)) ||
            (rc = validate(&one, &solo, valid_ds, &svloss, &sacc)))
            goto out;
        const float *ps = t2_net_params(one.net, NULL);
        double diff = 0, change = 0, scale = 0;
        for (size_t i = 0; i < np; i++) {
            diff = fmax(diff, fabs((double)pd[i] - ps[i]));
            change = fmax(change, fabs((double)ps[i] - init[i]));
            scale = fmax(scale, fabs((double)ps[i]));
        }
        printf("data: %s; %d steps, %d ranks x batch %d vs 1 rank x batch %d, %zu params\n", source, STEPS, c->size,
               per, GLOBAL_BATCH, np);
        printf("max_abs_param_diff=%.3g (largest param %.3g, largest change in training %.3g)\n", diff, scale, change);
        printf("train_loss dist=%.6f single=%.6f\n", dloss, sloss);
        printf("validation (%d samples) loss dist=%.6f single=%.6f, accuracy dist=%.4f single=%.4f\n", VALID_N, dvloss,
               svloss, dacc, sacc);
        CHECK(diff < 1e-5);
        CHECK(change > 1000 * diff); /* training moved the weights far more than the ranks disagree */
        CHECK_NEAR(dloss, sloss, 1e-4);
        CHECK_NEAR(dvloss, svloss, 1e-4);
        CHECK_NEAR(dacc, sacc, 1.5 / VALID_N); /* at most one sample on a near-tie may flip */
    }
out:
    free(init);
    model_free(&dist);
    model_free(&one);
    t2_dataset_free(train_ds);
    t2_dataset_free(valid_ds);
    return rc;
}

int main(int argc, char **argv)
{
    t2__comm c;
    int rc = t2__comm_init_auto(&c, &argc, &argv);
    if (rc) {
        fprintf(stderr, "test_dist_mpi_equiv: init: %s\n", t2_errmsg());
        return 1;
    }
    rank_ = c.rank;
    if (!c.mpi || c.size < 2 || GLOBAL_BATCH % c.size || VALID_BATCH % c.size) {
        fprintf(stderr, "test_dist_mpi_equiv: run me with mpirun -np 2 or 4 (got %d)\n", c.size);
        t2__comm_finalize(&c);
        return 1;
    }
    /* One thread per rank: the ranks are the parallelism, as in a 1-slot-per-core trial. */
    if ((rc = t2_set_num_threads(1)) || (rc = run(&c))) {
        fprintf(stderr, "rank %d: %s\n", c.rank, t2_errmsg());
        return 1; /* without finalising: mpirun ends the other ranks */
    }
    double failures = check_failures;
    CHECK_OK(t2__comm_allreduce_sum_double(&c, &failures, 1));
    CHECK_OK(t2__comm_finalize(&c));
    if (failures > 0 && !check_failures) check_failures = 1;
    return rank_ == 0 ? check_report("test_dist_mpi_equiv") : check_failures != 0;
}
