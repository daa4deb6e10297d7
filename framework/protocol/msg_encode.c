/* msg_encode.c — a typed message to its JSON tree (protocol.h). Every builder call is checked: out
 * of memory gives an error, never a message with fields missing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "protocol.h"

static const char *const NAMES[T2__MSG_KINDS] = {
    [T2__MSG_NONE] = "",
    [T2__MSG_READY] = "ready",
    [T2__MSG_METRICS] = "metrics",
    [T2__MSG_CHECKPOINT] = "checkpoint",
    [T2__MSG_CHECKPOINT_FAILED] = "checkpoint_failed",
    [T2__MSG_DONE] = "done",
    [T2__MSG_STOPPED] = "stopped",
    [T2__MSG_ERROR] = "error",
    [T2__MSG_HELLO] = "hello",
    [T2__MSG_TRAIN] = "train",
    [T2__MSG_EXIT] = "exit",
    [T2__MSG_VALIDATED] = "validated",
    [T2__MSG_SPEC] = "spec",
    [T2__MSG_CHALLENGE] = "challenge",
    [T2__MSG_WELCOME] = "welcome",
    [T2__MSG_FINISHED] = "finished",
    [T2__MSG_ASSIGN] = "assign",
    [T2__MSG_THREADS] = "threads",
    [T2__MSG_STOP] = "stop",
};

const char *t2__msg_kind_name(t2__msg_kind kind)
{
    return kind >= 0 && kind < T2__MSG_KINDS ? NAMES[kind] : "?";
}

int t2__msg_from_runner(t2__msg_kind kind) { return kind >= T2__MSG_READY && kind <= T2__MSG_FINISHED; }

/* A message's map under construction, as a tree (m) or written straight as JSON text (out: the
 * channel's messages, t2__msg_put, build no tree). Both go through the same put_* calls below, so
 * they hold the same keys in the same order, and the text is byte for byte the tree's JSON
 * (test_protocol checks it). The first failure sticks and later calls do nothing. */
typedef struct builder {
    t2__val *m;
    t2__json_out *out;
    int n; /* keys written to out */
    int rc;
    const char *kind;
} builder;

/* The key, in text mode; 0 when nothing should be written. */
static int key(builder *b, const char *k)
{
    if (b->rc) return 0;
    if (b->out) {
        t2__json_raw(b->out, b->n++ ? ",\"" : "{\"", 2);
        t2__json_raw(b->out, k, strlen(k)); /* the protocol's keys need no escaping */
        t2__json_raw(b->out, "\":", 2);
    }
    return 1;
}

/* Tree mode: v goes under k (taken; NULL: out of memory). */
static void put(builder *b, const char *k, t2__val *v)
{
    if (b->rc) {
        t2__val_free(v);
        return;
    }
    if (!v || t2__val_map_set(b->m, k, v)) b->rc = T2_ENOMEM;
}

/* v (borrowed) under k: written as it is, or copied into the tree. */
static void put_val(builder *b, const char *k, const t2__val *v)
{
    if (!key(b, k)) return;
    if (b->out) {
        int rc = t2__json_value(b->out, v);
        if (rc) b->rc = rc;
    } else {
        put(b, k, t2__val_copy(v));
    }
}

static void put_int(builder *b, const char *k, int64_t i)
{
    if (!key(b, k)) return;
    if (b->out) t2__json_int(b->out, i);
    else put(b, k, t2__val_int(i));
}

static void put_bool(builder *b, const char *k, int v)
{
    if (!key(b, k)) return;
    if (b->out) t2__json_raw(b->out, v ? "true" : "false", v ? 4 : 5);
    else put(b, k, t2__val_bool(v));
}

/* A double; NAN (only the epoch may be one) as null. */
static void put_double(builder *b, const char *k, double d)
{
    t2__val v = {.kind = isnan(d) ? T2__VAL_NULL : T2__VAL_DOUBLE, .d = d};
    if (!key(b, k)) return;
    if (b->out) {
        int rc = t2__json_value(b->out, &v);
        if (rc) b->rc = rc;
    } else {
        put(b, k, isnan(d) ? t2__val_null() : t2__val_double(d));
    }
}

static void put_str(builder *b, const char *k, const char *s, int required)
{
    if (!s) {
        if (required && !b->rc) b->rc = t2_seterr(T2_EINVAL, "protocol: %s message without %s", b->kind, k);
        return;
    }
    if (!key(b, k)) return;
    if (b->out) t2__json_string(b->out, s);
    else put(b, k, t2__val_string(s));
}

static void put_count(builder *b, const char *k, int64_t n)
{
    if (n < 0 && !b->rc) b->rc = t2_seterr(T2_EINVAL, "protocol: %s message with %s = %lld", b->kind, k, (long long)n);
    put_int(b, k, n);
}

static void put_timing(builder *b, const t2__msg_timing *t)
{
    put_double(b, "batches_per_s", t->batches_per_s);
    put_double(b, "samples_per_s", t->samples_per_s);
    put_double(b, "data_s", t->data_s);
    put_double(b, "compute_s", t->compute_s);
    put_double(b, "comm_s", t->comm_s);
}

/* A list of n counts (ints) or strings, from one of the arrays. */
static void put_list(builder *b, const char *k, const int64_t *counts, const char *const *strs, size_t n)
{
    if (!key(b, k)) return;
    if (b->out) {
        t2__json_raw(b->out, "[", 1);
        for (size_t i = 0; i < n; i++) {
            if (i) t2__json_raw(b->out, ",", 1);
            if (counts) t2__json_int(b->out, counts[i]);
            else t2__json_string(b->out, strs[i]);
        }
        t2__json_raw(b->out, "]", 1);
        return;
    }
    t2__val *l = t2__val_list();
    for (size_t i = 0; l && i < n; i++)
        if (t2__val_list_append(l, counts ? t2__val_int(counts[i]) : t2__val_string(strs[i]))) {
            t2__val_free(l);
            l = NULL;
        }
    put(b, k, l);
}

/* JSON readers keep 53 bits of a number: a seed goes as two halves. */
static void put_seed(builder *b, uint64_t seed)
{
    put_int(b, "seed_hi", (int64_t)(seed >> 32));
    put_int(b, "seed_lo", (int64_t)(seed & 0xffffffffu));
}

static void put_spec(builder *b, const t2__msg *m)
{
    put_str(b, "config_yaml", m->u.spec.config_yaml, 1);
    put_list(b, "overrides", NULL, m->u.spec.overrides, m->u.spec.noverrides);
    put_str(b, "trial_object", m->u.spec.trial_object, 1);
    if (!m->u.spec.hparams && !b->rc) b->rc = t2_seterr(T2_EINVAL, "protocol: spec message without hparams");
    if (m->u.spec.hparams) put_val(b, "hparams", m->u.spec.hparams);
    put_count(b, "trial_id", m->u.spec.trial_id);
    put_count(b, "experiment_id", m->u.spec.experiment_id);
    put_seed(b, m->u.spec.seed);
    put_count(b, "threads", m->u.spec.threads);
    put_count(b, "parts", m->u.spec.parts);
    put_str(b, "ckpt_dir", m->u.spec.ckpt_dir, 0);
    put_str(b, "restore_path", m->u.spec.restore_path, 0);
    put_bool(b, "warm_start", m->u.spec.warm_start);
}

static void put_assign(builder *b, const t2__msg *m)
{
    put_count(b, "trial_id", m->u.assign.trial_id);
    put_seed(b, m->u.assign.seed);
    put_count(b, "threads", m->u.assign.threads);
    put_count(b, "parts", m->u.assign.parts);
    if (!m->u.assign.hparams && !b->rc) b->rc = t2_seterr(T2_EINVAL, "protocol: assign message without hparams");
    if (m->u.assign.hparams_json && b->out) {
        if (key(b, "hparams")) t2__json_raw(b->out, m->u.assign.hparams_json, strlen(m->u.assign.hparams_json));
    } else if (m->u.assign.hparams) {
        put_val(b, "hparams", m->u.assign.hparams);
    }
    put_str(b, "restore_path", m->u.assign.restore_path, 0);
    put_bool(b, "warm_start", m->u.assign.warm_start);
}

static void put_body(builder *b, const t2__msg *m)
{
    switch (m->kind) {
    case T2__MSG_READY:
        put_count(b, "batches_per_epoch", m->u.ready.batches_per_epoch);
        put_count(b, "params", m->u.ready.params);
        put_str(b, "blas", m->u.ready.blas, 0);
        put_int(b, "version", T2__PROTOCOL_VERSION);
        break;
    case T2__MSG_METRICS:
        put_str(b, "kind", m->u.metrics.validation ? "validation" : "training", 1);
        put_count(b, "batches", m->u.metrics.batches);
        put_double(b, "epoch", m->u.metrics.epoch);
        if (m->u.metrics.values) {
            put_val(b, "values", m->u.metrics.values);
        } else {
            t2__val none = {.kind = T2__VAL_MAP};
            put_val(b, "values", &none);
        }
        if (m->u.metrics.has_timing) put_timing(b, &m->u.metrics.timing);
        if (m->u.metrics.ask) put_bool(b, "ask", 1);
        break;
    case T2__MSG_CHECKPOINT:
        put_str(b, "uuid", m->u.checkpoint.uuid, 1);
        put_str(b, "ext", m->u.checkpoint.ext, 1);
        put_count(b, "batches", m->u.checkpoint.batches);
        put_count(b, "bytes", m->u.checkpoint.bytes);
        if (m->u.checkpoint.has_metric) put_double(b, "metric", m->u.checkpoint.metric);
        break;
    case T2__MSG_CHECKPOINT_FAILED:
        put_str(b, "message", m->u.checkpoint_failed.message, 1);
        put_count(b, "batches", m->u.checkpoint_failed.batches);
        break;
    case T2__MSG_DONE:
        put_count(b, "batches", m->u.done.batches);
        break;
    case T2__MSG_STOPPED:
        put_count(b, "batches", m->u.stopped.batches);
        break;
    case T2__MSG_ERROR:
        put_str(b, "where", m->u.error.where, 1);
        put_str(b, "message", m->u.error.message, 1);
        put_count(b, "batches", m->u.error.batches);
        if (m->u.error.invalid_hparams) put_bool(b, "invalid_hparams", 1);
        if (m->u.error.fatal) put_bool(b, "fatal", 1);
        break;
    case T2__MSG_HELLO:
        put_int(b, "trial_id", m->u.hello.trial_id);
        put_str(b, "nonce", m->u.hello.nonce, 1);
        put_str(b, "mac", m->u.hello.mac, 1);
        put_int(b, "version", T2__PROTOCOL_VERSION);
        break;
    case T2__MSG_TRAIN:
        put_count(b, "length", m->u.train.length);
        if (m->u.train.nreport_at) put_list(b, "report_at", m->u.train.report_at, NULL, m->u.train.nreport_at);
        if (m->u.train.last) put_bool(b, "last", 1);
        break;
    case T2__MSG_EXIT:
    case T2__MSG_STOP:
        break;
    case T2__MSG_VALIDATED:
        put_bool(b, "new_best", m->u.validated.new_best);
        if (m->u.validated.prune) put_bool(b, "prune", 1);
        break;
    case T2__MSG_SPEC:
        put_spec(b, m);
        break;
    case T2__MSG_CHALLENGE:
        put_str(b, "nonce", m->u.challenge.nonce, 1);
        break;
    case T2__MSG_WELCOME:
        put_str(b, "mac", m->u.welcome.mac, 1);
        break;
    case T2__MSG_FINISHED:
        put_count(b, "status", m->u.finished.status);
        if (m->u.finished.log_end >= 0) put_count(b, "log_end", m->u.finished.log_end);
        break;
    case T2__MSG_ASSIGN:
        put_assign(b, m);
        break;
    case T2__MSG_THREADS:
        if ((m->u.threads.threads < 1 || m->u.threads.threads > 64) && !b->rc)
            b->rc = t2_seterr(T2_EINVAL, "protocol: threads message with %lld threads (not in 1..64)",
                              (long long)m->u.threads.threads);
        put_count(b, "threads", m->u.threads.threads);
        break;
    default:
        b->rc = t2_seterr(T2_EINVAL, "protocol: no message kind %d", (int)m->kind);
    }
}

int t2__msg_encode(const t2__msg *m, t2__val **out)
{
    *out = NULL;
    builder b = {.m = t2__val_map(), .rc = T2_OK, .kind = t2__msg_kind_name(m->kind)};
    if (!b.m) return t2_seterr(T2_ENOMEM, "protocol: out of memory");
    put_str(&b, "type", b.kind ? b.kind : "?", 1);
    put_body(&b, m);
    if (b.rc) {
        t2__val_free(b.m);
        return b.rc == T2_ENOMEM ? t2_seterr(T2_ENOMEM, "protocol: out of memory building a %s message", b.kind)
                                 : b.rc;
    }
    *out = b.m;
    return T2_OK;
}

int t2__msg_encode_json(const t2__msg *m, t2__json_out *out)
{
    size_t at = out->n;
    builder b = {.out = out, .rc = T2_OK, .kind = t2__msg_kind_name(m->kind)};
    put_str(&b, "type", b.kind ? b.kind : "?", 1);
    put_body(&b, m);
    if (!b.rc) t2__json_raw(out, "}", 1);
    if (!b.rc && out->oom) b.rc = t2_seterr(T2_ENOMEM, "protocol: out of memory writing a %s message", b.kind);
    if (b.rc) {
        out->n = at; /* nothing of it stays */
        out->oom = 0;
        if (out->p && at < out->cap) out->p[at] = '\0';
        return b.rc;
    }
    return T2_OK;
}
