/* random.c — max_trials independent draws from the search space, each trained to max_length
 * (Determined's random.go). Request R's hparams come from an rng seeded by the experiment seed
 * and R, so the same seed gives the same trials whatever the concurrency. A trial that reports
 * invalid hparams does not count: a replacement is drawn under a new request id. */
#include <inttypes.h>
#include "searcher_internal.h"
#include "t2exp/error.h"

static int point(const t2__searcher *s, int64_t i, t2__val **out)
{
    return t2__searcher_sample(s, i, out);
}

static int init(t2__searcher *s)
{
    int64_t n = s->cfg->searcher.max_trials;
    if (n < 1)
        return t2_seterr(T2_EINVAL, "searcher.max_trials: the random searcher needs max_trials >= 1, got %" PRId64, n);
    if (n > T2__MAX_TRIALS)
        return t2_seterr(T2_EINVAL, "searcher.max_trials: at most %d trials, got %" PRId64, T2__MAX_TRIALS, n);
    return t2__flat_init(s, n, 1, point);
}

const t2__searcher_vt t2__random_vt = T2__FLAT_VT("random", init);
