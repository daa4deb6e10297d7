/* Layer norm and embedding parameters in a checkpoint: the tensor table names them with PyTorch's
 * shapes ("0.embedding.weight" [num, dim], "1.layernorm.weight" [dim]), a fresh net loads them
 * back exactly, and a net with another embedding size is refused naming the tensor and both
 * shapes. */
#include "test_checkpoint_util.h"
#include "check.h"

/* tokens [6] -> embedding(20, dim) -> layernorm -> flatten -> dense 3 */
static t2_net *token_net(int dim, uint64_t seed)
{
    int T[1] = {6};
    t2_net *net = NULL;
    t2_rng r;
    t2_rng_seed(&r, seed);
    if (t2_net_create(&net, 1, T) || t2_net_embedding(net, 20, dim) || t2_net_layernorm(net, 1e-5f) ||
        t2_net_flatten(net) || t2_net_dense(net, 3) || t2_net_init(net, &r)) {
        fprintf(stderr, "token_net: %s\n", t2_errmsg());
        abort();
    }
    /* layer norm starts at 1 and 0: move it, so that a restore has something to carry */
    size_t np;
    float *p = t2_net_params(net, &np);
    for (size_t i = 0; i < np; i++) p[i] += 0.01f * (float)(i % 7);
    return net;
}

int main(void)
{
    char *dir = make_dir();
    CHECK(dir != NULL);
    if (!dir) return check_report("test_nn_modern_checkpoint");
    char path[4096];
    t2_net *a = token_net(8, 1);
    t2__ckpt_contents c = {.net = a};
    CHECK_OK(t2__ckpt_path(path, sizeof path, dir, "tokens", T2__CKPT_COMPRESS_NONE));
    CHECK_OK(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL));

    t2_checkpoint *ck = NULL;
    CHECK_OK(t2_checkpoint_open(&ck, path));
    const char *names[] = {"0.embedding.weight", "1.layernorm.weight", "1.layernorm.bias", "3.dense.weight",
                           "3.dense.bias"};
    const int shapes[][2] = {{20, 8}, {8, 0}, {8, 0}, {3, 48}, {3, 0}};
    for (int i = 0; i < 5 && ck; i++) {
        t2_param_info info;
        CHECK_OK(t2_checkpoint_tensor_info(ck, i, &info));
        CHECK_STR(info.name, names[i]);
        CHECK(info.ndim == (shapes[i][1] ? 2 : 1) && info.shape[0] == shapes[i][0]);
        if (shapes[i][1]) CHECK(info.shape[1] == shapes[i][1]);
    }

    /* a fresh net (another seed) gets a's parameters back exactly */
    t2_net *b = token_net(8, 2);
    size_t na, nb;
    const float *pa = t2_net_params(a, &na), *pb = t2_net_params(b, &nb);
    CHECK(na == nb && memcmp(pa, pb, na * sizeof(float)) != 0);
    CHECK_OK(t2_checkpoint_restore_model(ck, b));
    CHECK(na == nb && memcmp(pa, pb, na * sizeof(float)) == 0);

    /* another embedding width: refused, named, and the net left as it was */
    t2_net *w = token_net(16, 3);
    size_t nw;
    float *pw = t2_net_params(w, &nw), *keep = malloc(nw * sizeof(float));
    CHECK(keep != NULL);
    if (keep) memcpy(keep, pw, nw * sizeof(float));
    CHECK_RC(t2_checkpoint_restore_model(ck, w), T2_ESHAPE);
    CHECK(strstr(t2_errmsg(), "0.embedding.weight has shape [20, 8] in the checkpoint but [20, 16] in the model"));
    if (keep) CHECK(memcmp(keep, pw, nw * sizeof(float)) == 0);

    free(keep);
    t2_checkpoint_free(ck);
    t2_net_free(a);
    t2_net_free(b);
    t2_net_free(w);
    unlink(path);
    rm_dir(dir);
    return check_report("test_nn_modern_checkpoint");
}
