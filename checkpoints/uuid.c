/* uuid.c — random uuids for checkpoint names. The kernel's random source rather than the trial
 * RNG: a uuid must be unique across processes and restarts, and drawing it must not perturb the
 * seeded streams. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include "ckpt.h"
#include "internal.h"
#include "t2exp/error.h"

int t2__uuid_v4(char out[T2__UUID_LEN + 1])
{
    if (!out) return t2_seterr(T2_EINVAL, "uuid: NULL argument");
    unsigned char b[16];
    int rc = t2__random_bytes(b, sizeof b);
    if (rc) return rc;
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    static const char hex[] = "0123456789abcdef";
    char *o = out;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) *o++ = '-';
        *o++ = hex[b[i] >> 4];
        *o++ = hex[b[i] & 15];
    }
    *o = '\0';
    return T2_OK;
}

int t2__uuid_valid(const char *s)
{
    if (!s || strlen(s) != T2__UUID_LEN) return 0;
    for (int i = 0; i < T2__UUID_LEN; i++) {
        int dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    }
    return 1;
}
