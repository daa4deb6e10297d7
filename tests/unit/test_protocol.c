/* test_protocol.c — every controller<->runner message: the round trip of each kind (encode, JSON,
 * decode, the same fields), each required field missing or of the wrong type, unknown kinds,
 * another protocol version, out-of-range values, and the channel around it (a socketpair, an
 * oversized frame, an early end), read frame by frame or through the controller's buffered reader. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "check.h"
#include "configs/value.h"
#include "internal.h"
#include "protocol/protocol.h"
#include "runner/channel.h"
#include "t2exp.h"

/* The JSON the channel sends (t2__msg_encode_json, no tree) is byte for byte the tree's; it is
 * appended after what out held. */
static void same_text(const t2__msg *in, const char *tree_json, size_t len)
{
    t2__json_out o = {0};
    t2__json_raw(&o, "held", 4);
    CHECK_OK(t2__msg_encode_json(in, &o));
    CHECK(o.n == 4 + len && memcmp(o.p, "held", 4) == 0);
    if (o.n == 4 + len && memcmp(o.p + 4, tree_json, len) != 0)
        fprintf(stderr, "text %.*s\ntree %s\n", (int)len, o.p + 4, tree_json);
    CHECK(o.n == 4 + len && memcmp(o.p + 4, tree_json, len) == 0);
    free(o.p);
}

/* A message the tree encoder refuses with want: the text one too, leaving out as it was. */
static void same_refusal(const t2__msg *in, int want)
{
    t2__json_out o = {0};
    t2__json_raw(&o, "held", 4);
    CHECK_RC(t2__msg_encode_json(in, &o), want);
    CHECK(o.n == 4 && strcmp(o.p, "held") == 0 && !o.oom);
    free(o.p);
}

/* encode -> JSON text -> parse -> decode */
static int round_trip(const t2__msg *in, t2__msg *out)
{
    t2__val *v = NULL, *back = NULL;
    char *json = NULL;
    size_t len, off;
    int rc = t2__msg_encode(in, &v);
    if (!rc) rc = t2__val_to_json(v, &json, &len);
    if (!rc) same_text(in, json, len);
    t2__val_free(v);
    if (!rc) rc = t2__val_from_json(json, len, &back, &off);
    free(json);
    if (rc) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    return t2__msg_decode(back, out);
}

/* Decodes JSON text. */
static int decode_text(const char *json, t2__msg *out)
{
    t2__val *v = NULL;
    size_t off;
    int rc = t2__val_from_json(json, strlen(json), &v, &off);
    if (rc) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    return t2__msg_decode(v, out);
}

/* The decode of json must fail with want, and its message must name `field`. */
static void refused(const char *json, int want, const char *field)
{
    t2__msg m;
    int rc = decode_text(json, &m);
    if (rc != want || !strstr(t2_errmsg(), field)) {
        fprintf(stderr, "  decoding %s: rc %d (want %d), message '%s' (want '%s' in it)\n", json, rc, want,
                t2_errmsg(), field);
        check_failures++;
    }
    t2__msg_free(&m);
    t2_clearerr();
}

static void runner_kinds(void)
{
    t2__msg o;
    t2__msg ready = {.kind = T2__MSG_READY, .u.ready = {.batches_per_epoch = 469, .params = 1199882, .blas = "BLAS: x"}};
    CHECK_OK(round_trip(&ready, &o));
    CHECK(o.kind == T2__MSG_READY && o.u.ready.batches_per_epoch == 469 && o.u.ready.params == 1199882);
    CHECK_STR(o.u.ready.blas, "BLAS: x");
    CHECK(o.u.ready.version == T2__PROTOCOL_VERSION);
    t2__msg_free(&o);
    ready.u.ready.blas = NULL; /* optional */
    CHECK_OK(round_trip(&ready, &o));
    CHECK(o.u.ready.blas == NULL);
    t2__msg_free(&o);

    t2__val *values = t2__val_map();
    t2__val_map_set(values, "loss", t2__val_double(0.25));
    t2__val_map_set(values, "accuracy", t2__val_int(1));
    t2__msg met = {.kind = T2__MSG_METRICS,
                   .u.metrics = {.validation = 0, .batches = 200, .epoch = 0.5, .values = values, .has_timing = 1,
                                 .timing = {12.5, 800, 0.1, 1.5, 0.25}}};
    CHECK_OK(round_trip(&met, &o));
    CHECK(o.kind == T2__MSG_METRICS && !o.u.metrics.validation && o.u.metrics.batches == 200);
    CHECK(o.u.metrics.epoch == 0.5 && o.u.metrics.has_timing && o.u.metrics.timing.samples_per_s == 800);
    CHECK(o.u.metrics.timing.comm_s == 0.25 && !o.u.metrics.ask);
    CHECK(o.u.metrics.values->n == 2 && t2__val_map_get(o.u.metrics.values, "loss")->d == 0.25);
    t2__msg_free(&o);
    met.u.metrics.validation = 1;
    met.u.metrics.has_timing = 0;
    met.u.metrics.ask = 1;
    met.u.metrics.epoch = NAN;
    CHECK_OK(round_trip(&met, &o));
    CHECK(o.u.metrics.validation && o.u.metrics.ask && !o.u.metrics.has_timing && isnan(o.u.metrics.epoch));
    t2__msg_free(&o);
    /* JSON has no infinity: neither encoder writes one (the tree's JSON fails, the text is refused). */
    CHECK_OK(t2__val_map_set(values, "inf", t2__val_double(INFINITY)));
    same_refusal(&met, T2_ENUMERIC);
    t2_clearerr();
    t2__val_free(values);

    t2__msg ck = {.kind = T2__MSG_CHECKPOINT,
                  .u.checkpoint = {.uuid = "0f8fad5b-d9cb-469f-a165-70867728950e", .ext = ".tar.zst", .batches = 40,
                                   .bytes = 135000, .has_metric = 1, .metric = 0.91}};
    CHECK_OK(round_trip(&ck, &o));
    CHECK(o.kind == T2__MSG_CHECKPOINT && o.u.checkpoint.batches == 40 && o.u.checkpoint.bytes == 135000);
    CHECK_STR(o.u.checkpoint.ext, ".tar.zst");
    CHECK(o.u.checkpoint.has_metric && o.u.checkpoint.metric == 0.91);
    t2__msg_free(&o);
    ck.u.checkpoint.has_metric = 0;
    CHECK_OK(round_trip(&ck, &o));
    CHECK(!o.u.checkpoint.has_metric);
    t2__msg_free(&o);

    t2__msg cf = {.kind = T2__MSG_CHECKPOINT_FAILED, .u.checkpoint_failed = {.message = "disk full", .batches = 7}};
    CHECK_OK(round_trip(&cf, &o));
    CHECK(o.kind == T2__MSG_CHECKPOINT_FAILED && o.u.checkpoint_failed.batches == 7);
    CHECK_STR(o.u.checkpoint_failed.message, "disk full");
    t2__msg_free(&o);

    t2__msg done = {.kind = T2__MSG_DONE, .u.done.batches = 64}, stopped = {.kind = T2__MSG_STOPPED, .u.stopped.batches = 9};
    CHECK_OK(round_trip(&done, &o));
    CHECK(o.kind == T2__MSG_DONE && o.u.done.batches == 64);
    t2__msg_free(&o);
    CHECK_OK(round_trip(&stopped, &o));
    CHECK(o.kind == T2__MSG_STOPPED && o.u.stopped.batches == 9);
    t2__msg_free(&o);

    t2__msg err = {.kind = T2__MSG_ERROR,
                   .u.error = {.where = "build_model", .message = "lr < 0", .batches = 0, .invalid_hparams = 1}};
    CHECK_OK(round_trip(&err, &o));
    CHECK(o.kind == T2__MSG_ERROR && o.u.error.invalid_hparams && !o.u.error.fatal);
    CHECK_STR(o.u.error.where, "build_model");
    t2__msg_free(&o);

    t2__msg hello = {.kind = T2__MSG_HELLO, .u.hello = {.trial_id = 12, .nonce = "ab", .mac = "cd"}};
    CHECK_OK(round_trip(&hello, &o));
    CHECK(o.kind == T2__MSG_HELLO && o.u.hello.trial_id == 12 && o.u.hello.version == T2__PROTOCOL_VERSION);
    t2__msg_free(&o);
    CHECK(t2__msg_from_runner(T2__MSG_READY) && t2__msg_from_runner(T2__MSG_HELLO));

    t2__msg fin = {.kind = T2__MSG_FINISHED, .u.finished = {.status = 1, .log_end = 123456789012}};
    CHECK_OK(round_trip(&fin, &o));
    CHECK(o.kind == T2__MSG_FINISHED && o.u.finished.status == 1 && o.u.finished.log_end == 123456789012);
    t2__msg_free(&o);
    fin.u.finished.log_end = -1; /* unknown: not sent, read back as unknown */
    CHECK_OK(round_trip(&fin, &o));
    CHECK(o.kind == T2__MSG_FINISHED && o.u.finished.log_end == -1);
    t2__msg_free(&o);
    CHECK(t2__msg_from_runner(T2__MSG_FINISHED));
}

static void controller_kinds(void)
{
    t2__msg o;
    int64_t steps[] = {100, 200, 250};
    t2__msg train = {.kind = T2__MSG_TRAIN, .u.train = {.length = 300, .report_at = steps, .nreport_at = 3}};
    CHECK_OK(round_trip(&train, &o));
    CHECK(o.kind == T2__MSG_TRAIN && o.u.train.length == 300 && o.u.train.nreport_at == 3);
    CHECK(o.u.train.report_at[0] == 100 && o.u.train.report_at[2] == 250);
    t2__msg_free(&o);
    train.u.train.nreport_at = 0;
    CHECK_OK(round_trip(&train, &o));
    CHECK(o.u.train.nreport_at == 0 && o.u.train.report_at == NULL && !o.u.train.last);
    t2__msg_free(&o);
    train.u.train.last = 1; /* the op to max_length: the runner leaves after its done */
    CHECK_OK(round_trip(&train, &o));
    CHECK(o.u.train.last == 1);
    t2__msg_free(&o);
    refused("{\"type\":\"train\",\"length\":1,\"last\":1}", T2_EFORMAT, "last");

    t2__msg ex = {.kind = T2__MSG_EXIT}, val = {.kind = T2__MSG_VALIDATED, .u.validated.new_best = 1};
    CHECK_OK(round_trip(&ex, &o));
    CHECK(o.kind == T2__MSG_EXIT);
    t2__msg_free(&o);
    CHECK_OK(round_trip(&val, &o));
    CHECK(o.kind == T2__MSG_VALIDATED && o.u.validated.new_best && !o.u.validated.prune);
    t2__msg_free(&o);
    t2__msg prune = {.kind = T2__MSG_VALIDATED, .u.validated.prune = 1}; /* searcher.pruner's stop */
    CHECK_OK(round_trip(&prune, &o));
    CHECK(o.kind == T2__MSG_VALIDATED && !o.u.validated.new_best && o.u.validated.prune);
    t2__msg_free(&o);
    refused("{\"type\":\"validated\",\"new_best\":false,\"prune\":1}", T2_EFORMAT, "prune");
    t2__msg st = {.kind = T2__MSG_STOP}; /* a pause, for rank 0 of a distributed trial */
    CHECK_OK(round_trip(&st, &o));
    CHECK(o.kind == T2__MSG_STOP && !t2__msg_from_runner(T2__MSG_STOP));
    t2__msg_free(&o);

    t2__val *hp = t2__val_map();
    t2__val_map_set(hp, "lr", t2__val_double(0.1));
    const char *ovr[] = {"searcher.max_length.batches=60", "name=\"x\""};
    t2__msg spec = {.kind = T2__MSG_SPEC,
                    .u.spec = {.config_yaml = "name: t\n", .trial_object = "/t.so", .overrides = ovr, .noverrides = 2,
                               .hparams = hp, .trial_id = 5, .experiment_id = 2, .threads = 4, .parts = 8,
                               .seed = 0xfedcba9876543210ull, .ckpt_dir = "/c", .warm_start = 1}};
    CHECK_OK(round_trip(&spec, &o));
    CHECK(o.kind == T2__MSG_SPEC && o.u.spec.seed == 0xfedcba9876543210ull && o.u.spec.noverrides == 2);
    CHECK_STR(o.u.spec.overrides[1], "name=\"x\"");
    CHECK_STR(o.u.spec.ckpt_dir, "/c");
    CHECK(o.u.spec.restore_path == NULL && o.u.spec.warm_start && o.u.spec.threads == 4 && o.u.spec.parts == 8);
    CHECK(t2__val_map_get(o.u.spec.hparams, "lr")->d == 0.1);
    t2__msg_free(&o);
    t2__val_free(hp);

    t2__msg ch = {.kind = T2__MSG_CHALLENGE, .u.challenge.nonce = "00ff"}, w = {.kind = T2__MSG_WELCOME, .u.welcome.mac = "aa"};
    CHECK_OK(round_trip(&ch, &o));
    CHECK_STR(o.u.challenge.nonce, "00ff");
    t2__msg_free(&o);
    CHECK_OK(round_trip(&w, &o));
    CHECK_STR(o.u.welcome.mac, "aa");
    t2__msg_free(&o);
    CHECK(!t2__msg_from_runner(T2__MSG_TRAIN) && !t2__msg_from_runner(T2__MSG_SPEC));

    hp = t2__val_map();
    t2__val_map_set(hp, "units", t2__val_int(64));
    t2__msg as = {.kind = T2__MSG_ASSIGN,
                  .u.assign = {.trial_id = 7, .seed = 0x8000000000000001ull, .threads = 2, .parts = 3, .hparams = hp,
                               .restore_path = "/c/u.tar", .warm_start = 0}};
    CHECK_OK(round_trip(&as, &o));
    CHECK(o.kind == T2__MSG_ASSIGN && o.u.assign.trial_id == 7 && o.u.assign.seed == 0x8000000000000001ull);
    CHECK(o.u.assign.threads == 2 && o.u.assign.parts == 3 && !o.u.assign.warm_start);
    CHECK_STR(o.u.assign.restore_path, "/c/u.tar");
    CHECK(t2__val_map_get(o.u.assign.hparams, "units")->i == 64);
    t2__msg_free(&o);
    /* The controller passes the hparams' JSON as it stored it: the same message, byte for byte. */
    char *hp_json = NULL;
    CHECK_OK(t2__val_to_json(hp, &hp_json, NULL));
    as.u.assign.hparams_json = hp_json;
    CHECK_OK(round_trip(&as, &o));
    CHECK(t2__val_map_get(o.u.assign.hparams, "units")->i == 64);
    t2__msg_free(&o);
    as.u.assign.hparams_json = NULL;
    free(hp_json);
    as.u.assign.restore_path = NULL;
    CHECK_OK(round_trip(&as, &o));
    CHECK(o.u.assign.restore_path == NULL);
    t2__msg_free(&o);
    t2__val_free(hp);
    t2__val *v = NULL;
    as.u.assign.hparams = NULL;
    CHECK_RC(t2__msg_encode(&as, &v), T2_EINVAL);
    CHECK(v == NULL && strstr(t2_errmsg(), "assign message without hparams"));
    same_refusal(&as, T2_EINVAL);
    t2_clearerr();
    CHECK(!t2__msg_from_runner(T2__MSG_ASSIGN));

    /* threads: a new count for the running trial, 1..64. */
    t2__msg th = {.kind = T2__MSG_THREADS, .u.threads.threads = 5};
    CHECK_OK(round_trip(&th, &o));
    CHECK(o.kind == T2__MSG_THREADS && o.u.threads.threads == 5);
    t2__msg_free(&o);
    CHECK(!t2__msg_from_runner(T2__MSG_THREADS));
    th.u.threads.threads = 0;
    CHECK_RC(t2__msg_encode(&th, &v), T2_EINVAL);
    CHECK(v == NULL && strstr(t2_errmsg(), "threads message with 0 threads"));
    same_refusal(&th, T2_EINVAL);
    t2_clearerr();
}

static void bad_messages(void)
{
    refused("[1,2]", T2_EFORMAT, "not a JSON object");
    refused("{\"kind\":\"ready\"}", T2_EFORMAT, "without a type");
    refused("{\"type\":7}", T2_EFORMAT, "without a type");
    refused("{\"type\":\"rm -rf\"}", T2_EFORMAT, "unknown message type 'rm -rf'");
    refused("{\"type\":\"\\u001b[2J\"}", T2_EFORMAT, "unknown message type '?[2J'");
    /* Versions: absent, other. */
    refused("{\"type\":\"ready\",\"batches_per_epoch\":1,\"params\":1}", T2_EFORMAT, "version is missing");
    refused("{\"type\":\"ready\",\"batches_per_epoch\":1,\"params\":1,\"version\":99}", T2_EUNSUPPORTED, "version 99");
    refused("{\"type\":\"hello\",\"trial_id\":1,\"nonce\":\"a\",\"mac\":\"b\",\"version\":0}", T2_EUNSUPPORTED, "version 0");
    /* Each required field missing, wrong types, ranges. */
    refused("{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1}", T2_EFORMAT, "values is missing");
    refused("{\"type\":\"metrics\",\"batches\":1,\"values\":{}}", T2_EFORMAT, "kind is missing");
    refused("{\"type\":\"metrics\",\"kind\":\"test\",\"batches\":1,\"values\":{}}", T2_EFORMAT, "neither training");
    refused("{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":-1,\"values\":{}}", T2_EFORMAT, "batches is negative");
    refused("{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":\"1\",\"values\":{}}", T2_EFORMAT,
            "batches is not an integer");
    refused("{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1,\"values\":{\"loss\":\"low\"}}", T2_EFORMAT,
            "'loss', which is not a number");
    refused("{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1,\"values\":[]}", T2_EFORMAT,
            "values is not a map");
    refused("{\"type\":\"metrics\",\"kind\":\"training\",\"batches\":1,\"values\":{},\"batches_per_s\":1}", T2_EFORMAT,
            "samples_per_s is missing");
    refused("{\"type\":\"checkpoint\",\"ext\":\".tar\",\"batches\":1,\"bytes\":1}", T2_EFORMAT, "uuid is missing");
    refused("{\"type\":\"checkpoint\",\"uuid\":\"u\",\"ext\":\".tar\",\"batches\":1,\"bytes\":1,\"metric\":\"x\"}",
            T2_EFORMAT, "metric is not a number");
    refused("{\"type\":\"error\",\"where\":\"x\",\"batches\":0}", T2_EFORMAT, "message is missing");
    refused("{\"type\":\"error\",\"where\":\"x\",\"message\":\"y\",\"batches\":0,\"fatal\":1}", T2_EFORMAT,
            "fatal is not a boolean");
    refused("{\"type\":\"done\"}", T2_EFORMAT, "done message: batches is missing");
    refused("{\"type\":\"train\",\"length\":-5}", T2_EFORMAT, "length is negative");
    refused("{\"type\":\"train\",\"length\":5,\"report_at\":[3,2]}", T2_EFORMAT, "ascending");
    refused("{\"type\":\"train\",\"length\":5,\"report_at\":[1,\"2\"]}", T2_EFORMAT, "ascending");
    refused("{\"type\":\"validated\"}", T2_EFORMAT, "new_best is missing");
    refused("{\"type\":\"spec\",\"config_yaml\":\"a\",\"trial_object\":\"b\",\"hparams\":{},\"trial_id\":1,"
            "\"experiment_id\":1,\"threads\":1,\"parts\":1,\"seed_hi\":1,\"seed_lo\":1}", T2_EFORMAT, "overrides is missing");
    refused("{\"type\":\"spec\",\"config_yaml\":\"a\",\"trial_object\":\"b\",\"hparams\":{},\"trial_id\":1,"
            "\"experiment_id\":1,\"threads\":1,\"parts\":1,\"seed_hi\":4294967296,\"seed_lo\":1,\"overrides\":[]}", T2_EFORMAT,
            "seed_hi is over 32 bits");
    refused("{\"type\":\"spec\",\"config_yaml\":\"a\",\"trial_object\":\"b\",\"hparams\":{},\"trial_id\":1,"
            "\"experiment_id\":1,\"threads\":1,\"parts\":1,\"seed_hi\":1,\"seed_lo\":1,\"overrides\":[1]}", T2_EFORMAT,
            "not a list of strings");
    refused("{\"type\":\"spec\",\"config_yaml\":\"a\",\"trial_object\":\"b\",\"hparams\":[],\"trial_id\":1,"
            "\"experiment_id\":1,\"threads\":1,\"parts\":1,\"seed_hi\":1,\"seed_lo\":1,\"overrides\":[]}", T2_EFORMAT,
            "hparams is not a map");
    refused("{\"type\":\"finished\"}", T2_EFORMAT, "finished message: status is missing");
    refused("{\"type\":\"threads\"}", T2_EFORMAT, "threads message: threads is missing");
    refused("{\"type\":\"threads\",\"threads\":0}", T2_EFORMAT, "threads message: threads is not in 1..64");
    refused("{\"type\":\"threads\",\"threads\":65}", T2_EFORMAT, "threads is not in 1..64");
    refused("{\"type\":\"threads\",\"threads\":2.5}", T2_EFORMAT, "threads message: threads is not an integer");
    refused("{\"type\":\"assign\",\"trial_id\":1,\"seed_hi\":0,\"seed_lo\":0,\"threads\":1,\"hparams\":{}}",
            T2_EFORMAT, "assign message: parts is missing");
    refused("{\"type\":\"assign\",\"trial_id\":1,\"seed_hi\":0,\"seed_lo\":0,\"threads\":1,\"parts\":0,"
            "\"hparams\":{}}", T2_EFORMAT, "assign message: parts is not in 1..64");
    refused("{\"type\":\"finished\",\"status\":256}", T2_EFORMAT, "status is over 255");
    refused("{\"type\":\"finished\",\"status\":-1}", T2_EFORMAT, "status is negative");
    refused("{\"type\":\"finished\",\"status\":0,\"log_end\":-5}", T2_EFORMAT, "log_end is negative");
    refused("{\"type\":\"finished\",\"status\":0,\"log_end\":\"9\"}", T2_EFORMAT, "log_end is not an integer");
    refused("{\"type\":\"assign\",\"trial_id\":1,\"seed_hi\":0,\"seed_lo\":4294967296,\"threads\":1,\"parts\":1,"
            "\"hparams\":{}}", T2_EFORMAT, "seed_lo is over 32 bits");
    refused("{\"type\":\"assign\",\"trial_id\":1,\"seed_hi\":0,\"seed_lo\":0,\"threads\":1,\"parts\":1,\"hparams\":[]}",
            T2_EFORMAT, "hparams is not a map");
    /* Unknown fields are ignored; an optional field may be null. */
    t2__msg m;
    CHECK_OK(decode_text("{\"type\":\"done\",\"batches\":3,\"later\":[1,{}]}", &m));
    CHECK(m.kind == T2__MSG_DONE && m.u.done.batches == 3);
    t2__msg_free(&m);
    CHECK_OK(decode_text("{\"type\":\"checkpoint\",\"uuid\":\"u\",\"ext\":\".tar\",\"batches\":1,\"bytes\":1,"
                         "\"metric\":null}", &m));
    CHECK(!m.u.checkpoint.has_metric);
    t2__msg_free(&m);
    /* A message that breaks its own rules is not encoded. */
    t2__val *v = NULL;
    t2__msg nouuid = {.kind = T2__MSG_CHECKPOINT, .u.checkpoint = {.ext = ".tar"}};
    CHECK_RC(t2__msg_encode(&nouuid, &v), T2_EINVAL);
    CHECK(v == NULL && strstr(t2_errmsg(), "without uuid"));
    same_refusal(&nouuid, T2_EINVAL);
    t2__msg neg = {.kind = T2__MSG_DONE, .u.done.batches = -1};
    CHECK_RC(t2__msg_encode(&neg, &v), T2_EINVAL);
    same_refusal(&neg, T2_EINVAL);
    t2__msg none = {.kind = T2__MSG_KINDS};
    CHECK_RC(t2__msg_encode(&none, &v), T2_EINVAL);
    same_refusal(&none, T2_EINVAL);
    t2_clearerr();
}

static void over_a_channel(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    t2__msg done = {.kind = T2__MSG_DONE, .u.done.batches = 11}, m;
    CHECK_OK(t2__msg_send(sv[0], &done));
    CHECK_OK(t2__msg_recv(sv[1], &m));
    CHECK(m.kind == T2__MSG_DONE && m.u.done.batches == 11);
    t2__msg_free(&m);
    /* A frame over the limit of a peer not yet trusted is refused before anything is allocated. */
    t2__msg spec = {.kind = T2__MSG_CHALLENGE, .u.challenge.nonce = "0123456789012345678901234567890123456789"};
    CHECK_OK(t2__msg_send(sv[0], &spec));
    CHECK_RC(t2__msg_recv_by(sv[1], &m, 16, t2__now() + 1), T2_EFORMAT);
    CHECK(strstr(t2_errmsg(), "too large"));
    close(sv[0]);
    close(sv[1]);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    /* Silence past the deadline, then a clean end. */
    CHECK_RC(t2__msg_recv_by(sv[1], &m, 1024, t2__now() + 0.05), T2_EIO);
    close(sv[0]);
    CHECK_OK(t2__msg_recv(sv[1], &m));
    CHECK(m.kind == T2__MSG_NONE);
    close(sv[1]);
    /* Garbage in a frame is a format error, not a crash. */
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    const unsigned char junk[] = {5, 0, 0, 0, '{', '"', 't', 'y', 'p'};
    CHECK(write(sv[0], junk, sizeof junk) == (ssize_t)sizeof junk);
    CHECK_RC(t2__msg_recv(sv[1], &m), T2_EFORMAT);
    close(sv[0]);
    close(sv[1]);
    t2_clearerr();
}

/* Sends raw bytes on fd (a test's own frames, whole or cut). */
static void put(int fd, const void *p, size_t n) { CHECK(write(fd, p, n) == (ssize_t)n); }

/* The writer closes its end: the reader must then see a clean end of stream. Closes both ends. */
static void expect_clean_end(t2__chan_reader *r, int sv[2])
{
    t2__msg m;
    int got;
    close(sv[0]);
    CHECK_OK(t2__msg_recv_buffered(r, sv[1], 1, &m, &got));
    CHECK(got && m.kind == T2__MSG_NONE);
    close(sv[1]);
}

/* The reader starts over on a new stream sv. */
static void new_stream(t2__chan_reader *r, int sv[2])
{
    t2__chan_reader_reset(r);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
}

/* The controller's buffered reader: several messages from one read, a frame cut anywhere waits for
 * its rest without blocking, a stream that ends inside a frame is an error, an oversized frame is
 * refused and the rest of the stream dropped until its end. */
static void buffered_reader(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    t2__chan_reader r = {0};
    t2__msg m;
    int got;
    /* Nothing buffered and not allowed to read: nothing, and no system call blocks. */
    CHECK_OK(t2__msg_recv_buffered(&r, sv[1], 0, &m, &got));
    CHECK(!got && !t2__chan_reader_has_frame(&r));
    /* Three messages written, one read takes them all; the next two come without reading. */
    for (int i = 1; i <= 3; i++) {
        t2__msg d = {.kind = T2__MSG_DONE, .u.done.batches = i};
        CHECK_OK(t2__msg_send(sv[0], &d));
    }
    for (int i = 1; i <= 3; i++) {
        CHECK_OK(t2__msg_recv_buffered(&r, sv[1], i == 1, &m, &got));
        CHECK(got && m.kind == T2__MSG_DONE && m.u.done.batches == i);
        t2__msg_free(&m);
        CHECK(t2__chan_reader_has_frame(&r) == (i < 3));
    }
    /* A frame cut in its header, then in its body: no message until it is whole. */
    const char body[] = "{\"type\":\"done\",\"batches\":7}";
    unsigned char hdr[4] = {(unsigned char)(sizeof body - 1), 0, 0, 0};
    put(sv[0], hdr, 2);
    CHECK_OK(t2__msg_recv_buffered(&r, sv[1], 1, &m, &got));
    CHECK(!got && !t2__chan_reader_has_frame(&r));
    put(sv[0], hdr + 2, 2);
    put(sv[0], body, 5);
    CHECK_OK(t2__msg_recv_buffered(&r, sv[1], 1, &m, &got));
    CHECK(!got);
    put(sv[0], body + 5, sizeof body - 1 - 5);
    CHECK_OK(t2__msg_recv_buffered(&r, sv[1], 1, &m, &got));
    CHECK(got && m.kind == T2__MSG_DONE && m.u.done.batches == 7);
    t2__msg_free(&m);
    /* A clean end between frames. */
    expect_clean_end(&r, sv);
    /* The end inside a frame. */
    new_stream(&r, sv);
    put(sv[0], hdr, 4);
    put(sv[0], body, 3);
    close(sv[0]);
    CHECK_OK(t2__msg_recv_buffered(&r, sv[1], 1, &m, &got));
    CHECK(!got); /* the data came; the end is the next read's */
    CHECK_RC(t2__msg_recv_buffered(&r, sv[1], 1, &m, &got), T2_EIO);
    CHECK(got && strstr(t2_errmsg(), "ended inside a frame"));
    close(sv[1]);
    /* A 2 GB length prefix: refused at once, then the stream is dropped up to its end. */
    new_stream(&r, sv);
    const unsigned char huge[] = {0, 0, 0, 0x80, 'x', 'y'};
    put(sv[0], huge, sizeof huge);
    CHECK_RC(t2__msg_recv_buffered(&r, sv[1], 1, &m, &got), T2_EFORMAT);
    CHECK(strstr(t2_errmsg(), "too large"));
    t2_clearerr();
    CHECK(!t2__chan_reader_has_frame(&r));
    t2__msg d = {.kind = T2__MSG_DONE, .u.done.batches = 1};
    CHECK_OK(t2__msg_send(sv[0], &d));
    CHECK_OK(t2__msg_recv_buffered(&r, sv[1], 1, &m, &got));
    CHECK(!got); /* dropped */
    expect_clean_end(&r, sv);
    /* Bad JSON in a whole frame: a format error, and the frame after it still reads. */
    new_stream(&r, sv);
    const unsigned char junk[] = {3, 0, 0, 0, '{', '"', 't'};
    put(sv[0], junk, sizeof junk);
    CHECK_OK(t2__msg_send(sv[0], &d));
    CHECK_RC(t2__msg_recv_buffered(&r, sv[1], 1, &m, &got), T2_EFORMAT);
    t2_clearerr();
    CHECK_OK(t2__msg_recv_buffered(&r, sv[1], 0, &m, &got));
    CHECK(got && m.kind == T2__MSG_DONE);
    t2__msg_free(&m);
    /* A frame bigger than one read's chunk arrives whole over several reads. */
    t2__chan_reader_reset(&r);
    size_t big = 100000; /* over one read's 64 KB chunk, under a socket buffer */
    char *msg = malloc(big + 1);
    CHECK(msg != NULL);
    if (msg) {
        memset(msg, 'a', big);
        msg[big] = '\0';
        t2__msg e = {.kind = T2__MSG_ERROR, .u.error = {.where = "test", .message = msg}};
        CHECK_OK(t2__msg_send(sv[0], &e));
        int reads = 0;
        do {
            CHECK_OK(t2__msg_recv_buffered(&r, sv[1], 1, &m, &got));
            reads++;
        } while (!got && reads < 100);
        CHECK(got && m.kind == T2__MSG_ERROR && strlen(m.u.error.message) == big);
        t2__msg_free(&m);
        free(msg);
    }
    close(sv[0]);
    close(sv[1]);
    t2__chan_reader_free(&r);
    t2_clearerr();
}

/* A peer that closes with data unread resets the channel: what it sent before is read, then the
 * end of stream, not an error (the controller took the reset for the trial's failure). */
static void reset_is_end(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    t2__chan_writer w = {0};
    t2__msg done = {.kind = T2__MSG_DONE, .u.done.batches = 3}, ex = {.kind = T2__MSG_EXIT};
    CHECK_OK(t2__msg_put(&w, &done));
    CHECK_OK(t2__chan_writer_flush(&w, sv[1])); /* the "runner" reports */
    CHECK_OK(t2__msg_put(&w, &ex));
    CHECK_OK(t2__chan_writer_flush(&w, sv[0])); /* the "controller" sends an op it never reads */
    close(sv[1]);                               /* unread: the peer's close resets sv[0] */
    char probe;
    ssize_t raw = recv(sv[0], &probe, 1, MSG_PEEK);
    CHECK(raw == 1); /* the report is still there before the reset shows */
    t2__chan_reader r = {0};
    t2__msg m;
    int got;
    CHECK_OK(t2__msg_recv_buffered(&r, sv[0], 1, &m, &got));
    CHECK(got && m.kind == T2__MSG_DONE && m.u.done.batches == 3);
    t2__msg_free(&m);
    CHECK_OK(t2__msg_recv_buffered(&r, sv[0], 1, &m, &got));
    CHECK(got && m.kind == T2__MSG_NONE);
    close(sv[0]);
    t2__chan_reader_free(&r);
    t2__chan_writer_free(&w);
}

/* The held writer (channel_writer.c): frames put one by one go out in one write, in order, and
 * read back whole; a flush to a peer that is gone fails, and the writer is empty after it. */
static void held_writer(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    t2__chan_writer w = {0};
    t2__msg a = {.kind = T2__MSG_TRAIN, .u.train.length = 3}, b = {.kind = T2__MSG_EXIT},
            c = {.kind = T2__MSG_THREADS, .u.threads.threads = 2};
    CHECK_OK(t2__msg_put(&w, &a));
    CHECK(w.len > 4 && w.since > 0);
    CHECK_OK(t2__msg_put(&w, &b));
    CHECK_OK(t2__msg_put(&w, &c));
    size_t held = w.len;
    CHECK_OK(t2__chan_writer_flush(&w, sv[0]));
    CHECK(w.len == 0);
    char buf[512];
    CHECK(read(sv[1], buf, sizeof buf) == (ssize_t)held); /* one write: all three at once */
    t2__chan_reader r = {0};
    CHECK_OK(t2__msg_put(&w, &a));
    CHECK_OK(t2__msg_put(&w, &b));
    CHECK_OK(t2__chan_writer_flush(&w, sv[0]));
    t2__msg m;
    int got;
    CHECK_OK(t2__msg_recv_buffered(&r, sv[1], 1, &m, &got));
    CHECK(got && m.kind == T2__MSG_TRAIN && m.u.train.length == 3);
    t2__msg_free(&m);
    CHECK_OK(t2__msg_recv_buffered(&r, sv[1], 0, &m, &got)); /* already in the buffer */
    CHECK(got && m.kind == T2__MSG_EXIT);
    t2__msg_free(&m);
    close(sv[1]);
    signal(SIGPIPE, SIG_IGN);
    CHECK_OK(t2__msg_put(&w, &c));
    CHECK_RC(t2__chan_writer_flush(&w, sv[0]), T2_EIO);
    CHECK(w.len == 0);
    t2_clearerr();
    close(sv[0]);
    t2__chan_reader_free(&r);
    t2__chan_writer_free(&w);
}

int main(void)
{
    runner_kinds();
    controller_kinds();
    bad_messages();
    over_a_channel();
    buffered_reader();
    held_writer();
    reset_is_end();
    /* Every kind has a name, and decoding a name gives the kind back. */
    for (int k = T2__MSG_NONE + 1; k < T2__MSG_KINDS; k++) CHECK(strlen(t2__msg_kind_name((t2__msg_kind)k)) > 0);
    return check_report("test_protocol");
}
