/* args.c — each command's options, and their parsing with getopt_long (see args.h). */
#define _GNU_SOURCE /* getopt_long's argument permutation: options may follow the operands */
#include "args.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_FMT (T2__OPT_JSON | T2__OPT_CSV | T2__OPT_HOME)
#define RUN_OPTS (T2__OPT_CONFIG | T2__OPT_PLAIN | T2__OPT_QUIET | T2__OPT_DETACH | T2__OPT_LENIENT | T2__OPT_HOME)

static const t2__cli_command COMMANDS[] = {
    {"create", 2, 2, RUN_OPTS | T2__OPT_FROM_CHECKPOINT | T2__OPT_TEST, "CONFIG TRIAL.so"},
    {"resume", 1, 2, RUN_OPTS, "ID [TRIAL.so]"},
    {"activate", 1, 1, T2__OPT_HOME, "EXP"},
    {"pause", 1, 1, T2__OPT_HOME, "EXP"},
    {"kill", 1, 1, T2__OPT_HOME, "EXP | EXP.N"},
    {"follow", 1, 1, T2__OPT_HOME, "EXP"},
    {"delete", 1, 1, T2__OPT_YES | T2__OPT_HOME, "EXP"},
    {"list", 0, 0, READ_FMT, ""},
    {"describe", 1, 1, READ_FMT | T2__OPT_TOP, "ID | EXP.N"},
    {"trials", 1, 1, READ_FMT, "ID"},
    {"metrics", 1, 1, READ_FMT | T2__OPT_KIND, "EXP|TRIAL"},
    {"importance", 1, 1, READ_FMT, "EXP"},
    {"logs", 1, 1, T2__OPT_HOME | T2__OPT_LOST | T2__OPT_FOLLOW, "TRIAL [--follow] | EXP --lost"},
    {"preview", 1, 1, T2__OPT_JSON | T2__OPT_CONFIG | T2__OPT_LENIENT | T2__OPT_HOME, "CONFIG"},
    {"checkpoints", 1, 1, READ_FMT | T2__OPT_ALL, "EXP|TRIAL"},
    {"evaluate", 2, 3, T2__OPT_CONFIG | T2__OPT_LENIENT | T2__OPT_HOME, "CHECKPOINT TRIAL.so [CONFIG]"},
    {"export", 2, 2, T2__OPT_HOME, "CHECKPOINT OUT.bin"},
    {"info", 0, 0, T2__OPT_JSON | T2__OPT_HOME, ""},
};

/* Every option: its bit, getopt_long's entry (val = the bit's index + 256), how it reads. */
static const struct {
    unsigned bit;
    const char *name;
    int has_arg;
    const char *value; /* its argument's name in messages */
} OPTIONS[] = {
    {T2__OPT_JSON, "json", no_argument, NULL},
    {T2__OPT_CSV, "csv", no_argument, NULL},
    {T2__OPT_PLAIN, "plain", no_argument, NULL},
    {T2__OPT_QUIET, "quiet", no_argument, NULL},
    {T2__OPT_ALL, "all", no_argument, NULL},
    {T2__OPT_YES, "yes", no_argument, NULL},
    {T2__OPT_DETACH, "detach", no_argument, NULL},
    {T2__OPT_LENIENT, "lenient", no_argument, NULL},
    {T2__OPT_HOME, "home", required_argument, "DIR"},
    {T2__OPT_CONFIG, "config", required_argument, "KEY=VALUE"},
    {T2__OPT_KIND, "kind", required_argument, "training|validation"},
    {T2__OPT_TOP, "top", required_argument, "N"},
    {T2__OPT_FROM_CHECKPOINT, "from-checkpoint", required_argument, "CHECKPOINT"},
    {T2__OPT_LOST, "lost", no_argument, NULL},
    {T2__OPT_FOLLOW, "follow", no_argument, NULL},
    {T2__OPT_TEST, "test", no_argument, NULL},
};
#define NOPTIONS (sizeof OPTIONS / sizeof OPTIONS[0])

const t2__cli_command *t2__cli_find(const char *name)
{
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(COMMANDS[i].name, name) == 0) return &COMMANDS[i];
    return NULL;
}

const t2__cli_command *t2__cli_command_at(size_t i)
{
    return i < sizeof COMMANDS / sizeof COMMANDS[0] ? &COMMANDS[i] : NULL;
}

const char *t2__cli_option_at(const t2__cli_command *c, size_t i)
{
    for (size_t k = 0; k < NOPTIONS; k++)
        if ((c->options & OPTIONS[k].bit) && i-- == 0) return OPTIONS[k].name;
    return NULL;
}

void t2__cli_options_text(const t2__cli_command *c, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NOPTIONS && off < len; i++)
        if (c->options & OPTIONS[i].bit) {
            int n = snprintf(buf + off, len - off, "%s--%s%s%s", off ? " " : "", OPTIONS[i].name,
                             OPTIONS[i].value ? " " : "", OPTIONS[i].value ? OPTIONS[i].value : "");
            if (n < 0) break;
            off += (size_t)n;
        }
    if (off == 0) snprintf(buf, len, "none");
}

/* Edit distance of two short strings (capped inputs), for "did you mean". */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];
    if (la > 63 || lb > 63) return 99;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j], sub = prev + (a[i - 1] != b[j - 1]);
            size_t best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            prev = cur;
        }
    }
    return row[lb];
}

const char *t2__cli_did_you_mean(const char *word, const char *const *names)
{
    static _Thread_local char buf[96];
    char w[64];
    snprintf(w, sizeof w, "%s", word);
    char *eq = strchr(w, '=');
    if (eq) *eq = '\0';
    const char *near = NULL;
    size_t best = 3;
    for (size_t i = 0; w[0] == '-' && w[1] == '-' && names[i]; i++) {
        size_t d = distance(w + 2, names[i]);
        if (d < best) best = d, near = names[i];
    }
    if (!near) return "";
    snprintf(buf, sizeof buf, " (did you mean --%s?)", near);
    return buf;
}

static int unknown(const t2__cli_command *c, const char *arg, char *err, size_t errlen)
{
    char opts[300], word[64];
    const char *names[NOPTIONS + 1];
    size_t n = 0;
    while ((names[n] = t2__cli_option_at(c, n))) n++;
    t2__cli_options_text(c, opts, sizeof opts);
    snprintf(word, sizeof word, "%s", arg);
    char *eq = strchr(word, '=');
    if (eq) *eq = '\0';
    snprintf(err, errlen, "unknown option %.60s%s; %s takes: %s", word, t2__cli_did_you_mean(word, names), c->name, opts);
    return 2;
}

int t2__cli_parse(const t2__cli_command *c, int argc, char **argv, t2__cli_args *a, char *err, size_t errlen)
{
    struct option longopts[NOPTIONS + 2];
    size_t n = 0;
    for (size_t i = 0; i < NOPTIONS; i++)
        if (c->options & OPTIONS[i].bit)
            longopts[n++] = (struct option){OPTIONS[i].name, OPTIONS[i].has_arg, NULL, (int)(256 + i)};
    longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
    longopts[n] = (struct option){NULL, 0, NULL, 0};
    err[0] = '\0';
    opterr = 0;  /* our messages, not getopt's */
    optind = 0;  /* glibc: start over, whatever an earlier parse left */
    int ch;
    /* -f: Determined's `det trial logs -f`, for the one command that follows. */
    while ((ch = getopt_long(argc, argv, c->options & T2__OPT_FOLLOW ? "hf" : "h", longopts, NULL)) != -1) {
        if (ch == 'h') {
            a->help = 1;
            return 0;
        }
        if (ch == 'f') {
            a->follow = 1;
            continue;
        }
        if (ch == '?' || ch == ':') {
            const char *bad = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
            /* getopt_long says '?' with optopt set both for a value missing and for a value given
             * to an option that takes none (--json=1): the option's table entry tells which. */
            if (optopt >= 256 && optopt < 256 + (int)NOPTIONS && OPTIONS[optopt - 256].has_arg == no_argument) {
                snprintf(err, errlen, "%.60s: --%s takes no value", bad, OPTIONS[optopt - 256].name);
                return 2;
            }
            if (ch == ':' || (optopt >= 256 && optopt < 256 + (int)NOPTIONS)) {
                snprintf(err, errlen, "%.60s needs a value", bad);
                return 2;
            }
            return unknown(c, bad, err, errlen);
        }
        unsigned bit = OPTIONS[ch - 256].bit;
        switch (bit) {
        case T2__OPT_JSON:
        case T2__OPT_CSV: {
            int fmt = bit == T2__OPT_JSON ? T2__FMT_JSON : T2__FMT_CSV;
            if (a->fmt != T2__FMT_TABLE && (int)a->fmt != fmt) { /* the last one silently won before */
                snprintf(err, errlen, "--json and --csv: give one of them");
                return 2;
            }
            a->fmt = fmt;
            break;
        }
        case T2__OPT_PLAIN: a->progress = T2__PROGRESS_PLAIN; break;
        case T2__OPT_QUIET: a->progress = T2__PROGRESS_QUIET; break;
        case T2__OPT_ALL: a->all = 1; break;
        case T2__OPT_LOST: a->lost = 1; break;
        case T2__OPT_FOLLOW: a->follow = 1; break;
        case T2__OPT_TEST: a->test = 1; break;
        case T2__OPT_YES: a->yes = 1; break;
        case T2__OPT_DETACH: a->detach = 1; break;
        case T2__OPT_LENIENT: a->lenient = 1; break;
        case T2__OPT_HOME: a->home = optarg; break;
        case T2__OPT_CONFIG: a->overrides[a->noverrides++] = optarg; break;
        case T2__OPT_KIND: a->kind = optarg; break;
        case T2__OPT_FROM_CHECKPOINT: a->from_checkpoint = optarg; break;
        case T2__OPT_TOP: {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || v < 1) { /* 0 once meant "all", silently */
                snprintf(err, errlen, "--top needs a count of at least 1, not '%.40s'", optarg);
                return 2;
            }
            a->top = v;
            break;
        }
        }
    }
    for (int i = optind; i < argc; i++) {
        if (a->npos >= c->max_pos || a->npos >= 4) {
            snprintf(err, errlen, "unexpected argument %.60s (expects %s)", argv[i], c->operands[0] ? c->operands : "none");
            return 2;
        }
        a->pos[a->npos++] = argv[i];
    }
    if (a->npos < c->min_pos) {
        snprintf(err, errlen, "expects %s", c->operands);
        return 2;
    }
    return 0;
}
