// SPDX-License-Identifier: GPL-2.0
/* The HTTP transport (libmicrohttpd) and the daemon's life; see server.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <microhttpd.h>

#include "../agent/dmctl.h"
#include "../agent/log.h"
#include "../agent/ops.h"
#include "api.h"
#include "config.h"
#include "problem.h"
#include "server.h"

#define HEADER_MEMORY (32 * 1024)	/* request line and headers; more is 431 */

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

static enum MHD_Result send_response(struct MHD_Connection *conn, struct ap_response *r)
{
	struct MHD_Response *m;
	enum MHD_Result rc;
	size_t len = r->body ? strlen(r->body) : 0;

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
	struct ap_ctx *ctx = cls;
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
	if (u->too_large)
		return too_large(conn, u);
	req = (struct ap_request){
		.method = method, .path = url,
		.authorization = header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
		.if_match = header(conn, MHD_HTTP_HEADER_IF_MATCH),
		.content_type = header(conn, MHD_HTTP_HEADER_CONTENT_TYPE),
		.q_limit = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "limit"),
		.q_after = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "after"),
		.body = u->body, .body_len = u->len,
	};
	ap_handle(ctx, &req, &resp);
	if (resp.status >= 500)
		ag_log("error", "%s %s: %u %s", method, url, resp.status, resp.body ? resp.body : "");
	return send_response(conn, &resp);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct upload *u = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (u) {
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

struct listener {
	struct MHD_Daemon *d;
	char *cert, *key;
};

static void stop_listening(struct listener *l)
{
	if (l->d)
		MHD_stop_daemon(l->d);
	free(l->cert);
	free(l->key);
	memset(l, 0, sizeof(*l));
}

static int start_listening(struct listener *l, const struct ap_config *cf, struct ap_ctx *ctx)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(cf->port) };

	memset(l, 0, sizeof(*l));
	inet_pton(AF_INET, cf->listen_addr, &sa.sin_addr);
	if (cf->tls_cert[0]) {
		l->cert = slurp(cf->tls_cert);
		l->key = slurp(cf->tls_key);
		if (!l->cert || !l->key) {
			ag_log("error", "cannot read %s or %s", cf->tls_cert, cf->tls_key);
			stop_listening(l);
			return -1;
		}
		flags |= MHD_USE_TLS;
		l->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, ctx,
					MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
					MHD_OPTION_CONNECTION_LIMIT, cf->max_connections,
					MHD_OPTION_CONNECTION_TIMEOUT, cf->connection_timeout_s,
					MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HEADER_MEMORY,
					MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
					MHD_OPTION_HTTPS_MEM_CERT, l->cert,
					MHD_OPTION_HTTPS_MEM_KEY, l->key, MHD_OPTION_END);
	} else {
		l->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, ctx,
					MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
					MHD_OPTION_CONNECTION_LIMIT, cf->max_connections,
					MHD_OPTION_CONNECTION_TIMEOUT, cf->connection_timeout_s,
					MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HEADER_MEMORY,
					MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
					MHD_OPTION_END);
	}
	if (!l->d) {
		ag_log("error", "cannot listen on %s:%u", cf->listen_addr, cf->port);
		stop_listening(l);
		return -1;
	}
	ag_log("info", "API on %s://%s:%u/", cf->tls_cert[0] ? "https" : "http", cf->listen_addr,
	       cf->port);
	return 0;
}

/* systemd's readiness notification, without libsystemd. */
static void notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, path);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&sa,
	       offsetof(struct sockaddr_un, sun_path) + strlen(path));
	close(fd);
}

static int load_config(struct ap_config *cf, const char *path, const char *state_dir)
{
	char err[512];

	ap_config_defaults(cf);
	if (ap_config_load(cf, path, err, sizeof(err)) || ap_config_check(cf, err, sizeof(err))) {
		ag_log("error", "%s", err);
		return -1;
	}
	if (state_dir)
		snprintf(cf->state_dir, sizeof(cf->state_dir), "%s", state_dir);
	return 0;
}

/* The dirty monitor by cf (none when its interval is 0); a failure is logged, not fatal. */
static void start_monitor(struct ap_ctx *ctx, const struct ap_config *cf)
{
	char err[256];

	ag_monitor_close(ctx->monitor);
	ctx->monitor = NULL;
	if (!cf->monitor.interval_ms)
		return;
	if (ag_monitor_open(&ctx->monitor, cf->state_dir, &cf->monitor, err, sizeof(err)) ||
	    ag_monitor_start(ctx->monitor)) {
		ag_log("warning", "dirty monitor not running: %s", err);
		ag_monitor_close(ctx->monitor);
		ctx->monitor = NULL;
		return;
	}
	ag_log("info", "dirty monitor: a tick every %u ms, control %s", cf->monitor.interval_ms,
	       cf->monitor.control ? "on" : "off");
}

int ap_serve(const char *config_path, const char *state_dir)
{
	struct ap_config cf, next;
	struct ag_store store;
	struct ap_ctx ctx = { .store = &store, .with_kernel = true };
	struct listener l;
	char tok[AP_TOKEN_LEN + 1], err[512];
	sigset_t set;
	bool made;
	int sig, rc;

	if (load_config(&cf, config_path, state_dir))
		return 1;
	rc = ag_store_open(&store, cf.state_dir);
	if (rc) {
		ag_log("error", "%s: %s", cf.state_dir, strerror(-rc));
		return 1;
	}
	if (ap_admin_token(cf.state_dir, tok, &made, err, sizeof(err)) ||
	    ap_token_hash(tok, ctx.admin_hash)) {
		ag_log("error", "admin token: %s", err);
		ag_store_close(&store);
		return 1;
	}
	memset(tok, 0, sizeof(tok));
	if (made)
		ag_log("info", "admin token made: %s/admin.token", cf.state_dir);
	ag_dm_init();
	rc = ag_reconcile(&store, err, sizeof(err));
	if (rc && store.poisoned) {
		ag_log("error", "%s; stopping, the file is left as it is", err);
		ag_store_close(&store);
		return 1;
	}
	if (rc)
		ag_log("warning", "reconcile: %s (serving; reconcile again to retry)", err);
	/* the server thread inherits the mask: only this thread takes signals */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	start_monitor(&ctx, &cf);
	if (start_listening(&l, &cf, &ctx)) {
		ag_monitor_close(ctx.monitor);
		ag_store_close(&store);
		return 1;
	}
	notify("READY=1");
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		if (sig != SIGHUP)
			break;
		ag_log("info", "SIGHUP: reading %s", config_path);
		if (load_config(&next, config_path, state_dir)) {
			ag_log("error", "keeping the configuration in force");
			continue;
		}
		if (strcmp(next.state_dir, cf.state_dir))
			ag_log("warning", "state_dir changes only with a restart; still %s",
			       cf.state_dir);
		snprintf(next.state_dir, sizeof(next.state_dir), "%s", cf.state_dir);
		if (!memcmp(&next, &cf, sizeof(cf))) {
			ag_log("info", "configuration unchanged");
			continue;
		}
		notify("RELOADING=1");
		stop_listening(&l);
		if (memcmp(&next.monitor, &cf.monitor, sizeof(cf.monitor)))
			start_monitor(&ctx, &next);
		if (start_listening(&l, &next, &ctx)) {
			ag_log("error", "back to the configuration in force");
			start_monitor(&ctx, &cf);
			if (start_listening(&l, &cf, &ctx)) {
				ag_monitor_close(ctx.monitor);
				ag_store_close(&store);
				return 1;
			}
		} else {
			cf = next;
		}
		notify("READY=1");
	}
	notify("STOPPING=1");
	ag_log("info", "signal %d: finishing what is in flight; devices stay up", sig);
	stop_listening(&l);
	ag_monitor_close(ctx.monitor);
	ap_ctx_release(&ctx);
	ag_store_close(&store);
	ag_log("info", "stopped");
	return 0;
}
