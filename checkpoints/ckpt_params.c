/* ckpt_params.c — the raw parameter array of an open checkpoint (tests and the fuzz harness;
 * `t2exp export` streams it instead, with t2__ckpt_stream_params). */
#include "ckpt_internal.h"
#include "t2exp/error.h"

int t2__ckpt_params(const t2__ckpt *ck, const float **p, size_t *n)
{
    if (!ck || !p || !n) return t2_seterr(T2_EINVAL, "t2__ckpt_params: NULL argument");
    int rc = t2__ckpt_have(ck, E_PARAMS);
    if (rc) return rc;
    /* Open left the checksums to restore: check the array before handing it out. */
    if (ck->lazy && (rc = t2__ckpt_verify(ck, 1u << E_PARAMS))) return rc;
    /* Entries sit at 512-byte tar offsets of the mapped file, or in malloc'd copies: aligned. */
    *p = (const float *)(const void *)ck->e[E_PARAMS].data;
    *n = ck->num_params;
    return T2_OK;
}
