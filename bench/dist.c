/* dist.c — data-parallel training throughput of the seeds' CNN, for `bench/run dist`:
 *
 *   mpirun -np S dist --bench N [--global-batch G] [--threads T]   S ranks, per-slot batch G/S
 *   dist --bench N [--global-batch G] [--threads T]                 one rank, batch G
 *   mpirun -np S dist --comm-only N                                  N gradient allreduces alone
 *
 * The same program in both modes (the communicator is the single rank without mpirun). Each rank
 * runs 10 warm-up and N timed SGD(momentum) steps on its shard of Fashion-MNIST: forward, NLL,
 * backward, gradient allreduce over the flat buffer, optimizer step — the runner's step. Rank 0
 * prints `t2_dist ranks=… threads=… global_batch=… img_per_s=… step_ms=… allreduce_ms=…
 * allreduce_share=…`, where allreduce_* is rank 0's time inside the gradient allreduce (waiting
 * for the slower rank included) per step and as a share of the step. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <t2exp.h>
#include "../framework/dist/comm.h"
#include "../trials/fashion_mnist_cnn_model.h"
#include "internal.h"

#define TRY(expr)                                                                                     \
    do {                                                                                              \
        int rc_ = (expr);                                                                             \
        if (rc_) {                                                                                    \
            fprintf(stderr, "dist rank %d: %s failed: %s: %s\n", c->rank, #expr, t2_strerror(rc_), t2_errmsg()); \
            return 1;                                                                                 \
        }                                                                                             \
    } while (0)

/* The allreduce by itself, on a buffer the CNN's size: the link's figure for the cost model. */
static int comm_only(t2__comm *c, int steps)
{
    size_t np = 1199882;
    float *g = calloc(np, sizeof *g);
    if (!g) return fprintf(stderr, "dist: out of memory\n"), 1;
    int rc = 0;
    double t0 = 0;
    for (int i = 0; i < 5 + steps && !rc; i++) {
        if (i == 5 && !(rc = t2__comm_barrier(c))) t0 = t2__now();
        rc = t2__comm_allreduce_mean(c, g, np);
    }
    double t = t2__now() - t0;
    free(g);
    if (rc) return fprintf(stderr, "dist rank %d: %s\n", c->rank, t2_errmsg()), 1;
    /* A ring allreduce moves 2(S-1)/S of the buffer in and out of each rank. */
    double ms = 1e3 * t / steps, bytes = 2.0 * (c->size - 1) / c->size * (double)np * sizeof *g;
    if (c->rank == 0)
        printf("t2_dist_comm ranks=%d bytes=%zu allreduce_ms=%.3f bus_gb_per_s=%.2f\n", c->size, np * sizeof *g, ms,
               bytes / (ms * 1e-3) / 1e9);
    return 0;
}

static int bench(t2__comm *c, int steps, int global, int threads)
{
    int per = global / c->size;
    TRY(t2_set_num_threads(threads));
    t2_dataset *train = NULL;
    TRY(t2_dataset_fashion_mnist(&train, "train", NULL));
    t2_net *net = NULL;
    t2_rng rng;
    t2_rng_seed(&rng, 1);
    TRY(fashion_mnist_cnn(&net, 0.25f, 0.5f, 128));
    TRY(t2_net_init(net, &rng));
    size_t np;
    float *p = t2_net_params(net, &np), *g = t2_net_grads(net, NULL);
    TRY(t2__comm_broadcast(c, p, np * sizeof *p));
    /* Each rank draws its own dropout masks, as it would in a trial. */
    t2_rng_seed(&rng, 1000 + (uint64_t)c->rank);
    t2_sgd_params sp = t2_sgd_default();
    sp.lr = 0.05;
    sp.momentum = 0.9;
    t2_optim *opt = NULL;
    TRY(t2_sgd_create(&opt, &sp, np));
    t2_tensor d;
    TRY(t2_tensor_alloc(&d, 2, (int[]){per, 10}));
    t2_loader_params lp = t2_loader_params_default();
    lp.batch_size = per;
    lp.shuffle = 1;
    lp.seed = 1;
    lp.rank = c->rank;
    lp.world_size = c->size;
    lp.num_workers = 1;
    lp.prefetch = 4;
    t2_loader *ld = NULL;
    TRY(t2_loader_create(&ld, train, &lp));

    double t0 = 0, comm0 = 0;
    for (int i = 0; i < 10 + steps; i++) {
        if (i == 10) {
            TRY(t2__comm_barrier(c));
            t0 = t2__now();
            comm0 = c->seconds;
        }
        const t2_batch *b;
        const t2_tensor *y;
        float loss;
        TRY(t2_loader_next(ld, &b));
        TRY(t2_net_forward(net, &b->x, T2_TRAIN, &rng, &y));
        d.shape[0] = b->n;
        TRY(t2_loss_nll(y, b->labels, &loss, &d));
        t2_net_zero_grad(net);
        TRY(t2_net_backward(net, &d, NULL));
        TRY(t2__comm_allreduce_mean(c, g, np));
        TRY(t2_optim_step(opt, p, g, np));
    }
    TRY(t2__comm_barrier(c));
    double total = t2__now() - t0, comm = c->seconds - comm0;
    /* Each rank's own work per step (outside the allreduce): a spread between the fastest and
     * the slowest rank is time the fast one spends waiting inside the allreduce. */
    double work_min = 1e3 * (total - comm) / steps, work_max = work_min;
    TRY(t2__comm_allreduce_minmax(c, &work_min, &work_max, 1));
    if (c->rank == 0)
        printf("t2_dist ranks=%d threads=%d global_batch=%d per_rank_batch=%d steps=%d img_per_s=%.1f step_ms=%.2f "
               "allreduce_ms=%.3f allreduce_share=%.4f rank_work_ms_min=%.2f rank_work_ms_max=%.2f params=%zu\n",
               c->size, threads, per * c->size, per, steps, (double)steps * per * c->size / total,
               1e3 * total / steps, 1e3 * comm / steps, comm / total, work_min, work_max, np);
    t2_loader_free(ld);
    t2_tensor_free(&d);
    t2_optim_free(opt);
    t2_net_free(net);
    t2_dataset_free(train);
    return 0;
}

int main(int argc, char **argv)
{
    t2__comm comm, *c = &comm;
    if (t2__comm_init_auto(c, &argc, &argv)) {
        fprintf(stderr, "dist: %s\n", t2_errmsg());
        return 1;
    }
    int steps = 200, global = 64, threads = 1, only_comm = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bench") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--global-batch") && i + 1 < argc) global = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--comm-only") && i + 1 < argc) steps = atoi(argv[++i]), only_comm = 1;
        else {
            fprintf(stderr, "usage: [mpirun -np S] dist [--bench N | --comm-only N] [--global-batch G] [--threads T]\n");
            return 2;
        }
    }
    if (steps < 1 || threads < 1 || global < c->size || global % c->size) {
        fprintf(stderr, "dist: --bench and --threads must be positive, --global-batch a multiple of %d ranks\n",
                c->size);
        return 2;
    }
    /* A failing rank returns without finalising, so mpirun ends the job rather than hang. */
    if (only_comm ? comm_only(c, steps) : bench(c, steps, global, threads)) return 1;
    return t2__comm_finalize(c) ? 1 : 0;
}
