// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's SQLite store and its state: changes survive a reopen, a
 * damaged row or file stops the agent and is never written, the directory
 * lock keeps a second writer out, the earlier state.json is imported and
 * kept, and a commit whose fsync fails is reported as of unknown outcome,
 * with every later change refused.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sqlite3.h>

#include "unit.h"
#include "../../agent/ops.h"
#include "../../agent/jobs.h"
#include "../../agent/store.h"


/* A policy of target arguments (the console's and the store's text). */
static struct ag_policy *pol(const char *args)
{
	static struct ag_policy p;
	struct ag_err e;

	if (ag_policy_parse(&p, args, "", &e))
		unit_fail(__FILE__, __LINE__, e.msg);
	return &p;
}

/* A volume's policy as the store's text. */
static const char *text(const struct ag_volume *v)
{
	static char args[AG_POLICY_MAX];
	char words[AG_APOLICY_MAX];
	struct ag_err e;

	if (ag_policy_format(&v->policy, v->size, v->pool, args, sizeof(args), words, sizeof(words), &e))
		snprintf(args, sizeof(args), "ERR %s", e.msg);
	return args;
}

static char dir[64];

static void fresh_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/sluice-db-XXXXXX");
	if (!mkdtemp(dir))
		abort();
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		abort();
}

static char *slurp(const char *name, size_t *len)
{
	char path[128], *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	*len = 0;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static const char *DOC =
	"{\"pools\": {\"p0\": {\"device\": \"/dev/null\", \"extents\": 64}},"
	" \"tenants\": {\"acme\": {\"ceilings\": {\"total_iops_sec\": 100}}},"
	" \"volumes\": {\"v1\": {\"tenant\": \"acme\", \"pool\": \"p0\", \"size\": 67108864,"
	" \"runs\": [[1, 1]], \"policy\": \"riops=500\", \"state\": \"ready\"}}}";

/* An agent without a kernel over dir, holding DOC. */
static int open_with_doc(struct ag_agent *a)
{
	struct ag_model m;
	struct ag_err e;
	char err[256];
	json_t *j = json_loads(DOC, 0, NULL);
	int rc;

	if (!j || ag_model_from_json(&m, j, err, sizeof(err)))
		return -1;
	json_decref(j);
	rc = ag_agent_open(a, dir, 0, false, &e) || ag_state_replace(a, &m, &e);
	ag_model_free(&m);
	return rc;
}

static void db_changes_survive_a_reopen(void)
{
	struct ag_volume_spec s = { .name = "v2", .tenant = "acme", .pool = "p0",
				    .size = 128 << 20, .policy = *pol("wiops=7") };
	struct ag_agent a;
	struct ag_err e;
	const struct ag_volume *v;

	fresh_dir();
	CHECK(open_with_doc(&a) == 0);
	CHECK(ag_volume_create(&a, &s, &e) == 0);
	CHECK(ag_volume_change(&a, "v1", 192 << 20, pol("riops=9"), false, &e) == 0);
	CHECK(ag_tenant_create(&a, "other", "", NULL, NULL, &e) == 0);
	ag_agent_close(&a);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	v = ag_state_volume(&a.st, "acme.v2");
	CHECK(v && v->size == 128 << 20 && !strcmp(text(v), "wiops=7") && v->nr_runs == 1);
	v = ag_state_volume(&a.st, "v1");
	CHECK(v && v->size == 192 << 20 && !strcmp(text(v), "riops=9"));
	CHECK(ag_state_tenant(&a.st, "other") && ag_state_tenant(&a.st, "acme")->nr_volumes == 2);
	/* 1 label + 3 extents of v1 + 2 of v2 */
	CHECK_EQ_U64(ag_pool_used(ag_state_pool(&a.st, "p0")), 5);
	/* a delete keeps the name and the extents until its job is done */
	CHECK(ag_volume_delete(&a, "acme.v2", &e) == 0);
	CHECK(ag_volume_create(&a, &s, &e) == -1 && e.code == AG_E_EXISTS);
	CHECK(ag_jobs_run_deletes(&a, &e) == 0);
	CHECK(!ag_state_volume(&a.st, "acme.v2"));
	CHECK_EQ_U64(ag_pool_used(ag_state_pool(&a.st, "p0")), 3);
	ag_agent_close(&a);
	cleanup();
}

/* A row changed behind the agent's back: its checksum gives it away. */
static void db_damaged_row_stops_the_agent_and_is_kept(void)
{
	struct ag_agent a;
	struct ag_err e;
	char path[128], *before, *after;
	size_t blen, alen;
	sqlite3 *h;

	fresh_dir();
	CHECK(open_with_doc(&a) == 0);
	ag_agent_close(&a);
	snprintf(path, sizeof(path), "%s/state.db", dir);
	CHECK(sqlite3_open(path, &h) == SQLITE_OK);
	CHECK(sqlite3_exec(h, "UPDATE volumes SET policy = 'riops=501'", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(h);
	before = slurp("state.db", &blen);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == -1);
	CHECK(e.code == AG_E_CORRUPT && strstr(e.msg, "checksum"));
	after = slurp("state.db", &alen);
	CHECK(blen == alen && !memcmp(before, after, blen));
	free(before);
	free(after);
	cleanup();
}

static void db_garbage_file_stops_the_agent_and_is_kept(void)
{
	struct ag_agent a;
	struct ag_err e;
	char path[128], junk[8192], *after;
	size_t alen;
	FILE *f;

	fresh_dir();
	memset(junk, 'x', sizeof(junk));
	snprintf(path, sizeof(path), "%s/state.db", dir);
	f = fopen(path, "wb");
	CHECK(f && fwrite(junk, 1, sizeof(junk), f) == sizeof(junk));
	fclose(f);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == -1);
	CHECK(e.code == AG_E_CORRUPT);
	after = slurp("state.db", &alen);
	CHECK(alen == sizeof(junk) && !memcmp(after, junk, alen));
	free(after);
	cleanup();
}

struct holder {
	struct ag_agent *a;
	unsigned int ms;
};

static void *close_later(void *arg)
{
	struct holder *h = arg;

	usleep(h->ms * 1000);
	ag_agent_close(h->a);
	return NULL;
}

/* A console command beside the daemon is refused, or waits for the lock. */
static void db_lock_keeps_a_second_writer_out(void)
{
	struct ag_agent a, b;
	struct holder h = { &a, 300 };
	struct ag_err e;
	pthread_t t;

	fresh_dir();
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	CHECK(ag_agent_open(&b, dir, 0, false, &e) == -1);
	CHECK(e.code == AG_E_BUSY && strstr(e.msg, "in use"));
	CHECK(pthread_create(&t, NULL, close_later, &h) == 0);
	CHECK(ag_agent_open(&b, dir, 5, false, &e) == 0);
	pthread_join(t, NULL);
	ag_agent_close(&b);
	cleanup();
}

/* The store's earlier format is imported at the first open and kept. */
static void db_imports_state_json_and_keeps_it(void)
{
	struct ag_store s;
	struct ag_agent a;
	struct ag_err e;
	char err[256], *before, *after;
	size_t blen, alen;
	json_t *j = json_loads(DOC, 0, NULL);

	fresh_dir();
	CHECK(j && ag_store_open(&s, dir) == 0 && ag_store_save(&s, j, err, sizeof(err)) == 0);
	ag_store_close(&s);
	json_decref(j);
	before = slurp("state.json", &blen);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	CHECK(ag_state_volume(&a.st, "v1") && !strcmp(text(ag_state_volume(&a.st, "v1")), "riops=500"));
	CHECK(ag_state_tenant(&a.st, "acme")->ceilings.set == 1ULL << 3);
	CHECK(ag_state_tenant(&a.st, "acme")->ceilings.value[3] == 100);
	CHECK(ag_tenant_delete(&a, "acme", &e) == -1 && e.code == AG_E_BUSY);
	ag_agent_close(&a);
	after = slurp("state.json", &alen);
	CHECK(before && blen == alen && !memcmp(before, after, blen));
	free(before);
	free(after);
	/* imported once: a change is not undone by the document at the next open */
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	CHECK(ag_volume_change(&a, "v1", 0, pol("riops=7"), false, &e) == 0);
	ag_agent_close(&a);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	CHECK(!strcmp(text(ag_state_volume(&a.st, "v1")), "riops=7"));
	ag_agent_close(&a);
	cleanup();
}

static void db_corrupt_state_json_is_not_imported(void)
{
	struct ag_agent a;
	struct ag_err e;
	char path[128];
	FILE *f;

	fresh_dir();
	snprintf(path, sizeof(path), "%s/state.json", dir);
	f = fopen(path, "w");
	CHECK(f);
	fputs("{\"format\": \"sluice-state\", \"version\": 1, \"generation\": 1, \"checksum\": \"0\", \"state\": {}}", f);
	fclose(f);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == -1 && e.code == AG_E_CORRUPT);
	snprintf(path, sizeof(path), "%s/state.db", dir);
	CHECK(access(path, F_OK) != 0);
	cleanup();
}

/*
 * fsync and fdatasync, failing on demand: what a disk that loses a write
 * looks like to SQLite (these definitions take the place of the C
 * library's for the whole program, SQLite's calls included).
 */
static int fail_sync;

int fsync(int fd)
{
	if (fail_sync) {
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd)
{
	if (fail_sync) {
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fdatasync, fd);
}

static void db_failed_fsync_is_an_unknown_outcome(void)
{
	struct ag_volume_spec s = { .name = "v2", .tenant = "acme", .pool = "p0",
				    .size = 64 << 20, .policy = *pol("") };
	struct ag_agent a;
	struct ag_err e;
	bool on_disk;

	fresh_dir();
	CHECK(open_with_doc(&a) == 0);
	fail_sync = 1;
	/* a grow that would have lengthened v1's run in place: its extent is given back */
	CHECK(ag_volume_change(&a, "v1", 128 << 20, NULL, false, &e) == -1);
	CHECK(e.code == AG_E_UNKNOWN);
	CHECK_EQ_U64(ag_pool_used(ag_state_pool(&a.st, "p0")), 1);
	CHECK(ag_state_volume(&a.st, "v1")->size == 64 << 20);
	/* the state takes nothing more, and no later change is taken */
	CHECK(ag_volume_create(&a, &s, &e) == -1 && e.code == AG_E_UNKNOWN);
	CHECK(!ag_state_volume(&a.st, "acme.v2"));
	fail_sync = 0;
	CHECK(ag_volume_change(&a, "v1", 0, pol("riops=9"), false, &e) == -1 && e.code == AG_E_UNKNOWN);
	CHECK(ag_tenant_create(&a, "t9", "", NULL, NULL, &e) == -1 && e.code == AG_E_UNKNOWN);
	ag_agent_close(&a);
	/* opened again, the agent has what is on disk, and it holds together */
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	on_disk = ag_state_volume(&a.st, "v1")->size == 128 << 20;
	CHECK(!ag_state_volume(&a.st, "acme.v2"));
	CHECK_EQ_U64(ag_pool_used(ag_state_pool(&a.st, "p0")), on_disk ? 2 : 1);
	CHECK(!strcmp(text(ag_state_volume(&a.st, "v1")), "riops=500"));
	CHECK(ag_tenant_create(&a, "t9", "", NULL, NULL, &e) == 0);
	ag_agent_close(&a);
	cleanup();
}

/*
 * A volume stored with a size of 512s (before sizes were of 4096) can still
 * have its policy changed; a size past what the extents can count is
 * refused, and the store stays readable.
 */
static void db_sizes_old_and_huge(void)
{
	struct ag_volume_spec s = { .name = "big", .tenant = "acme", .pool = "p0",
				    .size = 18446744073709547520ULL, .policy = *pol("") };
	struct ag_model m;
	struct ag_agent a;
	struct ag_err e;
	char err[256];
	json_t *j = json_loads(DOC, 0, NULL);

	fresh_dir();
	CHECK(j);
	json_object_set_new(json_object_get(json_object_get(j, "volumes"), "v1"), "size",
			    json_integer(67108352));
	CHECK(ag_model_from_json(&m, j, err, sizeof(err)) == 0);
	json_decref(j);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0 && ag_state_replace(&a, &m, &e) == 0);
	ag_model_free(&m);
	CHECK(ag_volume_change(&a, "v1", 0, pol("riops=9"), false, &e) == 0);
	CHECK(ag_volume_change(&a, "v1", 67108352 + 1024, NULL, false, &e) == -1 && e.code == AG_E_INVALID);
	CHECK(ag_volume_create(&a, &s, &e) == -1 && e.code == AG_E_INVALID);
	s.size = 1ULL << 60;
	CHECK(ag_volume_create(&a, &s, &e) == -1 && e.code == AG_E_INVALID);
	CHECK(ag_volume_change(&a, "v1", 18446744073709547520ULL, NULL, false, &e) == -1);
	ag_agent_close(&a);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	CHECK(!strcmp(text(ag_state_volume(&a.st, "v1")), "riops=9"));
	ag_agent_close(&a);
	cleanup();
}


/*
 * A store of version 2 (no pools.uuid) reads without being written, and is
 * brought to 3 when opened to write: its rows' checksums still hold, and
 * from then on they cover the uuid.
 */
static void db_version_2_is_migrated(void)
{
	struct ag_agent a;
	struct ag_db *db;
	struct ag_model m;
	struct ag_err e;
	char path[128];
	sqlite3 *h;

	fresh_dir();
	CHECK(open_with_doc(&a) == 0);
	ag_agent_close(&a);
	snprintf(path, sizeof(path), "%s/state.db", dir);
	CHECK(sqlite3_open(path, &h) == SQLITE_OK);
	CHECK(sqlite3_exec(h, "ALTER TABLE pools DROP COLUMN uuid; ALTER TABLE pools DROP COLUMN capacity;"
			   "ALTER TABLE tenants DROP COLUMN quotas; DROP TABLE hosts; DROP TABLE exports;"
			   "DELETE FROM meta WHERE key = 'appliance';"
			   "UPDATE meta SET value = '2' WHERE key = 'version'", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(h);
	CHECK(ag_db_open_readonly(&db, dir, &e) == 0);
	CHECK(ag_db_load(db, &m, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
	CHECK(m.nr_pools == 1 && !m.pools[0].uuid[0]);
	ag_model_free(&m);
	ag_db_close(db);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	CHECK(ag_state_pool(&a.st, "p0") && ag_state_volume(&a.st, "v1"));
	/* a volume of before names were scoped: its name is its id */
	CHECK(ag_state_volume_named(&a.st, "acme", "v1") == ag_state_volume(&a.st, "v1"));
	/* a uuid stored, then read back */
	strcpy(ag_state_pool(&a.st, "p0")->uuid, "0123abcd-0000-4000-8000-00000000beef");
	ag_state_pool(&a.st, "p0")->capacity_iops = 1000;
	ag_state_pool(&a.st, "p0")->capacity_bps = 5;
	CHECK(ag_db_begin(a.db, &e) == 0);
	CHECK(ag_db_put_pool(a.db, ag_state_pool(&a.st, "p0"), &e) == 0 && ag_db_commit(a.db, &e) == 0);
	ag_agent_close(&a);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	CHECK(!strcmp(ag_state_pool(&a.st, "p0")->uuid, "0123abcd-0000-4000-8000-00000000beef"));
	CHECK(ag_state_pool(&a.st, "p0")->capacity_iops == 1000);
	CHECK(ag_state_pool(&a.st, "p0")->capacity_bps == 5);
	ag_agent_close(&a);
	/* the uuid is covered by the row's checksum */
	CHECK(sqlite3_open(path, &h) == SQLITE_OK);
	CHECK(sqlite3_exec(h, "UPDATE pools SET uuid = ''", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(h);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == -1 && e.code == AG_E_CORRUPT);
	cleanup();
}

/*
 * Names are the tenant's: two tenants each have a "db", on devices of
 * their own ids; a tenant's second "db" is refused; all of it survives a
 * reopen, and a stored row whose id is not its tenant's and name's is
 * corrupt.
 */
static void db_names_are_scoped_to_the_tenant(void)
{
	struct ag_volume_spec s = { .name = "db", .tenant = "acme", .pool = "p0",
				    .size = 64 << 20, .policy = *pol("") };
	const struct ag_volume *v;
	struct ag_agent a;
	struct ag_model m;
	struct ag_err e;
	char path[128], err[256];
	sqlite3 *h;
	json_t *j;

	fresh_dir();
	CHECK(open_with_doc(&a) == 0);
	CHECK(ag_tenant_create(&a, "zeta", "", NULL, NULL, &e) == 0);
	CHECK(ag_volume_create(&a, &s, &e) == 0);
	CHECK(ag_volume_create(&a, &s, &e) == -1 && e.code == AG_E_EXISTS);
	s.tenant = "zeta";
	CHECK(ag_volume_create(&a, &s, &e) == 0);
	/* "v1" is acme's of before: zeta may have one too */
	s.name = "v1";
	CHECK(ag_volume_create(&a, &s, &e) == 0);
	ag_agent_close(&a);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	v = ag_state_volume_named(&a.st, "acme", "db");
	CHECK(v && !strcmp(v->id, "acme.db") && !strcmp(v->tenant, "acme"));
	v = ag_state_volume_named(&a.st, "zeta", "db");
	CHECK(v && !strcmp(v->id, "zeta.db") && !strcmp(v->tenant, "zeta"));
	CHECK(ag_state_volume_named(&a.st, "zeta", "v1") == ag_state_volume(&a.st, "zeta.v1"));
	CHECK(ag_state_volume_named(&a.st, "acme", "v1") == ag_state_volume(&a.st, "v1"));
	CHECK(!ag_state_volume_named(&a.st, "acme", "zeta.db"));
	CHECK_EQ_U64(a.st.vols.nr, 4);
	CHECK(ag_state_tenant(&a.st, "zeta")->nr_volumes == 2);
	/* deleting one tenant's db leaves the other's */
	CHECK(ag_volume_delete(&a, "zeta.db", &e) == 0 && ag_jobs_run_deletes(&a, &e) == 0);
	CHECK(!ag_state_volume_named(&a.st, "zeta", "db") && ag_state_volume_named(&a.st, "acme", "db"));
	/* a whole state replaced (an import): the names are the new state's */
	j = json_loads(DOC, 0, NULL);
	CHECK(j && ag_model_from_json(&m, j, err, sizeof(err)) == 0);
	json_decref(j);
	CHECK(ag_state_replace(&a, &m, &e) == 0);
	ag_model_free(&m);
	CHECK(!ag_state_volume_named(&a.st, "acme", "db") && !ag_state_volume_named(&a.st, "zeta", "v1"));
	CHECK(ag_state_volume_named(&a.st, "acme", "v1") == ag_state_volume(&a.st, "v1"));
	s.tenant = "acme";
	CHECK(ag_volume_create(&a, &s, &e) == -1 && e.code == AG_E_EXISTS);
	s.name = "db";
	CHECK(ag_volume_create(&a, &s, &e) == 0);
	ag_agent_close(&a);
	/* an id that is not "<tenant>.<name>" is a damaged row */
	snprintf(path, sizeof(path), "%s/state.db", dir);
	CHECK(sqlite3_open(path, &h) == SQLITE_OK);
	CHECK(sqlite3_exec(h, "UPDATE volumes SET tenant = 'zeta' WHERE id = 'acme.db'", NULL, NULL,
			   NULL) == SQLITE_OK);
	sqlite3_close(h);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == -1 && e.code == AG_E_CORRUPT);
	cleanup();
}

/*
 * Hosts and exports are stored and come back; an appliance id is made
 * once and kept; each refusal changes nothing: another tenant's host, an
 * NQN another host has, deleting an exported volume, a host with exports,
 * a tenant with hosts.
 */
static void db_hosts_and_exports(void)
{
	struct ag_volume_spec s = { .name = "db", .tenant = "zeta", .pool = "p0",
				    .size = 64 << 20, .policy = *pol("") };
	const char *nqn_a = "nqn.2014-08.org.nvmexpress:uuid:0a", *nqn_z = "nqn.2014-08.example:z";
	char appliance[AG_UUID_TEXT], sub[AG_NQN_MAX + 1];
	struct ag_agent a;
	struct ag_err e;

	fresh_dir();
	CHECK(open_with_doc(&a) == 0);
	a.nvme_port.id = 1;
	CHECK(ag_uuid_valid(ag_db_appliance(a.db)));
	strcpy(appliance, ag_db_appliance(a.db));
	CHECK(ag_tenant_create(&a, "zeta", "", NULL, NULL, &e) == 0);
	CHECK(ag_volume_create(&a, &s, &e) == 0);
	CHECK(ag_host_add(&a, "acme", "web", nqn_a, NULL, &e) == 0);
	CHECK(ag_host_add(&a, "zeta", "web", nqn_z, NULL, &e) == 0);
	/* refused, each */
	CHECK(ag_host_add(&a, "zeta", "web2", nqn_a, NULL, &e) == -1 && e.code == AG_E_EXISTS);
	CHECK(ag_host_add(&a, "zeta", "web", "nqn.other", NULL, &e) == -1 && e.code == AG_E_EXISTS);
	CHECK(ag_host_add(&a, "zeta", "x", "nqn", NULL, &e) == -1 && e.code == AG_E_INVALID);
	CHECK(ag_host_add(&a, "zeta", "x", "nqn.a/b", NULL, &e) == -1 && e.code == AG_E_INVALID);
	CHECK(ag_host_add(&a, "nobody", "x", "nqn.x.y", NULL, &e) == -1 && e.code == AG_E_NOTFOUND);
	CHECK(ag_export_add(&a, "zeta.db", "nohost", &e) == -1 && e.code == AG_E_NOTFOUND);
	CHECK(ag_export_add(&a, "v1", "web", &e) == 0);
	CHECK(ag_export_add(&a, "v1", "web", &e) == 0);	/* again: as it is */
	CHECK(ag_export_add(&a, "zeta.db", "web", &e) == 0);
	CHECK(ag_state_host(&a.st, "acme", "web")->nr_exports == 1);
	CHECK(ag_volume_delete(&a, "v1", &e) == -1 && e.code == AG_E_BUSY);
	CHECK(ag_host_delete(&a, "acme", "web", &e) == -1 && e.code == AG_E_BUSY);
	CHECK(ag_tenant_create(&a, "h", "", NULL, NULL, &e) == 0);
	CHECK(ag_host_add(&a, "h", "one", "nqn.2014-08.example:h", NULL, &e) == 0);
	CHECK(ag_tenant_delete(&a, "h", &e) == -1 && e.code == AG_E_BUSY);
	CHECK(ag_host_delete(&a, "h", "one", &e) == 0 && ag_tenant_delete(&a, "h", &e) == 0);
	ag_subsys_nqn(&a, "zeta.db", sub);
	CHECK(!strncmp(sub, AG_NQN_PREFIX, strlen(AG_NQN_PREFIX)) && strstr(sub, appliance) &&
	      !strcmp(sub + strlen(sub) - 8, ":zeta.db"));
	ag_agent_close(&a);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	a.nvme_port.id = 1;
	CHECK(!strcmp(ag_db_appliance(a.db), appliance));
	CHECK(a.st.hosts.nr == 2 && a.st.exports.nr == 2);
	CHECK(ag_state_volume(&a.st, "v1")->nr_exports == 1);
	CHECK(!strcmp(ag_state_host(&a.st, "zeta", "web")->nqn, nqn_z));
	CHECK(ag_export_delete(&a, "v1", "web", &e) == 0);
	CHECK(ag_export_delete(&a, "v1", "web", &e) == -1 && e.code == AG_E_NOTFOUND);
	CHECK(ag_host_delete(&a, "acme", "web", &e) == 0);
	CHECK(ag_volume_delete(&a, "v1", &e) == 0);
	/* its NQN is free again */
	CHECK(ag_host_add(&a, "zeta", "web2", nqn_a, NULL, &e) == 0);
	ag_agent_close(&a);
	cleanup();
}

/*
 * A host's DH-HMAC-CHAP secret: a bad one is refused and nothing stored;
 * a good one is kept across a reopen and covered by the row's checksum. A
 * store of version 4 (hosts without the column) is brought to 5 with its
 * hosts' checksums intact.
 */
static void db_hosts_keep_their_secret(void)
{
	const char *secret = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
	char appliance[AG_UUID_TEXT];
	struct ag_agent a;
	struct ag_err e;
	char path[128];
	sqlite3 *h;

	fresh_dir();
	CHECK(open_with_doc(&a) == 0);
	CHECK(ag_tenant_create(&a, "zeta", "", NULL, NULL, &e) == 0);
	CHECK(ag_host_add(&a, "zeta", "plain", "nqn.2014-08.example:plain", NULL, &e) == 0);
	strcpy(appliance, ag_db_appliance(a.db));
	ag_agent_close(&a);
	/* back to version 4: no dhchap column */
	snprintf(path, sizeof(path), "%s/state.db", dir);
	CHECK(sqlite3_open(path, &h) == SQLITE_OK);
	CHECK(sqlite3_exec(h, "ALTER TABLE hosts DROP COLUMN dhchap;"
			   "UPDATE meta SET value = '4' WHERE key = 'version'", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(h);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	/* the appliance's id is in every subsystem's NQN: an upgrade keeps it */
	CHECK(!strcmp(ag_db_appliance(a.db), appliance));
	CHECK(ag_state_host(&a.st, "zeta", "plain") && !ag_state_host(&a.st, "zeta", "plain")->dhchap[0]);
	CHECK(ag_host_add(&a, "zeta", "bad", "nqn.2014-08.example:bad",
			  "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaS:", &e) == -1 &&
	      e.code == AG_E_INVALID && strstr(e.msg, "dhchap_secret"));
	CHECK(!ag_state_host(&a.st, "zeta", "bad"));
	CHECK(ag_host_add(&a, "zeta", "auth", "nqn.2014-08.example:auth", secret, &e) == 0);
	ag_agent_close(&a);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == 0);
	CHECK(!strcmp(ag_state_host(&a.st, "zeta", "auth")->dhchap, secret));
	CHECK(!ag_state_host(&a.st, "zeta", "plain")->dhchap[0]);
	ag_agent_close(&a);
	/* the secret is covered by the row's checksum */
	CHECK(sqlite3_open(path, &h) == SQLITE_OK);
	CHECK(sqlite3_exec(h, "UPDATE hosts SET dhchap = '' WHERE nqn LIKE '%auth'", NULL, NULL,
			   NULL) == SQLITE_OK);
	sqlite3_close(h);
	CHECK(ag_agent_open(&a, dir, 0, false, &e) == -1 && e.code == AG_E_CORRUPT);
	cleanup();
}

static const struct unit_test tests[] = {
	UNIT_TEST(db_hosts_keep_their_secret),
	UNIT_TEST(db_hosts_and_exports),
	UNIT_TEST(db_names_are_scoped_to_the_tenant),
	UNIT_TEST(db_version_2_is_migrated),
	UNIT_TEST(db_sizes_old_and_huge),
	UNIT_TEST(db_changes_survive_a_reopen),
	UNIT_TEST(db_damaged_row_stops_the_agent_and_is_kept),
	UNIT_TEST(db_garbage_file_stops_the_agent_and_is_kept),
	UNIT_TEST(db_lock_keeps_a_second_writer_out),
	UNIT_TEST(db_imports_state_json_and_keeps_it),
	UNIT_TEST(db_corrupt_state_json_is_not_imported),
	UNIT_TEST(db_failed_fsync_is_an_unknown_outcome),
};

UNIT_MAIN("db", tests)
