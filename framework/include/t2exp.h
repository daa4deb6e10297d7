/* t2exp.h — the public API of t2exp, the one header a trial includes.
 *
 * Modules: errors (t2exp/error.h), the seeded RNG (t2exp/rng.h), tensors and batches
 * (t2exp/tensor.h), networks, layers, losses and metrics (t2exp/nn.h), optimizers and gradient
 * clipping (t2exp/optim.h), learning-rate schedules (t2exp/lr_schedule.h), datasets and loaders
 * (t2exp/data.h), the BLAS kernels in use (t2exp/blas.h). Every function returns 0 or a negative T2_E… code; see t2exp/error.h. */
#ifndef T2EXP_H
#define T2EXP_H

#define T2EXP_VERSION_MAJOR 0
#define T2EXP_VERSION_MINOR 1
#define T2EXP_VERSION_PATCH 0

#include "t2exp/error.h"
#include "t2exp/rng.h"
#include "t2exp/tensor.h"
#include "t2exp/nn.h"
#include "t2exp/optim.h"
#include "t2exp/lr_schedule.h"
#include "t2exp/data.h"
#include "t2exp/trial.h"
#include "t2exp/checkpoint.h"
#include "t2exp/blas.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string, e.g. "0.1.0". */
const char *t2_version(void);

#ifdef __cplusplus
}
#endif
#endif
