/* User datasets (t2_dataset_define) and float targets through the loader: 2 workers give the same
 * batches as 0, a restored loader continues exactly, two ranks split each global batch, a failing
 * get names the sample; in-memory targets, splits, feature statistics and standardisation. */
#include "test_data_util.h"
#include "check.h"

/* Sample i: x = {i, 2i, -i} (ndim 1, F = 3), targets {i / 10, i * i}, label i % 4. Sample
 * `fail_at` fails (if >= 0); `bad_label_at` reports label 9. */
typedef struct {
    int fail_at, bad_label_at;
    int destroyed;
} gen;

static int gen_get(void *user, int64_t i, float *x, float *target, int32_t *label)
{
    gen *g = user;
    if (i == g->fail_at) return t2_seterr(T2_EIO, "disk gone at %lld", (long long)i);
    x[0] = (float)i;
    x[1] = 2.0f * (float)i;
    x[2] = -(float)i;
    if (target) {
        target[0] = (float)i / 10.0f;
        target[1] = (float)(i * i);
    }
    if (label) *label = i == g->bad_label_at ? 9 : (int32_t)(i % 4);
    return 0;
}

static void gen_destroy(void *user) { ((gen *)user)->destroyed++; }

static t2_dataset *gen_dataset(gen *g, int64_t n)
{
    t2_dataset_source src = {.name = "gen", .len = n, .ndim = 1, .shape = {3, 1, 1}, .target_width = 2,
                             .num_classes = 4, .get = gen_get, .destroy = gen_destroy};
    t2_dataset *ds = NULL;
    CHECK_OK(t2_dataset_define(&ds, &src, g));
    return ds;
}

/* Every batch of `calls` calls, serialised with its content checked against the generator. */
static void run(t2_loader *l, int calls, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int c = 0; c < calls; c++) {
        const t2_batch *b = NULL;
        CHECK_OK(t2_loader_next(l, &b));
        if (!b) {
            off += (size_t)snprintf(buf + off, len - off, "-;");
            continue;
        }
        CHECK(b->target_width == 2 && b->targets && b->labels);
        off += (size_t)snprintf(buf + off, len - off, "e%lldb%lld:", (long long)b->epoch, (long long)b->index);
        for (int i = 0; i < b->n; i++) {
            uint32_t k = b->indices[i];
            off += (size_t)snprintf(buf + off, len - off, i ? ",%u" : "%u", k);
            CHECK(b->x.data[3 * i] == (float)k && b->x.data[3 * i + 1] == 2.0f * (float)k);
            CHECK(b->targets[2 * i] == (float)k / 10.0f && b->targets[2 * i + 1] == (float)k * (float)k);
            CHECK(b->labels[i] == (int32_t)(k % 4));
        }
        off += (size_t)snprintf(buf + off, len - off, ";");
    }
}

static void workers_restore_shard(void)
{
    gen g = {-1, -1, 0};
    t2_dataset *ds = gen_dataset(&g, 37);
    CHECK(t2_dataset_target_width(ds) == 2 && t2_dataset_num_classes(ds) == 4 && t2_dataset_len(ds) == 37);
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 5;
    p.shuffle = 1;
    p.seed = 42;
    char a[8192], b[8192], c[8192];
    t2_loader *l0 = NULL, *l2 = NULL;
    CHECK_OK(t2_loader_create(&l0, ds, &p));
    run(l0, 20, a, sizeof a);
    p.num_workers = 2;
    p.prefetch = 3;
    CHECK_OK(t2_loader_create(&l2, ds, &p));
    run(l2, 20, b, sizeof b);
    CHECK_STR(b, a);
    /* Restore mid-epoch (epoch 1, batch 3) on the threaded loader: the same tail as uninterrupted. */
    t2_loader_state st = {1, 3};
    CHECK_OK(t2_loader_restore(l2, &st));
    run(l2, 6, c, sizeof c);
    const char *tail = strstr(a, "e1b3:");
    CHECK(tail != NULL);
    if (tail) CHECK(strncmp(c, tail, strlen(c)) == 0);
    t2_loader_free(l2);
    t2_loader_free(l0);

    /* Two ranks: each global batch of 10 is rank 0's 5 then rank 1's 5 of the single-rank batch. */
    t2_loader_params q = t2_loader_params_default();
    q.batch_size = 10;
    q.shuffle = 1;
    q.seed = 7;
    q.drop_last = 1;
    t2_loader *one = NULL, *r0 = NULL, *r1 = NULL;
    CHECK_OK(t2_loader_create(&one, ds, &q));
    q.batch_size = 5;
    q.world_size = 2;
    q.num_workers = 2;
    CHECK_OK(t2_loader_create(&r0, ds, &q));
    q.rank = 1;
    CHECK_OK(t2_loader_create(&r1, ds, &q));
    for (int k = 0; k < 6; k++) {
        const t2_batch *B, *b0, *b1;
        CHECK_OK(t2_loader_next(one, &B));
        float t[20];
        memcpy(t, B->targets, sizeof t);
        uint32_t idx[10];
        memcpy(idx, B->indices, sizeof idx);
        CHECK_OK(t2_loader_next(r0, &b0));
        CHECK_OK(t2_loader_next(r1, &b1));
        CHECK(b0->n == 5 && b1->n == 5);
        CHECK(memcmp(b0->indices, idx, 5 * sizeof *idx) == 0 && memcmp(b1->indices, idx + 5, 5 * sizeof *idx) == 0);
        CHECK(memcmp(b0->targets, t, 10 * sizeof(float)) == 0 && memcmp(b1->targets, t + 10, 10 * sizeof(float)) == 0);
    }
    t2_loader_free(one);
    t2_loader_free(r0);
    t2_loader_free(r1);
    t2_dataset_free(ds);
    CHECK(g.destroyed == 1);
}

static void failing_get(void)
{
    for (int nw = 0; nw <= 2; nw += 2) {
        gen g = {13, -1, 0};
        t2_dataset *ds = gen_dataset(&g, 20);
        t2_loader_params p = t2_loader_params_default();
        p.batch_size = 4;
        p.num_workers = nw;
        t2_loader *l = NULL;
        CHECK_OK(t2_loader_create(&l, ds, &p));
        const t2_batch *b;
        for (int k = 0; k < 3; k++) CHECK_OK(t2_loader_next(l, &b));
        CHECK_RC(t2_loader_next(l, &b), T2_EIO); /* batch 3 holds samples 12..15 */
        CHECK_STR(t2_errmsg(), "dataset 'gen': reading sample 13 failed (T2_EIO: input/output error): disk gone at 13");
        t2_loader_state st;
        CHECK_OK(t2_loader_state_get(l, &st));
        CHECK(st.epoch == 0 && st.batch == 3); /* the position did not advance */
        t2_loader_free(l);
        t2_dataset_free(ds);

        gen h = {-1, 6, 0};
        ds = gen_dataset(&h, 20);
        CHECK_OK(t2_loader_create(&l, ds, &p));
        CHECK_OK(t2_loader_next(l, &b));
        CHECK_RC(t2_loader_next(l, &b), T2_EINVAL);
        CHECK_STR(t2_errmsg(), "dataset 'gen': sample 6 has label 9, outside 0..3");
        t2_loader_free(l);
        t2_dataset_free(ds);
    }
}

static void define_errors(void)
{
    gen g = {-1, -1, 0};
    t2_dataset *ds = (t2_dataset *)1;
    t2_dataset_source src = {.name = "bad", .len = 0, .ndim = 1, .shape = {3, 1, 1}, .get = gen_get,
                             .destroy = gen_destroy};
    CHECK_RC(t2_dataset_define(&ds, &src, &g), T2_EINVAL);
    CHECK(ds == NULL && g.destroyed == 1);
    CHECK_STR(t2_errmsg(), "dataset 'bad': dataset: 0 samples (must be 1..2147483647)");
    src.len = 5;
    src.ndim = 2;
    CHECK_RC(t2_dataset_define(&ds, &src, &g), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "dataset 'bad': dataset: sample ndim 2 (must be 1 or 3)");
    src.ndim = 1;
    src.target_width = -1;
    CHECK_RC(t2_dataset_define(&ds, &src, &g), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "dataset 'bad': target_width -1 (must be 0..65536)");
    src.target_width = 0;
    src.get = NULL;
    CHECK_RC(t2_dataset_define(&ds, &src, &g), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "dataset 'bad': get is NULL");
    CHECK(g.destroyed == 4);
    /* An unlabelled source without targets: get sees NULL for both. */
    src.get = gen_get;
    src.destroy = NULL;
    CHECK_OK(t2_dataset_define(&ds, &src, &g));
    float x[3], t[2] = {-7, -7};
    int32_t lab = 5;
    CHECK_OK(t2_dataset_get_sample(ds, 4, x, t, &lab));
    CHECK(x[1] == 8.0f && t[0] == -7.0f && lab == -1);
    CHECK(t2_dataset_target_width(ds) == 0 && t2_dataset_num_classes(ds) == 0);
    t2_dataset_free(ds);
}

/* from_tensor_targets: copy and borrow, the loader's targets, errors, the cache's refusal. */
static void tensor_targets(void)
{
    int xs[2] = {6, 2}, ts[2] = {6, 3};
    t2_tensor x, t;
    CHECK_OK(t2_tensor_alloc(&x, 2, xs));
    CHECK_OK(t2_tensor_alloc(&t, 2, ts));
    for (int i = 0; i < 12; i++) x.data[i] = (float)i;
    for (int i = 0; i < 18; i++) t.data[i] = 100.0f + (float)i;
    t2_dataset *ds = NULL;
    CHECK_OK(t2_dataset_from_tensor_targets(&ds, &x, &t, NULL, 1));
    t.data[0] = -1.0f; /* copied: the dataset does not see this */
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 4;
    p.shuffle = 1;
    p.seed = 3;
    t2_loader *l = NULL;
    CHECK_OK(t2_loader_create(&l, ds, &p));
    const t2_batch *b;
    CHECK_OK(t2_loader_next(l, &b));
    CHECK(b->labels == NULL && b->target_width == 3 && b->n == 4);
    for (int i = 0; i < b->n; i++)
        for (int j = 0; j < 3; j++) CHECK(b->targets[3 * i + j] == 100.0f + (float)(3 * b->indices[i] + (uint32_t)j));
    t2_loader_free(l);
    tdir_make();
    CHECK_RC(t2_dataset_cache_write(ds, tpath("t.t2c")), T2_EUNSUPPORTED);
    CHECK(strstr(t2_errmsg(), "a cache holds inputs and labels only; this dataset has 3 float targets per sample") != NULL);
    CHECK(access(tpath("t.t2c"), F_OK) != 0);
    tdir_cleanup();
    t2_dataset_free(ds);

    t.data[7] = NAN;
    CHECK_RC(t2_dataset_from_tensor_targets(&ds, &x, &t, NULL, 0), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "t2_dataset_from_tensor: target 1 of sample 2 is nan (must be finite)");
    int ts5[2] = {5, 3};
    t2_tensor t5 = t2_tensor_view(t.data, 2, ts5);
    CHECK_RC(t2_dataset_from_tensor_targets(&ds, &x, &t5, NULL, 0), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "t2_dataset_from_tensor: targets [5, 3] must be [N, W] (W 1..65536) for inputs [6, 2]");
    t2_tensor_free(&x);
    t2_tensor_free(&t);
}

/* Splits: deterministic, disjoint, covering, in order; views of views; stats; standardisation. */
static void split_stats_standardize(void)
{
    gen g = {-1, -1, 0};
    t2_dataset *ds = gen_dataset(&g, 50), *tr = NULL, *va = NULL, *tr2 = NULL, *va2 = NULL;
    CHECK_OK(t2_dataset_split(ds, 0.8, 11, &tr, &va));
    CHECK(t2_dataset_len(tr) == 40 && t2_dataset_len(va) == 10);
    CHECK(t2_dataset_target_width(va) == 2 && t2_dataset_num_classes(va) == 4);
    CHECK_OK(t2_dataset_split(ds, 0.8, 11, &tr2, &va2));
    uint8_t seen[50] = {0};
    float x[3], t[2];
    int32_t lab;
    float prev = -1;
    for (int64_t i = 0; i < 40; i++) {
        CHECK_OK(t2_dataset_get_sample(tr, i, x, t, &lab));
        float y[3];
        CHECK_OK(t2_dataset_get(tr2, i, y, NULL));
        CHECK(x[0] == y[0]);           /* same seed, same split */
        CHECK(x[0] > prev);            /* in ds's order */
        prev = x[0];
        seen[(int)x[0]]++;
        CHECK(t[1] == x[0] * x[0] && lab == (int32_t)x[0] % 4);
    }
    for (int64_t i = 0; i < 10; i++) {
        CHECK_OK(t2_dataset_get(va, i, x, NULL));
        seen[(int)x[0]]++;
    }
    for (int i = 0; i < 50; i++) CHECK(seen[i] == 1);
    t2_dataset_free(tr2);
    t2_dataset_free(va2);
    /* Another seed gives another subset. */
    CHECK_OK(t2_dataset_split(ds, 0.8, 12, &tr2, &va2));
    int same = 1;
    for (int64_t i = 0; i < 10; i++) {
        float y[3];
        CHECK_OK(t2_dataset_get(va, i, x, NULL));
        CHECK_OK(t2_dataset_get(va2, i, y, NULL));
        same &= x[0] == y[0];
    }
    CHECK(!same);
    t2_dataset_free(tr2);
    t2_dataset_free(va2);
    /* A split of a split reads the right samples. */
    CHECK_OK(t2_dataset_split(tr, 0.5, 1, &tr2, &va2));
    CHECK(t2_dataset_len(tr2) == 20 && t2_dataset_len(va2) == 20);
    for (int64_t i = 0; i < 20; i++) {
        CHECK_OK(t2_dataset_get_sample(va2, i, x, t, &lab));
        CHECK(x[1] == 2 * x[0] && t[0] == x[0] / 10.0f && lab == (int32_t)x[0] % 4);
    }
    t2_dataset_free(tr2);
    t2_dataset_free(va2);
    CHECK_RC(t2_dataset_split(ds, 0.001, 1, &tr2, &va2), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "t2_dataset_split: 0 of 50 samples at fraction 0.001 leaves a part empty");
    CHECK(tr2 == NULL && va2 == NULL);
    CHECK_RC(t2_dataset_split(ds, 1.5, 1, &tr2, &va2), T2_EINVAL);

    /* Statistics of the training part, computed here the slow way to compare. */
    float mean[3], sd[3];
    CHECK_OK(t2_dataset_feature_stats(tr, mean, sd));
    double s = 0, q = 0;
    for (int64_t i = 0; i < 40; i++) {
        CHECK_OK(t2_dataset_get(tr, i, x, NULL));
        s += x[0];
    }
    s /= 40;
    for (int64_t i = 0; i < 40; i++) {
        CHECK_OK(t2_dataset_get(tr, i, x, NULL));
        q += (x[0] - s) * (x[0] - s);
    }
    CHECK_NEAR(mean[0], s, 1e-5);
    CHECK_NEAR(mean[1], 2 * s, 1e-5);
    CHECK_NEAR(mean[2], -s, 1e-5);
    CHECK_NEAR(sd[0], sqrt(q / 40), 1e-5);
    CHECK_NEAR(sd[1], 2 * sqrt(q / 40), 1e-5);

    /* Both loaders standardise with the training statistics; std 0 divides by 1. */
    sd[2] = 0.0f;
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 10;
    p.standardize_mean = mean;
    p.standardize_std = sd;
    p.num_workers = 1;
    t2_loader *lv = NULL;
    CHECK_OK(t2_loader_create(&lv, va, &p));
    mean[0] = 1e9f; /* copied at create */
    const t2_batch *b;
    CHECK_OK(t2_loader_next(lv, &b));
    for (int i = 0; i < b->n; i++) {
        float v = (float)b->targets[2 * i] * 10.0f; /* the raw sample value, from its target */
        CHECK_NEAR(b->x.data[3 * i], ((double)v - s) / sqrt(q / 40), 1e-4);
        CHECK_NEAR(b->x.data[3 * i + 2], -v - mean[2], 1e-4);
    }
    t2_loader_free(lv);
    p.standardize_std = NULL;
    CHECK_RC(t2_loader_create(&lv, va, &p), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "loader: standardize_mean and standardize_std must be given together");
    p.standardize_std = sd;
    sd[1] = -1.0f;
    CHECK_RC(t2_loader_create(&lv, va, &p), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "loader: standardize element 1: mean 47.9 std -1 (need finite, std >= 0)");
    t2_dataset_free(tr);
    t2_dataset_free(va);
    t2_dataset_free(ds);
}

/* A split of an IDX-like uint8 dataset keeps the uint8 fast path and its values. */
static void split_of_u8(void)
{
    tdir_make();
    uint32_t idims[3] = {10, 2, 2}, ldims[1] = {10};
    uint8_t pix[40], labs[10];
    for (int i = 0; i < 40; i++) pix[i] = (uint8_t)(i * 6);
    for (int i = 0; i < 10; i++) labs[i] = (uint8_t)(i % 3);
    size_t il, ll;
    uint8_t *ib = idx_build(3, idims, pix, 40, &il), *lb = idx_build(1, ldims, labs, 10, &ll);
    FILE *f = fopen(tpath("i"), "wb");
    CHECK(f && fwrite(ib, 1, il, f) == il);
    fclose(f);
    f = fopen(tpath("l"), "wb");
    CHECK(f && fwrite(lb, 1, ll, f) == ll);
    fclose(f);
    free(ib);
    free(lb);
    t2_dataset *ds = NULL, *a = NULL, *b = NULL;
    CHECK_OK(t2_dataset_idx_open(&ds, tpath("i"), tpath("l")));
    CHECK_OK(t2_dataset_split(ds, 0.3, 5, &a, &b));
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 7;
    t2_loader *l = NULL;
    CHECK_OK(t2_loader_create(&l, b, &p));
    const t2_batch *bt;
    CHECK_OK(t2_loader_next(l, &bt));
    CHECK(bt->n == 7 && bt->targets == NULL && bt->target_width == 0);
    for (int i = 0; i < 7; i++) {
        float want[4];
        int32_t lab;
        CHECK_OK(t2_dataset_get(b, bt->indices[i], want, &lab));
        CHECK(memcmp(bt->x.data + 4 * i, want, sizeof want) == 0 && bt->labels[i] == lab);
        int j = (int)lrintf(want[0] * 255.0f / 24.0f); /* the IDX sample it came from */
        CHECK(want[3] == (float)(24 * j + 18) / 255.0f && lab == j % 3);
    }
    t2_loader_free(l);
    t2_dataset_free(a);
    t2_dataset_free(b);
    t2_dataset_free(ds);
    tdir_cleanup();
}

/* An image source ({2, 4, 4}, pixel value = sample + position / 100): crop and flip draw the same
 * per sample with 2 workers as with none, and only move pixels of the sample itself. */
static int img_get(void *user, int64_t i, float *x, float *target, int32_t *label)
{
    (void)user;
    (void)target;
    for (int k = 0; k < 32; k++) x[k] = (float)i + (float)k / 100.0f;
    if (label) *label = (int32_t)(i % 2);
    return 0;
}

static void image_source(void)
{
    t2_dataset_source src = {.name = "img", .len = 23, .ndim = 3, .shape = {2, 4, 4}, .num_classes = 2,
                             .get = img_get};
    t2_dataset *ds = NULL;
    CHECK_OK(t2_dataset_define(&ds, &src, NULL));
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 4;
    p.shuffle = 1;
    p.seed = 9;
    p.crop_padding = 1;
    p.hflip_prob = 0.5f;
    t2_loader *a = NULL, *b = NULL;
    CHECK_OK(t2_loader_create(&a, ds, &p));
    p.num_workers = 2;
    CHECK_OK(t2_loader_create(&b, ds, &p));
    int moved = 0;
    for (int k = 0; k < 12; k++) {
        const t2_batch *x, *y;
        CHECK_OK(t2_loader_next(a, &x));
        CHECK_OK(t2_loader_next(b, &y));
        CHECK(x->n == y->n && x->targets == NULL && memcmp(x->indices, y->indices, (size_t)x->n * 4) == 0);
        CHECK(memcmp(x->x.data, y->x.data, (size_t)x->n * 32 * sizeof(float)) == 0);
        for (int i = 0; i < x->n; i++)
            for (int j = 0; j < 32; j++) {
                float v = x->x.data[32 * i + j];
                CHECK(v == 0.0f || floorf(v) == (float)x->indices[i]); /* padding or its own pixel */
                moved += v != (float)x->indices[i] + (float)j / 100.0f;
            }
    }
    CHECK(moved > 0); /* the transforms did something */
    t2_loader_free(a);
    t2_loader_free(b);
    t2_dataset_free(ds);
}

int main(void)
{
    image_source();
    workers_restore_shard();
    failing_get();
    define_errors();
    tensor_targets();
    split_stats_standardize();
    split_of_u8();
    return check_report("test_data_source");
}
