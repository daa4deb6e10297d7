/* cmd_init.c — `t2exp init NAME`: writes a ready trial project into NAME/ (trial.c, const.yaml,
 * CMakeLists.txt using find_package(t2exp), README.md).
 *
 * trial.c and const.yaml are the tutorial's own trial and config (trials/tutorial_trial.c and
 * configs/examples/tutorial_trial.yaml, compiled in by cmake/embed_files.cmake), renamed: the
 * suite builds and runs those, so the scaffold a user starts from is code that is known to work,
 * and the walk-through in docs/writing-a-trial.md explains every line of it. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "embedded_files.h"
#include "framework/cli/commands.h"

extern const t2__embedded_file t2__init_templates[];

static const struct option OPTIONS[] = {
    {"help", no_argument, NULL, 'h'},
    {0, 0, 0, 0},
};

static const char CMAKELISTS[] =
    "# Builds build/trial.so against the installed t2exp (cmake --install ... puts its package where\n"
    "# find_package looks; for another prefix: cmake -S . -B build -DCMAKE_PREFIX_PATH=PREFIX).\n"
    "cmake_minimum_required(VERSION 3.25)\n"
    "project(@NAME@ C)\n"
    "find_package(t2exp 0.1 REQUIRED)\n"
    "add_library(trial MODULE trial.c)          # MODULE: t2exp loads it with dlopen\n"
    "target_link_libraries(trial PRIVATE t2exp::t2exp)\n"
    "set_target_properties(trial PROPERTIES PREFIX \"\" C_STANDARD 11)   # trial.so, not libtrial.so\n";

static const char README[] =
    "# @NAME@\n"
    "\n"
    "A t2exp trial project, written by `t2exp init @NAME@`: a one-hidden-layer MLP on Fashion-MNIST\n"
    "(`trial.c`, every trial callback used and commented) and its experiment config (`const.yaml`:\n"
    "hyperparameters, searcher, validation period).\n"
    "\n"
    "```sh\n"
    "cmake -S . -B build && cmake --build build     # build/trial.so\n"
    "t2exp create const.yaml build/trial.so          # run the experiment (--config KEY=VALUE to vary it)\n"
    "t2exp dashboard                                 # look: http://127.0.0.1:8080/\n"
    "```\n"
    "\n"
    "The data comes from the Debian package `dataset-fashion-mnist`. `t2exp describe ID`,\n"
    "`t2exp metrics ID` and `t2exp plot ID --out plots` show the results in a terminal or as files.\n"
    "To search instead of training once, give `searcher` another `name` (grid, random, adaptive_asha, tpe)\n"
    "and the hyperparameters ranges, e.g. `hidden: {type: int, minval: 64, maxval: 512}`.\n";

static int usage(const char *why)
{
    fprintf(stderr, "t2exp init: %s\nusage: t2exp init NAME   (writes a trial project into the new directory NAME/)\n",
            why);
    return 2;
}

static const t2__embedded_file *template_named(const char *path)
{
    for (const t2__embedded_file *f = t2__init_templates; f->path; f++)
        if (!strcmp(f->path, path)) return f;
    return NULL;
}

/* text with every `from` replaced by `to` (malloc'd), or NULL. *count gets the replacements. */
static char *replace_all(const char *text, const char *from, const char *to, int *count)
{
    size_t lf = strlen(from), lt = strlen(to), n = 0;
    for (const char *p = strstr(text, from); p; p = strstr(p + lf, from)) n++;
    char *out = malloc(strlen(text) + n * (lt > lf ? lt - lf : 0) + 1);
    if (!out) return NULL;
    char *w = out;
    const char *r = text;
    for (const char *p = strstr(r, from); p; p = strstr(r, from)) {
        memcpy(w, r, (size_t)(p - r));
        w += p - r;
        memcpy(w, to, lt);
        w += lt;
        r = p + lf;
    }
    strcpy(w, r);
    if (count) *count = (int)n;
    return out;
}

/* The text a project file holds: a template with its anchors replaced. Each anchor must occur
 * (count), so that an edit of the tutorial that moves one fails here, in the suite, rather than
 * writing a project that still says "tutorial_trial". */
typedef struct edit {
    const char *from, *to;
} edit;

static char *apply_edits(const char *text, const edit *edits, size_t nedits, const char *what)
{
    char *cur = strdup(text);
    for (size_t i = 0; cur && i < nedits; i++) {
        int n = 0;
        char *next = replace_all(cur, edits[i].from, edits[i].to, &n);
        free(cur);
        cur = next;
        if (cur && n == 0) {
            fprintf(stderr, "t2exp init: the template %s no longer holds \"%s\" (a t2exp build problem)\n", what,
                    edits[i].from);
            free(cur);
            return NULL;
        }
    }
    if (!cur && errno == ENOMEM) fprintf(stderr, "t2exp init: out of memory\n");
    return cur;
}

static int write_file(const char *dir, const char *name, const char *text)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
        fprintf(stderr, "t2exp init: %s/%s: path too long\n", dir, name);
        return -1;
    }
    FILE *f = fopen(path, "wx"); /* the directory is new: a file already there is not ours */
    size_t len = strlen(text);
    int ok = f && fwrite(text, 1, len, f) == len;
    int err = errno;
    if (f && fclose(f) != 0 && ok) ok = 0, err = errno; /* closed whatever happened: no FILE leaks */
    if (!ok) {
        fprintf(stderr, "t2exp init: cannot write %s: %s\n", path, strerror(err));
        return -1;
    }
    return 0;
}

/* A project name: it becomes CMake's project() and the experiment's name. */
static int valid_name(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))) return 0;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '-'))
            return 0;
    return 1;
}

static const char *const FILES[] = {"trial.c", "const.yaml", "CMakeLists.txt", "README.md"};

static int write_project(const char *dir, const char *name)
{
    const t2__embedded_file *trial = template_named("trials/tutorial_trial.c");
    const t2__embedded_file *config = template_named("configs/examples/tutorial_trial.yaml");
    if (!trial || !config) {
        fprintf(stderr, "t2exp init: the templates are missing from this build\n");
        return -1;
    }
    char quoted[128];
    snprintf(quoted, sizeof quoted, ".name = \"%s\"", name);
    char header[512];
    snprintf(header, sizeof header, "# %s (written by t2exp init from the tutorial's trial, trial.c): an MLP on", name);
    char config_name[128], description[192];
    snprintf(config_name, sizeof config_name, "\nname: %s\n", name);
    snprintf(description, sizeof description, "\ndescription: %s, a Fashion-MNIST MLP from t2exp init\n", name);
    const edit trial_edits[] = {
        {"/* tutorial_trial.c — the trial", "/* trial.c (t2exp init) — the trial"},
        {".name = \"tutorial_trial\"", quoted},
    };
    const edit config_edits[] = {
        {"# The trial written in docs/writing-a-trial.md (trials/tutorial_trial.c): an MLP on", header},
        {"#\n#   t2exp create configs/examples/tutorial_trial.yaml build/trials/tutorial_trial.so\n",
         "#\n#   t2exp create const.yaml build/trial.so\n"},
        {"\nname: tutorial_trial\n", config_name},
        {"\ndescription: Fashion-MNIST MLP from the trial-writing tutorial, one trial\n", description},
        {"labels: [fashion-mnist, mlp, tutorial, example]", "labels: [fashion-mnist, mlp]"},
    };
    const edit name_edit[] = {{"@NAME@", name}};
    char *text[4] = {
        apply_edits((const char *)trial->data, trial_edits, 2, trial->path),
        apply_edits((const char *)config->data, config_edits, 5, config->path),
        apply_edits(CMAKELISTS, name_edit, 1, "CMakeLists.txt"),
        apply_edits(README, name_edit, 1, "README.md"),
    };
    int rc = 0;
    for (size_t i = 0; i < 4; i++)
        if (!text[i]) rc = -1;
    if (!rc && mkdir(dir, 0777) != 0) {
        fprintf(stderr, "t2exp init: cannot create %s: %s\n", dir, strerror(errno));
        rc = -1;
    } else if (!rc) {
        size_t done = 0;
        while (done < 4 && write_file(dir, FILES[done], text[done]) == 0) done++;
        if (done < 4) { /* leave nothing half-made: the directory was new, so all in it is ours */
            char path[4096];
            for (size_t i = 0; i <= done && i < 4; i++) {
                snprintf(path, sizeof path, "%s/%s", dir, FILES[i]);
                unlink(path);
            }
            rmdir(dir);
            rc = -1;
        }
    }
    for (size_t i = 0; i < 4; i++) free(text[i]);
    return rc;
}

static int run(const char *home, int argc, char **argv)
{
    (void)home;
    opterr = 0;
    optind = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", OPTIONS, NULL)) != -1) {
        if (ch == 'h') {
            printf("usage: t2exp init NAME\nwrites a trial project into the new directory NAME/: trial.c, const.yaml,\n"
                   "CMakeLists.txt (find_package(t2exp)) and README.md\n");
            return 0;
        }
        char why[160];
        snprintf(why, sizeof why, "unknown option %.60s; init takes no options", argv[optind - 1]);
        return usage(why);
    }
    if (argc - optind != 1) return usage(argc - optind ? "takes one NAME" : "needs a NAME");
    const char *dir = argv[optind];
    char trimmed[4096];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof trimmed) return usage("NAME must be a directory name");
    memcpy(trimmed, dir, len + 1);
    while (len > 1 && trimmed[len - 1] == '/') trimmed[--len] = '\0';
    const char *slash = strrchr(trimmed, '/');
    const char *name = slash ? slash + 1 : trimmed;
    if (!valid_name(name) || strlen(name) > 64) {
        fprintf(stderr,
                "t2exp init: '%s' is not a project name: a letter, then letters, digits, '_' or '-' (at most 64)\n",
                name);
        return 2;
    }
    struct stat st;
    if (lstat(trimmed, &st) == 0) {
        fprintf(stderr, "t2exp init: %s already exists; init writes only into a new directory\n", trimmed);
        return 2;
    }
    /* What fails here is writing (a missing parent, no permission, a full disk; or memory): I/O
     * trouble, exit 3 as docs/cli.md's table says, not 1, which means a run that did not complete. */
    if (write_project(trimmed, name)) return 3;
    printf("wrote %s/: trial.c const.yaml CMakeLists.txt README.md\n"
           "next:\n"
           "  cmake -S %s -B %s/build && cmake --build %s/build\n"
           "  t2exp create %s/const.yaml %s/build/trial.so\n"
           "  t2exp dashboard\n",
           trimmed, trimmed, trimmed, trimmed, trimmed, trimmed);
    return 0;
}

const t2__command t2__command_init = {.name = "init",
                                      .synopsis = "init NAME",
                                      .summary = "write a ready trial project into NAME/",
                                      .options = OPTIONS,
                                      .run = run};
