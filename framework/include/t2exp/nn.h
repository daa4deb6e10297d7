/* t2exp/nn.h — sequential networks, layers, losses and metrics (float32, NCHW, CPU/OpenBLAS).
 *
 * A t2_net is a stack of layers built by appending: each append infers the layer's input shape
 * from the previous layer's output, so a shape mistake is reported at the append that makes it.
 * After the last layer, t2_net_init() lays every parameter out in ONE contiguous buffer (and the
 * gradients in another, the batchnorm running statistics in a third), described by a table of
 * {name, shape, offset} — one allreduce, one checkpoint write, one optimizer loop — and draws the
 * initial values like PyTorch's defaults from the caller's seeded RNG.
 *
 * Forward/backward keep their activations inside the net, sized for the largest batch seen so
 * far: after the first step at a given batch size, a training step allocates nothing. Gradients
 * accumulate across backward calls until t2_net_zero_grad(). */
#ifndef T2EXP_NN_H
#define T2EXP_NN_H

#include <stddef.h>
#include <stdint.h>
#include "t2exp/rng.h"
#include "t2exp/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct t2_net t2_net;

typedef enum t2_mode {
    T2_EVAL = 0,   /* dropout off, batchnorm uses running statistics */
    T2_TRAIN = 1,  /* dropout on, batchnorm uses batch statistics and updates running ones */
} t2_mode;

/* Creates an empty net whose samples have the given shape (without the batch dimension):
 * {C, H, W} for images, {F} for feature vectors. ndim is 1 or 3. */
int t2_net_create(t2_net **out, int ndim, const int *sample_shape);

/* Frees the net and everything it owns. Accepts NULL. */
void t2_net_free(t2_net *net);

/* Layer appenders. Each returns T2_ESHAPE if the current output shape does not suit the layer
 * (e.g. conv2d after a flat layer), T2_EINVAL for bad settings, T2_ESTATE after t2_net_init. */
int t2_net_dense(t2_net *net, int out_features);                 /* y = x W^T + b, W [out, in] */
int t2_net_conv2d(t2_net *net, int out_channels, int kernel, int stride, int padding); /* W [oc, ic, k, k] */
int t2_net_maxpool2d(t2_net *net, int kernel, int stride);       /* no padding, floor mode */
int t2_net_avgpool2d(t2_net *net, int kernel, int stride, int padding); /* padding counted (PyTorch default) */
int t2_net_relu(t2_net *net);
int t2_net_leaky_relu(t2_net *net, float negative_slope);
int t2_net_tanh(t2_net *net);
int t2_net_sigmoid(t2_net *net);
int t2_net_gelu(t2_net *net);                                    /* exact erf form */
int t2_net_dropout(t2_net *net, float p);                        /* inverted: kept values scaled by 1/(1-p) */
int t2_net_flatten(t2_net *net);
/* Batch normalisation over the batch (1d, for [F] samples) or batch×H×W (2d, for [C,H,W]),
 * with affine weight/bias; running stats updated with `momentum` (PyTorch: 0.1) using the
 * unbiased batch variance. */
int t2_net_batchnorm(t2_net *net, float eps, float momentum);
int t2_net_log_softmax(t2_net *net);                             /* over the features of [F] samples */

/* ---- layers for modern small nets ----
 * Layer normalisation over the LAST dimension of a sample, like PyTorch's nn.LayerNorm(D): D = F
 * for [F] samples, D = W for [C, H, W] (each (c, h) row of W values on its own). Mean and biased
 * variance per row, in training and evaluation alike (no running statistics); affine weight
 * (init 1) and bias (init 0) of size D ("3.layernorm.weight"). T2_EINVAL unless eps > 0. */
int t2_net_layernorm(t2_net *net, float eps);
/* A lookup table like nn.Embedding(num_embeddings, dim): each sample is [T] integer ids in
 * [0, num_embeddings) stored as floats, its output is [1, T, dim] (the T picked rows of the weight
 * [num_embeddings, dim], init N(0, 1)), so that layernorm (over dim), flatten (then dense) and
 * global_avgpool apply after it. T2_ESHAPE unless the input is [T]; an id that is not an integer
 * in range fails t2_net_forward with T2_EINVAL naming the layer, the sample and the position. The
 * ids get no gradient (dx is zero). */
int t2_net_embedding(t2_net *net, int num_embeddings, int dim);
/* Global average pooling, [C, H, W] -> [C]: the mean of each channel's H*W plane (PyTorch's
 * AdaptiveAvgPool2d(1) + flatten). T2_ESHAPE on [F] samples. */
int t2_net_global_avgpool(t2_net *net);

/* ---- beyond a sequence: residual blocks and channel concatenation ----
 * A block opens at the current tail; the layers appended until its end form f, and the end
 * joins f's output with the block's input x:
 *   t2_net_residual_begin(net); ...layers...; t2_net_residual_end(net);   y = x + f(x)
 *   t2_net_concat_begin(net);   ...layers...; t2_net_concat_end(net);     y = concat(x, f(x))
 * A residual whose f changes the shape adds a projection of x, with its weight and bias in the
 * flat arrays ("5.residual.proj_weight"): for [C,H,W] a 1x1 convolution with the stride that maps
 * x's H,W onto f's (T2_ESHAPE when none does), for [F] a dense layer. Concatenation stacks
 * channels ([C1+C2,H,W]; H and W must agree) or features ([F1+F2]); x comes first. Blocks nest
 * up to T2_NET_MAX_NESTING deep; a block needs at least one layer; every block must be closed
 * before t2_net_init (T2_ESTATE otherwise, as for an end without a matching begin). */
#define T2_NET_MAX_NESTING 4
int t2_net_residual_begin(t2_net *net);
int t2_net_residual_end(t2_net *net);
int t2_net_concat_begin(t2_net *net);
int t2_net_concat_end(t2_net *net);

/* ---- custom layers ----
 * A user-defined operation that the net treats like its own: its parameters live in the net's
 * flat arrays (one tensor "3.custom:NAME.param"), so optimizers, allreduce and checkpoints cover
 * them, and t2_net_gradcheck can check it. Shapes are per sample ({F} or {C,H,W}). */
typedef struct t2_layer_call {
    int n;                        /* samples in the batch */
    int in_ndim, in_shape[3];     /* per-sample input shape */
    int out_ndim, out_shape[3];   /* per-sample output shape (from output_shape) */
    size_t in_size, out_size;     /* floats per sample */
    float *params;                /* the layer's nparams parameters (NULL when nparams is 0) */
    float *grads;                 /* backward: ADD the parameter gradients here (accumulate) */
    size_t nparams;
    t2_mode mode;                 /* forward: T2_TRAIN or T2_EVAL */
    t2_rng *rng;                  /* forward: the net's rng (NULL in T2_EVAL when none given) */
} t2_layer_call;

/* Callbacks return T2_OK or a negative T2_E code (set the message with t2_seterr); a failure
 * makes t2_net_forward/backward (or the appender, or t2_net_init) fail naming the layer. */
typedef struct t2_layer_def {
    const char *name;  /* 1..24 characters [A-Za-z0-9_] */
    /* Required: the output shape for an input shape (ndim 1 or 3); refuse a shape with T2_ESHAPE. */
    int (*output_shape)(void *user, int in_ndim, const int in_shape[3], int *out_ndim, int out_shape[3]);
    /* Optional (NULL: none): how many parameters the layer needs for this input shape. */
    size_t (*param_count)(void *user, int in_ndim, const int in_shape[3]);
    /* Optional (NULL: parameters start at 0): initial values, drawn from rng for reproducibility. */
    int (*init)(void *user, float *params, size_t nparams, t2_rng *rng);
    /* Required: y[n * out_size] from x[n * in_size]. */
    int (*forward)(void *user, const t2_layer_call *c, const float *x, float *y);
    /* Required: given x, the forward's y and dy, add into c->grads and, if dx is not NULL, write
     * dx[n * in_size] (overwrite, not add). */
    int (*backward)(void *user, const t2_layer_call *c, const float *x, const float *y, const float *dy, float *dx);
} t2_layer_def;

/* Appends a custom layer. def (and user, if used) must outlive the net; the net never frees
 * them. T2_EINVAL for a bad name or a missing callback. */
int t2_net_custom(t2_net *net, const t2_layer_def *def, void *user);

/* Finishes the net: allocates the flat parameter, gradient and buffer arrays and initialises them
 * like PyTorch (dense/conv: Kaiming-uniform weights with a=sqrt(5), i.e. U(±1/sqrt(fan_in)), bias
 * U(±1/sqrt(fan_in)); batchnorm weight 1, bias 0, running mean 0, var 1). Draws from rng. */
int t2_net_init(t2_net *net, t2_rng *rng);

/* Runs the net on x ([n, sample shape...]) and points *y at the output (owned by the net, valid
 * until the next forward). In T2_TRAIN mode the activations needed by t2_net_backward are kept
 * and dropout masks are drawn from rng (rng may be NULL in T2_EVAL mode). In T2_EVAL mode a large
 * batch runs through the layers a chunk of samples at a time (the activations stay the training
 * batch's size), unless the net has a custom layer, which then sees the whole batch. */
int t2_net_forward(t2_net *net, const t2_tensor *x, t2_mode mode, t2_rng *rng, const t2_tensor **y);

/* Back-propagates dy (same shape as the last forward's output) through the last T2_TRAIN
 * forward: adds the parameter gradients into the gradient buffer, and, if dx is not NULL,
 * points *dx at the gradient with respect to the input (owned by the net). */
int t2_net_backward(t2_net *net, const t2_tensor *dy, const t2_tensor **dx);

/* Zeroes the gradient buffer. */
void t2_net_zero_grad(t2_net *net);

/* The flat buffers and their lengths in floats (NULL/0 before t2_net_init). Parameters and
 * gradients share one layout; buffers hold non-trained state (batchnorm running statistics). */
float *t2_net_params(t2_net *net, size_t *n);
float *t2_net_grads(t2_net *net, size_t *n);
float *t2_net_buffers(t2_net *net, size_t *n);

/* One entry of the tensor table: a named slice of the parameter (or, with is_buffer, of the
 * buffer) array. Names look like "0.conv2d.weight": layer index, kind, role. */
typedef struct t2_param_info {
    char name[48];
    int ndim;
    int shape[T2_MAX_DIMS];
    size_t offset;   /* in floats, from the start of its flat array */
    size_t size;     /* in floats */
    int is_buffer;
} t2_param_info;

/* Number of entries in the tensor table, and entry i (T2_EINVAL if out of range). */
int t2_net_num_tensors(const t2_net *net);
int t2_net_tensor_info(const t2_net *net, int i, t2_param_info *info);

/* Number of layers; the per-sample output shape of the whole net. */
int t2_net_num_layers(const t2_net *net);
int t2_net_output_shape(const t2_net *net, int *ndim, int shape[T2_MAX_DIMS]);

/* Writes a one-line-per-layer summary (kind, output shape, parameters) into buf. */
int t2_net_summary(const t2_net *net, char *buf, size_t len);

/* Finite-difference gradient check of an initialised net on input x ([n, sample shape...]):
 * with L = sum(y * r) for a fixed random r (drawn from seed, as is the dropout mask), compares
 * t2_net_backward's gradients for up to 40 entries of the input and of every parameter tensor
 * with (L(v + eps) - L(v - eps)) / 2eps. The error of one entry is |analytic - numeric| /
 * max(1, |analytic|, |numeric|). Runs in T2_TRAIN mode; the batchnorm running statistics are
 * restored afterwards, the gradient buffer is left holding the gradients of L. eps around 1e-2
 * suits float32 (smaller drowns in rounding, larger crosses relu/max kinks). */
typedef struct t2_gradcheck_report {
    double max_rel_err;   /* the largest error over every checked entry */
    char worst[80];       /* where it was: "input[17]" or "3.custom:scale_shift.param[2]" */
    double analytic, numeric;
    int nchecked;
} t2_gradcheck_report;
int t2_net_gradcheck(t2_net *net, const t2_tensor *x, uint64_t seed, float eps, t2_gradcheck_report *report);

/* Sets the number of threads the numeric core uses: OpenBLAS's GEMM threads and the pool that
 * runs the loops around them (im2col, activations, pooling). Default 1 (single-threaded) until
 * called; the experiment runner sets it per trial so that concurrent trials never oversubscribe
 * the cores, and again between batches as other trials end. The layers split each batch into as
 * many parts as threads, so the numbers depend on n, unless the runner has fixed the part count
 * (docs/performance.md#threads). T2_EINVAL outside 1..64. */
int t2_set_num_threads(int n);

/* The thread count last set with t2_set_num_threads (1 by default). */
int t2_get_num_threads(void);

/* ---- losses: each computes the mean loss over the batch and, if dinput is not NULL, writes its
 * gradient with respect to the input (same shape as input; caller-owned). ---- */

/* Softmax cross-entropy on raw logits [n, classes] and labels in [0, classes), with label
 * smoothing in [0, 1) (PyTorch's cross_entropy(label_smoothing=...)). T2_EINVAL for a label out
 * of range (naming the sample), T2_ENUMERIC if the loss is not finite. */
int t2_loss_softmax_xent(const t2_tensor *logits, const int32_t *labels, float label_smoothing,
                         float *loss, t2_tensor *dlogits);

/* Negative log-likelihood on log-probabilities [n, classes] (after t2_net_log_softmax). */
int t2_loss_nll(const t2_tensor *logprobs, const int32_t *labels, float *loss, t2_tensor *dlogprobs);

/* Mean squared error over all elements of pred and target (same shape, e.g. [n, W] predictions
 * against a batch's targets). T2_ESHAPE naming both shapes when they differ ("targets of width 3
 * for a prediction of width 1" when only the width does). */
int t2_loss_mse(const t2_tensor *pred, const t2_tensor *target, float *loss, t2_tensor *dpred);

/* Huber loss with threshold delta > 0 (PyTorch's HuberLoss(delta), mean reduction): per element
 * 0.5 d^2 if |d| < delta, else delta (|d| - 0.5 delta), d = pred - target. Shapes as
 * t2_loss_mse; T2_EINVAL for a delta that is not finite and positive. */
int t2_loss_huber(const t2_tensor *pred, const t2_tensor *target, float delta, float *loss, t2_tensor *dpred);

/* ---- metrics ---- */

/* Number of samples whose label is among the k highest scores of their row of scores [n, classes]
 * (ties broken toward the lower class index). k = 1 is plain accuracy. */
int t2_topk_correct(const t2_tensor *scores, const int32_t *labels, int k, int64_t *correct);

#ifdef __cplusplus
}
#endif
#endif
