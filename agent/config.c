// SPDX-License-Identifier: GPL-2.0
/* sluiced.conf; see config.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>

#include "config.h"
#include "model.h"
#include "store.h"

/* The crc32c of two files' contents (an unreadable one counts as empty). */
static uint32_t files_crc(const char *a, const char *b)
{
	const char *paths[2] = { a, b };
	uint32_t crc = 0;
	char buf[4096];
	size_t n;

	for (int i = 0; i < 2; i++) {
		FILE *f = paths[i][0] ? fopen(paths[i], "re") : NULL;

		while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
			crc = ag_crc32c(crc, buf, n);
		if (f)
			fclose(f);
		crc = ag_crc32c(crc, "\n", 1);
	}
	return crc;
}

void ag_config_defaults(struct ag_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->listen_addr, "127.0.0.1");
	c->port = 8080;
	strcpy(c->state_dir, "/var/lib/sluice");
	c->max_connections = 4096;
	c->max_connections_per_ip = 64;
	c->api_threads = 8;
	c->request_deadline_s = 10;
	c->connection_timeout_s = 30;
	c->reconcile_interval_s = 300;
	c->reservation_pct = 90;
	c->nvme_port = (struct ag_nvmet_port){ .id = 1, .addr = "0.0.0.0", .port = 4420 };
	c->nvme_port_id = 1;
	strcpy(c->tls_priorities, AG_TLS_PRIORITIES);
	ag_monitor_config_defaults(&c->monitor);
}

static int uint_of(const char *v, unsigned int lo, unsigned int hi, unsigned int *out);

/* "<IPv4>:<port>", "[<IPv6>]:<port>" or "off" (id 0); the id is kept. */
static int nvme_listen_of(const char *v, struct ag_nvmet_port *p)
{
	const char *colon = strrchr(v, ':'), *addr = v;
	unsigned char bin[16];
	char text[64];
	size_t n;

	if (!strcmp(v, "off")) {
		p->id = 0;
		return 0;
	}
	if (!colon)
		return -1;
	n = (size_t)(colon - v);
	if (v[0] == '[') {
		if (n < 2 || v[n - 1] != ']')
			return -1;
		addr = v + 1;
		n -= 2;
	}
	if (n >= sizeof(text))
		return -1;
	memcpy(text, addr, n);
	text[n] = '\0';
	if (inet_pton(v[0] == '[' ? AF_INET6 : AF_INET, text, bin) != 1 ||
	    uint_of(colon + 1, 1, 65535, &p->port))
		return -1;
	strcpy(p->addr, text);
	return 0;
}

/*
 * "<tenant> <port id> <address>:<port>": one a tenant, each on a port id
 * and an address and port of its own (the default's are checked by
 * ag_config_check, which sees the whole file).
 */
static int tenant_listen_of(struct ag_config *c, const char *v)
{
	struct ag_tenant_port t = { 0 };
	char tenant[64], addr[96];
	unsigned int i;

	if (c->nr_tenant_ports == AG_TENANT_PORTS_MAX ||
	    sscanf(v, "%63s %u %95s", tenant, &t.port.id, addr) != 3 || !ag_valid_id(tenant) ||
	    !t.port.id || t.port.id > 65535 || !strcmp(addr, "off") || nvme_listen_of(addr, &t.port))
		return -1;
	for (i = 0; i < c->nr_tenant_ports; i++) {
		const struct ag_tenant_port *o = &c->tenant_ports[i];

		if (!strcmp(o->tenant, tenant) || o->port.id == t.port.id ||
		    (!strcmp(o->port.addr, t.port.addr) && o->port.port == t.port.port))
			return -1;
	}
	strcpy(t.tenant, tenant);
	c->tenant_ports[c->nr_tenant_ports++] = t;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static int uint_of(const char *v, unsigned int lo, unsigned int hi, unsigned int *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || !*v || *end || *v == '-' || n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

static int set(struct ag_config *c, const char *k, const char *v)
{
	struct in_addr a;
	char host[64];
	const char *colon;

	if (!strcmp(k, "listen")) {
		colon = strrchr(v, ':');
		if (!colon || (size_t)(colon - v) >= sizeof(host))
			return -1;
		memcpy(host, v, colon - v);
		host[colon - v] = '\0';
		if (inet_pton(AF_INET, host, &a) != 1 || uint_of(colon + 1, 1, 65535, &c->port))
			return -1;
		strcpy(c->listen_addr, host);
		return 0;
	}
	if (!strcmp(k, "state_dir") || !strcmp(k, "tls_cert") || !strcmp(k, "tls_key")) {
		char *dst = !strcmp(k, "state_dir") ? c->state_dir :
			    !strcmp(k, "tls_cert") ? c->tls_cert : c->tls_key;

		if (v[0] != '/' || strlen(v) >= sizeof(c->state_dir))
			return -1;
		strcpy(dst, v);
		return 0;
	}
	if (!strcmp(k, "tls_priorities")) {
		gnutls_priority_t prio;
		const char *at = NULL;

		/* GnuTLS's own parser: a string it cannot use is an error here, not at a handshake */
		if (strlen(v) >= sizeof(c->tls_priorities) || gnutls_priority_init(&prio, v, &at))
			return -1;
		gnutls_priority_deinit(prio);
		strcpy(c->tls_priorities, v);
		return 0;
	}
	if (!strcmp(k, "allow_plain_remote")) {
		if (strcmp(v, "yes") && strcmp(v, "no"))
			return -1;
		c->allow_plain_remote = !strcmp(v, "yes");
		return 0;
	}
	if (!strcmp(k, "max_connections"))
		return uint_of(v, 1, 65536, &c->max_connections);
	if (!strcmp(k, "max_connections_per_ip"))
		return uint_of(v, 0, 65536, &c->max_connections_per_ip);
	if (!strcmp(k, "api_threads"))
		return uint_of(v, 1, 64, &c->api_threads);
	if (!strcmp(k, "request_deadline_s"))
		return uint_of(v, 1, 600, &c->request_deadline_s);
	if (!strcmp(k, "connection_timeout_s"))
		return uint_of(v, 1, 3600, &c->connection_timeout_s);
	if (!strcmp(k, "reservation_pct"))
		return uint_of(v, 1, 100, &c->reservation_pct);
	if (!strcmp(k, "nvme_listen")) {
		if (nvme_listen_of(v, &c->nvme_port))
			return -1;
		if (strcmp(v, "off"))
			c->nvme_port.id = c->nvme_port_id;
		return 0;
	}
	if (!strcmp(k, "nvme_port_id")) {
		unsigned int id;

		if (uint_of(v, 1, 65535, &id))
			return -1;
		/* exports turned off stay off, whatever the order of the lines */
		if (c->nvme_port.id)
			c->nvme_port.id = id;
		c->nvme_port_id = id;
		return 0;
	}
	if (!strcmp(k, "nvme_tenant_listen"))
		return tenant_listen_of(c, v);
	if (!strcmp(k, "reconcile_interval_s"))
		return uint_of(v, 0, 86400, &c->reconcile_interval_s);
	if (!strcmp(k, "monitor_interval_ms"))
		return uint_of(v, 0, 3600000, &c->monitor.interval_ms) ||
		       (c->monitor.interval_ms && c->monitor.interval_ms < 10) ? -1 : 0;
	if (!strcmp(k, "dirty_control")) {
		if (strcmp(v, "yes") && strcmp(v, "no"))
			return -1;
		c->monitor.control = !strcmp(v, "yes");
		return 0;
	}
	if (!strcmp(k, "debugfs")) {
		if (v[0] != '/' || strlen(v) >= sizeof(c->monitor.debugfs))
			return -1;
		strcpy(c->monitor.debugfs, v);
		return 0;
	}
	if (!strcmp(k, "tenant_cgroup")) {
		const char *pct = strchr(v, '%');

		/* an absolute path with one %s (the tenant) and no other % */
		if (v[0] != '/' || strlen(v) >= sizeof(c->monitor.tenant_cgroup) || !pct ||
		    pct[1] != 's' || strchr(pct + 1, '%'))
			return -1;
		strcpy(c->monitor.tenant_cgroup, v);
		return 0;
	}
	return -2;
}

int ag_config_load(struct ag_config *c, const char *path, char *err, size_t errlen)
{
	struct ag_config n = *c;
	char line[1024];
	unsigned int no = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *hash;
		int rc;

		no++;
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		s = trim(line);
		if (!*s)
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%u: not 'key = value'", path, no);
			fclose(f);
			return -1;
		}
		*eq = '\0';
		rc = set(&n, trim(s), trim(eq + 1));
		if (rc) {
			snprintf(err, errlen, "%s:%u: %s '%s'", path, no,
				 rc == -2 ? "unknown key" : "bad value for", trim(s));
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	n.tls_files_crc = files_crc(n.tls_cert, n.tls_key);
	*c = n;
	return 0;
}

int ag_config_check(const struct ag_config *c, char *err, size_t errlen)
{
	bool tls = c->tls_cert[0] || c->tls_key[0];

	if (tls && !(c->tls_cert[0] && c->tls_key[0])) {
		snprintf(err, errlen, "tls_cert and tls_key go together");
		return -1;
	}
	if (!tls && strncmp(c->listen_addr, "127.", 4) && !c->allow_plain_remote) {
		snprintf(err, errlen, "listen %s: plain HTTP only on loopback, unless "
			 "allow_plain_remote = yes (or give tls_cert and tls_key)", c->listen_addr);
		return -1;
	}
	for (unsigned int i = 0; i < c->nr_tenant_ports && c->nvme_port.id; i++) {
		const struct ag_nvmet_port *p = &c->tenant_ports[i].port;

		if (p->id == c->nvme_port.id ||
		    (!strcmp(p->addr, c->nvme_port.addr) && p->port == c->nvme_port.port)) {
			snprintf(err, errlen, "nvme_tenant_listen %s: port %u, %s:%u, is nvme_listen's",
				 c->tenant_ports[i].tenant, p->id, p->addr, p->port);
			return -1;
		}
	}
	return 0;
}
