/* cores.c — how many cores this process may use, for every "all cores" default (the slot pool,
 * evaluate's threads, a pipeline's jobs, the dataset conversion).
 *
 * Why not sysconf(_SC_NPROCESSORS_ONLN): that counts the machine's cores. Under `taskset`, a Slurm
 * job's cpuset, `docker --cpuset-cpus` or numactl the process may run on fewer, and under a CPU
 * quota (`docker --cpus`, a Kubernetes CPU limit) it may use fewer at a time. A pool sized from the
 * machine then runs a worker and a BLAS thread per host core on a few cores, each trial slowed by
 * as many times as it is oversubscribed. So: the affinity mask's count, capped by the tightest
 * quota on the way from this process's cgroup up to the root, rounded up. */
#define _GNU_SOURCE
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

/* quota / period rounded up: 150000/100000 is 2 cores (the pool may use 1.5 at a time). <= 0
 * (no limit, or a value we cannot use). */
static int cores_from_quota(long long quota, long long period)
{
    if (quota <= 0 || period <= 0) return 0;
    long long n = (quota + period - 1) / period;
    return n > INT_MAX ? INT_MAX : (int)n;
}

/* Reads "QUOTA PERIOD" (cgroup v2 cpu.max; QUOTA may be "max") into a core count. */
static int read_cpu_max(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    char q[32];
    long long period = 0;
    int n = fscanf(f, "%31s %lld", q, &period);
    fclose(f);
    if (n != 2 || strcmp(q, "max") == 0) return 0;
    return cores_from_quota(strtoll(q, NULL, 10), period);
}

/* The first integer in DIR/NAME, or `otherwise` when the file is missing or holds none. */
static long long read_ll(const char *dir, const char *name, long long otherwise)
{
    char path[PATH_MAX + 32]; /* dir is at most PATH_MAX - 1 bytes */
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "re");
    long long v;
    if (!f) return otherwise;
    if (fscanf(f, "%lld", &v) != 1) v = otherwise;
    fclose(f);
    return v;
}

/* cgroup v1: cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us in DIR. */
static int read_cfs(const char *dir)
{
    return cores_from_quota(read_ll(dir, "cpu.cfs_quota_us", -1), read_ll(dir, "cpu.cfs_period_us", 0));
}

/* The tightest quota from ROOT/REL up to ROOT. v2 selects cpu.max, v1 the cfs pair. */
static int tightest(const char *root, const char *rel, int v2)
{
    char dir[PATH_MAX];
    int best = 0;
    if (snprintf(dir, sizeof dir, "%s%s", root, rel) >= (int)sizeof dir) return 0;
    size_t stop = strlen(root);
    for (;;) {
        int n;
        if (v2) {
            char path[PATH_MAX + 32];
            snprintf(path, sizeof path, "%s/cpu.max", dir);
            n = read_cpu_max(path);
        } else {
            n = read_cfs(dir);
        }
        if (n > 0 && (best == 0 || n < best)) best = n;
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < stop) break;
        *slash = '\0';
    }
    return best;
}

/* Whether a comma-separated list (a cgroup line's controllers, a mount's options) names cpu. */
static int names_cpu(const char *list)
{
    char padded[512];
    snprintf(padded, sizeof padded, ",%s,", list);
    return strstr(padded, ",cpu,") != NULL;
}

/* A mountinfo field with its octal escapes (\040 for a space) decoded, in place. */
static void unescape(char *f)
{
    char *o = f;
    for (char *p = f; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
            *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

/* Where a cgroup hierarchy is mounted, from /proc/self/mountinfo ("ID PARENT DEV ROOT POINT OPTS
 * [TAGS] - TYPE SOURCE SUPEROPTS"): v2 (cgroup2), or v1's with the cpu controller among its
 * super options (alone, or joined as "cpu,cpuacct"). Not only /sys/fs/cgroup: a v1 controller may
 * be mounted anywhere, and the standard paths then held no quota. The first such mount wins;
 * *root gets the hierarchy path mounted there ("/" unless a container mounted a subtree). */
static int find_mount(int v2, char *point, size_t point_cap, char *root, size_t root_cap)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f) return 0;
    char line[2 * PATH_MAX + 256];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *fields[6], *save = NULL, *tok = strtok_r(line, " \n", &save);
        int n = 0;
        for (; tok && n < 6; tok = strtok_r(NULL, " \n", &save)) fields[n++] = tok;
        if (n < 6) continue;
        while (tok && strcmp(tok, "-") != 0) tok = strtok_r(NULL, " \n", &save); /* the optional tags */
        char *type = tok ? strtok_r(NULL, " \n", &save) : NULL;
        char *source = type ? strtok_r(NULL, " \n", &save) : NULL;
        char *super = source ? strtok_r(NULL, " \n", &save) : NULL;
        if (!super) continue;
        if (v2 ? strcmp(type, "cgroup2") != 0 : strcmp(type, "cgroup") != 0) continue;
        if (!v2 && !names_cpu(super)) continue;
        unescape(fields[3]);
        unescape(fields[4]);
        if (strlen(fields[4]) >= point_cap || strlen(fields[3]) >= root_cap) continue;
        strcpy(point, fields[4]);
        strcpy(root, fields[3]);
        found = 1;
    }
    fclose(f);
    return found;
}

/* The quota of the cgroup at hierarchy path REL (v2 or v1 cpu), where its hierarchy is mounted. A
 * mount of a subtree (ROOT) shows the cgroups under it only: REL outside it is not visible here. */
static int quota_of(const char *rel, int v2)
{
    char point[PATH_MAX], root[PATH_MAX];
    if (!find_mount(v2, point, sizeof point, root, sizeof root)) return 0;
    size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
    if (rl && (strncmp(rel, root, rl) != 0 || (rel[rl] != '/' && rel[rl] != '\0'))) return 0;
    if (strcmp(point, "/") == 0) point[0] = '\0';
    return tightest(point, rel + rl, v2);
}

/* The quota of this process's cgroups, as /proc/self/cgroup names them ("ID:CONTROLLERS:PATH"):
 * the v2 line (ID 0, no controllers), and the v1 line whose controllers include cpu. Inside a
 * container with its own cgroup namespace the path is "/" and the container's limit is on the
 * mount's root itself. 0: no quota found. */
static int quota_cores(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f) return 0;
    char line[PATH_MAX + 64];
    int best = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c1 = *c2 = '\0';
        const char *ctrl = c1 + 1, *rel = c2 + 1;
        if (strcmp(rel, "/") == 0) rel = "";
        int n = 0;
        if (strcmp(line, "0") == 0 && !*ctrl) {
            n = quota_of(rel, 1);
        } else if (names_cpu(ctrl)) {
            n = quota_of(rel, 0);
        }
        if (n > 0 && (best == 0 || n < best)) best = n;
    }
    fclose(f);
    return best;
}

int t2__usable_cores(void)
{
    int n = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
    if (n <= 0) {
        long m = sysconf(_SC_NPROCESSORS_ONLN);
        n = m > 0 ? (m > INT_MAX ? INT_MAX : (int)m) : 1;
    }
    int q = quota_cores();
    return q > 0 && q < n ? q : n;
}
