/* fuzz_idx.c — libFuzzer harness for the IDX reader (raw and gzip) and everything that trusts its
 * output: dataset construction, sample reads and batch assembly with crop/flip.
 *
 * Input: byte 0 picks the mode; 0 = one idx3 images file, 1 = one idx1 labels file, 2 = a pair
 * (bytes 1-2 give the images length, the rest is the labels file). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "data/data_internal.h"

static void exercise(t2_dataset *ds)
{
    float *x = malloc(ds->numel * sizeof(float));
    int32_t lab;
    for (uint32_t i = 0; x && i < ds->n && i < 64; i++) t2_dataset_get(ds, i, x, &lab);
    free(x);
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 3;
    p.shuffle = 1;
    p.crop_padding = 2;
    p.hflip_prob = 0.5f;
    t2_loader *l = NULL;
    if (ds->numel <= 4096 && t2_loader_create(&l, ds, &p) == 0) {
        const t2_batch *b;
        for (int k = 0; k < 2; k++) t2_loader_next(l, &b);
        t2_loader_free(l);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int mode = data[0] % 3;
    data++, size--;
    t2__idx a, b;
    if (mode < 2) {
        if (t2__idx_decode("fuzz", data, size, mode == 0 ? 3 : 1, &a) == 0) {
            /* Every byte the header promised must be there. */
            volatile uint8_t s = 0;
            for (size_t i = 0; i < a.count; i += 97) s ^= a.data[i];
            if (a.count) s ^= a.data[a.count - 1];
            free(a.buf);
        }
        return 0;
    }
    if (size < 2) return 0;
    size_t k = (size_t)data[0] << 8 | data[1];
    data += 2, size -= 2;
    if (k > size) k = size;
    if (t2__idx_decode("img", data, k, 3, &a) != 0) return 0;
    if (t2__idx_decode("lab", data + k, size - k, 1, &b) != 0) {
        free(a.buf);
        return 0;
    }
    t2_dataset *ds = NULL;
    if (t2__idx_dataset(&ds, &a, &b, "img", "lab") == 0) exercise(ds);
    t2_dataset_free(ds);
    return 0;
}
