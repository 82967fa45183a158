// SPDX-License-Identifier: GPL-2.0
/* Health, pools, tenants and jobs. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../agent/jobs.h"
#include "handlers.h"
#include "policy_json.h"

/* Open to all: it says the API answers, and nothing of what it holds. */
void ap_get_health(struct ap_call *c)
{
	ap_reply(c, 200, json_pack("{s:s}", "status", "ok"));
}

/* The caller holds the state's lock. */
static json_t *pool_json(const struct ag_pool *p)
{
	/* extent 0 holds the pool's label */
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I}", "name", p->name, "device",
			      p->device, "uuid", p->uuid, "state", p->missing ? "missing" : "online",
			      "extent_bytes", (json_int_t)AG_EXTENT_BYTES,
			      "extents", (json_int_t)p->extents,
			      "capacity_bytes", (json_int_t)((p->extents - 1) * AG_EXTENT_BYTES),
			      "free_bytes",
			      (json_int_t)((p->extents - 1 - ag_pool_used(p)) * AG_EXTENT_BYTES));

	/* what the disk can do, as declared, and what its volumes reserve of it */
	if (j)
		json_object_update_new(j, json_pack("{s:I, s:I, s:I, s:I}",
				       "capacity_iops", (json_int_t)p->capacity_iops,
				       "capacity_bytes_sec", (json_int_t)p->capacity_bps,
				       "reserved_iops", (json_int_t)p->reserved_iops,
				       "reserved_bytes_sec", (json_int_t)p->reserved_bps));
	return j;
}

/* An optional rate of a pool's body: 0..2^53; false with the problem set. */
static bool rate_of(struct ap_call *c, json_t *b, const char *name, uint64_t *out)
{
	json_t *v = json_object_get(b, name);

	if (!v || json_is_null(v))
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > AG_VALUE_MAX) {
		ap_problem(c->resp, json_is_number(v) ? AP_P_INVALID_VALUE : AP_P_INVALID_REQUEST,
			   "%s: an integer from 0 to 2^53", name);
		return false;
	}
	*out = (uint64_t)json_integer_value(v);
	return true;
}

void ap_list_pools(struct ap_call *c)
{
	json_t *items;
	const char *after;
	void **all;
	size_t limit, i, n;

	if (!ap_need_admin(c) || ap_page(c, &limit, &after))
		return;
	items = json_array();
	pthread_rwlock_rdlock(&c->st->lock);
	all = ag_state_sorted(&c->st->pools, &n);
	for (i = 0; i < n; i++) {
		json_t *p = pool_json(all[i]);

		json_object_set(p, "id", json_object_get(p, "name"));
		json_array_append_new(items, p);
	}
	pthread_rwlock_unlock(&c->st->lock);
	free(all);
	items = ap_page_of(items, limit, after);
	/* pages are by id; a pool's id is its name */
	for (i = 0; i < json_array_size(json_object_get(items, "items")); i++)
		json_object_del(json_array_get(json_object_get(items, "items"), i), "id");
	ap_reply(c, 200, items);
}

/* The pool as shown, or NULL if there is none. */
static json_t *pool_now(struct ap_call *c, const char *name)
{
	const struct ag_pool *p;
	json_t *j;

	pthread_rwlock_rdlock(&c->st->lock);
	p = ag_state_pool(c->st, name);
	j = p ? pool_json(p) : NULL;
	pthread_rwlock_unlock(&c->st->lock);
	return j;
}

void ap_get_pool(struct ap_call *c)
{
	json_t *j;

	if (!ap_need_admin(c))
		return;
	j = pool_now(c, c->arg);
	if (!j) {
		ap_problem(c->resp, AP_P_NOT_FOUND, "no pool %s", c->arg);
		return;
	}
	ap_etag(j, c->resp->etag);
	ap_reply(c, 200, j);
}

/* The pool's declared capacity, as a merge patch (null: not declared). */
void ap_patch_pool(struct ap_call *c)
{
	static const char *const allowed[] = { "capacity_iops", "capacity_bytes_sec", NULL };
	uint64_t cap_iops, cap_bps;
	struct ag_err e;
	char etag[16];
	json_t *b, *j;
	bool found;

	if (!ap_need_admin(c))
		return;
	j = pool_now(c, c->arg);
	if (!j) {
		ap_problem(c->resp, AP_P_NOT_FOUND, "no pool %s", c->arg);
		return;
	}
	ap_etag(j, etag);
	cap_iops = (uint64_t)json_integer_value(json_object_get(j, "capacity_iops"));
	cap_bps = (uint64_t)json_integer_value(json_object_get(j, "capacity_bytes_sec"));
	json_decref(j);
	if (!ap_if_match(c, etag))
		return;
	b = ap_body(c, allowed);
	if (!b)
		return;
	if (json_is_null(json_object_get(b, "capacity_iops")))
		cap_iops = 0;
	if (json_is_null(json_object_get(b, "capacity_bytes_sec")))
		cap_bps = 0;
	found = rate_of(c, b, "capacity_iops", &cap_iops) &&
		rate_of(c, b, "capacity_bytes_sec", &cap_bps);
	json_decref(b);
	if (!found)
		return;
	if (ag_pool_set_capacity(c->agent, c->arg, cap_iops, cap_bps, &e)) {
		ap_op_failed(c, &e);
		return;
	}
	j = pool_now(c, c->arg);
	ap_etag(j, c->resp->etag);
	ap_reply(c, 200, j);
}

void ap_post_pool(struct ap_call *c)
{
	static const char *const allowed[] = { "name", "device", "force", "capacity_iops",
					       "capacity_bytes_sec", NULL };
	const char *name, *device;
	uint64_t cap_iops = 0, cap_bps = 0;
	struct ag_err e;
	json_t *b, *j;
	int force = 0;

	if (!ap_need_admin(c))
		return;
	b = ap_body(c, allowed);
	if (!b)
		return;
	if (json_unpack(b, "{s:s, s:s, s?b}", "name", &name, "device", &device, "force", &force)) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST,
			   "name and device: strings; force: a boolean");
	} else if (strncmp(device, "/dev/", 5) || strstr(device, "/../")) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "device: a path under /dev/");
	} else if (!rate_of(c, b, "capacity_iops", &cap_iops) ||
		   !rate_of(c, b, "capacity_bytes_sec", &cap_bps)) {
		;
	} else if (ag_pool_add(c->agent, name, device, force, cap_iops, cap_bps, &e)) {
		ap_op_failed(c, &e);
	} else if ((j = pool_now(c, name))) {
		snprintf(c->resp->location, sizeof(c->resp->location), "/v1/pools/%s", name);
		ap_etag(j, c->resp->etag);
		ap_reply(c, 201, j);
	} else {
		ap_problem(c->resp, AP_P_INTERNAL, "added, but the pool is not in the state");
	}
	json_decref(b);
}

/* The caller holds the state's lock. */
static json_t *tenant_json(const struct ag_tenant *t)
{
	return json_pack("{s:s, s:o, s:o, s:I, s:I}", "id", t->id, "ceilings",
			 ag_ceilings_to_json(&t->ceilings), "quotas", ag_quotas_to_json(&t->quotas),
			 "volumes", (json_int_t)t->nr_volumes, "used_bytes",
			 (json_int_t)t->used_bytes);
}

void ap_list_tenants(struct ap_call *c)
{
	json_t *items;
	const char *after;
	void **all;
	size_t limit, i, n;

	if (!ap_need_admin(c) || ap_page(c, &limit, &after))
		return;
	items = json_array();
	pthread_rwlock_rdlock(&c->st->lock);
	all = ag_state_sorted(&c->st->tenants, &n);
	for (i = 0; i < n; i++)
		json_array_append_new(items, tenant_json(all[i]));
	pthread_rwlock_unlock(&c->st->lock);
	free(all);
	ap_reply(c, 200, ap_page_of(items, limit, after));
}

/* The tenant of the path as shown, if the caller may see it; else NULL and a 404. */
static json_t *visible_tenant(struct ap_call *c)
{
	const struct ag_tenant *t = NULL;
	json_t *j = NULL;

	pthread_rwlock_rdlock(&c->st->lock);
	if (c->who.admin || !strcmp(c->who.tenant, c->arg))
		t = ag_state_tenant(c->st, c->arg);
	if (t)
		j = tenant_json(t);
	pthread_rwlock_unlock(&c->st->lock);
	if (!j)
		ap_problem(c->resp, AP_P_NOT_FOUND, "no tenant %s", c->arg);
	return j;
}

void ap_get_tenant(struct ap_call *c)
{
	json_t *j = visible_tenant(c);

	if (!j)
		return;
	ap_etag(j, c->resp->etag);
	ap_reply(c, 200, j);
}

/*
 * New ceilings or quotas for a tenant (admin): a JSON merge patch of its
 * "ceilings" and "quotas" objects. They bind its next create or change.
 */
void ap_patch_tenant(struct ap_call *c)
{
	static const char *const allowed[] = { "ceilings", "quotas", NULL };
	struct ag_ceilings ceilings;
	struct ag_quotas quotas;
	json_t *now, *b, *ceil = NULL, *quo = NULL;
	struct ag_err e;
	char etag[16];

	now = visible_tenant(c);
	if (!now)
		return;
	ap_etag(now, etag);
	if (!ap_need_admin(c) || !ap_if_match(c, etag)) {
		json_decref(now);
		return;
	}
	b = ap_body(c, allowed);
	if (!b) {
		json_decref(now);
		return;
	}
	ceil = ap_merge_patch(json_object_get(now, "ceilings"), json_object_get(b, "ceilings"));
	quo = ap_merge_patch(json_object_get(now, "quotas"), json_object_get(b, "quotas"));
	if (!ceil || !quo) {
		ap_problem(c->resp, AP_P_INTERNAL, "out of memory");
	} else if (ag_ceilings_from_json(&ceilings, ceil, &e)) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "ceilings: %s", e.msg);
	} else if (ag_quotas_from_json(&quotas, quo, &e)) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "quotas: %s", e.msg);
	} else if (ag_tenant_change(c->agent, c->arg, &ceilings, &quotas, &e)) {
		ap_op_failed(c, &e);
	} else {
		json_t *j = visible_tenant(c);

		if (j) {
			ap_etag(j, c->resp->etag);
			ap_reply(c, 200, j);
		}
	}
	json_decref(ceil);
	json_decref(quo);
	json_decref(b);
	json_decref(now);
}

void ap_delete_tenant(struct ap_call *c)
{
	struct ag_err e;
	json_t *j = visible_tenant(c);
	char etag[16];

	if (!j)
		return;
	ap_etag(j, etag);
	json_decref(j);
	if (!ap_need_admin(c) || !ap_if_match(c, etag))
		return;
	if (ag_tenant_delete(c->agent, c->arg, &e))
		ap_op_failed(c, &e);
	else
		ap_reply(c, 204, NULL);
}

void ap_post_tenant(struct ap_call *c)
{
	static const char *const allowed[] = { "id", "ceilings", "quotas", NULL };
	char tok[AP_TOKEN_LEN + 1], hash[AP_HASH_HEX + 1];
	struct ag_ceilings ceilings = { { 0 }, 0 };
	struct ag_quotas quotas;
	struct ag_err e;
	json_t *b, *ceil, *quo, *out;
	const char *id;

	if (!ap_need_admin(c))
		return;
	b = ap_body(c, allowed);
	if (!b)
		return;
	ceil = json_object_get(b, "ceilings");
	quo = json_object_get(b, "quotas");
	memset(&quotas, 0, sizeof(quotas));
	if (json_unpack(b, "{s:s}", "id", &id)) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST, "id: a string");
	} else if (!ag_valid_id(id)) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "id: 1 to %d of a-z 0-9 -, not ending in -data",
			   AG_ID_MAX);
	} else if (ceil && ag_ceilings_from_json(&ceilings, ceil, &e)) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "ceilings: %s", e.msg);
	} else if (quo && ag_quotas_from_json(&quotas, quo, &e)) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "quotas: %s", e.msg);
	} else if (ap_token_new(tok) || ap_token_hash(tok, hash)) {
		ap_problem(c->resp, AP_P_INTERNAL, "no token could be made");
	} else if (ag_tenant_create(c->agent, id, hash, &ceilings, &quotas, &e)) {
		ap_op_failed(c, &e);
	} else {
		out = json_pack("{s:s, s:o, s:o, s:I, s:I, s:s}", "id", id, "ceilings",
				ag_ceilings_to_json(&ceilings), "quotas", ag_quotas_to_json(&quotas),
				"volumes", (json_int_t)0, "used_bytes", (json_int_t)0, "token", tok);
		snprintf(c->resp->location, sizeof(c->resp->location), "/v1/tenants/%s", id);
		ap_reply(c, 201, out);
	}
	memset(tok, 0, sizeof(tok));
	json_decref(b);
}

/* The deletes under way, with how far each got and whether it is stuck. */
void ap_list_jobs(struct ap_call *c)
{
	json_t *items;
	const char *after;
	void **all;
	size_t limit, i, n;
	int64_t now = (int64_t)time(NULL);

	if (!ap_need_admin(c) || ap_page(c, &limit, &after))
		return;
	items = json_array();
	pthread_rwlock_rdlock(&c->st->lock);
	all = ag_state_sorted(&c->st->vols, &n);
	for (i = 0; i < n; i++) {
		const struct ag_volume *v = all[i];
		uint64_t total = 0;

		if (!v->deleting)
			continue;
		for (size_t r = 0; r < v->nr_runs; r++)
			total += v->runs[r].count * AG_EXTENT_BYTES;
		json_array_append_new(items, json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:b, s:s?}",
				      "id", v->id, "kind", "delete", "volume", v->id, "tenant", v->tenant,
				      "wiped_bytes", (json_int_t)v->wiped, "total_bytes", (json_int_t)total,
				      "since", (json_int_t)v->deleting_since,
				      "attempts", (json_int_t)v->attempts, "stuck", ag_job_stuck(v, now),
				      "last_error", v->last_error[0] ? v->last_error : NULL));
	}
	pthread_rwlock_unlock(&c->st->lock);
	free(all);
	ap_reply(c, 200, ap_page_of(items, limit, after));
}
