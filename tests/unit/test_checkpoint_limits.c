/* test_checkpoint_limits.c — the reader's budget and what else keeps a checkpoint from hurting:
 *   - sizes metadata.json declares beyond 1032 times the archive (at least 64 MiB) are refused
 *     before any entry is decoded, naming the entry and the limit; a user state over 64 MiB plus
 *     4 times params.bin is refused by the reader and, earlier, by the writer;
 *   - t2__ckpt_open_info / t2__ckpt_open_for_restore read metadata.json only, and restore checks
 *     the tensor table against the model before it decodes anything (an archive that declares a
 *     model it does not hold fails on the shape, not on the missing bytes);
 *   - real checkpoints (none, gzip, zstd) still restore bit-exactly that way, and
 *     t2__ckpt_stream_params streams params.bin with every checksum checked;
 *   - a zstd archive of an all-zero model over the floor is refused by the writer (its reader
 *     would take it for a bomb), a gzip one is written and read back;
 *   - checkpoints are created 0600, narrowed further by the umask. */
#include "test_checkpoint_util.h"
#include <sys/stat.h>
#include "check.h"

static char *dir;

#define CHECK_MSG(expr, want, text)                                                               \
    do {                                                                                          \
        int rc_ = (expr);                                                                         \
        if (rc_ != (want) || !strstr(t2_errmsg(), (text))) {                                      \
            fprintf(stderr, "%s:%d: %s returned %d (%s), wanted %d with \"%s\"\n", __FILE__, __LINE__, \
                    #expr, rc_, t2_errmsg(), (want), (text));                                     \
            check_failures++;                                                                     \
        }                                                                                         \
    } while (0)

/* A sealed metadata.json declaring one params tensor "w" of `floats` floats, no buffers, and a
 * user_state.bin of user_bytes (none if negative). */
static char *meta_text(unsigned long long floats, long long user_bytes, size_t *len)
{
    char *t = malloc(2048);
    if (!t) return NULL;
    char user[128] = "";
    if (user_bytes >= 0) snprintf(user, sizeof user, ",\"user_state.bin\":{\"size\":%lld,\"crc32c\":0}", user_bytes);
    int n = snprintf(t, 2048,
                     "{\"metadata_crc32c\":\"00000000\",\"format\":\"t2exp-checkpoint\",\"format_version\":2,"
                     "\"t2exp_version\":\"0.1.0\",\"uuid\":\"00000000-0000-4000-8000-000000000000\","
                     "\"created_unix\":0,\"experiment_id\":0,\"trial_id\":0,\"batches_trained\":0,\"epoch\":0,"
                     "\"hparams\":{},\"loader\":null,\"rngs\":{},\"lr_schedule\":null,\"optimizer\":null,"
                     "\"checksum\":\"crc32c\",\"tensors\":[{\"name\":\"w\",\"array\":\"params\",\"shape\":[%llu],"
                     "\"offset\":0,\"size\":%llu,\"crc32c\":0}],\"entries\":{\"params.bin\":{\"size\":%llu,"
                     "\"crc32c\":0},\"buffers.bin\":{\"size\":0,\"crc32c\":0}%s},\"strings\":{}}",
                     floats, floats, floats * 4, user);
    *len = (size_t)n;
    CHECK_OK(t2__ckpt_meta_seal(t, *len));
    return t;
}

/* An archive of that metadata and a params.bin header declaring its size, but no data. */
static unsigned char *claim(unsigned long long floats, long long user_bytes, size_t *len)
{
    size_t mlen = 0;
    char *m = meta_text(floats, user_bytes, &mlen);
    if (!m) return NULL;
    tar_ent e[2] = {{"metadata.json", '0', m, mlen, -1, NULL}, {"params.bin", '0', NULL, 0, (long long)floats * 4, NULL}};
    unsigned char *tar = tar_build(e, 2, len);
    free(m);
    return tar;
}

static void budget(void)
{
    size_t len = 0;
    t2__ckpt *ck = NULL;
    /* 1 GiB declared by a 3 KB archive: refused at metadata.json, naming the entry and limit. */
    unsigned char *tar = claim(1ull << 28, -1, &len);
    CHECK(tar != NULL);
    CHECK_MSG(t2__ckpt_open_memory(&ck, "claim.tar", tar, len), T2_EFORMAT,
              "entry params.bin declares 1073741824 bytes");
    CHECK(strstr(t2_errmsg(), "times its size, at least 64 MiB") != NULL);
    CHECK(ck == NULL);
    free(tar);
    /* Under the 64 MiB floor the claim passes the budget, and decoding stops where the data does. */
    tar = claim(1ull << 20, -1, &len);
    CHECK_MSG(t2__ckpt_open_memory(&ck, "claim.tar", tar, len), T2_EFORMAT, "truncated");
    free(tar);
    /* user_state.bin: at most 64 MiB plus 4 times params.bin (4 bytes here). */
    tar = claim(1, (64ll << 20) + 16 + 1, &len);
    CHECK_MSG(t2__ckpt_open_memory(&ck, "claim.tar", tar, len), T2_EFORMAT,
              "entry user_state.bin declares 67108881 bytes, more than its limit of 67108880");
    free(tar);
}

static void model_first(void)
{
    size_t len = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/claim.tar", dir);
    /* 32 MiB of parameters declared and none held: within the budget, so only the model can
     * refuse it, and it must before anything is decoded. */
    unsigned char *tar = claim(8ull << 20, -1, &len);
    CHECK(tar && write_all(path, tar, len) == 0);
    free(tar);
    t2_net *net = NULL;
    CHECK_OK(small_net(&net, 3));
    t2__ckpt *ck = NULL;
    CHECK_MSG(t2__ckpt_open(&ck, path), T2_EFORMAT, "entry params.bin: truncated");
    for (int lazy = 0; lazy <= 1; lazy++) {
        CHECK_OK(lazy ? t2__ckpt_open_for_restore(&ck, path) : t2__ckpt_open_info(&ck, path));
        t2_checkpoint_info info;
        CHECK_OK(t2__ckpt_get_info(ck, &info));
        CHECK(info.num_params == 8u << 20);
        const float *p;
        size_t n;
        CHECK_MSG(t2__ckpt_params(ck, &p, &n), T2_ESTATE, "restore reads them");
        CHECK_MSG(t2__ckpt_restore(ck, net, NULL, NULL), T2_ESHAPE, "has no tensor 0.dense.weight");
        t2__ckpt_free(ck);
        ck = NULL;
    }
    CHECK_MSG(t2_checkpoint_load_model(path, net), T2_ESHAPE, "has no tensor 0.dense.weight");
    t2_net_free(net);
}

static int same(const float *a, const float *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

typedef struct sink_buf {
    unsigned char *p;
    size_t len, cap;
    int fail_at; /* > 0: the sink fails at this call */
    int calls;
} sink_buf;

static int to_buf(void *ctx, const void *d, size_t n)
{
    sink_buf *s = ctx;
    if (++s->calls == s->fail_at) return t2_seterr(T2_EIO, "sink: disk full");
    if (s->len + n > s->cap) return t2_seterr(T2_ENOMEM, "sink: too much");
    memcpy(s->p + s->len, d, n);
    s->len += n;
    return T2_OK;
}

static void real_ones(void)
{
    t2_net *a = NULL, *b = NULL;
    t2_optim *oa = NULL, *ob = NULL;
    CHECK_OK(small_net(&a, 5));
    CHECK_OK(small_net(&b, 9));
    size_t np, nb, ns;
    const float *pa = t2_net_params(a, &np), *ba = t2_net_buffers(a, &nb);
    t2_sgd_params sp = t2_sgd_default();
    sp.momentum = 0.9;
    CHECK_OK(t2_sgd_create(&oa, &sp, np));
    CHECK_OK(t2_sgd_create(&ob, &sp, np));
    float *sa = t2_optim_state(oa, &ns);
    for (size_t i = 0; i < ns; i++) sa[i] = (float)i * 0.5f;
    const char user[] = "user state";
    t2__ckpt_contents c = {.net = a, .opt = oa, .user_state = user, .user_state_len = sizeof user};
    for (int comp = T2__CKPT_COMPRESS_NONE; comp <= T2__CKPT_COMPRESS_ZSTD; comp++) {
        char path[4096];
        CHECK_OK(t2__ckpt_path(path, sizeof path, dir, "real", (t2__ckpt_compression)comp));
        CHECK_OK(t2__ckpt_write(path, &c, (t2__ckpt_compression)comp, NULL));
        for (int lazy = 0; lazy <= 1; lazy++) {
            t2__ckpt *ck = NULL;
            t2_net_free(b);
            b = NULL;
            CHECK_OK(small_net(&b, 9));
            memset(t2_optim_state(ob, NULL), 0, ns * sizeof(float));
            CHECK_OK(lazy ? t2__ckpt_open_for_restore(&ck, path) : t2__ckpt_open_info(&ck, path));
            const void *u;
            size_t ul;
            CHECK_RC(t2__ckpt_user_state(ck, &u, &ul), T2_ESTATE);
            CHECK_OK(t2__ckpt_restore(ck, b, ob, NULL));
            CHECK(same(t2_net_params(b, NULL), pa, np) && same(t2_net_buffers(b, NULL), ba, nb));
            CHECK(same(t2_optim_state(ob, NULL), sa, ns));
            CHECK_OK(t2__ckpt_user_state(ck, &u, &ul));
            CHECK(ul == sizeof user && !memcmp(u, user, ul));
            const float *p;
            size_t n;
            CHECK_OK(t2__ckpt_params(ck, &p, &n));
            CHECK(n == np && same(p, pa, np));
            t2__ckpt_free(ck);
            /* Warm start: the optimizer state streams past unkept; asking for it later says so. */
            CHECK_OK(lazy ? t2__ckpt_open_for_restore(&ck, path) : t2__ckpt_open_info(&ck, path));
            CHECK_OK(t2__ckpt_restore(ck, b, NULL, NULL));
            CHECK_MSG(t2__ckpt_restore(ck, b, ob, NULL), T2_ESTATE, "entry optimizer.bin is not in memory");
            t2__ckpt_free(ck);
        }
        /* Streamed: exactly params.bin and then buffers.bin, in pieces, with the metadata alongside. */
        sink_buf s = {malloc((np + nb) * 4), 0, (np + nb) * 4, 0, 0};
        t2__ckpt *ck = NULL;
        CHECK_OK(t2__ckpt_stream_params(&ck, path, to_buf, &s));
        CHECK(ck && s.len == (np + nb) * 4 && same((const float *)(void *)s.p, pa, np) &&
              same((const float *)(void *)s.p + np, ba, nb));
        t2_checkpoint_info info;
        CHECK_OK(t2__ckpt_get_info(ck, &info));
        CHECK(info.num_params == np && info.has_user_state);
        t2__ckpt_free(ck);
        s.len = 0;
        s.fail_at = 1;
        s.calls = 0;
        CHECK_MSG(t2__ckpt_stream_params(&ck, path, to_buf, &s), T2_EIO, "sink: disk full");
        CHECK(ck == NULL);
        free(s.p);
    }
    /* A corrupt byte in optimizer.bin, which export does not keep, still fails the stream. */
    char path[4096], bad[4096];
    CHECK_OK(t2__ckpt_path(path, sizeof path, dir, "real", T2__CKPT_COMPRESS_NONE));
    snprintf(bad, sizeof bad, "%s/bad.tar", dir);
    size_t len = 0;
    unsigned char *f = read_all(path, &len);
    tar_ent e[8];
    size_t off[8];
    CHECK(f && tar_parse(f, len, e, off, 8) == 5 && !strcmp(e[3].name, "optimizer.bin"));
    if (f) f[off[3] + 5] ^= 1;
    CHECK(f && write_all(bad, f, len) == 0);
    free(f);
    size_t nbuf;
    t2_net_buffers(a, &nbuf);
    sink_buf s = {malloc((np + nbuf) * 4), 0, (np + nbuf) * 4, 0, 0};
    t2__ckpt *ck = NULL;
    CHECK_MSG(t2__ckpt_stream_params(&ck, bad, to_buf, &s), T2_EFORMAT, "entry optimizer.bin fails its CRC-32C check");
    free(s.p);
    t2_optim_free(oa);
    t2_optim_free(ob);
    t2_net_free(a);
    t2_net_free(b);
}

static void writer_limits(void)
{
    t2_net *net = NULL;
    CHECK_OK(small_net(&net, 1));
    size_t np;
    t2_net_params(net, &np);
    size_t cap = (64u << 20) + 4 * np * sizeof(float);
    void *big = calloc(1, cap + 1); /* untouched zero pages: the writer must refuse before reading */
    CHECK(big != NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s/user.tar", dir);
    t2__ckpt_contents c = {.net = net, .user_state = big, .user_state_len = cap + 1};
    CHECK_MSG(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL), T2_EINVAL, "the user state (save_state) is");
    CHECK(count_files(dir, "user.tar") == 0);
    free(big);
    t2_net_free(net);

    /* An all-zero model of 70 MB: zstd shrinks it ~30000:1, past what a reader takes; gzip
     * cannot pass deflate's 1032:1, so that one is written and reads back. */
    int in[1] = {4200};
    t2_rng r;
    t2_rng_seed(&r, 1);
    CHECK_OK(t2_net_create(&net, 1, in));
    CHECK_OK(t2_net_dense(net, 4200));
    CHECK_OK(t2_net_init(net, &r));
    float *p = t2_net_params(net, &np);
    memset(p, 0, np * sizeof *p);
    c = (t2__ckpt_contents){.net = net};
    CHECK_OK(t2__ckpt_path(path, sizeof path, dir, "zeros", T2__CKPT_COMPRESS_ZSTD));
    CHECK_MSG(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_ZSTD, NULL), T2_EINVAL, "compression: none");
    CHECK(count_files(dir, "zeros") == 0);
    CHECK_OK(t2__ckpt_path(path, sizeof path, dir, "zeros", T2__CKPT_COMPRESS_GZIP));
    CHECK_OK(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_GZIP, NULL));
    p[np - 1] = 1.0f;
    t2__ckpt *ck = NULL;
    CHECK_OK(t2__ckpt_open_for_restore(&ck, path));
    CHECK_OK(t2__ckpt_restore(ck, net, NULL, NULL));
    CHECK(p[np - 1] == 0.0f);
    t2__ckpt_free(ck);
    unlink(path);
    t2_net_free(net);
}

static void modes(void)
{
    t2_net *net = NULL;
    CHECK_OK(small_net(&net, 1));
    t2__ckpt_contents c = {.net = net};
    const mode_t masks[3] = {022, 077, 0277}, want[3] = {0600, 0600, 0400};
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/mode%d.tar", dir, i);
        mode_t old = umask(masks[i]);
        CHECK_OK(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL));
        umask(old);
        struct stat st;
        CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == want[i]);
        if ((st.st_mode & 0777) != want[i])
            fprintf(stderr, "umask %03o: mode %03o, wanted %03o\n", (unsigned)masks[i], (unsigned)(st.st_mode & 0777),
                    (unsigned)want[i]);
    }
    t2_net_free(net);
}

int main(void)
{
    dir = make_dir();
    if (!dir) {
        perror("mkdtemp");
        return 1;
    }
    budget();
    model_first();
    real_ones();
    writer_limits();
    modes();
    rm_dir(dir);
    return check_failures ? 1 : 0;
}
