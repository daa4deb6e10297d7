/* protocol.h — every message between the controller and a trial runner (internal). This header is
 * the protocol's documentation; nothing else builds or reads these messages.
 *
 * Transport: channel.h frames (a 4-byte little-endian length, then one JSON object with a "type"
 * key), over a socketpair (a local trial, forked) or TCP (rank 0 of a trial started by mpirun).
 * T2__PROTOCOL_VERSION rises with any change here; "ready" and "hello" carry it, and each side
 * refuses a peer that speaks another version (a runner from another t2exp build).
 *
 * A distributed trial's TCP channel opens with the handshake of channel_auth.h:
 *   controller -> rank 0   challenge  {nonce}                 64 hex digits, fresh
 *   rank 0 -> controller   hello      {trial_id, nonce, mac, version}
 *   controller -> rank 0   welcome    {mac}
 *   controller -> rank 0   spec       the trial to run (what a forked runner inherits instead):
 *                          {config_yaml, overrides: [strings], trial_object, hparams: {...},
 *                           trial_id, experiment_id, seed_hi, seed_lo (the 64-bit seed in two
 *                           32-bit halves: JSON readers keep 53 bits), threads, parts,
 *                           ckpt_dir?, restore_path?, warm_start}
 * Then, on every channel:
 *   runner -> controller   ready      {batches_per_epoch, params, blas?, version}   once built
 *   controller -> runner   train      {length, report_at?: [batches...], last?: true}
 *                          length: the total length to reach, in searcher.max_length units.
 *                          last: the runner leaves after this op's done, without an exit (a
 *                          worker's trial's op to max_length, past which no searcher gives more;
 *                          one that did would find the trial paused, to continue from its
 *                          checkpoint).
 *                          report_at (ascending): in the first op of a trial that trained before,
 *                          the steps where its training-metric windows closed, which this run
 *                          closes them at too, so that a run without a checkpoint to continue from
 *                          reports the same means.
 *   runner -> controller   metrics    {kind: training|validation, batches, epoch, values: {name: number},
 *                          training only: batches_per_s, samples_per_s, data_s, compute_s, comm_s;
 *                          ask?: true (the runner waits for validated: checkpoint_policy best, or a
 *                          validation before the op's end that searcher.pruner judges)}
 *   controller -> runner   validated  {new_best, prune?: true}   the answer to ask; prune: the
 *                          trial is stopped here (it checkpoints and reports done at this step)
 *   runner -> controller   checkpoint {uuid, ext, batches, bytes, metric?}
 *                          written to <ckpt_dir>/<uuid><ext>, ext one of .tar .tar.gz .tar.zst. No
 *                          path: the controller makes it from uuid and ext inside the experiment's
 *                          checkpoint directory and refuses a report whose file is not there.
 *   runner -> controller   checkpoint_failed {message, batches}   the previous one stays the latest
 *   runner -> controller   done       {batches}   the train op is complete (validated, checkpointed)
 *   runner -> controller   stopped    {batches}   after SIGTERM: checkpointed, exiting
 *   controller -> runner   exit       {}
 *   controller -> runner   stop       {}   pause: finish the batch, checkpoint, say stopped and
 *                          leave (as SIGTERM asks a local runner). How a distributed trial's rank 0
 *                          is asked: it reads its channel between batches and while it waits, and
 *                          the channel is the controller's own (mpirun's forwarding of a signal is
 *                          a setting of the site's Open MPI: with ess_base_forward_signals none,
 *                          SIGUSR1 killed mpirun). A runner ignores one that comes after its trial
 *                          ended.
 *   controller -> runner   threads    {threads}   1..64: from the next batch on, run on this many
 *                          threads (cores freed or taken by other trials). It may come at any
 *                          time, also while the runner waits for an op or a validated; the runner
 *                          never blocks on it (it polls between batches) and ignores one that
 *                          comes after its trial ended. The parts (spec, assign) never change, so
 *                          the numbers do not either.
 *   runner -> controller   error      {where, message, batches, invalid_hparams?, fatal?}
 *                          then the runner exits 1. invalid_hparams: the trial's hparams are
 *                          unusable (no restart; the searcher is told). fatal: the failure would
 *                          repeat on restart (no restart).
 *
 * A worker (resources.isolation: worker) is a long-lived local process, forked from the
 * controller, that runs one trial after another on its socketpair; it already holds the config,
 * the trial object and the experiment's checkpoint directory, so a trial needs only:
 *   controller -> worker   assign     {trial_id, seed_hi, seed_lo, threads, parts, hparams: {...},
 *                           restore_path?, warm_start}
 *                          then the channel carries that trial's messages as above (ready ...
 *                          exit), and when its runner returns:
 *   worker -> controller   finished   {status, log_end?}   the runner's exit status (0 ok, 1
 *                          failed), and the size of the worker's log with the trial's output
 *                          flushed (where its next trial's output starts: nothing is written
 *                          between trials; absent when unknown); the
 *                          worker then waits for the next assign, and exits at the end of
 *                          stream. The trial writes to the worker's own output (its log, which
 *                          the controller opened when it forked the worker: a file per trial
 *                          cost a file creation per trial).
 *
 * threads (spec, assign, threads) is the trial's thread count now; parts (1..64) is the count of
 * parts its layers split a batch into, fixed for the experiment (the most threads the trial could
 * ever get), so that a new thread count changes the speed and never the numbers.
 *
 * Decoding checks the type of every field, that required fields are there, and ranges (counts
 * not negative, uuids that are uuids); a message that fails is an error naming the message and
 * the field, never a message with fields missing. Unknown fields are ignored (a newer peer may
 * add some within a version); unknown kinds are errors. */
#ifndef T2_PROTOCOL_PROTOCOL_H
#define T2_PROTOCOL_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include "configs/value.h"

/* 5: metrics' ask (was ask_best) and validated's prune (searcher.pruner). */
#define T2__PROTOCOL_VERSION 5

typedef enum t2__msg_kind {
    T2__MSG_NONE, /* t2__msg_recv: the peer closed the channel between messages */
    /* runner -> controller */
    T2__MSG_READY,
    T2__MSG_METRICS,
    T2__MSG_CHECKPOINT,
    T2__MSG_CHECKPOINT_FAILED,
    T2__MSG_DONE,
    T2__MSG_STOPPED,
    T2__MSG_ERROR,
    T2__MSG_HELLO,
    T2__MSG_FINISHED,
    /* controller -> runner */
    T2__MSG_TRAIN,
    T2__MSG_EXIT,
    T2__MSG_VALIDATED,
    T2__MSG_SPEC,
    T2__MSG_CHALLENGE,
    T2__MSG_WELCOME,
    T2__MSG_ASSIGN,
    T2__MSG_THREADS,
    T2__MSG_STOP,
    T2__MSG_KINDS
} t2__msg_kind;

/* The timing a runner measured over a training window, beside its metrics. */
typedef struct t2__msg_timing {
    double batches_per_s, samples_per_s, data_s, compute_s, comm_s;
} t2__msg_timing;

/* A message. Strings and the values/hparams trees are borrowed: after t2__msg_decode they point
 * into the decoded document (held in doc, freed by t2__msg_free); to encode, point them at the
 * sender's own data. Optional strings are NULL when absent; optional numbers say so in has_*. */
typedef struct t2__msg {
    t2__msg_kind kind;
    union {
        struct { int64_t batches_per_epoch, params, version; const char *blas; } ready;
        struct {
            int validation;         /* kind: validation (1) or training (0) */
            int64_t batches;
            double epoch;           /* NAN: unknown */
            const t2__val *values;  /* a map of name -> number (int or double) */
            int has_timing;         /* training windows: timing is set */
            t2__msg_timing timing;
            int ask;
        } metrics;
        struct { const char *uuid, *ext; int64_t batches, bytes; int has_metric; double metric; } checkpoint;
        struct { const char *message; int64_t batches; } checkpoint_failed;
        struct { int64_t batches; } done, stopped;
        struct { const char *where, *message; int64_t batches; int invalid_hparams, fatal; } error;
        struct { int64_t trial_id, version; const char *nonce, *mac; } hello;
        /* last: the runner leaves after this op's done without waiting for an exit (the op takes
         * the trial to searcher.max_length, past which no searcher gives a trial more). */
        struct { int64_t length; const int64_t *report_at; size_t nreport_at; int last; } train;
        struct { int new_best, prune; } validated;
        struct {
            const char *config_yaml, *trial_object, *ckpt_dir, *restore_path; /* the last two: NULL if none */
            const char *const *overrides;
            size_t noverrides;
            const t2__val *hparams; /* a map */
            int64_t trial_id, experiment_id, threads, parts;
            uint64_t seed;
            int warm_start;
        } spec;
        struct { const char *nonce; } challenge;
        struct { const char *mac; } welcome;
        struct { int64_t status, log_end; } finished; /* log_end: -1 when absent */
        struct {
            const char *restore_path; /* NULL if none */
            const t2__val *hparams;              /* a map */
            const char *hparams_json;            /* to send: its JSON, if the sender has it (NULL) */
            int64_t trial_id, threads, parts;
            uint64_t seed;
            int warm_start;
        } assign;
        struct { int64_t threads; } threads;
    } u;
    /* Owned by a decoded message (NULL for one being encoded). */
    t2__val *doc;
    int64_t *owned_steps;
    const char **owned_strings;
} t2__msg;

/* msg_fast.c: text (len bytes, a frame's body) decoded without a tree when it is a runner's
 * ready, metrics, done or finished written as the runner's encoder writes them; 1 with *out that
 * message (exactly what t2__val_from_json and t2__msg_decode give for it), 0 with *out zeroed when
 * this path declines it (decode it the general way, which also says what is wrong with it). */
int t2__msg_decode_fast(const char *text, size_t len, t2__msg *out);

/* The kind's name on the wire ("ready", "checkpoint_failed", ...). */
const char *t2__msg_kind_name(t2__msg_kind kind);
/* 1 if runners send this kind, 0 if the controller does. */
int t2__msg_from_runner(t2__msg_kind kind);

/* The message as a JSON-ready tree (*out; free with t2__val_free). T2_ENOMEM, or T2_EINVAL for a
 * message that breaks its own rules (a missing required string, a negative count). */
int t2__msg_encode(const t2__msg *m, t2__val **out);
/* The message's JSON (the same bytes as t2__val_to_json of t2__msg_encode's tree) appended to out,
 * without building the tree. On an error nothing of it stays in out. */
int t2__msg_encode_json(const t2__msg *m, t2__json_out *out);
/* Checks and reads doc, taking ownership of it (also on failure). T2_EFORMAT names the message and
 * the field that is wrong; T2_EUNSUPPORTED for another protocol version. */
int t2__msg_decode(t2__val *doc, t2__msg *out);
/* Frees what a decoded message owns; zeroes it. */
void t2__msg_free(t2__msg *m);

/* Encode and send one message on a channel. */
int t2__msg_send(int fd, const t2__msg *m);
/* Encodes m into w, to go out with the writer's next flush (runner/channel.h). */
struct t2__chan_writer;
int t2__msg_put(struct t2__chan_writer *w, const t2__msg *m);
/* Receive and decode one message. T2__MSG_NONE: a clean end of stream. Errors as
 * t2__channel_recv and t2__msg_decode. */
int t2__msg_recv(int fd, t2__msg *out);
/* As t2__msg_recv for a peer not yet trusted: frames over max_frame bytes and silence past the
 * deadline (t2__now() seconds) are errors. */
int t2__msg_recv_by(int fd, t2__msg *out, size_t max_frame, double deadline);
/* As t2__msg_recv through a buffered reader (t2__chan_reader_each): *got = 0 when no complete
 * message is there yet (out zeroed); else out is the message (T2__MSG_NONE at the end of stream). */
struct t2__chan_reader;
int t2__msg_recv_buffered(struct t2__chan_reader *r, int fd, int may_read, t2__msg *out, int *got);

#endif
