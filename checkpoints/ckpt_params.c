/* ckpt_params.c — the raw parameter array of an open checkpoint (for `t2exp export`). */
#include <stdlib.h>
#include "ckpt_internal.h"
#include "t2exp/error.h"

int t2__ckpt_params(const t2__ckpt *ck, const float **p, size_t *n)
{
    if (!ck || !p || !n) return t2_seterr(T2_EINVAL, "t2__ckpt_params: NULL argument");
    if (ck->lazy) { /* open left the checksums to restore: check the array before handing it out */
        t2__ckpt_span *s = malloc(((size_t)ck->ntensors + 1) * sizeof *s);
        if (!s) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
        int k = t2__ckpt_entry_spans(ck, E_PARAMS, s);
        int rc = t2__ckpt_spans(s, k, 1);
        if (!rc) rc = t2__ckpt_check_spans(ck, s, k);
        free(s);
        if (rc) return rc;
    }
    /* Entries sit at 512-byte tar offsets of the mapped file, or in malloc'd copies: aligned. */
    *p = (const float *)(const void *)ck->e[E_PARAMS].data;
    *n = ck->num_params;
    return T2_OK;
}
