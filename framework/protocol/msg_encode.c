/* msg_encode.c — a typed message to its JSON tree (protocol.h). Every builder call is checked: out
 * of memory gives an error, never a message with fields missing. */
#include <math.h>
#include <stdlib.h>
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
};

const char *t2__msg_kind_name(t2__msg_kind kind)
{
    return kind >= 0 && kind < T2__MSG_KINDS ? NAMES[kind] : "?";
}

int t2__msg_from_runner(t2__msg_kind kind) { return kind >= T2__MSG_READY && kind <= T2__MSG_FINISHED; }

/* A map under construction; the first failure sticks and later calls do nothing. */
typedef struct builder {
    t2__val *m;
    int rc;
    const char *kind;
} builder;

static void put(builder *b, const char *key, t2__val *v)
{
    if (b->rc) {
        t2__val_free(v);
        return;
    }
    if (!v || t2__val_map_set(b->m, key, v)) b->rc = T2_ENOMEM;
}

static void put_str(builder *b, const char *key, const char *s, int required)
{
    if (!s) {
        if (required && !b->rc) b->rc = t2_seterr(T2_EINVAL, "protocol: %s message without %s", b->kind, key);
        return;
    }
    put(b, key, t2__val_string(s));
}

static void put_count(builder *b, const char *key, int64_t n)
{
    if (n < 0 && !b->rc) b->rc = t2_seterr(T2_EINVAL, "protocol: %s message with %s = %lld", b->kind, key, (long long)n);
    put(b, key, t2__val_int(n));
}

static void put_timing(builder *b, const t2__msg_timing *t)
{
    put(b, "batches_per_s", t2__val_double(t->batches_per_s));
    put(b, "samples_per_s", t2__val_double(t->samples_per_s));
    put(b, "data_s", t2__val_double(t->data_s));
    put(b, "compute_s", t2__val_double(t->compute_s));
    put(b, "comm_s", t2__val_double(t->comm_s));
}

static void put_list_of_counts(builder *b, const char *key, const int64_t *v, size_t n)
{
    t2__val *l = t2__val_list();
    for (size_t i = 0; l && i < n; i++)
        if (t2__val_list_append(l, t2__val_int(v[i]))) {
            t2__val_free(l);
            l = NULL;
        }
    put(b, key, l);
}

/* JSON readers keep 53 bits of a number: a seed goes as two halves. */
static void put_seed(builder *b, uint64_t seed)
{
    put(b, "seed_hi", t2__val_int((int64_t)(seed >> 32)));
    put(b, "seed_lo", t2__val_int((int64_t)(seed & 0xffffffffu)));
}

static void put_spec(builder *b, const t2__msg *m)
{
    put_str(b, "config_yaml", m->u.spec.config_yaml, 1);
    t2__val *ov = t2__val_list();
    for (size_t i = 0; ov && i < m->u.spec.noverrides; i++)
        if (t2__val_list_append(ov, t2__val_string(m->u.spec.overrides[i]))) {
            t2__val_free(ov);
            ov = NULL;
        }
    put(b, "overrides", ov);
    put_str(b, "trial_object", m->u.spec.trial_object, 1);
    if (!m->u.spec.hparams && !b->rc) b->rc = t2_seterr(T2_EINVAL, "protocol: spec message without hparams");
    put(b, "hparams", m->u.spec.hparams ? t2__val_copy(m->u.spec.hparams) : NULL);
    put_count(b, "trial_id", m->u.spec.trial_id);
    put_count(b, "experiment_id", m->u.spec.experiment_id);
    put_seed(b, m->u.spec.seed);
    put_count(b, "threads", m->u.spec.threads);
    put_count(b, "parts", m->u.spec.parts);
    put_str(b, "ckpt_dir", m->u.spec.ckpt_dir, 0);
    put_str(b, "restore_path", m->u.spec.restore_path, 0);
    put(b, "warm_start", t2__val_bool(m->u.spec.warm_start));
}

static void put_assign(builder *b, const t2__msg *m)
{
    put_count(b, "trial_id", m->u.assign.trial_id);
    put_seed(b, m->u.assign.seed);
    put_count(b, "threads", m->u.assign.threads);
    put_count(b, "parts", m->u.assign.parts);
    if (!m->u.assign.hparams && !b->rc) b->rc = t2_seterr(T2_EINVAL, "protocol: assign message without hparams");
    put(b, "hparams", m->u.assign.hparams ? t2__val_copy(m->u.assign.hparams) : NULL);
    put_str(b, "restore_path", m->u.assign.restore_path, 0);
    put(b, "warm_start", t2__val_bool(m->u.assign.warm_start));
}

static void put_body(builder *b, const t2__msg *m)
{
    switch (m->kind) {
    case T2__MSG_READY:
        put_count(b, "batches_per_epoch", m->u.ready.batches_per_epoch);
        put_count(b, "params", m->u.ready.params);
        put_str(b, "blas", m->u.ready.blas, 0);
        put(b, "version", t2__val_int(T2__PROTOCOL_VERSION));
        break;
    case T2__MSG_METRICS:
        put_str(b, "kind", m->u.metrics.validation ? "validation" : "training", 1);
        put_count(b, "batches", m->u.metrics.batches);
        put(b, "epoch", isnan(m->u.metrics.epoch) ? t2__val_null() : t2__val_double(m->u.metrics.epoch));
        put(b, "values", m->u.metrics.values ? t2__val_copy(m->u.metrics.values) : t2__val_map());
        if (m->u.metrics.has_timing) put_timing(b, &m->u.metrics.timing);
        if (m->u.metrics.ask_best) put(b, "ask_best", t2__val_bool(1));
        break;
    case T2__MSG_CHECKPOINT:
        put_str(b, "uuid", m->u.checkpoint.uuid, 1);
        put_str(b, "ext", m->u.checkpoint.ext, 1);
        put_count(b, "batches", m->u.checkpoint.batches);
        put_count(b, "bytes", m->u.checkpoint.bytes);
        if (m->u.checkpoint.has_metric) put(b, "metric", t2__val_double(m->u.checkpoint.metric));
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
        if (m->u.error.invalid_hparams) put(b, "invalid_hparams", t2__val_bool(1));
        if (m->u.error.fatal) put(b, "fatal", t2__val_bool(1));
        break;
    case T2__MSG_HELLO:
        put(b, "trial_id", t2__val_int(m->u.hello.trial_id));
        put_str(b, "nonce", m->u.hello.nonce, 1);
        put_str(b, "mac", m->u.hello.mac, 1);
        put(b, "version", t2__val_int(T2__PROTOCOL_VERSION));
        break;
    case T2__MSG_TRAIN:
        put_count(b, "length", m->u.train.length);
        if (m->u.train.nreport_at) put_list_of_counts(b, "report_at", m->u.train.report_at, m->u.train.nreport_at);
        if (m->u.train.last) put(b, "last", t2__val_bool(1));
        break;
    case T2__MSG_EXIT:
        break;
    case T2__MSG_VALIDATED:
        put(b, "new_best", t2__val_bool(m->u.validated.new_best));
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
    put(&b, "type", t2__val_string(b.kind));
    put_body(&b, m);
    if (b.rc) {
        t2__val_free(b.m);
        return b.rc == T2_ENOMEM ? t2_seterr(T2_ENOMEM, "protocol: out of memory building a %s message", b.kind)
                                 : b.rc;
    }
    *out = b.m;
    return T2_OK;
}
