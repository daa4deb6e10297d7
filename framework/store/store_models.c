/* store_models.c — the model registry (Determined's `det model`): a model is a name with numbered
 * versions, each naming a checkpoint of the store. What it is for: the checkpoint a user means to
 * keep, use and hand on gets a stable name ("model:fashion:3" wherever a CHECKPOINT is taken), and is
 * kept: garbage collection passes it by and its experiment cannot be deleted under it. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store_internal.h"
#include "t2exp/error.h"

int t2__model_name_check(const char *name)
{
    if (!name || !*name) return t2_seterr(T2_EINVAL, "a model needs a name");
    size_t n = strlen(name);
    if (n > 200) return t2_seterr(T2_EINVAL, "model name %.40s...: at most 200 characters", name);
    for (const char *p = name; *p; p++) {
        unsigned char c = (unsigned char)*p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                 c == '.';
        if (!ok)
            return t2_seterr(T2_EINVAL, "model name '%s': only letters, digits, '_', '-' and '.' (a ':' would end it "
                             "in model:NAME:VERSION)", name);
    }
    return T2_OK;
}

static const char SQL_MODEL_ID[] = "SELECT id FROM models WHERE name = ?1";
static const char SQL_MODEL_NEW[] = "INSERT INTO models (name, description, created_at) VALUES (?1, ?2, ?3)";
static const char SQL_MODEL_DESCRIBE[] = "UPDATE models SET description = ?2 WHERE id = ?1";
/* Only while the checkpoint is ACTIVE, checked in the statement that registers it: garbage
 * collection retires a checkpoint (t2__store_retire_checkpoint) in one statement too, and SQLite
 * runs one writer at a time, so a checkpoint is either registered or retired, never both. */
static const char SQL_VERSION_NEW[] =
    "INSERT INTO model_versions (model_id, version, checkpoint_uuid, created_at)"
    " SELECT ?1, coalesce(max(version), 0) + 1, ?2, ?3 FROM model_versions WHERE model_id = ?1"
    " AND EXISTS (SELECT 1 FROM checkpoints WHERE uuid = ?2 AND state = 'ACTIVE')"
    " RETURNING version";

/* The model's id into *id; 0 when there is none. */
static int model_id(t2__store *st, const char *name, int64_t *id)
{
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_MODEL_ID, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT)) != SQLITE_OK) return t2__store_err(st, rc, "bind");
    rc = sqlite3_step(s);
    *id = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? T2_OK : t2__store_err(st, rc, "find model");
    sqlite3_reset(s);
    return rc;
}

static int register_in(t2__store *st, const char *name, const char *checkpoint_uuid, const char *description,
                       int64_t *version);

int t2__store_model_register(t2__store *st, const char *name, const char *checkpoint_uuid, const char *description,
                             int64_t *version)
{
    if (!st || !checkpoint_uuid || !version) return t2_seterr(T2_EINVAL, "store: model_register: NULL argument");
    int rc = t2__model_name_check(name);
    if (rc) return rc;
    t2__checkpoint_row ck;
    /* Only an ACTIVE checkpoint: a deleted one's file is gone. */
    if ((rc = t2__store_checkpoint_by_uuid(st, checkpoint_uuid, &ck))) return rc;
    t2__checkpoint_row_free(&ck);
    /* One transaction: the model made, its next version numbered and taken, or neither. */
    if ((rc = t2__store_begin(st))) return rc;
    if ((rc = register_in(st, name, checkpoint_uuid, description, version))) {
        t2__store_rollback(st);
        return rc;
    }
    return t2__store_commit(st);
}

static int register_in(t2__store *st, const char *name, const char *checkpoint_uuid, const char *description,
                       int64_t *version)
{
    int64_t id;
    sqlite3_stmt *s;
    int rc;
    if ((rc = model_id(st, name, &id))) return rc;
    double now = t2__store_now(st);
    if (!id) {
        if ((rc = t2__store_stmt(st, SQL_MODEL_NEW, &s))) return rc;
        if (sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
            sqlite3_bind_text(s, 2, description, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
            sqlite3_bind_double(s, 3, now) != SQLITE_OK)
            return t2__store_err(st, sqlite3_errcode(st->db), "bind");
        if ((rc = t2__store_exec_stmt(st, s, "create model"))) return rc;
        id = sqlite3_last_insert_rowid(st->db);
    } else if (description) {
        if ((rc = t2__store_stmt(st, SQL_MODEL_DESCRIBE, &s))) return rc;
        if (sqlite3_bind_int64(s, 1, id) != SQLITE_OK || sqlite3_bind_text(s, 2, description, -1, SQLITE_TRANSIENT))
            return t2__store_err(st, sqlite3_errcode(st->db), "bind");
        if ((rc = t2__store_exec_stmt(st, s, "describe model"))) return rc;
    }
    if ((rc = t2__store_stmt(st, SQL_VERSION_NEW, &s))) return rc;
    if (sqlite3_bind_int64(s, 1, id) != SQLITE_OK || sqlite3_bind_text(s, 2, checkpoint_uuid, -1, SQLITE_TRANSIENT) ||
        sqlite3_bind_double(s, 3, now) != SQLITE_OK)
        return t2__store_err(st, sqlite3_errcode(st->db), "bind");
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *version = sqlite3_column_int64(s, 0);
    int inserted = rc == SQLITE_ROW;
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? T2_OK : t2__store_err(st, rc, "register model version");
    sqlite3_reset(s);
    if (!rc && !inserted) /* retired by garbage collection since it was looked up */
        rc = t2_seterr(T2_ENOTFOUND, "store %s: checkpoint %s was just deleted (garbage collection); register "
                       "a newer one", t2__store_path(st), checkpoint_uuid);
    return rc;
}

static const char SQL_MODEL_CKPT[] =
    "SELECT v.checkpoint_uuid, v.version FROM model_versions v JOIN models m ON m.id = v.model_id"
    " WHERE m.name = ?1 AND (?2 = 0 OR v.version = ?2) ORDER BY v.version DESC LIMIT 1";

int t2__store_model_checkpoint(t2__store *st, const char *name, int64_t version, t2__checkpoint_row *out)
{
    if (!st || !name || !out) return t2_seterr(T2_EINVAL, "store: model_checkpoint: NULL argument");
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_MODEL_CKPT, &s);
    if (rc) return rc;
    if (sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT) != SQLITE_OK || sqlite3_bind_int64(s, 2, version) != SQLITE_OK)
        return t2__store_err(st, sqlite3_errcode(st->db), "bind");
    rc = sqlite3_step(s);
    char uuid[64] = "";
    if (rc == SQLITE_ROW) snprintf(uuid, sizeof uuid, "%s", (const char *)sqlite3_column_text(s, 0));
    int found = rc == SQLITE_ROW;
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? T2_OK : t2__store_err(st, rc, "find model version");
    sqlite3_reset(s);
    if (rc) return rc;
    if (!found) {
        int64_t id;
        if ((rc = model_id(st, name, &id))) return rc;
        if (!id) return t2_seterr(T2_ENOTFOUND, "store %s: no model '%s' (t2exp model list)", t2__store_path(st), name);
        return t2_seterr(T2_ENOTFOUND, "store %s: model '%s' has no version %" PRId64 " (t2exp model describe %s)",
                         t2__store_path(st), name, version, name);
    }
    return t2__store_checkpoint_by_uuid(st, uuid, out);
}

/* The first model version naming one of the experiment's checkpoints, as model:NAME:V. */
static const char SQL_EXP_REGISTERED[] =
    "SELECT 'model:' || m.name || ':' || v.version FROM checkpoints c"
    " JOIN model_versions v ON v.checkpoint_uuid = c.uuid JOIN models m ON m.id = v.model_id"
    " WHERE c.experiment_id = ?1 ORDER BY m.name, v.version LIMIT 1";

/* 1 when a model version names one of the experiment's checkpoints (its model:NAME:V to as), 0
 * when none does, negative on store trouble. */
static int experiment_registered(t2__store *st, int64_t experiment_id, char *as, size_t size)
{
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_EXP_REGISTERED, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_int64(s, 1, experiment_id)) != SQLITE_OK) return t2__store_err(st, rc, "bind");
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) snprintf(as, size, "%s", (const char *)sqlite3_column_text(s, 0));
    rc = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : t2__store_err(st, rc, "find registered checkpoints");
    sqlite3_reset(s);
    return rc;
}

static const char SQL_RETIRE[] =
    "UPDATE checkpoints SET state = 'DELETED' WHERE uuid = ?1 AND state = 'ACTIVE'"
    " AND NOT EXISTS (SELECT 1 FROM model_versions WHERE checkpoint_uuid = ?1)";

int t2__store_retire_checkpoint(t2__store *st, const char *uuid)
{
    sqlite3_stmt *s;
    int rc;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_RETIRE, &s))) return rc;
    if ((rc = sqlite3_bind_text(s, 1, uuid, -1, SQLITE_TRANSIENT)) != SQLITE_OK) return t2__store_err(st, rc, "bind");
    if ((rc = t2__store_exec_stmt(st, s, "retire checkpoint"))) return rc;
    int retired = sqlite3_changes(st->db) == 1;
    return (rc = t2__store_write_done(st)) ? rc : retired;
}

static const char SQL_RETIRE_EXPERIMENT[] =
    "UPDATE checkpoints SET state = 'DELETED' WHERE experiment_id = ?1 AND state = 'ACTIVE'";

int t2__store_retire_experiment_checkpoints(t2__store *st, int64_t experiment_id, char *as, size_t size)
{
    sqlite3_stmt *s;
    int rc;
    /* The check and the marks in one write transaction: no registration comes between them. */
    if ((rc = t2__store_begin(st))) return rc;
    int reg = experiment_registered(st, experiment_id, as, size);
    if (!reg && !(rc = t2__store_stmt(st, SQL_RETIRE_EXPERIMENT, &s))) {
        if ((rc = sqlite3_bind_int64(s, 1, experiment_id)) != SQLITE_OK) rc = t2__store_err(st, rc, "bind");
        else rc = t2__store_exec_stmt(st, s, "retire checkpoints");
    }
    if (reg || rc) {
        t2__store_rollback(st);
        return reg ? reg : rc;
    }
    return t2__store_commit(st);
}

static const char SQL_MODEL_DELETE[] = "DELETE FROM models WHERE name = ?1";

int t2__store_model_delete(t2__store *st, const char *name)
{
    if (!st || !name) return t2_seterr(T2_EINVAL, "store: model_delete: NULL argument");
    sqlite3_stmt *s;
    int rc;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_MODEL_DELETE, &s))) return rc;
    if ((rc = sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT)) != SQLITE_OK) return t2__store_err(st, rc, "bind");
    if ((rc = t2__store_exec_stmt(st, s, "delete model"))) return rc;
    if (sqlite3_changes(st->db) != 1)
        return t2_seterr(T2_ENOTFOUND, "store %s: no model '%s' (t2exp model list)", t2__store_path(st), name);
    return t2__store_flush(st, 1);
}

/* ---- printing -------------------------------------------------------------------------- */

static const char SQL_MODELS[] =
    "SELECT m.name, count(v.version) AS versions, max(v.version) AS latest, m.description,"
    " " T2__SQL_ISO("m.created_at") " AS created FROM models m LEFT JOIN model_versions v ON v.model_id = m.id"
    " GROUP BY m.id ORDER BY m.name";

int t2__store_print_models(t2__store *st, t2__store_format fmt, FILE *out)
{
    return t2__store_print_query(st, SQL_MODELS, NULL, 0, NULL, fmt, out);
}

static const char SQL_MODEL_VERSIONS[] =
    "SELECT v.version, 'model:' || m.name || ':' || v.version AS ref, v.checkpoint_uuid AS checkpoint,"
    " t.experiment_id || '.' || t.ordinal AS trial, c.batches, c.metric, e.metric AS metric_name,"
    " " T2__SQL_ISO("v.created_at") " AS registered, c.path"
    " FROM model_versions v JOIN models m ON m.id = v.model_id JOIN checkpoints c ON c.uuid = v.checkpoint_uuid"
    " JOIN trials t ON t.id = c.trial_id JOIN experiments e ON e.id = c.experiment_id"
    " WHERE m.name = :name ORDER BY v.version";

int t2__store_print_model(t2__store *st, const char *name, t2__store_format fmt, FILE *out)
{
    int64_t id;
    int rc = model_id(st, name, &id);
    if (rc) return rc;
    if (!id) return t2_seterr(T2_ENOTFOUND, "store %s: no model '%s' (t2exp model list)", t2__store_path(st), name);
    t2__store_param p = {.name = ":name", .type = T2__P_TEXT, .s = name};
    return t2__store_print_query(st, SQL_MODEL_VERSIONS, &p, 1, NULL, fmt, out);
}
