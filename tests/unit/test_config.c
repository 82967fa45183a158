// SPDX-License-Identifier: GPL-2.0
/*
 * sluiced.conf's export lines: nvme_listen takes an IPv4 or a bracketed
 * IPv6 address and a port, or "off"; anything else is an error naming the
 * line, and "off" stays off whatever the order of the lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "../../agent/config.h"

static int load(const char *text, struct ag_config *c, char *err, size_t len)
{
	char path[] = "/tmp/sluice-conf-XXXXXX";
	int fd = mkstemp(path), rc;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
	ag_config_defaults(c);
	rc = ag_config_load(c, path, err, len);
	unlink(path);
	return rc;
}

static void config_nvme_listen(void)
{
	static const char *const bad[] = {
		"nvme_listen = 127.0.0.1\n", "nvme_listen = 127.0.0.1:0\n",
		"nvme_listen = 127.0.0.1:65536\n", "nvme_listen = 300.0.0.1:4420\n",
		"nvme_listen = ::1:4420\n", "nvme_listen = [::1:4420\n", "nvme_listen = host:4420\n",
		"nvme_port_id = 0\n", "nvme_port_id = 70000\n",
	};
	struct ag_config c;
	char err[256];
	size_t i;

	ag_config_defaults(&c);
	CHECK(c.nvme_port.id == 1 && !strcmp(c.nvme_port.addr, "0.0.0.0") && c.nvme_port.port == 4420);
	CHECK(load("nvme_listen = 10.1.2.3:4421\nnvme_port_id = 7\n", &c, err, sizeof(err)) == 0);
	CHECK(c.nvme_port.id == 7 && !strcmp(c.nvme_port.addr, "10.1.2.3") && c.nvme_port.port == 4421);
	CHECK(load("nvme_listen = [fd00::5]:4420\n", &c, err, sizeof(err)) == 0);
	CHECK(!strcmp(c.nvme_port.addr, "fd00::5") && c.nvme_port.id == 1);
	CHECK(load("nvme_listen = off\nnvme_port_id = 3\n", &c, err, sizeof(err)) == 0);
	CHECK(c.nvme_port.id == 0);
	CHECK(load("nvme_port_id = 3\nnvme_listen = off\n", &c, err, sizeof(err)) == 0);
	CHECK(c.nvme_port.id == 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(load(bad[i], &c, err, sizeof(err)) == -1);
		CHECK(strstr(err, ":1:"));
	}
}

/*
 * nvme_tenant_listen: a tenant's own port; one a tenant, each on an id and
 * an address of its own, neither the default port's; a bad line is an
 * error naming it.
 */
static void config_tenant_ports(void)
{
	static const char *const bad[] = {
		"nvme_tenant_listen = acme 2\n",
		"nvme_tenant_listen = acme 2 10.0.0.5\n",
		"nvme_tenant_listen = acme 0 10.0.0.5:4420\n",
		"nvme_tenant_listen = acme 70000 10.0.0.5:4420\n",
		"nvme_tenant_listen = acme 2 off\n",
		"nvme_tenant_listen = ACME 2 10.0.0.5:4420\n",
		"nvme_tenant_listen = ../x 2 10.0.0.5:4420\n",
		"nvme_tenant_listen = acme 2 10.0.0.5:4420\nnvme_tenant_listen = acme 3 10.0.0.6:4420\n",
		"nvme_tenant_listen = acme 2 10.0.0.5:4420\nnvme_tenant_listen = bob 2 10.0.0.6:4420\n",
		"nvme_tenant_listen = acme 2 10.0.0.5:4420\nnvme_tenant_listen = bob 3 10.0.0.5:4420\n",
	};
	struct ag_config c;
	char err[256];
	size_t i;

	CHECK(load("nvme_tenant_listen = acme 2 10.0.0.5:4420\n"
		   "nvme_tenant_listen = bob 3 [fd00::7]:4421\n", &c, err, sizeof(err)) == 0);
	CHECK(c.nr_tenant_ports == 2);
	CHECK(!strcmp(c.tenant_ports[0].tenant, "acme") && c.tenant_ports[0].port.id == 2 &&
	      !strcmp(c.tenant_ports[0].port.addr, "10.0.0.5") && c.tenant_ports[0].port.port == 4420);
	CHECK(!strcmp(c.tenant_ports[1].tenant, "bob") && c.tenant_ports[1].port.id == 3 &&
	      !strcmp(c.tenant_ports[1].port.addr, "fd00::7") && c.tenant_ports[1].port.port == 4421);
	CHECK(ag_config_check(&c, err, sizeof(err)) == 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(load(bad[i], &c, err, sizeof(err)) == -1);
		CHECK(strstr(err, "nvme_tenant_listen"));
	}
	/* the default port's id or address: refused once the whole file is seen */
	CHECK(load("nvme_tenant_listen = acme 1 10.0.0.5:4420\n", &c, err, sizeof(err)) == 0);
	CHECK(ag_config_check(&c, err, sizeof(err)) == -1 && strstr(err, "nvme_tenant_listen acme"));
	CHECK(load("nvme_listen = 10.0.0.5:4420\nnvme_tenant_listen = acme 2 10.0.0.5:4420\n", &c, err,
		   sizeof(err)) == 0);
	CHECK(ag_config_check(&c, err, sizeof(err)) == -1);
	/* with the default port off, a tenant's may take its id */
	CHECK(load("nvme_listen = off\nnvme_tenant_listen = acme 1 10.0.0.5:4420\n", &c, err,
		   sizeof(err)) == 0);
	CHECK(ag_config_check(&c, err, sizeof(err)) == 0);
}

static const struct unit_test tests[] = {
	UNIT_TEST(config_tenant_ports),
	UNIT_TEST(config_nvme_listen),
};

UNIT_MAIN("config", tests)
