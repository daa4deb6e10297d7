/* conv_direct.h — stride-1 convolution computed straight from the image on AVX-512 (internal).
 *
 * conv2d's im2col path copies every image into a column matrix nine times its size (k = 3), lets
 * OpenBLAS copy that again into its own panels, and regroups the GEMM's result into NCHW. For a
 * stride-1 convolution none of this is needed: on a grid as wide as the input row, output position
 * p = r * w + col reads input p + ki * w + kj for kernel offset (ki, kj), so sixteen neighbouring
 * outputs read sixteen neighbouring inputs, one vector load straight from the image. The kernel
 * computes such a grid (the w - ow columns past each output row are computed and dropped: 8% more
 * arithmetic for conv2 of the seeds' CNN) and writes the valid outputs in NCHW with the bias and
 * relu applied. The input gradient is the same computation on dy padded by k - 1 with the kernel
 * flipped, so both use one kernel; its grid is exactly as wide as the (padded) input
 * (t2__conv_direct_pad_dy). */
#ifndef T2_NN_CONV_DIRECT_H
#define T2_NN_CONV_DIRECT_H

#include <stddef.h>

/* Output channels per packed weight block. */
#define T2__CONV_DIRECT_MR 8

/* Whether this CPU runs the direct kernel (AVX-512F, and not switched off). */
int t2__conv_direct_available(void);

/* Switches the direct kernel off (0) or back on (1) for this process (tests compare both paths);
 * returns the previous setting. */
int t2__conv_direct_set(int on);

/* The kernels conv2d runs stride-1 layers on now: "direct AVX-512" or "im2col + BLAS" (trial logs,
 * `t2exp info`). */
const char *t2__conv_direct_kernels(void);

/* The functions below are called only where t2__conv_direct_available() said 1: conv2d asks once
 * per pass, not per sample. (A build for another architecture has plain C versions of them.) */

/* Floats of a packed weight for cout output channels over kin = cin * k * k inputs. */
size_t t2__conv_direct_packed_floats(int cout, int kin);

/* Packs w [cout][cin][k][k] for the forward pass, into blocks of T2__CONV_DIRECT_MR output
 * channels (the missing channels of the last block are zero). */
void t2__conv_direct_pack(const float *w, int cout, int cin, int k, float *wp);

/* Packs the same weight for the input gradient: output channels cin, inputs cout * k * k, the
 * kernel flipped in both directions. */
void t2__conv_direct_pack_flipped(const float *w, int cout, int cin, int k, float *wp);

/* A stride-1 valid convolution of in [cin][h][w] with the packed weight wp of cout channels,
 * kernel k: for output rows r in [r0, r1) (r1 <= h - k + 1) and columns c in [c0, c1),
 *   out[o * och + (r - r0) * orow + (c - c0)] = act(bias[o] + sum in[ch][r + ki][c + kj] * W),
 * bias NULL for none, act the relu if relu is nonzero. The caller promises that every row of in
 * outside [z0, z1) is zero (a padded image's or dy's border; 0, h for none): taps that would read
 * only such rows are skipped. With c1 <= w - k + 1 it reads no float of in past h * w per
 * channel. Columns up to c1 = w are allowed where the layout wraps (see t2__conv_direct_pad_dy):
 * column c + kj >= w is then read as the first floats of the next row (of the next channel for the
 * last row, past the last plane for the last channel). */
void t2__conv_direct(const float *in, int cin, int h, int w, int k, int z0, int z1, const float *wp, int cout,
                     const float *bias, int relu, int r0, int r1, int c0, int c1, float *out, long orow, long och);

/* src [c][h][w] into dst [c][h + 2 pad][w + 2 pad] with zero borders, each value zeroed where mask
 * (same shape as src; NULL for none) is not > 0: the fused relu's mask on dy. */
void t2__conv_direct_pad(const float *src, const float *mask, int c, int h, int w, int pad, float *dst);

/* dy [c][h][w] for the input gradient (zeroed where mask, NULL for none, is not > 0) into dst
 * [c][h + 2 k1][k1 + w] with zero borders, then k1 zero floats: k1 zero columns on the left only.
 * Row by row, each row's left zeros follow the row before, so for the full convolution (grid
 * rows and columns of t2__conv_direct up to h + k1 and w + k1) a tap past a row's end reads the
 * next row's left zeros, as a right border would give: the grid needs no columns past the image. */
void t2__conv_direct_pad_dy(const float *dy, const float *mask, int c, int h, int w, int k1, float *dst);

/* Channels of a transposed dy row: cout rounded up to 16 (one or more whole vectors). */
int t2__conv_direct_lanes(int cout);

/* For the weight gradient: dy [cout][P] (masked by y > 0 where y is not NULL, the fused relu) into
 * dyt [P][t2__conv_direct_lanes(cout)] (zero past cout; dyt 64-byte aligned), adding each channel's
 * sum into db. */
void t2__conv_direct_transpose_dy(const float *dy, const float *y, int cout, int P, float *dyt, float *db);

/* The weight gradient of a stride-1 valid convolution of in [cin][h][w] whose output is oh x ow:
 *   dwt[t][o] += sum over r < oh, c < ow of dyt[r * ow + c][o] * in[ch][r + ki][c + kj]
 * for every tap t = (ch * k + ki) * k + kj, dwt [cin * k * k][lanes] (lanes as for dyt; dwt
 * 64-byte aligned). The sum runs over the positions in order, so it depends only on the shapes. */
void t2__conv_direct_weight_grad(const float *in, int cin, int h, int w, int k, const float *dyt, int cout, int oh,
                                 int ow, float *dwt);

#endif
