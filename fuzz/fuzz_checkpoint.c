/* fuzz_checkpoint.c — libFuzzer harness for the checkpoint reader (checkpoints/ckpt_read.c,
 * ckpt_meta.c) and everything that trusts its output: the getters and a restore into a live net,
 * optimizer and schedule.
 *
 * Input: byte 0 picks the mode. Even: the rest is a whole archive (tar, tar.gz or tar.zst), as
 * read from disk. Odd: the rest is the text of metadata.json, wrapped into a valid tar with the
 * entries of the harness's fixed model and sealed with its own checksum (when it starts with
 * its place), so mutations reach the metadata validation and the
 * checksum and restore paths instead of dying on tar header checksums. With bit 1 of byte 0
 * set, the archive is opened as the runner opens it (t2__ckpt_open_for_restore, from a memfd:
 * metadata.json at open, the entries at the first restore, the float arrays' checksums during the
 * restore's copy), and streamed as `t2exp export` reads it (t2__ckpt_stream_params).
 *
 * Built with -DT2_FUZZ_MAKE_SEEDS instead, it is a program that writes real checkpoints of that
 * model (both modes, every compression, with and without optional state) into the directory
 * given as argv[1]. */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "checkpoints/ckpt.h"
#include "t2exp.h"

static const char user_bytes[] = "fuzz user state";

typedef struct fixed {
    t2_net *net;
    t2_optim *opt;
    t2_lr_schedule *sched;
} fixed;

/* dense 4->3, batchnorm, relu, dense 3->2; SGD with momentum; cosine schedule. Deterministic. */
static int make_fixed(fixed *f, uint64_t seed)
{
    int shape[1] = {4}, rc;
    t2_rng r;
    t2_rng_seed(&r, seed);
    memset(f, 0, sizeof *f);
    if ((rc = t2_net_create(&f->net, 1, shape)) || (rc = t2_net_dense(f->net, 3)) ||
        (rc = t2_net_batchnorm(f->net, 1e-5f, 0.1f)) || (rc = t2_net_relu(f->net)) || (rc = t2_net_dense(f->net, 2)) ||
        (rc = t2_net_init(f->net, &r)))
        return rc;
    size_t n, ns;
    t2_net_params(f->net, &n);
    t2_sgd_params sp = t2_sgd_default();
    sp.momentum = 0.9;
    if ((rc = t2_sgd_create(&f->opt, &sp, n))) return rc;
    float *st = t2_optim_state(f->opt, &ns);
    for (size_t i = 0; i < ns; i++) st[i] = (float)i * 0.25f;
    t2_lr_params lp = t2_lr_default(T2_LR_COSINE, 0.1);
    lp.t_max = 100;
    return t2_lr_schedule_create(&f->sched, &lp);
}

static void free_fixed(fixed *f)
{
    t2_net_free(f->net);
    t2_optim_free(f->opt);
    t2_lr_schedule_free(f->sched);
}

/* ---- a minimal ustar writer for mode 1 ---- */

static void octal(unsigned char *f, size_t w, unsigned long long v)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%0*llo", (int)(w - 1), v);
    memcpy(f, tmp, w - 1);
}

static size_t put_entry(unsigned char *out, const char *name, const void *data, size_t len)
{
    unsigned char *h = out;
    memset(h, 0, 512);
    strncpy((char *)h, name, 100);
    octal(h + 100, 8, 0644);
    octal(h + 108, 8, 0);
    octal(h + 116, 8, 0);
    octal(h + 124, 12, len);
    octal(h + 136, 12, 0);
    h[156] = '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int k = 0; k < 512; k++) sum += h[k];
    char ck[8];
    snprintf(ck, sizeof ck, "%06o", sum);
    memcpy(h + 148, ck, 7);
    size_t padded = (len + 511) / 512 * 512;
    memset(out + 512, 0, padded);
    if (len) memcpy(out + 512, data, len);
    return 512 + padded;
}

static unsigned char *wrap_meta(const fixed *f, const uint8_t *meta, size_t meta_len, size_t *out_len)
{
    size_t np, nb, ns;
    const float *p = t2_net_params(f->net, &np), *b = t2_net_buffers(f->net, &nb);
    const float *s = t2_optim_state(f->opt, &ns);
    size_t total = 512 * 6 + meta_len + 511 + (np + nb + ns) * 4 + 3 * 511 + sizeof user_bytes + 511 + 1024;
    unsigned char *out = calloc(1, total), *o = out;
    if (!out) return NULL;
    /* Sealed with its own checksum, so mutations reach the validation behind it. */
    unsigned char *sealed = malloc(meta_len ? meta_len : 1);
    if (!sealed) {
        free(out);
        return NULL;
    }
    memcpy(sealed, meta, meta_len);
    t2__ckpt_meta_seal((char *)sealed, meta_len);
    o += put_entry(o, "metadata.json", sealed, meta_len);
    free(sealed);
    o += put_entry(o, "params.bin", p, np * 4);
    o += put_entry(o, "buffers.bin", b, nb * 4);
    o += put_entry(o, "optimizer.bin", s, ns * 4);
    o += put_entry(o, "user_state.bin", user_bytes, sizeof user_bytes);
    o += 1024;
    *out_len = (size_t)(o - out);
    return out;
}

/* ---- the harness ---- */

static void exercise(t2__ckpt *ck, fixed *f)
{
    t2_checkpoint_info info;
    t2_param_info ti;
    t2_loader_state ls;
    t2_lr_state lr;
    t2_rng r;
    const void *u;
    size_t ul;
    if (t2__ckpt_get_info(ck, &info)) return;
    volatile size_t sink = strlen(info.hparams_json) + strlen(info.uuid) + strlen(info.t2exp_version);
    for (int i = 0; i < info.num_tensors; i++)
        if (t2_checkpoint_tensor_info(ck, i, &ti) == 0) sink += strlen(ti.name);
    t2__ckpt_loader_state(ck, &ls);
    t2__ckpt_lr_state(ck, &lr);
    t2__ckpt_get_rng(ck, "trial", &r);
    if (t2__ckpt_user_state(ck, &u, &ul) == 0 && ul) sink += ((const unsigned char *)u)[ul - 1];
    const char *m = t2__ckpt_string(ck, "metric");
    if (m) sink += strlen(m);
    const float *p;
    size_t np;
    if (t2__ckpt_params(ck, &p, &np) == 0 && np) sink += (size_t)(p[np - 1] > 0);
    /* With the optimizer first: opened for restore, the entries are read by the first restore,
     * and one without an optimizer would skip optimizer.bin. */
    t2__ckpt_restore(ck, f->net, f->opt, f->sched);
    t2__ckpt_restore(ck, f->net, NULL, NULL);
    if (t2__ckpt_user_state(ck, &u, &ul) == 0 && ul) sink += ((const unsigned char *)u)[ul - 1];
    if (t2__ckpt_params(ck, &p, &np) == 0 && np) sink += (size_t)(p[np - 1] > 0);
    (void)sink;
}

#ifndef T2_FUZZ_MAKE_SEEDS
#include <sys/mman.h>
#include <unistd.h>

static int drop(void *ctx, const void *data, size_t len)
{
    (void)ctx;
    volatile unsigned char last = len ? ((const unsigned char *)data)[len - 1] : 0;
    (void)last;
    return 0;
}

static int open_any(t2__ckpt **ck, const unsigned char *p, size_t n, int lazy)
{
    static int fd = -1;
    if (!lazy) return t2__ckpt_open_memory(ck, "fuzz", p, n);
    if (fd < 0 && (fd = memfd_create("fuzz-ckpt", 0)) < 0) return -1;
    if (ftruncate(fd, 0) != 0 || (n && pwrite(fd, p, n, 0) != (ssize_t)n)) return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    /* Also the way export reads it: streamed from the file, params.bin to a sink. */
    t2__ckpt *streamed = NULL;
    t2__ckpt_stream_params(&streamed, path, drop, NULL);
    t2__ckpt_free(streamed);
    return t2__ckpt_open_for_restore(ck, path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fixed ref, live;
    static int ready;
    if (!ready) {
        if (make_fixed(&ref, 1) || make_fixed(&live, 2)) return 0;
        ready = 1;
    }
    if (size < 1) return 0;
    int mode = data[0] & 1, lazy = (data[0] >> 1) & 1;
    data++, size--;
    t2__ckpt *ck = NULL;
    if (mode == 0) {
        if (open_any(&ck, data, size, lazy) == 0) exercise(ck, &live);
    } else {
        size_t len;
        unsigned char *tar = wrap_meta(&ref, data, size, &len);
        if (tar && open_any(&ck, tar, len, lazy) == 0) exercise(ck, &live);
        free(tar);
    }
    t2__ckpt_free(ck);
    return 0;
}
#else
static int seed(const char *dir, const char *name, const t2__ckpt_contents *c, t2__ckpt_compression comp)
{
    char path[4096], out[4200];
    snprintf(path, sizeof path, "%s/%s.ckpt", dir, name);
    if (t2__ckpt_write(path, c, comp, NULL)) {
        fprintf(stderr, "%s\n", t2_errmsg());
        return 1;
    }
    /* Mode byte 0 in front of the archive. */
    FILE *in = fopen(path, "rb");
    snprintf(out, sizeof out, "%s/%s.seed", dir, name);
    FILE *o = fopen(out, "wb");
    if (!in || !o) return 1;
    fputc(0, o);
    int ch;
    while ((ch = fgetc(in)) != EOF) fputc(ch, o);
    fclose(in);
    fclose(o);
    remove(path);
    if (comp != T2__CKPT_COMPRESS_NONE) return 0;
    /* Mode 1: the metadata.json of the same checkpoint (the first entry's data). */
    t2__ckpt_write(path, c, comp, NULL);
    in = fopen(path, "rb");
    if (!in) return 1;
    unsigned char hdr[512];
    if (fread(hdr, 1, 512, in) != 512) return 1;
    size_t len = (size_t)strtoull((const char *)hdr + 124, NULL, 8);
    char *meta = malloc(len);
    if (!meta || fread(meta, 1, len, in) != len) return 1;
    fclose(in);
    remove(path);
    snprintf(out, sizeof out, "%s/%s-meta.seed", dir, name);
    o = fopen(out, "wb");
    if (!o) return 1;
    fputc(1, o);
    fwrite(meta, 1, len, o);
    fclose(o);
    free(meta);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SEED_DIR\n", argv[0]);
        return 2;
    }
    fixed f;
    if (make_fixed(&f, 1)) {
        fprintf(stderr, "%s\n", t2_errmsg());
        return 1;
    }
    for (int i = 0; i < 5; i++) t2_lr_schedule_step(f.sched);
    t2_optim_set_step_count(f.opt, 5);
    t2_rng r;
    t2_rng_seed(&r, 7);
    t2_loader_state ls = {1, 2};
    t2__ckpt_rng rngs[1] = {{"trial", r}};
    t2__ckpt_kv kv[1] = {{"metric", "0.5"}};
    t2__ckpt_contents full = {.net = f.net, .opt = f.opt, .sched = f.sched, .loader = &ls, .rngs = rngs,
                              .n_rngs = 1, .user_state = user_bytes, .user_state_len = sizeof user_bytes,
                              .experiment_id = 1, .trial_id = 2, .hparams_json = "{\"lr\":0.1,\"n\":[1,2]}",
                              .batches_trained = 10, .epoch = 1, .strings = kv, .n_strings = 1};
    t2__ckpt_contents bare = {.net = f.net};
    int rc = seed(argv[1], "full", &full, T2__CKPT_COMPRESS_NONE) || seed(argv[1], "bare", &bare, T2__CKPT_COMPRESS_NONE) ||
             seed(argv[1], "full-gz", &full, T2__CKPT_COMPRESS_GZIP) ||
             seed(argv[1], "full-zst", &full, T2__CKPT_COMPRESS_ZSTD);
    free_fixed(&f);
    return rc;
}
#endif
