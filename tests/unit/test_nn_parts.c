/* The part count fixes a net's numbers, the thread count only its speed (parallel.h): with P fixed
 * (t2__set_num_parts), a forward and backward through the layers whose reductions go by parts
 * (conv2d, dense, layernorm, global_avgpool, embedding) give bit-identical outputs, input
 * gradients and parameter gradients on 1, 2 and 3 threads, also when the thread count changes
 * between steps of one net (as a trial's does when cores free up). A different P does change the
 * conv2d gradients (so the comparison tests something; the token net's layers split by channels
 * and rows, so P changes nothing there, where the BLAS gives a block of a product the bits of the
 * whole: see blas_blocks_exact), and with P unset it follows the thread count (a program that only
 * calls t2_set_num_threads keeps P = threads). */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "parallel.h"
#include "t2exp.h"

enum { N = 7, C = 2, H = 6, W = 6, CLASSES = 5, T = 4, VOCAB = 9, DIM = 6 };

typedef struct {
    float out[N * CLASSES], dx[N * C * H * W];
    float *grads;
    size_t ngrads;
} result;

/* conv2d -> layernorm (over W) -> relu -> conv2d -> global_avgpool -> dense: every part-split layer
 * on image samples. */
static t2_net *image_net(void)
{
    t2_net *net = NULL;
    t2_rng r;
    t2_rng_seed(&r, 42);
    CHECK_OK(t2_net_create(&net, 3, (int[]){C, H, W}));
    CHECK_OK(t2_net_conv2d(net, 4, 3, 1, 1));
    CHECK_OK(t2_net_layernorm(net, 1e-5f));
    CHECK_OK(t2_net_relu(net));
    CHECK_OK(t2_net_conv2d(net, 3, 3, 1, 0));
    CHECK_OK(t2_net_global_avgpool(net));
    CHECK_OK(t2_net_dense(net, CLASSES));
    CHECK_OK(t2_net_init(net, &r));
    return net;
}

/* embedding -> layernorm -> flatten -> dense: the embedding's scatter-add by parts. */
static t2_net *token_net(void)
{
    t2_net *net = NULL;
    t2_rng r;
    t2_rng_seed(&r, 43);
    CHECK_OK(t2_net_create(&net, 1, (int[]){T}));
    CHECK_OK(t2_net_embedding(net, VOCAB, DIM));
    CHECK_OK(t2_net_layernorm(net, 1e-5f));
    CHECK_OK(t2_net_flatten(net));
    CHECK_OK(t2_net_dense(net, CLASSES));
    CHECK_OK(t2_net_init(net, &r));
    return net;
}

/* One forward and backward of x with dy = a fixed pattern; grads zeroed first. */
static void step(t2_net *net, const t2_tensor *x, int want_dx, result *res)
{
    const t2_tensor *y = NULL, *dx = NULL;
    t2_rng r;
    t2_rng_seed(&r, 5);
    CHECK_OK(t2_net_forward(net, x, T2_TRAIN, &r, &y));
    if (!y) return;
    memcpy(res->out, y->data, sizeof res->out);
    float dyv[N * CLASSES];
    for (int i = 0; i < N * CLASSES; i++) dyv[i] = (float)((i * 7) % 11) / 11.0f - 0.4f;
    t2_tensor dy = t2_tensor_view(dyv, 2, (int[]){N, CLASSES});
    t2_net_zero_grad(net);
    CHECK_OK(t2_net_backward(net, &dy, want_dx ? &dx : NULL));
    if (want_dx && dx) memcpy(res->dx, dx->data, sizeof res->dx);
    size_t n = 0;
    const float *g = t2_net_grads(net, &n);
    res->grads = malloc(n * sizeof *res->grads);
    CHECK(res->grads != NULL);
    if (res->grads) memcpy(res->grads, g, n * sizeof *res->grads);
    res->ngrads = n;
}

static int same(const result *a, const result *b)
{
    return !memcmp(a->out, b->out, sizeof a->out) && !memcmp(a->dx, b->dx, sizeof a->dx) &&
           a->ngrads == b->ngrads && a->grads && b->grads && !memcmp(a->grads, b->grads, a->ngrads * sizeof *a->grads);
}

/* Whether this BLAS's sgemm gives every row-and-column block of a product the bits it has in the
 * whole product, as dense.c's parts need for P to change nothing. Not every kernel does: Debian's
 * OpenBLAS on a CPU it does not know (an Intel Xeon of model 207 here) runs its generic Prescott
 * kernels, whose edge rows sum in another order, and the token net's output then moves in the last
 * bit between P = 1 and 2. cblas_sgemm is the one libt2exp loaded (RowMajor 101, NoTrans 111,
 * Trans 112), with its bias first and beta 1, as dense.c calls it. */
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *,
                         int);
static int blas_blocks_exact(int m, int n, int k)
{
    sgemm_fn sgemm;
    void *sym = dlsym(RTLD_DEFAULT, "cblas_sgemm");
    if (!sym) return 0;
    memcpy(&sgemm, &sym, sizeof sgemm);
    float *a = malloc(sizeof(float) * (size_t)(m * k + n * k + 2 * m * n));
    if (!a) return 0;
    float *w = a + m * k, *whole = w + n * k, *blocks = whole + m * n;
    t2_rng r;
    t2_rng_seed(&r, 11);
    for (int i = 0; i < m * k + n * k; i++) a[i] = t2_rng_normal(&r);
    for (int i = 0; i < m * n; i++) whole[i] = 0.25f * (float)(i % 5);
    sgemm(101, 111, 112, m, n, k, 1.0f, a, k, w, k, 1.0f, whole, n);
    int exact = 1;
    for (int rs = 1; rs < m && exact; rs++)
        for (int cs = 1; cs <= n && exact; cs++) {
            for (int i = 0; i < m * n; i++) blocks[i] = 0.25f * (float)(i % 5);
            int rows[3] = {0, rs, m}, cols[3] = {0, cs, n};
            for (int bi = 0; bi < 2; bi++)
                for (int bj = 0; bj < 2; bj++) {
                    int r0 = rows[bi], r1 = rows[bi + 1], c0 = cols[bj], c1 = cols[bj + 1];
                    if (r1 > r0 && c1 > c0)
                        sgemm(101, 111, 112, r1 - r0, c1 - c0, k, 1.0f, a + r0 * k, k, w + c0 * k, k, 1.0f,
                              blocks + r0 * n + c0, n);
                }
            exact = !memcmp(whole, blocks, sizeof(float) * (size_t)(m * n));
        }
    free(a);
    return exact;
}

/* parts_matter: the net's numbers depend on P (the image net's conv2d sums its weight gradient
 * over the parts; the token net's layers split by channels and rows, where P changes nothing). */
static void parts_fix_numbers(t2_net *(*make)(void), const t2_tensor *x, int want_dx, int parts_matter,
                              int blas_exact, const char *what)
{
    result ref, r;
    /* The reference: a fresh net on one thread, P = 2. */
    CHECK_OK(t2__set_num_parts(2));
    CHECK_OK(t2_set_num_threads(1));
    t2_net *net = make();
    memset(&ref, 0, sizeof ref);
    step(net, x, want_dx, &ref);
    t2_net_free(net);
    /* Fresh nets on 2 and 3 threads, and one net whose thread count changes between steps. */
    for (int threads = 2; threads <= 3; threads++) {
        CHECK_OK(t2_set_num_threads(threads));
        net = make();
        memset(&r, 0, sizeof r);
        step(net, x, want_dx, &r);
        if (!same(&ref, &r)) {
            fprintf(stderr, "%s: P = 2 on %d threads differs from 1 thread\n", what, threads);
            check_failures++;
        }
        free(r.grads);
        t2_net_free(net);
    }
    net = make();
    int seq[] = {2, 1, 3, 2};
    for (int k = 0; k < 4; k++) {
        CHECK_OK(t2_set_num_threads(seq[k]));
        memset(&r, 0, sizeof r);
        step(net, x, want_dx, &r);
        if (!same(&ref, &r)) {
            fprintf(stderr, "%s: step %d of one net (now %d threads) differs\n", what, k, seq[k]);
            check_failures++;
        }
        free(r.grads);
    }
    t2_net_free(net);
    /* P = 1 sums the conv2d gradients in another grouping: not the same bits. */
    CHECK_OK(t2__set_num_parts(1));
    CHECK_OK(t2_set_num_threads(2));
    net = make();
    memset(&r, 0, sizeof r);
    step(net, x, want_dx, &r);
    if (!parts_matter && !blas_exact)
        printf("%s: P = 1 against P = 2 not compared: this BLAS gives a product's blocks other bits than the "
               "whole\n", what);
    else if (same(&ref, &r) == parts_matter) {
        fprintf(stderr, "%s: P = 1 %s the bits of P = 2\n", what, parts_matter ? "gives" : "does not give");
        check_failures++;
    }
    free(r.grads);
    t2_net_free(net);
    free(ref.grads);
}

int main(void)
{
    float xi[N * C * H * W];
    t2_rng r;
    t2_rng_seed(&r, 7);
    for (size_t i = 0; i < sizeof xi / sizeof xi[0]; i++) xi[i] = t2_rng_normal(&r);
    t2_tensor x = t2_tensor_view(xi, 4, (int[]){N, C, H, W});
    parts_fix_numbers(image_net, &x, 1, 1, 1, "image net");

    float ti[N * T];
    for (int i = 0; i < N * T; i++) ti[i] = (float)((i * 5 + i / 3) % VOCAB);
    t2_tensor tok = t2_tensor_view(ti, 2, (int[]){N, T});
    /* The token net's dense layer: N samples of T * DIM features to CLASSES. */
    parts_fix_numbers(token_net, &tok, 0, 0, blas_blocks_exact(N, CLASSES, T * DIM), "token net");

    /* Unset, P follows the thread count; out of range is an error. */
    CHECK_OK(t2__set_num_parts(0));
    CHECK_OK(t2_set_num_threads(3));
    CHECK(t2__pool_parts() == 3);
    CHECK_OK(t2__set_num_parts(2));
    CHECK(t2__pool_parts() == 2 && t2_get_num_threads() == 3);
    CHECK_RC(t2__set_num_parts(-1), T2_EINVAL);
    CHECK_RC(t2__set_num_parts(65), T2_EINVAL);
    CHECK_OK(t2__set_num_parts(0));
    CHECK_OK(t2_set_num_threads(1));
    return check_report("test_nn_parts");
}
