/* store_fds.c — the descriptors this process holds on the store's files, for the controller to
 * close in the processes it forks for trials and workers (t2__ctl_child_close_fds).
 *
 * Why: a forked trial never uses the store, yet it inherited SQLite's descriptors of the database,
 * its write-ahead log and shared memory (and writer_turns.c's file), each a small number, open for
 * writing; a trial's stray write(3, ...) (an uninitialised descriptor, a use after close) went into
 * the database. SQLite keeps its descriptors to itself, so they are found by what they point at:
 * each open descriptor (/proc/self/fd) whose file is one of the store's (device and inode). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "store_internal.h"
#include "t2exp/error.h"

static const char *const SUFFIXES[] = {"", "-wal", "-shm", "-journal", "-turns"};
#define NFILES (sizeof SUFFIXES / sizeof SUFFIXES[0])

int t2__store_fds(const t2__store *st, int **fds, int *n)
{
    *fds = NULL;
    *n = 0;
    if (!st) return T2_OK;
    struct stat files[NFILES];
    int have[NFILES];
    size_t len = strlen(st->path);
    char *path = malloc(len + sizeof "-journal");
    if (!path) return t2_seterr(T2_ENOMEM, "store: out of memory");
    for (size_t i = 0; i < NFILES; i++) {
        memcpy(path, st->path, len);
        strcpy(path + len, SUFFIXES[i]);
        have[i] = stat(path, &files[i]) == 0;
    }
    free(path);
    DIR *d = opendir("/proc/self/fd");
    if (!d) return T2_OK; /* no /proc: nothing found, as before */
    int dirfd_self = dirfd(d), cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        struct stat sb;
        if (*end || end == e->d_name || fd == dirfd_self || fstat((int)fd, &sb) != 0) continue;
        for (size_t i = 0; i < NFILES; i++) {
            if (!have[i] || sb.st_dev != files[i].st_dev || sb.st_ino != files[i].st_ino) continue;
            if (*n == cap) {
                int *g = realloc(*fds, (size_t)(cap = cap ? 2 * cap : 8) * sizeof *g);
                if (!g) {
                    closedir(d);
                    free(*fds);
                    *fds = NULL;
                    *n = 0;
                    return t2_seterr(T2_ENOMEM, "store: out of memory");
                }
                *fds = g;
            }
            (*fds)[(*n)++] = (int)fd;
            break;
        }
    }
    closedir(d);
    return T2_OK;
}
