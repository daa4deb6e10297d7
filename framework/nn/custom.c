/* custom.c — a user-defined layer (t2_layer_def) behind the internal layer interface: the net
 * sizes, names and stores its parameters like a built-in layer's; the callbacks' status is kept
 * in l->rc for the net to turn into a located error. */
#include <stdio.h>
#include <string.h>
#include "net.h"

static int valid_name(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 24) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return 0;
    }
    return 1;
}

int t2_net_custom(t2_net *net, const t2_layer_def *def, void *user)
{
    if (!def) return t2_seterr(T2_EINVAL, "t2_net_custom: NULL definition");
    if (!valid_name(def->name))
        return t2_seterr(T2_EINVAL, "t2_net_custom: layer name \"%s\" must be 1..24 characters of [A-Za-z0-9_]",
                         def->name ? def->name : "(null)");
    if (!def->output_shape || !def->forward || !def->backward)
        return t2_seterr(T2_EINVAL, "t2_net_custom: layer \"%s\" lacks its %s callback", def->name,
                         !def->output_shape ? "output_shape" : !def->forward ? "forward" : "backward");
    t2__layer l = {.ops = &t2__custom_ops, .def = def, .user = user};
    int rc = t2__net_tail(net, &l.in_ndim, l.in_shape);
    if (rc) return rc;
    snprintf(l.kind_name, sizeof l.kind_name, "custom:%s", def->name);
    int nl = t2_net_num_layers(net);
    t2_clearerr();
    if ((rc = def->output_shape(user, l.in_ndim, l.in_shape, &l.out_ndim, l.out_shape))) {
        char msg[768];
        snprintf(msg, sizeof msg, "%s", t2_errmsg()[0] ? t2_errmsg() : "(no message)");
        return t2_seterr(rc < 0 ? rc : T2_ESHAPE, "t2_net_custom: layer %d (%s) refused its input: %s", nl,
                         l.kind_name, msg);
    }
    if (l.out_ndim != 1 && l.out_ndim != 3)
        return t2_seterr(T2_ESHAPE, "t2_net_custom: layer %d (%s) reported output ndim %d (must be 1 or 3)", nl,
                         l.kind_name, l.out_ndim);
    for (int i = 0; i < l.out_ndim; i++)
        if (l.out_shape[i] <= 0 || l.out_shape[i] > (1 << 24))
            return t2_seterr(T2_ESHAPE, "t2_net_custom: layer %d (%s) reported output dimension %d = %d", nl,
                             l.kind_name, i, l.out_shape[i]);
    l.nweight = def->param_count ? def->param_count(user, l.in_ndim, l.in_shape) : 0;
    if (l.nweight > ((size_t)1 << 31))
        return t2_seterr(T2_EINVAL, "t2_net_custom: layer %d (%s) asks for %zu parameters", nl, l.kind_name,
                         l.nweight);
    return t2__net_append(net, &l);
}

static t2_layer_call call_of(const t2__layer *l, int n)
{
    t2_layer_call c = {.n = n, .in_ndim = l->in_ndim, .out_ndim = l->out_ndim, .in_size = l->in_size,
                       .out_size = l->out_size, .params = l->w, .grads = l->dw, .nparams = l->nweight};
    memcpy(c.in_shape, l->in_shape, sizeof c.in_shape);
    memcpy(c.out_shape, l->out_shape, sizeof c.out_shape);
    return c;
}

/* A callback's status: any nonzero value is a failure (a positive one becomes T2_ETRIAL). */
static int status(int rc) { return rc > 0 ? T2_ETRIAL : rc; }

static void init(t2__layer *l, t2_rng *rng)
{
    if (!l->def->init || !l->nweight) return;
    t2_clearerr();
    l->rc = status(l->def->init(l->user, l->w, l->nweight, rng));
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    t2_layer_call c = call_of(l, n);
    c.mode = mode;
    c.rng = rng;
    t2_clearerr();
    l->rc = status(l->def->forward(l->user, &c, x, y));
}

static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    t2_layer_call c = call_of(l, n);
    c.mode = T2_TRAIN;
    t2_clearerr();
    l->rc = status(l->def->backward(l->user, &c, x, y, dy, dx));
}

const t2__layer_ops t2__custom_ops = {"custom", NULL, init, forward, backward};
