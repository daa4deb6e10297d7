/* net.h — what layer files need from the net: its current tail shape and an append. */
#ifndef T2_NN_NET_H
#define T2_NN_NET_H

#include "layer.h"

/* The per-sample output shape of the last layer (the input shape for an empty net).
 * Returns T2_EINVAL for a NULL net and T2_ESTATE once the net is initialised. */
int t2__net_tail(t2_net *net, int *ndim, int shape[3]);

/* Appends a copy of l; in/out sizes are computed from its shapes here. */
int t2__net_append(t2_net *net, const t2__layer *l);

#endif
