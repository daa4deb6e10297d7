/* test_data_loader.c — batching, shuffling, drop_last, sharding, transforms, worker-count
 * invariance and resume position, with exact expected index sequences. */
#include "test_data_util.h"
#include "check.h"

/* N samples of one feature: x[i] = i, label i % 3. */
static t2_dataset *seq_dataset(int n)
{
    int shape[2] = {n, 1};
    t2_tensor x;
    t2_dataset *ds = NULL;
    int32_t *labels = malloc(sizeof(int32_t) * (size_t)n);
    if (t2_tensor_alloc(&x, 2, shape) != 0) exit(1);
    for (int i = 0; i < n; i++) {
        x.data[i] = (float)i;
        labels[i] = i % 3;
    }
    if (t2_dataset_from_tensor(&ds, &x, labels, 1) != 0) exit(1);
    t2_tensor_free(&x);
    free(labels);
    return ds;
}

/* Runs the loader for `calls` calls of t2_loader_next and prints each batch's indices as
 * "e<epoch>b<index>:i,i,i;" ("-;" for an end-of-epoch NULL) into buf. Also checks that x and
 * labels agree with the indices of the sequence dataset. */
static void run(t2_loader *l, int calls, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int c = 0; c < calls; c++) {
        const t2_batch *b = (const t2_batch *)1;
        CHECK_OK(t2_loader_next(l, &b));
        if (!b) {
            off += (size_t)snprintf(buf + off, len - off, "-;");
            continue;
        }
        off += (size_t)snprintf(buf + off, len - off, "e%lldb%lld:", (long long)b->epoch, (long long)b->index);
        CHECK(b->x.shape[0] == b->n && b->x.ndim == 2 && b->x.shape[1] == 1);
        for (int i = 0; i < b->n; i++) {
            off += (size_t)snprintf(buf + off, len - off, i ? ",%u" : "%u", b->indices[i]);
            CHECK(b->x.data[i] == (float)b->indices[i]);
            CHECK(b->labels && b->labels[i] == (int32_t)(b->indices[i] % 3));
        }
        off += (size_t)snprintf(buf + off, len - off, ";");
    }
}

#define CHECK_SEQ(got, want)                                                                       \
    do {                                                                                           \
        if (strcmp(got, want) != 0) {                                                              \
            fprintf(stderr, "%s:%d: sequence\n  got  %s\n  want %s\n", __FILE__, __LINE__, got, want); \
            check_failures++;                                                                      \
        }                                                                                          \
    } while (0)

static void expect(t2_dataset *ds, t2_loader_params p, int calls, int64_t bpe, const char *want)
{
    t2_loader *l = NULL;
    char got[8192];
    CHECK_OK(t2_loader_create(&l, ds, &p));
    if (!l) return;
    CHECK(t2_loader_batches_per_epoch(l) == bpe);
    run(l, calls, got, sizeof got);
    CHECK_SEQ(got, want);
    t2_loader_free(l);
}

static void test_batching(void)
{
    t2_dataset *ds = seq_dataset(10);
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 7;
    p.repeat = 0;
    /* The seeds' example: 10 samples in batches of 7 give 7 and 3; then the end-of-epoch NULL. */
    expect(ds, p, 6, 2, "e0b0:0,1,2,3,4,5,6;e0b1:7,8,9;-;e1b0:0,1,2,3,4,5,6;e1b1:7,8,9;-;");
    p.drop_last = 1;
    expect(ds, p, 4, 1, "e0b0:0,1,2,3,4,5,6;-;e1b0:0,1,2,3,4,5,6;-;");
    p.drop_last = 0;
    p.repeat = 1;
    expect(ds, p, 5, 2, "e0b0:0,1,2,3,4,5,6;e0b1:7,8,9;e1b0:0,1,2,3,4,5,6;e1b1:7,8,9;e2b0:0,1,2,3,4,5,6;");
    p.batch_size = 10;
    expect(ds, p, 2, 1, "e0b0:0,1,2,3,4,5,6,7,8,9;e1b0:0,1,2,3,4,5,6,7,8,9;");
    p.batch_size = 64; /* larger than the dataset: one short batch */
    expect(ds, p, 1, 1, "e0b0:0,1,2,3,4,5,6,7,8,9;");
    t2_dataset_free(ds);
}

static void test_shuffle(void)
{
    t2_dataset *ds = seq_dataset(10);
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 4;
    p.shuffle = 1;
    p.seed = 42;
    p.repeat = 0;
    /* Golden sequence: a change here changes what every resumed or reproduced run sees. It was
     * checked against an independent Python model of the recipe: Fisher-Yates with t2_rng seeded
     * by hash64(hash64(seed) ^ hash64(epoch + 0x5851f42d4c957f2d)). */
    expect(ds, p, 8, 3, "e0b0:5,0,4,9;e0b1:8,3,6,1;e0b2:7,2;-;e1b0:8,5,1,3;e1b1:4,9,0,6;e1b2:2,7;-;");
    p.seed = 43;
    expect(ds, p, 3, 3, "e0b0:1,8,6,4;e0b1:7,9,5,3;e0b2:2,0;");
    p.drop_last = 1;
    p.seed = 42;
    expect(ds, p, 6, 2, "e0b0:5,0,4,9;e0b1:8,3,6,1;-;e1b0:8,5,1,3;e1b1:4,9,0,6;-;");
    t2_dataset_free(ds);

    /* Each epoch is a permutation: every index exactly once, over many epochs of a larger set. */
    ds = seq_dataset(1000);
    t2_loader *l = NULL;
    p = t2_loader_params_default();
    p.batch_size = 33;
    p.shuffle = 1;
    p.seed = 7;
    CHECK_OK(t2_loader_create(&l, ds, &p));
    int64_t bpe = t2_loader_batches_per_epoch(l);
    CHECK(bpe == 31);
    uint32_t first[33];
    for (int e = 0; e < 5; e++) {
        char seen[1000] = {0};
        int dup = 0, count = 0;
        for (int64_t k = 0; k < bpe; k++) {
            const t2_batch *b;
            CHECK_OK(t2_loader_next(l, &b));
            if (!b) break;
            CHECK(b->epoch == e && b->index == k);
            for (int i = 0; i < b->n; i++) dup += seen[b->indices[i]]++, count++;
            if (k == 0 && e == 0) memcpy(first, b->indices, sizeof first);
            if (k == 0 && e == 1) CHECK(memcmp(first, b->indices, sizeof first) != 0);
        }
        CHECK(dup == 0 && count == 1000);
    }
    t2_loader_free(l);
    t2_dataset_free(ds);
}

static void test_sharding(void)
{
    t2_dataset *ds = seq_dataset(10);
    t2_loader_params p = t2_loader_params_default();
    p.repeat = 0;
    p.batch_size = 2;
    p.world_size = 2;
    p.rank = 0;
    expect(ds, p, 4, 3, "e0b0:0,1;e0b1:4,5;e0b2:8;-;");
    p.rank = 1;
    expect(ds, p, 4, 3, "e0b0:2,3;e0b1:6,7;e0b2:9;-;");
    p.drop_last = 1;
    expect(ds, p, 3, 2, "e0b0:2,3;e0b1:6,7;-;");
    p.drop_last = 0;
    /* Short final global batch of 4 over 3 ranks: 2, 1, 1. */
    p.world_size = 3;
    p.rank = 0;
    expect(ds, p, 3, 2, "e0b0:0,1;e0b1:6,7;-;");
    p.rank = 1;
    expect(ds, p, 3, 2, "e0b0:2,3;e0b1:8;-;");
    p.rank = 2;
    expect(ds, p, 3, 2, "e0b0:4,5;e0b1:9;-;");
    /* 4 ranks x 3: one global batch of 10 split 3, 3, 2, 2. */
    p.world_size = 4;
    p.batch_size = 3;
    p.rank = 2;
    expect(ds, p, 2, 1, "e0b0:6,7;-;");
    p.rank = 3;
    expect(ds, p, 2, 1, "e0b0:8,9;-;");
    /* 4 ranks x 2: the final global batch of 2 cannot feed 4 ranks and is dropped. */
    p.batch_size = 2;
    expect(ds, p, 2, 1, "e0b0:6,7;-;");
    t2_dataset_free(ds);

    /* With shuffling, the ranks' batches are disjoint and together make the single-rank batch. */
    ds = seq_dataset(103);
    t2_loader *one = NULL, *r[3] = {NULL, NULL, NULL};
    p = t2_loader_params_default();
    p.shuffle = 1;
    p.seed = 99;
    p.batch_size = 15;
    CHECK_OK(t2_loader_create(&one, ds, &p));
    p.batch_size = 5;
    p.world_size = 3;
    for (int k = 0; k < 3; k++) {
        p.rank = k;
        CHECK_OK(t2_loader_create(&r[k], ds, &p));
        CHECK(t2_loader_batches_per_epoch(r[k]) == t2_loader_batches_per_epoch(one));
    }
    int bad = 0;
    for (int s = 0; s < 3 * 7; s++) {
        const t2_batch *g, *b;
        CHECK_OK(t2_loader_next(one, &g));
        int off = 0;
        for (int k = 0; k < 3; k++) {
            CHECK_OK(t2_loader_next(r[k], &b));
            if (b->epoch != g->epoch || b->index != g->index) bad++;
            for (int i = 0; i < b->n; i++) bad += b->indices[i] != g->indices[off + i];
            off += b->n;
        }
        if (off != g->n) bad++;
    }
    CHECK(bad == 0);
    t2_loader_free(one);
    for (int k = 0; k < 3; k++) t2_loader_free(r[k]);
    t2_dataset_free(ds);
}

/* Image dataset for transform and worker tests: n images 1 x h x w from a generated IDX pair. */
static t2_dataset *image_dataset(uint32_t n, uint32_t h, uint32_t w)
{
    t2_dataset *ds = NULL;
    make_pair(tpath("img"), tpath("lab"), n, h, w, 10, 0);
    if (t2_dataset_idx_open(&ds, tpath("img"), tpath("lab")) != 0) {
        fprintf(stderr, "%s\n", t2_errmsg());
        exit(1);
    }
    return ds;
}

static void test_transforms(void)
{
    t2_dataset *ds = image_dataset(200, 6, 5);
    t2_loader *l = NULL;
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 200;
    p.hflip_prob = 1.0f;
    p.normalize_channels = 1;
    p.mean[0] = 0.5f;
    p.std[0] = 0.25f;
    CHECK_OK(t2_loader_create(&l, ds, &p));
    const t2_batch *b;
    float raw[30];
    int bad = 0;
    CHECK_OK(t2_loader_next(l, &b));
    CHECK(b->x.ndim == 4 && b->x.shape[0] == 200 && b->x.shape[1] == 1 && b->x.shape[2] == 6 && b->x.shape[3] == 5);
    for (int i = 0; i < b->n; i++) {
        CHECK_OK(t2_dataset_get(ds, b->indices[i], raw, NULL));
        for (int y = 0; y < 6; y++)
            for (int x = 0; x < 5; x++)
                bad += b->x.data[i * 30 + y * 5 + x] != (raw[y * 5 + (4 - x)] - 0.5f) / 0.25f;
    }
    CHECK(bad == 0);
    t2_loader_free(l);

    /* Crop with padding 2 and flip 0.5: every sample is its image shifted by (dy, dx) in [-2, 2]
     * with zeros let in, mirrored or not; shifts and flips vary, and are the same on a rerun. */
    p = t2_loader_params_default();
    p.batch_size = 200;
    p.crop_padding = 2;
    p.hflip_prob = 0.5f;
    p.seed = 5;
    CHECK_OK(t2_loader_create(&l, ds, &p));
    int flips = 0, shifted = 0, unmatched = 0;
    CHECK_OK(t2_loader_next(l, &b));
    for (int i = 0; i < b->n; i++) {
        CHECK_OK(t2_dataset_get(ds, b->indices[i], raw, NULL));
        int found = 0;
        for (int f = 0; f <= 1 && !found; f++)
            for (int dy = -2; dy <= 2 && !found; dy++)
                for (int dx = -2; dx <= 2 && !found; dx++) {
                    int ok = 1;
                    for (int y = 0; y < 6 && ok; y++)
                        for (int x = 0; x < 5 && ok; x++) {
                            int sy = y + dy, sx = (f ? 4 - x : x) + dx;
                            float want = (sy < 0 || sy >= 6 || sx < 0 || sx >= 5) ? 0.0f : raw[sy * 5 + sx];
                            ok = b->x.data[i * 30 + y * 5 + x] == want;
                        }
                    if (ok) {
                        found = 1;
                        flips += f;
                        shifted += dy != 0 || dx != 0;
                    }
                }
        unmatched += !found;
    }
    CHECK(unmatched == 0);
    printf("crop/flip over 200 samples: %d flipped, %d shifted\n", flips, shifted);
    CHECK(flips > 70 && flips < 130);
    CHECK(shifted > 150);
    t2_loader_free(l);
    t2_dataset_free(ds);
}

/* Collects every byte of `calls` batches (or NULL markers) into one buffer for comparison. */
static size_t collect(t2_dataset *ds, t2_loader_params p, int calls, uint8_t *out)
{
    t2_loader *l = NULL;
    size_t off = 0;
    CHECK_OK(t2_loader_create(&l, ds, &p));
    if (!l) return 0;
    for (int c = 0; c < calls; c++) {
        const t2_batch *b;
        CHECK_OK(t2_loader_next(l, &b));
        if (!b) {
            memcpy(out + off, "NULL", 4);
            off += 4;
            continue;
        }
        int64_t hdr[3] = {b->epoch, b->index, b->n};
        memcpy(out + off, hdr, sizeof hdr), off += sizeof hdr;
        memcpy(out + off, b->x.data, t2_tensor_numel(&b->x) * 4), off += t2_tensor_numel(&b->x) * 4;
        memcpy(out + off, b->labels, (size_t)b->n * 4), off += (size_t)b->n * 4;
        memcpy(out + off, b->indices, (size_t)b->n * 4), off += (size_t)b->n * 4;
    }
    t2_loader_free(l);
    return off;
}

static void test_worker_invariance(void)
{
    t2_dataset *ds = image_dataset(100, 8, 8);
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 7;
    p.shuffle = 1;
    p.seed = 1234;
    p.crop_padding = 2;
    p.hflip_prob = 0.5f;
    p.normalize_channels = 1;
    p.mean[0] = 0.2860f;
    p.std[0] = 0.3530f;
    for (int repeat = 0; repeat <= 1; repeat++) {
        p.repeat = repeat;
        size_t cap = 60 * (24 + 7 * 64 * 4 + 7 * 8);
        uint8_t *ref = malloc(cap), *got = malloc(cap);
        p.num_workers = 0;
        size_t n0 = collect(ds, p, 50, ref);
        CHECK(n0 > 0);
        int workers[] = {1, 3};
        int prefetch[] = {1, 2, 8};
        for (int w = 0; w < 2; w++)
            for (int q = 0; q < 3; q++) {
                p.num_workers = workers[w];
                p.prefetch = prefetch[q];
                size_t n = collect(ds, p, 50, got);
                if (n != n0 || memcmp(ref, got, n0) != 0) {
                    fprintf(stderr, "workers %d prefetch %d repeat %d: batches differ from 0 workers\n",
                            workers[w], prefetch[q], repeat);
                    check_failures++;
                }
            }
        free(ref);
        free(got);
    }
    t2_dataset_free(ds);
}

static void test_resume(void)
{
    t2_dataset *ds = seq_dataset(10);
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 4;
    p.shuffle = 1;
    p.seed = 42;
    char got[4096];
    for (int workers = 0; workers <= 3; workers += 3) {
        p.num_workers = workers;
        p.repeat = 0;
        t2_loader *a = NULL, *b = NULL;
        CHECK_OK(t2_loader_create(&a, ds, &p));
        CHECK_OK(t2_loader_create(&b, ds, &p));
        /* Run a to the middle of epoch 1, save, and go on: b restored from the state continues
         * with exactly the batches a delivers. */
        run(a, 5, got, sizeof got);
        CHECK_SEQ(got, "e0b0:5,0,4,9;e0b1:8,3,6,1;e0b2:7,2;-;e1b0:8,5,1,3;");
        t2_loader_state st;
        CHECK_OK(t2_loader_state_get(a, &st));
        CHECK(st.epoch == 1 && st.batch == 1);
        run(b, 2, got, sizeof got); /* b has prefetched elsewhere; restore discards that */
        CHECK_OK(t2_loader_restore(b, &st));
        run(b, 4, got, sizeof got);
        CHECK_SEQ(got, "e1b1:4,9,0,6;e1b2:2,7;-;e2b0:2,6,5,9;");
        run(a, 4, got, sizeof got);
        CHECK_SEQ(got, "e1b1:4,9,0,6;e1b2:2,7;-;e2b0:2,6,5,9;");
        /* The end-of-epoch position (NULL due next) is a position too. */
        st.epoch = 3;
        st.batch = 3;
        CHECK_OK(t2_loader_restore(b, &st));
        run(b, 2, got, sizeof got);
        CHECK_SEQ(got, "-;e4b0:2,3,6,7;");
        st.batch = 4;
        CHECK_RC(t2_loader_restore(b, &st), T2_EINVAL);
        st.batch = -1;
        CHECK_RC(t2_loader_restore(b, &st), T2_EINVAL);
        t2_loader_free(a);
        t2_loader_free(b);

        /* Repeat mode: the end position is the next epoch's start. */
        p.repeat = 1;
        CHECK_OK(t2_loader_create(&a, ds, &p));
        st.epoch = 0;
        st.batch = 3;
        CHECK_OK(t2_loader_restore(a, &st));
        CHECK_OK(t2_loader_state_get(a, &st));
        CHECK(st.epoch == 1 && st.batch == 0);
        run(a, 4, got, sizeof got);
        CHECK_SEQ(got, "e1b0:8,5,1,3;e1b1:4,9,0,6;e1b2:2,7;e2b0:2,6,5,9;");
        CHECK_OK(t2_loader_state_get(a, &st));
        CHECK(st.epoch == 2 && st.batch == 1);
        t2_loader_free(a);
    }
    t2_dataset_free(ds);
}

static void test_errors(void)
{
    t2_dataset *ds = seq_dataset(10);
    t2_loader *l = NULL;
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 0;
    CHECK_RC(t2_loader_create(&l, ds, &p), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "batch_size 0") != NULL);
    p = t2_loader_params_default();
    p.rank = 2;
    p.world_size = 2;
    CHECK_RC(t2_loader_create(&l, ds, &p), T2_EINVAL);
    p = t2_loader_params_default();
    p.batch_size = 11;
    p.drop_last = 1;
    CHECK_RC(t2_loader_create(&l, ds, &p), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "no batch") != NULL);
    p = t2_loader_params_default();
    p.crop_padding = 1;
    CHECK_RC(t2_loader_create(&l, ds, &p), T2_EINVAL); /* crop needs images */
    p = t2_loader_params_default();
    p.normalize_channels = 3;
    CHECK_RC(t2_loader_create(&l, ds, &p), T2_EINVAL);
    p.normalize_channels = 1;
    p.std[0] = 0.0f;
    CHECK_RC(t2_loader_create(&l, ds, &p), T2_EINVAL);
    p = t2_loader_params_default();
    p.hflip_prob = 2.0f;
    CHECK_RC(t2_loader_create(&l, ds, &p), T2_EINVAL);
    p = t2_loader_params_default();
    p.num_workers = -1;
    CHECK_RC(t2_loader_create(&l, ds, &p), T2_EINVAL);
    p.num_workers = 1;
    p.prefetch = 0;
    CHECK_RC(t2_loader_create(&l, ds, &p), T2_EINVAL);
    CHECK(l == NULL);
    CHECK_RC(t2_loader_create(&l, NULL, &p), T2_EINVAL);
    CHECK_RC(t2_loader_next(NULL, NULL), T2_EINVAL);
    const t2_batch *b;
    CHECK_RC(t2_loader_next(NULL, &b), T2_EINVAL);
    t2_loader_free(NULL);
    CHECK(t2_loader_batches_per_epoch(NULL) == 0);
    t2_dataset_free(ds);

    /* An owned dataset is freed on failure too (ASan/valgrind would see the leak). */
    ds = seq_dataset(10);
    p = t2_loader_params_default();
    p.own_dataset = 1;
    p.batch_size = -3;
    CHECK_RC(t2_loader_create(&l, ds, &p), T2_EINVAL);
    /* ...and by t2_loader_free; an unlabelled dataset gives NULL labels. */
    int shape[2] = {4, 2};
    t2_tensor x;
    CHECK_OK(t2_tensor_alloc(&x, 2, shape));
    CHECK_OK(t2_dataset_from_tensor(&ds, &x, NULL, 1));
    t2_tensor_free(&x);
    p.batch_size = 3;
    p.num_workers = 2;
    CHECK_OK(t2_loader_create(&l, ds, &p));
    CHECK_OK(t2_loader_next(l, &b));
    CHECK(b && b->labels == NULL && b->n == 3);
    t2_loader_free(l); /* workers blocked on a full queue must stop promptly */
}

int main(void)
{
    tdir_make();
    test_batching();
    test_shuffle();
    test_sharding();
    test_transforms();
    test_worker_invariance();
    test_resume();
    test_errors();
    tdir_cleanup();
    return check_report("test_data_loader");
}
