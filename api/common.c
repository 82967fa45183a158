// SPDX-License-Identifier: GPL-2.0
/* What the handlers share: bodies, pages, volumes as shown, errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <time.h>

#include "../agent/jobs.h"
#include "../agent/store.h"
#include "handlers.h"
#include "policy_json.h"

#define PAGE_DEFAULT 100
#define PAGE_MAX 1000

/* Whether a Content-Type is the media type given (parameters after ';' aside). */
static bool media_is(const char *ct, const char *type)
{
	size_t n = strlen(type);

	return ct && !strncasecmp(ct, type, n) && (!ct[n] || ct[n] == ';' || ct[n] == ' ');
}

json_t *ap_body(struct ap_call *c, const char *const *allowed)
{
	const struct ap_request *r = c->req;
	const char *ct = r->content_type, *name;
	json_error_t jerr;
	json_t *j, *v;
	size_t i;

	if (r->body_len > AP_BODY_MAX) {
		ap_problem(c->resp, AP_P_TOO_LARGE, "at most %d bytes", AP_BODY_MAX);
		return NULL;
	}
	if (!media_is(ct, "application/json") &&
	    !(!strcmp(r->method, "PATCH") && media_is(ct, "application/merge-patch+json"))) {
		ap_problem(c->resp, AP_P_UNSUPPORTED_MEDIA_TYPE, "Content-Type: application/json%s",
			   !strcmp(r->method, "PATCH") ? " or application/merge-patch+json" : "");
		return NULL;
	}
	j = json_loadb(r->body ? r->body : "", r->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j) {
		ap_problem(c->resp, AP_P_MALFORMED_JSON, "at %d:%d: %s", jerr.line, jerr.column,
			   jerr.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST, "the body must be a JSON object");
		json_decref(j);
		return NULL;
	}
	json_object_foreach(j, name, v) {
		for (i = 0; allowed[i] && strcmp(allowed[i], name); i++)
			;
		if (!allowed[i]) {
			ap_problem(c->resp, AP_P_INVALID_REQUEST, "%.64s: not a field of this request",
				   name);
			json_decref(j);
			return NULL;
		}
	}
	return j;
}

int ap_page(struct ap_call *c, size_t *limit, const char **after)
{
	const char *l = c->req->q_limit;
	char *end;
	long v;

	*limit = PAGE_DEFAULT;
	*after = c->req->q_after;
	if (l) {
		v = strtol(l, &end, 10);
		if (!*l || *end || v < 1 || v > PAGE_MAX) {
			ap_problem(c->resp, AP_P_INVALID_REQUEST, "limit: an integer from 1 to %d",
				   PAGE_MAX);
			return -1;
		}
		*limit = v;
	}
	if (*after && !ag_valid_volume_id(*after)) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST, "after: an id");
		return -1;
	}
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "id"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "id"));

	return strcmp(x, y);
}

json_t *ap_page_of(json_t *items, size_t limit, const char *after)
{
	size_t n = json_array_size(items), i, taken = 0;
	json_t **v = calloc(n ? n : 1, sizeof(*v)), *out = json_array(), *page;
	const char *next = NULL;

	for (i = 0; i < n; i++)
		v[i] = json_array_get(items, i);
	qsort(v, n, sizeof(*v), by_id);
	for (i = 0; i < n; i++) {
		const char *id = json_string_value(json_object_get(v[i], "id"));

		if (after && strcmp(id, after) <= 0)
			continue;
		if (taken == limit) {
			next = json_string_value(json_object_get(v[i - 1], "id"));
			break;
		}
		json_array_append(out, v[i]);
		taken++;
	}
	page = json_pack("{s:o, s:s?}", "items", out, "next", next);
	if (!next)
		json_object_set_new(page, "next", json_null());
	free(v);
	json_decref(items);
	return page;
}

bool ap_tenant_visible(struct ap_call *c)
{
	bool ok;

	pthread_rwlock_rdlock(&c->st->lock);
	ok = ag_state_tenant(c->st, c->arg) && (c->who.admin || !strcmp(c->who.tenant, c->arg));
	pthread_rwlock_unlock(&c->st->lock);
	if (!ok)
		ap_problem(c->resp, AP_P_NOT_FOUND, "no tenant %s", c->arg);
	return ok;
}

bool ap_volume_get(struct ap_call *c, const char *id, struct ag_volume *out)
{
	const struct ag_volume *v;
	bool ok;

	pthread_rwlock_rdlock(&c->st->lock);
	v = ag_state_volume(c->st, id);
	ok = v && (c->who.admin || !strcmp(c->who.tenant, v->tenant)) && !ag_volume_copy(out, v);
	pthread_rwlock_unlock(&c->st->lock);
	return ok;
}

json_t *ap_volume_json(const struct ag_volume *v, char *etag)
{
	json_t *policy = ap_policy_to_json(&v->policy), *in_force = NULL, *j;
	struct sl_config limits;
	struct ag_err e;
	char dev[128];

	if (!ag_policy_in_force(&v->policy, v->size, v->pool, &limits, &e))
		in_force = ap_policy_in_force_json(&limits, v->policy.dirty_bytes_max);
	snprintf(dev, sizeof(dev), "/dev/mapper/sluice-%s", v->id);
	j = json_pack("{s:s, s:s, s:s, s:s, s:I, s:o, s:o, s:s, s:s}", "id", v->id, "name", v->name,
		      "tenant", v->tenant, "pool", v->pool, "size_bytes", (json_int_t)v->size,
		      "policy", policy ? policy : json_object(),
		      "effective_policy", in_force ? in_force : json_object(), "device", dev,
		      "state", v->deleting ? "deleting" : "ready");
	if (j && v->deleting)
		json_object_set_new(j, "delete", json_pack("{s:I, s:I, s:I, s:b, s:s?}",
				    "wiped_bytes", (json_int_t)v->wiped,
				    "since", (json_int_t)v->deleting_since,
				    "attempts", (json_int_t)v->attempts,
				    "stuck", ag_job_stuck(v, (int64_t)time(NULL)),
				    "last_error", v->last_error[0] ? v->last_error : NULL));
	ap_etag(j, etag);
	return j;
}

void ap_etag(json_t *shown, char *etag)
{
	/* the ETag is of what is shown: the same resource, the same tag */
	char *dump = shown ? json_dumps(shown, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	snprintf(etag, 16, "\"%08x\"", dump ? ag_crc32c(0, dump, strlen(dump)) : 0);
	free(dump);
}

bool ap_if_match(struct ap_call *c, const char *etag)
{
	const char *m = c->req->if_match;

	if (!m || !strcmp(m, "*") || !strcmp(m, etag))
		return true;
	ap_problem(c->resp, AP_P_PRECONDITION_FAILED, "If-Match %.20s: it is now %s", m, etag);
	return false;
}

void ap_op_failed(struct ap_call *c, const struct ag_err *e)
{
	/* the agent's messages name the API's fields already */
	const char *msg = e->msg;

	switch (e->code) {
	case AG_E_ABOVE_CEILING:
		ap_problem(c->resp, AP_P_ABOVE_CEILING, "%s", msg);
		break;
	case AG_E_OVERCOMMIT:
		ap_problem(c->resp, AP_P_OVERCOMMITTED, "%s", msg);
		break;
	case AG_E_QUOTA:
		ap_problem(c->resp, AP_P_OVER_QUOTA, "%s", msg);
		break;
	case AG_E_INVALID:
		ap_problem(c->resp, AP_P_INVALID_VALUE, "%s", msg);
		break;
	case AG_E_NOTFOUND:
		ap_problem(c->resp, AP_P_NOT_FOUND, "%s", msg);
		break;
	case AG_E_EXISTS:
	case AG_E_BUSY:
		ap_problem(c->resp, AP_P_CONFLICT, "%s", msg);
		break;
	case AG_E_NOSPACE:
		ap_problem(c->resp, AP_P_NO_SPACE, "%s", msg);
		break;
	case AG_E_REFUSED:
		ap_problem(c->resp, AP_P_DEVICE_REFUSED, "%s", msg);
		break;
	default:
		ap_problem(c->resp, AP_P_INTERNAL, "%s", msg);
		break;
	}
}

json_t *ap_merge_patch(json_t *target, json_t *patch)
{
	const char *key;
	json_t *out, *v;

	/* a member set to null as a whole is removed: for these objects, empty */
	if (json_is_null(patch))
		return json_object();
	if (!json_is_object(patch))
		return patch ? json_deep_copy(patch) : json_deep_copy(target);
	out = json_is_object(target) ? json_deep_copy(target) : json_object();
	json_object_foreach(patch, key, v) {
		if (!out)
			break;
		if (json_is_null(v)) {
			json_object_del(out, key);
		} else {
			json_t *merged = ap_merge_patch(json_object_get(out, key), v);

			if (!merged || json_object_set_new(out, key, merged)) {
				json_decref(out);
				out = NULL;
			}
		}
	}
	return out;
}

bool ap_need_admin(struct ap_call *c)
{
	if (c->who.admin)
		return true;
	ap_problem(c->resp, AP_P_FORBIDDEN, "only the admin token may do this");
	return false;
}
