/* SPDX-License-Identifier: GPL-2.0 */
/* The API's handlers and what they share; routing is in routes.c. */
#ifndef SLUICE_API_HANDLERS_H
#define SLUICE_API_HANDLERS_H

#include <jansson.h>
#include <stdbool.h>

#include "../agent/model.h"
#include "api.h"
#include "problem.h"

/* Who is asking: the admin, or one tenant. */
struct ap_who {
	bool admin;
	bool monitor;			/* the monitoring token: /metrics only */
	char tenant[AG_ID_MAX + 1];
};

/* What a handler gets: the request, the path's {id}, the agent. */
struct ap_call {
	struct ap_ctx *ctx;
	struct ag_agent *agent;
	struct ag_state *st;		/* the agent's: read under st->lock */
	const struct ap_request *req;
	struct ap_response *resp;
	struct ap_who who;
	const char *arg;		/* the path's first {id}, or NULL */
	const char *arg2;		/* its second ({host}), or NULL */
};

typedef void ap_handler(struct ap_call *c);

ap_handler ap_get_health, ap_get_metrics;
ap_handler ap_post_tenant_token, ap_post_admin_token, ap_post_monitor_token;
ap_handler ap_list_pools, ap_post_pool, ap_get_pool, ap_patch_pool;
ap_handler ap_list_tenants, ap_post_tenant, ap_get_tenant, ap_delete_tenant, ap_patch_tenant;
ap_handler ap_list_tenant_volumes, ap_post_tenant_volume;
ap_handler ap_list_volumes, ap_get_volume, ap_put_volume, ap_patch_volume, ap_delete_volume;
ap_handler ap_get_volume_stats, ap_list_jobs;
ap_handler ap_list_hosts, ap_post_host, ap_delete_host;
ap_handler ap_list_exports, ap_put_export, ap_delete_export;

/* Set a JSON body (steals j); status as given. */
void ap_reply(struct ap_call *c, unsigned int status, json_t *j);

#endif

/*
 * The request's body as a JSON object with only the fields named in
 * allowed (NULL-terminated); NULL with a problem set (415, 413, 400).
 */
json_t *ap_body(struct ap_call *c, const char *const *allowed);

/* limit/after of a list request: 0, or -1 with a 400 set. */
int ap_page(struct ap_call *c, size_t *limit, const char **after);

/* A page of items (sorted by id, after the given id) and its next cursor. */
json_t *ap_page_of(json_t *items, size_t limit, const char *after);

/* The tenant of the path ({id}), if the caller may see it; false with a 404 set. */
bool ap_tenant_visible(struct ap_call *c);

/*
 * A copy of volume id (ag_volume_release), if the caller may see it: the
 * admin any, a tenant its own (deleting ones too). false if not: 404.
 */
bool ap_volume_get(struct ap_call *c, const char *id, struct ag_volume *out);

/* A volume as the API shows it; its ETag into etag (16 bytes). */
json_t *ap_volume_json(const struct ag_volume *v, char *etag);

/* The ETag of a resource as shown (16 bytes). */
void ap_etag(json_t *shown, char *etag);
/* Whether If-Match, when given, is etag; if not, 412 is set. */
bool ap_if_match(struct ap_call *c, const char *etag);

/* An operation's failure as its problem. */
void ap_op_failed(struct ap_call *c, const struct ag_err *e);

/* 403 unless the caller is the admin. */
bool ap_need_admin(struct ap_call *c);
/*
 * RFC 7396: target (NULL: none) with patch applied, a new value; a null in
 * patch removes the member. NULL only when out of memory.
 */
json_t *ap_merge_patch(json_t *target, json_t *patch);
