/* trial_mpi.c — starting a distributed trial's mpirun (rank 0's call back is launch.c's). */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "internal.h"
#include "runner/channel_auth.h"
#include "trial_proc.h"

extern char **environ;

int t2__listen_tcp(const char *addr, int *fd, int *port)
{
    /* Non-blocking: the event loop accepts until EAGAIN and never waits in accept. */
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0) return t2_seterr(T2_EIO, "controller: socket: %s", strerror(errno));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        close(s);
        return t2_seterr(T2_EINVAL, "controller: not an IPv4 address: %s", addr);
    }
    socklen_t sl = sizeof sa;
    if (bind(s, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(s, 16) != 0 ||
        getsockname(s, (struct sockaddr *)&sa, &sl) != 0) {
        int e = errno;
        close(s);
        return t2_seterr(T2_EIO, "controller: cannot listen on %s: %s", addr, strerror(e));
    }
    *fd = s;
    *port = ntohs(sa.sin_port);
    return T2_OK;
}

/* A launch's own Open MPI session directory: $TMPDIR/ompi.t2exp.<16 random hex digits>.
 * By default every mpirun of one user on a host shares $TMPDIR/ompi.<host>.<uid>, which the first
 * creates and the last removes; two mpiruns starting at once race on it and the loser's orte_init
 * fails ("orte_session_dir failed ... File exists": about 1 start in 900 with three at once here),
 * which lost a trial of a search running distributed trials side by side. A directory of its own
 * is created and removed by that mpirun (and by its daemons on other hosts) alone. */
int t2__mpi_session_new(char *out, size_t cap)
{
    uint64_t r;
    int rc = t2__random_bytes(&r, sizeof r);
    if (rc) return rc;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    int n = snprintf(out, cap, "%s/ompi.t2exp.%016" PRIx64, tmp, r);
    if (n < 0 || (size_t)n >= cap) return t2_seterr(T2_EINVAL, "$TMPDIR is too long for a session directory: %s", tmp);
    return T2_OK;
}

void t2__mpi_session_remove(const char *path)
{
    /* Only a name t2__mpi_session_new makes: whatever else a caller holds is not ours to remove. */
    const char *base = path ? strrchr(path, '/') : NULL;
    if (!base || strncmp(base + 1, "ompi.t2exp.", 11) != 0 || strlen(base + 12) != 16) return;
    if (t2__remove_tree(path)) t2_clearerr(); /* a leftover in $TMPDIR at worst, as before */
}

int t2__trial_mpi_start(const t2__mpi_launch *l, pid_t *pid, unsigned char key_out[T2__AUTH_KEY_BYTES])
{
    char np[16], trial[32];
    snprintf(np, sizeof np, "%d", l->slots);
    snprintf(trial, sizeof trial, "%lld", (long long)l->trial_id);
    /* 40 for the fixed arguments, 2 for each -x NAME of environment_variables. */
    if (l->nenv > 1000) return t2_seterr(T2_EINVAL, "more than 1000 environment_variables");
    const char **argv = malloc((40 + 2 * l->nenv) * sizeof *argv);
    char **names = calloc(l->nenv ? l->nenv : 1, sizeof *names);
    if (!argv || !names) {
        free(argv);
        free(names);
        return t2_seterr(T2_ENOMEM, "controller: out of memory");
    }
    int n = 0;
    argv[n++] = "mpirun";
    argv[n++] = "-np";
    argv[n++] = np;
    /* Slots are counted by the controller: with a hostfile it hands each trial its own slots;
     * on one machine it never starts more ranks than cores, whatever mpirun thinks a core is. */
    if (!l->hostfile) argv[n++] = "--oversubscribe";
    argv[n++] = "--bind-to";
    argv[n++] = "none";
    if (geteuid() == 0) argv[n++] = "--allow-run-as-root";
    if (l->hostfile) {
        argv[n++] = "--hostfile";
        argv[n++] = l->hostfile;
    }
    argv[n++] = "-x";
    argv[n++] = "OPENBLAS_NUM_THREADS=1";
    /* This launch's channel key, by name only: the value stays out of every command line. */
    unsigned char key[T2__AUTH_KEY_BYTES];
    char key_hex[2 * T2__AUTH_KEY_BYTES + 1];
    char session[PATH_MAX];
    int krc = t2__auth_key_new(key, key_hex);
    if (!krc) krc = t2__mpi_session_new(session, sizeof session);
    if (krc) {
        free(argv);
        free(names);
        return krc;
    }
    argv[n++] = "-x";
    argv[n++] = T2__AUTH_KEY_ENV;
    /* Local ranks inherit the environment; ranks on other hosts get only what is forwarded. */
    static const char *const forward[] = {"T2EXP_HOME", "FASHION_MNIST_DIR", "LD_LIBRARY_PATH", "PATH", "TMPDIR"};
    for (size_t k = 0; k < sizeof forward / sizeof forward[0] && n < 28; k++)
        if (getenv(forward[k])) {
            argv[n++] = "-x";
            argv[n++] = forward[k];
        }
    /* environment.environment_variables: set for mpirun (local ranks inherit them) and forwarded by
     * name to ranks on other hosts, like the variables above. */
    for (size_t k = 0; k < l->nenv; k++) {
        const char *eq = strchr(l->env[k], '=');
        if (!eq || !(names[k] = strndup(l->env[k], (size_t)(eq - l->env[k])))) {
            for (size_t j = 0; j < k; j++) free(names[j]);
            free(names);
            free(argv);
            return t2_seterr(eq ? T2_ENOMEM : T2_EINVAL, "bad environment variable %s", l->env[k]);
        }
        argv[n++] = "-x";
        argv[n++] = names[k];
    }
    argv[n++] = l->self_exe;
    argv[n++] = "run-trial";
    argv[n++] = "--connect";
    argv[n++] = l->connect_addr;
    argv[n++] = "--trial";
    argv[n++] = trial;
    argv[n] = NULL;
    /* mpirun's environment: the key, the session directory and environment_variables set. */
    char key_var[sizeof T2__AUTH_KEY_ENV + 2 * T2__AUTH_KEY_BYTES + 2], session_var[PATH_MAX + 40];
    snprintf(key_var, sizeof key_var, "%s=%s", T2__AUTH_KEY_ENV, key_hex);
    snprintf(session_var, sizeof session_var, "OMPI_MCA_orte_top_session_dir=%s", session);
    const char **set = malloc((l->nenv + 2) * sizeof *set);
    char **envp = NULL;
    int erc = set ? T2_OK : t2_seterr(T2_ENOMEM, "controller: out of memory");
    if (set) {
        set[0] = key_var;
        set[1] = session_var;
        for (size_t k = 0; k < l->nenv; k++) set[k + 2] = l->env[k];
        erc = t2__launch_env(set, l->nenv + 2, &envp);
        free(set);
    }
    if (erc) {
        for (size_t k = 0; k < l->nenv; k++) free(names[k]);
        free(names);
        free(argv);
        t2__mpi_session_remove(session);
        return erc;
    }
    int log = open(l->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    int oe = errno;
    pid_t p = -1, parent = 0;
    if (log >= 0) {
        fflush(NULL);
        parent = getpid();
        p = fork();
        oe = errno;
    }
    if (p != 0) { /* the parent (or nothing started): the child's copies are its own */
        for (size_t k = 0; k < l->nenv; k++) free(names[k]);
        free(names);
        free(argv);
        t2__launch_env_free(envp);
    }
    if (log < 0) return t2_seterr(T2_EIO, "cannot open the trial's log %s: %s", l->log_path, strerror(oe));
    if (p < 0) {
        close(log);
        return t2_seterr(T2_EIO, "fork: %s", strerror(oe));
    }
    if (p == 0) {
        /* mpirun leads a process group of its own (Open MPI gives each rank one too; trial_proc.c's
         * child_setup says why): a terminal's Ctrl-C reaches the controller alone. mpirun catches SIGINT
         * itself, whatever it inherits, and aborted the job at once, before its ranks could
         * checkpoint. Its stdin is not the terminal's, which it would forward to rank 0 (and,
         * outside the terminal's foreground group, be stopped for reading). */
        if (setpgid(0, 0) != 0) _exit(3);
        /* mpirun ends with the controller, by its own teardown of the ranks (trial_proc.c says why). */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent) _exit(3);
        signal(SIGINT, SIG_IGN); /* the controller stops trials with SIGTERM, which mpirun forwards */
        int nul = open("/dev/null", O_RDONLY);
        if (nul < 0 || dup2(nul, STDIN_FILENO) < 0) _exit(3);
        close(nul);
        for (int i = 0; i < l->nclose; i++)
            if (l->close_fds[i] >= 0) close(l->close_fds[i]);
        if (dup2(log, STDOUT_FILENO) < 0 || dup2(log, STDERR_FILENO) < 0) _exit(3);
        environ = envp;
        execvp("mpirun", (char *const *)argv);
        /* write, not fprintf: a fork of a threaded process may only make async-signal-safe calls
         * (stdio's lock could be held by a thread that is gone; review). The log is its stderr. */
        static const char no_mpirun[] = "t2exp: cannot run mpirun (not found on PATH, or not executable)\n";
        if (write(STDERR_FILENO, no_mpirun, sizeof no_mpirun - 1) < 0) _exit(127);
        _exit(127);
    }
    setpgid(p, p); /* as the child does; fails harmlessly once it has exec'd */
    close(log);
    if (l->session_out) snprintf(l->session_out, l->session_cap, "%s", session);
    memcpy(key_out, key, sizeof key);
    *pid = p;
    return T2_OK;
}
