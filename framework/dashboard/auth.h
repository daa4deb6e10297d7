/* auth.h — who may read the dashboard: whoever shows its token (auth.c). */
#ifndef T2_DASHBOARD_AUTH_H
#define T2_DASHBOARD_AUTH_H

#include <stddef.h>

#define T2__DASH_TOKEN_MAX 256

/* The token: $T2EXP_DASHBOARD_TOKEN when set (16 to 256 of A-Z a-z 0-9 . _ ~ -, else T2_EINVAL
 * naming the rule), else 32 random bytes in hex. */
int t2__dash_token(char out[T2__DASH_TOKEN_MAX + 1]);

/* How a request showed the token. */
typedef enum {
    T2__DASH_DENIED = 0,
    T2__DASH_BY_QUERY,  /* ?token=...: a browser's first visit, from the printed address */
    T2__DASH_BY_COOKIE, /* the cookie that first visit set */
    T2__DASH_BY_HEADER  /* Authorization: Bearer ... (scripts) */
} t2__dash_auth;

/* Which of the three shows token (each may be NULL: not in the request); each is compared in
 * constant time. */
t2__dash_auth t2__dash_check(const char *token, const char *query, const char *cookie, const char *authorization);

/* The cookie's name for the dashboard on port: browsers send a host's cookies to every port of
 * it, and two dashboards on one machine must not take each other's. */
void t2__dash_cookie_name(unsigned port, char *out, size_t n);

#endif
