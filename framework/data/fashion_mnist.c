/* fashion_mnist.c — finds Fashion-MNIST where Debian's dataset-fashion-mnist installs it, and opens
 * it directly or through a cache tied to its files. */
#define _DEFAULT_SOURCE /* POSIX: O_CLOEXEC, mkstemp, fchmod, madvise, strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "data_internal.h"

#define FASHION_MNIST_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

const char *t2_fashion_mnist_dir(void)
{
    const char *d = getenv("FASHION_MNIST_DIR");
    return d && *d ? d : FASHION_MNIST_DEFAULT_DIR;
}

/* Picks "<dir>/<stem>.gz" if it exists, else "<dir>/<stem>"; 0 if neither exists. */
static int find(char *buf, size_t len, const char *dir, const char *stem)
{
    snprintf(buf, len, "%s/%s.gz", dir, stem);
    if (access(buf, F_OK) == 0) return 1;
    snprintf(buf, len, "%s/%s", dir, stem);
    if (access(buf, F_OK) == 0) return 1;
    snprintf(buf, len, "%s/%s.gz", dir, stem); /* name the expected file in the error */
    return 0;
}

/* The split's image and label files under dir (NULL: t2_fashion_mnist_dir()). */
static int fm_files(const char *split, const char *dir, char *images, char *labels, size_t len)
{
    const char *prefix;
    if (split && strcmp(split, "train") == 0) prefix = "train";
    else if (split && strcmp(split, "test") == 0) prefix = "t10k";
    else
        return t2_seterr(T2_EINVAL, "t2_dataset_fashion_mnist: split \"%s\" (want \"train\" or \"test\")",
                         split ? split : "(null)");
    if (!dir) dir = t2_fashion_mnist_dir();
    char stem[64];
    snprintf(stem, sizeof stem, "%s-images-idx3-ubyte", prefix);
    int have_images = find(images, len, dir, stem);
    snprintf(stem, sizeof stem, "%s-labels-idx1-ubyte", prefix);
    int have_labels = find(labels, len, dir, stem);
    if (!have_images || !have_labels)
        return t2_seterr(T2_ENOTFOUND,
                         "Fashion-MNIST not found: %s does not exist (install it with "
                         "`apt-get install dataset-fashion-mnist`, or set FASHION_MNIST_DIR)",
                         have_images ? labels : images);
    return T2_OK;
}

int t2_dataset_fashion_mnist(t2_dataset **out, const char *split, const char *dir)
{
    if (!out) return t2_seterr(T2_EINVAL, "t2_dataset_fashion_mnist: NULL out");
    *out = NULL;
    char images[4096], labels[4096];
    int rc = fm_files(split, dir, images, labels, sizeof images);
    return rc ? rc : t2_dataset_idx_open(out, images, labels);
}

int t2_dataset_fashion_mnist_cached(t2_dataset **out, const char *split, const char *dir, const char *cache_dir)
{
    if (!out) return t2_seterr(T2_EINVAL, "t2_dataset_fashion_mnist_cached: NULL out");
    *out = NULL;
    char images[4096], labels[4096];
    int rc = fm_files(split, dir, images, labels, sizeof images);
    return rc ? rc : t2_dataset_idx_cached(out, images, labels, cache_dir);
}
