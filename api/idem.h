/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Idempotency-Key on creates: a client that retries a POST with the same
 * key (1 to 255 printable characters) gets the answer of the first one
 * again, with "Idempotent-Replayed: true", instead of a second resource or a
 * 409; the same key with another request (method, path or body) is 422, and
 * while the first is still being answered, 409. Keys are a caller's own
 * (the admin's and each tenant's apart), kept in memory for 24 hours, at most
 * AP_IDEM_PER_CALLER of one caller's (its own oldest make room, so that a
 * tenant's flood never pushes out the admin's) and AP_IDEM_MAX in all; a
 * restart forgets them. An answer of 5xx is not kept, so that a retry tries
 * again.
 */
#ifndef SLUICE_API_IDEM_H
#define SLUICE_API_IDEM_H

#include <stdbool.h>

#include "api.h"

#define AP_IDEM_MAX 20000
#define AP_IDEM_PER_CALLER 256
#define AP_IDEM_TTL_S (24 * 3600)

struct ap_idem;

struct ap_idem *ap_idem_new(void);
void ap_idem_free(struct ap_idem *t);

/*
 * Before the handler: true when resp is set (a replay, 409 or 422) and the
 * handler is not to run; false to run it, then ap_idem_end().
 */
bool ap_idem_begin(struct ap_idem *t, const char *who, const struct ap_request *req,
		   struct ap_response *resp);
/* After the handler: keep its answer for the key (or forget the key on a 5xx). */
void ap_idem_end(struct ap_idem *t, const char *who, const struct ap_request *req,
		 const struct ap_response *resp);

#endif
