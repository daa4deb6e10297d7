/* Layer norm, embedding and global average pooling against PyTorch (fixtures written by
 * tests/fixtures/torch_nn.py, modern_layers()): forward output, input gradient and parameter
 * gradients within the tolerances of test_nn_torch, plus the tensor table's names and shapes. */
#include <string.h>
#include "check.h"
#include "fixture.h"
#include "t2exp.h"

#define RTOL 1e-4
#define ATOL 1e-5

enum { LAYERNORM, EMBEDDING, GAP };

/* The PyTorch-layout tensor a case's table entry i must describe (NULL: none expected). */
static void check_table(t2_net *net, const char *name0, const fixture_array *w, const char *name1,
                        const fixture_array *b)
{
    int nt = t2_net_num_tensors(net);
    CHECK(nt == (w != NULL) + (b != NULL));
    t2_param_info info;
    if (w && t2_net_tensor_info(net, 0, &info) == T2_OK) {
        CHECK_STR(info.name, name0);
        CHECK(info.ndim == w->ndim && info.size == w->n && info.offset == 0 && !info.is_buffer);
        for (int d = 0; d < w->ndim && d < T2_MAX_DIMS; d++) CHECK(info.shape[d] == w->shape[d]);
    }
    if (b && t2_net_tensor_info(net, 1, &info) == T2_OK) {
        CHECK_STR(info.name, name1);
        CHECK(info.ndim == 1 && info.size == b->n && info.offset == w->n);
    }
}

static void run_case(const char *file, int kind)
{
    fixture *f = fixture_load(file);
    CHECK(f != NULL);
    if (!f) return;
    const fixture_array *x = fixture_get(f, "x"), *w = fixture_get(f, "weight"), *b = fixture_get(f, "bias");
    const fixture_array *meta = fixture_get(f, "meta");
    t2_tensor xt = t2_tensor_view(x->data, x->ndim, x->shape);
    int sample[3] = {1, 1, 1}, ndim = x->ndim - 1;
    if (kind == EMBEDDING) { /* ids [n, T]: samples [T] */
        ndim = 1;
        sample[0] = x->shape[1];
    } else {
        memcpy(sample, x->shape + 1, (size_t)ndim * sizeof(int));
    }
    t2_net *net = NULL;
    CHECK_OK(t2_net_create(&net, ndim, sample));
    if (kind == LAYERNORM) CHECK_OK(t2_net_layernorm(net, 1e-5f));
    if (kind == EMBEDDING) CHECK_OK(t2_net_embedding(net, (int)meta->data[0], (int)meta->data[1]));
    if (kind == GAP) CHECK_OK(t2_net_global_avgpool(net));
    t2_rng r;
    t2_rng_seed(&r, 1);
    CHECK_OK(t2_net_init(net, &r));
    if (kind == LAYERNORM) check_table(net, "0.layernorm.weight", w, "0.layernorm.bias", b);
    if (kind == EMBEDDING) check_table(net, "0.embedding.weight", w, NULL, NULL);
    if (kind == GAP) check_table(net, NULL, NULL, NULL, NULL);
    size_t np;
    float *p = t2_net_params(net, &np);
    CHECK(np == (w ? w->n : 0) + (b ? b->n : 0));
    if (w && np >= w->n) memcpy(p, w->data, w->n * sizeof(float));
    if (b && np == w->n + b->n) memcpy(p + w->n, b->data, b->n * sizeof(float));

    const t2_tensor *y, *dx;
    CHECK_OK(t2_net_forward(net, &xt, T2_TRAIN, &r, &y));
    CHECK(fixture_compare(f, "y", y->data, t2_tensor_numel(y), RTOL, ATOL) == 0);
    t2_tensor dyt = *y;
    dyt.data = fixture_get(f, "dy")->data;
    CHECK(fixture_get(f, "dy")->n == t2_tensor_numel(y));
    t2_net_zero_grad(net);
    CHECK_OK(t2_net_backward(net, &dyt, &dx));
    CHECK(fixture_compare(f, "dx", dx->data, t2_tensor_numel(&xt), RTOL, ATOL) == 0);
    const float *g = t2_net_grads(net, NULL);
    if (w) CHECK(fixture_compare(f, "d_weight", g, w->n, RTOL, ATOL) == 0);
    if (b) CHECK(fixture_compare(f, "d_bias", g + w->n, b->n, RTOL, ATOL) == 0);
    /* Evaluation mode computes the same (layer norm keeps no running statistics). */
    CHECK_OK(t2_net_forward(net, &xt, T2_EVAL, NULL, &y));
    CHECK(fixture_compare(f, "y", y->data, t2_tensor_numel(y), RTOL, ATOL) == 0);
    t2_net_free(net);
    fixture_free(f);
}

int main(void)
{
    for (int threads = 1; threads <= 2; threads++) {
        CHECK_OK(t2_set_num_threads(threads));
        run_case("nn_layernorm_1d.txt", LAYERNORM);
        run_case("nn_layernorm_3d.txt", LAYERNORM);
        run_case("nn_embedding.txt", EMBEDDING);
        run_case("nn_global_avgpool.txt", GAP);
    }
    return check_report("test_nn_modern_torch");
}
