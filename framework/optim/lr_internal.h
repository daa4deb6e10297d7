/* lr_internal.h — shared between lr_params.c (defaults, validation) and lr_schedule.c. */
#ifndef T2_LR_INTERNAL_H
#define T2_LR_INTERNAL_H

#include "t2exp/lr_schedule.h"

/* Checks every field `p->kind` and the warmup use; T2_EINVAL with a message naming the field. */
int t2__lr_validate(const t2_lr_params *p);

#endif
