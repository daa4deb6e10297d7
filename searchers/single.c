/* single.c — one trial trained to max_length. As in Determined (a random search with
 * max_trials 1), a searchable hyperparameter gets a random value drawn from the experiment seed;
 * a space of constants gives exactly the constants. Invalid hparams are not replaced. */
#include "searcher_internal.h"

static int point(const t2__searcher *s, int64_t i, t2__val **out)
{
    return t2__searcher_sample(s, i, out);
}

static int init(t2__searcher *s)
{
    return t2__flat_init(s, 1, 0, point);
}

const t2__searcher_vt t2__single_vt = T2__FLAT_VT("single", init);
