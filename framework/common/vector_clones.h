/* vector_clones.h — T2__VECTOR_CLONES before a hot loop's function compiles it once per vector
 * unit (AVX-512 with x86-64-v4, AVX2, and the baseline) and picks the widest the CPU has when the
 * library loads. The library itself is built for the x86-64 baseline (SSE2, 4 floats a vector),
 * so that one build runs everywhere; the loops around the GEMMs are 16 floats a vector on AVX-512.
 * A function so marked must give the same bits on every path: no reassociation is allowed
 * (no -ffast-math), so only the vector width changes. */
#ifndef T2_COMMON_VECTOR_CLONES_H
#define T2_COMMON_VECTOR_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define T2__VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
#endif
#ifndef T2__VECTOR_CLONES
#define T2__VECTOR_CLONES
#endif

#endif
