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

/* The status words of sluice-<id>: numbers as integers, wait_hist as an array. */
static json_t *status_of(struct ap_call *c, const char *id)
{
	char name[128], *line, *w, *save = NULL;
	json_t *o = json_object();

	if (!c->agent->with_kernel)
		return o;
	snprintf(name, sizeof(name), "sluice-%s", id);
	line = ag_dm_status(name);
	if (!line) {
		json_decref(o);
		return NULL;
	}
	for (w = strtok_r(line, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '='), *end;
		long long v;

		if (!eq)
			continue;
		*eq++ = '\0';
		if (!strcmp(w, "wait_hist")) {
			json_t *a = json_array();
			char *n, *s2 = NULL;

			for (n = strtok_r(eq, ",", &s2); n; n = strtok_r(NULL, ",", &s2))
				json_array_append_new(a, json_integer(strtoll(n, NULL, 10)));
			json_object_set_new(o, w, a);
			continue;
		}
		v = strtoll(eq, &end, 10);
		json_object_set_new(o, w, *end ? json_string(eq) : json_integer(v));
	}
	free(line);
	return o;
}

static long long num(json_t *st, const char *key)
{
	return json_integer_value(json_object_get(st, key));
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
	size_t exported;
	json_t *st, *hist, *buckets, *pool = NULL, *page_cache;
	struct ag_volume v;
	bool deleting;
	size_t i;

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
	st = status_of(c, c->arg);
	if (!st) {
		ap_problem(c->resp, AP_P_INTERNAL, "sluice-%s: no status from the kernel", c->arg);
		return;
	}
	/* bucket 0 is under 1 ms, bucket i under 2^i ms; the last is open */
	hist = json_object_get(st, "wait_hist");
	buckets = json_array();
	for (i = 0; i < json_array_size(hist); i++) {
		json_t *b = json_pack("{s:I}", "count", json_integer_value(json_array_get(hist, i)));

		if (i + 1 < json_array_size(hist))
			json_object_set_new(b, "below_ms", json_integer(1LL << i));
		json_array_append_new(buckets, b);
	}
	if (json_object_get(st, "pool_depth"))
		pool = json_pack("{s:I, s:I, s:I, s:I, s:I}", "queued", num(st, "pool_queued"),
				 "sent", num(st, "pool_sent"),
				 "by_reservation", num(st, "pool_by_reservation"),
				 "inflight", num(st, "pool_inflight"), "depth", num(st, "pool_depth"));
	page_cache = ag_monitor_volume_json(c->ctx->monitor, c->arg);
	if (page_cache) {
		json_object_del(page_cache, "id");
		json_object_del(page_cache, "tenant");
	}
	ap_reply(c, 200, json_pack("{s:s, s:{s:I, s:I, s:I}, s:{s:I, s:I, s:I}, s:I, s:I, s:I,"
				   " s:I, s:I, s:o, s:o, s:I, s:o, s:o}",
				   "id", c->arg,
				   "read", "ios", num(st, "rd_ios"), "bytes", num(st, "rd_bytes"),
				   "throttled_ios", num(st, "rd_throttled"),
				   "write", "ios", num(st, "wr_ios"), "bytes", num(st, "wr_bytes"),
				   "throttled_ios", num(st, "wr_throttled"),
				   "queued_ios", num(st, "queued"),
				   "throttle_wait_ns", num(st, "wait_ns"),
				   "throttle_wait_max_ns", num(st, "wait_max_ns"),
				   "flushes", num(st, "flushes"), "discards", num(st, "discards"),
				   "throttle_wait_histogram", buckets,
				   "pool", pool ? pool : json_null(),
				   "writeback_bytes", num(st, "wb_bytes"),
				   "page_cache", page_cache ? page_cache : json_null(),
				   "exports", exports_json(c, c->arg, tenant, exported)));
	json_decref(st);
}

/* A metric of every volume, from one status key (or a histogram). */
struct metric {
	const char *name;
	const char *type;
	const char *help;
	const char *key;	/* status key; NULL: the histogram */
	double scale;
};

static const struct metric metrics[] = {
	{ "sluice_volume_read_ios_total", "counter", "Reads completed.", "rd_ios", 1 },
	{ "sluice_volume_read_bytes_total", "counter", "Bytes read.", "rd_bytes", 1 },
	{ "sluice_volume_write_ios_total", "counter", "Writes completed.", "wr_ios", 1 },
	{ "sluice_volume_write_bytes_total", "counter", "Bytes written.", "wr_bytes", 1 },
	{ "sluice_volume_read_throttled_ios_total", "counter", "Reads held by a limit.",
	  "rd_throttled", 1 },
	{ "sluice_volume_write_throttled_ios_total", "counter", "Writes held by a limit.",
	  "wr_throttled", 1 },
	{ "sluice_volume_queued_ios", "gauge", "IOs held by a limit now.", "queued", 1 },
	{ "sluice_volume_throttle_wait_max_seconds", "gauge", "Longest wait of an IO held by a limit.",
	  "wait_max_ns", 1e-9 },
	{ "sluice_volume_throttle_wait_seconds", "histogram", "Wait of the IOs held by a limit.",
	  NULL, 1 },
	{ "sluice_volume_flushes_total", "counter", "Flushes passed down.", "flushes", 1 },
	{ "sluice_volume_discards_total", "counter", "Discards passed down.", "discards", 1 },
	{ "sluice_volume_writeback_bytes_total", "counter", "Bytes written by writeback.",
	  "wb_bytes", 1 },
	{ "sluice_volume_read_errors_total", "counter", "Reads that failed below.", "rd_errors", 1 },
	{ "sluice_volume_write_errors_total", "counter", "Writes that failed below.", "wr_errors", 1 },
	{ "sluice_volume_pool_queued_ios", "gauge", "IOs waiting in the pool's scheduler.",
	  "pool_queued", 1 },
	{ "sluice_volume_pool_sent_ios_total", "counter", "IOs the pool's scheduler sent.",
	  "pool_sent", 1 },
	{ "sluice_volume_pool_reservation_ios_total", "counter",
	  "IOs the pool's scheduler sent under the reservation.", "pool_by_reservation", 1 },
};

static void histogram(FILE *f, const char *name, const char *labels, json_t *st)
{
	json_t *h = json_object_get(st, "wait_hist");
	long long cum = 0;
	size_t i, n = json_array_size(h);

	for (i = 0; i < n; i++) {
		cum += json_integer_value(json_array_get(h, i));
		if (i + 1 < n)
			fprintf(f, "%s_bucket{%s,le=\"%g\"} %lld\n", name, labels,
				(double)(1LL << i) / 1000, cum);
	}
	fprintf(f, "%s_bucket{%s,le=\"+Inf\"} %lld\n", name, labels, cum);
	fprintf(f, "%s_sum{%s} %.9f\n", name, labels, num(st, "wait_ns") * 1e-9);
	fprintf(f, "%s_count{%s} %lld\n", name, labels, cum);
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
	json_t *status;
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
	size_t n = 0, np = 0, i, m, len = 0;
	char *out = NULL, labels[256];
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
	if (!rows || !pools) {
		free(rows);
		free(pools);
		ap_problem(c->resp, AP_P_INTERNAL, "out of memory");
		return;
	}
	/* the kernel is asked outside the lock */
	for (i = 0; i < n; i++)
		if (rows[i].id[0])
			rows[i].status = status_of(c, rows[i].id);
	connections(c, rows, n);
	f = open_memstream(&out, &len);
	if (!f) {
		ap_problem(c->resp, AP_P_INTERNAL, "out of memory");
		goto out;
	}
	volume_gauge(f, "sluice_volume_size_bytes", "Size of the volume.", rows, n, row_size);
	for (m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++) {
		const struct metric *mt = &metrics[m];

		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", mt->name, mt->help, mt->name, mt->type);
		for (i = 0; i < n; i++) {
			json_t *st = rows[i].status;

			if (!st || (mt->key && !json_is_integer(json_object_get(st, mt->key))))
				continue;
			snprintf(labels, sizeof(labels), "volume=\"%s\",tenant=\"%s\",pool=\"%s\"",
				 rows[i].id, rows[i].tenant, rows[i].pool);
			if (!mt->key)
				histogram(f, mt->name, labels, st);
			else if (mt->scale == 1)
				fprintf(f, "%s{%s} %lld\n", mt->name, labels, num(st, mt->key));
			else
				fprintf(f, "%s{%s} %.9f\n", mt->name, labels, num(st, mt->key) * mt->scale);
		}
	}
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
	jobs_metrics(f, c);
	ap_metrics_write(c->ctx->metrics, f);
	fclose(f);
	free(c->resp->body);
	c->resp->body = out;
	c->resp->status = 200;
	c->resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
out:
	for (i = 0; i < n; i++)
		json_decref(rows[i].status);
	free(rows);
	free(pools);
}
