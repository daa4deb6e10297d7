/* transform.c — per-sample conversion and augmentation: uint8 -> float through a lookup table
 * (which also folds in the normalisation), random crop with zero padding, horizontal flip. The
 * draws for a sample depend only on (seed, epoch, sample index), so any worker may build it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "data_internal.h"
#include "internal.h"

int t2__xform_init(t2__xform *xf, const t2_dataset *ds, const t2_loader_params *p)
{
    memset(xf, 0, sizeof *xf);
    int channels = ds->ndim == 3 ? ds->shape[0] : 1;
    if ((p->crop_padding != 0 || p->hflip_prob != 0.0f) && ds->ndim != 3)
        return t2_seterr(T2_EINVAL, "loader: crop/flip need image samples [C, H, W], dataset has ndim %d", ds->ndim);
    if (p->crop_padding < 0 || p->crop_padding > T2__MAX_DIM)
        return t2_seterr(T2_EINVAL, "loader: crop_padding %d (must be 0..%d)", p->crop_padding, T2__MAX_DIM);
    if (!(p->hflip_prob >= 0.0f && p->hflip_prob <= 1.0f))
        return t2_seterr(T2_EINVAL, "loader: hflip_prob %g (must be in [0, 1])", (double)p->hflip_prob);
    int nc = p->normalize_channels;
    if (nc != 0 && nc != 1 && nc != channels)
        return t2_seterr(T2_EINVAL, "loader: normalize_channels %d (must be 0, 1 or the %d channels)", nc, channels);
    if (nc > T2_LOADER_MAX_CHANNELS)
        return t2_seterr(T2_EINVAL, "loader: normalize_channels %d exceeds %d", nc, T2_LOADER_MAX_CHANNELS);
    for (int c = 0; c < nc; c++)
        if (!isfinite(p->mean[c]) || !isfinite(p->std[c]) || p->std[c] == 0.0f)
            return t2_seterr(T2_EINVAL, "loader: normalize channel %d: mean %g std %g (need finite, std != 0)", c,
                             (double)p->mean[c], (double)p->std[c]);
    xf->crop_padding = p->crop_padding;
    xf->hflip_prob = p->hflip_prob;
    xf->normalize = nc > 0;
    xf->per_channel = nc > 1;
    for (int c = 0; c < nc; c++) {
        xf->scale[c] = p->std[c];   /* kept as mean/std: the exact (x - mean) / std is computed */
        xf->shift[c] = p->mean[c];
    }
    if ((p->standardize_mean != NULL) != (p->standardize_std != NULL))
        return t2_seterr(T2_EINVAL, "loader: standardize_mean and standardize_std must be given together");
    if (p->standardize_mean) {
        xf->std_mean = malloc(ds->numel * sizeof(float));
        xf->std_div = malloc(ds->numel * sizeof(float));
        if (!xf->std_mean || !xf->std_div) {
            t2__xform_free(xf);
            return t2_seterr(T2_ENOMEM, "loader: out of memory");
        }
        for (size_t j = 0; j < ds->numel; j++) {
            float m = p->standardize_mean[j], sd = p->standardize_std[j];
            if (!isfinite(m) || !isfinite(sd) || sd < 0.0f) {
                t2__xform_free(xf);
                return t2_seterr(T2_EINVAL, "loader: standardize element %zu: mean %g std %g (need finite, std >= 0)", j,
                                 (double)m, (double)sd);
            }
            xf->std_mean[j] = m;
            xf->std_div[j] = sd == 0.0f ? 1.0f : sd; /* a constant feature: centred, not divided */
        }
    }
    if ((ds->map ? ds->parent : ds)->pix_type == T2__PIX_U8) { /* a view reads its parent's pixels */
        int nl = xf->per_channel ? channels : 1;
        xf->lut = malloc((size_t)nl * 256 * sizeof(float));
        if (!xf->lut) {
            t2__xform_free(xf);
            return t2_seterr(T2_ENOMEM, "loader: out of memory");
        }
        for (int c = 0; c < nl; c++)
            for (int v = 0; v < 256; v++) {
                float x = (float)v / 255.0f;
                xf->lut[c * 256 + v] = xf->normalize ? (x - xf->shift[c]) / xf->scale[c] : x;
            }
    }
    return T2_OK;
}

void t2__xform_free(t2__xform *xf)
{
    if (!xf) return;
    free(xf->lut);
    free(xf->std_mean);
    free(xf->std_div);
    xf->lut = xf->std_mean = xf->std_div = NULL;
}

static inline float fmap(const t2__xform *xf, int c, float x)
{
    if (!xf->normalize) return x;
    int k = xf->per_channel ? c : 0;
    return (x - xf->shift[k]) / xf->scale[k];
}

/* x = (x - mean) / std per element, last of all transforms. */
static void standardize(const t2__xform *xf, float *dst, size_t numel)
{
    if (!xf->std_mean) return;
    for (size_t j = 0; j < numel; j++) dst[j] = (dst[j] - xf->std_mean[j]) / xf->std_div[j];
}

int t2__xform_sample(const t2__xform *xf, const t2_dataset *ds, uint32_t index, uint64_t sample_seed,
                     float *dst, int32_t *label, float *target, float *scratch)
{
    const uint8_t *u8 = NULL;
    const float *f32 = NULL;
    ds = t2__dataset_resolve(ds, &index); /* a split view reads its parent's arrays */
    if (ds->pix_type == T2__PIX_U8) {
        u8 = (const uint8_t *)ds->pixels + (size_t)index * ds->numel;
    } else if (ds->pix_type == T2__PIX_F32) {
        f32 = (const float *)ds->pixels + (size_t)index * ds->numel;
    } else {
        int rc = ds->ops->get(ds, index, scratch, target, label);
        if (rc) return rc;
        f32 = scratch;
    }
    if (ds->pix_type != T2__PIX_NONE) {
        *label = t2__dataset_label(ds, index);
        if (target)
            memcpy(target, ds->targets + (size_t)index * ds->target_width, (size_t)ds->target_width * sizeof(float));
    }
    /* Draw order is part of the format of a run: crop offsets first, then the flip. */
    int pad = xf->crop_padding, top = pad, left = pad, flip = 0;
    if (pad > 0 || xf->hflip_prob > 0.0f) {
        t2_rng r;
        t2_rng_seed(&r, sample_seed);
        if (pad > 0) {
            top = (int)t2_rng_below(&r, 2 * (uint64_t)pad + 1);
            left = (int)t2_rng_below(&r, 2 * (uint64_t)pad + 1);
        }
        if (xf->hflip_prob > 0.0f) flip = t2_rng_uniform(&r) < xf->hflip_prob;
    }
    int C = ds->ndim == 3 ? ds->shape[0] : 1;
    size_t plane = ds->numel / (size_t)C;
    if (top == pad && left == pad && !flip) {
        for (int c = 0; c < C; c++) {
            float *o = dst + (size_t)c * plane;
            if (u8) {
                const float *lut = xf->lut + (xf->per_channel ? c * 256 : 0);
                const uint8_t *s = u8 + (size_t)c * plane;
                for (size_t j = 0; j < plane; j++) o[j] = lut[s[j]];
            } else {
                const float *s = f32 + (size_t)c * plane;
                if (xf->normalize)
                    for (size_t j = 0; j < plane; j++) o[j] = fmap(xf, c, s[j]);
                else
                    memcpy(o, s, plane * sizeof(float));
            }
        }
        standardize(xf, dst, ds->numel);
        return T2_OK;
    }
    int H = ds->shape[1], W = ds->shape[2];
    for (int c = 0; c < C; c++) {
        const float *lut = u8 ? xf->lut + (xf->per_channel ? c * 256 : 0) : NULL;
        float padv = u8 ? lut[0] : fmap(xf, c, 0.0f); /* zero padding happens before normalisation */
        for (int y = 0; y < H; y++) {
            float *o = dst + (size_t)c * plane + (size_t)y * W;
            int sy = y + top - pad;
            if (sy < 0 || sy >= H) {
                for (int x = 0; x < W; x++) o[x] = padv;
                continue;
            }
            size_t row = (size_t)c * plane + (size_t)sy * W;
            for (int x = 0; x < W; x++) {
                int sx = (flip ? W - 1 - x : x) + left - pad;
                if (sx < 0 || sx >= W) o[x] = padv;
                else o[x] = u8 ? lut[u8[row + sx]] : fmap(xf, c, f32[row + sx]);
            }
        }
    }
    standardize(xf, dst, ds->numel);
    return T2_OK;
}
