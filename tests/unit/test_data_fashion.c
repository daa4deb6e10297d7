/* test_data_fashion.c — the real Fashion-MNIST files from Debian's dataset-fashion-mnist, when
 * installed (skipped otherwise): sizes, the 6000-per-class label histogram, a full shuffled epoch
 * through prefetch workers, and a cache round trip. */
#include "test_data_util.h"
#include "check.h"

static void check_split(const char *split, int64_t n, int per_class)
{
    t2_dataset *ds = NULL;
    CHECK_OK(t2_dataset_fashion_mnist(&ds, split, NULL));
    if (!ds) return;
    int ndim, shape[3];
    CHECK(t2_dataset_len(ds) == n);
    CHECK_OK(t2_dataset_sample_shape(ds, &ndim, shape));
    CHECK(ndim == 3 && shape[0] == 1 && shape[1] == 28 && shape[2] == 28);
    CHECK(t2_dataset_num_classes(ds) == 10);
    int hist[10] = {0};
    float x[784];
    int32_t lab;
    for (int64_t i = 0; i < n; i++) {
        CHECK_OK(t2_dataset_get(ds, i, x, &lab));
        if (lab >= 0 && lab < 10) hist[lab]++;
    }
    for (int c = 0; c < 10; c++) CHECK(hist[c] == per_class);
    printf("%s: %lld samples, %d per class\n", split, (long long)n, hist[0]);

    /* One shuffled epoch through 2 workers: every sample once, labels as in the dataset. */
    t2_loader *l = NULL;
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 64;
    p.shuffle = 1;
    p.seed = 3;
    p.num_workers = 2;
    p.repeat = 0;
    p.normalize_channels = 1;
    p.mean[0] = 0.2860f;
    p.std[0] = 0.3530f;
    CHECK_OK(t2_loader_create(&l, ds, &p));
    char *seen = calloc((size_t)n, 1);
    int64_t count = 0, dup = 0, badlab = 0;
    const t2_batch *b;
    while (t2_loader_next(l, &b) == 0 && b) {
        for (int i = 0; i < b->n; i++) {
            dup += seen[b->indices[i]]++;
            count++;
            CHECK_OK(t2_dataset_get(ds, b->indices[i], x, &lab));
            badlab += lab != b->labels[i];
        }
    }
    CHECK(count == n && dup == 0 && badlab == 0);
    free(seen);
    t2_loader_free(l);

    /* The cache holds the same pixels and labels. */
    t2_dataset *cd = NULL;
    CHECK_OK(t2_dataset_cache_write(ds, tpath("fm.cache")));
    CHECK_OK(t2_dataset_cache_open(&cd, tpath("fm.cache")));
    if (cd) {
        CHECK(t2_dataset_len(cd) == n && t2_dataset_num_classes(cd) == 10);
        float y[784];
        int32_t lab2;
        int bad = 0;
        for (int64_t i = 0; i < n; i += 7) {
            CHECK_OK(t2_dataset_get(ds, i, x, &lab));
            CHECK_OK(t2_dataset_get(cd, i, y, &lab2));
            bad += lab != lab2 || memcmp(x, y, sizeof x) != 0;
        }
        CHECK(bad == 0);
    }
    t2_dataset_free(cd);
    t2_dataset_free(ds);
}

int main(void)
{
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/train-images-idx3-ubyte.gz", t2_fashion_mnist_dir());
    if (access(probe, R_OK) != 0) {
        printf("test_data_fashion: skipped (%s absent; apt-get install dataset-fashion-mnist)\n", probe);
        return 77; /* ctest's SKIP_RETURN_CODE: skipped, never a silent pass */
    }
    tdir_make();
    check_split("train", 60000, 6000);
    check_split("test", 10000, 1000);
    tdir_cleanup();
    return check_report("test_data_fashion");
}
