// SPDX-License-Identifier: GPL-2.0
/*
 * sluiced: the agent that owns pools, tenants and volumes.
 *
 *   sluiced [-s <state dir>] reconcile       converge the kernel with the
 *                                            store once, report, exit
 *   sluiced [-s <state dir>] import <file>   check a state object and make
 *                                            it the store's next generation
 *   sluiced [-s <state dir>] show            print the stored state
 *
 * Logs go to stderr, one line each, "sluiced: <level>: <message>".
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "dmctl.h"
#include "model.h"
#include "plan.h"
#include "store.h"

#define STATE_DIR_DEFAULT "/var/lib/sluice"

static void logmsg(const char *level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logmsg(const char *level, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sluiced: %s: ", level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int load(struct ag_store *s, const char *dir, json_t **state)
{
	char err[512];
	int rc = ag_store_open(s, dir);

	if (rc) {
		logmsg("error", "%s: %s", dir, strerror(-rc));
		return -1;
	}
	if (ag_store_load(s, state, err, sizeof(err))) {
		logmsg("error", "%s; stopping, the file is left as it is", err);
		return -1;
	}
	return 0;
}

/* The wanted tables of every volume, from the model and the live devices. */
static int wants(const struct ag_model *m, struct ag_want *w, char (*tables)[2][8192])
{
	size_t i;

	for (i = 0; i < m->nr_vols; i++) {
		const struct ag_volume *v = &m->vols[i];
		const struct ag_pool *p = ag_model_pool(m, v->pool);
		char pool_devno[32], data_devno[160], data[128];
		struct stat st;

		w[i] = (struct ag_want){ v->id, tables[i][0], tables[i][1], v->deleting };
		if (v->deleting)
			continue;
		if (stat(p->device, &st) || !S_ISBLK(st.st_mode)) {
			logmsg("error", "pool %s: %s is not a block device", p->name, p->device);
			return -1;
		}
		snprintf(pool_devno, sizeof(pool_devno), "%u:%u", major(st.st_rdev),
			 minor(st.st_rdev));
		if (ag_data_table(v, pool_devno, tables[i][0], sizeof(tables[i][0])))
			return -1;
		/* the kernel prints the device below as maj:min once it exists */
		snprintf(data, sizeof(data), AG_DM_PREFIX "%s-data", v->id);
		if (ag_dm_devno(data, data_devno, sizeof(data_devno)))
			snprintf(data_devno, sizeof(data_devno), "/dev/mapper/%s", data);
		if (ag_sluice_table(v, data_devno, tables[i][1], sizeof(tables[i][1])))
			return -1;
	}
	return 0;
}

static int apply(const struct ag_action *a)
{
	switch (a->kind) {
	case AG_CREATE:
		return ag_dm_create(a->name, a->arg);
	case AG_RELOAD:
		return ag_dm_reload(a->name, a->arg);
	case AG_MESSAGE:
		return ag_dm_message(a->name, a->arg);
	case AG_REMOVE:
		return ag_dm_remove(a->name);
	case AG_REPORT:
		logmsg("warning", "%s: %s", a->name, a->arg);
		return 0;
	}
	return -1;
}

/* Plan and apply until nothing is left to do (twice at most: a created
 * data device changes how the sluice table over it reads). */
static int reconcile(const struct ag_model *m)
{
	struct ag_want *w = calloc(m->nr_vols + 1, sizeof(*w));
	char (*tables)[2][8192] = calloc(m->nr_vols + 1, sizeof(*tables));
	int pass, rc = -1, failed = 0;

	if (!w || !tables)
		goto out;
	for (pass = 0; pass < 3; pass++) {
		struct ag_have *have;
		struct ag_action *acts;
		size_t nh, na, i, changes = 0;

		if (wants(m, w, tables) || ag_dm_list(AG_DM_PREFIX, &have, &nh))
			goto out;
		if (ag_plan(w, m->nr_vols, have, nh, &acts, &na)) {
			ag_dm_list_free(have, nh);
			goto out;
		}
		for (i = 0; i < na; i++) {
			if (acts[i].kind == AG_REPORT && pass)
				continue;
			if (acts[i].kind != AG_REPORT) {
				changes++;
				logmsg("info", "%s %s%s%s", ag_action_name(acts[i].kind), acts[i].name,
				       acts[i].arg ? ": " : "", acts[i].arg ? acts[i].arg : "");
			}
			if (apply(&acts[i])) {
				logmsg("error", "%s %s failed", ag_action_name(acts[i].kind),
				       acts[i].name);
				failed++;
			}
		}
		ag_plan_free(acts, na);
		ag_dm_list_free(have, nh);
		if (!changes) {
			rc = failed ? -1 : 0;
			logmsg("info", "reconciled: %zu volumes, %lu dm calls", m->nr_vols,
			       ag_dm_calls);
			goto out;
		}
	}
	logmsg("error", "not converged after 3 passes");
out:
	free(w);
	free(tables);
	return rc;
}

static int cmd_reconcile(const char *dir)
{
	struct ag_store s;
	struct ag_model m;
	json_t *state;
	char err[512];
	int rc;

	if (load(&s, dir, &state))
		return 1;
	if (ag_model_from_json(&m, state, err, sizeof(err))) {
		logmsg("error", "%s", err);
		json_decref(state);
		ag_store_close(&s);
		return 1;
	}
	ag_dm_init();
	rc = reconcile(&m);
	ag_model_free(&m);
	json_decref(state);
	ag_store_close(&s);
	return rc ? 1 : 0;
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
		logmsg("error", "%s: not a JSON object: %s", file, state ? "" : jerr.text);
		json_decref(state);
		return 1;
	}
	if (ag_model_from_json(&m, state, err, sizeof(err))) {
		logmsg("error", "%s: %s", file, err);
		json_decref(state);
		return 1;
	}
	ag_model_free(&m);
	if (load(&s, dir, &old) == 0) {
		if (ag_store_save(&s, state, err, sizeof(err)))
			logmsg("error", "%s", err);
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

static void usage(void)
{
	fprintf(stderr, "usage: sluiced [-s <state dir>] reconcile | import <file> | show\n");
}

int main(int argc, char **argv)
{
	const char *dir = STATE_DIR_DEFAULT;
	int opt;

	while ((opt = getopt(argc, argv, "s:h")) != -1) {
		switch (opt) {
		case 's':
			dir = optarg;
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
	if (!strcmp(argv[optind], "reconcile") && optind + 1 == argc)
		return cmd_reconcile(dir);
	if (!strcmp(argv[optind], "import") && optind + 2 == argc)
		return cmd_import(dir, argv[optind + 1]);
	if (!strcmp(argv[optind], "show") && optind + 1 == argc)
		return cmd_show(dir);
	usage();
	return 2;
}
