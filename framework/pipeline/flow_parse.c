/* flow_parse.c — a flow file's YAML to a t2__flow: keys, values and their locations.
 *
 * The loader keeps going after a problem so that one run lists them all (up to
 * T2__FLOW_MAX_ERRORS); the graph is only built when the stages themselves parsed. */
#define _POSIX_C_SOURCE 200809L /* strdup, realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "configs/config_internal.h"
#include "flow_internal.h"
#include "t2exp/error.h"

/* snprintf for key paths, through vsnprintf: a path cut at T2__PATH_MAX is fine in a message. */
static void pathf(char *out, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void pathf(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

static const char *const TOP_KEYS[] = {"name", "stages", NULL};
static const char *const STAGE_KEYS[] = {"run", "shell", "after", "inputs", "outputs", "resources",
                                         "experiment", NULL};
static const char *const EXP_KEYS[] = {"config", "trial", "hyperparameters", NULL};
static const char *const RES_KEYS[] = {"slots", "hostfile", NULL};
static const char *const OUT_KEYS[] = {"path", "kind", NULL};

static _Thread_local char **last_errors;
static _Thread_local size_t nlast_errors, nlast_more;

const char *const *t2__flow_errors(size_t *n, size_t *more)
{
    if (n) *n = nlast_errors;
    if (more) *more = nlast_more;
    return (const char *const *)last_errors;
}

static void keep_errors(t2__flow_ctx *c)
{
    for (size_t k = 0; k < nlast_errors; k++) free(last_errors[k]);
    free(last_errors);
    last_errors = NULL;
    nlast_errors = nlast_more = 0;
    if (!c) return;
    last_errors = c->errors;
    nlast_errors = c->nerrors;
    nlast_more = c->more;
    c->errors = NULL;
    c->nerrors = c->more = 0;
}

void t2__flow_err(t2__flow_ctx *c, const t2__ymark *m, const char *fmt, ...)
{
    if (c->nerrors >= T2__FLOW_MAX_ERRORS) {
        c->more++;
        return;
    }
    char where[600] = "", msg[1200];
    if (m) t2__ymark_format(m, where, sizeof where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = strlen(where) + strlen(msg) + 3;
    char *e = malloc(len);
    char **grown = e ? realloc(c->errors, (c->nerrors + 1) * sizeof *grown) : NULL;
    if (!grown) {
        free(e);
        c->oom = 1;
        return;
    }
    snprintf(e, len, "%s%s%s", where, m ? ": " : "", msg);
    c->errors = grown;
    c->errors[c->nerrors++] = e;
}

char *t2__flow_abspath(const char *dir, const char *p)
{
    size_t ld = strlen(dir), lp = strlen(p);
    char *in = malloc(ld + lp + 3), *out = malloc(ld + lp + 3);
    if (!in || !out) {
        free(in);
        free(out);
        return NULL;
    }
    if (p[0] == '/') memcpy(in, p, lp + 1);
    else snprintf(in, ld + lp + 3, "%s/%s", dir, p);
    /* Segment by segment into out; o is where the next one goes (just after a '/'). */
    size_t o = 1;
    out[0] = '/';
    for (const char *s = in; *s;) {
        while (*s == '/') s++;
        size_t len = strcspn(s, "/");
        if (len == 0 || (len == 1 && s[0] == '.')) {
            /* nothing */
        } else if (len == 2 && s[0] == '.' && s[1] == '.') {
            if (o > 1) { /* drop the last segment and its '/' */
                o--;
                while (o > 1 && out[o - 1] != '/') o--;
            }
        } else {
            memcpy(out + o, s, len);
            o += len;
            out[o++] = '/';
        }
        s += len;
    }
    if (o > 1) o--; /* no trailing '/' */
    out[o] = '\0';
    free(in);
    return out;
}

/* ---- node helpers ------------------------------------------------------------------------ */

static int is_scalar(const t2__ynode *n) { return n && n->kind == T2__Y_SCALAR && !t2__ynull(n); }

static const char *desc(const t2__ynode *n, char *buf, size_t size) { return t2__ydesc(n, buf, size); }

/* A non-empty string scalar with no NUL; else an error at n. */
static const char *want_string(t2__flow_ctx *c, const t2__ynode *n, const char *path)
{
    char d[96];
    if (!is_scalar(n)) {
        t2__flow_err(c, &n->mark, "%s: expected a string, got %s", path, desc(n, d, sizeof d));
        return NULL;
    }
    if (n->len == 0) {
        t2__flow_err(c, &n->mark, "%s: must not be empty", path);
        return NULL;
    }
    if (memchr(n->text, '\0', n->len)) {
        t2__flow_err(c, &n->mark, "%s: contains a NUL byte", path);
        return NULL;
    }
    return n->text;
}

static void unknown_keys(t2__flow_ctx *c, const t2__ynode *map, const char *path,
                         const char *const *known)
{
    for (size_t k = 0; k < map->n; k++) {
        int ok = 0;
        for (size_t j = 0; known[j]; j++) ok |= strcmp(map->keys[k], known[j]) == 0;
        if (ok) continue;
        const char *near = t2__cfg_closest(map->keys[k], known);
        char p[T2__PATH_MAX];
        t2__path_join(p, sizeof p, path, map->keys[k]);
        if (near) t2__flow_err(c, &map->key_marks[k], "%s: unknown key (did you mean '%s'?)", p, near);
        else t2__flow_err(c, &map->key_marks[k], "%s: unknown key", p);
    }
}

/* Valid stage and flow names: they become file names (logs) and appear in ${name.field}. */
static int good_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > T2__FLOW_MAX_NAME) return 0;
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '-'))
            return 0;
    }
    return 1;
}

static void note_ref(t2__flow_ctx *c, size_t stage, const t2__ref *r, const t2__ymark *m, const char *where)
{
    if (c->nrefs == c->caprefs) {
        size_t cap = c->caprefs ? 2 * c->caprefs : 8;
        t2__flow_pending_ref *g = realloc(c->refs, cap * sizeof *g);
        if (!g) {
            c->oom = 1;
            return;
        }
        c->refs = g;
        c->caprefs = cap;
    }
    t2__flow_pending_ref *p = &c->refs[c->nrefs++];
    p->stage = stage;
    p->ref = *r;
    p->mark = *m;
    snprintf(p->where, sizeof p->where, "%s", where);
}

/* Collects the ${...} of one text (allowed: 1) or refuses any (allowed: 0). */
static void scan_refs(t2__flow_ctx *c, size_t stage, const char *s, const t2__ymark *m, const char *where,
                      int allowed)
{
    size_t pos = 0;
    t2__ref r;
    for (;;) {
        int rc = t2__ref_next(s, &pos, &r);
        if (rc == 0) return;
        if (rc < 0) {
            t2__flow_err(c, m, "%s: %s", where, t2_errmsg());
            return;
        }
        if (!allowed) {
            t2__flow_err(c, m, "%s: ${%s.%s}: references are allowed only in run and "
                         "experiment.hyperparameters (write $${ for a literal ${)", where, r.stage,
                         t2__ref_field_name(r.field));
            return;
        }
        note_ref(c, stage, &r, m, where);
    }
}

/* A list of strings (a single scalar counts as a list of one when one_ok). */
static int string_list(t2__flow_ctx *c, const t2__ynode *n, const char *path, int one_ok, char ***out,
                       t2__ymark **marks, size_t *count)
{
    char d[96];
    *out = NULL;
    *count = 0;
    if (marks) *marks = NULL;
    if (t2__ynull(n)) return 0;
    const t2__ynode *const *items;
    size_t m;
    const t2__ynode *single = n;
    if (n->kind == T2__Y_SEQ) {
        items = (const t2__ynode *const *)n->items;
        m = n->n;
    } else if (n->kind == T2__Y_SCALAR && one_ok) {
        items = &single;
        m = 1;
    } else {
        t2__flow_err(c, &n->mark, "%s: expected a list of strings, got %s", path, desc(n, d, sizeof d));
        return -1;
    }
    if (m > T2__FLOW_MAX_LIST) {
        t2__flow_err(c, &n->mark, "%s: %zu entries; at most %d", path, m, T2__FLOW_MAX_LIST);
        return -1;
    }
    if (m == 0) return 0;
    char **v = calloc(m, sizeof *v);
    t2__ymark *mk = marks ? calloc(m, sizeof *mk) : NULL;
    if (!v || (marks && !mk)) {
        free(v);
        free(mk);
        c->oom = 1;
        return -1;
    }
    int bad = 0;
    for (size_t i = 0; i < m; i++) {
        char p[T2__PATH_MAX];
        pathf(p, sizeof p, "%s[%zu]", path, i);
        const char *s = want_string(c, items[i], p);
        if (!s) {
            bad = 1;
            continue;
        }
        if (!(v[i] = strdup(s))) c->oom = bad = 1;
        if (mk) mk[i] = items[i]->mark;
    }
    if (bad) {
        t2__strv_free(v, m);
        free(mk);
        return -1;
    }
    *out = v;
    *count = m;
    if (marks) *marks = mk;
    return 0;
}

static int add_path(t2__flow_ctx *c, t2__flow_path *p, const char *text, const t2__ymark *m)
{
    p->mark = *m;
    if (!(p->text = strdup(text)) || !(p->abs = t2__flow_abspath(c->f->dir, text))) {
        c->oom = 1;
        return -1;
    }
    return 0;
}

static void paths(t2__flow_ctx *c, size_t si, const t2__ynode *n, const char *path, int outputs)
{
    t2__flow_stage *s = &c->f->stages[si];
    char d[96];
    if (t2__ynull(n)) return;
    if (n->kind != T2__Y_SEQ) {
        t2__flow_err(c, &n->mark, "%s: expected a list of paths, got %s", path, desc(n, d, sizeof d));
        return;
    }
    if (n->n > T2__FLOW_MAX_LIST) {
        t2__flow_err(c, &n->mark, "%s: %zu entries; at most %d", path, n->n, T2__FLOW_MAX_LIST);
        return;
    }
    if (n->n == 0) return;
    t2__flow_path *v = calloc(n->n, sizeof *v);
    if (!v) {
        c->oom = 1;
        return;
    }
    /* The count covers every slot until the end, so a failure half-way frees what was made. */
    if (outputs) s->outputs = v, s->noutputs = n->n;
    else s->inputs = v, s->ninputs = n->n;
    for (size_t i = 0; i < n->n; i++) {
        const t2__ynode *it = n->items[i];
        char p[T2__PATH_MAX];
        pathf(p, sizeof p, "%s[%zu]", path, i);
        const t2__ynode *pn = it;
        int dataset = 0;
        if (it->kind == T2__Y_MAP && outputs) {
            unknown_keys(c, it, p, OUT_KEYS);
            pn = t2__ymap_get(it, "path", NULL);
            const t2__ynode *kn = t2__ymap_get(it, "kind", NULL);
            if (!pn) {
                t2__flow_err(c, &it->mark, "%s.path: missing required key", p);
                continue;
            }
            if (kn && !t2__ynull(kn)) {
                const char *k = want_string(c, kn, "kind");
                if (k && !strcmp(k, "dataset")) dataset = 1;
                else if (k && strcmp(k, "file") != 0)
                    t2__flow_err(c, &kn->mark, "%s.kind: '%s' is not a kind of output (file or dataset)", p, k);
            }
            char pp[T2__PATH_MAX];
            pathf(pp, sizeof pp, "%s.path", p);
            const char *t = want_string(c, pn, pp);
            if (!t) continue;
            scan_refs(c, si, t, &pn->mark, pp, 0);
            if (add_path(c, &v[i], t, &pn->mark)) return;
        } else {
            const char *t = want_string(c, pn, p);
            if (!t) continue;
            scan_refs(c, si, t, &pn->mark, p, 0);
            if (add_path(c, &v[i], t, &pn->mark)) return;
        }
        v[i].dataset = dataset;
    }
    /* Entries that failed left holes; compact them (their errors are recorded). */
    size_t *cnt = outputs ? &s->noutputs : &s->ninputs, k = 0;
    for (size_t i = 0; i < n->n; i++)
        if (v[i].abs) v[k++] = v[i];
    *cnt = k;
}

/* experiment.hyperparameters: a map, or one ${stage.best.hparams} string. Strings inside may
 * hold references. */
static void scan_val_refs(t2__flow_ctx *c, size_t si, const t2__ynode *n, const char *path)
{
    if (n->kind == T2__Y_SCALAR) {
        if (!n->plain || !t2__ynull(n)) scan_refs(c, si, n->text ? n->text : "", &n->mark, path, 1);
        return;
    }
    for (size_t k = 0; k < n->n; k++) {
        char p[T2__PATH_MAX];
        if (n->kind == T2__Y_MAP) t2__path_join(p, sizeof p, path, n->keys[k]);
        else pathf(p, sizeof p, "%s[%zu]", path, k);
        scan_val_refs(c, si, n->items[k], p);
    }
}

static void experiment(t2__flow_ctx *c, size_t si, const t2__ynode *n, const t2__ymark *km, const char *path)
{
    t2__flow_stage *s = &c->f->stages[si];
    char d[96], p[T2__PATH_MAX];
    if (n->kind != T2__Y_MAP) {
        t2__flow_err(c, &n->mark, "%s: expected a map {config, trial, hyperparameters}, got %s", path,
                     desc(n, d, sizeof d));
        return;
    }
    unknown_keys(c, n, path, EXP_KEYS);
    const char *const req[] = {"config", "trial"};
    char **dst[] = {&s->config, &s->trial};
    for (int k = 0; k < 2; k++) {
        const t2__ynode *v = t2__ymap_get(n, req[k], NULL);
        t2__path_join(p, sizeof p, path, req[k]);
        if (!v) {
            t2__flow_err(c, km, "%s: missing required key", p);
            continue;
        }
        const char *t = want_string(c, v, p);
        if (!t) continue;
        scan_refs(c, si, t, &v->mark, p, 0);
        if (!(*dst[k] = t2__flow_abspath(c->f->dir, t))) c->oom = 1;
    }
    const t2__ynode *hp = t2__ymap_get(n, "hyperparameters", NULL);
    t2__path_join(p, sizeof p, path, "hyperparameters");
    if (!hp || t2__ynull(hp)) return;
    if (hp->kind == T2__Y_SEQ || (hp->kind == T2__Y_SCALAR && !strstr(hp->text ? hp->text : "", "${"))) {
        t2__flow_err(c, &hp->mark, "%s: expected a map of hyperparameters or one ${STAGE.best.hparams}, got %s", p,
                     desc(hp, d, sizeof d));
        return;
    }
    scan_val_refs(c, si, hp, p);
    if (t2__ynode_to_val(hp, &s->hparams)) c->oom = 1;
}

static void resources(t2__flow_ctx *c, t2__flow_stage *s, const t2__ynode *n, const char *path)
{
    char d[96], p[T2__PATH_MAX];
    if (n->kind != T2__Y_MAP) {
        t2__flow_err(c, &n->mark, "%s: expected a map {slots, hostfile}, got %s", path, desc(n, d, sizeof d));
        return;
    }
    unknown_keys(c, n, path, RES_KEYS);
    const t2__ynode *sl = t2__ymap_get(n, "slots", NULL), *hf = t2__ymap_get(n, "hostfile", NULL);
    if (sl && !t2__ynull(sl)) {
        t2__path_join(p, sizeof p, path, "slots");
        int64_t v = 0;
        if (t2__get_int(sl, p, 1, &v)) t2__flow_err(c, NULL, "%s", t2_errmsg()); /* message is located */
        else if (v > T2__FLOW_MAX_SLOTS) t2__flow_err(c, &sl->mark, "%s: %lld slots; at most %d", p, (long long)v,
                                                      T2__FLOW_MAX_SLOTS);
        else s->slots = v;
    }
    if (hf && !t2__ynull(hf)) {
        t2__path_join(p, sizeof p, path, "hostfile");
        const char *t = want_string(c, hf, p);
        if (t && !(s->hostfile = t2__flow_abspath(c->f->dir, t))) c->oom = 1;
        if (t && !s->slots) t2__flow_err(c, &hf->mark, "%s: a hostfile needs resources.slots (mpirun -np)", p);
    }
}

/* The definition the cache hashes: everything that decides what the stage does, as written
 * (references unresolved; their values are hashed separately). after: is left out: it only
 * orders stages. */
static int definition(t2__flow_stage *s, const t2__ynode *n)
{
    t2__val *d = t2__val_map();
    int rc = d ? 0 : T2_ENOMEM;
    static const char *const keys[] = {"run", "shell", "inputs", "outputs", "resources", "experiment"};
    for (size_t k = 0; !rc && k < sizeof keys / sizeof *keys; k++) {
        const t2__ynode *v = t2__ymap_get(n, keys[k], NULL);
        if (!v) continue;
        t2__val *x = NULL;
        if ((rc = t2__ynode_to_val(v, &x)) == 0) rc = t2__val_map_set(d, keys[k], x);
    }
    if (!rc) rc = t2__val_to_json(d, &s->def_json, NULL);
    t2__val_free(d);
    return rc;
}

static void stage(t2__flow_ctx *c, size_t si, const t2__ynode *n)
{
    t2__flow_stage *s = &c->f->stages[si];
    char d[96], path[T2__PATH_MAX], p[T2__PATH_MAX];
    pathf(path, sizeof path, "stages.%s", s->name);
    if (n->kind != T2__Y_MAP) {
        t2__flow_err(c, &n->mark, "%s: expected a map (run: or experiment:, after:, inputs:, outputs:), got %s",
                     path, desc(n, d, sizeof d));
        return;
    }
    unknown_keys(c, n, path, STAGE_KEYS);
    const t2__ynode *run = t2__ymap_get(n, "run", NULL), *ex = t2__ymap_get(n, "experiment", NULL);
    const t2__ynode *sh = t2__ymap_get(n, "shell", NULL), *res = t2__ymap_get(n, "resources", NULL);
    if (run && t2__ynull(run)) run = NULL;
    if (ex && t2__ynull(ex)) ex = NULL;
    if (!run == !ex) {
        t2__flow_err(c, &s->mark, "%s: %s", path,
                     run ? "has both run: and experiment:; a stage is one or the other"
                         : "needs run: (a command) or experiment: ({config, trial})");
        return;
    }
    if (sh && !t2__ynull(sh)) {
        t2__path_join(p, sizeof p, path, "shell");
        if (t2__get_bool(sh, p, &s->shell)) t2__flow_err(c, NULL, "%s", t2_errmsg());
        else if (ex) t2__flow_err(c, &sh->mark, "%s: only a command stage (run:) has a shell", p);
    }
    if (run) {
        s->kind = T2__STAGE_COMMAND;
        t2__path_join(p, sizeof p, path, "run");
        if (run->kind == T2__Y_SCALAR && !s->shell) {
            t2__flow_err(c, &run->mark, "%s: a string runs through sh -c only with shell: true; otherwise give "
                         "the argv as a list, e.g. [prog, --flag, value]", p);
        } else if (run->kind == T2__Y_SEQ && s->shell) {
            t2__flow_err(c, &run->mark, "%s: with shell: true, run: is one string for sh -c, not a list", p);
        } else {
            t2__ymark *marks = NULL;
            if (string_list(c, run, p, 1, &s->argv, &marks, &s->argc) == 0) {
                if (s->argc == 0) t2__flow_err(c, &run->mark, "%s: an empty command", p);
                for (size_t i = 0; i < s->argc; i++) {
                    char q[T2__PATH_MAX];
                    if (s->shell) pathf(q, sizeof q, "%s", p);
                    else pathf(q, sizeof q, "%s[%zu]", p, i);
                    size_t before = c->nerrors + c->more;
                    scan_refs(c, si, s->argv[i], &marks[i], q, 1);
                    /* A reference the shell could not be handed exactly is refused now, before
                     * anything runs (a malformed one was reported by scan_refs already). */
                    if (s->shell && c->nerrors + c->more == before && t2__shell_refs_check(s->argv[i]))
                        t2__flow_err(c, &marks[i], "%s: %s", q, t2_errmsg());
                }
            }
            free(marks);
        }
        if (res && !t2__ynull(res)) {
            t2__path_join(p, sizeof p, path, "resources");
            resources(c, s, res, p);
        }
    } else {
        s->kind = T2__STAGE_EXPERIMENT;
        size_t ki = 0;
        t2__ymap_get(n, "experiment", &ki);
        t2__path_join(p, sizeof p, path, "experiment");
        experiment(c, si, ex, &n->key_marks[ki], p);
        if (res && !t2__ynull(res)) {
            size_t kr = 0;
            t2__ymap_get(n, "resources", &kr);
            t2__flow_err(c, &n->key_marks[kr], "%s.resources: an experiment stage takes its resources from its "
                         "config (resources.slots_per_trial, max_concurrent_trials)", path);
        }
    }
    const t2__ynode *v;
    if ((v = t2__ymap_get(n, "inputs", NULL))) {
        t2__path_join(p, sizeof p, path, "inputs");
        paths(c, si, v, p, 0);
    }
    if ((v = t2__ymap_get(n, "outputs", NULL))) {
        t2__path_join(p, sizeof p, path, "outputs");
        paths(c, si, v, p, 1);
    }
    if (definition(s, n)) c->oom = 1;
}

/* after: is resolved to indices here, since it needs every stage's name. */
static void afters(t2__flow_ctx *c, const t2__ynode *stages)
{
    t2__flow *f = c->f;
    const char **names = calloc(f->n + 1, sizeof *names);
    if (!names) {
        c->oom = 1;
        return;
    }
    for (size_t i = 0; i < f->n; i++) names[i] = f->stages[i].name;
    for (size_t i = 0; i < f->n; i++) {
        const t2__ynode *sn = stages->items[i], *a = sn->kind == T2__Y_MAP ? t2__ymap_get(sn, "after", NULL) : NULL;
        if (!a) continue;
        char p[T2__PATH_MAX];
        pathf(p, sizeof p, "stages.%s.after", f->stages[i].name);
        char **v = NULL;
        t2__ymark *marks = NULL;
        size_t m = 0;
        if (string_list(c, a, p, 1, &v, &marks, &m)) continue;
        t2__flow_stage *s = &f->stages[i];
        if (m && !(s->deps = calloc(m, sizeof *s->deps))) c->oom = 1;
        for (size_t k = 0; s->deps && k < m; k++) {
            long j = t2__flow_find(f, v[k]);
            if (j < 0) {
                const char *near = t2__cfg_closest(v[k], names);
                t2__flow_err(c, &marks[k], "%s[%zu]: no stage '%s'%s%s%s", p, k, v[k], near ? " (did you mean '" : "",
                             near ? near : "", near ? "'?)" : "");
            } else if ((size_t)j == i) {
                t2__flow_err(c, &marks[k], "%s[%zu]: stage '%s' cannot run after itself", p, k, v[k]);
            } else {
                int dup = 0;
                for (size_t q = 0; q < s->ndeps; q++) dup |= s->deps[q] == (size_t)j;
                if (!dup) s->deps[s->ndeps++] = (size_t)j;
            }
        }
        t2__strv_free(v, m);
        free(marks);
    }
    free(names);
}

static int top(t2__flow_ctx *c, const t2__ynode *root)
{
    t2__flow *f = c->f;
    char d[96];
    if (root->kind != T2__Y_MAP) {
        t2__flow_err(c, &root->mark, "a flow file is a map with name: and stages:, got %s", desc(root, d, sizeof d));
        return -1;
    }
    unknown_keys(c, root, "", TOP_KEYS);
    const t2__ynode *nm = t2__ymap_get(root, "name", NULL), *st = t2__ymap_get(root, "stages", NULL);
    if (!nm) t2__flow_err(c, &root->mark, "name: missing required key (the flow's name, which its runs are "
                          "recorded under)");
    else {
        const char *s = want_string(c, nm, "name");
        if (s && !good_name(s))
            t2__flow_err(c, &nm->mark, "name: '%.*s' is not a valid name (letters, digits, '_' and '-', starting "
                         "with a letter or '_', at most %d characters)", 200, s, T2__FLOW_MAX_NAME);
        else if (s && !(f->name = strdup(s))) c->oom = 1;
    }
    if (!st || t2__ynull(st)) {
        t2__flow_err(c, st ? &st->mark : &root->mark, "stages: missing required key (a map of stage name to stage)");
        return -1;
    }
    if (st->kind != T2__Y_MAP || st->n == 0) {
        t2__flow_err(c, &st->mark, "stages: expected a non-empty map of stage name to stage, got %s",
                     desc(st, d, sizeof d));
        return -1;
    }
    if (st->n > T2__FLOW_MAX_STAGES) {
        t2__flow_err(c, &st->mark, "stages: %zu stages; at most %d", st->n, T2__FLOW_MAX_STAGES);
        return -1;
    }
    if (!(f->stages = calloc(st->n, sizeof *f->stages))) {
        c->oom = 1;
        return -1;
    }
    f->n = st->n;
    int bad = 0;
    for (size_t i = 0; i < st->n; i++) {
        t2__flow_stage *s = &f->stages[i];
        s->mark = st->key_marks[i];
        if (!good_name(st->keys[i])) {
            t2__flow_err(c, &st->key_marks[i], "stages: '%.*s' is not a valid stage name (letters, digits, '_' "
                         "and '-', starting with a letter or '_', at most %d characters)", 200, st->keys[i],
                         T2__FLOW_MAX_NAME);
            bad = 1;
        }
        if (!(s->name = strdup(st->keys[i]))) {
            c->oom = 1;
            return -1;
        }
    }
    if (bad) return -1;
    for (size_t i = 0; i < st->n; i++) stage(c, i, st->items[i]);
    afters(c, st);
    return 0;
}

void t2__strv_free(char **v, size_t n)
{
    if (!v) return;
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

static void free_paths(t2__flow_path *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++) {
        free(p[i].text);
        free(p[i].abs);
    }
    free(p);
}

void t2__flow_free(t2__flow *f)
{
    if (!f) return;
    for (size_t i = 0; f->stages && i < f->n; i++) {
        t2__flow_stage *s = &f->stages[i];
        free(s->name);
        t2__strv_free(s->argv, s->argc);
        free(s->hostfile);
        free(s->config);
        free(s->trial);
        t2__val_free(s->hparams);
        free_paths(s->inputs, s->ninputs);
        free_paths(s->outputs, s->noutputs);
        free(s->def_json);
        free(s->deps);
        free(s->refs);
    }
    free(f->stages);
    free(f->order);
    free(f->path);
    free(f->dir);
    free(f->name);
    free(f);
}

long t2__flow_find(const t2__flow *f, const char *name)
{
    for (size_t i = 0; f && name && i < f->n; i++)
        if (!strcmp(f->stages[i].name, name)) return (long)i;
    return -1;
}

int t2__flow_load_string(const char *text, size_t len, const char *name, const char *dir, t2__flow **out)
{
    if (!out) return t2_seterr(T2_EINVAL, "flow: NULL out");
    *out = NULL;
    keep_errors(NULL);
    if (!text || !name || !dir) return t2_seterr(T2_EINVAL, "flow: NULL argument");
    if (len > T2__FLOW_MAX_BYTES)
        return t2_seterr(T2_EINVAL, "%s: %zu bytes; a flow file is at most %d bytes", name, len, T2__FLOW_MAX_BYTES);
    if (memchr(text, '\0', len))
        return t2_seterr(T2_EFORMAT, "%s: the file contains a NUL byte (not a YAML text file?)", name);
    t2__flow_ctx c = {0};
    t2__ynode *root = NULL;
    int rc;
    if (!(c.f = calloc(1, sizeof *c.f)) || !(c.f->path = strdup(name)) ||
        !(c.f->dir = t2__flow_abspath("/", dir))) {
        rc = t2_seterr(T2_ENOMEM, "flow: out of memory");
        goto done;
    }
    if ((rc = t2__yparse(text, len, c.f->path, &root))) goto done;
    /* The graph is checked even after key errors, so one run lists the graph's problems too. */
    if (top(&c, root) == 0 && !c.oom) t2__flow_build_graph(&c);
    if (c.oom) rc = t2_seterr(T2_ENOMEM, "flow %s: out of memory", name);
    else if (c.nerrors) {
        size_t more = c.nerrors - 1 + c.more;
        if (more) rc = t2_seterr(T2_EINVAL, "%s (and %zu more error%s)", c.errors[0], more, more == 1 ? "" : "s");
        else rc = t2_seterr(T2_EINVAL, "%s", c.errors[0]);
        keep_errors(&c);
    }
done:
    t2__yfree(root);
    for (size_t k = 0; k < c.nerrors; k++) free(c.errors[k]);
    free(c.errors);
    free(c.refs);
    if (rc) t2__flow_free(c.f);
    else *out = c.f;
    return rc;
}

int t2__flow_load(const char *path, t2__flow **out)
{
    if (!out || !path) return t2_seterr(T2_EINVAL, "flow: NULL argument");
    *out = NULL;
    keep_errors(NULL);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return t2_seterr(e == ENOENT ? T2_ENOTFOUND : T2_EIO, "%s: cannot open: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return t2_seterr(T2_EINVAL, "%s: not a regular file; a flow must be a YAML file", path);
    }
    if (st.st_size > T2__FLOW_MAX_BYTES) {
        close(fd);
        return t2_seterr(T2_EINVAL, "%s: %lld bytes; a flow file is at most %d bytes", path,
                         (long long)st.st_size, T2__FLOW_MAX_BYTES);
    }
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return t2_seterr(T2_ENOMEM, "flow: out of memory");
    }
    for (;;) {
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return t2_seterr(T2_EIO, "%s: cannot read: %s", path, strerror(e));
        }
        if (r == 0) break;
        len += (size_t)r;
        if (len == cap) { /* grew while we read: refuse rather than chase it */
            free(buf);
            close(fd);
            return t2_seterr(T2_EINVAL, "%s: changed size while being read", path);
        }
    }
    close(fd);
    buf[len] = '\0';
    /* The directory relative paths are taken against: the file's own, made absolute. */
    char cwd[PATH_MAX], *dir = NULL;
    const char *slash = strrchr(path, '/');
    int rc;
    if (!getcwd(cwd, sizeof cwd)) {
        free(buf);
        return t2_seterr(T2_EIO, "flow: cannot read the working directory: %s", strerror(errno));
    }
    if (slash) {
        char *d = strndup(path, slash == path ? 1 : (size_t)(slash - path));
        dir = d ? t2__flow_abspath(cwd, d) : NULL;
        free(d);
    } else {
        dir = strdup(cwd);
    }
    if (!dir) rc = t2_seterr(T2_ENOMEM, "flow: out of memory");
    else rc = t2__flow_load_string(buf, len, path, dir, out);
    free(dir);
    free(buf);
    return rc;
}
