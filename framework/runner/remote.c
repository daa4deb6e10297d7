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
#include "channel_auth.h"
#include "remote.h"
#include "runner.h"
#include "trial_so.h"

t2__val *t2__remote_spec(const char *config_yaml, const char *const *overrides, int noverrides,
                         const char *trial_object, const t2__val *hparams, int64_t trial_id,
                         int64_t experiment_id, uint64_t seed, int threads, const char *ckpt_dir,
                         const char *restore_path, int warm_start)
{
    t2__val *m = t2__val_map(), *ov = t2__val_list();
    for (int i = 0; ov && i < noverrides; i++) t2__val_list_append(ov, t2__val_string(overrides[i]));
    int rc = t2__val_map_set(m, "type", t2__val_string("spec"));
    if (!rc) rc = t2__val_map_set(m, "config_yaml", t2__val_string(config_yaml));
    if (!rc) rc = t2__val_map_set(m, "overrides", ov);
    else t2__val_free(ov);
    if (!rc) rc = t2__val_map_set(m, "trial_object", t2__val_string(trial_object));
    if (!rc) rc = t2__val_map_set(m, "hparams", t2__val_copy(hparams));
    if (!rc) rc = t2__val_map_set(m, "trial_id", t2__val_int(trial_id));
    if (!rc) rc = t2__val_map_set(m, "experiment_id", t2__val_int(experiment_id));
    /* JSON integers are signed: the seed travels as its two 32-bit halves. */
    if (!rc) rc = t2__val_map_set(m, "seed_hi", t2__val_int((int64_t)(seed >> 32)));
    if (!rc) rc = t2__val_map_set(m, "seed_lo", t2__val_int((int64_t)(seed & 0xffffffffu)));
    if (!rc) rc = t2__val_map_set(m, "threads", t2__val_int(threads));
    if (!rc && ckpt_dir) rc = t2__val_map_set(m, "ckpt_dir", t2__val_string(ckpt_dir));
    if (!rc && restore_path) rc = t2__val_map_set(m, "restore_path", t2__val_string(restore_path));
    if (!rc) rc = t2__val_map_set(m, "warm_start", t2__val_bool(warm_start));
    if (rc) {
        t2__val_free(m);
        return NULL;
    }
    return m;
}

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

static const char *str_of(const t2__val *m, const char *k)
{
    const t2__val *v = t2__val_map_get(m, k);
    return v && v->kind == T2__VAL_STRING ? v->s : NULL;
}

static int64_t int_of(const t2__val *m, const char *k)
{
    const t2__val *v = t2__val_map_get(m, k);
    return v && v->kind == T2__VAL_INT ? v->i : 0;
}

int t2__remote_main(const char *connect, int64_t trial_id, int *argc, char ***argv)
{
    t2__comm comm;
    int fd = -1, status = 2;
    char *text = NULL;
    size_t len = 0;
    t2__val *spec = NULL;
    t2__config *cfg = NULL;
    t2__trial_so so;
    memset(&so, 0, sizeof so);
    const char **ovr = NULL;
    int rc = t2__comm_init_auto(&comm, argc, argv);
    if (rc) {
        fprintf(stderr, "t2exp run-trial: %s\n", t2_errmsg());
        return 2;
    }
    if (comm.rank != 0) unsetenv(T2__AUTH_KEY_ENV); /* only rank 0 answers the controller */
    if (comm.rank == 0) {
        /* The spec names a trial object to load and a directory to write: take it only from a
         * controller that proves it launched this trial (channel_auth.h). */
        t2__val *m = NULL;
        unsigned char key[T2__AUTH_KEY_BYTES];
        rc = t2__auth_key_from_env(key);
        if (!rc) rc = tcp_connect(connect, &fd);
        if (!rc) rc = t2__auth_connect(fd, key, trial_id, 30000);
        if (!rc) rc = t2__channel_recv(fd, &m);
        if (!rc && (!m || strcmp(t2__msg_type(m), "spec") != 0))
            rc = t2_seterr(T2_EFORMAT, "the controller at %s sent no trial spec", connect);
        if (!rc) rc = t2__val_to_json(m, &text, &len);
        t2__val_free(m);
        if (rc) fprintf(stderr, "t2exp run-trial: %s\n", t2_errmsg());
    }
    /* Everybody learns whether rank 0 got a spec (NULL text: no). */
    int brc = t2__comm_broadcast_msg(&comm, &text, &len);
    if (brc || !text) goto out;
    size_t off;
    if ((rc = t2__val_from_json(text, len, &spec, &off))) goto report;
    const t2__val *ol = t2__val_map_get(spec, "overrides");
    int novr = ol && ol->kind == T2__VAL_LIST ? (int)ol->n : 0;
    ovr = calloc((size_t)novr + 1, sizeof *ovr);
    for (int i = 0; ovr && i < novr; i++) ovr[i] = ol->items[i]->kind == T2__VAL_STRING ? ol->items[i]->s : "";
    const char *yaml = str_of(spec, "config_yaml"), *object = str_of(spec, "trial_object");
    if (!ovr || !yaml || !object) {
        rc = t2_seterr(T2_EFORMAT, "incomplete trial spec");
        goto report;
    }
    if ((rc = t2__config_load_string(yaml, "trial spec config", ovr, novr, &cfg)) ||
        (rc = t2__trial_so_open(object, &so)))
        goto report;
    uint64_t seed = (uint64_t)int_of(spec, "seed_hi") << 32 | (uint64_t)int_of(spec, "seed_lo");
    const t2__val *warm = t2__val_map_get(spec, "warm_start");
    t2__runner_args a = {.cfg = cfg, .def = so.def, .hparams = t2__val_map_get(spec, "hparams"),
                         .trial_id = int_of(spec, "trial_id"), .seed = seed, .threads = (int)int_of(spec, "threads"),
                         .fd = fd, .experiment_id = int_of(spec, "experiment_id"), .ckpt_dir = str_of(spec, "ckpt_dir"),
                         .restore_path = str_of(spec, "restore_path"),
                         .warm_start = warm && warm->kind == T2__VAL_BOOL && warm->b, .comm = &comm};
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
    free(ovr);
    t2__val_free(spec);
    t2__config_free(cfg);
    t2__trial_so_close(&so);
    return status;
}
