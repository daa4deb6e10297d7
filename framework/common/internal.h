/* internal.h — helpers shared by the library's modules; not part of the public API. */
#ifndef T2_INTERNAL_H
#define T2_INTERNAL_H

#include <stddef.h>
#include "t2exp/error.h"

/* t2_seterr with a finished text (cut to fit): no format to parse, for errors made often, such as
 * a trial probing an optional hyperparameter (glibc's printf takes its slow path in a process with
 * libquadmath, see configs/json_double.c). */
int t2__seterr_text(int code, const char *text);
/* snprintf into a fixed buffer for a message: a text that does not fit loses the middles of its
 * longest words (paths, mostly: "cannot open /a/very/lo...ry/t2exp.db: Permission denied") where
 * snprintf would drop the end, which is usually the reason. t2_seterr does the same. Returns
 * snprintf's count. */
int t2__fmt_fit(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The terminal columns UTF-8 text s takes (a wide CJK glyph or emoji 2, a combining mark 0; a
 * byte that is no UTF-8 1): what the aligned tables pad by (text_width.c). */
size_t t2__text_width(const char *s);

/* 64-byte aligned allocation (cache lines, AVX-512); zeroed. NULL on failure or overflow. */
void *t2__alloc_aligned(size_t count, size_t size);
void t2__free_aligned(void *p);

/* Overflow-checked a*b; returns 0 and sets *out, or -1 on overflow. */
int t2__mul_size(size_t a, size_t b, size_t *out);
/* Room for element n of a growing array v of *cap elements of elem bytes: v itself while n < *cap,
 * else v reallocated to twice its capacity (first elements at the start) and *cap updated. NULL
 * when out of memory or the size overflows; v is then still valid and *cap unchanged. */
void *t2__grow_array(void *v, size_t *cap, size_t n, size_t elem, size_t first);

/* mkdir -p: creates each missing directory of path 0700 (less what the umask takes); a prefix
 * that exists must be a directory. T2_EIO naming the directory, T2_EINVAL, T2_ENOMEM. */
int t2__mkdirs(const char *path);

/* Removes dir and everything in it, never following a symlink out of it (remove_tree.c); a dir
 * that is not there is no error. T2_EIO naming the first path that could not be removed. One
 * call at a time per process (nftw's callback keeps its error in a static). */
int t2__remove_tree(const char *dir);

/* n bytes from the kernel's random source (getrandom). T2_EIO if it fails. */
int t2__random_bytes(void *buf, size_t n);
/* When this process leads its process group (a rank: Open MPI makes it one), starts a guardian
 * (proc_group.c, "t2exp rank-guardian" in ps) that kills the group once this process has ended,
 * however it ended: what the trial started and left running (a helper, a server) ends with it.
 * Call before MPI is initialised (forking later can upset Open MPI's transports). 1 if a guardian
 * runs, 0 if not (no group of its own: the group would be someone else's; or fork failed, which
 * costs only the clean-up). */
int t2__guard_group(void);
/* The controller's trial guardian ("t2exp trial-guardian"): *wfd gets the write end of its pipe
 * (close-on-exec, non-blocking); t2__trial_guard_note tells it a trial group that started (live 1)
 * or that the controller ended (0). When *wfd closes, because the controller ended or was killed,
 * it kills every group still live. 1 if it started, 0 if not (*wfd -1; notes are then no-ops). */
int t2__trial_guard_start(int *wfd);
/* Stops this process by SIGTSTP's default action (a shell's job stop; every thread stops) even while
 * a handler of its own is installed, and returns once it is continued (fg, bg, SIGCONT) with that
 * handler back. In an orphaned process group the kernel drops the stop and it returns at once. */
void t2__stop_self(void);
void t2__trial_guard_note(int wfd, int group, int live); /* group: a pid_t (an int here) */

/* The cores this process may use: its affinity mask (taskset, a Slurm or container cpuset),
 * capped by its cgroup's CPU quota rounded up (docker --cpus, a Kubernetes limit). At least 1. */
int t2__usable_cores(void);

/* Seconds on the monotonic clock (for intervals only). */
double t2__now(void);

/* Per-layer wall time, for bench/cnn --profile: while acc is non-NULL (2 * t2_net_num_layers
 * doubles), every forward adds layer i's seconds to acc[i] and every backward to
 * acc[layers + i]. NULL stops it. */
struct t2_net;
void t2__net_profile(struct t2_net *net, double *acc);

/* " --home DIR" (shell-quoted where a shell would split or expand it) when the CLI was given
 * --home DIR, "" when the home is T2EXP_HOME's or the default: what every printed command the user
 * is told to run (`t2exp follow 3`) puts after "t2exp" so that it finds the same store
 * (home_hint.c). Set once by the CLI; a long path past its room gives "". */
void t2__hint_set_home(const char *dir);
const char *t2__hint_home(void);

#define T2__UNUSED(x) ((void)(x))

#endif
