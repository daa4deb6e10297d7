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
 * flipped, so both use one kernel. */
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

/* Floats of a packed weight for cout output channels over kin = cin * k * k inputs. */
size_t t2__conv_direct_packed_floats(int cout, int kin);

/* Packs w [cout][cin][k][k] for the forward pass, into blocks of T2__CONV_DIRECT_MR output
 * channels (the missing channels of the last block are zero). */
void t2__conv_direct_pack(const float *w, int cout, int cin, int k, float *wp);

/* Packs the same weight for the input gradient: output channels cin, inputs cout * k * k, the
 * kernel flipped in both directions. */
void t2__conv_direct_pack_flipped(const float *w, int cout, int cin, int k, float *wp);

/* A stride-1 valid convolution of in [cin][h][w] with the packed weight wp of cout channels,
 * kernel k: for output rows r in [r0, r1) and columns c in [c0, c1) (c1 <= w - k + 1),
 *   out[o * och + (r - r0) * orow + (c - c0)] = act(bias[o] + sum in[ch][r + ki][c + kj] * W),
 * bias NULL for none, act the relu if relu is nonzero. Reads no float of in past h * w per channel. */
void t2__conv_direct(const float *in, int cin, int h, int w, int k, const float *wp, int cout, const float *bias,
                     int relu, int r0, int r1, int c0, int c1, float *out, long orow, long och);

#endif
