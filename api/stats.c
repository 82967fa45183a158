// SPDX-License-Identifier: GPL-2.0
/*
 * A volume's counters (the sluice target's status line), its page cache
 * figures (the dirty monitor's last tick) and its exports' connections
 * (nvmet's controllers, ctrls.h), as JSON for /v1/volumes/{id}/stats and in
 * the Prometheus text format for /metrics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "../agent/ctrls.h"
#include "../agent/dmctl.h"
#include "../agent/jobs.h"
#include "../agent/extent.h"
#include "../dmtarget/sluice-core.h"
#include "handlers.h"
#include "metrics.h"
#include "volstatus.h"

/*
 * The status of sluice-<id>, typed (volstatus.h): none without a kernel;
 * -1 when the kernel has no status for it.
 */
static int status_of(struct ap_call *c, const char *id, struct ap_volstatus *out)
{
	char name[128], *line;

	ap_volstatus_parse(out, NULL);
	if (!c->agent->with_kernel)
		return 0;
	snprintf(name, sizeof(name), "sluice-%s", id);
	line = ag_dm_status(name);
	if (!line)
		return -1;
	ap_volstatus_parse(out, line);
	free(line);
	return 0;
}

static int by_name(const void *x, const void *y)
{
	return strcmp(x, y);
}

/*
 * The volume's exports: the hosts it is exported to, and of nvmet's
 * controllers of its subsystem (null where the kernel does not show them),
 * how many, how many hosts hold them, and those hosts by the tenant's names.
 * A host is named only when the volume is exported to it; another NQN (which
 * nvmet should not admit) is counted, never named.
 */
static json_t *exports_json(struct ap_call *c, const char *id, const char *tenant, size_t hosts)
{
	char nqn[AG_NQN_MAX + 1], key[AG_VOLUME_ID_MAX + AG_ID_MAX + 2];
	char (*names)[AG_ID_MAX + 1] = NULL;
	struct ag_nvmet_ctrls ctrls;
	json_t *named;
	size_t i, k = 0;

	ag_subsys_nqn(c->agent, id, nqn);
	if (ag_nvmet_ctrls_read(c->ctx->debugfs, nqn, &ctrls) ||
	    !(names = calloc(ctrls.nr_hosts + 1, sizeof(*names)))) {
		ag_nvmet_ctrls_free(&ctrls);
		return json_pack("{s:I, s:n, s:n, s:n}", "hosts", (json_int_t)hosts, "controllers",
				 "connected", "connected_hosts");
	}
	pthread_rwlock_rdlock(&c->st->lock);
	for (i = 0; i < ctrls.nr_hosts; i++) {
		const struct ag_host *h = ag_idmap_get(&c->st->nqns, ctrls.hosts[i]);

		if (!h || strcmp(h->tenant, tenant))
			continue;
		snprintf(key, sizeof(key), "%s/%s", id, h->name);
		if (ag_idmap_get(&c->st->exports, key))
			strcpy(names[k++], h->name);
	}
	pthread_rwlock_unlock(&c->st->lock);
	qsort(names, k, sizeof(*names), by_name);
	named = json_array();
	for (i = 0; i < k; i++)
		json_array_append_new(named, json_string(names[i]));
	free(names);
	named = json_pack("{s:I, s:I, s:I, s:o}", "hosts", (json_int_t)hosts, "controllers",
			  (json_int_t)ctrls.controllers, "connected", (json_int_t)ctrls.nr_hosts,
			  "connected_hosts", named);
	ag_nvmet_ctrls_free(&ctrls);
	return named;
}

void ap_get_volume_stats(struct ap_call *c)
{
	char tenant[AG_ID_MAX + 1];
	struct ap_volstatus st;
	size_t exported;
	json_t *page_cache;
	struct ag_volume v;
	const uint64_t *n = st.fig;
	bool deleting;

	if (!ap_volume_get(c, c->arg, &v)) {
		ap_problem(c->resp, AP_P_NOT_FOUND, "no volume %s", c->arg);
		return;
	}
	deleting = v.deleting;
	exported = v.nr_exports;
	strcpy(tenant, v.tenant);
	ag_volume_release(&v);
	if (deleting) {
		ap_problem(c->resp, AP_P_CONFLICT, "volume %s is being deleted", c->arg);
		return;
	}
	if (status_of(c, c->arg, &st)) {
		ap_problem(c->resp, AP_P_INTERNAL, "sluice-%s: no status from the kernel", c->arg);
		return;
	}
	page_cache = ag_monitor_volume_json(c->ctx->monitor, c->arg);
	if (page_cache) {
		json_object_del(page_cache, "id");
		json_object_del(page_cache, "tenant");
	}
	ap_reply(c, 200, json_pack("{s:s, s:{s:I, s:I, s:I}, s:{s:I, s:I, s:I}, s:I, s:I, s:I,"
				   " s:I, s:I, s:o, s:o, s:o, s:o, s:I, s:o, s:o}",
				   "id", c->arg,
				   "read", "ios", (json_int_t)n[AP_VS_RD_IOS],
				   "bytes", (json_int_t)n[AP_VS_RD_BYTES],
				   "throttled_ios", (json_int_t)n[AP_VS_RD_THROTTLED],
				   "write", "ios", (json_int_t)n[AP_VS_WR_IOS],
				   "bytes", (json_int_t)n[AP_VS_WR_BYTES],
				   "throttled_ios", (json_int_t)n[AP_VS_WR_THROTTLED],
				   "queued_ios", (json_int_t)n[AP_VS_QUEUED],
				   "throttle_wait_ns", (json_int_t)n[AP_VS_WAIT_NS],
				   "throttle_wait_max_ns", (json_int_t)n[AP_VS_WAIT_MAX_NS],
				   "flushes", (json_int_t)n[AP_VS_FLUSHES],
				   "discards", (json_int_t)n[AP_VS_DISCARDS],
				   "throttle_wait_histogram", ap_volstatus_wait_json(&st),
				   "completion_latency_histogram", ap_volstatus_latency_json(&st),
				   "completion_latency_sum_seconds", ap_volstatus_latency_sum_json(&st),
				   "pool", ap_volstatus_pool_json(&st),
				   "writeback_bytes", (json_int_t)n[AP_VS_WB_BYTES],
				   "page_cache", page_cache ? page_cache : json_null(),
				   "exports", exports_json(c, c->arg, tenant, exported)));
}

/* One gauge of the monitor's figures: a key of each item of list. */
static void gauge(FILE *f, const char *name, const char *help, json_t *list, const char *label,
		  const char *key)
{
	size_t i;
	json_t *it;

	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	json_array_foreach(list, i, it) {
		json_t *v = json_object_get(it, key);

		if (!json_is_integer(v))
			continue;
		if (!strcmp(label, "volume"))
			fprintf(f, "%s{volume=\"%s\",tenant=\"%s\"} %lld\n", name,
				json_string_value(json_object_get(it, "id")),
				json_string_value(json_object_get(it, "tenant")), json_integer_value(v));
		else
			fprintf(f, "%s{tenant=\"%s\"} %lld\n", name,
				json_string_value(json_object_get(it, "id")), json_integer_value(v));
	}
}

static void page_cache_metrics(FILE *f, struct ag_monitor *mon)
{
	static const struct { const char *name, *help, *key; } global[] = {
		{ "sluice_dirty_bytes", "Dirty page cache, all of it.", "dirty_bytes" },
		{ "sluice_writeback_bytes", "Page cache under writeback, all of it.", "writeback_bytes" },
		{ "sluice_dirty_threshold_bytes", "The kernel's dirty threshold.", "dirty_thresh_bytes" },
		{ "sluice_dirty_background_threshold_bytes", "The kernel's background threshold.",
		  "background_thresh_bytes" },
	};
	json_t *j = ag_monitor_json(mon), *vols = json_object_get(j, "volumes");
	json_t *tenants = json_object_get(j, "tenants");
	size_t i;

	for (i = 0; i < sizeof(global) / sizeof(global[0]); i++) {
		json_t *v = json_object_get(j, global[i].key);

		if (!json_is_integer(v))
			continue;
		fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n%s %lld\n", global[i].name, global[i].help,
			global[i].name, global[i].name, json_integer_value(v));
	}
	gauge(f, "sluice_volume_dirty_bytes", "Dirty page cache of the volume (its bdi).", vols,
	      "volume", "dirty_bytes");
	gauge(f, "sluice_volume_page_writeback_bytes", "Page cache of the volume under writeback.",
	      vols, "volume", "writeback_bytes");
	gauge(f, "sluice_volume_dirty_limit_bytes", "The volume's share of the dirty threshold.",
	      vols, "volume", "bdi_dirty_thresh_bytes");
	gauge(f, "sluice_tenant_file_dirty_bytes", "Dirty page cache of the tenant's cgroup.",
	      tenants, "tenant", "file_dirty_bytes");
	gauge(f, "sluice_tenant_file_writeback_bytes", "Page cache of the tenant's cgroup under writeback.",
	      tenants, "tenant", "file_writeback_bytes");
	json_decref(j);
}

/* What /metrics shows of a volume, copied out of the state. */
struct vol_row {
	char id[AG_VOLUME_ID_MAX + 1], tenant[AG_ID_MAX + 1], pool[AG_ID_MAX + 1];
	uint64_t size;
	struct ap_volstatus status;
	bool status_known;		/* the kernel gave one */
	size_t exports;			/* hosts it is exported to */
	bool connected_known;		/* nvmet showed its controllers */
	unsigned int controllers;
	size_t connected;		/* hosts holding them */
};

struct pool_row {
	char name[AG_ID_MAX + 1];
	uint64_t capacity, allocated;
	int up;
};

/*
 * Of each exported volume, nvmet's controllers and the hosts they are of
 * (one directory a volume; none where the kernel does not show them). A
 * volume not exported has no subsystem, and so none.
 */
static void connections(struct ap_call *c, struct vol_row *rows, size_t n)
{
	char nqn[AG_NQN_MAX + 1];
	size_t i;

	if (!ag_nvmet_ctrls_known(c->ctx->debugfs))
		return;
	for (i = 0; i < n; i++) {
		struct ag_nvmet_ctrls ctrls;

		if (!rows[i].id[0])
			continue;
		if (!rows[i].exports) {
			rows[i].connected_known = true;
			continue;
		}
		ag_subsys_nqn(c->agent, rows[i].id, nqn);
		if (ag_nvmet_ctrls_read(c->ctx->debugfs, nqn, &ctrls))
			continue;
		rows[i].connected_known = true;
		rows[i].controllers = ctrls.controllers;
		rows[i].connected = ctrls.nr_hosts;
		ag_nvmet_ctrls_free(&ctrls);
	}
}

/* A volume's figure for a gauge; false: none to show. */
typedef bool row_value(const struct vol_row *r, unsigned long long *x);

static bool row_size(const struct vol_row *r, unsigned long long *x)
{
	*x = r->size;
	return true;
}

static bool row_exports(const struct vol_row *r, unsigned long long *x)
{
	*x = r->exports;
	return true;
}

static bool row_controllers(const struct vol_row *r, unsigned long long *x)
{
	*x = r->controllers;
	return r->connected_known;
}

static bool row_connected(const struct vol_row *r, unsigned long long *x)
{
	*x = r->connected;
	return r->connected_known;
}

/* One gauge, a series for each volume that has a figure for it. */
static void volume_gauge(FILE *f, const char *name, const char *help, const struct vol_row *rows,
			 size_t n, row_value *value)
{
	unsigned long long x;
	size_t i;

	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (i = 0; i < n; i++)
		if (rows[i].id[0] && value(&rows[i], &x))
			fprintf(f, "%s{volume=\"%s\",tenant=\"%s\",pool=\"%s\"} %llu\n", name,
				rows[i].id, rows[i].tenant, rows[i].pool, x);
}

static void export_metrics(FILE *f, const struct vol_row *rows, size_t n)
{
	volume_gauge(f, "sluice_volume_export_hosts", "Hosts the volume is exported to.", rows, n,
		     row_exports);
	volume_gauge(f, "sluice_volume_export_controllers", "NVMe controllers of the volume's"
		     " subsystem (where the kernel shows them).", rows, n, row_controllers);
	volume_gauge(f, "sluice_volume_export_hosts_connected", "Hosts with a controller of the"
		     " volume's subsystem (where the kernel shows them).", rows, n, row_connected);
}

/*
 * The depth of each pool the kernel has (its volumes' status lines each
 * carry it; the first of them is taken), one series a pool.
 */
static void pool_depth_metrics(FILE *f, const struct pool_row *pools, size_t np,
			       const struct vol_row *rows, size_t n)
{
	size_t p, i;

	fprintf(f, "# HELP sluice_pool_depth IOs the pool's scheduler lets in flight on its disk.\n"
		"# TYPE sluice_pool_depth gauge\n");
	for (p = 0; p < np; p++)
		for (i = 0; i < n; i++) {
			const struct ap_volstatus *st = &rows[i].status;

			if (!rows[i].status_known || strcmp(rows[i].pool, pools[p].name) ||
			    !ap_volstatus_has(st, AP_VS_POOL_DEPTH))
				continue;
			fprintf(f, "sluice_pool_depth{pool=\"%s\"} %llu\n", pools[p].name,
				(unsigned long long)st->fig[AP_VS_POOL_DEPTH]);
			break;
		}
}

static void jobs_metrics(FILE *f, struct ap_call *c)
{
	void **all;
	size_t i, n, deleting = 0, stuck = 0;
	int64_t now = (int64_t)time(NULL);

	pthread_rwlock_rdlock(&c->st->lock);
	all = ag_idmap_values(&c->st->vols);
	n = all ? c->st->vols.nr : 0;
	for (i = 0; i < n; i++) {
		const struct ag_volume *v = all[i];

		deleting += v->deleting;
		stuck += ag_job_stuck(v, now);
	}
	pthread_rwlock_unlock(&c->st->lock);
	free(all);
	fprintf(f, "# HELP sluice_jobs Background jobs under way.\n# TYPE sluice_jobs gauge\n"
		"sluice_jobs{kind=\"delete\"} %zu\n"
		"# HELP sluice_jobs_stuck Background jobs that keep failing or run too long.\n"
		"# TYPE sluice_jobs_stuck gauge\nsluice_jobs_stuck{kind=\"delete\"} %zu\n",
		deleting, stuck);
}

void ap_get_metrics(struct ap_call *c)
{
	struct vol_row *rows = NULL;
	struct pool_row *pools = NULL;
	struct ap_volstatus_row *series = NULL;
	size_t n = 0, np = 0, i, len = 0;
	char *out = NULL, (*labels)[AG_VOLUME_ID_MAX + 2 * AG_ID_MAX + 32] = NULL;
	void **all;
	FILE *f;

	if (!c->who.monitor && !ap_need_admin(c))
		return;
	pthread_rwlock_rdlock(&c->st->lock);
	all = ag_state_sorted(&c->st->vols, &n);
	rows = calloc(n + 1, sizeof(*rows));
	for (i = 0; rows && i < n; i++) {
		const struct ag_volume *v = all[i];

		if (v->deleting)
			continue;
		strcpy(rows[i].id, v->id);
		strcpy(rows[i].tenant, v->tenant);
		strcpy(rows[i].pool, v->pool);
		rows[i].size = v->size;
		rows[i].exports = v->nr_exports;
	}
	free(all);
	all = ag_state_sorted(&c->st->pools, &np);
	pools = calloc(np + 1, sizeof(*pools));
	for (i = 0; pools && i < np; i++) {
		const struct ag_pool *p = all[i];

		strcpy(pools[i].name, p->name);
		pools[i].capacity = (p->extents - 1) * AG_EXTENT_BYTES;
		pools[i].allocated = ag_pool_used(p) * AG_EXTENT_BYTES;
		pools[i].up = !p->missing;
	}
	free(all);
	pthread_rwlock_unlock(&c->st->lock);
	series = calloc(n + 1, sizeof(*series));
	labels = calloc(n + 1, sizeof(*labels));
	if (!rows || !pools || !series || !labels) {
		ap_problem(c->resp, AP_P_INTERNAL, "out of memory");
		goto out;
	}
	/* the kernel is asked outside the lock */
	for (i = 0; i < n; i++) {
		if (!rows[i].id[0])
			continue;
		rows[i].status_known = !status_of(c, rows[i].id, &rows[i].status);
		snprintf(labels[i], sizeof(labels[i]), "volume=\"%s\",tenant=\"%s\",pool=\"%s\"",
			 rows[i].id, rows[i].tenant, rows[i].pool);
		series[i] = (struct ap_volstatus_row){ labels[i],
						       rows[i].status_known ? &rows[i].status : NULL };
	}
	connections(c, rows, n);
	f = open_memstream(&out, &len);
	if (!f) {
		ap_problem(c->resp, AP_P_INTERNAL, "out of memory");
		goto out;
	}
	volume_gauge(f, "sluice_volume_size_bytes", "Size of the volume.", rows, n, row_size);
	ap_volstatus_metrics(f, series, n);
	export_metrics(f, rows, n);
	if (c->ctx->monitor)
		page_cache_metrics(f, c->ctx->monitor);
	fprintf(f, "# HELP sluice_pool_capacity_bytes Bytes of the pool volumes can use.\n"
		"# TYPE sluice_pool_capacity_bytes gauge\n");
	for (i = 0; i < np; i++)
		fprintf(f, "sluice_pool_capacity_bytes{pool=\"%s\"} %llu\n", pools[i].name,
			(unsigned long long)pools[i].capacity);
	fprintf(f, "# HELP sluice_pool_up Whether the pool's disk was found by its label.\n"
		"# TYPE sluice_pool_up gauge\n");
	for (i = 0; i < np; i++)
		fprintf(f, "sluice_pool_up{pool=\"%s\"} %d\n", pools[i].name, pools[i].up);
	fprintf(f, "# HELP sluice_pool_allocated_bytes Bytes of the pool held by volumes.\n"
		"# TYPE sluice_pool_allocated_bytes gauge\n");
	for (i = 0; i < np; i++)
		fprintf(f, "sluice_pool_allocated_bytes{pool=\"%s\"} %llu\n", pools[i].name,
			(unsigned long long)pools[i].allocated);
	pool_depth_metrics(f, pools, np, rows, n);
	jobs_metrics(f, c);
	ap_metrics_write(c->ctx->metrics, f);
	fclose(f);
	free(c->resp->body);
	c->resp->body = out;
	c->resp->status = 200;
	c->resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
out:
	free(rows);
	free(pools);
	free(series);
	free(labels);
}
