// SPDX-License-Identifier: GPL-2.0
/*
 * sluiced: the agent that owns pools, tenants and volumes.
 *
 *   sluiced [-c <config>] [-s <state dir>] [-w <seconds>] <command> ...
 *
 * "daemon" serves the API (daemon.h); the other commands are the same
 * operations for the operator at the console: each opens the store (taking
 * its lock: with the daemon running a command is refused, or waits -w
 * seconds for it), changes it durably, converges the kernel and exits 0 only
 * then. show and list only read, and need no lock.
 *
 * Logs go to stderr, one line each (see log.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "daemon.h"
#include "jobs.h"
#include "log.h"
#include "ops.h"

#define STATE_DIR_DEFAULT "/var/lib/sluice"
#define CONFIG_DEFAULT "/etc/sluice/sluiced.conf"

struct console {
	const char *dir;
	const char *config;
	unsigned int lock_wait_s;
};

typedef int console_op(struct ag_agent *a, char **args, struct ag_err *e);

/* Run one operation with the store open; 0, or 1 with the error reported. */
/* Run a command's operation; every one is a change, so each leaves an audit line. */
static int with_agent(const struct console *con, console_op *op, char **argv)
{
	char what[512], err[512];
	struct ag_config cf;
	struct ag_agent a;
	struct ag_err e = { 0 };
	size_t used = 0;
	int rc, i;

	for (i = 0; argv[i] && used < sizeof(what) - 1; i++)
		used += (size_t)snprintf(what + used, sizeof(what) - used, "%s%s", i ? " " : "",
					 argv[i]);

	ag_config_defaults(&cf);
	if (ag_config_load(&cf, con->config, err, sizeof(err))) {
		ag_log("error", "%s", err);
		return 1;
	}
	if (ag_agent_open(&a, con->dir, con->lock_wait_s, true, &e)) {
		ag_log("error", "%s%s", e.msg, e.code == AG_E_CORRUPT ?
		       "; stopping, the store is left as it is" : "");
		return 1;
	}
	/* the same exports port and reservation share as the daemon's */
	ag_set_export_ports(&a, &cf.nvme_port, cf.tenant_ports, cf.nr_tenant_ports);
	a.reservation_pct = cf.reservation_pct;
	rc = op(&a, argv + 1, &e);
	if (rc)
		ag_log("error", "%s", e.msg[0] ? e.msg : "failed");
	ag_log("audit", "console (uid %u) %s: %s", (unsigned int)getuid(), what,
	       rc ? "failed" : "done");
	ag_agent_close(&a);
	return rc ? 1 : 0;
}

static int op_host_add(struct ag_agent *a, char **args, struct ag_err *e)
{
	/* no secret here: a console's arguments are logged and shown by ps */
	return ag_host_add(a, args[0], args[1], args[2], NULL, e);
}

static int op_host_delete(struct ag_agent *a, char **args, struct ag_err *e)
{
	return ag_host_delete(a, args[0], args[1], e);
}

static int op_export(struct ag_agent *a, char **args, struct ag_err *e)
{
	int rc;

	ag_volume_lock(a, args[0]);
	rc = ag_export_add(a, args[0], args[1], e);
	ag_volume_unlock(a, args[0]);
	return rc;
}

static int op_unexport(struct ag_agent *a, char **args, struct ag_err *e)
{
	int rc;

	ag_volume_lock(a, args[0]);
	rc = ag_export_delete(a, args[0], args[1], e);
	ag_volume_unlock(a, args[0]);
	return rc;
}

/* Deletes asked for now or left by a crash, finished before the command returns. */
static int op_reconcile(struct ag_agent *a, char **args, struct ag_err *e)
{
	struct ag_err del;
	int rc = ag_reconcile(a, e);

	(void)args;
	if (ag_jobs_run_deletes(a, &del) && !rc) {
		*e = del;
		rc = -1;
	}
	return rc;
}

static int op_pool_add(struct ag_agent *a, char **args, struct ag_err *e)
{
	return ag_pool_add(a, args[0], args[1], args[2] != NULL, 0, 0, e);
}

static int parse_size(const char *text, uint64_t *size)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-')
		return -1;
	*size = v;
	return 0;
}

static int op_create(struct ag_agent *a, char **args, struct ag_err *e)
{
	struct ag_volume_spec s = { .name = args[0], .tenant = args[1], .pool = args[2],
				    .make_tenant = true };
	char id[AG_VOLUME_ID_MAX + 1];
	int rc;

	if (parse_size(args[3], &s.size))
		return ag_fail(e, AG_E_INVALID, "size: bytes, a number");
	if (ag_policy_parse(&s.policy, args[4] ? args[4] : "", args[4] && args[5] ? args[5] : "", e))
		return -1;
	if (!ag_valid_id(s.name) || !ag_valid_id(s.tenant))
		return ag_fail(e, AG_E_INVALID, "name and tenant: 1 to %d of a-z 0-9 -, not ending in -data",
			       AG_ID_MAX);
	ag_volume_id_of(id, s.tenant, s.name);
	ag_volume_lock(a, id);
	rc = ag_volume_create(a, &s, e);
	ag_volume_unlock(a, id);
	return rc;
}

static int op_grow(struct ag_agent *a, char **args, struct ag_err *e)
{
	uint64_t size;
	int rc;

	if (parse_size(args[1], &size) || !size)
		return ag_fail(e, AG_E_INVALID, "size: bytes, a number");
	ag_volume_lock(a, args[0]);
	rc = ag_volume_change(a, args[0], size, NULL, false, e);
	ag_volume_unlock(a, args[0]);
	return rc;
}

static int op_set(struct ag_agent *a, char **args, struct ag_err *e)
{
	struct ag_policy policy;
	int rc;

	if (ag_policy_parse(&policy, args[1], args[2] ? args[2] : "", e))
		return -1;
	ag_volume_lock(a, args[0]);
	rc = ag_volume_change(a, args[0], 0, &policy, false, e);
	ag_volume_unlock(a, args[0]);
	return rc;
}

static int op_delete(struct ag_agent *a, char **args, struct ag_err *e)
{
	int rc;

	ag_volume_lock(a, args[0]);
	rc = ag_volume_delete(a, args[0], e);
	ag_volume_unlock(a, args[0]);
	return rc ? rc : ag_jobs_run_deletes(a, e);
}

static int op_import(struct ag_agent *a, char **args, struct ag_err *e)
{
	struct ag_model m;
	json_error_t jerr;
	char err[400];
	json_t *state = json_load_file(args[0], JSON_REJECT_DUPLICATES, &jerr);
	int rc;

	if (!state || !json_is_object(state)) {
		json_decref(state);
		return ag_fail(e, AG_E_INVALID, "%s: not a JSON object: %s", args[0], state ? "" : jerr.text);
	}
	rc = ag_model_from_json(&m, state, err, sizeof(err));
	json_decref(state);
	if (rc)
		return ag_fail(e, AG_E_INVALID, "%s: %s", args[0], err);
	rc = ag_state_replace(a, &m, e);
	ag_model_free(&m);
	return rc;
}

/*
 * The state as the document import takes, from the store as last
 * committed. Hosts' secrets only with secrets, else "redacted", which an
 * import refuses: a document shown to someone is not a way in.
 */
static json_t *state_json(const struct ag_state *st, bool secrets)
{
	json_t *pools = json_object(), *tenants = json_object(), *vols = json_object(), *hosts, *exports;
	void **all;
	size_t i, n;

	all = ag_state_sorted(&st->pools, &n);
	for (i = 0; i < n; i++) {
		const struct ag_pool *p = all[i];

		json_t *j = json_pack("{s:s, s:I}", "device", p->device, "extents",
				      (json_int_t)p->extents);

		if (j && p->uuid[0])
			json_object_set_new(j, "uuid", json_string(p->uuid));
		if (j && (p->capacity_iops || p->capacity_bps)) {
			json_object_set_new(j, "capacity_iops", json_integer((json_int_t)p->capacity_iops));
			json_object_set_new(j, "capacity_bps", json_integer((json_int_t)p->capacity_bps));
		}
		json_object_set_new(pools, p->name, j);
	}
	free(all);
	all = ag_state_sorted(&st->tenants, &n);
	for (i = 0; i < n; i++) {
		const struct ag_tenant *t = all[i];
		json_t *rec = json_pack("{s:o, s:o}", "ceilings", ag_ceilings_to_json(&t->ceilings),
					"quotas", ag_quotas_to_json(&t->quotas));

		if (t->token_sha256[0])
			json_object_set_new(rec, "token_sha256", json_string(t->token_sha256));
		json_object_set_new(tenants, t->id, rec);
	}
	free(all);
	all = ag_state_sorted(&st->vols, &n);
	for (i = 0; i < n; i++) {
		const struct ag_volume *v = all[i];
		char policy[AG_POLICY_MAX] = "", words[AG_APOLICY_MAX] = "";
		json_t *runs = json_array(), *j;
		struct ag_err e;

		if (ag_policy_format(&v->policy, v->size, v->pool, policy, sizeof(policy), words,
				     sizeof(words), &e))
			snprintf(policy, sizeof(policy), "? %s", e.msg);
		for (size_t r = 0; r < v->nr_runs; r++)
			json_array_append_new(runs, json_pack("[I, I]", (json_int_t)v->runs[r].start,
							      (json_int_t)v->runs[r].count));
		j = json_pack("{s:s, s:s, s:s, s:I, s:o, s:s, s:s}", "tenant", v->tenant, "name",
			      v->name, "pool", v->pool, "size", (json_int_t)v->size, "runs", runs, "policy", policy,
			      "state", v->deleting ? "deleting" : "ready");
		if (words[0])
			json_object_set_new(j, "agent_policy", json_string(words));
		if (v->deleting)
			json_object_set_new(j, "wiped", json_integer((json_int_t)v->wiped));
		json_object_set_new(vols, v->id, j);
	}
	free(all);
	hosts = json_object();
	all = ag_state_sorted(&st->hosts, &n);
	for (i = 0; i < n; i++) {
		const struct ag_host *h = all[i];

		json_object_set_new(hosts, h->key, json_pack("{s:s, s:s?}", "nqn", h->nqn, "dhchap",
							     !h->dhchap[0] ? NULL :
							     secrets ? h->dhchap : "redacted"));
	}
	free(all);
	exports = json_object();
	all = ag_state_sorted(&st->exports, &n);
	for (i = 0; i < n; i++)
		json_object_set_new(exports, ((const struct ag_export *)all[i])->key, json_object());
	free(all);
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "pools", pools, "tenants", tenants, "volumes",
			 vols, "hosts", hosts, "exports", exports);
}

/* The committed state, read without the lock (the daemon may be running). */
static int read_state(const char *dir, struct ag_state *st)
{
	struct ag_db *db;
	struct ag_model m;
	struct ag_err e;

	if (ag_state_init(st))
		return -1;
	if (ag_db_open_readonly(&db, dir, &e)) {
		if (e.code == AG_E_NOTFOUND)
			return 0;
		ag_log("error", "%s", e.msg);
		ag_state_destroy(st);
		return -1;
	}
	if (ag_db_load(db, &m, &e) || ag_state_fill(st, &m, &e)) {
		ag_log("error", "%s", e.msg);
		ag_model_free(&m);
		ag_db_close(db);
		ag_state_destroy(st);
		return -1;
	}
	ag_db_close(db);
	return 0;
}

static int cmd_show(const char *dir, bool secrets)
{
	struct ag_state st;
	json_t *j;

	if (read_state(dir, &st))
		return 1;
	j = state_json(&st, secrets);
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	putchar('\n');
	json_decref(j);
	ag_state_destroy(&st);
	return 0;
}

/* One line a volume: id tenant pool size state policy. */
static int cmd_list(const char *dir)
{
	struct ag_state st;
	void **all;
	size_t i, n;

	if (read_state(dir, &st))
		return 1;
	all = ag_state_sorted(&st.vols, &n);
	for (i = 0; i < n; i++) {
		const struct ag_volume *v = all[i];
		char policy[AG_POLICY_MAX] = "", words[AG_APOLICY_MAX] = "";
		struct ag_err e;

		if (ag_policy_format(&v->policy, v->size, v->pool, policy, sizeof(policy), words,
				     sizeof(words), &e))
			snprintf(policy, sizeof(policy), "?");
		printf("%s %s %s %" PRIu64 " %s %s\n", v->id, v->tenant, v->pool, v->size,
		       v->deleting ? "deleting" : "ready", policy[0] ? policy : "-");
	}
	free(all);
	ag_state_destroy(&st);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: sluiced [-c <config>] [-s <state dir>] [-w <seconds>] <command>\n"
		"  daemon                                     reconcile, then serve the API\n"
		"                                             (config: " CONFIG_DEFAULT ")\n"
		"  reconcile                                  converge the kernel with the store,\n"
		"                                             finish pending deletes\n"
		"  import <file>                              check a state document, store it\n"
		"  show [--secrets]                           print the stored state (hosts'\n"
		"                                             secrets redacted, unless asked for)\n"
		"  list                                       one line a volume\n"
		"  serve                                      commands from stdin, a line each\n"
		"  dirty [<ticks>]                            run the dirty monitor, print its figures\n"
		"  pool-add <name> <device> [force]           register a disk as a pool\n"
		"  create <name> <tenant> <pool> <bytes> [policy [agent-policy]]\n"
		"                                             its id: <tenant>.<name>\n"
		"  grow <id> <bytes>                          (rescales the scaled rates)\n"
		"  set <id> <policy> [agent-policy]           sluice table arguments, and words\n"
		"                                             \"<rate>=<per GiB>:<floor>\" and\n"
		"                                             \"dirty_bytes_max=<bytes>\"\n"
		"  delete <id>                                remove it, zero its extents\n"
		"  host-add <tenant> <name> <nqn>             a tenant's host (NVMe/TCP)\n"
		"  host-delete <tenant> <name>\n"
		"  export <id> <host> | unexport <id> <host>  a volume to a host of its tenant\n"
		"-w: wait that long for the store's lock (held by the daemon), else refuse\n");
}

/* Run one command; 0 success, 1 failure, 2 usage. */
static int dispatch(const struct console *con, int argc, char **argv)
{
	if (!strcmp(argv[0], "reconcile") && argc == 1)
		return with_agent(con, op_reconcile, argv);
	if (!strcmp(argv[0], "pool-add") && (argc == 3 || (argc == 4 && !strcmp(argv[3], "force"))))
		return with_agent(con, op_pool_add, argv);
	if (!strcmp(argv[0], "create") && argc >= 5 && argc <= 7)
		return with_agent(con, op_create, argv);
	if (!strcmp(argv[0], "host-add") && argc == 4)
		return with_agent(con, op_host_add, argv);
	if (!strcmp(argv[0], "host-delete") && argc == 3)
		return with_agent(con, op_host_delete, argv);
	if (!strcmp(argv[0], "export") && argc == 3)
		return with_agent(con, op_export, argv);
	if (!strcmp(argv[0], "unexport") && argc == 3)
		return with_agent(con, op_unexport, argv);
	if (!strcmp(argv[0], "grow") && argc == 3)
		return with_agent(con, op_grow, argv);
	if (!strcmp(argv[0], "set") && (argc == 3 || argc == 4))
		return with_agent(con, op_set, argv);
	if (!strcmp(argv[0], "delete") && argc == 2)
		return with_agent(con, op_delete, argv);
	if (!strcmp(argv[0], "import") && argc == 2)
		return with_agent(con, op_import, argv);
	if (!strcmp(argv[0], "show") && argc == 1)
		return cmd_show(con->dir, false);
	if (!strcmp(argv[0], "show") && argc == 2 && !strcmp(argv[1], "--secrets"))
		return cmd_show(con->dir, true);
	if (!strcmp(argv[0], "list") && argc == 1)
		return cmd_list(con->dir);
	usage();
	return 2;
}

/*
 * Commands from stdin, one a line, words separated by spaces (a policy's
 * words joined by commas); each answered on stdout by "ok" once it is
 * durable and in the kernel, or "err". What the daemon's API does per
 * request, without the HTTP: the crash test kills it mid-stream.
 */
static int cmd_serve(const struct console *con)
{
	char line[4096];

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		char *argv[17], *save = NULL, *w;
		int argc = 0, i, first = 0;

		line[strcspn(line, "\n")] = '\0';
		for (w = strtok_r(line, " ", &save); w && argc < 16; w = strtok_r(NULL, " ", &save))
			argv[argc++] = w;
		argv[argc] = NULL;
		if (!argc)
			continue;
		/* the policy and agent-policy words */
		if (!strcmp(argv[0], "create"))
			first = 5;
		else if (!strcmp(argv[0], "set"))
			first = 2;
		for (i = first ? first : argc; i < argc; i++)
			for (w = argv[i]; *w; w++)
				if (*w == ',')
					*w = ' ';
		printf("%s\n", dispatch(con, argc, argv) ? "err" : "ok");
	}
	return 0;
}

static double tv_s(const struct timeval *tv)
{
	return tv->tv_sec + tv->tv_usec / 1e6;
}

/*
 * The dirty monitor by the configuration, for ticks ticks (the first at
 * once): the last one's figures as JSON on stdout, the CPU it took (its
 * io_uring workers included), in all and after the first tick, on stderr.
 */
static int cmd_dirty(const char *config, const char *dir, const char *ticks_arg)
{
	struct ag_config cf;
	struct ag_monitor *m;
	struct ag_state st;
	struct rusage ru, first;
	char err[512];
	uint64_t ticks = 1, i;
	json_t *j;

	ag_config_defaults(&cf);
	if (ag_config_load(&cf, config, err, sizeof(err))) {
		ag_log("error", "%s", err);
		return 1;
	}
	if (ticks_arg && (parse_size(ticks_arg, &ticks) || !ticks)) {
		usage();
		return 2;
	}
	if (!cf.monitor.interval_ms)
		cf.monitor.interval_ms = 1000;
	if (read_state(dir, &st))
		return 1;
	if (ag_monitor_open(&m, &st, &cf.monitor, err, sizeof(err))) {
		ag_log("error", "%s", err);
		ag_state_destroy(&st);
		return 1;
	}
	for (i = 0; i < ticks; i++) {
		if (ag_monitor_tick(m, i > 0, err, sizeof(err))) {
			ag_log("error", "tick %" PRIu64 ": %s", i, err);
			ag_monitor_close(m);
			ag_state_destroy(&st);
			return 1;
		}
		/* after the first tick, which opens every file: the steady state */
		if (!i)
			getrusage(RUSAGE_SELF, &first);
	}
	getrusage(RUSAGE_SELF, &ru);
	j = ag_monitor_json(m);
	json_dumpf(j, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(j);
	ag_monitor_close(m);
	ag_state_destroy(&st);
	fprintf(stderr, "monitor: %" PRIu64 " ticks, user %.6f s, sys %.6f s; after the first: user %.6f s, sys %.6f s\n",
		ticks, tv_s(&ru.ru_utime), tv_s(&ru.ru_stime),
		tv_s(&ru.ru_utime) - tv_s(&first.ru_utime), tv_s(&ru.ru_stime) - tv_s(&first.ru_stime));
	return 0;
}

int ag_main(int argc, char **argv, const struct ag_frontend *fe)
{
	struct console con = { .dir = STATE_DIR_DEFAULT };
	const char *config = CONFIG_DEFAULT;
	bool dir_given = false;
	uint64_t wait;
	int opt;

	while ((opt = getopt(argc, argv, "c:s:w:h")) != -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 's':
			con.dir = optarg;
			dir_given = true;
			break;
		case 'w':
			if (parse_size(optarg, &wait) || wait > 3600) {
				usage();
				return 2;
			}
			con.lock_wait_s = (unsigned int)wait;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (optind >= argc) {
		usage();
		return 2;
	}
	argc -= optind;
	argv += optind;
	con.config = config;
	if (!strcmp(argv[0], "serve") && argc == 1)
		return cmd_serve(&con);
	if (!strcmp(argv[0], "daemon") && argc == 1)
		return ag_daemon(config, dir_given ? con.dir : NULL, fe);
	if (!strcmp(argv[0], "dirty") && argc <= 2)
		return cmd_dirty(config, con.dir, argc == 2 ? argv[1] : NULL);
	return dispatch(&con, argc, argv);
}
