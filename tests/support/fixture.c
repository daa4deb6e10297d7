#define _POSIX_C_SOURCE 200809L
/* fixture.c — loader for the PyTorch reference fixtures (format in fixture.h). */
#include "fixture.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fixture {
    fixture_array *arr;
    size_t count;
};

void fixture_free(fixture *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->count; i++) {
        free((char *)f->arr[i].name);
        free(f->arr[i].data);
    }
    free(f->arr);
    free(f);
}

fixture *fixture_load(const char *file)
{
    const char *dir = getenv("T2EXP_FIXTURES");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "tests/fixtures", file);
    FILE *fp = fopen(path, "r");
    if (!fp) {
        fprintf(stderr, "fixture: cannot open %s\n", path);
        return NULL;
    }
    fixture *f = calloc(1, sizeof *f);
    char line[1024];
    if (!f) goto fail;
    for (;;) {
        int c = fgetc(fp);
        while (c != EOF && isspace(c)) c = fgetc(fp);
        if (c == EOF) break;
        if (c == '#') {
            if (!fgets(line, sizeof line, fp)) break;
            continue;
        }
        ungetc(c, fp);
        char name[256];
        fixture_array a = {0};
        if (fscanf(fp, "%255s %d", name, &a.ndim) != 2 || a.ndim < 0 || a.ndim > 8) goto bad;
        a.n = 1;
        for (int i = 0; i < a.ndim; i++) {
            if (fscanf(fp, "%d", &a.shape[i]) != 1 || a.shape[i] < 0) goto bad;
            a.n *= (size_t)a.shape[i];
        }
        a.data = malloc((a.n ? a.n : 1) * sizeof(float));
        a.name = strdup(name);
        if (!a.data || !a.name) {
            free(a.data);
            free((char *)a.name);
            goto fail;
        }
        for (size_t i = 0; i < a.n; i++) {
            double v;
            if (fscanf(fp, "%lf", &v) != 1) {
                free(a.data);
                free((char *)a.name);
                goto bad;
            }
            a.data[i] = (float)v;
        }
        fixture_array *grown = realloc(f->arr, (f->count + 1) * sizeof *grown);
        if (!grown) {
            free(a.data);
            free((char *)a.name);
            goto fail;
        }
        f->arr = grown;
        f->arr[f->count++] = a;
    }
    fclose(fp);
    return f;
bad:
    fprintf(stderr, "fixture: %s is malformed near byte %ld\n", path, ftell(fp));
fail:
    fclose(fp);
    fixture_free(f);
    return NULL;
}

const fixture_array *fixture_get(const fixture *f, const char *name)
{
    for (size_t i = 0; f && i < f->count; i++)
        if (strcmp(f->arr[i].name, name) == 0) return &f->arr[i];
    return NULL;
}

size_t fixture_compare(const fixture *f, const char *name, const float *got, size_t n, double rtol,
                       double atol)
{
    const fixture_array *a = fixture_get(f, name);
    if (!a) {
        fprintf(stderr, "fixture: no array named %s\n", name);
        return 1;
    }
    if (a->n != n) {
        fprintf(stderr, "fixture %s: %zu values, compared with %zu\n", name, a->n, n);
        return 1;
    }
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double want = a->data[i], diff = fabs((double)got[i] - want);
        if (!(diff <= atol + rtol * fabs(want))) {
            if (bad < 5)
                fprintf(stderr, "fixture %s[%zu]: got %.9g want %.9g\n", name, i, got[i], want);
            bad++;
        }
    }
    if (bad) fprintf(stderr, "fixture %s: %zu of %zu values differ\n", name, bad, n);
    return bad;
}
