/* clip.c — gradient clipping by global L2 norm and by value (torch.nn.utils semantics). */
#include <math.h>
#include <stddef.h>
#include "t2exp/optim.h"
#include "t2exp/error.h"
#include "optim_slice.h"

/* Sum of squares in double: a float accumulator over millions of gradients loses digits. Four
 * partial sums give the CPU independent add chains (strict FP order forbids the compiler from
 * reassociating a single one). */
static double sum_squares(const float *restrict g, size_t n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += (double)g[i] * g[i];
        s1 += (double)g[i + 1] * g[i + 1];
        s2 += (double)g[i + 2] * g[i + 2];
        s3 += (double)g[i + 3] * g[i + 3];
    }
    for (; i < n; i++) s0 += (double)g[i] * g[i];
    return (s0 + s1) + (s2 + s3);
}

int t2_clip_grad_norm(float *g, size_t n, double max_norm, double *total_norm)
{
    return t2__clip_grad_norm_multi(&g, &n, 1, max_norm, total_norm);
}

int t2__clip_grad_norm_multi(float *const *g, const size_t *n, int k, double max_norm, double *total_norm)
{
    if (!g || !n || k < 1) return t2_seterr(T2_EINVAL, "clip_grad_norm: no gradients");
    for (int j = 0; j < k; j++) {
        if (!g[j]) return t2_seterr(T2_EINVAL, "clip_grad_norm: gradients are NULL");
        if (n[j] == 0) return t2_seterr(T2_EINVAL, "clip_grad_norm: n=0 gradients");
    }
    if (!isfinite(max_norm) || max_norm < 0)
        return t2_seterr(T2_EINVAL, "clip_grad_norm: max_norm=%g (must be finite and >= 0)", max_norm);
    /* One sum over all buffers: the norm of their concatenation, as torch's over a parameter list. */
    double ss = 0.0;
    for (int j = 0; j < k; j++) ss += sum_squares(g[j], n[j]);
    double norm = sqrt(ss);
    if (total_norm) *total_norm = norm;
    if (!isfinite(norm))
        return t2_seterr(T2_ENUMERIC, "clip_grad_norm: gradient norm is %g; gradients left unchanged", norm);
    /* torch multiplies by min(coef, 1); multiplying by 1 changes nothing, so only scale below 1. */
    double coef = max_norm / (norm + 1e-6);
    if (coef < 1.0) {
        const float c = (float)coef;
        for (int j = 0; j < k; j++)
            for (size_t i = 0; i < n[j]; i++) g[j][i] *= c;
    }
    return T2_OK;
}

int t2_clip_grad_value(float *g, size_t n, double clip)
{
    if (!g) return t2_seterr(T2_EINVAL, "clip_grad_value: gradients are NULL");
    if (n == 0) return t2_seterr(T2_EINVAL, "clip_grad_value: n=0 gradients");
    if (!isfinite(clip) || clip < 0)
        return t2_seterr(T2_EINVAL, "clip_grad_value: clip=%g (must be finite and >= 0)", clip);
    const float hi = (float)clip, lo = -hi;
    /* Comparisons (not fminf/fmaxf) so that NaN passes through like torch.clamp. */
    for (size_t i = 0; i < n; i++) {
        float v = g[i];
        g[i] = v < lo ? lo : (v > hi ? hi : v);
    }
    return T2_OK;
}
