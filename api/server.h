/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The API over HTTP (libmicrohttpd): the daemon's frontend (daemon.h).
 * Requests are served by cf->api_threads threads, each polling its share
 * of up to cf->max_connections connections (cf->max_connections_per_ip
 * from one address); a connection that has not delivered a whole request
 * cf->request_deadline_s after it was accepted or last answered is cut off,
 * so clients that trickle bytes hold neither a thread nor a slot for long.
 */
#ifndef SLUICE_API_SERVER_H
#define SLUICE_API_SERVER_H

#include "../agent/config.h"
#include "../agent/monitor.h"
#include "../agent/ops.h"

/* Serve a by cf: a handle, or NULL with the failure logged. */
void *ap_start(struct ag_agent *a, struct ag_monitor *mon, const struct ag_config *cf);
void ap_stop(void *handle);

#endif
