/* test_proc_tree.c — the processes an mpirun started are noted so that none outlives it
 * (proc_tree.c). A parent here plays mpirun: it starts a launcher in a process group of its own
 * (as Open MPI's ssh is), which starts a child of its own. Noting again once the parent is a
 * zombie (its children list then empty) keeps what was noted before (review R10: each note reset
 * the list, and the launchers were lost); ending kills the launcher, its group and its child,
 * and never a process whose pid was noted but is now another's. */
#define _XOPEN_SOURCE 700
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "controller/trial_proc.h"

static int alive(pid_t p)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)p);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *q = strrchr(buf, ')');
    return q && q[2] != 'Z'; /* a zombie has ended */
}

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(void)
{
    int pipe_fd[2];
    CHECK(pipe(pipe_fd) == 0);
    pid_t parent = fork();
    CHECK(parent >= 0);
    if (parent == 0) {
        pid_t launcher = fork();
        if (launcher == 0) {
            setpgid(0, 0); /* a group of its own, as ssh under Open MPI */
            pid_t kid = fork();
            if (kid == 0) {
                for (;;) pause();
            }
            pid_t both[2] = {getpid(), kid};
            if (write(pipe_fd[1], both, sizeof both) != (ssize_t)sizeof both) _exit(1);
            for (;;) pause();
        }
        for (;;) pause(); /* "mpirun" */
    }
    pid_t both[2];
    CHECK(read(pipe_fd[0], both, sizeof both) == (ssize_t)sizeof both);
    t2__proc_tree *t = calloc(1, sizeof *t);
    CHECK(t != NULL);
    t2__proc_tree_note(t, parent);
    CHECK(t->n == 2);
    t2__proc_tree_note(t, parent); /* again while it runs: nothing twice */
    CHECK(t->n == 2);
    kill(parent, SIGKILL); /* a zombie until reaped: its children are init's now */
    for (int i = 0; i < 200 && alive(parent); i++) pause_ms(5);
    t2__proc_tree_note(t, parent);
    CHECK(t->n == 2);
    CHECK(alive(both[0]) && alive(both[1]));
    waitpid(parent, NULL, 0);
    t2__proc_tree_end(t);
    CHECK(t->n == 0);
    for (int i = 0; i < 200 && (alive(both[0]) || alive(both[1])); i++) pause_ms(5);
    CHECK(!alive(both[0]));
    CHECK(!alive(both[1]));
    free(t);
    /* Whatever a failed check left running goes (ctest waited for it until its timeout). */
    kill(both[1], SIGKILL);
    kill(both[0], SIGKILL);
    kill(parent, SIGKILL);
    waitpid(parent, NULL, 0);
    return check_report("test_proc_tree");
}
