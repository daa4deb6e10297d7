/* msg_decode.c — a received JSON tree to a typed message (protocol.h), every field checked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "protocol.h"
#include "runner/channel.h"

/* Reading one message; the first problem is kept (T2_EFORMAT naming the kind and the field). */
typedef struct reader {
    const t2__val *m;
    const char *kind;
    int rc;
} reader;

static void bad(reader *r, const char *key, const char *what)
{
    if (!r->rc) r->rc = t2_seterr(T2_EFORMAT, "protocol: %s message: %s %s", r->kind, key, what);
}

static const t2__val *field(reader *r, const char *key, t2__val_kind kind, int required)
{
    const t2__val *v = t2__val_map_get(r->m, key);
    if (!v || (!required && v->kind == T2__VAL_NULL)) {
        if (required) bad(r, key, "is missing");
        return NULL;
    }
    if (v->kind != kind) {
        static const char *const names[] = {"null", "a boolean", "an integer", "a number", "a string", "a list", "a map"};
        char what[64];
        snprintf(what, sizeof what, "is not %s", names[kind]);
        bad(r, key, what);
        return NULL;
    }
    return v;
}

static const char *str(reader *r, const char *key, int required)
{
    const t2__val *v = field(r, key, T2__VAL_STRING, required);
    return v ? v->s : NULL;
}

static int64_t count(reader *r, const char *key)
{
    const t2__val *v = field(r, key, T2__VAL_INT, 1);
    if (v && v->i < 0) bad(r, key, "is negative");
    return v && v->i >= 0 ? v->i : 0;
}

static int flag(reader *r, const char *key)
{
    const t2__val *v = field(r, key, T2__VAL_BOOL, 0);
    return v ? v->b : 0;
}

/* A number (integer or not); NAN when absent and optional. */
static double number(reader *r, const char *key, int required)
{
    const t2__val *v = t2__val_map_get(r->m, key);
    if ((!v || v->kind == T2__VAL_NULL) && !required) return NAN;
    if (!v || (v->kind != T2__VAL_INT && v->kind != T2__VAL_DOUBLE)) {
        bad(r, key, v ? "is not a number" : "is missing");
        return NAN;
    }
    return v->kind == T2__VAL_INT ? (double)v->i : v->d;
}

static void check_version(reader *r)
{
    const t2__val *v = field(r, "version", T2__VAL_INT, 1);
    if (v && v->i != T2__PROTOCOL_VERSION && !r->rc)
        r->rc = t2_seterr(T2_EUNSUPPORTED, "protocol: the peer speaks protocol version %lld, this t2exp %d (a runner "
                          "from another t2exp build?)", (long long)v->i, T2__PROTOCOL_VERSION);
}

static void read_metrics(reader *r, t2__msg *out)
{
    const char *k = str(r, "kind", 1);
    if (k && strcmp(k, "training") != 0 && strcmp(k, "validation") != 0) bad(r, "kind", "is neither training nor validation");
    out->u.metrics.validation = k && strcmp(k, "validation") == 0;
    out->u.metrics.batches = count(r, "batches");
    out->u.metrics.epoch = number(r, "epoch", 0);
    const t2__val *vals = field(r, "values", T2__VAL_MAP, 1);
    for (size_t i = 0; vals && i < vals->n; i++)
        if (vals->items[i]->kind != T2__VAL_INT && vals->items[i]->kind != T2__VAL_DOUBLE) {
            char what[80];
            snprintf(what, sizeof what, "has '%.40s', which is not a number", vals->keys[i]);
            bad(r, "values", what);
        }
    out->u.metrics.values = vals;
    if (!out->u.metrics.validation && t2__val_map_get(r->m, "batches_per_s")) {
        t2__msg_timing *t = &out->u.metrics.timing;
        out->u.metrics.has_timing = 1;
        t->batches_per_s = number(r, "batches_per_s", 1);
        t->samples_per_s = number(r, "samples_per_s", 1);
        t->data_s = number(r, "data_s", 1);
        t->compute_s = number(r, "compute_s", 1);
        t->comm_s = number(r, "comm_s", 1);
    }
    out->u.metrics.ask = flag(r, "ask");
}

static void read_train(reader *r, t2__msg *out)
{
    out->u.train.length = count(r, "length");
    out->u.train.last = flag(r, "last");
    const t2__val *l = field(r, "report_at", T2__VAL_LIST, 0);
    if (!l || l->n == 0) return;
    if (!(out->owned_steps = malloc(l->n * sizeof *out->owned_steps))) {
        if (!r->rc) r->rc = t2_seterr(T2_ENOMEM, "protocol: out of memory");
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        const t2__val *s = l->items[i];
        if (s->kind != T2__VAL_INT || s->i < 0 || (i > 0 && s->i <= out->owned_steps[i - 1])) {
            bad(r, "report_at", "is not an ascending list of batch counts");
            return;
        }
        out->owned_steps[i] = s->i;
    }
    out->u.train.report_at = out->owned_steps;
    out->u.train.nreport_at = l->n;
}

/* A thread or part count: 1..64 (t2_set_num_threads's range). */
static int64_t thread_count(reader *r, const char *key)
{
    int64_t n = count(r, key);
    if (!r->rc && (n < 1 || n > 64)) bad(r, key, "is not in 1..64");
    return n;
}

/* The 64-bit seed from its two 32-bit halves. */
static uint64_t seed(reader *r)
{
    int64_t hi = count(r, "seed_hi"), lo = count(r, "seed_lo");
    if (hi > 0xffffffffLL) bad(r, "seed_hi", "is over 32 bits");
    if (lo > 0xffffffffLL) bad(r, "seed_lo", "is over 32 bits");
    return (uint64_t)hi << 32 | (uint64_t)lo;
}

static void read_assign(reader *r, t2__msg *out)
{
    out->u.assign.trial_id = count(r, "trial_id");
    out->u.assign.seed = seed(r);
    out->u.assign.threads = count(r, "threads");
    out->u.assign.parts = thread_count(r, "parts");
    out->u.assign.hparams = field(r, "hparams", T2__VAL_MAP, 1);
    out->u.assign.restore_path = str(r, "restore_path", 0);
    out->u.assign.warm_start = flag(r, "warm_start");
}

static void read_spec(reader *r, t2__msg *out)
{
    out->u.spec.config_yaml = str(r, "config_yaml", 1);
    out->u.spec.trial_object = str(r, "trial_object", 1);
    out->u.spec.ckpt_dir = str(r, "ckpt_dir", 0);
    out->u.spec.restore_path = str(r, "restore_path", 0);
    out->u.spec.hparams = field(r, "hparams", T2__VAL_MAP, 1);
    out->u.spec.trial_id = count(r, "trial_id");
    out->u.spec.experiment_id = count(r, "experiment_id");
    out->u.spec.threads = count(r, "threads");
    out->u.spec.parts = thread_count(r, "parts");
    out->u.spec.seed = seed(r);
    out->u.spec.warm_start = flag(r, "warm_start");
    const t2__val *ov = field(r, "overrides", T2__VAL_LIST, 1);
    if (!ov || r->rc) return;
    if (ov->n && !(out->owned_strings = malloc(ov->n * sizeof *out->owned_strings))) {
        r->rc = t2_seterr(T2_ENOMEM, "protocol: out of memory");
        return;
    }
    for (size_t i = 0; i < ov->n; i++) {
        if (ov->items[i]->kind != T2__VAL_STRING) {
            bad(r, "overrides", "is not a list of strings");
            return;
        }
        out->owned_strings[i] = ov->items[i]->s;
    }
    out->u.spec.overrides = out->owned_strings;
    out->u.spec.noverrides = ov->n;
}

static void read_body(reader *r, t2__msg *out)
{
    switch (out->kind) {
    case T2__MSG_READY:
        check_version(r);
        out->u.ready.batches_per_epoch = count(r, "batches_per_epoch");
        out->u.ready.params = count(r, "params");
        out->u.ready.blas = str(r, "blas", 0);
        out->u.ready.version = T2__PROTOCOL_VERSION;
        break;
    case T2__MSG_METRICS:
        read_metrics(r, out);
        break;
    case T2__MSG_CHECKPOINT:
        out->u.checkpoint.uuid = str(r, "uuid", 1);
        out->u.checkpoint.ext = str(r, "ext", 1);
        out->u.checkpoint.batches = count(r, "batches");
        out->u.checkpoint.bytes = count(r, "bytes");
        out->u.checkpoint.metric = number(r, "metric", 0);
        out->u.checkpoint.has_metric = !isnan(out->u.checkpoint.metric);
        break;
    case T2__MSG_CHECKPOINT_FAILED:
        out->u.checkpoint_failed.message = str(r, "message", 1);
        out->u.checkpoint_failed.batches = count(r, "batches");
        break;
    case T2__MSG_DONE:
        out->u.done.batches = count(r, "batches");
        break;
    case T2__MSG_STOPPED:
        out->u.stopped.batches = count(r, "batches");
        break;
    case T2__MSG_ERROR:
        out->u.error.where = str(r, "where", 1);
        out->u.error.message = str(r, "message", 1);
        out->u.error.batches = count(r, "batches");
        out->u.error.invalid_hparams = flag(r, "invalid_hparams");
        out->u.error.fatal = flag(r, "fatal");
        break;
    case T2__MSG_HELLO:
        check_version(r);
        out->u.hello.trial_id = count(r, "trial_id");
        out->u.hello.nonce = str(r, "nonce", 1);
        out->u.hello.mac = str(r, "mac", 1);
        out->u.hello.version = T2__PROTOCOL_VERSION;
        break;
    case T2__MSG_TRAIN:
        read_train(r, out);
        break;
    case T2__MSG_EXIT:
    case T2__MSG_STOP:
        break;
    case T2__MSG_VALIDATED: {
        const t2__val *b = field(r, "new_best", T2__VAL_BOOL, 1);
        out->u.validated.new_best = b ? b->b : 0;
        out->u.validated.prune = flag(r, "prune");
        break;
    }
    case T2__MSG_SPEC:
        read_spec(r, out);
        break;
    case T2__MSG_CHALLENGE:
        out->u.challenge.nonce = str(r, "nonce", 1);
        break;
    case T2__MSG_WELCOME:
        out->u.welcome.mac = str(r, "mac", 1);
        break;
    case T2__MSG_FINISHED: {
        out->u.finished.status = count(r, "status");
        if (out->u.finished.status > 255) bad(r, "status", "is over 255");
        const t2__val *end = field(r, "log_end", T2__VAL_INT, 0);
        if (end && end->i < 0) bad(r, "log_end", "is negative");
        out->u.finished.log_end = end && end->i >= 0 ? end->i : -1;
        break;
    }
    case T2__MSG_ASSIGN:
        read_assign(r, out);
        break;
    case T2__MSG_THREADS:
        out->u.threads.threads = thread_count(r, "threads");
        break;
    default:
        break;
    }
}

int t2__msg_decode(t2__val *doc, t2__msg *out)
{
    memset(out, 0, sizeof *out);
    out->doc = doc;
    if (!doc || doc->kind != T2__VAL_MAP) {
        t2__msg_free(out);
        return t2_seterr(T2_EFORMAT, "protocol: a message that is not a JSON object");
    }
    const t2__val *type = t2__val_map_get(doc, "type");
    if (!type || type->kind != T2__VAL_STRING) {
        t2__msg_free(out);
        return t2_seterr(T2_EFORMAT, "protocol: a message without a type");
    }
    for (int k = T2__MSG_NONE + 1; k < T2__MSG_KINDS; k++)
        if (strcmp(type->s, t2__msg_kind_name((t2__msg_kind)k)) == 0) out->kind = (t2__msg_kind)k;
    if (out->kind == T2__MSG_NONE) {
        char name[48];
        snprintf(name, sizeof name, "%s", type->s);
        for (char *c = name; *c; c++) /* a peer's bytes reach a terminal only as printable ones */
            if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f) *c = '?';
        t2__msg_free(out);
        return t2_seterr(T2_EFORMAT, "protocol: unknown message type '%s'", name);
    }
    reader r = {.m = doc, .kind = t2__msg_kind_name(out->kind), .rc = T2_OK};
    read_body(&r, out);
    if (r.rc) {
        t2__msg_free(out);
        return r.rc;
    }
    return T2_OK;
}

void t2__msg_free(t2__msg *m)
{
    t2__val_free(m->doc);
    free(m->owned_steps);
    free((void *)m->owned_strings);
    memset(m, 0, sizeof *m);
}

int t2__msg_send(int fd, const t2__msg *m)
{
    t2__chan_writer w = {0};
    int rc = t2__msg_put(&w, m);
    if (!rc) rc = t2__chan_writer_flush(&w, fd);
    t2__chan_writer_free(&w);
    return rc;
}

/* The frame's body is written straight after room for its header in the writer's buffer: no tree
 * and no copy a message (the controller sends one or two a trial, a runner a few). */
int t2__msg_put(t2__chan_writer *w, const t2__msg *m)
{
    t2__json_out o = {.p = w->buf, .n = w->len + 4, .cap = w->cap};
    int rc = t2__msg_encode_json(m, &o);
    w->buf = o.p; /* it may have grown */
    w->cap = o.cap;
    if (rc) return rc;
    size_t len = o.n - w->len - 4;
    if (len > T2__CHANNEL_MAX_FRAME)
        return t2_seterr(T2_EINVAL, "channel: message of %zu bytes exceeds the frame limit", len);
    if (w->len == 0) w->since = t2__now();
    t2__channel_frame_header((unsigned char *)w->buf + w->len, len);
    w->len = o.n;
    return T2_OK;
}

static int decoded(int rc, t2__val *v, t2__msg *out)
{
    if (rc) {
        t2__val_free(v);
        memset(out, 0, sizeof *out);
        return rc;
    }
    if (!v) {
        memset(out, 0, sizeof *out);
        out->kind = T2__MSG_NONE;
        return T2_OK;
    }
    return t2__msg_decode(v, out);
}

int t2__msg_recv(int fd, t2__msg *out)
{
    t2__val *v = NULL;
    int rc = t2__channel_recv(fd, &v);
    return decoded(rc, v, out);
}

int t2__msg_recv_by(int fd, t2__msg *out, size_t max_frame, double deadline)
{
    t2__val *v = NULL;
    int rc = t2__channel_recv_by(fd, &v, max_frame, deadline);
    return decoded(rc, v, out);
}

/* A frame's body to a message: a runner's per-trial message by msg_fast.c, the rest (and any
 * text it declines) through the tree. */
static int decode_frame(char *text, size_t len, void *ud)
{
    t2__msg *out = ud;
    if (t2__msg_decode_fast(text, len, out)) return T2_OK;
    t2__val *v = NULL;
    size_t used;
    int rc = t2__val_from_json(text, len, &v, &used);
    return decoded(rc, v, out);
}

int t2__msg_recv_buffered(t2__chan_reader *r, int fd, int may_read, t2__msg *out, int *got)
{
    memset(out, 0, sizeof *out); /* no frame (nothing yet, the end of the stream, an error): NONE */
    return t2__chan_reader_each(r, fd, may_read, decode_frame, out, got);
}
