/* bench/data.c — Fashion-MNIST load, cached (mmap) load and loader throughput.
 *
 * Prints one "key=value" line per figure; bench/run_data.sh compares them with the numpy
 * reference measured in the same run. Best of `reps` runs each, page cache warm for all. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "t2exp.h"

static int die(const char *what)
{
    fprintf(stderr, "bench data: %s: %s\n", what, t2_errmsg());
    return 1;
}

static double loader_rate(t2_dataset *ds, int transforms, int epochs)
{
    t2_loader *l = NULL;
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 64;
    p.shuffle = 1;
    p.num_workers = 2;
    p.prefetch = 4;
    if (transforms) {
        p.crop_padding = 2;
        p.hflip_prob = 0.5f;
        p.normalize_channels = 1;
        p.mean[0] = 0.2860f;
        p.std[0] = 0.3530f;
    }
    if (t2_loader_create(&l, ds, &p) != 0) return -1;
    int64_t nb = t2_loader_batches_per_epoch(l) * epochs, imgs = 0;
    const t2_batch *b;
    double sink = 0, t = t2__now();
    for (int64_t k = 0; k < nb; k++) {
        if (t2_loader_next(l, &b) != 0) return -1;
        imgs += b->n;
        sink += b->x.data[0]; /* the consumer touches the batch, as training would */
    }
    t = t2__now() - t;
    t2_loader_free(l);
    if (sink == 12345.678) printf(" ");
    return (double)imgs / t;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 3;
    const char *tmp = getenv("TMPDIR");
    char cache[4096];
    snprintf(cache, sizeof cache, "%s/t2exp-bench-fmnist-%d.cache", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    if (reps < 1) reps = 1;

    /* 1. gzip IDX -> float32 in memory. */
    double best_load = 1e9, best_open = 0;
    for (int r = 0; r < reps; r++) {
        t2_dataset *ds = NULL;
        double t = t2__now();
        if (t2_dataset_fashion_mnist(&ds, "train", NULL) != 0) return die("open");
        double t_open = t2__now() - t;
        t2_tensor x;
        if (t2_dataset_to_tensor(ds, &x, NULL) != 0) return die("to float");
        t = t2__now() - t;
        if (t < best_load) best_load = t, best_open = t_open;
        t2_tensor_free(&x);
        t2_dataset_free(ds);
    }
    printf("load_s=%.4f\nload_u8_s=%.4f\n", best_load, best_open);

    /* 2. The cache: open (mmap) + one full pass over the pixels; and open + float32 conversion. */
    t2_dataset *ds = NULL;
    if (t2_dataset_fashion_mnist(&ds, "train", NULL) != 0) return die("open");
    if (t2_dataset_cache_write(ds, cache) != 0) return die("cache write");
    double best_cached = 1e9, best_cached_f = 1e9, best_cached_open = 1e9;
    for (int r = 0; r < reps; r++) {
        t2_dataset *cd = NULL;
        double t = t2__now();
        if (t2_dataset_cache_open(&cd, cache) != 0) return die("cache open");
        double t_open = t2__now() - t;
        if (t_open < best_cached_open) best_cached_open = t_open;
        /* Touch every pixel byte once: what the loader's first epoch reads. */
        float one[784];
        uint64_t sum = 0;
        int64_t n = t2_dataset_len(cd);
        for (int64_t i = 0; i < n; i++) {
            if (t2_dataset_get(cd, i, one, NULL) != 0) return die("get");
            sum += (uint64_t)(one[100] * 255.0f);
        }
        t = t2__now() - t;
        if (t < best_cached) best_cached = t;
        if (sum == 1) printf(" ");
        t2_dataset_free(cd);

        t = t2__now();
        if (t2_dataset_cache_open(&cd, cache) != 0) return die("cache open");
        t2_tensor x;
        if (t2_dataset_to_tensor(cd, &x, NULL) != 0) return die("to float");
        t = t2__now() - t;
        if (t < best_cached_f) best_cached_f = t;
        t2_tensor_free(&x);
        t2_dataset_free(cd);
    }
    remove(cache);
    printf("cached_s=%.5f\ncached_open_s=%.5f\ncached_float_s=%.4f\n", best_cached, best_cached_open, best_cached_f);

    /* 3. Loader throughput: 2 workers, batch 64, shuffled; plain and with crop+flip+normalize. */
    double r0 = 0, r1 = 0;
    for (int r = 0; r < reps; r++) {
        double a = loader_rate(ds, 0, 3), b = loader_rate(ds, 1, 3);
        if (a < 0 || b < 0) return die("loader");
        if (a > r0) r0 = a;
        if (b > r1) r1 = b;
    }
    printf("loader_img_per_s=%.0f\nloader_aug_img_per_s=%.0f\n", r0, r1);
    t2_dataset_free(ds);
    return 0;
}
