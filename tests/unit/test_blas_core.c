/* test_blas_core.c — choosing OpenBLAS's core: the pure candidate table, the report, the advice,
 * and the check of OpenBLAS's own core on a CPU without AVX (its probe run by a real child: one
 * that dies of SIGILL as a core with an instruction the CPU lacks would, one that runs, one that
 * cannot start). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "check.h"
#include "common/blas_core.h"
#include "t2exp.h"

/* An executable script at path with body `body`; 1 on success. */
static int script(const char *path, const char *body)
{
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    int ok = fprintf(f, "#!/bin/sh\n%s\n", body) > 0;
    ok &= fclose(f) == 0;
    return ok && chmod(path, 0700) == 0;
}

static void check_own_core(void)
{
    char dir[] = "/tmp/t2_blas_check_XXXXXX", dies[64], runs[64], core[32], why[384];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(dies, sizeof dies, "%s/dies", dir);
    snprintf(runs, sizeof runs, "%s/runs", dir);
    /* The probe's contract: print "<core loaded> <GFLOPS>" (t2__blas_probe_main). */
    CHECK(script(dies, "kill -ILL $$"));
    CHECK(script(runs, "echo \"$OPENBLAS_CORETYPE 3.5\""));
    int verdict = -1;
    CHECK(t2__blas_check_own(dies, "Opteron", core, sizeof core, why, sizeof why, &verdict) == 1);
    CHECK(verdict == 1);
    CHECK_STR(core, "PRESCOTT");
    CHECK(strstr(why, "OpenBLAS chose Opteron, whose sgemm died on this CPU") != NULL);
    CHECK(strstr(why, "generic kernel") != NULL);
    CHECK(t2__blas_check_own(runs, "Opteron", core, sizeof core, why, sizeof why, &verdict) == 0);
    CHECK(verdict == 1);
    CHECK_STR(core, "");
    CHECK(strstr(why, "checked: Opteron ran its sgemm here") != NULL);
    /* A probe that cannot even start is no verdict: the core stands. */
    snprintf(runs, sizeof runs, "%s/missing", dir);
    CHECK(t2__blas_check_own(runs, "Opteron", core, sizeof core, why, sizeof why, &verdict) == 0);
    CHECK(verdict == 0);
    CHECK(strstr(why, "could not run") != NULL);
    snprintf(dies, sizeof dies, "%s/dies", dir);
    remove(dies);
    snprintf(runs, sizeof runs, "%s/runs", dir);
    remove(runs);
    remove(dir);
}

static int count(t2__vec_tier tier, const char *current, const char **out)
{
    return t2__blas_candidates(tier, current, out, 4);
}

int main(void)
{
    const char *c[4];
    /* Names are compared without case, as OpenBLAS reports them in mixed case. */
    CHECK(t2__blas_core_tier("SkylakeX") == T2__TIER_AVX512);
    CHECK(t2__blas_core_tier("cooperlake") == T2__TIER_AVX512_BF16);
    CHECK(t2__blas_core_tier("Prescott") == T2__TIER_GENERIC);
    CHECK(t2__blas_core_tier("Zen") == T2__TIER_AVX2);
    CHECK(t2__blas_core_tier("NONSENSE") == -1);
    CHECK(t2__blas_core_tier(NULL) == -1);

    /* The pick: 10% over the current core; between challengers the list's order, unless one is
     * more than 1.5x the first (this Xeon measured COOPERLAKE 66 / SKYLAKEX 81 and 100 / 101 from
     * one fresh home to the next, and picked each in turn). */
    CHECK(t2__blas_pick(13, (double[]){66, 81}, 2) == 0);
    CHECK(t2__blas_pick(17, (double[]){100, 101}, 2) == 0);
    CHECK(t2__blas_pick(15, (double[]){34, 40}, 2) == 0);
    CHECK(t2__blas_pick(15, (double[]){40, 74}, 2) == 1);  /* far ahead */
    CHECK(t2__blas_pick(15, (double[]){0, 41}, 2) == 1);   /* the first did not run */
    CHECK(t2__blas_pick(60, (double[]){64, 65}, 2) == -1); /* not 10% over the current core */
    CHECK(t2__blas_pick(60, (double[]){64, 70}, 2) == 1);
    CHECK(t2__blas_pick(60, NULL, 0) == -1);

    /* Zen 4 on Debian's OpenBLAS: Haswell kernels on an AVX-512 + BF16 CPU -> both AVX-512 cores
     * are measured, the bf16 one first. */
    CHECK(count(T2__TIER_AVX512_BF16, "Haswell", c) == 2);
    CHECK_STR(c[0], "COOPERLAKE");
    CHECK_STR(c[1], "SKYLAKEX");
    /* Emerald Rapids falling back to the generic core: the same two. */
    CHECK(count(T2__TIER_AVX512_BF16, "Prescott", c) == 2);
    /* OpenBLAS already on Cooperlake: SkylakeX is still measured against it. */
    CHECK(count(T2__TIER_AVX512_BF16, "Cooperlake", c) == 1);
    CHECK_STR(c[0], "SKYLAKEX");
    /* Skylake-X CPU (no bf16) on SkylakeX: nothing to decide. */
    CHECK(count(T2__TIER_AVX512, "SkylakeX", c) == 0);
    /* An AVX-512 CPU on Haswell kernels. */
    CHECK(count(T2__TIER_AVX512, "Haswell", c) == 1);
    CHECK_STR(c[0], "SKYLAKEX");
    /* An AVX2 CPU (Zen 2) on Zen kernels: Haswell is measured (same sgemm kernel, the margin
     * keeps OpenBLAS's choice). */
    CHECK(count(T2__TIER_AVX2, "Zen", c) == 1);
    CHECK_STR(c[0], "HASWELL");
    /* A CPU with no AVX at all stays on the generic kernel: no candidate. */
    CHECK(count(T2__TIER_GENERIC, "Prescott", c) == 0);
    CHECK(count(T2__TIER_GENERIC, "Core2", c) == 0);
    /* A core t2exp does not know, or stronger than CPUID says: left alone. */
    CHECK(count(T2__TIER_AVX512_BF16, "Sapphirerapids", c) == 0);
    CHECK(count(T2__TIER_AVX2, "SkylakeX", c) == 0);
    /* The table never offers more than asked for. */
    CHECK(t2__blas_candidates(T2__TIER_AVX512_BF16, "Haswell", c, 1) == 1);

    /* The tier of a feature set. */
    t2__cpu_features f;
    memset(&f, 0, sizeof f);
    CHECK(t2__cpu_tier(&f) == T2__TIER_GENERIC);
    f.avx = 1;
    CHECK(t2__cpu_tier(&f) == T2__TIER_AVX);
    f.avx2 = 1;
    CHECK(t2__cpu_tier(&f) == T2__TIER_AVX); /* AVX2 without FMA is not Haswell's tier */
    f.fma = 1;
    CHECK(t2__cpu_tier(&f) == T2__TIER_AVX2);
    f.avx512f = f.avx512bw = 1;
    CHECK(t2__cpu_tier(&f) == T2__TIER_AVX2); /* Haswell-tier without VL (Knights Landing-like) */
    f.avx512vl = 1;
    CHECK(t2__cpu_tier(&f) == T2__TIER_AVX512);
    f.avx512_bf16 = 1;
    CHECK(t2__cpu_tier(&f) == T2__TIER_AVX512_BF16);
    char feats[128];
    t2__cpu_features_str(&f, feats, sizeof feats);
    CHECK_STR(feats, "avx fma avx2 avx512f avx512bw avx512vl avx512_bf16");
    memset(&f, 0, sizeof f);
    t2__cpu_features_str(&f, feats, sizeof feats);
    CHECK_STR(feats, "none");

    /* The report on this machine: the core is one OpenBLAS names, the line says it. */
    t2_blas_report r;
    CHECK(t2_blas_report_get(&r) == T2_OK);
    CHECK(strncmp(r.library, "OpenBLAS ", 9) == 0);
    CHECK(r.core[0] != '\0');
    CHECK(r.why[0] != '\0');
    char line[512];
    CHECK(t2_blas_line(line, sizeof line) == T2_OK);
    CHECK(strncmp(line, "BLAS: OpenBLAS ", 15) == 0);
    CHECK(strstr(line, r.core) != NULL);
    CHECK(t2_blas_line(NULL, 0) == T2_EINVAL);
    CHECK(t2_blas_report_get(NULL) == T2_EINVAL);

    /* The advice: a process whose core is weaker than the CPU, with no OPENBLAS_CORETYPE, is
     * told what to set; otherwise it is told nothing (or warned about a value OpenBLAS refused). */
    char msg[512];
    int weak = t2_blas_check(msg, sizeof msg);
    if (weak) {
        CHECK(r.weaker);
        CHECK(getenv("OPENBLAS_CORETYPE") == NULL);
        CHECK(strstr(msg, "set OPENBLAS_CORETYPE=") != NULL);
        CHECK(strstr(msg, r.cpu_core) != NULL);
    } else if (msg[0]) {
        CHECK(strstr(msg, "OPENBLAS_CORETYPE=") != NULL);
    }
    CHECK(t2_blas_check(NULL, 0) == weak);
    printf("core %s, cpu allows %s, advice: %s\n", r.core, r.cpu_core, msg[0] ? msg : "(none)");

    /* One probe: the kernel runs and reports a positive rate. */
    double g = t2__blas_probe_gflops();
    CHECK(g > 0);
    printf("1-thread sgemm %.1f GFLOPS\n", g);
    check_own_core();
    return check_report("test_blas_core");
}
