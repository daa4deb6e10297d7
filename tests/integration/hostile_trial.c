/* hostile_trial.c — a trial that lies on the report channel, for ckpt_report_trust.sh: a tiny
 * one-layer model on four in-memory samples (so the runner really checkpoints it), which at batch
 * 60 writes a forged checkpoint report straight onto its runner's channel socket, framed as the
 * runner frames them (4-byte little-endian length, JSON). What the forgery claims comes from the
 * environment, which the forked runner inherits:
 *   HOSTILE_ATTACK  abs   a valid uuid and extension, plus "path": the victim (the old protocol)
 *                   dots  "uuid": "../../<...>/victim"
 *                   ext   a valid uuid and "ext": "/../../<...>/victim"
 *   HOSTILE_VICTIM  the absolute path of a file outside the experiment
 * Built by the test with the public header only: cc -shared -fPIC -I framework/include. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <t2exp.h>
#include "tiny_trial.h"

typedef struct {
    t2_net *net;
} hostile;

static int build_model(t2_ctx *ctx, void **state)
{
    hostile *h = calloc(1, sizeof *h);
    if (!h) return t2_seterr(T2_ENOMEM, "hostile: out of memory");
    *state = h;
    return tiny_net(ctx, &h->net);
}

/* The runner's channel: the forked runner's only socket. */
static int channel_fd(void)
{
    for (int fd = 3; fd < 1024; fd++) {
        struct stat sb;
        if (fstat(fd, &sb) == 0 && S_ISSOCK(sb.st_mode)) return fd;
    }
    return -1;
}

static int forge(int64_t batches)
{
    const char *attack = getenv("HOSTILE_ATTACK"), *victim = getenv("HOSTILE_VICTIM");
    if (!attack || !victim) return t2_seterr(T2_EINVAL, "hostile: HOSTILE_ATTACK and HOSTILE_VICTIM must be set");
    const char *uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
    char msg[8192];
    if (strcmp(attack, "abs") == 0)
        snprintf(msg, sizeof msg, "{\"type\":\"checkpoint\",\"uuid\":\"%s\",\"ext\":\".tar\",\"path\":\"%s\","
                 "\"batches\":%lld,\"bytes\":1}", uuid, victim, (long long)batches);
    else if (strcmp(attack, "dots") == 0)
        snprintf(msg, sizeof msg, "{\"type\":\"checkpoint\",\"uuid\":\"../../../../../../../..%s\",\"ext\":\"\","
                 "\"path\":\"%s\",\"batches\":%lld,\"bytes\":1}", victim, victim, (long long)batches);
    else
        snprintf(msg, sizeof msg, "{\"type\":\"checkpoint\",\"uuid\":\"%s\",\"ext\":\"/../../../../../../../..%s\","
                 "\"path\":\"%s\",\"batches\":%lld,\"bytes\":1}", uuid, victim, victim, (long long)batches);
    int fd = channel_fd();
    if (fd < 0) return t2_seterr(T2_EIO, "hostile: no channel socket");
    uint32_t n = (uint32_t)strlen(msg);
    unsigned char frame[8192 + 4] = {(unsigned char)n, (unsigned char)(n >> 8), (unsigned char)(n >> 16),
                                     (unsigned char)(n >> 24)};
    memcpy(frame + 4, msg, n);
    /* Said (and flushed) before it is sent: the controller kills the trial as soon as it reads it,
     * which would lose a line still in stdout's buffer. */
    printf("hostile: forged a checkpoint report (%s) at batch %lld\n", attack, (long long)batches);
    fflush(stdout);
    if (write(fd, frame, n + 4) != (ssize_t)(n + 4)) return t2_seterr(T2_EIO, "hostile: write failed");
    return T2_OK;
}

static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)state, (void)b;
    int64_t at = t2_ctx_batches_trained(ctx);
    int rc = at == 60 ? forge(at) : T2_OK;
    return rc ? rc : t2_metric(m, "loss", 1.0);
}

static int evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)ctx, (void)state, (void)b;
    return t2_metric(m, "loss", 1.0);
}

static void destroy(void *state)
{
    hostile *h = state;
    if (h) t2_net_free(h->net);
    free(h);
}

T2_TRIAL(.name = "hostile", .build_model = build_model, .build_training_loader = build_training_loader,
         .build_validation_loader = build_validation_loader, .train_batch = train_batch,
         .evaluate_batch = evaluate_batch, .destroy = destroy);
