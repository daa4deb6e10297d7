/* blas_core.c — is OpenBLAS's core as strong as the CPU, and which core to run instead.
 *
 * Why measure rather than trust names: a newer core is not always faster on every CPU (on some
 * AVX-512 parts SkylakeX beats Cooperlake, on others the reverse), and the probe costs ~60 ms per
 * core once per machine. */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "blas_core.h"
#include "internal.h"
#include "outfile.h"
#include "t2exp/blas.h"
#include "t2exp/data.h"

/* OpenBLAS's DYNAMIC_ARCH x86-64 cores and the tier each needs (names as OPENBLAS_CORETYPE takes
 * them; openblas_get_corename() returns the same names in mixed case). */
static const struct { const char *name; t2__vec_tier tier; } CORES[] = {
    {"PRESCOTT", T2__TIER_GENERIC},   {"CORE2", T2__TIER_GENERIC},     {"PENRYN", T2__TIER_GENERIC},
    {"DUNNINGTON", T2__TIER_GENERIC}, {"NEHALEM", T2__TIER_GENERIC},   {"ATOM", T2__TIER_GENERIC},
    {"OPTERON", T2__TIER_GENERIC},    {"OPTERON_SSE3", T2__TIER_GENERIC}, {"BARCELONA", T2__TIER_GENERIC},
    {"NANO", T2__TIER_GENERIC},       {"KATMAI", T2__TIER_GENERIC},    {"COPPERMINE", T2__TIER_GENERIC},
    {"NORTHWOOD", T2__TIER_GENERIC},  {"BANIAS", T2__TIER_GENERIC},    {"ATHLON", T2__TIER_GENERIC},
    {"SANDYBRIDGE", T2__TIER_AVX},    {"BULLDOZER", T2__TIER_AVX},     {"PILEDRIVER", T2__TIER_AVX},
    {"STEAMROLLER", T2__TIER_AVX},    {"EXCAVATOR", T2__TIER_AVX},     {"HASWELL", T2__TIER_AVX2},
    {"ZEN", T2__TIER_AVX2},           {"SKYLAKEX", T2__TIER_AVX512},   {"COOPERLAKE", T2__TIER_AVX512_BF16},
};

int t2__blas_core_tier(const char *core)
{
    if (!core) return -1;
    for (size_t i = 0; i < sizeof CORES / sizeof CORES[0]; i++)
        if (!strcasecmp(core, CORES[i].name)) return (int)CORES[i].tier;
    return -1;
}

/* The core to try for each tier, strongest tier first. Zen is left out: it shares Haswell's sgemm
 * kernel, so it can never win the AVX2 tier. */
static const struct { t2__vec_tier tier; const char *core; } BEST_FOR_TIER[] = {
    {T2__TIER_AVX512_BF16, "COOPERLAKE"},
    {T2__TIER_AVX512, "SKYLAKEX"},
    {T2__TIER_AVX2, "HASWELL"},
    {T2__TIER_AVX, "SANDYBRIDGE"},
};

int t2__blas_candidates(t2__vec_tier tier, const char *current, const char **out, int max)
{
    int have = t2__blas_core_tier(current);
    /* A core we do not know is left alone: OpenBLAS may know the CPU better than this table. */
    if (have < 0) return 0;
    /* OpenBLAS saw more than CPUID told us: trust it. */
    if (have > (int)tier) return 0;
    /* The CPU's own tier and, on a bf16 CPU, plain AVX-512 too: which of those two is faster
     * differs between CPUs, so both are measured. A weaker core is never a candidate. */
    t2__vec_tier floor = tier == T2__TIER_AVX512_BF16 ? T2__TIER_AVX512 : tier;
    int n = 0;
    for (size_t i = 0; i < sizeof BEST_FOR_TIER / sizeof BEST_FOR_TIER[0] && n < max; i++) {
        const char *c = BEST_FOR_TIER[i].core;
        if (BEST_FOR_TIER[i].tier <= tier && BEST_FOR_TIER[i].tier >= floor && strcasecmp(c, current))
            out[n++] = c;
    }
    return n;
}

double t2__blas_probe_gflops(void)
{
    /* 384^3 is big enough to reach the kernel's steady state and small enough (1.7 MiB of
     * operands) to stay in cache, so the figure is the kernel's and not the memory's. */
    enum { N = 384 };
    float *a = t2__alloc_aligned((size_t)N * N, sizeof(float));
    float *b = t2__alloc_aligned((size_t)N * N, sizeof(float));
    float *c = t2__alloc_aligned((size_t)N * N, sizeof(float));
    double best = 0;
    /* One thread, whatever this process loaded with: the children measure with one too. */
    int threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
    if (a && b && c) {
        for (size_t i = 0; i < (size_t)N * N; i++) {
            a[i] = (float)(i % 97) * 1e-3f;
            b[i] = (float)(i % 89) * 1e-3f;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
        /* Best of five short windows: a loaded machine slows some windows, never speeds one up. */
        for (int w = 0; w < 5; w++) {
            int reps = 0;
            double t0 = t2__now(), dt;
            do {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
                reps++;
            } while ((dt = t2__now() - t0) < 0.01);
            double g = 2.0 * N * N * N * reps / dt / 1e9;
            if (g > best) best = g;
        }
    }
    openblas_set_num_threads(threads);
    t2__free_aligned(a);
    t2__free_aligned(b);
    t2__free_aligned(c);
    return best;
}

/* Runs `exe __blas-probe` with OPENBLAS_CORETYPE=core; its GFLOPS, or 0 if it could not run.
 * *signal (NULL: not asked) is the signal that killed the probe, 0 if none did. */
static double probe_core(const char *exe, const char *core, int *signal)
{
    if (signal) *signal = 0;
    int fds[2];
    if (pipe(fds)) return 0;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        if (dup2(fds[1], STDOUT_FILENO) < 0) _exit(127);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, STDERR_FILENO);
        setenv("OPENBLAS_CORETYPE", core, 1);
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        execl(exe, exe, T2__BLAS_PROBE_ARG, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[128];
    size_t used = 0;
    ssize_t r;
    while (used < sizeof buf - 1 && ((r = read(fds[0], buf + used, sizeof buf - 1 - used)) > 0 || (r < 0 && errno == EINTR)))
        if (r > 0) used += (size_t)r;
    buf[used] = '\0';
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    char name[32];
    double g = 0;
    if (signal && WIFSIGNALED(status)) *signal = WTERMSIG(status);
    /* The child prints "<core it loaded> <GFLOPS>": a core OpenBLAS refused shows up as another name. */
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || sscanf(buf, "%31s %lf", name, &g) != 2 ||
        strcasecmp(name, core) != 0 || !(g > 0))
        return 0;
    return g;
}

/* What the cache is keyed on: the CPU, its features and the OpenBLAS build. */
static void cache_key(char *key, size_t len)
{
    t2__cpu_features f;
    t2__cpu_features_get(&f);
    char feats[128];
    t2__cpu_features_str(&f, feats, sizeof feats);
    snprintf(key, len, "%s|%d.%d|%s|%s|%s", f.brand, f.family, f.model, feats, openblas_get_config(),
             openblas_get_corename());
    for (char *p = key; *p; p++)
        if (*p == '\t' || *p == '\n') *p = ' ';
}

/* Reads "t2exp-blas 1\tKEY\tCORE\tWHY\n" from path; 1 when it holds a decision for key. */
static int cache_read(const char *path, const char *key, char *core, size_t core_len, char *why, size_t why_len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    struct stat st;
    char buf[1024];
    ssize_t n = -1;
    /* Only a small private regular file of ours: anything else is measured around. */
    if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022) &&
        st.st_size < (off_t)sizeof buf)
        n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char *f[4];
    char *save = NULL, *s = buf;
    for (int i = 0; i < 4; i++, s = NULL)
        if (!(f[i] = strtok_r(s, i == 3 ? "\n" : "\t", &save))) return 0;
    if (strcmp(f[0], "t2exp-blas 1") || strcmp(f[1], key)) return 0;
    if (f[2][0] != '-' && t2__blas_core_tier(f[2]) < 0) return 0;
    snprintf(core, core_len, "%s", f[2][0] == '-' ? "" : f[2]);
    snprintf(why, why_len, "%s", f[3]);
    return 1;
}

static void cache_write(const char *path, const char *key, const char *core, const char *why)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (t2__mkdirs(dir)) return;
    }
    char line[2048];
    int n = snprintf(line, sizeof line, "t2exp-blas 1\t%s\t%s\t%s\n", key, core[0] ? core : "-", why);
    if (n < 0 || (size_t)n >= sizeof line) return;
    t2__outfile o;
    if (t2__outfile_open(&o, path, 0600, NULL, 0)) return;
    if (t2__outfile_write(&o, line, (size_t)n)) {
        t2__outfile_abort(&o);
        return;
    }
    t2__outfile_commit(&o);
}

int t2__blas_check_own(const char *exe, const char *current, char *core, size_t core_len, char *why, size_t why_len,
                       int *verdict)
{
    core[0] = '\0';
    int sig;
    double g = probe_core(exe, current, &sig);
    if (verdict) *verdict = sig != 0 || g > 0;
    if (sig) {
        snprintf(core, core_len, "PRESCOTT");
        snprintf(why, why_len, "OpenBLAS chose %s, whose sgemm died on this CPU (%s); the generic kernel instead",
                 current, strsignal(sig));
        return 1;
    }
    if (g > 0) snprintf(why, why_len, "OpenBLAS's own choice, checked: %s ran its sgemm here", current);
    else snprintf(why, why_len, "OpenBLAS's own choice (its check could not run)");
    return 0;
}

int t2__blas_choose(const char *exe, const char *cache_path, char *core, size_t core_len, char *why,
                    size_t why_len)
{
    core[0] = '\0';
    why[0] = '\0';
    t2__cpu_features f;
    t2__cpu_features_get(&f);
    const char *current = openblas_get_corename();
    const char *cand[4];
    int nc = t2__blas_candidates(t2__cpu_tier(&f), current, cand, 4);
    /* Without AVX there is nothing faster to try, but OpenBLAS's pick of an older family's core is
     * not always one this CPU can run: under QEMU's default x86-64 model it chose Opteron, whose
     * sgemm died of an illegal instruction in every trial. Its own core is run once in a child
     * first; the generic kernel replaces a core that dies. */
    int check = nc == 0 && t2__cpu_tier(&f) == T2__TIER_GENERIC && t2__blas_core_tier(current) == T2__TIER_GENERIC &&
                strcasecmp(current, "PRESCOTT") != 0;
    if (nc == 0 && !check) return 0;
    char key[1024];
    cache_key(key, sizeof key);
    if (cache_path && cache_read(cache_path, key, core, core_len, why, why_len)) return core[0] != '\0';
    if (check) {
        int verdict, chosen = t2__blas_check_own(exe, current, core, core_len, why, why_len, &verdict);
        if (cache_path && verdict) cache_write(cache_path, key, core, why);
        return chosen;
    }

    /* The current core measures in this process; each candidate in a child that loads it. */
    double cur = t2__blas_probe_gflops(), g[4] = {0};
    int failed = 0;
    size_t off = 0;
    int w = snprintf(why, why_len, "OpenBLAS chose %s; 1-thread sgemm GFLOPS: %s %.0f", current, current, cur);
    off = w > 0 ? (size_t)w : 0;
    for (int i = 0; i < nc && i < 4; i++) {
        g[i] = probe_core(exe, cand[i], NULL);
        failed += !(g[i] > 0);
        if (off < why_len) {
            w = g[i] > 0 ? snprintf(why + off, why_len - off, ", %s %.0f", cand[i], g[i])
                         : snprintf(why + off, why_len - off, ", %s (did not run)", cand[i]);
            if (w > 0) off += (size_t)w;
        }
    }
    int pick = t2__blas_pick(cur, g, nc < 4 ? nc : 4);
    const char *best_core = pick >= 0 ? cand[pick] : NULL;
    if (off < why_len)
        snprintf(why + off, why_len - off, best_core ? " -> %s" : " -> kept %s", best_core ? best_core : current);
    if (best_core) snprintf(core, core_len, "%s", best_core);
    /* A probe that could not run (no exec here, a core refused) is not a verdict worth keeping. */
    if (cache_path && !failed) cache_write(cache_path, key, core, why);
    return best_core != NULL;
}

int t2__blas_pick(double current_g, const double *g, int n)
{
    /* A challenger must be 10% ahead of the current core: the cores that matter differ by 2-6x
     * (Haswell or Prescott against AVX-512). */
    int first = -1, fastest = -1;
    for (int i = 0; i < n; i++) {
        if (!(g[i] > current_g * 1.10)) continue;
        if (first < 0) first = i;
        if (fastest < 0 || g[i] > g[fastest]) fastest = i;
    }
    /* Between challengers the list's order stands unless one is far ahead: close ones (SkylakeX,
     * Cooperlake: 66 against 81, 100 against 101 here) flip with the noise of a busy machine. */
    return first >= 0 && g[fastest] > g[first] * 1.5 ? fastest : first;
}

int t2__blas_probe_main(void)
{
    double g = t2__blas_probe_gflops();
    return printf("%s %.1f\n", openblas_get_corename(), g) > 0 && fflush(stdout) == 0 ? 0 : 1;
}

int t2__blas_startup(void)
{
    if (getenv("OPENBLAS_CORETYPE") || getenv(T2__BLAS_CHOSEN_ENV)) return 0;
    char cache[4096], core[32], why[384], env[512];
    const char *cache_path = NULL;
    if (t2_dataset_cache_dir(cache, sizeof cache) == T2_OK && strlen(cache) + 16 < sizeof cache) {
        strcat(cache, "/blas-core");
        cache_path = cache;
    }
    int chosen = t2__blas_choose("/proc/self/exe", cache_path, core, sizeof core, why, sizeof why);
    if (!why[0]) return 0; /* nothing to decide on this CPU */
    snprintf(env, sizeof env, "%s\t%s", chosen ? core : "", why);
    /* Every process after this one (trials, local ranks) inherits the decision instead of redoing it. */
    if (setenv(T2__BLAS_CHOSEN_ENV, env, 1)) return 0;
    return chosen && setenv("OPENBLAS_CORETYPE", core, 1) == 0;
}

/* ---- the public report ---- */

static const char *version_of(const char *config, char *buf, size_t len)
{
    /* openblas_get_config(): "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...". */
    char name[32], ver[32];
    if (sscanf(config, "%31s %31s", name, ver) == 2) snprintf(buf, len, "%s %s", name, ver);
    else snprintf(buf, len, "%s", config);
    return buf;
}

int t2_blas_report_get(t2_blas_report *r)
{
    if (!r) return t2_seterr(T2_EINVAL, "t2_blas_report_get: NULL report");
    memset(r, 0, sizeof *r);
    version_of(openblas_get_config(), r->library, sizeof r->library);
    snprintf(r->core, sizeof r->core, "%s", openblas_get_corename());
    t2__cpu_features f;
    t2__cpu_features_get(&f);
    snprintf(r->cpu, sizeof r->cpu, "%s", f.brand[0] ? f.brand : "unknown");
    t2__cpu_features_str(&f, r->features, sizeof r->features);
    t2__vec_tier tier = t2__cpu_tier(&f);
    const char *cand[4];
    /* The strongest core the features allow, whatever is loaded: candidates against the weakest. */
    if (t2__blas_candidates(tier, "PRESCOTT", cand, 4) > 0) snprintf(r->cpu_core, sizeof r->cpu_core, "%s", cand[0]);
    else snprintf(r->cpu_core, sizeof r->cpu_core, "PRESCOTT");
    int have = t2__blas_core_tier(r->core);
    r->weaker = have >= 0 && have < (int)tier;
    const char *set = getenv("OPENBLAS_CORETYPE");
    const char *chosen = getenv(T2__BLAS_CHOSEN_ENV);
    size_t cl = 0;
    if (set && chosen && (cl = strcspn(chosen, "\t")) == strlen(set) && !strncasecmp(chosen, set, cl)) {
        r->chosen = 1;
        snprintf(r->why, sizeof r->why, "chosen by t2exp: %s", chosen[cl] ? chosen + cl + 1 : "");
    } else if (set) {
        r->user_set = 1;
        if (strcasecmp(set, r->core))
            snprintf(r->why, sizeof r->why, "OPENBLAS_CORETYPE=%s is not a core this OpenBLAS could take; it chose %s itself",
                     set, r->core);
        else
            snprintf(r->why, sizeof r->why, "set by the user (OPENBLAS_CORETYPE=%s)%s%s", set,
                     r->weaker ? "; weaker than this CPU allows, which is " : "", r->weaker ? r->cpu_core : "");
    } else if (chosen && chosen[0] == '\t') {
        snprintf(r->why, sizeof r->why, "OpenBLAS's own choice, kept by t2exp: %s", chosen + 1);
    } else {
        snprintf(r->why, sizeof r->why, "OpenBLAS's own choice%s", r->weaker ? ", weaker than this CPU allows" : "");
    }
    return T2_OK;
}

int t2_blas_check(char *msg, size_t len)
{
    t2_blas_report r;
    t2_blas_report_get(&r);
    if (msg && len) msg[0] = '\0';
    if (r.user_set && strcasecmp(getenv("OPENBLAS_CORETYPE"), r.core)) {
        if (msg) snprintf(msg, len, "%s", r.why);
        return 0;
    }
    if (!r.weaker || getenv("OPENBLAS_CORETYPE")) return 0;
    if (msg)
        snprintf(msg, len, "OpenBLAS uses its %s kernels on a CPU with %s: set OPENBLAS_CORETYPE=%s before the program starts",
                 r.core, r.features, r.cpu_core);
    return 1;
}

int t2_blas_line(char *buf, size_t len)
{
    if (!buf || !len) return t2_seterr(T2_EINVAL, "t2_blas_line: no buffer");
    t2_blas_report r;
    t2_blas_report_get(&r);
    snprintf(buf, len, "BLAS: %s, core %s (%s)", r.library, r.core, r.why);
    return T2_OK;
}
