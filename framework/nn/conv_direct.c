/* conv_direct.c — stride-1 convolution straight from the image on AVX-512 (see conv_direct.h).
 *
 * A tile is MR output channels x 48 grid positions (three 16-float vectors): 24 accumulators in
 * registers. Each kernel tap (ch, ki, kj) loads three vectors of the input row, shifted by the tap,
 * and broadcasts the tile's MR weights of that tap from the packed block: 24 FMAs for 3 + 8 loads.
 * The grid's last tile is masked, so no input float past the plane is read (AVX-512's masked loads
 * do not fault on masked-off lanes). The sum over the taps runs in tap order, one FMA each, so the
 * result depends only on the shapes, never on the thread that computes it. */
#include "conv_direct.h"
#include <string.h>
#include "cpu_features.h"

#define MR T2__CONV_DIRECT_MR
#define NV 3
#define TILE (16 * NV)

static int direct_on = 1;
static int cpu_has = -1; /* -1: not yet read */

int t2__conv_direct_available(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    int has = __atomic_load_n(&cpu_has, __ATOMIC_RELAXED);
    if (has < 0) {
        t2__cpu_features f;
        t2__cpu_features_get(&f);
        has = f.avx512f ? 1 : 0;
        __atomic_store_n(&cpu_has, has, __ATOMIC_RELAXED);
    }
    return has && __atomic_load_n(&direct_on, __ATOMIC_RELAXED);
#else
    return 0;
#endif
}

int t2__conv_direct_set(int on) { return __atomic_exchange_n(&direct_on, on ? 1 : 0, __ATOMIC_RELAXED); }

size_t t2__conv_direct_packed_floats(int cout, int kin) { return (size_t)((cout + MR - 1) / MR) * MR * (size_t)kin; }

void t2__conv_direct_pack(const float *w, int cout, int cin, int k, float *wp)
{
    long kin = (long)cin * k * k;
    for (int b = 0; b < (cout + MR - 1) / MR; b++)
        for (long t = 0; t < kin; t++)
            for (int m = 0; m < MR; m++) {
                int o = b * MR + m;
                wp[((long)b * kin + t) * MR + m] = o < cout ? w[(long)o * kin + t] : 0.0f;
            }
}

void t2__conv_direct_pack_flipped(const float *w, int cout, int cin, int k, float *wp)
{
    long kin = (long)cout * k * k, kk = (long)k * k;
    for (int b = 0; b < (cin + MR - 1) / MR; b++)
        for (int o = 0; o < cout; o++)
            for (int ki = 0; ki < k; ki++)
                for (int kj = 0; kj < k; kj++) {
                    float *dst = wp + ((long)b * kin + o * kk + ki * k + kj) * MR;
                    for (int m = 0; m < MR; m++) {
                        int c = b * MR + m;
                        dst[m] = c < cin ? w[((long)o * cin + c) * kk + (long)(k - 1 - ki) * k + (k - 1 - kj)] : 0.0f;
                    }
                }
}

/* The runs of one tile: grid positions [q, q + len) of the tile map to out offset dst (relative to
 * a channel's start). At most one run per grid row the tile touches. */
typedef struct {
    int q, len;
    long dst;
} run;

static int tile_runs(long p, long n, int w, int r0, int c0, int c1, long orow, run *runs)
{
    int nr = 0;
    long r = p / w, c = p % w;
    for (long q = 0; q < n; r++, c = 0) {
        long len = w - c < n - q ? w - c : n - q;
        long lo = c > c0 ? c : c0, hi = c + len < c1 ? c + len : c1;
        if (hi > lo) runs[nr++] = (run){(int)(q + lo - c), (int)(hi - lo), (r - r0) * orow + (lo - c0)};
        q += len;
    }
    return nr;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

static inline __mmask16 __attribute__((target("avx512f"))) lanes(long n)
{
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

__attribute__((target("avx512f"))) static void direct_avx512(const float *in, int cin, int h, int w, int k,
                                                            const float *wp, int cout, const float *bias, int relu,
                                                            int r0, int r1, int c0, int c1, float *out, long orow,
                                                            long och)
{
    long kin = (long)cin * k * k, plane = (long)h * w;
    long pb = (long)r0 * w + c0, pe = (long)(r1 - 1) * w + c1;
    run runs[TILE + 1];
    for (int b = 0; b < (cout + MR - 1) / MR; b++) {
        const float *wb = wp + (long)b * kin * MR;
        int mr = cout - b * MR < MR ? cout - b * MR : MR;
        for (long p = pb; p < pe; p += TILE) {
            long n = pe - p < TILE ? pe - p : TILE;
            __mmask16 m0 = lanes(n), m1 = lanes(n - 16), m2 = lanes(n - 32);
            __m512 acc[MR][NV];
#pragma GCC unroll 8
            for (int m = 0; m < MR; m++)
#pragma GCC unroll 3
                for (int v = 0; v < NV; v++) acc[m][v] = _mm512_setzero_ps();
            const float *wk = wb;
            for (int ch = 0; ch < cin; ch++)
                for (int ki = 0; ki < k; ki++) {
                    const float *row = in + ch * plane + (long)ki * w + p;
                    for (int kj = 0; kj < k; kj++, wk += MR) {
                        __m512 v0 = _mm512_maskz_loadu_ps(m0, row + kj);
                        __m512 v1 = _mm512_maskz_loadu_ps(m1, row + kj + 16);
                        __m512 v2 = _mm512_maskz_loadu_ps(m2, row + kj + 32);
#pragma GCC unroll 8
                        for (int m = 0; m < MR; m++) {
                            __m512 s = _mm512_set1_ps(wk[m]);
                            acc[m][0] = _mm512_fmadd_ps(s, v0, acc[m][0]);
                            acc[m][1] = _mm512_fmadd_ps(s, v1, acc[m][1]);
                            acc[m][2] = _mm512_fmadd_ps(s, v2, acc[m][2]);
                        }
                    }
                }
            /* Out of the registers at once with constant indices: an accumulator indexed by a
             * variable in the epilogue would make the compiler keep all of them in memory. */
            float tile[MR][TILE];
#pragma GCC unroll 8
            for (int m = 0; m < MR; m++)
#pragma GCC unroll 3
                for (int v = 0; v < NV; v++) _mm512_storeu_ps(&tile[m][16 * v], acc[m][v]);
            int nr = tile_runs(p, n, w, r0, c0, c1, orow, runs);
            for (int m = 0; m < mr; m++) {
                int o = b * MR + m;
                __m512 bv = bias ? _mm512_set1_ps(bias[o]) : _mm512_setzero_ps();
                for (int v = 0; v < NV; v++) {
                    __m512 y = _mm512_add_ps(_mm512_loadu_ps(&tile[m][16 * v]), bv);
                    _mm512_storeu_ps(&tile[m][16 * v], relu ? _mm512_max_ps(y, _mm512_setzero_ps()) : y);
                }
                float *dst = out + o * och;
                for (int i = 0; i < nr; i++)
                    for (int j = 0; j < runs[i].len; j += 16) {
                        __mmask16 mk = lanes(runs[i].len - j);
                        _mm512_mask_storeu_ps(dst + runs[i].dst + j, mk, _mm512_maskz_loadu_ps(mk, &tile[m][runs[i].q + j]));
                    }
            }
        }
    }
}
#endif

/* The same sums one output at a time, for builds without AVX-512 intrinsics (never chosen at
 * run time there: t2__conv_direct_available says 0). */
static void direct_scalar(const float *in, int cin, int h, int w, int k, const float *wp, int cout, const float *bias,
                          int relu, int r0, int r1, int c0, int c1, float *out, long orow, long och)
{
    long kin = (long)cin * k * k, plane = (long)h * w;
    for (int o = 0; o < cout; o++)
        for (int r = r0; r < r1; r++)
            for (int c = c0; c < c1; c++) {
                const float *wk = wp + (long)(o / MR) * kin * MR + o % MR;
                float s = 0.0f;
                for (int ch = 0; ch < cin; ch++)
                    for (int ki = 0; ki < k; ki++)
                        for (int kj = 0; kj < k; kj++, wk += MR) s += in[ch * plane + (long)(r + ki) * w + c + kj] * *wk;
                s += bias ? bias[o] : 0.0f;
                out[o * och + (r - r0) * orow + (c - c0)] = relu && !(s > 0.0f) ? 0.0f : s;
            }
}

void t2__conv_direct(const float *in, int cin, int h, int w, int k, const float *wp, int cout, const float *bias,
                     int relu, int r0, int r1, int c0, int c1, float *out, long orow, long och)
{
    if (r1 <= r0 || c1 <= c0) return;
#if defined(__x86_64__) && defined(__GNUC__)
    if (t2__conv_direct_available()) {
        direct_avx512(in, cin, h, w, k, wp, cout, bias, relu, r0, r1, c0, c1, out, orow, och);
        return;
    }
#endif
    direct_scalar(in, cin, h, w, k, wp, cout, bias, relu, r0, r1, c0, c1, out, orow, och);
}
