/* test_checkpoint_bad.c — every kind of bad archive is rejected at open with the exact error:
 * truncations, corrupt bytes (CRC mismatch naming the tensor), path tricks, links and devices,
 * oversize, missing, duplicate and unknown entries, a later format version, broken metadata JSON
 * and inconsistent tensor tables, and files that are not tar at all. Archives are crafted from a
 * real checkpoint with the ustar writer in test_checkpoint_util.h. */
#include "test_checkpoint_util.h"
#include "check.h"
#include "configs/value.h"

static char *dir;
static tar_ent ents[8];   /* the real checkpoint's entries: meta, params, buffers, optimizer, user */
static size_t offs[8];
static unsigned char *real;
static size_t real_len;

#define EXPECT(data, len, want, text) expect_at(__LINE__, (data), (len), (want), (text))

static void expect_at(int line, const unsigned char *data, size_t len, int want, const char *text)
{
    t2__ckpt *ck = NULL;
    int rc = t2__ckpt_open_memory(&ck, "crafted.tar", data, len);
    if (getenv("T2_TEST_VERBOSE")) printf("line %d: %s\n", line, rc ? t2_errmsg() : "ok");
    if (rc != want || (text && !strstr(t2_errmsg(), text))) {
        fprintf(stderr, "%s:%d: got %d (%s), wanted %d with \"%s\"\n", __FILE__, line, rc, t2_errmsg(), want,
                text ? text : "");
        check_failures++;
    }
    if (want == T2_OK && !ck) check_failures++;
    if (want != T2_OK && ck) check_failures++;
    t2__ckpt_free(ck);
}

/* The archive of the real entries with entry i replaced by `with` (or dropped if with is NULL),
 * optionally followed by an extra entry. */
static unsigned char *variant(int i, const tar_ent *with, const tar_ent *extra, size_t *len)
{
    tar_ent e[8];
    int n = 0;
    for (int k = 0; k < 5; k++) {
        if (k == i) {
            if (with) e[n++] = *with;
        } else {
            e[n++] = ents[k];
        }
    }
    if (extra) e[n++] = *extra;
    return tar_build(e, n, len);
}

/* The archive with metadata.json edited: edit(root) changes the parsed document. */
static unsigned char *meta_variant(void (*edit)(t2__val *root), size_t *len)
{
    t2__val *root = NULL;
    char *text = NULL;
    size_t tlen = 0;
    if (t2__val_from_json((const char *)ents[0].data, ents[0].len, &root, NULL)) return NULL;
    edit(root);
    if (t2__val_to_json(root, &text, &tlen)) {
        t2__val_free(root);
        return NULL;
    }
    t2__val_free(root);
    t2__ckpt_meta_seal(text, tlen); /* a document that checks out, so the edit is what is judged */
    tar_ent m = {"metadata.json", '0', text, tlen, -1, NULL};
    unsigned char *out = variant(0, &m, NULL, len);
    free(text);
    return out;
}

#define SET_IN(root, path, key, v) t2__val_map_set(t2__val_lookup((root), (path)), (key), (v))

static void ed_version(t2__val *r) { t2__val_map_set(r, "format_version", t2__val_int(3)); }
static void ed_no_tensors(t2__val *r) { t2__val_map_set(r, "tensors", t2__val_null()); }
static void ed_overlap(t2__val *r) { SET_IN(r, "tensors.1", "offset", t2__val_int(11)); }
static void ed_gap(t2__val *r) { SET_IN(r, "tensors.1", "offset", t2__val_int(13)); }
static void ed_shape(t2__val *r)
{
    t2__val *s = t2__val_list();
    t2__val_list_append(s, t2__val_int(3));
    t2__val_list_append(s, t2__val_int(5));
    SET_IN(r, "tensors.0", "shape", s);
}
static void ed_dup_name(t2__val *r) { SET_IN(r, "tensors.1", "name", t2__val_string("0.dense.weight")); }
static t2__val *entry_map(t2__val *r, const char *e) { return t2__val_map_get(t2__val_map_get(r, "entries"), e); }
static void ed_params_size(t2__val *r) { t2__val_map_set(entry_map(r, "params.bin"), "size", t2__val_int(120)); }
static void ed_opt_floats(t2__val *r) { SET_IN(r, "optimizer", "state_floats", t2__val_int(7)); }
static void ed_opt_crc(t2__val *r) { t2__val_map_set(entry_map(r, "optimizer.bin"), "crc32c", t2__val_int(12345)); }
static void ed_tensor_crc(t2__val *r) { SET_IN(r, "tensors.5", "crc32c", t2__val_int(1)); }
static void ed_bad_rng(t2__val *r) { SET_IN(r, "rngs", "trial", t2__val_string("x")); }
static void ed_huge_tensor(t2__val *r) { SET_IN(r, "tensors.0", "size", t2__val_int(INT64_MAX)); }
static void ed_opt_missing(t2__val *r) { t2__val_map_set(r, "optimizer", t2__val_null()); }
static void ed_unknown_entry(t2__val *r) { SET_IN(r, "entries", "evil.bin", t2__val_map()); }

static void make_real(void)
{
    t2_net *net = NULL;
    t2_optim *opt = NULL;
    CHECK_OK(small_net(&net, 5));
    size_t n;
    t2_net_params(net, &n);
    t2_sgd_params sp = t2_sgd_default();
    sp.momentum = 0.9;
    CHECK_OK(t2_sgd_create(&opt, &sp, n));
    float *st = t2_optim_state(opt, &n);
    for (size_t i = 0; i < n; i++) st[i] = (float)i * 0.5f;
    t2_rng r;
    t2_rng_seed(&r, 1);
    t2__ckpt_rng rngs[1] = {{"trial", r}};
    const char user[] = "user state bytes";
    t2__ckpt_contents c = {.net = net, .opt = opt, .rngs = rngs, .n_rngs = 1, .user_state = user,
                           .user_state_len = sizeof user, .trial_id = 1, .hparams_json = "{\"a\":1}"};
    char path[4096];
    snprintf(path, sizeof path, "%s/real.tar", dir);
    CHECK_OK(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL));
    real = read_all(path, &real_len);
    CHECK(real != NULL);
    int ne = real ? tar_parse(real, real_len, ents, offs, 8) : 0;
    CHECK(ne == 5);
    const char *names[5] = {"metadata.json", "params.bin", "buffers.bin", "optimizer.bin", "user_state.bin"};
    for (int k = 0; k < ne && k < 5; k++) CHECK(!strcmp(ents[k].name, names[k]));
    CHECK(ents[1].len == 29 * 4 && ents[2].len == 6 * 4 && ents[3].len == 29 * 4);
    t2_optim_free(opt);
    t2_net_free(net);
}

static void truncations(void)
{
    EXPECT(real, real_len, T2_OK, NULL);
    size_t len;
    unsigned char *same = tar_build(ents, 5, &len); /* the test's writer agrees with the real one */
    EXPECT(same, len, T2_OK, NULL);
    free(same);
    EXPECT(real, 0, T2_EFORMAT, "crafted.tar: the file is empty");
    EXPECT(real, 100, T2_EFORMAT, "crafted.tar: not a tar archive, or truncated");
    EXPECT(real, 511, T2_EFORMAT, "crafted.tar: not a tar archive, or truncated");
    size_t cuts[] = {512 + 10, offs[1] - 200, offs[1] + 50, offs[2] + 3, offs[3] + 100, offs[4] + 1, offs[4] - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) EXPECT(real, cuts[i], T2_EFORMAT, "truncated");
    /* Cut after an entry's data: the next entries are missing. */
    EXPECT(real, offs[3] - 512, T2_EFORMAT, "missing entry optimizer.bin");
}

static void corruptions(void)
{
    unsigned char *c = malloc(real_len);
    memcpy(c, real, real_len);
    c[offs[1] + 4 * 22 + 1] ^= 0x40; /* inside 3.dense.weight (params 21..27) */
    EXPECT(c, real_len, T2_EFORMAT, "entry params.bin: tensor 3.dense.weight fails its CRC-32C check");
    memcpy(c, real, real_len);
    c[offs[2] + 4 * 4] ^= 1; /* running_var */
    EXPECT(c, real_len, T2_EFORMAT, "entry buffers.bin: tensor 1.batchnorm.running_var fails its CRC-32C check");
    memcpy(c, real, real_len);
    c[offs[3] + 7] ^= 0x80;
    EXPECT(c, real_len, T2_EFORMAT, "entry optimizer.bin fails its CRC-32C check");
    memcpy(c, real, real_len);
    c[offs[4]] ^= 0x20;
    EXPECT(c, real_len, T2_EFORMAT, "entry user_state.bin fails its CRC-32C check");
    memcpy(c, real, real_len);
    c[offs[1] - 512 + 130] ^= 0x01; /* a tar header's size field: the header checksum catches it */
    EXPECT(c, real_len, T2_EFORMAT, "after entry metadata.json");
    free(c);

    /* Not a tar at all. */
    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)(i * 131 + (i >> 3) * 7);
    EXPECT(junk, sizeof junk, T2_EFORMAT, "checkpoint crafted.tar: ");
    EXPECT((const unsigned char *)"hello, world\n", 13, T2_EFORMAT, "checkpoint crafted.tar: ");
    unsigned char gz[64] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3, 4};
    EXPECT(gz, sizeof gz, T2_EFORMAT, "checkpoint crafted.tar: ");
}

static void entry_kinds(void)
{
    size_t len;
    unsigned char *a;
    tar_ent dotdot = {"../x", '0', "hi", 2, -1, NULL};
    a = variant(-1, NULL, &dotdot, &len);
    EXPECT(a, len, T2_EFORMAT, "entry \"../x\": paths are not allowed");
    free(a);
    tar_ent abs = {"/etc/params.bin", '0', "hi", 2, -1, NULL};
    a = variant(-1, NULL, &abs, &len);
    EXPECT(a, len, T2_EFORMAT, "entry \"/etc/params.bin\": paths are not allowed");
    free(a);
    tar_ent sub = {"sub/params.bin", '0', ents[1].data, ents[1].len, -1, NULL};
    a = variant(1, &sub, NULL, &len);
    EXPECT(a, len, T2_EFORMAT, "entry \"sub/params.bin\": paths are not allowed");
    free(a);
    tar_ent sym = {"params.bin", '2', NULL, 0, -1, "/etc/passwd"};
    a = variant(1, &sym, NULL, &len);
    EXPECT(a, len, T2_EFORMAT, "entry params.bin is a symbolic link, not a regular file");
    free(a);
    tar_ent hard = {"params.bin", '1', NULL, 0, -1, "metadata.json"};
    a = variant(1, &hard, NULL, &len);
    EXPECT(a, len, T2_EFORMAT, "entry params.bin is a hard link, not a regular file");
    free(a);
    tar_ent dev = {"buffers.bin", '3', NULL, 0, -1, NULL};
    a = variant(2, &dev, NULL, &len);
    EXPECT(a, len, T2_EFORMAT, "entry buffers.bin is a character device, not a regular file");
    free(a);
    tar_ent d = {"buffers.bin", '5', NULL, 0, -1, NULL};
    a = variant(2, &d, NULL, &len);
    EXPECT(a, len, T2_EFORMAT, "entry buffers.bin is a directory, not a regular file");
    free(a);

    /* Sizes: one more float than the metadata says; a metadata header past the cap. */
    unsigned char big[29 * 4 + 4] = {0};
    memcpy(big, ents[1].data, ents[1].len);
    tar_ent over = {"params.bin", '0', big, sizeof big, -1, NULL};
    a = variant(1, &over, NULL, &len);
    EXPECT(a, len, T2_EFORMAT, "entry params.bin is 120 bytes but metadata.json says 116");
    free(a);
    tar_ent huge = {"metadata.json", '0', ents[0].data, ents[0].len, 17 << 20, NULL};
    a = variant(0, &huge, NULL, &len);
    EXPECT(a, len, T2_EFORMAT, "entry metadata.json is 17825792 bytes but the limit is 16777216");
    free(a);

    a = variant(4, NULL, NULL, &len);
    EXPECT(a, len, T2_EFORMAT, "missing entry user_state.bin");
    free(a);
    a = variant(-1, NULL, &ents[1], &len);
    EXPECT(a, len, T2_EFORMAT, "duplicate entry params.bin");
    free(a);
    tar_ent unk = {"extra.txt", '0', "x", 1, -1, NULL};
    a = variant(-1, NULL, &unk, &len);
    EXPECT(a, len, T2_EFORMAT, "unknown entry \"extra.txt\"");
    free(a);
    tar_ent order[5] = {ents[1], ents[0], ents[2], ents[3], ents[4]};
    a = tar_build(order, 5, &len);
    EXPECT(a, len, T2_EFORMAT, "the first entry is params.bin, not metadata.json");
    free(a);
}

/* The optimizer as a list (several optimizers, raw buffers): parts of the real SGD state. */
static t2__val *opt_part(int64_t size, int64_t floats)
{
    t2__val *o = t2__val_map();
    t2__val_map_set(o, "kind", t2__val_string("sgd"));
    t2__val_map_set(o, "size", t2__val_int(size));
    t2__val_map_set(o, "state_floats", t2__val_int(floats));
    t2__val_map_set(o, "step_count", t2__val_int(37));
    return o;
}
static void set_opts(t2__val *r, t2__val *a, t2__val *b)
{
    t2__val *l = t2__val_list();
    if (a) t2__val_list_append(l, a);
    if (b) t2__val_list_append(l, b);
    t2__val_map_set(r, "optimizer", l);
}
static void ed_opt_list_ok(t2__val *r) { set_opts(r, opt_part(20, 20), opt_part(9, 9)); }
static void ed_opt_list_short(t2__val *r) { set_opts(r, opt_part(20, 20), NULL); }
static void ed_opt_list_empty(t2__val *r) { set_opts(r, NULL, NULL); }
static void ed_opt_list_item(t2__val *r) { set_opts(r, opt_part(20, 20), t2__val_int(5)); }
static void ed_opt_list_floats(t2__val *r) { set_opts(r, opt_part(20, 20), opt_part(9, 4)); }

static void metadata(void)
{
    struct {
        void (*edit)(t2__val *);
        int rc;
        const char *text;
    } cases[] = {
        {ed_version, T2_EUNSUPPORTED, "format version 3 is not supported"},
        {ed_no_tensors, T2_EFORMAT, "metadata.json: tensors is null, not a list"},
        {ed_overlap, T2_EFORMAT, "tensor 0.dense.bias at offset 11 overlaps the one before"},
        {ed_gap, T2_EFORMAT, "tensor 0.dense.bias at offset 13 leaves a gap"},
        {ed_shape, T2_EFORMAT, "tensor 0.dense.weight: shape has 15 elements but size is 12"},
        {ed_dup_name, T2_EFORMAT, "tensor 0.dense.weight appears twice"},
        {ed_params_size, T2_EFORMAT, "the tensors cover 29 of the 30 floats in params.bin"},
        {ed_opt_floats, T2_EFORMAT, "optimizer.state_floats = 7 does not suit sgd with 29 parameters"},
        {ed_opt_crc, T2_EFORMAT, "entry optimizer.bin fails its CRC-32C check (stored 00003039"},
        {ed_tensor_crc, T2_EFORMAT, "fails its CRC-32C check (stored 00000001"},
        {ed_bad_rng, T2_EFORMAT, "rngs.trial is not a list of 4 words"},
        {ed_huge_tensor, T2_EFORMAT, "tensors.0.size = 9223372036854775807 is outside"},
        {ed_opt_missing, T2_EFORMAT, "optimizer is null but entries lists optimizer.bin"},
        {ed_unknown_entry, T2_EFORMAT, "entries lists an unknown entry \"evil.bin\""},
        {ed_opt_list_ok, T2_OK, NULL},
        {ed_opt_list_short, T2_EFORMAT, "optimizer.size = 20 but params.bin holds 29 floats"},
        {ed_opt_list_empty, T2_EFORMAT, "optimizer lists 0 optimizers (1..16)"},
        {ed_opt_list_item, T2_EFORMAT, "optimizer.1 is an int, not a map"},
        {ed_opt_list_floats, T2_EFORMAT, "optimizer.1.state_floats = 4 does not suit sgd with 9 parameters"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t len = 0;
        unsigned char *a = meta_variant(cases[i].edit, &len);
        CHECK(a != NULL);
        if (a) expect_at((int)(1000 + i), a, len, cases[i].rc, cases[i].text);
        free(a);
    }
    const char *broken = "{\"format_version\": 1, ";
    tar_ent m = {"metadata.json", '0', broken, strlen(broken), -1, NULL};
    size_t len;
    unsigned char *a = variant(0, &m, NULL, &len);
    EXPECT(a, len, T2_EFORMAT, "crafted.tar: metadata.json: not valid JSON at byte");
    free(a);
    m.data = "[1]";
    m.len = 3;
    a = variant(0, &m, NULL, &len);
    EXPECT(a, len, T2_EFORMAT, "metadata.json: the document is a list, not a map");
    free(a);
}

/* metadata.json's own checksum: a changed digit is caught; a version 1 document (before the
 * checksum) is still read; a version 2 document without it is refused. */
static void seal(void)
{
    const char *meta = (const char *)ents[0].data;
    size_t n = ents[0].len;
    CHECK(n > 40 && !strncmp(meta, "{\"metadata_crc32c\":\"", 20));
    char *t = malloc(n + 1);
    memcpy(t, meta, n);
    t[n] = '\0';
    char *d = strstr(t, "\"trial_id\":1");
    CHECK(d != NULL);
    size_t len;
    if (d) {
        d[11] = '2'; /* trial 1 becomes trial 2: still a valid document */
        tar_ent m = {"metadata.json", '0', t, n, -1, NULL};
        unsigned char *a = variant(0, &m, NULL, &len);
        EXPECT(a, len, T2_EFORMAT, "crafted.tar: metadata.json: fails its CRC-32C check (stored ");
        free(a);
        d[11] = '1';
    }
    /* Without the checksum: "{" + the rest after the 30-byte {"metadata_crc32c":"XXXXXXXX", */
    for (int v = 1; v <= 2; v++) {
        char *u = malloc(n);
        u[0] = '{';
        memcpy(u + 1, t + 30, n - 30);
        char *fv = strstr(u, "\"format_version\":2");
        CHECK(fv != NULL);
        if (fv) fv[17] = (char)('0' + v);
        tar_ent m = {"metadata.json", '0', u, n - 29, -1, NULL};
        unsigned char *a = variant(0, &m, NULL, &len);
        if (v == 1) EXPECT(a, len, T2_OK, NULL);
        else EXPECT(a, len, T2_EFORMAT, "does not start with its own checksum");
        free(a);
        free(u);
    }
    free(t);
}

/* Through a real file: the path is in the message; a gzip archive cut short is truncated. */
static void files(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/cut.tar", dir);
    CHECK(write_all(path, real, offs[2] + 3) == 0);
    t2__ckpt *ck = NULL;
    CHECK_RC(t2__ckpt_open(&ck, path), T2_EFORMAT);
    CHECK(strstr(t2_errmsg(), path) && strstr(t2_errmsg(), "entry buffers.bin: truncated"));
    CHECK_RC(t2__ckpt_open(&ck, dir), T2_EINVAL); /* a directory: refused before reading, naming it */
    CHECK(strstr(t2_errmsg(), dir) && strstr(t2_errmsg(), "not a regular file (a directory)"));

    t2_net *net = NULL;
    CHECK_OK(small_net(&net, 5));
    t2__ckpt_contents c = {.net = net};
    snprintf(path, sizeof path, "%s/z.tar.gz", dir);
    CHECK_OK(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_GZIP, NULL));
    size_t len;
    unsigned char *gz = read_all(path, &len);
    CHECK(gz && len > 40);
    if (gz) {
        EXPECT(gz, len, T2_OK, NULL);
        for (size_t cut = 20; cut < len; cut += len / 7) EXPECT(gz, cut, T2_EFORMAT, NULL);
        gz[len / 2] ^= 0x10;
        EXPECT(gz, len, T2_EFORMAT, NULL);
    }
    free(gz);
    t2_net_free(net);
}

int main(void)
{
    dir = make_dir();
    if (!dir) {
        perror("mkdtemp");
        return 1;
    }
    make_real();
    if (real) {
        truncations();
        corruptions();
        entry_kinds();
        metadata();
        seal();
        files();
    }
    free(real);
    rm_dir(dir);
    return check_report("test_checkpoint_bad");
}
