// SPDX-License-Identifier: GPL-2.0
/*
 * Routing: a path is matched segment by segment ("*" takes one id); an
 * unknown path is 404, a known path with another method 405 with Allow.
 * Then the bearer token is resolved to the admin or a tenant (401 if it is
 * neither) and the handler called.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../agent/log.h"
#include "handlers.h"
#include "idem.h"
#include "metrics.h"

struct route {
	const char *pattern;
	const char *method;
	ap_handler *fn;
	bool open;		/* no token needed */
	bool monitor;		/* the monitoring token may call it */
};

pthread_mutex_t ap_tokens_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct route routes[] = {
	{ "/v1/health", "GET", ap_get_health, true, false },
	{ "/v1/pools", "GET", ap_list_pools, false, false },
	{ "/v1/pools", "POST", ap_post_pool, false, false },
	{ "/v1/pools/*", "GET", ap_get_pool, false, false },
	{ "/v1/pools/*", "PATCH", ap_patch_pool, false, false },
	{ "/v1/tenants", "GET", ap_list_tenants, false, false },
	{ "/v1/tenants", "POST", ap_post_tenant, false, false },
	{ "/v1/tenants/*", "GET", ap_get_tenant, false, false },
	{ "/v1/tenants/*", "DELETE", ap_delete_tenant, false, false },
	{ "/v1/tenants/*", "PATCH", ap_patch_tenant, false, false },
	{ "/v1/tenants/*/token", "POST", ap_post_tenant_token, false, false },
	{ "/v1/admin/token", "POST", ap_post_admin_token, false, false },
	{ "/v1/admin/monitor-token", "POST", ap_post_monitor_token, false, false },
	{ "/v1/tenants/*/volumes", "GET", ap_list_tenant_volumes, false, false },
	{ "/v1/tenants/*/volumes", "POST", ap_post_tenant_volume, false, false },
	{ "/v1/volumes", "GET", ap_list_volumes, false, false },
	{ "/v1/volumes/*", "GET", ap_get_volume, false, false },
	{ "/v1/volumes/*", "PUT", ap_put_volume, false, false },
	{ "/v1/volumes/*", "PATCH", ap_patch_volume, false, false },
	{ "/v1/volumes/*", "DELETE", ap_delete_volume, false, false },
	{ "/v1/volumes/*/stats", "GET", ap_get_volume_stats, false, false },
	{ "/v1/tenants/*/hosts", "GET", ap_list_hosts, false, false },
	{ "/v1/tenants/*/hosts", "POST", ap_post_host, false, false },
	{ "/v1/tenants/*/hosts/*", "DELETE", ap_delete_host, false, false },
	{ "/v1/volumes/*/exports", "GET", ap_list_exports, false, false },
	{ "/v1/volumes/*/exports/*", "PUT", ap_put_export, false, false },
	{ "/v1/volumes/*/exports/*", "DELETE", ap_delete_export, false, false },
	{ "/v1/jobs", "GET", ap_list_jobs, false, false },
	{ "/metrics", "GET", ap_get_metrics, false, true },
};

#define NR_ROUTES (sizeof(routes) / sizeof(routes[0]))

int ap_route_count(void)
{
	return (int)NR_ROUTES;
}

void ap_route_name(int route, const char **pattern, const char **method)
{
	*pattern = routes[route].pattern;
	*method = routes[route].method;
}

#define ARG_LEN (AG_VOLUME_ID_MAX + 2)

/* Whether path matches pattern; the "*" segments are copied into args (two at most). */
static bool match(const char *pattern, const char *path, char (*args)[ARG_LEN])
{
	int nargs = 0;

	args[0][0] = args[1][0] = '\0';
	while (*pattern && *path) {
		if (*pattern == '*') {
			size_t n = strcspn(path, "/");

			if (!n || n >= ARG_LEN || nargs == 2)
				return false;
			memcpy(args[nargs], path, n);
			args[nargs++][n] = '\0';
			path += n;
			pattern++;
			continue;
		}
		if (*pattern != *path)
			return false;
		pattern++;
		path++;
	}
	return !*pattern && !*path;
}

/* The principal of an "Authorization: Bearer <token>" header; false if none. */
static bool resolve(struct ap_call *c, const char *auth, struct ap_who *who)
{
	char hash[AP_HASH_HEX + 1];
	const char *tok;
	void **all;
	size_t i, n;
	bool found = false;

	memset(who, 0, sizeof(*who));
	if (!auth || strncmp(auth, "Bearer ", 7))
		return false;
	tok = auth + 7;
	if (strlen(tok) != AP_TOKEN_LEN || ap_token_hash(tok, hash))
		return false;
	pthread_mutex_lock(&ap_tokens_lock);
	who->admin = strlen(c->ctx->admin_hash) == AP_HASH_HEX &&
		     ap_equal_ct(hash, c->ctx->admin_hash, AP_HASH_HEX);
	who->monitor = strlen(c->ctx->monitor_hash) == AP_HASH_HEX &&
		       ap_equal_ct(hash, c->ctx->monitor_hash, AP_HASH_HEX);
	pthread_mutex_unlock(&ap_tokens_lock);
	if (who->admin || who->monitor)
		return true;
	/* every tenant is compared, so the time does not tell which one matched */
	pthread_rwlock_rdlock(&c->st->lock);
	all = ag_idmap_values(&c->st->tenants);
	n = all ? c->st->tenants.nr : 0;
	for (i = 0; i < n; i++) {
		const struct ag_tenant *t = all[i];

		if (strlen(t->token_sha256) == AP_HASH_HEX &&
		    ap_equal_ct(hash, t->token_sha256, AP_HASH_HEX) && !found) {
			snprintf(who->tenant, sizeof(who->tenant), "%s", t->id);
			found = true;
		}
	}
	pthread_rwlock_unlock(&c->st->lock);
	free(all);
	return found;
}

void ap_reply(struct ap_call *c, unsigned int status, json_t *j)
{
	free(c->resp->body);
	c->resp->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	c->resp->content_type = "application/json";
	c->resp->status = status;
	if (j && !c->resp->body)
		ap_problem(c->resp, AP_P_INTERNAL, "out of memory");
	json_decref(j);
}

static void handle(struct ap_ctx *ctx, const struct ap_request *req, struct ap_response *resp,
		   int *route, char *principal);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* text for a log line: printable ASCII, the rest as '?', at most len - 1 bytes */
static void printable(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in && in[i] && i + 1 < len; i++)
		out[i] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
	out[i] = '\0';
}

/*
 * One audit line for every request that may change something: who asked
 * (by principal, never by token), what, and the outcome, with a refusal's
 * detail.
 */
static void audit(const struct ap_request *req, const struct ap_response *resp, const char *who)
{
	char path[256], method[16], detail[256] = "";
	json_t *j = NULL;

	if (!strcmp(req->method, "GET") || !strcmp(req->method, "HEAD"))
		return;
	printable(req->method, method, sizeof(method));
	printable(req->path, path, sizeof(path));
	if (resp->status >= 400 && resp->body)
		j = json_loads(resp->body, 0, NULL);
	printable(json_string_value(json_object_get(j, "detail")), detail, sizeof(detail));
	json_decref(j);
	ag_log("audit", "%s %s %s: %u%s%s", who, method, path, resp->status,
	       detail[0] ? " " : "", detail);
}

void ap_handle(struct ap_ctx *ctx, const struct ap_request *req, struct ap_response *resp)
{
	char who[AG_ID_MAX + 16] = "anonymous";
	double t0 = now_s();
	int route = -1;

	handle(ctx, req, resp, &route, who);
	ap_metrics_record(ctx->metrics, route, resp->status, now_s() - t0);
	audit(req, resp, who);
}

static void handle(struct ap_ctx *ctx, const struct ap_request *req, struct ap_response *resp,
		   int *route, char *principal)
{
	char arg[2][ARG_LEN] = { "", "" };
	const struct route *r = NULL;
	struct ap_call c = { .ctx = ctx, .agent = ctx->agent, .st = &ctx->agent->st, .req = req,
			     .resp = resp };
	bool path_known = false;
	const char *who;
	size_t i, used = 0;

	memset(resp, 0, sizeof(*resp));
	for (i = 0; i < NR_ROUTES; i++) {
		char got[2][ARG_LEN];

		if (!match(routes[i].pattern, req->path, got))
			continue;
		memcpy(arg, got, sizeof(arg));
		if (!path_known)
			used = 0;
		path_known = true;
		used += snprintf(resp->allow + used, sizeof(resp->allow) - used, "%s%s",
				 used ? ", " : "", routes[i].method);
		if (!strcmp(routes[i].method, req->method))
			r = &routes[i];
	}
	if (!path_known) {
		ap_problem(resp, AP_P_NOT_FOUND, "no resource at this path");
		return;
	}
	if (!r) {
		ap_problem(resp, AP_P_METHOD_NOT_ALLOWED, "%s is not allowed here; allowed: %s",
			   req->method, resp->allow);
		return;
	}
	*route = (int)(r - routes);
	if (strchr(r->pattern, '*')) {
		if (!ag_valid_volume_id(arg[0]) || (arg[1][0] && !ag_valid_id(arg[1]))) {
			ap_problem(resp, AP_P_NOT_FOUND, "no resource at this path");
			return;
		}
		c.arg = arg[0];
		c.arg2 = arg[1][0] ? arg[1] : NULL;
	}
	if (!r->open && !resolve(&c, req->authorization, &c.who)) {
		ap_problem(resp, AP_P_UNAUTHORIZED, "give a valid token: Authorization: Bearer <token>");
		return;
	}
	snprintf(principal, AG_ID_MAX + 16, "%s%s", c.who.admin ? "admin" : c.who.monitor ?
		 "monitor" : "tenant ", c.who.admin || c.who.monitor ? "" : c.who.tenant);
	if (c.who.monitor && !r->monitor) {
		ap_problem(resp, AP_P_FORBIDDEN, "the monitoring token reads /metrics only");
		return;
	}
	who = c.who.admin ? "" : c.who.tenant;
	if (ap_idem_begin(ctx->idem, who, req, resp))
		return;
	r->fn(&c);
	ap_idem_end(ctx->idem, who, req, resp);
}
