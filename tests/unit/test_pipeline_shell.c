/* test_pipeline_shell.c — ${...} references in a `shell: true` command: each value reaches
 * /bin/sh through the environment (T2EXP_REF_n) and arrives exactly, as one word, never parsed
 * by the shell, whether the reference stands unquoted, inside "...", inside '...', in $(...) or
 * in a here-document; places where that cannot be made exact are refused when the flow loads,
 * located; the stage's references hash still follows the values. */
#define _XOPEN_SOURCE 700 /* mkdtemp, setenv */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "pipeline/flow.h"
#include "pipeline/hash.h"

/* A hostile value: command substitution, both quotes, a glob, backquotes, a parameter, a
 * backslash, runs of spaces and a newline. */
#define HOSTILE "$(touch PWNED) it's \"q\" *  `touch PWNED2` ${HOME} \\n \\\n end"

static char dir[256];

static const t2__val *first(void *ud, size_t i) { return i == 0 ? (const t2__val *)ud : NULL; }

/* The flow: stage 0 an experiment whose results res holds, stage 1 the shell command cmd. */
static t2__flow *flow_with(const char *cmd)
{
    t2__val *s = t2__val_string(cmd);
    char *q = NULL;
    CHECK(s && t2__val_to_json(s, &q, NULL) == 0); /* JSON strings are YAML flow scalars */
    t2__val_free(s);
    if (!q) return NULL;
    size_t len = strlen(q) + 256;
    char *text = malloc(len);
    CHECK(text != NULL);
    if (!text) {
        free(q);
        return NULL;
    }
    snprintf(text, len,
             "name: sh\nstages:\n  s: {experiment: {config: s.yaml, trial: t.so}}\n"
             "  x:\n    after: [s]\n    shell: true\n    run: %s\n", q);
    t2__flow *f = NULL;
    int rc = t2__flow_load_string(text, strlen(text), "f.yaml", dir, &f);
    if (rc) fprintf(stderr, "unexpected: %s\n", t2_errmsg());
    CHECK(rc == 0);
    free(text);
    free(q);
    return f;
}

/* Runs the shell text with its environment in dir; returns what it wrote to dir/out (malloc'd). */
static char *run_sh(const t2__shell_cmd *c)
{
    char out[512];
    snprintf(out, sizeof out, "%s/out", dir);
    unlink(out);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (chdir(dir) != 0) _exit(126);
        for (size_t k = 0; k < c->n; k++)
            if (putenv(c->env[k]) != 0) _exit(126);
        execl("/bin/sh", "sh", "-c", c->text, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    FILE *fp = fopen(out, "rb");
    CHECK(fp != NULL);
    if (!fp) return NULL;
    char *buf = calloc(1, 1 << 16);
    size_t n = buf ? fread(buf, 1, (1 << 16) - 1, fp) : 0;
    (void)n;
    fclose(fp);
    return buf;
}

/* cmd, with res's values, writes exactly want to ./out. */
static void gives(const t2__val *res, const char *cmd, const char *want)
{
    t2__flow *f = flow_with(cmd);
    if (!f) return;
    t2__shell_cmd c;
    int rc = t2__shell_subst(f, f->stages[1].argv[0], first, (void *)res, &c);
    if (rc) fprintf(stderr, "%s: %s\n", cmd, t2_errmsg());
    CHECK_OK(rc);
    if (!rc) {
        char *got = run_sh(&c);
        if (got && strcmp(got, want)) fprintf(stderr, "command: %s\nshell text: %s\n", cmd, c.text);
        CHECK_STR(got, want);
        free(got);
        /* the value never ran as a command */
        char p[512];
        snprintf(p, sizeof p, "%s/PWNED", dir);
        CHECK(access(p, F_OK) != 0);
        snprintf(p, sizeof p, "%s/PWNED2", dir);
        CHECK(access(p, F_OK) != 0);
    }
    t2__shell_cmd_free(&c);
    t2__flow_free(f);
}

/* cmd does not load; the error is located and contains want. */
static void refused(const char *cmd, const char *want)
{
    CHECK_RC(t2__shell_refs_check(cmd), T2_EINVAL);
    if (!strstr(t2_errmsg(), want)) fprintf(stderr, "%s\nwanted: %s\ngot: %s\n", cmd, want, t2_errmsg());
    CHECK(strstr(t2_errmsg(), want) != NULL);
    t2__val *s = t2__val_string(cmd);
    char *q = NULL;
    CHECK(s && t2__val_to_json(s, &q, NULL) == 0);
    t2__val_free(s);
    char text[4096];
    snprintf(text, sizeof text, "name: sh\nstages:\n  s: {experiment: {config: s.yaml, trial: t.so}}\n"
                                "  x:\n    after: [s]\n    shell: true\n    run: %s\n", q ? q : "");
    free(q);
    t2__flow *f = NULL;
    CHECK_RC(t2__flow_load_string(text, strlen(text), "f.yaml", dir, &f), T2_EINVAL);
    CHECK(f == NULL);
    size_t n = 0, more = 0;
    const char *const *e = t2__flow_errors(&n, &more);
    CHECK(n == 1 && strstr(e[0], "f.yaml:7:10: stages.x.run: ") == e[0] && strstr(e[0], want));
    if (n != 1 || !strstr(e[0], want)) fprintf(stderr, "errors: %zu, first: %s\n", n, n ? e[0] : "");
}

static void test_values(void)
{
    t2__val *res = t2__val_map(), *best = t2__val_map(), *hp = t2__val_map();
    CHECK(res && best && hp);
    if (!res || !best || !hp) return;
    CHECK_OK(t2__val_map_set(hp, "note", t2__val_string(HOSTILE)));
    CHECK_OK(t2__val_map_set(hp, "lr", t2__val_double(0.1)));
    CHECK_OK(t2__val_map_set(best, "hparams", hp));
    CHECK_OK(t2__val_map_set(best, "checkpoint", t2__val_string(HOSTILE)));
    CHECK_OK(t2__val_map_set(best, "metric", t2__val_double(0.25)));
    CHECK_OK(t2__val_map_set(res, "experiment_id", t2__val_int(7)));
    CHECK_OK(t2__val_map_set(res, "best", best));
    const char *H = HOSTILE;
    char want[2048], json[1024];
    char *js = NULL;
    CHECK_OK(t2__val_to_json(hp, &js, NULL));
    snprintf(json, sizeof json, "%s", js ? js : "");
    free(js);

    /* unquoted: one word, exactly the value */
    gives(res, "printf %s ${s.best.checkpoint} > out", H);
    gives(res, "set -- ${s.best.checkpoint}; printf %s $# > out", "1");
    gives(res, "printf '%s|' ${s.best.hparams} > out", (snprintf(want, sizeof want, "%s|", json), want));
    gives(res, "printf %s --x=${s.best.checkpoint}= > out", (snprintf(want, sizeof want, "--x=%s=", H), want));
    /* inside "...": not split, not globbed, and the text around it stays */
    gives(res, "printf %s \"a  ${s.best.checkpoint}  b\" > out", (snprintf(want, sizeof want, "a  %s  b", H), want));
    gives(res, "set -- \"${s.best.checkpoint}\"; printf %s $# > out", "1");
    gives(res, "printf %s \"${s.best.checkpoint}x\" > out", (snprintf(want, sizeof want, "%sx", H), want));
    /* inside '...': the same exact value, the quotes around it kept */
    gives(res, "printf %s 'a ${s.best.checkpoint} b' > out", (snprintf(want, sizeof want, "a %s b", H), want));
    gives(res, "set -- 'a ${s.best.checkpoint} b'; printf %s $# > out", "1");
    /* $(...), also inside "...": a new quoting context */
    gives(res, "printf %s \"$(printf %s ${s.best.checkpoint})\" > out", H);
    /* a here-document body with an unquoted delimiter */
    gives(res, "cat <<EOF > out\n${s.best.checkpoint} and ${s.experiment_id}\nEOF\n",
          (snprintf(want, sizeof want, "%s and 7\n", H), want));
    gives(res, "cat <<-END > out\n\t${s.best.metric}\n\tEND\nprintf x >> out",
          "0.25\nx");
    /* what the lexer must not be fooled by: an apostrophe in a comment or in a here-document */
    gives(res, "# it's a comment\nprintf %s ${s.best.checkpoint} > out", H);
    gives(res, "cat <<EOF > /dev/null\nit's\nEOF\nprintf %s ${s.best.checkpoint} > out", H);
    /* $${ is a literal ${ (a shell parameter), $$ the shell's pid */
    gives(res, "X=1; printf %s $${X}${s.experiment_id}-\"$${X}\" > out", "17-1");
    /* the same reference twice is one variable */
    gives(res, "printf %s ${s.experiment_id}${s.experiment_id} > out", "77");
    t2__val_free(res);
}

static void test_shell_text(void)
{
    t2__val *res = NULL;
    const char *json = "{\"experiment_id\":3,\"best\":{\"metric\":0.5,\"checkpoint\":\"u\",\"hparams\":{\"a\":1}}}";
    CHECK_OK(t2__val_from_json(json, strlen(json), &res, NULL));
    t2__flow *f = flow_with("a ${s.best.checkpoint} \"b ${s.best.metric}\" 'c ${s.best.checkpoint}' $${HOME}");
    if (f && res) {
        t2__shell_cmd c;
        CHECK_OK(t2__shell_subst(f, f->stages[1].argv[0], first, res, &c));
        CHECK_STR(c.text, "a \"${T2EXP_REF_1}\" \"b ${T2EXP_REF_2}\" 'c '\"${T2EXP_REF_1}\"'' ${HOME}");
        CHECK(c.n == 2);
        if (c.n == 2) {
            CHECK_STR(c.env[0], "T2EXP_REF_1=u");
            CHECK_STR(c.env[1], "T2EXP_REF_2=0.5");
            CHECK_STR(c.ref[0], "${s.best.checkpoint}");
            CHECK_STR(c.ref[1], "${s.best.metric}");
        }
        t2__shell_cmd_free(&c);
        /* a reference without a value fails, naming it */
        t2__val *best = t2__val_map_get(res, "best");
        CHECK_OK(t2__val_map_set(best, "checkpoint", t2__val_string("")));
        CHECK_RC(t2__shell_subst(f, f->stages[1].argv[0], first, res, &c), T2_ENOTFOUND);
        CHECK(strstr(t2_errmsg(), "${s.best.checkpoint}") != NULL);
        CHECK(c.text == NULL && c.n == 0);
    }
    /* The references hash still follows each value: it is taken over the values pasted into the
     * text (as before the environment carried them), so a changed value makes the stage stale. */
    if (f && res) {
        char **argv = NULL;
        t2__val *hp = NULL;
        t2__stage_hash h1, h2;
        t2__val *best = t2__val_map_get(res, "best");
        CHECK_OK(t2__val_map_set(best, "checkpoint", t2__val_string("u1")));
        CHECK_OK(t2__flow_resolve(f, 1, first, res, &argv, &hp));
        CHECK_STR(argv ? argv[0] : NULL, "a u1 \"b 0.5\" 'c u1' ${HOME}");
        CHECK_OK(t2__stage_hash_compute(f, 1, argv, hp, &h1));
        t2__strv_free(argv, f->stages[1].argc);
        CHECK_OK(t2__val_map_set(best, "checkpoint", t2__val_string("u2")));
        CHECK_OK(t2__flow_resolve(f, 1, first, res, &argv, &hp));
        CHECK_OK(t2__stage_hash_compute(f, 1, argv, hp, &h2));
        t2__strv_free(argv, f->stages[1].argc);
        CHECK(strcmp(h1.refs, h2.refs) != 0 && strcmp(h1.total, h2.total) != 0);
        CHECK_STR(h1.def, h2.def);
        t2__stage_hash_free(&h1);
        t2__stage_hash_free(&h2);
    }
    t2__flow_free(f);
    t2__val_free(res);
}

static void test_refused(void)
{
    refused("echo `echo ${s.best.metric}`", "${s.best.metric}: it is inside `...`");
    refused("echo \"`echo ${s.best.metric}`\"", "${s.best.metric}: it is inside `...`");
    refused("echo $(( ${s.experiment_id} + 1 ))", "${s.experiment_id}: it is inside $((...))");
    refused("echo $${X:-${s.best.metric}}", "${s.best.metric}: it is inside a shell ${...}");
    refused("cat <<'EOF'\n${s.best.metric}\nEOF\n", "it is in a here-document whose delimiter is quoted");
    refused("cat <<EOF\n$(cat ${s.best.metric})\nEOF\n", "it is in a here-document after");
    refused("echo \\${s.best.metric}", "${s.best.metric}: it follows a backslash");
    refused("echo \"\\${s.best.metric}\"", "${s.best.metric}: it follows a backslash");
    refused("echo $'x' ${s.best.metric}", "it comes after $'...'");
    refused("echo $(case a in a) echo ${s.best.metric};; esac)", "a `case` inside $(...)");
    refused("cat <<< ${s.best.metric}", "<<< here-string");
    /* the message says what to do instead */
    refused("echo `echo ${s.best.metric}`", "use the argv form of run:");
    /* without references nothing is checked: the shell text is the user's */
    CHECK_OK(t2__shell_refs_check("echo `date` $((1+2)) $${HOME} $'x' <<< y"));
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/t2_pipeline_shell_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    test_shell_text();
    test_values();
    test_refused();
    char p[512];
    snprintf(p, sizeof p, "%s/out", dir);
    unlink(p);
    CHECK(rmdir(dir) == 0);
    return check_report("test_pipeline_shell");
}
