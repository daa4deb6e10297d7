/* materialize.c — a whole dataset as one float32 tensor, converted on several threads (the
 * conversion and the first touch of a fresh 188 MB buffer both scale with cores). */
#define _DEFAULT_SOURCE /* POSIX: sysconf */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "data_internal.h"
#include "internal.h"

#define MAX_THREADS 8

typedef struct {
    const t2_dataset *ds;
    float *x;
    int32_t *labels;
    uint32_t begin, end;
    int rc;
    char err[256];
} part;

static void *convert(void *arg)
{
    part *p = arg;
    const t2_dataset *ds = p->ds;
    size_t m = ds->numel;
    if (ds->pix_type == T2__PIX_U8) {
        const uint8_t *u = (const uint8_t *)ds->pixels + (size_t)p->begin * m;
        float *o = p->x + (size_t)p->begin * m;
        size_t count = (size_t)(p->end - p->begin) * m;
        t2__u8_to_unit(o, u, count);
        for (uint32_t i = p->begin; p->labels && i < p->end; i++) p->labels[i] = t2__dataset_label(ds, i);
        return NULL;
    }
    for (uint32_t i = p->begin; i < p->end; i++) {
        int32_t lab;
        p->rc = t2_dataset_get(ds, i, p->x + (size_t)i * m, &lab);
        if (p->rc) {
            memcpy(p->err, t2_errmsg(), sizeof p->err - 1);
            return NULL;
        }
        if (p->labels) p->labels[i] = lab;
    }
    return NULL;
}

int t2_dataset_to_tensor(const t2_dataset *ds, t2_tensor *x, int32_t **labels)
{
    if (labels) *labels = NULL;
    if (!ds || !x) return t2_seterr(T2_EINVAL, "t2_dataset_to_tensor: NULL argument");
    memset(x, 0, sizeof *x);
    int rc = T2_OK;
    int32_t *lab = NULL;
    int shape[4] = {(int)ds->n, ds->shape[0], ds->shape[1], ds->shape[2]};
    /* Not t2__alloc_aligned: its zeroing pass would cost as much as the conversion itself. */
    size_t bytes = (size_t)ds->n * ds->numel * sizeof(float);
    float *data = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!data) return t2_seterr(T2_ENOMEM, "t2_dataset_to_tensor: cannot allocate %zu bytes", bytes);
    if (labels && ds->num_classes > 0 && !(lab = malloc((size_t)ds->n * sizeof(int32_t)))) {
        free(data);
        return t2_seterr(T2_ENOMEM, "t2_dataset_to_tensor: out of memory");
    }
    int cpus = t2__usable_cores();
    int nt = cpus > MAX_THREADS ? MAX_THREADS : cpus;
    if ((size_t)ds->n * ds->numel < ((size_t)1 << 20)) nt = 1; /* threads cost more than they save */
    part parts[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    int started = 0;
    for (int t = 0; t < nt; t++) {
        parts[t] = (part){ds, data, lab, (uint32_t)((uint64_t)ds->n * t / nt),
                          (uint32_t)((uint64_t)ds->n * (t + 1) / nt), 0, {0}};
        /* The calling thread does the last part; if a thread cannot start, it does that part too. */
        if (t == nt - 1 || pthread_create(&th[t], NULL, convert, &parts[t]) != 0) convert(&parts[t]);
        else started |= 1 << t;
    }
    for (int t = 0; t < nt; t++) {
        if (started & (1 << t)) pthread_join(th[t], NULL);
        if (parts[t].rc && !rc) rc = t2_seterr(parts[t].rc, "%s", parts[t].err);
    }
    if (rc) {
        free(data);
        free(lab);
        return rc;
    }
    *x = t2_tensor_view(data, 1 + ds->ndim, shape);
    if (labels) *labels = lab;
    return T2_OK;
}
