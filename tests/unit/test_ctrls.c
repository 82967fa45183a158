// SPDX-License-Identifier: GPL-2.0
/*
 * The reader of nvmet's controllers against a debugfs tree made in a
 * temporary directory, laid out as the kernel's: controllers counted, their
 * hosts once each, what is not a controller or not a host NQN left out,
 * and no view (or a name that would leave the tree) unknown, not none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "../../agent/ctrls.h"

#define SUB "nqn.2026-12.io.sluice:0a0a0a0a-0000-4000-8000-00000000000a:acme.db"
#define HA "nqn.2014-08.org.nvmexpress:uuid:0a0a0a0a-0000-4000-8000-00000000000a"
#define HB "nqn.2014-08.org.nvmexpress:uuid:0b0b0b0b-0000-4000-8000-00000000000b"

static char dir[64];

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

static void no_view_is_unknown(void)
{
	struct ag_nvmet_ctrls c;

	strcpy(dir, "/tmp/sluice-ctrls-XXXXXX");
	CHECK(mkdtemp(dir));
	/* debugfs without nvmet in it: 6.1, or a kernel built without the view */
	CHECK(!ag_nvmet_ctrls_known(dir));
	CHECK(ag_nvmet_ctrls_read(dir, SUB, &c) == -1);
	CHECK(c.controllers == 0 && c.nr_hosts == 0 && !c.hosts);
	CHECK(!ag_nvmet_ctrls_known(""));
	CHECK(!ag_nvmet_ctrls_known(NULL));
	CHECK(ag_nvmet_ctrls_read("", SUB, &c) == -1);
	CHECK(ag_nvmet_ctrls_read("/nonexistent-sluice", SUB, &c) == -1);
	/* nvmet a file, not a directory */
	CHECK(unit_put_file(dir, "nvmet", "x") == 0);
	CHECK(!ag_nvmet_ctrls_known(dir));
	cleanup();
}

static void counts_controllers_and_hosts_once(void)
{
	struct ag_nvmet_ctrls c;
	char sub[320];
	char long_nqn[AG_NQN_MAX + 8];

	strcpy(dir, "/tmp/sluice-ctrls-XXXXXX");
	CHECK(mkdtemp(dir));
	CHECK(unit_put_dir(dir, "nvmet") == 0);
	CHECK(ag_nvmet_ctrls_known(dir));
	/* no such subsystem: known, none */
	CHECK(ag_nvmet_ctrls_read(dir, SUB, &c) == 0);
	CHECK(c.controllers == 0 && c.nr_hosts == 0);
	ag_nvmet_ctrls_free(&c);
	snprintf(sub, sizeof(sub), "nvmet/%s", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	CHECK(ag_nvmet_ctrls_read(dir, SUB, &c) == 0);
	CHECK(c.controllers == 0 && c.nr_hosts == 0);
	ag_nvmet_ctrls_free(&c);
	/* one host on two paths, another on one; the kernel prints no newline, allow one */
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl1", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl1/hostnqn", SUB);
	CHECK(unit_put_file(dir, sub, HB) == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl1/state", SUB);
	CHECK(unit_put_file(dir, sub, "ready\n") == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl2", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl2/hostnqn", SUB);
	CHECK(unit_put_file(dir, sub, HA "\n") == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl17", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl17/hostnqn", SUB);
	CHECK(unit_put_file(dir, sub, HB) == 0);
	CHECK(ag_nvmet_ctrls_read(dir, SUB, &c) == 0);
	CHECK_EQ_U64(c.controllers, 3);
	CHECK_EQ_U64(c.nr_hosts, 2);
	CHECK(!strcmp(c.hosts[0], HA) && !strcmp(c.hosts[1], HB));
	ag_nvmet_ctrls_free(&c);
	CHECK(!c.hosts && !c.controllers);

	/* not controllers: left out */
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrlx", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl1234567", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/other", SUB);
	CHECK(unit_put_file(dir, sub, HA) == 0);
	/* a controller gone while read (no hostnqn left): left out */
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl3", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	/* controllers whose host NQN is no NQN: counted, their host not */
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl4", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl4/hostnqn", SUB);
	CHECK(unit_put_file(dir, sub, "") == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl5", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl5/hostnqn", SUB);
	CHECK(unit_put_file(dir, sub, "nqn.x\001y\n") == 0);
	memset(long_nqn, 'a', sizeof(long_nqn) - 1);
	long_nqn[sizeof(long_nqn) - 1] = '\0';
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl6", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl6/hostnqn", SUB);
	CHECK(unit_put_file(dir, sub, long_nqn) == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl8", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	snprintf(sub, sizeof(sub), "nvmet/%s/ctrl8/hostnqn", SUB);
	CHECK(unit_put_dir(dir, sub) == 0);
	CHECK(ag_nvmet_ctrls_read(dir, SUB, &c) == 0);
	CHECK_EQ_U64(c.controllers, 3 + 4);
	CHECK_EQ_U64(c.nr_hosts, 2);
	CHECK(!strcmp(c.hosts[0], HA) && !strcmp(c.hosts[1], HB));
	ag_nvmet_ctrls_free(&c);

	/* names that are no NQN, or would leave the tree: unknown */
	CHECK(ag_nvmet_ctrls_read(dir, "..", &c) == -1);
	CHECK(ag_nvmet_ctrls_read(dir, "../nvmet", &c) == -1);
	CHECK(ag_nvmet_ctrls_read(dir, "a/b", &c) == -1);
	CHECK(ag_nvmet_ctrls_read(dir, "", &c) == -1);
	CHECK(ag_nvmet_ctrls_read(dir, NULL, &c) == -1);
	CHECK(ag_nvmet_ctrls_read(dir, long_nqn, &c) == -1);
	CHECK(!c.hosts && !c.controllers);
	/* a subsystem that is a file: none */
	CHECK(unit_put_file(dir, "nvmet/nqn.file", "x") == 0);
	CHECK(ag_nvmet_ctrls_read(dir, "nqn.file", &c) == 0);
	CHECK(c.controllers == 0);
	cleanup();
}

static void many_hosts(void)
{
	struct ag_nvmet_ctrls c;
	char rel[400], nqn[80];
	unsigned int i;

	strcpy(dir, "/tmp/sluice-ctrls-XXXXXX");
	CHECK(mkdtemp(dir));
	CHECK(unit_put_dir(dir, "nvmet") == 0);
	snprintf(rel, sizeof(rel), "nvmet/%s", SUB);
	CHECK(unit_put_dir(dir, rel) == 0);
	/* 300 controllers of 100 hosts, each host thrice */
	for (i = 0; i < 300; i++) {
		snprintf(rel, sizeof(rel), "nvmet/%s/ctrl%u", SUB, i + 1);
		CHECK(unit_put_dir(dir, rel) == 0);
		snprintf(rel, sizeof(rel), "nvmet/%s/ctrl%u/hostnqn", SUB, i + 1);
		snprintf(nqn, sizeof(nqn), "nqn.2014-08.org.example:host-%03u", i % 100);
		CHECK(unit_put_file(dir, rel, nqn) == 0);
	}
	CHECK(ag_nvmet_ctrls_read(dir, SUB, &c) == 0);
	CHECK_EQ_U64(c.controllers, 300);
	CHECK_EQ_U64(c.nr_hosts, 100);
	for (i = 0; i < 100; i++) {
		snprintf(nqn, sizeof(nqn), "nqn.2014-08.org.example:host-%03u", i);
		CHECK(!strcmp(c.hosts[i], nqn));
	}
	ag_nvmet_ctrls_free(&c);
	cleanup();
}

static const struct unit_test tests[] = {
	UNIT_TEST(no_view_is_unknown),
	UNIT_TEST(counts_controllers_and_hosts_once),
	UNIT_TEST(many_hosts),
};

UNIT_MAIN("ctrls", tests)
