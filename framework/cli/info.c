/* info.c — `t2exp info`, in the spirit of `ompi_info` and torch's collect_env: everything a result
 * may depend on that is not in the experiment's config. */
#define _GNU_SOURCE
#include <archive.h>
#include <libdeflate.h>
#include <openssl/crypto.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>
#ifdef T2EXP_HAVE_MPI
#include <mpi.h>
#endif
#include "common/internal.h"
#include "nn/conv_direct.h"
#include "info.h"
#include "store/store.h"
#include "t2exp.h"
#include "t2exp/blas.h"

static void mpi_version(char *buf, size_t len)
{
#ifdef T2EXP_HAVE_MPI
    /* Allowed before MPI_Init (MPI-3), so `info` never starts the MPI runtime. */
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    if (MPI_Get_library_version(v, &n) == MPI_SUCCESS) {
        v[strcspn(v, ",\n")] = '\0';
        snprintf(buf, len, "%s", v);
        return;
    }
    snprintf(buf, len, "unknown");
#else
    snprintf(buf, len, "not built with MPI");
#endif
}

/* Writes s as a JSON string (the values here are ours or the libraries', but a CPU brand string
 * or a path may hold anything). */
static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
        else if (*p < 0x20) fprintf(out, "\\u%04x", *p);
        else fputc(*p, out);
    }
    fputc('"', out);
}

int t2__info_print(FILE *out, const char *home, int json)
{
    t2_blas_report b;
    int rc = t2_blas_report_get(&b);
    if (rc) return rc;
    char mpi[256], store[4096], threads[64];
    mpi_version(mpi, sizeof mpi);
    if (t2__store_home(home, store, sizeof store)) snprintf(store, sizeof store, "(none: %s)", t2_errmsg());
    int cores = t2__usable_cores();
    char conv[128]; /* the same name as each trial log's, with where it applies */
    snprintf(conv, sizeof conv,
             t2__conv_direct_available() ? "%s kernels for stride 1 (im2col + BLAS otherwise)"
                                         : "%s (the direct kernels need AVX-512F)",
             t2__conv_direct_kernels());
    snprintf(threads, sizeof threads, "%d", cores);
    /* One list for both forms, so the table and --json always have the same keys; a number is
     * written bare in JSON so a script need not convert it. */
    const struct {
        const char *key, *value;
        int number;
    } rows[] = {
        {"t2exp", t2_version(), 0},
        {"cpu", b.cpu, 0},
        {"cpu_features", b.features, 0},
        {"blas", b.library, 0},
        {"blas_core", b.core, 0},
        {"blas_core_best_for_cpu", b.cpu_core, 0},
        {"blas_core_why", b.why, 0},
        {"conv2d", conv, 0},
        {"cores", threads, 1},
        {"threads_per_trial",
         "slots (cores, or resources.max_slots) / trials running now (freed cores go to the trials still "
         "running), at most resources.max_threads_per_trial, at least 1",
         0},
        {"mpi", mpi, 0},
        {"sqlite", sqlite3_libversion(), 0},
        {"libyaml", yaml_get_version_string(), 0},
        {"libarchive", archive_version_string(), 0},
        {"libdeflate", LIBDEFLATE_VERSION_STRING, 0},
        {"openssl", OpenSSL_version(OPENSSL_VERSION), 0},
        {"store", store, 0},
    };
    size_t n = sizeof rows / sizeof rows[0];
    if (json) {
        fputc('{', out);
        for (size_t i = 0; i < n; i++) {
            if (i) fputs(", ", out);
            json_str(out, rows[i].key);
            fputs(": ", out);
            if (rows[i].number) fputs(rows[i].value, out);
            else json_str(out, rows[i].value);
        }
        fputs("}\n", out);
    } else {
        for (size_t i = 0; i < n; i++) fprintf(out, "%-24s %s\n", rows[i].key, rows[i].value);
    }
    return ferror(out) ? t2_seterr(T2_EIO, "info: write failed") : T2_OK;
}
