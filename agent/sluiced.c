// SPDX-License-Identifier: GPL-2.0
/*
 * sluiced: the agent that owns pools, tenants and volumes.
 *
 *   sluiced [-s <state dir>] <command> ...   (see usage())
 *
 * "daemon" serves the JSON HTTP API (api/); the other commands are the same
 * operations for the operator at the console: each loads the store, changes
 * it durably, converges the kernel and exits 0 only then.
 *
 * Logs go to stderr, one line each (see log.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "dmctl.h"
#include "model.h"
#include "plan.h"
#include "store.h"
#include "ops.h"
#include "log.h"
#include "../api/config.h"
#include "../api/server.h"
#include "monitor.h"

#define STATE_DIR_DEFAULT "/var/lib/sluice"
#define CONFIG_DEFAULT "/etc/sluice/sluiced.conf"

static int load(struct ag_store *s, const char *dir, json_t **state)
{
	char err[512];
	int rc = ag_store_open(s, dir);

	if (rc) {
		ag_log("error", "%s: %s", dir, strerror(-rc));
		return -1;
	}
	if (ag_store_load(s, state, err, sizeof(err))) {
		ag_log("error", "%s; stopping, the file is left as it is", err);
		ag_store_close(s);
		return -1;
	}
	return 0;
}

/* Run one operation on the store in dir; 0 on success, else 1 with the error logged. */
static int with_store(const char *dir, int (*op)(struct ag_store *, char **, char *, size_t),
		      char **args)
{
	struct ag_store s;
	char err[512] = "";
	int rc = ag_store_open(&s, dir);

	if (rc) {
		ag_log("error", "%s: %s", dir, strerror(-rc));
		return 1;
	}
	ag_dm_init();
	/* each operation loads the store; one that does not load changes nothing */
	rc = op(&s, args, err, sizeof(err));
	if (rc)
		ag_log("error", "%s%s", err[0] ? err : "failed",
		       s.poisoned ? "; stopping, the file is left as it is" : "");
	ag_store_close(&s);
	return rc ? 1 : 0;
}

static int op_reconcile(struct ag_store *s, char **a, char *err, size_t len)
{
	(void)a;
	return ag_reconcile(s, err, len);
}

static int op_pool_add(struct ag_store *s, char **a, char *err, size_t len)
{
	return ag_pool_add(s, a[0], a[1], a[2] != NULL, err, len);
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

static int op_create(struct ag_store *s, char **a, char *err, size_t len)
{
	uint64_t size;

	if (parse_size(a[3], &size))
		return snprintf(err, len, "size: bytes, a number"), -1;
	return ag_volume_create(s, a[0], a[1], a[2], size, a[4] ? a[4] : "",
				a[4] && a[5] ? a[5] : "", err, len);
}

static int op_grow(struct ag_store *s, char **a, char *err, size_t len)
{
	uint64_t size;

	if (parse_size(a[1], &size))
		return snprintf(err, len, "size: bytes, a number"), -1;
	return ag_volume_grow(s, a[0], size, NULL, NULL, err, len);
}

static int op_set(struct ag_store *s, char **a, char *err, size_t len)
{
	return ag_volume_set(s, a[0], a[1], a[2] ? a[2] : "", err, len);
}

static int op_delete(struct ag_store *s, char **a, char *err, size_t len)
{
	return ag_volume_delete(s, a[0], err, len);
}

static int cmd_import(const char *dir, const char *file)
{
	struct ag_store s;
	struct ag_model m;
	json_t *old, *state;
	json_error_t jerr;
	char err[512];
	int rc = 1;

	state = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
	if (!state || !json_is_object(state)) {
		ag_log("error", "%s: not a JSON object: %s", file, state ? "" : jerr.text);
		json_decref(state);
		return 1;
	}
	if (ag_model_from_json(&m, state, err, sizeof(err))) {
		ag_log("error", "%s: %s", file, err);
		json_decref(state);
		return 1;
	}
	ag_model_free(&m);
	if (load(&s, dir, &old) == 0) {
		if (ag_store_save(&s, state, err, sizeof(err)))
			ag_log("error", "%s", err);
		else
			rc = 0;
		json_decref(old);
		ag_store_close(&s);
	}
	json_decref(state);
	return rc;
}

static int cmd_show(const char *dir)
{
	struct ag_store s;
	json_t *state;

	if (load(&s, dir, &state))
		return 1;
	json_dumpf(state, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	putchar('\n');
	json_decref(state);
	ag_store_close(&s);
	return 0;
}

/* One line a volume: id tenant pool size state policy. */
static int cmd_list(const char *dir)
{
	struct ag_store s;
	struct ag_model m;
	json_t *state;
	char err[512];
	size_t i;

	if (load(&s, dir, &state))
		return 1;
	if (ag_model_from_json(&m, state, err, sizeof(err))) {
		ag_log("error", "%s", err);
		json_decref(state);
		ag_store_close(&s);
		return 1;
	}
	for (i = 0; i < m.nr_vols; i++)
		printf("%s %s %s %" PRIu64 " %s %s\n", m.vols[i].id, m.vols[i].tenant,
		       m.vols[i].pool, m.vols[i].size, m.vols[i].deleting ? "deleting" : "ready",
		       m.vols[i].policy[0] ? m.vols[i].policy : "-");
	ag_model_free(&m);
	json_decref(state);
	ag_store_close(&s);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: sluiced [-c <config>] [-s <state dir>] <command>\n"
		"  daemon                                     reconcile, then serve the API\n"
		"                                             (config: " CONFIG_DEFAULT ")\n"
		"  reconcile                                  converge the kernel with the store\n"
		"  import <file>                              check a state object, store it\n"
		"  show                                       print the stored state\n"
		"  list                                       one line a volume\n"
		"  serve                                      commands from stdin, a line each\n"
		"  dirty [<ticks>]                            run the dirty monitor, print its figures\n"
		"  pool-add <name> <device> [force]           register a disk as a pool\n"
		"  create <id> <tenant> <pool> <bytes> [policy [agent-policy]]\n"
		"  grow <id> <bytes>                          (rescales the scaled rates)\n"
		"  set <id> <policy> [agent-policy]           sluice table arguments, and words\n"
		"                                             \"<rate>=<per GiB>:<floor>\" and\n"
		"                                             \"dirty_bytes_max=<bytes>\"\n"
		"  delete <id>                                remove it, zero its extents\n");
}

/* Run one command; 0 success, 1 failure, 2 usage. */
static int dispatch(const char *dir, int argc, char **argv)
{
	if (!strcmp(argv[0], "reconcile") && argc == 1)
		return with_store(dir, op_reconcile, argv + 1);
	if (!strcmp(argv[0], "pool-add") && (argc == 3 || (argc == 4 && !strcmp(argv[3], "force"))))
		return with_store(dir, op_pool_add, argv + 1);
	if (!strcmp(argv[0], "create") && argc >= 5 && argc <= 7)
		return with_store(dir, op_create, argv + 1);
	if (!strcmp(argv[0], "grow") && argc == 3)
		return with_store(dir, op_grow, argv + 1);
	if (!strcmp(argv[0], "set") && (argc == 3 || argc == 4))
		return with_store(dir, op_set, argv + 1);
	if (!strcmp(argv[0], "delete") && argc == 2)
		return with_store(dir, op_delete, argv + 1);
	if (!strcmp(argv[0], "import") && argc == 2)
		return cmd_import(dir, argv[1]);
	if (!strcmp(argv[0], "show") && argc == 1)
		return cmd_show(dir);
	if (!strcmp(argv[0], "list") && argc == 1)
		return cmd_list(dir);
	usage();
	return 2;
}

/*
 * Commands from stdin, one a line, words separated by spaces (a policy's
 * words joined by commas); each answered on stdout by "ok" once it is
 * durable and in the kernel, or "err". What the daemon's API will do per
 * request, without the HTTP: the crash test kills it mid-stream.
 */
static int cmd_serve(const char *dir)
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
		printf("%s\n", dispatch(dir, argc, argv) ? "err" : "ok");
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
	struct ap_config cf;
	struct ag_monitor *m;
	struct rusage ru, first;
	char err[512];
	uint64_t ticks = 1, i;
	json_t *j;

	ap_config_defaults(&cf);
	if (ap_config_load(&cf, config, err, sizeof(err))) {
		ag_log("error", "%s", err);
		return 1;
	}
	if (ticks_arg && (parse_size(ticks_arg, &ticks) || !ticks)) {
		usage();
		return 2;
	}
	if (!cf.monitor.interval_ms)
		cf.monitor.interval_ms = 1000;
	if (ag_monitor_open(&m, dir, &cf.monitor, err, sizeof(err))) {
		ag_log("error", "%s", err);
		return 1;
	}
	for (i = 0; i < ticks; i++) {
		if (ag_monitor_tick(m, i > 0, err, sizeof(err))) {
			ag_log("error", "tick %" PRIu64 ": %s", i, err);
			ag_monitor_close(m);
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
	fprintf(stderr, "monitor: %" PRIu64 " ticks, user %.6f s, sys %.6f s; after the first: user %.6f s, sys %.6f s\n",
		ticks, tv_s(&ru.ru_utime), tv_s(&ru.ru_stime),
		tv_s(&ru.ru_utime) - tv_s(&first.ru_utime), tv_s(&ru.ru_stime) - tv_s(&first.ru_stime));
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = STATE_DIR_DEFAULT, *config = CONFIG_DEFAULT;
	bool dir_given = false;
	int opt;

	while ((opt = getopt(argc, argv, "c:s:h")) != -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 's':
			dir = optarg;
			dir_given = true;
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
	if (!strcmp(argv[0], "serve") && argc == 1)
		return cmd_serve(dir);
	if (!strcmp(argv[0], "daemon") && argc == 1)
		return ap_serve(config, dir_given ? dir : NULL);
	if (!strcmp(argv[0], "dirty") && argc <= 2)
		return cmd_dirty(config, dir, argc == 2 ? argv[1] : NULL);
	return dispatch(dir, argc, argv);
}

