/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The API's requests and responses, apart from HTTP transport (server.c),
 * so that the routing and the handlers can be driven directly in host tests.
 * Requests are handled on several threads at once: a handler reads the
 * agent's state under its lock and changes it through the agent's
 * operations, holding the volume's lock around its read, check and change.
 */
#ifndef SLUICE_API_API_H
#define SLUICE_API_API_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <sys/types.h>
#include <time.h>

#include "../agent/monitor.h"
#include "../agent/ops.h"
#include "auth.h"

#define AP_BODY_MAX (64 * 1024)	/* larger bodies get 413 */
#define AP_BODY_DROP_MAX (1024 * 1024)	/* read and dropped before the 413 */

struct ap_idem;
struct ap_metrics;

struct ap_ctx {
	struct ag_agent *agent;		/* the state, the operations */
	struct ap_idem *idem;		/* the Idempotency-Keys seen (idem.h), or NULL */
	struct ap_metrics *metrics;	/* the API's own figures (metrics.h), or NULL */
	/* the tokens' hashes ("" for none), read and replaced under ap_tokens_lock */
	char admin_hash[AP_HASH_HEX + 1];
	char monitor_hash[AP_HASH_HEX + 1];	/* may read /metrics, nothing else */
	char state_dir[256];		/* where admin.token and monitor.token live */
	struct ag_monitor *monitor;	/* the dirty monitor, or NULL */
	char debugfs[128];		/* where nvmet's controllers are read (ctrls.h); "" none */
};

extern pthread_mutex_t ap_tokens_lock;

struct ap_request {
	const char *method;
	const char *path;
	const char *authorization;	/* header values, or NULL */
	const char *if_match;
	const char *content_type;
	const char *idempotency_key;
	const char *q_limit;		/* query arguments, or NULL */
	const char *q_after;
	const char *body;
	size_t body_len;
};

struct ap_response {
	unsigned int status;
	char *body;			/* malloc'd, or NULL for none */
	const char *content_type;
	char etag[16];			/* "\"xxxxxxxx\"", or empty */
	char allow[64];			/* for 405 */
	char location[160];		/* for 201 */
	bool www_authenticate;		/* for 401 */
	bool replayed;			/* an Idempotency-Key's answer, again */
	bool secret;			/* holds a secret: never kept to be replayed */
};

void ap_handle(struct ap_ctx *ctx, const struct ap_request *req, struct ap_response *resp);

#endif
