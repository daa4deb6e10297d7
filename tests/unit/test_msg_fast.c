/* test_msg_fast.c — the tree-free decode of a runner's per-trial messages (protocol/msg_fast.c)
 * takes a subset of what the tree's decode takes and gives the same message for it: the runner's
 * own messages of every shape (each one taken), texts around them that the general decode refuses
 * or that need it (each one declined), and 200,000 random mutations of the runner's messages (a
 * text the fast path takes is taken by the tree with the same message). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "configs/value.h"
#include "internal.h"
#include "protocol/protocol.h"

/* The protocol's version as text, for ready messages that must be taken (protocol.h). */
#define STR_(x) #x
#define STR(x) STR_(x)
#define VERSION STR(T2__PROTOCOL_VERSION)

/* m as the channel sends it (its JSON text), malloc'ed. */
static char *text_of(const t2__msg *m)
{
    t2__json_out o = {0};
    CHECK_OK(t2__msg_encode_json(m, &o));
    return o.p;
}

/* The general decode of text: 0 with *out, or its error. */
static int tree_decode(const char *text, size_t len, t2__msg *out)
{
    t2__val *v = NULL;
    size_t off;
    int rc = t2__val_from_json(text, len, &v, &off);
    if (rc) {
        t2__val_free(v);
        memset(out, 0, sizeof *out);
        t2_clearerr();
        return rc;
    }
    rc = t2__msg_decode(v, out);
    t2_clearerr();
    return rc;
}

static long taken, declined;

/* The property for one text: the fast path declines it, or the tree takes it too and both
 * messages encode to the same bytes (every field the same). Returns whether fast took it. */
static int agrees(const char *text, size_t len)
{
    t2__msg fast, tree;
    int ok = t2__msg_decode_fast(text, len, &fast);
    int rc = tree_decode(text, len, &tree);
    if (ok) {
        taken++;
        if (rc != T2_OK) fprintf(stderr, "fast took what the tree refuses: %.*s\n", (int)len, text);
        CHECK(rc == T2_OK);
        if (rc == T2_OK) {
            CHECK(fast.kind == tree.kind);
            char *a = text_of(&fast), *b = text_of(&tree);
            if (strcmp(a, b) != 0) fprintf(stderr, "fast %s\ntree %s\n", a, b);
            CHECK(strcmp(a, b) == 0);
            free(a);
            free(b);
        }
        t2__msg_free(&fast);
    } else {
        declined++;
        CHECK(fast.kind == T2__MSG_NONE && fast.doc == NULL);
    }
    if (rc == T2_OK) t2__msg_free(&tree);
    return ok;
}

static int agrees_str(const char *text) { return agrees(text, strlen(text)); }

static double draw(unsigned *seed)
{
    static const double special[] = {0.0, -0.0, 1.0, -1.5, 1e-320, 5e-324, 1.7976931348623157e308, 0.1, 1e22, 123456789.0};
    unsigned r = (unsigned)rand_r(seed);
    if (r % 4 == 0) return special[(r / 4) % (sizeof special / sizeof special[0])];
    double u = (double)rand_r(seed) / RAND_MAX, e = (double)(rand_r(seed) % 80) - 40;
    return (r % 2 ? -1 : 1) * u * pow(10.0, e);
}

/* The runner's messages of every shape; each is kept in texts[] for the mutations. */
static char *texts[4096];
static size_t ntexts;

static void keep(const t2__msg *m)
{
    char *t = text_of(m);
    CHECK(agrees_str(t)); /* the runner's own text is always taken */
    if (ntexts < sizeof texts / sizeof texts[0]) texts[ntexts++] = t;
    else free(t);
}

static void runner_texts(void)
{
    unsigned seed = 12;
    const char *blas[] = {NULL, "", "BLAS: OpenBLAS 0.3.21, core SkylakeX (chosen by t2exp: 1-thread sgemm GFLOPS: 103)"};
    for (int i = 0; i < 300; i++) {
        t2__msg r = {.kind = T2__MSG_READY, .u.ready = {.batches_per_epoch = rand_r(&seed) % 100000, .params = i * 977LL,
                                                        .blas = blas[i % 3]}};
        keep(&r);
        t2__msg d = {.kind = T2__MSG_DONE, .u.done.batches = (int64_t)rand_r(&seed) * (i % 7 == 0 ? 1000003 : 1)};
        keep(&d);
        t2__msg f = {.kind = T2__MSG_FINISHED, .u.finished = {.status = i % 256, .log_end = i % 3 ? (int64_t)i * 12345 : -1}};
        keep(&f);
        t2__val *vals = t2__val_map();
        int nv = i % 5;
        for (int k = 0; k < nv; k++) {
            char key[32];
            snprintf(key, sizeof key, k == 0 ? "loss" : "metric_%d", k);
            CHECK_OK(t2__val_map_set(vals, key, k == 3 ? t2__val_int(i - 150) : t2__val_double(draw(&seed))));
        }
        int validation = i % 2;
        t2__msg m = {.kind = T2__MSG_METRICS,
                     .u.metrics = {.validation = validation, .batches = i, .epoch = i % 4 == 0 ? NAN : draw(&seed),
                                   .values = vals, .has_timing = !validation && i % 3 != 0, .ask = i % 6 == 1}};
        m.u.metrics.timing = (t2__msg_timing){draw(&seed), draw(&seed), fabs(draw(&seed)), fabs(draw(&seed)), 0.0};
        keep(&m);
        t2__val_free(vals);
    }
}

/* Texts around the runner's that the fast path must decline: the tree refuses them, or reads
 * them in a way this path does not (whitespace, escapes, keys it does not know). */
static void declined_texts(void)
{
    static const char *const bad[] = {
        "",
        "{}",
        "[]",
        "{\"type\":\"done\"}",
        "{\"type\":\"done\",\"batches\":-1}",
        "{\"type\":\"done\",\"batches\":1.0}",
        "{\"type\":\"done\",\"batches\":1,\"batches\":2}",
        "{\"type\":\"done\",\"batches\":1,\"extra\":2}",
        "{\"type\":\"done\", \"batches\":1}",
        "{\"type\":\"done\",\"batches\":1} ",
        "{\"type\":\"done\",\"batches\":1}x",
        "{\"type\":\"d\\u006fne\",\"batches\":1}",
        "{\"type\":\"done\",\"batches\":01}",
        "{\"type\":\"done\",\"batches\":1234567890123456789}",
        "{\"type\":\"done\",\"batches\":+1}",
        "{\"type\":\"exit\"}",
        "{\"type\":\"finished\",\"status\":256}",
        "{\"type\":\"finished\",\"status\":0,\"log_end\":-1}",
        "{\"type\":\"finished\",\"status\":0,\"log_end\":\"1\"}",
        "{\"type\":\"ready\",\"batches_per_epoch\":1,\"params\":0,\"version\":2}",
        "{\"type\":\"ready\",\"batches_per_epoch\":1,\"params\":0}",
        "{\"type\":\"ready\",\"batches_per_epoch\":1,\"params\":0,\"blas\":7,\"version\":" VERSION "}",
        "{\"type\":\"ready\",\"batches_per_epoch\":1,\"params\":0,\"blas\":\"caf\xc3\xa9\",\"version\":" VERSION "}",
        "{\"type\":\"ready\",\"batches_per_epoch\":1,\"params\":0,\"blas\":\"tab\\there\",\"version\":" VERSION "}",
        "{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1,\"values\":{\"loss\":\"x\"}}",
        "{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1,\"values\":{\"loss\":1,\"loss\":2}}",
        "{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1,\"values\":{\"a\":{\"b\":1}}}",
        "{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1,\"values\":[1]}",
        "{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1}",
        "{\"type\":\"metrics\",\"kind\":\"test\",\"batches\":1,\"values\":{}}",
        "{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1,\"values\":{\"loss\":1e999}}",
        "{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1,\"values\":{},\"batches_per_s\":1}",
        "{\"type\":\"metrics\",\"kind\":\"validation\",\"batches\":1,\"values\":{},\"batches_per_s\":1,"
        "\"samples_per_s\":1,\"data_s\":1,\"compute_s\":1,\"comm_s\":1}",
        "{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1,\"values\":{},\"batches_per_s\":null,"
        "\"samples_per_s\":1,\"data_s\":1,\"compute_s\":1,\"comm_s\":1}",
        "{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1,\"values\":{},\"ask\":1}",
        "{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1,\"epoch\":\"1\",\"values\":{}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (agrees_str(bad[i])) fprintf(stderr, "taken: %s\n", bad[i]);
        CHECK(!agrees_str(bad[i]));
    }
    /* And a few it takes that are not the runner's own texts: nulls for absent, an empty map. */
    CHECK(agrees_str("{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":0,\"epoch\":null,\"values\":{},\"ask\":null}"));
    CHECK(agrees_str("{\"batches\":7,\"type\":\"done\"}"));
    CHECK(agrees_str("{\"type\":\"finished\",\"status\":255,\"log_end\":null}"));
    CHECK(agrees_str("{\"type\":\"ready\",\"batches_per_epoch\":0,\"params\":0,\"blas\":null,\"version\":" VERSION "}"));
    CHECK(agrees_str("{\"type\":\"metrics\",\"kind\":\"validation\",\"batches\":-0,\"values\":{\"\":-0,\"x\":1E-2}}"));
}

/* Random edits of the runner's texts: a byte changed, a run deleted or doubled. */
static void mutations(void)
{
    unsigned seed = 2026;
    char buf[8192];
    for (int n = 0; n < 200000; n++) {
        const char *t = texts[(size_t)rand_r(&seed) % ntexts];
        size_t len = strlen(t);
        if (len + 64 > sizeof buf) continue;
        memcpy(buf, t, len);
        int edits = 1 + rand_r(&seed) % 3;
        for (int e = 0; e < edits && len > 2; e++) {
            size_t at = (size_t)rand_r(&seed) % len, run = 1 + (size_t)rand_r(&seed) % 8;
            if (at + run > len) run = len - at;
            switch (rand_r(&seed) % 3) {
            case 0: {
                static const char alphabet[] = "{}[]\":,.-+eE0123456789 \\nt\x01\xc3";
                buf[at] = alphabet[(size_t)rand_r(&seed) % (sizeof alphabet - 1)];
                break;
            }
            case 1:
                memmove(buf + at, buf + at + run, len - at - run);
                len -= run;
                break;
            default:
                memmove(buf + at + run, buf + at, len - at);
                len += run;
            }
        }
        agrees(buf, len);
    }
}

int main(void)
{
    runner_texts();
    declined_texts();
    mutations();
    printf("test_msg_fast: %ld texts taken, %ld declined\n", taken, declined);
    for (size_t i = 0; i < ntexts; i++) free(texts[i]);
    return check_report("test_msg_fast");
}
