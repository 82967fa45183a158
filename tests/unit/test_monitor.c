// SPDX-License-Identifier: GPL-2.0
/*
 * The dirty monitor on the host: its io_uring reads of /proc/vmstat agree
 * with a plain read, a tenant's memory.stat is read from the configured
 * cgroup path, and a volume without a device is unknown, not zero.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "../../agent/monitor.h"
#include "../../agent/state.h"

static char dir[64];

static const char *STATE =
	"{\"pools\": {\"p0\": {\"device\": \"/dev/null\", \"extents\": 4}},"
	" \"tenants\": {\"acme\": {}},"
	" \"volumes\": {\"nodev\": {\"tenant\": \"acme\", \"pool\": \"p0\", \"size\": 512,"
	" \"runs\": [[1, 1]], \"policy\": \"\", \"agent_policy\": \"dirty_bytes_max=8388608\","
	" \"state\": \"ready\"}}}";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

/* a /proc/vmstat figure by a plain read, in bytes */
static long long vmstat_bytes(const char *key)
{
	char line[256], k[128];
	long long v;
	FILE *f = fopen("/proc/vmstat", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lld", k, &v) == 2 && !strcmp(k, key)) {
			fclose(f);
			return v * 4096;
		}
	if (f)
		fclose(f);
	return -1;
}

static void monitor_reads_vmstat_cgroups_and_marks_the_unknown(void)
{
	struct ag_monitor_config cfg;
	struct ag_monitor *m = NULL;
	struct ag_state state;
	struct ag_model model;
	struct ag_err e;
	char err[256], path[256];
	json_t *st = json_loads(STATE, 0, NULL), *j, *t, *v;
	long long thresh, got;

	snprintf(dir, sizeof(dir), "/tmp/sluice-mon-XXXXXX");
	CHECK(mkdtemp(dir));
	CHECK(st && ag_model_from_json(&model, st, err, sizeof(err)) == 0);
	json_decref(st);
	CHECK(ag_state_init(&state) == 0 && ag_state_fill(&state, &model, &e) == 0);
	snprintf(path, sizeof(path), "%s/acme", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/acme/memory.stat", dir);
	write_file(path, "file 1\nfile_mapped 2\nfile_dirty 40960\nfile_writeback 8192\n");

	ag_monitor_config_defaults(&cfg);
	snprintf(cfg.tenant_cgroup, sizeof(cfg.tenant_cgroup), "%s/%%s", dir);
	CHECK(ag_monitor_open(&m, &state, &cfg, err, sizeof(err)) == 0);
	if (!m)
		return;
	CHECK(ag_monitor_tick(m, false, err, sizeof(err)) == 0);
	j = ag_monitor_json(m);
	CHECK(json_integer_value(json_object_get(j, "ticks")) == 1);
	/* the threshold moves slowly: the ring's read and a plain one agree */
	got = json_integer_value(json_object_get(j, "dirty_thresh_bytes"));
	thresh = vmstat_bytes("nr_dirty_threshold");
	CHECK(thresh > 0 && got > thresh * 95 / 100 && got < thresh * 105 / 100);
	CHECK(json_integer_value(json_object_get(j, "background_thresh_bytes")) > 0);
	t = json_array_get(json_object_get(j, "tenants"), 0);
	CHECK(!strcmp(json_string_value(json_object_get(t, "id")), "acme"));
	CHECK(json_integer_value(json_object_get(t, "file_dirty_bytes")) == 40960);
	CHECK(json_integer_value(json_object_get(t, "file_writeback_bytes")) == 8192);
	/* no device, no bdi: unknown, and no max_ratio was set */
	v = json_array_get(json_object_get(j, "volumes"), 0);
	CHECK(json_is_null(json_object_get(v, "dirty_bytes")));
	CHECK(json_is_null(json_object_get(v, "max_ratio")));
	CHECK(json_integer_value(json_object_get(v, "dirty_bytes_max")) == 8388608);
	json_decref(j);
	CHECK(ag_monitor_volume_json(m, "other") == NULL);
	/* a changed file is read again at the next tick, at offset 0 */
	write_file(path, "file_dirty 4096\nfile_writeback 0\n");
	CHECK(ag_monitor_tick(m, false, err, sizeof(err)) == 0);
	j = ag_monitor_json(m);
	t = json_array_get(json_object_get(j, "tenants"), 0);
	CHECK(json_integer_value(json_object_get(t, "file_dirty_bytes")) == 4096);
	json_decref(j);
	ag_monitor_close(m);
	ag_state_destroy(&state);
	unlink(path);
	snprintf(path, sizeof(path), "%s/acme", dir);
	rmdir(path);
	rmdir(dir);
}

static int open_fds(void)
{
	char cmd[64], out[32] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls /proc/%d/fd | wc -l", (int)getpid());
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (!fgets(out, sizeof(out), f))
		out[0] = '\0';
	pclose(f);
	return atoi(out);
}

/*
 * 300 tenants' files, read in batches of the ring's table: every one read,
 * and no descriptor held for any of them.
 */
static void monitor_holds_no_descriptor_per_file(void)
{
	struct ag_monitor_config cfg;
	struct ag_monitor *m = NULL;
	struct ag_state state;
	struct ag_model model;
	struct ag_err e;
	char err[256], path[256], id[16], cmd[96];
	json_t *st = json_pack("{s:{s:{s:s, s:I}}, s:{}}", "pools", "p0", "device", "/dev/null",
			       "extents", (json_int_t)400, "volumes"), *j, *t;
	int before, after, i, n = 300;
	size_t k;

	snprintf(dir, sizeof(dir), "/tmp/sluice-mon-XXXXXX");
	CHECK(st && mkdtemp(dir));
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "t%d", i);
		json_object_set_new(json_object_get(st, "volumes"), id,
				    json_pack("{s:s, s:s, s:I, s:[[I, I]], s:s, s:s}", "tenant", id,
					      "pool", "p0", "size", (json_int_t)4096, "runs",
					      (json_int_t)(1 + i), (json_int_t)1, "policy", "",
					      "state", "ready"));
		snprintf(path, sizeof(path), "%s/%s", dir, id);
		mkdir(path, 0700);
		snprintf(path, sizeof(path), "%s/%s/memory.stat", dir, id);
		snprintf(cmd, sizeof(cmd), "file_dirty %d\nfile_writeback 0\n", 4096 * (i + 1));
		write_file(path, cmd);
	}
	CHECK(ag_model_from_json(&model, st, err, sizeof(err)) == 0);
	json_decref(st);
	CHECK(ag_state_init(&state) == 0 && ag_state_fill(&state, &model, &e) == 0);
	ag_monitor_config_defaults(&cfg);
	snprintf(cfg.tenant_cgroup, sizeof(cfg.tenant_cgroup), "%s/%%s", dir);
	before = open_fds();
	CHECK(ag_monitor_open(&m, &state, &cfg, err, sizeof(err)) == 0);
	CHECK(ag_monitor_tick(m, false, err, sizeof(err)) == 0);
	CHECK(ag_monitor_tick(m, false, err, sizeof(err)) == 0);
	after = open_fds();
	/* the ring and /proc/vmstat: a handful, not 300 */
	CHECK(after - before <= 4);
	j = ag_monitor_json(m);
	CHECK_EQ_U64(json_array_size(json_object_get(j, "tenants")), n);
	json_array_foreach(json_object_get(j, "tenants"), k, t)
		CHECK(json_integer_value(json_object_get(t, "file_dirty_bytes")) ==
		      4096 * (atoi(json_string_value(json_object_get(t, "id")) + 1) + 1));
	json_decref(j);
	ag_monitor_close(m);
	ag_state_destroy(&state);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

static const struct unit_test tests[] = {
	UNIT_TEST(monitor_holds_no_descriptor_per_file),
	UNIT_TEST(monitor_reads_vmstat_cgroups_and_marks_the_unknown),
};

UNIT_MAIN("monitor", tests)
