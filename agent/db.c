// SPDX-License-Identifier: GPL-2.0
/* The agent's durable state in SQLite; see db.h. */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "db.h"
#include "log.h"
#include "store.h"

#define FORMAT "sluice-state"
/*
 * 1 was the JSON document, state.json; 3 added pools.uuid, pools.capacity
 * and tenants.quotas; 4 the hosts and exports tables; 5 hosts.dhchap (a
 * store of 2 to 4 is brought to 5 when it is opened for writing).
 */
#define SCHEMA_VERSION "5"
#define SEP "\x1f"

struct ag_db {
	sqlite3 *h;
	int lock_fd;
	bool broken;		/* a commit's outcome is unknown: no more changes */
	char *dir;
	pthread_mutex_t tx;	/* held from begin to commit or rollback */
	bool in_tx;
	int version;		/* of the schema, as opened (2 until migrated) */
	char appliance[AG_UUID_TEXT];	/* the appliance's id, "" until a writer made it */
};

#define HOSTS_EXPORTS \
	"CREATE TABLE hosts(id TEXT PRIMARY KEY, nqn TEXT NOT NULL, crc INTEGER NOT NULL," \
	" dhchap TEXT NOT NULL DEFAULT '');" \
	"CREATE TABLE exports(id TEXT PRIMARY KEY, crc INTEGER NOT NULL);"

static const char schema[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE pools(name TEXT PRIMARY KEY, device TEXT NOT NULL,"
	" extents INTEGER NOT NULL, crc INTEGER NOT NULL, uuid TEXT NOT NULL DEFAULT '',"
	" capacity TEXT NOT NULL DEFAULT '');"
	"CREATE TABLE tenants(id TEXT PRIMARY KEY, token_sha256 TEXT NOT NULL,"
	" ceilings TEXT NOT NULL, crc INTEGER NOT NULL, quotas TEXT NOT NULL DEFAULT '');"
	"CREATE TABLE volumes(id TEXT PRIMARY KEY, tenant TEXT NOT NULL, pool TEXT NOT NULL,"
	" size INTEGER NOT NULL, runs TEXT NOT NULL, policy TEXT NOT NULL,"
	" agent_policy TEXT NOT NULL, state TEXT NOT NULL, wiped INTEGER NOT NULL,"
	" deleting_since INTEGER NOT NULL, crc INTEGER NOT NULL);"
	HOSTS_EXPORTS
	"INSERT INTO meta VALUES('format', '" FORMAT "'), ('version', '" SCHEMA_VERSION "');";

static int sql_fail(struct ag_db *db, struct ag_err *e, const char *what)
{
	int rc = sqlite3_extended_errcode(db->h), prim = rc & 0xff;

	return ag_fail(e, prim == SQLITE_CORRUPT || prim == SQLITE_NOTADB ? AG_E_CORRUPT :
		       AG_E_INTERNAL, "%s/" AG_DB_FILE ": %s: %s", db->dir, what,
		       sqlite3_errmsg(db->h));
}

static int exec(struct ag_db *db, const char *sql, struct ag_err *e)
{
	if (sqlite3_exec(db->h, sql, NULL, NULL, NULL) != SQLITE_OK)
		return sql_fail(db, e, sql);
	return 0;
}

static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

static int lock_dir(const char *dir, unsigned int wait_s, int *fd, struct ag_err *e)
{
	char path[512];
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	unsigned int tries = wait_s * 10;

	snprintf(path, sizeof(path), "%s/lock", dir);
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (*fd < 0)
		return ag_fail(e, AG_E_INTERNAL, "%s: %s", path, strerror(errno));
	while (flock(*fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK || !tries--) {
			close(*fd);
			*fd = -1;
			return ag_fail(e, AG_E_BUSY, "%s: in use by another sluiced (the daemon, or a console command)%s",
				       dir, wait_s ? ", waited" : "");
		}
		nanosleep(&tick, NULL);
	}
	return 0;
}

static int open_handle(struct ag_db *db, const char *path, int flags, struct ag_err *e)
{
	if (sqlite3_open_v2(path, &db->h, flags | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		ag_fail(e, AG_E_INTERNAL, "%s: %s", path, db->h ? sqlite3_errmsg(db->h) : "out of memory");
		sqlite3_close(db->h);
		db->h = NULL;
		return -1;
	}
	sqlite3_busy_timeout(db->h, 10000);
	sqlite3_extended_result_codes(db->h, 1);
	return 0;
}

/* An existing database: SQLite's own check, then ours. Reads only. */
static int check_existing(struct ag_db *db, struct ag_err *e)
{
	sqlite3_stmt *st = NULL;
	const char *fmt = NULL, *ver = NULL;
	int rc = -1;

	if (sqlite3_prepare_v2(db->h, "PRAGMA quick_check", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		sql_fail(db, e, "quick_check");
		e->code = AG_E_CORRUPT;
		goto out;
	}
	if (strcmp((const char *)sqlite3_column_text(st, 0), "ok")) {
		ag_fail(e, AG_E_CORRUPT, "%s/" AG_DB_FILE ": quick_check: %s", db->dir,
			(const char *)sqlite3_column_text(st, 0));
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db->h, "SELECT (SELECT value FROM meta WHERE key = 'format'),"
			       " (SELECT value FROM meta WHERE key = 'version')", -1, &st,
			       NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
		sql_fail(db, e, "reading its format");
		e->code = AG_E_CORRUPT;
		goto out;
	}
	fmt = (const char *)sqlite3_column_text(st, 0);
	ver = (const char *)sqlite3_column_text(st, 1);
	if (!fmt || !ver || strcmp(fmt, FORMAT) || strlen(ver) != 1 || ver[0] < '2' || ver[0] > '5') {
		ag_fail(e, AG_E_CORRUPT, "%s/" AG_DB_FILE ": not a sluice state of version 2 to "
			SCHEMA_VERSION, db->dir);
		goto out;
	}
	db->version = atoi(ver);
	rc = 0;
out:
	sqlite3_finalize(st);
	return rc;
}

/* The appliance's id, as the store has it ("" for none). */
static int read_appliance(struct ag_db *db, struct ag_err *e)
{
	sqlite3_stmt *st = NULL;
	const char *v;

	db->appliance[0] = '\0';
	if (sqlite3_prepare_v2(db->h, "SELECT value FROM meta WHERE key = 'appliance'", -1, &st,
			       NULL) != SQLITE_OK)
		return sql_fail(db, e, "prepare");
	if (sqlite3_step(st) == SQLITE_ROW && (v = (const char *)sqlite3_column_text(st, 0)) &&
	    ag_uuid_valid(v))
		strcpy(db->appliance, v);
	sqlite3_finalize(st);
	return 0;
}

/*
 * SQLite syncs the directory when it makes the WAL file; at the last close
 * the WAL is written back into state.db and removed. A store of version 2
 * or 3 gains the columns and tables of the versions after it, and any
 * store its appliance id, in one transaction: its rows' checksums stay
 * valid, because a trailing empty field is not covered (crc_of).
 */
static int configure(struct ag_db *db, struct ag_err *e)
{
	static const char *const steps[] = {
		/* 2 to 3 */
		"ALTER TABLE pools ADD COLUMN uuid TEXT NOT NULL DEFAULT '';"
		"ALTER TABLE pools ADD COLUMN capacity TEXT NOT NULL DEFAULT '';"
		"ALTER TABLE tenants ADD COLUMN quotas TEXT NOT NULL DEFAULT '';",
		/* 3 to 4, with 5's column */
		HOSTS_EXPORTS,
		/* 4 to 5 */
		"ALTER TABLE hosts ADD COLUMN dhchap TEXT NOT NULL DEFAULT '';",
	};
	char uuid[AG_UUID_TEXT], sql[128];
	int v;

	if (exec(db, "PRAGMA journal_mode=WAL", e) || exec(db, "PRAGMA synchronous=FULL", e) ||
	    read_appliance(db, e))
		return -1;
	if (db->version == 5 && db->appliance[0])
		return 0;
	/*
	 * None yet, or one that is no UUID (read_appliance left it ""): a new
	 * one. One there is kept whatever else changes: it is in every
	 * subsystem's NQN and namespace UUID the hosts know.
	 */
	sql[0] = '\0';
	if (!db->appliance[0]) {
		if (ag_uuid_new(uuid))
			return ag_fail(e, AG_E_INTERNAL, "no random numbers for the appliance's id");
		snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO meta VALUES('appliance', '%s')",
			 uuid);
	}
	if (exec(db, "BEGIN IMMEDIATE", e))
		return -1;
	for (v = db->version; v < 5; v++) {
		/* a store of 3 gains hosts with the dhchap column already */
		if (v == 4 && db->version < 4)
			continue;
		if (exec(db, steps[v - 2], e))
			goto fail;
	}
	if ((sql[0] && exec(db, sql, e)) ||
	    exec(db, "UPDATE meta SET value = '" SCHEMA_VERSION "' WHERE key = 'version'", e) ||
	    exec(db, "COMMIT", e))
		goto fail;
	db->version = 5;
	return read_appliance(db, e);
fail:
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

const char *ag_db_appliance(const struct ag_db *db)
{
	return db->appliance;
}

static int first_store(struct ag_db *db, struct ag_err *e);

/* A handle of dir, not open yet; NULL with e set. */
static struct ag_db *db_new(const char *dir, struct ag_err *e)
{
	struct ag_db *db = calloc(1, sizeof(*db));

	if (!db || !(db->dir = strdup(dir))) {
		free(db);
		ag_fail(e, AG_E_INTERNAL, "out of memory");
		return NULL;
	}
	db->lock_fd = -1;
	pthread_mutex_init(&db->tx, NULL);
	return db;
}

int ag_db_open(struct ag_db **out, const char *dir, unsigned int lock_wait_s, struct ag_err *e)
{
	struct ag_db *db = db_new(dir, e);
	char path[512];

	*out = NULL;
	if (!db)
		return -1;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		ag_fail(e, AG_E_INTERNAL, "%s: %s", dir, strerror(errno));
		goto fail;
	}
	if (lock_dir(dir, lock_wait_s, &db->lock_fd, e))
		goto fail;
	snprintf(path, sizeof(path), "%s/" AG_DB_FILE, dir);
	if (access(path, F_OK) && first_store(db, e))
		goto fail;
	/* a new state.db's directory entry was synced when it was made, the WAL's by SQLite */
	if (open_handle(db, path, SQLITE_OPEN_READWRITE, e) || check_existing(db, e) ||
	    configure(db, e))
		goto fail;
	*out = db;
	return 0;
fail:
	ag_db_close(db);
	return -1;
}

int ag_db_open_readonly(struct ag_db **out, const char *dir, struct ag_err *e)
{
	struct ag_db *db = db_new(dir, e);
	char path[512];

	*out = NULL;
	if (!db)
		return -1;
	db->broken = true;	/* never written through */
	snprintf(path, sizeof(path), "%s/" AG_DB_FILE, dir);
	if (access(path, F_OK)) {
		ag_fail(e, AG_E_NOTFOUND, "%s: no state yet", path);
		goto fail;
	}
	if (open_handle(db, path, SQLITE_OPEN_READONLY, e) || check_existing(db, e) ||
	    read_appliance(db, e))
		goto fail;
	*out = db;
	return 0;
fail:
	ag_db_close(db);
	return -1;
}

void ag_db_close(struct ag_db *db)
{
	if (!db)
		return;
	sqlite3_close(db->h);
	if (db->lock_fd >= 0)
		close(db->lock_fd);
	pthread_mutex_destroy(&db->tx);
	free(db->dir);
	free(db);
}

int ag_db_begin(struct ag_db *db, struct ag_err *e)
{
	pthread_mutex_lock(&db->tx);
	if (db->broken) {
		pthread_mutex_unlock(&db->tx);
		return ag_fail(e, AG_E_UNKNOWN, "%s/" AG_DB_FILE ": a change failed mid-commit; no more changes until sluiced restarts and reads what is on disk",
			       db->dir);
	}
	if (exec(db, "BEGIN IMMEDIATE", e)) {
		pthread_mutex_unlock(&db->tx);
		return -1;
	}
	db->in_tx = true;
	return 0;
}

int ag_db_commit(struct ag_db *db, struct ag_err *e)
{
	int prim;

	if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) {
		db->in_tx = false;
		pthread_mutex_unlock(&db->tx);
		return 0;
	}
	prim = sqlite3_extended_errcode(db->h) & 0xff;
	if (prim == SQLITE_BUSY || prim == SQLITE_FULL) {
		sql_fail(db, e, "commit");
		ag_db_rollback(db);
		return -1;
	}
	/* after an I/O error nobody knows what reached the disk */
	db->broken = true;
	ag_fail(e, AG_E_UNKNOWN, "%s/" AG_DB_FILE ": commit: %s; whether the change is on disk is not known, and no more are taken until sluiced restarts and reads it",
		db->dir, sqlite3_errmsg(db->h));
	ag_db_rollback(db);
	return -1;
}

void ag_db_rollback(struct ag_db *db)
{
	/* a no-op when no change is open (a failed begin, or a commit that ended it) */
	if (!db->in_tx)
		return;
	if (!sqlite3_get_autocommit(db->h))
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	db->in_tx = false;
	pthread_mutex_unlock(&db->tx);
}

/*
 * The crc of a row's fields, joined by SEP. Trailing empty fields are left
 * out, so that a column added later with an empty default keeps the
 * checksums of the rows written before it.
 */
static uint32_t crc_of(const char *const *fields, size_t n)
{
	uint32_t crc = 0;
	size_t i;

	while (n && !fields[n - 1][0])
		n--;
	for (i = 0; i < n; i++) {
		if (i)
			crc = ag_crc32c(crc, SEP, 1);
		crc = ag_crc32c(crc, fields[i], strlen(fields[i]));
	}
	return crc;
}

/* Run one statement with text parameters; the crc of them is bound last when with_crc. */
static int run(struct ag_db *db, const char *sql, const char *const *p, size_t n, bool with_crc,
	       struct ag_err *e)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc;

	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(db, e, "prepare");
	for (i = 0; i < n; i++)
		sqlite3_bind_text(st, (int)i + 1, p[i], -1, SQLITE_STATIC);
	if (with_crc)
		sqlite3_bind_int64(st, (int)n + 1, crc_of(p, n));
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(db, e, "write");
	return 0;
}

int ag_db_put_pool(struct ag_db *db, const struct ag_pool *p, struct ag_err *e)
{
	char ext[24], cap[48] = "";
	const char *f[] = { p->name, p->device, ext, p->uuid, cap };

	snprintf(ext, sizeof(ext), "%" PRIu64, p->extents);
	/* "<IO/s>:<bytes/s>", or "" for none declared (a trailing empty field, as before it) */
	if (p->capacity_iops || p->capacity_bps)
		snprintf(cap, sizeof(cap), "%" PRIu64 ":%" PRIu64, p->capacity_iops, p->capacity_bps);
	return run(db, "INSERT OR REPLACE INTO pools(name, device, extents, uuid, capacity, crc)"
		   " VALUES(?, ?, CAST(?3 AS INTEGER), ?, ?, ?)", f, 5, true, e);
}

int ag_db_put_tenant(struct ag_db *db, const struct ag_tenant *t, struct ag_err *e)
{
	json_t *ceilings = ag_ceilings_to_json(&t->ceilings), *quotas = ag_quotas_to_json(&t->quotas);
	char *text = ceilings ? json_dumps(ceilings, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	/* "" for no quotas: a trailing empty field, as before the column was */
	char *qtext = quotas && json_object_size(quotas) ?
		      json_dumps(quotas, JSON_COMPACT | JSON_SORT_KEYS) : strdup("");
	const char *f[] = { t->id, t->token_sha256, text, qtext };
	int rc = -1;

	json_decref(ceilings);
	json_decref(quotas);
	if (!text || !qtext)
		ag_fail(e, AG_E_INTERNAL, "out of memory");
	else
		rc = run(db, "INSERT OR REPLACE INTO tenants(id, token_sha256, ceilings, quotas, crc)"
			 " VALUES(?, ?, ?, ?, ?)", f, 4, true, e);
	free(text);
	free(qtext);
	return rc;
}

/* One row in a transaction of its own: 0 once durable, else rolled back with e. */
static int store_one(struct ag_db *db, int (*put)(struct ag_db *, const void *, struct ag_err *),
		     const void *row, struct ag_err *e)
{
	if (ag_db_begin(db, e))
		return -1;
	if (put(db, row, e)) {
		ag_db_rollback(db);
		return -1;
	}
	if (ag_db_commit(db, e)) {
		if (e->code == AG_E_UNKNOWN)
			ag_log("error", "%s", e->msg);
		return -1;
	}
	return 0;
}

static int put_tenant(struct ag_db *db, const void *t, struct ag_err *e)
{
	return ag_db_put_tenant(db, t, e);
}

static int put_pool(struct ag_db *db, const void *p, struct ag_err *e)
{
	return ag_db_put_pool(db, p, e);
}

int ag_db_store_tenant(struct ag_db *db, const struct ag_tenant *t, struct ag_err *e)
{
	return store_one(db, put_tenant, t, e);
}

int ag_db_store_pool(struct ag_db *db, const struct ag_pool *p, struct ag_err *e)
{
	return store_one(db, put_pool, p, e);
}

int ag_db_del_tenant(struct ag_db *db, const char *id, struct ag_err *e)
{
	const char *f[] = { id };

	return run(db, "DELETE FROM tenants WHERE id = ?", f, 1, false, e);
}

int ag_db_put_volume(struct ag_db *db, const struct ag_volume *v, struct ag_err *e)
{
	char size[24], wiped[24], since[24], policy[AG_POLICY_MAX], words[AG_APOLICY_MAX];
	char *runs;
	const char *f[] = { v->id, v->tenant, v->pool, size, NULL, policy, words,
			    v->deleting ? "deleting" : "ready", wiped, since };
	size_t i, off = 0;
	int rc;

	/* the store's text of the policy: what is in force, and the agent's words */
	if (ag_policy_format(&v->policy, v->size, v->pool, policy, sizeof(policy), words,
			     sizeof(words), e))
		return -1;
	runs = malloc(v->nr_runs * 44 + 1);
	if (!runs)
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	f[4] = runs;
	runs[0] = '\0';
	for (i = 0; i < v->nr_runs; i++)
		off += (size_t)sprintf(runs + off, "%s%" PRIu64 ":%" PRIu64, i ? "," : "",
				       v->runs[i].start, v->runs[i].count);
	snprintf(size, sizeof(size), "%" PRIu64, v->size);
	snprintf(wiped, sizeof(wiped), "%" PRIu64, v->wiped);
	snprintf(since, sizeof(since), "%" PRId64, v->deleting_since);
	rc = run(db, "INSERT OR REPLACE INTO volumes VALUES(?, ?, ?, CAST(?4 AS INTEGER), ?, ?, ?, ?,"
		 " CAST(?9 AS INTEGER), CAST(?10 AS INTEGER), ?11)", f, 10, true, e);
	free(runs);
	return rc;
}

int ag_db_del_volume(struct ag_db *db, const char *id, struct ag_err *e)
{
	const char *f[] = { id };

	return run(db, "DELETE FROM volumes WHERE id = ?", f, 1, false, e);
}

int ag_db_put_host(struct ag_db *db, const struct ag_host *h, struct ag_err *e)
{
	const char *f[] = { h->key, h->nqn, h->dhchap };

	/* a host of no secret's row checksum is as in version 4 (crc_of) */
	return run(db, "INSERT OR REPLACE INTO hosts(id, nqn, dhchap, crc) VALUES(?, ?, ?, ?)", f, 3,
		   true, e);
}

int ag_db_del_host(struct ag_db *db, const char *key, struct ag_err *e)
{
	const char *f[] = { key };

	return run(db, "DELETE FROM hosts WHERE id = ?", f, 1, false, e);
}

int ag_db_put_export(struct ag_db *db, const struct ag_export *x, struct ag_err *e)
{
	const char *f[] = { x->key };

	return run(db, "INSERT OR REPLACE INTO exports(id, crc) VALUES(?, ?)", f, 1, true, e);
}

int ag_db_del_export(struct ag_db *db, const char *key, struct ag_err *e)
{
	const char *f[] = { key };

	return run(db, "DELETE FROM exports WHERE id = ?", f, 1, false, e);
}

static int put_host(struct ag_db *db, const void *h, struct ag_err *e)
{
	return ag_db_put_host(db, h, e);
}

static int del_host(struct ag_db *db, const void *key, struct ag_err *e)
{
	return ag_db_del_host(db, key, e);
}

static int put_export(struct ag_db *db, const void *x, struct ag_err *e)
{
	return ag_db_put_export(db, x, e);
}

static int del_export(struct ag_db *db, const void *key, struct ag_err *e)
{
	return ag_db_del_export(db, key, e);
}

int ag_db_store_host(struct ag_db *db, const struct ag_host *h, struct ag_err *e)
{
	return store_one(db, put_host, h, e);
}

int ag_db_drop_host(struct ag_db *db, const char *key, struct ag_err *e)
{
	return store_one(db, del_host, key, e);
}

int ag_db_store_export(struct ag_db *db, const struct ag_export *x, struct ag_err *e)
{
	return store_one(db, put_export, x, e);
}

int ag_db_drop_export(struct ag_db *db, const char *key, struct ag_err *e)
{
	return store_one(db, del_export, key, e);
}

int ag_db_clear(struct ag_db *db, struct ag_err *e)
{
	return exec(db, "DELETE FROM exports; DELETE FROM hosts; DELETE FROM volumes;"
		    " DELETE FROM tenants; DELETE FROM pools;", e);
}

int ag_db_put_model(struct ag_db *db, const struct ag_model *m, struct ag_err *e)
{
	size_t i;

	for (i = 0; i < m->nr_pools; i++)
		if (ag_db_put_pool(db, &m->pools[i], e))
			return -1;
	for (i = 0; i < m->nr_tenants; i++)
		if (ag_db_put_tenant(db, &m->tenants[i], e))
			return -1;
	for (i = 0; i < m->nr_vols; i++)
		if (ag_db_put_volume(db, &m->vols[i], e))
			return -1;
	for (i = 0; i < m->nr_hosts; i++)
		if (ag_db_put_host(db, &m->hosts[i], e))
			return -1;
	for (i = 0; i < m->nr_exports; i++)
		if (ag_db_put_export(db, &m->exports[i], e))
			return -1;
	return 0;
}

/*
 * Each row of a query, its text columns checked against its last (the crc),
 * added to an object of objects under its first column by the names given.
 * Integer columns are named with a leading '#'.
 */
static int read_rows(struct ag_db *db, const char *sql, const char *const *names, int n,
		     json_t *into, struct ag_err *e)
{
	sqlite3_stmt *st = NULL;
	const char *f[16];
	int rc, i;

	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(db, e, "prepare");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *row = json_object();

		for (i = 0; i < n; i++) {
			f[i] = (const char *)sqlite3_column_text(st, i);
			if (!f[i]) {
				json_decref(row);
				sqlite3_finalize(st);
				return ag_fail(e, AG_E_CORRUPT, "%s/" AG_DB_FILE ": a NULL field", db->dir);
			}
		}
		if ((uint32_t)sqlite3_column_int64(st, n) != crc_of(f, (size_t)n)) {
			json_decref(row);
			ag_fail(e, AG_E_CORRUPT, "%s/" AG_DB_FILE ": row %.64s: checksum mismatch (corrupt)",
				db->dir, f[0]);
			sqlite3_finalize(st);
			return -1;
		}
		for (i = 1; i < n; i++) {
			if (names[i][0] == '#')
				json_object_set_new(row, names[i] + 1,
						    json_integer(sqlite3_column_int64(st, i)));
			else if (names[i][0] == '@')
				json_object_set_new(row, names[i] + 1, json_loads(f[i], 0, NULL));
			else
				json_object_set_new(row, names[i], json_string(f[i]));
		}
		json_object_set_new(into, f[0], row);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(db, e, "read");
	return 0;
}

/* A pool's "<IO/s>:<bytes/s>" as the document's capacity_iops and capacity_bps. */
static int capacity_to_json(json_t *pools, struct ag_err *e)
{
	const char *name;
	json_t *p;

	json_object_foreach(pools, name, p) {
		const char *text = json_string_value(json_object_get(p, "capacity"));
		unsigned long long iops, bps;
		char tail;

		if (text && text[0]) {
			if (sscanf(text, "%llu:%llu%c", &iops, &bps, &tail) != 2)
				return ag_fail(e, AG_E_CORRUPT, "state: bad capacity of pool %s", name);
			json_object_set_new(p, "capacity_iops", json_integer((json_int_t)iops));
			json_object_set_new(p, "capacity_bps", json_integer((json_int_t)bps));
		}
		json_object_del(p, "capacity");
	}
	return 0;
}

/* "<first>:<count>,..." as the document's [[first, count], ...]. */
static int runs_to_json(json_t *vols, struct ag_err *e)
{
	const char *id;
	json_t *v;

	json_object_foreach(vols, id, v) {
		const char *text = json_string_value(json_object_get(v, "runs"));
		json_t *a = json_array();
		unsigned long long s, c;
		int used;

		while (text && *text) {
			if (sscanf(text, "%llu:%llu%n", &s, &c, &used) != 2) {
				json_decref(a);
				return ag_fail(e, AG_E_CORRUPT, "state: bad runs of volume %s", id);
			}
			json_array_append_new(a, json_pack("[I, I]", (json_int_t)s, (json_int_t)c));
			text += used;
			if (*text == ',')
				text++;
		}
		json_object_set_new(v, "runs", a);
	}
	return 0;
}

int ag_db_load(struct ag_db *db, struct ag_model *m, struct ag_err *e)
{
	static const char *const pool_f[] = { "name", "device", "#extents", "uuid", "capacity" };
	static const char *const tenant_f[] = { "id", "token_sha256", "@ceilings", "@quotas" };
	static const char *const vol_f[] = { "id", "tenant", "pool", "#size", "runs", "policy",
					     "agent_policy", "state", "#wiped", "#deleting_since" };
	static const char *const host_f[] = { "id", "nqn", "dhchap" };
	static const char *const export_f[] = { "id" };
	json_t *state = json_pack("{s:{}, s:{}, s:{}, s:{}, s:{}}", "pools", "tenants", "volumes",
				  "hosts", "exports");
	char err[400];
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (!state)
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	pthread_mutex_lock(&db->tx);
	if (exec(db, "BEGIN", e)) {
		pthread_mutex_unlock(&db->tx);
		goto out;
	}
	/* a store of version 2 read without migrating it (show, list) has no uuid */
	rc = read_rows(db, db->version == 2 ? "SELECT name, device, extents, '', '', crc FROM pools" :
		       "SELECT name, device, extents, uuid, capacity, crc FROM pools", pool_f, 5,
		       json_object_get(state, "pools"), e) ||
	     capacity_to_json(json_object_get(state, "pools"), e) ||
	     read_rows(db, db->version == 2 ? "SELECT id, token_sha256, ceilings, '', crc FROM tenants" :
		       "SELECT id, token_sha256, ceilings, quotas, crc FROM tenants", tenant_f, 4,
		       json_object_get(state, "tenants"), e) ||
	     read_rows(db, "SELECT id, tenant, pool, size, runs, policy, agent_policy, state, wiped,"
		       " deleting_since, crc FROM volumes", vol_f, 10, json_object_get(state, "volumes"), e) ||
	     runs_to_json(json_object_get(state, "volumes"), e) ||
	     (db->version >= 4 &&
	      (read_rows(db, db->version == 4 ? "SELECT id, nqn, '', crc FROM hosts" :
			 "SELECT id, nqn, dhchap, crc FROM hosts", host_f, 3,
			 json_object_get(state, "hosts"), e) ||
	       read_rows(db, "SELECT id, crc FROM exports", export_f, 1,
			 json_object_get(state, "exports"), e))) ? -1 : 0;
	sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
	pthread_mutex_unlock(&db->tx);
	if (rc)
		goto out;
	/* the same rules as an imported document: ids, policies, extents shared or out of range */
	if (ag_model_from_json(m, state, err, sizeof(err))) {
		rc = ag_fail(e, AG_E_CORRUPT, "%s/" AG_DB_FILE ": %s", db->dir, err);
		goto out;
	}
	rc = 0;
out:
	json_decref(state);
	return rc;
}

/*
 * A new state.db, holding m: built in state.db.tmp, synced, renamed into
 * place, the directory synced, so that a crash leaves either no state.db or
 * a whole one (never one without its tables).
 */
static int make_store(struct ag_db *db, const struct ag_model *m, struct ag_err *e)
{
	char tmp[512], path[512];
	struct ag_db t = { .lock_fd = -1, .dir = db->dir };
	int rc = -1, fd;

	snprintf(tmp, sizeof(tmp), "%s/" AG_DB_FILE ".tmp", db->dir);
	snprintf(path, sizeof(path), "%s/" AG_DB_FILE, db->dir);
	unlink(tmp);
	if (open_handle(&t, tmp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, e))
		goto out;
	if (exec(&t, "PRAGMA journal_mode=WAL", e) || exec(&t, "PRAGMA synchronous=FULL", e) ||
	    exec(&t, "BEGIN IMMEDIATE", e) || exec(&t, schema, e) || ag_db_put_model(&t, m, e) ||
	    exec(&t, "COMMIT", e))
		goto out;
	/* closing checkpoints the WAL into the file and removes it */
	sqlite3_close(t.h);
	t.h = NULL;
	fd = open(tmp, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fsync(fd) || close(fd) || rename(tmp, path) || sync_dir(db->dir)) {
		ag_fail(e, AG_E_INTERNAL, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	sqlite3_close(t.h);
	if (rc)
		unlink(tmp);
	return rc;
}

/*
 * The first open of a directory: the earlier format's document,
 * state.json, if there is one, into a new state.db (the document is kept);
 * else an empty state.db. A document that does not load is corrupt, and
 * nothing is made.
 */
static int first_store(struct ag_db *db, struct ag_err *e)
{
	char json_path[512], err[400];
	struct ag_store store;
	struct ag_model m = { 0 };
	json_t *state = NULL;
	int rc;

	snprintf(json_path, sizeof(json_path), "%s/" AG_DB_LEGACY_FILE, db->dir);
	if (access(json_path, F_OK))
		return make_store(db, &m, e);
	if (ag_store_open(&store, db->dir))
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	if (ag_store_load(&store, &state, err, sizeof(err))) {
		ag_store_close(&store);
		return ag_fail(e, AG_E_CORRUPT, "%s (not imported)", err);
	}
	ag_store_close(&store);
	if (ag_model_from_json(&m, state, err, sizeof(err))) {
		json_decref(state);
		return ag_fail(e, AG_E_CORRUPT, "%s: %s (not imported)", json_path, err);
	}
	json_decref(state);
	rc = make_store(db, &m, e);
	ag_model_free(&m);
	return rc;
}
