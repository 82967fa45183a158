// SPDX-License-Identifier: GPL-2.0
/*
 * Replacing tokens: a tenant's (by the admin or the tenant itself), the
 * admin's, and the monitoring token's. The new token is in the answer, once;
 * the old one stops working at once: the next request that shows it is
 * refused (401). Files are written whole before the token in force changes,
 * so a crash leaves the old token or the new one, never none.
 */
#include <string.h>

#include "../agent/log.h"
#include "handlers.h"

void ap_post_tenant_token(struct ap_call *c)
{
	char tok[AP_TOKEN_LEN + 1], hash[AP_HASH_HEX + 1];
	struct ag_err e;
	bool known;

	/* the admin, or the tenant itself (one whose token leaked replaces it) */
	pthread_rwlock_rdlock(&c->st->lock);
	known = ag_state_tenant(c->st, c->arg) && (c->who.admin || !strcmp(c->who.tenant, c->arg));
	pthread_rwlock_unlock(&c->st->lock);
	if (!known) {
		ap_problem(c->resp, AP_P_NOT_FOUND, "no tenant %s", c->arg);
		return;
	}
	if (ap_token_new(tok) || ap_token_hash(tok, hash)) {
		ap_problem(c->resp, AP_P_INTERNAL, "no token could be made");
		return;
	}
	if (ag_tenant_set_token(c->agent, c->arg, hash, &e))
		ap_op_failed(c, &e);
	else
		ap_reply(c, 200, json_pack("{s:s, s:s}", "id", c->arg, "token", tok));
	memset(tok, 0, sizeof(tok));
}

/* A new token in dir/file, then in force in *hash_in_ctx. */
static void replace(struct ap_call *c, const char *file, char *hash_in_ctx)
{
	char tok[AP_TOKEN_LEN + 1], hash[AP_HASH_HEX + 1], err[512];

	if (!ap_need_admin(c))
		return;
	if (ap_token_new(tok) || ap_token_hash(tok, hash)) {
		ap_problem(c->resp, AP_P_INTERNAL, "no token could be made");
		return;
	}
	if (!c->ctx->state_dir[0] ||
	    ap_token_file_write(c->ctx->state_dir, file, tok, err, sizeof(err))) {
		ap_problem(c->resp, AP_P_INTERNAL, "%s: not written; the old token stays",
			   c->ctx->state_dir[0] ? err : file);
		memset(tok, 0, sizeof(tok));
		return;
	}
	pthread_mutex_lock(&ap_tokens_lock);
	strcpy(hash_in_ctx, hash);
	pthread_mutex_unlock(&ap_tokens_lock);
	ag_log("info", "%s replaced", file);
	ap_reply(c, 200, json_pack("{s:s}", "token", tok));
	memset(tok, 0, sizeof(tok));
}

void ap_post_admin_token(struct ap_call *c)
{
	replace(c, "admin.token", c->ctx->admin_hash);
}

void ap_post_monitor_token(struct ap_call *c)
{
	replace(c, "monitor.token", c->ctx->monitor_hash);
}
