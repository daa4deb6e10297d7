/* layer.h — the internal layer interface behind t2_net.
 *
 * A layer knows its per-sample input/output shapes and hyper-settings; the net owns every buffer.
 * Parameters live in the net's flat arrays: a layer sees pointers into them (w/b and dw/db), set
 * when the net is initialised. Per-batch scratch (dropout masks, pooling argmax, im2col columns,
 * batchnorm statistics) is sized by the net for the largest batch and handed to the layer. */
#ifndef T2_NN_LAYER_H
#define T2_NN_LAYER_H

#include <stddef.h>
#include "t2exp/error.h"
#include "t2exp/nn.h"

typedef struct t2__layer t2__layer;

typedef struct t2__layer_ops {
    const char *kind;
    /* Per-batch scratch in bytes for a batch of n (0 if none). */
    size_t (*scratch_bytes)(const t2__layer *l, int n);
    /* PyTorch-style initialisation of the layer's parameters and buffers. */
    void (*init)(t2__layer *l, t2_rng *rng);
    void (*forward)(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng);
    /* dx may be NULL (first layer, input gradient not wanted). Adds into dw/db. */
    void (*backward)(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n);
} t2__layer_ops;

struct t2__layer {
    const t2__layer_ops *ops;
    int in_ndim, in_shape[3];   /* per sample: {F} or {C, H, W} */
    int out_ndim, out_shape[3];
    size_t in_size, out_size;   /* floats per sample */

    /* Settings (meaning depends on the kind). */
    int kernel, stride, padding, channels; /* channels: also the embedding's num_embeddings */
    float p;                    /* dropout probability, leaky slope, batchnorm/layernorm eps */
    float momentum;             /* batchnorm */

    /* Parameter slices (set by t2_net_init). */
    size_t nweight, nbias, nbuffer;  /* counts the layer asks for */
    float *w, *b, *dw, *db;
    float *buf;                 /* running statistics */

    void *scratch;              /* per-batch scratch, scratch_bytes(n) bytes */

    /* Fusion, decided by t2_net_init: a conv2d/dense followed by relu applies the relu itself
     * (fuse_relu), and the relu layer then only aliases its input (alias); flatten always aliases.
     * An aliasing layer computes nothing: its output is its input's buffer and its gradient passes
     * through. This saves two full passes over the largest activations per step. */
    int fuse_relu;
    int alias;

    /* Parts a layer may split a batch into (one per pool thread), set by the net before sizing
     * the scratch, which holds one slice per part. */
    int nparts;

    /* Graph joins (residual add, channel concat; see graph.c): `join` is nonzero on the layer that
     * closes a block, `skip` the index of the layer whose output entered the block (-1: the net's
     * input). The net points skip_x at that output before the join's forward and hands skip_dx
     * (n x skip_size floats, owned by the net) to its backward, which writes the gradient flowing
     * back along the skip path there; the net adds it in when the sweep reaches layer `skip`. */
    int join;
    int skip;
    int skip_ndim, skip_shape[3];
    size_t skip_size;
    const float *skip_x;
    float *skip_dx;
    int is_skip_src;            /* some join reads this layer's output (set by t2_net_init) */

    /* Custom layers (custom.c): the user's definition and pointer, the kind name shown in tensor
     * names ("custom:NAME"), and the status of the last callback, which the net checks after
     * each call (of the built-in layers only the embedding, whose ids can be bad, sets it, so
     * their path costs one predictable branch). */
    const t2_layer_def *def;
    void *user;
    char kind_name[32];
    int rc;
};

extern const t2__layer_ops t2__dense_ops, t2__conv2d_ops, t2__maxpool2d_ops, t2__avgpool2d_ops,
    t2__relu_ops, t2__leaky_relu_ops, t2__tanh_ops, t2__sigmoid_ops, t2__gelu_ops, t2__dropout_ops,
    t2__flatten_ops, t2__batchnorm_ops, t2__log_softmax_ops;
extern const t2__layer_ops t2__residual_ops, t2__concat_ops, t2__custom_ops;
extern const t2__layer_ops t2__layernorm_ops, t2__embedding_ops, t2__global_avgpool_ops;

/* Uniform fill in [-bound, bound) from rng (PyTorch's kaiming_uniform(a=sqrt(5)) and bias init). */
void t2__fill_uniform(float *p, size_t n, float bound, t2_rng *rng);

#endif
