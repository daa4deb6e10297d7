/* test_raw_params.c — raw parameter buffers (t2_wrap_params): validation of names and optimizer
 * coverage, the sliced optimizer step against a contiguous one (bit for bit), one clipping norm
 * over several buffers, and checkpoints holding raw buffers and several optimizers: a round trip
 * restores every float and step count exactly, a buffer whose size changed is refused naming it
 * and both sizes, and t2_checkpoint_load_params reads a buffer by name. */
#include "test_checkpoint_util.h"
#include "check.h"
#include "optim/optim_slice.h"
#include "runner/ctx.h"

/* errmsg contains every one of the (NULL-terminated) fragments. */
static int says(const char *a, const char *b, const char *c)
{
    const char *m = t2_errmsg();
    int ok = strstr(m, a) != NULL && (!b || strstr(m, b)) && (!c || strstr(m, c));
    if (!ok) fprintf(stderr, "message was: %s\n", m);
    return ok;
}

static void fill(float *x, size_t n, uint64_t seed)
{
    t2_rng r;
    t2_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) x[i] = t2_rng_uniform(&r) - 0.5f;
}

static t2_ctx *new_ctx(void)
{
    t2_ctx *c = malloc(sizeof *c);
    if (c) t2__ctx_init(c, NULL, NULL, 8, 8, 1, 42, 1);
    return c;
}

static void test_wrap_validation(void)
{
    t2_ctx *c = new_ctx();
    t2_net *net = NULL;
    float p[10], g[10], p2[4], g2[4];
    CHECK(c && small_net(&net, 3) == 0);
    if (!c || !net) return;
    CHECK_OK(t2_wrap_model(c, net));
    CHECK_RC(t2_wrap_params(c, "bad name", p, g, 10), T2_EINVAL);
    CHECK(says("bad name", "letters", NULL));
    CHECK_RC(t2_wrap_params(c, "", p, g, 10), T2_EINVAL);
    CHECK_RC(t2_wrap_params(c, "model", p, g, 10), T2_EINVAL);
    CHECK(says("'model'", NULL, NULL));
    t2_param_info t;
    CHECK_OK(t2_net_tensor_info(net, 0, &t));
    CHECK_RC(t2_wrap_params(c, t.name, p, g, 10), T2_EINVAL);
    CHECK(says(t.name, "tensor of the wrapped model", NULL));
    CHECK_RC(t2_wrap_params(c, "w", p, g, 0), T2_EINVAL);
    CHECK_RC(t2_wrap_params(c, "w", p, p + 5, 10), T2_EINVAL);
    CHECK(says("overlap", NULL, NULL));
    CHECK_OK(t2_wrap_params(c, "w", p, g, 10));
    CHECK_RC(t2_wrap_params(c, "w", p2, g2, 4), T2_EINVAL);
    CHECK(says("'w'", "already wrapped", NULL));
    CHECK_RC(t2_wrap_params(c, "w2", p + 2, g2, 4), T2_EINVAL);
    CHECK(says("overlaps", "'w'", NULL));
    CHECK_OK(t2_wrap_params(c, "b", p2, g2, 4));

    /* Coverage: a net-sized optimizer for the model, one for w; b is left out. */
    size_t np;
    t2_net_params(net, &np);
    t2_sgd_params sp = t2_sgd_default();
    t2_optim *o1 = NULL, *o2 = NULL, *o3 = NULL;
    CHECK_OK(t2_sgd_create(&o1, &sp, np));
    CHECK_OK(t2_sgd_create(&o2, &sp, 10));
    CHECK_OK(t2_sgd_create(&o3, &sp, 14));
    CHECK_RC(t2_wrap_optimizer_for(c, o1, (const char *[]){"nope"}, 1), T2_ENOTFOUND);
    CHECK(says("'nope'", "model, w, b", NULL));
    CHECK_RC(t2_wrap_optimizer_for(c, o2, (const char *[]){"b"}, 1), T2_ESHAPE);
    CHECK(says("10 parameters", "hold 4", NULL));
    CHECK_OK(t2_wrap_optimizer_for(c, o1, (const char *[]){"model"}, 1));
    CHECK_OK(t2_wrap_optimizer_for(c, o2, (const char *[]){"w"}, 1));
    CHECK_RC(t2_wrap_optimizer_for(c, o3, (const char *[]){"w", "b"}, 2), T2_EINVAL);
    CHECK(says("'w'", "covered twice", NULL));
    CHECK_RC(t2_wrap_optimizer(c, o3), T2_ESTATE);
    CHECK_RC(t2__ctx_bind(c), T2_EINVAL);
    CHECK(says("raw buffer 'b'", "covered by no optimizer", NULL));
    CHECK_RC(t2_step_optimizer(c), T2_EINVAL);

    /* t2_wrap_optimizer covers everything: its size must be the total. */
    t2_ctx *d = new_ctx();
    CHECK(d != NULL);
    if (d) {
        CHECK_OK(t2_wrap_model(d, net));
        CHECK_OK(t2_wrap_optimizer(d, o3));
        CHECK_OK(t2_wrap_params(d, "w", p, g, 10));
        CHECK_RC(t2__ctx_bind(d), T2_ESHAPE);
        CHECK(says("14 parameters", "model, w", NULL));
        free(d);
    }
    t2_optim_free(o1);
    t2_optim_free(o2);
    t2_optim_free(o3);
    t2_net_free(net);
    free(c);
}

/* One optimizer over three buffers stepped slice by slice equals it over their concatenation. */
static void test_slices(t2_optim_kind kind)
{
    enum { A = 37, B = 5, C = 130, N = A + B + C, STEPS = 7 };
    static float cat[N], cg[N], a[A], ga[A], b[B], gb[B], cc[C], gc[C];
    t2_optim *o1 = NULL, *o2 = NULL;
    if (kind == T2_OPTIM_SGD) {
        t2_sgd_params sp = t2_sgd_default();
        sp.lr = 0.1, sp.momentum = 0.9, sp.weight_decay = 1e-3, sp.nesterov = 1;
        CHECK_OK(t2_sgd_create(&o1, &sp, N));
        CHECK_OK(t2_sgd_create(&o2, &sp, N));
    } else {
        t2_adam_params ap = t2_adamw_default();
        CHECK_OK(t2_adamw_create(&o1, &ap, N));
        CHECK_OK(t2_adamw_create(&o2, &ap, N));
    }
    fill(cat, N, 7);
    memcpy(a, cat, sizeof a);
    memcpy(b, cat + A, sizeof b);
    memcpy(cc, cat + A + B, sizeof cc);
    for (int s = 0; s < STEPS; s++) {
        fill(cg, N, 100 + (uint64_t)s);
        memcpy(ga, cg, sizeof ga);
        memcpy(gb, cg + A, sizeof gb);
        memcpy(gc, cg + A + B, sizeof gc);
        CHECK_OK(t2_optim_step(o1, cat, cg, N));
        CHECK_OK(t2__optim_step_slice(o2, 0, a, ga, A));
        CHECK_OK(t2__optim_step_slice(o2, A, b, gb, B));
        CHECK_OK(t2__optim_step_slice(o2, A + B, cc, gc, C));
        t2__optim_advance(o2);
    }
    CHECK(memcmp(a, cat, sizeof a) == 0 && memcmp(b, cat + A, sizeof b) == 0 && memcmp(cc, cat + A + B, sizeof cc) == 0);
    size_t n1, n2;
    float *s1 = t2_optim_state(o1, &n1), *s2 = t2_optim_state(o2, &n2);
    CHECK(n1 == n2 && s1 && s2 && memcmp(s1, s2, n1 * sizeof(float)) == 0);
    CHECK(t2_optim_step_count(o2) == STEPS);
    CHECK_RC(t2__optim_step_slice(o2, A + B, cc, gc, C + 1), T2_ESHAPE);
    t2_optim_free(o1);
    t2_optim_free(o2);
}

static void test_clip_multi(void)
{
    float cat[50], x[20], y[30];
    fill(cat, 50, 9);
    memcpy(x, cat, sizeof x);
    memcpy(y, cat + 20, sizeof y);
    double n1, n2;
    CHECK_OK(t2_clip_grad_norm(cat, 50, 0.5, &n1));
    float *g[2] = {x, y};
    size_t n[2] = {20, 30};
    CHECK_OK(t2__clip_grad_norm_multi(g, n, 2, 0.5, &n2));
    CHECK_NEAR(n1, n2, 1e-12 * n1);
    /* The norms may differ in the last bit (other summation order); the scaled values by one ulp. */
    for (int i = 0; i < 50; i++) CHECK_NEAR(i < 20 ? x[i] : y[i - 20], cat[i], 1e-6);
}

/* A model of a net, two raw buffers and two Adam optimizers (net+w, then b), trained a few steps. */
typedef struct rig {
    t2_ctx *c;
    t2_net *net;
    float w[24], gw[24], b[6], gb[6];
    t2_optim *o1, *o2;
} rig;

static int rig_new(rig *r, uint64_t seed, size_t bsize)
{
    memset(r, 0, sizeof *r);
    if (!(r->c = new_ctx()) || small_net(&r->net, seed)) return -1;
    fill(r->w, 24, seed + 1);
    fill(r->b, bsize, seed + 2);
    size_t np;
    t2_net_params(r->net, &np);
    t2_adam_params ap = t2_adam_default();
    int rc = t2_wrap_model(r->c, r->net);
    if (!rc) rc = t2_wrap_params(r->c, "w", r->w, r->gw, 24);
    if (!rc) rc = t2_wrap_params(r->c, "b", r->b, r->gb, bsize);
    if (!rc) rc = t2_adam_create(&r->o1, &ap, np + 24);
    if (!rc) rc = t2_sgd_create(&r->o2, &(t2_sgd_params){.lr = 0.1, .momentum = 0.5}, bsize);
    if (!rc) rc = t2_wrap_optimizer_for(r->c, r->o1, (const char *[]){"model", "w"}, 2);
    if (!rc) rc = t2_wrap_optimizer_for(r->c, r->o2, (const char *[]){"b"}, 1);
    if (!rc) rc = t2__ctx_bind(r->c);
    return rc;
}

static void rig_free(rig *r)
{
    t2_optim_free(r->o1);
    t2_optim_free(r->o2);
    t2_net_free(r->net);
    free(r->c);
}

static int rig_train(rig *r, int steps)
{
    size_t np;
    float *g = t2_net_grads(r->net, NULL);
    t2_net_params(r->net, &np);
    for (int s = 0; s < steps; s++) {
        fill(g, np, 500 + (uint64_t)s);
        fill(r->gw, 24, 600 + (uint64_t)s);
        fill(r->gb, 6, 700 + (uint64_t)s);
        int rc = t2_step_optimizer(r->c);
        if (rc) return rc;
    }
    return 0;
}

static void test_checkpoint(const char *dir)
{
    rig a, b, z;
    char path[4200];
    snprintf(path, sizeof path, "%s/raw.tar", dir);
    CHECK_OK(rig_new(&a, 11, 6));
    CHECK_OK(rig_train(&a, 5));
    t2__ckpt_model m = t2__ctx_ckpt_model(a.c, 1);
    CHECK(m.nraw == 2 && m.nopts == 2);
    /* Batchnorm statistics of their own (a forward pass in training would move them). */
    size_t nbuf, npar;
    float *abuf = t2_net_buffers(a.net, &nbuf);
    CHECK(nbuf == 6);
    fill(abuf, nbuf, 42);
    t2__ckpt_contents ct = {.net = m.net, .raw = m.raw, .nraw = m.nraw, .opts = m.opts, .nopts = m.nopts};
    CHECK_OK(t2__ckpt_write(path, &ct, T2__CKPT_COMPRESS_NONE, NULL));
    float saved_b[6], saved_buf[6], saved_par[64];
    memcpy(saved_b, a.b, sizeof saved_b);
    memcpy(saved_buf, abuf, sizeof saved_buf);
    float *apar = t2_net_params(a.net, &npar);
    CHECK(npar <= 64);
    memcpy(saved_par, apar, npar * sizeof(float));

    /* Restored into a model built from another seed: every float and step count comes back. */
    CHECK_OK(rig_new(&b, 99, 6));
    t2__ckpt *ck = NULL;
    CHECK_OK(t2__ckpt_open_for_restore(&ck, path));
    t2__ckpt_model mb = t2__ctx_ckpt_model(b.c, 1);
    CHECK_OK(t2__ckpt_restore_model(ck, &mb, NULL));
    t2_checkpoint_info info;
    CHECK_OK(t2__ckpt_get_info(ck, &info));
    CHECK(info.has_optimizer && info.optimizer_steps == 5);
    t2__ckpt_free(ck);
    /* The optimizers must be the saved ones: here one instead of two. */
    CHECK_OK(t2__ckpt_open_for_restore(&ck, path));
    t2__ckpt_model one = mb;
    one.nopts = 1;
    CHECK_RC(t2__ckpt_restore_model(ck, &one, NULL), T2_EINVAL);
    CHECK(says("2 optimizers in the checkpoint but 1 in the model", NULL, NULL));
    t2__ckpt_free(ck);
    size_t np, n1, n2;
    float *pa = t2_net_params(a.net, &np), *pb = t2_net_params(b.net, NULL);
    CHECK(memcmp(pa, pb, np * sizeof(float)) == 0 && memcmp(a.w, b.w, sizeof a.w) == 0 &&
          memcmp(a.b, b.b, sizeof a.b) == 0);
    float *sa = t2_optim_state(a.o1, &n1), *sb = t2_optim_state(b.o1, &n2);
    CHECK(n1 == n2 && memcmp(sa, sb, n1 * sizeof(float)) == 0);
    sa = t2_optim_state(a.o2, &n1), sb = t2_optim_state(b.o2, &n2);
    CHECK(n1 == n2 && memcmp(sa, sb, n1 * sizeof(float)) == 0);
    CHECK(t2_optim_step_count(b.o1) == 5 && t2_optim_step_count(b.o2) == 5);
    /* Training on from there is training on from the original. */
    CHECK_OK(rig_train(&a, 3));
    CHECK_OK(rig_train(&b, 3));
    CHECK(memcmp(a.w, b.w, sizeof a.w) == 0 && memcmp(a.b, b.b, sizeof a.b) == 0);

    /* The public reader finds a raw buffer by name. */
    float w[24], wrong[5];
    t2_checkpoint *pub = NULL;
    CHECK_OK(t2_checkpoint_open(&pub, path));
    float bb[6];
    CHECK_OK(t2_checkpoint_restore_params(pub, "b", bb, 6));
    CHECK(memcmp(bb, saved_b, sizeof bb) == 0);
    t2_checkpoint_free(pub);
    CHECK_OK(t2_checkpoint_load_params(path, "w", w, 24));
    CHECK_RC(t2_checkpoint_load_params(path, "w", wrong, 5), T2_ESHAPE);
    CHECK(says("w", "24", "5"));
    CHECK_RC(t2_checkpoint_load_params(path, "nope", w, 24), T2_ENOTFOUND);
    /* ... and a net's buffers (probe_H H5: "has no parameter tensor 1.batchnorm.running_mean"). */
    float rm[3], rv[3];
    CHECK_OK(t2_checkpoint_load_params(path, "1.batchnorm.running_mean", rm, 3));
    CHECK_OK(t2_checkpoint_load_params(path, "1.batchnorm.running_var", rv, 3));
    /* The net alone loads for inference, the raw buffers after its parameters left out (it was
     * refused: "tensor w is not in the model"); every parameter and buffer float comes back. */
    t2_net *inf = NULL;
    CHECK_OK(small_net(&inf, 77));
    CHECK_OK(t2_checkpoint_load_model(path, inf));
    size_t ni, nbi;
    float *ip = t2_net_params(inf, &ni), *ib = t2_net_buffers(inf, &nbi);
    CHECK(ni == npar && memcmp(ip, saved_par, npar * sizeof(float)) == 0);
    CHECK(nbi == 6 && memcmp(ib, saved_buf, sizeof saved_buf) == 0);
    t2_param_info ti;
    for (int i = 0; i < t2_net_num_tensors(inf); i++) {
        CHECK_OK(t2_net_tensor_info(inf, i, &ti));
        if (!strcmp(ti.name, "1.batchnorm.running_mean")) CHECK(memcmp(rm, ib + ti.offset, sizeof rm) == 0);
        if (!strcmp(ti.name, "1.batchnorm.running_var")) CHECK(memcmp(rv, ib + ti.offset, sizeof rv) == 0);
    }
    t2_net_free(inf);
    /* Still refused: a net whose own tensors differ (a checkpoint tensor before the raw ones that
     * the model lacks, here a wider first layer). */
    t2_net *other = NULL;
    int sh[1] = {4};
    t2_rng rr;
    t2_rng_seed(&rr, 5);
    CHECK_OK(t2_net_create(&other, 1, sh));
    CHECK_OK(t2_net_dense(other, 3));
    CHECK_OK(t2_net_relu(other));
    CHECK_OK(t2_net_dense(other, 2));
    CHECK_OK(t2_net_init(other, &rr));
    CHECK_RC(t2_checkpoint_load_model(path, other), T2_ESHAPE);
    t2_net_free(other);
    /* ... and a net that is a prefix of the saved one (its layers after it are no raw buffers). */
    t2_net *prefix = NULL;
    CHECK_OK(t2_net_create(&prefix, 1, sh));
    CHECK_OK(t2_net_dense(prefix, 3));
    CHECK_OK(t2_net_batchnorm(prefix, 1e-5f, 0.1f));
    CHECK_OK(t2_net_init(prefix, &rr));
    CHECK_RC(t2_checkpoint_load_model(path, prefix), T2_ESHAPE);
    CHECK(says("3.dense", "not in the model", NULL));
    t2_net_free(prefix);

    /* A buffer that changed size between runs: refused before anything is copied. */
    CHECK_OK(rig_new(&z, 5, 5));
    float keep[5];
    memcpy(keep, z.b, sizeof keep);
    CHECK_OK(t2__ckpt_open_for_restore(&ck, path));
    t2__ckpt_model mz = t2__ctx_ckpt_model(z.c, 1);
    CHECK_RC(t2__ckpt_restore_model(ck, &mz, NULL), T2_ESHAPE);
    CHECK(says("raw buffer b", "6 floats in the checkpoint", "5 in the trial"));
    CHECK(memcmp(keep, z.b, sizeof keep) == 0);
    t2__ckpt_free(ck);
    rig_free(&z);
    rig_free(&a);
    rig_free(&b);
}

/* Raw buffers only, no net: written, restored, and the optimizer count must match. */
static void test_raw_only(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/only.tar.zst", dir);
    float p[7], g[7], q[7], h[7];
    fill(p, 7, 1);
    t2_ctx *c = new_ctx(), *d = new_ctx();
    t2_optim *o = NULL, *o2 = NULL;
    t2_adam_params ap = t2_adam_default();
    CHECK(c && d);
    if (!c || !d) return;
    CHECK_OK(t2_wrap_params(c, "theta", p, g, 7));
    CHECK_OK(t2_adam_create(&o, &ap, 7));
    CHECK_OK(t2_wrap_optimizer(c, o));
    fill(g, 7, 2);
    CHECK_OK(t2_step_optimizer(c));
    CHECK(g[3] == 0.0f); /* zeroed after the step */
    t2__ckpt_model m = t2__ctx_ckpt_model(c, 1);
    t2__ckpt_contents ct = {.raw = m.raw, .nraw = m.nraw, .opts = m.opts, .nopts = m.nopts};
    CHECK_OK(t2__ckpt_write(path, &ct, T2__CKPT_COMPRESS_ZSTD, NULL));
    CHECK_OK(t2_wrap_params(d, "theta", q, h, 7));
    CHECK_OK(t2_adam_create(&o2, &ap, 7));
    CHECK_OK(t2_wrap_optimizer(d, o2));
    CHECK_OK(t2__ctx_bind(d));
    t2__ckpt *ck = NULL;
    CHECK_OK(t2__ckpt_open_for_restore(&ck, path));
    t2__ckpt_model md = t2__ctx_ckpt_model(d, 1);
    CHECK_OK(t2__ckpt_restore_model(ck, &md, NULL));
    t2__ckpt_free(ck);
    CHECK(memcmp(p, q, sizeof p) == 0 && t2_optim_step_count(o2) == 1);
    CHECK(memcmp(t2_optim_state(o, NULL), t2_optim_state(o2, NULL), 14 * sizeof(float)) == 0);
    t2_optim_free(o);
    t2_optim_free(o2);
    free(c);
    free(d);
}

int main(void)
{
    char *dir = make_dir();
    CHECK(dir != NULL);
    test_wrap_validation();
    test_slices(T2_OPTIM_SGD);
    test_slices(T2_OPTIM_ADAMW);
    test_clip_multi();
    if (dir) {
        test_checkpoint(dir);
        test_raw_only(dir);
        rm_dir(dir);
    }
    return check_report("test_raw_params");
}
