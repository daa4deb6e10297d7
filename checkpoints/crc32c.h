/* crc32c.h — CRC-32C (Castagnoli), the checksum of checkpoint tensors and entries (internal).
 *
 * CRC-32C rather than zlib's CRC-32 because x86-64 (SSE4.2) computes it in hardware: at ~20 GB/s
 * the checksum costs a few percent of a checkpoint write, where a table-driven CRC-32 (~1.5 GB/s
 * here) would cost as much as the write itself. Values are the standard ones (iSCSI, ext4,
 * Python's crc32c): t2__crc32c(0, "123456789", 9) == 0xe3069283. */
#ifndef T2_CHECKPOINTS_CRC32C_H
#define T2_CHECKPOINTS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues crc (0 to start) over p[0..n): t2__crc32c(t2__crc32c(0, a, na), b, nb) is the CRC
 * of a followed by b. Thread-safe; the first call picks the hardware or the table version. */
uint32_t t2__crc32c(uint32_t crc, const void *p, size_t n);

/* The CRC of A followed by B from crc_a = CRC(A), crc_b = CRC(B) and len_b = |B| bytes, without
 * touching the data (zlib's crc32_combine for this polynomial). */
uint32_t t2__crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

/* The portable table version, whatever the CPU (tests compare the two). */
uint32_t t2__crc32c_sw(uint32_t crc, const void *p, size_t n);

#endif
