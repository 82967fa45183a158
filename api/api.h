/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The API's requests and responses, apart from HTTP transport (server.c),
 * so that the routing and the handlers can be driven directly in host tests.
 * Requests are handled one at a time (one server thread): operations on the
 * store never run concurrently.
 */
#ifndef SLUICE_API_API_H
#define SLUICE_API_API_H

#include <stdbool.h>
#include <stddef.h>

#include <sys/types.h>
#include <time.h>

#include "../agent/model.h"
#include "../agent/monitor.h"
#include "../agent/store.h"
#include "auth.h"

#define AP_BODY_MAX (64 * 1024)	/* larger bodies get 413 */
#define AP_BODY_DROP_MAX (1024 * 1024)	/* read and dropped before the 413 */

/* The state as last read, kept while the file is the same one (every save renames a new file in). */
struct ap_state_cache {
	json_t *state;
	struct ag_model model;
	bool valid;
	uint64_t generation;	/* the store's; an operation of this process saves through it */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct ap_ctx {
	struct ag_store *store;
	struct ap_state_cache cache;
	char admin_hash[AP_HASH_HEX + 1];
	/* the kernel is asked (stats, convergence): off in host tests */
	bool with_kernel;
	struct ag_monitor *monitor;	/* the dirty monitor, or NULL */
};

struct ap_request {
	const char *method;
	const char *path;
	const char *authorization;	/* header values, or NULL */
	const char *if_match;
	const char *content_type;
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
};

void ap_handle(struct ap_ctx *ctx, const struct ap_request *req, struct ap_response *resp);
/* Drop the cached state (at exit). */
void ap_ctx_release(struct ap_ctx *ctx);

#endif
