// SPDX-License-Identifier: GPL-2.0
/*
 * Volumes: list, create, show, change (PUT a whole policy, PATCH a part of
 * it, or a larger size_bytes to grow), delete. A change is checked whole
 * before anything is done (shape 400, values 422, ceilings 403, If-Match
 * 412), so a rejected request changes nothing. A delete answers 202 at
 * once: the volume shows as "deleting" to its owner until its extents are
 * zeroed, and then is gone.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "handlers.h"
#include "policy_json.h"

/*
 * A page of the volumes the caller may see (of one tenant, or all), in id
 * order after the given id: only the page's volumes are shown (rendered),
 * whatever the number of volumes.
 */
static json_t *volume_page(struct ap_call *c, const char *tenant, size_t limit, const char *after)
{
	json_t *items = json_array(), *page;
	const char *next = NULL;
	char etag[16], last[AG_VOLUME_ID_MAX + 1] = "";
	void **all;
	size_t i, n, taken = 0;

	pthread_rwlock_rdlock(&c->st->lock);
	all = ag_state_sorted(&c->st->vols, &n);
	for (i = 0; i < n; i++) {
		const struct ag_volume *v = all[i];

		if ((!c->who.admin && strcmp(c->who.tenant, v->tenant)) ||
		    (tenant && strcmp(v->tenant, tenant)) || (after && strcmp(v->id, after) <= 0))
			continue;
		if (taken == limit) {
			next = last;
			break;
		}
		json_array_append_new(items, ap_volume_json(v, etag));
		strcpy(last, v->id);
		taken++;
	}
	pthread_rwlock_unlock(&c->st->lock);
	free(all);
	page = json_pack("{s:o, s:s?}", "items", items, "next", next);
	if (page && !next)
		json_object_set_new(page, "next", json_null());
	return page;
}

void ap_list_volumes(struct ap_call *c)
{
	const char *after;
	size_t limit;

	if (ap_page(c, &limit, &after))
		return;
	ap_reply(c, 200, volume_page(c, NULL, limit, after));
}

void ap_list_tenant_volumes(struct ap_call *c)
{
	const char *after;
	size_t limit;

	if (!ap_tenant_visible(c) || ap_page(c, &limit, &after))
		return;
	ap_reply(c, 200, volume_page(c, c->arg, limit, after));
}

/* A policy object into p; false with the problem set (400 for its shape, 422 a value). */
static bool policy_of(struct ap_call *c, json_t *obj, struct ag_policy *p)
{
	char err[512];
	int rc = ap_policy_from_json(obj, p, err, sizeof(err));

	if (rc)
		ap_problem(c->resp, rc == -2 ? AP_P_INVALID_REQUEST : AP_P_INVALID_VALUE, "policy: %s",
			   err);
	return !rc;
}

static bool size_of(struct ap_call *c, json_t *j, uint64_t *size)
{
	json_int_t v;

	if (!json_is_number(j)) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST, "size_bytes: a number");
		return false;
	}
	/* 4096: a 4Kn disk refuses a table of any other length (AG_SIZE_ALIGN) */
	if (!json_is_integer(j) || (v = json_integer_value(j)) <= 0 || v % AG_SIZE_ALIGN ||
	    (uint64_t)v > AG_SIZE_MAX) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "size_bytes: a positive multiple of 4096");
		return false;
	}
	*size = (uint64_t)v;
	return true;
}

/* Reply with the volume as it is now (status 200, 201 or 202). */
static void reply_volume(struct ap_call *c, const char *id, unsigned int status)
{
	struct ag_volume v;

	if (!ap_volume_get(c, id, &v)) {
		ap_problem(c->resp, AP_P_INTERNAL, "done, but the volume is not in the state");
		return;
	}
	ap_reply(c, status, ap_volume_json(&v, c->resp->etag));
	ag_volume_release(&v);
}

void ap_post_tenant_volume(struct ap_call *c)
{
	static const char *const allowed[] = { "name", "pool", "size_bytes", "policy", NULL };
	struct ag_volume_spec spec = { .tenant = c->arg, .by_tenant = !c->who.admin };
	char id[AG_VOLUME_ID_MAX + 1];
	struct ag_err e;
	json_t *b, *policy, *none;
	bool pool_known, taken;

	if (!ap_tenant_visible(c))
		return;
	b = ap_body(c, allowed);
	if (!b)
		return;
	none = json_object();
	policy = json_object_get(b, "policy");
	if (json_unpack(b, "{s:s, s:s}", "name", &spec.name, "pool", &spec.pool)) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST, "name and pool: strings");
		goto out;
	}
	if (!ag_valid_id(spec.name)) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "name: 1 to %d of a-z 0-9 -, not ending in -data",
			   AG_ID_MAX);
		goto out;
	}
	/* the name is the tenant's own: whether another tenant has one of it never shows */
	ag_volume_id_of(id, spec.tenant, spec.name);
	pthread_rwlock_rdlock(&c->st->lock);
	pool_known = ag_state_pool(c->st, spec.pool) != NULL;
	taken = ag_state_volume_named(c->st, spec.tenant, spec.name) != NULL;
	pthread_rwlock_unlock(&c->st->lock);
	if (!pool_known) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "pool: no pool %.64s", spec.pool);
	} else if (!size_of(c, json_object_get(b, "size_bytes"), &spec.size)) {
		;
	} else if (taken) {
		ap_problem(c->resp, AP_P_CONFLICT, "volume %s exists", spec.name);
	} else if (policy_of(c, policy ? policy : none, &spec.policy)) {
		/* the op checks it in force, and within the tenant's ceilings */
		ag_volume_lock(c->agent, id);
		if (ag_volume_create(c->agent, &spec, &e)) {
			ap_op_failed(c, &e);
		} else {
			snprintf(c->resp->location, sizeof(c->resp->location), "/v1/volumes/%s", id);
			reply_volume(c, id, 201);
		}
		ag_volume_unlock(c->agent, id);
	}
out:
	json_decref(none);
	json_decref(b);
}

/*
 * The volume of the path, copied, for a change: 404 unless visible, 409
 * while it is being deleted, 412 unless If-Match (when given) is its ETag.
 * The caller holds the volume's lock.
 */
static bool volume_for_change(struct ap_call *c, struct ag_volume *v)
{
	const char *m = c->req->if_match;
	char etag[16];
	json_t *shown;

	if (!ap_volume_get(c, c->arg, v)) {
		ap_problem(c->resp, AP_P_NOT_FOUND, "no volume %s", c->arg);
		return false;
	}
	shown = ap_volume_json(v, etag);
	json_decref(shown);
	if (m && strcmp(m, "*") && strcmp(m, etag)) {
		ap_problem(c->resp, AP_P_PRECONDITION_FAILED, "If-Match %.20s: the volume is now %s",
			   m, etag);
	} else if (v->deleting) {
		ap_problem(c->resp, AP_P_CONFLICT, "volume %s is being deleted", c->arg);
	} else {
		return true;
	}
	ag_volume_release(v);
	return false;
}

void ap_get_volume(struct ap_call *c)
{
	struct ag_volume v;

	if (!ap_volume_get(c, c->arg, &v)) {
		ap_problem(c->resp, AP_P_NOT_FOUND, "no volume %s", c->arg);
		return;
	}
	ap_reply(c, 200, ap_volume_json(&v, c->resp->etag));
	ag_volume_release(&v);
}

/*
 * PUT (whole) and PATCH (partial): the policy and a larger size. The policy
 * that results is checked at the size that results, so a grow that would
 * scale a rate above a ceiling, or past what the target takes, is refused.
 */
static void change(struct ap_call *c, struct ag_volume *v, bool whole)
{
	static const char *const allowed[] = { "size_bytes", "policy", NULL };
	json_t *b, *patch, *jsize, *policy = NULL;
	struct ag_policy next;
	char err[512];
	struct ag_err e;
	uint64_t size = 0;
	int rc = 0;

	b = ap_body(c, allowed);
	if (!b)
		return;
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
	if (jsize && size < v->size) {
		ap_problem(c->resp, AP_P_INVALID_VALUE, "size_bytes: volumes grow, never shrink (now %llu)",
			   (unsigned long long)v->size);
		goto out;
	}
	if (!jsize)
		size = v->size;
	policy = whole ? json_object() : ap_policy_to_json(&v->policy);
	if (!policy) {
		ap_problem(c->resp, AP_P_INTERNAL, "out of memory");
		goto out;
	}
	rc = patch ? ap_policy_merge(policy, patch, err, sizeof(err)) : 0;
	if (rc) {
		ap_problem(c->resp, rc == -2 ? AP_P_INVALID_REQUEST : AP_P_INVALID_VALUE,
			   "policy: %s", err);
		goto out;
	}
	if (!policy_of(c, policy, &next))
		goto out;
	/* nothing changes: nothing is done */
	if ((size > v->size || !ag_policy_equal(&next, &v->policy)) &&
	    ag_volume_change(c->agent, c->arg, size, &next, !c->who.admin, &e))
		ap_op_failed(c, &e);
	else
		reply_volume(c, c->arg, 200);
out:
	json_decref(policy);
	json_decref(b);
}

static void change_volume(struct ap_call *c, bool whole)
{
	struct ag_volume v;

	ag_volume_lock(c->agent, c->arg);
	if (volume_for_change(c, &v)) {
		change(c, &v, whole);
		ag_volume_release(&v);
	}
	ag_volume_unlock(c->agent, c->arg);
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
	const char *m = c->req->if_match;
	struct ag_volume v;
	struct ag_err e;
	char etag[16];

	ag_volume_lock(c->agent, c->arg);
	if (!ap_volume_get(c, c->arg, &v)) {
		ap_problem(c->resp, AP_P_NOT_FOUND, "no volume %s", c->arg);
		goto out;
	}
	json_decref(ap_volume_json(&v, etag));
	if (m && strcmp(m, "*") && strcmp(m, etag)) {
		ap_problem(c->resp, AP_P_PRECONDITION_FAILED, "If-Match %.20s: the volume is now %s",
			   m, etag);
	} else if (ag_volume_delete(c->agent, c->arg, &e)) {
		ap_op_failed(c, &e);
	} else {
		/* as it was when the delete was taken: the job may be done with it already */
		if (!v.deleting) {
			v.deleting = true;
			v.deleting_since = (int64_t)time(NULL);
		}
		ap_reply(c, 202, ap_volume_json(&v, c->resp->etag));
	}
	ag_volume_release(&v);
out:
	ag_volume_unlock(c->agent, c->arg);
}
