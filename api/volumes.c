// SPDX-License-Identifier: GPL-2.0
/*
 * Volumes: list, create, show, change (PUT a whole policy, PATCH a part of
 * it, or a larger size_bytes to grow), delete. A change is checked whole
 * before anything is done (shape 400, values 422, ceilings 403, If-Match
 * 412), so a rejected request changes nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "../agent/ops.h"
#include "handlers.h"
#include "policy.h"

#define POLICY_MAX AG_POLICY_MAX
#define APOLICY_MAX AG_APOLICY_MAX

static json_t *volume_items(struct ap_call *c, const char *tenant)
{
	json_t *items = json_array(), *v;
	const char *id;
	char etag[16];

	json_object_foreach(json_object_get(c->state, "volumes"), id, v)
		if (ap_visible_volume(c, id) &&
		    (!tenant || !strcmp(json_string_value(json_object_get(v, "tenant")), tenant)))
			json_array_append_new(items, ap_volume_json(id, v, etag));
	return items;
}

void ap_list_volumes(struct ap_call *c)
{
	const char *after;
	size_t limit;

	if (ap_page(c, &limit, &after))
		return;
	ap_reply(c, 200, ap_page_of(volume_items(c, NULL), limit, after));
}

static bool tenant_visible(struct ap_call *c)
{
	if (json_object_get(json_object_get(c->state, "tenants"), c->arg) &&
	    (c->who.admin || !strcmp(c->who.tenant, c->arg)))
		return true;
	ap_problem(c->resp, AP_P_NOT_FOUND, "no tenant %s", c->arg);
	return false;
}

void ap_list_tenant_volumes(struct ap_call *c)
{
	const char *after;
	size_t limit;

	if (!tenant_visible(c) || ap_page(c, &limit, &after))
		return;
	ap_reply(c, 200, ap_page_of(volume_items(c, c->arg), limit, after));
}

/*
 * The target arguments and agent_policy words of a policy object for a volume of
 * size bytes, checked by the target's rules and, when a tenant asks, within
 * its ceilings (which bound the rates in force); false with the problem set.
 */
static bool policy_args(struct ap_call *c, const char *tenant, json_t *policy, uint64_t size,
			char *args, char *apolicy, char *in_force)
{
	json_t *ceil = json_object_get(json_object_get(json_object_get(c->state, "tenants"),
						       tenant), "ceilings");
	char err[512], why[512];
	int rc = ap_policy_to_args(policy, args, POLICY_MAX, apolicy, APOLICY_MAX, err, sizeof(err));
	json_t *eff;

	if (rc) {
		ap_problem(c->resp, rc == -2 ? AP_P_INVALID_REQUEST : AP_P_INVALID_VALUE,
			   "policy: %s", err);
		return false;
	}
	/* by the target's own parser, as ag_policy_check() would */
	if (ag_policy_scaled(args, apolicy, size, in_force, POLICY_MAX, err, sizeof(err))) {
		ap_policy_rename_error(err, why, sizeof(why));
		ap_problem(c->resp, AP_P_INVALID_VALUE, "%s", why);
		return false;
	}
	if (c->who.admin || !ceil)
		return true;
	eff = ap_policy_in_force(in_force, apolicy);
	rc = eff ? ap_policy_within(eff, ceil, err, sizeof(err)) : 0;
	json_decref(eff);
	if (rc) {
		ap_problem(c->resp, AP_P_ABOVE_CEILING, "policy: %s", err);
		return false;
	}
	return true;
}

static bool size_of(struct ap_call *c, json_t *j, uint64_t *size)
{
	json_int_t v;

	if (!json_is_number(j)) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST, "size_bytes: a number");
		return false;
	}
	/* 4096: a 4Kn disk refuses a table of any other length (AG_SIZE_ALIGN) */
	if (!json_is_integer(j) || (v = json_integer_value(j)) <= 0 || v % AG_SIZE_ALIGN) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "size_bytes: a positive multiple of 4096");
		return false;
	}
	*size = (uint64_t)v;
	return true;
}

/* Reply with the volume as stored now (status 200 or 201). */
static void reply_volume(struct ap_call *c, const char *id, unsigned int status)
{
	char err[512];
	json_t *st, *v;

	if (ag_store_load(c->ctx->store, &st, err, sizeof(err))) {
		ap_problem(c->resp, AP_P_INTERNAL, "done, but the state cannot be read back");
		return;
	}
	v = json_object_get(json_object_get(st, "volumes"), id);
	if (v)
		ap_reply(c, status, ap_volume_json(id, v, c->resp->etag));
	else
		ap_problem(c->resp, AP_P_INTERNAL, "done, but the volume is not in the state");
	json_decref(st);
}

void ap_post_tenant_volume(struct ap_call *c)
{
	static const char *const allowed[] = { "id", "pool", "size_bytes", "policy", NULL };
	char args[POLICY_MAX], apolicy[APOLICY_MAX], in_force[POLICY_MAX], err[512];
	json_t *b, *policy, *none;
	const char *id, *pool;
	uint64_t size;
	int rc;

	if (!tenant_visible(c))
		return;
	b = ap_body(c, allowed);
	if (!b)
		return;
	none = json_object();
	policy = json_object_get(b, "policy");
	if (json_unpack(b, "{s:s, s:s}", "id", &id, "pool", &pool)) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST, "id and pool: strings");
	} else if (!ag_valid_id(id)) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "id: 1 to %d of a-z 0-9 -, not ending in -data",
			   AG_ID_MAX);
	} else if (!ag_model_pool(c->model, pool)) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "pool: no pool %.64s", pool);
	} else if (!size_of(c, json_object_get(b, "size_bytes"), &size)) {
		;
	} else if (json_object_get(json_object_get(c->state, "volumes"), id)) {
		ap_problem(c->resp, AP_P_CONFLICT, "volume %s exists", id);
	} else if (policy_args(c, c->arg, policy ? policy : none, size, args, apolicy, in_force)) {
		rc = ag_volume_create(c->ctx->store, id, c->arg, pool, size, args, apolicy, err,
				      sizeof(err));
		if (rc) {
			ap_op_failed(c, rc, err);
		} else {
			snprintf(c->resp->location, sizeof(c->resp->location), "/v1/volumes/%s", id);
			reply_volume(c, id, 201);
		}
	}
	json_decref(none);
	json_decref(b);
}

/* 404 unless visible; 412 unless If-Match (when given) is its ETag. */
static json_t *volume_for_change(struct ap_call *c, char *etag)
{
	json_t *v = ap_visible_volume(c, c->arg), *shown;
	const char *m = c->req->if_match;

	if (!v) {
		ap_problem(c->resp, AP_P_NOT_FOUND, "no volume %s", c->arg);
		return NULL;
	}
	shown = ap_volume_json(c->arg, v, etag);
	json_decref(shown);
	if (m && strcmp(m, "*") && strcmp(m, etag)) {
		ap_problem(c->resp, AP_P_PRECONDITION_FAILED, "If-Match %.20s: the volume is now %s",
			   m, etag);
		return NULL;
	}
	return v;
}

void ap_get_volume(struct ap_call *c)
{
	json_t *v = ap_visible_volume(c, c->arg);

	if (!v)
		ap_problem(c->resp, AP_P_NOT_FOUND, "no volume %s", c->arg);
	else
		ap_reply(c, 200, ap_volume_json(c->arg, v, c->resp->etag));
}

/*
 * PUT (whole) and PATCH (partial): the policy and a larger size. The policy
 * that results is checked at the size that results, so a grow that would
 * scale a rate above a ceiling, or past what the target takes, is refused.
 */
static void change_volume(struct ap_call *c, bool whole)
{
	static const char *const allowed[] = { "size_bytes", "policy", NULL };
	char args[POLICY_MAX], apolicy[APOLICY_MAX], in_force[POLICY_MAX], err[512], etag[16];
	json_t *v, *b, *patch, *jsize, *policy = NULL;
	const char *old_args, *old_apolicy;
	uint64_t size = 0, old_size;
	int rc = 0;

	v = volume_for_change(c, etag);
	if (!v)
		return;
	b = ap_body(c, allowed);
	if (!b)
		return;
	old_args = json_string_value(json_object_get(v, "policy"));
	old_apolicy = json_string_value(json_object_get(v, "agent_policy"));
	old_apolicy = old_apolicy ? old_apolicy : "";
	old_size = json_integer_value(json_object_get(v, "size"));
	patch = json_object_get(b, "policy");
	jsize = json_object_get(b, "size_bytes");
	if (whole && !patch) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST, "policy: required (PATCH changes a part)");
		goto out;
	}
	if (patch && !json_is_object(patch)) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST, "policy: an object");
		goto out;
	}
	if (jsize && !size_of(c, jsize, &size))
		goto out;
	if (jsize && size < old_size) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "size_bytes: volumes grow, never shrink (now %llu)",
			   (unsigned long long)old_size);
		goto out;
	}
	if (!jsize)
		size = old_size;
	policy = whole ? json_object() : ap_policy_from_args(old_args, old_apolicy);
	if (!policy) {
		ap_problem(c->resp, AP_P_INTERNAL, "policy: the stored one does not read");
		goto out;
	}
	rc = patch ? ap_policy_merge(policy, patch, err, sizeof(err)) : 0;
	if (rc) {
		ap_problem(c->resp, rc == -2 ? AP_P_INVALID_REQUEST : AP_P_INVALID_VALUE,
			   "policy: %s", err);
		goto out;
	}
	if (!policy_args(c, json_string_value(json_object_get(v, "tenant")), policy, size, args,
			 apolicy, in_force))
		goto out;
	/* a grow sets the policy in the same change; a set alone only when it differs */
	if (size > old_size)
		rc = ag_volume_grow(c->ctx->store, c->arg, size, args, apolicy, err, sizeof(err));
	else if (strcmp(in_force, old_args) || strcmp(apolicy, old_apolicy))
		rc = ag_volume_set(c->ctx->store, c->arg, args, apolicy, err, sizeof(err));
	if (rc)
		ap_op_failed(c, rc, err);
	else
		reply_volume(c, c->arg, 200);
out:
	json_decref(policy);
	json_decref(b);
}

void ap_put_volume(struct ap_call *c)
{
	change_volume(c, true);
}

void ap_patch_volume(struct ap_call *c)
{
	change_volume(c, false);
}

void ap_delete_volume(struct ap_call *c)
{
	char err[512], etag[16];
	int rc;

	if (!volume_for_change(c, etag))
		return;
	rc = ag_volume_delete(c->ctx->store, c->arg, err, sizeof(err));
	if (rc)
		ap_op_failed(c, rc, err);
	else
		ap_reply(c, 204, NULL);
}
