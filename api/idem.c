// SPDX-License-Identifier: GPL-2.0
/* Idempotency keys; see idem.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../agent/idmap.h"
#include "../agent/store.h"
#include "idem.h"
#include "problem.h"

struct entry {
	char name[AG_ID_MAX + 300];	/* "<who> <key>": the map's id */
	char who[AG_ID_MAX + 1];
	uint32_t fingerprint;		/* of the method, path and body */
	int64_t at;
	bool done;
	struct ap_response resp;	/* its body malloc'd */
	struct entry *older, *newer;	/* in the order they came */
};

struct caller {
	char who[AG_ID_MAX + 1];
	size_t nr;
};

struct ap_idem {
	pthread_mutex_t lock;
	struct ag_idmap map;
	struct ag_idmap callers;	/* who -> struct caller: the keys each holds */
	struct entry *oldest, *newest;
};

struct ap_idem *ap_idem_new(void)
{
	struct ap_idem *t = calloc(1, sizeof(*t));

	if (t)
		pthread_mutex_init(&t->lock, NULL);
	return t;
}

static struct caller *caller_of(struct ap_idem *t, const char *who)
{
	struct caller *c = ag_idmap_get(&t->callers, who);

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		snprintf(c->who, sizeof(c->who), "%s", who);
		if (ag_idmap_put(&t->callers, c->who, c)) {
			free(c);
			return NULL;
		}
	}
	return c;
}

static void unlink_entry(struct ap_idem *t, struct entry *e)
{
	struct caller *c = ag_idmap_get(&t->callers, e->who);

	if (c && c->nr)
		c->nr--;
	if (e->older)
		e->older->newer = e->newer;
	else
		t->oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		t->newest = e->older;
	ag_idmap_del(&t->map, e->name);
	free(e->resp.body);
	free(e);
}

void ap_idem_free(struct ap_idem *t)
{
	if (!t)
		return;
	void **all;
	size_t i;

	while (t->oldest)
		unlink_entry(t, t->oldest);
	ag_idmap_destroy(&t->map);
	all = ag_idmap_values(&t->callers);
	for (i = 0; all && i < t->callers.nr; i++)
		free(all[i]);
	free(all);
	ag_idmap_destroy(&t->callers);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static bool key_ok(const char *k)
{
	size_t n = strlen(k), i;

	if (!n || n > 255)
		return false;
	for (i = 0; i < n; i++)
		if (k[i] < 0x21 || k[i] > 0x7e)
			return false;
	return true;
}

static uint32_t fingerprint(const struct ap_request *req)
{
	uint32_t crc = ag_crc32c(0, req->method, strlen(req->method));

	crc = ag_crc32c(crc, req->path, strlen(req->path));
	return ag_crc32c(crc, req->body ? req->body : "", req->body ? req->body_len : 0);
}

static int64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

bool ap_idem_begin(struct ap_idem *t, const char *who, const struct ap_request *req,
		   struct ap_response *resp)
{
	const char *key = req->idempotency_key;
	struct entry *e, *o;
	struct caller *c;
	char name[sizeof(e->name)];
	bool answered = true;

	if (!key || strcmp(req->method, "POST") || !t)
		return false;
	if (!key_ok(key)) {
		ap_problem(resp, AP_P_INVALID_REQUEST, "Idempotency-Key: 1 to 255 printable characters");
		return true;
	}
	snprintf(name, sizeof(name), "%s %s", who, key);
	pthread_mutex_lock(&t->lock);
	while (t->oldest && (now_s() - t->oldest->at > AP_IDEM_TTL_S ||
			     (t->map.nr >= AP_IDEM_MAX && t->oldest->done)))
		unlink_entry(t, t->oldest);
	e = ag_idmap_get(&t->map, name);
	if (e && e->fingerprint != fingerprint(req)) {
		ap_problem(resp, AP_P_INVALID_VALUE, "Idempotency-Key: used before with another request");
	} else if (e && !e->done) {
		ap_problem(resp, AP_P_CONFLICT, "Idempotency-Key: a request with it is being answered");
	} else if (e) {
		*resp = e->resp;
		resp->body = e->resp.body ? strdup(e->resp.body) : NULL;
		resp->replayed = true;
	} else if (t->map.nr >= AP_IDEM_MAX || !(c = caller_of(t, who))) {
		/* every slot taken by requests still being answered: no promise is made */
		answered = false;
	} else {
		/* a caller's keys make room for its own: one caller cannot push out another's */
		for (o = t->oldest; o && c->nr >= AP_IDEM_PER_CALLER; ) {
			struct entry *next = o->newer;

			if (o->done && !strcmp(o->who, who))
				unlink_entry(t, o);
			o = next;
		}
		e = c->nr < AP_IDEM_PER_CALLER ? calloc(1, sizeof(*e)) : NULL;
		if (e) {
			snprintf(e->name, sizeof(e->name), "%s", name);
			snprintf(e->who, sizeof(e->who), "%s", who);
			e->fingerprint = fingerprint(req);
			e->at = now_s();
			if (ag_idmap_put(&t->map, e->name, e)) {
				free(e);
			} else {
				e->older = t->newest;
				if (t->newest)
					t->newest->newer = e;
				else
					t->oldest = e;
				t->newest = e;
				c->nr++;
			}
		}
		answered = false;
	}
	pthread_mutex_unlock(&t->lock);
	return answered;
}

void ap_idem_end(struct ap_idem *t, const char *who, const struct ap_request *req,
		 const struct ap_response *resp)
{
	struct entry *e;
	char name[sizeof(e->name)];

	if (!t || !req->idempotency_key || strcmp(req->method, "POST"))
		return;
	snprintf(name, sizeof(name), "%s %s", who, req->idempotency_key);
	pthread_mutex_lock(&t->lock);
	e = ag_idmap_get(&t->map, name);
	if (e && !e->done) {
		/* a secret is shown once: a retry of its request is a new request */
		if (resp->status >= 500 || resp->secret) {
			unlink_entry(t, e);
		} else {
			e->resp = *resp;
			e->resp.body = resp->body ? strdup(resp->body) : NULL;
			e->done = true;
		}
	}
	pthread_mutex_unlock(&t->lock);
}
