/* test_checkpoint.c — checkpoint round trips (the seeds' CNN with momentum, LR-schedule, loader,
 * RNG and user state; uncompressed, gzip, zstd), restore checks (shapes, optimizer, schedule,
 * warm start, public load), and a write that fails under RLIMIT_FSIZE leaving the previous
 * checkpoint valid and no temporary file behind. */
#include "test_checkpoint_util.h"
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "check.h"
#include "trials/fashion_mnist_cnn_model.h"

static char *dir;

typedef struct model {
    t2_net *net;
    t2_optim *opt;
    t2_lr_schedule *sched;
} model;

static void model_free(model *m)
{
    t2_net_free(m->net);
    t2_optim_free(m->opt);
    t2_lr_schedule_free(m->sched);
    memset(m, 0, sizeof *m);
}

/* The CNN (hidden units), SGD with momentum, a cosine schedule; `seed` makes the values differ. */
static int cnn_model(model *m, int hidden, uint64_t seed, int steps)
{
    memset(m, 0, sizeof *m);
    t2_rng r;
    t2_rng_seed(&r, seed);
    int rc = fashion_mnist_cnn(&m->net, 0.25f, 0.5f, hidden);
    if (!rc) rc = t2_net_init(m->net, &r);
    size_t n = 0;
    if (!rc) t2_net_params(m->net, &n);
    t2_sgd_params p = t2_sgd_default();
    p.lr = 0.1;
    p.momentum = 0.9;
    if (!rc) rc = t2_sgd_create(&m->opt, &p, n);
    t2_lr_params lp = t2_lr_default(T2_LR_COSINE, 0.1);
    lp.t_max = 1000;
    if (!rc) rc = t2_lr_schedule_create(&m->sched, &lp);
    if (rc) return rc;
    size_t ns;
    float *st = t2_optim_state(m->opt, &ns);
    for (size_t i = 0; i < ns; i++) st[i] = t2_rng_normal(&r);
    t2_optim_set_step_count(m->opt, steps);
    for (int i = 0; i < steps; i++) t2_lr_schedule_step(m->sched);
    return 0;
}

static int same_floats(const float *a, const float *b, size_t n) { return memcmp(a, b, n * sizeof(float)) == 0; }

static void round_trip(t2__ckpt_compression comp)
{
    model a, b;
    CHECK_OK(cnn_model(&a, 128, 1, 37));
    CHECK_OK(cnn_model(&b, 128, 2, 0));
    t2_loader_state ls = {3, 117};
    t2_rng trial, other;
    t2_rng_seed(&trial, 11);
    t2_rng_seed(&other, 12);
    t2_rng_u64(&trial);
    unsigned char user[1000];
    for (int i = 0; i < 1000; i++) user[i] = (unsigned char)(i * 31 + 7);
    t2__ckpt_rng rngs[2] = {{"trial", trial}, {"dropout", other}};
    t2__ckpt_kv kv[2] = {{"metric", "0.25"}, {"note", "quote \" and \\ and \xc3\xa9"}};
    t2__ckpt_contents c = {.net = a.net, .opt = a.opt, .sched = a.sched, .loader = &ls, .rngs = rngs, .n_rngs = 2,
                           .user_state = user, .user_state_len = sizeof user, .experiment_id = 7, .trial_id = 3,
                           .hparams_json = "{\"lr\":0.1,\"nested\":{\"k\":[1,2,\"x\"]}}", .batches_trained = 12345,
                           .epoch = 3, .strings = kv, .n_strings = 2};
    char path[4096];
    t2__ckpt_result res;
    memset(&res, 0, sizeof res);
    CHECK_OK(t2__ckpt_path(path, sizeof path, dir, "round", comp));
    CHECK_OK(t2__ckpt_write(path, &c, comp, &res));
    CHECK(strlen(res.uuid) == 36);
    size_t flen = 0;
    free(read_all(path, &flen));
    CHECK(res.bytes == flen);
    size_t np;
    t2_net_params(a.net, &np);
    if (comp == T2__CKPT_COMPRESS_NONE) CHECK(flen > 2 * np * sizeof(float) && flen < 2 * np * sizeof(float) + 16384);

    t2__ckpt *ck = NULL;
    CHECK_OK(t2__ckpt_open(&ck, path));
    if (!ck) {
        model_free(&a);
        model_free(&b);
        return;
    }
    t2_checkpoint_info info;
    CHECK_OK(t2__ckpt_get_info(ck, &info));
    CHECK(info.format_version == 2);
    CHECK(!strcmp(info.t2exp_version, t2_version()));
    CHECK(!strcmp(info.uuid, res.uuid));
    CHECK(info.experiment_id == 7 && info.trial_id == 3 && info.batches_trained == 12345 && info.epoch == 3);
    CHECK(!strcmp(info.hparams_json, "{\"lr\":0.1,\"nested\":{\"k\":[1,2,\"x\"]}}"));
    CHECK(info.num_params == np && info.num_buffers == 0 && info.num_tensors == t2_net_num_tensors(a.net));
    CHECK(info.has_optimizer && info.optimizer_kind == T2_OPTIM_SGD && info.optimizer_steps == 37);
    CHECK(info.has_lr_schedule && info.has_loader_state && info.has_user_state && info.user_state_bytes == 1000);
    CHECK(!strcmp(t2__ckpt_string(ck, "metric"), "0.25"));
    CHECK(!strcmp(t2__ckpt_string(ck, "note"), "quote \" and \\ and \xc3\xa9"));
    CHECK(t2__ckpt_string(ck, "absent") == NULL);
    for (int i = 0; i < info.num_tensors; i++) {
        t2_param_info x, y;
        CHECK_OK(t2_checkpoint_tensor_info(ck, i, &x));
        CHECK_OK(t2_net_tensor_info(a.net, i, &y));
        CHECK(!memcmp(&x, &y, sizeof x));
    }
    CHECK_RC(t2_checkpoint_tensor_info(ck, info.num_tensors, &(t2_param_info){0}), T2_EINVAL);

    CHECK_OK(t2__ckpt_restore(ck, b.net, b.opt, b.sched));
    size_t n1, n2, s1, s2;
    float *pa = t2_net_params(a.net, &n1), *pb = t2_net_params(b.net, &n2);
    float *sa = t2_optim_state(a.opt, &s1), *sb = t2_optim_state(b.opt, &s2);
    CHECK(n1 == n2 && same_floats(pa, pb, n1));
    CHECK(s1 == s2 && same_floats(sa, sb, s1));
    CHECK(t2_optim_step_count(b.opt) == 37);
    t2_lr_state la, lb;
    t2_lr_schedule_get_state(a.sched, &la);
    t2_lr_schedule_get_state(b.sched, &lb);
    CHECK(la.kind == lb.kind && la.step == lb.step && la.lr == lb.lr && la.num_bad_epochs == lb.num_bad_epochs);
    CHECK(t2_lr_schedule_lr(a.sched) == t2_lr_schedule_lr(b.sched));
    t2_loader_state ls2;
    CHECK_OK(t2__ckpt_loader_state(ck, &ls2));
    CHECK(ls2.epoch == 3 && ls2.batch == 117);
    t2_rng r2;
    CHECK_OK(t2__ckpt_get_rng(ck, "trial", &r2));
    CHECK(!memcmp(&r2, &trial, sizeof r2));
    CHECK_OK(t2__ckpt_get_rng(ck, "dropout", &r2));
    CHECK(!memcmp(&r2, &other, sizeof r2));
    CHECK_RC(t2__ckpt_get_rng(ck, "nope", &r2), T2_ENOTFOUND);
    const void *u;
    size_t ul;
    CHECK_OK(t2__ckpt_user_state(ck, &u, &ul));
    CHECK(ul == 1000 && !memcmp(u, user, 1000));
    const float *cp;
    size_t cn;
    CHECK_OK(t2__ckpt_params(ck, &cp, &cn));
    CHECK(cn == np && same_floats(cp, t2_net_params(a.net, NULL), np));
    t2__ckpt_free(ck);

    /* The restored model trains on exactly like the original. */
    t2_optim_step(a.opt, t2_net_params(a.net, NULL), t2_net_grads(a.net, NULL), n1);
    t2_optim_step(b.opt, t2_net_params(b.net, NULL), t2_net_grads(b.net, NULL), n2);
    CHECK(same_floats(t2_net_params(a.net, NULL), t2_net_params(b.net, NULL), n1));
    model_free(&a);
    model_free(&b);
}

/* Minimal contents: no optimizer, schedule, loader, rngs or user state; a net with buffers. */
static void minimal_and_buffers(void)
{
    t2_net *a = NULL, *b = NULL;
    CHECK_OK(small_net(&a, 1));
    CHECK_OK(small_net(&b, 2));
    char path[4096];
    snprintf(path, sizeof path, "%s/min.tar", dir);
    t2__ckpt_contents c = {.net = a};
    CHECK_OK(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL));
    t2__ckpt *ck = NULL;
    CHECK_OK(t2__ckpt_open(&ck, path));
    t2_checkpoint_info info;
    CHECK_OK(t2__ckpt_get_info(ck, &info));
    CHECK(!info.has_optimizer && !info.has_lr_schedule && !info.has_loader_state && !info.has_user_state);
    CHECK(!strcmp(info.hparams_json, "{}") && info.num_buffers == 6);
    t2_loader_state ls;
    t2_lr_state lr;
    const void *u;
    size_t ul;
    CHECK_RC(t2__ckpt_loader_state(ck, &ls), T2_ENOTFOUND);
    CHECK_RC(t2__ckpt_lr_state(ck, &lr), T2_ENOTFOUND);
    CHECK_RC(t2__ckpt_user_state(ck, &u, &ul), T2_ENOTFOUND);
    t2_optim *opt = NULL;
    t2_sgd_params sp = t2_sgd_default();
    size_t n;
    t2_net_params(b, &n);
    CHECK_OK(t2_sgd_create(&opt, &sp, n));
    CHECK_RC(t2__ckpt_restore(ck, b, opt, NULL), T2_ENOTFOUND);
    CHECK(strstr(t2_errmsg(), "no optimizer state") != NULL);
    CHECK_OK(t2__ckpt_restore(ck, b, NULL, NULL));
    t2__ckpt_free(ck);
    /* SGD without momentum: an optimizer with an empty state buffer (a 0-byte optimizer.bin). */
    t2_optim *plain = NULL;
    CHECK_OK(t2_sgd_create(&plain, &sp, n));
    t2_optim_set_step_count(plain, 4);
    c = (t2__ckpt_contents){.net = a, .opt = plain};
    CHECK_OK(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL));
    CHECK_OK(t2__ckpt_open(&ck, path));
    CHECK_OK(t2__ckpt_restore(ck, b, opt, NULL));
    CHECK(t2_optim_step_count(opt) == 4);
    t2_optim_free(plain);
    size_t na, nb;
    float *xa = t2_net_params(a, &na), *xb = t2_net_params(b, &nb);
    CHECK(na == nb && same_floats(xa, xb, na));
    xa = t2_net_buffers(a, &na);
    xb = t2_net_buffers(b, &nb);
    CHECK(na == 6 && nb == 6 && same_floats(xa, xb, na));
    t2__ckpt_free(ck);

    /* Empty user state is present-but-empty; a plateau schedule's infinite "best" survives. */
    t2_lr_schedule *pl = NULL, *pl2 = NULL;
    t2_lr_params pp = t2_lr_default(T2_LR_PLATEAU, 0.5);
    CHECK_OK(t2_lr_schedule_create(&pl, &pp));
    CHECK_OK(t2_lr_schedule_create(&pl2, &pp));
    char empty = 0;
    c = (t2__ckpt_contents){.net = a, .sched = pl, .user_state = &empty, .user_state_len = 0};
    CHECK_OK(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL));
    CHECK_OK(t2__ckpt_open(&ck, path));
    CHECK_OK(t2__ckpt_user_state(ck, &u, &ul));
    CHECK(ul == 0);
    t2_lr_schedule_step_metric(pl2, 1.0);
    CHECK_OK(t2__ckpt_restore(ck, b, NULL, pl2));
    t2_lr_state s1, s2;
    t2_lr_schedule_get_state(pl, &s1);
    t2_lr_schedule_get_state(pl2, &s2);
    CHECK(isinf(s2.best) && s1.best == s2.best && s2.step == 0);
    t2__ckpt_free(ck);

    /* Schedule kind mismatch: nothing changes. */
    t2_lr_schedule *cs = NULL;
    t2_lr_params cp = t2_lr_default(T2_LR_CONSTANT, 0.5);
    CHECK_OK(t2_lr_schedule_create(&cs, &cp));
    CHECK_OK(t2__ckpt_open(&ck, path));
    CHECK_RC(t2__ckpt_restore(ck, b, NULL, cs), T2_EINVAL);
    t2__ckpt_free(ck);
    t2_lr_schedule_free(cs);
    t2_lr_schedule_free(pl);
    t2_lr_schedule_free(pl2);
    t2_optim_free(opt);
    t2_net_free(a);
    t2_net_free(b);
}

static void restore_mismatches(void)
{
    model a, wide, adam_model;
    CHECK_OK(cnn_model(&a, 128, 1, 5));
    CHECK_OK(cnn_model(&wide, 64, 2, 0));
    char path[4096];
    snprintf(path, sizeof path, "%s/mm.tar", dir);
    t2__ckpt_contents c = {.net = a.net, .opt = a.opt};
    CHECK_OK(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL));
    t2__ckpt *ck = NULL;
    CHECK_OK(t2__ckpt_open(&ck, path));

    size_t n;
    float *p = t2_net_params(wide.net, &n);
    float *before = malloc(n * sizeof(float));
    memcpy(before, p, n * sizeof(float));
    CHECK_RC(t2__ckpt_restore(ck, wide.net, wide.opt, NULL), T2_ESHAPE);
    CHECK(strstr(t2_errmsg(), "tensor 7.dense.weight has shape [128, 9216] in the checkpoint but [64, 9216] in the model"));
    CHECK(same_floats(p, before, n)); /* untouched */
    CHECK_RC(t2_checkpoint_restore_model(ck, wide.net), T2_ESHAPE);
    free(before);

    /* Same net, Adam instead of SGD: kind check; then an optimizer of another size. */
    CHECK_OK(cnn_model(&adam_model, 128, 3, 0));
    t2_optim *adam = NULL;
    t2_adam_params ap = t2_adam_default();
    t2_net_params(adam_model.net, &n);
    CHECK_OK(t2_adam_create(&adam, &ap, n));
    CHECK_RC(t2__ckpt_restore(ck, adam_model.net, adam, NULL), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "optimizer is sgd in the checkpoint but adam in the model"));
    t2_optim *small = NULL;
    t2_sgd_params sp = t2_sgd_default();
    sp.momentum = 0.5;
    CHECK_OK(t2_sgd_create(&small, &sp, 10));
    CHECK_RC(t2__ckpt_restore(ck, adam_model.net, small, NULL), T2_ESHAPE);
    t2_optim_free(adam);
    t2_optim_free(small);

    /* A model with another layer count: the missing tensor is named. */
    t2_net *smalln = NULL;
    CHECK_OK(small_net(&smalln, 1));
    CHECK_RC(t2__ckpt_restore(ck, smalln, NULL, NULL), T2_ESHAPE);
    CHECK(strstr(t2_errmsg(), "has no tensor 0.dense.weight"));
    t2_net *uninit = NULL;
    CHECK_OK(fashion_mnist_cnn(&uninit, 0.25f, 0.5f, 128));
    CHECK_RC(t2__ckpt_restore(ck, uninit, NULL, NULL), T2_ESTATE);
    t2_net_free(uninit);
    t2_net_free(smalln);

    /* Warm start: parameters only, the optimizer is not touched. */
    float *ms = t2_optim_state(adam_model.opt, &n);
    float m0 = ms[0];
    CHECK_OK(t2__ckpt_restore(ck, adam_model.net, NULL, NULL));
    CHECK(ms[0] == m0 && t2_optim_step_count(adam_model.opt) == 0);
    t2__ckpt_free(ck);

    /* The public one-shot load. */
    t2_net *inf = NULL;
    t2_rng r;
    t2_rng_seed(&r, 99);
    CHECK_OK(fashion_mnist_cnn(&inf, 0.25f, 0.5f, 128));
    CHECK_OK(t2_net_init(inf, &r));
    CHECK_OK(t2_checkpoint_load_model(path, inf));
    size_t n1, n2;
    float *pa = t2_net_params(a.net, &n1), *pi = t2_net_params(inf, &n2);
    CHECK(n1 == n2 && same_floats(pa, pi, n1));
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/nothing.tar", dir);
    CHECK_RC(t2_checkpoint_load_model(missing, inf), T2_ENOTFOUND);
    CHECK(strstr(t2_errmsg(), missing) != NULL);
    t2_net_free(inf);
    model_free(&a);
    model_free(&wide);
    model_free(&adam_model);
}

static void bad_contents(void)
{
    t2_net *a = NULL;
    CHECK_OK(small_net(&a, 1));
    char path[4096];
    snprintf(path, sizeof path, "%s/bad.tar", dir);
    t2__ckpt_contents c = {.net = a, .hparams_json = "{\"lr\": }"};
    CHECK_RC(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "hparams are not valid JSON"));
    t2__ckpt_rng dup[2] = {{"x", {{1, 2, 3, 4}}}, {"x", {{1, 2, 3, 4}}}};
    c = (t2__ckpt_contents){.net = a, .rngs = dup, .n_rngs = 2};
    CHECK_RC(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL), T2_EINVAL);
    t2__ckpt_kv kv[1] = {{"has space", "v"}};
    c = (t2__ckpt_contents){.net = a, .strings = kv, .n_strings = 1};
    CHECK_RC(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL), T2_EINVAL);
    t2_optim *o = NULL;
    t2_sgd_params sp = t2_sgd_default();
    CHECK_OK(t2_sgd_create(&o, &sp, 3));
    c = (t2__ckpt_contents){.net = a, .opt = o};
    CHECK_RC(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL), T2_EINVAL);
    c = (t2__ckpt_contents){.net = a};
    CHECK_RC(t2__ckpt_write("/nonexistent-dir-t2/x.tar", &c, T2__CKPT_COMPRESS_NONE, NULL), T2_EIO);
    CHECK(strstr(t2_errmsg(), "/nonexistent-dir-t2/x.tar") && strstr(t2_errmsg(), "No such file or directory"));
    CHECK(count_files(dir, "bad.tar") == 0);
    t2__ckpt_compression comp;
    CHECK_OK(t2__ckpt_compression_parse("zstd", &comp));
    CHECK(comp == T2__CKPT_COMPRESS_ZSTD);
    CHECK_RC(t2__ckpt_compression_parse("lz4", &comp), T2_EINVAL);
    char small[16];
    CHECK_RC(t2__ckpt_path(small, sizeof small, "/some/long/dir", "uuid", T2__CKPT_COMPRESS_NONE), T2_EINVAL);
    t2_optim_free(o);
    t2_net_free(a);
}

/* A child with a 64 KiB file-size limit (SIGXFSZ ignored, so write() fails with EFBIG) rewrites
 * the checkpoint at the same path: the write fails with T2_EIO naming the path and the errno
 * text, the old checkpoint stays complete at the path, and no temporary file remains. */
static void failed_write(void)
{
    model a, b;
    CHECK_OK(cnn_model(&a, 128, 1, 5));
    CHECK_OK(cnn_model(&b, 128, 2, 9));
    char path[4096];
    snprintf(path, sizeof path, "%s/latest.tar", dir);
    t2__ckpt_contents c = {.net = a.net, .opt = a.opt, .batches_trained = 100};
    t2__ckpt_result old;
    CHECK_OK(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, &old));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {65536, 65536};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(3);
        t2__ckpt_contents c2 = {.net = b.net, .opt = b.opt, .batches_trained = 200};
        int rc = t2__ckpt_write(path, &c2, T2__CKPT_COMPRESS_NONE, NULL);
        int ok = rc == T2_EIO && strstr(t2_errmsg(), path) && strstr(t2_errmsg(), "File too large");
        if (!ok) fprintf(stderr, "child: rc %d, %s\n", rc, t2_errmsg());
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    t2__ckpt *ck = NULL;
    CHECK_OK(t2__ckpt_open(&ck, path));
    t2_checkpoint_info info;
    if (ck) {
        CHECK_OK(t2__ckpt_get_info(ck, &info));
        CHECK(!strcmp(info.uuid, old.uuid) && info.batches_trained == 100);
    }
    t2__ckpt_free(ck);
    CHECK(count_files(dir, ".tmp-") == 0);
    CHECK(count_files(dir, "latest.tar") == 1);
    model_free(&a);
    model_free(&b);
}

/* The one-pass checksums and copies split over the pool (1, 2 and 3 threads: part boundaries
 * fall inside tensors), eager and lazy opening (checksums at open, or during restore's copy), and
 * a flipped byte deep inside the big dense weight, found either way and named. */
#define CHECK_MSG(expr, code, a, b)                                                                   \
    do {                                                                                              \
        CHECK_RC(expr, code);                                                                         \
        if (!strstr(t2_errmsg(), a) || !strstr(t2_errmsg(), b)) {                                     \
            fprintf(stderr, "%s:%d: \"%s\" lacks \"%s\" or \"%s\"\n", __FILE__, __LINE__, t2_errmsg(), a, b); \
            check_failures++;                                                                         \
        }                                                                                             \
    } while (0)

static void threads_and_lazy(void)
{
    model a, b;
    CHECK_OK(cnn_model(&a, 128, 3, 5));
    t2__ckpt_contents c = {.net = a.net, .opt = a.opt, .sched = a.sched, .hparams_json = "{}"};
    char path[4096], bad[4096];
    CHECK_OK(t2__ckpt_path(path, sizeof path, dir, "threads", T2__CKPT_COMPRESS_NONE));
    snprintf(bad, sizeof bad, "%s/threads-bad.tar", dir);
    size_t np, ns, len;
    const float *pa = t2_net_params(a.net, &np), *sa = t2_optim_state(a.opt, &ns);
    for (int threads = 1; threads <= 3; threads++) {
        CHECK_OK(t2_set_num_threads(threads));
        CHECK_OK(t2__ckpt_write(path, &c, T2__CKPT_COMPRESS_NONE, NULL));
        for (int lazy = 0; lazy <= 1; lazy++) {
            CHECK_OK(cnn_model(&b, 128, 4, 0));
            t2__ckpt *ck = NULL;
            CHECK_OK(lazy ? t2__ckpt_open_for_restore(&ck, path) : t2__ckpt_open(&ck, path));
            CHECK_OK(t2__ckpt_restore(ck, b.net, b.opt, b.sched));
            CHECK(same_floats(t2_net_params(b.net, NULL), pa, np) && same_floats(t2_optim_state(b.opt, NULL), sa, ns));
            const float *p = NULL;
            size_t n = 0;
            CHECK_OK(t2__ckpt_params(ck, &p, &n));
            CHECK(n == np && same_floats(p, pa, np));
            t2__ckpt_free(ck);
            model_free(&b);
        }
        /* One bit, about two thirds into the file: inside the hidden dense layer's weights. */
        unsigned char *f = read_all(path, &len);
        CHECK(f != NULL);
        if (!f) continue;
        f[len / 3] ^= 0x04;
        CHECK(write_all(bad, f, len) == 0);
        free(f);
        t2__ckpt *ck = NULL;
        CHECK_MSG(t2__ckpt_open(&ck, bad), T2_EFORMAT, "fails its CRC-32C check", "the file is corrupt");
        CHECK_OK(t2__ckpt_open_for_restore(&ck, bad)); /* the arrays are checked at restore */
        CHECK_OK(cnn_model(&b, 128, 4, 0));
        CHECK_MSG(t2__ckpt_restore(ck, b.net, b.opt, b.sched), T2_EFORMAT, "entry params.bin: tensor",
                  "fails its CRC-32C check");
        const float *p = NULL;
        size_t n = 0;
        CHECK_MSG(t2__ckpt_params(ck, &p, &n), T2_EFORMAT, bad, "fails its CRC-32C check");
        t2__ckpt_free(ck);
        model_free(&b);
    }
    CHECK_OK(t2_set_num_threads(1));
    model_free(&a);
}

int main(void)
{
    dir = make_dir();
    if (!dir) {
        perror("mkdtemp");
        return 1;
    }
    round_trip(T2__CKPT_COMPRESS_NONE);
    round_trip(T2__CKPT_COMPRESS_GZIP);
    round_trip(T2__CKPT_COMPRESS_ZSTD);
    minimal_and_buffers();
    restore_mismatches();
    bad_contents();
    failed_write();
    threads_and_lazy();
    rm_dir(dir);
    return check_report("test_checkpoint");
}
