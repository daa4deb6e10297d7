/* net.c — the sequential container: layer list, flat parameter/gradient/buffer arrays with their
 * tensor table, activation storage, and the forward/backward sweeps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "net.h"
#include "parallel.h"

struct t2_net {
    int in_ndim, in_shape[3];
    size_t in_size;
    t2__layer *layers;
    int nlayers, cap;

    /* Open blocks (graph.c), innermost last: the skip layer index and the kind of each. */
    int open_skip[T2_NET_MAX_NESTING], open_kind[T2_NET_MAX_NESTING];
    int depth;

    int initialized;
    float *params, *grads, *buffers;
    size_t nparams, nbuffers;
    t2_param_info *table;
    int ntable;

    int max_batch;      /* activations and scratch are sized for this many samples */
    int parts;          /* ... and for this many parts (t2__pool_parts) */
    float **acts;       /* acts[i]: output of layer i */
    float *ping, *pong; /* gradients flowing backward alternate between these */
    int last_n;         /* batch size of the last forward */
    int last_train;     /* the last forward was in T2_TRAIN mode: backward may run */
    const float *last_x;
    t2_tensor out, dx;
    float *eval_out;      /* a chunked evaluation's output (eval_chunk) */
    size_t eval_out_cap;  /* ... its capacity in floats */
    double *profile;    /* t2__net_profile's accumulators, or NULL */
};

static size_t shape_size(int ndim, const int *s)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)s[i];
    return n;
}

int t2_net_create(t2_net **out, int ndim, const int *sample_shape)
{
    if (!out || !sample_shape) return t2_seterr(T2_EINVAL, "t2_net_create: NULL argument");
    *out = NULL;
    if (ndim != 1 && ndim != 3)
        return t2_seterr(T2_EINVAL, "t2_net_create: sample ndim %d (must be 1 for [F] or 3 for [C,H,W])", ndim);
    for (int i = 0; i < ndim; i++)
        if (sample_shape[i] <= 0 || sample_shape[i] > (1 << 24))
            return t2_seterr(T2_EINVAL, "t2_net_create: sample dimension %d is %d", i, sample_shape[i]);
    t2_net *net = calloc(1, sizeof *net);
    if (!net) return t2_seterr(T2_ENOMEM, "t2_net_create: out of memory");
    net->in_ndim = ndim;
    memcpy(net->in_shape, sample_shape, (size_t)ndim * sizeof(int));
    net->in_size = shape_size(ndim, sample_shape);
    *out = net;
    return T2_OK;
}

static void free_activations(t2_net *net)
{
    for (int i = 0; net->acts && i < net->nlayers; i++) {
        if (!net->layers[i].alias || i == 0) t2__free_aligned(net->acts[i]);
        t2__free_aligned(net->layers[i].scratch);
        t2__free_aligned(net->layers[i].skip_dx);
        net->layers[i].scratch = NULL;
        net->layers[i].skip_dx = NULL;
    }
    free(net->acts);
    net->acts = NULL;
    t2__free_aligned(net->ping);
    t2__free_aligned(net->pong);
    net->ping = net->pong = NULL;
    net->max_batch = 0;
}

void t2_net_free(t2_net *net)
{
    if (!net) return;
    free_activations(net);
    free(net->layers);
    t2__free_aligned(net->eval_out);
    t2__free_aligned(net->params);
    t2__free_aligned(net->grads);
    t2__free_aligned(net->buffers);
    free(net->table);
    free(net);
}

int t2__net_tail(t2_net *net, int *ndim, int shape[3])
{
    if (!net) return t2_seterr(T2_EINVAL, "t2_net: NULL net");
    if (net->initialized) return t2_seterr(T2_ESTATE, "t2_net: cannot add layers after t2_net_init");
    if (net->nlayers == 0) {
        *ndim = net->in_ndim;
        memcpy(shape, net->in_shape, sizeof net->in_shape);
    } else {
        const t2__layer *l = &net->layers[net->nlayers - 1];
        *ndim = l->out_ndim;
        memcpy(shape, l->out_shape, sizeof l->out_shape);
    }
    return T2_OK;
}

/* The per-sample output shape of layer i (-1: the net's input). */
static void layer_out_shape(const t2_net *net, int i, int *ndim, int shape[3])
{
    *ndim = i < 0 ? net->in_ndim : net->layers[i].out_ndim;
    memcpy(shape, i < 0 ? net->in_shape : net->layers[i].out_shape, 3 * sizeof(int));
}

int t2__net_block_open(t2_net *net, int kind, const char *who)
{
    if (!net) return t2_seterr(T2_EINVAL, "%s: NULL net", who);
    if (net->initialized) return t2_seterr(T2_ESTATE, "%s: cannot add layers after t2_net_init", who);
    if (net->depth == T2_NET_MAX_NESTING)
        return t2_seterr(T2_ESTATE, "%s: blocks nest at most %d deep (at layer %d)", who, T2_NET_MAX_NESTING,
                         net->nlayers);
    net->open_skip[net->depth] = net->nlayers - 1;
    net->open_kind[net->depth++] = kind;
    return T2_OK;
}

int t2__net_block_close(t2_net *net, int kind, const char *who, t2__layer *join)
{
    if (!net) return t2_seterr(T2_EINVAL, "%s: NULL net", who);
    if (net->initialized) return t2_seterr(T2_ESTATE, "%s: cannot add layers after t2_net_init", who);
    if (net->depth == 0 || net->open_kind[net->depth - 1] != kind)
        return t2_seterr(T2_ESTATE, "%s: no matching %s_begin is open (at layer %d)", who,
                         kind == T2__BLOCK_RESIDUAL ? "t2_net_residual" : "t2_net_concat", net->nlayers);
    int skip = net->open_skip[net->depth - 1];
    if (skip == net->nlayers - 1)
        return t2_seterr(T2_ESTATE, "%s: the block opened after layer %d is empty", who, skip);
    join->join = 1;
    join->skip = skip;
    layer_out_shape(net, skip, &join->skip_ndim, join->skip_shape);
    join->skip_size = shape_size(join->skip_ndim, join->skip_shape);
    layer_out_shape(net, net->nlayers - 1, &join->in_ndim, join->in_shape);
    return T2_OK;
}

void t2__net_block_done(t2_net *net) { net->depth--; }

int t2__net_append(t2_net *net, const t2__layer *l)
{
    if (net->nlayers == net->cap) {
        int cap = net->cap ? net->cap * 2 : 8;
        t2__layer *grown = realloc(net->layers, (size_t)cap * sizeof *grown);
        if (!grown) return t2_seterr(T2_ENOMEM, "t2_net: out of memory adding a layer");
        net->layers = grown;
        net->cap = cap;
    }
    t2__layer *dst = &net->layers[net->nlayers++];
    *dst = *l;
    dst->in_size = shape_size(l->in_ndim, l->in_shape);
    dst->out_size = shape_size(l->out_ndim, l->out_shape);
    return T2_OK;
}

static int add_entry(t2_net *net, int li, const char *role, size_t offset, size_t size, int is_buffer,
                     int ndim, const int *shape)
{
    t2_param_info *e = &net->table[net->ntable++];
    memset(e, 0, sizeof *e);
    const t2__layer *l = &net->layers[li];
    /* Custom names are limited (custom.c) so that this fits; checked all the same. */
    if (snprintf(e->name, sizeof e->name, "%d.%s.%s", li, l->def ? l->kind_name : l->ops->kind, role) >=
        (int)sizeof e->name)
        return t2_seterr(T2_EINVAL, "t2_net_init: tensor name of layer %d is too long", li);
    e->ndim = ndim;
    for (int i = 0; i < T2_MAX_DIMS; i++) e->shape[i] = i < ndim ? shape[i] : 1;
    e->offset = offset;
    e->size = size;
    e->is_buffer = is_buffer;
    return T2_OK;
}

/* Wraps the message a custom layer's callback left (copied first: t2_seterr formats into the
 * same per-thread buffer) with where it happened. */
static int layer_error(int rc, const char *who, int i, const char *kind)
{
    char msg[768];
    snprintf(msg, sizeof msg, "%s", t2_errmsg()[0] ? t2_errmsg() : "(no message)");
    return t2_seterr(rc, "%s: layer %d (%s) failed: %s", who, i, kind, msg);
}

/* The shape of a layer's weight as PyTorch reports it. */
static int weight_shape(const t2__layer *l, int *shape)
{
    if (l->ops == &t2__dense_ops) {
        shape[0] = l->out_shape[0];
        shape[1] = (int)l->in_size;
        return 2;
    }
    if (l->ops == &t2__conv2d_ops || (l->ops == &t2__residual_ops && l->skip_ndim == 3)) {
        shape[0] = l->out_shape[0];
        shape[1] = l->ops == &t2__conv2d_ops ? l->in_shape[0] : l->skip_shape[0];
        shape[2] = shape[3] = l->kernel;
        return 4;
    }
    if (l->ops == &t2__residual_ops) {
        shape[0] = l->out_shape[0];
        shape[1] = (int)l->skip_size;
        return 2;
    }
    if (l->ops == &t2__embedding_ops) { /* [num_embeddings, dim] */
        shape[0] = l->channels;
        shape[1] = l->out_shape[2];
        return 2;
    }
    shape[0] = (int)l->nweight;
    return 1;
}

int t2_net_init(t2_net *net, t2_rng *rng)
{
    if (!net || !rng) return t2_seterr(T2_EINVAL, "t2_net_init: NULL argument");
    if (net->initialized) return t2_seterr(T2_ESTATE, "t2_net_init: net already initialised");
    if (net->nlayers == 0) return t2_seterr(T2_EINVAL, "t2_net_init: the net has no layers");
    if (net->depth)
        return t2_seterr(T2_ESTATE, "t2_net_init: the %s block opened after layer %d is not closed",
                         net->open_kind[net->depth - 1] == T2__BLOCK_RESIDUAL ? "residual" : "concat",
                         net->open_skip[net->depth - 1]);
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i].join && net->layers[i].skip >= 0) net->layers[net->layers[i].skip].is_skip_src = 1;
    for (int i = 0; i < net->nlayers; i++) {
        t2__layer *l = &net->layers[i];
        if (l->ops == &t2__flatten_ops) l->alias = 1;
        /* A conv/dense whose output is a block's skip input must keep it un-relu'd: no fusion
         * with a relu that opens the block. */
        if (l->ops == &t2__relu_ops && i > 0 && !net->layers[i - 1].is_skip_src &&
            (net->layers[i - 1].ops == &t2__conv2d_ops || net->layers[i - 1].ops == &t2__dense_ops)) {
            net->layers[i - 1].fuse_relu = 1;
            l->alias = 1;
        }
    }
    size_t np = 0, nb = 0;
    int nt = 0;
    for (int i = 0; i < net->nlayers; i++) {
        const t2__layer *l = &net->layers[i];
        np += l->nweight + l->nbias;
        nb += l->nbuffer;
        nt += (l->nweight > 0) + (l->nbias > 0) + (l->nbuffer > 0 ? 2 : 0);
    }
    net->params = t2__alloc_aligned(np ? np : 1, sizeof(float));
    net->grads = t2__alloc_aligned(np ? np : 1, sizeof(float));
    net->buffers = t2__alloc_aligned(nb ? nb : 1, sizeof(float));
    net->table = calloc((size_t)(nt ? nt : 1), sizeof *net->table);
    if (!net->params || !net->grads || !net->buffers || !net->table) {
        t2__free_aligned(net->params);
        t2__free_aligned(net->grads);
        t2__free_aligned(net->buffers);
        free(net->table);
        net->params = net->grads = net->buffers = NULL;
        net->table = NULL;
        return t2_seterr(T2_ENOMEM, "t2_net_init: cannot allocate %zu parameters", np);
    }
    net->nparams = np;
    net->nbuffers = nb;
    size_t po = 0, bo = 0;
    for (int i = 0; i < net->nlayers; i++) {
        t2__layer *l = &net->layers[i];
        int shape[T2_MAX_DIMS], nd = weight_shape(l, shape);
        int proj = l->ops == &t2__residual_ops, custom = l->def != NULL;
        if (l->nweight) {
            l->w = net->params + po;
            l->dw = net->grads + po;
            add_entry(net, i, proj ? "proj_weight" : custom ? "param" : "weight", po, l->nweight, 0, nd, shape);
            po += l->nweight;
        }
        if (l->nbias) {
            l->b = net->params + po;
            l->db = net->grads + po;
            int bs[1] = {(int)l->nbias};
            add_entry(net, i, proj ? "proj_bias" : "bias", po, l->nbias, 0, 1, bs);
            po += l->nbias;
        }
        if (l->nbuffer) {
            /* Batchnorm: running mean then running variance, C each. */
            l->buf = net->buffers + bo;
            int bs[1] = {(int)(l->nbuffer / 2)};
            add_entry(net, i, "running_mean", bo, l->nbuffer / 2, 1, 1, bs);
            add_entry(net, i, "running_var", bo + l->nbuffer / 2, l->nbuffer / 2, 1, 1, bs);
            bo += l->nbuffer;
        }
        if (l->ops->init) l->ops->init(l, rng);
        if (l->rc) {
            int rc = l->rc;
            l->rc = 0;
            return layer_error(rc, "t2_net_init", i, l->def ? l->kind_name : l->ops->kind);
        }
    }
    net->initialized = 1;
    return T2_OK;
}

/* Grows activations, gradient ping-pong buffers and layer scratch to hold n samples, each layer
 * split into t2__pool_parts() parts. Only a batch larger than any before, or a new part count,
 * allocates; a new thread count does not (the parts stay, so the numbers stay). */
static int ensure_batch(t2_net *net, int n)
{
    int parts = t2__pool_parts();
    if (n <= net->max_batch && parts == net->parts) return T2_OK;
    if (n < net->max_batch) n = net->max_batch;
    free_activations(net);
    net->parts = parts;
    net->acts = calloc((size_t)net->nlayers, sizeof *net->acts);
    if (!net->acts) goto oom;
    size_t widest = net->in_size;
    for (int i = 0; i < net->nlayers; i++) {
        t2__layer *l = &net->layers[i];
        if (l->out_size > widest) widest = l->out_size;
        if (l->alias) {
            /* Shares its input's buffer; layer 0 never aliases (the input belongs to the caller). */
            if (i == 0 && !(net->acts[i] = t2__alloc_aligned((size_t)n * l->out_size, sizeof(float)))) goto oom;
            if (i > 0) net->acts[i] = net->acts[i - 1];
        } else if (!(net->acts[i] = t2__alloc_aligned((size_t)n * l->out_size, sizeof(float)))) {
            goto oom;
        }
        l->nparts = parts;
        if (l->join && !(l->skip_dx = t2__alloc_aligned((size_t)n * l->skip_size, sizeof(float)))) goto oom;
        size_t sb = l->ops->scratch_bytes ? l->ops->scratch_bytes(l, n) : 0;
        if (sb && !(l->scratch = t2__alloc_aligned(sb, 1))) goto oom;
    }
    net->ping = t2__alloc_aligned((size_t)n * widest, sizeof(float));
    net->pong = t2__alloc_aligned((size_t)n * widest, sizeof(float));
    if (!net->ping || !net->pong) goto oom;
    net->max_batch = n;
    return T2_OK;
oom:
    free_activations(net);
    return t2_seterr(T2_ENOMEM, "t2_net: cannot allocate activations for a batch of %d", n);
}

static int check_input(const t2_net *net, const t2_tensor *x, const char *who)
{
    char got[64];
    if (x->ndim != net->in_ndim + 1 || x->shape[0] <= 0 || !x->data)
        goto bad;
    for (int i = 0; i < net->in_ndim; i++)
        if (x->shape[i + 1] != net->in_shape[i]) goto bad;
    return T2_OK;
bad:
    t2_tensor_shape_str(x, got, sizeof got);
    if (net->in_ndim == 3)
        return t2_seterr(T2_ESHAPE, "%s: input %s does not match [n, %d, %d, %d]", who, got,
                         net->in_shape[0], net->in_shape[1], net->in_shape[2]);
    return t2_seterr(T2_ESHAPE, "%s: input %s does not match [n, %d]", who, got, net->in_shape[0]);
}

static t2_tensor batch_view(float *data, int n, int ndim, const int *shape)
{
    int s[T2_MAX_DIMS] = {n, 1, 1, 1};
    for (int i = 0; i < ndim; i++) s[i + 1] = shape[i];
    return t2_tensor_view(data, ndim + 1, s);
}

/* A layer failed (a custom layer's callback, or a built-in one that checks its input and sets
 * l->rc): its status becomes the net's, the message names the layer. */
static int layer_failed(t2_net *net, t2__layer *l, int i, const char *who)
{
    int rc = l->rc;
    l->rc = 0;
    net->last_train = 0; /* the activations are incomplete: no backward from them */
    return layer_error(rc, who, i, l->def ? l->kind_name : l->ops->kind);
}

/* Runs every layer on the n samples at x (n within the activations' size). */
static int run_layers(t2_net *net, const float *x, int n, t2_mode mode, t2_rng *rng)
{
    const float *in = x;
    for (int i = 0; i < net->nlayers; i++) {
        t2__layer *l = &net->layers[i];
        if (l->join) l->skip_x = l->skip >= 0 ? net->acts[l->skip] : x;
        double t0 = net->profile ? t2__now() : 0;
        if (!l->alias || i == 0) l->ops->forward(l, in, net->acts[i], n, mode, rng);
        if (net->profile) net->profile[i] += t2__now() - t0;
        if (l->rc) return layer_failed(net, l, i, "t2_net_forward");
        in = net->acts[i];
    }
    return T2_OK;
}

/* Samples per chunk of an evaluation: an evaluation keeps no activations for a backward, so a
 * large batch runs through all the layers a chunk at a time. The activations then stay the
 * training batch's size (and in cache) instead of growing with the batch: a batch of 1000 of the
 * seeds' CNN needed 300 MB of activations, whose first touch alone cost 0.6-1 s on a VM, more than
 * the arithmetic. 0 when the net must see the whole batch: a custom layer may compute across
 * samples, and the built-in layers never do in evaluation. */
static int eval_chunk(const t2_net *net, int n)
{
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i].def) return 0;
    int parts = t2__pool_parts(), chunk = 8 * parts;
    if (chunk < 64) chunk = 64;
    /* Exactly the training batch's activations when they hold 64 or more: a larger chunk (8
     * samples a part at 16 parts, batch 64) would reallocate and first-touch every activation at
     * twice the size for the first evaluation, which on a VM cost more than that evaluation's
     * arithmetic; a smaller one would leave them part unused. */
    if (net->parts == parts && net->max_batch >= 64) chunk = net->max_batch;
    return n > chunk ? chunk : 0;
}

/* An evaluation of n samples, chunk samples at a time, the outputs gathered into eval_out. */
static int forward_chunked(t2_net *net, const t2_tensor *x, int n, int chunk, t2_rng *rng)
{
    const t2__layer *last = &net->layers[net->nlayers - 1];
    size_t need;
    int rc;
    if (t2__mul_size((size_t)n, last->out_size, &need) != 0)
        return t2_seterr(T2_ENOMEM, "t2_net_forward: the output of a batch of %d overflows", n);
    if (need > net->eval_out_cap) {
        t2__free_aligned(net->eval_out);
        net->eval_out_cap = 0;
        if (!(net->eval_out = t2__alloc_aligned(need, sizeof(float))))
            return t2_seterr(T2_ENOMEM, "t2_net_forward: cannot allocate the output for a batch of %d", n);
        net->eval_out_cap = need;
    }
    if ((rc = ensure_batch(net, chunk))) return rc;
    for (int s = 0; s < n; s += chunk) {
        int cnt = n - s < chunk ? n - s : chunk;
        if ((rc = run_layers(net, x->data + (size_t)s * net->in_size, cnt, T2_EVAL, rng))) return rc;
        memcpy(net->eval_out + (size_t)s * last->out_size, net->acts[net->nlayers - 1],
               (size_t)cnt * last->out_size * sizeof(float));
    }
    net->out = batch_view(net->eval_out, n, last->out_ndim, last->out_shape);
    return T2_OK;
}

int t2_net_forward(t2_net *net, const t2_tensor *x, t2_mode mode, t2_rng *rng, const t2_tensor **y)
{
    if (!net || !x || !y) return t2_seterr(T2_EINVAL, "t2_net_forward: NULL argument");
    if (!net->initialized) return t2_seterr(T2_ESTATE, "t2_net_forward: call t2_net_init first");
    if (mode == T2_TRAIN && !rng) return t2_seterr(T2_EINVAL, "t2_net_forward: training mode needs an rng");
    int rc = check_input(net, x, "t2_net_forward");
    if (rc) return rc;
    int n = x->shape[0], chunk = mode == T2_TRAIN ? 0 : eval_chunk(net, n);
    net->last_train = 0;
    if (chunk) {
        if ((rc = forward_chunked(net, x, n, chunk, rng))) return rc;
    } else {
        if ((rc = ensure_batch(net, n))) return rc;
        if ((rc = run_layers(net, x->data, n, mode, rng))) return rc;
        const t2__layer *last = &net->layers[net->nlayers - 1];
        net->out = batch_view(net->acts[net->nlayers - 1], n, last->out_ndim, last->out_shape);
    }
    net->last_n = n;
    net->last_train = mode == T2_TRAIN;
    net->last_x = x->data;
    *y = &net->out;
    return T2_OK;
}

/* Adds into g (the gradient of layer src's output, -1: the input) what every join reading src
 * sent back along its skip path. */
static void add_skip_grads(t2_net *net, int src, float *g, int n)
{
    for (int j = src + 1; j < net->nlayers; j++) {
        const t2__layer *l = &net->layers[j];
        if (!l->join || l->skip != src) continue;
        const float *s = l->skip_dx;
        for (size_t k = 0, c = (size_t)n * l->skip_size; k < c; k++) g[k] += s[k];
    }
}

int t2_net_backward(t2_net *net, const t2_tensor *dy, const t2_tensor **dx)
{
    if (!net || !dy) return t2_seterr(T2_EINVAL, "t2_net_backward: NULL argument");
    if (!net->initialized || !net->last_train)
        return t2_seterr(T2_ESTATE, "t2_net_backward: needs a preceding t2_net_forward in T2_TRAIN mode");
    if (!t2_tensor_same_shape(dy, &net->out) || !dy->data) {
        char a[64], b[64];
        return t2_seterr(T2_ESHAPE, "t2_net_backward: dy %s does not match the output %s",
                         t2_tensor_shape_str(dy, a, sizeof a), t2_tensor_shape_str(&net->out, b, sizeof b));
    }
    int n = net->last_n;
    const float *g = dy->data;
    float *bufs[2] = {net->ping, net->pong};
    for (int i = net->nlayers - 1; i >= 0; i--) {
        t2__layer *l = &net->layers[i];
        const float *in = i ? net->acts[i - 1] : net->last_x;
        /* g is a ping/pong buffer here (a join follows layer i), so adding in place is safe. */
        if (l->is_skip_src) add_skip_grads(net, i, (float *)g, n);
        if (l->alias && i > 0) continue; /* the gradient passes through unchanged */
        float *gin = (i > 0 || dx) ? bufs[i & 1] : NULL;
        /* The next layer back must not read and write the same buffer. */
        if (gin && gin == g) gin = bufs[(i + 1) & 1];
        if (l->join) l->skip_x = l->skip >= 0 ? net->acts[l->skip] : net->last_x;
        double t0 = net->profile ? t2__now() : 0;
        l->ops->backward(l, in, net->acts[i], g, gin, n);
        if (net->profile) net->profile[net->nlayers + i] += t2__now() - t0;
        if (l->rc) return layer_failed(net, l, i, "t2_net_backward");
        g = gin;
    }
    if (dx) {
        add_skip_grads(net, -1, (float *)g, n);
        net->dx = batch_view((float *)g, n, net->in_ndim, net->in_shape);
        *dx = &net->dx;
    }
    return T2_OK;
}

void t2__net_profile(t2_net *net, double *acc)
{
    if (net) net->profile = acc;
}

static void zero_range(void *ctx, size_t b, size_t e) { memset((float *)ctx + b, 0, (e - b) * sizeof(float)); }

void t2_net_zero_grad(t2_net *net)
{
    if (net && net->grads) t2__parallel_for(net->nparams, 65536, zero_range, net->grads);
}

float *t2_net_params(t2_net *net, size_t *n)
{
    if (n) *n = net ? net->nparams : 0;
    return net ? net->params : NULL;
}

float *t2_net_grads(t2_net *net, size_t *n)
{
    if (n) *n = net ? net->nparams : 0;
    return net ? net->grads : NULL;
}

float *t2_net_buffers(t2_net *net, size_t *n)
{
    if (n) *n = net ? net->nbuffers : 0;
    return net ? net->buffers : NULL;
}

int t2_net_num_tensors(const t2_net *net) { return net ? net->ntable : 0; }

int t2_net_tensor_info(const t2_net *net, int i, t2_param_info *info)
{
    if (!net || !info) return t2_seterr(T2_EINVAL, "t2_net_tensor_info: NULL argument");
    if (i < 0 || i >= net->ntable)
        return t2_seterr(T2_EINVAL, "t2_net_tensor_info: index %d not in [0, %d)", i, net->ntable);
    *info = net->table[i];
    return T2_OK;
}

int t2_net_num_layers(const t2_net *net) { return net ? net->nlayers : 0; }

int t2_net_output_shape(const t2_net *net, int *ndim, int shape[T2_MAX_DIMS])
{
    if (!net || !ndim || !shape) return t2_seterr(T2_EINVAL, "t2_net_output_shape: NULL argument");
    int nd = net->in_ndim;
    const int *s = net->in_shape;
    if (net->nlayers) {
        nd = net->layers[net->nlayers - 1].out_ndim;
        s = net->layers[net->nlayers - 1].out_shape;
    }
    *ndim = nd;
    for (int i = 0; i < T2_MAX_DIMS; i++) shape[i] = i < nd ? s[i] : 1;
    return T2_OK;
}

int t2_net_summary(const t2_net *net, char *buf, size_t len)
{
    if (!net || !buf || !len) return t2_seterr(T2_EINVAL, "t2_net_summary: NULL argument");
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < net->nlayers && off < len; i++) {
        const t2__layer *l = &net->layers[i];
        int w;
        if (l->out_ndim == 3)
            w = snprintf(buf + off, len - off, "%2d %-12s [%d, %d, %d] params=%zu\n", i, l->def ? l->kind_name : l->ops->kind,
                         l->out_shape[0], l->out_shape[1], l->out_shape[2], l->nweight + l->nbias);
        else
            w = snprintf(buf + off, len - off, "%2d %-12s [%d] params=%zu\n", i, l->def ? l->kind_name : l->ops->kind,
                         l->out_shape[0], l->nweight + l->nbias);
        if (w < 0) break;
        off += (size_t)w;
    }
    if (off < len)
        snprintf(buf + off, len - off, "total params=%zu buffers=%zu\n", net->nparams, net->nbuffers);
    return T2_OK;
}

void t2__fill_uniform(float *p, size_t n, float bound, t2_rng *rng)
{
    for (size_t i = 0; i < n; i++) p[i] = (2.0f * t2_rng_uniform(rng) - 1.0f) * bound;
}
