/* cpu_features.h — what this CPU's vector units offer, read from CPUID (internal).
 *
 * Used to tell whether OpenBLAS picked a kernel ("core") as strong as the CPU allows, and printed
 * by `t2exp info`. A feature counts only when the OS also saves its registers (XGETBV), as a
 * kernel that uses it would otherwise fault. */
#ifndef T2_COMMON_CPU_FEATURES_H
#define T2_COMMON_CPU_FEATURES_H

typedef struct t2__cpu_features {
    char brand[64];   /* CPUID brand string, trimmed ("" where the CPU has none) */
    int family, model;
    int sse2, avx, fma, avx2;
    int avx512f, avx512bw, avx512vl, avx512_bf16, amx_tile;
} t2__cpu_features;

/* Capability tiers, weakest first: what an OpenBLAS core needs and what a CPU can run. */
typedef enum t2__vec_tier {
    T2__TIER_GENERIC = 0, /* SSE2 and below */
    T2__TIER_AVX = 1,
    T2__TIER_AVX2 = 2,    /* AVX2 + FMA */
    T2__TIER_AVX512 = 3,  /* AVX-512 F/BW/VL */
    T2__TIER_AVX512_BF16 = 4,
} t2__vec_tier;

/* Fills *f for the CPU this runs on (all zero on a non-x86 build). */
void t2__cpu_features_get(t2__cpu_features *f);

/* The strongest tier f's features support. */
t2__vec_tier t2__cpu_tier(const t2__cpu_features *f);

/* "sse2 avx fma avx2 avx512f avx512bw avx512vl avx512_bf16 amx_tile", listing only those present
 * ("none" if none), into buf. */
void t2__cpu_features_str(const t2__cpu_features *f, char *buf, size_t len);

#endif
