/* loss.c — losses with mean reduction over the batch, each returning its input gradient. */
#include <math.h>
#include "internal.h"
#include "t2exp/nn.h"

static int check_class_input(const char *who, const t2_tensor *in, const int32_t *labels, float *loss,
                             const t2_tensor *din)
{
    char a[64], b[64];
    if (!in || !labels || !loss || !in->data) return t2_seterr(T2_EINVAL, "%s: NULL argument", who);
    if (in->ndim != 2 || in->shape[0] <= 0 || in->shape[1] <= 0)
        return t2_seterr(T2_ESHAPE, "%s: input %s must be [n, classes]", who, t2_tensor_shape_str(in, a, sizeof a));
    if (din && (!din->data || !t2_tensor_same_shape(in, din)))
        return t2_seterr(T2_ESHAPE, "%s: gradient %s does not match input %s", who,
                         t2_tensor_shape_str(din, a, sizeof a), t2_tensor_shape_str(in, b, sizeof b));
    for (int i = 0; i < in->shape[0]; i++)
        if (labels[i] < 0 || labels[i] >= in->shape[1])
            return t2_seterr(T2_EINVAL, "%s: label %d of sample %d is not in [0, %d)", who, (int)labels[i], i,
                             in->shape[1]);
    return T2_OK;
}

int t2_loss_softmax_xent(const t2_tensor *logits, const int32_t *labels, float label_smoothing, float *loss,
                         t2_tensor *dlogits)
{
    int rc = check_class_input("t2_loss_softmax_xent", logits, labels, loss, dlogits);
    if (rc) return rc;
    if (!(label_smoothing >= 0.0f && label_smoothing < 1.0f))
        return t2_seterr(T2_EINVAL, "t2_loss_softmax_xent: label_smoothing %g must be in [0, 1)", label_smoothing);
    int n = logits->shape[0], C = logits->shape[1];
    double total = 0.0, eps = label_smoothing;
    for (int i = 0; i < n; i++) {
        const float *x = logits->data + (size_t)i * C;
        float m = x[0];
        for (int j = 1; j < C; j++) m = x[j] > m ? x[j] : m;
        double s = 0.0, sum_logp = 0.0;
        for (int j = 0; j < C; j++) s += exp((double)(x[j] - m));
        double lse = m + log(s);
        for (int j = 0; j < C; j++) sum_logp += x[j] - lse;
        /* (1-eps) * NLL of the label + eps * mean NLL over all classes. */
        total += -(1.0 - eps) * (x[labels[i]] - lse) - eps * sum_logp / C;
        if (dlogits) {
            float *d = dlogits->data + (size_t)i * C;
            for (int j = 0; j < C; j++)
                d[j] = (float)((exp(x[j] - lse) - eps / C - (j == labels[i] ? 1.0 - eps : 0.0)) / n);
        }
    }
    *loss = (float)(total / n);
    if (!isfinite(*loss)) return t2_seterr(T2_ENUMERIC, "t2_loss_softmax_xent: loss is %g", *loss);
    return T2_OK;
}

int t2_loss_nll(const t2_tensor *logprobs, const int32_t *labels, float *loss, t2_tensor *dlogprobs)
{
    int rc = check_class_input("t2_loss_nll", logprobs, labels, loss, dlogprobs);
    if (rc) return rc;
    int n = logprobs->shape[0], C = logprobs->shape[1];
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        total -= logprobs->data[(size_t)i * C + labels[i]];
        if (dlogprobs) {
            float *d = dlogprobs->data + (size_t)i * C;
            for (int j = 0; j < C; j++) d[j] = 0.0f;
            d[labels[i]] = -1.0f / n;
        }
    }
    *loss = (float)(total / n);
    if (!isfinite(*loss)) return t2_seterr(T2_ENUMERIC, "t2_loss_nll: loss is %g", *loss);
    return T2_OK;
}

/* Checks a regression loss's arguments. A [n, W] target against a [n, V] prediction (the usual
 * mistake: a dataset's target width that does not match the net's output) is reported as widths. */
static int check_regression(const char *who, const t2_tensor *pred, const t2_tensor *target, float *loss,
                            const t2_tensor *dpred)
{
    char a[64], b[64];
    if (!pred || !target || !loss || !pred->data || !target->data) return t2_seterr(T2_EINVAL, "%s: NULL argument", who);
    if (t2_tensor_numel(pred) == 0 || !t2_tensor_same_shape(pred, target)) {
        if (pred->ndim == 2 && target->ndim == 2 && pred->shape[0] == target->shape[0])
            return t2_seterr(T2_ESHAPE, "%s: targets of width %d for a prediction of width %d (target %s, prediction %s)",
                             who, target->shape[1], pred->shape[1], t2_tensor_shape_str(target, a, sizeof a),
                             t2_tensor_shape_str(pred, b, sizeof b));
        return t2_seterr(T2_ESHAPE, "%s: prediction %s and target %s differ", who, t2_tensor_shape_str(pred, a, sizeof a),
                         t2_tensor_shape_str(target, b, sizeof b));
    }
    if (dpred && (!dpred->data || !t2_tensor_same_shape(pred, dpred)))
        return t2_seterr(T2_ESHAPE, "%s: gradient %s does not match prediction %s", who,
                         t2_tensor_shape_str(dpred, a, sizeof a), t2_tensor_shape_str(pred, b, sizeof b));
    return T2_OK;
}

int t2_loss_mse(const t2_tensor *pred, const t2_tensor *target, float *loss, t2_tensor *dpred)
{
    int rc = check_regression("t2_loss_mse", pred, target, loss, dpred);
    if (rc) return rc;
    size_t n = t2_tensor_numel(pred);
    double total = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)pred->data[i] - target->data[i];
        total += d * d;
        if (dpred) dpred->data[i] = (float)(2.0 * d / (double)n);
    }
    *loss = (float)(total / (double)n);
    if (!isfinite(*loss)) return t2_seterr(T2_ENUMERIC, "t2_loss_mse: loss is %g", *loss);
    return T2_OK;
}

int t2_loss_huber(const t2_tensor *pred, const t2_tensor *target, float delta, float *loss, t2_tensor *dpred)
{
    int rc = check_regression("t2_loss_huber", pred, target, loss, dpred);
    if (rc) return rc;
    if (!(isfinite(delta) && delta > 0.0f))
        return t2_seterr(T2_EINVAL, "t2_loss_huber: delta %g (must be finite and > 0)", (double)delta);
    size_t n = t2_tensor_numel(pred);
    double total = 0.0, dl = delta;
    for (size_t i = 0; i < n; i++) {
        double d = (double)pred->data[i] - target->data[i], ad = fabs(d);
        /* PyTorch: quadratic strictly inside |d| < delta, linear from delta on. */
        total += ad < dl ? 0.5 * d * d : dl * (ad - 0.5 * dl);
        if (dpred) dpred->data[i] = (float)((ad < dl ? d : (d > 0 ? dl : -dl)) / (double)n);
    }
    *loss = (float)(total / (double)n);
    if (!isfinite(*loss)) return t2_seterr(T2_ENUMERIC, "t2_loss_huber: loss is %g", *loss);
    return T2_OK;
}

int t2_topk_correct(const t2_tensor *scores, const int32_t *labels, int k, int64_t *correct)
{
    if (!correct) return t2_seterr(T2_EINVAL, "t2_topk_correct: NULL argument");
    float dummy;
    int rc = check_class_input("t2_topk_correct", scores, labels, &dummy, NULL);
    if (rc) return rc;
    int n = scores->shape[0], C = scores->shape[1];
    if (k <= 0 || k > C) return t2_seterr(T2_EINVAL, "t2_topk_correct: k %d not in [1, %d]", k, C);
    int64_t hits = 0;
    for (int i = 0; i < n; i++) {
        const float *s = scores->data + (size_t)i * C;
        float target = s[labels[i]];
        /* The label is in the top k unless k classes beat it (ties go to the lower index). */
        int better = 0;
        for (int j = 0; j < C && better < k; j++)
            if (s[j] > target || (s[j] == target && j < labels[i])) better++;
        hits += better < k;
    }
    *correct = hits;
    return T2_OK;
}
