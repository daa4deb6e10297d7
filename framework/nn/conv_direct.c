/* conv_direct.c — stride-1 convolution straight from the image on AVX-512 (see conv_direct.h).
 *
 * A tile is MR output channels x 48 grid positions (three 16-float vectors): 24 accumulators in
 * registers. Each kernel tap (ch, ki, kj) loads three vectors of the input row, shifted by the tap,
 * and broadcasts the tile's MR weights of that tap from the packed block: 24 FMAs for 3 + 8 loads.
 * The grid's last tile is masked, so no input float past the plane is read (AVX-512's masked loads
 * do not fault on masked-off lanes). The sum over the taps runs in tap order, one FMA each, so the
 * result depends only on the shapes, never on the thread that computes it. */
#include "conv_direct.h"
#include <stdint.h>
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

const char *t2__conv_direct_kernels(void) { return t2__conv_direct_available() ? "direct AVX-512" : "im2col + BLAS"; }

int t2__conv_direct_lanes(int cout) { return (cout + 15) & ~15; }

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

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Where one tile's vectors go: lanes `mask` of vector v (grid positions p + 16 v + lane) are the
 * outputs at offset off + lane of a channel's output (off may be negative: the lanes before the
 * mask are never written). At most one segment per vector and grid row the tile touches. */
typedef struct {
    int v;
    unsigned mask;
    long off;
} segment;

static int tile_segments(long p, long n, int w, int r0, int c0, int c1, long orow, segment *segs)
{
    int ns = 0;
    long r = p / w, c = p % w;
    for (long q = 0; q < n; r++, c = 0) {
        long len = w - c < n - q ? w - c : n - q;
        long lo = c > c0 ? c : c0, hi = c + len < c1 ? c + len : c1;
        if (hi > lo) { /* tile positions [a, e) are outputs dst .. */
            long a = q + lo - c, e = q + hi - c, dst = (r - r0) * orow + (lo - c0);
            for (long v = a / 16; v * 16 < e; v++) {
                long l0 = a > 16 * v ? a - 16 * v : 0, l1 = e < 16 * v + 16 ? e - 16 * v : 16;
                segs[ns++] = (segment){(int)v, ((1u << l1) - 1u) & ~((1u << l0) - 1u), dst - a + 16 * v};
            }
        }
        q += len;
    }
    return ns;
}

static inline __mmask16 __attribute__((target("avx512f"))) lanes(long n)
{
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

/* One tile's sums over the taps of kernel rows [ki0, ki1) into tile[m][0 .. TILE) (the other
 * rows read only zeros for this tile). masked is a constant at each call: full tiles load without
 * masks (no mask register to keep live), the grid's last tile with them. */
static inline void __attribute__((target("avx512f"), always_inline))
tile_sums(const int masked, const float *in, int cin, long plane, int w, int k, int ki0, int ki1, const float *wb,
          long p, long n, float tile[MR][TILE])
{
    __mmask16 m0 = lanes(n), m1 = lanes(n - 16), m2 = lanes(n - 32);
    __m512 acc[MR][NV];
#pragma GCC unroll 8
    for (int m = 0; m < MR; m++)
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++) acc[m][v] = _mm512_setzero_ps();
    for (int ch = 0; ch < cin; ch++)
        for (int ki = ki0; ki < ki1; ki++) {
            const float *row = in + ch * plane + (long)ki * w + p;
            const float *wk = wb + ((long)ch * k + ki) * k * MR;
#pragma GCC unroll 4
            for (int kj = 0; kj < k; kj++, wk += MR) {
                __m512 v0 = masked ? _mm512_maskz_loadu_ps(m0, row + kj) : _mm512_loadu_ps(row + kj);
                __m512 v1 = masked ? _mm512_maskz_loadu_ps(m1, row + kj + 16) : _mm512_loadu_ps(row + kj + 16);
                __m512 v2 = masked ? _mm512_maskz_loadu_ps(m2, row + kj + 32) : _mm512_loadu_ps(row + kj + 32);
#pragma GCC unroll 8
                for (int m = 0; m < MR; m++) {
                    __m512 s = _mm512_set1_ps(wk[m]);
                    acc[m][0] = _mm512_fmadd_ps(s, v0, acc[m][0]);
                    acc[m][1] = _mm512_fmadd_ps(s, v1, acc[m][1]);
                    acc[m][2] = _mm512_fmadd_ps(s, v2, acc[m][2]);
                }
            }
        }
    /* Out of the registers with constant indices: an accumulator indexed by a variable in the
     * epilogue would make the compiler keep all of them in memory. */
#pragma GCC unroll 8
    for (int m = 0; m < MR; m++)
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++) _mm512_store_ps(&tile[m][16 * v], acc[m][v]);
}

__attribute__((target("avx512f"))) static void direct_avx512(const float *in, int cin, int h, int w, int k,
                                                            int z0, int z1, const float *wp, int cout,
                                                            const float *bias, int relu, int r0, int r1, int c0,
                                                            int c1, float *out, long orow, long och)
{
    long kin = (long)cin * k * k, plane = (long)h * w;
    long pb = (long)r0 * w + c0, pe = (long)(r1 - 1) * w + c1;
    segment segs[TILE + NV + 1];
    float tile[MR][TILE] __attribute__((aligned(64)));
    for (int b = 0; b < (cout + MR - 1) / MR; b++) {
        const float *wb = wp + (long)b * kin * MR;
        int mr = cout - b * MR < MR ? cout - b * MR : MR;
        for (long p = pb; p < pe; p += TILE) {
            long n = pe - p < TILE ? pe - p : TILE;
            /* Kernel rows that read a nonzero row of in for some grid row [ra, rb] of the tile:
             * near the zero border rows of a padded image or dy, a third of the taps or more
             * read only zeros. */
            int ra = (int)(p / w), rb = (int)((p + n - 1) / w);
            int ki0 = z0 - rb > 0 ? z0 - rb : 0, ki1 = z1 - ra < k ? z1 - ra : k;
            if (ki1 < ki0) ki1 = ki0;
            /* k = 3 (most convolutions) gets its own copy with the tap loops unrolled. */
            if (n == TILE && k == 3 && ki0 == 0 && ki1 == 3)
                tile_sums(0, in, cin, plane, w, 3, 0, 3, wb, p, n, tile);
            else if (n == TILE)
                tile_sums(0, in, cin, plane, w, k, ki0, ki1, wb, p, n, tile);
            else
                tile_sums(1, in, cin, plane, w, k, ki0, ki1, wb, p, n, tile);
            /* Each vector is read back whole from where it was stored (a partial or shifted
             * read of a fresh store stalls), then stored with a mask straight to the output. */
            int ns = tile_segments(p, n, w, r0, c0, c1, orow, segs);
            for (int m = 0; m < mr; m++) {
                int o = b * MR + m;
                __m512 bv = bias ? _mm512_set1_ps(bias[o]) : _mm512_setzero_ps();
                float *dst = out + o * och;
                for (int i = 0; i < ns; i++) {
                    __m512 y = _mm512_add_ps(_mm512_load_ps(&tile[m][16 * segs[i].v]), bv);
                    if (relu) y = _mm512_max_ps(y, _mm512_setzero_ps());
                    _mm512_mask_storeu_ps((float *)((uintptr_t)dst + (uintptr_t)(segs[i].off * (long)sizeof(float))),
                                          (__mmask16)segs[i].mask, y);
                }
            }
        }
    }
}

/* src [c][h][w] into dst [c][h + 2 pad][left + w + right], zero borders, then `slack` zero floats. */
__attribute__((target("avx512f"))) static void pad_avx512(const float *src, const float *mask, int c, int h, int w,
                                                         int pad, int left, int right, long slack, float *dst)
{
    int hp = h + 2 * pad, wp = left + w + right;
    for (int ch = 0; ch < c; ch++) {
        float *d = dst + (long)ch * hp * wp;
        memset(d, 0, (size_t)pad * wp * sizeof(float));
        for (int r = 0; r < h; r++) {
            float *row = d + (long)(r + pad) * wp;
            long at = ((long)ch * h + r) * w;
            for (int i = 0; i < left; i++) row[i] = 0.0f;
            for (int i = 0; i < right; i++) row[left + w + i] = 0.0f;
            for (int i = 0; i < w; i += 16) {
                __mmask16 m = lanes(w - i);
                if (mask) m &= _mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(m, mask + at + i), _mm512_setzero_ps(), _CMP_GT_OQ);
                /* Lanes the mask drops are stored as zero, lanes past the row not at all. */
                _mm512_mask_storeu_ps(row + left + i, lanes(w - i), _mm512_maskz_loadu_ps(m, src + at + i));
            }
        }
        memset(d + (long)(pad + h) * wp, 0, (size_t)pad * wp * sizeof(float));
    }
    memset(dst + (long)c * hp * wp, 0, (size_t)slack * sizeof(float));
}

/* Rows r[0..15] (16 floats each) become columns: r[j] = (old r[0][j], ..., old r[15][j]). Three
 * rounds of pairwise shuffles: 32-bit pairs, 64-bit pairs, then a 4 x 4 transpose of the 128-bit
 * lanes. */
static inline void __attribute__((target("avx512f"), always_inline)) transpose16(__m512 r[16])
{
    __m512 a[16], b[16];
    for (int i = 0; i < 8; i++) {
        a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        __m512d a0 = _mm512_castps_pd(a[4 * i]), a1 = _mm512_castps_pd(a[4 * i + 1]);
        __m512d a2 = _mm512_castps_pd(a[4 * i + 2]), a3 = _mm512_castps_pd(a[4 * i + 3]);
        b[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
        b[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
        b[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
        b[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
    }
    /* b[4g + e], 128-bit lane L: element 4L + e of rows 4g .. 4g + 3. */
    for (int e = 0; e < 4; e++) {
        __m512 c0 = _mm512_shuffle_f32x4(b[e], b[4 + e], 0x44), c1 = _mm512_shuffle_f32x4(b[e], b[4 + e], 0xEE);
        __m512 c2 = _mm512_shuffle_f32x4(b[8 + e], b[12 + e], 0x44), c3 = _mm512_shuffle_f32x4(b[8 + e], b[12 + e], 0xEE);
        r[e] = _mm512_shuffle_f32x4(c0, c2, 0x88);
        r[4 + e] = _mm512_shuffle_f32x4(c0, c2, 0xDD);
        r[8 + e] = _mm512_shuffle_f32x4(c1, c3, 0x88);
        r[12 + e] = _mm512_shuffle_f32x4(c1, c3, 0xDD);
    }
}

__attribute__((target("avx512f"))) static void transpose_avx512(const float *dy, const float *y, int cout, int P,
                                                               float *dyt, float *db)
{
    int ld = t2__conv_direct_lanes(cout);
    for (int o0 = 0; o0 < ld; o0 += 16) {
        __m512 sum = _mm512_setzero_ps();
        for (int p0 = 0; p0 < P; p0 += 16) {
            __mmask16 pm = lanes(P - p0);
            __m512 r[16];
            for (int i = 0; i < 16; i++) {
                int o = o0 + i;
                if (o >= cout) {
                    r[i] = _mm512_setzero_ps();
                    continue;
                }
                const float *src = dy + (long)o * P + p0;
                __mmask16 m = pm;
                if (y) m &= _mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(pm, y + (long)o * P + p0), _mm512_setzero_ps(), _CMP_GT_OQ);
                r[i] = _mm512_maskz_loadu_ps(m, src);
            }
            transpose16(r);
            int np = P - p0 < 16 ? P - p0 : 16;
            for (int j = 0; j < np; j++) {
                _mm512_store_ps(dyt + (long)(p0 + j) * ld + o0, r[j]);
                sum = _mm512_add_ps(sum, r[j]);
            }
        }
        float s[16];
        _mm512_storeu_ps(s, sum);
        for (int i = 0; i < 16 && o0 + i < cout; i++) db[o0 + i] += s[i];
    }
}

/* One block of the weight gradient: taps off[0 .. nt) (nt <= 24 / nv) x nv vectors of channels,
 * over output rows [r0, r1): 24 / nv x nv accumulators in registers, one aligned load per channel
 * vector and one broadcast per tap at each position. nv and full (nt is then 24 / nv) are constants
 * at every call, so the loops unroll, the accumulators stay in registers and a full block tests no
 * tap count inside its loop. Full blocks get their own copies for 64 and 32 channels, the common
 * widths; the others share the general one. */
static inline void __attribute__((target("avx512f"), always_inline))
wgrad_block(const int nv, const int full, const float *in, const long *off, int nt, const float *dyt, long ld, int r0,
            int r1, int ow, int w, float *dwt)
{
    const int nk = 24 / nv;
    if (full) nt = nk;
    __m512 acc[24];
#pragma GCC unroll 24
    for (int i = 0; i < 24; i++) acc[i] = _mm512_setzero_ps();
    for (int r = r0; r < r1; r++)
        for (int c = 0; c < ow; c++) {
            const float *d = dyt + ((long)r * ow + c) * ld;
            const float *x = in + (long)r * w + c;
            __m512 dv[4];
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++) dv[v] = _mm512_load_ps(d + 16 * v);
#pragma GCC unroll 24
            for (int t = 0; t < nk; t++) {
                if (t >= nt) break;
                __m512 s = _mm512_set1_ps(x[off[t]]);
#pragma GCC unroll 4
                for (int v = 0; v < nv; v++) acc[t * nv + v] = _mm512_fmadd_ps(s, dv[v], acc[t * nv + v]);
            }
        }
#pragma GCC unroll 24
    for (int t = 0; t < nk; t++) {
        if (t >= nt) break;
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++) {
            float *o = dwt + t * ld + 16 * v;
            _mm512_store_ps(o, _mm512_add_ps(_mm512_load_ps(o), acc[t * nv + v]));
        }
    }
}

__attribute__((target("avx512f"))) static void wgrad_avx512(const float *in, int cin, int h, int w, int k,
                                                           const float *dyt, int cout, int oh, int ow, float *dwt)
{
    long ld = t2__conv_direct_lanes(cout), kin = (long)cin * k * k, plane = (long)h * w;
    for (int o0 = 0; o0 < ld; o0 += 64) {
        int nv = ld - o0 >= 64 ? 4 : (int)(ld - o0) / 16, nk = 24 / nv;
        /* Rows per pass: their dy (at most 24 KB) stays in L1 while every tap block reads it, and
         * a block's accumulators go out to dwt once per 6144 / 16 nv positions. (2 rows of the
         * seeds' conv2 per pass gave 5-8% less than 4.) */
        int rows = (int)(6144 / ((long)ow * 16 * nv));
        if (rows < 1) rows = 1;
        for (int r0 = 0; r0 < oh; r0 += rows) {
            int r1 = r0 + rows < oh ? r0 + rows : oh;
            /* The taps' offsets by counting (ch, ki, kj) along: a division per tap, once per block
             * and pass, cost as much as a third of the block's FMAs. */
            long ch = 0, ki = 0, kj = 0;
            for (long t0 = 0; t0 < kin; t0 += nk) {
                long off[24];
                int nt = kin - t0 < nk ? (int)(kin - t0) : nk;
                for (int t = 0; t < nt; t++) {
                    off[t] = ch * plane + ki * w + kj;
                    if (++kj == k) {
                        kj = 0;
                        if (++ki == k) ki = 0, ch++;
                    }
                }
                const float *d = dyt + o0;
                float *o = dwt + t0 * ld + o0;
                int full = nt == nk;
                if (full && nv == 4) wgrad_block(4, 1, in, off, nt, d, ld, r0, r1, ow, w, o);
                else if (full && nv == 2) wgrad_block(2, 1, in, off, nt, d, ld, r0, r1, ow, w, o);
                else if (nv == 4) wgrad_block(4, 0, in, off, nt, d, ld, r0, r1, ow, w, o);
                else if (nv == 3) wgrad_block(3, 0, in, off, nt, d, ld, r0, r1, ow, w, o);
                else if (nv == 2) wgrad_block(2, 0, in, off, nt, d, ld, r0, r1, ow, w, o);
                else wgrad_block(1, 0, in, off, nt, d, ld, r0, r1, ow, w, o);
            }
        }
    }
}

void t2__conv_direct_pad(const float *src, const float *mask, int c, int h, int w, int pad, float *dst)
{
    pad_avx512(src, mask, c, h, w, pad, pad, pad, 0, dst);
}

void t2__conv_direct_pad_dy(const float *dy, const float *mask, int c, int h, int w, int k1, float *dst)
{
    pad_avx512(dy, mask, c, h, w, k1, k1, 0, k1, dst);
}

void t2__conv_direct_transpose_dy(const float *dy, const float *y, int cout, int P, float *dyt, float *db)
{
    transpose_avx512(dy, y, cout, P, dyt, db);
}

void t2__conv_direct_weight_grad(const float *in, int cin, int h, int w, int k, const float *dyt, int cout, int oh,
                                 int ow, float *dwt)
{
    wgrad_avx512(in, cin, h, w, k, dyt, cout, oh, ow, dwt);
}

void t2__conv_direct(const float *in, int cin, int h, int w, int k, int z0, int z1, const float *wp, int cout,
                     const float *bias, int relu, int r0, int r1, int c0, int c1, float *out, long orow, long och)
{
    if (r1 > r0 && c1 > c0)
        direct_avx512(in, cin, h, w, k, z0, z1, wp, cout, bias, relu, r0, r1, c0, c1, out, orow, och);
}

#else
/* Plain C versions for builds on other architectures, where t2__conv_direct_available() says 0 and
 * conv2d never calls them: every entry point still has a defined result. */
static void pad_plain(const float *src, const float *mask, int c, int h, int w, int pad, int left, int right,
                      long slack, float *dst)
{
    int hp = h + 2 * pad, wp = left + w + right;
    memset(dst, 0, ((size_t)c * hp * wp + (size_t)slack) * sizeof(float));
    for (long i = 0; i < (long)c * h * w; i++) {
        long ch = i / ((long)h * w), r = i / w % h, col = i % w;
        dst[(ch * hp + r + pad) * wp + col + left] = mask && !(mask[i] > 0.0f) ? 0.0f : src[i];
    }
}

void t2__conv_direct_pad(const float *src, const float *mask, int c, int h, int w, int pad, float *dst)
{
    pad_plain(src, mask, c, h, w, pad, pad, pad, 0, dst);
}

void t2__conv_direct_pad_dy(const float *dy, const float *mask, int c, int h, int w, int k1, float *dst)
{
    pad_plain(dy, mask, c, h, w, k1, k1, 0, k1, dst);
}

void t2__conv_direct_transpose_dy(const float *dy, const float *y, int cout, int P, float *dyt, float *db)
{
    int ld = t2__conv_direct_lanes(cout);
    for (int p = 0; p < P; p++)
        for (int o = 0; o < ld; o++) {
            float v = o < cout ? dy[(long)o * P + p] : 0.0f;
            if (o < cout && y && !(y[(long)o * P + p] > 0.0f)) v = 0.0f;
            dyt[(long)p * ld + o] = v;
        }
    for (int o = 0; o < cout; o++) {
        float s = 0.0f;
        for (int p = 0; p < P; p++) s += dyt[(long)p * ld + o];
        db[o] += s;
    }
}

void t2__conv_direct_weight_grad(const float *in, int cin, int h, int w, int k, const float *dyt, int cout, int oh,
                                 int ow, float *dwt)
{
    long ld = t2__conv_direct_lanes(cout), kin = (long)cin * k * k, plane = (long)h * w;
    for (long t = 0; t < kin; t++) {
        long off = t / (k * k) * plane + t / k % k * w + t % k;
        for (int o = 0; o < cout; o++) {
            float s = 0.0f;
            for (int r = 0; r < oh; r++)
                for (int c = 0; c < ow; c++) s += dyt[((long)r * ow + c) * ld + o] * in[off + (long)r * w + c];
            dwt[t * ld + o] += s;
        }
    }
}

void t2__conv_direct(const float *in, int cin, int h, int w, int k, int z0, int z1, const float *wp, int cout,
                     const float *bias, int relu, int r0, int r1, int c0, int c1, float *out, long orow, long och)
{
    (void)z0, (void)z1; /* the zero rows add zero here */
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
#endif
