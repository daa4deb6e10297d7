/* auth.c — the dashboard's peer check. The store is its owner's alone (0700/0600), and a server on
 * 127.0.0.1 is open to every user of the machine (a cluster's login node) and, through DNS
 * rebinding, to pages in their browsers; so every request shows a token the dashboard drew at
 * start and printed in its address, as Jupyter does: in the query on a browser's first visit
 * (which then gets it as an HttpOnly, SameSite=Strict cookie), or as a bearer header from a
 * script. Pure checks here, no I/O but drawing the token. */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "auth.h"
#include "internal.h"

static int token_char(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' ||
           ch == '_' || ch == '~' || ch == '-';
}

int t2__dash_token(char out[T2__DASH_TOKEN_MAX + 1])
{
    const char *env = getenv("T2EXP_DASHBOARD_TOKEN");
    if (env && *env) {
        size_t n = strlen(env);
        int ok = n >= 16 && n <= T2__DASH_TOKEN_MAX;
        for (size_t i = 0; ok && i < n; i++) ok = token_char(env[i]);
        if (!ok)
            return t2_seterr(T2_EINVAL, "T2EXP_DASHBOARD_TOKEN must be 16 to %d characters of A-Z a-z 0-9 . _ ~ -",
                             T2__DASH_TOKEN_MAX);
        memcpy(out, env, n + 1);
        return T2_OK;
    }
    unsigned char b[32];
    int rc = t2__random_bytes(b, sizeof b);
    if (rc) return rc;
    static const char HEX[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof b; i++) {
        out[2 * i] = HEX[b[i] >> 4];
        out[2 * i + 1] = HEX[b[i] & 15];
    }
    out[2 * sizeof b] = '\0';
    return T2_OK;
}

/* Constant time in the shown text's bytes: how long a wrong token takes to be refused says nothing
 * of how much of it was right. */
static int same(const char *token, const char *shown)
{
    if (!shown) return 0;
    size_t n = strlen(token), m = strnlen(shown, T2__DASH_TOKEN_MAX + 1);
    unsigned char diff = (unsigned char)(n != m);
    for (size_t i = 0; i < m; i++) diff |= (unsigned char)(token[i < n ? i : 0] ^ shown[i]);
    return diff == 0;
}

t2__dash_auth t2__dash_check(const char *token, const char *query, const char *cookie, const char *authorization)
{
    if (same(token, query)) return T2__DASH_BY_QUERY;
    if (same(token, cookie)) return T2__DASH_BY_COOKIE;
    if (authorization && strncmp(authorization, "Bearer ", 7) == 0 && same(token, authorization + 7))
        return T2__DASH_BY_HEADER;
    return T2__DASH_DENIED;
}

void t2__dash_cookie_name(unsigned port, char *out, size_t n)
{
    snprintf(out, n, "t2exp_dashboard_%u", port);
}
