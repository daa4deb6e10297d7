/* bench/checkpoint.c — checkpoint write and restore of the seeds' CNN (≈1.2M parameters + SGD
 * momentum) against raw I/O of the same bytes, measured in the same run and directory:
 *   ours:  t2__ckpt_write (CRC, metadata, tar, fsync, rename, directory fsync)
 *          t2__ckpt_open_for_restore + t2__ckpt_restore, as the runner restores (read, checks,
 *          and the copy into a live net and optimizer with the checksums computed on the way)
 *   raw:   open(O_CREAT) + write(params) + write(momentum) + fsync + close
 *          open + read + read + close
 * The two alternate, and the medians are compared. Every round writes new files (as every real
 * checkpoint has a new uuid) and deletes them outside the timed part, so neither side pays for
 * freeing the previous round's blocks. Usage:
 *   checkpoint [--iters N] [--dir DIR] [--compression none|gzip|zstd] [--cold] [--threads N]
 * --threads sets the library's pool (t2_set_num_threads; default 2, as a trial on a 2-core machine
 * would), which splits the checksums and the copy into the net; the raw side is one read(2).  * --cold drops the files from the page cache (posix_fadvise) before every read. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <t2exp.h>
#include "../checkpoints/ckpt.h"
#include "../trials/fashion_mnist_cnn_model.h"
#include "internal.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int write_full(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t r = write(fd, c, n);
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static int read_full(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static void drop_cache(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
}

static int build(t2_net **net, t2_optim **opt, uint64_t seed)
{
    t2_rng r;
    t2_rng_seed(&r, seed);
    size_t n, ns;
    t2_sgd_params sp = t2_sgd_default();
    sp.momentum = 0.9;
    int rc = fashion_mnist_cnn(net, 0.25f, 0.5f, 128);
    if (!rc) rc = t2_net_init(*net, &r);
    if (!rc) t2_net_params(*net, &n);
    if (!rc) rc = t2_sgd_create(opt, &sp, n);
    if (rc) return rc;
    float *st = t2_optim_state(*opt, &ns);
    for (size_t i = 0; i < ns; i++) st[i] = t2_rng_normal(&r);
    return 0;
}

int main(int argc, char **argv)
{
    int iters = 10, cold = 0, threads = 2;
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    t2__ckpt_compression comp = T2__CKPT_COMPRESS_NONE;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--compression") && i + 1 < argc) {
            if (t2__ckpt_compression_parse(argv[++i], &comp)) {
                fprintf(stderr, "%s\n", t2_errmsg());
                return 2;
            }
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cold")) cold = 1;
        else {
            fprintf(stderr, "usage: %s [--iters N] [--dir DIR] [--compression none|gzip|zstd] [--cold] [--threads N]\n",
                    argv[0]);
            return 2;
        }
    }
    if (iters < 1) iters = 1;
    /* As a trial on this machine would: the pool is the size of the machine (2 cores here). */
    if (t2_set_num_threads(threads)) {
        fprintf(stderr, "checkpoint bench: %s\n", t2_errmsg());
        return 2;
    }
    t2_net *net = NULL, *net2 = NULL;
    t2_optim *opt = NULL, *opt2 = NULL;
    if (build(&net, &opt, 1) || build(&net2, &opt2, 2)) {
        fprintf(stderr, "checkpoint bench: %s\n", t2_errmsg());
        return 1;
    }
    size_t np, ns;
    float *params = t2_net_params(net, &np), *state = t2_optim_state(opt, &ns);
    size_t bytes = (np + ns) * sizeof(float);
    float *rp = malloc(np * sizeof(float)), *rs = malloc(ns * sizeof(float));
    double *w = calloc((size_t)iters, sizeof(double)), *rw = calloc((size_t)iters, sizeof(double));
    double *rd = calloc((size_t)iters, sizeof(double)), *rr = calloc((size_t)iters, sizeof(double));
    char path[4096], raw[4096];
    if (!rp || !rs || !w || !rw || !rd || !rr) {
        fprintf(stderr, "checkpoint bench: out of memory\n");
        return 1;
    }
    t2__ckpt_contents c = {.net = net, .opt = opt, .hparams_json = "{\"lr\":0.1}", .batches_trained = 1000};
    t2__ckpt_result res = {{0}, 0};
    int fail = 0;
    for (int i = 0; i < iters && !fail; i++) {
        snprintf(path, sizeof path, "%s/t2bench-ckpt-%ld-%d%s", dir, (long)getpid(), i, t2__ckpt_extension(comp));
        snprintf(raw, sizeof raw, "%s/t2bench-raw-%ld-%d.bin", dir, (long)getpid(), i);
        for (int k = 0; k < 2 && !fail; k++) {
            if ((k == 0) == (i % 2 == 0)) {
                double t0 = t2__now();
                if (t2__ckpt_write(path, &c, comp, &res)) fail = 1;
                w[i] = t2__now() - t0;
                if (cold) drop_cache(path);
                t0 = t2__now();
                t2__ckpt *ck = NULL;
                if (t2__ckpt_open_for_restore(&ck, path) || t2__ckpt_restore(ck, net2, opt2, NULL)) fail = 1;
                t2__ckpt_free(ck);
                rd[i] = t2__now() - t0;
            } else {
                double t0 = t2__now();
                int fd = open(raw, O_WRONLY | O_CREAT | O_EXCL, 0644);
                if (fd < 0 || write_full(fd, params, np * sizeof(float)) || write_full(fd, state, ns * sizeof(float)) ||
                    fsync(fd) || close(fd))
                    fail = 2;
                rw[i] = t2__now() - t0;
                if (cold) drop_cache(raw);
                t0 = t2__now();
                fd = open(raw, O_RDONLY);
                if (fd < 0 || read_full(fd, rp, np * sizeof(float)) || read_full(fd, rs, ns * sizeof(float)) || close(fd))
                    fail = 2;
                rr[i] = t2__now() - t0;
            }
        }
        unlink(path);
        unlink(raw);
    }
    if (fail) {
        fprintf(stderr, "checkpoint bench: %s\n", fail == 1 ? t2_errmsg() : "raw I/O failed");
        return 1;
    }
    size_t n2, s2;
    float *p2 = t2_net_params(net2, &n2), *st2 = t2_optim_state(opt2, &s2);
    if (memcmp(p2, params, np * sizeof(float)) || memcmp(st2, state, ns * sizeof(float))) {
        fprintf(stderr, "checkpoint bench: restored values differ\n");
        return 1;
    }
    double mw = median(w, iters), mrw = median(rw, iters), mrd = median(rd, iters), mrr = median(rr, iters);
    printf("checkpoint: ratio=%.2f restore_ratio=%.2f write_ms=%.2f raw_write_ms=%.2f restore_ms=%.2f "
           "raw_read_ms=%.2f bytes=%zu file_bytes=%llu write_MBps=%.0f restore_MBps=%.0f iters=%d threads=%d "
           "compression=%s%s dir=%s\n",
           mrw / mw, mrr / mrd, mw * 1e3, mrw * 1e3, mrd * 1e3, mrr * 1e3, bytes, (unsigned long long)res.bytes,
           (double)bytes / mw / 1e6, (double)bytes / mrd / 1e6, iters, threads, t2__ckpt_extension(comp) + 1,
           cold ? " cold" : "", dir);
    free(rp);
    free(rs);
    free(w);
    free(rw);
    free(rd);
    free(rr);
    t2_optim_free(opt);
    t2_optim_free(opt2);
    t2_net_free(net);
    t2_net_free(net2);
    return 0;
}
