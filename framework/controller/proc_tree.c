/* proc_tree.c — the processes an mpirun started, so that none outlives ending it.
 *
 * Why: Open MPI starts its remote daemons through ssh (or the configured agent) in a process group
 * of their own. Ending mpirun and then its group left that ssh running, reparented to init, for
 * as long as the remote host kept the connection: forever on a host that accepts TCP and says
 * nothing (a launch's timeout, `t2exp kill`, a host probe). Once mpirun is gone its children can
 * no longer be found (their parent is init), so the controller notes them while mpirun still
 * runs, before it asks mpirun to end, and ends those still there after mpirun is reaped.
 *
 * A pid can be reused once its process is reaped: each is noted with its start time (field 22 of
 * /proc/PID/stat) and only a process with the same pid and start time is signalled. */
#define _XOPEN_SOURCE 700 /* getpgid */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trial_proc.h"

/* Field `field` (>= 4, numeric) of /proc/PID/stat; 0 if it cannot be read (gone). */
static unsigned long long stat_field(pid_t pid, int field)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name (field 2) may hold spaces and parentheses: fields count from the last ')'.
     * Past it p is at the space before field 3; each step moves to the space before the next. */
    char *p = strrchr(buf, ')');
    if (!p) return 0;
    p++;
    unsigned long long v = 0;
    for (int k = 3; k < field && p; k++) p = strchr(p + 1, ' ');
    if (!p || sscanf(p, " %llu", &v) != 1) return 0;
    return v;
}

/* The start time of pid in clock ticks since boot (field 22); 0 if gone. */
static unsigned long long start_time(pid_t pid) { return stat_field(pid, 22); }

/* The parent of pid (field 4); 0 if gone. */
static pid_t parent_of(pid_t pid) { return (pid_t)stat_field(pid, 4); }

/* Up to max children of pid into out, from every thread's children list; where the kernel has no
 * such lists (built without CONFIG_PROC_CHILDREN), from every process's parent. */
static size_t children_of(pid_t pid, pid_t *out, size_t max)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    int lists = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[128];
        snprintf(path, sizeof path, "%s/%.32s/children", dir, e->d_name);
        FILE *f = fopen(path, "re");
        if (!f) continue;
        lists = 1;
        int child;
        while (n < max && fscanf(f, "%d", &child) == 1) out[n++] = child;
        fclose(f);
    }
    closedir(d);
    if (lists || !(d = opendir("/proc"))) return n;
    while (n < max && (e = readdir(d))) {
        char *end;
        long p = strtol(e->d_name, &end, 10);
        if (*end || p <= 0) continue;
        if (parent_of((pid_t)p) == pid) out[n++] = (pid_t)p;
    }
    closedir(d);
    return n;
}

static int noted(const t2__proc_tree *t, pid_t pid, unsigned long long start)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].pid == pid && t->v[i].start == start) return 1;
    return 0;
}

/* Adds pid's children to t (those not noted yet), then theirs. */
static void add_children(t2__proc_tree *t, pid_t pid, int depth)
{
    pid_t kids[T2__PROC_TREE_MAX];
    size_t n = children_of(pid, kids, T2__PROC_TREE_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned long long s = start_time(kids[i]);
        if (!s) continue; /* gone already */
        if (!noted(t, kids[i], s)) {
            if (t->n == T2__PROC_TREE_MAX) return;
            t->v[t->n++] = (t2__proc_id){.pid = kids[i], .start = s};
        }
        if (depth < 8) add_children(t, kids[i], depth + 1);
    }
}

/* Merged into what was noted before: noted again once mpirun is a zombie (its children list then
 * empty), the launchers found earlier stay noted (review R10: a reset lost them). */
void t2__proc_tree_note(t2__proc_tree *t, pid_t root)
{
    if (root > 0) add_children(t, root, 0);
}

void t2__proc_tree_end(t2__proc_tree *t)
{
    for (size_t i = 0; i < t->n; i++) {
        pid_t p = t->v[i].pid;
        if (start_time(p) != t->v[i].start) continue; /* gone, or its pid is another process's now */
        /* A launcher that leads a group of its own (ssh under Open MPI) takes that group along. */
        if (getpgid(p) == p) kill(-p, SIGKILL);
        kill(p, SIGKILL);
    }
    t->n = 0;
}
