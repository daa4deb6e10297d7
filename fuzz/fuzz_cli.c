/* fuzz_cli.c — libFuzzer harness for the command line's argument parsing (framework/cli/args.c),
 * the getopt_long tables of every command. The input is split on NUL bytes into arguments; its
 * first byte picks the command. Parsing only: nothing runs. Checks what the parser promises: on
 * success the operands are within the command's counts and every --config value is an argument;
 * on failure the reason is set. A broken promise aborts, so libFuzzer reports it like a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "framework/cli/args.h"

static const char *const NAMES[] = {"create", "resume", "activate", "pause", "kill", "follow", "delete",
                                    "list", "describe", "trials", "metrics", "logs", "preview",
                                    "checkpoints", "evaluate", "export", "info"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096) return 0;
    const t2__cli_command *c = t2__cli_find(NAMES[data[0] % (sizeof NAMES / sizeof NAMES[0])]);
    if (!c) abort();
    /* argv: the command's name, then the NUL-separated pieces of the rest. */
    char *buf = malloc(size);
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    int argc = 1;
    for (size_t i = 0; i < size - 1; i++) argc += buf[i] == '\0';
    char **argv = calloc((size_t)argc + 2, sizeof *argv);
    const char **ovr = calloc((size_t)argc + 1, sizeof *ovr);
    argv[0] = (char *)c->name;
    int k = 1;
    for (char *p = buf; k < argc + 1 && p < buf + size - 1; p += strlen(p) + 1) argv[k++] = p;
    argc = k;
    t2__cli_args a = {.overrides = ovr};
    char err[600];
    int rc = t2__cli_parse(c, argc, argv, &a, err, sizeof err);
    if (rc != 0 && rc != 2) abort();
    if (rc == 2 && err[0] == '\0') abort();
    if (rc == 0 && !a.help) {
        if (a.npos < c->min_pos || a.npos > c->max_pos) abort();
        if (a.noverrides > argc) abort();
        for (int i = 0; i < a.noverrides; i++) {
            int found = 0;
            for (int j = 1; j < argc; j++) found |= a.overrides[i] >= argv[j] && a.overrides[i] <= argv[j] + strlen(argv[j]);
            if (!found) abort();
        }
        if (a.top < 0) abort();
    }
    free(argv);
    free(ovr);
    free(buf);
    return 0;
}
