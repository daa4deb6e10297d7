/* cnn.c — the seeds' CNN on Fashion-MNIST with a bare training loop (no experiment runner):
 *
 *   cnn [--epochs E] [--batch B] [--lr LR] [--threads T]      train E epochs, report test accuracy
 *   cnn --bench N [--batch B] [--threads T]                   training and eval throughput only
 *   ... --parts P                                               split each batch into P parts (default: the
 *                                                               thread count), as a trial with P slots that
 *                                                               runs on fewer threads does
 *   ... --profile                                               (bench mode) also each layer's forward and
 *                                                               backward time per timed batch
 *   ... --model resnet                                          the same for the example ResNet
 *                                                               (trials/resnet_fashion_mnist_model.h, width 16)
 *   ... --conv im2col                                           conv2d without its direct AVX-512 kernels
 *                                                               (conv_direct.h), to compare the two paths
 *
 * Throughput is measured like ../shared/bench/torch_cnn.py: N timed SGD(momentum 0.9) steps after
 * 10 warm-up steps, then eval over the 10000 test images in batches of 1000. Prints one line
 * `t2_cnn train_img_per_s=… eval_img_per_s=… batch=… threads=…` (bench mode) or per-epoch lines
 * and `t2_cnn test_accuracy=… seconds=…` (training mode). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <t2exp.h>
#include "../trials/fashion_mnist_cnn_model.h"
#include "../trials/resnet_fashion_mnist_model.h"
#include "internal.h"
#include "../framework/nn/conv_direct.h"
#include "parallel.h"

#define TRY(expr)                                                                            \
    do {                                                                                     \
        int rc_ = (expr);                                                                    \
        if (rc_) {                                                                           \
            fprintf(stderr, "cnn: %s failed: %s: %s\n", #expr, t2_strerror(rc_), t2_errmsg()); \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

typedef struct {
    t2_net *net;
    t2_optim *opt;
    t2_tensor dlogp;
    t2_rng rng;
} model;

/* One SGD step on a batch; returns the loss through *loss. */
static int train_step(model *m, const t2_batch *b, float *loss)
{
    const t2_tensor *y;
    int rc;
    size_t np;
    if ((rc = t2_net_forward(m->net, &b->x, T2_TRAIN, &m->rng, &y))) return rc;
    t2_tensor d = m->dlogp;
    d.shape[0] = b->n;
    if ((rc = t2_loss_nll(y, b->labels, loss, &d))) return rc;
    t2_net_zero_grad(m->net);
    if ((rc = t2_net_backward(m->net, &d, NULL))) return rc;
    float *p = t2_net_params(m->net, &np);
    return t2_optim_step(m->opt, p, t2_net_grads(m->net, NULL), np);
}

/* Test-set accuracy and eval throughput with batches of 1000. */
static int evaluate(model *m, t2_dataset *test, double *acc, double *img_per_s, double *profile)
{
    t2_loader_params lp = t2_loader_params_default();
    lp.batch_size = 1000;
    lp.repeat = 0;
    t2_loader *ld = NULL;
    int rc = t2_loader_create(&ld, test, &lp);
    if (rc) return rc;
    int64_t correct = 0, seen = 0;
    double compute = 0.0;
    t2__net_profile(m->net, profile);
    const t2_batch *b;
    while ((rc = t2_loader_next(ld, &b)) == T2_OK && b) {
        const t2_tensor *y;
        int64_t c;
        double t = t2__now();
        if ((rc = t2_net_forward(m->net, &b->x, T2_EVAL, NULL, &y))) break;
        compute += t2__now() - t;
        if ((rc = t2_topk_correct(y, b->labels, 1, &c))) break;
        correct += c;
        seen += b->n;
    }
    t2__net_profile(m->net, NULL);
    t2_loader_free(ld);
    *acc = seen ? (double)correct / (double)seen : 0.0;
    *img_per_s = compute > 0 ? (double)seen / compute : 0.0;
    return rc;
}

/* The --profile table: each layer's forward and backward milliseconds per batch and its share of
 * the step (the rest, "other", is the loss, the optimizer and the loader). */
static void print_profile(const t2_net *net, const char *what, const double *acc, int batches, double step_s)
{
    char summary[8192], *line = summary;
    int layers = t2_net_num_layers(net);
    if (t2_net_summary(net, summary, sizeof summary)) summary[0] = '\0';
    double ms = 1e3 / batches, in_layers = 0;
    printf("%s layer kind fwd_ms bwd_ms share\n", what);
    for (int i = 0; i < layers; i++) {
        char kind[32] = "?";
        char *nl = strchr(line, '\n');
        if (nl) {
            *nl = '\0';
            sscanf(line, "%*d %31s", kind);
            line = nl + 1;
        }
        double f = acc[i], b = acc[layers + i];
        in_layers += f + b;
        printf("%s %d %s %.3f %.3f %.1f%%\n", what, i, kind, f * ms, b * ms, 100.0 * (f + b) / step_s);
    }
    printf("%s - other %.3f - %.1f%%\n", what, (step_s - in_layers) * ms, 100.0 * (step_s - in_layers) / step_s);
}

int main(int argc, char **argv)
{
    int epochs = 1, batch = 64, threads = 2, bench = 0, resnet = 0, profile = 0, parts = 0, direct = 1;
    double lr = 0.05;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--epochs") && i + 1 < argc) epochs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--lr") && i + 1 < argc) lr = atof(argv[++i]);
        else if (!strcmp(argv[i], "--bench") && i + 1 < argc) bench = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--profile")) profile = 1;
        else if (!strcmp(argv[i], "--parts") && i + 1 < argc) parts = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--model") && i + 1 < argc && (!strcmp(argv[i + 1], "cnn") || !strcmp(argv[i + 1], "resnet")))
            resnet = !strcmp(argv[++i], "resnet");
        else if (!strcmp(argv[i], "--conv") && i + 1 < argc && !strcmp(argv[i + 1], "im2col")) {
            i++;
            direct = 0;
        } else {
            fprintf(stderr, "usage: cnn [--epochs E] [--batch B] [--lr LR] [--threads T] [--bench N] [--parts P] [--profile] [--model cnn|resnet] [--conv im2col]\n");
            return 2;
        }
    }
    if (epochs < 1 || batch < 1 || threads < 1 || bench < 0 || parts < 0 || !(lr > 0)) {
        fprintf(stderr, "cnn: --epochs, --batch, --threads and --lr must be positive\n");
        return 2;
    }
    t2__conv_direct_set(direct);
    TRY(t2__set_num_parts(parts));
    TRY(t2_set_num_threads(threads));

    t2_dataset *train = NULL, *test = NULL;
    TRY(t2_dataset_fashion_mnist(&train, "train", NULL));
    TRY(t2_dataset_fashion_mnist(&test, "test", NULL));

    model m = {0};
    t2_rng_seed(&m.rng, 1);
    if (resnet) TRY(resnet_fashion_mnist(&m.net, 16));
    else TRY(fashion_mnist_cnn(&m.net, 0.25f, 0.5f, 128));
    TRY(t2_net_init(m.net, &m.rng));
    t2_sgd_params sp = t2_sgd_default();
    sp.lr = lr;
    sp.momentum = 0.9;
    size_t np;
    t2_net_params(m.net, &np);
    TRY(t2_sgd_create(&m.opt, &sp, np));
    TRY(t2_tensor_alloc(&m.dlogp, 2, (int[]){batch, 10}));

    t2_loader_params lp = t2_loader_params_default();
    lp.batch_size = batch;
    lp.shuffle = 1;
    lp.seed = 1;
    lp.num_workers = 1;
    lp.prefetch = 4;
    t2_loader *ld = NULL;
    TRY(t2_loader_create(&ld, train, &lp));
    const t2_batch *b;
    float loss = 0.0f;
    double acc, eval_rate, t0 = t2__now();

    if (bench) {
        double *acc_s = NULL;
        if (profile && !(acc_s = calloc(2 * (size_t)t2_net_num_layers(m.net), sizeof *acc_s))) {
            fprintf(stderr, "cnn: out of memory\n");
            return 1;
        }
        for (int i = 0; i < 10 + bench; i++) {
            if (i == 10) {
                t0 = t2__now();
                t2__net_profile(m.net, acc_s);
            }
            TRY(t2_loader_next(ld, &b));
            TRY(train_step(&m, b, &loss));
        }
        double step_s = t2__now() - t0, train_rate = (double)bench * batch / step_s;
        t2__net_profile(m.net, NULL);
        if (acc_s) print_profile(m.net, "profile", acc_s, bench, step_s);
        if (acc_s) memset(acc_s, 0, 2 * (size_t)t2_net_num_layers(m.net) * sizeof *acc_s);
        TRY(evaluate(&m, test, &acc, &eval_rate, acc_s));
        /* Eval batches are 1000 images; its "other" is the time outside the layers' forwards. */
        if (acc_s) print_profile(m.net, "profile_eval", acc_s, 10, 10000.0 / eval_rate);
        free(acc_s);
        printf("t2_%s train_img_per_s=%.1f eval_img_per_s=%.1f batch=%d threads=%d parts=%d conv=%s\n",
               resnet ? "resnet" : "cnn", train_rate, eval_rate, batch, threads, parts ? parts : threads,
               t2__conv_direct_available() ? "direct" : "im2col");
    } else {
        int64_t per_epoch = t2_loader_batches_per_epoch(ld);
        for (int e = 0; e < epochs; e++) {
            double sum = 0.0, te = t2__now();
            for (int64_t i = 0; i < per_epoch; i++) {
                TRY(t2_loader_next(ld, &b));
                TRY(train_step(&m, b, &loss));
                sum += loss;
                if ((i + 1) % 200 == 0)
                    printf("epoch %d batch %lld/%lld loss %.4f\n", e + 1, (long long)(i + 1), (long long)per_epoch,
                           sum / (double)(i + 1));
            }
            double train_s = t2__now() - te;
            TRY(evaluate(&m, test, &acc, &eval_rate, NULL));
            printf("epoch %d train_loss=%.4f test_accuracy=%.4f train_img_per_s=%.0f\n", e + 1,
                   sum / (double)per_epoch, acc, (double)per_epoch * batch / train_s);
        }
        printf("t2_cnn test_accuracy=%.4f epochs=%d seconds=%.1f\n", acc, epochs, t2__now() - t0);
    }
    t2_loader_free(ld);
    t2_tensor_free(&m.dlogp);
    t2_optim_free(m.opt);
    t2_net_free(m.net);
    t2_dataset_free(train);
    t2_dataset_free(test);
    return 0;
}
