/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's durable state: an SQLite database, <dir>/state.db, in WAL
 * mode with synchronous=FULL, so a committed change survives a crash or a
 * power cut and an uncommitted one leaves no trace. Each change is one
 * transaction over its own rows:
 *
 *   meta(key, value)        format "sluice-state", schema version
 *   pools(name, device, extents, crc)
 *   tenants(id, token_sha256, ceilings, crc)
 *   volumes(id, tenant, pool, size, runs, policy, agent_policy, state,
 *           wiped, deleting_since, crc)
 *   hosts(id "<tenant>/<name>", nqn, crc)
 *   exports(id "<volume id>/<host name>", crc)
 *
 * meta also holds the appliance's id ("appliance", a UUID made when the
 * store is first opened for writing), from which exports' NQNs are made.
 *
 * runs is "<first>:<count>,..." (extents); crc is the crc32c of the row's
 * other fields, checked on every load, so a damaged row is found although
 * SQLite's pages carry no checksum. A database that does not open, fails
 * SQLite's quick_check, or holds a bad row is corrupt: the caller stops, and
 * the file is never written.
 *
 * A writer holds an exclusive flock on <dir>/lock for as long as the
 * database is open, so the daemon and a console command never write at
 * once. At the first open of a directory that has a state.json (the store's
 * earlier format) and no state.db, the document is imported whole and kept.
 *
 * A change holds the database's own mutex from begin to commit or rollback:
 * changes from several threads take turns. A new directory's state.db is
 * built aside and renamed into place, so a crash never leaves one without
 * its tables.
 */
#ifndef SLUICE_AGENT_DB_H
#define SLUICE_AGENT_DB_H

#include <stdbool.h>

#include "err.h"
#include "model.h"

#define AG_DB_FILE "state.db"
#define AG_DB_LEGACY_FILE "state.json"

struct ag_db;

/*
 * Open (creating) the database in dir for writing, waiting up to lock_wait_s
 * seconds for the directory's lock (AG_E_BUSY after that).
 */
int ag_db_open(struct ag_db **db, const char *dir, unsigned int lock_wait_s, struct ag_err *e);
/* Open it for reading only, without the lock (a reader sees the last commit). */
int ag_db_open_readonly(struct ag_db **db, const char *dir, struct ag_err *e);
void ag_db_close(struct ag_db *db);

/* The whole state as arrays (model.h), every row checked. */
int ag_db_load(struct ag_db *db, struct ag_model *m, struct ag_err *e);

/*
 * A change: begin, any of the puts and deletes, commit (durable on return)
 * or rollback; a failed commit has ended the change (rollback is then a
 * no-op). A commit that fails with an I/O
 * error is AG_E_UNKNOWN (the change may or may not be on disk): the
 * database then refuses every later change, until it is opened again and
 * what is on disk read.
 */
int ag_db_begin(struct ag_db *db, struct ag_err *e);
int ag_db_commit(struct ag_db *db, struct ag_err *e);
void ag_db_rollback(struct ag_db *db);

int ag_db_put_pool(struct ag_db *db, const struct ag_pool *p, struct ag_err *e);
int ag_db_put_tenant(struct ag_db *db, const struct ag_tenant *t, struct ag_err *e);
/* A tenant's or a pool's row in a transaction of its own (an outcome not known is logged). */
int ag_db_store_tenant(struct ag_db *db, const struct ag_tenant *t, struct ag_err *e);
int ag_db_store_pool(struct ag_db *db, const struct ag_pool *p, struct ag_err *e);
int ag_db_store_host(struct ag_db *db, const struct ag_host *h, struct ag_err *e);
int ag_db_drop_host(struct ag_db *db, const char *key, struct ag_err *e);
int ag_db_store_export(struct ag_db *db, const struct ag_export *x, struct ag_err *e);
int ag_db_drop_export(struct ag_db *db, const char *key, struct ag_err *e);
int ag_db_del_tenant(struct ag_db *db, const char *id, struct ag_err *e);
int ag_db_put_volume(struct ag_db *db, const struct ag_volume *v, struct ag_err *e);
int ag_db_del_volume(struct ag_db *db, const char *id, struct ag_err *e);
int ag_db_put_host(struct ag_db *db, const struct ag_host *h, struct ag_err *e);
int ag_db_del_host(struct ag_db *db, const char *key, struct ag_err *e);
int ag_db_put_export(struct ag_db *db, const struct ag_export *x, struct ag_err *e);
int ag_db_del_export(struct ag_db *db, const char *key, struct ag_err *e);
/* The appliance's id (a UUID), "" in a store not yet opened for writing. */
const char *ag_db_appliance(const struct ag_db *db);
/* Everything out, for an import that replaces the state. */
int ag_db_clear(struct ag_db *db, struct ag_err *e);

/* A model's rows into the open transaction, every one checked by model.c's rules. */
int ag_db_put_model(struct ag_db *db, const struct ag_model *m, struct ag_err *e);

#endif
