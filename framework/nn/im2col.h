/* im2col.h — unfolding image patches into GEMM columns and folding them back. */
#ifndef T2_NN_IM2COL_H
#define T2_NN_IM2COL_H

/* Geometry of one convolution or pooling window sweep over a [C, H, W] image. */
typedef struct t2__conv_geom {
    int c, h, w;        /* input */
    int k, stride, pad;
    int oh, ow;         /* output */
} t2__conv_geom;

/* Writes the patches of one image x [C, H, W] into col, a [C*k*k, ld] row-major matrix whose
 * columns [0, oh*ow) are this image's output positions (ld > oh*ow lets a batch share one matrix). */
void t2__im2col(const t2__conv_geom *g, const float *x, float *col, long ld);

/* The adjoint: adds each column entry back into its pixel of dx [C, H, W] (dx is not zeroed). */
void t2__col2im(const t2__conv_geom *g, const float *col, long ld, float *dx);

#endif
