/* fashion_mnist_prepare.c — a pipeline's prepare stage for the Fashion-MNIST examples: decodes the
 * train and test IDX files once and writes each split as a t2exp dataset cache, which the trials
 * then map (data.train_cache / data.test_cache) instead of decoding gzip in every experiment.
 * Uses only the public header, like any program a command stage runs.
 *
 *   fashion_mnist_prepare TRAIN.t2c TEST.t2c
 *
 * The IDX files come from $FASHION_MNIST_DIR, else /usr/share/datasets/fashion-mnist (Debian's
 * dataset-fashion-mnist); each cache records them as its sources. Exit 0, or 1 with the reason
 * on stderr. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <t2exp.h>

/* dir/name.gz if it exists, else dir/name (t2_dataset_fashion_mnist's preference). */
static void idx_path(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s/%s.gz", dir, name);
    if (access(buf, F_OK) != 0) snprintf(buf, len, "%s/%s", dir, name);
}

/* The output's missing parent directories, private (0700) as the library's own caches'. */
static int make_parents(const char *out)
{
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", out) >= (int)sizeof dir) return -1;
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            fprintf(stderr, "fashion_mnist_prepare: cannot create %s: %s\n", dir, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    return 0;
}

static int prepare(const char *split, const char *out)
{
    const char *dir = t2_fashion_mnist_dir();
    char images[4096], labels[4096], name[64];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", strcmp(split, "train") == 0 ? "train" : "t10k");
    idx_path(images, sizeof images, dir, name);
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", strcmp(split, "train") == 0 ? "train" : "t10k");
    idx_path(labels, sizeof labels, dir, name);
    t2_dataset *ds = NULL;
    const char *sources[2] = {images, labels};
    int rc = t2_dataset_idx_open(&ds, images, labels);
    if (!rc) rc = t2_dataset_cache_write_sources(ds, out, sources, 2);
    if (rc) {
        fprintf(stderr, "fashion_mnist_prepare: %s split: %s\n", split, t2_errmsg());
    } else {
        printf("fashion_mnist_prepare: %s: %lld %s samples from %s\n", out, (long long)t2_dataset_len(ds), split, dir);
    }
    t2_dataset_free(ds);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fashion_mnist_prepare TRAIN.t2c TEST.t2c\n");
        return 2;
    }
    if (make_parents(argv[1]) || make_parents(argv[2])) return 1;
    if (prepare("train", argv[1]) || prepare("test", argv[2])) return 1;
    return 0;
}
