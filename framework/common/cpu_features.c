/* cpu_features.c — CPUID and XGETBV, read once per process: under a hypervisor every CPUID traps
 * to it (tens of microseconds here), and every trial's runner asks (t2_blas_line), so a worker
 * running thousands of short trials paid it thousands of times. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* XCR0: which register states the OS saves on a context switch. */
static unsigned long long xgetbv0(void)
{
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

static void read_brand(t2__cpu_features *f)
{
    unsigned int max = __get_cpuid_max(0x80000000u, NULL);
    if (max < 0x80000004u) return;
    unsigned int r[12];
    for (unsigned int i = 0; i < 3; i++)
        __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
    char raw[49];
    memcpy(raw, r, 48);
    raw[48] = '\0';
    /* Vendors pad the string with spaces on either side. */
    const char *s = raw;
    while (*s == ' ') s++;
    snprintf(f->brand, sizeof f->brand, "%s", s);
    for (size_t n = strlen(f->brand); n > 0 && f->brand[n - 1] == ' '; n--) f->brand[n - 1] = '\0';
}

static void probe(t2__cpu_features *f)
{
    memset(f, 0, sizeof *f);
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    int base_family = (int)((a >> 8) & 0xf);
    f->family = base_family + (base_family == 0xf ? (int)((a >> 20) & 0xff) : 0);
    f->model = (int)((a >> 4) & 0xf) | (base_family == 0x6 || base_family == 0xf ? (int)((a >> 12) & 0xf0) : 0);
    f->sse2 = (d >> 26) & 1;
    int osxsave = (c >> 27) & 1;
    unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
    int ymm_saved = (xcr0 & 0x6) == 0x6;             /* SSE + AVX state */
    int zmm_saved = ymm_saved && (xcr0 & 0xe0) == 0xe0; /* opmask + both ZMM halves */
    int amx_saved = (xcr0 & 0x60000) == 0x60000;       /* XTILECFG + XTILEDATA */
    f->avx = ymm_saved && ((c >> 28) & 1);
    f->fma = f->avx && ((c >> 12) & 1);
    read_brand(f);
    if (__get_cpuid_max(0, NULL) < 7) return;
    __cpuid_count(7, 0, a, b, c, d);
    f->avx2 = f->avx && ((b >> 5) & 1);
    f->avx512f = zmm_saved && ((b >> 16) & 1);
    f->avx512bw = f->avx512f && ((b >> 30) & 1);
    f->avx512vl = f->avx512f && ((b >> 31) & 1);
    f->amx_tile = amx_saved && ((d >> 24) & 1);
    unsigned int max_sub = a;
    if (max_sub >= 1) {
        __cpuid_count(7, 1, a, b, c, d);
        f->avx512_bf16 = f->avx512f && ((a >> 5) & 1);
    }
}

static pthread_once_t probed = PTHREAD_ONCE_INIT;
static t2__cpu_features cached;
static void probe_once(void) { probe(&cached); }

void t2__cpu_features_get(t2__cpu_features *f)
{
    pthread_once(&probed, probe_once);
    *f = cached;
}
#else
void t2__cpu_features_get(t2__cpu_features *f) { memset(f, 0, sizeof *f); }
#endif

t2__vec_tier t2__cpu_tier(const t2__cpu_features *f)
{
    if (f->avx512f && f->avx512bw && f->avx512vl) return f->avx512_bf16 ? T2__TIER_AVX512_BF16 : T2__TIER_AVX512;
    if (f->avx2 && f->fma) return T2__TIER_AVX2;
    if (f->avx) return T2__TIER_AVX;
    return T2__TIER_GENERIC;
}

void t2__cpu_features_str(const t2__cpu_features *f, char *buf, size_t len)
{
    struct { int on; const char *name; } all[] = {
        {f->sse2, "sse2"}, {f->avx, "avx"}, {f->fma, "fma"}, {f->avx2, "avx2"}, {f->avx512f, "avx512f"},
        {f->avx512bw, "avx512bw"}, {f->avx512vl, "avx512vl"}, {f->avx512_bf16, "avx512_bf16"},
        {f->amx_tile, "amx_tile"},
    };
    size_t used = 0;
    if (len) buf[0] = '\0';
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (!all[i].on || used >= len) continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? " " : "", all[i].name);
        if (w > 0) used += (size_t)w;
    }
    if (len && !buf[0]) snprintf(buf, len, "none");
}
