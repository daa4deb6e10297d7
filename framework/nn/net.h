/* net.h — what layer files need from the net: its current tail shape and an append. */
#ifndef T2_NN_NET_H
#define T2_NN_NET_H

#include "layer.h"

/* The per-sample output shape of the last layer (the input shape for an empty net).
 * Returns T2_EINVAL for a NULL net and T2_ESTATE once the net is initialised. */
int t2__net_tail(t2_net *net, int *ndim, int shape[3]);

/* Appends a copy of l; in/out sizes are computed from its shapes here. */
int t2__net_append(t2_net *net, const t2__layer *l);

/* Blocks (graph.c). open records the current tail as the block's skip input; close checks that
 * a block of this kind is open and not empty, and fills join's skip fields and input shape;
 * done pops the block once the join is appended. who names the caller in messages. */
enum { T2__BLOCK_RESIDUAL = 0, T2__BLOCK_CONCAT = 1 };
int t2__net_block_open(t2_net *net, int kind, const char *who);
int t2__net_block_close(t2_net *net, int kind, const char *who, t2__layer *join);
void t2__net_block_done(t2_net *net);

#endif
