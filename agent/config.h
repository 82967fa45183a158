/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /etc/sluice/sluiced.conf: "key = value" lines, '#' starts a comment.
 *
 *   listen = 127.0.0.1:8080      address:port of the API (IPv4)
 *   state_dir = /var/lib/sluice
 *   tls_cert = <PEM file>        with tls_key: HTTPS only
 *   tls_key = <PEM file>         (their contents are read again at SIGHUP)
 *   tls_priorities = <GnuTLS priority string>
 *                                the protocol versions and suites offered;
 *                                by default TLS 1.2 and 1.3 with AEAD suites
 *                                only (AES-GCM, ChaCha20-Poly1305) and, in
 *                                1.2, ephemeral ECDH key exchange only
 *   allow_plain_remote = no      plain HTTP on a non-loopback address
 *   max_connections = 4096       connections at once (each an fd: LimitNOFILE)
 *   max_connections_per_ip = 64  from one client address (0: no limit)
 *   api_threads = 8              threads serving requests
 *   request_deadline_s = 10      a request's headers and body must have
 *                                arrived this long after its connection was
 *                                accepted (a client trickling bytes is cut off)
 *   connection_timeout_s = 30    idle clients are cut off after this
 *   reservation_pct = 90         of a pool's declared capacity, how much its
 *                                volumes' reservations may take in all
 *   reconcile_interval_s = 300   the kernel converged with the state this
 *                                often (drift repaired); 0 turns it off
 *   monitor_interval_ms = 1000   the dirty monitor's tick; 0 turns it off
 *   dirty_control = yes          enforce volumes' dirty_bytes_max
 *   debugfs = /sys/kernel/debug  where the bdi figures are read
 *   tenant_cgroup = <path>       a tenant's cgroup, %s its id, e.g.
 *                                /sys/fs/cgroup/tenants/%s (none by default)
 *   nvme_listen = 0.0.0.0:4420   where volumes are exported over NVMe/TCP:
 *                                <IPv4>:<port>, [<IPv6>]:<port>, or off
 *   nvme_port_id = 1             the nvmet port it is (ports/<id>)
 *   nvme_tenant_listen = <tenant> <port id> <address>:<port>
 *                                a tenant's own port (repeated, one a tenant,
 *                                up to AG_TENANT_PORTS_MAX): its volumes are
 *                                exported there and on no other, so that an
 *                                operator can keep tenants on networks apart
 *
 * An unknown key or a bad value is an error naming the line; a missing file
 * is the defaults.
 */
#ifndef SLUICE_AGENT_CONFIG_H
#define SLUICE_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "monitor.h"
#include "nvmet.h"

struct ag_config {
	char listen_addr[64];
	unsigned int port;
	char state_dir[256];
	char tls_cert[256];
	char tls_key[256];
	char tls_priorities[512];
	/* the certificate's and key's contents, so that a SIGHUP sees new ones */
	uint32_t tls_files_crc;
	bool allow_plain_remote;
	unsigned int max_connections;
	unsigned int max_connections_per_ip;
	unsigned int api_threads;
	unsigned int request_deadline_s;
	unsigned int connection_timeout_s;
	unsigned int reconcile_interval_s;
	unsigned int reservation_pct;
	struct ag_nvmet_port nvme_port;	/* id 0: exports off */
	unsigned int nvme_port_id;	/* as configured, off or not */
	struct ag_tenant_port tenant_ports[AG_TENANT_PORTS_MAX];
	unsigned int nr_tenant_ports;
	struct ag_monitor_config monitor;
};

#define AG_TLS_PRIORITIES "SECURE128:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:" \
	"+AES-256-GCM:+AES-128-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-RSA:+ECDHE-ECDSA"

void ag_config_defaults(struct ag_config *c);
/* Read path over the defaults; 0, or -1 with err ("<path>:<line>: ..."). */
int ag_config_load(struct ag_config *c, const char *path, char *err, size_t errlen);
/* A config that the server can use: TLS files both or neither, plain HTTP on loopback. */
int ag_config_check(const struct ag_config *c, char *err, size_t errlen);

#endif
