// SPDX-License-Identifier: GPL-2.0
/*
 * A tenant's hosts and its volumes' exports to them over NVMe/TCP: hosts
 * are registered by NQN under a name of the tenant's; a volume is exported
 * to a host of its own tenant only (another's is as no host: 404), and the
 * answer says how to connect. An exported volume is not deleted (409).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agent/ops.h"
#include "handlers.h"

/* A host as shown: whether it authenticates, never its secret. */
static json_t *host_json(const struct ag_host *h)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:I}", "name", h->name, "tenant", h->tenant, "nqn",
			 h->nqn, "authentication", h->dhchap[0] ? "dh-hmac-chap" : "none", "exports",
			 (json_int_t)h->nr_exports);
}

void ap_list_hosts(struct ap_call *c)
{
	json_t *items = json_array();
	void **all;
	size_t i, n;

	if (!ap_tenant_visible(c)) {
		json_decref(items);
		return;
	}
	pthread_rwlock_rdlock(&c->st->lock);
	all = ag_state_sorted(&c->st->hosts, &n);
	for (i = 0; i < n; i++) {
		const struct ag_host *h = all[i];

		if (!strcmp(h->tenant, c->arg))
			json_array_append_new(items, host_json(h));
	}
	pthread_rwlock_unlock(&c->st->lock);
	free(all);
	ap_reply(c, 200, json_pack("{s:o, s:n}", "items", items, "next"));
}

/*
 * dhchap_secret: "generate" (the appliance makes one, shown in this answer
 * only), or the host's own secret; none, no authentication.
 */
void ap_post_host(struct ap_call *c)
{
	static const char *const allowed[] = { "name", "nqn", "dhchap_secret", NULL };
	char made[AG_DHCHAP_MAX + 1] = "";
	const char *name, *nqn, *secret = NULL;
	const struct ag_host *h;
	struct ag_err e;
	json_t *b, *body;

	if (!ap_tenant_visible(c))
		return;
	b = ap_body(c, allowed);
	if (!b)
		return;
	if (json_unpack(b, "{s:s, s:s}", "name", &name, "nqn", &nqn)) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST, "name and nqn: strings");
	} else if (json_unpack(b, "{s?s}", "dhchap_secret", &secret)) {
		ap_problem(c->resp, AP_P_INVALID_REQUEST, "dhchap_secret: a string");
	} else if (secret && !strcmp(secret, "generate") && ag_dhchap_generate(made)) {
		ap_problem(c->resp, AP_P_INTERNAL, "no random numbers for a secret");
	} else if (ag_host_add(c->agent, c->arg, name, nqn, made[0] ? made : secret, &e)) {
		ap_op_failed(c, &e);
	} else {
		pthread_rwlock_rdlock(&c->st->lock);
		h = ag_state_host(c->st, c->arg, name);
		snprintf(c->resp->location, sizeof(c->resp->location), "/v1/tenants/%s/hosts/%s",
			 c->arg, name);
		body = h ? host_json(h) : json_object();
		/* once: it is never shown again, not even to a retry (idem.c) */
		if (made[0]) {
			json_object_set_new(body, "dhchap_secret", json_string(made));
			c->resp->secret = true;
		}
		ap_reply(c, 201, body);
		pthread_rwlock_unlock(&c->st->lock);
	}
	memset(made, 0, sizeof(made));
	json_decref(b);
}

void ap_delete_host(struct ap_call *c)
{
	struct ag_err e;

	if (!ap_tenant_visible(c))
		return;
	if (ag_host_delete(c->agent, c->arg, c->arg2, &e))
		ap_op_failed(c, &e);
	else
		ap_reply(c, 204, NULL);
}

/*
 * How a host reaches an export: its tenant's port's address, the subsystem,
 * the command. The caller holds the state's lock (the ports are under it).
 */
static json_t *export_json(struct ap_call *c, const char *volume, const struct ag_host *h)
{
	const struct ag_nvmet_port *p = ag_export_port(c->agent, h->tenant);
	char nqn[AG_NQN_MAX + 1], line[1024];
	/* a wildcard listen address is no address to connect to */
	bool any = !strcmp(p->addr, "0.0.0.0") || !strcmp(p->addr, "::");
	const char *addr = any ? "<the appliance's address>" : p->addr;

	ag_subsys_nqn(c->agent, volume, nqn);
	snprintf(line, sizeof(line), "nvme connect -t tcp -a %s -s %u -n %s --hostnqn %s%s", addr,
		 p->port, nqn, h->nqn, h->dhchap[0] ? " --dhchap-secret <the host's secret>" : "");
	return json_pack("{s:s, s:s, s:s, s:s?, s:I, s:s, s:s}", "volume", volume, "host", h->name,
			 "transport", "tcp", "address", any ? NULL : p->addr, "port",
			 (json_int_t)p->port, "subsystem_nqn", nqn, "connect", line);
}

/* The volume of the path, if the caller may see it (404 if not), not copied. */
static bool volume_visible(struct ap_call *c, char *tenant)
{
	struct ag_volume v;

	if (!ap_volume_get(c, c->arg, &v)) {
		ap_problem(c->resp, AP_P_NOT_FOUND, "no volume %s", c->arg);
		return false;
	}
	strcpy(tenant, v.tenant);
	ag_volume_release(&v);
	return true;
}

void ap_list_exports(struct ap_call *c)
{
	char tenant[AG_ID_MAX + 1];
	json_t *items = json_array();
	void **all;
	size_t i, n;

	if (!volume_visible(c, tenant)) {
		json_decref(items);
		return;
	}
	pthread_rwlock_rdlock(&c->st->lock);
	all = ag_state_sorted(&c->st->exports, &n);
	for (i = 0; i < n; i++) {
		const struct ag_export *x = all[i];
		const struct ag_host *h = ag_state_host(c->st, tenant, x->host);

		if (!strcmp(x->volume, c->arg) && h)
			json_array_append_new(items, export_json(c, x->volume, h));
	}
	pthread_rwlock_unlock(&c->st->lock);
	free(all);
	ap_reply(c, 200, json_pack("{s:o, s:n}", "items", items, "next"));
}

void ap_put_export(struct ap_call *c)
{
	char tenant[AG_ID_MAX + 1];
	const struct ag_host *h;
	struct ag_err e;
	int rc;

	if (!volume_visible(c, tenant))
		return;
	ag_volume_lock(c->agent, c->arg);
	rc = ag_export_add(c->agent, c->arg, c->arg2, &e);
	ag_volume_unlock(c->agent, c->arg);
	if (rc) {
		ap_op_failed(c, &e);
		return;
	}
	pthread_rwlock_rdlock(&c->st->lock);
	h = ag_state_host(c->st, tenant, c->arg2);
	ap_reply(c, 200, h ? export_json(c, c->arg, h) : json_object());
	pthread_rwlock_unlock(&c->st->lock);
}

void ap_delete_export(struct ap_call *c)
{
	char tenant[AG_ID_MAX + 1];
	struct ag_err e;
	int rc;

	if (!volume_visible(c, tenant))
		return;
	ag_volume_lock(c->agent, c->arg);
	rc = ag_export_delete(c->agent, c->arg, c->arg2, &e);
	ag_volume_unlock(c->agent, c->arg);
	if (rc)
		ap_op_failed(c, &e);
	else
		ap_reply(c, 204, NULL);
}
