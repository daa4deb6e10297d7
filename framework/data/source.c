/* source.c — datasets backed by the user's own code (t2_dataset_define): a t2_dataset_source
 * vtable called through the internal dataset ops, so the loader treats it like any other. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "data_internal.h"
#include "internal.h"

typedef struct {
    t2_dataset_source src;
    char name[64];
    void *user;
} source_impl;

static int source_get(const t2_dataset *ds, uint32_t i, float *x, float *target, int32_t *label)
{
    const source_impl *s = ds->impl;
    int32_t lab = -1;
    t2_clearerr();
    int rc = s->src.get(s->user, (int64_t)i, x, target, ds->num_classes > 0 && label ? &lab : NULL);
    if (rc != 0) {
        /* Copied first: the user's message lives in the buffer t2_seterr writes. */
        char msg[400];
        snprintf(msg, sizeof msg, "%s", t2_errmsg());
        return t2_seterr(rc < 0 ? rc : T2_ETRIAL, "dataset '%s': reading sample %u failed (%s)%s%s", s->name, i,
                         t2_strerror(rc < 0 ? rc : T2_ETRIAL), msg[0] ? ": " : "", msg);
    }
    if (label && ds->num_classes > 0 && (lab < 0 || lab >= ds->num_classes))
        return t2_seterr(T2_EINVAL, "dataset '%s': sample %u has label %d, outside 0..%d", s->name, i, (int)lab,
                         ds->num_classes - 1);
    for (int j = 0; target && j < ds->target_width; j++)
        if (!isfinite(target[j]))
            return t2_seterr(T2_ENUMERIC, "dataset '%s': sample %u has target %d = %g (must be finite)", s->name, i, j,
                             (double)target[j]);
    if (label) *label = lab;
    return T2_OK;
}

static void source_destroy(t2_dataset *ds)
{
    source_impl *s = ds->impl;
    if (!s) return;
    if (s->src.destroy) s->src.destroy(s->user);
    free(s);
}

static const struct t2__dataset_ops source_ops = {"source", source_get, source_destroy};

int t2_dataset_define(t2_dataset **out, const t2_dataset_source *src, void *user)
{
    if (!out || !src) {
        if (src && src->destroy) src->destroy(user);
        return t2_seterr(T2_EINVAL, "t2_dataset_define: NULL argument");
    }
    *out = NULL;
    const char *name = src->name ? src->name : "user";
    int rc = T2_OK;
    t2_dataset *ds = NULL;
    if (!src->get)
        rc = t2_seterr(T2_EINVAL, "dataset '%s': get is NULL", name);
    else if (src->target_width < 0 || src->target_width > T2__MAX_DIM)
        rc = t2_seterr(T2_EINVAL, "dataset '%s': target_width %d (must be 0..%d)", name, src->target_width, T2__MAX_DIM);
    else if (src->num_classes < 0)
        rc = t2_seterr(T2_EINVAL, "dataset '%s': num_classes %d (must be >= 0)", name, src->num_classes);
    else if ((rc = t2__dataset_new(&ds, &source_ops, src->len, src->ndim, src->shape)) != 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s", t2_errmsg());
        rc = t2_seterr(rc, "dataset '%s': %s", name, msg);
    }
    if (rc) {
        if (src->destroy) src->destroy(user);
        return rc;
    }
    source_impl *s = calloc(1, sizeof *s);
    if (!s) {
        free(ds); /* no impl yet: t2_dataset_free would not call destroy */
        if (src->destroy) src->destroy(user);
        return t2_seterr(T2_ENOMEM, "dataset '%s': out of memory", name);
    }
    s->src = *src;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->src.name = s->name;
    s->user = user;
    ds->impl = s;
    ds->num_classes = src->num_classes;
    ds->target_width = src->target_width;
    *out = ds;
    return T2_OK;
}
