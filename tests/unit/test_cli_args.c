/* test_cli_args.c — each command takes only its own options (getopt_long tables, args.c): an
 * option of another command is an error naming the command's options and the nearest one; values,
 * counts of operands, --top's number, --help, and options after the operands. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <string.h>
#include "check.h"
#include "framework/cli/args.h"

static const char *ovr[16];

/* Parses cmd with n arguments (operands are not read back: they point into this frame). */
static int run(const char *cmd, t2__cli_args *a, char *err, int n, ...)
{
    char *argv[16];
    char store[16][64];
    va_list ap;
    va_start(ap, n);
    snprintf(store[0], sizeof store[0], "%s", cmd);
    argv[0] = store[0];
    for (int i = 0; i < n; i++) {
        snprintf(store[i + 1], sizeof store[i + 1], "%s", va_arg(ap, const char *));
        argv[i + 1] = store[i + 1];
    }
    va_end(ap);
    memset(a, 0, sizeof *a);
    a->overrides = ovr;
    return t2__cli_parse(t2__cli_find(cmd), n + 1, argv, a, err, 600);
}

int main(void)
{
    t2__cli_args a;
    char err[600];
    CHECK(t2__cli_find("create") && t2__cli_find("info") && !t2__cli_find("nope"));
    /* Options before, between and after the operands. */
    CHECK(run("create", &a, err, 6, "--plain", "c.yaml", "--config", "x=1", "t.so", "--detach") == 0);
    CHECK(a.npos == 2 && a.noverrides == 1 && a.detach && a.progress == T2__PROGRESS_PLAIN);
    CHECK(run("create", &a, err, 3, "c.yaml", "t.so", "--config=y=2") == 0);
    CHECK(a.noverrides == 1);
    /* Another command's option: named, with the command's own list. */
    CHECK(run("list", &a, err, 1, "--lenient") == 2);
    CHECK(strstr(err, "unknown option --lenient") && strstr(err, "list takes: --json --csv --home DIR"));
    CHECK(run("list", &a, err, 1, "--jsno") == 2);
    CHECK(strstr(err, "did you mean --json?"));
    CHECK(run("delete", &a, err, 2, "3", "--json") == 2);
    CHECK(strstr(err, "delete takes: --yes --home DIR"));
    CHECK(run("trials", &a, err, 2, "3", "-x") == 2);
    CHECK(strstr(err, "unknown option -x"));
    /* Values. */
    CHECK(run("metrics", &a, err, 2, "1", "--kind") == 2);
    CHECK(strstr(err, "--kind needs a value"));
    /* A value given to an option that takes none is that, not a missing value. */
    CHECK(run("list", &a, err, 1, "--json=1") == 2);
    CHECK(strstr(err, "--json=1: --json takes no value") && !strstr(err, "needs a value"));
    CHECK(run("delete", &a, err, 2, "3", "--yes=no") == 2 && strstr(err, "--yes takes no value"));
    CHECK(run("describe", &a, err, 3, "1", "--top", "12") == 0 && a.top == 12);
    CHECK(run("describe", &a, err, 3, "1", "--top", "12x") == 2 && strstr(err, "--top needs a count"));
    CHECK(run("describe", &a, err, 3, "1", "--top", "-1") == 2);
    CHECK(run("describe", &a, err, 3, "1", "--top", "0") == 2 && strstr(err, "at least 1")); /* was: all */
    /* One output format: the last of --json --csv used to win silently. */
    CHECK(run("list", &a, err, 2, "--json", "--csv") == 2 && strstr(err, "--json and --csv: give one of them"));
    CHECK(run("list", &a, err, 2, "--csv", "--csv") == 0 && a.fmt == T2__FMT_CSV);
    /* Operand counts. */
    CHECK(run("create", &a, err, 1, "c.yaml") == 2 && strstr(err, "expects CONFIG TRIAL.so"));
    CHECK(run("list", &a, err, 1, "extra") == 2 && strstr(err, "unexpected argument extra"));
    CHECK(run("evaluate", &a, err, 2, "1.0", "t.so") == 0 && a.npos == 2);
    CHECK(run("evaluate", &a, err, 3, "1.0", "t.so", "c.yaml") == 0 && a.npos == 3);
    CHECK(run("evaluate", &a, err, 4, "1.0", "t.so", "c.yaml", "d") == 2);
    CHECK(run("resume", &a, err, 1, "4") == 0 && a.npos == 1);
    /* -- ends the options: what follows is an operand, dashes and all. */
    CHECK(run("logs", &a, err, 2, "--", "-3") == 0 && a.npos == 1);
    /* Help, and the same parser twice in a row (getopt's state is reset). */
    CHECK(run("info", &a, err, 1, "--help") == 0 && a.help);
    CHECK(run("info", &a, err, 1, "--json") == 0 && a.fmt == T2__FMT_JSON && !a.help);
    char opts[300];
    t2__cli_options_text(t2__cli_find("export"), opts, sizeof opts);
    CHECK_STR(opts, "--home DIR");
    return check_report("test_cli_args");
}
