/* cmd_dashboard.c — `t2exp dashboard [--port N] [--bind ADDR]`: a read-only web UI over the store,
 * served by libmicrohttpd. The pages are compiled in (assets.h); the /api answers are the CLI's
 * --json output (api.h). One connection to the store, opened read-only, used only from the
 * server's single thread: readers never block the experiment that writes (WAL). Every request
 * shows the token printed in the dashboard's address (auth.h). */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "api.h"
#include "assets.h"
#include "auth.h"
#include "framework/cli/commands.h"
#include "framework/cli/args.h"
#include "internal.h"

static const struct option OPTIONS[] = {
    {"port", required_argument, NULL, 'p'},
    {"bind", required_argument, NULL, 'b'},
    {"help", no_argument, NULL, 'h'},
    {0, 0, 0, 0},
};

static const char *const SECURITY_HEADERS[][2] = {
    /* The pages load nothing from elsewhere and run no inline script: stored text that looks like
     * markup can never run, even if a page slipped. */
    {"Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                                "object-src 'none'; frame-ancestors 'none'"},
    {"X-Content-Type-Options", "nosniff"},
    {"Cache-Control", "no-store"},
};

static volatile sig_atomic_t stop;
static void on_signal(int sig) { stop = sig; }

static const char *query_arg(void *ctx, const char *name)
{
    return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

/* A header of an answer beyond Content-Type and SECURITY_HEADERS. */
typedef struct header {
    const char *name, *value;
} header;

static enum MHD_Result respond(struct MHD_Connection *conn, int status, const char *type, void *body, size_t len,
                            enum MHD_ResponseMemoryMode mode, const header *extra, size_t nextra)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE) free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    for (size_t i = 0; i < sizeof SECURITY_HEADERS / sizeof SECURITY_HEADERS[0]; i++)
        MHD_add_response_header(r, SECURITY_HEADERS[i][0], SECURITY_HEADERS[i][1]);
    for (size_t i = 0; i < nextra; i++) MHD_add_response_header(r, extra[i].name, extra[i].value);
    enum MHD_Result ok = MHD_queue_response(conn, (unsigned)status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result not_found(struct MHD_Connection *conn, int status, const char *why)
{
    char *body = malloc(256);
    if (!body) return MHD_NO;
    int n = snprintf(body, 256, "{\"error\":\"%s\"}", why); /* why: fixed text from this file */
    return respond(conn, status, "application/json", body, (size_t)n, MHD_RESPMEM_MUST_FREE, NULL, 0);
}

/* Only names from the compiled-in table: nothing on disk is ever read, so no path can escape. */
static enum MHD_Result asset(struct MHD_Connection *conn, const char *name)
{
    for (const t2__asset *a = t2__assets; a->path; a++)
        if (strcmp(a->path, name) == 0)
            return respond(conn, 200, a->type, (void *)a->data, a->len, MHD_RESPMEM_PERSISTENT, NULL, 0);
    return not_found(conn, 404, "no such file");
}

/* What the request handler knows: the store, the token and its cookie's name. */
typedef struct dashboard {
    t2__store *st;
    char token[T2__DASH_TOKEN_MAX + 1];
    char cookie[48];
} dashboard;

/* A browser's first visit, with the token in the address: the token becomes a cookie, and the
 * page is loaded again without it in the address (and so in the history, or a screenshot). */
static enum MHD_Result to_page(struct MHD_Connection *conn, const dashboard *d)
{
    char cookie[sizeof d->cookie + T2__DASH_TOKEN_MAX + 64];
    snprintf(cookie, sizeof cookie, "%s=%s; Path=/; HttpOnly; SameSite=Strict", d->cookie, d->token);
    const header h[] = {{"Location", "/"}, {"Set-Cookie", cookie}};
    return respond(conn, 303, "text/plain", (void *)"", 0, MHD_RESPMEM_PERSISTENT, h, 2);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **req)
{
    (void)version, (void)upload, (void)req;
    const dashboard *d = cls;
    t2__store *st = d->st;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) return not_found(conn, 405, "read-only: GET only");
    if (*upload_size) return not_found(conn, 400, "no body expected");
    t2__dash_auth how =
        t2__dash_check(d->token, MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token"),
                       MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, d->cookie),
                       MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION));
    if (how == T2__DASH_DENIED)
        return not_found(conn, 403, "this dashboard needs its token: open the address t2exp dashboard printed "
                                    "(it ends in /?token=...), or send Authorization: Bearer TOKEN");
    if (strcmp(url, "/") == 0 && how == T2__DASH_BY_QUERY) return to_page(conn, d);
    if (strcmp(url, "/") == 0) return asset(conn, "index.html");
    if (strncmp(url, "/static/", 8) == 0) return asset(conn, url + 8);
    if (strncmp(url, "/api/", 5) != 0) return not_found(conn, 404, "no such page");
    t2__dash_reply r;
    int rc = t2__dash_api(st, url + 5, query_arg, conn, &r);
    if (rc) {
        fprintf(stderr, "t2exp dashboard: %s %s: %s\n", method, url, t2_errmsg());
        t2_clearerr();
        return not_found(conn, 500, "the store could not answer; see the dashboard's output");
    }
    const header next = {"X-Next-Offset", r.next_offset};
    int has_next = r.next_offset[0] != '\0';
    return respond(conn, r.status, r.type, r.body, r.len, MHD_RESPMEM_MUST_FREE, has_next ? &next : NULL, has_next);
}

static int usage(const char *why)
{
    fprintf(stderr, "t2exp dashboard: %s\nusage: t2exp dashboard [--port N] [--bind ADDR]   (--port 0: any free port)\n",
            why);
    return 2;
}

static int run(const char *home, int argc, char **argv)
{
    long port = 8080;
    const char *bind = "127.0.0.1";
    opterr = 0;
    optind = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", OPTIONS, NULL)) != -1) { /* ':': a missing value is ':' */
        char *end;
        if (ch == 'h') {
            printf("usage: t2exp dashboard [--port N] [--bind ADDR]\n"
                   "a read-only web UI over the store, on http://ADDR:N/ (default 127.0.0.1:8080); open the\n"
                   "address it prints, which carries its token (T2EXP_DASHBOARD_TOKEN: one of your own)\n");
            return 0;
        }
        if (ch == 'p') {
            errno = 0;
            port = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg || port < 0 || port > 65535)
                return usage("--port needs a port number, 0 to 65535");
        } else if (ch == 'b') {
            bind = optarg;
        } else if (ch == ':') {
            char why[160];
            snprintf(why, sizeof why, "%.60s needs a value", argv[optind - 1]);
            return usage(why);
        } else {
            char why[160];
            snprintf(why, sizeof why, "unknown option %.60s%s; dashboard takes: --port N --bind ADDR",
                     argv[optind - 1], t2__cli_did_you_mean(argv[optind - 1], (const char *const[]){"port", "bind", "help", NULL}));
            return usage(why);
        }
    }
    if (optind < argc) return usage("takes no operands");
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, bind, &sa.sin_addr) != 1) return usage("--bind needs an IPv4 address");

    static dashboard dash; /* the server's thread reads it until the daemon stops */
    memset(&dash, 0, sizeof dash);
    if (t2__dash_token(dash.token)) {
        fprintf(stderr, "t2exp dashboard: %s\n", t2_errmsg());
        return 2;
    }
    char dir[4096];
    t2__store *st = NULL;
    if (t2__store_home(home, dir, sizeof dir) || t2__store_open(dir, 1, &st)) {
        fprintf(stderr, "t2exp dashboard: %s\n", t2_errmsg());
        return 3;
    }
    dash.st = st;
    struct sigaction act = {.sa_handler = on_signal};
    sigemptyset(&act.sa_mask);
    sigaction(SIGINT, &act, NULL);
    sigaction(SIGTERM, &act, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* One thread serves every request, so the store connection is only ever used from it. Idle
     * or slow clients are dropped after 10 s and each address gets a bounded share of connections,
     * so a stalled or flooding client cannot starve the others. */
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, (uint16_t)port, NULL, NULL, handle, &dash,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
        MHD_OPTION_CONNECTION_LIMIT, 256u, MHD_OPTION_PER_IP_CONNECTION_LIMIT, 64u,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "t2exp dashboard: cannot listen on %s:%ld: %s\n", bind, port, strerror(errno));
        t2__store_close(st);
        return 3;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned actual = info ? info->port : (unsigned)port;
    t2__dash_cookie_name(actual, dash.cookie, sizeof dash.cookie);
    int loopback = strncmp(bind, "127.", 4) == 0;
    printf("t2exp dashboard: serving http://%s:%u/?token=%s (%s), store %s, read-only; Ctrl-C stops it\n", bind,
           actual, dash.token,
           loopback ? "this machine only, for whoever has the token"
                    : "reachable from the network: anyone who has the token can read the store, in clear text",
           dir);
    fflush(stdout);
    while (!stop) pause();
    MHD_stop_daemon(d);
    t2__dash_api_cache_free();
    t2__store_close(st);
    printf("t2exp dashboard: stopped\n");
    return 0;
}

const t2__command t2__command_dashboard = {.name = "dashboard",
                                           .synopsis = "dashboard [--port N] [--bind ADDR]",
                                           .summary = "a read-only web UI over the store (127.0.0.1:8080)",
                                           .options = OPTIONS,
                                           .run = run};
