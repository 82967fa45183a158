// SPDX-License-Identifier: GPL-2.0
/* Health, pools and tenants. */
#include <stdlib.h>
#include <string.h>

#include "../agent/extent.h"
#include "../agent/ops.h"
#include "handlers.h"
#include "policy.h"

void ap_get_health(struct ap_call *c)
{
	ap_reply(c, 200, json_pack("{s:s, s:I, s:I}", "status", "ok", "generation",
				   (json_int_t)c->ctx->store->generation, "volumes",
				   (json_int_t)c->model->nr_vols));
}

static json_t *pool_json(const struct ag_model *m, const struct ag_pool *p)
{
	uint64_t used = 0;

	for (size_t i = 0; i < m->nr_vols; i++)
		if (!strcmp(m->vols[i].pool, p->name))
			for (size_t r = 0; r < m->vols[i].nr_runs; r++)
				used += m->vols[i].runs[r].count;
	/* extent 0 holds the pool's label */
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "name", p->name, "device", p->device,
			 "extent_bytes", (json_int_t)AG_EXTENT_BYTES,
			 "extents", (json_int_t)p->extents,
			 "capacity_bytes", (json_int_t)((p->extents - 1) * AG_EXTENT_BYTES),
			 "free_bytes", (json_int_t)((p->extents - 1 - used) * AG_EXTENT_BYTES));
}

void ap_list_pools(struct ap_call *c)
{
	json_t *items = json_array();
	const char *after;
	size_t limit;

	if (!ap_need_admin(c) || ap_page(c, &limit, &after)) {
		json_decref(items);
		return;
	}
	for (size_t i = 0; i < c->model->nr_pools; i++) {
		json_t *p = pool_json(c->model, &c->model->pools[i]);

		json_object_set(p, "id", json_object_get(p, "name"));
		json_array_append_new(items, p);
	}
	items = ap_page_of(items, limit, after);
	/* pages are by id; a pool's id is its name */
	for (size_t i = 0; i < json_array_size(json_object_get(items, "items")); i++)
		json_object_del(json_array_get(json_object_get(items, "items"), i), "id");
	ap_reply(c, 200, items);
}

void ap_get_pool(struct ap_call *c)
{
	const struct ag_pool *p = ag_model_pool(c->model, c->arg);

	if (!ap_need_admin(c))
		return;
	if (!p) {
		ap_problem(c->resp, AP_P_NOT_FOUND, "no pool %s", c->arg);
		return;
	}
	ap_reply(c, 200, pool_json(c->model, p));
}

void ap_post_pool(struct ap_call *c)
{
	static const char *const allowed[] = { "name", "device", "force", NULL };
	const char *name, *device;
	struct ag_model m;
	char err[512];
	json_t *b, *st;
	int force = 0, rc;

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
	} else {
		rc = ag_pool_add(c->ctx->store, name, device, force, err, sizeof(err));
		if (rc) {
			ap_op_failed(c, rc, err);
		} else if (ag_store_load(c->ctx->store, &st, err, sizeof(err)) == 0) {
			if (ag_model_from_json(&m, st, err, sizeof(err)) == 0) {
				snprintf(c->resp->location, sizeof(c->resp->location),
					 "/v1/pools/%s", name);
				ap_reply(c, 201, pool_json(&m, ag_model_pool(&m, name)));
				ag_model_free(&m);
			}
			json_decref(st);
		}
		if (!c->resp->status)
			ap_problem(c->resp, AP_P_INTERNAL, "added, but the state cannot be read back");
	}
	json_decref(b);
}

static size_t volumes_of(struct ap_call *c, const char *tenant)
{
	size_t n = 0;

	for (size_t i = 0; i < c->model->nr_vols; i++)
		n += !strcmp(c->model->vols[i].tenant, tenant) && !c->model->vols[i].deleting;
	return n;
}

static json_t *tenant_json(struct ap_call *c, const char *id, json_t *rec)
{
	json_t *ceil = json_object_get(rec, "ceilings");

	return json_pack("{s:s, s:o, s:I}", "id", id,
			 "ceilings", ceil ? json_incref(ceil) : json_object(),
			 "volumes", (json_int_t)volumes_of(c, id));
}

void ap_list_tenants(struct ap_call *c)
{
	json_t *items = json_array(), *t;
	const char *id, *after;
	size_t limit;

	if (!ap_need_admin(c) || ap_page(c, &limit, &after)) {
		json_decref(items);
		return;
	}
	json_object_foreach(json_object_get(c->state, "tenants"), id, t)
		json_array_append_new(items, tenant_json(c, id, t));
	ap_reply(c, 200, ap_page_of(items, limit, after));
}

/* The tenant of the path, if the caller may see it; else a 404 is set. */
static json_t *visible_tenant(struct ap_call *c)
{
	json_t *t = json_object_get(json_object_get(c->state, "tenants"), c->arg);

	if (!t || (!c->who.admin && strcmp(c->who.tenant, c->arg))) {
		ap_problem(c->resp, AP_P_NOT_FOUND, "no tenant %s", c->arg);
		return NULL;
	}
	return t;
}

void ap_get_tenant(struct ap_call *c)
{
	json_t *t = visible_tenant(c);

	if (t)
		ap_reply(c, 200, tenant_json(c, c->arg, t));
}

void ap_delete_tenant(struct ap_call *c)
{
	char err[512];
	int rc;

	if (!visible_tenant(c) || !ap_need_admin(c))
		return;
	rc = ag_tenant_delete(c->ctx->store, c->arg, err, sizeof(err));
	if (rc)
		ap_op_failed(c, rc, err);
	else
		ap_reply(c, 204, NULL);
}

void ap_post_tenant(struct ap_call *c)
{
	static const char *const allowed[] = { "id", "ceilings", NULL };
	char tok[AP_TOKEN_LEN + 1], hash[AP_HASH_HEX + 1], err[512];
	json_t *b, *ceil, *rec, *out;
	const char *id;
	int rc;

	if (!ap_need_admin(c))
		return;
	b = ap_body(c, allowed);
	if (!b)
		return;
	ceil = json_object_get(b, "ceilings");
	if (json_unpack(b, "{s:s}", "id", &id)) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST, "id: a string");
	} else if (!ag_valid_id(id)) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "id: 1 to %d of a-z 0-9 -, not ending in -data",
			   AG_ID_MAX);
	} else if (ceil && ap_ceilings_check(ceil, err, sizeof(err))) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "ceilings: %s", err);
	} else if (ap_token_new(tok) || ap_token_hash(tok, hash)) {
		ap_problem(c->resp, AP_P_INTERNAL, "no token could be made");
	} else {
		rec = json_pack("{s:s, s:o}", "token_sha256", hash, "ceilings",
				ceil ? json_incref(ceil) : json_object());
		rc = ag_tenant_create(c->ctx->store, id, rec, err, sizeof(err));
		if (rc) {
			ap_op_failed(c, rc, err);
		} else {
			out = json_pack("{s:s, s:O, s:I, s:s}", "id", id, "ceilings",
					json_object_get(rec, "ceilings"), "volumes", (json_int_t)0,
					"token", tok);
			snprintf(c->resp->location, sizeof(c->resp->location), "/v1/tenants/%s", id);
			ap_reply(c, 201, out);
		}
		json_decref(rec);
	}
	json_decref(b);
}
