/* ckpt_params.c — the raw parameter array of an open checkpoint (for `t2exp export`). */
#include "ckpt_internal.h"
#include "t2exp/error.h"

int t2__ckpt_params(const t2__ckpt *ck, const float **p, size_t *n)
{
    if (!ck || !p || !n) return t2_seterr(T2_EINVAL, "t2__ckpt_params: NULL argument");
    /* Open left the checksums to restore: check the array before handing it out. */
    int rc = ck->lazy ? t2__ckpt_verify(ck, 1u << E_PARAMS) : T2_OK;
    if (rc) return rc;
    /* Entries sit at 512-byte tar offsets of the mapped file, or in malloc'd copies: aligned. */
    *p = (const float *)(const void *)ck->e[E_PARAMS].data;
    *n = ck->num_params;
    return T2_OK;
}
