/* crc32c.c — CRC-32C: SSE4.2 instructions in three interleaved streams when the CPU has them,
 * slice-by-8 tables otherwise.
 *
 * One crc32 instruction has a latency of 3 cycles but a throughput of 1 per cycle, so a single
 * dependent chain runs at a third of the possible speed. The buffer is therefore cut into rounds
 * of three LANE-byte lanes computed side by side, and the lane CRCs are joined with the
 * "append LANE zero bytes" operator, a linear map on the 32-bit register applied through four
 * 256-entry tables (the zlib crc32_combine algebra). */
#define _POSIX_C_SOURCE 200809L
#include "crc32c.h"
#include <pthread.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define T2_CRC_X86 1
#endif

#define POLY 0x82f63b78u /* Castagnoli, bit-reflected */
#define LANE 4096         /* bytes per lane: long enough that joining costs ~1% */

static uint32_t table[8][256];   /* slice-by-8 */
static uint32_t x2n[32];         /* x^(2^k) mod POLY */
static uint32_t lane_shift[4][256]; /* register -> register after LANE zero bytes, byte by byte */
static int have_hw;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* a*b mod POLY in the reflected representation (bit 31 is x^0). */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
    uint32_t m = (uint32_t)1 << 31, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = b & 1 ? (b >> 1) ^ POLY : b >> 1;
    }
    return p;
}

/* x^(n * 2^k) mod POLY. */
static uint32_t x2nmodp(uint64_t n, unsigned k)
{
    uint32_t p = (uint32_t)1 << 31;
    while (n) {
        if (n & 1) p = multmodp(x2n[k & 31], p);
        n >>= 1;
        k++;
    }
    return p;
}

static void init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        table[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (int i = 0; i < 256; i++) table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
    uint32_t p = (uint32_t)1 << 30; /* x^1 */
    x2n[0] = p;
    for (int k = 1; k < 32; k++) x2n[k] = p = multmodp(p, p);
    uint32_t op = x2nmodp(LANE, 3); /* x^(8*LANE) */
    for (int j = 0; j < 4; j++)
        for (uint32_t b = 0; b < 256; b++) lane_shift[j][b] = multmodp(op, b << (8 * j));
#ifdef T2_CRC_X86
    __builtin_cpu_init();
    have_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t sw_reg(uint32_t c, const unsigned char *p, size_t n)
{
    while (n && ((uintptr_t)p & 7)) {
        c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
        n--;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        w ^= c;
        c = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
            table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
            table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
    return c;
}

#ifdef T2_CRC_X86
static inline uint32_t shift_lane(uint32_t c)
{
    return lane_shift[0][c & 0xff] ^ lane_shift[1][(c >> 8) & 0xff] ^ lane_shift[2][(c >> 16) & 0xff] ^
           lane_shift[3][c >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t hw_reg(uint32_t c, const unsigned char *p, size_t n)
{
    while (n && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8(c, *p++);
        n--;
    }
    while (n >= 3 * (size_t)LANE) {
        uint64_t c0 = c, c1 = 0, c2 = 0, w0, w1, w2;
        for (const unsigned char *end = p + LANE; p < end; p += 8) {
            memcpy(&w0, p, 8);
            memcpy(&w1, p + LANE, 8);
            memcpy(&w2, p + 2 * LANE, 8);
            c0 = _mm_crc32_u64(c0, w0);
            c1 = _mm_crc32_u64(c1, w1);
            c2 = _mm_crc32_u64(c2, w2);
        }
        c = shift_lane(shift_lane((uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
        p += 2 * LANE;
        n -= 3 * (size_t)LANE;
    }
    uint64_t c64 = c, w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        c64 = _mm_crc32_u64(c64, w);
    }
    c = (uint32_t)c64;
    while (n--) c = _mm_crc32_u8(c, *p++);
    return c;
}
#endif

uint32_t t2__crc32c_sw(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&once, init);
    return ~sw_reg(~crc, p, n);
}

uint32_t t2__crc32c(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&once, init);
#ifdef T2_CRC_X86
    if (have_hw) return ~hw_reg(~crc, p, n);
#endif
    return ~sw_reg(~crc, p, n);
}

uint32_t t2__crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
    pthread_once(&once, init);
    return multmodp(x2nmodp(len_b, 3), crc_a) ^ crc_b;
}
