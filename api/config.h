/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /etc/sluice/sluiced.conf: "key = value" lines, '#' starts a comment.
 *
 *   listen = 127.0.0.1:8080      address:port of the API (IPv4)
 *   state_dir = /var/lib/sluice
 *   tls_cert = <PEM file>        with tls_key: HTTPS only
 *   tls_key = <PEM file>
 *   allow_plain_remote = no      plain HTTP on a non-loopback address
 *   max_connections = 64
 *   connection_timeout_s = 30    idle or slow clients are cut off after this
 *   monitor_interval_ms = 1000   the dirty monitor's tick; 0 turns it off
 *   dirty_control = yes          enforce volumes' dirty_bytes_max
 *   debugfs = /sys/kernel/debug  where the bdi figures are read
 *   tenant_cgroup = <path>       a tenant's cgroup, %s its id, e.g.
 *                                /sys/fs/cgroup/tenants/%s (none by default)
 *
 * An unknown key or a bad value is an error naming the line; a missing file
 * is the defaults.
 */
#ifndef SLUICE_API_CONFIG_H
#define SLUICE_API_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "../agent/monitor.h"

struct ap_config {
	char listen_addr[64];
	unsigned int port;
	char state_dir[256];
	char tls_cert[256];
	char tls_key[256];
	bool allow_plain_remote;
	unsigned int max_connections;
	unsigned int connection_timeout_s;
	struct ag_monitor_config monitor;
};

void ap_config_defaults(struct ap_config *c);
/* Read path over the defaults; 0, or -1 with err ("<path>:<line>: ..."). */
int ap_config_load(struct ap_config *c, const char *path, char *err, size_t errlen);
/* A config that the server can use: TLS files both or neither, plain HTTP on loopback. */
int ap_config_check(const struct ap_config *c, char *err, size_t errlen);

#endif
