// SPDX-License-Identifier: GPL-2.0
/* The HTTP transport (libmicrohttpd); see server.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

#include "../agent/log.h"
#include "api.h"
#include "idem.h"
#include "metrics.h"
#include "problem.h"
#include "server.h"

#define HEADER_MEMORY (32 * 1024)	/* request line and headers; more is 431 */

/*
 * A connection, from its accept on: while it is receiving a request (its
 * headers or body, or waiting for the next request) for longer than the
 * deadline, the sweeper shuts its socket down and libmicrohttpd closes it.
 * libmicrohttpd tells of a connection's close before it closes the socket,
 * under the same lock the sweeper takes: the fd is still the connection's.
 */
struct conn {
	struct conn *prev, *next;
	int fd;
	int64_t since_ms;	/* accepted, or its last request answered */
	bool handling;		/* a whole request arrived: it is being answered */
	bool cut;
};

struct listener {
	struct MHD_Daemon *d;
	struct ap_ctx ctx;
	char *cert, *key, *priorities;	/* kept while MHD runs */
	unsigned int deadline_ms;
	pthread_mutex_t lock;	/* conns */
	struct conn conns;	/* the list's head */
	pthread_t sweeper;
	bool sweeping, stop;
	pthread_cond_t wake;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* A whole request arrived (handling) or its answer went (not): the deadline starts again. */
static void conn_mark(struct listener *l, struct MHD_Connection *c, bool handling)
{
	struct conn *k = conn_of(c);

	if (!k)
		return;
	pthread_mutex_lock(&l->lock);
	k->handling = handling;
	k->since_ms = now_ms();
	pthread_mutex_unlock(&l->lock);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct listener *l = cls;
	struct conn *k = *socket_context;
	const union MHD_ConnectionInfo *ci;

	pthread_mutex_lock(&l->lock);
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		k = calloc(1, sizeof(*k));
		if (k && ci) {
			k->fd = ci->connect_fd;
			k->since_ms = now_ms();
			k->next = l->conns.next;
			k->prev = &l->conns;
			l->conns.next->prev = k;
			l->conns.next = k;
		} else {
			free(k);
			k = NULL;
		}
		*socket_context = k;
	} else if (k) {
		k->prev->next = k->next;
		k->next->prev = k->prev;
		free(k);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&l->lock);
}

static void *sweep(void *arg)
{
	struct listener *l = arg;
	struct timespec ts;
	struct conn *k;
	int64_t now, tick = 250;

	pthread_mutex_lock(&l->lock);
	while (!l->stop) {
		now = now_ms();
		for (k = l->conns.next; k != &l->conns; k = k->next)
			if (!k->handling && !k->cut && now - k->since_ms > l->deadline_ms) {
				/* the worker that owns it sees the hang-up and closes it */
				shutdown(k->fd, SHUT_RDWR);
				k->cut = true;
			}
		now += tick;
		ts.tv_sec = now / 1000;
		ts.tv_nsec = (now % 1000) * 1000000;
		pthread_cond_timedwait(&l->wake, &l->lock, &ts);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

struct upload {
	char *body;
	size_t len;
	size_t dropped;		/* bytes of a too large body read and dropped */
	bool too_large;
	bool answered;		/* the 413 is queued */
};

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* A body that held a secret is wiped before its memory goes back. */
static void free_wiped(void *body)
{
	memset(body, 0, strlen(body));
	free(body);
}

static enum MHD_Result send_response(struct MHD_Connection *conn, struct ap_response *r)
{
	struct MHD_Response *m;
	enum MHD_Result rc;
	size_t len = r->body ? strlen(r->body) : 0;

	if (r->secret && r->body)
		m = MHD_create_response_from_buffer_with_free_callback(len, r->body, free_wiped);
	else
		m = MHD_create_response_from_buffer(len, r->body, MHD_RESPMEM_MUST_FREE);
	if (!m) {
		free(r->body);
		return MHD_NO;
	}
	r->body = NULL;
	if (len)
		MHD_add_response_header(m, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
	if (r->etag[0])
		MHD_add_response_header(m, MHD_HTTP_HEADER_ETAG, r->etag);
	if (r->status == 405)
		MHD_add_response_header(m, MHD_HTTP_HEADER_ALLOW, r->allow);
	if (r->location[0])
		MHD_add_response_header(m, MHD_HTTP_HEADER_LOCATION, r->location);
	if (r->www_authenticate)
		MHD_add_response_header(m, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (r->replayed)
		MHD_add_response_header(m, "Idempotent-Replayed", "true");
	if (r->secret)
		MHD_add_response_header(m, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	rc = MHD_queue_response(conn, r->status, m);
	MHD_destroy_response(m);
	return rc;
}

/* a too large body is never kept: what was read of it goes */
static void drop_body(struct upload *u)
{
	free(u->body);
	u->body = NULL;
	u->len = 0;
}

static enum MHD_Result too_large(struct MHD_Connection *conn, struct upload *u)
{
	struct ap_response r = { 0 };

	u->answered = true;
	drop_body(u);
	ap_problem(&r, AP_P_TOO_LARGE, "at most %d bytes", AP_BODY_MAX);
	return send_response(conn, &r);
}

/*
 * A too large body is refused at once when the client has sent none of it
 * (it waits for "100 Continue") or declares more than is worth reading;
 * otherwise it is read and dropped and the 413 sent after it. Answering
 * while the body is still arriving makes the server close with unread data,
 * the kernel then resets the connection, and the client may lose the 413
 * before it reads it.
 */
static bool refuse_at_once(struct MHD_Connection *conn, unsigned long long declared)
{
	const char *expect = header(conn, MHD_HTTP_HEADER_EXPECT);

	return declared > AP_BODY_DROP_MAX || (expect && !strcasecmp(expect, "100-continue"));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *data, size_t *data_size, void **con_cls)
{
	struct listener *l = cls;
	struct upload *u = *con_cls;
	struct ap_request req;
	struct ap_response resp;
	unsigned long long declared;
	const char *cl;
	char *nb;

	(void)version;
	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return MHD_NO;
		*con_cls = u;
		cl = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
		declared = cl ? strtoull(cl, NULL, 10) : 0;
		if (declared > AP_BODY_MAX) {
			u->too_large = true;
			if (refuse_at_once(conn, declared))
				return too_large(conn, u);
		}
		return MHD_YES;
	}
	if (*data_size) {
		if (u->answered) {
			*data_size = 0;
			return MHD_YES;
		}
		if (u->too_large || u->len + *data_size > AP_BODY_MAX) {
			u->too_large = true;
			u->dropped += *data_size;
			drop_body(u);
			*data_size = 0;
			return u->dropped > AP_BODY_DROP_MAX ? too_large(conn, u) : MHD_YES;
		}
		nb = realloc(u->body, u->len + *data_size + 1);
		if (!nb)
			return MHD_NO;
		u->body = nb;
		memcpy(u->body + u->len, data, *data_size);
		u->len += *data_size;
		u->body[u->len] = '\0';
		*data_size = 0;
		return MHD_YES;
	}
	if (u->answered)
		return MHD_YES;
	conn_mark(l, conn, true);
	if (u->too_large)
		return too_large(conn, u);
	req = (struct ap_request){
		.method = method, .path = url,
		.authorization = header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
		.if_match = header(conn, MHD_HTTP_HEADER_IF_MATCH),
		.content_type = header(conn, MHD_HTTP_HEADER_CONTENT_TYPE),
		.idempotency_key = header(conn, "Idempotency-Key"),
		.q_limit = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "limit"),
		.q_after = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "after"),
		.body = u->body, .body_len = u->len,
	};
	ap_handle(&l->ctx, &req, &resp);
	if (resp.status >= 500)
		ag_log("error", "%s %s: %u %s", method, url, resp.status, resp.body ? resp.body : "");
	return send_response(conn, &resp);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct upload *u = *con_cls;

	(void)toe;
	conn_mark(cls, conn, false);
	if (u) {
		/* a body may carry a host's secret */
		if (u->body)
			memset(u->body, 0, u->len);
		free(u->body);
		free(u);
		*con_cls = NULL;
	}
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int ch;

	if (!f)
		return NULL;
	m = open_memstream(&buf, &len);
	if (m) {
		while ((ch = fgetc(f)) != EOF)
			fputc(ch, m);
		fclose(m);
	}
	fclose(f);
	return buf;
}

static void listener_free(struct listener *l)
{
	if (l->d)
		MHD_stop_daemon(l->d);
	if (l->sweeping) {
		pthread_mutex_lock(&l->lock);
		l->stop = true;
		pthread_cond_signal(&l->wake);
		pthread_mutex_unlock(&l->lock);
		pthread_join(l->sweeper, NULL);
	}
	pthread_cond_destroy(&l->wake);
	pthread_mutex_destroy(&l->lock);
	ap_idem_free(l->ctx.idem);
	ap_metrics_free(l->ctx.metrics);
	free(l->cert);
	free(l->priorities);
	free(l->key);
	free(l);
}

void ap_stop(void *handle)
{
	if (handle)
		listener_free(handle);
}

void *ap_start(struct ag_agent *a, struct ag_monitor *mon, const struct ag_config *cf)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(cf->port) };
	struct MHD_OptionItem opts[16];
	char tok[AP_TOKEN_LEN + 1], err[512];
	struct listener *l = calloc(1, sizeof(*l));
	pthread_condattr_t ca;
	size_t n = 0;
	bool made;

	if (!l)
		return NULL;
	pthread_mutex_init(&l->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->wake, &ca);
	pthread_condattr_destroy(&ca);
	l->conns.next = l->conns.prev = &l->conns;
	l->deadline_ms = cf->request_deadline_s * 1000;
	l->ctx.agent = a;
	l->ctx.monitor = mon;
	snprintf(l->ctx.debugfs, sizeof(l->ctx.debugfs), "%s", cf->monitor.debugfs);
	l->ctx.idem = ap_idem_new();
	l->ctx.metrics = ap_metrics_new();
	if (!l->ctx.idem || !l->ctx.metrics)
		goto fail;
	snprintf(l->ctx.state_dir, sizeof(l->ctx.state_dir), "%s", cf->state_dir);
	tok[0] = '\0';
	if (ap_token_file_read(cf->state_dir, "monitor.token", tok, err, sizeof(err)) < 0) {
		ag_log("error", "monitoring token: %s", err);
		goto fail;
	}
	if (tok[0] && ap_token_hash(tok, l->ctx.monitor_hash))
		goto fail;
	if (ap_admin_token(cf->state_dir, tok, &made, err, sizeof(err)) ||
	    ap_token_hash(tok, l->ctx.admin_hash)) {
		ag_log("error", "admin token: %s", err);
		goto fail;
	}
	memset(tok, 0, sizeof(tok));
	if (made)
		ag_log("info", "admin token made: %s/admin.token", cf->state_dir);
	inet_pton(AF_INET, cf->listen_addr, &sa.sin_addr);
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, &sa };
	/* each thread takes its share of the connections: at least one */
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE,
					     cf->api_threads < cf->max_connections ? cf->api_threads :
					     cf->max_connections, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, cf->max_connections, NULL };
	if (cf->max_connections_per_ip)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
						     cf->max_connections_per_ip, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, cf->connection_timeout_s,
					     NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, HEADER_MEMORY, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, l };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, l };
	if (cf->tls_cert[0]) {
		l->cert = slurp(cf->tls_cert);
		l->key = slurp(cf->tls_key);
		l->priorities = strdup(cf->tls_priorities);
		if (!l->cert || !l->key || !l->priorities) {
			ag_log("error", "cannot read %s or %s", cf->tls_cert, cf->tls_key);
			goto fail;
		}
		flags |= MHD_USE_TLS;
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, l->cert };
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, l->key };
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
						     l->priorities };
	}
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	if (pthread_create(&l->sweeper, NULL, sweep, l))
		goto fail;
	l->sweeping = true;
	l->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, l, MHD_OPTION_ARRAY, opts,
				MHD_OPTION_END);
	if (!l->d) {
		ag_log("error", "cannot listen on %s:%u", cf->listen_addr, cf->port);
		goto fail;
	}
	ag_log("info", "API on %s://%s:%u/ (%u threads, %u connections, %u from one address)",
	       cf->tls_cert[0] ? "https" : "http", cf->listen_addr, cf->port, cf->api_threads,
	       cf->max_connections, cf->max_connections_per_ip);
	return l;
fail:
	listener_free(l);
	return NULL;
}
