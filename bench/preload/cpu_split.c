/* cpu_split.c — LD_PRELOAD'ed by bench/run_trials.sh into `t2exp create`: when the process that
 * loaded it first ends, prints to stderr the CPU time of that process (the controller) and of its
 * reaped children (the trial workers) apart, one line:
 *   cpu_split: self_s=<user+sys> children_s=<user+sys> main_s=<user+sys> self_sys_s=<sys>
 *              children_sys_s=<sys> main_sys_s=<sys>
 * main_s is the controller's main thread alone (destructors run on it); the rest of self_s is its
 * store writer thread (store_async.c). The busier of the two threads' CPU per trial is the
 * search's serial cost: on a machine with cores to spare its rate cannot pass 1 / that
 * (performance.md). Forked workers share the mapping but end
 * with _exit (no destructors) and have another pid. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

static pid_t first;

__attribute__((constructor)) static void note_pid(void)
{
    if (!first) first = getpid(); /* an exec into itself keeps the pid and runs this again */
}

static double sys_seconds(const struct rusage *r) { return (double)r->ru_stime.tv_sec + r->ru_stime.tv_usec / 1e6; }

static double seconds(const struct rusage *r)
{
    return (double)r->ru_utime.tv_sec + r->ru_utime.tv_usec / 1e6 + sys_seconds(r);
}

__attribute__((destructor)) static void report(void)
{
    struct rusage self, children, thread;
    if (getpid() != first || getrusage(RUSAGE_SELF, &self) || getrusage(RUSAGE_CHILDREN, &children) ||
        getrusage(RUSAGE_THREAD, &thread))
        return;
    /* The kernel's part apart too: on some machines a thread's time is mostly system calls. */
    fprintf(stderr, "cpu_split: self_s=%.3f children_s=%.3f main_s=%.3f self_sys_s=%.3f children_sys_s=%.3f main_sys_s=%.3f\n",
            seconds(&self), seconds(&children), seconds(&thread), sys_seconds(&self), sys_seconds(&children),
            sys_seconds(&thread));
}
