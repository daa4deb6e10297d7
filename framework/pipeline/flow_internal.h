/* flow_internal.h — what the flow loader's files share (internal to framework/pipeline/). */
#ifndef T2_PIPELINE_FLOW_INTERNAL_H
#define T2_PIPELINE_FLOW_INTERNAL_H

#include "flow.h"

/* A ${...} found while parsing, checked once the graph is known. */
typedef struct t2__flow_pending_ref {
    size_t stage;
    t2__ref ref;
    t2__ymark mark;
    char where[160]; /* key path, e.g. stages.export.run[2] */
} t2__flow_pending_ref;

/* The loader's state: the flow being built and the problems found so far. */
typedef struct t2__flow_ctx {
    t2__flow *f;
    char **errors;
    size_t nerrors, more;
    int oom;
    t2__flow_pending_ref *refs;
    size_t nrefs, caprefs;
} t2__flow_ctx;

/* Records "WHERE: message" (WHERE = file:line:col of m); m NULL: the message is located already
 * (a config getter's t2_errmsg()). */
void t2__flow_err(t2__flow_ctx *c, const t2__ymark *m, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Graph building and checks (flow_graph.c): edges, cycles, order, references. */
int t2__flow_build_graph(t2__flow_ctx *c);

/* Lexically normalised absolute path of p against dir ("." and ".." folded, "//" collapsed);
 * malloc'd, NULL when out of memory. */
char *t2__flow_abspath(const char *dir, const char *p);

/* A reference's value as text (flow_refs.c): strings as they are, numbers in full precision
 * (%.17g), maps and lists as JSON. *out malloc'd; T2_ENOMEM without a message. */
int t2__ref_val_text(const t2__val *v, char **out);

#endif
