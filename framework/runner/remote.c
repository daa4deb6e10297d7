/* remote.c — the mpirun side of a distributed trial. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "channel.h"
#include "protocol/protocol.h"
#include "channel_auth.h"
#include "internal.h"
#include "remote.h"
#include "runner.h"
#include "trial_so.h"

static int tcp_connect(const char *hostport, int *fd)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || (size_t)(colon - hostport) >= sizeof host)
        return t2_seterr(T2_EINVAL, "--connect %s: expected HOST:PORT", hostport);
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int e = getaddrinfo(host, colon + 1, &hints, &res);
    if (e) return t2_seterr(T2_EIO, "--connect %s: %s", hostport, gai_strerror(e));
    int s = -1;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        s = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (s < 0) continue;
        if (connect(s, ai->ai_addr, ai->ai_addrlen) == 0) break;
        close(s);
        s = -1;
    }
    freeaddrinfo(res);
    if (s < 0) return t2_seterr(T2_EIO, "--connect %s: %s", hostport, strerror(errno));
    *fd = s;
    return T2_OK;
}

int t2__remote_main(const char *connect, int64_t trial_id, int *argc, char ***argv)
{
    t2__comm comm;
    int fd = -1, status = 2;
    char *text = NULL;
    size_t len = 0;
    t2__msg spec;
    memset(&spec, 0, sizeof spec);
    t2__config *cfg = NULL;
    t2__trial_so so;
    memset(&so, 0, sizeof so);
    t2__guard_group(); /* what the trial starts ends with this rank (proc_group.c) */
    int rc = t2__comm_init_auto(&comm, argc, argv);
    if (rc) {
        fprintf(stderr, "t2exp run-trial: %s\n", t2_errmsg());
        return 2;
    }
    if (comm.rank != 0) unsetenv(T2__AUTH_KEY_ENV); /* only rank 0 answers the controller */
    if (comm.rank == 0) {
        /* The spec names a trial object to load and a directory to write: take it only from a
         * controller that proves it launched this trial (channel_auth.h). */
        t2__msg m;
        memset(&m, 0, sizeof m);
        unsigned char key[T2__AUTH_KEY_BYTES];
        rc = t2__auth_key_from_env(key);
        if (!rc) rc = tcp_connect(connect, &fd);
        if (!rc) rc = t2__auth_connect(fd, key, trial_id, 30000);
        if (!rc) rc = t2__msg_recv(fd, &m);
        if (!rc && m.kind != T2__MSG_SPEC)
            rc = t2_seterr(T2_EFORMAT, "the controller at %s sent no trial spec", connect);
        /* The other ranks get the spec as it came (they decode it again, checked the same way). */
        if (!rc) rc = t2__val_to_json(m.doc, &text, &len);
        t2__msg_free(&m);
        if (rc) fprintf(stderr, "t2exp run-trial: %s\n", t2_errmsg());
    }
    /* Everybody learns whether rank 0 got a spec (NULL text: no). */
    int brc = t2__comm_broadcast_msg(&comm, &text, &len);
    if (brc || !text) goto out;
    size_t off;
    t2__val *doc = NULL;
    if ((rc = t2__val_from_json(text, len, &doc, &off)) || (rc = t2__msg_decode(doc, &spec))) goto report;
    if (spec.kind != T2__MSG_SPEC) {
        rc = t2_seterr(T2_EFORMAT, "rank 0 relayed a %s message, not a trial spec", t2__msg_kind_name(spec.kind));
        goto report;
    }
    if ((rc = t2__config_load_string(spec.u.spec.config_yaml, "trial spec config", spec.u.spec.overrides,
                                     (int)spec.u.spec.noverrides, &cfg)) ||
        (rc = t2__trial_so_open(spec.u.spec.trial_object, &so)))
        goto report;
    t2__runner_args a = {.cfg = cfg, .def = so.def, .hparams = spec.u.spec.hparams, .trial_id = spec.u.spec.trial_id,
                         .seed = spec.u.spec.seed, .threads = (int)spec.u.spec.threads,
                         .parts = (int)spec.u.spec.parts, .fd = fd,
                         .experiment_id = spec.u.spec.experiment_id, .ckpt_dir = spec.u.spec.ckpt_dir,
                         .restore_path = spec.u.spec.restore_path, .warm_start = spec.u.spec.warm_start,
                         .comm = &comm};
    status = t2__runner_run(&a);
    goto out;
report:
    fprintf(stderr, "t2exp run-trial rank %d: %s\n", comm.rank, t2_errmsg());
    status = 2;
out:
    /* A failed rank must not finalize: the others may sit in a collective, and MPI_Finalize would
     * wait for them forever. Exiting non-zero makes mpirun end the whole job instead. */
    if (status == 0) t2__comm_finalize(&comm);
    if (fd >= 0) close(fd);
    free(text);
    t2__msg_free(&spec);
    t2__config_free(cfg);
    t2__trial_so_close(&so);
    return status;
}
