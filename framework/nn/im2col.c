/* im2col.c — patch unfolding for convolutions. Rows of the column matrix are (channel, ki, kj),
 * matching PyTorch's weight layout [oc, ic, k, k] so the weight is used as is. For stride 1 each
 * output row is a contiguous slice of an input row: copy it with zero fill at the borders. */
#include <string.h>
#include "im2col.h"
#include "vector_clones.h"

/* Output columns ow in [lo, hi) read inside the input row for kernel offset kj. */
static void valid_range(const t2__conv_geom *g, int kj, int *lo, int *hi)
{
    /* iw = ow*stride - pad + kj must be in [0, w). */
    int a = g->pad - kj, l = a > 0 ? (a + g->stride - 1) / g->stride : 0;
    int b = g->w - 1 + g->pad - kj, h = b >= 0 ? b / g->stride + 1 : 0;
    if (h > g->ow) h = g->ow;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

T2__VECTOR_CLONES
void t2__im2col(const t2__conv_geom *g, const float *x, float *col, long ld)
{
    int k = g->k;
    for (int c = 0; c < g->c; c++) {
        const float *xc = x + (long)c * g->h * g->w;
        for (int ki = 0; ki < k; ki++)
            for (int kj = 0; kj < k; kj++) {
                float *row = col + ((long)(c * k + ki) * k + kj) * ld;
                int lo, hi;
                valid_range(g, kj, &lo, &hi);
                for (int oh = 0; oh < g->oh; oh++) {
                    float *dst = row + (long)oh * g->ow;
                    int ih = oh * g->stride - g->pad + ki;
                    if (ih < 0 || ih >= g->h) {
                        memset(dst, 0, (size_t)g->ow * sizeof(float));
                        continue;
                    }
                    const float *src = xc + (long)ih * g->w - g->pad + kj;
                    for (int ow = 0; ow < lo; ow++) dst[ow] = 0.0f;
                    if (g->stride == 1) /* rows are short (tens of floats): a loop beats a memcpy call */
                        for (int ow = lo; ow < hi; ow++) dst[ow] = src[ow];
                    else
                        for (int ow = lo; ow < hi; ow++) dst[ow] = src[(long)ow * g->stride];
                    for (int ow = hi; ow < g->ow; ow++) dst[ow] = 0.0f;
                }
            }
    }
}

T2__VECTOR_CLONES
void t2__col2im(const t2__conv_geom *g, const float *col, long ld, float *dx)
{
    int k = g->k;
    for (int c = 0; c < g->c; c++) {
        float *xc = dx + (long)c * g->h * g->w;
        for (int ki = 0; ki < k; ki++)
            for (int kj = 0; kj < k; kj++) {
                const float *row = col + ((long)(c * k + ki) * k + kj) * ld;
                int lo, hi;
                valid_range(g, kj, &lo, &hi);
                for (int oh = 0; oh < g->oh; oh++) {
                    int ih = oh * g->stride - g->pad + ki;
                    if (ih < 0 || ih >= g->h) continue;
                    const float *src = row + (long)oh * g->ow;
                    float *dst = xc + (long)ih * g->w - g->pad + kj;
                    if (g->stride == 1)
                        for (int ow = lo; ow < hi; ow++) dst[ow] += src[ow];
                    else
                        for (int ow = lo; ow < hi; ow++) dst[(long)ow * g->stride] += src[ow];
                }
            }
    }
}
