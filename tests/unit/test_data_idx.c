/* test_data_idx.c — the IDX reader (raw and gzip), its rejection of bad files, the memory-mapped
 * cache, the tensor dataset and the Fashion-MNIST locator, on small files made here. */
#include "test_data_util.h"
#include "check.h"

/* The call fails with `code` and its message names `file` and contains `what`. */
#define CHECK_ERR(expr, code, file, what)                                                       \
    do {                                                                                        \
        CHECK_RC(expr, code);                                                                   \
        if (!strstr(t2_errmsg(), file) || !strstr(t2_errmsg(), what)) {                         \
            fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\" or \"%s\"\n", __FILE__, __LINE__, \
                    t2_errmsg(), file, what);                                                   \
            check_failures++;                                                                   \
        }                                                                                       \
    } while (0)

static void check_pair_content(const t2_dataset *ds, uint32_t n, int h, int w, int classes)
{
    int ndim, shape[3];
    CHECK(t2_dataset_len(ds) == n);
    CHECK_OK(t2_dataset_sample_shape(ds, &ndim, shape));
    CHECK(ndim == 3 && shape[0] == 1 && shape[1] == h && shape[2] == w);
    CHECK(t2_dataset_num_classes(ds) == classes);
    float *x = malloc(sizeof(float) * (size_t)h * w);
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        int32_t lab = -5;
        CHECK_OK(t2_dataset_get(ds, i, x, &lab));
        if (lab != (int32_t)(i % (uint32_t)classes)) bad++;
        for (int j = 0; j < h * w; j++)
            if (x[j] != (float)((i * 7 + (uint32_t)j * 3) % 256) / 255.0f) bad++;
    }
    CHECK(bad == 0);
    /* The whole set as one tensor (threaded) agrees with per-sample reads. */
    t2_tensor all;
    int32_t *labs = NULL;
    CHECK_OK(t2_dataset_to_tensor(ds, &all, &labs));
    CHECK(all.ndim == 4 && all.shape[0] == (int)n && all.shape[1] == 1 && all.shape[2] == h && all.shape[3] == w);
    for (uint32_t i = 0; labs && i < n; i++) {
        int32_t lab;
        CHECK_OK(t2_dataset_get(ds, i, x, &lab));
        if (lab != labs[i] || memcmp(x, all.data + (size_t)i * h * w, sizeof(float) * (size_t)h * w) != 0) bad++;
    }
    CHECK(bad == 0);
    t2_tensor_free(&all);
    free(labs);
    CHECK_RC(t2_dataset_get(ds, n, x, NULL), T2_EINVAL);
    CHECK_RC(t2_dataset_get(ds, -1, x, NULL), T2_EINVAL);
    free(x);
}

static void test_good_files(void)
{
    t2_dataset *ds = NULL;
    make_pair(tpath("i.raw"), tpath("l.raw"), 10, 2, 3, 3, 0);
    CHECK_OK(t2_dataset_idx_open(&ds, tpath("i.raw"), tpath("l.raw")));
    if (ds) check_pair_content(ds, 10, 2, 3, 3);
    t2_dataset_free(ds);
    ds = NULL;
    make_pair(tpath("i.gz"), tpath("l.gz"), 3000, 20, 20, 10, 1);
    CHECK_OK(t2_dataset_idx_open(&ds, tpath("i.gz"), tpath("l.gz")));
    if (ds) check_pair_content(ds, 3000, 20, 20, 10);
    t2_dataset_free(ds);
    ds = NULL;
    /* Mixed: gzip images with raw labels. */
    make_pair(tpath("m.gz"), tpath("m.raw"), 300, 5, 4, 10, 0);
    make_pair(tpath("m.gz"), tpath("unused"), 300, 5, 4, 10, 1);
    make_pair(tpath("unused2"), tpath("m.raw"), 300, 5, 4, 10, 0);
    CHECK_OK(t2_dataset_idx_open(&ds, tpath("m.gz"), tpath("m.raw")));
    if (ds) check_pair_content(ds, 300, 5, 4, 10);
    t2_dataset_free(ds);
    t2_dataset_free(NULL);
}

/* Writes an images file with the given header words and payload length (raw or gz). */
static const char *bad_images(const char *name, uint32_t magic, uint32_t n, uint32_t h, uint32_t w, size_t payload,
                              int gz)
{
    size_t len = 16 + payload;
    uint8_t *b = calloc(1, len);
    put_be32(b, magic);
    put_be32(b + 4, n);
    put_be32(b + 8, h);
    put_be32(b + 12, w);
    const char *p = tpath(name);
    (gz ? write_gz : write_raw)(p, b, len);
    free(b);
    return p;
}

static void test_bad_files(void)
{
    t2_dataset *ds = (t2_dataset *)1;
    make_pair(tpath("ok_i"), tpath("ok_l"), 10, 2, 3, 3, 0);
    char L[512];
    snprintf(L, sizeof L, "%s", tpath("ok_l"));
    for (int gz = 0; gz <= 1; gz++) {
        const char *p = bad_images(gz ? "magic.gz" : "magic", 0x00000000, 10, 2, 3, 60, gz);
        CHECK_ERR(t2_dataset_idx_open(&ds, p, L), T2_EFORMAT, p, "bad magic 0x00000000 (expected 0x00000803 for idx3 ubyte)");
        CHECK(ds == NULL);
        p = bad_images(gz ? "float.gz" : "float", 0x00000d03, 10, 2, 3, 60, gz); /* float IDX: unsupported */
        CHECK_ERR(t2_dataset_idx_open(&ds, p, L), T2_EFORMAT, p, "bad magic 0x00000d03");
        p = bad_images(gz ? "trunc.gz" : "trunc", 0x803, 10, 2, 3, 59, gz);
        CHECK_ERR(t2_dataset_idx_open(&ds, p, L), T2_EFORMAT, p, "truncated: header promises 60 payload bytes");
        p = bad_images(gz ? "long.gz" : "long", 0x803, 10, 2, 3, 61, gz);
        CHECK_ERR(t2_dataset_idx_open(&ds, p, L), T2_EFORMAT, p, "unexpected bytes after the 60-byte payload");
        p = bad_images(gz ? "wide.gz" : "wide", 0x803, 10, 2, 100000, 60, gz);
        CHECK_ERR(t2_dataset_idx_open(&ds, p, L), T2_EFORMAT, p, "absurd dimension 2 = 100000");
        p = bad_images(gz ? "zero.gz" : "zero", 0x803, 10, 0, 3, 60, gz);
        CHECK_ERR(t2_dataset_idx_open(&ds, p, L), T2_EFORMAT, p, "absurd dimension 1 = 0");
        p = bad_images(gz ? "count.gz" : "count", 0x803, 0xffffffffu, 2, 3, 60, gz);
        CHECK_ERR(t2_dataset_idx_open(&ds, p, L), T2_EFORMAT, p, "absurd dimension 0 = 4294967295");
        /* Huge but individually legal dimensions: refused from the bytes present, nothing allocated. */
        p = bad_images(gz ? "huge.gz" : "huge", 0x803, 0x7fffffff, 65536, 65536, 60, gz);
        CHECK_ERR(t2_dataset_idx_open(&ds, p, L), T2_EFORMAT, p, "truncated");
        p = bad_images(gz ? "mismatch.gz" : "mismatch", 0x803, 9, 2, 3, 54, gz);
        CHECK_ERR(t2_dataset_idx_open(&ds, p, L), T2_EFORMAT, p, "has 9 images but");
        CHECK(strstr(t2_errmsg(), L) && strstr(t2_errmsg(), "has 10 labels"));
    }
    /* Labels file given where images are expected, and vice versa. */
    CHECK_ERR(t2_dataset_idx_open(&ds, L, L), T2_EFORMAT, L, "bad magic 0x00000801 (expected 0x00000803 for idx3 ubyte)");
    CHECK_ERR(t2_dataset_idx_open(&ds, tpath("ok_i"), tpath("ok_i")), T2_EFORMAT, tpath("ok_i"),
              "bad magic 0x00000803 (expected 0x00000801 for idx1 ubyte)");
    /* Short headers. */
    write_raw(tpath("empty"), "", 0);
    CHECK_ERR(t2_dataset_idx_open(&ds, tpath("empty"), L), T2_EFORMAT, tpath("empty"), "truncated");
    write_raw(tpath("short"), "\0\0\x08\x03\0\0\0\x0a", 8);
    CHECK_ERR(t2_dataset_idx_open(&ds, tpath("short"), L), T2_EFORMAT, tpath("short"), "truncated header");
    /* Missing files. */
    CHECK_ERR(t2_dataset_idx_open(&ds, tpath("nope"), L), T2_ENOTFOUND, tpath("nope"), "No such file");
    CHECK_ERR(t2_dataset_idx_open(&ds, tpath("ok_i"), tpath("nope")), T2_ENOTFOUND, tpath("nope"), "cannot open");
    CHECK_ERR(t2_dataset_idx_open(&ds, tdir, L), T2_EIO, tdir, "not a regular file");
    CHECK_RC(t2_dataset_idx_open(&ds, NULL, L), T2_EINVAL);
    CHECK(ds == NULL);
}

/* A real deflate stream with damage: flipped bytes, a cut, a broken header. */
static void test_corrupt_gzip(void)
{
    t2_dataset *ds = NULL;
    const char *img = tpath("big.gz"), *lab = tpath("big_l.gz");
    make_pair(img, lab, 2000, 8, 8, 10, 1);
    FILE *f = fopen(img, "rb");
    uint8_t *b = malloc(1 << 20);
    size_t len = fread(b, 1, 1 << 20, f);
    fclose(f);
    CHECK(len > 200);
    uint8_t *c = malloc(len);

    memcpy(c, b, len);
    for (size_t i = len / 3; i < len / 3 + 16; i++) c[i] ^= 0x5a;
    write_raw(tpath("flip.gz"), c, len);
    CHECK_ERR(t2_dataset_idx_open(&ds, tpath("flip.gz"), lab), T2_EFORMAT, tpath("flip.gz"), "corrupt gzip stream");

    write_raw(tpath("cut.gz"), b, len / 2);
    CHECK_RC(t2_dataset_idx_open(&ds, tpath("cut.gz"), lab), T2_EFORMAT);
    CHECK(strstr(t2_errmsg(), tpath("cut.gz")) && (strstr(t2_errmsg(), "corrupt gzip") || strstr(t2_errmsg(), "truncated")));

    memcpy(c, b, len);
    c[2] = 0x07; /* compression method other than deflate */
    write_raw(tpath("method.gz"), c, len);
    CHECK_RC(t2_dataset_idx_open(&ds, tpath("method.gz"), lab), T2_EFORMAT);
    CHECK(strstr(t2_errmsg(), tpath("method.gz")) != NULL);

    memcpy(c, b, len);
    c[len - 6] ^= 0xff; /* CRC-32 in the trailer: the payload is intact, the check is not */
    write_raw(tpath("crc.gz"), c, len);
    CHECK_ERR(t2_dataset_idx_open(&ds, tpath("crc.gz"), lab), T2_EFORMAT, tpath("crc.gz"), "corrupt gzip stream");

    memcpy(c, b, len);
    c[len - 4] ^= 0x01; /* the trailer's length, one too many or too few */
    write_raw(tpath("isize.gz"), c, len);
    CHECK_ERR(t2_dataset_idx_open(&ds, tpath("isize.gz"), lab), T2_EFORMAT, tpath("isize.gz"), "corrupt gzip stream");

    memcpy(c, b, len);
    c[len - 1] = 0x7f; /* the length says ~2 GB: refused before anything that size is allocated */
    write_raw(tpath("claim.gz"), c, len);
    CHECK_ERR(t2_dataset_idx_open(&ds, tpath("claim.gz"), lab), T2_EFORMAT, tpath("claim.gz"), "trailer claims");

    uint8_t *d = malloc(len + 3);
    memcpy(d, b, len);
    memcpy(d + len, "abc", 3);
    write_raw(tpath("tail.gz"), d, len + 3);
    /* The trailer is read from the end, so the extra bytes make a bogus trailer. */
    CHECK_ERR(t2_dataset_idx_open(&ds, tpath("tail.gz"), lab), T2_EFORMAT, tpath("tail.gz"), "gzip stream");
    free(d);

    write_raw(tpath("magic_only.gz"), "\x1f\x8b", 2);
    CHECK_ERR(t2_dataset_idx_open(&ds, tpath("magic_only.gz"), lab), T2_EFORMAT, tpath("magic_only.gz"), "");
    free(b);
    free(c);
}

static void test_cache(void)
{
    t2_dataset *ds = NULL, *cd = NULL;
    make_pair(tpath("c_i"), tpath("c_l"), 50, 4, 6, 7, 0);
    CHECK_OK(t2_dataset_idx_open(&ds, tpath("c_i"), tpath("c_l")));
    CHECK_OK(t2_dataset_cache_write(ds, tpath("c.cache")));
    CHECK_OK(t2_dataset_cache_open(&cd, tpath("c.cache")));
    if (cd) check_pair_content(cd, 50, 4, 6, 7);
    /* Overwriting an open cache replaces the file; the open mapping keeps the old content. */
    CHECK_OK(t2_dataset_cache_write(ds, tpath("c.cache")));
    if (cd) check_pair_content(cd, 50, 4, 6, 7);
    t2_dataset_free(cd);
    cd = NULL;
    t2_dataset_free(ds);
    ds = NULL;
    /* No temporary file is left behind. */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q tmp", tdir);
    CHECK(system(cmd) != 0);

    /* A float dataset without labels round-trips bit for bit. */
    int shape[2] = {5, 3};
    t2_tensor x;
    CHECK_OK(t2_tensor_alloc(&x, 2, shape));
    for (int i = 0; i < 15; i++) x.data[i] = (float)i * 0.25f - 1.0f;
    CHECK_OK(t2_dataset_from_tensor(&ds, &x, NULL, 1));
    CHECK_OK(t2_dataset_cache_write(ds, tpath("f.cache")));
    CHECK_OK(t2_dataset_cache_open(&cd, tpath("f.cache")));
    if (cd) {
        int ndim, sh[3];
        float v[3];
        int32_t lab = 0;
        CHECK_OK(t2_dataset_sample_shape(cd, &ndim, sh));
        CHECK(ndim == 1 && sh[0] == 3 && t2_dataset_len(cd) == 5 && t2_dataset_num_classes(cd) == 0);
        CHECK_OK(t2_dataset_get(cd, 4, v, &lab));
        CHECK(v[0] == x.data[12] && v[2] == x.data[14] && lab == -1);
    }
    t2_dataset_free(cd);
    t2_dataset_free(ds);
    t2_tensor_free(&x);

    /* Damaged caches. */
    FILE *f = fopen(tpath("c.cache"), "rb");
    uint8_t *b = malloc(1 << 16);
    size_t len = fread(b, 1, 1 << 16, f);
    fclose(f);
    write_raw(tpath("short.cache"), b, len - 1);
    CHECK_ERR(t2_dataset_cache_open(&cd, tpath("short.cache")), T2_EFORMAT, tpath("short.cache"), "truncated");
    write_raw(tpath("tiny.cache"), b, 100);
    CHECK_ERR(t2_dataset_cache_open(&cd, tpath("tiny.cache")), T2_EFORMAT, tpath("tiny.cache"), "not a t2exp dataset cache");
    uint8_t save = b[0];
    b[0] = 'X';
    write_raw(tpath("magic.cache"), b, len);
    CHECK_ERR(t2_dataset_cache_open(&cd, tpath("magic.cache")), T2_EFORMAT, tpath("magic.cache"), "bad magic");
    b[0] = save;
    b[28 + 4] ^= 0x01; /* shape[1] 4 -> 5: sizes no longer match */
    write_raw(tpath("shape.cache"), b, len);
    CHECK_ERR(t2_dataset_cache_open(&cd, tpath("shape.cache")), T2_EFORMAT, tpath("shape.cache"), "do not match");
    b[28 + 4] ^= 0x01;
    b[len - 4] = 99; /* last label out of range */
    write_raw(tpath("label.cache"), b, len);
    CHECK_ERR(t2_dataset_cache_open(&cd, tpath("label.cache")), T2_EFORMAT, tpath("label.cache"), "label 49 is 99");
    CHECK_ERR(t2_dataset_cache_open(&cd, tpath("none.cache")), T2_ENOTFOUND, tpath("none.cache"), "cannot open");
    CHECK(cd == NULL);
    CHECK_ERR(t2_dataset_cache_write(ds = NULL, "/nonexistent-dir/x.cache"), T2_EINVAL, "", "NULL");
    free(b);
}

static void test_cache_write_fail(void)
{
    t2_dataset *ds = NULL;
    make_pair(tpath("w_i"), tpath("w_l"), 10, 2, 3, 3, 0);
    CHECK_OK(t2_dataset_idx_open(&ds, tpath("w_i"), tpath("w_l")));
    CHECK_ERR(t2_dataset_cache_write(ds, "/nonexistent-dir/x.cache"), T2_EIO, "/nonexistent-dir/x.cache",
              "cannot create a temporary file");
    t2_dataset_free(ds);
}

static void test_tensor_dataset(void)
{
    int shape[4] = {4, 2, 2, 2};
    t2_tensor x;
    t2_dataset *ds = NULL;
    CHECK_OK(t2_tensor_alloc(&x, 4, shape));
    for (int i = 0; i < 32; i++) x.data[i] = (float)i;
    int32_t labels[4] = {3, 0, 1, 3}, bad[4] = {0, -1, 0, 0};
    CHECK_OK(t2_dataset_from_tensor(&ds, &x, labels, 0)); /* borrowed */
    float v[8];
    int32_t lab;
    int ndim, sh[3];
    CHECK_OK(t2_dataset_sample_shape(ds, &ndim, sh));
    CHECK(ndim == 3 && sh[0] == 2 && sh[1] == 2 && sh[2] == 2 && t2_dataset_num_classes(ds) == 4);
    x.data[8] = 100.0f; /* borrowed: the change shows */
    CHECK_OK(t2_dataset_get(ds, 1, v, &lab));
    CHECK(v[0] == 100.0f && v[7] == 15.0f && lab == 0);
    t2_dataset_free(ds);
    CHECK_OK(t2_dataset_from_tensor(&ds, &x, labels, 1)); /* copied */
    x.data[8] = 8.0f;
    labels[1] = 2;
    CHECK_OK(t2_dataset_get(ds, 1, v, &lab));
    CHECK(v[0] == 100.0f && lab == 0);
    t2_dataset_free(ds);
    ds = NULL;
    CHECK_RC(t2_dataset_from_tensor(&ds, &x, bad, 1), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "label 1 is -1") != NULL);
    t2_tensor x3 = t2_tensor_view(x.data, 3, shape);
    CHECK_RC(t2_dataset_from_tensor(&ds, &x3, labels, 1), T2_EINVAL);
    CHECK_RC(t2_dataset_from_tensor(&ds, NULL, labels, 1), T2_EINVAL);
    CHECK(ds == NULL);
    t2_tensor_free(&x);
}

static void test_fashion_locator(void)
{
    t2_dataset *ds = NULL;
    CHECK_RC(t2_dataset_fashion_mnist(&ds, "train", tpath("no-such-dir")), T2_ENOTFOUND);
    CHECK(strstr(t2_errmsg(), "apt-get install dataset-fashion-mnist") &&
          strstr(t2_errmsg(), "no-such-dir/train-images-idx3-ubyte.gz"));
    CHECK_RC(t2_dataset_fashion_mnist(&ds, "validation", NULL), T2_EINVAL);
    /* A directory with raw (uncompressed) files of the standard names. */
    make_pair(tpath("t10k-images-idx3-ubyte"), tpath("t10k-labels-idx1-ubyte"), 20, 28, 28, 10, 0);
    CHECK_OK(t2_dataset_fashion_mnist(&ds, "test", tdir));
    CHECK(t2_dataset_len(ds) == 20);
    t2_dataset_free(ds);
    setenv("FASHION_MNIST_DIR", "/somewhere/else", 1);
    CHECK(strcmp(t2_fashion_mnist_dir(), "/somewhere/else") == 0);
    setenv("FASHION_MNIST_DIR", "", 1);
    CHECK(strcmp(t2_fashion_mnist_dir(), "/usr/share/datasets/fashion-mnist") == 0);
    unsetenv("FASHION_MNIST_DIR");
    CHECK(strcmp(t2_fashion_mnist_dir(), "/usr/share/datasets/fashion-mnist") == 0);
}

int main(void)
{
    tdir_make();
    test_good_files();
    test_bad_files();
    test_corrupt_gzip();
    test_cache();
    test_cache_write_fail();
    test_tensor_dataset();
    test_fashion_locator();
    tdir_cleanup();
    return check_report("test_data_idx");
}
